/* GL101 tensor-accumulated-across-iterations: a grad tensor folded into a loop-carried accumulator.
 *
 * ## What it does
 * Flags `acc += value` and `acc = acc + value` (also `-`, `*`, `/`, and in place: `acc.add_(value)`,
 * `sub_`, `mul_`, `div_`) inside a training, evaluation or sampling loop when `acc` lives across
 * the loop's iterations and `value` carries an autograd
 * graph (it comes from a model call, a loss, a parameter or a `requires_grad` tensor). Also a call
 * `meter.update(loss)` in such a loop on an object of a class in the file whose method adds the
 * argument into one of its attributes (`self.sum += val * n`, or an element of one:
 * `self.sums[i] += v`; a list of losses counts by its elements: `meter.update([l1, l2])`) without
 * turning it into a number first: the meter is the accumulator (reported at the call; no automatic fix, the hint says what
 * to pass). A meter whose class is defined in another file of the run (C++, or a Python class
 * imported from one: `from utils import AverageMeter`) is followed through that file's summary of
 * the method (cross-file summaries), also when it hangs from another object made before the loop
 * (`metrics.losses_track.update_train_losses(loss)`, found by the method's name). A sum started again by every iteration of an enclosing loop
 * that then runs the update (a rollout's entropy bonus, over a range or a while loop that trains
 * nothing itself), or made by a function before its episode loop that the update follows in the
 * same call, is bounded by one update and not flagged. Nor is a sum in a sampling loop that feeds
 * the model's output back without a backward (GL104 reports that loop once, at the model call:
 * `torch.no_grad()` fixes both), nor one a Module's method returns from a loop without a backward
 * (a loss over samples or time steps, for the caller to differentiate).
 *
 * In a method that runs once per training step (Lightning's `training_step`, a helper it calls,
 * even when `test_step` calls it too under the framework's no_grad, a method a training loop calls,
 * or a method that takes one step itself: backward() and an optimizer step outside any loop, an
 * agent's `learn()`), `self.epoch_loss += loss` is the same hazard without a loop in sight: the
 * attribute lives on the object across the steps, unless the method itself starts it again. When
 * the step's loss is differentiated after the method returns (the framework's backward, or the
 * caller's), the activations are freed and the graph's nodes pile up on the host (a warning);
 * otherwise the activations stay on the device. The unsafe fix adds `.item()` (a 0-dim value) or
 * `.detach()`. Not a sum over a loop that iterates the keys, values or items of a mapping the
 * object holds (`for part in self.opts.keys()`: one term per optimizer, one call's sum); a loop
 * over batches nested in it still counts.
 *
 * ## Why is this bad?
 * The sum is a tensor whose graph links every iteration's graph: nothing is ever freed. When the
 * loop never calls `backward()` (validation, or the backward comes later), each iteration keeps its
 * saved activations on the device and memory grows by one batch's activations per step until CUDA
 * runs out of memory (measured: +4.2 MB per step for a small MLP on an H200). When the
 * accumulation happens after `loss.backward()`, backward has freed the saved tensors and only the
 * autograd nodes pile up on the host: reported as a warning. When the sum is differentiated once
 * after a loop over batches (`epoch_loss.backward()` after `for x, y in loader`), every batch's
 * activations stay on the device until that backward: memory grows with the number of batches.
 * The fix there is to call `backward()` per batch, so no automatic fix is offered.
 *
 * ## Example
 * ```python
 * val_loss = 0
 * for x, y in val_loader:
 *     loss = criterion(model(x), y)
 *     val_loss += loss
 * ```
 *
 * Use instead:
 * ```python
 * val_loss = 0
 * for x, y in val_loader:
 *     loss = criterion(model(x), y)
 *     val_loss += loss.item()
 * ```
 *
 * ## Fix safety
 * Replacing `loss` by `loss.item()` (0-dim values) or `loss.detach()` is safe when the accumulator
 * starts as a Python number and is never differentiated or used as a tensor later in the function;
 * otherwise the fix is unsafe (it changes the accumulator's type, or drops gradients that a later
 * `acc.backward()` needs).
 *
 * ## References
 * - https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.item.html
 */
