/* GL103 recurrent-state-not-detached: model output fed back as input across training steps.
 *
 * ## What it does
 * Flags a model call inside a training loop (one that calls `backward()`, or a function of the
 * file that trains: an agent's replay update between environment steps) when one of its inputs is
 * the model's own output from the previous iteration, not detached: the hidden state of truncated
 * backpropagation through time carried from batch to batch, or an agent's recurrent state carried
 * from step to step (`action, hidden = net.act(obs, eps, hidden)`, a method of the model's class
 * that returns the new state). A state passed through a method of the
 * model whose class the function never names (`hidden = model.repackage_hidden(hidden)`) is judged
 * by that method's summary when the file or a module it names defines it; a first state made by
 * the model (`init_hidden`, `begin_state`, LibTorch's `net->begin_state(n, device)` too) is fresh.
 * A state cut in the branch that runs the update (`if t % T == 0 or done: h = h.detach();
 * loss.backward()`, `h.detach_()` too) links at most T steps and is not flagged; one cut only where
 * no update runs (`if done:` while every step calls backward) still is.
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
 * The fix detaches the state where it is fed back: `model(x, hidden)` becomes
 * `model(x, hidden.detach())` (each element for a tuple written in the call, `(h, c)`; a
 * `tuple(...)`/`.detach()` choice at run time when the state's type is not known, and `None` passed
 * on as it is when the function starts the state as `None`, the model's own zero state). It is unsafe:
 * it truncates backpropagation through time at every step, which changes the gradients whenever
 * the code meant to backpropagate across steps, and where the truncation belongs is a modelling
 * choice. State kept in `self.` attributes by `forward` gets no fix.
 *
 * ## References
 * - https://github.com/pytorch/examples/blob/main/word_language_model/main.py (repackage_hidden)
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
 */
#include "base/strbuf.h"
#include "ir/api.h"
#include "rules/rule.h"

/* Does loop l reset the state of the model held in var (a reset method, a store to an attribute)? */
static bool loop_resets(RuleCtx *c, const IrFunc *f, const IrLoop *l, uint32_t var, const ClassFacts *cf)
{
    for (uint32_t j = l->op + 1; j < l->end; j++) {
        const IrOp *o = &f->ops.items[j];
        if (o->kind == IR_SET_ATTR && o->var != IR_NONE && f->vars.items[o->var].base == var) return true;
        if (o->kind != IR_CALL) continue;
        const char *m = ir_call_method(f, j);
        uint32_t r = ir_call_receiver(f, j);
        if (!m || r == IR_NONE || f->ops.items[r].var != var) continue;
        for (uint32_t k = 0; k < cf->reset_methods.len; k++)
            if (!strcmp(cf->reset_methods.items[k], m)) return true;
        if (strstr(m, "init") || strstr(m, "reset") || strstr(m, "detach") || strstr(m, "repackage")) return true;
    }
    GL_UNUSED(c);
    return false;
}

/* self.<attr> carried by a Module's forward from call to call, with a training loop in this file
 * that calls the model every step and never resets it. */
static void class_state(RuleCtx *c, const IrFunc *f, uint32_t i)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrOp *o = &f->ops.items[i];
    const AVal *cv = &ff->val[o->a];
    if (cv->kind != VK_MODULE || cv->ref == IR_NONE || cv->ref >= c->m->classes.len) return;
    const ClassFacts *cf = &c->fx->classes[cv->ref];
    if (!cf->carried_attrs.len) return;
    uint32_t loop = ir_op_loop(f, i);
    if (loop == IR_NONE) return;
    const IrLoop *l = &f->loops.items[loop];
    if (l->kind != LOOP_STEP || !l->has_backward) return;
    uint32_t var = f->ops.items[o->a].var;
    if (var == IR_NONE || loop_resets(c, f, l, var, cf)) return;
    const IrClass *cls = c->m->classes.items[cv->ref];
    const char *attr = cf->carried_attrs.items[0];
    const char *self = c->cxx ? "this->" : "self.";
    Diag *d = rule_report(c, o->span, SEV_ERROR,
                          "'%s%sforward' feeds '%s%s' from one call into the next without detach(), and the "
                          "training loop at line %u calls it every step without resetting it: each step's graph "
                          "stays linked to the last",
                          cls->name, c->cxx ? "::" : ".", self, attr, rule_line(l->span));
    d->growth = GROWTH_DEVICE;
    d->loop_line = rule_line(l->span);
    if (cls->forward != IR_NONE)
        rule_related(c, d, c->m->funcs.items[cls->forward]->span, "forward() stores %s%s", self, attr);
    rule_related(c, d, l->span, "the training loop");
    rule_trace(c, d, "%s.forward stores %s%s and reads it on the next call (carried across calls); the loop at "
               "line %u calls backward() and does not reset it", cls->name, self, attr, rule_line(l->span));
    rule_trace_value(c, d, f, "model", o->a, cv);
    rule_hint(c, d, c->cxx ? "Detach the state at the start of forward(), or reset it every step (a reset method)"
                           : "Detach the state at the start of forward(), or reset it every step (an init_hidden() method)");
}

