/* The bytes-direct reader and writer of the codec accelerator (docs/accelerator.md).
 *
 * read(plan, data): scans JSON bytes and runs the decode plans on them, building
 * the models without the intermediate dicts; write(plan, obj): writes the JSON
 * bytes of a model through the encode plans, without the wire dicts.
 *
 * Both run the valid, common path only: on anything else (invalid JSON of any
 * kind, invalid UTF-8, lone surrogates, control characters in strings, numbers
 * that might not fit in int64 or a double, deep nesting, a duplicated member of
 * a model, an alias, anything a plan gives up on, any exception) they give up
 * and return None, and the caller runs the existing path (json parse + dict
 * plans, or dict plans + orjson) on the same input: every error and every edge
 * case is the existing code's. Every access to the input is bounds-checked.
 */
#include "_speedups.h"

#include <math.h>
#include <string.h>

#define GIVE_UP NULL

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

/* ------------------------------------------------------------------ reading */

typedef struct {
    const unsigned char *p, *end;
    char *scratch; /* unescaping buffer (PyMem), grown on demand */
    Py_ssize_t cap;
} Reader;

static PyObject *read_any(Reader *r, int depth);
static PyObject *read_obj(Plan *p, Reader *r, int depth);

static inline void
skip_ws(Reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

/* The next byte after white space, or -1 at the end. */
static inline int
peek(Reader *r)
{
    skip_ws(r);
    return r->p < r->end ? *r->p : -1;
}

static inline int
literal(Reader *r, const char *word, Py_ssize_t n)
{
    if (r->end - r->p < n || memcmp(r->p, word, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

/* Object keys: a small cache of the str of short ASCII keys (as orjson keeps). */
#define KEY_CACHE 1024
#define KEY_MAX 32
static PyObject *key_cache[KEY_CACHE];

static PyObject *
ascii_str(const unsigned char *s, Py_ssize_t n)
{
    PyObject *u = PyUnicode_New(n, 127);
    if (u != NULL)
        memcpy(PyUnicode_1BYTE_DATA(u), s, n);
    return u;
}

static PyObject *
cached_key(const unsigned char *s, Py_ssize_t n)
{
    if (n > KEY_MAX)
        return ascii_str(s, n);
    uint32_t h = 2166136261u;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    PyObject **slot = &key_cache[(h ^ (h >> 15)) & (KEY_CACHE - 1)];
    PyObject *k = *slot;
    if (k != NULL && PyUnicode_GET_LENGTH(k) == n && memcmp(PyUnicode_1BYTE_DATA(k), s, n) == 0) {
        Py_INCREF(k);
        return k;
    }
    k = ascii_str(s, n);
    if (k == NULL)
        return NULL;
    Py_INCREF(k);
    Py_XSETREF(*slot, k);
    return k;
}

static inline int
hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s (bounds checked by the caller): the value, or -1. */
static inline long
hex4(const unsigned char *s)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0)
            return -1;
        v = (v << 4) | h;
    }
    return v;
}

/* The string whose body (after the opening quote) spans [s, e) and holds escapes:
 * unescaped into UTF-8, then decoded (which checks the UTF-8). */
static PyObject *
unescape(Reader *r, const unsigned char *s, const unsigned char *e)
{
    Py_ssize_t need = e - s; /* unescaping never lengthens the text */
    if (need > r->cap) {
        char *nb = PyMem_Realloc(r->scratch, need);
        if (nb == NULL)
            return PyErr_NoMemory();
        r->scratch = nb;
        r->cap = need;
    }
    char *out = r->scratch;
    Py_ssize_t n = 0;
    while (s < e) {
        unsigned char c = *s++;
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        if (s >= e)
            return GIVE_UP;
        c = *s++;
        switch (c) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            if (e - s < 4)
                return GIVE_UP;
            long cp = hex4(s);
            if (cp < 0)
                return GIVE_UP;
            s += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return GIVE_UP; /* a lone low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (e - s < 6 || s[0] != '\\' || s[1] != 'u')
                    return GIVE_UP; /* a lone high surrogate */
                long lo = hex4(s + 2);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return GIVE_UP;
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            /* at most as many bytes as the escape took (6 or 12) */
            if (cp < 0x80)
                out[n++] = (char)cp;
            else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            else if (cp < 0x10000) {
                out[n++] = (char)(0xE0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            else {
                out[n++] = (char)(0xF0 | (cp >> 18));
                out[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            return GIVE_UP;
        }
    }
    return PyUnicode_DecodeUTF8(out, n, NULL);
}

/* The span of a string's body: r->p at the opening quote; on success r->p is
 * past the closing quote. *flags: 1 = holds escapes, 2 = holds non-ASCII bytes. */
static inline int
scan_string(Reader *r, const unsigned char **s, const unsigned char **e, int *flags)
{
    const unsigned char *p = r->p + 1, *end = r->end;
    int f = 0;
    *s = p;
    for (;;) {
        while (end - p >= 8 && !special8(p))
            p += 8;
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
            p++;
        if (p >= end || *p < 0x20)
            return -1; /* unterminated, or a raw control character */
        if (*p == '"')
            break;
        if (*p == '\\') {
            f |= 1;
            if (end - p < 2)
                return -1;
            p += 2; /* the escaped character; checked when unescaping */
        }
        else {
            f |= 2;
            p++;
        }
    }
    *e = p;
    r->p = p + 1;
    *flags = f;
    return 0;
}

static PyObject *
read_str(Reader *r)
{
    const unsigned char *s, *e;
    int flags;
    if (scan_string(r, &s, &e, &flags) < 0)
        return GIVE_UP;
    if (flags & 1)
        return unescape(r, s, e);
    if (flags & 2)
        return PyUnicode_DecodeUTF8((const char *)s, e - s, NULL);
    return ascii_str(s, e - s);
}

static PyObject *
read_key(Reader *r)
{
    const unsigned char *s, *e;
    int flags;
    if (r->p >= r->end || *r->p != '"' || scan_string(r, &s, &e, &flags) < 0)
        return GIVE_UP;
    if (flags & 1)
        return unescape(r, s, e);
    if (flags & 2)
        return PyUnicode_DecodeUTF8((const char *)s, e - s, NULL);
    return cached_key(s, e - s);
}

/* A number: int64 integers of at most 18 digits, finite doubles; else give up. */
static PyObject *
read_number(Reader *r)
{
    const unsigned char *start = r->p, *p = r->p, *end = r->end;
    int neg = 0, is_float = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end)
        return GIVE_UP;
    long long v = 0;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9') {
        int nd = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (++nd > 18)
                return GIVE_UP; /* might not fit in int64: the existing path */
            v = v * 10 + (*p - '0');
            p++;
        }
    }
    else
        return GIVE_UP;
    if (p < end && *p == '.') {
        is_float = 1;
        p++;
        const unsigned char *d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d || p - d > 18)
            return GIVE_UP;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_float = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        const unsigned char *d = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == d || p - d > 18)
            return GIVE_UP;
    }
    r->p = p;
    if (!is_float)
        return PyLong_FromLongLong(neg ? -v : v);
    char buf[64];
    Py_ssize_t n = p - start;
    if (n >= (Py_ssize_t)sizeof(buf))
        return GIVE_UP;
    memcpy(buf, start, n);
    buf[n] = '\0';
    char *stop;
    double d = PyOS_string_to_double(buf, &stop, NULL);
    if (stop != buf + n || !isfinite(d)) {
        PyErr_Clear();
        return GIVE_UP; /* (orjson rejects what overflows a double) */
    }
    return PyFloat_FromDouble(d);
}

