/* GL109 running-statistics-keep-graph: a running statistic updated in forward() from the input's graph.
 *
 * ## What it does
 * Flags a running statistic that a Module keeps on `self` (a registered buffer, a tensor attribute)
 * when `forward()`, or a method that forward calls, updates it from batch statistics of an input
 * that carries an autograd graph, outside `torch.no_grad()`:
 * `self.avg = m * self.avg + (1 - m) * x.mean(0)`, `self.avg.mul_(m).add_(x.mean(0))` (also
 * `add_(..., alpha=)`, `lerp_`, `addcmul_`, `copy_`), `self.avg[:] = ...`, or a helper (a method or
 * a function) that returns the new statistic which forward stores. An input of `forward` is taken
 * to carry a graph unless every call of the module in the file shows otherwise (all under
 * `torch.no_grad()`, or fed raw batches that carry none; a module placed in `nn.Sequential`, a list
 * or a wrapper has calls gradleak cannot see); a value from a submodule call does. The update is an
 * error when it computes statistics the output does not use and whose backward saves a tensor
 * (`x.var(0)`, `x.pow(2)`, `amax`, `addcmul_`): backward never reaches them, so what they save
 * stays on the device. It is a warning when everything it takes from the input also feeds the
 * output (or saves nothing, like a plain `x.mean(0)`): backward frees the saved tensors and only
 * autograd nodes pile up on the host. A cache or memory bank that forward writes into
 * (`self.queue[:, i:j] = keys`, a key/value cache) chains the same way and is reported too.
 *
 * Not flagged: updates under `torch.no_grad()` (a `with` block, a decorated helper, or a helper
 * whose every call from forward is under one), statistics cut with `.detach()`, `.data` or
 * `.item()`, values that do not depend on the input (step counters, sizes, statistics of a buffer
 * or a constant), the running statistics of torch's own batch norm (`nn.BatchNorm*`,
 * `F.batch_norm(x, running_mean, running_var, ...)` update them under no_grad), a plain overwrite
 * that does not read the previous value (`self.last = x.mean(0)`: bounded, one call's graph; also
 * a key of a dict or list attribute, `self._inputs["image"] = image`, which is replaced), a
 * state that every forward() starts again before it accumulates (a decoder's attention weights,
 * zeroed by forward or by a method of the class it calls outside its loops, unconditionally; moving
 * the old value to another device is no new start), a scratch attribute forward sets afresh on
 * every path before it computes from it (`self.pred = dropout(P)` then `self.pred =
 * torch.mm(self.pred, h)`), a value written once under a test of itself
 * (`if Z < 0: self.params[2] = out.mean() * n` after `Z = self.params[2].item()`: set on the first
 * call, only read afterwards; the else branch of such a test is still checked), and an
 * average of the module's own parameters that involves no input (`self.slow = d * self.slow +
 * (1 - d) * self.lin.weight`: parameters are leaves, so the chain holds autograd nodes but no
 * activation). A state that forward passes back into a model call (`self.hidden` of an RNN) is
 * GL103's. Only methods of Module classes are analysed: a trainer's method that blends a loss into
 * `self` per step is GL101's pattern, and an average of a model's parameters kept by training code
 * (ModelEMA) is not reported (the idiom runs under no_grad; without it, an in-place update of a
 * parameter that requires grad fails at once, and after `requires_grad_(False)` only autograd nodes
 * pile up on the host). Known false findings: a normaliser of raw observations (an RL encoder's
 * first layer), or a key/value cache of a model that only runs under no_grad, whose calls are all
 * in another file, is taken to see a graph.
 *
 * ## Why is this bad?
 * The new value is computed from the previous one, so every forward's graph links to the last:
 * the statistic's `grad_fn` chain grows by one step per call and nothing ever frees it. Measured on
 * an H100 (a 256x4096 layer): when the update computes its own `x.mean(0)`/`x.var(0)`, every step
 * keeps one input activation on the device (+4.2 MB per step, unbounded); when the output uses the
 * same statistics, device memory stays flat while the host-side graph grows. torch's BatchNorm does
 * the same update under no_grad.
 *
 * ## Example
 * ```python
 * class RunningNorm(nn.Module):
 *     def forward(self, x):
 *         mu, var = x.mean(0), x.var(0)
 *         self.running_var = 0.9 * self.running_var + 0.1 * x.var(0)
 *         return (x - mu) / (var + 1e-5).sqrt()
 * ```
 *
 * Use instead:
 * ```python
 * class RunningNorm(nn.Module):
 *     def forward(self, x):
 *         mu, var = x.mean(0), x.var(0)
 *         with torch.no_grad():
 *             self.running_var = 0.9 * self.running_var + 0.1 * var
 *         return (x - mu) / (var + 1e-5).sqrt()
 * ```
 *
 * ## Fix safety
 * The fix detaches what is stored: `self.avg = (...).detach()`, `self.avg[:] = (...).detach()`,
 * or each graph-carrying argument of the in-place update (`add_((...).detach())`). The values are
 * the same; it is unsafe because code that differentiates through the running statistic on
 * purpose would lose that gradient. Statistics unpacked from one helper's tuple
 * (`self.avg, self.var = update(...)`) get no fix: wrap the call in `torch.no_grad()`.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm1d.html
 * - https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
 */
#include "rules/rule.h"

#define RS_MAX_DEPTH 3    /* helper levels followed into a callee (and methods reached from forward) */
#define RS_MAX_VISITS 2048 /* ops visited by one walk */

/* What each method of a Module class receives: bit k of graph is set when parameter k may carry the
 * input's graph, bit k of saves when that graph holds tensors only this update uses. */
typedef struct MethodCtx {
    uint16_t graph, saves;
    uint8_t reached;
    uint32_t why_fi, why_op; /* a caller's op that saves a tensor for what it passes (for messages) */
} MethodCtx;

/* One item of a walk back through the values an op is computed from. */
typedef struct WalkItem {
    uint32_t fi, op;
    uint16_t graph, saves;
    uint8_t depth;
    uint8_t via_model; /* reached through a model call's arguments (a recurrent state) */
} WalkItem;

typedef enum WalkMode { WALK_CHAIN, WALK_SAVE } WalkMode;

