/* Optional compiled accelerator of a2a_models.codec (docs/accelerator.md).
 *
 * Table-driven decoders and encoders ("plans", built by codec/_fast.py from the
 * dialect tables the pure functions are generated from). A plan runs the valid,
 * common path in C; on anything else it gives up and calls the pure function on
 * the same input, so every result and every error is the pure codec's.
 * Nothing here knows the A2A models: the field kinds are generic.
 */
#include "_speedups.h"

static PyObject *decode_obj(Plan *p, PyObject *d, int depth);
static PyObject *encode_obj(Plan *p, PyObject *o, int depth);


/* A dict sized for n members (no resize while filling it). */
static inline PyObject *
new_dict(Py_ssize_t n)
{
#if PY_VERSION_HEX < 0x030D0000
    return _PyDict_NewPresized(n);
#else
    (void)n;
    return PyDict_New();
#endif
}

/* Decode (or encode) one value with a plan or, for anything else, by calling it. */
static inline PyObject *
run(PyObject *arg, PyObject *v, int depth, int encode)
{
    if (Py_IS_TYPE(arg, &Plan_Type))
        return encode ? encode_obj((Plan *)arg, v, depth + 1) : decode_obj((Plan *)arg, v, depth + 1);
    if (Py_IS_TYPE(arg, &PartPlan_Type))
        return encode ? encode_part((PartPlan *)arg, v) : decode_part((PartPlan *)arg, v);
    return PyObject_CallOneArg(arg, v);
}

static PyObject *
decode_obj(Plan *p, PyObject *d, int depth)
{
    if (!PyDict_CheckExact(d) || depth > MAX_DEPTH || p->fields == NULL)
        return NULL; /* (no tables: setup failed, the plan always gives up) */
    if (p->aliases != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(p->aliases);
        for (Py_ssize_t i = 0; i < n; i++) {
            int r = PyDict_Contains(d, PyTuple_GET_ITEM(p->aliases, i));
            if (r != 0)
                return NULL;
        }
    }
    if (p->constants != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(p->constants);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *pair = PyTuple_GET_ITEM(p->constants, i);
            PyObject *v = PyDict_GetItemWithError(d, PyTuple_GET_ITEM(pair, 0));
            if (v != NULL && v != Py_None) {
                if (PyObject_RichCompareBool(v, PyTuple_GET_ITEM(pair, 1), Py_EQ) != 1)
                    return NULL;
            }
            else if (PyErr_Occurred())
                return NULL;
        }
    }
    PyObject *obj = p->cls->tp_alloc(p->cls, 0);
    if (obj == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < p->nfields; i++) {
        Field *f = &p->fields[i];
        PyObject *v = PyDict_GetItemWithError(d, f->key);
        PyObject *x = NULL;
        int absent = (v == NULL || v == Py_None);
        if (v == NULL && PyErr_Occurred())
            goto fail;
        if (!absent) {
            switch (f->kind) {
            case K_ANY:
                Py_INCREF(v);
                x = v;
                break;
            case K_STR:
                if (!PyUnicode_CheckExact(v))
                    goto fail;
                if (PyUnicode_GET_LENGTH(v) == 0) {
                    if (f->flags & F_UNSET)
                        absent = 1;
                    else if (f->flags & F_NONEMPTY)
                        goto fail;
                }
                if (!absent) {
                    Py_INCREF(v);
                    x = v;
                }
                break;
            case K_STRUCT:
                if (!PyDict_CheckExact(v))
                    goto fail;
                Py_INCREF(v);
                x = v;
                break;
            case K_ENUM:
                if (!PyUnicode_CheckExact(v))
                    goto fail;
                x = PyDict_GetItemWithError(f->arg, v);
                if (x == NULL)
                    goto fail;
                Py_INCREF(x);
                break;
            case K_OBJ:
            case K_PART:
                x = run(f->arg, v, depth, 0);
                if (x == NULL)
                    goto fail;
                break;
            case K_LIST: {
                if (!PyList_CheckExact(v))
                    goto fail;
                Py_ssize_t n = PyList_GET_SIZE(v);
                if (n == 0 && (f->flags & F_UNSET)) {
                    absent = 1;
                    break;
                }
                if (n == 0 && (f->flags & F_NONEMPTY))
                    goto fail;
                x = PyTuple_New(n);
                if (x == NULL)
                    goto fail;
                for (Py_ssize_t j = 0; j < n; j++) {
                    PyObject *item = run(f->arg, PyList_GET_ITEM(v, j), depth, 0);
                    if (item == NULL) {
                        Py_DECREF(x);
                        goto fail;
                    }
                    PyTuple_SET_ITEM(x, j, item);
                }
                break;
            }
            case K_CALL: {
                int r = call_field(f, v, &x);
                if (r < 0)
                    goto fail;
                absent = (r == 0);
                break;
            }
            default:
                goto fail;
            }
        }
        if (absent) {
            x = field_default(f);
            if (x == NULL)
                goto fail;
        }
        Py_XSETREF(*SLOT(obj, f->offset), x);
    }
    for (Py_ssize_t i = 0; i < p->ntail; i++) {
        Field *f = &p->tail[i];
        PyObject *x;
        if (f->flags & F_FACTORY) {
            x = PyObject_CallNoArgs(f->deflt);
            if (x == NULL)
                goto fail;
        }
        else {
            Py_INCREF(f->deflt);
            x = f->deflt;
        }
        Py_XSETREF(*SLOT(obj, f->offset), x);
    }
    if (p->validate != NULL) {
        PyObject *r = PyObject_CallOneArg(p->validate, obj);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    return obj;
fail:
    Py_DECREF(obj);
    return NULL;
}

