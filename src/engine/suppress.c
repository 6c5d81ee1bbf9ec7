/* Suppression comments and fixture expectations, both read from the comments the front end kept. */
#include <ctype.h>
#include <strings.h>
#include "base/strbuf.h"
#include "rules/rule.h"
#include "engine/suppress.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Reads a code list ("GL101, GL302 F401") into codes, keeping gradleak's codes; *n_any gets the
 * number of code-like tokens of any linter (a `# noqa: F401` is another tool's business). */
static uint32_t parse_codes(const char *p, const char *end, RuleId *codes, uint32_t cap, uint32_t *n_any)
{
    uint32_t n = 0, any = 0;
    for (;;) {
        p = skip_ws(p, end);
        const char *s = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
        if (p == s) break;
        char buf[64];
        size_t len = (size_t)(p - s) < sizeof buf - 1 ? (size_t)(p - s) : sizeof buf - 1;
        memcpy(buf, s, len);
        buf[len] = 0;
        any++;
        const RuleInfo *ri = rule_by_code(buf);
        if (ri && n < cap) codes[n++] = ri->id;
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
    }
    if (n_any) *n_any = any;
    return n;
}

static bool suppress__parse_one(const char *text, size_t len, size_t marker, Noqa *out);

/* `# type: ignore  # noqa: GL301` is one comment token: try each `#` in it. C++ comments start
 * with `//` or a block comment opener, and also take clang-tidy's `NOLINT(GL101)`. */
bool suppress_parse(const char *text, size_t len, Noqa *out)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '#' && suppress__parse_one(text + i, len - i, 1, out)) return true;
        if (text[i] == '/' && i + 1 < len && (text[i + 1] == '/' || text[i + 1] == '*') &&
            suppress__parse_one(text + i, len - i, 2, out))
            return true;
    }
    return false;
}

static bool suppress__parse_one(const char *text, size_t len, size_t marker, Noqa *out)
{
    const char *p = text, *end = text + len;
    memset(out, 0, sizeof *out);
    if (p + marker > end) return false;
    p = skip_ws(p + marker, end);
    if (marker == 2 && (size_t)(end - p) >= 6 && !strncmp(p, "NOLINT", 6)) {
        /* NOLINT, NOLINT(GL101, GL102), NOLINTNEXTLINE(GL101) */
        p += 6;
        if ((size_t)(end - p) >= 8 && !strncmp(p, "NEXTLINE", 8)) p += 8, out->next_line = true;
        if (p < end && *p == '(') {
            const char *close = memchr(p, ')', (size_t)(end - p));
            if (!close) return false;
            uint32_t any = 0;
            out->n_codes = parse_codes(p + 1, close, out->codes, RULE_COUNT, &any);
            if (!out->n_codes && any) out->foreign = true;
        } else if (p < end && (isalnum((unsigned char)*p) || *p == '_')) {
            return false;
        }
        return true;
    }
    if ((size_t)(end - p) >= 9 && !strncasecmp(p, "gradleak:", 9)) {
        p = skip_ws(p + 9, end);
        out->file_level = true;
    }
    /* noqa may follow other comment text: `# type: ignore  # noqa` is its own comment, but
     * `# something noqa: X` is not a suppression (as ruff) */
    if ((size_t)(end - p) < 4 || strncasecmp(p, "noqa", 4) != 0) return false;
    p += 4;
    if (p < end && *p == ':') {
        uint32_t any = 0;
        out->n_codes = parse_codes(p + 1, end, out->codes, RULE_COUNT, &any);
        /* codes of other linters only: not ours to suppress with, nor to call unused */
        if (!out->n_codes && any) out->foreign = true;
    } else if (p < end && isalnum((unsigned char)*p)) {
        return false; /* `# noqaxyz` */
    }
    return true;
}

/* GL901's fix: drop the unused gradleak codes from the noqa's list, keeping the used ones and other
 * linters' codes (`# noqa: F401, GL301` -> `# noqa: F401`); the whole directive goes (with the
 * blanks before it) only when nothing is left. */
