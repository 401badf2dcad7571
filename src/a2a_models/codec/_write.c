/* The bytes-direct writer of the codec accelerator (docs/accelerator.md), and
 * the setup both directions share.
 *
 * write(plan, obj): writes the JSON bytes of a model through the encode plans,
 * without the wire dicts, byte for byte what orjson.dumps writes of the dict the
 * plans build (compact, UTF-8, orjson's escapes, the same member order). On
 * anything unusual (a float that is not finite, an integer beyond int64, a lone
 * surrogate, a non-string key, a value of any other type, deep nesting, anything
 * a plan gives up on, any exception) it gives up and returns None, and the
 * caller runs the existing path (dict plans + orjson) on the same model.
 */
#include "_speedups.h"

#include <datetime.h>
#include <math.h>

typedef struct {
    PyObject *bytes; /* the output, resized as it grows */
    char *buf;
    Py_ssize_t len, cap;
} Writer;

static PyObject *orjson_dumps; /* floats: orjson's own digits */

static int
grow(Writer *w, Py_ssize_t n)
{
    Py_ssize_t cap = w->cap;
    while (cap - w->len < n) {
        if (cap > PY_SSIZE_T_MAX / 2)
            return -1;
        cap *= 2;
    }
    if (_PyBytes_Resize(&w->bytes, cap) < 0)
        return -1;
    w->buf = PyBytes_AS_STRING(w->bytes);
    w->cap = cap;
    return 0;
}

#define RESERVE(w, n) ((w)->cap - (w)->len >= (n) ? 0 : grow((w), (n)))

static inline int
put(Writer *w, const char *s, Py_ssize_t n)
{
    if (RESERVE(w, n) < 0)
        return -1;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    return 0;
}

static inline int
put_ch(Writer *w, char c)
{
    if (RESERVE(w, 1) < 0)
        return -1;
    w->buf[w->len++] = c;
    return 0;
}

static const char HEX[] = "0123456789abcdef";

/* 1: a byte orjson writes escaped ('"', '\\', control characters) */
static unsigned char ESCAPE[128];

/* The escape of an ASCII character c (ESCAPE[c] set) at o; the new end. */
static inline char *
put_escape(char *o, unsigned int c)
{
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\b': *o++ = 'b'; break;
    case '\t': *o++ = 't'; break;
    case '\n': *o++ = 'n'; break;
    case '\f': *o++ = 'f'; break;
    case '\r': *o++ = 'r'; break;
    default:
        *o++ = 'u';
        *o++ = '0';
        *o++ = '0';
        *o++ = HEX[c >> 4];
        *o++ = HEX[c & 15];
    }
    return o;
}

/* Characters of one kind, as UTF-8 (0: a lone surrogate, give up). */
#define PUT_CHARS(TYPE)                                                  \
    do {                                                                 \
        const TYPE *s = (const TYPE *)data;                              \
        for (Py_ssize_t i = 0; i < n; i++) {                             \
            Py_UCS4 c = s[i];                                            \
            if (c < 0x80) {                                              \
                if (ESCAPE[c])                                           \
                    o = put_escape(o, c);                                \
                else                                                     \
                    *o++ = (char)c;                                      \
            }                                                            \
            else if (c < 0x800) {                                        \
                *o++ = (char)(0xC0 | (c >> 6));                          \
                *o++ = (char)(0x80 | (c & 0x3F));                        \
            }                                                            \
            else if (c < 0x10000) {                                      \
                if (c >= 0xD800 && c <= 0xDFFF)                          \
                    return -1;                                           \
                *o++ = (char)(0xE0 | (c >> 12));                         \
                *o++ = (char)(0x80 | ((c >> 6) & 0x3F));                 \
                *o++ = (char)(0x80 | (c & 0x3F));                        \
            }                                                            \
            else {                                                       \
                *o++ = (char)(0xF0 | (c >> 18));                         \
                *o++ = (char)(0x80 | ((c >> 12) & 0x3F));                \
                *o++ = (char)(0x80 | ((c >> 6) & 0x3F));                 \
                *o++ = (char)(0x80 | (c & 0x3F));                        \
            }                                                            \
        }                                                                \
    } while (0)

/* A str as orjson writes it: UTF-8, escaping '"', '\\' and the control
 * characters only (\b \t \n \f \r or \u00XX); lone surrogates: give up. */