#include "ir/api.h"
#include "rules/rule.h"

/* Finds a read of var inside the arithmetic tree rooted at op (BINOP/UNOP only, bounded). */
static uint32_t find_acc(const IrFunc *f, uint32_t op, uint32_t var)
{
    uint32_t stack[32], n = 0;
    stack[n++] = op;
    while (n) {
        uint32_t x = stack[--n];
        if (x == IR_NONE) continue;
        const IrOp *o = &f->ops.items[x];
        if ((o->kind == IR_LOAD || o->kind == IR_ATTR) && o->var == var) return x;
        if ((o->kind == IR_BINOP && o->aux <= BIN_DIV) || (o->kind == IR_UNOP && o->aux != UN_NOT)) {
            if (n + 2 <= ARRAY_LEN(stack)) stack[n++] = o->a, stack[n++] = o->kind == IR_BINOP ? o->b : IR_NONE;
        }
    }
    return IR_NONE;
}

/* Calls f(ctx, var) for every variable find_acc(f, op, var) would find: the same walk, without
 * stopping at a match (so exactly those variables). */
static void acc_vars(const IrFunc *f, uint32_t op, void (*fn)(void *ctx, uint32_t var, uint32_t at), void *ctx,
                     uint32_t at)
{
    uint32_t stack[32], n = 0;
    stack[n++] = op;
    while (n) {
        uint32_t x = stack[--n];
        if (x == IR_NONE) continue;
        const IrOp *o = &f->ops.items[x];
        if ((o->kind == IR_LOAD || o->kind == IR_ATTR) && o->var != IR_NONE) fn(ctx, o->var, at);
        if ((o->kind == IR_BINOP && o->aux <= BIN_DIV) || (o->kind == IR_UNOP && o->aux != UN_NOT)) {
            if (n + 2 <= ARRAY_LEN(stack)) stack[n++] = o->a, stack[n++] = o->kind == IR_BINOP ? o->b : IR_NONE;
        }
    }
}

/* Per function, built on first use, so that a scope with N accumulations costs O(N), not O(N^2)
 * (each used to scan every op after it): which variables are a method call's receiver, and, per
 * variable, the reached backward() calls on it in op order. */
typedef struct VarOp {
    uint32_t var, op;
} VarOp;

typedef struct FnIndex {
    const IrFunc *f;
    uint8_t *tensor_used; /* [var] */
    VarOp *back;          /* sorted by (var, op) */
    uint32_t nback, cap;
    Arena *arena;
} FnIndex;

static void mark_used(void *ctx, uint32_t var, uint32_t at)
{
    GL_UNUSED(at);
    FnIndex *x = ctx;
    if (var < x->f->vars.len) x->tensor_used[var] = 1;
}

static void add_back(void *ctx, uint32_t var, uint32_t at)
{
    FnIndex *x = ctx;
    if (x->nback == x->cap) {
        uint32_t cap = x->cap ? x->cap * 2 : 16;
        VarOp *n = ARENA_NEW_N(x->arena, VarOp, cap);
        if (x->nback) memcpy(n, x->back, sizeof *n * x->nback);
        x->back = n, x->cap = cap;
    }
    x->back[x->nback++] = (VarOp){var, at};
}

static int varop_cmp(const void *a, const void *b)
{
    const VarOp *x = a, *y = b;
    if (x->var != y->var) return x->var < y->var ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

static void index_build(FnIndex *x, const IrFunc *f, const FuncFacts *ff, Arena *arena)
{
    memset(x, 0, sizeof *x);
    x->f = f, x->arena = arena;
    x->tensor_used = ARENA_NEW_N(arena, uint8_t, f->vars.len + 1);
    memset(x->tensor_used, 0, f->vars.len + 1);
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL) continue;
        uint32_t r = ir_call_receiver(f, i);
        if (r != IR_NONE) acc_vars(f, r, mark_used, x, i);
        if (!ff->reached[i] || !df_is_backward_call(f, i)) continue;
        uint32_t a = o->nargs && !f->kw.items[o->args] ? f->args.items[o->args] : IR_NONE; /* backward(total) */
        if (r != IR_NONE) acc_vars(f, r, add_back, x, i); /* also (total / n).backward() */
        if (a != IR_NONE) acc_vars(f, a, add_back, x, i);
    }
    if (x->nback) qsort(x->back, x->nback, sizeof *x->back, varop_cmp);
}