static PyObject *
encode_obj(Plan *p, PyObject *o, int depth)
{
    if (Py_TYPE(o) != p->cls || depth > MAX_DEPTH || p->fields == NULL)
        return NULL;
    PyObject *r = new_dict(p->nfields + (p->constants ? PyTuple_GET_SIZE(p->constants) : 0));
    if (r == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < p->nfields; i++) {
        Field *f = &p->fields[i];
        PyObject *v = *SLOT(o, f->offset);
        PyObject *x;
        if (v == NULL)
            goto fail;
        int present = field_present(f, v);
        if (present <= 0) {
            if (present < 0)
                goto fail;
            continue;
        }
        switch (f->kind) {
        case E_PLAIN:
            Py_INCREF(v);
            x = v;
            break;
        case E_OBJ:
        case E_PART:
            x = run(f->arg, v, depth, 1);
            break;
        case E_CALL:
        case E_TIMESTAMP:
            x = PyObject_CallOneArg(f->arg, v);
            break;
        case E_ENUM: {
            /* arg: ((member, wire name), ...); by identity (Enum.__hash__ is Python code) */
            Py_ssize_t n = PyTuple_GET_SIZE(f->arg);
            x = NULL;
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *pair = PyTuple_GET_ITEM(f->arg, j);
                if (PyTuple_GET_ITEM(pair, 0) == v) {
                    x = PyTuple_GET_ITEM(pair, 1);
                    Py_INCREF(x);
                    break;
                }
            }
            break; /* not found: give up (a member this dialect cannot write) */
        }
        case E_LIST: {
            if (!PyTuple_CheckExact(v))
                goto fail;
            Py_ssize_t n = PyTuple_GET_SIZE(v);
            x = PyList_New(n);
            if (x == NULL)
                goto fail;
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *item = run(f->arg, PyTuple_GET_ITEM(v, j), depth, 1);
                if (item == NULL) {
                    Py_DECREF(x);
                    goto fail;
                }
                PyList_SET_ITEM(x, j, item);
            }
            break;
        }
        default:
            goto fail;
        }
        if (x == NULL)
            goto fail;
        int rc = PyDict_SetItem(r, f->key, x);
        Py_DECREF(x);
        if (rc < 0)
            goto fail;
    }
    if (p->constants != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(p->constants);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *pair = PyTuple_GET_ITEM(p->constants, i);
            if (PyDict_SetItem(r, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0)
                goto fail;
        }
    }
    return r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* ------------------------------------------------------------------ parts */

