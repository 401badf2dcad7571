/* Shared by _speedups.c (the dict plans) and _read.c / _write.c (the bytes reader and writer). */
#ifndef A2A_SPEEDUPS_H
#define A2A_SPEEDUPS_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_slots.h" /* SLOT, slot_offset */

#include <stdint.h>
#include <string.h>

/* Decode field kinds */
enum { K_ANY = 0, K_STR = 1, K_OBJ = 2, K_LIST = 3, K_ENUM = 4, K_CALL = 5, K_PART = 6,
       K_STRUCT = 7 /* a JSON object kept as it is (what the struct helper does with parsed JSON) */ };
/* Decode flags */
enum {
    F_REQUIRED = 1,   /* absent: fail */
    F_UNSET = 2,      /* ProtoJSON: "" / [] / the kind's empty value means absent */
    F_NONEMPTY = 4,   /* "" / [] / a false decoded value: fail */
    F_FACTORY = 8,    /* the default is a factory to call */
    F_EMPTY_IS = 16,  /* compare with the empty value by identity (False) */
};
/* Encode presence tests */
enum { P_ALWAYS = 0, P_NOT_NONE = 1, P_TRUTHY = 2, P_NE = 3, P_REQUIRED = 4, P_UNSUPPORTED = 5 };
/* Encode kinds */
enum { E_PLAIN = 0, E_OBJ = 1, E_LIST = 2, E_CALL = 3, E_PART = 4, E_ENUM = 5,
       E_TIMESTAMP = 6 /* E_CALL of the timestamp formatter (the writer formats UTC datetimes) */ };

#define MAX_DEPTH 64

typedef struct {
    PyObject *key;      /* wire member name (interned str) */
    Py_ssize_t offset;  /* slot offset in the instance */
    int kind;
    int flags;
    PyObject *arg;      /* plan, callable or enum table */
    PyObject *empty;    /* the unset value (K_CALL with F_UNSET) */
    PyObject *deflt;    /* default value or factory */
    const char *kb;     /* the key's UTF-8 (owned by key), for the bytes reader and writer */
    Py_ssize_t klen;
} Field;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *cls;
    PyObject *fallback;   /* the pure function */
    PyObject *aliases;    /* tuple of alias member names, or NULL */
    PyObject *constants;  /* tuple of (key, value), or NULL */
    PyObject *validate;   /* callable(obj), or NULL */
    Py_ssize_t nfields;
    Field *fields;
    Py_ssize_t ntail;
    Field *tail;          /* attributes the dialect does not carry: offset + default */
    int encode;           /* 0: a decoder, 1: an encoder */
    int direct;           /* the bytes reader / writer may run it (_read.c, _write.c) */
    Py_ssize_t wsize;     /* the writer's first guess: its last output's size */
} Plan;

/* A native Part (the 1.0 oneof or the 0.3 kind-tagged union), for the common
 * shapes only: a bare text part, a bare data part. Everything else calls the
 * pure hook (which is also the fallback). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *text_cls, *data_cls;
    Py_ssize_t text_off[4];  /* text, metadata, filename, media_type */
    Py_ssize_t data_off[4];  /* data, metadata, filename, media_type */
    PyObject *k_text, *k_data, *k_meta, *k_kind, *v_text, *v_data;
    /* File parts (encode only), once set_file() is called: */
    PyTypeObject *file_cls;
    Py_ssize_t file_off[5];  /* raw, url, metadata, filename, media_type */
    PyObject *b64e;          /* bytes -> base64 text (the codec's own helper) */
    PyObject *fk_raw, *fk_url, *fk_name, *fk_media, *fk_file; /* fk_file: 0.3's inner object */
    PyObject *fallback;      /* pure hook (decode or encode) */
    int tagged;              /* 0.3 JSON-RPC: {"kind": "text", ...} */
    int encode;
} PartPlan;

extern PyTypeObject Plan_Type;
extern PyTypeObject PartPlan_Type;