/* Per-file caches, so a walk costs what it visits (a file with thousands of updates stays linear):
 * per function, a visit stamp per op and the stores of each variable. */
typedef struct RsFunc {
    uint32_t *stamp;          /* op visited by the walk whose generation this is */
    uint32_t *vstart, *vstore; /* vstore[vstart[v]..vstart[v+1]): the reached stores of variable v */
} RsFunc;

typedef struct RsFile {
    RuleCtx *c;
    RsFunc *fn;
    uint32_t gen;
    uint32_t loop_fi, loop; /* the step loop calling the current class's model, or IR_NONE */
} RsFile;

typedef struct Walk {
    RuleCtx *c;
    RsFile *rf;
    uint32_t gen;
    WalkMode mode;
    uint32_t cls;        /* the class whose attribute is updated */
    const char *attr;    /* WALK_CHAIN: the attribute whose previous value is looked for */
    const uint8_t *out;  /* WALK_SAVE: ops of the root function that feed its result (shared) */
    uint32_t root_fi;
    Array(WalkItem) work;
    uint8_t cur_via;     /* the via_model of the item being walked, inherited by what it pushes */
    /* results */
    bool chain;          /* WALK_CHAIN: reads the attribute as the previous call left it */
    bool chain_model;    /* ... only through a model call: a recurrent state (GL103's) */
    bool tensor_op;      /* WALK_CHAIN: a graph-carrying tensor operation or model output on the way */
    uint32_t save_fi, save_op; /* WALK_SAVE: the first op whose backward keeps a tensor */
} Walk;

static bool rs__name_in(const char *n, const char *const *list, size_t len)
{
    for (size_t k = 0; n && k < len; k++)
        if (!strcmp(n, list[k])) return true;
    return false;
}

/* In-place tensor methods that write their arguments into the receiver. */
static bool rs__inplace(const char *m)
{
    static const char *const names[] = {"add_", "sub_", "mul_", "div_", "copy_", "lerp_", "addcmul_", "addcdiv_"};
    return rs__name_in(m, names, ARRAY_LEN(names));
}

/* Tensor operations whose backward saves no tensor (only sizes or scalars): a statistic built
 * from these alone keeps nothing on the device once the input's own graph is freed. */
static bool rs__saves_nothing(const char *n)
{
    static const char *const names[] = {
        "mean", "sum", "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "transpose",
        "permute", "t", "squeeze", "unsqueeze", "contiguous", "expand", "expand_as", "repeat", "clone", "to",
        "float", "half", "double", "bfloat16", "type_as", "cuda", "cpu", "add", "sub", "neg", "narrow", "select",
        "movedim", "split", "chunk", "unbind", "cat", "concat", "stack", "add_", "sub_", "copy_", "lerp_",
    };
    return rs__name_in(n, names, ARRAY_LEN(names));
}

static const char *rs__call_name(const IrFunc *f, uint32_t op)
{
    const char *m = ir_call_method(f, op);
    if (m) return m;
    const char *q = f->ops.items[op].qual;
    const char *dot = q ? strrchr(q, '.') : NULL;
    return dot ? dot + 1 : q;
}

/* Is op (in f) `self` — parameter 0 of a method of class cls? */
static bool rs__is_self(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    if (op == IR_NONE || f->cls == IR_NONE) return false;
    const AVal *v = &c->fx->funcs[f->index].val[op];
    return f->ops.items[op].kind == IR_LOAD && (v->kind == VK_MODULE || v->kind == VK_OBJECT) && v->ref == f->cls;
}

/* The attribute name when op is `self.<name>` read or written in a method of self's class. */
static const char *rs__self_attr(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if ((o->kind != IR_ATTR && o->kind != IR_SET_ATTR) || !o->name || !rs__is_self(c, f, o->a)) return NULL;
    return o->name;
}

/* Does the value of op carry the input's graph, given which parameters carry one? A submodule's
 * output does; a parameter-derived value does when its parameter does; nothing computed under
 * no_grad or detached does. */
static bool rs__carries(RuleCtx *c, const IrFunc *f, uint32_t op, uint16_t graph)
{
    if (op == IR_NONE) return false;
    const AVal *v = &c->fx->funcs[f->index].val[op];
    if (GL_MAX(v->grad, v->elem) < G_MAY) return false;
    return (v->flags & VF_MODEL_OUT) || (v->pmask & graph);
}

/* The function of the file a call runs: a local function, or a method of the caller's own class
 * called on self (IR_NONE otherwise). *self_call says which. */
static uint32_t rs__local_target(RuleCtx *c, const IrFunc *f, uint32_t op, bool *self_call)
{
    const IrOp *o = &f->ops.items[op];
    *self_call = false;
    if (o->kind != IR_CALL || o->a == IR_NONE) return IR_NONE;
    const AVal *cv = &c->fx->funcs[f->index].val[o->a];
    if (cv->kind == VK_FUNC && cv->ref != IR_NONE && cv->ref < c->m->funcs.len) return cv->ref;
    const char *m = ir_call_method(f, op);
    uint32_t r = ir_call_receiver(f, op);
    if (!m || !rs__is_self(c, f, r)) return IR_NONE;
    const IrClass *cls = c->m->classes.items[f->cls];
    for (uint32_t k = 0; k < cls->methods.len; k++)
        if (!strcmp(c->m->funcs.items[cls->methods.items[k]]->name, m)) {
            *self_call = true;
            return cls->methods.items[k];
        }
    return IR_NONE;
}

/* The caller's op passed for parameter k of the callee (k = 0 is self for a method call). */
static uint32_t rs__arg_for_param(const IrFunc *f, uint32_t call, bool self_call, uint32_t k)
{
    const IrOp *o = &f->ops.items[call];
    if (self_call) {
        if (k == 0) return ir_call_receiver(f, call);
        k--;
    }
    uint32_t pos = 0;
    for (uint32_t i = 0; i < o->nargs; i++) {
        if (f->kw.items[o->args + i]) continue;
        if (pos++ == k) return f->args.items[o->args + i];
    }
    return IR_NONE;
}

