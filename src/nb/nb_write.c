/* Writing fixed code back into a notebook: the changed `source` strings are spliced into the JSON
 * text, so outputs, metadata, key order, indentation and escaping stay byte for byte. */
#include <stdio.h>
#include "nb/nb_int.h"

/* ---- where the sources are: an iterative scan of the JSON text ---- */

/* What a container is, for the path root -> "cells" -> [i] -> "source" -> [k]. */
enum { NB_R_OTHER, NB_R_ROOT, NB_R_CELLS, NB_R_CELL, NB_R_SRC };
enum { NB_K_OTHER, NB_K_CELLS, NB_K_SOURCE, NB_K_SKIP };

typedef struct NbFrame {
    uint8_t role;
    bool object;
    bool expect_key;
    uint8_t key;
    uint32_t elem;
} NbFrame;

#define NB_SCAN_FRAMES 8

/* One past the closing quote of the string that opens at s[i] (memchr: outputs are megabytes). */
static uint32_t nb__string_end(const char *s, size_t len, size_t i)
{
    for (i++; i < len;) {
        const char *q = memchr(s + i, '"', len - i);
        if (!q) return (uint32_t)len;
        size_t at = (size_t)(q - s), bs = 0;
        while (at - bs > i && s[at - bs - 1] == '\\') bs++;
        if (bs % 2 == 0) return (uint32_t)(at + 1);
        i = at + 1;
    }
    return (uint32_t)len;
}

void nb_scan_free(NbScan *s)
{
    array_free(&s->pieces);
    array_free(&s->cells);
    array_free(&s->skipped);
}

static int nb__scan(const char *s, size_t len, NbScan *out)
{
    array_init(&out->pieces);
    array_init(&out->cells);
    array_init(&out->skipped);
    if (len > UINT32_MAX) return -1;
    NbFrame st[NB_SCAN_FRAMES];
    uint32_t depth = 0; /* open containers (frames beyond NB_SCAN_FRAMES are only counted) */
    uint32_t skip_depth = 0; /* inside a cell's outputs/attachments: the depth that closes it */
    uint32_t line = 1;
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (c == '\n') {
            line++, i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        NbFrame *top = depth && depth <= NB_SCAN_FRAMES ? &st[depth - 1] : NULL;
        if (c == ',') {
            if (top) {
                if (top->object) top->expect_key = true;
                else top->elem++;
            }
            i++;
            continue;
        }
        if (c == ':') {
            if (top) top->expect_key = false;
            i++;
            continue;
        }
        if (c == '}' || c == ']') {
            if (!depth) return -1;
            if (depth == skip_depth) {
                array_back(&out->skipped)->end = (uint32_t)i + 1;
                skip_depth = 0;
            }
            depth--;
            i++;
            continue;
        }
        if (c == '"' && top && top->object && top->expect_key) {
            uint32_t e = nb__string_end(s, len, i);
            size_t n = e - i;
            top->key = n == 7 && !memcmp(s + i, "\"cells\"", 7)    ? NB_K_CELLS
                       : n == 8 && !memcmp(s + i, "\"source\"", 8) ? NB_K_SOURCE
                       : (n == 9 && !memcmp(s + i, "\"outputs\"", 9)) || (n == 13 && !memcmp(s + i, "\"attachments\"", 13))
                           ? NB_K_SKIP
                           : NB_K_OTHER;
            i = e;
            continue;
        }
        /* a value: what it is depends on where it is */
        uint8_t role = NB_R_OTHER;
        if (!depth) role = NB_R_ROOT;
        else if (top && top->role == NB_R_ROOT && top->key == NB_K_CELLS) role = NB_R_CELLS;
        else if (top && top->role == NB_R_CELLS) role = NB_R_CELL;
        else if (top && top->role == NB_R_CELL && top->key == NB_K_SOURCE) role = NB_R_SRC;
        else if (top && top->role == NB_R_SRC) role = NB_R_SRC + 1; /* an element of a source list */
        if (role == NB_R_CELL) {
            NbSrc src = {0};
            while (out->cells.len < top->elem) array_push(&out->cells, src);
            array_push(&out->cells, src);
        }
        if (c == '"') {
            uint32_t e = nb__string_end(s, len, i);
            if (role == NB_R_SRC || role == NB_R_SRC + 1) {
                NbSrc *cs = out->cells.len ? array_back(&out->cells) : NULL;
                if (!cs) return -1;
                if (role == NB_R_SRC) cs->has = true, cs->list = false, cs->first = out->pieces.len, cs->n = 0;
                array_push(&out->pieces, ((NbPiece){(uint32_t)i, e, line}));
                cs->n++;
            }
            i = e;
            continue;
        }
        if (c == '{' || c == '[') {
            if (top && top->role == NB_R_CELL && top->key == NB_K_SKIP && !skip_depth) {
                skip_depth = depth + 1;
                array_push(&out->skipped, ((NbRange){(uint32_t)i, (uint32_t)i}));
            }
            if (role == NB_R_SRC) {
                NbSrc *cs = out->cells.len ? array_back(&out->cells) : NULL;
                if (!cs || c != '[') return -1;
                cs->has = true, cs->list = true, cs->first = out->pieces.len, cs->n = 0, cs->open = (uint32_t)i;
            }
            if (depth < NB_SCAN_FRAMES)
                st[depth] = (NbFrame){role == NB_R_SRC + 1 ? NB_R_OTHER : role, c == '{', c == '{', NB_K_OTHER, 0};
            depth++;
            i++;
            continue;
        }
        /* a number, true, false, null */
        while (i < len && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' &&
               s[i] != '\r')
            i++;
    }
    return depth == 0 ? 0 : -1;
}

