/* GL102 grad-tensor-collected: a grad tensor stored in a container that outlives the iteration.
 *
 * ## What it does
 * Flags `outputs.append(value)`, `.extend`, `.insert`, a set's `.add(value)` (one argument: an
 * unseen object's `tracker.add("loss", value)` is its own method), `history[key] = value` and
 * `outputs += [value]` inside a training, evaluation or sampling loop when the container lives
 * across the loop's iterations and `value` carries an autograd graph (also once per epoch:
 * `history.append(epoch_loss)` after the batches, where the epoch's sum keeps their graphs), and a tensor grown the same
 * way: `preds = torch.cat([preds, value])` (also `torch.concat`, `vstack`, `hstack`), or written
 * into a preallocated tensor in a step loop (`losses[i] = loss`), and a comprehension over a
 * loader (`[model(x.cuda()) for x, _ in loader]`) outside a function that calls backward(). Also flags
 * `self.history.append(loss)` in a method that runs once per training step (one that a step loop
 * calls, or Lightning's `training_step`) when the method does not start the list again: the object
 * outlives every call. For `metrics[key] += value`, only `value` counts: the element already held
 * was reported where its graph came in. A single value kept in an attribute of a plain object or
 * in a global from one iteration to the next (`self.recent = emb`) is a warning when it keeps the
 * activations: nothing differentiates it later in the iteration. After a backward only one step's
 * host-side nodes stay until the next store (`self.loss = loss; self.loss.backward()`): not flagged.
 * In C++, also `buffer.add(logp);` in such a loop on an object that outlives it, when the method
 * (of a class of the file, or defined in another file of the run) appends its argument to a member
 * container that it never starts again: reported at the call; in Python the same for an object of
 * a class imported from another file of the run, when no method of that class empties the
 * attribute (`history.push(loss)`; a rollout buffer with a `clear()` is bounded by its caller).
 * Not flagged: per-update rollout lists (`log_probs = []` at the top of each update, filled by a
 * range or while loop that trains nothing, consumed by the update that follows in the same
 * iteration: a backward, an optimizer step, or a function of the file that does one), and what
 * `Distribution.sample()` returns (no graph; `rsample()` keeps one), and a buffer the same loop
 * empties again (`buf.clear()`, or `buf = []` after the update every n steps, in Python and C++):
 * it holds at most one update's worth. Lists made afresh for each unroll and filled by the loop
 * that steps an environment (`env.step(action)`) hold one unroll, whoever consumes them; so do the
 * lists an episode function makes, fills in its one loop that steps the environment and trains
 * nothing, and returns (`return total, log_probs, values` to an update in another file). A class
 * built on a LightningModule of another file (it defines `training_step(self, batch, batch_idx)`)
 * gets Lightning's hooks: its training_step runs once per batch, its validation_step without grad.
 * Nor what a function gradleak cannot see returns when it is handed the optimizer
 * (`loss = train_reinforce(opt, log_probs, returns)`): it differentiates and steps, so at most a
 * graph its backward already freed comes back.
 * Nor is a slot the loop handed to a call and then overwrites with what the call returns (`out,
 * states[k] = model(x, states[k])`, a recurrent state per chunk): the list gains no item. Nor an
 * agent's per-step store (`self.log_probs.append(lp)` in `select_action`) that another method of
 * the class backpropagates through and empties (`del self.log_probs[:]`, `self.log_probs = []`,
 * `.clear()`): the update needs the graph, and the buffer holds one episode. Nor a list kept by a
 * sampling loop that feeds the model's output back without a backward: GL104 reports that loop
 * once, at the model call (`torch.no_grad()` fixes both). Nor a rollout function's own lists that
 * it returns (padded, stacked, or in a record of the file: `Episodes(picks=pad_sequence(lps))`) to
 * a caller of the file that trains on them next, nor an episode's buffer that the enclosing loop
 * empties after it trains (`agent.improve(); agent.trail.clear()`). A record of the file built
 * from graph-carrying values (`Scored(ids=ids, scores=net(x))`, keyword fields too) carries
 * them, and so do `torch.nn.utils.rnn` results (`pad_sequence(outs)`). A list only read at
 * the epoch's end for logging (Lightning's `on_train_epoch_end`) is still reported: nothing
 * backpropagates through it.
 *
 * ## Why is this bad?
 * Every stored tensor keeps its whole graph, and with it the saved activations of its iteration,
 * alive as long as the container. Collecting model outputs over an evaluation loop grows device
 * memory by one batch's activations per step (measured: +4.2 MB per step for a small MLP; +10 KB
 * once the outputs are detached). A list filled inside one forward pass and consumed there (time
 * steps stacked with `torch.stack`) is bounded and not flagged.
 *
 * ## Example
 * ```python
 * predictions = []
 * for x, _ in test_loader:
 *     predictions.append(model(x))
 * ```
 *
 * Use instead:
 * ```python
 * predictions = []
 * with torch.no_grad():
 *     for x, _ in test_loader:
 *         predictions.append(model(x))
 * ```
 *
 * ## Fix safety
 * Appending `value.detach()` instead is unsafe when something later differentiates through the
 * collected values; it is offered as an unsafe fix.
 *
 * ## References
 * - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
 */