PyObject *
new_part(PyTypeObject *cls, Py_ssize_t *off, PyObject *content, PyObject *meta)
{
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (obj == NULL)
        return NULL;
    Py_INCREF(content);
    *SLOT(obj, off[0]) = content;
    Py_INCREF(meta);
    *SLOT(obj, off[1]) = meta;
    Py_INCREF(Py_None);
    *SLOT(obj, off[2]) = Py_None;
    Py_INCREF(Py_None);
    *SLOT(obj, off[3]) = Py_None;
    return obj;
}

PyObject *
decode_part(PartPlan *p, PyObject *d)
{
    if (!PyDict_CheckExact(d))
        return NULL;
    Py_ssize_t n = PyDict_GET_SIZE(d);
    PyObject *meta = PyDict_GetItemWithError(d, p->k_meta);
    if (meta == NULL) {
        if (PyErr_Occurred())
            return NULL;
        meta = Py_None;
    }
    else {
        n--; /* a metadata member: null, or an object kept as is */
        if (meta != Py_None && !PyDict_CheckExact(meta))
            return PyObject_CallOneArg(p->fallback, d);
    }
    PyObject *t;
    if (p->tagged) {
        /* {"kind": "text", "text": "..."} or {"kind": "data", "data": {...}} */
        if (n != 2)
            return PyObject_CallOneArg(p->fallback, d);
        PyObject *k = PyDict_GetItemWithError(d, p->k_kind);
        if (k == NULL || !PyUnicode_CheckExact(k)) {
            if (PyErr_Occurred())
                return NULL;
            return PyObject_CallOneArg(p->fallback, d);
        }
        if (PyUnicode_Compare(k, p->v_text) == 0) {
            t = PyDict_GetItemWithError(d, p->k_text);
            if (t != NULL && PyUnicode_CheckExact(t))
                return new_part(p->text_cls, p->text_off, t, meta);
        }
        else if (PyUnicode_Compare(k, p->v_data) == 0) {
            t = PyDict_GetItemWithError(d, p->k_data);
            if (t != NULL && PyDict_CheckExact(t))
                return new_part(p->data_cls, p->data_off, t, meta);
        }
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallOneArg(p->fallback, d);
    }
    /* {"text": "..."} or {"data": ...}, each with an optional metadata */
    if (n == 1) {
        t = PyDict_GetItemWithError(d, p->k_text);
        if (t != NULL && PyUnicode_CheckExact(t))
            return new_part(p->text_cls, p->text_off, t, meta);
        if (t == NULL) {
            if (PyErr_Occurred())
                return NULL;
            t = PyDict_GetItemWithError(d, p->k_data);
            if (t != NULL)
                return new_part(p->data_cls, p->data_off, t, meta);
            if (PyErr_Occurred())
                return NULL;
        }
    }
    return PyObject_CallOneArg(p->fallback, d);
}

/* A file part: {"raw"|"url", metadata, filename, mediaType} in 1.0,
 * {"kind": "file", "file": {"bytes"|"uri", mimeType, name}, metadata} in 0.3. */
static PyObject *
encode_file(PartPlan *p, PyObject *o)
{
    PyObject *raw = *SLOT(o, p->file_off[0]), *url = *SLOT(o, p->file_off[1]);
    PyObject *meta = *SLOT(o, p->file_off[2]), *name = *SLOT(o, p->file_off[3]);
    PyObject *media = *SLOT(o, p->file_off[4]);
    if (!raw || !url || !meta || !name || !media)
        return PyObject_CallOneArg(p->fallback, o);
    PyObject *r = new_dict(4), *f = NULL, *content, *ckey;
    if (r == NULL)
        return NULL;
    if (p->tagged) {
        f = new_dict(3);
        if (f == NULL)
            goto fail;
    }
    PyObject *inner = p->tagged ? f : r;
    content = file_content(p, raw, url, &ckey);
    if (content == NULL)
        goto fail;
    int rc = PyDict_SetItem(inner, ckey, content);
    Py_DECREF(content);
    if (rc < 0)
        goto fail;
    if (p->tagged) {
        if ((media != Py_None && PyDict_SetItem(f, p->fk_media, media) < 0) ||
            (name != Py_None && PyDict_SetItem(f, p->fk_name, name) < 0) ||
            PyDict_SetItem(r, p->k_kind, p->fk_file) < 0 || PyDict_SetItem(r, p->fk_file, f) < 0 ||
            (meta != Py_None && PyDict_SetItem(r, p->k_meta, meta) < 0))
            goto fail;
        Py_DECREF(f);
        return r;
    }
    /* 1.0: empty strings count as unset (ProtoJSON) */
    int has_name = PyObject_IsTrue(name), has_media = PyObject_IsTrue(media);
    if (has_name < 0 || has_media < 0 ||
        (meta != Py_None && PyDict_SetItem(r, p->k_meta, meta) < 0) ||
        (has_name && PyDict_SetItem(r, p->fk_name, name) < 0) ||
        (has_media && PyDict_SetItem(r, p->fk_media, media) < 0))
        goto fail;
    return r;
fail:
    Py_XDECREF(f);
    Py_DECREF(r);
    return NULL;
}