/* Is var (or arithmetic on it: `(total / n).backward()`) the receiver of a method call anywhere in f? */
static bool used_as_tensor(const FnIndex *x, uint32_t var)
{
    return var < x->f->vars.len && x->tensor_used[var];
}

/* The first reached backward() on var after op `from` (`total.backward()` after the loop), or IR_NONE. */
static uint32_t backward_of(const FnIndex *x, uint32_t var, uint32_t from)
{
    uint32_t lo = 0, hi = x->nback;
    while (lo < hi) { /* the first (var, op) >= (var, from + 1) */
        uint32_t mid = lo + (hi - lo) / 2;
        const VarOp *m = &x->back[mid];
        if (m->var < var || (m->var == var && m->op <= from)) lo = mid + 1;
        else hi = mid;
    }
    return lo < x->nback && x->back[lo].var == var ? x->back[lo].op : IR_NONE;
}

/* The operand of the top-level operation that does not contain the accumulator. */
static uint32_t other_side(const IrFunc *f, uint32_t top, uint32_t var)
{
    const IrOp *o = &f->ops.items[top];
    if (o->kind != IR_BINOP) return IR_NONE;
    if (find_acc(f, o->a, var) != IR_NONE) return o->b;
    return o->a;
}

/* Is op an accumulation? `acc = acc + value` / `acc += value` (a store of arithmetic that reads
 * acc; also -, *, /), or in place: `acc.add_(value)` (also sub_, mul_, div_). Gives the
 * accumulator's variable, its read, the value folded in, the op to point at, and whether it is
 * in place. */
static bool accumulation(const IrFunc *f, uint32_t i, uint32_t *var, uint32_t *accop, uint32_t *addop, uint32_t *at,
                         bool *inplace)
{
    const IrOp *o = &f->ops.items[i];
    if (o->kind == IR_CALL) {
        const char *m = ir_call_method(f, i);
        uint32_t r = ir_call_receiver(f, i);
        if (!m || r == IR_NONE || !o->nargs || f->kw.items[o->args]) return false;
        if (strcmp(m, "add_") && strcmp(m, "sub_") && strcmp(m, "mul_") && strcmp(m, "div_")) return false;
        const IrOp *ro = &f->ops.items[r];
        if ((ro->kind != IR_LOAD && ro->kind != IR_ATTR) || ro->var == IR_NONE) return false;
        *var = ro->var, *accop = r, *addop = f->args.items[o->args], *at = i, *inplace = true;
        return true;
    }
    uint32_t valop = o->kind == IR_STORE ? o->a : o->kind == IR_SET_ATTR ? o->b : IR_NONE;
    if (valop == IR_NONE || o->var == IR_NONE) return false;
    const IrOp *bo = &f->ops.items[valop];
    if (bo->kind != IR_BINOP || bo->aux > BIN_DIV) return false;
    uint32_t a = find_acc(f, valop, o->var);
    uint32_t v = a == IR_NONE ? IR_NONE : other_side(f, valop, o->var);
    if (a == IR_NONE || v == IR_NONE || a == valop) return false;
    /* `acc = x - acc` or `acc = x / acc` do not accumulate; the graph must enter at the top */
    if (bo->b != IR_NONE && find_acc(f, bo->b, o->var) != IR_NONE && (bo->aux == BIN_SUB || bo->aux == BIN_DIV))
        return false;
    *var = o->var, *accop = a, *addop = v, *at = valop, *inplace = false;
    return true;
}

/* In method t, does parameter k (0 is self) flow into an accumulation into an attribute of self
 * (`self.sum += val * n`)? Gives that accumulation's op. */
