/* Whole-message plans of _pbwire.c (included there: it uses its Struct/Value
 * readers; kept apart to keep each file small). */
/* ------------------------------------------------------------------ whole messages
 *
 * A MsgPlan reads the bytes of one lf.a2a.v1 message into its model, as the
 * generated _from_<Class> of _convert.py does from the parsed message (plans
 * built by _pbplans.py from those functions' own expressions). It gives up
 * (None) on anything unusual: the generated function then runs.
 */

enum { Q_STR = 1, Q_ENUM, Q_MSG, Q_LIST_MSG, Q_LIST_STR, Q_STRUCT, Q_TS, Q_INT, Q_BOOL, Q_LIST_PART };
/* how an unset (absent or default) value reads */
enum { M_PLAIN = 0, M_OPT = 1, M_PRESENCE = 2, M_REQUIRED = 3 };
#define MAX_FIELDS 32

typedef struct {
    int number, kind, mode;
    Py_ssize_t offset;
    PyObject *arg; /* nested plan, enum table or timestamp function */
} QField;

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    Py_ssize_t n, ntail;
    QField fields[MAX_FIELDS];
    Py_ssize_t tail_off[MAX_FIELDS];
    PyObject *tail_val[MAX_FIELDS];
    int ready;
} MsgPlan;

static PyTypeObject MsgPlan_Type;

/* Parts: the classes, their slots and the Part field numbers (set_part). */
static struct {
    PyTypeObject *text, *file, *data;
    Py_ssize_t text_off[4]; /* text, metadata, filename, media_type */
    Py_ssize_t file_off[5]; /* raw, url, metadata, filename, media_type */
    Py_ssize_t data_off[4]; /* data, metadata, filename, media_type */
    int num[7];             /* text, raw, url, data, metadata, filename, media_type */
} part;

static PyObject *msg_decode(MsgPlan *p, const uint8_t *b, const uint8_t *e, int depth);

static PyObject *
utf8(const uint8_t *a, const uint8_t *b)
{
    return PyUnicode_DecodeUTF8((const char *)a, b - a, NULL);
}

static PyObject *
or_none(PyObject *s)
{
    /* "x or None" of a string (a new reference in, a new reference out) */
    if (s != NULL && PyUnicode_GET_LENGTH(s) == 0) {
        Py_DECREF(s);
        s = NULL;
    }
    return s ? s : Py_NewRef(Py_None);
}

static void
put(PyObject *obj, Py_ssize_t off, PyObject *v)
{
    Py_XSETREF(*SLOT(obj, off), v);
}

static PyObject *
part_decode(const uint8_t *b, const uint8_t *e, int depth)
{
    PyObject *content = NULL, *meta = NULL, *name = NULL, *media = NULL, *obj = NULL;
    int which = -1; /* index into part.num of the content member */
    if (part.text == NULL || depth > MAX_DEPTH)
        return NULL;
    while (b < e) {
        uint64_t tag;
        const uint8_t *x, *y;
        if (read_tag(&b, e, &tag) < 0)
            goto fail;
        int num = (int)(tag >> 3), wt = (int)(tag & 7), k = -1;
        for (int i = 0; i < 7; i++)
            if (part.num[i] == num)
                k = i;
        if (k < 0) {
            if (skip(&b, e, wt) < 0)
                goto fail;
            continue;
        }
        if (wt != 2 || read_len(&b, e, &x, &y) < 0)
            goto fail;
        PyObject *v;
        if (k == 0 || k == 2 || k == 5 || k == 6)
            v = utf8(x, y);
        else if (k == 1)
            v = PyBytes_FromStringAndSize((const char *)x, y - x);
        else if (k == 3)
            v = read_value(x, y, depth + 1);
        else
            v = read_struct(x, y, depth + 1);
        if (v == NULL)
            goto fail;
        if (k <= 3) { /* the content oneof, once (protobuf would merge two data) */
            if (content != NULL) {
                Py_DECREF(v);
                goto fail;
            }
            content = v;
            which = k;
        }
        else if (k == 4) {
            if (meta != NULL) { /* a message twice would merge: give up */
                Py_DECREF(v);
                goto fail;
            }
            meta = v;
        }
        else if (k == 5)
            Py_XSETREF(name, v);
        else
            Py_XSETREF(media, v);
    }
    if (which < 0)
        goto fail;
    meta = meta ? meta : Py_NewRef(Py_None);
    name = or_none(name);
    media = or_none(media);
    PyTypeObject *cls = which == 0 ? part.text : which == 3 ? part.data : part.file;
    Py_ssize_t *off = which == 0 ? part.text_off : which == 3 ? part.data_off : part.file_off;
    obj = cls->tp_alloc(cls, 0);
    if (obj == NULL)
        goto fail;
    if (cls == part.file) {
        put(obj, off[0], which == 1 ? Py_NewRef(content) : Py_NewRef(Py_None));
        put(obj, off[1], which == 2 ? Py_NewRef(content) : Py_NewRef(Py_None));
        Py_DECREF(content);
        off++;
    }
    else
        put(obj, off[0], content);
    put(obj, off[1], meta);
    put(obj, off[2], name);
    put(obj, off[3], media);
    return obj;
fail:
    Py_XDECREF(content);
    Py_XDECREF(meta);
    Py_XDECREF(name);
    Py_XDECREF(media);
    return NULL;
}