int nb_scan(const char *s, size_t len, NbScan *out)
{
    int rc = nb__scan(s, len, out);
    if (rc < 0) nb_scan_free(out); /* nothing to free for the caller either way */
    return rc;
}

static uint32_t nb__hex4(const char *s)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v = v * 16 + (uint32_t)(c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0);
    }
    return v;
}

static void nb__put_utf8(StrBuf *out, uint32_t cp)
{
    char b[4];
    if (cp < 0x80) b[0] = (char)cp, sb_append(out, b, 1);
    else if (cp < 0x800) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), sb_append(out, b, 2);
    else if (cp < 0x10000)
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[2] = (char)(0x80 | (cp & 0x3F)),
        sb_append(out, b, 3);
    else
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), sb_append(out, b, 4);
}

void nb_json_unescape(const char *s, uint32_t start, uint32_t end, StrBuf *out)
{
    sb_append(out, "", 0);
    if (end < start + 2) return;
    for (uint32_t i = start + 1; i < end - 1;) {
        if (s[i] != '\\' || i + 1 >= end - 1) {
            sb_putc(out, s[i++]);
            continue;
        }
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case 'n': sb_putc(out, '\n'); break;
        case 'r': sb_putc(out, '\r'); break;
        case 't': sb_putc(out, '\t'); break;
        case 'b': sb_putc(out, '\b'); break;
        case 'f': sb_putc(out, '\f'); break;
        case 'u': {
            if (i + 4 > end - 1) return;
            uint32_t cp = nb__hex4(s + i);
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= end - 1 && s[i] == '\\' && s[i + 1] == 'u') {
                uint32_t lo = nb__hex4(s + i + 2);
                if (lo >= 0xDC00 && lo < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), i += 6;
            }
            nb__put_utf8(out, cp);
            break;
        }
        default: sb_putc(out, e); break;
        }
    }
}

/* A JSON string of s[0..n) escaped as Python's json.dumps does (nbformat writes with it):
 * ensure_ascii when the file has no raw non-ASCII byte. */