static PyObject *
read_dict(Reader *r, int depth)
{
    if (depth > MAX_DEPTH)
        return GIVE_UP;
    r->p++; /* '{' */
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    if (peek(r) == '}') {
        r->p++;
        return d;
    }
    for (;;) {
        skip_ws(r);
        PyObject *k = read_key(r);
        if (k == NULL)
            goto fail;
        if (peek(r) != ':') {
            Py_DECREF(k);
            goto fail;
        }
        r->p++;
        PyObject *v = read_any(r, depth + 1);
        if (v == NULL) {
            Py_DECREF(k);
            goto fail;
        }
        /* a duplicate: the last value at the first position, as orjson and json */
        int rc = PyDict_SetItem(d, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (rc < 0)
            goto fail;
        int c = peek(r);
        r->p++;
        if (c == '}')
            return d;
        if (c != ',')
            goto fail;
    }
fail:
    Py_DECREF(d);
    return GIVE_UP;
}

static PyObject *
read_list(Reader *r, int depth)
{
    if (depth > MAX_DEPTH)
        return GIVE_UP;
    r->p++; /* '[' */
    PyObject *l = PyList_New(0);
    if (l == NULL)
        return NULL;
    if (peek(r) == ']') {
        r->p++;
        return l;
    }
    for (;;) {
        PyObject *v = read_any(r, depth + 1);
        if (v == NULL)
            goto fail;
        int rc = PyList_Append(l, v);
        Py_DECREF(v);
        if (rc < 0)
            goto fail;
        int c = peek(r);
        r->p++;
        if (c == ']')
            return l;
        if (c != ',')
            goto fail;
    }
fail:
    Py_DECREF(l);
    return GIVE_UP;
}

/* Any JSON value, as orjson.loads builds it. */
static PyObject *
read_any(Reader *r, int depth)
{
    switch (peek(r)) {
    case '{':
        return read_dict(r, depth);
    case '[':
        return read_list(r, depth);
    case '"':
        return read_str(r);
    case 't':
        if (literal(r, "true", 4))
            Py_RETURN_TRUE;
        return GIVE_UP;
    case 'f':
        if (literal(r, "false", 5))
            Py_RETURN_FALSE;
        return GIVE_UP;
    case 'n':
        if (literal(r, "null", 4))
            Py_RETURN_NONE;
        return GIVE_UP;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return read_number(r);
    default:
        return GIVE_UP;
    }
}

/* A part object (r->p at its '{') in the shapes decode_part builds itself: the
 * part, or NULL to give up; for the other shapes NULL and *generic = 1, r->p
 * back at the '{' (the caller parses the object, then runs decode_part). */
enum { PK_KIND, PK_TEXT, PK_DATA, PK_META, PK_FILE, PK_N };
static const char *const PART_KEYS[] = {"kind", "text", "data", "metadata", "file"};

/* A 0.3 file part's "file" object f, as the pure hook decodes it (decode_file):
 * NULL to give up, Py_None for what the hook would fail on. */
static PyObject *
tagged_file(PartPlan *p, PyObject *f, PyObject *meta)
{
    PyObject *raw = PyDict_GetItemWithError(f, p->fk_raw);
    PyObject *url = raw || !PyErr_Occurred() ? PyDict_GetItemWithError(f, p->fk_url) : NULL;
    PyObject *media = PyErr_Occurred() ? NULL : PyDict_GetItemWithError(f, p->fk_media);
    PyObject *name = PyErr_Occurred() ? NULL : PyDict_GetItemWithError(f, p->fk_name);
    if (PyErr_Occurred())
        return NULL;
    raw = raw == Py_None ? NULL : raw;
    url = url == Py_None ? NULL : url;
    media = media ? media : Py_None;
    name = name ? name : Py_None;
    if ((raw == NULL) == (url == NULL) || (media != Py_None && !PyUnicode_CheckExact(media)) ||
        (name != Py_None && !PyUnicode_CheckExact(name)) ||
        (url != NULL && !PyUnicode_CheckExact(url)))
        Py_RETURN_NONE;
    PyObject *content;
    if (raw != NULL) {
        content = PyObject_CallOneArg(p->b64e, raw); /* (a decoder plan's: base64 -> bytes) */
        if (content == NULL)
            return NULL;
    }
    else {
        Py_INCREF(url);
        content = url;
    }
    PyObject *obj = p->file_cls->tp_alloc(p->file_cls, 0);
    if (obj == NULL) {
        Py_DECREF(content);
        return NULL;
    }
    PyObject *vals[5] = {raw != NULL ? content : Py_None, raw != NULL ? Py_None : content, meta,
                         name, media};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(vals[i]);
        *SLOT(obj, p->file_off[i]) = vals[i];
    }
    Py_DECREF(content);
    return obj;
}