#include "ir/api.h"
#include "rules/rule.h"

/* How the value enters what outlives the loop. */
typedef enum Via {
    VIA_COLLECT, /* a list or dict: append, extend, insert, [key] =, += [v] */
    VIA_CONCAT,  /* acc = torch.cat([acc, v]): a tensor grown by one value */
    VIA_INTO,    /* acc[i] = v: written into a tensor, whose graph then holds v's */
} Via;

/* The unsafe fix that stores `value.detach()`, when the value is one name, call or attribute on
 * one line. */
static void offer_detach(RuleCtx *c, Diag *d, const IrFunc *f, uint32_t val_op, const char *vt, const char *verb)
{
    const IrOp *vo = &f->ops.items[val_op];
    if (vo->span.row == vo->span.end_row && (vo->kind == IR_LOAD || vo->kind == IR_CALL || vo->kind == IR_ATTR))
        rule_fix(c, d, FIX_UNSAFE, arena_printf(c->arena, "%s '%s.detach()'", verb, vt), vo->span.start, vo->span.end,
                 arena_printf(c->arena, "%s.detach()", vt));
}

/* The attribute name when op is `self.<name>` in a method of self's class, else NULL. */
static const char *self_attr(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_ATTR || o->a == IR_NONE || f->cls == IR_NONE || !o->name) return NULL;
    const AVal *base = &c->fx->funcs[f->index].val[o->a];
    bool self = (base->kind == VK_MODULE || base->kind == VK_OBJECT) && base->ref == f->cls;
    return self ? o->name : NULL;
}

/* Whether variable var is what f returns (`return loss`, `return {"loss": loss, ...}`, `return
 * total, steps, log_probs`). */
static bool var_returned(const IrFunc *f, uint32_t var)
{
    if (var == IR_NONE) return false;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_RETURN || o->a == IR_NONE) continue;
        /* the value, a display holding it, or either side of `(loss, out) if flag else loss` */
        uint32_t cand[2] = {o->a, IR_NONE};
        if (f->ops.items[o->a].kind == IR_SELECT) cand[0] = f->ops.items[o->a].a, cand[1] = f->ops.items[o->a].b;
        for (int j = 0; j < 2; j++) {
            if (cand[j] == IR_NONE) continue;
            if (ir_root_var(f, cand[j]) == var) return true;
            const IrOp *b = &f->ops.items[cand[j]];
            for (uint32_t k = 0; b->kind == IR_BUILD && k < b->nargs; k++)
                if (ir_root_var(f, f->args.items[b->args + k]) == var) return true;
        }
    }
    return false;
}

/* Whether the value of val_op is what f returns. */
static bool is_returned(const IrFunc *f, uint32_t val_op)
{
    return var_returned(f, ir_root_var(f, val_op));
}

/* Is op an empty list or dict display (`[]`, `{}`)? */
static bool empty_build(const IrFunc *f, uint32_t op)
{
    const IrOp *o = op != IR_NONE ? &f->ops.items[op] : NULL;
    return o && o->kind == IR_BUILD && o->nargs == 0 && (o->aux == BUILD_LIST || o->aux == BUILD_DICT);
}

/* ... or one of a tuple's (`self.a, self.b = [], []`)? */
static bool empty_display(const IrFunc *f, uint32_t op)
{
    const IrOp *o = op != IR_NONE ? &f->ops.items[op] : NULL;
    if (o && o->kind == IR_UNPACK && o->a != IR_NONE && f->ops.items[o->a].kind == IR_BUILD &&
        o->aux < f->ops.items[o->a].nargs)
        op = f->args.items[f->ops.items[o->a].args + o->aux];
    return empty_build(f, op);
}

/* The pseudo-variable `self.<attr>` in method g, when v is one. */
static bool is_self_attr_var(const IrFunc *g, uint32_t v, const char *attr)
{
    uint32_t self = ir_first_param(g);
    if (v == IR_NONE || v >= g->vars.len || self == IR_NONE || g->vars.items[v].base != self) return false;
    const char *dot = strrchr(g->vars.items[v].name, '.');
    return dot && !strcmp(dot + 1, attr);
}

/* Is self.<attr> a rollout buffer of an update: a method of f's class other than f backpropagates
 * and reads it (a policy-gradient update through the stored log-probs), and a method other than
 * __init__ empties it (`self.attr = []`, `.clear()`, `del self.attr[:]`, `self.attr[:] = []`)?
 * Its graph is needed, and bounded by the update's rhythm (an episode). A list only logged at
 * the epoch's end (Lightning's outputs) is read by no backward. */