PyObject *
encode_part(PartPlan *p, PyObject *o)
{
    /* Text and data parts without filename or media type; the rest: the hook. */
    PyObject *content, *meta, *key, *val;
    switch (part_shape(p, o, &content, &meta, &key, &val)) {
    case PART_BARE:
        break;
    case PART_FILE:
        return encode_file(p, o);
    default:
        return PyObject_CallOneArg(p->fallback, o);
    }
    PyObject *r = PyDict_New();
    if (r == NULL)
        return NULL;
    if ((p->tagged && PyDict_SetItem(r, p->k_kind, val) < 0) || PyDict_SetItem(r, key, content) < 0 ||
        (meta != Py_None && PyDict_SetItem(r, p->k_meta, meta) < 0)) {
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------------------ calls */

static PyObject *
plan_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Plan *p = (Plan *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a codec plan takes one argument");
        return NULL;
    }
    PyObject *v = args[0];
    PyObject *r = p->encode ? encode_obj(p, v, 0) : decode_obj(p, v, 0);
    if (r != NULL)
        return r;
    /* Gave up: the pure function decides (result or error). */
    PyErr_Clear();
    return PyObject_CallOneArg(p->fallback, v);
}

static PyObject *
part_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PartPlan *p = (PartPlan *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a codec plan takes one argument");
        return NULL;
    }
    PyObject *r = p->encode ? encode_part(p, args[0]) : decode_part(p, args[0]);
    if (r != NULL)
        return r;
    PyErr_Clear();
    return PyObject_CallOneArg(p->fallback, args[0]);
}

/* ------------------------------------------------------------------ building plans */

static void
clear_fields(Field *fs, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_CLEAR(fs[i].key);
        Py_CLEAR(fs[i].arg);
        Py_CLEAR(fs[i].empty);
        Py_CLEAR(fs[i].deflt);
    }
    PyMem_Free(fs);
}

/* fields: sequence of (key, descriptor, kind, flags, arg, empty, default) */
static int
parse_fields(PyObject *seq, Field **out, Py_ssize_t *nout)
{
    PyObject *fast = PySequence_Fast(seq, "fields must be a sequence");
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    Field *fs = PyMem_Calloc(n ? n : 1, sizeof(Field));
    if (fs == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key, *descr, *arg, *empty, *deflt;
        int kind, flags;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "OOiiOOO;a field is "
                              "(key, descriptor, kind, flags, arg, empty, default)",
                              &key, &descr, &kind, &flags, &arg, &empty, &deflt) ||
            slot_offset(descr, &fs[i].offset) < 0) {
            clear_fields(fs, n);
            Py_DECREF(fast);
            return -1;
        }
        if (PyUnicode_Check(key)) {
            Py_INCREF(key);
            PyUnicode_InternInPlace(&key);
        }
        else
            Py_INCREF(key);
        fs[i].key = key;
        if (PyUnicode_Check(key)) {
            fs[i].kb = PyUnicode_AsUTF8AndSize(key, &fs[i].klen);
            if (fs[i].kb == NULL) /* (a key that is not UTF-8: no bytes path) */
                PyErr_Clear();
        }
        fs[i].kind = kind;
        fs[i].flags = flags;
        Py_INCREF(arg);
        fs[i].arg = arg;
        Py_INCREF(empty);
        fs[i].empty = empty;
        Py_INCREF(deflt);
        fs[i].deflt = deflt;
    }
    Py_DECREF(fast);
    *out = fs;
    *nout = n;
    return 0;
}