static void nb__escape(StrBuf *out, const char *s, size_t n, bool ascii)
{
    sb_putc(out, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') sb_putc(out, '\\'), sb_putc(out, (char)c), i++;
        else if (c == '\n') sb_puts(out, "\\n"), i++;
        else if (c == '\r') sb_puts(out, "\\r"), i++;
        else if (c == '\t') sb_puts(out, "\\t"), i++;
        else if (c == '\b') sb_puts(out, "\\b"), i++;
        else if (c == '\f') sb_puts(out, "\\f"), i++;
        else if (c < 0x20) sb_printf(out, "\\u%04x", c), i++;
        else if (c < 0x80 || !ascii) sb_putc(out, (char)c), i++;
        else {
            int k = utf8_seq_len((const unsigned char *)s + i, n - i);
            if (!k) { /* not UTF-8: cannot be in a notebook jansson read; keep the byte */
                sb_putc(out, (char)c), i++;
                continue;
            }
            uint32_t cp = k == 2 ? (c & 0x1Fu) : k == 3 ? (c & 0x0Fu) : (c & 0x07u);
            for (int j = 1; j < k; j++) cp = cp << 6 | ((unsigned char)s[i + j] & 0x3Fu);
            if (cp >= 0x10000)
                sb_printf(out, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF));
            else
                sb_printf(out, "\\u%04x", cp);
            i += (size_t)k;
        }
    }
    sb_putc(out, '"');
}

/* ---- the fixed code back into cells ---- */

#define NB_BOUNDARY NB_FIX_BOUNDARY

void nb_fix_source(const Notebook *nb, StrBuf *out)
{
    for (uint32_t k = 0; k < nb->n_cells; k++) {
        if (k) sb_puts(out, NB_BOUNDARY);
        sb_append(out, nb->code + nb->cells[k].start, nb->cells[k].end - nb->cells[k].start);
    }
    sb_append(out, "", 0);
}

void nb_texts_free(char **texts, uint32_t n)
{
    for (uint32_t k = 0; texts && k < n; k++) gl_free(texts[k]);
    gl_free(texts);
}

char *nb_cell_source(const Notebook *nb, uint32_t k)
{
    const NbCell *c = &nb->cells[k];
    return gl_strndup(nb->text + c->start, c->end - c->start - (c->added_nl ? 1 : 0));
}

static size_t nb__line_end(const char *s, size_t len, size_t i)
{
    while (i < len && s[i] != '\n') i++;
    return i < len ? i + 1 : len;
}

static size_t nb__indent(const char *s, size_t a, size_t b)
{
    size_t i = a;
    while (i < b && (s[i] == ' ' || s[i] == '\t')) i++;
    return i - a;
}

/* The new text of one cell: old code/text [0..olen), new code [0..nlen). Masked lines inside the
 * changed middle are restored (with the new indentation) when the fix kept them as they were. */
static int nb__restore(const char *code, const char *text, size_t olen, const char *nc, size_t nlen, StrBuf *out)
{
    size_t p = 0;
    while (p < olen && p < nlen && code[p] == nc[p]) p++;
    size_t s = 0;
    while (s < olen - p && s < nlen - p && code[olen - 1 - s] == nc[nlen - 1 - s]) s++;
    bool masked = memcmp(code + p, text + p, olen - s - p) != 0;
    if (!masked) {
        sb_append(out, text, p);
        sb_append(out, nc + p, nlen - s - p);
        sb_append(out, text + olen - s, s);
        return 0;
    }
    /* whole lines around the change */
    while (p > 0 && code[p - 1] != '\n') p--;
    size_t oe = nb__line_end(code, olen, olen - s), ne = nb__line_end(nc, nlen, nlen - s);
    if (s && nlen - s > p && nc[nlen - s - 1] == '\n') oe = olen - s, ne = nlen - s;
    sb_append(out, text, p);
    size_t oi = p; /* the next old line to look at for a masked one */
    for (size_t ni = p; ni < ne;) {
        size_t nl_end = nb__line_end(nc, ne, ni);
        size_t nind = nb__indent(nc, ni, nl_end);
        /* the next masked old line */
        size_t mo = oi;
        while (mo < oe) {
            size_t e = nb__line_end(code, oe, mo);
            if (memcmp(code + mo, text + mo, e - mo) != 0) break;
            mo = e;
        }
        bool restored = false;
        if (mo < oe) {
            size_t me = nb__line_end(code, oe, mo), mind = nb__indent(code, mo, me);
            if (me - mo - mind == nl_end - ni - nind && !memcmp(code + mo + mind, nc + ni + nind, me - mo - mind)) {
                sb_append(out, nc + ni, nind);
                sb_append(out, text + mo + mind, me - mo - mind);
                oi = me;
                restored = true;
            }
        }
        if (!restored) sb_append(out, nc + ni, nl_end - ni);
        ni = nl_end;
    }
    for (size_t mo = oi; mo < oe;) { /* every masked line must have been kept */
        size_t e = nb__line_end(code, oe, mo);
        if (memcmp(code + mo, text + mo, e - mo) != 0) return -1;
        mo = e;
    }
    sb_append(out, text + oe, olen - oe);
    return 0;
}