static bool rollout_buffer_of_update(RuleCtx *c, const IrFunc *f, const char *attr)
{
    const IrClass *cls = c->m->classes.items[f->cls];
    bool emptied = false, consumed = false;
    for (uint32_t k = 0; k < cls->methods.len && !(emptied && consumed); k++) {
        uint32_t gi = cls->methods.items[k];
        const IrFunc *g = c->m->funcs.items[gi];
        if (gi == f->index || gi == cls->init || !c->fx->funcs[gi].analysed) continue;
        bool backprops = df_func_backprops(c->fx, gi), reads = false;
        for (uint32_t i = 0; i < g->ops.len; i++) {
            const IrOp *o = &g->ops.items[i];
            uint32_t v = IR_NONE; /* the pseudo-variable emptied */
            if (o->kind == IR_DEL && o->aux) v = o->var;
            else if (o->kind == IR_SET_ATTR && empty_display(g, o->b)) v = o->var;
            else if (o->kind == IR_SET_ITEM && empty_display(g, o->c) && o->a != IR_NONE) v = g->ops.items[o->a].var;
            else if (o->kind == IR_CALL && o->nargs == 0 && ir_call_method(g, i) && !strcmp(ir_call_method(g, i), "clear")) {
                uint32_t r = ir_call_receiver(g, i);
                v = r != IR_NONE && g->ops.items[r].kind == IR_ATTR ? g->ops.items[r].var : IR_NONE;
            } else if (o->kind == IR_ATTR && backprops && is_self_attr_var(g, o->var, attr)) {
                reads = true;
            }
            if (is_self_attr_var(g, v, attr)) emptied = true;
        }
        consumed |= reads;
    }
    return emptied && consumed;
}

/* `self.losses.append(loss)` in a method that runs once per training step (called from a step
 * loop, or Lightning's training_step): the object outlives the call, so the list grows every step
 * unless the method itself starts it again. */
static void object_store_per_step(RuleCtx *c, const IrFunc *f, uint32_t at, uint32_t cont_op, uint32_t val_op,
                                  const char *how, Via via)
{
    bool concat = via == VIA_CONCAT;
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const AVal *v = &ff->val[val_op];
    const char *attr = self_attr(c, f, cont_op);
    /* the loss a framework differentiates carries a graph however it was computed */
    bool framework_loss = ff->returns_loss && v->grad == G_MAY && is_returned(f, val_op);
    if (!attr || !ff->runs_per_step || (v->grad < G_POST && !framework_loss)) return;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        /* reset per call (not the concatenation's own store, whose value is the call at `at`) */
        if (o->kind == IR_SET_ATTR && o->b != at && o->name && !strcmp(o->name, attr) && ff->reached[i]) return;
        if (o->kind == IR_CALL && ff->reached[i]) {
            const char *m = ir_call_method(f, i);
            uint32_t r = ir_call_receiver(f, i);
            if (m && r != IR_NONE && (!strcmp(m, "clear") || !strcmp(m, "pop")) && self_attr(c, f, r) &&
                !strcmp(self_attr(c, f, r), attr))
                return;
        }
    }
    if (rollout_buffer_of_update(c, f, attr)) return;
    const char *vt = rule_text(c, f, val_op);
    bool hook = !strcmp(f->name, "training_step") || ff->returns_loss;
    /* backward() frees the activations before the next step when it runs later in this call, or
     * when Lightning runs it on training_step's loss */
    bool freed = hook;
    for (uint32_t i = at + 1; i < f->ops.len && !freed; i++) freed = ff->reached[i] && df_is_backward_call(f, i);
    bool live = v->grad == G_LIVE && !freed;
    Diag *d = rule_report(c, f->ops.items[at].span, live ? SEV_ERROR : SEV_WARNING,
                          "'self.%s' collects tensors that carry an autograd graph: '%s' is %s 'self.%s', which "
                          "lives on the object while `%s` runs every training step (%s); %s",
                          attr, vt, how, attr, rule_func_name(c, f->qualname),
                          hook ? "Lightning calls training_step once per batch" : "it is called from a training loop",
                          live                  ? "every step's activations stay on the device"
                          : v->grad == G_LIVE ? "backward() frees the activations, but the graph's nodes pile up on the host"
                                              : "it was added after backward(), so autograd nodes pile up on the host");
    d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
    if (v->src != IR_NONE && v->src < f->ops.len)
        rule_related(c, d, f->ops.items[v->src].span, "the graph comes from '%s'", rule_text(c, f, v->src));
    rule_trace_value(c, d, f, "collected value", val_op, v);
    if (concat) rule_hint(c, d, "Concatenate '%s.detach()'", vt);
    else rule_hint(c, d, "Store '%s.detach()' (or '.item()' for a scalar)", vt);
    offer_detach(c, d, f, val_op, vt, concat ? "Concatenate" : "Store");
}

/* Is var emptied somewhere in loop li's body: `var.clear()` (C++ `var.clear()` too), or bound to
 * a fresh empty container (`var = []`, `var = {}`)? The emptying ops of the function are listed
 * once per function (per variable: first[var], then next[op]). */
typedef struct Emptied {
    uint32_t fi;
    uint32_t *first, *next;
} Emptied;