static PyObject *
read_part(PartPlan *p, Reader *r, int depth, int *generic)
{
    const unsigned char *start = r->p;
    PyObject *vals[PK_N] = {NULL}, *out = GIVE_UP;
    int order[PK_N], n = 0;
    *generic = 0;
    r->p++; /* '{' */
    if (peek(r) == '}')
        goto rewind;
    for (;;) {
        const unsigned char *s, *e;
        int flags, k;
        if (peek(r) != '"' || scan_string(r, &s, &e, &flags) < 0 || flags)
            goto rewind;
        for (k = 0; k < PK_N; k++)
            if ((size_t)(e - s) == strlen(PART_KEYS[k]) && memcmp(s, PART_KEYS[k], e - s) == 0)
                break;
        if (k == PK_N || vals[k] != NULL || peek(r) != ':')
            goto rewind; /* another member, or one twice */
        r->p++;
        vals[k] = read_any(r, depth + 1);
        if (vals[k] == NULL)
            goto fail;
        order[n++] = k;
        int c = peek(r);
        r->p++;
        if (c == '}')
            break;
        if (c != ',')
            goto fail;
    }
    /* decode_part's fast shapes, on the same members */
    PyObject *meta = vals[PK_META] ? vals[PK_META] : Py_None;
    int m = n - (vals[PK_META] != NULL);
    if (meta == Py_None || PyDict_CheckExact(meta)) {
        PyObject *k = vals[PK_KIND], *t = vals[PK_TEXT], *dt = vals[PK_DATA];
        if (p->tagged) {
            if (m == 2 && k != NULL && PyUnicode_CheckExact(k)) {
                if (PyUnicode_Compare(k, p->v_text) == 0 && t != NULL && PyUnicode_CheckExact(t))
                    out = new_part(p->text_cls, p->text_off, t, meta);
                else if (PyUnicode_Compare(k, p->v_data) == 0 && dt != NULL &&
                         PyDict_CheckExact(dt))
                    out = new_part(p->data_cls, p->data_off, dt, meta);
                else if (p->file_cls != NULL && vals[PK_FILE] != NULL &&
                         PyDict_CheckExact(vals[PK_FILE]) &&
                         PyUnicode_Compare(k, p->fk_file) == 0) {
                    out = tagged_file(p, vals[PK_FILE], meta);
                    if (out == Py_None)
                        Py_CLEAR(out); /* the hook reports it */
                    else if (out == NULL)
                        goto fail;
                }
                else if (PyErr_Occurred())
                    goto fail;
            }
        }
        else if (m == 1) {
            if (t != NULL && PyUnicode_CheckExact(t))
                out = new_part(p->text_cls, p->text_off, t, meta);
            else if (t == NULL && dt != NULL)
                out = new_part(p->data_cls, p->data_off, dt, meta);
        }
    }
    if (out == NULL && !PyErr_Occurred()) {
        /* another shape: the dict plan on the same members (it calls the hook) */
        PyObject *d = PyDict_New();
        if (d == NULL)
            goto fail;
        for (int i = 0; i < n; i++) {
            PyObject *key = PyUnicode_InternFromString(PART_KEYS[order[i]]);
            int rc = key == NULL ? -1 : PyDict_SetItem(d, key, vals[order[i]]);
            Py_XDECREF(key);
            if (rc < 0) {
                Py_DECREF(d);
                goto fail;
            }
        }
        out = decode_part(p, d);
        Py_DECREF(d);
    }
fail:
    for (int i = 0; i < PK_N; i++)
        Py_XDECREF(vals[i]);
    return out;
rewind:
    for (int i = 0; i < PK_N; i++)
        Py_XDECREF(vals[i]);
    r->p = start;
    *generic = 1;
    return GIVE_UP;
}