/* The caches of function fi, built on first use (from the arena: they live as long as the file). */
static const RsFunc *rs__func(RsFile *rf, uint32_t fi)
{
    RsFunc *r = &rf->fn[fi];
    if (r->stamp) return r;
    const IrFunc *f = rf->c->m->funcs.items[fi];
    const FuncFacts *ff = &rf->c->fx->funcs[fi];
    uint32_t n = f->ops.len, nv = f->vars.len;
    r->stamp = ARENA_NEW_N(rf->c->arena, uint32_t, n ? n : 1);
    r->vstart = ARENA_NEW_N(rf->c->arena, uint32_t, nv + 1);
    for (uint32_t k = 0; k < n; k++) {
        const IrOp *s = &f->ops.items[k];
        if ((s->kind == IR_STORE || s->kind == IR_SET_ATTR) && s->var < nv && ff->reached[k]) r->vstart[s->var + 1]++;
    }
    for (uint32_t v = 0; v < nv; v++) r->vstart[v + 1] += r->vstart[v];
    r->vstore = ARENA_NEW_N(rf->c->arena, uint32_t, r->vstart[nv] ? r->vstart[nv] : 1);
    uint32_t *fill = ARENA_NEW_N(rf->c->arena, uint32_t, nv ? nv : 1);
    for (uint32_t k = 0; k < n; k++) {
        const IrOp *s = &f->ops.items[k];
        if ((s->kind == IR_STORE || s->kind == IR_SET_ATTR) && s->var < nv && ff->reached[k])
            r->vstore[r->vstart[s->var] + fill[s->var]++] = k;
    }
    return r;
}

static void rs__push_via(Walk *w, uint32_t fi, uint32_t op, uint16_t graph, uint16_t saves, uint8_t depth, uint8_t via)
{
    if (op == IR_NONE || op >= w->c->m->funcs.items[fi]->ops.len || w->work.len >= RS_MAX_VISITS) return;
    WalkItem it = {fi, op, graph, saves, depth, via};
    array_push(&w->work, it);
}

static void rs__push(Walk *w, uint32_t fi, uint32_t op, uint16_t graph, uint16_t saves, uint8_t depth)
{
    rs__push_via(w, fi, op, graph, saves, depth, w->cur_via);
}

/* Pushes the positional arguments (and the receiver) of a call. */
static void rs__push_operands(Walk *w, const IrFunc *f, uint32_t op, const WalkItem *it)
{
    const IrOp *o = &f->ops.items[op];
    uint32_t r = ir_call_receiver(f, op);
    uint8_t via = it->via_model || df_is_module_call(w->c->fx, f, op);
    if (r != IR_NONE) rs__push_via(w, it->fi, r, it->graph, it->saves, it->depth, via);
    for (uint32_t i = 0; i < o->nargs; i++) {
        const char *kw = f->kw.items[o->args + i];
        if (kw && strcmp(kw, "*") && strcmp(kw, "**")) continue; /* keyword options carry no data */
        rs__push_via(w, it->fi, f->args.items[o->args + i], it->graph, it->saves, it->depth, via);
    }
}

/* Does the backward of op (graph-carrying) save a tensor? Calls not known to save nothing do;
 * products, quotients and powers of two tensors do. */
static bool rs__op_saves(RuleCtx *c, const IrFunc *f, uint32_t op, uint16_t graph)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind == IR_CALL) {
        const char *n = rs__call_name(f, op);
        if (n && (!strcmp(n, "mul_") || !strcmp(n, "div_"))) {
            for (uint32_t i = 0; i < o->nargs; i++)
                if (!f->kw.items[o->args + i] && rs__carries(c, f, f->args.items[o->args + i], graph)) return true;
            return false;
        }
        return !rs__saves_nothing(n);
    }
    /* a product saves each operand for the other's gradient: an activation only when both carry
     * the input's graph (`x * x`), not when one is a number or a buffer (`m * x`) */
    if (o->kind != IR_BINOP) return false;
    if (o->aux != BIN_MUL && o->aux != BIN_DIV && o->aux != BIN_POW && o->aux != BIN_MATMUL) return false;
    return rs__carries(c, f, o->a, graph) && rs__carries(c, f, o->b, graph);
}