static bool emptied_in_loop(RuleCtx *c, Emptied *e, const IrFunc *f, uint32_t var, uint32_t li)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (!e->first || e->fi != f->index) {
        e->fi = f->index;
        e->first = arena_alloc(c->scratch, sizeof *e->first * (f->vars.len + 1));
        e->next = arena_alloc(c->scratch, sizeof *e->next * (f->ops.len + 1));
        for (uint32_t v = 0; v <= f->vars.len; v++) e->first[v] = IR_NONE;
        for (uint32_t i = f->ops.len; i-- > 0;) {
            const IrOp *o = &f->ops.items[i];
            uint32_t v = IR_NONE;
            if (!ff->reached[i]) continue;
            if (o->kind == IR_CALL) {
                const char *m = ir_call_method(f, i);
                if (m && !strcmp(m, "clear") && o->nargs == 0) v = ir_root_var(f, ir_call_receiver(f, i));
            } else if (o->kind == IR_DEL && o->aux) { /* del var[:] */
                v = o->var;
            } else if ((o->kind == IR_STORE || o->kind == IR_SET_ATTR) &&
                       empty_build(f, o->kind == IR_STORE ? o->a : o->b)) {
                v = o->var;
            }
            if (v == IR_NONE || v >= f->vars.len) continue;
            e->next[i] = e->first[v], e->first[v] = i;
        }
    }
    if (var >= f->vars.len) return false;
    for (uint32_t i = e->first[var]; i != IR_NONE; i = e->next[i])
        if (ir_loop_contains(f, li, i)) return true;
    return false;
}

/* cont_op is the container's op; for a concatenation (`acc = torch.cat([acc, v])`) the read of the
 * tensor that grows, whose value at the end of an iteration is judged by its graph, not its items. */
static void report(RuleCtx *c, Emptied *em, const IrFunc *f, uint32_t at, uint32_t cont_op, uint32_t val_op,
                   const char *how, Via via)
{
    bool concat = via == VIA_CONCAT;
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const AVal *cont = &ff->val[cont_op], *v = &ff->val[val_op];
    bool framework_loss = ff->returns_loss && v->grad == G_MAY && is_returned(f, val_op);
    if (v->grad < G_POST && !(v->kind == VK_CONTAINER && v->elem >= G_POST) && !framework_loss) return;
    uint32_t var = ir_root_var(f, cont_op);
    if (var == IR_NONE) return;
    /* the container that must outlive the loop is the root (metrics in metrics["loss"].append) */
    for (uint32_t k = cont_op; k != IR_NONE && f->ops.items[k].kind == IR_ITEM; k = f->ops.items[k].a)
        cont = &ff->val[f->ops.items[k].a];
    uint32_t loop = df_outliving_step(c->fx, f, cont, ir_op_loop(f, at));
    /* appended once per epoch (`train_losses.append(epoch_loss)` after the batches): grows by a
     * whole epoch's graph each epoch when the value carries one */
    uint32_t in = ir_op_loop(f, at);
    if (loop == IR_NONE && via == VIA_COLLECT && f->ops.items[at].kind == IR_CALL && in != IR_NONE &&
        f->loops.items[in].kind == LOOP_EPOCH && cont->def != IR_NONE && !ir_loop_contains(f, in, cont->def) &&
        df_outliving_loop(f, cont, in, false) == in)
        loop = in;
    if (loop == IR_NONE || framework_loss) {
        if (loop == IR_NONE) object_store_per_step(c, f, at, cont_op, val_op, how, via);
        return;
    }
    const IrLoop *l = &f->loops.items[loop];
    /* a sampling loop that feeds the model's output back, without a backward: GL104 reports the
     * loop once, at the model call (its fix, no_grad, covers what the loop collects) */
    if (l->kind == LOOP_FEEDBACK && !l->has_backward) return;
    /* emptied again inside the loop (`log_probs.clear()`, `values = []` after the update every n
     * steps): a rollout buffer, bounded by that rhythm */
    if (emptied_in_loop(c, em, f, var, loop)) return;
    /* an episode's buffer: filled by a loop that trains nothing, emptied by the enclosing loop,
     * which trains (`agent.improve(); agent.trail.clear()` after each episode) */
    if (!l->has_backward && !l->has_opt_step && l->parent != IR_NONE && emptied_in_loop(c, em, f, var, l->parent)) {
        const IrLoop *p = &f->loops.items[l->parent];
        if (p->has_backward || p->has_opt_step || p->has_step_call) return;
    }
    /* a rollout's per-episode lists (`one_unroll = Steps([], [])` at the top of each unroll, filled
     * by the loop that steps the environment): bounded by the episode, whoever consumes them */
    if (l->parent != IR_NONE && cont->def != IR_NONE && ir_loop_contains(f, l->parent, cont->def) &&
        !ir_loop_contains(f, loop, cont->def) && rule_steps_env(c, f, loop))
        return;
    /* ... or made by the call, when the function runs one episode (`def run(agent, env)`: its
     * lists, filled by its one loop that steps the environment and trains nothing, are returned to
     * the update of a caller, maybe in another file) */
    if (l->parent == IR_NONE && !f->vars.items[var].is_param && !f->vars.items[var].is_global &&
        f->vars.items[var].base == IR_NONE && !l->has_backward && !l->has_opt_step && !l->has_step_call &&
        !ff->trains && var_returned(f, var) && rule_steps_env(c, f, loop))
        return;
    /* writing each time step's output into a preallocated tensor is how a decoder builds the
     * sequence its loss needs: only a step loop's writes (one per batch) are unbounded */
    if (via == VIA_INTO && l->kind != LOOP_STEP) return;
    /* a model's decoding method collecting the steps it returns to a caller that trains on them;
     * a rollout function's own lists, which it returns (as a record of the file: `RolloutBatch(
     * log_probs=...)`) to the update its caller runs next: bounded by the call */
    bool local = !f->vars.items[var].is_param && !f->vars.items[var].is_global;
    if ((l->kind == LOOP_FEEDBACK || (local && !l->has_backward && !l->has_opt_step)) &&
        rule_returns_graph_for_training(c, f))
        return;
    const AVal *back = df_backedge(ff, loop, var);
    /* at the end of an iteration: a container's items, a grown tensor's graph; a tensor written
     * into is judged by the value written (the analysis does not track in-place writes) */
    uint8_t g = !back || via == VIA_INTO ? GL_MAX(v->grad, v->elem) : concat ? back->grad : back->elem;
    if (back && via == VIA_COLLECT && back->kind != VK_CONTAINER && back->kind != VK_UNKNOWN) return;
    if (g < G_POST) return;
    bool live = g == G_LIVE;
    const char *name = f->vars.items[var].name;
    const char *vt = rule_text(c, f, val_op);
    Diag *d = rule_report(c, f->ops.items[at].span, live ? SEV_ERROR : SEV_WARNING,
                          "'%s' collects tensors that carry an autograd graph: '%s' is %s '%s', which lives "
                          "across the %s loop at line %u; %s",
                          name, vt, how, name, df_loop_kind_name(l->kind), rule_line(l->span),
                          live                ? "every step's activations stay on the device"
                          : v->grad == G_LIVE ? "it was added before backward() runs, which frees the activations, "
                                                "but the graph's nodes pile up on the host"
                                              : "it was added after backward(), so autograd nodes pile up on the host");
    d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
    d->loop_line = rule_line(l->span);
    if (v->src != IR_NONE && v->src < f->ops.len)
        rule_related(c, d, f->ops.items[v->src].span, "the graph comes from '%s'", rule_text(c, f, v->src));
    rule_related(c, d, l->span, "'%s' lives across this %s loop", name, df_loop_kind_name(l->kind));
    rule_trace_value(c, d, f, "collected value", val_op, v);
    rule_trace_value(c, d, f, "container", cont_op, cont);
    if (back) rule_trace_value(c, d, f, arena_printf(c->arena, "'%s' at the end of an iteration", name), IR_NONE, back);
    if (concat) rule_hint(c, d, "Concatenate '%s.detach()', or run the loop under %s", vt, rule_no_grad_name(c));
    else rule_hint(c, d, "Store '%s.detach()' (or '.item()' for a scalar), or run the loop under %s", vt, rule_no_grad_name(c));
    offer_detach(c, d, f, val_op, vt, concat ? "Concatenate" : "Store");
}

