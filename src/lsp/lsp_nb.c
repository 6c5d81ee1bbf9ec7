/* Notebook documents (LSP 3.17 notebookDocumentSync): a notebook's cells arrive as text documents
 * with their own URIs; the Python code cells are joined and masked as `check` does (src/nb), linted
 * as one module, and each finding is published under its cell's URI with cell-relative positions,
 * so code actions and hover work per cell. */
#include <stdio.h>
#include "lsp/lsp_int.h"
#include "engine/nb_lint.h"
#include "nb/nb.h"

typedef struct LspNbCell {
    LspDoc *doc;
    bool code; /* a Python code cell (kind 2) */
} LspNbCell;

typedef Array(LspDoc *) LspDocPool;

struct LspNotebook {
    char *uri;
    LspDoc *joined; /* path and options of the notebook file; text = the code cells joined, masked */
    Array(LspNbCell) cells;
    NbCell *map;    /* the code cells in joined (src/nb's map) */
    uint32_t n_map;
    bool dirty;
};

static bool lsp_nb__python(json_t *item)
{
    json_t *lang = lsp_get(item, "languageId", JSON_STRING);
    return !lang || !strcmp(json_string_value(lang), "python");
}

static LspDoc *lsp_nb__doc(json_t *item)
{
    json_t *u = lsp_get(item, "uri", JSON_STRING), *t = lsp_get(item, "text", JSON_STRING);
    json_t *v = lsp_get(item, "version", JSON_INTEGER);
    if (!u) return NULL;
    LspDoc *d = lsp_doc_new(json_string_value(u), "python", v ? json_integer_value(v) : -1, t ? json_string_value(t) : "",
                            t ? json_string_length(t) : 0);
    return d;
}

static LspNotebook *lsp_nb_find(LspServer *s, const char *uri)
{
    for (uint32_t i = 0; i < s->notebooks.len; i++)
        if (!strcmp(s->notebooks.items[i]->uri, uri)) return s->notebooks.items[i];
    return NULL;
}

LspDoc *lsp_nb_find_cell(LspServer *s, const char *uri)
{
    for (uint32_t i = 0; i < s->notebooks.len; i++) {
        LspNotebook *nb = s->notebooks.items[i];
        for (uint32_t k = 0; k < nb->cells.len; k++)
            if (!strcmp(nb->cells.items[k].doc->uri, uri)) return nb->cells.items[k].doc;
    }
    return NULL;
}

static void lsp_nb__free(LspNotebook *nb)
{
    for (uint32_t k = 0; k < nb->cells.len; k++) lsp_doc_free(nb->cells.items[k].doc);
    array_free(&nb->cells);
    lsp_doc_free(nb->joined);
    gl_free(nb->map);
    gl_free(nb->uri);
    gl_free(nb);
}

void lsp_nb_free_all(LspServer *s)
{
    for (uint32_t i = 0; i < s->notebooks.len; i++) lsp_nb__free(s->notebooks.items[i]);
    array_free(&s->notebooks);
}

/* Adds a cell (kind 1 markup, 2 code) with its document (NULL: an empty one) at position at. */
static void lsp_nb__insert(LspNotebook *nb, uint32_t at, LspDoc *doc, bool code)
{
    doc->notebook = nb;
    LspNbCell c = {doc, code};
    array_push(&nb->cells, c);
    memmove(&nb->cells.items[at + 1], &nb->cells.items[at], (nb->cells.len - 1 - at) * sizeof c);
    nb->cells.items[at] = c;
}

/* The document with uri from a list of cell text documents (didOpen's cellTextDocuments), taken out. */
static LspDoc *lsp_nb__take(LspDocPool *pool, const char *uri)
{
    for (uint32_t i = 0; i < pool->len; i++) {
        if (strcmp(pool->items[i]->uri, uri) != 0) continue;
        LspDoc *d = pool->items[i];
        pool->items[i] = pool->items[--pool->len];
        return d;
    }
    return NULL;
}

static void lsp_nb__add_cells(LspNotebook *nb, uint32_t at, json_t *cells, LspDocPool *pool)
{
    size_t i;
    json_t *c;
    json_array_foreach(cells, i, c) {
        json_t *u = lsp_get(c, "document", JSON_STRING);
        json_t *kind = lsp_get(c, "kind", JSON_INTEGER);
        if (!u) continue;
        LspDoc *d = lsp_nb__take(pool, json_string_value(u));
        bool python = d ? d->lintable : true;
        if (!d) d = lsp_doc_new(json_string_value(u), "python", -1, "", 0);
        lsp_nb__insert(nb, at++, d, kind && json_integer_value(kind) == 2 && python);
    }
}

