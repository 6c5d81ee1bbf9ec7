/* Reading a notebook with jansson: the code cells joined, masked, and mapped to their cells and
 * to the lines of the .ipynb where their sources are. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include "nb/nb_int.h"

bool nb_is_path(const char *path)
{
    size_t n = strlen(path);
    return n > 6 && !strcmp(path + n - 6, ".ipynb");
}

void nb_free(Notebook *nb)
{
    gl_free(nb->code);
    gl_free(nb->text);
    gl_free(nb->cells);
    memset(nb, 0, sizeof *nb);
}

static const char *nb__str(json_t *obj, const char *key)
{
    return json_is_object(obj) ? json_string_value(json_object_get(obj, key)) : NULL;
}

/* The kernel's language: metadata.kernelspec.language, else metadata.language_info.name. */
static const char *nb__language(json_t *root, char *out, size_t n)
{
    json_t *md = json_object_get(root, "metadata");
    const char *lang = nb__str(json_object_get(md, "kernelspec"), "language");
    if (!lang || !*lang) lang = nb__str(json_object_get(md, "language_info"), "name");
    if (!lang || !*lang) lang = "python";
    size_t i = 0;
    for (; lang[i] && i + 1 < n; i++) out[i] = (char)tolower((unsigned char)lang[i]);
    out[i] = 0;
    return lang;
}

/* Positions of the code cells' sources in the file (for SARIF regions): where the scan agrees with
 * what jansson read. */
static void nb__json_lines(Notebook *nb, const NbScan *scan, json_t *cells)
{
    const NbScan sc = *scan;
    if (sc.cells.len == json_array_size(cells)) {
        for (uint32_t k = 0; k < nb->n_cells; k++) {
            NbCell *c = &nb->cells[k];
            const NbSrc *s = &sc.cells.items[c->index - 1];
            if (!s->has || !s->n) continue;
            const NbPiece *p = &sc.pieces.items[s->first];
            c->json_line = p->line;
            bool follow = s->list;
            for (uint32_t i = 1; follow && i < s->n; i++) follow = p[i].line == p[0].line + i;
            c->json_lines = follow;
        }
    }
}

/* The notebook without its cells' outputs and attachments (each becomes an empty container, with
 * the line breaks it had), parsed: a notebook with 50 MB of embedded images is read in the time
 * its code takes, and the outputs are skipped, never parsed. NULL when that cannot be done. */
static json_t *nb__load(const char *json, size_t len, NbScan *scan)
{
    NbScan sc;
    if (nb_scan(json, len, &sc) < 0) return NULL;
    StrBuf lean;
    sb_init(&lean);
    size_t at = 0;
    for (uint32_t k = 0; k < sc.skipped.len; k++) {
        NbRange r = sc.skipped.items[k];
        if (r.end <= r.start || r.start < at) break; /* an unclosed container: let jansson say so */
        sb_append(&lean, json + at, r.start - at);
        sb_append(&lean, json[r.start] == '[' ? "[]" : "{}", 2);
        for (const char *p = json + r.start; (p = memchr(p, '\n', (size_t)(json + r.end - p))) != NULL; p++)
            sb_putc(&lean, '\n');
        at = r.end;
    }
    sb_append(&lean, json + at, len - at);
    json_t *root = json_loadb(lean.data, lean.len, JSON_ALLOW_NUL, NULL);
    sb_free(&lean);
    if (root) *scan = sc; /* kept: where the sources are (nb__json_lines) */
    else nb_scan_free(&sc);
    return root;
}