static void rs__walk_op(Walk *w, const WalkItem *it)
{
    RuleCtx *c = w->c;
    const IrFunc *f = c->m->funcs.items[it->fi];
    const FuncFacts *ff = &c->fx->funcs[it->fi];
    const IrOp *o = &f->ops.items[it->op];
    const AVal *v = &ff->val[it->op];
    uint32_t op = it->op;
    if (!ff->reached[op]) return;
    if (w->mode == WALK_SAVE && it->fi == w->root_fi && w->out[op]) return; /* the output uses it too */
    /* the previous value of the attribute, as the last call left it */
    const char *attr = o->kind == IR_ATTR ? rs__self_attr(c, f, op) : NULL;
    if (attr && w->mode == WALK_CHAIN && f->cls == w->cls && !strcmp(attr, w->attr) && v->carried == CARRIED_CALLS) {
        if (it->via_model) w->chain_model = true;
        else w->chain = true;
    }
    /* no graph flows through a value that has none: detach(), .item(), no_grad, comparisons */
    if (GL_MAX(v->grad, v->elem) == G_NONE && !(attr && v->carried == CARRIED_CALLS)) return;
    if (w->mode == WALK_CHAIN && rs__carries(c, f, op, it->graph) && (o->kind == IR_CALL || (v->flags & VF_MODEL_OUT)))
        w->tensor_op = true;
    switch ((IrOpKind)o->kind) {
    case IR_PARAM:
        if (w->mode == WALK_SAVE && o->aux < 16 && (it->saves >> o->aux & 1) && w->save_op == IR_NONE)
            w->save_fi = it->fi, w->save_op = op;
        break;
    case IR_LOAD:
    case IR_ATTR: {
        if (o->kind == IR_ATTR && !attr) rs__push(w, it->fi, o->a, it->graph, it->saves, it->depth);
        if (o->var == IR_NONE || (o->kind == IR_LOAD && f->vars.items[o->var].is_global)) break;
        if (attr && v->carried == CARRIED_CALLS) break;
        /* the stores of the variable that reach this read: earlier ones, or any in an enclosing loop */
        uint32_t loop = ir_op_loop(f, op);
        const RsFunc *rfn = rs__func(w->rf, it->fi);
        for (uint32_t j = rfn->vstart[o->var]; j < rfn->vstart[o->var + 1]; j++) {
            uint32_t k = rfn->vstore[j];
            const IrOp *s = &f->ops.items[k];
            if (k > op && (loop == IR_NONE || !ir_loop_contains(f, loop, k))) continue;
            rs__push(w, it->fi, s->kind == IR_STORE ? s->a : s->b, it->graph, it->saves, it->depth);
        }
        break;
    }
    case IR_STORE: rs__push(w, it->fi, o->a, it->graph, it->saves, it->depth); break;
    case IR_SET_ATTR: rs__push(w, it->fi, o->b, it->graph, it->saves, it->depth); break;
    case IR_BINOP:
    case IR_SELECT:
        if (w->mode == WALK_SAVE && o->kind == IR_BINOP && w->save_op == IR_NONE && rs__carries(c, f, op, it->graph) &&
            rs__op_saves(c, f, op, it->graph))
            w->save_fi = it->fi, w->save_op = op;
        rs__push(w, it->fi, o->a, it->graph, it->saves, it->depth);
        rs__push(w, it->fi, o->b, it->graph, it->saves, it->depth);
        break;
    case IR_UNOP: case IR_ITEM: case IR_UNPACK: case IR_NEXT: case IR_RETURN:
        rs__push(w, it->fi, o->a, it->graph, it->saves, it->depth);
        break;
    case IR_BUILD:
        for (uint32_t k = 0; k < o->nargs; k++) rs__push(w, it->fi, f->args.items[o->args + k], it->graph, it->saves, it->depth);
        break;
    case IR_CALL: {
        bool self_call;
        uint32_t t = rs__local_target(c, f, op, &self_call);
        if (t == IR_NONE || t == it->fi || it->depth >= RS_MAX_DEPTH || !c->fx->funcs[t].analysed) {
            if (w->mode == WALK_SAVE && w->save_op == IR_NONE && rs__carries(c, f, op, it->graph) && rs__op_saves(c, f, op, it->graph))
                w->save_fi = it->fi, w->save_op = op;
            rs__push_operands(w, f, op, it);
            break;
        }
        /* a helper of the file: what it returns, computed from what it is given */
        const IrFunc *tf = c->m->funcs.items[t];
        const FuncFacts *tff = &c->fx->funcs[t];
        uint16_t g = 0;
        for (uint32_t k = 0; k < tf->nparams && k < 16; k++)
            if (rs__carries(c, f, rs__arg_for_param(f, op, self_call, k), it->graph)) g |= (uint16_t)(1u << k);
        /* the arguments are values of this function, walked here (so the output check applies to
         * them); inside the helper its parameters are where the walk stops */
        for (uint32_t k = 0; k < tf->nparams && k < 16; k++)
            if (tff->ret.pmask >> k & 1) rs__push(w, it->fi, rs__arg_for_param(f, op, self_call, k), it->graph, it->saves, it->depth);
        for (uint32_t k = 0; k < tf->ops.len; k++)
            if (tf->ops.items[k].kind == IR_RETURN) rs__push(w, t, k, g, 0, (uint8_t)(it->depth + 1));
        break;
    }
    default:
        break;
    }
}

static void rs__walk(Walk *w)
{
    uint32_t visits = 0;
    while (w->work.len && visits++ < RS_MAX_VISITS) {
        WalkItem it = array_pop(&w->work);
        uint32_t *stamp = rs__func(w->rf, it.fi)->stamp;
        if (stamp[it.op] == w->gen) continue;
        stamp[it.op] = w->gen;
        w->cur_via = it.via_model;
        rs__walk_op(w, &it);
    }
}

static void rs__walk_init(Walk *w, RsFile *rf, WalkMode mode, uint32_t root_fi)
{
    memset(w, 0, sizeof *w);
    w->c = rf->c;
    w->rf = rf;
    w->gen = ++rf->gen;
    w->mode = mode;
    w->root_fi = root_fi;
    w->save_op = w->save_fi = IR_NONE;
    array_init(&w->work);
}

static void rs__walk_free(Walk *w) { array_free(&w->work); }

/* The ops of f that feed what it returns (its output): statistics used there are shared with the
 * loss, and backward frees what they save. */
static uint8_t *rs__output_ops(RsFile *rf, const IrFunc *f)
{
    uint8_t *out = ARENA_NEW_N(rf->c->arena, uint8_t, f->ops.len ? f->ops.len : 1);
    Walk w;
    rs__walk_init(&w, rf, WALK_CHAIN, f->index);
    w.attr = "";
    w.cls = IR_NONE;
    for (uint32_t k = 0; k < f->ops.len; k++)
        if (f->ops.items[k].kind == IR_RETURN) rs__push(&w, f->index, k, 0xffff, 0, RS_MAX_DEPTH);
    rs__walk(&w);
    const uint32_t *stamp = rs__func(rf, f->index)->stamp;
    for (uint32_t k = 0; k < f->ops.len; k++) out[k] = stamp[k] == w.gen;
    rs__walk_free(&w);
    return out;
}

/* Does the value at op (in method f) save, for this update alone, a tensor of the input's graph?
 * Gives the op that does. */
static bool rs__update_saves(RsFile *rf, const IrFunc *f, const MethodCtx *mc, const uint8_t *out, uint32_t op,
                             uint32_t *save_fi, uint32_t *save_op)
{
    Walk w;
    rs__walk_init(&w, rf, WALK_SAVE, f->index);
    w.out = out;
    rs__push(&w, f->index, op, mc->graph, mc->saves, 0);
    rs__walk(&w);
    *save_fi = w.save_fi, *save_op = w.save_op;
    rs__walk_free(&w);
    return *save_op != IR_NONE;
}

static bool rs__is_instance(const AVal *v, uint32_t cls)
{
    return v->kind == VK_MODULE && v->ref == cls;
}

/* Which inputs of class cls's forward may carry a graph. Every one of them, unless the file shows
 * every use of the class: no instance escapes into something gradleak cannot follow (a container, a
 * wrapper such as nn.Sequential or DataParallel, a function of another file), and each call of an
 * instance is seen. Then an input carries a graph when some call passes one that may (a model's
 * first layer fed raw batches does not), and no input does when every call runs under no_grad. */
