/* The bytes-direct reader of the codec accelerator (docs/accelerator.md).
 *
 * read(plan, data): scans JSON bytes and runs the decode plans on them, building
 * the models without the intermediate dicts. It runs the valid, common path
 * only: on anything else (invalid JSON of any kind, invalid UTF-8, lone
 * surrogates, control characters in strings, numbers that might not fit in
 * int64 or a double, deep nesting, a member name given twice in any object, an alias,
 * anything a plan gives up on, any exception) it gives up and returns None, and
 * the caller runs the existing path (_json.loads + the dict plans) on the same
 * input: every error and every edge case is the existing code's. Every access
 * to the input is bounds-checked.
 */
#include "_speedups.h"

#include <math.h>

#define GIVE_UP NULL

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

/* The next byte after white space, consumed (never past the end), or -1. */
static inline int
take(Reader *r)
{
    int c = peek(r);
    if (c >= 0)
        r->p++;
    return c;
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

/* A string (r->p at its opening quote): its text, unescaped or UTF-8 decoded
 * where it must be; plain ASCII directly (an object key through the key cache).
 * Always inlined: read_str and read_key each get their own copy, as when they
 * were written out (no call and no test of key per string). */
static inline Py_ALWAYS_INLINE PyObject *
read_text(Reader *r, int key)
{
    const unsigned char *s, *e;
    int flags;
    if (scan_string(r, &s, &e, &flags) < 0)
        return GIVE_UP;
    if (flags & 1)
        return unescape(r, s, e);
    if (flags & 2)
        return PyUnicode_DecodeUTF8((const char *)s, e - s, NULL);
    return key ? cached_key(s, e - s) : ascii_str(s, e - s);
}

static PyObject *
read_str(Reader *r)
{
    return read_text(r, 0);
}

static PyObject *
read_key(Reader *r)
{
    if (r->p >= r->end || *r->p != '"')
        return GIVE_UP;
    return read_text(r, 1);
}

/* Past the 1 to 18 digits at p (a fraction's or an exponent's), or NULL (none,
 * or more: the existing path). */
static inline const unsigned char *
digits(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *d = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    return p == d || p - d > 18 ? NULL : p;
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
        p = digits(p + 1, end);
        if (p == NULL)
            return GIVE_UP;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_float = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        p = digits(p, end);
        if (p == NULL)
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
    for (Py_ssize_t count = 1;; count++) {
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
        int rc = PyDict_SetItem(d, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (rc < 0 || PyDict_GET_SIZE(d) != count)
            goto fail; /* (a name twice: the existing path refuses it) */
        int c = take(r);
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
        int c = take(r);
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
        int c = take(r);
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
        int c = take(r);
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

/* The names of a model object's members that are not its fields: few (the existing
 * path reads more), compared as bytes (escaped names already gave up). */
#define OTHER_MAX 8
typedef struct {
    const unsigned char *s[OTHER_MAX];
    Py_ssize_t n[OTHER_MAX];
    int count;
} Names;

/* Adds the name [s, s+n): 0, or -1 (named before, or too many: give up). */
static int
names_add(Names *u, const unsigned char *s, Py_ssize_t n)
{
    for (int i = 0; i < u->count; i++)
        if (u->n[i] == n && memcmp(u->s[i], s, n) == 0)
            return -1;
    if (u->count == OTHER_MAX)
        return -1;
    u->s[u->count] = s;
    u->n[u->count++] = n;
    return 0;
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
    uint64_t seen = 0, set = 0, constants = 0;
    Names others;
    others.count = 0; /* (the arrays are filled as names come) */
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
                if (c >= 0) {
                    if (c >= 64 || (constants >> c) & 1)
                        goto fail; /* a constant twice */
                    constants |= (uint64_t)1 << c;
                }
                else if (names_add(&others, s, n) < 0)
                    goto fail; /* an unknown member twice, or many */
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
            int c = take(r);
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
PyObject *
a2a_direct_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
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
            PyObject *out = a2a_direct_read(self, pair, 2);
            Py_DECREF(b);
            return out;
        }
    }
    else
        Py_RETURN_NONE;
    Reader r = {(const unsigned char *)buf, (const unsigned char *)buf + len, NULL, 0};
    PyObject *out = GIVE_UP;
    int c = peek(&r);
    /* (decoder plans only: an encoder's tables mean something else) */
    if (Py_IS_TYPE(plan, &Plan_Type) && !((Plan *)plan)->encode && c == '{')
        out = read_obj((Plan *)plan, &r, 0);
    else if (Py_IS_TYPE(plan, &PartPlan_Type) && !((PartPlan *)plan)->encode && c == '{')
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


/* -- unique_keys(data, value): _json.loads's test for a member name given twice ------
 *
 * orjson keeps the last value of a name given twice in one object: a member is lost
 * and nothing says so. The test compares counts. In valid JSON each ':' outside a
 * string is one member's; parsing loses one key per member named again, and the ':'
 * in that member's strings. So, unless a ':' is written as an escape ("\u003a"), the
 * text's ':' equal the parsed keys plus the ':' in the parsed strings exactly when
 * nothing was lost; with such an escape, the ':' outside strings are counted instead.
 * Linear, whatever the names ("a" and "\u0061" are one name: the parser decoded both). */

/* The ':' bytes of [p, end), eight at a time. */
static Py_ssize_t
count_colons(const unsigned char *p, const unsigned char *end)
{
    const uint64_t ones = 0x0101010101010101ULL, low7 = 0x7F7F7F7F7F7F7F7FULL;
    Py_ssize_t n = 0;
    for (; end - p >= 8; p += 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        uint64_t x = v ^ (ones * ':');
        uint64_t t = ~(((x & low7) + low7) | x | low7); /* the high bit of each ':' byte */
        n += (Py_ssize_t)(((t >> 7) * ones) >> 56);
    }
    for (; p < end; p++)
        n += *p == ':';
    return n;
}

/* Whether [p, end) may write a ':' as an escape ("\u003a", "\u003A"). */
static int
escaped_colon(const unsigned char *p, const unsigned char *end)
{
    while (p < end && (p = memchr(p, '\\', end - p)) != NULL) {
        if (end - p >= 6 && p[1] == 'u' && p[2] == '0' && p[3] == '0' && p[4] == '3' &&
            (p[5] | 0x20) == 'a')
            return 1;
        p++;
    }
    return 0;
}

/* The ':' outside strings in the valid JSON text [p, end). */
static Py_ssize_t
text_members(const unsigned char *p, const unsigned char *end)
{
    Py_ssize_t n = 0;
    int in_string = 0;
    for (; p < end; p++) {
        if (*p == '"')
            in_string = !in_string;
        else if (*p == '\\') {
            if (end - p < 2)
                break;
            p++; /* the escaped character (a '\' is only ever in a string) */
        }
        else if (*p == ':' && !in_string)
            n++;
    }
    return n;
}

/* The ':' in str s. */
static Py_ssize_t
str_colons(PyObject *s)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(s), n = 0;
    const void *data = PyUnicode_DATA(s);
    switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND: {
        const unsigned char *p = data, *end = p + len;
        while (p < end && (p = memchr(p, ':', end - p)) != NULL) {
            n++;
            p++;
        }
        break;
    }
    case PyUnicode_2BYTE_KIND:
        for (Py_ssize_t i = 0; i < len; i++)
            n += ((const Py_UCS2 *)data)[i] == ':';
        break;
    default:
        for (Py_ssize_t i = 0; i < len; i++)
            n += ((const Py_UCS4 *)data)[i] == ':';
    }
    return n;
}

/* Adds to w[0] the keys of every dict in v (dicts, lists and strs as json and orjson
 * build them) and, if strings, to w[1] the ':' in its strings; -1: nested deeper than
 * they build. */
static int
value_members(PyObject *v, int depth, int strings, Py_ssize_t *w)
{
    if (depth > 4096)
        return -1;
    if (PyUnicode_CheckExact(v)) {
        if (strings)
            w[1] += str_colons(v);
    }
    else if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0;
        PyObject *k, *x;
        w[0] += PyDict_GET_SIZE(v);
        while (PyDict_Next(v, &pos, &k, &x)) {
            if (strings && PyUnicode_CheckExact(k))
                w[1] += str_colons(k);
            if (value_members(x, depth + 1, strings, w) < 0)
                return -1;
        }
    }
    else if (PyList_CheckExact(v)) {
        Py_ssize_t len = PyList_GET_SIZE(v);
        for (Py_ssize_t i = 0; i < len; i++)
            if (value_members(PyList_GET_ITEM(v, i), depth + 1, strings, w) < 0)
                return -1;
    }
    return 0;
}

/* unique_keys(data, value): True when value, the valid JSON bytes data as parsed, has
 * every member of data (no object of data names a member twice); False otherwise,
 * and when it cannot tell (the caller then parses exactly). */
PyObject *
a2a_unique_keys(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "unique_keys(data: bytes, value)");
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    const unsigned char *end = p + PyBytes_GET_SIZE(args[0]);
    int plain = !escaped_colon(p, end);
    Py_ssize_t w[2] = {0, 0};
    if (value_members(args[1], 0, plain, w) < 0)
        Py_RETURN_FALSE;
    if (plain)
        return PyBool_FromLong(count_colons(p, end) == w[0] + w[1]);
    return PyBool_FromLong(text_members(p, end) == w[0]);
}