static void lsp_nb__pool_add(LspDocPool *pool, json_t *items)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        LspDoc *d = lsp_nb__doc(it);
        if (!d) continue;
        d->lintable = lsp_nb__python(it);
        array_push(pool, d);
    }
}

void lsp_nb_did_open(LspServer *s, json_t *params)
{
    json_t *nd = lsp_get(params, "notebookDocument", JSON_OBJECT);
    json_t *uri = nd ? lsp_get(nd, "uri", JSON_STRING) : NULL;
    json_t *cells = nd ? lsp_get(nd, "cells", JSON_ARRAY) : NULL;
    if (!uri || !cells) {
        fprintf(stderr, "gradleak lsp: notebookDocument/didOpen without notebookDocument.uri and cells: ignored\n");
        return;
    }
    LspNotebook *old = lsp_nb_find(s, json_string_value(uri));
    if (old) { /* opened twice: the new one wins */
        for (uint32_t i = 0; i < s->notebooks.len; i++)
            if (s->notebooks.items[i] == old) s->notebooks.items[i] = s->notebooks.items[--s->notebooks.len];
        lsp_nb__free(old);
    }
    LspNotebook *nb = gl_calloc(1, sizeof *nb);
    nb->uri = gl_strdup(json_string_value(uri));
    nb->joined = lsp_doc_new(nb->uri, "python", -1, "", 0);
    array_init(&nb->cells);
    LspDocPool pool;
    array_init(&pool);
    lsp_nb__pool_add(&pool, lsp_get(params, "cellTextDocuments", JSON_ARRAY));
    lsp_nb__add_cells(nb, 0, cells, &pool);
    for (uint32_t i = 0; i < pool.len; i++) lsp_doc_free(pool.items[i]);
    array_free(&pool);
    nb->dirty = true;
    array_push(&s->notebooks, nb);
}


void lsp_nb_did_change(LspServer *s, json_t *params, void (*clear)(LspServer *, const char *uri))
{
    json_t *nd = lsp_get(params, "notebookDocument", JSON_OBJECT);
    json_t *uri = nd ? lsp_get(nd, "uri", JSON_STRING) : NULL;
    LspNotebook *nb = uri ? lsp_nb_find(s, json_string_value(uri)) : NULL;
    if (!nb) {
        fprintf(stderr, "gradleak lsp: notebookDocument/didChange for a notebook that is not open: ignored\n");
        return;
    }
    json_t *change = lsp_get(params, "change", JSON_OBJECT);
    json_t *cells = change ? lsp_get(change, "cells", JSON_OBJECT) : NULL;
    json_t *st = cells ? lsp_get(cells, "structure", JSON_OBJECT) : NULL;
    if (st) {
        json_t *arr = lsp_get(st, "array", JSON_OBJECT);
        json_t *start = arr ? lsp_get(arr, "start", JSON_INTEGER) : NULL;
        json_t *del = arr ? lsp_get(arr, "deleteCount", JSON_INTEGER) : NULL;
        LspDocPool pool; /* removed cells (a move reinserts them) and newly opened ones */
        array_init(&pool);
        if (start && del && json_integer_value(start) >= 0 && json_integer_value(del) >= 0) {
            uint32_t a = (uint32_t)GL_MIN((json_int_t)nb->cells.len, json_integer_value(start));
            uint32_t n = (uint32_t)GL_MIN((json_int_t)(nb->cells.len - a), json_integer_value(del));
            for (uint32_t k = 0; k < n; k++) array_push(&pool, nb->cells.items[a + k].doc);
            memmove(&nb->cells.items[a], &nb->cells.items[a + n], (nb->cells.len - a - n) * sizeof *nb->cells.items);
            nb->cells.len -= n;
            lsp_nb__pool_add(&pool, lsp_get(st, "didOpen", JSON_ARRAY));
            json_t *ins = lsp_get(arr, "cells", JSON_ARRAY);
            if (ins) lsp_nb__add_cells(nb, a, ins, &pool);
        } else {
            lsp_nb__pool_add(&pool, lsp_get(st, "didOpen", JSON_ARRAY));
        }
        for (uint32_t i = 0; i < pool.len; i++) { /* closed: the client drops their diagnostics with us */
            if (clear) clear(s, pool.items[i]->uri);
            lsp_doc_free(pool.items[i]);
        }
        array_free(&pool);
    }
    json_t *data = cells ? lsp_get(cells, "data", JSON_ARRAY) : NULL;
    size_t i;
    json_t *c;
    json_array_foreach(data, i, c) { /* a cell's kind changed (code <-> markdown) */
        json_t *u = lsp_get(c, "document", JSON_STRING), *kind = lsp_get(c, "kind", JSON_INTEGER);
        for (uint32_t k = 0; u && kind && k < nb->cells.len; k++) {
            if (strcmp(nb->cells.items[k].doc->uri, json_string_value(u)) != 0) continue;
            nb->cells.items[k].code = json_integer_value(kind) == 2 && nb->cells.items[k].doc->lintable;
        }
    }
    json_t *tc = cells ? lsp_get(cells, "textContent", JSON_ARRAY) : NULL;
    json_array_foreach(tc, i, c) {
        json_t *doc = lsp_get(c, "document", JSON_OBJECT);
        json_t *u = doc ? lsp_get(doc, "uri", JSON_STRING) : NULL;
        json_t *ver = doc ? lsp_get(doc, "version", JSON_INTEGER) : NULL;
        LspDoc *d = NULL;
        for (uint32_t k = 0; u && k < nb->cells.len && !d; k++)
            if (!strcmp(nb->cells.items[k].doc->uri, json_string_value(u))) d = nb->cells.items[k].doc;
        json_t *changes = lsp_get(c, "changes", JSON_ARRAY);
        if (!d || !changes) continue;
        size_t bad;
        lsp_apply_changes(s, d, changes, &bad); /* a malformed batch leaves the cell as it was */
        if (ver) d->version = json_integer_value(ver);
    }
    nb->dirty = true;
}