static uint16_t rs__forward_inputs(RuleCtx *c, uint32_t cls)
{
    uint16_t mask = 0;
    bool called = false;
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        if (!ff->analysed) return 0xfffe;
        for (uint32_t op = 0; op < f->ops.len; op++) {
            const IrOp *o = &f->ops.items[op];
            if (!ff->reached[op]) continue;
            if (o->kind == IR_SET_ITEM && o->c != IR_NONE && rs__is_instance(&ff->val[o->c], cls)) return 0xfffe;
            if (o->kind != IR_CALL && o->kind != IR_BUILD) continue;
            bool self_call;
            bool local = o->kind == IR_CALL && rs__local_target(c, f, op, &self_call) != IR_NONE;
            const char *m = o->kind == IR_CALL ? ir_call_method(f, op) : NULL;
            uint32_t recv = o->kind == IR_CALL ? ir_call_receiver(f, op) : IR_NONE;
            bool via_forward = m && !strcmp(m, "forward") && recv != IR_NONE && rs__is_instance(&ff->val[recv], cls);
            /* net(x), and self.norm(h) for a submodule held in an attribute */
            bool instance_call = o->kind == IR_CALL && o->a != IR_NONE && df_is_module_call(c->fx, f, op) &&
                                 rs__is_instance(&ff->val[o->a], cls);
            if (instance_call || via_forward) {
                called = true;
                if (df_mode_off(o->mode)) continue;
                /* a call with grad on: the module's own submodules give its forward a graph even
                 * when the inputs carry none (`h = self.inp(x)` on a raw batch); bit 15 says so
                 * without marking a parameter */
                mask |= 0x8000;
                uint32_t pos = 0;
                for (uint32_t i = 0; i < o->nargs; i++) {
                    const char *kw = f->kw.items[o->args + i];
                    const AVal *a = &ff->val[f->args.items[o->args + i]];
                    bool may = GL_MAX(a->grad, a->elem) >= G_MAY;
                    if (kw && (!strcmp(kw, "*") || !strcmp(kw, "**"))) {
                        if (may) mask = 0xfffe;
                        continue;
                    }
                    if (kw) {
                        if (may) mask = 0xfffe; /* a keyword input: which parameter is not tracked */
                        continue;
                    }
                    if (may && pos + 1 < 16) mask |= (uint16_t)(1u << (pos + 1));
                    pos++;
                }
                continue;
            }
            if (local) continue; /* passed to a helper of the file: its calls are seen there */
            /* an instance handed to anything else escapes: its calls are not seen */
            for (uint32_t i = 0; i < o->nargs; i++)
                if (rs__is_instance(&ff->val[f->args.items[o->args + i]], cls)) return 0xfffe;
        }
    }
    return called ? mask : 0xfffe;
}

/* Methods reached from forward through calls on self, and what each receives. Calls under no_grad
 * pass no graph. */
static void rs__method_contexts(RsFile *rf, const IrClass *cls, MethodCtx *mc, uint16_t inputs)
{
    RuleCtx *c = rf->c;
    for (uint32_t k = 0; k < cls->methods.len; k++) {
        MethodCtx *x = &mc[cls->methods.items[k]];
        memset(x, 0, sizeof *x);
        x->why_fi = x->why_op = IR_NONE;
    }
    mc[cls->forward].reached = 1;
    mc[cls->forward].graph = inputs;
    for (int pass = 0; pass < RS_MAX_DEPTH + 1; pass++) {
        bool changed = false;
        for (uint32_t mi = 0; mi < cls->methods.len; mi++) {
            uint32_t fi = cls->methods.items[mi];
            if (!mc[fi].reached) continue;
            const IrFunc *f = c->m->funcs.items[fi];
            const FuncFacts *ff = &c->fx->funcs[fi];
            uint8_t *out = NULL;
            for (uint32_t op = 0; op < f->ops.len; op++) {
                bool self_call;
                if (!ff->reached[op] || df_mode_off(f->ops.items[op].mode)) continue;
                uint32_t t = rs__local_target(c, f, op, &self_call);
                if (t == IR_NONE || !self_call || t == fi) continue;
                MethodCtx n = mc[t];
                n.reached = 1;
                for (uint32_t k = 1; k < c->m->funcs.items[t]->nparams && k < 16; k++) {
                    uint32_t a = rs__arg_for_param(f, op, true, k);
                    if (!rs__carries(c, f, a, mc[fi].graph)) continue;
                    n.graph |= (uint16_t)(1u << k);
                    if (!out) out = rs__output_ops(rf, f);
                    uint32_t sfi, sop;
                    if (!rs__update_saves(rf, f, &mc[fi], out, a, &sfi, &sop)) continue;
                    n.saves |= (uint16_t)(1u << k);
                    if (n.why_op == IR_NONE) n.why_fi = sfi, n.why_op = sop;
                }
                if (n.graph != mc[t].graph || n.saves != mc[t].saves || !mc[t].reached) changed = true;
                mc[t] = n;
            }
        }
        if (!changed) break;
    }
}

typedef struct Update {
    uint32_t at;       /* the op reported (the store, or the in-place call) */
    uint32_t val;      /* the value stored (IR_NONE for an in-place call: see its arguments) */
    const char *attr;
    const char *how;   /* "assigned", "updated in place", "written through a slice" */
} Update;

/* The in-place call chain `self.a.mul_(m).add_(v)` ending at op: the attribute it writes when its
 * root is `self.a` as the previous call left it. */
static const char *rs__inplace_root(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    for (int guard = 0; guard < 8; guard++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind == IR_ATTR) {
            const char *a = rs__self_attr(c, f, op);
            return a && ff->val[op].carried == CARRIED_CALLS ? a : NULL;
        }
        if (o->kind != IR_CALL || !rs__inplace(ir_call_method(f, op))) return NULL;
        op = ir_call_receiver(f, op);
        if (op == IR_NONE) return NULL;
    }
    return NULL;
}

/* Is op in the then-branch of an `if` whose condition reads attr itself (`if Z < 0:` after `Z =
 * self.params[2].item()`, then `self.params[2] = out.mean() * n`)? A sentinel the write replaces:
 * the value is set once, on the first call, and never chained to the next. Bounded walks. */