/* A value decoded by plan or callable `arg` (what run() does with a parsed value). */
static PyObject *
read_nested(PyObject *arg, Reader *r, int depth)
{
    if (Py_IS_TYPE(arg, &Plan_Type)) {
        if (peek(r) != '{')
            return GIVE_UP;
        return read_obj((Plan *)arg, r, depth + 1);
    }
    if (Py_IS_TYPE(arg, &PartPlan_Type) && peek(r) == '{' && depth + 1 <= MAX_DEPTH) {
        int generic;
        PyObject *x = read_part((PartPlan *)arg, r, depth + 1, &generic);
        if (!generic)
            return x;
    }
    PyObject *v = read_any(r, depth + 1);
    if (v == NULL)
        return GIVE_UP;
    PyObject *x;
    if (Py_IS_TYPE(arg, &PartPlan_Type)) /* parts: their dict plan on the parsed object */
        x = decode_part((PartPlan *)arg, v);
    else
        x = PyObject_CallOneArg(arg, v);
    Py_DECREF(v);
    return x;
}

/* A K_LIST member: a tuple, or Py_None for "unset" (ProtoJSON's empty list). */
static PyObject *
read_items(Field *f, Reader *r, int depth)
{
    r->p++; /* '[' */
    if (peek(r) == ']') {
        r->p++;
        if (f->flags & F_UNSET)
            Py_RETURN_NONE;
        if (f->flags & F_NONEMPTY)
            return GIVE_UP;
        return PyTuple_New(0);
    }
    PyObject *small[16], **items = small;
    Py_ssize_t n = 0, cap = 16;
    PyObject *out = GIVE_UP;
    for (;;) {
        if (n == cap) {
            PyObject **grown = PyMem_Malloc(2 * cap * sizeof(PyObject *));
            if (grown == NULL)
                goto done;
            memcpy(grown, items, n * sizeof(PyObject *));
            if (items != small)
                PyMem_Free(items);
            items = grown;
            cap *= 2;
        }
        PyObject *x = read_nested(f->arg, r, depth);
        if (x == NULL)
            goto done;
        items[n++] = x;
        int c = peek(r);
        r->p++;
        if (c == ']')
            break;
        if (c != ',')
            goto done;
    }
    out = PyTuple_New(n);
    if (out != NULL) {
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(out, i, items[i]);
        n = 0;
    }
done:
    for (Py_ssize_t i = 0; i < n; i++)
        Py_DECREF(items[i]);
    if (items != small)
        PyMem_Free(items);
    return out;
}