static bool method_accumulates(const RuleCtx *c, uint32_t t, uint32_t k, uint32_t *at_out)
{
    const IrFunc *g = c->m->funcs.items[t];
    const FuncFacts *gf = &c->fx->funcs[t];
    if (!gf->analysed || k >= 16 || g->vars.len == 0) return false;
    /* a parameter the method rebinds (`if isinstance(val, torch.Tensor): val = val.item()`) is
     * not what reaches the sum */
    uint32_t pvar = IR_NONE;
    for (uint32_t i = 0; i < g->ops.len; i++)
        if (g->ops.items[i].kind == IR_PARAM && g->ops.items[i].aux == k) pvar = g->ops.items[i].var;
    for (uint32_t i = 0; i < g->ops.len && pvar != IR_NONE; i++)
        if (g->ops.items[i].kind == IR_STORE && g->ops.items[i].var == pvar &&
            (g->ops.items[i].a == IR_NONE || g->ops.items[g->ops.items[i].a].kind != IR_PARAM))
            return false;
    uint32_t self_var = ir_first_param(g);
    for (uint32_t i = 0; i < g->ops.len; i++) {
        uint32_t var, accop, addop, at;
        bool inplace;
        /* `self.sums[idx] += v`: a sum kept in an element of an attribute */
        uint32_t added = gf->reached[i] ? ir_element_sum(g, i, self_var) : IR_NONE;
        if (added != IR_NONE && (gf->val[added].pmask & (1u << k)) && gf->val[added].kind != VK_SCALAR) {
            *at_out = i;
            return true;
        }
        if (!gf->reached[i] || !accumulation(g, i, &var, &accop, &addop, &at, &inplace)) continue;
        const IrVar *v = &g->vars.items[var];
        if (v->base == IR_NONE || v->base >= g->vars.len || !g->vars.items[v->base].is_param) continue;
        if (strcmp(g->vars.items[v->base].name, "self") != 0) continue;
        if (!(gf->val[addop].pmask & (1u << k))) continue;
        *at_out = at;
        return true;
    }
    return false;
}

/* `meter.update(loss)` where Meter::update (C++) or Meter.update (Python, a class imported from
 * another file) is defined in another file of the run, whose summary says it adds positional
 * argument k (bit k of keep) into a member. */
static void extern_accumulation(RuleCtx *c, const IrFunc *f, const FuncFacts *ff, uint32_t i, uint32_t r, uint8_t keep)
{
    const IrOp *o = &f->ops.items[i];
    /* `board.track.add_batch(loss)`: the meter hangs from an object made before the loop */
    uint32_t holder = r;
    for (int d = 0; d < 4 && f->ops.items[holder].kind == IR_ATTR && f->ops.items[holder].a != IR_NONE; d++)
        holder = f->ops.items[holder].a;
    if (f->ops.items[holder].kind != IR_LOAD) holder = r;
    uint32_t loop = df_outliving_step(c->fx, f, &ff->val[holder], ir_op_loop(f, i));
    if (loop == IR_NONE) return;
    for (uint32_t k = 0, pos = 0; k < o->nargs && pos < 8; k++) {
        if (f->kw.items[o->args + k]) continue;
        uint32_t aop = f->args.items[o->args + k];
        const AVal *a = &ff->val[aop];
        uint8_t ag = a->kind == VK_CONTAINER ? a->elem : a->grad; /* a list of losses, item by item */
        if (!(keep & (1u << pos++)) || ag < G_POST) continue;
        const IrLoop *l = &f->loops.items[loop];
        bool live = ag == G_LIVE;
        const char *objtext = rule_text(c, f, r), *argtext = rule_text(c, f, aop);
        char nbuf[256];
        Diag *d = rule_report(c, o->span, live ? SEV_ERROR : SEV_WARNING,
                              "'%s' keeps the autograd graph of every iteration: '%s' carries a %s graph and '%s' (in "
                              "another file of the run) adds it to %s of '%s', which lives across the %s loop at "
                              "line %u; %s",
                              objtext, argtext, live ? "live" : "freed",
                              df_call_extern_name(c->fx, f, i, nbuf, sizeof nbuf), c->cxx ? "a member" : "an attribute",
                              objtext,
                              df_loop_kind_name(l->kind), rule_line(l->span),
                              live ? "each step's activations stay on the device"
                                   : "backward() freed the activations, but the graph's nodes pile up on the host");
        d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
        d->loop_line = rule_line(l->span);
        rule_related(c, d, l->span, "'%s' lives across this %s loop", objtext, df_loop_kind_name(l->kind));
        if (a->kind == VK_CONTAINER) rule_hint(c, d, "Pass each element's '.item()' (or '.detach()')");
        else rule_hint(c, d, "Pass '%s.%s()'", argtext, (a->flags & VF_ZERO_DIM) ? "item" : "detach");
        rule_trace_value(c, d, f, "passed value", aop, a);
        return;
    }
}

