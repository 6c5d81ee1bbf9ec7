/* A strict TOML 1.0 reader for gradleak's settings, differential-tested against Python's tomllib. */
#include "config/toml.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/array.h"
#include "base/strmap.h"

/* Tables switch from a linear scan to a hash index past this many keys; config tables are small,
 * but a generated file with 100,000 keys must not turn quadratic. */
#define TOML_INDEX_MIN 8

/* Table flags. A table opened by a [header] or reached by dotted keys in an earlier section may not
 * be reopened; inline tables and inline arrays are sealed once parsed (TOML 1.0 "Table"). */
enum {
    TOML__DEFINED = 1 << 0, /* named by a [header] (or an element of an [[array]]) */
    TOML__SEALED = 1 << 1,  /* inline table or inline array: nothing may be added afterwards */
    TOML__AOT = 1 << 2,     /* array created by [[header]]: headers extend its last element */
};

typedef struct TomlEntry {
    char *key; /* owned, NUL-terminated */
    uint32_t key_len;
    uint32_t line, col;
    TomlValue *value;
} TomlEntry;

struct TomlValue {
    TomlType type;
    uint32_t line, col;
    uint16_t depth;
    uint8_t flags;
    /* Section (1 = before the first header) in which dotted keys last passed through this table;
     * 0 when never. Dotted keys may only extend tables they created in the same section. */
    uint32_t dotted_section;
    TomlValue *next_alloc; /* every node of one tree, from the root: toml_free walks it */
    union {
        struct {
            Array(TomlEntry) entries;
            StrMap index; /* key -> entry index, once the table has TOML_INDEX_MIN keys */
        } table;                  /* TOML_TABLE */
        Array(TomlValue *) array; /* TOML_ARRAY */
        struct {
            char *s; /* owned, NUL-terminated */
            size_t len;
        } str;     /* TOML_STRING */
        int64_t i; /* TOML_INT */
        double f;  /* TOML_FLOAT */
        bool b;    /* TOML_BOOL */
    } u;
};

typedef Array(char) TomlBuf;

typedef struct TomlKeyPart {
    uint32_t start, len; /* into TomlParser.keybuf */
    size_t off;          /* source offset of the part */
} TomlKeyPart;

typedef struct TomlParser {
    const char *src;
    size_t len, pos;
    TomlError *err;
    bool failed;
    TomlValue *root;
    uint32_t section;
    TomlBuf keybuf, sbuf;
    Array(TomlKeyPart) parts;
    /* Cursor for offset -> line:col: values are created in source order, so this stays linear. */
    size_t loc_off;
    uint32_t loc_line, loc_col;
} TomlParser;

/* ---- positions and errors ---- */

static void toml__locate(TomlParser *p, size_t off, uint32_t *line, uint32_t *col)
{
    if (off < p->loc_off) {
        p->loc_off = 0;
        p->loc_line = 1;
        p->loc_col = 1;
    }
    if (off > p->len) off = p->len;
    for (size_t i = p->loc_off; i < off; i++) {
        unsigned char c = (unsigned char)p->src[i];
        if (c == '\n') {
            p->loc_line++;
            p->loc_col = 1;
        } else if ((c & 0xC0) != 0x80) { /* count code points, not continuation bytes */
            p->loc_col++;
        }
    }
    p->loc_off = off;
    *line = p->loc_line;
    *col = p->loc_col;
}