static int
put_str(Writer *w, PyObject *u)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(u);
    const void *data = PyUnicode_DATA(u);
    /* worst case: 6 bytes per character (\u00XX; UTF-8 takes at most 4), and quotes */
    if (n > (PY_SSIZE_T_MAX - 2) / 6 || RESERVE(w, 6 * n + 2) < 0)
        return -1;
    char *o = w->buf + w->len;
    *o++ = '"';
    if (PyUnicode_IS_ASCII(u)) {
        /* eight bytes at a time while none needs escaping, then up to eight one by one */
        const unsigned char *s = data;
        Py_ssize_t i = 0;
        while (i < n) {
            while (n - i >= 8 && !special8(s + i)) {
                memcpy(o, s + i, 8);
                o += 8;
                i += 8;
            }
            for (Py_ssize_t stop = n - i > 8 ? i + 8 : n; i < stop; i++) {
                if (ESCAPE[s[i]])
                    o = put_escape(o, s[i]);
                else
                    *o++ = (char)s[i];
            }
        }
    }
    else {
        switch (PyUnicode_KIND(u)) {
        case PyUnicode_1BYTE_KIND:
            PUT_CHARS(Py_UCS1);
            break;
        case PyUnicode_2BYTE_KIND:
            PUT_CHARS(Py_UCS2);
            break;
        default:
            PUT_CHARS(Py_UCS4);
        }
    }
    *o++ = '"';
    w->len = o - w->buf;
    return 0;
}

static int
put_int(Writer *w, PyObject *v)
{
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred()))
        return -1; /* beyond int64: the existing path */
    char tmp[24], *e = tmp + sizeof(tmp), *s = e;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    do {
        *--s = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        *--s = '-';
    return put(w, s, e - s);
}

static int
put_float(Writer *w, PyObject *v)
{
    if (!isfinite(PyFloat_AS_DOUBLE(v)) || orjson_dumps == NULL)
        return -1;
    PyObject *b = PyObject_CallOneArg(orjson_dumps, v);
    if (b == NULL)
        return -1;
    int rc = PyBytes_Check(b) ? put(w, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)) : -1;
    Py_DECREF(b);
    return rc;
}

/* Any JSON value of exact built-in types, as orjson writes it; else give up. */
static int
put_any(Writer *w, PyObject *v, int depth)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyUnicode_Type)
        return put_str(w, v);
    if (v == Py_None)
        return put(w, "null", 4);
    if (v == Py_True)
        return put(w, "true", 4);
    if (v == Py_False)
        return put(w, "false", 5);
    if (t == &PyLong_Type)
        return put_int(w, v);
    if (t == &PyFloat_Type)
        return put_float(w, v);
    if (depth > MAX_DEPTH)
        return -1;
    if (t == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *k, *x;
        int first = 1;
        if (put_ch(w, '{') < 0)
            return -1;
        while (PyDict_Next(v, &pos, &k, &x)) {
            if (!PyUnicode_CheckExact(k))
                return -1; /* the existing path refuses it */
            if ((!first && put_ch(w, ',') < 0) || put_str(w, k) < 0 || put_ch(w, ':') < 0)
                return -1;
            /* (a value can run Python code: keep the pair alive) */
            Py_INCREF(x);
            int rc = put_any(w, x, depth + 1);
            Py_DECREF(x);
            if (rc < 0)
                return -1;
            first = 0;
        }
        return put_ch(w, '}');
    }
    if (t == &PyList_Type || t == &PyTuple_Type) {
        if (put_ch(w, '[') < 0)
            return -1;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++) {
            PyObject *x = PySequence_Fast_GET_ITEM(v, i);
            Py_INCREF(x);
            int rc = (i && put_ch(w, ',') < 0) ? -1 : put_any(w, x, depth + 1);
            Py_DECREF(x);
            if (rc < 0)
                return -1;
        }
        return put_ch(w, ']');
    }
    return -1;
}

static int write_obj(Plan *p, Writer *w, PyObject *o, int depth);

/* ,"key": (a str key of ours: plain ASCII) */
static inline int
put_key(Writer *w, PyObject *key, int comma)
{
    if ((comma && put_ch(w, ',') < 0) || put_str(w, key) < 0)
        return -1;
    return put_ch(w, ':');
}