/* `meter.update(loss)` in a step loop, where the meter's class (in this file) sums what it is
 * given into an attribute (`self.sum += val * n`): the meter keeps every step's graph. */
static void object_accumulations(RuleCtx *c, const IrFunc *f, const FuncFacts *ff)
{
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        uint32_t r = ir_call_receiver(f, i);
        uint32_t t = r != IR_NONE ? df_call_target(c->m, c->fx, f, i) : IR_NONE;
        /* a method of another file of the run, by its summary */
        const ExternSummary *ext = r != IR_NONE && t == IR_NONE ? df_call_extern(c->fx, f, i) : NULL;
        if (ext && ext->keep_acc) {
            extern_accumulation(c, f, ff, i, r, ext->keep_acc);
            continue;
        }
        if (t == IR_NONE || t == f->index || c->m->funcs.items[t]->cls == IR_NONE) continue;
        const AVal *recv = &ff->val[r];
        uint32_t loop = df_outliving_step(c->fx, f, recv, ir_op_loop(f, i));
        if (loop == IR_NONE) continue;
        for (uint32_t k = 0, pos = 1; k < o->nargs; k++) {
            if (f->kw.items[o->args + k]) continue;
            uint32_t aop = f->args.items[o->args + k];
            const AVal *a = &ff->val[aop];
            uint32_t at;
            /* (a list of losses the method sums item by item: `meter.update([l1, l2])`) */
            uint8_t ag = a->kind == VK_CONTAINER ? a->elem : a->grad;
            if (ag >= G_POST && method_accumulates(c, t, pos, &at)) {
                const IrLoop *l = &f->loops.items[loop];
                const IrFunc *g = c->m->funcs.items[t];
                bool live = ag == G_LIVE;
                const char *objtext = rule_text(c, f, r), *argtext = rule_text(c, f, aop);
                Diag *d = rule_report(c, o->span, live ? SEV_ERROR : SEV_WARNING,
                                      "'%s' keeps the autograd graph of every iteration: '%s' carries a %s graph "
                                      "and '%s' (line %u) adds it to an attribute of '%s', which lives across the "
                                      "%s loop at line %u; %s",
                                      objtext, argtext, live ? "live" : "freed", rule_func_name(c, g->qualname),
                                      rule_line(g->ops.items[at].span), objtext, df_loop_kind_name(l->kind),
                                      rule_line(l->span),
                                      live ? "each step's activations stay on the device"
                                           : "backward() freed the activations, but the graph's nodes pile up on the host");
                d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
                d->loop_line = rule_line(l->span);
                rule_related(c, d, g->ops.items[at].span, "the value is accumulated here");
                rule_related(c, d, l->span, "'%s' lives across this %s loop", objtext, df_loop_kind_name(l->kind));
                bool zero = (a->flags & VF_ZERO_DIM) != 0;
                if (a->kind == VK_CONTAINER) rule_hint(c, d, "Pass each element's '.item()' (or '.detach()')");
                else rule_hint(c, d, "Pass '%s.%s()'", argtext, zero ? "item" : "detach");
                rule_trace_value(c, d, f, "passed value", aop, a);
                break;
            }
            pos++;
        }
    }
}

/* `self.epoch_loss += loss` in a method that runs once per training step (Lightning's
 * training_step, a helper it calls, a method a training loop calls): the attribute lives on the
 * object across the steps, so it keeps every step's graph, unless the method itself starts it
 * again. */