/* The detached form of the fed-back argument a: `h.detach()`, `(h.detach(), c.detach())` for a
 * tuple written in the call, or a run-time choice when the state may be a tuple. NULL when a is
 * not a plain name or a tuple of names. */
static const char *detached(RuleCtx *c, const IrFunc *f, uint32_t a)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrOp *o = &f->ops.items[a];
    if (o->span.row != o->span.end_row) return NULL;
    if (o->kind == IR_LOAD) {
        const char *n = rule_text(c, f, a);
        /* `state = None` before the episode: the first call gets None (the model's own zero state) */
        bool none = false;
        for (uint32_t i = 0; i < f->ops.len && !none && o->var != IR_NONE; i++) {
            const IrOp *s = &f->ops.items[i];
            none = s->kind == IR_STORE && s->var == o->var && s->a != IR_NONE && f->ops.items[s->a].kind == IR_CONST &&
                   f->ops.items[s->a].aux == CONST_NONE;
        }
        if (none)
            return arena_printf(c->arena, "(None if %s is None else tuple(s.detach() for s in %s) if isinstance(%s, tuple) else %s.detach())",
                                n, n, n, n);
        if (ff->val[a].kind == VK_TENSOR) return arena_printf(c->arena, "%s.detach()", n);
        return arena_printf(c->arena, "(tuple(s.detach() for s in %s) if isinstance(%s, tuple) else %s.detach())", n, n, n);
    }
    if (o->kind != IR_BUILD || o->aux != BUILD_TUPLE || o->nargs == 0) return NULL;
    StrBuf sb;
    sb_init(&sb);
    sb_putc(&sb, '(');
    for (uint32_t k = 0; k < o->nargs; k++) {
        uint32_t e = f->args.items[o->args + k];
        if (f->ops.items[e].kind != IR_LOAD) {
            sb_free(&sb);
            return NULL;
        }
        sb_printf(&sb, "%s%s.detach()", k ? ", " : "", rule_text(c, f, e));
    }
    sb_puts(&sb, o->nargs == 1 ? ",)" : ")");
    const char *t = arena_strdup(c->arena, sb.data);
    sb_free(&sb);
    return t;
}

static void detach_fix(RuleCtx *c, const IrFunc *f, uint32_t a, Diag *d)
{
    const char *t = detached(c, f, a);
    if (!t) return;
    const Span *s = &f->ops.items[a].span;
    /* a tuple argument's span may leave out its parentheses: replace exactly what the source has */
    bool paren = c->m->src[s->start] == '(' && c->m->src[s->end - 1] == ')';
    if (f->ops.items[a].kind == IR_BUILD && !paren) t = arena_strndup(c->arena, t + 1, strlen(t) - 2);
    rule_fix(c, d, FIX_UNSAFE, arena_printf(c->arena, "Detach '%s' where it is fed back", rule_text(c, f, a)), s->start,
             s->end, t);
}

/* C++: `h = h.detach();`, or for a state packed in a tuple, each of its tensors (std::make_tuple(h,
 * c) in the call: `h = h.detach(); c = c.detach();`). */
static void cxx_detach_hint(RuleCtx *c, const IrFunc *f, uint32_t a, Diag *d)
{
    const IrOp *o = &f->ops.items[a];
    StrBuf sb;
    sb_init(&sb);
    bool tuple = o->kind == IR_BUILD && o->aux == BUILD_TUPLE;
    if (tuple) {
        for (uint32_t k = 0; k < o->nargs; k++) {
            uint32_t e = f->args.items[o->args + k];
            if (f->ops.items[e].kind != IR_LOAD) continue;
            const char *n = rule_text(c, f, e);
            sb_printf(&sb, "%s%s = %s.detach();", sb.len ? " " : "", n, n);
        }
    } else {
        const char *n = rule_text(c, f, a);
        sb_printf(&sb, "%s = %s.detach();", n, n);
    }
    if (sb.len) rule_hint(c, d, "Detach it at the start of each step: `%s`%s", sb.data, tuple ? " (each tensor of the tuple)" : "");
    else rule_hint(c, d, "Detach each tensor of the state at the start of each step");
    sb_free(&sb);
}

/* `for s in state: s.detach_()` in loop l before op `before`: every tensor of the state var holds
 * is detached in place (d2l's idiom for a tuple state). */
static bool detached_item_by_item(const IrFunc *f, const IrLoop *l, uint32_t var, uint32_t before)
{
    for (uint32_t j = l->op + 1; j < before && j < l->end; j++) {
        const IrOp *o = &f->ops.items[j];
        if (o->kind != IR_LOOP || o->aux >= f->loops.len) continue;
        const IrLoop *k = &f->loops.items[o->aux];
        if (k->op + 2 >= k->end) continue;
        const IrOp *nx = &f->ops.items[k->op + 1], *st = &f->ops.items[k->op + 2];
        if (nx->kind != IR_NEXT || nx->a == IR_NONE || f->ops.items[nx->a].kind != IR_LOAD ||
            f->ops.items[nx->a].var != var || st->kind != IR_STORE || st->a != k->op + 1)
            continue;
        for (uint32_t q = k->op + 3; q < k->end; q++) {
            const char *m = f->ops.items[q].kind == IR_CALL ? ir_call_method(f, q) : NULL;
            uint32_t r = m ? ir_call_receiver(f, q) : IR_NONE;
            if (r != IR_NONE && f->ops.items[r].kind == IR_LOAD && f->ops.items[r].var == st->var &&
                (api_method(m).flags & M_DETACH_SELF))
                return true;
        }
    }
    return false;
}

