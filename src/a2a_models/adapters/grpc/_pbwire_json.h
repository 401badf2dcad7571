/* ProtoJSON-dict writer of _pbwire.c (included there after _pbwire_msg.h: it uses the
 * Struct/Value writer and the Out buffer).
 *
 * A JsonPlan writes the protobuf bytes of one message of a proto file straight from
 * its ProtoJSON as Python values (the dict ``codec`` makes of a 0.3 result), which
 * the gRPC binding's 0.3 path otherwise fills into a message member by member
 * (``_protojson``'s generated ``_f_<Name>``) and serializes. Plans are built by
 * _pbjson.py from the file's descriptors. It writes exactly what that message
 * serializes to (fields in number order, proto3 defaults left out, a oneof member
 * and a set message always written), except the entries of a Struct, which protobuf
 * writes in its hash table's order and this writer in the dict's.
 *
 * It gives up (None) on anything the generated functions would not answer for
 * themselves or that it does not know: a key that is no field's JSON name, two
 * members of a oneof, a value of another class (str, bool, int, dict and list
 * exactly), an int32 out of range, an enum name the enum lacks, a NaN or infinite
 * or inexact Struct number, a timestamp not in the ``YYYY-MM-DDTHH:MM:SS[.f]Z`` form.
 * The caller then runs the pure path, which decides (and words the error).
 */

enum { J_STR = 1, J_BOOL, J_INT32, J_ENUM, J_BYTES, J_MSG, J_LIST_MSG, J_LIST_STR, J_STRUCT, J_TS };
#define MAX_JFIELDS 32
#define MAX_ONEOFS 8

typedef struct {
    PyObject *key; /* the JSON name */
    Py_hash_t hash;
    int number, kind, oneof; /* oneof: its index + 1, or 0 */
    PyObject *arg;           /* a JsonPlan (messages), the enum's name -> number table,
                                the base64 reader (bytes) */
} JField;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    JField fields[MAX_JFIELDS]; /* in field number order */
    int ready;
} JsonPlan;

static PyTypeObject JsonPlan_Type;

static int
put_tag(Out *o, int number, int wt)
{
    return put_varint(o, ((uint64_t)number << 3) | (uint64_t)wt);
}

/* A str's UTF-8; NULL (no error set) for one it cannot encode (a lone surrogate). */
static const char *
str_utf8(PyObject *s, Py_ssize_t *n)
{
    const char *out = PyUnicode_AsUTF8AndSize(s, n);
    if (out == NULL)
        PyErr_Clear();
    return out;
}

static int
two_digits(const char *s, int *out)
{
    if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
        return -1;
    *out = (s[0] - '0') * 10 + (s[1] - '0');
    return 0;
}

/* Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* ``YYYY-MM-DDTHH:MM:SS[.1-9 digits]Z`` (what the codec writes) as seconds and nanos
 * since the epoch, as Timestamp.FromJsonString reads it; -1 for any other form. */
static int
parse_utc(const char *s, Py_ssize_t n, int64_t *seconds, int32_t *nanos)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int c1, c2, mo, d, h, mi, se;
    if (n < 20 || n > 30 || s[n - 1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
        s[13] != ':' || s[16] != ':')
        return -1;
    if (two_digits(s, &c1) < 0 || two_digits(s + 2, &c2) < 0 || two_digits(s + 5, &mo) < 0 ||
        two_digits(s + 8, &d) < 0 || two_digits(s + 11, &h) < 0 ||
        two_digits(s + 14, &mi) < 0 || two_digits(s + 17, &se) < 0)
        return -1;
    int y = c1 * 100 + c2;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > dim[mo - 1] + (mo == 2 && leap) || h > 23 ||
        mi > 59 || se > 59)
        return -1;
    int32_t ns = 0;
    if (n > 20) { /* a fraction: '.', 1 to 9 digits, then the 'Z' */
        if (s[19] != '.' || n == 21)
            return -1;
        int k = 0;
        for (Py_ssize_t i = 20; i < n - 1; i++, k++) {
            if (s[i] < '0' || s[i] > '9')
                return -1;
            ns = ns * 10 + (s[i] - '0');
        }
        for (; k < 9; k++)
            ns *= 10;
    }
    *seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
    *nanos = ns;
    return 0;
}

static int json_write(JsonPlan *p, Out *o, PyObject *d, int depth);

/* One message field: its tag, its length, the plan's writing of v. */
static int
write_sub(Out *o, int number, JsonPlan *plan, PyObject *v, int depth)
{
    if (!PyDict_CheckExact(v))
        return 1;
    Py_ssize_t start = open_len(o, number);
    if (start < 0)
        return -1;
    int r = json_write(plan, o, v, depth + 1);
    return r ? r : close_len(o, start);
}