void lsp_nb_did_close(LspServer *s, json_t *params, void (*clear)(LspServer *, const char *uri))
{
    json_t *nd = lsp_get(params, "notebookDocument", JSON_OBJECT);
    json_t *uri = nd ? lsp_get(nd, "uri", JSON_STRING) : NULL;
    for (uint32_t i = 0; uri && i < s->notebooks.len; i++) {
        LspNotebook *nb = s->notebooks.items[i];
        if (strcmp(nb->uri, json_string_value(uri)) != 0) continue;
        for (uint32_t k = 0; clear && k < nb->cells.len; k++)
            if (nb->cells.items[k].code) clear(s, nb->cells.items[k].doc->uri);
        lsp_nb__free(nb);
        s->notebooks.items[i] = s->notebooks.items[--s->notebooks.len];
        return;
    }
}

/* A span of the joined code moved into cell c; false when it lies outside c. */
static bool lsp_nb__shift(Span *sp, const NbCell *c)
{
    if (sp->start < c->start || sp->end > c->end || sp->row < c->row) return false;
    sp->start -= c->start, sp->end -= c->start, sp->row -= c->row, sp->end_row -= c->row;
    return true;
}

/* The joined lint's findings, each given to its cell's document with cell-relative spans; notes in
 * other cells and fixes that edit outside the cell are left out. */
