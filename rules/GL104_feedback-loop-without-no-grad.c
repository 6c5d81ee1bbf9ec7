/* GL104 feedback-loop-without-no-grad: a sampling/generation loop that records a graph.
 *
 * ## What it does
 * Flags a model call in a loop that feeds the model's outputs back into the model (sampling,
 * generation, autoregressive evaluation) when the loop never calls `backward()` and runs without
 * `torch.no_grad()` / `torch.inference_mode()`, in the function or in a call of it in the file or
 * in another file linted with it (`with torch.no_grad(): print(sample(model))` silences the
 * sampler, as for GL108). A loop is
 * reported once, at its last call given a fed-back output: the step that makes the state the next
 * iteration reads (`_, h = rnn(x, h)` after `prior(h[-1])` and `decode(z, h[-1])`), preferring a
 * call given the state as the iteration found it over one given what was computed from it
 * (`generator(dec_out)` after `dec_out, state = decoder(tok, state)`). The model may be a parameter,
 * or an attribute of a parameter or of what an object holds (`self.model.decoder(tok, ctx, state)`
 * in a translator object, where `self.model.eval()` or `.parameters()` shows it is a model). Not flagged
 * either: a function that returns the loop's graph to a caller of the file that trains on it (an
 * autoregressive decoder that forward() runs, a trainer's helper summing the loss of sampled
 * sub-models with the state passed from one to the next); GL101 leaves such a sum alone too. Nor a
 * rollout of a recurrent policy that keeps what it computes on its object for the update
 * (`self.log_probs.append(lp)`, or a method of the class that stores what it is given): the
 * update backpropagates through the states fed back. A loop nested in a training loop is part of
 * the step's forward (an unrolled model differentiated below) unless it comes after the
 * iteration's last backward (frames rendered once the step is done). Nor a loop that cuts the state it feeds back
 * every few steps (`if (t + 1) % k == 0: h = h.detach()`): the chain is bounded by k steps. Nor a
 * recurrent model unrolled over the length of the input the function is given (`for i in
 * range(line.size(0)): out, h = rnn(line[i], h)`), its state ending with the loop: that is one
 * forward pass, bounded by the input, and a loop that calls the function per sample is GL108's. A
 * priming loop whose state a generation loop goes on with is flagged; so is a loop over a count
 * (`range(n_chars)`), and one over a parameter's elements (`for x, y in loader:`, a state carried
 * from batch to batch). The model may also be held by a plain helper class (`self.model(x, state)`
 * in a text generator that is no Module), whose own tensor helpers show the loop works on tensors.
 *
 * ## Why is this bad?
 * Each step's output carries its graph, and feeding it back chains every step's graph to the next:
 * nothing is freed until the loop ends, so memory grows with the number of generated steps
 * (measured: +358 KB per 10 sampling steps for a small GRU; flat under `torch.no_grad()`). Long
 * generations run out of memory "erratically".
 *
 * ## Example
 * ```python
 * def sample(model, x, hidden, length):
 *     for _ in range(length):
 *         x, hidden = model(x, hidden)
 * ```
 *
 * Use instead:
 * ```python
 * @torch.no_grad()
 * def sample(model, x, hidden, length):
 *     for _ in range(length):
 *         x, hidden = model(x, hidden)
 * ```
 *
 * A loop in a method of a Module class whose return value carries the graph the loop built (an
 * autoregressive decoder that `forward()` runs in training, scheduled sampling) is left alone: the
 * caller differentiates what it returns; unless the method switches a model to `eval()` first
 * (a sampler run for inference). Steps counted by a tensor (`for t in torch.arange(T)`) are a
 * counter, not the time steps of one input: such a loop in a Module's method is classified by what
 * it does.
 *
 * ## Fix safety
 * The fix wraps the loop in `with torch.no_grad():` and indents it one level (the block's own
 * indentation step; lines inside string literals are left alone). It is safe when nothing the
 * loop computes can reach a backward: the function calls no `backward()`/`autograd.grad`, is not
 * a generator, returns nothing that carries a graph, and the loop stores nothing into attributes.
 * Otherwise it is unsafe: under `no_grad` the outputs no longer require grad, and a later
 * backward through them (REINFORCE over sampled sequences, a loss on generated text) fails or
 * silently trains nothing. No fix is offered when the file has no `torch` name to write.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.no_grad.html
 * - https://pytorch.org/docs/stable/generated/torch.inference_mode.html
 */
#include "ir/api.h"
#include "rules/rule.h"

/* Can anything the loop computes reach a backward? (see Fix safety) */
/* *fn_any: -1 until known, then whether f yields or calls backward anywhere (one scan per
 * function, not per finding: a module of many sampling loops was quadratic). */
