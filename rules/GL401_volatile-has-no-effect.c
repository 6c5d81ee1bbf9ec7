/* GL401 volatile-has-no-effect: `Variable(..., volatile=...)` is ignored since PyTorch 0.4.
 *
 * ## What it does
 * Flags every `Variable(...)` (`torch.autograd.Variable`, `autograd.Variable`) call that passes
 * the `volatile` keyword.
 *
 * ## Why is this bad?
 * `volatile=True` was how pre-0.4 code switched off graph construction for inference. Since
 * PyTorch 0.4 the flag is ignored (with a warning), so the graph IS built: code ported from old
 * tutorials that relies on it keeps every sampling step's graph alive and runs out of memory.
 *
 * ## Example
 * ```python
 * x = Variable(seed.view(1, 1, -1), volatile=True)
 * out, hidden = model(x, hidden)
 * ```
 *
 * Use instead:
 * ```python
 * with torch.no_grad():
 *     out, hidden = model(seed.view(1, 1, -1), hidden)
 * ```
 *
 * ## Fix safety
 * No automatic fix: the `no_grad` block has to cover the code that used the volatile variable.
 *
 * ## References
 * - https://pytorch.org/blog/pytorch-0_4_0-migration-guide/
 */
#include "rules/rule.h"

void rule_GL401(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL) continue;
            uint32_t v = ir_call_kwarg(f, i, "volatile");
            if (v == IR_NONE) continue;
            const char *q = o->qual ? strrchr(o->qual, '.') : NULL;
            q = q ? q + 1 : o->qual;
            const char *name = q ? q : ir_call_method(f, i);
            if (!name || strcmp(name, "Variable") != 0) continue;
            Diag *d = rule_report(c, f->ops.items[v].span, SEV_ERROR,
                                  "`volatile=` is ignored since PyTorch 0.4: this Variable still records an "
                                  "autograd graph");
            rule_hint(c, d, "Remove `volatile=` and run the inference code under `with torch.no_grad():`");
        }
    }
}
