/* Unified diffs: Myers' O(ND) shortest edit script over lines, printed as `diff -u` hunks. */
#include "cli/udiff.h"

/* Past this many changed lines the edit script is not searched for (memory grows with D^2). */
#define UDIFF_MAX_D 2000

typedef struct ULine {
    const char *s;
    uint32_t n; /* with the terminator */
} ULine;

static uint32_t udiff__split(const char *s, size_t len, ULine **out)
{
    uint32_t n = 0, cap = 16;
    ULine *v = gl_malloc(cap * sizeof *v);
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && s[j] != '\n' && s[j] != '\r') j++;
        if (j < len) j += (s[j] == '\r' && j + 1 < len && s[j + 1] == '\n') ? 2 : 1;
        if (n == cap) cap *= 2, v = gl_realloc(v, cap * sizeof *v);
        v[n++] = (ULine){s + i, (uint32_t)(j - i)};
        i = j;
    }
    *out = v;
    return n;
}

static bool udiff__eq(const ULine *a, const ULine *b) { return a->n == b->n && !memcmp(a->s, b->s, a->n); }

/* The edit script of A[0..n) -> B[0..m) as 'e' (equal), 'd' (delete A's line), 'i' (insert B's
 * line), written to ops (capacity n + m); returns its length, or UINT32_MAX when D is too large. */
static uint32_t udiff__myers(const ULine *A, uint32_t n, const ULine *B, uint32_t m, char *ops)
{
    int32_t max = (int32_t)(n + m), dmax = max < UDIFF_MAX_D ? max : UDIFF_MAX_D;
    int32_t *v = gl_calloc((size_t)(2 * max + 3), sizeof *v); /* v[k + max + 1] */
    /* snapshots of v[-d..d] after each d, concatenated: row d starts at d*d */
    int32_t *trace = gl_malloc(((size_t)(dmax + 1) * (size_t)(dmax + 1)) * sizeof *trace);
    int32_t off = max + 1, found = -1;
    for (int32_t d = 0; d <= dmax && found < 0; d++) {
        for (int32_t k = -d; k <= d; k += 2) {
            int32_t x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
            int32_t y = x - k;
            while (x < (int32_t)n && y < (int32_t)m && udiff__eq(&A[x], &B[y])) x++, y++;
            v[off + k] = x;
            if (x >= (int32_t)n && y >= (int32_t)m) found = d;
        }
        for (int32_t k = -d; k <= d; k++) trace[d * d + (k + d)] = v[off + k];
    }
    if (found < 0) {
        gl_free(v);
        gl_free(trace);
        return UINT32_MAX;
    }
    /* walk back from (n, m), writing the script from its end */
    uint32_t len = 0;
    int32_t x = (int32_t)n, y = (int32_t)m;
    for (int32_t d = found; d > 0; d--) {
        const int32_t *pv = &trace[(d - 1) * (d - 1)]; /* v[-(d-1)..d-1] at index k + d - 1 */
        int32_t k = x - y;
#define PV(kk) pv[(kk) + d - 1]
        int32_t pk = (k == -d || (k != d && PV(k - 1) < PV(k + 1))) ? k + 1 : k - 1;
        int32_t px = PV(pk), py = px - pk;
#undef PV
        int32_t sx = pk == k + 1 ? px : px + 1; /* where the snake of step d starts */
        while (x > sx && y > sx - k) ops[len++] = 'e', x--, y--;
        ops[len++] = pk == k + 1 ? 'i' : 'd';
        x = px, y = py;
    }
    while (x > 0 && y > 0) ops[len++] = 'e', x--, y--;
    for (uint32_t i = 0; i < len / 2; i++) {
        char t = ops[i];
        ops[i] = ops[len - 1 - i];
        ops[len - 1 - i] = t;
    }
    gl_free(v);
    gl_free(trace);
    return len;
}

static void udiff__line(StrBuf *out, char tag, const ULine *l)
{
    sb_putc(out, tag);
    sb_append(out, l->s, l->n);
    char last = l->n ? l->s[l->n - 1] : 0;
    if (last != '\n' && last != '\r') sb_puts(out, "\n\\ No newline at end of file\n");
}

void udiff(StrBuf *out, const char *path, const char *a, size_t alen, const char *b, size_t blen, int context)
{
    if (alen == blen && !memcmp(a, b, alen)) return;
    ULine *A, *B;
    uint32_t n = udiff__split(a, alen, &A), m = udiff__split(b, blen, &B);
    uint32_t pre = 0, suf = 0;
    while (pre < n && pre < m && udiff__eq(&A[pre], &B[pre])) pre++;
    while (suf < n - pre && suf < m - pre && udiff__eq(&A[n - 1 - suf], &B[m - 1 - suf])) suf++;
    uint32_t mn = n - pre - suf, mm = m - pre - suf;
    char *ops = gl_malloc((size_t)n + m + 1);
    uint32_t len = 0;
    for (uint32_t i = 0; i < pre; i++) ops[len++] = 'e';
    uint32_t k = udiff__myers(A + pre, mn, B + pre, mm, ops + len);
    if (k == UINT32_MAX) {
        for (uint32_t i = 0; i < mn; i++) ops[len++] = 'd';
        for (uint32_t i = 0; i < mm; i++) ops[len++] = 'i';
    } else {
        len += k;
    }
    for (uint32_t i = 0; i < suf; i++) ops[len++] = 'e';

    sb_printf(out, "--- %s\n+++ %s\n", path, path);
    /* hunks: runs of changes whose gaps are at most 2 * context equal lines */
    uint32_t i = 0, ai = 0, bi = 0; /* script position and the lines of A and B before it */
    uint32_t ctx = context < 0 ? 0 : (uint32_t)context;
    while (i < len) {
        if (ops[i] == 'e') {
            i++, ai++, bi++;
            continue;
        }
        /* a change at i: the hunk starts ctx equal lines before it */
        uint32_t back = 0;
        while (back < ctx && back < i && ops[i - back - 1] == 'e') back++;
        uint32_t hs = i - back, ha = ai - back, hb = bi - back;
        uint32_t he = i; /* one past the hunk's last op */
        for (;;) {
            while (he < len && ops[he] != 'e') he++;
            uint32_t run = 0;
            while (he + run < len && ops[he + run] == 'e') run++;
            if (he + run < len && run <= 2 * ctx) {
                he += run;
                continue;
            }
            he += run < ctx ? run : ctx;
            break;
        }
        uint32_t na = 0, nb = 0;
        for (uint32_t j = hs; j < he; j++) na += ops[j] != 'i', nb += ops[j] != 'd';
        sb_printf(out, "@@ -%u,%u +%u,%u @@\n", na ? ha + 1 : ha, na, nb ? hb + 1 : hb, nb);
        uint32_t x = ha, y = hb;
        for (uint32_t j = hs; j < he; j++) {
            if (ops[j] == 'e') udiff__line(out, ' ', &A[x++]), y++;
            else if (ops[j] == 'd') udiff__line(out, '-', &A[x++]);
            else udiff__line(out, '+', &B[y++]);
        }
        i = he, ai = x, bi = y;
    }
    gl_free(ops);
    gl_free(A);
    gl_free(B);
}