static bool rs__set_once(RuleCtx *c, const IrFunc *f, uint32_t op, const char *attr)
{
    int depth = 0, ifs = 0;
    bool in_else = false;
    for (uint32_t i = op; i-- > 0 && ifs < 4;) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_END_IF) depth++;
        else if (o->kind == IR_ELSE && depth == 0) in_else = true;
        else if (o->kind == IR_IF && depth > 0) depth--;
        else if (o->kind == IR_IF) {
            ifs++;
            bool was_else = in_else;
            in_else = false;
            if (was_else || o->a == IR_NONE) continue;
            uint32_t stack[32], sp = 0, visits = 0;
            stack[sp++] = o->a;
            while (sp && visits++ < 64) {
                uint32_t k = stack[--sp];
                if (k == IR_NONE || k >= f->ops.len) continue;
                const IrOp *ko = &f->ops.items[k];
                const char *name = rs__self_attr(c, f, k);
                if (name && !strcmp(name, attr)) return true;
                switch ((IrOpKind)ko->kind) {
                case IR_LOAD: /* a local bound before the if */
                    for (uint32_t s = 0; s < i && ko->var != IR_NONE; s++) {
                        const IrOp *so = &f->ops.items[s];
                        if (so->kind == IR_STORE && so->var == ko->var && sp < ARRAY_LEN(stack)) stack[sp++] = so->a;
                    }
                    break;
                case IR_CALL: {
                    uint32_t r = ir_call_receiver(f, k);
                    if (r != IR_NONE && sp < ARRAY_LEN(stack)) stack[sp++] = r;
                    for (uint32_t a = 0; a < ko->nargs && sp < ARRAY_LEN(stack); a++) stack[sp++] = f->args.items[ko->args + a];
                    break;
                }
                case IR_ITEM: case IR_BINOP: case IR_COMPARE: case IR_UNOP: case IR_SELECT:
                    if (ko->a != IR_NONE && sp < ARRAY_LEN(stack)) stack[sp++] = ko->a;
                    if (ko->b != IR_NONE && sp < ARRAY_LEN(stack)) stack[sp++] = ko->b;
                    break;
                default:
                    break;
                }
            }
        }
    }
    return false;
}

static bool rs__gl103_owns(RuleCtx *c, uint32_t cls, const char *attr)
{
    const ClassFacts *cf = &c->fx->classes[cls];
    for (uint32_t k = 0; k < cf->carried_attrs.len; k++)
        if (!strcmp(cf->carried_attrs.items[k], attr)) return true;
    return false;
}

/* `v.detach()`, with parentheses unless v is a name, call, attribute or subscript. */
static const char *rs__detached(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const char *t = ir_span_text(c->m, o->span, c->arena);
    bool plain = o->kind == IR_LOAD || o->kind == IR_CALL || o->kind == IR_ATTR || o->kind == IR_ITEM;
    return arena_printf(c->arena, plain ? "%s.detach()" : "(%s).detach()", t);
}

/* The unsafe fix: detach what is stored (or each graph-carrying argument of an in-place update). */
static void rs__fix(RuleCtx *c, Diag *d, const IrFunc *f, const MethodCtx *mc, const Update *u)
{
    Edit e[8];
    uint32_t n = 0;
    if (u->val != IR_NONE) {
        const IrOp *vo = &f->ops.items[u->val];
        if (vo->kind == IR_UNPACK) return; /* a helper's tuple: no single value to detach */
        e[n].start = vo->span.start, e[n].end = vo->span.end;
        e[n].text = rs__detached(c, f, u->val);
        n++;
    } else {
        /* innermost call first, so the edits come sorted */
        uint32_t chain[8], nc = 0;
        for (uint32_t op = u->at; op != IR_NONE && f->ops.items[op].kind == IR_CALL && nc < 8; op = ir_call_receiver(f, op))
            chain[nc++] = op;
        for (uint32_t k = nc; k-- > 0;) {
            const IrOp *o = &f->ops.items[chain[k]];
            for (uint32_t i = 0; i < o->nargs && n < 8; i++) {
                uint32_t a = f->args.items[o->args + i];
                if (f->kw.items[o->args + i] || !rs__carries(c, f, a, mc->graph)) continue;
                const IrOp *ao = &f->ops.items[a];
                e[n].start = ao->span.start, e[n].end = ao->span.end;
                e[n].text = rs__detached(c, f, a);
                n++;
            }
        }
    }
    for (uint32_t k = 0; k < n; k++)
        if (e[k].end <= e[k].start || c->m->src[e[k].end - 1] == '\n' || (k && e[k].start < e[k - 1].end)) return;
    /* one line each: a value spanning lines is left to the hint */
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t b = e[k].start; b < e[k].end; b++)
            if (c->m->src[b] == '\n' || c->m->src[b] == '\r') return;
    if (n)
        rule_fix_edits(c, d, FIX_UNSAFE, n == 1 ? "Detach the stored statistic" : "Detach the statistics folded in", e, n);
}

/* A step loop of the file that calls a model of class cls (for the note and for validate, which
 * instruments that loop); false when none is seen. */
static bool rs__step_loop(RuleCtx *c, uint32_t cls, uint32_t *fi_out, uint32_t *loop_out)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        if (!ff->analysed) continue;
        for (uint32_t op = 0; op < f->ops.len; op++) {
            const IrOp *o = &f->ops.items[op];
            if (!ff->reached[op] || o->a == IR_NONE || !df_is_module_call(c->fx, f, op)) continue;
            const AVal *cv = &ff->val[o->a];
            uint32_t l = ir_op_loop(f, op);
            if (cv->kind != VK_MODULE || cv->ref != cls || l == IR_NONE) continue;
            for (; l != IR_NONE; l = f->loops.items[l].parent)
                if (f->loops.items[l].kind == LOOP_STEP) {
                    *fi_out = fi, *loop_out = l;
                    return true;
                }
        }
    }
    return false;
}