NbStatus nb_read(const char *json, size_t len, Notebook *nb, char *err, size_t errsz)
{
    memset(nb, 0, sizeof *nb);
    json_error_t je;
    NbScan scan = {0};
    json_t *root = nb__load(json, len, &scan);
    if (!root) root = json_loadb(json, len, JSON_ALLOW_NUL, &je); /* the error, with the file's positions */
    if (!root) {
        snprintf(err, errsz, "not a notebook: invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
        for (char *p = err; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
        return NB_ERROR;
    }
    NbStatus st = NB_ERROR;
    json_t *cells = json_object_get(root, "cells");
    json_t *fmt = json_object_get(root, "nbformat");
    if (json_is_integer(fmt) && json_integer_value(fmt) < 4) {
        snprintf(err, errsz,
                 "nbformat %lld notebooks are not supported (gradleak reads nbformat 4): convert it with "
                 "`jupyter nbconvert --to notebook --nbformat 4`",
                 (long long)json_integer_value(fmt));
        goto out;
    }
    if (!json_is_object(root) || !json_is_array(cells)) {
        snprintf(err, errsz, "not a Jupyter notebook: the JSON has no \"cells\" list");
        goto out;
    }
    if (json_is_integer(fmt) && json_integer_value(fmt) > 4) {
        snprintf(err, errsz, "nbformat %lld is newer than gradleak reads (4)", (long long)json_integer_value(fmt));
        goto out;
    }
    const char *lang = nb__language(root, nb->language, sizeof nb->language);
    if (strncmp(nb->language, "python", 6) != 0 && strcmp(nb->language, "ipython") != 0) {
        snprintf(err, errsz, "the notebook's language is %.40s, not Python: not linted", lang);
        st = NB_NOT_PYTHON;
        goto out;
    }
    size_t n = json_array_size(cells);
    if (n > UINT32_MAX / 2) goto out;
    nb->n_all = (uint32_t)n;
    StrBuf text;
    sb_init(&text);
    sb_append(&text, "", 0);
    Array(NbCell) cv;
    array_init(&cv);
    uint32_t row = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(cells, i);
        const char *type = nb__str(c, "cell_type");
        if (!type || strcmp(type, "code") != 0) continue;
        json_t *src = json_object_get(c, "source");
        NbCell cell = {.index = (uint32_t)i + 1, .row = row, .start = (uint32_t)text.len};
        size_t before = text.len;
        if (json_is_string(src)) {
            sb_append(&text, json_string_value(src), json_string_length(src));
        } else if (json_is_array(src)) {
            for (size_t k = 0; k < json_array_size(src); k++) {
                json_t *line = json_array_get(src, k);
                if (!json_is_string(line)) break;
                sb_append(&text, json_string_value(line), json_string_length(line));
            }
        } else if (src) {
            src = NULL;
        }
        bool ok = src != NULL;
        for (size_t k = 0; ok && json_is_array(src) && k < json_array_size(src); k++)
            ok = json_is_string(json_array_get(src, k));
        if (!ok) {
            snprintf(err, errsz, "cell %zu: `source` is not a string or a list of strings", i + 1);
            sb_free(&text);
            array_free(&cv);
            goto out;
        }
        if (text.len > before && text.data[text.len - 1] != '\n') {
            sb_putc(&text, '\n');
            cell.added_nl = true;
        }
        if (text.len > (size_t)UINT32_MAX / 4) {
            snprintf(err, errsz, "the notebook's code is larger than gradleak reads (1 GiB)");
            sb_free(&text);
            array_free(&cv);
            goto out;
        }
        cell.end = (uint32_t)text.len;
        for (size_t k = before; k < text.len; k++) row += text.data[k] == '\n';
        array_push(&cv, cell);
    }
    nb->len = text.len;
    nb->text = sb_take(&text);
    nb->code = gl_malloc(nb->len + 1);
    nb->code[nb->len] = 0;
    nb->cells = cv.items;
    nb->n_cells = cv.len;
    for (uint32_t k = 0; k < nb->n_cells; k++) {
        NbCell *c = &nb->cells[k];
        bool skip;
        nb->n_masked += nb_mask_cell(nb->text + c->start, c->end - c->start, nb->code + c->start, &skip);
        c->skipped = skip;
    }
    nb__json_lines(nb, &scan, cells);
    st = NB_OK;
out:
    json_decref(root);
    nb_scan_free(&scan);
    /* one line: jansson quotes the text near an error, and a language name is the file's */
    for (char *p = err; st != NB_OK && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
    return st;
}

const NbCell *nb_cell_of_row(const NbCell *cells, uint32_t n, uint32_t row)
{
    if (!n) return NULL;
    uint32_t lo = 0, hi = n; /* the last cell whose first row is <= row */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cells[mid].row <= row) lo = mid;
        else hi = mid;
    }
    return &cells[lo];
}

