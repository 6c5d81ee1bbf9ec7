/* Applying fixes: non-overlapping edits, a fixed-point loop of lint and apply, revert on broken syntax. */
#include <stdio.h>
#include "engine/fix.h"

bool fix_applicable(const Fix *fx, bool unsafe)
{
    return fx && fx->n_edits && (fx->safety == FIX_SAFE || unsafe);
}

/* A fix is usable when its edits are inside src, in order and not overlapping each other. */
static bool fix__well_formed(const Fix *fx, size_t len)
{
    uint32_t last = 0;
    for (uint32_t k = 0; k < fx->n_edits; k++) {
        const Edit *e = &fx->edits[k];
        /* not NEVER: a caller may hand in a fix computed on an older version of the text (LSP) */
        if (e->start > e->end || e->end > len || e->start < last) return false;
        /* two insertions at one offset would leave their order to chance */
        if (k && e->start == last && e->start == e->end && fx->edits[k - 1].start == fx->edits[k - 1].end) return false;
        last = e->end;
    }
    return true;
}

/* Orders fixes by where they start, then end; ties keep the caller's order (idx). */
typedef struct FixRef {
    const Fix *fx;
    uint32_t idx;
} FixRef;

static int fix__cmp(const void *pa, const void *pb)
{
    const FixRef *x = pa, *y = pb;
    const Fix *a = x->fx, *b = y->fx;
    uint32_t sa = a->edits[0].start, sb = b->edits[0].start;
    if (sa != sb) return sa < sb ? -1 : 1;
    uint32_t ea = a->edits[a->n_edits - 1].end, eb = b->edits[b->n_edits - 1].end;
    if (ea != eb) return ea < eb ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool fix__same(const Fix *a, const Fix *b)
{
    if (a->n_edits != b->n_edits) return false;
    for (uint32_t k = 0; k < a->n_edits; k++)
        if (a->edits[k].start != b->edits[k].start || a->edits[k].end != b->edits[k].end ||
            strcmp(a->edits[k].text ? a->edits[k].text : "", b->edits[k].text ? b->edits[k].text : ""))
            return false;
    return true;
}

/* fix_apply, also telling which of fixes[] were accepted (accepted may be NULL). */
static uint32_t fix__apply(const char *src, size_t len, const Fix *const *fixes, uint32_t n, StrBuf *out,
                           bool *accepted)
{
    FixRef *order = gl_malloc((n ? n : 1) * sizeof *order);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (accepted) accepted[i] = false;
        if (fixes[i] && fixes[i]->n_edits && fix__well_formed(fixes[i], len)) order[m++] = (FixRef){fixes[i], i};
    }
    qsort(order, m, sizeof *order, fix__cmp);
    size_t pos = 0;   /* bytes of src before pos are already in out */
    bool any = false; /* an edit was accepted: pos is the end of the last one */
    uint32_t applied = 0;
    const Fix *last = NULL;
    for (uint32_t i = 0; i < m; i++) {
        const Fix *fx = order[i].fx;
        /* the same edits attached to two findings are applied once (and both count as fixed) */
        if (last && fix__same(last, fx)) {
            if (accepted) accepted[order[i].idx] = true;
            continue;
        }
        /* ruff's rule: a fix must start at or after the end of the last accepted one; an insertion
         * exactly there is ambiguous (before or after it?), so it waits for the next pass */
        const Edit *e0 = &fx->edits[0];
        if (any && (e0->start < pos || (e0->start == pos && e0->start == e0->end))) continue;
        for (uint32_t k = 0; k < fx->n_edits; k++) {
            const Edit *e = &fx->edits[k];
            sb_append(out, src + pos, e->start - pos);
            if (e->text) sb_puts(out, e->text);
            pos = e->end;
        }
        any = true;
        last = fx;
        applied++;
        if (accepted) accepted[order[i].idx] = true;
    }
    sb_append(out, src + pos, len - pos);
    gl_free(order);
    return applied;
}

uint32_t fix_apply(const char *src, size_t len, const Fix *const *fixes, uint32_t n, StrBuf *out)
{
    return fix__apply(src, len, fixes, n, out, NULL);
}

