/* GL105 retain-graph-in-loop: `backward(retain_graph=True)` that no later backward needs.
 *
 * ## What it does
 * Flags `loss.backward(retain_graph=True)` inside a training loop when no later `backward()` (or
 * `torch.autograd.grad`) in the same iteration uses the graph. It is an error when the loop also
 * carries a model output into the next step (the usual "backward through the graph a second time"
 * workaround): then every step's graph is retained.
 *
 * ## Why is this bad?
 * `retain_graph=True` keeps the saved tensors after backward. Needed when two backwards share one
 * graph (a GAN's generator and discriminator losses, multi-task losses); otherwise it holds a
 * step's activations until the graph is dropped, and if the graph is linked to the next step it
 * is never dropped (measured: +35.6 MB per step with a carried hidden state).
 *
 * ## Example
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward(retain_graph=True)
 *     optimizer.step()
 * ```
 *
 * Use instead:
 * ```python
 * for x, y in loader:
 *     loss = criterion(model(x), y)
 *     loss.backward()
 *     optimizer.step()
 * ```
 *
 * ## Fix safety
 * The fix removes `retain_graph=True`. It is unsafe: the graph may be shared with a value computed
 * before the loop (each iteration's backward then needs it) or backpropagated again after the
 * loop, and when the loop carries state into the next step, dropping `retain_graph` alone makes
 * the second step raise "Trying to backward through the graph a second time" until the state is
 * detached (GL103's fix).
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html
 */
#include "rules/rule.h"

void rule_GL105(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !df_is_backward_call(f, i)) continue;
            /* torch.autograd.grad(..., retain_graph=True) is how Hessians and penalties are built:
             * only backward() is in scope */
            const char *mname = ir_call_method(f, i);
            if (!(mname && !strcmp(mname, "backward")) && !(f->ops.items[i].qual && !strcmp(f->ops.items[i].qual, "torch.autograd.backward")))
                continue;
            if (!ir_const_true(f, ir_call_kwarg(f, i, "retain_graph"))) continue;
            uint32_t loop = ir_op_loop(f, i), step = IR_NONE, outer = IR_NONE;
            for (uint32_t k = loop; k != IR_NONE; k = f->loops.items[k].parent)
                if (f->loops.items[k].kind == LOOP_STEP) {
                    if (step == IR_NONE) step = k;
                    outer = k;
                }
            if (step == IR_NONE) continue;
            /* in a loop nested in the step (per-head backwards), the next inner iteration's backward
             * needs the graph */
            if (loop != step || outer != step) continue;
            const IrLoop *l = &f->loops.items[step];
            bool later = false;
            for (uint32_t j = i + 1; j < l->end && !later; j++)
                if (df_is_backward_call(f, j) && ff->reached[j]) later = true;
            if (later) continue;
            /* does the loop carry a model output into the next step? */
            bool carried = false;
            uint32_t carried_op = IR_NONE;
            for (uint32_t j = l->op + 1; j < l->end && !carried; j++) {
                if (!df_is_module_call(c->fx, f, j)) continue;
                const IrOp *call = &f->ops.items[j];
                for (uint32_t k = 0; k < call->nargs && !carried; k++) {
                    uint32_t a = f->args.items[call->args + k];
                    const AVal *v = &ff->val[a];
                    if (v->carried == step && (v->flags & VF_MODEL_OUT) && GL_MAX(v->grad, v->elem) >= G_POST)
                        carried = true, carried_op = a;
                }
            }
            Diag *d = rule_report(c, f->ops.items[i].span, carried ? SEV_ERROR : SEV_WARNING,
                                  carried ? "%s retains a graph that the loop at line %u "
                                            "links to the next step: every step's graph is kept"
                                          : "%s in the loop at line %u, but no later "
                                            "backward in the iteration needs the graph: its saved tensors are kept "
                                            "for nothing",
                                  c->cxx ? "backward() with retain_graph=true" : "backward(retain_graph=True)",
                                  rule_line(l->span));
            d->growth = carried ? GROWTH_DEVICE : GROWTH_NONE;
            d->loop_line = rule_line(l->span);
            rule_related(c, d, l->span, "the training loop");
            rule_trace(c, d, "retain_graph=%s is the last backward() of an iteration of the step loop at line %u",
                       rule_true(c), rule_line(l->span));
            if (carried_op != IR_NONE) rule_trace_value(c, d, f, "carried input", carried_op, &ff->val[carried_op]);
            else rule_trace(c, d, "no model input is carried from one step into the next");
            if (c->cxx)
                rule_hint(c, d, carried ? "Detach the carried state each step and call backward() without "
                                          "retain_graph=true"
                                        : "Call backward() without retain_graph=true");
            else
                rule_hint(c, d, carried ? "Detach the carried state each step and drop retain_graph=True"
                                        : "Drop retain_graph=True");
            uint32_t rs, re;
            if (rule_kwarg_removal(c, f, i, ir_call_kwarg(f, i, "retain_graph"), &rs, &re))
                rule_fix(c, d, FIX_UNSAFE, "Remove `retain_graph=True`", rs, re, "");
        }
    }
}
