/* A lint of a notebook's joined code, told in cells: "line 12" becomes "cell 4, line 3". */
#include "engine/engine.h"
#include "engine/nb_lint.h"

static const char *nb__rw(Arena *a, const NbCell *cells, uint32_t n, const char *s)
{
    if (!s || !strstr(s, "line ")) return s;
    char *t = nb_rewrite_lines(cells, n, s);
    const char *r = arena_strdup(a, t);
    gl_free(t);
    return r;
}

void nb_lint_messages(LintResult *res, const NbCell *cells, uint32_t n)
{
    for (uint32_t i = 0; i < res->diags.len; i++) {
        Diag *d = &res->diags.items[i];
        d->message = nb__rw(&res->arena, cells, n, d->message);
        d->hint = nb__rw(&res->arena, cells, n, d->hint);
        d->trace = nb__rw(&res->arena, cells, n, d->trace);
        for (uint32_t k = 0; k < d->n_related; k++)
            d->related[k].message = nb__rw(&res->arena, cells, n, d->related[k].message);
        if (d->fix) d->fix->message = nb__rw(&res->arena, cells, n, d->fix->message);
    }
}

/* Is code[from, to) only blanks and comments? */
static bool nb__rest_blank(const char *code, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        char ch = code[i];
        if (ch == '#') {
            while (i < to && code[i] != '\n') i++;
            continue;
        }
        if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' && ch != ';') return false;
    }
    return true;
}

/* Drops GL201 findings on the last statement of a cell (the cells end at ends[0..n), sorted). */
static void nb__drop_displayed(LintResult *res, const char *code, size_t len, const uint32_t *ends, uint32_t n)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < res->diags.len; i++) {
        const Diag *d = &res->diags.items[i];
        bool drop = false;
        /* only a top-level statement is displayed (a call in a loop at the end of a cell is not) */
        if (d->rule == RULE_GL201 && d->span.end <= len && d->span.col == 0) {
            uint32_t k = 0;
            while (k < n && ends[k] < d->span.end) k++;
            drop = k < n && nb__rest_blank(code, d->span.end, ends[k]);
        }
        if (!drop) res->diags.items[keep++] = *d;
    }
    res->diags.len = keep;
}

void nb_lint_displayed(LintResult *res, const char *code, size_t len, const NbCell *cells, uint32_t n)
{
    uint32_t *ends = gl_calloc(n ? n : 1, sizeof *ends);
    for (uint32_t k = 0; k < n; k++) ends[k] = cells[k].end;
    nb__drop_displayed(res, code, len, ends, n);
    gl_free(ends);
}

int nb_fix_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                LintResult *out)
{
    int rc = engine_lint(path, src, len, lang, o, out);
    if (rc < 0) return rc;
    /* nb_fix_source's text: a cell ends where the next boundary line starts, the last at the end */
    Array(uint32_t) ends;
    array_init(&ends);
    const char *b = NB_FIX_BOUNDARY;
    size_t bl = strlen(b);
    for (size_t i = 0; i + bl <= len; i++) {
        if ((i == 0 || src[i - 1] == '\n') && !memcmp(src + i, b, bl)) array_push(&ends, (uint32_t)i);
    }
    array_push(&ends, (uint32_t)len);
    nb__drop_displayed(out, src, len, ends.items, ends.len);
    array_free(&ends);
    return 0;
}