/* Is var cut in loop l where the step's update runs: `hx = hx.detach()` (or `hx.detach_()`) in
 * the branch that calls backward() or steps the optimizer (`if steps % T == 0 or done:`), as
 * truncated BPTT does every T steps? The chain is then bounded by T steps. */
static bool detached_at_update(RuleCtx *c, const IrFunc *f, const IrLoop *l, uint32_t var)
{
    for (uint32_t q = l->op + 1; q < l->end; q++) {
        const IrOp *o = &f->ops.items[q];
        if (o->kind != IR_CALL) continue;
        const char *m = ir_call_method(f, q);
        uint32_t r = m ? ir_call_receiver(f, q) : IR_NONE;
        if (r == IR_NONE || f->ops.items[r].kind != IR_LOAD || f->ops.items[r].var != var) continue;
        bool cut = !strcmp(m, "detach") || (api_method(m).flags & M_DETACH_SELF);
        if (!cut || (!strcmp(m, "detach") && !(q + 1 < l->end && f->ops.items[q + 1].kind == IR_STORE &&
                                               f->ops.items[q + 1].a == q && f->ops.items[q + 1].var == var)))
            continue;
        /* the innermost if around it, inside the loop */
        uint32_t from = l->op + 1, to = l->end;
        int depth = 0;
        for (uint32_t k = q; k-- > l->op + 1;) {
            const IrOp *ko = &f->ops.items[k];
            if (ko->kind == IR_END_IF) depth++;
            else if (ko->kind == IR_IF && depth > 0) depth--;
            else if (ko->kind == IR_IF) {
                from = k;
                for (uint32_t e = q; e < l->end; e++)
                    if (f->ops.items[e].kind == IR_END_IF && f->ops.items[e].aux == ko->aux) { to = e; break; }
                break;
            }
        }
        for (uint32_t k = from; k < to; k++)
            if (df_is_backward_call(f, k) || df_is_optimizer_step(c->fx, f, k)) return true;
    }
    return false;
}

void rule_GL103(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !df_is_module_call(c->fx, f, i)) continue;
            const IrOp *o = &f->ops.items[i];
            uint32_t before = c->out->len;
            class_state(c, f, i);
            if (c->out->len != before) continue;
            for (uint32_t k = 0; k < o->nargs; k++) {
                uint32_t a = f->args.items[o->args + k];
                const AVal *v = &ff->val[a];
                /* a state passed through an imported helper gradleak was not given (repackage_hidden
                 * in utils.py, when train.py is linted alone) is most likely detached there */
                if (v->carried == IR_NONE || v->carried == CARRIED_CALLS || !(v->flags & VF_MODEL_OUT) ||
                    (v->flags & VF_OPAQUE) || GL_MAX(v->grad, v->elem) < G_POST)
                    continue;
                const IrLoop *l = &f->loops.items[v->carried];
                /* the backward may be a function's the loop calls (an agent's replay update
                 * between environment steps): the state's chain then never meets one */
                if (l->kind != LOOP_STEP || !(l->has_backward || l->has_step_call)) continue;
                if (f->ops.items[a].kind == IR_LOAD && detached_item_by_item(f, l, f->ops.items[a].var, i)) continue;
                if (f->ops.items[a].kind == IR_LOAD && detached_at_update(c, f, l, f->ops.items[a].var)) continue;
                const char *name = rule_text(c, f, a);
                Diag *d = rule_report(c, o->span, SEV_ERROR,
                                      "'%s' is the model's output from the previous step, fed back without "
                                      "detach(): each step's graph stays linked to the last, across the training "
                                      "loop at line %u",
                                      name, rule_line(l->span));
                d->growth = GROWTH_DEVICE;
                d->loop_line = rule_line(l->span);
                rule_related(c, d, l->span, "the training loop that carries '%s'", name);
                rule_trace_value(c, d, f, "fed-back input", a, v);
                uint32_t var = f->ops.items[a].var;
                const AVal *back = var != IR_NONE ? df_backedge(ff, v->carried, var) : NULL;
                if (back)
                    rule_trace_value(c, d, f, arena_printf(c->arena, "'%s' at the end of a step", f->vars.items[var].name),
                                     IR_NONE, back);
                if (c->cxx) cxx_detach_hint(c, f, a, d);
                else
                    rule_hint(c, d, "Detach it at the start of each step: `%s = %s.detach()` (or repackage_hidden() "
                                    "for tuples)", name, name);
                detach_fix(c, f, a, d);
                break;
            }
        }
    }
}