static PyObject *
plan_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"cls", "fallback", "encode", NULL};
    PyObject *cls, *fallback;
    int encode = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O|p", kwlist, &PyType_Type, &cls, &fallback,
                                     &encode))
        return NULL;
    Plan *p = (Plan *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    p->vectorcall = plan_vectorcall;
    Py_INCREF(cls);
    p->cls = (PyTypeObject *)cls;
    Py_INCREF(fallback);
    p->fallback = fallback;
    p->encode = encode;
    return (PyObject *)p;
}

/* plan.setup(fields, tail, aliases, constants, validate): fill in (or replace)
 * the tables; separate from construction so plans may refer to each other. */
static PyObject *
plan_setup(Plan *p, PyObject *args)
{
    PyObject *fields, *tail, *aliases, *constants, *validate;
    if (!PyArg_ParseTuple(args, "OOOOO", &fields, &tail, &aliases, &constants, &validate))
        return NULL;
    Field *fs, *ts;
    Py_ssize_t nf, nt;
    if (parse_fields(fields, &fs, &nf) < 0)
        return NULL;
    if (parse_fields(tail, &ts, &nt) < 0) {
        clear_fields(fs, nf);
        return NULL;
    }
    if (p->fields)
        clear_fields(p->fields, p->nfields);
    if (p->tail)
        clear_fields(p->tail, p->ntail);
    p->fields = fs;
    p->nfields = nf;
    p->tail = ts;
    p->ntail = nt;
#define SET_OPT(member, value, check)                                  \
    do {                                                                \
        PyObject *v_ = (value) == Py_None ? NULL : (value);             \
        if (v_ != NULL && !(check)) {                                   \
            PyErr_SetString(PyExc_TypeError, #member " has a bad type"); \
            return NULL;                                                \
        }                                                               \
        Py_XINCREF(v_);                                                 \
        Py_XSETREF(p->member, v_);                                      \
    } while (0)
    SET_OPT(aliases, aliases, PyTuple_CheckExact(aliases));
    SET_OPT(constants, constants, PyTuple_CheckExact(constants));
    SET_OPT(validate, validate, PyCallable_Check(validate));
#undef SET_OPT
    p->direct = a2a_direct_plan_ready(p);
    Py_RETURN_NONE;
}

static int
plan_traverse(Plan *p, visitproc visit, void *arg)
{
    Py_VISIT(p->cls);
    Py_VISIT(p->fallback);
    Py_VISIT(p->aliases);
    Py_VISIT(p->constants);
    Py_VISIT(p->validate);
    for (Py_ssize_t i = 0; i < p->nfields; i++) {
        Py_VISIT(p->fields[i].arg);
        Py_VISIT(p->fields[i].empty);
        Py_VISIT(p->fields[i].deflt);
    }
    for (Py_ssize_t i = 0; i < p->ntail; i++)
        Py_VISIT(p->tail[i].deflt);
    return 0;
}

static int
plan_clear(Plan *p)
{
    Py_CLEAR(p->cls);
    Py_CLEAR(p->fallback);
    Py_CLEAR(p->aliases);
    Py_CLEAR(p->constants);
    Py_CLEAR(p->validate);
    if (p->fields) {
        clear_fields(p->fields, p->nfields);
        p->fields = NULL;
        p->nfields = 0;
    }
    if (p->tail) {
        clear_fields(p->tail, p->ntail);
        p->tail = NULL;
        p->ntail = 0;
    }
    return 0;
}

static void
plan_dealloc(Plan *p)
{
    PyObject_GC_UnTrack(p);
    plan_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMethodDef plan_methods[] = {
    {"setup", (PyCFunction)plan_setup, METH_VARARGS,
     "setup(fields, tail, aliases, constants, validate): install the tables."},
    {NULL},
};

static PyMemberDef plan_members[] = {
    {"fallback", T_OBJECT, offsetof(Plan, fallback), READONLY, "the pure function"},
    {"direct", T_INT, offsetof(Plan, direct), READONLY,
     "whether the bytes-direct reader and writer run this plan"},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Plan, vectorcall), READONLY},
    {NULL},
};