/* The applicable fixes of diags (and their rules) in diag order; returns how many. */
static uint32_t fix__select(const Diag *diags, uint32_t n, bool unsafe, RuleId rule, const Fix **fixes, int *rules)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (fix_applicable(diags[i].fix, unsafe) && (rule == RULE_NONE || diags[i].rule == rule)) {
            fixes[m] = diags[i].fix;
            if (rules) rules[m] = diags[i].rule;
            m++;
        }
    return m;
}

uint32_t fix_apply_diags(const char *src, size_t len, const Diag *diags, uint32_t n, bool unsafe, RuleId rule,
                         StrBuf *out)
{
    const Fix **fixes = gl_malloc((n ? n : 1) * sizeof *fixes);
    uint32_t m = fix__select(diags, n, unsafe, rule, fixes, NULL);
    uint32_t k = fix_apply(src, len, fixes, m, out);
    gl_free(fixes);
    return k;
}

void fix_options_default(FixOptions *fo)
{
    memset(fo, 0, sizeof *fo);
    fo->rule = RULE_NONE;
}

static uint32_t fix__count(const LintResult *r, const FixOptions *fo)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < r->diags.len; i++)
        if (fix_applicable(r->diags.items[i].fix, fo->unsafe) && (fo->rule == RULE_NONE || r->diags.items[i].rule == fo->rule)) k++;
    return k;
}

/* The rules whose fixes a pass applied, for the revert message: "GL104, GL101". */
static void fix__rules_of(const LintResult *r, const FixOptions *fo, char *buf, size_t cap)
{
    bool seen[RULE_COUNT] = {0};
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < r->diags.len; i++) {
        const Diag *d = &r->diags.items[i];
        if (!fix_applicable(d->fix, fo->unsafe) || (fo->rule != RULE_NONE && d->rule != fo->rule)) continue;
        if (d->rule < 0 || d->rule >= RULE_COUNT || seen[d->rule]) continue;
        seen[d->rule] = true;
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", rule_info((RuleId)d->rule)->code);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
}

static void fix__free_keys(StrMap *m)
{
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots && m->slots[i].key) gl_free((char *)m->slots[i].key);
    strmap_free(m);
}