int nb_new_texts(const Notebook *nb, const char *fixed, size_t len, char ***texts, char *err, size_t errsz)
{
    *texts = gl_calloc(nb->n_cells ? nb->n_cells : 1, sizeof **texts);
    size_t bl = strlen(NB_BOUNDARY);
    size_t at = 0;
    for (uint32_t k = 0; k < nb->n_cells; k++) {
        const NbCell *c = &nb->cells[k];
        size_t end = len;
        if (k + 1 < nb->n_cells) { /* the next boundary line, at a line start */
            end = SIZE_MAX;
            for (size_t i = at; i + bl <= len; i = nb__line_end(fixed, len, i)) {
                if (!memcmp(fixed + i, NB_BOUNDARY, bl)) {
                    end = i;
                    break;
                }
            }
            if (end == SIZE_MAX) {
                snprintf(err, errsz, "a fix crossed the boundary of cell %u: not written back", c->index);
                nb_texts_free(*texts, nb->n_cells);
                *texts = NULL;
                return -1;
            }
        }
        StrBuf sb;
        sb_init(&sb);
        sb_append(&sb, "", 0);
        if (c->skipped || nb__restore(nb->code + c->start, nb->text + c->start, c->end - c->start, fixed + at,
                                      end - at, &sb) < 0) {
            if (c->skipped) {
                sb_append(&sb, nb->text + c->start, c->end - c->start);
            } else {
                snprintf(err, errsz, "a fix in cell %u would rewrite IPython syntax: not written back", c->index);
                sb_free(&sb);
                nb_texts_free(*texts, nb->n_cells);
                *texts = NULL;
                return -1;
            }
        }
        if (c->added_nl && sb.len && sb.data[sb.len - 1] == '\n') sb.data[--sb.len] = 0;
        (*texts)[k] = sb_take(&sb);
        at = end + (k + 1 < nb->n_cells ? bl : 0);
    }
    return 0;
}

/* ---- splicing ---- */

/* The replacement of one list source's pieces by the lines of t: unchanged lines at either end keep
 * their strings; the separator between strings is the file's. */
