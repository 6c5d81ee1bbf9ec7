/* GL106 create-graph-backward: `backward(create_graph=True)` without resetting `.grad`.
 *
 * ## What it does
 * Flags `backward(create_graph=True)` in a function that never resets gradients
 * (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`).
 *
 * ## Why is this bad?
 * With `create_graph=True` the gradients stored in `.grad` carry a graph that references the
 * parameters: a reference cycle between each parameter and its gradient. PyTorch's documentation
 * warns that it leaks memory unless the `.grad` fields are reset to `None` after use.
 * `torch.autograd.grad(..., create_graph=True)` returns the gradients instead and avoids it.
 *
 * ## Example
 * ```python
 * loss.backward(create_graph=True)
 * penalty = sum((p.grad ** 2).sum() for p in model.parameters())
 * ```
 *
 * Use instead:
 * ```python
 * grads = torch.autograd.grad(loss, model.parameters(), create_graph=True)
 * penalty = sum((g ** 2).sum() for g in grads)
 * ```
 *
 * ## Fix safety
 * No automatic fix.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
 * - https://pytorch.org/docs/stable/generated/torch.autograd.grad.html
 */
#include "rules/rule.h"

void rule_GL106(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        if (ff->calls_zero_grad) continue;
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !df_is_backward_call(f, i)) continue;
            const char *m = ir_call_method(f, i);
            if (!m || strcmp(m, "backward") != 0) continue; /* autograd.grad is the recommended form */
            if (!ir_const_true(f, ir_call_kwarg(f, i, "create_graph"))) continue;
            Diag *d = rule_report(c, f->ops.items[i].span, SEV_WARNING,
                                  "%s makes each parameter's .grad reference the "
                                  "parameter (a reference cycle), and '%s' never resets .grad",
                                  c->cxx ? "backward() with create_graph=true" : "backward(create_graph=True)",
                                  rule_func_name(c, f->qualname));
            d->growth = GROWTH_HOST;
            if (c->cxx)
                rule_hint(c, d, "Use torch::autograd::grad(..., /*create_graph=*/true), or reset each parameter's "
                                "grad after use (`p.mutable_grad() = torch::Tensor();`)");
            else
                rule_hint(c, d, "Use torch.autograd.grad(..., create_graph=True), or set p.grad = None after use");
        }
    }
}