static bool may_reach_backward(RuleCtx *c, const IrFunc *f, const IrLoop *l, int *fn_any)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (GL_MAX(ff->ret.grad, ff->ret.elem) >= G_POST) return true;
    if (*fn_any < 0) {
        *fn_any = 0;
        for (uint32_t i = 0; i < f->ops.len && !*fn_any; i++)
            if (f->ops.items[i].kind == IR_YIELD || df_is_backward_call(f, i)) *fn_any = 1;
    }
    if (*fn_any) return true;
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++)
        if (f->ops.items[i].kind == IR_SET_ATTR) return true;
    return false;
}

/* Does loop l hand a live value to something that keeps it for a later update: a method of the
 * file that stores what it is given on its object (`self.insert_storage(log_prob, value, h)`), or
 * an append to an attribute of self (`self.log_probs.append(lp)`)? A recurrent policy's rollout
 * does that: the update backpropagates through the states it fed back. */
static bool keeps_rollout_for_update(RuleCtx *c, const IrFunc *f, const IrLoop *l)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
    for (uint32_t i = l->op + 1; i < l->end && i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        bool live = false;
        for (uint32_t k = 0; k < o->nargs && !live; k++) {
            const AVal *a = &ff->val[f->args.items[o->args + k]];
            live = GL_MAX(a->grad, a->elem) == G_LIVE;
        }
        if (!live) continue;
        uint32_t r = ir_call_receiver(f, i);
        const char *mname = ir_call_method(f, i);
        if (self_var != IR_NONE && r != IR_NONE && mname && (api_method(mname).flags & M_MUTATES) &&
            ir_root_var(f, r) == self_var && f->ops.items[r].kind == IR_ATTR)
            return true;
        uint32_t t = df_call_target(c->m, c->fx, f, i);
        if (t != IR_NONE && t != f->index && r != IR_NONE && ir_root_var(f, r) == self_var &&
            c->m->funcs.items[t]->cls != IR_NONE && df_func_stores_outside(c->m, t, false))
            return true;
    }
    return false;
}

/* Is op a cut of var: `var.detach()`, `var.data`, or a tuple of cuts of its items
 * (`(h[0].detach(), h[1].detach())`)? */
static bool cut_of(const IrFunc *f, uint32_t op, uint32_t var, int depth)
{
    if (op == IR_NONE || depth > 2) return false;
    const IrOp *o = &f->ops.items[op];
    if (o->kind == IR_BUILD) {
        for (uint32_t k = 0; k < o->nargs; k++)
            if (!cut_of(f, f->args.items[o->args + k], var, depth + 1)) return false;
        return o->nargs > 0;
    }
    uint32_t base = IR_NONE;
    if (o->kind == IR_CALL && ir_call_method(f, op) && !strcmp(ir_call_method(f, op), "detach")) base = ir_call_receiver(f, op);
    else if (o->kind == IR_ATTR && o->name && !strcmp(o->name, "data")) base = o->a;
    while (base != IR_NONE && f->ops.items[base].kind == IR_ITEM) base = f->ops.items[base].a;
    return base != IR_NONE && f->ops.items[base].kind == IR_LOAD && f->ops.items[base].var == var;
}

/* Does loop l cut, under an if of its own (`if (t + 1) % k == 0: h = h.detach()`), a variable the
 * model call op stores (directly or unpacked)? Truncation every k steps bounds the chain the
 * fed-back state builds. */
static bool cut_periodically(const IrFunc *f, const IrLoop *l, uint32_t call)
{
    uint32_t vars[8], nv = 0;
    for (uint32_t i = call + 1; i < l->end && i < call + 24 && nv < 8; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_STORE && o->var != IR_NONE &&
            (o->a == call || (o->a != IR_NONE && f->ops.items[o->a].kind == IR_UNPACK && f->ops.items[o->a].a == call)))
            vars[nv++] = o->var;
    }
    int depth = 0;
    for (uint32_t i = l->op + 1; i < l->end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_IF) depth++;
        else if (o->kind == IR_END_IF && depth) depth--;
        if (o->kind != IR_STORE || !depth || o->var == IR_NONE) continue;
        for (uint32_t k = 0; k < nv; k++)
            if (o->var == vars[k] && cut_of(f, o->a, vars[k], 0)) return true;
    }
    return false;
}

/* Is the value of argument op the state as loop li found it (made before the loop or carried by its
 * back edge), or a tuple of such states (`(h, c)`)? */
static bool as_found_state(const IrFunc *f, const FuncFacts *ff, uint32_t li, uint32_t op)
{
    const IrLoop *l = &f->loops.items[li];
    const IrOp *o = &f->ops.items[op];
    uint32_t n = o->kind == IR_BUILD ? o->nargs : 1;
    for (uint32_t k = 0; k < n; k++) {
        const AVal *v = &ff->val[o->kind == IR_BUILD ? f->args.items[o->args + k] : op];
        if (v->def == IR_NONE || v->def == l->op || !ir_loop_contains(f, li, v->def)) return true;
    }
    return false;
}

