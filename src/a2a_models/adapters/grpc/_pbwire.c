/* Optional compiled reader/writer of google.protobuf.Struct / Value wire bytes, and
 * reader of whole lf.a2a.v1 messages (_pbwire_msg.h), writer of whole messages from
 * their ProtoJSON (_pbwire_json.h)
 * (part of the codec accelerator, docs/accelerator.md).
 *
 * Converting Struct/Value messages member by member through the protobuf
 * runtime costs a Python call per value. Instead the gRPC binding serializes
 * the (already parsed) message and these functions read the bytes into JSON
 * values, or write JSON values as bytes that the message then parses. Anything
 * unusual (a Value without a kind, a number a double cannot hold exactly, a
 * non-JSON value, bad UTF-8, deep nesting, unknown wire types) returns None:
 * the pure functions then do it, with their own results and errors.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../codec/_slots.h" /* SLOT, slot_offset (shared with the codec) */

#define MAX_DEPTH 100
/* The writer counts messages as protobuf's parser does (a Struct, a map entry, a
 * Value, a ListValue: one each) and gives up below its limit of 100: the message
 * then parses the bytes it writes (deeper values are written member by member). */
#define MAX_WRITE_DEPTH 96
#define MAX_EXACT 9007199254740992LL /* 2**53 */

/* ------------------------------------------------------------------ reading */

static int
read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

/* A field's tag. Gives up on field number 0 and on numbers above 2**29 - 1
 * (protobuf rejects both; and (int)(tag >> 3) of a larger one could alias a
 * known number). */
static int
read_tag(const uint8_t **p, const uint8_t *end, uint64_t *tag)
{
    if (read_varint(p, end, tag) < 0 || *tag < 8 || *tag > 0xffffffffu)
        return -1;
    return 0;
}

/* The payload of a length-delimited field. */
static int
read_len(const uint8_t **p, const uint8_t *end, const uint8_t **start, const uint8_t **stop)
{
    uint64_t n;
    if (read_varint(p, end, &n) < 0 || n > (uint64_t)(end - *p))
        return -1;
    *start = *p;
    *stop = *p + n;
    *p += n;
    return 0;
}

/* Skip a field of an unknown number. */
static int
skip(const uint8_t **p, const uint8_t *end, int wt)
{
    uint64_t n;
    const uint8_t *a, *b;
    switch (wt) {
    case 0:
        return read_varint(p, end, &n);
    case 1:
        if (end - *p < 8)
            return -1;
        *p += 8;
        return 0;
    case 2:
        return read_len(p, end, &a, &b);
    case 5:
        if (end - *p < 4)
            return -1;
        *p += 4;
        return 0;
    default:
        return -1; /* groups: give up */
    }
}

static PyObject *read_struct(const uint8_t *p, const uint8_t *end, int depth);
/* Map entries in the reverse of their order on the wire: the protobuf runtime
 * writes a map's entries in the reverse of the order it iterates them, and the
 * pure code returns them in iteration order (set per call; the GIL is held). */
static int reverse_maps = 0;
static int map_order = 0; /* the order whole-message plans use (set_map_order) */
static PyObject *read_list(const uint8_t *p, const uint8_t *end, int depth);

/* A number as the pure code returns it: integral doubles as int (except -0.0). */
static PyObject *
number(double d)
{
    if (isfinite(d) && d == floor(d) && !(d == 0.0 && signbit(d)))
        return PyLong_FromDouble(d);
    return PyFloat_FromDouble(d);
}

static PyObject *
read_value(const uint8_t *p, const uint8_t *end, int depth)
{
    PyObject *out = NULL;
    if (depth > MAX_DEPTH)
        return NULL;
    while (p < end) {
        uint64_t tag, n;
        const uint8_t *a, *b;
        PyObject *x = NULL;
        if (read_tag(&p, end, &tag) < 0)
            goto fail;
        int field = (int)(tag >> 3), wt = (int)(tag & 7);
        if (field == 1 && wt == 0) { /* null_value */
            if (read_varint(&p, end, &n) < 0)
                goto fail;
            x = Py_NewRef(Py_None);
        }
        else if (field == 2 && wt == 1) { /* number_value */
            double d;
            if (end - p < 8)
                goto fail;
            memcpy(&d, p, 8); /* little-endian on every platform CPython targets here */
            p += 8;
            x = number(d);
        }
        else if (field == 3 && wt == 2) { /* string_value */
            if (read_len(&p, end, &a, &b) < 0)
                goto fail;
            x = PyUnicode_DecodeUTF8((const char *)a, b - a, NULL);
        }
        else if (field == 4 && wt == 0) { /* bool_value */
            if (read_varint(&p, end, &n) < 0)
                goto fail;
            x = Py_NewRef(n ? Py_True : Py_False);
        }
        else if ((field == 5 || field == 6) && wt == 2) { /* struct_value, list_value */
            if (read_len(&p, end, &a, &b) < 0)
                goto fail;
            x = field == 5 ? read_struct(a, b, depth + 1) : read_list(a, b, depth + 1);
        }
        else {
            if (skip(&p, end, wt) < 0)
                goto fail;
            continue;
        }
        if (x == NULL)
            goto fail;
        if (out != NULL) { /* a kind twice: protobuf merges two structs or lists */
            Py_DECREF(x);
            goto fail;
        }
        out = x;
    }
    return out; /* NULL when no kind is set: the pure code reports it */
fail:
    Py_XDECREF(out);
    return NULL;
}

