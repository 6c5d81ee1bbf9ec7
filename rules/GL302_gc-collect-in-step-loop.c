/* GL302 gc-collect-in-step-loop: `gc.collect()` in code that runs every step.
 *
 * ## What it does
 * Flags `gc.collect()` inside a training or evaluation step loop, inside a loop of a Module's
 * `forward` (it then runs once per time step), or in a function called from a step loop (with the
 * files linted together, of another file too, and the `__call__` of an object called so).
 *
 * ## Why is this bad?
 * A full garbage collection walks every Python object; with a model and its optimizer that takes
 * milliseconds, every step. It frees nothing that reference counting would not free already,
 * unless the code has reference cycles, and it never frees a graph that is still referenced (an
 * accumulated loss, a stored output): the real leaks survive it.
 *
 * ## Example
 * ```python
 * for t in range(seq_len):
 *     hidden = cell(x[t], hidden)
 *     outputs += [hidden]
 *     gc.collect()
 * ```
 *
 * Use instead:
 * ```python
 * for t in range(seq_len):
 *     hidden = cell(x[t], hidden)
 *     outputs += [hidden]
 * ```
 *
 * ## Fix safety
 * The fix deletes the call (or puts `pass` in its place when it is the only statement of its
 * block). It is unsafe: objects in reference cycles (tensors among them) are then freed only when
 * Python's own collector runs, later than before; move the call after the loop by hand if it is
 * needed once.
 *
 * ## References
 * - https://docs.python.org/3/library/gc.html#gc.collect
 * - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
 */
#include "rules/rule.h"

void rule_GL302(RuleCtx *c)
{
    static const PerStepText text = {
        "gc.collect()",
        "a full collection each time, and it cannot free a graph that is still referenced",
        true,
        "",
        "Remove it; if memory grows, find what keeps the graph alive",
    };
    rule_report_per_step_calls(c, "gc.collect", &text);
}