void rule_GL104(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        /* the file calls it under no_grad (`with torch.no_grad(): print(sample(model))`), as GL108 */
        if (ff->called_grad_off) continue;
        int fn_any = -1;
        /* one finding per loop, at its last call fed a carried output (the recurrence step that
         * makes the state fed back: `_, h = rnn(x, h)` after `prior(h[-1])`); better, the last fed
         * the state itself, as the iteration found it, than one fed what this iteration computed
         * from the state (`generator(dec_out)` after `dec_out, state = decoder(tok, state)`) */
        uint32_t *last = gl_calloc(f->loops.len + 1, sizeof *last); /* per loop: call op + 1, or 0 */
        uint32_t *arg = gl_calloc(f->loops.len + 1, sizeof *arg);   /* its fed-back argument */
        uint8_t *as_found = gl_calloc(f->loops.len + 1, 1);          /* that argument is the state */
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !(df_is_module_call(c->fx, f, i) || df_is_local_model_call(c->m, c->fx, f, i))) continue;
            const IrOp *o = &f->ops.items[i];
            if (df_mode_off(o->mode)) continue;
            /* the argument that is the state as found (`(h, c)`; the last such, where a recurrent
             * call takes its state), else the first fed back */
            uint32_t pick = IR_NONE;
            bool pick_found = false;
            for (uint32_t k = 0; k < o->nargs; k++) {
                uint32_t a = f->args.items[o->args + k];
                const AVal *v = &ff->val[a];
                if (v->carried == IR_NONE || v->carried == CARRIED_CALLS || !(v->flags & VF_MODEL_OUT) || GL_MAX(v->grad, v->elem) != G_LIVE)
                    continue;
                if (df_arg_cut_by_callee(c->m, c->fx, f, i, k)) continue; /* predict() detaches it first */
                const IrLoop *l = &f->loops.items[v->carried];
                if (l->kind != LOOP_FEEDBACK || l->has_backward || !ir_loop_contains(f, v->carried, i)) continue;
                if (pick != IR_NONE && ff->val[pick].carried != v->carried) continue;
                bool found = as_found_state(f, ff, v->carried, a);
                if (pick == IR_NONE || found) pick = a, pick_found = found;
            }
            if (pick != IR_NONE) {
                uint32_t li = ff->val[pick].carried;
                if (pick_found || !as_found[li]) last[li] = i + 1, arg[li] = pick;
                as_found[li] |= pick_found;
            }
        }
        for (uint32_t li = 0; li < f->loops.len; li++) {
            if (!last[li]) continue;
            uint32_t i = last[li] - 1, a = arg[li];
            const IrOp *o = &f->ops.items[i];
            const AVal *v = &ff->val[a];
            const IrLoop *l = &f->loops.items[li];
            /* a model's own method that returns what the loop decoded, graph and all (an
             * autoregressive decoder that forward() uses in training): the caller trains on it */
            if (rule_returns_graph_for_training(c, f)) break;
            if (keeps_rollout_for_update(c, f, l) || cut_periodically(f, l, i)) continue;
            /* a recurrent model unrolled over the input the function is given is one forward pass,
             * bounded by the input (a loop calling the function is GL108's) */
            if (df_loop_unrolls_input(f, li)) continue;
            const char *name = rule_text(c, f, a);
            Diag *d = rule_report(c, o->span, SEV_ERROR,
                                  "the loop at line %u feeds the model's output back into it ('%s') without "
                                  "%s: every iteration's graph stays alive through '%s'",
                                  rule_line(l->span), name, rule_no_grad_name(c), name);
            d->growth = GROWTH_DEVICE;
            d->loop_line = rule_line(l->span);
            rule_related(c, d, l->span, "this loop never calls backward()");
            rule_trace_value(c, d, f, "fed-back input", a, v);
            rule_trace(c, d, "the call at line %u runs with grad enabled; the loop at line %u has no backward() "
                       "and no optimizer step, and feeds the model's output back into it",
                       o->span.row + 1, rule_line(l->span));
            if (c->cxx)
                rule_hint(c, d, "Declare `torch::NoGradGuard no_grad;` (or `c10::InferenceMode guard;`) before "
                                "the loop, in the block that holds it");
            else
                rule_hint(c, d, "Run the loop under `with torch.no_grad():` (or decorate the function with "
                                "`@torch.no_grad()`)");
            rule_fix_wrap_loop_no_grad(c, f, li, d, may_reach_backward(c, f, l, &fn_any) ? FIX_UNSAFE : FIX_SAFE);
        }
        gl_free(last);
        gl_free(arg);
        gl_free(as_found);
    }
}