static void rs__report(RsFile *rf, const IrFunc *f, const MethodCtx *mc, const uint8_t *out, const Update *u)
{
    RuleCtx *c = rf->c;
    uint32_t root = u->val != IR_NONE ? u->val : u->at;
    uint32_t sfi = IR_NONE, sop = IR_NONE;
    bool saves = false;
    if (u->val == IR_NONE && rs__op_saves(c, f, u->at, mc->graph)) {
        /* addcmul_(d, d): the update's own backward saves its arguments */
        const IrOp *o = &f->ops.items[u->at];
        for (uint32_t i = 0; i < o->nargs && !saves; i++)
            if (!f->kw.items[o->args + i] && rs__carries(c, f, f->args.items[o->args + i], mc->graph)) saves = true;
        if (saves) sfi = f->index, sop = u->at;
    }
    if (!saves) saves = rs__update_saves(rf, f, mc, out, root, &sfi, &sop);
    const IrClass *cls = c->m->classes.items[f->cls];
    const IrFunc *fwd = c->m->funcs.items[cls->forward];
    const char *where = f->index == cls->forward ? "forward()" : arena_printf(c->arena, "%s(), which forward() calls,", f->name);
    const char *keep;
    if (!saves) {
        keep = "everything it takes from the input also feeds the output or saves no tensor, so backward frees the "
               "activations, but every call's autograd nodes stay linked on the host";
    } else if (sfi == f->index && sop == u->at) {
        keep = arena_printf(c->arena,
                            "its own backward ('%s') saves the statistics it folds in, and backward never reaches it: "
                            "every step keeps an input activation on the device",
                            ir_call_method(f, u->at));
    } else if (c->m->funcs.items[sfi]->ops.items[sop].kind == IR_PARAM && mc->why_op == IR_NONE) {
        keep = "the statistic it is given is computed for the update alone: backward never reaches it, so what its "
               "backward saves stays on the device, one input activation per step";
    } else {
        if (c->m->funcs.items[sfi]->ops.items[sop].kind == IR_PARAM) sfi = mc->why_fi, sop = mc->why_op;
        const IrFunc *sf = c->m->funcs.items[sfi];
        keep = arena_printf(c->arena,
                            "'%s' (line %u) is computed for the update alone, so backward never frees what it saves: "
                            "every step keeps an input activation on the device",
                            rule_text(c, sf, sop), rule_line(sf->ops.items[sop].span));
    }
    Diag *d = rule_report(c, f->ops.items[u->at].span, saves ? SEV_ERROR : SEV_WARNING,
                          "'self.%s' keeps the autograd graph of every forward() call: %s "
                          "%s from its previous value and from the input's graph outside torch.no_grad(), so "
                          "each call's graph links to the last; %s",
                          u->attr, where, u->how, keep);
    d->growth = saves ? GROWTH_DEVICE : GROWTH_HOST;
    if (sop != IR_NONE && saves) {
        const IrFunc *sf = c->m->funcs.items[sfi];
        rule_related(c, d, sf->ops.items[sop].span, "'%s' is computed for the update only", rule_text(c, sf, sop));
    }
    if (f->index != cls->forward) rule_related(c, d, fwd->span, "%s.forward() reaches the update", cls->name);
    if (rf->loop != IR_NONE) {
        const IrLoop *l = &c->m->funcs.items[rf->loop_fi]->loops.items[rf->loop];
        d->loop_line = rule_line(l->span);
        rule_related(c, d, l->span, "the %s loop that calls the model every step", df_loop_kind_name(l->kind));
    }
    rule_trace(c, d, "%s.%s reads self.%s as the previous call left it (carried across calls) and stores a value "
               "that carries the input's graph", cls->name, f->name, u->attr);
    rule_trace_value(c, d, f, "stored value", root, &c->fx->funcs[f->index].val[root]);
    rule_hint(c, d, "Update it under `with torch.no_grad():` (or fold in '.detach()'ed statistics), as BatchNorm does");
    rs__fix(c, d, f, mc, u);
}

/* The update sites of one method: stores and in-place writes of self.<attr> that chain to the
 * previous call's value and take the input's graph. */
/* Reports the updates of method f (counts them only, when dry). */
/* Does method g store a fresh, graph-free value into self.<attr> outside its loops (`self.cum =
 * memory.new_zeros(b, t)`)? */
static bool rs__starts_attr(RuleCtx *c, const IrFunc *g, const char *attr)
{
    const FuncFacts *gf = &c->fx->funcs[g->index];
    uint32_t depth = 0; /* of ifs and trys: a store there may not run */
    for (uint32_t op = 0; op < g->ops.len; op++) {
        const IrOp *o = &g->ops.items[op];
        if (o->kind == IR_IF || o->kind == IR_TRY) depth++;
        else if ((o->kind == IR_END_IF || o->kind == IR_END_TRY) && depth) depth--;
        if (o->kind != IR_SET_ATTR || depth || !gf->reached[op] || ir_op_loop(g, op) != IR_NONE || o->b == IR_NONE)
            continue;
        const char *a = rs__self_attr(c, g, op);
        if (!a || strcmp(a, attr) != 0 || GL_MAX(gf->val[o->b].grad, gf->val[o->b].elem) != G_NONE) continue;
        /* a new value, not the old one moved (`self.avg = self.avg.to(x.device)`) */
        bool reads_old = false;
        Span vs = g->ops.items[o->b].span; /* the value's expression */
        for (uint32_t k = op; k-- > 0 && !reads_old;) {
            const IrOp *r = &g->ops.items[k];
            if (k < o->b && (r->span.start < vs.start || r->span.end > vs.end)) break;
            const char *ra = r->kind == IR_ATTR ? rs__self_attr(c, g, k) : NULL;
            reads_old = ra && !strcmp(ra, attr);
        }
        if (!reads_old) return true;
    }
    return false;
}

/* Does every forward() call start self.<attr> again, itself or through a method of the class it
 * calls outside its loops (a decoder's initialize_decoder_states(): the attention state a decode
 * step then accumulates)? Then what the update chains is one call's steps, not every call's. */