static PyObject *
ts_decode(PyObject *fn, const uint8_t *b, const uint8_t *e)
{
    int64_t seconds = 0, nanos = 0;
    while (b < e) {
        uint64_t tag, v;
        if (read_tag(&b, e, &tag) < 0)
            return NULL;
        if ((tag == ((1 << 3) | 0) || tag == ((2 << 3) | 0))) {
            if (read_varint(&b, e, &v) < 0)
                return NULL;
            if (tag >> 3 == 1)
                seconds = (int64_t)v;
            else
                nanos = (int32_t)v;
        }
        else if (skip(&b, e, (int)(tag & 7)) < 0)
            return NULL;
    }
    return PyObject_CallFunction(fn, "LL", (long long)seconds, (long long)nanos);
}

static PyObject *
msg_decode(MsgPlan *p, const uint8_t *b, const uint8_t *e, int depth)
{
    PyObject *vals[MAX_FIELDS] = {NULL};
    uint64_t ints[MAX_FIELDS] = {0};
    char seen[MAX_FIELDS] = {0};
    PyObject *obj = NULL;
    if (!p->ready || depth > MAX_DEPTH)
        return NULL;
    while (b < e) {
        uint64_t tag;
        const uint8_t *x, *y;
        if (read_tag(&b, e, &tag) < 0)
            goto fail;
        int num = (int)(tag >> 3), wt = (int)(tag & 7);
        Py_ssize_t i = 0;
        while (i < p->n && p->fields[i].number != num)
            i++;
        if (i == p->n) {
            if (skip(&b, e, wt) < 0)
                goto fail;
            continue;
        }
        QField *f = &p->fields[i];
        PyObject *v = NULL;
        int list = f->kind == Q_LIST_MSG || f->kind == Q_LIST_STR || f->kind == Q_LIST_PART;
        if (seen[i] && !list)
            goto fail; /* twice: scalars replace, messages merge; upb writes neither */
        seen[i] = 1;
        if (f->kind == Q_INT || f->kind == Q_BOOL || f->kind == Q_ENUM) {
            if (wt != 0 || read_varint(&b, e, &ints[i]) < 0)
                goto fail;
            continue;
        }
        if (wt != 2 || read_len(&b, e, &x, &y) < 0)
            goto fail;
        switch (f->kind) {
        case Q_STR:
        case Q_LIST_STR:
            v = utf8(x, y);
            break;
        case Q_MSG:
        case Q_LIST_MSG:
            v = msg_decode((MsgPlan *)f->arg, x, y, depth + 1);
            break;
        case Q_LIST_PART:
            v = part_decode(x, y, depth + 1);
            break;
        case Q_STRUCT:
            v = read_struct(x, y, depth + 1);
            break;
        case Q_TS:
            v = ts_decode(f->arg, x, y);
            break;
        }
        if (v == NULL)
            goto fail;
        if (list) {
            if (vals[i] == NULL && (vals[i] = PyList_New(0)) == NULL) {
                Py_DECREF(v);
                goto fail;
            }
            int rc = PyList_Append(vals[i], v);
            Py_DECREF(v);
            if (rc < 0)
                goto fail;
        }
        else
            vals[i] = v;
    }
    obj = p->cls->tp_alloc(p->cls, 0);
    if (obj == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < p->n; i++) {
        QField *f = &p->fields[i];
        PyObject *v = vals[i], *out = NULL;
        vals[i] = NULL;
        switch (f->kind) {
        case Q_STR:
            if (f->mode == M_PRESENCE)
                out = v ? v : Py_NewRef(Py_None);
            else if (v == NULL || PyUnicode_GET_LENGTH(v) == 0) {
                Py_XDECREF(v);
                if (f->mode == M_REQUIRED)
                    goto fail;
                out = f->mode == M_OPT ? Py_NewRef(Py_None) : PyUnicode_FromStringAndSize("", 0);
            }
            else
                out = v;
            break;
        case Q_INT:
        case Q_BOOL: {
            /* an int32 keeps its low 32 bits (as protobuf reads it) before "or None" */
            int64_t n = f->kind == Q_INT && f->arg == Py_True ? (int64_t)(int32_t)ints[i]
                                                              : (int64_t)ints[i];
            if ((f->mode == M_PRESENCE && !seen[i]) || (f->mode == M_OPT && n == 0))
                out = Py_NewRef(Py_None);
            else if (f->kind == Q_BOOL)
                out = Py_NewRef(n ? Py_True : Py_False);
            else
                out = PyLong_FromLongLong(n);
            break;
        }
        case Q_ENUM: {
            int32_t n = (int32_t)ints[i];
            if (f->mode == M_OPT && n == 0) {
                out = Py_NewRef(Py_None);
                break;
            }
            PyObject *key = PyLong_FromLong(n);
            out = key ? PyDict_GetItemWithError(f->arg, key) : NULL;
            Py_XDECREF(key);
            if (out == NULL || PyObject_IsTrue(out) != 1)
                goto fail; /* an unknown number: the generated code reports it */
            Py_INCREF(out);
            break;
        }
        case Q_MSG:
        case Q_STRUCT:
        case Q_TS:
            if (v == NULL && f->mode == M_REQUIRED)
                goto fail;
            out = v ? v : Py_NewRef(Py_None);
            break;
        default: /* lists */
            if (v == NULL) {
                if (f->mode == M_REQUIRED)
                    goto fail;
                out = PyTuple_New(0);
            }
            else {
                out = PyList_AsTuple(v);
                Py_DECREF(v);
            }
        }
        if (out == NULL)
            goto fail;
        put(obj, f->offset, out);
    }
    for (Py_ssize_t i = 0; i < p->ntail; i++)
        put(obj, p->tail_off[i], Py_NewRef(p->tail_val[i]));
    return obj;
fail:
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_XDECREF(vals[i]);
    Py_XDECREF(obj);
    return NULL;
}