/* One member of a model: 1 and *x (a new reference), 0 for absent (null or
 * unset), -1 to give up. The checks are decode_obj's, kind by kind. */
static int
read_field(Field *f, Reader *r, int depth, PyObject **x)
{
    int c = peek(r);
    if (c == 'n') {
        if (!literal(r, "null", 4))
            return -1;
        return 0;
    }
    switch (f->kind) {
    case K_ANY:
        *x = read_any(r, depth + 1);
        return *x == NULL ? -1 : 1;
    case K_STR: {
        if (c != '"')
            return -1;
        PyObject *s = read_str(r);
        if (s == NULL)
            return -1;
        if (PyUnicode_GET_LENGTH(s) == 0) {
            if (f->flags & F_UNSET) {
                Py_DECREF(s);
                return 0;
            }
            if (f->flags & F_NONEMPTY) {
                Py_DECREF(s);
                return -1;
            }
        }
        *x = s;
        return 1;
    }
    case K_ENUM: {
        if (c != '"')
            return -1;
        PyObject *s = read_str(r);
        if (s == NULL)
            return -1;
        PyObject *m = PyDict_GetItemWithError(f->arg, s);
        Py_DECREF(s);
        if (m == NULL)
            return -1;
        Py_INCREF(m);
        *x = m;
        return 1;
    }
    case K_OBJ:
    case K_PART:
        *x = read_nested(f->arg, r, depth);
        return *x == NULL ? -1 : 1;
    case K_LIST: {
        if (c != '[')
            return -1;
        PyObject *t = read_items(f, r, depth);
        if (t == NULL)
            return -1;
        if (t == Py_None) {
            Py_DECREF(t);
            return 0;
        }
        *x = t;
        return 1;
    }
    case K_STRUCT:
        if (c != '{')
            return -1;
        *x = read_dict(r, depth + 1);
        return *x == NULL ? -1 : 1;
    case K_CALL: {
        PyObject *v = read_any(r, depth + 1);
        if (v == NULL)
            return -1;
        int rc = call_field(f, v, x);
        Py_DECREF(v);
        return rc;
    }
    default:
        return -1;
    }
}