static bool rs__started_each_call(RuleCtx *c, uint32_t cls, const char *attr)
{
    const IrClass *C = c->m->classes.items[cls];
    if (C->forward == IR_NONE || C->forward >= c->m->funcs.len) return false;
    const IrFunc *fwd = c->m->funcs.items[C->forward];
    const FuncFacts *ff = &c->fx->funcs[C->forward];
    if (!ff->analysed) return false;
    if (rs__starts_attr(c, fwd, attr)) return true;
    for (uint32_t op = 0; op < fwd->ops.len; op++) {
        const IrOp *o = &fwd->ops.items[op];
        if (o->kind != IR_CALL || !ff->reached[op] || ir_op_loop(fwd, op) != IR_NONE) continue;
        const char *m = ir_call_method(fwd, op);
        if (!m || !rs__is_self(c, fwd, ir_call_receiver(fwd, op))) continue;
        uint32_t g = ir_class_method(c->m, cls, m);
        if (g != IR_NONE && g != C->forward && c->fx->funcs[g].analysed && rs__starts_attr(c, c->m->funcs.items[g], attr))
            return true;
    }
    return false;
}

static uint32_t rs__method(RsFile *rf, const IrFunc *f, const MethodCtx *mc, bool dry)
{
    uint32_t found = 0;
    RuleCtx *c = rf->c;
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint8_t *out = NULL;
    for (uint32_t op = 0; op < f->ops.len; op++) {
        const IrOp *o = &f->ops.items[op];
        if (!ff->reached[op] || df_mode_off(o->mode)) continue;
        Update u = {op, IR_NONE, NULL, NULL};
        if (o->kind == IR_SET_ATTR) {
            u.attr = rs__self_attr(c, f, op);
            u.val = o->b;
            u.how = "computes it";
            if (!u.attr || !rs__carries(c, f, o->b, mc->graph)) continue;
            /* set afresh earlier in this call on every path (`self.pred = dropout(P)` then `self.pred
             * = torch.mm(self.pred, h)`): a scratch value of this call, not the last call's */
            if (o->var != IR_NONE && rule_bound_before(f, 0, op, o->var)) continue;
            Walk w;
            rs__walk_init(&w, rf, WALK_CHAIN, f->index);
            w.attr = u.attr;
            w.cls = f->cls;
            rs__push(&w, f->index, o->b, mc->graph, 0, 0);
            rs__walk(&w);
            /* a state fed back through a model call (self.hidden of an RNN) is GL103's */
            bool ok = w.chain && w.tensor_op;
            rs__walk_free(&w);
            if (!ok) continue;
        } else if (o->kind == IR_SET_ITEM) {
            u.attr = rs__inplace_root(c, f, o->a);
            u.val = o->c;
            u.how = "writes into it";
            if (!u.attr || !rs__carries(c, f, o->c, mc->graph)) continue;
            /* a dict or list slot is replaced (`self._inputs["image"] = image`); only a tensor
             * written in place links its new version to the old one */
            if (ff->val[o->a].kind == VK_CONTAINER) continue;
        } else if (o->kind == IR_CALL && rs__inplace(ir_call_method(f, op))) {
            /* report the outermost call of a chain once */
            bool outer = true;
            for (uint32_t k = op + 1; k < f->ops.len && outer; k++) {
                const IrOp *p = &f->ops.items[k];
                if (p->kind == IR_ATTR && p->a == op) outer = false;
            }
            if (!outer) continue;
            u.attr = rs__inplace_root(c, f, op);
            u.how = "updates it in place";
            if (!u.attr) continue;
            bool carries = false;
            for (uint32_t k = op; k != IR_NONE && f->ops.items[k].kind == IR_CALL && !carries; k = ir_call_receiver(f, k)) {
                const IrOp *ko = &f->ops.items[k];
                for (uint32_t i = 0; i < ko->nargs && !carries; i++)
                    carries = !f->kw.items[ko->args + i] && rs__carries(c, f, f->args.items[ko->args + i], mc->graph);
            }
            if (!carries) continue;
        } else {
            continue;
        }
        if (rs__gl103_owns(c, f->cls, u.attr) || rs__started_each_call(c, f->cls, u.attr) ||
            rs__set_once(c, f, op, u.attr))
            continue;
        found++;
        if (dry) continue;
        if (!out) out = rs__output_ops(rf, f);
        rs__report(rf, f, mc, out, &u);
    }
    return found;
}

/* Does some method of cls other than __init__ store or write into an attribute of self? (The cheap
 * early return: most Module classes never do.) */
static bool rs__class_writes_self(RuleCtx *c, const IrClass *cls)
{
    for (uint32_t k = 0; k < cls->methods.len; k++) {
        uint32_t fi = cls->methods.items[k];
        if (fi == cls->init) continue;
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t op = 0; op < f->ops.len; op++) {
            const IrOp *o = &f->ops.items[op];
            if (o->kind == IR_SET_ATTR || o->kind == IR_SET_ITEM) return true;
            if (o->kind == IR_CALL && rs__inplace(ir_call_method(f, op))) return true;
        }
    }
    return false;
}

void rule_GL109(RuleCtx *c)
{
    if (c->cxx) return; /* LibTorch modules: not modelled yet */
    MethodCtx *mc = NULL;
    RsFile rf;
    memset(&rf, 0, sizeof rf);
    rf.c = c;
    for (uint32_t ci = 0; ci < c->m->classes.len; ci++) {
        const IrClass *cls = c->m->classes.items[ci];
        if (!cls->is_module || cls->forward == IR_NONE || !c->fx->funcs[cls->forward].analysed ||
            !rs__class_writes_self(c, cls))
            continue;
        if (!mc) {
            mc = ARENA_NEW_N(c->arena, MethodCtx, c->m->funcs.len);
            rf.fn = ARENA_NEW_N(c->arena, RsFunc, c->m->funcs.len);
        }
        /* first with every input taken to carry a graph; the file-wide look at the class's calls
         * (and for its training loop) only when that finds an update */
        uint16_t inputs = 0xfffe;
        for (int round = 0; round < 2; round++) {
            rs__method_contexts(&rf, cls, mc, inputs);
            uint32_t found = 0;
            for (uint32_t k = 0; k < cls->methods.len; k++) {
                uint32_t fi = cls->methods.items[k];
                if (mc[fi].reached && mc[fi].graph && c->fx->funcs[fi].analysed)
                    found += rs__method(&rf, c->m->funcs.items[fi], &mc[fi], round == 0);
            }
            if (!found || round) break;
            inputs = rs__forward_inputs(c, ci);
            if (!inputs) break;
            if (!rs__step_loop(c, ci, &rf.loop_fi, &rf.loop)) rf.loop_fi = rf.loop = IR_NONE;
        }
    }
}