static Fix *suppress__fix(const IrModule *m, const LintOptions *o, Arena *arena, const Noqa *q)
{
    const char *text = m->src + q->span.start, *end = m->src + q->span.end;
    /* the noqa's own `#` (it may follow other comment text) and the start of its code list */
    const char *hash = NULL, *list = NULL;
    for (const char *h = text; h < end && !list; h++) {
        size_t marker = *h == '#' ? 1 : (h + 1 < end && h[0] == '/' && h[1] == '/') ? 2 : 0;
        if (!marker) continue;
        Noqa tmp;
        if (!suppress__parse_one(h, (size_t)(end - h), marker, &tmp)) continue;
        const char *c = memchr(h, ':', (size_t)(end - h));
        /* `# gradleak: noqa: X` has two colons: the list follows the one after "noqa" */
        for (const char *k = h; k + 4 <= end; k++)
            if (!strncasecmp(k, "noqa", 4)) {
                c = k + 4 < end && k[4] == ':' ? k + 4 : NULL;
                break;
            }
        if (c) hash = h, list = c + 1;
    }
    StrBuf kept;
    sb_init(&kept);
    const char *p = list, *list_end = list;
    while (p) {
        p = skip_ws(p, end);
        const char *t = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
        if (p == t) break;
        /* the list ends at a word that is not code-shaped (letters then digits): `GL301 because` */
        const char *k = t;
        while (k < p && isalpha((unsigned char)*k)) k++;
        bool code_like = k > t && k < p;
        while (k < p && isdigit((unsigned char)*k)) k++;
        if (!code_like || k != p) break;
        list_end = p;
        char buf[64];
        size_t len = (size_t)(p - t) < sizeof buf - 1 ? (size_t)(p - t) : sizeof buf - 1;
        memcpy(buf, t, len);
        buf[len] = 0;
        const RuleInfo *ri = rule_by_code(buf);
        bool unused = false;
        for (uint32_t j = 0; ri && j < q->n_codes; j++)
            if (q->codes[j] == ri->id) {
                unused = !q->used[j] && o->rules.on[ri->id];
                break;
            }
        if (!unused) sb_printf(&kept, "%s%.*s", kept.len ? ", " : " ", (int)(p - t), t);
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
    }
    Fix *fx = ARENA_NEW(arena, Fix);
    fx->safety = FIX_SAFE;
    fx->edits = ARENA_NEW(arena, Edit);
    fx->n_edits = 1;
    if (list && kept.len) {
        fx->message = arena_printf(arena, "Keep only the used codes:%s", kept.data);
        fx->edits[0] = (Edit){(uint32_t)(list - m->src), (uint32_t)(list_end - m->src), arena_strdup(arena, kept.data)};
    } else {
        /* remove the directive and the blanks before it */
        uint32_t start = hash ? (uint32_t)(hash - m->src) : q->span.start;
        while (start > 0 && (m->src[start - 1] == ' ' || m->src[start - 1] == '\t')) start--;
        fx->message = "Remove the `noqa` comment";
        fx->edits[0] = (Edit){start, q->span.end, ""};
    }
    sb_free(&kept);
    return fx;
}

void suppress_apply(const IrModule *m, const LintOptions *o, Arena *arena, DiagList *diags)
{
    uint32_t n = m->comments.len;
    if (!n) return;
    Noqa *nq = ARENA_NEW_N(arena, Noqa, n);
    uint32_t nn = 0;
    for (uint32_t i = 0; i < n; i++) {
        Span s = m->comments.items[i];
        if (suppress_parse(m->src + s.start, s.end - s.start, &nq[nn])) {
            nq[nn].row = s.row + (nq[nn].next_line ? 1 : 0);
            nq[nn].span = s;
            nn++;
        }
    }
    if (!nn) return;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < diags->len; i++) {
        Diag *d = &diags->items[i];
        bool suppressed = false;
        for (uint32_t k = 0; k < nn && !suppressed; k++) {
            Noqa *q = &nq[k];
            if (q->foreign || (!q->file_level && q->row != d->span.row)) continue;
            if (!q->n_codes) { suppressed = true, q->used[RULE_COUNT] = true; continue; }
            for (uint32_t j = 0; j < q->n_codes; j++)
                if (q->codes[j] == (RuleId)d->rule) suppressed = true, q->used[j] = true;
        }
        if (!suppressed) diags->items[keep++] = *d;
    }
    diags->len = keep;
    if (!o->rules.on[RULE_GL901]) return;
    for (uint32_t k = 0; k < nn; k++) {
        Noqa *q = &nq[k];
        /* a bare `# noqa` may be for flake8 or ruff: only gradleak codes can be called unused */
        if (q->file_level || q->foreign || !q->n_codes) continue;
        StrBuf unused;
        sb_init(&unused);
        {
            for (uint32_t j = 0; j < q->n_codes; j++) {
                /* only codes whose rule ran can be called unused */
                if (q->used[j] || !o->rules.on[q->codes[j]]) continue;
                sb_printf(&unused, "%s%s", unused.len ? ", " : "", rule_info(q->codes[j])->code);
            }
        }
        if (unused.len) {
            Diag d;
            memset(&d, 0, sizeof d);
            d.rule = RULE_GL901;
            d.severity = SEV_WARNING;
            d.span = q->span;
            d.message = arena_printf(arena, "Unused `noqa` directive (%s suppresses nothing on this line)", unused.data);
            d.hint = "Remove the unused suppression";
            d.fix = suppress__fix(m, o, arena, q);
            array_push(diags, d);
        }
        sb_free(&unused);
    }
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
            e.n_codes = parse_codes(p + 1, end, e.codes, ARRAY_LEN(e.codes), NULL);
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
