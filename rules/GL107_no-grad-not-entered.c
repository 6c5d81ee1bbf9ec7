/* GL107 no-grad-not-entered: a grad-mode context manager called as a bare statement.
 *
 * ## What it does
 * Flags `torch.no_grad()`, `torch.inference_mode()` and `torch.enable_grad()` written as a
 * statement on their own instead of as the expression of a `with` block or a decorator
 * (`torch.enable_grad()` only where grad is off: with grad on, the default, it changes nothing).
 * A decorator applied inline, `torch.no_grad()(self.one_epoch)(False)`, is not flagged, and the
 * function it wraps counts as called with grad off (GL104, GL108).
 *
 * ## Why is this bad?
 * These are context managers. Calling one creates the object and throws it away: grad mode does
 * not change, so the code that follows still records an autograd graph. In an evaluation or
 * sampling loop that graph is kept alive by whatever holds the outputs, and memory grows every
 * iteration. (`torch.set_grad_enabled(False)` is different: it is also a function and works as a
 * statement, so it is not flagged.)
 *
 * ## Example
 * ```python
 * torch.no_grad()
 * for x, y in val_loader:
 *     val_loss += criterion(model(x), y)
 * ```
 *
 * Use instead:
 * ```python
 * with torch.no_grad():
 *     for x, y in val_loader:
 *         val_loss += criterion(model(x), y)
 * ```
 *
 * ## Fix safety
 * No automatic fix: the statements that should run under the context have to be chosen by hand.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.no_grad.html
 * - https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
 */
#include "rules/rule.h"

void rule_GL107(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL || !(o->flags & IR_F_STMT) || !o->qual) continue;
            /* `torch.no_grad()(self.one_epoch)(False)`: the context used as a decorator, inline */
            if (o->a != IR_NONE && f->ops.items[o->a].kind == IR_CALL) continue;
            const char *q = o->qual;
            const char *what = NULL;
            if (!strcmp(q, "torch.no_grad") || !strcmp(q, "torch.autograd.no_grad")) what = "torch.no_grad()";
            else if (!strcmp(q, "torch.inference_mode")) what = "torch.inference_mode()";
            else if (!strcmp(q, "torch.enable_grad") || !strcmp(q, "torch.autograd.enable_grad")) {
                /* with grad already on (the default) the bare call changes nothing that matters */
                if (!df_mode_off(o->mode)) continue;
                Diag *d = rule_report(c, o->span, SEV_ERROR,
                                      "`torch.enable_grad()` is called as a statement and has no effect: grad stays off "
                                      "here, so what follows records no graph and a backward through it fails");
                rule_hint(c, d, "Use it as a context manager: `with torch.enable_grad():` around the code it should cover");
                continue;
            }
            if (!what) continue;
            Diag *d = rule_report(c, o->span, SEV_ERROR,
                                  "`%s` is called as a statement and has no effect: grad mode is unchanged, "
                                  "so the code after it still builds an autograd graph", what);
            rule_hint(c, d, "Use it as a context manager: `with %s:` around the code it should cover", what);
        }
    }
}
