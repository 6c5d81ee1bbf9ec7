/* GL105 retain-graph-in-loop: `backward(retain_graph=True)` that no later backward needs.
 *
 * ## What it does
 * Flags `loss.backward(retain_graph=True)` inside a training loop when no later `backward()` (or
 * `torch.autograd.grad`) in the same iteration uses the graph: none differentiates a value that
 * shares a call (a model's forward, a function of the file, a callable passed in) with this loss,
 * as in an actor-critic update whose losses come from separate networks and detached targets. A
 * later call that hands the losses to a function that trains or to an optimizer (MetaBalance's
 * `balancer.step([l1, l2])`) may need the graph, and so does a loop over losses of a forward made
 * before it (`for loss in task_losses: loss.backward(retain_graph=True)`): neither is flagged. It
 * is an error when the loop also carries a model output into the next step (the usual "backward
 * through the graph a second time" workaround): then every step's graph is retained. The same in
 * a function that makes one training step per call (an agent's `learn()`), where the graph is
 * kept until it returns; with `create_graph=True` outside a loop it is GL106's.
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
#include "ir/api.h"
#include "rules/rule.h"

/* What graph_sources needs of a function, built once per function: for each LOAD, the store of its
 * variable before it (straight-line code is what this compares) and the next one after it (in a
 * loop, the previous iteration's); scratch for the walks; a budget of walks. */
typedef struct SourceCtx {
    const IrFunc *f;
    uint32_t *prev, *next; /* [op] of a LOAD: IR_NONE when there is none */
    uint8_t *seen;
    uint32_t *work;
    uint32_t walks;
} SourceCtx;

static SourceCtx *source_ctx(RuleCtx *c, const IrFunc *f, SourceCtx **cache)
{
    if (*cache) return *cache;
    SourceCtx *x = *cache = ARENA_NEW(c->scratch, SourceCtx);
    x->f = f;
    uint32_t n = f->ops.len + 1, nv = f->vars.len + 1;
    x->prev = arena_alloc(c->scratch, sizeof *x->prev * n);
    x->next = arena_alloc(c->scratch, sizeof *x->next * n);
    x->seen = arena_alloc(c->scratch, n);
    x->work = arena_alloc(c->scratch, sizeof *x->work * n);
    x->walks = 0;
    uint32_t *last_store = arena_alloc(c->scratch, sizeof *last_store * nv);
    for (uint32_t v = 0; v < nv; v++) last_store[v] = IR_NONE;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        x->prev[i] = o->kind == IR_LOAD && o->var < nv ? last_store[o->var] : IR_NONE;
        if (o->kind == IR_STORE && o->var < nv) last_store[o->var] = i;
    }
    for (uint32_t v = 0; v < nv; v++) last_store[v] = IR_NONE;
    for (uint32_t i = f->ops.len; i-- > 0;) {
        const IrOp *o = &f->ops.items[i];
        x->next[i] = o->kind == IR_LOAD && o->var < nv ? last_store[o->var] : IR_NONE;
        if (o->kind == IR_STORE && o->var < nv) last_store[o->var] = i;
    }
    return x;
}

/* Marks in src[] the calls whose graphs the value of op holds: model calls, calls of the file's
 * functions and methods, plain calls of callables gradleak cannot see (a model passed in, a loss
 * function: both are marked, and what they were given is followed too), found by following the value back through
 * operands, the variables' stores and call arguments, never through detach()/.item()/.data.
 * Two calls of the same model are two graphs. Returns how many it marked. */
static uint32_t graph_sources(RuleCtx *c, SourceCtx *x, uint32_t op, uint8_t *src)
{
    const IrFunc *f = x->f;
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint8_t *seen = x->seen;
    memset(seen, 0, f->ops.len + 1);
    uint32_t *work = x->work, n = 0, marked = 0;
    work[n++] = op;
    seen[op] = 1;
#define PUSH(x) do { uint32_t x_ = (x); if (x_ != IR_NONE && x_ < f->ops.len && !seen[x_]) seen[x_] = 1, work[n++] = x_; } while (0)
    while (n) {
        uint32_t i = work[--n];
        const IrOp *o = &f->ops.items[i];
        const AVal *v = &ff->val[i];
        if (GL_MAX(v->grad, v->elem) == G_NONE) continue; /* no graph from here */
        switch (o->kind) {
        case IR_CALL: {
            const char *m = ir_call_method(f, i);
            ApiMethod am = api_method(m);
            if (m && (am.effect == EFF_DETACH || am.effect == EFF_SCALAR || am.effect == EFF_NONDIFF)) break;
            uint32_t t = df_call_target(c->m, c->fx, f, i);
            /* a model, a function of the file, or a callable gradleak cannot see (a model passed in
             * as well as a loss function): each call is a graph of its own */
            bool plain = !m && !(o->qual && api_is_torch(o->qual));
            if (df_is_module_call(c->fx, f, i) || (t != IR_NONE && t != f->index) || (v->flags & VF_OPAQUE) || plain)
                src[i] = 1, marked++;
            if (o->a != IR_NONE && f->ops.items[o->a].kind == IR_ATTR) PUSH(ir_call_receiver(f, i));
            for (uint32_t k = 0; k < o->nargs; k++) PUSH(f->args.items[o->args + k]);
            break;
        }
        case IR_ATTR:
            if (api_attr(o->name) == EFF_DETACH) break; /* .data */
            PUSH(o->a);
            break;
        case IR_LOAD: {
            /* the store before it, and in a loop the next one in its body (the previous iteration's) */
            PUSH(x->prev[i]);
            uint32_t lp = ir_op_loop(f, i);
            if (lp != IR_NONE && x->next[i] != IR_NONE && x->next[i] < f->loops.items[lp].end) PUSH(x->next[i]);
            break;
        }
        case IR_STORE: case IR_UNOP: case IR_UNPACK: case IR_NEXT: PUSH(o->a); break;
        case IR_BINOP: case IR_SELECT: case IR_ITEM: PUSH(o->a); PUSH(o->b); break;
        case IR_BUILD:
            for (uint32_t k = 0; k < o->nargs; k++) PUSH(f->args.items[o->args + k]);
            break;
        default: break;
        }
    }
#undef PUSH
    return marked;
}