/* `acc = torch.cat([acc, value])` (also concat, vstack, hstack, ...): the tensor is a collection
 * that grows by one value per store. Returns the op of the value concatenated, or IR_NONE. */
static uint32_t concat_value(const IrFunc *f, uint32_t store, uint32_t *acc_op)
{
    static const char *const grow[] = {"torch.cat", "torch.concat", "torch.concatenate", "torch.vstack",
                                       "torch.hstack", "torch.row_stack", "torch.column_stack", "torch.dstack"};
    const IrOp *st = &f->ops.items[store];
    uint32_t valop = st->kind == IR_SET_ATTR ? st->b : st->a;
    if (valop == IR_NONE || st->var == IR_NONE) return IR_NONE;
    const IrOp *call = &f->ops.items[valop];
    if (call->kind != IR_CALL || !call->qual || call->nargs == 0 || f->kw.items[call->args]) return IR_NONE;
    bool known = false;
    for (size_t k = 0; k < ARRAY_LEN(grow) && !known; k++) known = !strcmp(call->qual, grow[k]);
    const IrOp *list = &f->ops.items[f->args.items[call->args]];
    if (!known || list->kind != IR_BUILD || list->nargs != 2) return IR_NONE;
    uint32_t first = f->args.items[list->args], second = f->args.items[list->args + 1];
    const IrOp *a = &f->ops.items[first], *b = &f->ops.items[second];
    bool a_acc = (a->kind == IR_LOAD || a->kind == IR_ATTR) && a->var == st->var;
    bool b_acc = (b->kind == IR_LOAD || b->kind == IR_ATTR) && b->var == st->var;
    if (a_acc == b_acc) return IR_NONE;
    *acc_op = a_acc ? first : second;
    return a_acc ? second : first;
}