static void nb__splice_list(const char *json, const NbSrc *s, const NbPiece *pc, const char *t, bool ascii,
                            StrBuf *out)
{
    size_t tl = strlen(t);
    Array(const char *) lines; /* line starts of t */
    array_init(&lines);
    for (size_t i = 0; i < tl; i = nb__line_end(t, tl, i)) array_push(&lines, t + i);
    uint32_t nn = lines.len;
    StrBuf dec;
    sb_init(&dec);
    /* unchanged lines at the start, then at the end */
    uint32_t pre = 0, suf = 0;
    for (; pre < nn && pre < s->n; pre++) {
        sb_clear(&dec);
        nb_json_unescape(json, pc[pre].start, pc[pre].end, &dec);
        size_t ll = (pre + 1 < nn ? (size_t)(lines.items[pre + 1] - lines.items[pre]) : tl - (size_t)(lines.items[pre] - t));
        if (dec.len != ll || memcmp(dec.data, lines.items[pre], ll)) break;
    }
    for (; suf < nn - pre && suf < s->n - pre; suf++) {
        uint32_t oi = s->n - 1 - suf, ni = nn - 1 - suf;
        sb_clear(&dec);
        nb_json_unescape(json, pc[oi].start, pc[oi].end, &dec);
        size_t ll = (ni + 1 < nn ? (size_t)(lines.items[ni + 1] - lines.items[ni]) : tl - (size_t)(lines.items[ni] - t));
        if (dec.len != ll || memcmp(dec.data, lines.items[ni], ll)) break;
    }
    sb_free(&dec);
    /* the separator: between the first two strings, else "," and the space before the first */
    StrBuf sep;
    sb_init(&sep);
    if (s->n >= 2) sb_append(&sep, json + pc[0].end, pc[1].start - pc[0].end);
    else if (s->n == 1) sb_putc(&sep, ','), sb_append(&sep, json + s->open + 1, pc[0].start - s->open - 1);
    else sb_puts(&sep, ", ");
    for (uint32_t i = 0; i < nn; i++) {
        if (i) sb_append(out, sep.data, sep.len);
        if (i < pre) {
            sb_append(out, json + pc[i].start, pc[i].end - pc[i].start);
        } else if (i >= nn - suf) {
            const NbPiece *p = &pc[s->n - (nn - i)];
            sb_append(out, json + p->start, p->end - p->start);
        } else {
            size_t ll = (i + 1 < nn ? (size_t)(lines.items[i + 1] - lines.items[i]) : tl - (size_t)(lines.items[i] - t));
            nb__escape(out, lines.items[i], ll, ascii);
        }
    }
    sb_free(&sep);
    array_free(&lines);
}

int nb_write_back(const Notebook *nb, const char *json, size_t len, char *const *texts, StrBuf *out, char *err,
                  size_t errsz)
{
    size_t base = out->len;
    NbScan sc;
    if (nb_scan(json, len, &sc) < 0 || sc.cells.len != nb->n_all) {
        nb_scan_free(&sc);
        snprintf(err, errsz, "the notebook's JSON could not be followed: not written back");
        return -1;
    }
    bool ascii = true;
    for (size_t i = 0; i < len && ascii; i++) ascii = (unsigned char)json[i] < 0x80;
    int changed = 0;
    size_t at = 0;
    for (uint32_t k = 0; k < nb->n_cells; k++) {
        char *old = nb_cell_source(nb, k);
        bool same = !strcmp(old, texts[k]);
        gl_free(old);
        if (same) continue;
        const NbSrc *s = &sc.cells.items[nb->cells[k].index - 1];
        if (!s->has || (!s->list && s->n != 1)) {
            snprintf(err, errsz, "cell %u has no `source` string to write to", nb->cells[k].index);
            nb_scan_free(&sc);
            out->len = base;
            return -1;
        }
        const NbPiece *pc = s->n ? sc.pieces.items + s->first : NULL; /* an empty list has none */
        size_t a = s->n ? pc[0].start : s->open + 1, b = s->n ? pc[s->n - 1].end : s->open + 1;
        sb_append(out, json + at, a - at);
        if (s->list) nb__splice_list(json, s, pc, texts[k], ascii, out);
        else nb__escape(out, texts[k], strlen(texts[k]), ascii);
        at = b;
        changed++;
    }
    sb_append(out, json + at, len - at);
    nb_scan_free(&sc);
    /* read back: the same cells, with the new texts */
    Notebook back;
    char why[256];
    if (nb_read(out->data + base, out->len - base, &back, why, sizeof why) != NB_OK || back.n_cells != nb->n_cells) {
        snprintf(err, errsz, "the rewritten notebook does not read back (%s): not written back", why);
        if (back.code) nb_free(&back);
        out->len = base;
        return -1;
    }
    for (uint32_t k = 0; k < back.n_cells; k++) {
        char *t = nb_cell_source(&back, k);
        bool ok = !strcmp(t, texts[k]);
        gl_free(t);
        if (!ok) {
            snprintf(err, errsz, "cell %u does not read back as written: not written back", back.cells[k].index);
            nb_free(&back);
            out->len = base;
            return -1;
        }
    }
    nb_free(&back);
    return changed;
}