int fix_file(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *lo,
             const FixOptions *fo_in, FixOutcome *out)
{
    FixOptions fo;
    if (fo_in) fo = *fo_in;
    else fix_options_default(&fo);
    FixLintFn lint = fo.lint ? fo.lint : engine_lint;
    uint32_t max = fo.max_passes ? fo.max_passes : FIX_MAX_PASSES;
    memset(out, 0, sizeof *out);

    LintResult cur;
    int rc = lint(path, src, len, lang, lo, &cur);
    if (rc < 0) return rc;
    uint32_t base_errors = cur.n_syntax_errors;
    StrBuf now, next;
    sb_init(&now);
    sb_init(&next);
    sb_append(&now, src, len);
    /* C++: a fix whose file no longer parses is dropped alone (the analysis cannot see every type,
     * so a fix can be wrong without a bug in gradleak): after a failing pass, fixes go one at a
     * time, and those that fail are skipped by their finding (rule and message) */
    bool single = false;
    StrMap bad;
    strmap_init(&bad);
    for (;;) {
        /* the pass's view of the findings: C++ leaves out the dropped fixes (and in single mode all
         * but the first), without touching cur */
        LintResult view = cur;
        if (lang == LANG_CXX && (single || bad.len)) {
            Diag *copy = ARENA_NEW_N(&cur.arena, Diag, cur.diags.len ? cur.diags.len : 1);
            uint32_t keep = 0;
            for (uint32_t i = 0; i < cur.diags.len; i++) {
                Diag *d = &copy[i];
                *d = cur.diags.items[i];
                if (!fix_applicable(d->fix, fo.unsafe) || (fo.rule != RULE_NONE && d->rule != fo.rule)) continue;
                char *key = arena_printf(&cur.arena, "%d:%s", d->rule, d->message ? d->message : "");
                if (strmap_get(&bad, key, strlen(key)) != UINT32_MAX || (single && keep > 0)) d->fix = NULL;
                else keep++;
            }
            view.diags.items = copy;
        }
        if (!fix__count(&view, &fo)) break;
        if (out->passes == max) {
            out->capped = true;
            break;
        }
        /* apply this pass, and count per rule what was accepted */
        sb_clear(&next);
        uint32_t nd = view.diags.len;
        const Fix **fixes = gl_malloc((nd ? nd : 1) * sizeof *fixes);
        int *rules = gl_malloc((nd ? nd : 1) * sizeof *rules);
        bool *acc = gl_malloc((nd ? nd : 1) * sizeof *acc);
        uint32_t m = fix__select(view.diags.items, nd, fo.unsafe, fo.rule, fixes, rules);
        uint32_t k = fix__apply(now.data ? now.data : "", now.len, fixes, m, &next, acc);
        uint32_t per_rule[RULE_COUNT] = {0}, nfixed = 0;
        for (uint32_t i = 0; i < m; i++)
            if (acc[i]) {
                nfixed++;
                if (rules[i] >= 0 && rules[i] < RULE_COUNT) per_rule[rules[i]]++;
            }
        gl_free(fixes);
        gl_free(rules);
        gl_free(acc);
        /* nothing applicable was well-formed, or the edits change nothing: another pass would
         * see the same findings */
        if (k == 0 || (next.len == now.len && !memcmp(next.data ? next.data : "", now.data ? now.data : "", now.len)))
            break;
        LintResult after;
        rc = lint(path, next.data ? next.data : "", next.len, lang, lo, &after);
        if (rc < 0) {
            lint_result_free(&cur);
            sb_free(&now);
            sb_free(&next);
            fix__free_keys(&bad);
            memset(out, 0, sizeof *out);
            return rc;
        }
        if (after.n_syntax_errors > base_errors && lang == LANG_CXX) {
            lint_result_free(&after);
            if (m > 1 && !single) { /* again, one fix at a time */
                single = true;
                continue;
            }
            for (uint32_t i = 0; i < view.diags.len; i++) { /* the one fix of this pass fails: skip it */
                const Diag *d = &view.diags.items[i];
                if (!fix_applicable(d->fix, fo.unsafe) || (fo.rule != RULE_NONE && d->rule != fo.rule)) continue;
                char *key = arena_printf(&cur.arena, "%d:%s", d->rule, d->message ? d->message : "");
                strmap_put(&bad, gl_strdup(key), strlen(key), 1);
                if (!out->dropped++)
                    snprintf(out->error, sizeof out->error, "the fix of %s at %u:%u would not compile: not applied",
                             rule_info((RuleId)d->rule)->code, d->span.row + 1, d->span.col + 1);
                break;
            }
            continue;
        }
        if (after.n_syntax_errors > base_errors) {
            char which[128];
            fix__rules_of(&cur, &fo, which, sizeof which);
            if (base_errors)
                /* the parser's recovery around an existing error is not stable under edits: the
                 * fixed text parsing with more errors says nothing about the fix */
                snprintf(out->error, sizeof out->error,
                         "fixes (%s) not applied: the file has a syntax error, and the fixed text would "
                         "parse differently around it; fix the syntax error first",
                         which[0] ? which : "?");
            else
                snprintf(out->error, sizeof out->error,
                         "a fix (%s) introduced a syntax error; reverting all changes. This is a bug in gradleak "
                         GL_VERSION ": please report it with the file",
                         which[0] ? which : "?");
            lint_result_free(&after);
            lint_result_free(&cur);
            sb_free(&now);
            sb_free(&next);
            fix__free_keys(&bad);
            out->reverted = base_errors == 0;
            out->declined = base_errors != 0;
            out->applied = 0;
            out->passes = 0;
            memset(out->n_rules_fixed, 0, sizeof out->n_rules_fixed);
            out->src = gl_malloc(len + 1);
            memcpy(out->src, src, len);
            out->src[len] = 0;
            out->len = len;
            rc = lint(path, out->src, len, lang, lo, &out->lint);
            if (rc < 0) {
                gl_free(out->src);
                memset(out, 0, sizeof *out);
                return rc;
            }
            return 0;
        }
        out->applied += nfixed;
        for (int r = 0; r < RULE_COUNT; r++) out->n_rules_fixed[r] += per_rule[r];
        out->passes++;
        lint_result_free(&cur);
        cur = after;
        StrBuf t = now;
        now = next;
        next = t;
    }
    sb_free(&next);
    fix__free_keys(&bad);
    out->lint = cur;
    out->len = now.len;
    out->src = now.data ? sb_take(&now) : gl_strndup("", 0);
    out->changed = out->len != len || memcmp(out->src, src, len) != 0;
    return 0;
}

void fix_outcome_free(FixOutcome *r)
{
    gl_free(r->src);
    lint_result_free(&r->lint);
    memset(r, 0, sizeof *r);
}