static int
write_str(Out *o, int number, PyObject *v, int always)
{
    Py_ssize_t n;
    if (!PyUnicode_CheckExact(v))
        return 1;
    const char *s = str_utf8(v, &n);
    if (s == NULL)
        return 1;
    if (n == 0 && !always)
        return 0;
    return put_tag(o, number, 2) < 0 || put_bytes(o, s, n) < 0 ? -1 : 0;
}

/* A varint field from an int-like C value (int32 and enums: sign-extended to 64 bits). */
static int
write_int(Out *o, int number, int64_t n, int always)
{
    if (n == 0 && !always)
        return 0;
    return put_tag(o, number, 0) < 0 || put_varint(o, (uint64_t)n) < 0 ? -1 : 0;
}

static int
write_field(JField *f, Out *o, PyObject *v, int depth)
{
    int always = f->oneof != 0; /* a oneof member at its default is still set */
    switch (f->kind) {
    case J_STR:
        return write_str(o, f->number, v, always);
    case J_BOOL:
        if (!PyBool_Check(v))
            return 1;
        return write_int(o, f->number, v == Py_True, always);
    case J_INT32: {
        int overflow;
        if (!PyLong_CheckExact(v))
            return 1;
        long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (n == -1 && PyErr_Occurred())
            return -1;
        if (overflow || n < INT32_MIN || n > INT32_MAX)
            return 1; /* protobuf refuses it: the pure path reports it */
        return write_int(o, f->number, n, always);
    }
    case J_ENUM: {
        if (!PyUnicode_CheckExact(v))
            return 1;
        PyObject *x = PyDict_GetItemWithError(f->arg, v);
        if (x == NULL)
            return PyErr_Occurred() ? -1 : 1;
        long n = PyLong_AsLong(x);
        if (n == -1 && PyErr_Occurred())
            return -1;
        return write_int(o, f->number, n, always);
    }
    case J_BYTES: {
        if (!PyUnicode_CheckExact(v))
            return 1;
        PyObject *b = PyObject_CallOneArg(f->arg, v);
        if (b == NULL || !PyBytes_CheckExact(b)) {
            Py_XDECREF(b);
            if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_MemoryError))
                return -1;
            PyErr_Clear(); /* bad base64: the pure path reports it */
            return 1;
        }
        int r = 0;
        if (PyBytes_GET_SIZE(b) || always)
            r = put_tag(o, f->number, 2) < 0 ||
                        put_bytes(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)) < 0
                    ? -1
                    : 0;
        Py_DECREF(b);
        return r;
    }
    case J_MSG:
        return write_sub(o, f->number, (JsonPlan *)f->arg, v, depth);
    case J_LIST_MSG:
    case J_LIST_STR: {
        if (!PyList_CheckExact(v))
            return 1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
            PyObject *item = PyList_GET_ITEM(v, i);
            int r = f->kind == J_LIST_STR ? write_str(o, f->number, item, 1)
                                          : write_sub(o, f->number, (JsonPlan *)f->arg, item,
                                                      depth);
            if (r)
                return r;
        }
        return 0;
    }
    case J_STRUCT: {
        if (!PyDict_CheckExact(v))
            return 1;
        Py_ssize_t start = open_len(o, f->number);
        if (start < 0)
            return -1;
        /* depth 1 as struct_dumps: the same limit as the pure path's Struct writer */
        int r = write_struct(o, v, 1);
        return r ? r : close_len(o, start);
    }
    case J_TS: {
        Py_ssize_t n;
        int64_t seconds;
        int32_t nanos;
        if (!PyUnicode_CheckExact(v))
            return 1;
        const char *s = str_utf8(v, &n);
        if (s == NULL || parse_utc(s, n, &seconds, &nanos) < 0)
            return 1; /* another form: Timestamp.FromJsonString decides */
        Py_ssize_t start = open_len(o, f->number);
        if (start < 0 || write_int(o, 1, seconds, 0) < 0 || write_int(o, 2, nanos, 0) < 0)
            return -1;
        return close_len(o, start);
    }
    }
    return 1;
}