/* A file part, as encode_file builds its dict (same members, same order). */
static int
write_file(PartPlan *p, Writer *w, PyObject *o, int depth)
{
    PyObject *raw = *SLOT(o, p->file_off[0]), *url = *SLOT(o, p->file_off[1]);
    PyObject *meta = *SLOT(o, p->file_off[2]), *name = *SLOT(o, p->file_off[3]);
    PyObject *media = *SLOT(o, p->file_off[4]);
    if (!raw || !url || !meta || !name || !media)
        return -2; /* (encode_file calls the hook) */
    PyObject *ckey, *content = file_content(p, raw, url, &ckey);
    if (content == NULL)
        return -1;
    int rc = put_ch(w, '{');
    if (p->tagged) {
        /* {"kind":"file","file":{raw|url, mimeType, name},"metadata"} */
        if (rc < 0 || put_key(w, p->k_kind, 0) < 0 || put_str(w, p->fk_file) < 0 ||
            put_key(w, p->fk_file, 1) < 0 || put_ch(w, '{') < 0 || put_key(w, ckey, 0) < 0 ||
            put_any(w, content, depth + 2) < 0 ||
            (media != Py_None && (put_key(w, p->fk_media, 1) < 0 || put_any(w, media, depth + 2) < 0)) ||
            (name != Py_None && (put_key(w, p->fk_name, 1) < 0 || put_any(w, name, depth + 2) < 0)) ||
            put_ch(w, '}') < 0 ||
            (meta != Py_None && (put_key(w, p->k_meta, 1) < 0 || put_any(w, meta, depth + 1) < 0)))
            rc = -1;
    }
    else {
        /* {raw|url, "metadata", filename, mediaType}: empty strings count as unset */
        int has_name = PyObject_IsTrue(name), has_media = PyObject_IsTrue(media);
        if (rc < 0 || has_name < 0 || has_media < 0 || put_key(w, ckey, 0) < 0 ||
            put_any(w, content, depth + 1) < 0 ||
            (meta != Py_None && (put_key(w, p->k_meta, 1) < 0 || put_any(w, meta, depth + 1) < 0)) ||
            (has_name && (put_key(w, p->fk_name, 1) < 0 || put_any(w, name, depth + 1) < 0)) ||
            (has_media && (put_key(w, p->fk_media, 1) < 0 || put_any(w, media, depth + 1) < 0)))
            rc = -1;
    }
    Py_DECREF(content);
    return rc < 0 ? -1 : put_ch(w, '}');
}

/* A part, as encode_part builds its dict; shapes it leaves to the hook: -2. */
static int
write_part_direct(PartPlan *p, Writer *w, PyObject *o, int depth)
{
    PyObject *content, *meta, *key, *val;
    switch (part_shape(p, o, &content, &meta, &key, &val)) {
    case PART_BARE:
        break;
    case PART_FILE:
        return write_file(p, w, o, depth);
    default:
        return -2;
    }
    if (put_ch(w, '{') < 0 ||
        (p->tagged && (put_key(w, p->k_kind, 0) < 0 || put_str(w, val) < 0)) ||
        put_key(w, key, p->tagged) < 0 || put_any(w, content, depth + 1) < 0 ||
        (meta != Py_None && (put_key(w, p->k_meta, 1) < 0 || put_any(w, meta, depth + 1) < 0)))
        return -1;
    return put_ch(w, '}');
}

/* A value encoded by plan or callable `arg` (what run() does). */
static int
write_nested(PyObject *arg, Writer *w, PyObject *v, int depth)
{
    if (Py_IS_TYPE(arg, &Plan_Type))
        return write_obj((Plan *)arg, w, v, depth + 1);
    PyObject *x;
    if (Py_IS_TYPE(arg, &PartPlan_Type)) {
        int rc = write_part_direct((PartPlan *)arg, w, v, depth);
        if (rc != -2)
            return rc;
        x = encode_part((PartPlan *)arg, v); /* the hook's dict */
    }
    else
        x = PyObject_CallOneArg(arg, v);
    if (x == NULL)
        return -1;
    int rc = put_any(w, x, depth + 1);
    Py_DECREF(x);
    return rc;
}

/* A datetime the way the timestamp formatter writes it, for the one case it
 * handles without Python: an exact datetime in timezone.utc (1 written, 0 for
 * anything else: call the formatter). YYYY-MM-DDTHH:MM:SS[.fff|.ffffff]Z */