PyTypeObject Plan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "a2a_models.codec._speedups.Plan",
    .tp_doc = "Plan(cls, fallback, encode=False): a compiled decoder or encoder of cls.",
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = plan_new,
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_traverse = (traverseproc)plan_traverse,
    .tp_clear = (inquiry)plan_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Plan, vectorcall),
    .tp_methods = plan_methods,
    .tp_members = plan_members,
};

static PyObject *
partplan_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"text_cls", "text_slots", "data_cls", "data_slots", "fallback",
                             "tagged", "encode", NULL};
    PyObject *text_cls, *data_cls, *ts, *ds, *fallback;
    int tagged = 0, encode = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O!O|pp", kwlist, &PyType_Type, &text_cls,
                                     &PyTuple_Type, &ts, &PyType_Type, &data_cls, &PyTuple_Type,
                                     &ds, &fallback, &tagged, &encode))
        return NULL;
    if (PyTuple_GET_SIZE(ts) != 4 || PyTuple_GET_SIZE(ds) != 4) {
        PyErr_SetString(PyExc_ValueError, "expected 4 slot descriptors per part class");
        return NULL;
    }
    PartPlan *p = (PartPlan *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    p->vectorcall = part_vectorcall;
    for (int i = 0; i < 4; i++) {
        if (slot_offset(PyTuple_GET_ITEM(ts, i), &p->text_off[i]) < 0 ||
            slot_offset(PyTuple_GET_ITEM(ds, i), &p->data_off[i]) < 0) {
            Py_DECREF(p);
            return NULL;
        }
    }
    Py_INCREF(text_cls);
    p->text_cls = (PyTypeObject *)text_cls;
    Py_INCREF(data_cls);
    p->data_cls = (PyTypeObject *)data_cls;
    Py_INCREF(fallback);
    p->fallback = fallback;
    p->tagged = tagged;
    p->encode = encode;
    p->k_text = PyUnicode_InternFromString("text");
    p->k_data = PyUnicode_InternFromString("data");
    p->k_meta = PyUnicode_InternFromString("metadata");
    p->k_kind = PyUnicode_InternFromString("kind");
    p->v_text = PyUnicode_InternFromString("text");
    p->v_data = PyUnicode_InternFromString("data");
    if (!p->k_text || !p->k_data || !p->k_meta || !p->k_kind || !p->v_text || !p->v_data) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

/* plan.set_file(file_cls, (raw, url, metadata, filename, media_type descriptors),
 *               b64encode, (raw key, url key, filename key, media key, file key or None)) */
static PyObject *
partplan_set_file(PartPlan *p, PyObject *args)
{
    PyObject *cls, *slots, *b64e, *keys;
    if (!PyArg_ParseTuple(args, "O!O!OO!", &PyType_Type, &cls, &PyTuple_Type, &slots, &b64e,
                          &PyTuple_Type, &keys))
        return NULL;
    if (PyTuple_GET_SIZE(slots) != 5 || PyTuple_GET_SIZE(keys) != 5) {
        PyErr_SetString(PyExc_ValueError, "expected 5 slot descriptors and 5 keys");
        return NULL;
    }
    for (int i = 0; i < 5; i++)
        if (slot_offset(PyTuple_GET_ITEM(slots, i), &p->file_off[i]) < 0)
            return NULL;
    PyObject **dest[5] = {&p->fk_raw, &p->fk_url, &p->fk_name, &p->fk_media, &p->fk_file};
    for (int i = 0; i < 5; i++) {
        PyObject *k = PyTuple_GET_ITEM(keys, i);
        if (k == Py_None && i < 4) {
            PyErr_SetString(PyExc_ValueError, "only the file key may be None");
            return NULL;
        }
        Py_XINCREF(k == Py_None ? NULL : k);
        Py_XSETREF(*dest[i], k == Py_None ? NULL : k);
    }
    if (p->tagged && p->fk_file == NULL) {
        PyErr_SetString(PyExc_ValueError, "a tagged part plan needs the file key");
        return NULL;
    }
    Py_INCREF(b64e);
    Py_XSETREF(p->b64e, b64e);
    Py_INCREF(cls);
    Py_XSETREF(p->file_cls, (PyTypeObject *)cls);
    Py_RETURN_NONE;
}

static PyMethodDef partplan_methods[] = {
    {"set_file", (PyCFunction)partplan_set_file, METH_VARARGS,
     "set_file(cls, slots, b64encode, keys): encode file parts in C too."},
    {NULL},
};

static int
partplan_traverse(PartPlan *p, visitproc visit, void *arg)
{
    Py_VISIT(p->file_cls);
    Py_VISIT(p->b64e);
    Py_VISIT(p->text_cls);
    Py_VISIT(p->data_cls);
    Py_VISIT(p->fallback);
    return 0;
}

static int
partplan_clear(PartPlan *p)
{
    Py_CLEAR(p->text_cls);
    Py_CLEAR(p->data_cls);
    Py_CLEAR(p->fallback);
    Py_CLEAR(p->k_text);
    Py_CLEAR(p->k_data);
    Py_CLEAR(p->k_meta);
    Py_CLEAR(p->k_kind);
    Py_CLEAR(p->v_text);
    Py_CLEAR(p->v_data);
    Py_CLEAR(p->file_cls);
    Py_CLEAR(p->b64e);
    Py_CLEAR(p->fk_raw);
    Py_CLEAR(p->fk_url);
    Py_CLEAR(p->fk_name);
    Py_CLEAR(p->fk_media);
    Py_CLEAR(p->fk_file);
    return 0;
}

static void
partplan_dealloc(PartPlan *p)
{
    PyObject_GC_UnTrack(p);
    partplan_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMemberDef partplan_members[] = {
    {"fallback", T_OBJECT, offsetof(PartPlan, fallback), READONLY, "the pure hook"},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(PartPlan, vectorcall), READONLY},
    {NULL},
};

PyTypeObject PartPlan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "a2a_models.codec._speedups.PartPlan",
    .tp_doc = "PartPlan(text_cls, text_slots, data_cls, data_slots, fallback, tagged=False, "
              "encode=False): bare text and data parts in C, the rest by the pure hook.",
    .tp_basicsize = sizeof(PartPlan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = partplan_new,
    .tp_dealloc = (destructor)partplan_dealloc,
    .tp_traverse = (traverseproc)partplan_traverse,
    .tp_clear = (inquiry)partplan_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(PartPlan, vectorcall),
    .tp_members = partplan_members,
    .tp_methods = partplan_methods,
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "a2a_models.codec._speedups",
    .m_doc = "Optional compiled accelerator of a2a_models.codec (plans built by codec._fast).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&Plan_Type) < 0 || PyType_Ready(&PartPlan_Type) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&speedups_module);
    if (mod == NULL)
        return NULL;
    if (PyModule_AddObjectRef(mod, "Plan", (PyObject *)&Plan_Type) < 0 ||
        PyModule_AddObjectRef(mod, "PartPlan", (PyObject *)&PartPlan_Type) < 0 ||
        PyModule_AddIntConstant(mod, "ABI", 3) < 0 ||
        PyModule_AddFunctions(mod, a2a_direct_methods) < 0 || a2a_direct_init(mod) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
#define K(name) if (PyModule_AddIntConstant(mod, #name, name) < 0) { Py_DECREF(mod); return NULL; }
    K(K_ANY) K(K_STR) K(K_OBJ) K(K_LIST) K(K_ENUM) K(K_CALL) K(K_PART) K(K_STRUCT)
    K(F_REQUIRED) K(F_UNSET) K(F_NONEMPTY) K(F_FACTORY) K(F_EMPTY_IS)
    K(P_ALWAYS) K(P_NOT_NONE) K(P_TRUTHY) K(P_NE) K(P_REQUIRED) K(P_UNSUPPORTED)
    K(E_PLAIN) K(E_OBJ) K(E_LIST) K(E_CALL) K(E_PART) K(E_ENUM) K(E_TIMESTAMP)
#undef K
    return mod;
}
