/* GL402 retain-variables-removed: `backward(retain_variables=...)` was removed.
 *
 * ## What it does
 * Flags `.backward(retain_variables=...)` and `torch.autograd.backward(..., retain_variables=...)`.
 *
 * ## Why is this bad?
 * The keyword was renamed to `retain_graph` in PyTorch 0.4 and later removed: current PyTorch
 * raises `TypeError` on it, so the code does not run at all.
 *
 * ## Example
 * ```python
 * fw_loss.backward(retain_variables=True)
 * ```
 *
 * Use instead:
 * ```python
 * fw_loss.backward(retain_graph=True)
 * ```
 *
 * ## Fix safety
 * The fix renames the keyword and is safe: `retain_graph` has the meaning `retain_variables` had.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
 */
#include "rules/rule.h"

void rule_GL402(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!df_is_backward_call(f, i)) continue;
            uint32_t v = ir_call_kwarg(f, i, "retain_variables");
            if (v == IR_NONE) continue;
            const IrOp *o = &f->ops.items[i];
            Diag *d = rule_report(c, o->span, SEV_ERROR,
                                  "`retain_variables=` was removed from backward(): this call raises TypeError; "
                                  "the keyword is `retain_graph`");
            rule_hint(c, d, "Rename `retain_variables` to `retain_graph`");
            /* the keyword name sits just before its value: find "retain_variables" in the call */
            const char *src = c->m->src;
            uint32_t vs = f->ops.items[v].span.start;
            for (uint32_t k = o->span.start; k + 16 <= vs; k++)
                if (!memcmp(src + k, "retain_variables", 16)) {
                    rule_fix(c, d, FIX_SAFE, "Rename to `retain_graph`", k, k + 16, "retain_graph");
                    break;
                }
        }
    }
}
