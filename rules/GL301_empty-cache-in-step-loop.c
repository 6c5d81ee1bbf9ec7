/* GL301 empty-cache-in-step-loop: `torch.cuda.empty_cache()` in code that runs every step.
 *
 * ## What it does
 * Flags `torch.cuda.empty_cache()` inside a training or evaluation step loop, inside a loop of a
 * Module's `forward`, or in a function the same file calls from a step loop.
 *
 * ## Why is this bad?
 * `empty_cache()` returns the caching allocator's free blocks to the driver. It cannot free
 * memory that tensors still hold, so it never lowers peak memory or fixes a leak; it only makes
 * the next allocations slow (cudaMalloc again) and synchronizes the device. Once per step it
 * costs throughput for nothing. Once per epoch, or after training, is fine.
 *
 * ## Example
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward()
 *     optimizer.step()
 *     torch.cuda.empty_cache()
 * ```
 *
 * Use instead:
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward()
 *     optimizer.step()
 * torch.cuda.empty_cache()  # once, if another process needs the memory
 * ```
 *
 * ## Fix safety
 * No automatic fix: where the call should go (if anywhere) depends on why it was added.
 *
 * ## References
 * - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
 * - https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html
 */
#include "engine/rule_ctx.h"

void rule_GL301(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL || !o->qual || strcmp(o->qual, "torch.cuda.empty_cache") != 0) continue;
            uint32_t loop;
            if (!rule_runs_per_step(c, f, i, &loop)) continue;
            Diag *d;
            if (loop != IR_NONE) {
                const IrLoop *l = &f->loops.items[loop];
                d = rule_report(c, o->span, SEV_WARNING,
                                "`torch.cuda.empty_cache()` runs every iteration of the %s loop at line %u: it "
                                "synchronizes and slows each step and cannot lower peak memory",
                                df_loop_kind_name(l->kind), rule_line(l->span));
                rule_related(c, d, l->span, "the %s loop", df_loop_kind_name(l->kind));
            } else {
                d = rule_report(c, o->span, SEV_WARNING,
                                "`torch.cuda.empty_cache()` runs every step: `%s` is called from a training "
                                "loop; it synchronizes and slows each step and cannot lower peak memory",
                                f->qualname);
            }
            rule_hint(c, d, "Remove it, or call it once per epoch or after training");
        }
    }
}