/* Whether the key [s, s+n) is one of the names in tuple t (str items). */
static int
key_in(PyObject *t, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t m = PyTuple_GET_SIZE(t);
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *k = PyTuple_GET_ITEM(t, i);
        if (PyTuple_Check(k))
            k = PyTuple_GET_ITEM(k, 0); /* constants: (key, value) */
        Py_ssize_t kn;
        const char *kb = PyUnicode_Check(k) ? PyUnicode_AsUTF8AndSize(k, &kn) : NULL;
        if (kb == NULL) {
            PyErr_Clear();
            return -1;
        }
        if (kn == n && memcmp(kb, s, n) == 0)
            return (int)i;
    }
    return -2;
}

/* A model object (r->p at its '{'), as decode_obj builds it from the parsed dict. */
static PyObject *
read_obj(Plan *p, Reader *r, int depth)
{
    if (!p->direct || p->fields == NULL || depth > MAX_DEPTH)
        return GIVE_UP;
    r->p++; /* '{' */
    PyObject *obj = p->cls->tp_alloc(p->cls, 0);
    if (obj == NULL)
        return NULL;
    uint64_t seen = 0, set = 0;
    Py_ssize_t hint = 0, nf = p->nfields;
    if (peek(r) == '}')
        r->p++;
    else {
        for (;;) {
            const unsigned char *s, *e;
            int flags;
            if (peek(r) != '"' || scan_string(r, &s, &e, &flags) < 0 || flags)
                goto fail; /* (escaped or non-ASCII member names: the existing path) */
            if (peek(r) != ':')
                goto fail;
            r->p++;
            Py_ssize_t n = e - s, i = -1;
            for (Py_ssize_t j = 0; j < nf; j++) {
                Py_ssize_t k = hint + j < nf ? hint + j : hint + j - nf;
                Field *f = &p->fields[k];
                if (f->klen == n && memcmp(f->kb, s, n) == 0) {
                    i = k;
                    break;
                }
            }
            if (i >= 0) {
                Field *f = &p->fields[i];
                uint64_t bit = (uint64_t)1 << i;
                if (seen & bit)
                    goto fail; /* a member twice */
                seen |= bit;
                hint = i + 1 < nf ? i + 1 : 0;
                PyObject *x = NULL;
                int rc = read_field(f, r, depth, &x);
                if (rc < 0)
                    goto fail;
                if (rc > 0) {
                    set |= bit;
                    Py_XSETREF(*SLOT(obj, f->offset), x);
                }
            }
            else {
                if (p->aliases != NULL && key_in(p->aliases, s, n) != -2)
                    goto fail; /* an alias: the pure path */
                int c = p->constants != NULL ? key_in(p->constants, s, n) : -2;
                if (c == -1)
                    goto fail;
                if (c >= 0 && peek(r) == '"') {
                    /* a constant's plain text (0.3's "kind"): compared as it is */
                    PyObject *want = PyTuple_GET_ITEM(PyTuple_GET_ITEM(p->constants, c), 1);
                    const unsigned char *vs, *ve, *at = r->p;
                    Py_ssize_t wn;
                    const char *wb;
                    if (scan_string(r, &vs, &ve, &flags) < 0)
                        goto fail;
                    if (!flags && PyUnicode_CheckExact(want)) {
                        wb = PyUnicode_AsUTF8AndSize(want, &wn);
                        if (wb == NULL || wn != ve - vs || memcmp(wb, vs, wn) != 0)
                            goto fail; /* another value (decode_obj gives up too) */
                        c = -3;
                    }
                    else
                        r->p = at; /* escapes: parsed and compared below */
                }
                if (c != -3) {
                    PyObject *v = read_any(r, depth + 1); /* unknown members: valid JSON, ignored */
                    if (v == NULL)
                        goto fail;
                    if (c >= 0 && v != Py_None) {
                        PyObject *want = PyTuple_GET_ITEM(PyTuple_GET_ITEM(p->constants, c), 1);
                        int eq = PyObject_RichCompareBool(v, want, Py_EQ);
                        if (eq != 1) {
                            Py_DECREF(v);
                            goto fail;
                        }
                    }
                    Py_DECREF(v);
                }
            }
            int c = peek(r);
            r->p++;
            if (c == '}')
                break;
            if (c != ',')
                goto fail;
        }
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        if (set & ((uint64_t)1 << i))
            continue;
        Field *f = &p->fields[i];
        PyObject *x = field_default(f);
        if (x == NULL)
            goto fail;
        Py_XSETREF(*SLOT(obj, f->offset), x);
    }
    for (Py_ssize_t i = 0; i < p->ntail; i++) {
        Field *f = &p->tail[i];
        PyObject *x = field_default(f);
        if (x == NULL)
            goto fail;
        Py_XSETREF(*SLOT(obj, f->offset), x);
    }
    if (p->validate != NULL) {
        PyObject *v = PyObject_CallOneArg(p->validate, obj);
        if (v == NULL)
            goto fail;
        Py_DECREF(v);
    }
    return obj;
fail:
    Py_DECREF(obj);
    return GIVE_UP;
}