static PyObject *
read_list(const uint8_t *p, const uint8_t *end, int depth)
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    while (p < end) {
        uint64_t tag;
        const uint8_t *a, *b;
        if (read_tag(&p, end, &tag) < 0)
            goto fail;
        if (tag == ((1 << 3) | 2)) {
            if (read_len(&p, end, &a, &b) < 0)
                goto fail;
            PyObject *x = read_value(a, b, depth);
            if (x == NULL || PyList_Append(out, x) < 0) {
                Py_XDECREF(x);
                goto fail;
            }
            Py_DECREF(x);
        }
        else if (skip(&p, end, (int)(tag & 7)) < 0)
            goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
read_struct(const uint8_t *p, const uint8_t *end, int depth)
{
    if (depth > MAX_DEPTH)
        return NULL;
    PyObject *out = PyDict_New(), *entries = PyList_New(0);
    if (out == NULL || entries == NULL)
        goto fail;
    while (p < end) {
        uint64_t tag;
        const uint8_t *a, *b;
        if (read_tag(&p, end, &tag) < 0)
            goto fail;
        if (tag != ((1 << 3) | 2)) {
            if (skip(&p, end, (int)(tag & 7)) < 0)
                goto fail;
            continue;
        }
        /* A map entry: key = 1 (string), value = 2 (Value). Anything else in it
         * gives up: the protobuf runtime (upb) keeps an entry with an unknown
         * field (a wrong wire type included) as an unknown field of the Struct,
         * out of the map, and writes it back as it came. */
        if (read_len(&p, end, &a, &b) < 0)
            goto fail;
        const uint8_t *ka = NULL, *kb = NULL, *va = NULL, *vb = NULL;
        while (a < b) {
            uint64_t t;
            const uint8_t *s, *e;
            if (read_tag(&a, b, &t) < 0)
                goto fail;
            if (t != ((1 << 3) | 2) && t != ((2 << 3) | 2))
                goto fail;
            if (read_len(&a, b, &s, &e) < 0)
                goto fail;
            if ((t >> 3 == 1 ? ka : va) != NULL)
                goto fail; /* twice: protobuf merges two values */
            if (t >> 3 == 1) {
                ka = s;
                kb = e;
            }
            else {
                va = s;
                vb = e;
            }
        }
        if (va == NULL)
            goto fail; /* a Value without a kind: the pure code reports it */
        PyObject *key = ka ? PyUnicode_DecodeUTF8((const char *)ka, kb - ka, NULL)
                           : PyUnicode_FromStringAndSize("", 0);
        if (key == NULL)
            goto fail;
        PyObject *x = read_value(va, vb, depth);
        PyObject *pair = x ? PyTuple_Pack(2, key, x) : NULL;
        Py_DECREF(key);
        Py_XDECREF(x);
        if (pair == NULL || PyList_Append(entries, pair) < 0) {
            Py_XDECREF(pair);
            goto fail;
        }
        Py_DECREF(pair);
    }
    Py_ssize_t n = PyList_GET_SIZE(entries);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(entries, reverse_maps ? n - 1 - i : i);
        if (PyDict_SetItem(out, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0)
            goto fail;
    }
    if (PyDict_GET_SIZE(out) != n)
        goto fail; /* a key twice: the last one wins in protobuf, its order unknown */
    Py_DECREF(entries);
    return out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(entries);
    return NULL;
}

/* ------------------------------------------------------------------ writing */

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int
reserve(Out *o, Py_ssize_t n)
{
    if (o->len + n <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + n)
        cap *= 2;
    char *nb = PyMem_Realloc(o->buf, cap);
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = nb;
    o->cap = cap;
    return 0;
}

/* A writer's result as bytes: r == 0 the bytes written, r > 0 None (the writer gave
   up: the caller falls back to its pure path), r < 0 NULL (an exception is set).
   Frees the buffer either way. */
static PyObject *
out_finish(Out *o, int r)
{
    PyObject *out = NULL;
    if (r == 0)
        out = PyBytes_FromStringAndSize(o->buf ? o->buf : "", o->len);
    else if (r > 0)
        out = Py_NewRef(Py_None);
    PyMem_Free(o->buf);
    return out;
}

static int
put_varint(Out *o, uint64_t v)
{
    if (reserve(o, 10) < 0)
        return -1;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        o->buf[o->len++] = (char)(v ? b | 0x80 : b);
    } while (v);
    return 0;
}