static PyObject *
msgplan_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cls;
    if (!PyArg_ParseTuple(args, "O!", &PyType_Type, &cls))
        return NULL;
    MsgPlan *p = (MsgPlan *)type->tp_alloc(type, 0);
    if (p != NULL)
        p->cls = (PyTypeObject *)Py_NewRef(cls);
    return (PyObject *)p;
}

/* setup(fields: ((number, kind, mode, descriptor, arg), ...), tail: ((descriptor, value), ...)) */
static PyObject *
msgplan_setup(MsgPlan *p, PyObject *args)
{
    PyObject *fields, *tail;
    if (p->ready) {
        PyErr_SetString(PyExc_RuntimeError, "a plan is set up once");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &fields, &PyTuple_Type, &tail))
        return NULL;
    if (PyTuple_GET_SIZE(fields) > MAX_FIELDS || PyTuple_GET_SIZE(tail) > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many fields");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        QField *f = &p->fields[i];
        PyObject *descr, *arg;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "iiiOO", &f->number, &f->kind,
                              &f->mode, &descr, &arg) ||
            slot_offset(descr, &f->offset) < 0)
            return NULL;
        if ((f->kind == Q_MSG || f->kind == Q_LIST_MSG) && !Py_IS_TYPE(arg, &MsgPlan_Type)) {
            PyErr_SetString(PyExc_TypeError, "a nested message needs a plan");
            return NULL;
        }
        if (f->kind == Q_ENUM && !PyDict_Check(arg)) {
            PyErr_SetString(PyExc_TypeError, "an enum needs its table");
            return NULL;
        }
        f->arg = Py_NewRef(arg);
        p->n = i + 1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tail); i++) {
        PyObject *descr, *value;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(tail, i), "OO", &descr, &value) ||
            slot_offset(descr, &p->tail_off[i]) < 0)
            return NULL;
        p->tail_val[i] = Py_NewRef(value);
        p->ntail = i + 1;
    }
    p->ready = 1;
    Py_RETURN_NONE;
}