static void lsp_nb__distribute(LspNotebook *nb)
{
    const LintResult *all = &nb->joined->result;
    uint32_t m = 0;
    for (uint32_t k = 0; k < nb->cells.len; k++) {
        LspDoc *d = nb->cells.items[k].doc;
        if (d->has_result) lint_result_free(&d->result);
        memset(&d->result, 0, sizeof d->result);
        arena_init(&d->result.arena);
        array_init(&d->result.diags);
        d->has_result = true;
        d->dirty = false;
        d->result_seq++;
        if (!nb->cells.items[k].code || m >= nb->n_map) continue;
        const NbCell *c = &nb->map[m++];
        for (uint32_t i = 0; i < all->diags.len; i++) {
            Diag g = all->diags.items[i];
            if (!lsp_nb__shift(&g.span, c)) continue;
            Related *rel = g.n_related ? ARENA_NEW_N(&d->result.arena, Related, g.n_related) : NULL;
            uint32_t nr = 0;
            for (uint32_t r = 0; r < g.n_related; r++) {
                Related x = g.related[r];
                if (lsp_nb__shift(&x.span, c)) rel[nr++] = x;
            }
            g.related = rel, g.n_related = nr;
            if (g.fix) {
                Fix *fx = ARENA_NEW(&d->result.arena, Fix);
                *fx = *g.fix;
                fx->edits = ARENA_NEW_N(&d->result.arena, Edit, fx->n_edits ? fx->n_edits : 1);
                bool inside = true;
                uint32_t cell_len = c->end - c->start - (c->added_nl ? 1 : 0); /* the cell document's length */
                for (uint32_t e = 0; e < fx->n_edits; e++) {
                    Edit ed = g.fix->edits[e];
                    inside &= ed.start >= c->start && ed.end <= c->end;
                    ed.start = GL_MIN(ed.start - GL_MIN(ed.start, c->start), cell_len);
                    ed.end = GL_MIN(ed.end - GL_MIN(ed.end, c->start), cell_len);
                    fx->edits[e] = ed;
                }
                g.fix = inside ? fx : NULL;
            }
            array_push(&d->result.diags, g);
        }
    }
}

void lsp_nb_lint(LspServer *s, LspNotebook *nb)
{
    if (!nb->dirty && nb->joined->has_result) return;
    StrBuf code, text;
    sb_init(&code);
    sb_init(&text);
    gl_free(nb->map);
    nb->map = gl_calloc(nb->cells.len ? nb->cells.len : 1, sizeof *nb->map);
    nb->n_map = 0;
    uint32_t row = 0;
    for (uint32_t k = 0; k < nb->cells.len; k++) {
        if (!nb->cells.items[k].code) continue;
        const StrBuf *t = &nb->cells.items[k].doc->text;
        NbCell *c = &nb->map[nb->n_map++];
        c->index = k + 1, c->row = row, c->start = (uint32_t)text.len;
        sb_append(&text, t->data, t->len);
        if (t->len && t->data[t->len - 1] != '\n') sb_putc(&text, '\n'), c->added_nl = true;
        c->end = (uint32_t)text.len;
        for (uint32_t i = c->start; i < c->end; i++) row += text.data[i] == '\n';
    }
    sb_append(&text, "", 0);
    char *masked = gl_malloc(text.len + 1);
    masked[text.len] = 0;
    for (uint32_t m = 0; m < nb->n_map; m++) {
        bool skip;
        nb_mask_cell(text.data + nb->map[m].start, nb->map[m].end - nb->map[m].start, masked + nb->map[m].start, &skip);
        nb->map[m].skipped = skip;
    }
    lsp_doc_set_text(nb->joined, masked, text.len);
    LintOptions o;
    const LintOptions *lo = lsp_options_for(s, nb->joined, &o);
    if (nb->joined->has_result) lint_result_free(&nb->joined->result);
    memset(&nb->joined->result, 0, sizeof nb->joined->result);
    if (!lo || lsp_run_lint(nb->joined->path, masked, text.len, LANG_PYTHON, NULL, lo, &s->cache, s->cache_dir,
                            &nb->joined->result) < 0) {
        lint_result_free(&nb->joined->result);
        memset(&nb->joined->result, 0, sizeof nb->joined->result);
        arena_init(&nb->joined->result.arena);
    }
    nb_lint_displayed(&nb->joined->result, masked, text.len, nb->map, nb->n_map);
    nb_lint_messages(&nb->joined->result, nb->map, nb->n_map);
    nb->joined->has_result = true;
    nb->joined->dirty = false;
    nb->dirty = false;
    lsp_nb__distribute(nb);
    gl_free(masked);
    sb_free(&text);
    sb_free(&code);
}

void lsp_nb_flush(LspServer *s, void (*publish)(LspServer *, LspDoc *))
{
    for (uint32_t i = 0; i < s->notebooks.len; i++) {
        LspNotebook *nb = s->notebooks.items[i];
        if (!nb->dirty) continue;
        lsp_nb_lint(s, nb);
        for (uint32_t k = 0; publish && k < nb->cells.len; k++)
            if (nb->cells.items[k].code) publish(s, nb->cells.items[k].doc);
    }
}

void lsp_nb_invalidate(LspServer *s)
{
    for (uint32_t i = 0; i < s->notebooks.len; i++) s->notebooks.items[i]->dirty = true;
}
