/* Applying fixes: the edits of findings' fixes to a source buffer, re-linted and reapplied to a
 * fixed point. Used by `check --fix/--diff`, the LSP's fix-all action and the validation runner.
 *
 * Guarantees (ruff's, DESIGN.md §5):
 * - only the bytes inside edits change: BOM, line endings and everything else stay byte for byte;
 * - fixes never overlap: a fix whose edits touch an accepted fix's range waits for the next pass;
 * - passes repeat (lint, apply) until no applicable fix is left, at most FIX_MAX_PASSES times;
 * - if a pass leaves more syntax errors than the input had, every change is reverted and the
 *   outcome says so: `reverted` when the input parsed cleanly (the fix is a bug in gradleak, not
 *   in the user's code), `declined` when the input already had a syntax error (the parser's
 *   recovery around it moves under edits, so the user is asked to fix the syntax first).
 *
 * Typical use (a whole file, as `check --fix` does):
 *
 *     FixOptions fo = {.unsafe = false};
 *     FixOutcome r;
 *     if (fix_file(path, src, len, LANG_PYTHON, &lint_opts, &fo, &r) == 0) {
 *         if (r.reverted || r.declined) report(r.error);
 *         else if (r.changed) write(r.src, r.len);   // r.lint = the findings left in r.src
 *         fix_outcome_free(&r);
 *     }
 *
 * One finding's fix only (a code action, the validation runner's "run it fixed"):
 *
 *     const Fix *one = d->fix;
 *     StrBuf out; sb_init(&out);
 *     fix_apply(src, len, &one, 1, &out);          // out holds the edited bytes */
#ifndef GL_FIX_H
#define GL_FIX_H

#include "base/strbuf.h"
#include "engine/engine.h"

/* Passes before fix_file gives up (ruff uses 100). Each pass is one lint of the file. */
#define FIX_MAX_PASSES 100

/* Is fx applied in this mode? Safe fixes always, unsafe ones only with unsafe set. */
bool fix_applicable(const Fix *fx, bool unsafe);

/* Applies fixes[0..n) (any order; each fix's edits sorted by start) to src[0..len), appending the
 * result to out. Fixes are taken in source order; a fix whose first edit starts before the end of
 * an accepted fix's last edit, whose edits are unsorted or overlap each other, or whose ranges lie
 * outside src is skipped. Returns how many fixes were applied. Pure text: nothing is parsed. */
uint32_t fix_apply(const char *src, size_t len, const Fix *const *fixes, uint32_t n, StrBuf *out);

/* The same for the applicable fixes (fix_applicable) of diags[0..n); a rule (not RULE_NONE) restricts it to
 * that rule's findings. Returns how many fixes were applied. */
uint32_t fix_apply_diags(const char *src, size_t len, const Diag *diags, uint32_t n, bool unsafe, RuleId rule,
                         StrBuf *out);

/* What lints each pass; NULL in FixOptions means engine_lint. A test hook (tests inject a linter
 * whose fix breaks the syntax), and the seam for a caller with its own lint (the LSP). */
typedef int (*FixLintFn)(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                         LintResult *out);

typedef struct FixOptions {
    bool unsafe;         /* apply unsafe fixes too (--unsafe-fixes) */
    RuleId rule;         /* only this rule's fixes; RULE_NONE (the default) for every rule */
    uint32_t max_passes; /* 0 = FIX_MAX_PASSES */
    FixLintFn lint;      /* NULL = engine_lint */
} FixOptions;

void fix_options_default(FixOptions *fo); /* safe only, every rule, FIX_MAX_PASSES, engine_lint */

/* The result of fix_file. Owns its memory: free with fix_outcome_free. */
typedef struct FixOutcome {
    char *src;         /* the final bytes (the input's copy when nothing changed or on revert) */
    size_t len;
    LintResult lint;   /* findings of src as returned, suppressions applied */
    uint32_t applied;  /* fixes applied over all passes (0 after a revert) */
    uint32_t passes;   /* passes that applied something */
    uint32_t n_rules_fixed[RULE_COUNT]; /* applied fixes per rule (all 0 after a revert) */
    bool changed;      /* src differs from the input */
    bool reverted;     /* a pass broke the syntax: everything was undone (a bug); see error */
    bool declined;     /* the input had a syntax error and a pass parsed with more: everything
                        * was undone, and error says to fix the syntax first (not a bug) */
    bool capped;       /* stopped after max_passes with fixes still applicable */
    char error[256];   /* why it was reverted ("" otherwise); C++: the first fix dropped */
    uint32_t dropped;  /* C++: fixes not applied because the file no longer parsed with them (a
                        * type the analysis could not see); the other fixes stand */
} FixOutcome;

/* Lints src[0..len), applies the applicable fixes, re-lints, and repeats to a fixed point.
 * Returns 0 (with *out filled, even when nothing applied), or a negative error code when the
 * linter failed (out is then empty and needs no free). */
int fix_file(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *lo,
             const FixOptions *fo, FixOutcome *out);
void fix_outcome_free(FixOutcome *r);

#endif