static int
put_utc_datetime(Writer *w, PyObject *v)
{
    if (PyDateTimeAPI == NULL || !Py_IS_TYPE(v, PyDateTimeAPI->DateTimeType) ||
        !((PyDateTime_DateTime *)v)->hastzinfo ||
        PyDateTime_DATE_GET_TZINFO(v) != PyDateTime_TimeZone_UTC)
        return 0;
    char tmp[40];
    int us = PyDateTime_DATE_GET_MICROSECOND(v);
    int n = snprintf(tmp, sizeof(tmp), "\"%04d-%02d-%02dT%02d:%02d:%02d", PyDateTime_GET_YEAR(v),
                     PyDateTime_GET_MONTH(v), PyDateTime_GET_DAY(v), PyDateTime_DATE_GET_HOUR(v),
                     PyDateTime_DATE_GET_MINUTE(v), PyDateTime_DATE_GET_SECOND(v));
    if (us && us % 1000 == 0)
        n += snprintf(tmp + n, sizeof(tmp) - n, ".%03d", us / 1000);
    else if (us)
        n += snprintf(tmp + n, sizeof(tmp) - n, ".%06d", us);
    tmp[n++] = 'Z';
    tmp[n++] = '"';
    return put(w, tmp, n) < 0 ? -1 : 1;
}

/* A model's members, in encode_obj's order and by its presence tests. */
static int
write_obj(Plan *p, Writer *w, PyObject *o, int depth)
{
    if (Py_TYPE(o) != p->cls || depth > MAX_DEPTH || p->fields == NULL || !p->direct)
        return -1;
    int first = 1;
    if (put_ch(w, '{') < 0)
        return -1;
    for (Py_ssize_t i = 0; i < p->nfields; i++) {
        Field *f = &p->fields[i];
        PyObject *v = *SLOT(o, f->offset);
        if (v == NULL)
            return -1;
        int present = field_present(f, v);
        if (present <= 0) {
            if (present < 0)
                return -1;
            continue;
        }
        /* "key": (checked plain ASCII by a2a_direct_plan_ready) */
        if (RESERVE(w, f->klen + 4) < 0)
            return -1;
        if (!first)
            w->buf[w->len++] = ',';
        first = 0;
        w->buf[w->len++] = '"';
        memcpy(w->buf + w->len, f->kb, f->klen);
        w->len += f->klen;
        w->buf[w->len++] = '"';
        w->buf[w->len++] = ':';
        int rc;
        Py_INCREF(v); /* (Python code may run: keep the value alive) */
        switch (f->kind) {
        case E_PLAIN:
            rc = put_any(w, v, depth + 1);
            break;
        case E_OBJ:
        case E_PART:
            rc = write_nested(f->arg, w, v, depth);
            break;
        case E_TIMESTAMP:
            rc = put_utc_datetime(w, v);
            if (rc != 0) {
                rc = rc < 0 ? -1 : 0;
                break;
            }
            /* fall through: the formatter itself */
        case E_CALL: {
            PyObject *x = PyObject_CallOneArg(f->arg, v);
            rc = x == NULL ? -1 : put_any(w, x, depth + 1);
            Py_XDECREF(x);
            break;
        }
        case E_ENUM: {
            rc = -1;
            Py_ssize_t n = PyTuple_GET_SIZE(f->arg);
            for (Py_ssize_t j = 0; j < n; j++) {
                PyObject *pair = PyTuple_GET_ITEM(f->arg, j);
                if (PyTuple_GET_ITEM(pair, 0) == v) {
                    rc = put_any(w, PyTuple_GET_ITEM(pair, 1), depth + 1);
                    break;
                }
            }
            break;
        }
        case E_LIST: {
            if (!PyTuple_CheckExact(v) || put_ch(w, '[') < 0) {
                rc = -1;
                break;
            }
            rc = 0;
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(v) && rc == 0; j++) {
                if (j)
                    rc = put_ch(w, ',');
                if (rc == 0)
                    rc = write_nested(f->arg, w, PyTuple_GET_ITEM(v, j), depth);
            }
            if (rc == 0)
                rc = put_ch(w, ']');
            break;
        }
        default:
            rc = -1;
        }
        Py_DECREF(v);
        if (rc < 0)
            return -1;
    }
    if (p->constants != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(p->constants);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *pair = PyTuple_GET_ITEM(p->constants, i);
            if ((!first && put_ch(w, ',') < 0) || put_str(w, PyTuple_GET_ITEM(pair, 0)) < 0 ||
                put_ch(w, ':') < 0 || put_any(w, PyTuple_GET_ITEM(pair, 1), depth + 1) < 0)
                return -1;
            first = 0;
        }
    }
    return put_ch(w, '}');
}