/* Is f a method that takes one training step per call: backward() and an optimizer step at its
 * top level, in no loop (an agent's learn(), a trainer's train_step())? */
static bool one_step_method(RuleCtx *c, const IrFunc *f, const FuncFacts *ff)
{
    if (f->cls == IR_NONE || !ff->trains) return false;
    bool bw = false, step = false;
    for (uint32_t k = 0; k < f->ops.len && !(bw && step); k++) {
        if (!ff->reached[k] || f->ops.items[k].kind != IR_CALL || ir_op_loop(f, k) != IR_NONE) continue;
        if (df_is_backward_call(f, k)) bw = true;
        const char *m = ir_call_method(f, k);
        if (df_is_optimizer_step(c->fx, f, k) || (m && (api_method(m).flags & M_STEP) && f->ops.items[k].nargs == 0))
            step = true;
    }
    return bw && step;
}

static void per_step_attr_sum(RuleCtx *c, const IrFunc *f, const FuncFacts *ff, uint32_t i, uint32_t var,
                              uint32_t addop, uint32_t at)
{
    uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
    if (self_var == IR_NONE || ir_op_loop(f, i) != IR_NONE || var >= f->vars.len || f->vars.items[var].base != self_var)
        return;
    if (!ff->runs_per_step && !one_step_method(c, f, ff)) return;
    const AVal *add = &ff->val[addop];
    if (add->grad < G_POST || add->kind == VK_CONTAINER) return;
    for (uint32_t k = 0; k < f->ops.len; k++) /* started again in the call: one step's sum */
        if (k != i && ff->reached[k] && f->ops.items[k].kind == IR_SET_ATTR && f->ops.items[k].var == var) return;
    const char *attr = f->vars.items[var].name;
    const char *addtext = rule_text(c, f, addop);
    bool hook = !strcmp(f->name, "training_step") || ff->returns_loss;
    /* backward() frees the activations before the next step when it runs later in this call, or
     * on the loss the step returns (the framework's, or the caller's: a helper of training_step) */
    bool freed = hook || GL_MAX(ff->ret.grad, ff->ret.elem) == G_LIVE;
    for (uint32_t k = i + 1; k < f->ops.len && !freed; k++) freed = ff->reached[k] && df_is_backward_call(f, k);
    bool live = add->grad == G_LIVE && !freed;
    Diag *d = rule_report(c, f->ops.items[at].span, live ? SEV_ERROR : SEV_WARNING,
                          "'%s' keeps the autograd graph of every step: '%s' carries a graph and is added to "
                          "'%s', which lives on the object while `%s` runs every training step%s; %s",
                          attr, addtext, attr, rule_func_name(c, f->qualname),
                          hook ? " (the framework calls it once per batch)" : "",
                          live ? "each step's activations stay on the device"
                               : "backward() frees the activations, but the graph's nodes pile up on the host");
    d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
    if (add->src != IR_NONE && add->src < f->ops.len)
        rule_related(c, d, f->ops.items[add->src].span, "the graph comes from '%s'", rule_text(c, f, add->src));
    bool zero = (add->flags & VF_ZERO_DIM) != 0;
    const char *fixed = arena_printf(c->arena, "%s.%s()", addtext, zero ? "item" : "detach");
    rule_hint(c, d, "Add '%s'", fixed);
    rule_trace_value(c, d, f, "added value", addop, add);
    /* unsafe: whoever reads the attribute may expect a tensor */
    const IrOp *ao = &f->ops.items[addop];
    if (ao->span.row == ao->span.end_row && strlen(addtext) < 60) {
        const char *wrap = (ao->kind == IR_LOAD || ao->kind == IR_ATTR || ao->kind == IR_CALL || ao->kind == IR_ITEM)
                               ? fixed : arena_printf(c->arena, "(%s).%s()", addtext, zero ? "item" : "detach");
        rule_fix(c, d, FIX_UNSAFE, arena_printf(c->arena, "Replace '%s' with '%s'", addtext, wrap), ao->span.start,
                 ao->span.end, wrap);
    }
}

/* Does loop l iterate the keys, values or items of a mapping the method's object holds (`for k in
 * self.optimizers.keys()`, `for name, crit in self.criteria.items()`)? */