/* 0: written; 1: give up; -1: an error (MemoryError). */
static int
json_write(JsonPlan *p, Out *o, PyObject *d, int depth)
{
    PyObject *vals[MAX_JFIELDS] = {NULL};
    int members[MAX_ONEOFS + 1] = {0};
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    if (!p->ready || depth > MAX_DEPTH)
        return 1;
    while (PyDict_Next(d, &pos, &k, &v)) {
        Py_ssize_t i = 0;
        while (i < p->n && p->fields[i].key != k)
            i++;
        if (i == p->n) { /* not the same object: compare */
            if (!PyUnicode_CheckExact(k))
                return 1;
            Py_hash_t h = PyObject_Hash(k);
            if (h == -1)
                return -1;
            for (i = 0; i < p->n; i++)
                if (p->fields[i].hash == h && PyUnicode_Compare(p->fields[i].key, k) == 0)
                    break;
            if (i == p->n)
                return 1; /* not a field's JSON name */
        }
        members[p->fields[i].oneof]++; /* even null: two members named give up */
        vals[i] = v == Py_None ? NULL : v; /* null: the field stays unset */
    }
    for (int j = 1; j <= MAX_ONEOFS; j++)
        if (members[j] > 1)
            return 1;
    for (Py_ssize_t i = 0; i < p->n; i++) {
        if (vals[i] == NULL)
            continue;
        int r = write_field(&p->fields[i], o, vals[i], depth);
        if (r)
            return r;
    }
    return 0;
}

static PyObject *
jsonplan_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (!PyArg_ParseTuple(args, ""))
        return NULL;
    return type->tp_alloc(type, 0);
}

/* setup(fields: ((json_name, number, kind, oneof, arg), ...)), in field number order */
static PyObject *
jsonplan_setup(JsonPlan *p, PyObject *args)
{
    PyObject *fields;
    if (p->ready || p->n) {
        PyErr_SetString(PyExc_RuntimeError, "a plan is set up once");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!", &PyTuple_Type, &fields))
        return NULL;
    if (PyTuple_GET_SIZE(fields) > MAX_JFIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many fields");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        JField *f = &p->fields[i];
        PyObject *key, *arg;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "O!iiiO", &PyUnicode_Type, &key,
                              &f->number, &f->kind, &f->oneof, &arg))
            return NULL;
        if (f->kind < J_STR || f->kind > J_TS || f->oneof < 0 || f->oneof > MAX_ONEOFS ||
            f->number < 1 || f->number > 536870911 || (i && f->number <= p->fields[i - 1].number)) {
            PyErr_SetString(PyExc_ValueError, "a field's kind, oneof or number is out of range");
            return NULL;
        }
        if ((f->kind == J_MSG || f->kind == J_LIST_MSG) && !Py_IS_TYPE(arg, &JsonPlan_Type)) {
            PyErr_SetString(PyExc_TypeError, "a message field needs a plan");
            return NULL;
        }
        if (f->kind == J_ENUM && !PyDict_CheckExact(arg)) {
            PyErr_SetString(PyExc_TypeError, "an enum needs its table");
            return NULL;
        }
        if (f->kind == J_BYTES && !PyCallable_Check(arg)) {
            PyErr_SetString(PyExc_TypeError, "bytes need the base64 reader");
            return NULL;
        }
        if ((f->hash = PyObject_Hash(key)) == -1)
            return NULL;
        Py_INCREF(key);
        PyUnicode_InternInPlace(&key);
        f->key = key;
        f->arg = Py_NewRef(arg);
        p->n = i + 1;
    }
    p->ready = 1;
    Py_RETURN_NONE;
}

static PyObject *
jsonplan_dumps(JsonPlan *p, PyObject *arg)
{
    if (!PyDict_CheckExact(arg))
        Py_RETURN_NONE;
    Out o = {NULL, 0, 0};
    int r = json_write(p, &o, arg, 0);
    return out_finish(&o, r);
}

static int
jsonplan_traverse(JsonPlan *p, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_VISIT(p->fields[i].arg);
    return 0;
}

static int
jsonplan_clear(JsonPlan *p)
{
    for (Py_ssize_t i = 0; i < p->n; i++) {
        Py_CLEAR(p->fields[i].key);
        Py_CLEAR(p->fields[i].arg);
    }
    p->n = 0;
    p->ready = 0;
    return 0;
}

static void
jsonplan_dealloc(JsonPlan *p)
{
    PyObject_GC_UnTrack(p);
    jsonplan_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMethodDef jsonplan_methods[] = {
    {"setup", (PyCFunction)jsonplan_setup, METH_VARARGS, "setup(fields): the table."},
    {"dumps", (PyCFunction)jsonplan_dumps, METH_O,
     "dumps(dict) -> the message's bytes, or None (give up)."},
    {NULL},
};

static PyTypeObject JsonPlan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "a2a_models.adapters.grpc._pbwire.JsonPlan",
    .tp_doc = "JsonPlan(): writes one message's bytes from its ProtoJSON (after setup()).",
    .tp_basicsize = sizeof(JsonPlan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = jsonplan_new,
    .tp_dealloc = (destructor)jsonplan_dealloc,
    .tp_traverse = (traverseproc)jsonplan_traverse,
    .tp_clear = (inquiry)jsonplan_clear,
    .tp_methods = jsonplan_methods,
};