/* `self.last = out`, `GLOBAL = loss` in a step loop: one iteration's graph held into the next. */
static void plain_store(RuleCtx *c, const IrFunc *f, uint32_t i)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrOp *o = &f->ops.items[i];
    uint32_t valop = o->kind == IR_SET_ATTR ? o->b : o->a;
    if (valop == IR_NONE || o->var == IR_NONE) return;
    const IrOp *vo = &f->ops.items[valop];
    if (vo->kind == IR_BINOP) return; /* accumulations are GL101's */
    const AVal *v = &ff->val[valop];
    if (v->grad < G_POST || v->kind == VK_CONTAINER || v->kind == VK_MODULE) return;
    const char *what;
    if (o->kind == IR_SET_ATTR) {
        const AVal *base = &ff->val[o->a];
        bool self = f->cls != IR_NONE && (base->kind == VK_MODULE || base->kind == VK_OBJECT) && base->ref == f->cls;
        if (!self || c->m->classes.items[f->cls]->is_module) return; /* a Module's own state is GL103's */
        what = "an attribute of the object";
    } else {
        if (!f->vars.items[o->var].is_global || f->index == 0) return;
        what = "a global";
    }
    AVal outer = *v;
    outer.def = IR_NONE, outer.flags |= VF_OUTER, outer.carried = IR_NONE;
    uint32_t loop = df_outliving_step(c->fx, f, &outer, ir_op_loop(f, i));
    if (loop == IR_NONE) return;
    const IrLoop *l = &f->loops.items[loop];
    /* one step's graph after its backward (`self.loss = loss` ... `self.loss.backward()`): the
     * activations are freed and the next store drops the rest; nothing grows */
    if (v->grad == G_POST) return;
    for (uint32_t k = i + 1; k < l->end; k++)
        if (ff->reached[k] && df_is_backward_call(f, k)) return;
    const char *name = f->vars.items[o->var].name;
    const char *vt = rule_text(c, f, valop);
    Diag *d = rule_report(c, o->span, SEV_WARNING,
                          "'%s' is %s and keeps '%s', which carries an autograd graph, from one iteration of the "
                          "%s loop at line %u to the next",
                          name, what, vt, df_loop_kind_name(l->kind), rule_line(l->span));
    d->growth = GROWTH_HOST;
    d->loop_line = rule_line(l->span);
    rule_related(c, d, l->span, "the %s loop", df_loop_kind_name(l->kind));
    rule_trace_value(c, d, f, "stored value", valop, v);
    rule_hint(c, d, "Store '%s.detach()' (or '.item()' for a scalar)", vt);
    offer_detach(c, d, f, valop, vt, "Store");
}

/* A comprehension over batches (`[model(x.cuda()) for x, _ in loader]`) is a loop that collects:
 * reported when its element carries a live graph and what it iterates is a DataLoader, or yields
 * what the comprehension moves to a device. A comprehension over a tensor's pieces, modules or a
 * range is bounded, and so is one in a Module's method (one forward's batch). The comprehension's
 * loops (IrLoop.is_comp) lie inside the BUILD's span, just before it: the outermost `for` is the
 * first of their NEXT ops. */
/* What comprehension() asks of a whole function, worked out once per function (asked per
 * comprehension, it was quadratic in a module of many). */
typedef struct FuncScan {
    int8_t trains;   /* -1: not yet known; 1: a reached backward() call */
    bool have_yield;
    DfYield yield;   /* scratch of df_yield_moved */
} FuncScan;

static void comprehension(RuleCtx *c, const IrFunc *f, uint32_t build, FuncScan *scan)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    const IrOp *b = &f->ops.items[build];
    if (b->nargs == 0 || b->nargs > 2) return;
    /* in a Module's method the comprehension runs inside one forward: over one batch's items */
    for (const IrFunc *g = f; g; g = g->parent != IR_NONE ? c->m->funcs.items[g->parent] : NULL)
        if (g->cls != IR_NONE && c->m->classes.items[g->cls]->is_module) return;
    uint32_t elem = f->args.items[b->args + b->nargs - 1];
    const AVal *v = &ff->val[elem];
    /* the element, or what it holds (`{'val_loss': loss}` from a model's validation_step) */
    if (v->grad != G_LIVE && !(v->kind == VK_CONTAINER && v->elem == G_LIVE)) return;
    /* a function that calls backward() builds its step from it: `[model(c.cuda()) for c in crops]`
     * over one batch's crops */
    if (scan->trains < 0) {
        scan->trains = 0;
        for (uint32_t k = 0; k < f->ops.len && !scan->trains; k++)
            if (ff->reached[k] && df_is_backward_call(f, k)) scan->trains = 1;
    }
    if (scan->trains) return;
    uint32_t next = IR_NONE;
    for (uint32_t k = build; k-- > 0;) {
        const IrOp *o = &f->ops.items[k];
        if (o->span.start < b->span.start || o->span.end > b->span.end) break;
        if (o->kind == IR_NEXT && k > 0 && f->ops.items[k - 1].kind == IR_LOOP &&
            f->loops.items[f->ops.items[k - 1].aux].is_comp)
            next = k;
    }
    if (next == IR_NONE || f->ops.items[next].a == IR_NONE) return;
    const AVal *it = &ff->val[f->ops.items[next].a];
    /* a DataLoader, or an object of a class of the file that iterates (a device-moving wrapper
     * around one: `for b in self.dl: yield to_device(b)`) */
    bool batches = it->kind == VK_LOADER ||
                   (it->kind == VK_OBJECT && it->ref < c->m->classes.len &&
                    ir_class_method(c->m, it->ref, "__iter__") != IR_NONE);
    if (!batches && it->kind == VK_UNKNOWN && !(it->flags & (VF_PIECES | VF_SHAPE | VF_MODLIST | VF_MODEL_OUT))) {
        if (!scan->have_yield) df_yield_init(&scan->yield, f), scan->have_yield = true;
        batches = df_yield_moved(&scan->yield, f, next, build, ff->reached); /* what it yields, moved to a device */
    }
    if (!batches) return;
    const char *vt = rule_text(c, f, elem);
    const char *it_text = rule_text(c, f, f->ops.items[next].a);
    Diag *d = rule_report(c, b->span, SEV_ERROR,
                          "this comprehension collects tensors that carry an autograd graph: '%s' keeps its graph "
                          "for every batch of '%s' until the result is freed; every batch's activations stay on "
                          "the device",
                          vt, it_text);
    d->growth = GROWTH_DEVICE;
    d->loop_line = rule_line(b->span);
    if (v->src != IR_NONE && v->src < f->ops.len)
        rule_related(c, d, f->ops.items[v->src].span, "the graph comes from '%s'", rule_text(c, f, v->src));
    rule_trace_value(c, d, f, "collected value", elem, v);
    rule_hint(c, d, "Build it under %s, or collect '%s.detach()'", rule_no_grad_name(c), vt);
    offer_detach(c, d, f, elem, vt, "Collect");
}