static bool over_own_entries(const IrFunc *f, const IrLoop *l)
{
    uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
    if (self_var == IR_NONE || l->iter == IR_NONE || l->is_while) return false;
    uint32_t at = l->iter;
    const IrOp *o = &f->ops.items[at];
    if (o->kind != IR_CALL) return false; /* (`for b in self.loader`: batches) */
    const char *m = ir_call_method(f, at);
    if (!m || o->nargs || (strcmp(m, "keys") && !(api_method(m).flags & M_ITEMS))) return false;
    at = ir_call_receiver(f, at);
    if (at == IR_NONE) return false;
    o = &f->ops.items[at];
    if (o->kind != IR_ATTR || o->a == IR_NONE) return false;
    const IrOp *b = &f->ops.items[o->a];
    return b->kind == IR_LOAD && b->var == self_var;
}

void rule_GL101(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        /* an evaluation function the file calls under no_grad (`with torch.no_grad(): test(model,
         * loader)`), training nothing itself: what it sums carries no graph there (as GL108);
         * unless a training step calls it too (a Lightning module's shared_step) */
        if (ff->called_grad_off && !ff->trains && !ff->per_step_grad_on) continue;
        if (ff->analysed) object_accumulations(c, f, ff);
        FnIndex idx;
        bool have_idx = false;
        for (uint32_t i = 0; i < f->ops.len; i++) {
            uint32_t var, accop, addop, at;
            bool inplace;
            if (!ff->reached[i] || !accumulation(f, i, &var, &accop, &addop, &at, &inplace)) continue;
            const IrOp *bo = &f->ops.items[at];
            const AVal *acc = &ff->val[accop], *add = &ff->val[addop];
            if (acc->kind == VK_CONTAINER || add->kind == VK_CONTAINER) continue; /* GL102's */
            if (add->grad < G_POST) continue;
            uint32_t loop = df_outliving_step(c->fx, f, acc, ir_op_loop(f, i));
            if (loop == IR_NONE) {
                per_step_attr_sum(c, f, ff, i, var, addop, at);
                continue;
            }
            const IrLoop *l = &f->loops.items[loop];
            /* bound afresh in every iteration before it is added to (`loss = ...` in each branch,
             * then `loss += penalty`): one iteration's sum */
            if (!inplace && rule_bound_before(f, l->op + 1, accop, var)) continue;
            /* a sampling loop that feeds the model's output back, without a backward: GL104 reports
             * it once, at the model call (as GL102) */
            if (l->kind == LOOP_FEEDBACK && !l->has_backward) continue;
            /* a loop over what a mapping of the object holds (`for name in self.optimizers.keys()`:
             * a GAN's generator and discriminator steps, one term each): one call's sum */
            if (over_own_entries(f, l)) continue;
            /* a sum over sampled models or decoding steps that the function returns to a caller of
             * the file that trains on it (as GL102 and GL104) */
            /* ... and so is a loop of a Module's method that runs the model over samples or
             * steps without a backward of its own, for the sum it returns (a loss over samples) */
            if ((l->kind == LOOP_FEEDBACK || (l->in_module_method && !l->has_backward && !l->has_opt_step)) &&
                rule_returns_graph_for_training(c, f))
                continue;
            /* (the analysis does not follow in-place writes: acc.add_(v) is judged by v) */
            const AVal *back = !inplace ? df_backedge(ff, loop, var) : NULL;
            uint8_t g = back ? back->grad : add->grad;
            if (g < G_POST) continue; /* reset before the iteration ends */
            bool live = g == G_LIVE;
            const char *accname = f->vars.items[var].name;
            const char *addtext = rule_text(c, f, addop);
            Diag *d;
            /* summed over the batches and differentiated once after the loop (gradient accumulation
             * done by building one graph): peak memory grows with the number of batches */
            if (!have_idx) index_build(&idx, f, ff, c->arena), have_idx = true;
            uint32_t later = live ? backward_of(&idx, var, l->end) : IR_NONE;
            if (later != IR_NONE) {
                d = rule_report(c, bo->span, SEV_ERROR,
                                "'%s' holds the autograd graph of every batch until backward() at line %u: '%s' "
                                "carries a live graph and is added to '%s' in the %s loop at line %u; each "
                                "batch's activations stay on the device until then, so memory grows with the "
                                "number of batches",
                                accname, rule_line(f->ops.items[later].span), addtext, accname,
                                df_loop_kind_name(l->kind), rule_line(l->span));
                d->growth = GROWTH_DEVICE;
                d->loop_line = rule_line(l->span);
                if (add->src != IR_NONE && add->src < f->ops.len)
                    rule_related(c, d, f->ops.items[add->src].span, "the graph comes from '%s'", rule_text(c, f, add->src));
                rule_related(c, d, f->ops.items[later].span, "backward() runs once, after every batch");
                rule_hint(c, d, "Call backward() on each batch's loss inside the loop (divided by the number of "
                                "batches for the same gradients) and add '%s.item()' to '%s' for reporting",
                          addtext, accname);
                rule_trace_value(c, d, f, "accumulator", accop, acc);
                rule_trace_value(c, d, f, "added value", addop, add);
                continue;
            }
            if (live)
                d = rule_report(c, bo->span, SEV_ERROR,
                                "'%s' keeps the autograd graph of every iteration: '%s' carries a live graph "
                                "and is added to '%s', which lives across the %s loop at line %u; each step's "
                                "activations stay on the device",
                                accname, addtext, accname, df_loop_kind_name(l->kind), rule_line(l->span));
            else if (add->grad == G_LIVE)
                d = rule_report(c, bo->span, SEV_WARNING,
                                "'%s' keeps the autograd graph of every iteration: '%s' is added before "
                                "backward() runs and '%s' lives across the %s loop at line %u; backward() frees "
                                "the activations, but the graph's nodes pile up on the host",
                                accname, addtext, accname, df_loop_kind_name(l->kind), rule_line(l->span));
            else
                d = rule_report(c, bo->span, SEV_WARNING,
                                "'%s' keeps the autograd graph of every iteration: '%s' is added after "
                                "backward() and '%s' lives across the %s loop at line %u; the graph's nodes "
                                "pile up on the host",
                                accname, addtext, accname, df_loop_kind_name(l->kind), rule_line(l->span));
            d->growth = live ? GROWTH_DEVICE : GROWTH_HOST;
            d->loop_line = rule_line(l->span);
            if (add->src != IR_NONE && add->src < f->ops.len)
                rule_related(c, d, f->ops.items[add->src].span, "the graph comes from '%s'", rule_text(c, f, add->src));
            rule_related(c, d, l->span, "'%s' lives across this %s loop", accname, df_loop_kind_name(l->kind));
            bool zero = (add->flags & VF_ZERO_DIM) != 0;
            const char *fixed = arena_printf(c->arena, "%s.%s()", addtext, zero ? "item" : "detach");
            rule_hint(c, d, "Use '%s'%s", fixed, zero ? " (or '.detach()')" : "");
            rule_trace_value(c, d, f, "accumulator", accop, acc);
            rule_trace_value(c, d, f, "added value", addop, add);
            if (back) rule_trace_value(c, d, f, arena_printf(c->arena, "'%s' at the end of an iteration", accname), IR_NONE, back);
            const IrOp *ao = &f->ops.items[addop];
            if (ao->span.row == ao->span.end_row && strlen(addtext) < 60) {
                /* safe when the accumulator starts as a number and is never used as a tensor */
                bool safe = !(acc->flags & VF_OUTER) && !used_as_tensor(&idx, var);
                const char *wrap = (ao->kind == IR_LOAD || ao->kind == IR_ATTR || ao->kind == IR_CALL || ao->kind == IR_ITEM)
                                       ? fixed : arena_printf(c->arena, "(%s).%s()", addtext, zero ? "item" : "detach");
                rule_fix(c, d, safe ? FIX_SAFE : FIX_UNSAFE,
                         arena_printf(c->arena, "Replace '%s' with '%s'", addtext, wrap), ao->span.start, ao->span.end, wrap);
            }
        }
    }
}