/* _speedups.c: the dict plans */
PyObject *decode_part(PartPlan *p, PyObject *d);
PyObject *new_part(PyTypeObject *cls, Py_ssize_t *off, PyObject *content, PyObject *meta);
PyObject *encode_part(PartPlan *p, PyObject *o);
/* _read.c and _write.c: the bytes reader and writer */
extern PyMethodDef a2a_direct_methods[];
int a2a_direct_init(PyObject *mod);
int a2a_direct_plan_ready(Plan *p);
PyObject *a2a_direct_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *a2a_direct_write(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *a2a_unique_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* A K_CALL member's value v (not null): 1 and *x (a new reference) for a value,
 * 0 for "unset" (ProtoJSON: the kind's empty value), -1 to give up. */
static inline int
call_field(Field *f, PyObject *v, PyObject **x)
{
    if (f->flags & F_UNSET) {
        int r;
        if (f->flags & F_EMPTY_IS)
            r = (v == f->empty);
        else {
            r = PyObject_RichCompareBool(v, f->empty, Py_EQ);
            if (r < 0)
                return -1;
        }
        if (r)
            return 0;
    }
    *x = PyObject_CallOneArg(f->arg, v);
    if (*x == NULL)
        return -1;
    if (f->flags & F_NONEMPTY) {
        int r = PyObject_IsTrue(*x);
        if (r != 1) {
            Py_CLEAR(*x);
            return -1;
        }
    }
    return 1;
}

/* A missing (or unset) member: its default, a new reference (NULL: give up). */
static inline PyObject *
field_default(Field *f)
{
    if (f->flags & F_REQUIRED)
        return NULL;
    if (f->flags & F_FACTORY)
        return PyObject_CallNoArgs(f->deflt);
    Py_INCREF(f->deflt);
    return f->deflt;
}

/* An encoder's member with value v (not null), by its presence test (f->flags):
 * 1 written, 0 left out, -1 give up (encode_obj and the writer's write_obj). */
static inline int
field_present(Field *f, PyObject *v)
{
    switch (f->flags) {
    case P_ALWAYS:
        return 1;
    case P_REQUIRED:
        return v == Py_None ? -1 : 1;
    case P_NOT_NONE:
        return v != Py_None;
    case P_TRUTHY:
        return PyObject_IsTrue(v);
    case P_NE:
        return PyObject_RichCompareBool(v, f->deflt, Py_NE);
    case P_UNSUPPORTED: {
        /* f->deflt: the presence test of the attribute (P_* value as int) */
        long how = PyLong_AsLong(f->deflt);
        int present = how == P_NOT_NONE ? v != Py_None : PyObject_IsTrue(v);
        return present ? -1 : 0; /* a loss: the pure path reports (or drops) it */
    }
    default:
        return -1;
    }
}

/* The shapes of a part the encoder handles itself (encode_part and the writer's
 * write_part_direct): PART_BARE, a text or data part without filename or media
 * type (*content and *meta its members, *key its content's key, *kind 0.3's
 * "kind"); PART_FILE, a file part (once set_file() is called); PART_HOOK, the
 * rest (the pure hook). */
enum { PART_HOOK = 0, PART_BARE = 1, PART_FILE = 2 };

static inline int
part_shape(PartPlan *p, PyObject *o, PyObject **content, PyObject **meta, PyObject **key,
           PyObject **kind)
{
    PyTypeObject *tp = Py_TYPE(o);
    Py_ssize_t *off;
    if (tp == p->text_cls) {
        off = p->text_off;
        *key = p->k_text;
        *kind = p->v_text;
    }
    else if (tp == p->data_cls) {
        off = p->data_off;
        *key = p->k_data;
        *kind = p->v_data;
    }
    else if (tp == p->file_cls && p->file_cls != NULL)
        return PART_FILE;
    else
        return PART_HOOK;
    *content = *SLOT(o, off[0]);
    *meta = *SLOT(o, off[1]);
    if (*content == NULL || *meta == NULL || *SLOT(o, off[2]) != Py_None ||
        *SLOT(o, off[3]) != Py_None)
        return PART_HOOK;
    if (p->tagged && tp == p->data_cls && !PyDict_CheckExact(*content))
        return PART_HOOK;
    return PART_BARE;
}

/* A file part's content member (encode_file and the writer's write_file): its
 * value, a new reference (the base64 text of raw, else the url; NULL on an
 * error), and its key in *key. */
static inline PyObject *
file_content(PartPlan *p, PyObject *raw, PyObject *url, PyObject **key)
{
    if (raw != Py_None) {
        *key = p->fk_raw;
        return PyObject_CallOneArg(p->b64e, raw);
    }
    *key = p->fk_url;
    Py_INCREF(url);
    return url;
}

/* Eight bytes at a time: whether any byte is < 0x20, '"', '\\' or >= 0x80 (the
 * bytes a string's fast path stops at, reading and writing). */
static inline int
special8(const unsigned char *s)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t v, q, b;
    memcpy(&v, s, 8);
    q = v ^ (ones * '"');
    b = v ^ (ones * '\\');
    uint64_t lt = (v - ones * 0x20) & ~v; /* (exact for "any byte", as haszero) */
    return (((lt | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) | (v & high)) != 0;
}

#endif