/* read(plan, data): the model, or None (gave up: run the existing path). */
static PyObject *
direct_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "read(plan, data)");
        return NULL;
    }
    PyObject *plan = args[0], *data = args[1];
    const char *buf;
    Py_ssize_t len;
    if (PyBytes_CheckExact(data)) {
        buf = PyBytes_AS_STRING(data);
        len = PyBytes_GET_SIZE(data);
    }
    else if (PyUnicode_CheckExact(data)) {
        /* ASCII text is its own UTF-8; other text is encoded once, as _json.loads
         * does (not cached in the str) */
        if (PyUnicode_IS_ASCII(data)) {
            buf = (const char *)PyUnicode_1BYTE_DATA(data);
            len = PyUnicode_GET_LENGTH(data);
        }
        else {
            PyObject *b = PyUnicode_AsUTF8String(data);
            if (b == NULL) {
                PyErr_Clear(); /* lone surrogates in the text itself */
                Py_RETURN_NONE;
            }
            PyObject *pair[2] = {plan, b};
            PyObject *out = direct_read(self, pair, 2);
            Py_DECREF(b);
            return out;
        }
    }
    else
        Py_RETURN_NONE;
    Reader r = {(const unsigned char *)buf, (const unsigned char *)buf + len, NULL, 0};
    PyObject *out = GIVE_UP;
    int c = peek(&r);
    if (Py_IS_TYPE(plan, &Plan_Type) && c == '{')
        out = read_obj((Plan *)plan, &r, 0);
    else if (Py_IS_TYPE(plan, &PartPlan_Type) && c == '{')
        out = read_nested(plan, &r, -1);
    if (out != NULL && peek(&r) != -1)
        Py_CLEAR(out); /* trailing content */
    PyMem_Free(r.scratch);
    if (out == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return out;
}