static int
put_bytes(Out *o, const char *s, Py_ssize_t n)
{
    if (put_varint(o, (uint64_t)n) < 0 || reserve(o, n) < 0)
        return -1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* Start a length-delimited field: returns where its content starts. */
static Py_ssize_t
open_len(Out *o, int field)
{
    if (put_varint(o, ((uint64_t)field << 3) | 2) < 0 || reserve(o, 1) < 0)
        return -1;
    o->len++; /* one byte for the length; moved if it needs more */
    return o->len;
}

static int
close_len(Out *o, Py_ssize_t start)
{
    uint64_t n = (uint64_t)(o->len - start);
    uint8_t tmp[10];
    int k = 0;
    uint64_t v = n;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        tmp[k++] = v ? b | 0x80 : b;
    } while (v);
    if (k > 1) {
        if (reserve(o, k - 1) < 0)
            return -1;
        memmove(o->buf + start + k - 1, o->buf + start, n);
        o->len += k - 1;
    }
    memcpy(o->buf + start - 1, tmp, k);
    return 0;
}

static int write_struct(Out *o, PyObject *d, int depth);

/* The fields of a Value holding v; 1: not a JSON value the fast path takes
 * (depth: of the Value, in messages). */
static int
write_value(Out *o, PyObject *v, int depth)
{
    if (depth > MAX_WRITE_DEPTH)
        return 1;
    if (PyUnicode_CheckExact(v)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(v, &n);
        if (s == NULL) {
            PyErr_Clear();
            return 1;
        }
        return put_varint(o, (3 << 3) | 2) < 0 || put_bytes(o, s, n) < 0 ? -1 : 0;
    }
    if (PyBool_Check(v))
        return put_varint(o, 4 << 3) < 0 || put_varint(o, v == Py_True) < 0 ? -1 : 0;
    if (PyLong_CheckExact(v) || PyFloat_CheckExact(v)) {
        double d;
        if (PyLong_CheckExact(v)) {
            int overflow;
            long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || n > MAX_EXACT || n < -MAX_EXACT)
                return 1; /* the pure code checks exactness (or reports the loss) */
            d = (double)n;
        }
        else {
            d = PyFloat_AS_DOUBLE(v);
            if (!isfinite(d))
                return 1; /* JSON has none: the pure code decides */
        }
        if (put_varint(o, (2 << 3) | 1) < 0 || reserve(o, 8) < 0)
            return -1;
        memcpy(o->buf + o->len, &d, 8);
        o->len += 8;
        return 0;
    }
    if (v == Py_None)
        return put_varint(o, 1 << 3) < 0 || put_varint(o, 0) < 0 ? -1 : 0;
    if (PyDict_CheckExact(v)) {
        Py_ssize_t start = open_len(o, 5);
        if (start < 0)
            return -1;
        int r = write_struct(o, v, depth + 1);
        return r ? r : close_len(o, start);
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        Py_ssize_t start = open_len(o, 6);
        if (start < 0)
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t item = open_len(o, 1);
            if (item < 0)
                return -1;
            int r = write_value(o, PySequence_Fast_GET_ITEM(v, i), depth + 2);
            if (r || close_len(o, item) < 0)
                return r ? r : -1;
        }
        return close_len(o, start);
    }
    return 1;
}