/* Records the first error only; callers return as soon as p->failed is set. */
static bool toml__fail(TomlParser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool toml__fail(TomlParser *p, size_t off, const char *fmt, ...)
{
    if (p->failed) return false;
    p->failed = true;
    toml__locate(p, off, &p->err->line, &p->err->col);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
    va_end(ap);
    return false;
}

/* A key for an error message: at most 48 bytes, non-printable bytes shown as '?'. */
static const char *toml__show(char *out, size_t cap, const char *key, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 4 < cap && i < 48; i++) {
        unsigned char c = (unsigned char)key[i];
        out[n++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (len > 48 && n + 4 < cap) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
    return out;
}

/* ---- nodes ---- */

static TomlValue *toml__new(TomlParser *p, TomlType type, size_t off, uint32_t depth)
{
    TomlValue *v = gl_calloc(1, sizeof *v);
    v->type = type;
    v->depth = (uint16_t)depth;
    toml__locate(p, off, &v->line, &v->col);
    if (p->root) { /* the root heads the list; everything else goes right after it */
        v->next_alloc = p->root->next_alloc;
        p->root->next_alloc = v;
    }
    return v;
}

static TomlValue *toml__find(const TomlValue *t, const char *key, size_t len)
{
    const TomlEntry *items = t->u.table.entries.items;
    if (t->u.table.index.cap) {
        uint32_t i = strmap_get(&t->u.table.index, key, len);
        return i == UINT32_MAX ? NULL : items[i].value;
    }
    for (uint32_t i = 0; i < t->u.table.entries.len; i++)
        if (items[i].key_len == len && memcmp(items[i].key, key, len) == 0) return items[i].value;
    return NULL;
}

/* Adds key -> value to t; the key is copied, the value is already owned by the tree. */
static void toml__add(TomlParser *p, TomlValue *t, const char *key, size_t len, size_t key_off,
                      TomlValue *value) {
    TomlEntry e = {gl_strndup(key, len), (uint32_t)len, 0, 0, value};
    toml__locate(p, key_off, &e.line, &e.col);
    array_push(&t->u.table.entries, e);
    uint32_t n = t->u.table.entries.len;
    if (n < TOML_INDEX_MIN) return;
    /* The map points at the keys' own allocations, which stay put while the entries array moves. */
    for (uint32_t i = t->u.table.index.cap ? n - 1 : 0; i < n; i++) {
        const TomlEntry *k = &t->u.table.entries.items[i];
        strmap_put(&t->u.table.index, k->key, k->key_len, i);
    }
}

static void toml__free_node(TomlValue *v)
{
    switch (v->type) {
    case TOML_TABLE:
        for (uint32_t i = 0; i < v->u.table.entries.len; i++) gl_free(v->u.table.entries.items[i].key);
        array_free(&v->u.table.entries);
        strmap_free(&v->u.table.index);
        break;
    case TOML_ARRAY: array_free(&v->u.array); break;
    case TOML_STRING: gl_free(v->u.str.s); break;
    default: break;
    }
    gl_free(v);
}

void toml_free(TomlValue *root)
{
    while (root) { /* iterative: the tree may be 128 deep and wide, the list is flat */
        TomlValue *next = root->next_alloc;
        toml__free_node(root);
        root = next;
    }
}

/* ---- lexing helpers ---- */

static int toml__peek(const TomlParser *p, size_t k)
{
    return p->pos + k < p->len ? (unsigned char)p->src[p->pos + k] : -1;
}

static bool toml__starts(const TomlParser *p, const char *s)
{
    size_t n = strlen(s);
    return p->len - p->pos >= n && memcmp(p->src + p->pos, s, n) == 0;
}

/* Length of a newline at pos: 1 for "\n", 2 for "\r\n", 0 otherwise (a bare CR is no newline). */
static size_t toml__newline(const TomlParser *p)
{
    int c = toml__peek(p, 0);
    if (c == '\n') return 1;
    if (c == '\r' && toml__peek(p, 1) == '\n') return 2;
    return 0;
}

static void toml__skip_ws(TomlParser *p)
{
    while (p->pos < p->len && (p->src[p->pos] == ' ' || p->src[p->pos] == '\t')) p->pos++;
}

static bool toml__is_ctrl(int c) { return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f; }

static bool toml__bad_char(TomlParser *p, const char *where)
{
    int c = toml__peek(p, 0);
    if (c == '\r') return toml__fail(p, p->pos, "bare carriage return in %s", where);
    return toml__fail(p, p->pos, "control character U+%04X in %s", (unsigned)c, where);
}

/* Skips a comment if one starts here. UTF-8 was checked for the whole input up front. */
static bool toml__skip_comment(TomlParser *p)
{
    if (toml__peek(p, 0) != '#') return true;
    while (p->pos < p->len && !toml__newline(p)) {
        if (toml__is_ctrl((unsigned char)p->src[p->pos])) return toml__bad_char(p, "a comment");
        p->pos++;
    }
    return true;
}

/* Whitespace, newlines and comments, as allowed between array elements. */
static bool toml__skip_array_ws(TomlParser *p)
{
    for (;;) {
        toml__skip_ws(p);
        size_t nl = toml__newline(p);
        if (nl) {
            p->pos += nl;
        } else if (toml__peek(p, 0) == '#') {
            if (!toml__skip_comment(p)) return false;
        } else {
            return true;
        }
    }
}

static bool toml__is_bare(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static bool toml__is_digit(int c) { return c >= '0' && c <= '9'; }

static int toml__hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence at s, or 0 (overlong forms, surrogates and values past
 * U+10FFFF are invalid, as Python's strict decoder has it). */
static size_t toml__utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (avail < n || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}

static void toml__put_utf8(TomlBuf *b, uint32_t cp)
{
    if (cp < 0x80) {
        array_push(b, (char)cp);
    } else if (cp < 0x800) {
        array_push(b, (char)(0xC0 | (cp >> 6)));
        array_push(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        array_push(b, (char)(0xE0 | (cp >> 12)));
        array_push(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        array_push(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        array_push(b, (char)(0xF0 | (cp >> 18)));
        array_push(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        array_push(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        array_push(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* ---- strings ---- */

/* An escape after '\' in a basic string; p->pos is on the backslash. */
static bool toml__escape(TomlParser *p, TomlBuf *out, bool multiline)
{
    size_t at = p->pos;
    int c = toml__peek(p, 1);
    if (multiline && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
        /* Line-ending backslash: whitespace up to the newline, then all whitespace and newlines. */
        p->pos++;
        toml__skip_ws(p);
        size_t nl = toml__newline(p);
        if (!nl) {
            if (p->pos >= p->len) return true; /* the caller reports the unterminated string */
            return toml__fail(p, at, "a line-ending backslash must be followed only by whitespace");
        }
        for (;;) {
            toml__skip_ws(p);
            nl = toml__newline(p);
            if (!nl) return true;
            p->pos += nl;
        }
    }
    const char *simple = NULL;
    switch (c) {
    case 'b': simple = "\b"; break;
    case 't': simple = "\t"; break;
    case 'n': simple = "\n"; break;
    case 'f': simple = "\f"; break;
    case 'r': simple = "\r"; break;
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    case 'u':
    case 'U': {
        size_t n = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t i = 0; i < n; i++) {
            int h = toml__hexval(toml__peek(p, 2 + i));
            if (h < 0) return toml__fail(p, at, "\\%c needs %zu hex digits", c, n);
            cp = cp * 16 + (uint32_t)h;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return toml__fail(p, at, "\\%c%.*s is not a Unicode scalar value", c, (int)n,
                              p->src + at + 2);
        toml__put_utf8(out, cp);
        p->pos += 2 + n;
        return true;
    }
    default: break;
    }
    if (!simple) {
        if (c < 0x20 || c >= 0x7f) return toml__fail(p, at, "invalid escape sequence");
        return toml__fail(p, at, "invalid escape sequence '\\%c'", c);
    }
    array_push(out, simple[0]);
    p->pos += 2;
    return true;
}

/* Closes a multi-line string at a run of quotes: up to two extra quotes belong to the content
 * ("""a""""" is 'a""'). Returns true when the string ended. */
static bool toml__ml_close(TomlParser *p, TomlBuf *out, char q)
{
    size_t n = 0;
    while (toml__peek(p, n) == q) n++;
    if (n < 3) {
        for (size_t i = 0; i < n; i++) array_push(out, q);
        p->pos += n;
        return false;
    }
    size_t extra = GL_MIN(n - 3, (size_t)2);
    for (size_t i = 0; i < extra; i++) array_push(out, q);
    p->pos += 3 + extra; /* a sixth quote is left for the caller to reject */
    return true;
}

/* Parses a string of any of the four kinds at p->pos, appending its content to out. Multi-line
 * kinds are refused when !allow_multiline (keys); a """ key then fails as "" followed by junk. */
static bool toml__string(TomlParser *p, TomlBuf *out, bool allow_multiline)
{
    size_t start = p->pos;
    char q = p->src[p->pos];
    bool literal = q == '\'';
    bool ml = allow_multiline && toml__starts(p, literal ? "'''" : "\"\"\"");
    const char *what = ml ? "a multi-line string" : "a string";
    p->pos += ml ? 3 : 1;
    if (ml) p->pos += toml__newline(p); /* a newline right after the opening quotes is trimmed */
    for (;;) {
        if (p->pos >= p->len) return toml__fail(p, start, "unterminated string");
        int c = (unsigned char)p->src[p->pos];
        if (c == q) {
            if (!ml) {
                p->pos++;
                return true;
            }
            if (toml__ml_close(p, out, q)) return true;
        } else if (c == '\\' && !literal) {
            if (!toml__escape(p, out, ml)) return false;
        } else if (ml && toml__newline(p)) {
            p->pos += toml__newline(p);
            array_push(out, '\n'); /* CRLF reads as LF, as in tomllib */
        } else if (toml__is_ctrl(c)) {
            if (c == '\n' || (c == '\r' && toml__peek(p, 1) == '\n'))
                return toml__fail(p, p->pos, "newline in a single-line string");
            return toml__bad_char(p, what);
        } else {
            array_push(out, (char)c);
            p->pos++;
        }
    }
}

/* ---- keys ---- */

/* Parses a possibly dotted key into p->parts / p->keybuf, and the whitespace after it. */
static bool toml__key(TomlParser *p)
{
    array_clear(&p->keybuf);
    array_reserve(&p->keybuf, 16); /* items stay non-NULL even for the key "" */
    array_clear(&p->parts);
    for (;;) {
        TomlKeyPart part = {p->keybuf.len, 0, p->pos};
        int c = toml__peek(p, 0);
        if (toml__is_bare(c)) {
            while (toml__is_bare(toml__peek(p, 0))) array_push(&p->keybuf, p->src[p->pos++]);
        } else if (c == '"' || c == '\'') {
            if (!toml__string(p, &p->keybuf, false)) return false;
        } else if (c < 0 || c == '\n' || c == '\r') {
            return toml__fail(p, p->pos, "expected a key");
        } else {
            return toml__fail(p, p->pos, "expected a key, found '%c'", c < 0x20 || c >= 0x7f ? '?' : c);
        }
        part.len = p->keybuf.len - part.start;
        if (p->parts.len >= TOML_MAX_DEPTH)
            return toml__fail(p, part.off, "key nests deeper than %d levels", TOML_MAX_DEPTH);
        array_push(&p->parts, part);
        toml__skip_ws(p);
        if (toml__peek(p, 0) != '.') return true;
        p->pos++;
        toml__skip_ws(p);
    }
}

static const char *toml__part(const TomlParser *p, uint32_t i)
{
    return p->keybuf.items + p->parts.items[i].start;
}

static TomlValue *toml__new_child_table(TomlParser *p, TomlValue *parent, uint32_t i)
{
    if (parent->depth + 1 > TOML_MAX_DEPTH) {
        toml__fail(p, p->parts.items[i].off, "tables nest deeper than %d levels", TOML_MAX_DEPTH);
        return NULL;
    }
    const TomlKeyPart *kp = &p->parts.items[i];
    TomlValue *t = toml__new(p, TOML_TABLE, kp->off, parent->depth + 1u);
    toml__add(p, parent, toml__part(p, i), kp->len, kp->off, t);
    return t;
}

/* How a key path is being walked: each has its own rules for what it may pass through. */
typedef enum TomlWalk {
    TOML_WALK_HEADER, /* [a.b] / [[a.b]]: may pass implicit, defined and dotted tables, last AOT element */
    TOML_WALK_DOTTED, /* a.b = 1 in a section: only tables dotted keys made in this same section */
    TOML_WALK_INLINE, /* a.b = 1 inside { }: any table of this inline table */
} TomlWalk;

/* Walks parts [0, n) from t, creating missing tables. NULL on error. */
static TomlValue *toml__walk(TomlParser *p, TomlValue *t, uint32_t n, TomlWalk how)
{
    char shown[64];
    for (uint32_t i = 0; i < n; i++) {
        const TomlKeyPart *kp = &p->parts.items[i];
        const char *name = toml__show(shown, sizeof shown, toml__part(p, i), kp->len);
        TomlValue *c = toml__find(t, toml__part(p, i), kp->len);
        if (!c) {
            c = toml__new_child_table(p, t, i);
            if (!c) return NULL;
            if (how == TOML_WALK_DOTTED) c->dotted_section = p->section;
        } else if (c->type == TOML_TABLE) {
            if (c->flags & TOML__SEALED) {
                toml__fail(p, kp->off, "cannot add keys to inline table '%s'", name);
                return NULL;
            }
            if (how == TOML_WALK_DOTTED) {
                if (c->flags & TOML__DEFINED) {
                    toml__fail(p, kp->off, "dotted keys cannot extend table '%s' defined by a header", name);
                    return NULL;
                }
                /* Unreachable: a table dotted keys made in an earlier section lies below that
                 * section's header table, which is DEFINED (or is the root, which no later walk
                 * starts above). Kept as a guard; the difftest's sanitizer build traps it. */
                if (NEVER(c->dotted_section && c->dotted_section != p->section)) {
                    toml__fail(p, kp->off, "table '%s' was defined by dotted keys in an earlier section", name);
                    return NULL;
                }
                c->dotted_section = p->section;
            }
        } else if (c->type == TOML_ARRAY && how == TOML_WALK_HEADER && (c->flags & TOML__AOT)) {
            c = c->u.array.items[c->u.array.len - 1];
        } else if (c->type == TOML_ARRAY) {
            toml__fail(p, kp->off, (c->flags & TOML__AOT) ? "cannot add keys to array of tables '%s' with dotted keys"
                                                          : "cannot add keys to inline array '%s'", name);
            return NULL;
        } else {
            toml__fail(p, kp->off, "key '%s' is already a %s, not a table", name, toml_type_name(c->type));
            return NULL;
        }
        t = c;
    }
    return t;
}

/* ---- values ---- */

static TomlValue *toml__value(TomlParser *p, uint32_t depth);

/* Digits of one number part, with single underscores between digits ("1_000"). Stops (without
 * error) before anything else; the caller decides whether what follows is allowed. */
static size_t toml__digits(TomlParser *p, int (*val)(int), TomlBuf *out)
{
    size_t n = 0;
    if (val(toml__peek(p, 0)) < 0) return 0;
    for (;;) {
        array_push(out, p->src[p->pos++]);
        n++;
        int c = toml__peek(p, 0);
        if (c == '_' && val(toml__peek(p, 1)) >= 0) {
            p->pos++;
        } else if (val(c) < 0) {
            return n;
        }
    }
}

static int toml__decval(int c) { return toml__is_digit(c) ? c - '0' : -1; }
static int toml__octval(int c) { return c >= '0' && c <= '7' ? c - '0' : -1; }
static int toml__binval(int c) { return c == '0' || c == '1' ? c - '0' : -1; }

/* Dates and times start NNNN-NN-NN or NN:NN. */
static bool toml__looks_like_date(const TomlParser *p)
{
    const char *date = "dddd-dd-dd", *time = "dd:dd";
    for (int k = 0; k < 2; k++) {
        const char *pat = k ? time : date;
        size_t i = 0;
        for (; pat[i]; i++) {
            int c = toml__peek(p, i);
            if (pat[i] == 'd' ? !toml__is_digit(c) : c != pat[i]) break;
        }
        if (!pat[i]) return true;
    }
    return false;
}

static TomlValue *toml__number(TomlParser *p, uint32_t depth)
{
    size_t start = p->pos;
    if (toml__looks_like_date(p)) {
        toml__fail(p, start, "dates are not supported in gradleak configuration");
        return NULL;
    }
    TomlBuf *b = &p->sbuf;
    array_clear(b);
    int c0 = toml__peek(p, 0), c1 = toml__peek(p, 1);
    if (c0 == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
        int (*val)(int) = c1 == 'x' ? toml__hexval : c1 == 'o' ? toml__octval : toml__binval;
        unsigned base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
        if (val(toml__peek(p, 2)) >= 0) {
            p->pos += 2;
            toml__digits(p, val, b);
            uint64_t v = 0;
            for (uint32_t i = 0; i < b->len; i++) {
                uint64_t d = (uint64_t)val((unsigned char)b->items[i]);
                if (v > (UINT64_C(0x7FFFFFFFFFFFFFFF) - d) / base) {
                    toml__fail(p, start, "integer does not fit in 64 bits");
                    return NULL;
                }
                v = v * base + d;
            }
            TomlValue *n = toml__new(p, TOML_INT, start, depth);
            n->u.i = (int64_t)v;
            return n;
        } /* else "0" followed by a letter: the caller rejects what follows */
    }
    bool neg = false;
    if (c0 == '+' || c0 == '-') {
        neg = c0 == '-';
        array_push(b, (char)c0);
        p->pos++;
    }
    if (toml__starts(p, "inf") || toml__starts(p, "nan")) {
        bool inf = p->src[p->pos] == 'i';
        p->pos += 3;
        TomlValue *n = toml__new(p, TOML_FLOAT, start, depth);
        n->u.f = copysign(inf ? INFINITY : NAN, neg ? -1.0 : 1.0);
        return n;
    }
    if (!toml__is_digit(toml__peek(p, 0))) {
        toml__fail(p, start, "expected a value");
        return NULL;
    }
    if (toml__peek(p, 0) == '0') {
        array_push(b, '0');
        p->pos++;
    } else {
        toml__digits(p, toml__decval, b);
    }
    bool is_float = false;
    if (toml__peek(p, 0) == '.' && toml__is_digit(toml__peek(p, 1))) {
        array_push(b, '.');
        p->pos++;
        toml__digits(p, toml__decval, b);
        is_float = true;
    }
    int e = toml__peek(p, 0);
    if (e == 'e' || e == 'E') {
        size_t k = 1;
        int s = toml__peek(p, 1);
        if (s == '+' || s == '-') k = 2;
        if (toml__is_digit(toml__peek(p, k))) {
            array_push(b, 'e');
            if (k == 2) array_push(b, (char)s);
            p->pos += k;
            toml__digits(p, toml__decval, b);
            is_float = true;
        }
    }
    array_push(b, '\0');
    TomlValue *n = toml__new(p, is_float ? TOML_FLOAT : TOML_INT, start, depth);
    if (is_float) {
        /* strtod is correctly rounded in glibc and gives +-inf/0 out of range, as Python's float()
         * does. It reads '.' as the decimal point: gradleak never calls setlocale(LC_NUMERIC). */
        n->u.f = strtod(b->items, NULL);
        return n;
    }
    uint64_t v = 0, limit = neg ? UINT64_C(0x8000000000000000) : UINT64_C(0x7FFFFFFFFFFFFFFF);
    for (const char *d = b->items + (b->items[0] == '+' || b->items[0] == '-'); *d; d++) {
        uint64_t digit = (uint64_t)(*d - '0');
        if (v > (limit - digit) / 10) {
            toml__fail(p, start, "integer does not fit in 64 bits");
            return NULL;
        }
        v = v * 10 + digit;
    }
    n->u.i = neg ? (int64_t)(0 - v) : (int64_t)v;
    return n;
}

static TomlValue *toml__array(TomlParser *p, uint32_t depth)
{
    TomlValue *a = toml__new(p, TOML_ARRAY, p->pos, depth);
    p->pos++;
    if (!toml__skip_array_ws(p)) return NULL;
    if (toml__peek(p, 0) == ']') {
        p->pos++;
        a->flags |= TOML__SEALED;
        return a;
    }
    for (;;) {
        TomlValue *v = toml__value(p, depth + 1);
        if (!v) return NULL;
        array_push(&a->u.array, v);
        if (!toml__skip_array_ws(p)) return NULL;
        int c = toml__peek(p, 0);
        if (c == ',') {
            p->pos++;
            if (!toml__skip_array_ws(p)) return NULL;
            c = toml__peek(p, 0);
        } else if (c != ']') {
            toml__fail(p, p->pos, "expected ',' or ']' in an array");
            return NULL;
        }
        if (c == ']') {
            p->pos++;
            a->flags |= TOML__SEALED;
            return a;
        }
    }
}

/* Parses `key = value` into t: in a section (dotted) or inside an inline table (inline). */
static bool toml__keyval(TomlParser *p, TomlValue *t, TomlWalk how)
{
    char shown[64];
    if (!toml__key(p)) return false;
    if (toml__peek(p, 0) != '=') return toml__fail(p, p->pos, "expected '=' after a key");
    p->pos++;
    toml__skip_ws(p);
    uint32_t last = p->parts.len - 1;
    TomlValue *parent = toml__walk(p, t, last, how);
    if (!parent) return false;
    const TomlKeyPart kp = p->parts.items[last];
    if (toml__find(parent, toml__part(p, last), kp.len))
        return toml__fail(p, kp.off, "duplicate key '%s'",
                          toml__show(shown, sizeof shown, toml__part(p, last), kp.len));
    /* The value may be an inline table that parses keys of its own: keep the stem. */
    char *stem = gl_strndup(toml__part(p, last), kp.len);
    TomlValue *v = toml__value(p, parent->depth + 1u);
    if (v) toml__add(p, parent, stem, kp.len, kp.off, v);
    gl_free(stem);
    return v != NULL;
}

static TomlValue *toml__inline_table(TomlParser *p, uint32_t depth)
{
    TomlValue *t = toml__new(p, TOML_TABLE, p->pos, depth);
    p->pos++;
    toml__skip_ws(p);
    if (toml__peek(p, 0) == '}') {
        p->pos++;
        t->flags |= TOML__SEALED;
        return t;
    }
    for (;;) {
        if (!toml__keyval(p, t, TOML_WALK_INLINE)) return NULL;
        toml__skip_ws(p);
        int c = toml__peek(p, 0);
        if (c == '}') {
            p->pos++;
            t->flags |= TOML__SEALED;
            return t;
        }
        if (c != ',') {
            toml__fail(p, p->pos,
                       c == '\n' || c == '\r' ? "inline tables must stay on one line"
                                              : "expected ',' or '}' in an inline table");
            return NULL;
        }
        p->pos++;
        toml__skip_ws(p);
    }
}

static TomlValue *toml__value(TomlParser *p, uint32_t depth)
{
    if (depth > TOML_MAX_DEPTH) {
        toml__fail(p, p->pos, "values nest deeper than %d levels", TOML_MAX_DEPTH);
        return NULL;
    }
    int c = toml__peek(p, 0);
    size_t start = p->pos;
    switch (c) {
    case '"':
    case '\'': {
        array_clear(&p->sbuf);
        if (!toml__string(p, &p->sbuf, true)) return NULL;
        TomlValue *v = toml__new(p, TOML_STRING, start, depth);
        v->u.str.len = p->sbuf.len;
        v->u.str.s = gl_strndup(p->sbuf.len ? p->sbuf.items : "", p->sbuf.len);
        return v;
    }
    case 't':
    case 'f': {
        bool b = c == 't';
        if (!toml__starts(p, b ? "true" : "false")) break;
        p->pos += b ? 4 : 5;
        TomlValue *v = toml__new(p, TOML_BOOL, start, depth);
        v->u.b = b;
        return v;
    }
    case '[': return toml__array(p, depth);
    case '{': return toml__inline_table(p, depth);
    default:
        if (toml__is_digit(c) || c == '+' || c == '-' || c == 'i' || c == 'n') return toml__number(p, depth);
        break;
    }
    toml__fail(p, start, "expected a value");
    return NULL;
}

/* ---- document ---- */

/* [a.b] or [[a.b]]; p->pos is on the first '['. Returns the table the section's keys go into. */
static TomlValue *toml__header(TomlParser *p)
{
    char shown[64];
    bool aot = toml__peek(p, 1) == '[';
    p->pos += aot ? 2 : 1;
    p->section++;
    toml__skip_ws(p);
    if (!toml__key(p)) return NULL;
    uint32_t last = p->parts.len - 1;
    const TomlKeyPart kp = p->parts.items[last];
    const char *name = toml__show(shown, sizeof shown, toml__part(p, last), kp.len);
    TomlValue *parent = toml__walk(p, p->root, last, TOML_WALK_HEADER);
    if (!parent) return NULL;
    TomlValue *t = toml__find(parent, toml__part(p, last), kp.len);
    if (aot) {
        if (!t) {
            if (parent->depth + 2u > TOML_MAX_DEPTH) {
                toml__fail(p, kp.off, "tables nest deeper than %d levels", TOML_MAX_DEPTH);
                return NULL;
            }
            t = toml__new(p, TOML_ARRAY, kp.off, parent->depth + 1u);
            t->flags |= TOML__AOT;
            toml__add(p, parent, toml__part(p, last), kp.len, kp.off, t);
        } else if (t->type != TOML_ARRAY || !(t->flags & TOML__AOT)) {
            toml__fail(p, kp.off,
                       t->type == TOML_ARRAY ? "cannot append to inline array '%s'"
                       : t->type == TOML_TABLE ? "'%s' is a table, not an array of tables"
                                               : "key '%s' is already a value",
                       name);
            return NULL;
        }
        TomlValue *elem = toml__new(p, TOML_TABLE, kp.off, t->depth + 1u);
        elem->flags |= TOML__DEFINED;
        array_push(&t->u.array, elem);
        t = elem;
    } else if (!t) {
        t = toml__new_child_table(p, parent, last);
        if (!t) return NULL;
        t->flags |= TOML__DEFINED;
    } else if (t->type != TOML_TABLE) {
        toml__fail(p, kp.off,
                   (t->flags & TOML__AOT) ? "'%s' is an array of tables; use [[%s]]" : "key '%s' is already a value",
                   name, name);
        return NULL;
    } else if (t->flags & (TOML__DEFINED | TOML__SEALED) || t->dotted_section) {
        toml__fail(p, kp.off, "table '%s' is defined twice", name);
        return NULL;
    } else {
        t->flags |= TOML__DEFINED; /* an implicit table, created by a deeper header, defined now */
        toml__locate(p, kp.off, &t->line, &t->col);
    }
    if (!toml__starts(p, aot ? "]]" : "]")) {
        toml__fail(p, p->pos, aot ? "expected ']]' to close the array-of-tables header"
                                  : "expected ']' to close the table header");
        return NULL;
    }
    p->pos += aot ? 2 : 1;
    return t;
}

static bool toml__check_utf8(TomlParser *p)
{
    const unsigned char *s = (const unsigned char *)p->src;
    for (size_t i = 0; i < p->len;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = toml__utf8_len(s + i, p->len - i);
        if (!n) return toml__fail(p, i, "invalid UTF-8 byte 0x%02X", s[i]);
        i += n;
    }
    return true;
}

static bool toml__document(TomlParser *p)
{
    if (!toml__check_utf8(p)) return false;
    TomlValue *cur = p->root;
    p->section = 1;
    for (;;) {
        toml__skip_ws(p);
        if (p->pos >= p->len) return true;
        size_t nl = toml__newline(p);
        if (nl) {
            p->pos += nl;
            continue;
        }
        int c = toml__peek(p, 0);
        if (c == '[') {
            cur = toml__header(p);
            if (!cur) return false;
        } else if (toml__is_bare(c) || c == '"' || c == '\'') {
            if (!toml__keyval(p, cur, TOML_WALK_DOTTED)) return false;
        } else if (c != '#') {
            if (c == '\r') return toml__bad_char(p, "the document");
            return toml__fail(p, p->pos, "expected a key, a [table] header or a comment");
        }
        toml__skip_ws(p);
        if (!toml__skip_comment(p)) return false;
        if (p->pos >= p->len) return true;
        nl = toml__newline(p);
        if (!nl) {
            if (p->src[p->pos] == '\r') return toml__bad_char(p, "the document");
            return toml__fail(p, p->pos, "expected a newline after the statement");
        }
        p->pos += nl;
    }
}

TomlValue *toml_parse(const char *src, size_t len, TomlError *err)
{
    TomlError scratch;
    TomlParser p = {.src = src, .len = len, .err = err ? err : &scratch, .loc_line = 1, .loc_col = 1};
    memset(p.err, 0, sizeof *p.err);
    p.root = toml__new(&p, TOML_TABLE, 0, 0);
    p.root->flags |= TOML__DEFINED;
    bool ok = toml__document(&p);
    GL_ASSERT(ok != p.failed);
    array_free(&p.keybuf);
    array_free(&p.sbuf);
    array_free(&p.parts);
    if (ok) return p.root;
    toml_free(p.root);
    return NULL;
}

/* ---- accessors ---- */

TomlType toml_type(const TomlValue *v) { return v->type; }

const char *toml_type_name(TomlType t)
{
    switch (t) {
    case TOML_TABLE: return "table";
    case TOML_ARRAY: return "array";
    case TOML_STRING: return "string";
    case TOML_INT: return "integer";
    case TOML_FLOAT: return "float";
    case TOML_BOOL: return "boolean";
    }
    return "?";
}

uint32_t toml_line(const TomlValue *v) { return v ? v->line : 0; }
uint32_t toml_col(const TomlValue *v) { return v ? v->col : 0; }

size_t toml_table_len(const TomlValue *t)
{
    return t && t->type == TOML_TABLE ? t->u.table.entries.len : 0;
}

static const TomlEntry *toml__entry(const TomlValue *t, size_t i)
{
    if (!t || t->type != TOML_TABLE || i >= t->u.table.entries.len) return NULL;
    return &t->u.table.entries.items[i];
}

const char *toml_table_key_at(const TomlValue *t, size_t i)
{
    const TomlEntry *e = toml__entry(t, i);
    return e ? e->key : NULL;
}

size_t toml_table_key_len(const TomlValue *t, size_t i)
{
    const TomlEntry *e = toml__entry(t, i);
    return e ? e->key_len : 0;
}

void toml_table_key_pos(const TomlValue *t, size_t i, uint32_t *line, uint32_t *col)
{
    const TomlEntry *e = toml__entry(t, i);
    *line = e ? e->line : 0;
    *col = e ? e->col : 0;
}

const TomlValue *toml_table_value_at(const TomlValue *t, size_t i)
{
    const TomlEntry *e = toml__entry(t, i);
    return e ? e->value : NULL;
}

const TomlValue *toml_table_get(const TomlValue *t, const char *key)
{
    if (!t || t->type != TOML_TABLE || !key) return NULL;
    return toml__find(t, key, strlen(key));
}

size_t toml_array_len(const TomlValue *a) { return a && a->type == TOML_ARRAY ? a->u.array.len : 0; }

const TomlValue *toml_array_at(const TomlValue *a, size_t i)
{
    return i < toml_array_len(a) ? a->u.array.items[i] : NULL;
}

const char *toml_as_string(const TomlValue *v) { return v && v->type == TOML_STRING ? v->u.str.s : NULL; }
size_t toml_string_len(const TomlValue *v) { return v && v->type == TOML_STRING ? v->u.str.len : 0; }

bool toml_as_int(const TomlValue *v, int64_t *out)
{
    if (!v || v->type != TOML_INT) return false;
    *out = v->u.i;
    return true;
}

bool toml_as_float(const TomlValue *v, double *out)
{
    if (!v || v->type != TOML_FLOAT) return false;
    *out = v->u.f;
    return true;
}

bool toml_as_bool(const TomlValue *v, bool *out)
{
    if (!v || v->type != TOML_BOOL) return false;
    *out = v->u.b;
    return true;
}
