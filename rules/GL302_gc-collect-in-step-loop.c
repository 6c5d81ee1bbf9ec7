/* GL302 gc-collect-in-step-loop: `gc.collect()` in code that runs every step.
 *
 * ## What it does
 * Flags `gc.collect()` inside a training or evaluation step loop, inside a loop of a Module's
 * `forward` (it then runs once per time step), or in a function called from a step loop.
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
 * No automatic fix.
 *
 * ## References
 * - https://docs.python.org/3/library/gc.html#gc.collect
 * - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
 */
#include "engine/rule_ctx.h"

void rule_GL302(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL || !o->qual || strcmp(o->qual, "gc.collect") != 0) continue;
            uint32_t loop;
            if (!rule_runs_per_step(c, f, i, &loop)) continue;
            Diag *d;
            if (loop != IR_NONE) {
                const IrLoop *l = &f->loops.items[loop];
                d = rule_report(c, o->span, SEV_WARNING,
                                "`gc.collect()` runs every iteration of the %s loop at line %u%s: a full "
                                "collection each time, and it cannot free a graph that is still referenced",
                                df_loop_kind_name(l->kind), rule_line(l->span),
                                l->in_module_method ? " (inside a Module method, so every step)" : "");
                rule_related(c, d, l->span, "the %s loop", df_loop_kind_name(l->kind));
            } else {
                d = rule_report(c, o->span, SEV_WARNING,
                                "`gc.collect()` runs every step: `%s` is called from a training loop", f->qualname);
            }
            rule_hint(c, d, "Remove it; if memory grows, find what keeps the graph alive");
        }
    }
}
