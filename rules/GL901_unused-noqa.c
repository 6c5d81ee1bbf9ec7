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
#include "rules/rule.h"

/* GL901 is computed by the suppression pass (src/engine/suppress.c), after every other rule. */
void rule_GL901(RuleCtx *c) { GL_UNUSED(c); }