/* write(plan, obj): the JSON bytes, or None (gave up: run the existing path). */
PyObject *
a2a_direct_write(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    static Py_ssize_t part_size = 256;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "write(plan, obj)");
        return NULL;
    }
    PyObject *plan = args[0], *obj = args[1];
    int is_plan = Py_IS_TYPE(plan, &Plan_Type);
    Py_ssize_t *guess = is_plan ? &((Plan *)plan)->wsize : &part_size;
    if (*guess < 64)
        *guess = 64;
    Writer w = {PyBytes_FromStringAndSize(NULL, *guess), NULL, 0, *guess};
    if (w.bytes == NULL)
        return NULL;
    w.buf = PyBytes_AS_STRING(w.bytes);
    int rc = -1;
    /* (encoder plans only: a decoder's tables mean something else) */
    if (is_plan && ((Plan *)plan)->encode)
        rc = write_obj((Plan *)plan, &w, obj, 0);
    else if (Py_IS_TYPE(plan, &PartPlan_Type) && ((PartPlan *)plan)->encode)
        rc = write_nested(plan, &w, obj, -1);
    if (rc < 0 || _PyBytes_Resize(&w.bytes, w.len) < 0) {
        Py_XDECREF(w.bytes);
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    *guess = w.len + 64;
    return w.bytes;
}

/* ------------------------------------------------------------------ setup */

static int
plain_key(const char *s, Py_ssize_t n)
{
    if (s == NULL)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
            return 0;
    }
    return 1;
}

/* Whether the reader and writer may run plan p: at most 64 members (a bit set
 * each), plain ASCII names (written as they are), none twice. */
int
a2a_direct_plan_ready(Plan *p)
{
    if (p->fields == NULL || p->nfields > 64)
        return 0;
    Py_ssize_t nc = p->constants != NULL ? PyTuple_GET_SIZE(p->constants) : 0;
    for (Py_ssize_t i = 0; i < p->nfields; i++) {
        Field *f = &p->fields[i];
        if (!PyUnicode_CheckExact(f->key) || !plain_key(f->kb, f->klen))
            return 0;
        for (Py_ssize_t j = 0; j < i; j++)
            if (p->fields[j].klen == f->klen && memcmp(p->fields[j].kb, f->kb, f->klen) == 0)
                return 0;
        for (Py_ssize_t j = 0; j < nc; j++) {
            PyObject *pair = PyTuple_GET_ITEM(p->constants, j);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
                !PyUnicode_CheckExact(PyTuple_GET_ITEM(pair, 0)))
                return 0;
            if (PyUnicode_Compare(PyTuple_GET_ITEM(pair, 0), f->key) == 0)
                return 0;
        }
    }
    if (p->aliases != NULL)
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(p->aliases); j++)
            if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(p->aliases, j)))
                return 0;
    PyErr_Clear();
    return 1;
}

PyMethodDef a2a_direct_methods[] = {
    {"read", (PyCFunction)(void (*)(void))a2a_direct_read, METH_FASTCALL,
     "read(plan, data): the model decoded straight from JSON bytes or text, or None "
     "(gave up: decode the existing way)."},
    {"write", (PyCFunction)(void (*)(void))a2a_direct_write, METH_FASTCALL,
     "write(plan, obj): the JSON bytes of obj written straight from the model, or None "
     "(gave up: encode the existing way)."},
    {"unique_keys", (PyCFunction)(void (*)(void))a2a_unique_keys, METH_FASTCALL,
     "unique_keys(data, value): whether value, the valid JSON bytes data as parsed, kept "
     "every member (no object names one twice; False also when it cannot tell)."},
    {NULL},
};

int
a2a_direct_init(PyObject *mod)
{
    (void)mod;
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        PyErr_Clear(); /* timestamps then go through the formatter */
    for (int c = 0; c < 0x20; c++)
        ESCAPE[c] = 1;
    ESCAPE['"'] = ESCAPE['\\'] = 1;
    PyObject *orjson = PyImport_ImportModule("orjson");
    if (orjson == NULL) {
        PyErr_Clear(); /* floats then give up */
        return 0;
    }
    orjson_dumps = PyObject_GetAttrString(orjson, "dumps");
    Py_DECREF(orjson);
    if (orjson_dumps == NULL)
        PyErr_Clear();
    return 0;
}