static int
write_struct(Out *o, PyObject *d, int depth)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    if (depth > MAX_WRITE_DEPTH)
        return 1;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k))
            return 1;
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(k, &n);
        if (s == NULL) {
            PyErr_Clear();
            return 1;
        }
        Py_ssize_t entry = open_len(o, 1);
        if (entry < 0 || put_varint(o, (1 << 3) | 2) < 0 || put_bytes(o, s, n) < 0)
            return -1;
        Py_ssize_t value = open_len(o, 2);
        if (value < 0)
            return -1;
        int r = write_value(o, v, depth + 2); /* the entry, its Value */
        if (r)
            return r;
        if (close_len(o, value) < 0 || close_len(o, entry) < 0)
            return -1;
    }
    return 0;
}


#include "_pbwire_msg.h"
#include "_pbwire_json.h"

/* ------------------------------------------------------------------ module */

static PyObject *
loads(PyObject *const *args, Py_ssize_t nargs, int is_struct)
{
    char *s;
    Py_ssize_t n;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "expected (bytes, reverse_maps)");
        return NULL;
    }
    if (PyBytes_AsStringAndSize(args[0], &s, &n) < 0)
        return NULL;
    reverse_maps = PyObject_IsTrue(args[1]) == 1;
    const uint8_t *p = (const uint8_t *)s;
    PyObject *r = is_struct ? read_struct(p, p + n, 0) : read_value(p, p + n, 0);
    if (r != NULL)
        return r;
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError) &&
        !PyErr_ExceptionMatches(PyExc_OverflowError))
        return NULL; /* MemoryError and the like */
    PyErr_Clear();
    Py_RETURN_NONE;
}

static PyObject *
struct_loads(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return loads(args, nargs, 1);
}

static PyObject *
value_loads(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    /* (value,): a Value may hold null, which None (give up) could not tell apart */
    PyObject *v = loads(args, nargs, 0);
    if (v == NULL || v == Py_None)
        return v;
    PyObject *t = PyTuple_Pack(1, v);
    Py_DECREF(v);
    return t;
}

static PyObject *
dumps(PyObject *arg, int is_struct)
{
    Out o = {NULL, 0, 0};
    int r;
    if (is_struct)
        r = PyDict_CheckExact(arg) ? write_struct(&o, arg, 1) : 1;
    else
        r = write_value(&o, arg, 1);
    return out_finish(&o, r);
}

static PyObject *
struct_dumps(PyObject *self, PyObject *arg)
{
    return dumps(arg, 1);
}

static PyObject *
value_dumps(PyObject *self, PyObject *arg)
{
    return dumps(arg, 0);
}

static PyMethodDef methods[] = {
    {"struct_loads", (PyCFunction)(void (*)(void))struct_loads, METH_FASTCALL,
     "struct_loads(bytes, reverse_maps) -> dict, or None (give up)."},
    {"value_loads", (PyCFunction)(void (*)(void))value_loads, METH_FASTCALL,
     "value_loads(bytes, reverse_maps) -> (value,), or None (give up)."},
    {"struct_dumps", struct_dumps, METH_O, "dict -> Struct bytes, or None (give up)."},
    {"value_dumps", value_dumps, METH_O, "JSON value -> Value bytes, or None (give up)."},
    {"set_part", set_part, METH_VARARGS, "set_part(...): the Part classes, slots, numbers."},
    {"set_map_order", set_map_order, METH_O, "set_map_order(reverse): for message plans."},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "a2a_models.adapters.grpc._pbwire",
    .m_doc = "Optional compiled google.protobuf.Struct/Value reader and writer.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__pbwire(void)
{
    if (PyType_Ready(&MsgPlan_Type) < 0 || PyType_Ready(&JsonPlan_Type) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    if (PyModule_AddIntConstant(mod, "ABI", 1) < 0 ||
        PyModule_AddObjectRef(mod, "MsgPlan", (PyObject *)&MsgPlan_Type) < 0 ||
        PyModule_AddObjectRef(mod, "JsonPlan", (PyObject *)&JsonPlan_Type) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
#define K(name) if (PyModule_AddIntConstant(mod, #name, name) < 0) { Py_DECREF(mod); return NULL; }
    K(Q_STR) K(Q_ENUM) K(Q_MSG) K(Q_LIST_MSG) K(Q_LIST_STR) K(Q_STRUCT) K(Q_TS) K(Q_INT)
    K(Q_BOOL) K(Q_LIST_PART) K(M_PLAIN) K(M_OPT) K(M_PRESENCE) K(M_REQUIRED)
    K(J_STR) K(J_BOOL) K(J_INT32) K(J_ENUM) K(J_BYTES) K(J_MSG) K(J_LIST_MSG) K(J_LIST_STR)
    K(J_STRUCT) K(J_TS)
#undef K
    return mod;
}