/* `buffer.add(logp)` in a step or feedback loop on an object that outlives it, where the method
 * (of a class of the file, or, in C++, of another file of the run through its summary) appends the
 * argument to a member container that it never starts again: the object collects every step's
 * graph. Reported at the call. */
static void object_collections(RuleCtx *c, const IrFunc *f, const FuncFacts *ff)
{
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        uint32_t r = ir_call_receiver(f, i);
        if (r == IR_NONE) continue;
        uint32_t t = df_call_target(c->m, c->fx, f, i);
        const ExternSummary *ext = t == IR_NONE ? df_call_extern(c->fx, f, i) : NULL;
        /* Python's meters and buffers of the file stay GL101's and the method's own
         * (object_store_per_step); those of another file are reported here */
        if ((!c->cxx && !ext) || (t == IR_NONE && !ext) || t == f->index) continue;
        if (t != IR_NONE && c->m->funcs.items[t]->cls == IR_NONE) continue;
        uint8_t acc = 0, coll = ext ? ext->keep_coll : 0;
        uint32_t acc_at = IR_NONE, coll_at = IR_NONE;
        if (t != IR_NONE) df_method_keeps(c->fx, t, &acc, &coll, &acc_at, &coll_at);
        if (!coll) continue;
        const AVal *recv = &ff->val[r];
        uint32_t loop = df_outliving_step(c->fx, f, recv, ir_op_loop(f, i));
        if (loop == IR_NONE) continue;
        for (uint32_t k = 0, pos = 0; k < o->nargs && pos < 8; k++) {
            if (f->kw.items[o->args + k]) continue;
            uint32_t aop = f->args.items[o->args + k];
            const AVal *a = &ff->val[aop];
            uint8_t g = GL_MAX(a->grad, a->elem); /* a tensor, or a struct of tensors (`result`) */
            if (!(coll & (1u << pos++)) || g < G_POST) continue;
            const IrLoop *l = &f->loops.items[loop];
            bool live = g == G_LIVE;
            const char *objtext = rule_text(c, f, r), *argtext = rule_text(c, f, aop);
            char nbuf[256];
            const char *where = t != IR_NONE
                                    ? arena_printf(c->arena, "'%s' (line %u)", rule_func_name(c, c->m->funcs.items[t]->qualname),
                                                   rule_line(c->m->funcs.items[t]->ops.items[coll_at].span))
                                    : arena_printf(c->arena, "'%s' (in another file of the run)",
                                                   df_call_extern_name(c->fx, f, i, nbuf, sizeof nbuf));
            Diag *d = rule_report(c, o->span, live ? SEV_ERROR : SEV_WARNING,
                                  "'%s' collects tensors that carry an autograd graph: '%s' is passed to %s, which "
                                  "stores it in %s of '%s', which lives across the %s loop at line %u; %s",
                                  objtext, argtext, where, c->cxx ? "a member" : "an attribute", objtext,
                                  df_loop_kind_name(l->kind), rule_line(l->span),
                                  live ? "every step's activations stay on the device"
                                       : "backward() freed the activations, but the graph's nodes pile up on the host");
            d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
            d->loop_line = rule_line(l->span);
            if (t != IR_NONE)
                rule_related(c, d, c->m->funcs.items[t]->ops.items[coll_at].span, "the value is stored here");
            if (a->src != IR_NONE && a->src < f->ops.len)
                rule_related(c, d, f->ops.items[a->src].span, "the graph comes from '%s'", rule_text(c, f, a->src));
            rule_related(c, d, l->span, "'%s' lives across this %s loop", objtext, df_loop_kind_name(l->kind));
            rule_trace_value(c, d, f, "passed value", aop, a);
            rule_hint(c, d, "Pass '%s.detach()' (or '.item()' for a scalar), or run the loop under %s", argtext,
                      rule_no_grad_name(c));
            offer_detach(c, d, f, aop, argtext, "Pass");
            break;
        }
    }
}