/* Does backward j differentiate a graph that backward i's graph shares (a call both come from)?
 * A graph with no call gradleak can name (parameters used directly) may share anything. */
static bool shares_graph(RuleCtx *c, const IrFunc *f, uint32_t i, uint32_t j, SourceCtx **cache)
{
    uint32_t ri = ir_call_receiver(f, i), rj = ir_call_receiver(f, j);
    if (ri == IR_NONE || rj == IR_NONE) return true;
    SourceCtx *x = source_ctx(c, f, cache);
    /* each walk is linear in the function: past a few dozen (a function of hundreds of retaining
     * backwards) every pair is taken to share, as before this test existed */
    if (x->walks >= 64) return true;
    x->walks += 2;
    uint8_t *a = arena_alloc(c->scratch, f->ops.len + 1), *b = arena_alloc(c->scratch, f->ops.len + 1);
    memset(a, 0, f->ops.len + 1);
    memset(b, 0, f->ops.len + 1);
    if (!graph_sources(c, x, ri, a) || !graph_sources(c, x, rj, b)) return true;
    for (uint32_t k = 0; k < f->ops.len; k++)
        if (a[k] && b[k]) return true;
    return false;
}

/* Whether backward i differentiates only graphs made before loop l: the loss is the loop's target,
 * its graph did not come in inside the loop's body (it came from a parameter or a value computed
 * before it, or from nothing gradleak saw) and no call its value comes from (see graph_sources)
 * lies inside. */
static bool graph_before_loop(RuleCtx *c, const IrFunc *f, uint32_t i, const IrLoop *l, SourceCtx **cache)
{
    uint32_t ri = ir_call_receiver(f, i);
    if (ri == IR_NONE || f->ops.items[ri].kind != IR_LOAD || f->ops.items[ri].var == IR_NONE) return false;
    /* the loss is the loop's own target (`for loss in task_losses`, `for k, loss in enumerate(...)`):
     * every store of it in the loop is the loop's next item (a loss built in the loop from leaf
     * tensors by operators alone marks no call, but it is not this) */
    uint32_t var = f->ops.items[ri].var;
    for (uint32_t k = l->op + 1; k < l->end; k++) {
        const IrOp *st = &f->ops.items[k];
        if (st->kind != IR_STORE || st->var != var || st->a == IR_NONE) continue;
        const IrOp *src = &f->ops.items[st->a];
        if (src->kind == IR_UNPACK && src->a != IR_NONE) src = &f->ops.items[src->a];
        if (src->kind == IR_UNPACK && src->a != IR_NONE) src = &f->ops.items[src->a]; /* (i, (a, b)) */
        if (src->kind != IR_NEXT || src != &f->ops.items[l->op + 1]) return false;
    }
    /* where its graph came in: a parameter or a value of before the loop */
    const AVal *v = &c->fx->funcs[f->index].val[ri];
    if (v->src != IR_NONE && v->src > l->op && v->src < l->end) return false;
    SourceCtx *x = source_ctx(c, f, cache);
    if (x->walks >= 64) return false;
    x->walks++;
    uint8_t *a = arena_alloc(c->scratch, f->ops.len + 1);
    memset(a, 0, f->ops.len + 1);
    graph_sources(c, x, ri, a);
    for (uint32_t k = l->op + 1; k < l->end; k++)
        if (a[k]) return false;
    return true;
}

/* Whether call op hands a graph-carrying value to a function or method that trains (a function of
 * the file, or a class of another file of the run: `balancer.step([loss_a, loss_b])` whose step()
 * calls backward on each): it may differentiate the retained graph again. */