/* ------------------------------------------------------------------ writing */

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
        const unsigned char *s = data;
        Py_ssize_t i = 0;
        while (i < n) {
            Py_ssize_t j = i;
            while (n - j >= 8 && !special8(s + j))
                j += 8;
            while (j < n && !ESCAPE[s[j]])
                j++;
            memcpy(o, s + i, j - i);
            o += j - i;
            if (j < n)
                o = put_escape(o, s[j++]);
            i = j;
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
    PyObject *content;
    if (raw != Py_None) {
        content = PyObject_CallOneArg(p->b64e, raw);
        if (content == NULL)
            return -1;
    }
    else {
        Py_INCREF(url);
        content = url;
    }
    PyObject *ckey = raw != Py_None ? p->fk_raw : p->fk_url;
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
    PyTypeObject *tp = Py_TYPE(o);
    Py_ssize_t *off;
    PyObject *key, *val;
    if (tp == p->text_cls) {
        off = p->text_off;
        key = p->k_text;
        val = p->v_text;
    }
    else if (tp == p->data_cls) {
        off = p->data_off;
        key = p->k_data;
        val = p->v_data;
    }
    else if (tp == p->file_cls && p->file_cls != NULL)
        return write_file(p, w, o, depth);
    else
        return -2;
    PyObject *content = *SLOT(o, off[0]), *meta = *SLOT(o, off[1]);
    if (content == NULL || meta == NULL || *SLOT(o, off[2]) != Py_None ||
        *SLOT(o, off[3]) != Py_None)
        return -2;
    if (p->tagged && tp == p->data_cls && !PyDict_CheckExact(content))
        return -2;
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
        switch (f->flags) {
        case P_ALWAYS:
            break;
        case P_REQUIRED:
            if (v == Py_None)
                return -1;
            break;
        case P_NOT_NONE:
            if (v == Py_None)
                continue;
            break;
        case P_TRUTHY: {
            int t = PyObject_IsTrue(v);
            if (t < 0)
                return -1;
            if (!t)
                continue;
            break;
        }
        case P_NE: {
            int t = PyObject_RichCompareBool(v, f->deflt, Py_NE);
            if (t < 0)
                return -1;
            if (!t)
                continue;
            break;
        }
        case P_UNSUPPORTED: {
            long how = PyLong_AsLong(f->deflt);
            int present = how == P_NOT_NONE ? v != Py_None : PyObject_IsTrue(v);
            if (present)
                return -1;
            continue;
        }
        default:
            return -1;
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
static PyObject *
direct_write(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
    if (is_plan)
        rc = write_obj((Plan *)plan, &w, obj, 0);
    else if (Py_IS_TYPE(plan, &PartPlan_Type))
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
    {"read", (PyCFunction)(void (*)(void))direct_read, METH_FASTCALL,
     "read(plan, data): the model decoded straight from JSON bytes or text, or None "
     "(gave up: decode the existing way)."},
    {"write", (PyCFunction)(void (*)(void))direct_write, METH_FASTCALL,
     "write(plan, obj): the JSON bytes of obj written straight from the model, or None "
     "(gave up: encode the existing way)."},
    {NULL},
};

int
a2a_direct_init(PyObject *mod)
{
    (void)mod;
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
