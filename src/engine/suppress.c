/* Suppression comments and fixture expectations, both read from the comments the front end kept. */
#include <ctype.h>
#include <strings.h>
#include "base/noqa.h"
#include "engine/suppress.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

typedef struct RowRef {
    uint32_t row, k;
} RowRef;

static int suppress__cmp(const void *a, const void *b)
{
    const RowRef *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

uint32_t suppress_apply(const IrModule *m, Arena *arena, DiagList *diags, Noqa **out)
{
    uint32_t n = m->comments.len;
    *out = NULL;
    if (!n) return 0;
    Noqa *nq = ARENA_NEW_N(arena, Noqa, n);
    uint32_t nn = 0;
    for (uint32_t i = 0; i < n; i++) {
        Span s = m->comments.items[i];
        if (noqa_parse(m->src + s.start, s.end - s.start, &nq[nn])) {
            nq[nn].row = s.row + (nq[nn].next_line ? 1 : 0);
            nq[nn].span = s;
            nn++;
        }
    }
    if (!nn) return 0;
    /* the comments that may apply to a row: file-level ones, and the line ones of that row, each
     * in comment order (the first that suppresses a finding is the one marked used); by row through
     * a sorted index, not a scan of every comment per finding (quadratic in a long file) */
    uint32_t *file_level = gl_malloc(sizeof(uint32_t) * nn);
    RowRef *by_row = gl_malloc(sizeof(RowRef) * nn);
    uint32_t nfile = 0, nrow = 0;
    for (uint32_t k = 0; k < nn; k++) {
        if (nq[k].foreign) continue;
        if (nq[k].file_level) file_level[nfile++] = k;
        else by_row[nrow].row = nq[k].row, by_row[nrow++].k = k;
    }
    qsort(by_row, nrow, sizeof *by_row, suppress__cmp);
    uint32_t keep = 0;
    for (uint32_t i = 0; i < diags->len; i++) {
        Diag *d = &diags->items[i];
        uint32_t lo = 0, hi = nrow;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (by_row[mid].row < d->span.row) lo = mid + 1;
            else hi = mid;
        }
        bool suppressed = false;
        uint32_t a = 0, b = lo;
        while (!suppressed) {
            bool more_a = a < nfile, more_b = b < nrow && by_row[b].row == d->span.row;
            if (!more_a && !more_b) break;
            Noqa *q = more_a && (!more_b || file_level[a] < by_row[b].k) ? &nq[file_level[a++]] : &nq[by_row[b++].k];
            if (!q->n_codes) { suppressed = true, q->used[RULE_COUNT] = true; continue; }
            for (uint32_t j = 0; j < q->n_codes; j++)
                if (q->codes[j] == (RuleId)d->rule) suppressed = true, q->used[j] = true;
        }
        if (!suppressed) diags->items[keep++] = *d;
    }
    gl_free(file_level);
    gl_free(by_row);
    diags->len = keep;
    *out = nq;
    return nn;
}

/* The next line after `row` that holds code (not blank, not only a comment). */
static uint32_t next_code_row(const IrModule *m, uint32_t row)
{
    const char *p = m->src, *end = m->src + m->len;
    uint32_t r = 0;
    while (p < end && r <= row) {
        if (*p == '\n' || (*p == '\r' && !(p + 1 < end && p[1] == '\n'))) r++;
        p++;
    }
    while (p < end) {
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        bool cxx_comment = q + 1 < end && q[0] == '/' && q[1] == '/';
        if (q < end && *q != '#' && *q != '\n' && *q != '\r' && !cxx_comment) return r;
        while (q < end && *q != '\n' && *q != '\r') q++;
        if (q < end && *q == '\r' && q + 1 < end && q[1] == '\n') q++;
        p = q + 1;
        r++;
    }
    return row + 1;
}

uint32_t expect_parse(const IrModule *m, Expect *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->comments.len && n < cap; i++) {
        Span s = m->comments.items[i];
        const char *p = m->src + s.start, *end = m->src + s.end;
        p += p < end && *p == '#' ? 1 : 2; /* `#`, or `//` and block comments in C++ */
        if (p > end) continue;
        p = skip_ws(p, end);
        Expect e;
        memset(&e, 0, sizeof e);
        int rel = 0;
        bool has_rel = false;
        if ((size_t)(end - p) >= 6 && !strncmp(p, "expect", 6)) {
            p += 6;
            if (p < end && *p == '@') {
                p++;
                int sign = 1;
                if (p < end && (*p == '+' || *p == '-')) sign = *p == '-' ? -1 : 1, p++;
                while (p < end && isdigit((unsigned char)*p)) rel = rel * 10 + (*p++ - '0');
                rel *= sign;
                has_rel = true;
            }
            if (p >= end || *p != ':') continue;
            e.n_codes = noqa_parse_codes(p + 1, end, e.codes, ARRAY_LEN(e.codes), NULL);
        } else if ((size_t)(end - p) >= 3 && !strncmp(p, "ok:", 3)) {
            e.ok = true;
        } else {
            continue;
        }
        /* alone on its line: applies to the next code line */
        uint32_t ls = s.start;
        while (ls > 0 && m->src[ls - 1] != '\n' && m->src[ls - 1] != '\r') ls--;
        bool alone = true;
        for (uint32_t k = ls; k < s.start; k++)
            if (m->src[k] != ' ' && m->src[k] != '\t') alone = false;
        if (has_rel) e.row = (uint32_t)((int)s.row + rel);
        else e.row = alone ? next_code_row(m, s.row) : s.row;
        out[n++] = e;
    }
    return n;
}
