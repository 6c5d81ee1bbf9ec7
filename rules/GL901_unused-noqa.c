/* GL901 unused-noqa: a `# noqa` comment that suppresses nothing.
 *
 * ## What it does
 * Flags `# noqa` and `# noqa: GL101` comments on lines where no finding (of the named codes) is
 * reported. Codes of rules that did not run (deselected) are not reported.
 *
 * ## Why is this bad?
 * A stale suppression hides the next real finding on that line, and tells readers a hazard is
 * there when it is not.
 *
 * ## Example
 * ```python
 * total += loss.item()  # noqa: GL101
 * ```
 *
 * Use instead:
 * ```python
 * total += loss.item()
 * ```
 *
 * ## Fix safety
 * The fix removes the unused gradleak codes from the list and keeps the used ones and other
 * linters' codes (`# noqa: F401, GL301` becomes `# noqa: F401`); the whole directive goes when
 * nothing is left. It is safe: what the comment suppresses does not change.
 *
 * ## References
 * - https://docs.astral.sh/ruff/rules/unused-noqa/
 */
#include <ctype.h>
#include "base/strbuf.h"
#include "rules/rule.h"

/* GL901 runs after suppressions (RF_AFTER_NOQA): c->noqa holds the file's suppression comments with
 * the codes that suppressed something marked used. */

/* GL901's fix: drop the unused gradleak codes from the noqa's list, keeping the used ones and other
 * linters' codes (`# noqa: F401, GL301` -> `# noqa: F401`); the whole directive goes (with the
 * blanks before it) only when nothing is left. */
static Fix *gl901__fix(RuleCtx *c, const Noqa *q)
{
    const IrModule *m = c->m;
    Arena *arena = c->arena;
    const char *text = m->src + q->span.start, *end = m->src + q->span.end;
    /* the noqa's own `#` (it may follow other comment text) and the start of its code list */
    const char *hash, *list;
    noqa_find_list(text, end, &hash, &list);
    StrBuf kept;
    sb_init(&kept);
    const char *p = list, *list_end = list;
    while (p) {
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        const char *t = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
        if (p == t) break;
        /* the list ends at a word that is not code-shaped (letters then digits): `GL301 because` */
        if (!noqa_code_like(t, p)) break;
        list_end = p;
        char buf[64];
        size_t len = (size_t)(p - t) < sizeof buf - 1 ? (size_t)(p - t) : sizeof buf - 1;
        memcpy(buf, t, len);
        buf[len] = 0;
        const RuleInfo *ri = rule_by_code(buf);
        bool unused = false;
        for (uint32_t j = 0; ri && j < q->n_codes; j++)
            if (q->codes[j] == ri->id) {
                unused = !q->used[j] && c->enabled->on[ri->id];
                break;
            }
        if (!unused) sb_printf(&kept, "%s%.*s", kept.len ? ", " : " ", (int)(p - t), t);
        while (p < end && (*p == ' ' || *p == '\t')) p++;
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

void rule_GL901(RuleCtx *c)
{
    for (uint32_t k = 0; k < c->n_noqa; k++) {
        const Noqa *q = &c->noqa[k];
        /* a bare `# noqa` may be for flake8 or ruff: only gradleak codes can be called unused */
        if (q->file_level || q->foreign || !q->n_codes) continue;
        StrBuf unused;
        sb_init(&unused);
        for (uint32_t j = 0; j < q->n_codes; j++) {
            /* only codes whose rule ran can be called unused */
            if (q->used[j] || !c->enabled->on[q->codes[j]]) continue;
            sb_printf(&unused, "%s%s", unused.len ? ", " : "", rule_info(q->codes[j])->code);
        }
        if (unused.len) {
            Diag *d = rule_report(c, q->span, rule_info(c->rule)->severity,
                                  "Unused `noqa` directive (%s suppresses nothing on this line)", unused.data);
            d->hint = "Remove the unused suppression";
            d->fix = gl901__fix(c, q);
        }
        sb_free(&unused);
    }
}