/* Two keys that name the same slot: one variable, or one literal. */
static bool same_key(const IrFunc *f, uint32_t a, uint32_t b)
{
    const IrOp *x = &f->ops.items[a], *y = &f->ops.items[b];
    if (x->kind != y->kind) return false;
    if (x->kind == IR_LOAD) return x->var == y->var;
    return x->kind == IR_CONST && x->name && y->name && !strcmp(x->name, y->name);
}

/* `out, states[k] = model(x, states[k])`: the store at `at` writes the slot that its loop handed to
 * a call earlier in the iteration. The slot is replaced by the state the call returns, and the
 * container gains no item; whether the states chain is a recurrent state's question. */
static bool replaces_slot_it_passed(const IrFunc *f, uint32_t at)
{
    const IrOp *s = &f->ops.items[at];
    uint32_t li = ir_op_loop(f, at);
    if (li == IR_NONE || f->ops.items[s->a].kind != IR_LOAD || s->b == IR_NONE) return false;
    uint32_t var = f->ops.items[s->a].var;
    for (uint32_t k = f->loops.items[li].op + 1; k < at; k++) {
        const IrOp *o = &f->ops.items[k];
        if (o->kind != IR_CALL) continue;
        for (uint32_t j = 0; j < o->nargs; j++) {
            const IrOp *g = &f->ops.items[f->args.items[o->args + j]];
            if (g->kind == IR_ITEM && g->a != IR_NONE && g->b != IR_NONE && f->ops.items[g->a].kind == IR_LOAD &&
                f->ops.items[g->a].var == var && same_key(f, g->b, s->b))
                return true;
        }
    }
    return false;
}

void rule_GL102(RuleCtx *c)
{
    Emptied em = {IR_NONE, NULL, NULL};
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        if (ff->called_grad_off && !ff->trains) continue; /* run under a caller's no_grad (GL101's) */
        if (ff->analysed) object_collections(c, f, ff);
        FuncScan scan = {-1, false, {0}};
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (!ff->reached[i]) continue;
            if (o->kind == IR_BUILD) {
                comprehension(c, f, i, &scan);
            } else if (o->kind == IR_SET_ATTR || o->kind == IR_STORE) {
                uint32_t acc_op = IR_NONE, grown = concat_value(f, i, &acc_op);
                if (grown != IR_NONE)
                    report(c, &em, f, o->kind == IR_SET_ATTR ? o->b : o->a, acc_op, grown, "concatenated onto", VIA_CONCAT);
                else
                    plain_store(c, f, i);
            } else if (o->kind == IR_CALL) {
                const char *m = ir_call_method(f, i);
                uint32_t r = ir_call_receiver(f, i);
                if (!m || r == IR_NONE || o->nargs == 0 || df_call_extern(c->fx, f, i)) continue;
                if ((strcmp(m, "append") && strcmp(m, "extend") && strcmp(m, "insert") && strcmp(m, "add") &&
                     strcmp(m, "appendleft")) || !api_method_collects(m, o->nargs))
                    continue;
                const AVal *cv = &ff->val[r];
                /* tensors have no append(): `hist["loss"]` taken for one is a list all the same */
                bool listy = cv->kind == VK_TENSOR && !(api_method(m).flags & M_TENSOR_TOO);
                if (cv->kind != VK_CONTAINER && cv->kind != VK_UNKNOWN && !listy) continue;
                uint32_t arg = f->args.items[o->args + o->nargs - 1];
                report(c, &em, f, i, r, arg, "appended to", VIA_COLLECT);
            } else if (o->kind == IR_SET_ITEM && o->a != IR_NONE && o->c != IR_NONE) {
                const AVal *cv = &ff->val[o->a];
                if (cv->kind == VK_TENSOR && f->ops.items[o->a].kind == IR_LOAD) {
                    /* `losses[i] = loss` into a preallocated tensor */
                    report(c, &em, f, i, o->a, o->c, "written into", VIA_INTO);
                    continue;
                }
                if (cv->kind != VK_CONTAINER && cv->kind != VK_UNKNOWN) continue;
                if (replaces_slot_it_passed(f, i)) continue;
                /* `stats[k] += v`: the element already held is the container's (reported where its
                 * graph came in); only v can bring a new one */
                uint32_t val = o->c;
                const IrOp *vo = &f->ops.items[val];
                if (vo->kind == IR_BINOP && (vo->flags & IR_F_AUG) && vo->a != IR_NONE && vo->b != IR_NONE &&
                    f->ops.items[vo->a].kind == IR_ITEM && ir_root_var(f, vo->a) == ir_root_var(f, o->a))
                    val = vo->b;
                report(c, &em, f, i, o->a, val, "stored in", VIA_COLLECT);
            } else if (o->kind == IR_BINOP && (o->flags & IR_F_AUG) && o->aux == BIN_ADD && o->a != IR_NONE) {
                if (ff->val[o->a].kind != VK_CONTAINER) continue;
                report(c, &em, f, i, o->a, o->b, "added to", VIA_COLLECT);
            }
        }
        if (scan.have_yield) df_yield_free(&scan.yield);
    }
}
