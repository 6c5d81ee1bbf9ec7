/* GL103 recurrent-state-not-detached: model output fed back as input across training steps.
 *
 * ## What it does
 * Flags a model call inside a training loop (one that calls `backward()`) when one of its inputs is
 * the model's own output from the previous iteration, not detached: the hidden state of truncated
 * backpropagation through time carried from batch to batch.
 *
 * ## Why is this bad?
 * The hidden state links each batch's graph to the previous one. Without `retain_graph=True` the
 * second `backward()` fails ("Trying to backward through the graph a second time"); with it,
 * every batch's graph is kept and backward walks all of them: memory and step time grow every step
 * (measured: +35.6 MB per step and 37 -> 117 ms per step on an H200; flat and 5 ms with
 * `h = h.detach()`).
 *
 * ## Example
 * ```python
 * hidden = model.init_hidden(batch_size)
 * for x, y in loader:
 *     output, hidden = model(x, hidden)
 *     loss = criterion(output, y)
 *     loss.backward(retain_graph=True)
 * ```
 *
 * Use instead:
 * ```python
 * hidden = model.init_hidden(batch_size)
 * for x, y in loader:
 *     hidden = repackage_hidden(hidden)  # h.detach(), also for (h, c) tuples
 *     output, hidden = model(x, hidden)
 *     loss = criterion(output, y)
 *     loss.backward()
 * ```
 *
 * ## Fix safety
 * No automatic fix: LSTM states are tuples, and where the truncation should happen is a modelling
 * choice.
 *
 * ## References
 * - https://github.com/pytorch/examples/blob/main/word_language_model/main.py (repackage_hidden)
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
 */
#include "engine/rule_ctx.h"

void rule_GL103(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !df_is_module_call(c->fx, f, i)) continue;
            const IrOp *o = &f->ops.items[i];
            for (uint32_t k = 0; k < o->nargs; k++) {
                uint32_t a = f->args.items[o->args + k];
                const AVal *v = &ff->val[a];
                if (v->carried == IR_NONE || v->carried == CARRIED_CALLS || !(v->flags & VF_MODEL_OUT) || GL_MAX(v->grad, v->elem) < G_POST)
                    continue;
                const IrLoop *l = &f->loops.items[v->carried];
                if (l->kind != LOOP_STEP || !l->has_backward) continue;
                const char *name = rule_text(c, f, a);
                Diag *d = rule_report(c, o->span, SEV_ERROR,
                                      "'%s' is the model's output from the previous step, fed back without "
                                      "detach(): each step's graph stays linked to the last, across the training "
                                      "loop at line %u",
                                      name, rule_line(l->span));
                d->growth = GROWTH_DEVICE;
                d->loop_line = rule_line(l->span);
                rule_related(c, d, l->span, "the training loop that carries '%s'", name);
                rule_hint(c, d, "Detach it at the start of each step: `%s = %s.detach()` (or repackage_hidden() for tuples)",
                          name, name);
                break;
            }
        }
    }
}