const NbCell *nb_cell_of_byte(const NbCell *cells, uint32_t n, uint32_t off)
{
    if (!n) return NULL;
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cells[mid].start <= off) lo = mid;
        else hi = mid;
    }
    while (lo + 1 < n && cells[lo].end == cells[lo].start && cells[lo + 1].start <= off) lo++;
    return &cells[lo];
}

/* ---- the blob ---- */

#define NB_BLOB_MAGIC "GLNB0001"

typedef struct NbTrailer {
    uint64_t len;
    uint32_t n_cells, n_all, n_masked;
    char language[32];
    char magic[8];
} NbTrailer;

static size_t nb__pad8(size_t n) { return (n + 7) & ~(size_t)7; }

void nb_blob_encode(const Notebook *nb, StrBuf *out)
{
    size_t base = out->len;
    sb_append(out, nb->code, nb->len);
    sb_append(out, nb->text, nb->len);
    while ((out->len - base) % 8) sb_putc(out, 0);
    sb_append(out, (const char *)nb->cells, nb->n_cells * sizeof *nb->cells);
    NbTrailer t;
    memset(&t, 0, sizeof t);
    t.len = nb->len, t.n_cells = nb->n_cells, t.n_all = nb->n_all, t.n_masked = nb->n_masked;
    memcpy(t.language, nb->language, sizeof t.language);
    memcpy(t.magic, NB_BLOB_MAGIC, 8);
    sb_append(out, (const char *)&t, sizeof t);
}

int nb_blob_view(const char *blob, size_t len, Notebook *nb)
{
    memset(nb, 0, sizeof *nb);
    NbTrailer t;
    if (len < sizeof t) return -1;
    memcpy(&t, blob + len - sizeof t, sizeof t);
    if (memcmp(t.magic, NB_BLOB_MAGIC, 8) != 0) return -1;
    size_t cells_at = nb__pad8(2 * t.len);
    if (t.len > len || cells_at + (size_t)t.n_cells * sizeof(NbCell) + sizeof t != len) return -1;
    if (((uintptr_t)(blob + cells_at)) % _Alignof(NbCell)) return -1;
    nb->code = (char *)blob;
    nb->text = (char *)blob + t.len;
    nb->len = t.len;
    nb->cells = (NbCell *)(blob + cells_at);
    nb->n_cells = t.n_cells, nb->n_all = t.n_all, nb->n_masked = t.n_masked;
    memcpy(nb->language, t.language, sizeof nb->language);
    nb->language[sizeof nb->language - 1] = 0;
    return 0;
}

char *nb_rewrite_lines(const NbCell *cells, uint32_t n, const char *s)
{
    if (!s) return NULL;
    StrBuf sb;
    sb_init(&sb);
    sb_append(&sb, "", 0);
    for (size_t i = 0; s[i];) {
        /* "at 12:5" (a position: syntax errors) */
        if (!strncmp(s + i, "at ", 3) && (i == 0 || s[i - 1] == ' ') && isdigit((unsigned char)s[i + 3])) {
            char *end;
            unsigned long row = strtoul(s + i + 3, &end, 10);
            const NbCell *c = row >= 1 && row <= UINT32_MAX && *end == ':' && isdigit((unsigned char)end[1])
                                  ? nb_cell_of_row(cells, n, (uint32_t)row - 1)
                                  : NULL;
            if (c) {
                sb_printf(&sb, "at cell %u, line %lu", c->index, row - c->row);
                i = (size_t)(end - s);
                continue;
            }
        }
        if (!strncmp(s + i, "line ", 5) && (i == 0 || !isalnum((unsigned char)s[i - 1])) &&
            isdigit((unsigned char)s[i + 5])) {
            char *end;
            unsigned long row = strtoul(s + i + 5, &end, 10);
            const NbCell *c = row >= 1 && row <= UINT32_MAX ? nb_cell_of_row(cells, n, (uint32_t)row - 1) : NULL;
            if (c) {
                sb_printf(&sb, "cell %u, line %lu", c->index, row - c->row);
                i = (size_t)(end - s);
                continue;
            }
        }
        sb_putc(&sb, s[i++]);
    }
    return sb_take(&sb);
}
