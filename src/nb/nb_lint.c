/* A lint of a notebook's joined code, told in cells: "line 12" becomes "cell 4, line 3". */
#include "engine/engine.h"
#include "nb/nb.h"

static const char *nb__rw(Arena *a, const NbCell *cells, uint32_t n, const char *s)
{
    if (!s || !strstr(s, "line ")) return s;
    char *t = nb_rewrite_lines(cells, n, s);
    const char *r = arena_strdup(a, t);
    gl_free(t);
    return r;
}

void nb_lint_messages(struct LintResult *res, const NbCell *cells, uint32_t n)
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