static bool hands_graph_to_trainer(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL) return false;
    const FuncFacts *ff = &c->fx->funcs[f->index];
    bool graph = false;
    for (uint32_t k = 0; k < o->nargs && !graph; k++) {
        const AVal *a = &ff->val[f->args.items[o->args + k]];
        graph = GL_MAX(a->grad, a->elem) >= G_POST;
    }
    if (!graph) return false;
    /* an optimizer given the losses (torch's take a closure, not a tensor): MetaBalance, PCGrad */
    uint32_t r = ir_call_receiver(f, op);
    if (r != IR_NONE && ff->val[r].kind == VK_OPTIM) return true;
    uint32_t t = df_call_target(c->m, c->fx, f, op);
    if (t != IR_NONE && t != f->index) return c->fx->funcs[t].trains;
    const ExternSummary *es = df_call_extern(c->fx, f, op);
    return es && es->trains;
}

/* retain_graph in a function that makes one training step per call (an agent's learn(), called by
 * the caller's loop): no later backward in the function needs the graph, and none returns it. */
static void report_in_step_function(RuleCtx *c, const IrFunc *f, uint32_t i, uint32_t loop, SourceCtx **cache)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    if (loop != IR_NONE || f->index == 0 || !ff->trains || GL_MAX(ff->ret.grad, ff->ret.elem) >= G_POST) return;
    for (uint32_t j = i + 1; j < f->ops.len; j++)
        if (df_is_backward_call(f, j) && ff->reached[j] && shares_graph(c, f, i, j, cache)) return;
    Diag *d = rule_report(c, f->ops.items[i].span, SEV_WARNING,
                          "%s in '%s', which makes one training step per call, but no later backward in it needs "
                          "the graph: its saved tensors are kept for nothing until it returns",
                          c->cxx ? "backward() with retain_graph=true" : "backward(retain_graph=True)",
                          rule_func_name(c, f->qualname));
    d->growth = GROWTH_NONE;
    rule_trace(c, d, "no later backward() of '%s' differentiates a graph that shares a call with this one",
               rule_func_name(c, f->qualname));
    rule_hint(c, d, c->cxx ? "Call backward() without retain_graph=true" : "Drop retain_graph=True");
    uint32_t rs, re;
    if (rule_kwarg_removal(c, f, i, ir_call_kwarg(f, i, "retain_graph"), &rs, &re))
        rule_fix(c, d, FIX_UNSAFE, "Remove `retain_graph=True`", rs, re, "");
}

void rule_GL105(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        SourceCtx *sources = NULL; /* shares_graph's, built on first need */
        for (uint32_t i = 0; i < f->ops.len; i++) {
            if (!ff->reached[i] || !df_is_backward_call(f, i)) continue;
            /* torch.autograd.grad(..., retain_graph=True) is how Hessians and penalties are built:
             * only backward() is in scope */
            const char *mname = ir_call_method(f, i);
            if (!(mname && !strcmp(mname, "backward")) && !(f->ops.items[i].qual && !strcmp(f->ops.items[i].qual, "torch.autograd.backward")))
                continue;
            if (!ir_const_true(f, ir_call_kwarg(f, i, "retain_graph"))) continue;
            /* with create_graph=True it builds higher-order gradients: GL106's */
            if (ir_const_true(f, ir_call_kwarg(f, i, "create_graph")) && ir_op_loop(f, i) == IR_NONE) continue;
            uint32_t loop = ir_op_loop(f, i), step = IR_NONE, outer = IR_NONE;
            for (uint32_t k = loop; k != IR_NONE; k = f->loops.items[k].parent)
                if (f->loops.items[k].kind == LOOP_STEP) {
                    if (step == IR_NONE) step = k;
                    outer = k;
                }
            if (step == IR_NONE) {
                report_in_step_function(c, f, i, loop, &sources);
                continue;
            }
            /* in a loop nested in the step (per-head backwards), the next inner iteration's backward
             * needs the graph */
            if (loop != step || outer != step) continue;
            const IrLoop *l = &f->loops.items[step];
            /* a later backward of the iteration that differentiates a graph sharing a model with
             * this one needs it (SAC's three losses over disjoint networks do not) */
            bool later = false;
            for (uint32_t j = i + 1; j < l->end && !later; j++)
                if (df_is_backward_call(f, j) && ff->reached[j] && shares_graph(c, f, i, j, &sources)) later = true;
                else if (ff->reached[j] && hands_graph_to_trainer(c, f, j)) later = true;
            if (later) continue;
            /* a graph built before the loop (`for loss in losses: loss.backward(retain_graph=True)`
             * over one forward's task losses): every iteration's backward walks it again */
            if (graph_before_loop(c, f, i, l, &sources)) continue;
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
            rule_trace(c, d, "with retain_graph=%s, and no later backward() of an iteration of the step loop at line %u "
                       "differentiates a graph that shares a call with it", rule_true(c), rule_line(l->span));
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