static PyObject *
msgplan_loads(MsgPlan *p, PyObject *arg)
{
    char *s;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(arg, &s, &n) < 0)
        return NULL;
    reverse_maps = map_order;
    PyObject *r = msg_decode(p, (const uint8_t *)s, (const uint8_t *)s + n, 0);
    if (r != NULL)
        return r;
    if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_MemoryError))
        return NULL;
    PyErr_Clear(); /* give up: the generated function decides */
    Py_RETURN_NONE;
}

static int
msgplan_traverse(MsgPlan *p, visitproc visit, void *arg)
{
    Py_VISIT(p->cls);
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_VISIT(p->fields[i].arg);
    for (Py_ssize_t i = 0; i < p->ntail; i++)
        Py_VISIT(p->tail_val[i]);
    return 0;
}

static int
msgplan_clear(MsgPlan *p)
{
    Py_CLEAR(p->cls);
    for (Py_ssize_t i = 0; i < p->n; i++)
        Py_CLEAR(p->fields[i].arg);
    for (Py_ssize_t i = 0; i < p->ntail; i++)
        Py_CLEAR(p->tail_val[i]);
    p->n = p->ntail = 0;
    p->ready = 0;
    return 0;
}

static void
msgplan_dealloc(MsgPlan *p)
{
    PyObject_GC_UnTrack(p);
    msgplan_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMethodDef msgplan_methods[] = {
    {"setup", (PyCFunction)msgplan_setup, METH_VARARGS, "setup(fields, tail): the tables."},
    {"loads", (PyCFunction)msgplan_loads, METH_O, "loads(bytes) -> the model, or None."},
    {NULL},
};

static PyTypeObject MsgPlan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "a2a_models.adapters.grpc._pbwire.MsgPlan",
    .tp_doc = "MsgPlan(cls): reads one message's bytes into cls (after setup()).",
    .tp_basicsize = sizeof(MsgPlan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = msgplan_new,
    .tp_dealloc = (destructor)msgplan_dealloc,
    .tp_traverse = (traverseproc)msgplan_traverse,
    .tp_clear = (inquiry)msgplan_clear,
    .tp_methods = msgplan_methods,
};

/* set_part(text_cls, text_slots, file_cls, file_slots, data_cls, data_slots, numbers) */
static PyObject *
set_part(PyObject *self, PyObject *args)
{
    PyObject *tc, *ts, *fc, *fs, *dc, *ds, *nums;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!", &PyType_Type, &tc, &PyTuple_Type, &ts,
                          &PyType_Type, &fc, &PyTuple_Type, &fs, &PyType_Type, &dc, &PyTuple_Type,
                          &ds, &PyTuple_Type, &nums))
        return NULL;
    if (PyTuple_GET_SIZE(ts) != 4 || PyTuple_GET_SIZE(fs) != 5 || PyTuple_GET_SIZE(ds) != 4 ||
        PyTuple_GET_SIZE(nums) != 7) {
        PyErr_SetString(PyExc_ValueError, "expected 4, 5 and 4 slots and 7 numbers");
        return NULL;
    }
    for (int i = 0; i < 5; i++) {
        if ((i < 4 && (slot_offset(PyTuple_GET_ITEM(ts, i), &part.text_off[i]) < 0 ||
                       slot_offset(PyTuple_GET_ITEM(ds, i), &part.data_off[i]) < 0)) ||
            slot_offset(PyTuple_GET_ITEM(fs, i), &part.file_off[i]) < 0)
            return NULL;
    }
    for (int i = 0; i < 7; i++) {
        part.num[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(nums, i));
        if (part.num[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    Py_XSETREF(part.text, (PyTypeObject *)Py_NewRef(tc));
    Py_XSETREF(part.file, (PyTypeObject *)Py_NewRef(fc));
    Py_XSETREF(part.data, (PyTypeObject *)Py_NewRef(dc));
    Py_RETURN_NONE;
}

/* set_map_order(reverse): the order msg plans read Struct maps in. */
static PyObject *
set_map_order(PyObject *self, PyObject *arg)
{
    map_order = PyObject_IsTrue(arg) == 1;
    Py_RETURN_NONE;
}

