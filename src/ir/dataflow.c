/* The grad dataflow: abstract interpretation of each function's structured IR.
 *
 * Environments map variables to abstract values (dataflow.h). Regions are interpreted in order;
 * IF/TRY regions join their branches, and a loop's body is re-interpreted until the environment at
 * its header stops changing (a phi at the header: a variable whose back-edge value differs from
 * its entry value becomes "carried" by that loop). Three passes reach the fixed point in practice
 * because the lattice is shallow (grad has four levels); the cap is a safety net.
 *
 * Functions are analysed on demand when first called (so a helper's summary is ready where it is
 * used), the rest afterwards, each once. Nothing here recurses over syntax; the only recursion is
 * through calls of local functions, bounded by DF_MAX_CALL_DEPTH.
 *
 * What an API name does is asked of api.h (torch_api.def, builtins.def); the evidence read before
 * a function is interpreted is in prescan.c; loop kinds and the marks that need every function's
 * facts are in loops.c. */
#include <stdio.h>
#include "base/strmap.h"
#include "ir/dataflow_int.h"

#define DF_MAX_PASSES 4
#define DF_MAX_CALL_DEPTH 6

/* The function of the file that call op runs: a local function, or a method of a local class
 * called on one of its objects (self.train_step(batch)); IR_NONE when unknown. */
uint32_t df_call_target(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op)
{
    const FuncFacts *ff = &fx->funcs[f->index];
    const IrOp *o = &f->ops.items[op];
    if (o->a == IR_NONE) return IR_NONE;
    const AVal *cv = &ff->val[o->a];
    if (cv->kind == VK_FUNC) return cv->ref != IR_NONE && cv->ref < m->funcs.len ? cv->ref : IR_NONE;
    const char *method = ir_call_method(f, op);
    uint32_t r = ir_call_receiver(f, op);
    if (!method || r == IR_NONE) return IR_NONE;
    const AVal *rv = &ff->val[r];
    if ((rv->kind != VK_OBJECT && rv->kind != VK_MODULE) || rv->ref == IR_NONE || rv->ref >= m->classes.len)
        return IR_NONE;
    return ir_class_method(m, rv->ref, method);
}

const char *df_loop_kind_name(uint8_t kind)
{
    static const char *const names[] = {"unknown", "step", "epoch", "sequence", "feedback"};
    return kind < ARRAY_LEN(names) ? names[kind] : "?";
}

const char *df_grad_name(uint8_t g)
{
    static const char *const names[] = {"no-grad", "may-grad", "post-backward", "graph-live"};
    return g < ARRAY_LEN(names) ? names[g] : "?";
}

const char *df_kind_name(uint8_t kind)
{
    static const char *const names[] = {"unknown", "tensor", "scalar", "module", "optimizer", "container",
                                        "loader", "function", "class", "context", "module-ref", "object",
                                        "range", "none"};
    return kind < ARRAY_LEN(names) ? names[kind] : "?";
}

bool df_mode_off(uint8_t mode)
{
    return mode == GRAD_NO_GRAD || mode == GRAD_INFERENCE || mode == GRAD_MAYBE_OFF;
}

/* ---- the interpreter ------------------------------------------------------------------------- */

static void df_analyse_func(Facts *fx, uint32_t fi, int depth, const AVal *hints, uint32_t nhints);

/* The current environment (df_env.c): what variable v holds, and a write. */
static AVal env_get(Interp *I, uint32_t v)
{
    return v < I->nvars ? *df_env_at(I->env, I->height, v) : aval_unset();
}

static void env_set(Interp *I, uint32_t v, AVal a) { df_env_set(I, v, a); }

/* Every attribute pseudo-var of `base` (self.h of self) now holds `to`. */
static void env_set_attrs(Interp *I, uint32_t base, AVal to)
{
    if (base >= I->nvars) return;
    for (uint32_t v = I->attr_head[base]; v != IR_NONE; v = I->attr_next[v]) env_set(I, v, to);
}

static const IrOp *OP(Interp *I, uint32_t i) { return &I->f->ops.items[i]; }
static AVal *VAL(Interp *I, uint32_t i) { return &I->ff->val[i]; }

static AVal val_of(Interp *I, uint32_t op)
{
    if (op == IR_NONE || op >= I->f->ops.len) return aval(VK_UNKNOWN, G_NONE, IR_NONE);
    return *VAL(I, op);
}

static uint8_t grad_of_arg(const AVal *v)
{
    return v->kind == VK_CONTAINER ? GL_MAX(v->grad, v->elem) : v->grad;
}

static void df__backward_effect(Interp *I, uint32_t op)
{
    uint32_t loop = ir_op_loop(I->f, op);
    /* only the variables that hold a live graph (the tree knows where they are) */
    DfVarList live;
    array_init(&live);
    df_env_live(I->env, I->height, I->nvars, &live);
    for (uint32_t k = 0; k < live.len; k++) {
        AVal v = env_get(I, live.items[k]);
        bool this_iter = loop == IR_NONE || v.src == IR_NONE || ir_loop_contains(I->f, loop, v.src) ||
                         v.carried == loop;
        if (!this_iter) continue;
        if (v.grad == G_LIVE) v.grad = G_POST;
        if (v.elem == G_LIVE) v.elem = G_POST;
        env_set(I, live.items[k], v);
    }
    array_free(&live);
}

static bool df__class_is_module(const IrModule *m, uint32_t ci)
{
    return ci != IR_NONE && ci < m->classes.len && m->classes.items[ci]->is_module;
}

/* Does method mi of class ci call, on self, a method of the class whose analysis is under way? */
static bool df__calls_method_in_progress(const Interp *I, uint32_t ci, uint32_t mi)
{
    const IrFunc *g = I->m->funcs.items[mi];
    uint32_t self_var = ir_first_param(g);
    for (uint32_t i = 0; i < g->ops.len && self_var != IR_NONE; i++) {
        const IrOp *o = &g->ops.items[i];
        if (o->kind != IR_CALL) continue;
        uint32_t r = ir_call_receiver(g, i);
        const char *name = ir_call_method(g, i);
        if (r == IR_NONE || !name || g->ops.items[r].kind != IR_LOAD || g->ops.items[r].var != self_var) continue;
        uint32_t t = ir_class_method(I->m, ci, name);
        if (t != IR_NONE && I->fx->funcs[t].in_progress) return true;
    }
    return false;
}

static AVal df__class_attr(Interp *I, uint32_t ci, const char *name)
{
    if (ci == IR_NONE || ci >= I->m->classes.len) return aval(VK_UNKNOWN, G_MAY, IR_NONE);
    const IrClass *c = I->m->classes.items[ci];
    if (c->init != IR_NONE && !I->fx->funcs[c->init].analysed && I->depth < DF_MAX_CALL_DEPTH)
        df_analyse_func(I->fx, c->init, I->depth + 1, NULL, 0);
    ClassFacts *cf = &I->fx->classes[ci];
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < cf->attr_names.len; i++)
            if (!strcmp(cf->attr_names.items[i], name)) return cf->attr_vals.items[i];
        /* while __init__ runs (`self.parameters()` in it) its attributes are not all known yet: a
         * method analysed now would keep what it saw of them (`self.fc` unknown) for good */
        if (round || I->depth >= DF_MAX_CALL_DEPTH || (c->init != IR_NONE && I->fx->funcs[c->init].in_progress))
            break;
        /* set outside __init__ (a setup() method): analyse the other methods once, then look again;
         * not one that calls a method being analysed now (a train() calling the train_step() that
         * asks): it would see that method as unknown and keep what it saw for good */
        for (uint32_t k = 0; k < c->methods.len; k++) {
            uint32_t mi = c->methods.items[k];
            if (mi != c->forward && !I->fx->funcs[mi].analysed && !I->fx->funcs[mi].in_progress &&
                !df__calls_method_in_progress(I, ci, mi))
                df_analyse_func(I->fx, mi, I->depth + 1, NULL, 0);
        }
    }
    return aval(VK_UNKNOWN, df__class_is_module(I->m, ci) ? G_MAY : G_NONE, IR_NONE);
}

/* The last name of what a call calls: `detach` in `utils.detach(x)` or `detach(x)`. */
static const char *df__callee_name(Interp *I, uint32_t op)
{
    const IrOp *o = OP(I, op);
    if (o->a == IR_NONE) return NULL;
    const IrOp *callee = OP(I, o->a);
    if (callee->kind == IR_ATTR) return callee->name;
    if (callee->kind == IR_LOAD && callee->var < I->f->vars.len) return I->f->vars.items[callee->var].name;
    return NULL;
}

/* A function gradleak cannot see whose name says it returns data without a graph: a project's
 * `detach(outputs)` / `detach_all(...)` (which detach nested containers) or `to_numpy(t)`. */
static bool df__detaching_name(const char *name)
{
    return name && (strstr(name, "detach") || strstr(name, "numpy"));
}

/* A factor that scales a 0-dim tensor and keeps it 0-dim: a Python number, or a value of unknown
 * kind that no tensor, batch or parameter flows into (`self.gp_weight`, `cfg.TRAIN.LAMBDA`). */
static bool df__scalar_like(const AVal *v)
{
    if (v->kind == VK_SCALAR) return true;
    return (v->kind == VK_UNKNOWN || v->kind == VK_MODREF) && v->grad == G_NONE && !v->pmask &&
           !(v->flags & (VF_MODEL_OUT | VF_BATCH | VF_SHAPE | VF_PIECES));
}

/* What the forward of the file's Module class ci returns, for its callers: a 0-dim tensor
 * (*zero), computed from the arguments alone, with no submodule or parameter of its own on the
 * way (*loss: a loss module written by hand, `class DiceLoss(nn.Module)`). */
static void df__local_forward(Interp *I, uint32_t ci, bool *zero, bool *loss)
{
    *zero = *loss = false;
    if (ci >= I->m->classes.len) return;
    uint32_t fwd = I->m->classes.items[ci]->forward;
    if (fwd == IR_NONE || fwd >= I->m->funcs.len) return;
    FuncFacts *ff = &I->fx->funcs[fwd];
    if (!ff->analysed && !ff->in_progress && I->depth < DF_MAX_CALL_DEPTH)
        df_analyse_func(I->fx, fwd, I->depth + 1, NULL, 0);
    if (!ff->analysed || (ff->ret.flags & VF_UNSET) || ff->ret.kind == VK_CONTAINER) return;
    *zero = (ff->ret.flags & VF_ZERO_DIM) != 0;
    *loss = *zero && !(ff->ret.flags & VF_MODEL_OUT) && ff->ret.grad != G_LIVE;
}

/* A module call: the result carries a live graph unless grad is off. */
static AVal df__model_output(Interp *I, uint32_t op, const AVal *callee, uint8_t max_arg)
{
    const IrOp *o = OP(I, op);
    AVal r = aval(VK_TENSOR, G_LIVE, op);
    r.src = op;
    r.flags = VF_MODEL_OUT;
    if (callee->flags & VF_FROZEN) r.grad = max_arg; /* no parameter requires grad */
    if (callee->kind == VK_OBJECT && REF_IS_WRAPPER(callee->ref)) r.grad = G_MAY; /* agent(obs) */
    bool zero = false, loss = false;
    if (callee->kind == VK_MODULE && callee->ref != IR_NONE && !(callee->flags & VF_LOSSMOD))
        df__local_forward(I, callee->ref, &zero, &loss);
    if (zero) r.flags |= VF_ZERO_DIM;
    if (loss) {
        r.grad = max_arg; /* a loss of the file: its inputs' graph */
        r.flags &= (uint16_t)~VF_MODEL_OUT;
    }
    if (callee->flags & VF_LOSSMOD) {
        if (!(callee->flags & VF_NOREDUCE)) r.flags |= VF_ZERO_DIM;
        r.grad = max_arg; /* loss modules have no parameters: they pass their inputs' graph on */
        r.flags &= (uint16_t)~VF_MODEL_OUT;
    }
    if (df_mode_off(o->mode)) r.grad = G_NONE;
    return r;
}

/* Is call op, on a model whose class nothing shows, a method torch does not define (and no class
 * of the file or the run answers for by name) given a tensor and no optimizer:
 * `self.network.features(x)`? A policy's method, whose result an environment's step is handed
 * (bw_calls bit 1), need not be given a tensor: it is given the observation. */
static bool df__unknown_model_method(Interp *I, uint32_t op, const char *method, const AVal *args, uint32_t nargs)
{
    bool policy = (I->bw_calls[op] & 2) != 0;
    /* (nor unittest's assertions: a TestCase, torch.testing's too, compares what it is given) */
    if (!method || method[0] == '_' || api_method_listed(method) || !strncmp(method, "assert", 6)) return false;
    ApiMethod am = api_method(method);
    if (am.flags || am.effect != EFF_NONE || df_duck_method_plain(I, method) ||
        strmap_get(&I->fx->method_names, method, strlen(method)) != UINT32_MAX)
        return false;
    bool tensor = false;
    for (uint32_t i = 0; i < nargs; i++) {
        if (args[i].kind == VK_OPTIM) return false; /* `model->train_step(x, y, opt)`: it trains */
        if (!I->f->kw.items[OP(I, op)->args + i] && args[i].kind == VK_TENSOR) tensor = true;
    }
    return tensor || policy;
}

/* The value of a call whose callee returns `ret` (a summary: grad G_MAY with pmask means "derived
 * from these parameters"), given the positional arguments. */
static AVal df__apply_summary(Interp *I, uint32_t op, const AVal *ret, const AVal *args, uint32_t nargs)
{
    AVal r = *ret;
    r.def = op;
    r.carried = IR_NONE;
    bool via_grad = r.grad == G_MAY, via_elem = r.kind == VK_CONTAINER && r.elem == G_MAY;
    if (r.pmask && (via_grad || via_elem)) {
        /* the result (or what it holds: `return h, c`) is derived from the parameters: pass the
         * arguments' state through */
        uint8_t g = G_NONE;
        uint32_t src = IR_NONE; /* where the graph passed through was made: not this call */
        for (uint32_t i = 0; i < nargs && i < 16; i++)
            if (r.pmask & (1u << i)) {
                if (grad_of_arg(&args[i]) > g) src = args[i].src;
                g = GL_MAX(g, grad_of_arg(&args[i]));
                r.flags |= args[i].flags & (VF_MODEL_OUT | VF_ZERO_DIM);
                if (args[i].carried != IR_NONE) r.carried = args[i].carried;
            }
        if (via_grad) r.grad = g;
        if (via_grad && r.src == IR_NONE && g == G_LIVE) r.src = src;
        if (via_elem || (via_grad && r.kind == VK_CONTAINER)) r.elem = g;
    }
    /* the callee calls a parameter the caller passes a module for: a model output */
    for (uint32_t i = 0; i < nargs && i < 8; i++) {
        if (!(ret->cmask & (1u << i)) || !(args[i].kind == VK_MODULE || (args[i].flags & VF_MAYBE_MODULE)) ||
            (args[i].flags & VF_LOSSMOD))
            continue;
        if (r.kind == VK_CONTAINER) r.elem = G_LIVE;
        else r.grad = G_LIVE;
        r.src = op;
        r.flags |= VF_MODEL_OUT;
    }
    r.pmask = 0;
    r.cmask = 0;
    for (uint32_t i = 0; i < nargs && i < 16; i++)
        if (ret->pmask & (1u << i)) r.pmask |= args[i].pmask;
    for (uint32_t i = 0; i < nargs && i < 8; i++)
        if (ret->cmask & (1u << i)) r.cmask |= args[i].pmask & 0xff;
    if (r.grad == G_LIVE && r.src == IR_NONE) r.src = op;
    if (df_mode_off(OP(I, op)->mode)) r.grad = G_NONE, r.elem = G_NONE, r.cmask = 0;
    return r;
}

/* A method with nothing in its body but a docstring, `pass`, `...` or a raise: the base class's
 * placeholder (`@abstractmethod def set_forward_loss(self, x): pass`) for what subclasses define. */
static bool df__stub_method(const IrFunc *g)
{
    if (g->cls == IR_NONE) return false;
    for (uint32_t i = 0; i < g->ops.len; i++) {
        const IrOp *o = &g->ops.items[i];
        bool param_store = o->kind == IR_STORE && o->a != IR_NONE && g->ops.items[o->a].kind == IR_PARAM;
        if (o->kind != IR_PARAM && o->kind != IR_CONST && o->kind != IR_EXPR && o->kind != IR_RAISE && !param_store)
            return false;
    }
    return true;
}

bool df_call_passes_false(const IrFunc *f, uint32_t op, const IrFunc *g)
{
    if (!g->grad_param || op >= f->ops.len || f->ops.items[op].kind != IR_CALL) return false;
    const IrOp *o = &f->ops.items[op];
    uint32_t want = g->grad_param - 1, prm = IR_NONE;
    for (uint32_t i = 0; i < g->ops.len && prm == IR_NONE; i++)
        if (g->ops.items[i].kind == IR_PARAM && g->ops.items[i].aux == want) prm = i;
    if (prm == IR_NONE) return false;
    const char *name = g->vars.items[g->ops.items[prm].var].name;
    uint32_t k = g->cls != IR_NONE && ir_call_receiver(f, op) != IR_NONE ? 1 : 0;
    for (uint32_t i = 0; i < o->nargs; i++) {
        const char *kw = f->kw.items[o->args + i];
        uint32_t a = f->args.items[o->args + i];
        if (kw ? name && !strcmp(kw, name) : k++ == want) return ir_const_false(f, a);
    }
    return false;
}

static AVal df__call_local(Interp *I, uint32_t op, uint32_t fi, const AVal *args, uint32_t nargs)
{
    FuncFacts *callee = &I->fx->funcs[fi];
    /* what a subclass's override returns is not known here (not the placeholder's None) */
    if (df__stub_method(I->m->funcs.items[fi])) return aval(VK_UNKNOWN, G_MAY, op);
    if (!callee->analysed && !callee->in_progress && I->depth < DF_MAX_CALL_DEPTH)
        df_analyse_func(I->fx, fi, I->depth + 1, args, nargs);
    if (!callee->analysed) return aval(VK_UNKNOWN, G_MAY, op);
    AVal r = df__apply_summary(I, op, &callee->ret, args, nargs);
    /* a method of a Module class of the file that returns the live output of the class's own
     * submodules (`self.logits(x)` in the class's sample(); `net.act(obs, eps, hidden)` returning
     * the action and the new hidden state): the call runs the model, as `self.net(x)` does */
    const IrFunc *g = I->m->funcs.items[fi];
    if (g->cls != IR_NONE && I->m->classes.items[g->cls]->is_module && (callee->ret.flags & VF_MODEL_OUT) &&
        (g->cls == I->f->cls || ir_call_receiver(I->f, op) != IR_NONE) &&
        ((callee->ret.grad == G_LIVE && r.grad == G_LIVE && r.kind == VK_TENSOR) ||
         (g->cls != I->f->cls && callee->ret.kind == VK_CONTAINER && callee->ret.elem == G_LIVE && r.elem == G_LIVE)))
        r.src = op;
    if (df_call_passes_false(I->f, op, g)) r.grad = G_NONE, r.elem = G_NONE;
    return r;
}

/* A function or method of another file that returns a model's live output in a tuple (`return
 * action.numpy(), hidden`): the call runs the model, as a module call does. */
static AVal df__extern_model_call(uint32_t op, const ExternSummary *s, AVal r)
{
    if (s->kind == VK_CONTAINER && s->elem == G_LIVE && (s->flags & VF_MODEL_OUT) && r.elem == G_LIVE) r.src = op;
    return r;
}

/* The value a function of another file returns, from its summary (made by the call at op). */
static AVal df__extern_ret(const ExternSummary *s, uint32_t op)
{
    AVal ret = aval(s->kind, s->grad, op);
    ret.elem = s->elem;
    ret.flags = s->flags;
    ret.pmask = s->pmask;
    ret.cmask = s->cmask;
    return ret;
}

/* A function of another file linted with this one, when an import names it. */
static bool df__call_extern(Interp *I, uint32_t op, const char *qual, const AVal *args, uint32_t nargs,
                            AVal *out)
{
    const ExternSummary *s = df_ext(I->fx, qual);
    if (!s) return false;
    AVal ret = df__extern_ret(s, op);
    AVal pos[16];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nargs && np < 16; i++)
        if (!I->f->kw.items[OP(I, op)->args + i]) pos[np++] = args[i];
    *out = df__extern_model_call(op, s, df__apply_summary(I, op, &ret, pos, np));
    return true;
}

/* A method of another file's class, from its summary: the object is its first argument. */
static AVal df__call_extern_method(Interp *I, uint32_t op, const ExternSummary *s, const AVal *args, uint32_t nargs)
{
    const IrFunc *f = I->f;
    const IrOp *o = OP(I, op);
    AVal ret = df__extern_ret(s, op);
    AVal pos[16];
    uint32_t np = 0;
    pos[np++] = val_of(I, ir_call_receiver(f, op));
    for (uint32_t i = 0; i < nargs && np < 16; i++)
        if (!f->kw.items[o->args + i]) pos[np++] = args[i];
    return df__extern_model_call(op, s, df__apply_summary(I, op, &ret, pos, np));
}

/* The REF_EXTERN_CLASS ref of objects of imported class qual (IR_NONE when there is no name). */
static uint32_t df__extern_class(Facts *fx, const char *qual)
{
    if (!qual) return IR_NONE;
    for (uint32_t k = 0; k < fx->ext_classes.len; k++)
        if (!strcmp(fx->ext_classes.items[k], qual)) return REF_EXTERN_CLASS + k;
    if (fx->ext_classes.len >= 0x100000) return IR_NONE;
    array_push(&fx->ext_classes, qual);
    return REF_EXTERN_CLASS + fx->ext_classes.len - 1;
}

/* Is callee a variable the function itself binds, to a callable of unknown origin (`optim_fn, kw =
 * get_optimizer(spec)`; `optim_fn(...)`)? Builtins (`list(...)`) are not: nothing binds them. */
static bool df__local_callable(const IrFunc *f, const IrOp *callee)
{
    if (!callee || callee->kind != IR_LOAD || callee->qual || callee->var >= f->vars.len ||
        f->vars.items[callee->var].is_global || f->vars.items[callee->var].is_param)
        return false;
    for (uint32_t i = 0; i < f->ops.len; i++)
        if (f->ops.items[i].kind == IR_STORE && f->ops.items[i].var == callee->var) return true;
    return false;
}

static AVal df_call(Interp *I, uint32_t op)
{
    const IrFunc *f = I->f;
    const IrOp *o = OP(I, op);
    const IrOp *callee = o->a != IR_NONE ? OP(I, o->a) : NULL;
    AVal cv = val_of(I, o->a);
    bool off = df_mode_off(o->mode);

    AVal args[32];
    uint32_t nargs = GL_MIN(o->nargs, ARRAY_LEN(args));
    uint8_t max_arg = G_NONE;
    uint16_t arg_flags = 0;
    uint32_t arg_src = IR_NONE, arg_carried = IR_NONE;
    uint16_t pmask = 0;
    uint8_t cmask = 0;
    /* a distribution's parameters are its data, by keyword too (`Categorical(logits=net(x))`) */
    bool kw_data = api_kw_data(o->qual);
    uint8_t max_kw = G_NONE; /* of the keyword arguments (a record's fields: `Batch(log_probs=lp)`) */
    uint32_t kw_src = IR_NONE;
    for (uint32_t i = 0; i < nargs; i++) {
        args[i] = val_of(I, f->args.items[o->args + i]);
        const char *kw = f->kw.items[o->args + i];
        if (kw && strcmp(kw, "*") && strcmp(kw, "**") && !kw_data) { /* keyword options carry no data */
            uint8_t g = grad_of_arg(&args[i]);
            if (g > max_kw) max_kw = g, kw_src = args[i].src;
            continue;
        }
        uint8_t g = grad_of_arg(&args[i]);
        if (g > max_arg) max_arg = g, arg_src = args[i].src;
        arg_flags |= args[i].flags;
        pmask |= args[i].pmask;
        cmask |= args[i].cmask;
        if (args[i].carried != IR_NONE) arg_carried = args[i].carried;
    }
    AVal r = aval(VK_UNKNOWN, G_NONE, op);

    /* 1. local functions and classes */
    if (cv.kind == VK_FUNC && cv.ref != IR_NONE) {
        /* positional arguments only, for the summary */
        AVal pos[16];
        uint32_t np = 0;
        for (uint32_t i = 0; i < nargs && np < 16; i++)
            if (!f->kw.items[o->args + i]) pos[np++] = args[i];
        return df__call_local(I, op, cv.ref, pos, np);
    }
    /* an imported class or function given a model's parameters first (`RAdam(net.parameters())`,
     * `Balancer(shared.parameters())` of another file), or a callable held in a local variable
     * (`optim_fn, kw = get_optimizer(spec)`): a custom optimizer */
    if (nargs && !f->kw.items[o->args] && args[0].kind == VK_CONTAINER && args[0].src != IR_NONE &&
        args[0].src < f->ops.len && OP(I, args[0].src)->kind == IR_CALL &&
        (api_method(ir_call_method(f, args[0].src)).flags & M_PARAMS) &&
        ((o->qual && !api_is_torch(o->qual)) || df__local_callable(f, callee))) {
        r.kind = VK_OPTIM;
        return r;
    }
    if (cv.kind == VK_MODREF && callee && df__call_extern(I, op, callee->qual, args, nargs, &r)) return r;
    /* a C++ method of a class whose definition is in another file of the run (callee qual
     * "::ns::Class::method"): its summary, the object as its first argument; without one, as any
     * method below */
    if (callee && callee->kind == IR_ATTR && callee->qual && callee->qual[0] == ':' && I->fx->ext) {
        const ExternSummary *s = df_ext(I->fx, callee->qual);
        if (s) return df__call_extern_method(I, op, s, args, nargs);
    }
    if (cv.kind == VK_CLASS) {
        r.kind = df__class_is_module(I->m, cv.ref) ? VK_MODULE : VK_OBJECT;
        r.ref = cv.ref;
        /* a record of the file built from graph-carrying values holds them (`RolloutBatch(
         * log_probs=logps, ...)` returned to the update; `Transition(s, a, logp)` kept in a memory) */
        uint8_t g = GL_MAX(max_arg, max_kw);
        if (r.kind == VK_OBJECT && g >= G_POST && !off) r.grad = g, r.src = max_arg >= max_kw ? arg_src : kw_src;
        return r;
    }

    /* a submodule held in an attribute (self.lstm(x)): a model call, not a method */
    if (callee && callee->kind == IR_ATTR && cv.kind == VK_MODULE) return df__model_output(I, op, &cv, max_arg);
    /* ... or an object of an imported class that the code treats as a module (`self.model =
     * Backbone()`, `self.model.parameters()` elsewhere), or one built around one (`self.agent =
     * Agent(self.net)`; `self.agent(obs)`) */
    if (callee && callee->kind == IR_ATTR && cv.kind == VK_OBJECT && (cv.flags & VF_MAYBE_MODULE) &&
        (cv.ref == IR_NONE || cv.ref == REF_MODEL_WRAPPER || REF_IS_EXTERN(cv.ref)))
        return df__model_output(I, op, &cv, max_arg);

    const char *method = ir_call_method(f, op);
    uint32_t recv_op = ir_call_receiver(f, op);
    AVal recv = val_of(I, recv_op);
    /* a method of a class of the file that the class inherits from an imported base
     * (`Net.load_from_checkpoint(path)`): an alternate constructor, an object of the class */
    if (method && recv.kind == VK_CLASS && recv.ref != IR_NONE && recv.ref < I->m->classes.len &&
        ir_class_method(I->m, recv.ref, method) == IR_NONE && I->m->classes.items[recv.ref]->bases.len) {
        r.kind = df__class_is_module(I->m, recv.ref) ? VK_MODULE : VK_OBJECT;
        r.ref = recv.ref;
        return r;
    }

    /* 2. torch functions by resolved name */
    /* ... but not a call of what such a call returned (`nn.BCELoss()(p, y)`: a loss, not a module) */
    ApiEffect fe = callee && callee->kind == IR_CALL ? EFF_NONE : api_function(o->qual);
    if (fe == EFF_UNPICKLE) return r; /* torch.load: a model as often as a tensor or a state dict */
    if (fe != EFF_NONE && (!method || cv.kind == VK_MODREF || callee->qual)) {
        switch (fe) {
        case EFF_FACTORY:
        case EFF_PARAM: {
            r.kind = VK_TENSOR;
            bool rg = fe == EFF_PARAM || ir_const_true(f, api_call_kwarg(f, op, API_KW_REQUIRES_GRAD));
            if (rg && !off) r.grad = G_LIVE, r.src = op;
            return r;
        }
        case EFF_VARIABLE: {
            r = nargs ? args[0] : r;
            r.def = op;
            if (ir_const_true(f, api_call_kwarg(f, op, API_KW_REQUIRES_GRAD)) && !off) r.grad = G_LIVE, r.src = op;
            if (r.kind == VK_UNKNOWN) r.kind = VK_TENSOR;
            return r;
        }
        case EFF_MODULE: r.kind = VK_MODULE; return r;
        case EFF_PASSMOD:
            /* an activation, pooling or dropout layer has no parameter: like a loss module, it
             * passes its input's graph on and runs no model (unreduced: not 0-dim) */
            r.kind = VK_MODULE, r.flags = VF_LOSSMOD | VF_NOREDUCE;
            return r;
        case EFF_LOSSMOD:
            r.kind = VK_MODULE, r.flags = VF_LOSSMOD;
            if (api_call_no_reduction(f, op)) r.flags |= VF_NOREDUCE;
            return r;
        case EFF_OPTIM: r.kind = VK_OPTIM; return r;
        case EFF_LOADER: r.kind = VK_LOADER; return r;
        case EFF_NOGRAD: case EFF_INFER: case EFF_ENABLE: r.kind = VK_CTX; return r;
        case EFF_NONDIFF: case EFF_SCALAR: case EFF_DETACH: case EFF_SHAPE:
            r.kind = fe == EFF_SCALAR || fe == EFF_SHAPE ? VK_SCALAR : VK_TENSOR;
            if (fe == EFF_SHAPE) r.flags = VF_SHAPE;
            return r;
        case EFF_BACKWARD: case EFF_GRADFN:
            if (!ir_const_true(f, api_call_kwarg(f, op, API_KW_RETAIN_GRAPH))) df__backward_effect(I, op);
            return r;
        default: break;
        }
        /* differentiable torch functions: DIFF, REDUCE, LOSS, PIECES, MOVE */
        r.kind = fe == EFF_PIECES ? VK_CONTAINER : VK_TENSOR;
        r.grad = off ? G_NONE : max_arg;
        r.src = arg_src;
        r.flags = arg_flags & (VF_MODEL_OUT | VF_BATCH);
        r.carried = arg_carried;
        r.pmask = pmask;
        r.cmask = off ? 0 : cmask;
        if (fe == EFF_PIECES) r.elem = r.grad, r.flags |= VF_PIECES;
        if (fe == EFF_LOSS && !api_call_no_reduction(f, op)) r.flags |= VF_ZERO_DIM;
        if (fe == EFF_REDUCE && o->nargs <= 1 && api_call_kwarg(f, op, API_KW_DIM) == IR_NONE) r.flags |= VF_ZERO_DIM;
        if (fe == EFF_POINTWISE && nargs) {
            /* element by element: 0-dim in, 0-dim out (torch.abs(diff), torch.add(a, 1)) */
            bool zero = (args[0].flags & VF_ZERO_DIM) != 0;
            for (uint32_t i = 1; i < nargs && zero; i++)
                zero = (args[i].flags & VF_ZERO_DIM) || args[i].kind == VK_SCALAR;
            if (zero) r.flags |= VF_ZERO_DIM;
        }
        /* a module passed to a torch function: data_parallel(model, x) and checkpoint(fn, x) call
         * it; jit.script(model), compile(model) return a module */
        bool has_module = false, has_data = false;
        for (uint32_t i = 0; i < nargs; i++) {
            if (f->kw.items[o->args + i]) continue;
            /* (an attribute of a module that nothing says is one, `model.nodevec1` in
             * `torch.mm(model.nodevec1, model.nodevec2)`, is as likely a parameter) */
            bool attr_guess = args[i].kind != VK_MODULE && OP(I, f->args.items[o->args + i])->kind == IR_ATTR;
            if ((args[i].kind == VK_MODULE || (args[i].flags & VF_MAYBE_MODULE)) && !attr_guess) has_module = true;
            else has_data = true;
        }
        if (has_module && !has_data) return aval(VK_MODULE, G_NONE, op);
        if (has_module && api_runs_module(o->qual) && !off)
            r.grad = G_LIVE, r.src = op, r.flags |= VF_MODEL_OUT;
        return r;
    }

    /* 3. builtins */
    if (callee && callee->kind == IR_LOAD && !callee->qual && cv.kind == VK_UNKNOWN) {
        ApiBuiltin b = api_builtin(callee->name);
        switch (b) {
        case B_SCALAR: r.kind = VK_SCALAR; return r;
        case B_LEN:
            r.kind = VK_SCALAR;
            if (nargs && (args[0].kind == VK_TENSOR || (args[0].flags & VF_PIECES))) r.flags = VF_SHAPE;
            return r;
        case B_RANGE:
            r.kind = VK_RANGE;
            r.flags = arg_flags & VF_SHAPE;
            return r;
        case B_PASS: case B_ZIP: case B_ENUMERATE: case B_NEXT: case B_REDUCE: case B_COLLECT:
            if (!nargs) { r.kind = VK_CONTAINER; return r; }
            r = args[0];
            r.def = op;
            if (b == B_ZIP)
                for (uint32_t i = 1; i < nargs; i++) r = aval_join(&r, &args[i]);
            if (b == B_ENUMERATE) r.flags |= VF_ENUM;
            if (b == B_NEXT || b == B_REDUCE) {
                if (r.kind == VK_CONTAINER) r.grad = GL_MAX(r.grad, r.elem), r.kind = VK_UNKNOWN;
                if (b == B_REDUCE)
                    for (uint32_t i = 1; i < nargs; i++) r.grad = GL_MAX(r.grad, grad_of_arg(&args[i]));
            }
            if (b == B_COLLECT && r.kind != VK_CONTAINER) r.kind = VK_CONTAINER, r.elem = r.grad;
            if (off) r.grad = GL_MIN(r.grad, G_MAY);
            return r;
        case B_NONE: break;
        }
    }

    /* 4. methods */
    if (method) {
        ApiMethod am = api_method(method);
        ApiEffect me = (ApiEffect)am.effect;
        uint32_t mflags = am.flags;
        uint32_t rv = ir_root_var(I->f, recv_op);
        /* `blobs = data_layer.forward()`: a forward given no input is a data layer's or a
         * pipeline's, no evidence of a module (one already known stays one) */
        if ((mflags & M_CALLS_MODEL) && nargs == 0 && recv.kind != VK_MODULE) mflags = 0;
        if (me == EFF_BACKWARD) {
            /* `accelerator.backward(loss)`, `engine.backward(loss)`: what an object differentiates
             * for the caller is a loss with a graph, however it was computed (`get_reward(model,
             * batch)` of a module gradleak cannot see) */
            /* (an object given in or held, not `out.backward(grad_out)`, whose argument is the
             * gradient) */
            const IrOp *ro = recv_op != IR_NONE ? OP(I, recv_op) : NULL;
            bool holder = recv.kind == VK_OBJECT ||
                          (ro && ((ro->kind == IR_LOAD && ro->var < f->vars.len && f->vars.items[ro->var].is_param) ||
                                  ro->kind == IR_ATTR));
            if (holder && recv.kind != VK_TENSOR && !(recv.flags & VF_MODEL_OUT) && nargs && !f->kw.items[o->args]) {
                const IrOp *lo = OP(I, f->args.items[o->args]);
                if (lo->kind == IR_LOAD && lo->var != IR_NONE && lo->var < I->nvars) {
                    AVal lv = env_get(I, lo->var);
                    if (lv.grad < G_LIVE && !off && (lv.kind == VK_UNKNOWN || lv.kind == VK_TENSOR)) {
                        lv.grad = G_LIVE, lv.kind = VK_TENSOR;
                        if (lv.src == IR_NONE) lv.src = op;
                        env_set(I, lo->var, lv);
                    }
                }
            }
            if (!ir_const_true(f, api_call_kwarg(f, op, API_KW_RETAIN_GRAPH))) df__backward_effect(I, op);
            return r;
        }
        /* a method of a class of another file of the run (`meter.add(loss)`): its summary, before
         * the name suggests a set's add or a dict's update */
        char xbuf[256];
        const char *xq = I->fx->ext ? df_method_qual(I->fx, &recv, method, xbuf, sizeof xbuf) : NULL;
        const ExternSummary *xs = df_ext(I->fx, xq);
        if (xs) return df__call_extern_method(I, op, xs, args, nargs);
        if (recv.kind == VK_OPTIM || (recv.kind == VK_MODULE && (mflags & M_ZERO_GRAD))) {
            r.kind = VK_UNKNOWN;
            /* `loss = opt.step(closure)` (L-BFGS, line searches): what the closure returns */
            if (recv.kind == VK_OPTIM && (mflags & M_STEP) && nargs >= 1 && args[0].kind == VK_FUNC &&
                args[0].ref != IR_NONE && args[0].ref < I->m->funcs.len && args[0].ref != I->f->index)
                r = df__call_local(I, op, args[0].ref, NULL, 0);
            return r;
        }
        if ((recv.kind == VK_MODULE || (recv.flags & VF_MAYBE_MODULE)) && (mflags & M_MODLIST)) {
            r.kind = VK_CONTAINER;
            r.flags = VF_MODLIST;
            return r;
        }
        if ((recv.kind == VK_MODULE || (recv.flags & VF_MAYBE_MODULE)) && (mflags & M_PARAMS)) {
            /* parameters require grad: each is a graph source */
            r.kind = VK_CONTAINER;
            r.elem = off ? G_NONE : G_LIVE;
            r.src = op;
            return r;
        }
        if (recv.kind == VK_MODULE || (recv.flags & VF_MAYBE_MODULE)) {
            if (mflags & M_CALLS_MODEL) return df__model_output(I, op, &recv, max_arg);
            if (mflags & M_MODULE_SELF) {
                r = recv; /* modules convert in place and return themselves */
                r.def = op;
                if ((mflags & M_FREEZE) && o->nargs >= 1 && ir_const_false(f, f->args.items[o->args])) {
                    r.flags |= VF_FROZEN;
                    if (rv != IR_NONE && rv < I->nvars) {
                        AVal fv = env_get(I, rv);
                        fv.flags |= VF_FROZEN;
                        env_set(I, rv, fv);
                    }
                }
                return r;
            }
            /* a method of a local Module class: its summary, with self's attributes reset when the
             * method re-creates them (init_hidden) */
            if (recv.ref != IR_NONE && recv.ref < I->m->classes.len) {
                const IrClass *c = I->m->classes.items[recv.ref];
                for (uint32_t k = 0; k < c->methods.len; k++) {
                    const IrFunc *mf = I->m->funcs.items[c->methods.items[k]];
                    if (strcmp(mf->name, method) != 0) continue;
                    AVal pos[16];
                    uint32_t np = 0;
                    pos[np++] = recv;
                    for (uint32_t i = 0; i < nargs && np < 16; i++)
                        if (!f->kw.items[o->args + i]) pos[np++] = args[i];
                    r = df__call_local(I, op, mf->index, pos, np);
                    if (rv != IR_NONE) {
                        ClassFacts *cf = &I->fx->classes[recv.ref];
                        AVal reset = aval(VK_UNKNOWN, G_NONE, op);
                        reset.flags = VF_RESET;
                        for (uint32_t j = 0; j < cf->reset_methods.len; j++)
                            if (!strcmp(cf->reset_methods.items[j], method)) env_set_attrs(I, rv, reset);
                    }
                    return r;
                }
            }
            if (rv != IR_NONE && (mflags & M_MODULE_ONLY) && (mflags & M_RESETS)) {
                AVal reset = aval(VK_UNKNOWN, G_NONE, op);
                reset.flags = VF_RESET;
                env_set_attrs(I, rv, reset);
            }
            r.grad = G_MAY;
            /* a method of a model the function then differentiates: it ran the model's forward */
            if ((I->bw_calls[op] & 1) && !off) r.grad = G_LIVE, r.src = op, r.kind = VK_TENSOR;
            else if ((recv.kind == VK_MODULE || ((I->bw_calls[op] & 2) && (recv.flags & VF_MAYBE_MODULE))) &&
                     (recv.ref == IR_NONE || REF_IS_EXTERN(recv.ref)) && df__unknown_model_method(I, op, method, args, nargs)) {
                /* `self.network.features(x)`, `model.encode(src)` of a model whose class nothing
                 * shows (not one of the file's, whose `self.conv1(x)` is a submodule): a method
                 * torch does not define, given a tensor, runs the model's submodules (its graph
                 * left open: it may detach or return numbers) */
                r = df__model_output(I, op, &recv, max_arg);
                r.grad = GL_MIN(r.grad, G_MAY);
            }
            return r;
        }
        /* (a container taken for a tensor, `hist["loss"]` of a dict holding model outputs, is still
         * appended to: tensors have no append) */
        if ((mflags & M_MUTATES) && (recv.kind != VK_TENSOR || !(mflags & M_TENSOR_TOO)) &&
            api_method_collects(method, nargs)) {
            if (rv != IR_NONE) {
                AVal cv2 = env_get(I, rv);
                uint8_t g = G_NONE;
                for (uint32_t i = 0; i < nargs; i++) g = GL_MAX(g, grad_of_arg(&args[i]));
                if (cv2.kind == VK_UNKNOWN && !(cv2.flags & VF_UNSET)) cv2.kind = VK_CONTAINER;
                cv2.elem = GL_MAX(cv2.elem, g);
                cv2.flags |= arg_flags & VF_MODEL_OUT;
                env_set(I, rv, cv2);
            }
            return r;
        }
        if (recv.kind == VK_CONTAINER || recv.kind == VK_LOADER) {
            if (mflags & M_GETS) {
                r.grad = recv.elem;
                r.kind = mflags & M_VIEW ? VK_CONTAINER : VK_UNKNOWN;
                r.elem = recv.elem;
                return r;
            }
            r.kind = VK_UNKNOWN;
            return r;
        }
        if (recv.kind == VK_OBJECT && recv.ref != IR_NONE && recv.ref < I->m->classes.len) {
            /* a method of a local class (a Trainer): its summary */
            uint32_t mi = ir_class_method(I->m, recv.ref, method);
            if (mi != IR_NONE) {
                AVal pos[16];
                uint32_t np = 0;
                pos[np++] = recv;
                for (uint32_t i = 0; i < nargs && np < 16; i++)
                    if (!f->kw.items[o->args + i]) pos[np++] = args[i];
                return df__call_local(I, op, mi, pos, np);
            }
        }
        /* `obs, reward, done, info = env.step(action)`: an environment stepped with the policy's
         * action returns what the simulator computed, no graph */
        AVal action = nargs == 1 ? args[0] : aval(VK_UNKNOWN, G_NONE, IR_NONE);
        if (nargs == 1 && !(action.flags & VF_MODEL_OUT)) {
            /* `env.step(to_np(a_t))`: the action passed through a helper of the file */
            const IrOp *ao = OP(I, f->args.items[o->args]);
            if (ao->kind == IR_CALL && ao->nargs >= 1 && !f->kw.items[ao->args] &&
                (val_of(I, f->args.items[ao->args]).flags & VF_MODEL_OUT))
                action.flags |= VF_MODEL_OUT;
        }
        if (df_env_step_shape(mflags, nargs, &action, &recv)) {
            r.kind = VK_UNKNOWN, r.grad = G_NONE;
            return r;
        }
        if (recv.kind == VK_MODREF || recv.kind == VK_SCALAR || recv.kind == VK_NONE ||
            recv.kind == VK_OBJECT || recv.kind == VK_LOADER) {
            /* methods of non-tensors: unknown objects built from an imported class may be models
             * (AutoModel.from_pretrained): keep them as objects, graph unknown; `.to(device)`,
             * `.cuda()`, `.train()` give the object itself back, its class with it */
            if (recv.kind == VK_OBJECT && (mflags & M_MODULE_SELF) && REF_IS_EXTERN(recv.ref)) {
                r = recv;
                r.def = op;
                return r;
            }
            if (recv.kind == VK_MODREF && callee && callee->qual) {
                const char *q = callee->qual;
                const char *dot = strrchr(q, '.');
                const char *owner_end = dot;
                const char *owner = owner_end;
                while (owner > q && owner[-1] != '.') owner--;
                if (owner < owner_end && owner[0] >= 'A' && owner[0] <= 'Z') r.kind = VK_OBJECT;
                else if (!api_camel_last(q) && pmask) {
                    /* a function of an imported module (`hvd.allreduce(val)`) in a summary: it
                     * keeps what the caller passes, as a plain imported function does */
                    r.grad = max_arg, r.src = arg_src, r.pmask = pmask, r.flags |= VF_OPAQUE;
                    return r;
                }
            }
            r.grad = G_NONE;
            if (recv.kind == VK_OBJECT) r.grad = max_arg > G_MAY ? max_arg : G_NONE;
            /* `utils.averager()`, `meters.AverageMeter()`: maybe an object of another file's class */
            if (recv.kind == VK_MODREF && callee && callee->qual && !api_is_torch(callee->qual) && r.grad < G_POST)
                r.ref = df__extern_class(I->fx, callee->qual);
            return r;
        }
        /* eval(), train(), parameters()... exist only on modules: the receiver is one */
        if (mflags & M_MODULE_ONLY) {
            r.kind = mflags & M_MODE ? VK_MODULE : VK_UNKNOWN;
            if (rv != IR_NONE && env_get(I, rv).kind == VK_UNKNOWN) {
                AVal mv = env_get(I, rv);
                mv.kind = VK_MODULE;
                env_set(I, rv, mv);
            }
            return r;
        }
        /* a tensor (or something that may be one) */
        switch (me) {
        case EFF_SCALAR: r.kind = VK_SCALAR; return r;
        case EFF_SHAPE: r.kind = VK_SCALAR, r.flags = VF_SHAPE; return r;
        case EFF_NONDIFF: case EFF_DETACH:
            r.kind = VK_TENSOR;
            r.flags = recv.flags & (VF_ZERO_DIM | VF_BATCH);
            if (me == EFF_DETACH && rv != IR_NONE && (mflags & M_DETACH_SELF)) {
                /* an attribute not yet touched in this call (self.sums.detach_()) now holds the
                 * detached value: later reads are no longer the previous call's graph */
                AVal dv = env_get(I, rv);
                if (dv.flags & VF_UNSET) dv = recv, dv.carried = IR_NONE;
                dv.grad = G_NONE;
                env_set(I, rv, dv);
            }
            return r;
        case EFF_PARAM:
            r = recv, r.def = op;
            if (!off) r.grad = G_LIVE, r.src = op;
            return r;
        case EFF_INPLACE:
            r = recv;
            r.def = op;
            if (max_arg > r.grad && !off) r.grad = max_arg, r.src = arg_src;
            if (rv != IR_NONE) {
                AVal iv = env_get(I, rv);
                iv.grad = r.grad;
                env_set(I, rv, iv);
            }
            return r;
        default: break;
        }
        /* x.to(other), x.type_as(other): other gives a dtype and a device, never its graph */
        if (me == EFF_MOVE) max_arg = G_NONE, arg_flags = 0, pmask = 0, cmask = 0, arg_carried = IR_NONE;
        r = recv;
        r.def = op;
        r.kind = recv.kind == VK_UNKNOWN && recv.grad < G_POST && !(recv.flags & VF_BATCH) ? VK_UNKNOWN : VK_TENSOR;
        if (max_arg > r.grad) r.grad = max_arg, r.src = arg_src;
        if (r.grad < G_MAY && recv.kind == VK_UNKNOWN && !(recv.flags & VF_BATCH)) r.grad = recv.grad;
        r.flags = (uint16_t)((recv.flags | arg_flags) & (VF_MODEL_OUT | VF_BATCH | VF_ZERO_DIM));
        if (me == EFF_PIECES) r.kind = VK_CONTAINER, r.elem = r.grad, r.flags |= VF_PIECES;
        if (me == EFF_REDUCE) {
            if (o->nargs == 0) r.flags |= VF_ZERO_DIM;
            else r.flags &= (uint16_t)~VF_ZERO_DIM;
        } else if (me != EFF_MOVE) {
            r.flags &= (uint16_t)~VF_ZERO_DIM;
        }
        r.pmask = recv.pmask | pmask;
        r.cmask = recv.cmask | cmask;
        if (r.carried == IR_NONE) r.carried = arg_carried;
        if (off) r.grad = G_NONE, r.cmask = 0;
        return r;
    }

    /* an object of another file's class that defines __call__ (a learner that unrolls and trains,
     * a loss object): what its summary says, even when the object holds a model */
    if (cv.kind == VK_OBJECT && REF_IS_EXTERN(cv.ref) && I->fx->ext) {
        char cbuf[256];
        const ExternSummary *cs = df_ext(I->fx, df_method_qual(I->fx, &cv, api_name(PY_NAME_CALL), cbuf, sizeof cbuf));
        if (cs) {
            AVal ret = df__extern_ret(cs, op), pos[16];
            uint32_t np = 0;
            pos[np++] = cv;
            for (uint32_t i = 0; i < nargs && np < 16; i++)
                if (!f->kw.items[o->args + i]) pos[np++] = args[i];
            return df__extern_model_call(op, cs, df__apply_summary(I, op, &ret, pos, np));
        }
    }

    /* 5. calling a module (or something that behaves like one) */
    if (cv.kind == VK_MODULE || (cv.flags & VF_MAYBE_MODULE)) return df__model_output(I, op, &cv, max_arg);

    /* 6. unknown callables */
    if (cv.kind == VK_MODREF && api_camel_last(o->qual)) {
        /* an imported class: an object; a model when the code treats it like one */
        r.kind = VK_OBJECT;
        r.ref = df__extern_class(I->fx, o->qual); /* its methods may be another file's (df_method_qual) */
        for (uint32_t i = 0; i < nargs; i++) {
            if (args[i].kind != VK_MODULE && !(args[i].flags & VF_MAYBE_MODULE)) continue;
            /* an attribute of another model (`Transform(net.size)`, `Head(model.config)`) is no
             * model; the object's own (`Agent(self.net)`) are its submodules */
            const IrOp *ao = OP(I, f->args.items[o->args + i]);
            if (ao->kind == IR_ATTR && ao->a != IR_NONE) {
                AVal base = val_of(I, ao->a);
                const IrOp *bo = OP(I, ao->a);
                uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
                bool own = self_var != IR_NONE && bo->kind == IR_LOAD && bo->var == self_var;
                if (!own && (base.kind == VK_MODULE || (base.flags & VF_MAYBE_MODULE))) continue;
            }
            /* Agent(net): its methods are still the class's */
            r.ref = REF_IS_EXTERN(r.ref) ? r.ref | REF_WRAPPER_BIT : REF_MODEL_WRAPPER, r.flags |= VF_MAYBE_MODULE;
        }
        return r;
    }
    r.grad = max_arg >= G_POST ? max_arg : (cv.kind == VK_MODREF ? G_NONE : (max_arg ? G_MAY : G_NONE));
    if (df__detaching_name(df__callee_name(I, op))) r.grad = G_NONE; /* utils.detach(log), to_numpy(out) */
    /* a function gradleak cannot see, handed the optimizer (`train_reinforce(opt, log_probs,
     * returns)`): it differentiates and steps; what it returns (a loss, `.item()` or not) may carry
     * only a graph its backward already freed */
    for (uint32_t i = 0; i < nargs && r.grad > G_MAY; i++)
        if (args[i].kind == VK_OPTIM) r.grad = G_MAY;
    r.src = arg_src;
    r.flags = arg_flags & (VF_MODEL_OUT | VF_BATCH);
    r.pmask = pmask;
    r.cmask = (uint8_t)(cmask | (cv.pmask & 0xff)); /* calling a parameter: a model, if a module is passed */
    if (cv.kind == VK_MODREF) {
        r.flags |= VF_OPAQUE;
        /* it may be an object of another file's class with a lowercase name (`utils.averager()`):
         * its methods are looked up as that class's (df_method_qual), and found only if it is one */
        if (o->qual && !api_is_torch(o->qual) && r.grad < G_POST) r.ref = df__extern_class(I->fx, o->qual);
    }
    r.carried = arg_carried;
    if (off) r.grad = G_NONE, r.cmask = 0;
    /* an object of another file's Module class whose forward returns a 0-dim tensor computed from
     * its arguments (`criterion = CrossEntropyLoss2d()` of utils): a loss */
    if (cv.kind == VK_OBJECT && REF_IS_EXTERN(cv.ref) && I->fx->ext) {
        char fbuf[256];
        const ExternSummary *fs = df_ext(I->fx, df_method_qual(I->fx, &cv, "forward", fbuf, sizeof fbuf));
        if (fs && (fs->flags & VF_ZERO_DIM) && !(fs->flags & VF_MODEL_OUT) && fs->grad != G_LIVE &&
            fs->kind != VK_CONTAINER)
            r.flags |= VF_ZERO_DIM;
    }
    return r;
}

static AVal df_attr__plain(Interp *I, uint32_t op);

/* Records the shape of a returned value for callers that unpack it: a tuple display and which of
 * its elements carry no graph whatever the arguments. */
static void df__note_tuple_return(Interp *I, uint32_t vop)
{
    FuncFacts *ff = I->ff;
    if (ff->ret_tuple == 0xff) return;
    const IrOp *b = vop != IR_NONE ? OP(I, vop) : NULL;
    if (!b || b->kind != IR_BUILD || b->aux != BUILD_TUPLE || b->nargs == 0 || b->nargs > 16 ||
        (ff->ret_tuple && ff->ret_tuple != b->nargs)) {
        ff->ret_tuple = 0xff;
        return;
    }
    uint16_t plain = 0, zero = 0, weak = 0, none = 0;
    for (uint32_t k = 0; k < b->nargs; k++) {
        AVal e = val_of(I, I->f->args.items[b->args + k]);
        bool own = !e.pmask && !e.cmask && e.kind != VK_MODULE;
        if (e.grad == G_NONE && e.elem == G_NONE && own) plain |= (uint16_t)(1u << k);
        /* an attribute of an object that is no tensor (`milp.model.ObjVal`) is its own even when the
         * object came from the arguments */
        uint32_t eop = I->f->args.items[b->args + k];
        bool attr = OP(I, eop)->kind == IR_ATTR && !e.cmask && e.kind == VK_UNKNOWN;
        if (e.grad <= G_MAY && e.elem <= G_MAY && (own || attr) && e.kind != VK_TENSOR && e.kind != VK_CONTAINER &&
            e.kind != VK_MODULE && !(e.flags & (VF_MODEL_OUT | VF_ZERO_DIM)))
            weak |= (uint16_t)(1u << k);
        if (e.flags & VF_ZERO_DIM) zero |= (uint16_t)(1u << k);
        if (e.kind == VK_NONE) none |= (uint16_t)(1u << k); /* `return None, None` on an early exit */
    }
    ff->ret_plain = ff->ret_tuple ? (uint16_t)(ff->ret_plain & plain) : plain;
    ff->ret_weak = ff->ret_tuple ? (uint16_t)(ff->ret_weak & weak) : weak;
    ff->ret_zero = ff->ret_tuple ? (uint16_t)((ff->ret_zero & (zero | none)) | (ff->ret_none & zero)) : zero;
    ff->ret_none = ff->ret_tuple ? (uint16_t)(ff->ret_none & none) : none;
    ff->ret_tuple = (uint8_t)b->nargs;
}

/* Is element k of what call op returns a 0-dim tensor (see df__note_tuple_return)? */
static bool df__zero_dim_tuple_element(Interp *I, uint32_t op, uint32_t k)
{
    if (op == IR_NONE || OP(I, op)->kind != IR_CALL || k >= 16) return false;
    uint32_t t = df_call_target(I->m, I->fx, I->f, op);
    if (t == IR_NONE) { /* a function or method of another file of the run: its summary */
        const ExternSummary *es = df_call_extern(I->fx, I->f, op);
        return es && es->ret_tuple && es->ret_tuple != 0xff && k < es->ret_tuple && (es->ret_zero >> k & 1);
    }
    if (t == I->f->index) return false;
    const FuncFacts *cf = &I->fx->funcs[t];
    return cf->analysed && cf->ret_tuple && cf->ret_tuple != 0xff && k < cf->ret_tuple && (cf->ret_zero >> k & 1);
}

/* Is element k of what call op returns plain (see df__note_tuple_return)? 2: at most "maybe"; -1:
 * the file's function is known to return it as neither */
static int df__plain_tuple_element(Interp *I, uint32_t op, uint32_t k)
{
    if (op == IR_NONE || OP(I, op)->kind != IR_CALL || k >= 16) return 0;
    uint32_t t = df_call_target(I->m, I->fx, I->f, op);
    /* calling a model of a class of the file: its forward (`out, state = rnn(x, state)` where
     * forward returns `out, (h.detach(), c.detach())`) */
    const AVal *cv = OP(I, op)->a != IR_NONE ? &I->ff->val[OP(I, op)->a] : NULL;
    bool model = false; /* (a model's output is only taken for plain when forward makes it so) */
    uint32_t rcv = ir_call_receiver(I->f, op);
    if (t == IR_NONE && rcv != IR_NONE && I->ff->val[rcv].ref == IR_NONE && I->ff->val[rcv].kind != VK_TENSOR &&
        I->ff->val[rcv].kind != VK_CONTAINER && !api_method_listed(ir_call_method(I->f, op)))
        t = df_unique_method(I->m, ir_call_method(I->f, op)); /* `char, h = net.predict(ch, h)` */
    if (t == IR_NONE && cv && cv->kind == VK_MODULE && cv->ref < I->m->classes.len &&
        I->m->classes.items[cv->ref]->forward != IR_NONE)
        t = I->m->classes.items[cv->ref]->forward, model = true;
    if (t == IR_NONE) { /* a function or method of another file of the run: its summary */
        const ExternSummary *es = df_call_extern(I->fx, I->f, op);
        char fbuf[256]; /* ... or the forward of a model of another file's class */
        if (!es && cv && (cv->kind == VK_OBJECT || cv->kind == VK_MODULE) && REF_IS_EXTERN(cv->ref))
            es = df_ext(I->fx, df_method_qual(I->fx, cv, "forward", fbuf, sizeof fbuf)), model = true;
        if (!es || !es->ret_tuple || es->ret_tuple == 0xff || k >= es->ret_tuple) return 0;
        return (es->ret_plain >> k & 1) ? 1 : (es->ret_weak >> k & 1) && !model ? 2 : 0;
    }
    if (t == I->f->index) return 0;
    const FuncFacts *cf = &I->fx->funcs[t];
    if (!cf->analysed || !cf->ret_tuple || cf->ret_tuple == 0xff || k >= cf->ret_tuple) return 0;
    /* -1: a function of the file whose every return builds the tuple, the element neither plain
     * nor weak there (`return loss, out, mse` with mse computed from the model's output) */
    return (cf->ret_plain >> k & 1) ? 1 : (cf->ret_weak >> k & 1) && !model ? 2 : -1;
}

/* A variable the function calls both zero_grad() and step() on, of no kind known otherwise (an
 * optimizer made in another method or file): an optimizer. */
static void df__optim_hint(const Interp *I, uint32_t var, AVal *v)
{
    if (var != IR_NONE && I->optim_vars[var] == 3 && (v->kind == VK_UNKNOWN || v->kind == VK_OBJECT))
        v->kind = VK_OPTIM, v->grad = G_NONE, v->flags &= (uint16_t)~VF_MAYBE_MODULE;
}

static void df__add_module_attr(ClassFacts *cf, const char *name)
{
    for (uint32_t j = 0; j < cf->module_attrs.len; j++)
        if (!strcmp(cf->module_attrs.items[j], name)) return;
    array_push(&cf->module_attrs, name);
}

/* The attributes of class c set to what torch.load returns (`self.rnn = torch.load(path)`, moved
 * or not) and called by a method of the class (`self.rnn(x, h)`): a pickled model, as a
 * variable so bound and called is (df__mark_unpickled). */
static void df__unpickled_attrs(const IrModule *m, const IrClass *c, ClassFacts *cf)
{
    for (uint32_t k = 0; k < c->methods.len; k++) {
        const IrFunc *g = m->funcs.items[c->methods.items[k]];
        uint32_t self = ir_first_param(g);
        for (uint32_t i = 0; self != IR_NONE && i < g->ops.len; i++) {
            const IrOp *so = &g->ops.items[i];
            if (so->kind != IR_SET_ATTR || !so->name || so->a == IR_NONE || so->b == IR_NONE) continue;
            const IrOp *obj = &g->ops.items[so->a];
            if (obj->kind != IR_LOAD || obj->var != self) continue;
            uint32_t v = so->b;
            for (int d = 0; d < 4 && g->ops.items[v].kind == IR_CALL && api_function(g->ops.items[v].qual) != EFF_UNPICKLE &&
                            ir_call_method(g, v) && ir_call_receiver(g, v) != IR_NONE;
                 d++)
                v = ir_call_receiver(g, v); /* `torch.load(path).to(device)` */
            if (v == IR_NONE || g->ops.items[v].kind != IR_CALL || api_function(g->ops.items[v].qual) != EFF_UNPICKLE) continue;
            bool called = false; /* `self.<name>(...)` in some method */
            for (uint32_t q = 0; q < c->methods.len && !called; q++) {
                const IrFunc *h = m->funcs.items[c->methods.items[q]];
                uint32_t hs = ir_first_param(h);
                for (uint32_t j = 0; hs != IR_NONE && j < h->ops.len && !called; j++) {
                    const IrOp *co = &h->ops.items[j];
                    const IrOp *ce = co->kind == IR_CALL && co->a != IR_NONE ? &h->ops.items[co->a] : NULL;
                    called = ce && ce->kind == IR_ATTR && ce->name && !strcmp(ce->name, so->name) && ce->a != IR_NONE &&
                             h->ops.items[ce->a].kind == IR_LOAD && h->ops.items[ce->a].var == hs;
                }
            }
            if (called) df__add_module_attr(cf, so->name);
        }
    }
}

/* The attributes of a Module class that __init__ sets from its parameters and forward() calls,
 * itself or in a method of the class it calls, any levels down (`self.net = net` ...
 * `self.net(x)`): the network the model was built around. Each method is scanned once. */
static void df__forward_param_attrs(const IrModule *m, const IrClass *c, ClassFacts *cf)
{
    if (c->init == IR_NONE || c->forward == IR_NONE) return;
    const IrFunc *g = m->funcs.items[c->init];
    uint32_t gself = ir_first_param(g), n = c->methods.len;
    if (gself == IR_NONE) return;
    StrMap method_of, called; /* method name -> its index in c->methods; names called as self.X() */
    strmap_init(&method_of);
    strmap_init(&called);
    for (uint32_t k = 0; k < n; k++) {
        const IrFunc *h = m->funcs.items[c->methods.items[k]];
        if (h->name && h != g) strmap_put(&method_of, h->name, strlen(h->name), k);
    }
    uint32_t *queue = gl_malloc(sizeof *queue * (n + 1)), nq = 0;
    uint8_t *seen = gl_calloc(n + 1, 1);
    for (uint32_t k = 0; k < n; k++)
        if (c->methods.items[k] == c->forward) queue[nq++] = k, seen[k] = 1;
    for (uint32_t q = 0; q < nq; q++) {
        const IrFunc *h = m->funcs.items[c->methods.items[queue[q]]];
        uint32_t self = ir_first_param(h);
        for (uint32_t i = 0; self != IR_NONE && i < h->ops.len; i++) {
            const IrOp *call = &h->ops.items[i];
            if (call->kind != IR_CALL || call->a == IR_NONE) continue;
            const IrOp *callee = &h->ops.items[call->a];
            if (callee->kind != IR_ATTR || callee->a == IR_NONE || !callee->name) continue;
            const IrOp *cb = &h->ops.items[callee->a];
            if (cb->kind != IR_LOAD || cb->var != self) continue;
            size_t len = strlen(callee->name);
            strmap_put(&called, callee->name, len, 1);
            uint32_t k = strmap_get(&method_of, callee->name, len);
            if (k != UINT32_MAX && !seen[k]) seen[k] = 1, queue[nq++] = k;
        }
    }
    for (uint32_t i = 0; i < g->ops.len; i++) {
        const IrOp *o = &g->ops.items[i];
        if (o->kind != IR_SET_ATTR || o->a == IR_NONE || o->b == IR_NONE || !o->name) continue;
        const IrOp *base = &g->ops.items[o->a], *val = &g->ops.items[o->b];
        if (base->kind == IR_LOAD && base->var == gself && val->kind == IR_LOAD && val->var < g->vars.len &&
            g->vars.items[val->var].is_param && strmap_get(&called, o->name, strlen(o->name)) != UINT32_MAX)
            df__add_module_attr(cf, o->name);
    }
    gl_free(queue);
    gl_free(seen);
    strmap_free(&method_of);
    strmap_free(&called);
}

/* Is self.<attr> a module in class ci: does some method of the class call a module-only method on
 * it (self.netG.parameters() where the optimizer is built, self.netG.eval())? A trainer builds its
 * networks in one method (a factory in another file) and runs them in the others. */
bool df_class_module_attr(Interp *I, uint32_t ci, const char *attr)
{
    if (ci == IR_NONE || ci >= I->m->classes.len || !attr) return false;
    ClassFacts *cf = &I->fx->classes[ci];
    if (!cf->module_attrs_done) {
        cf->module_attrs_done = 1;
        const IrClass *c = I->m->classes.items[ci];
        for (uint32_t k = 0; k < c->methods.len; k++) {
            const IrFunc *g = I->m->funcs.items[c->methods.items[k]];
            uint32_t self = ir_first_param(g);
            if (self == IR_NONE) continue;
            for (uint32_t i = 0; i < g->ops.len; i++) {
                if (g->ops.items[i].kind != IR_CALL) continue;
                const char *mname = ir_call_method(g, i);
                uint32_t recv = ir_call_receiver(g, i);
                if (!mname || recv == IR_NONE || !(api_method(mname).flags & M_MODULE_ONLY)) continue;
                const IrOp *ro = &g->ops.items[recv];
                if ((ro->kind != IR_ATTR && ro->kind != IR_LOAD) || ro->var == IR_NONE) continue;
                const IrVar *v = &g->vars.items[ro->var];
                if (ro->kind == IR_LOAD && v->is_param && ro->var != self) {
                    /* `self.model = model` of a parameter the method also treats as a module
                     * (`self.params = model.parameters()`) */
                    for (uint32_t s = 0; s < g->ops.len; s++) {
                        const IrOp *so = &g->ops.items[s];
                        if (so->kind != IR_SET_ATTR || !so->name || so->a == IR_NONE || so->b == IR_NONE) continue;
                        const IrOp *obj = &g->ops.items[so->a], *val = &g->ops.items[so->b];
                        if (obj->kind == IR_LOAD && obj->var == self && val->kind == IR_LOAD && val->var == ro->var)
                            df__add_module_attr(cf, so->name);
                    }
                    continue;
                }
                /* self.net, or a path below self (`self.ema.model.eval()`: "ema.model") */
                uint32_t root = v->base;
                for (int d = 0; d < 4 && root != IR_NONE && root != self; d++) root = g->vars.items[root].base;
                if (root != self || !v->name || !strchr(v->name, '.')) continue;
                const char *name = v->base == self ? strrchr(v->name, '.') + 1 : strchr(v->name, '.') + 1;
                df__add_module_attr(cf, name);
            }
        }
        if (c->is_module) df__forward_param_attrs(I->m, c, cf);
        df__unpickled_attrs(I->m, c, cf);
    }
    for (uint32_t j = 0; j < cf->module_attrs.len; j++)
        if (!strcmp(cf->module_attrs.items[j], attr)) return true;
    return false;
}

static AVal df_attr(Interp *I, uint32_t op)
{
    AVal r = df_attr__plain(I, op);
    const IrOp *o = OP(I, op);
    df__optim_hint(I, o->var, &r);
    /* self.model.train() elsewhere in the function, or in another method of the class: self.model
     * behaves like a module */
    /* (`self._net = None` in __init__, built later: a placeholder for the module) */
    bool class_module = false, placeholder = r.kind == VK_NONE && (r.flags & VF_OUTER);
    if (r.kind == VK_UNKNOWN || r.kind == VK_OBJECT || placeholder) {
        AVal base = val_of(I, o->a);
        class_module = (base.kind == VK_MODULE || base.kind == VK_OBJECT) && base.ref != IR_NONE &&
                       df_class_module_attr(I, base.ref, o->name);
        /* a path below self that a method of the class treats as a module (`self.ema.model`,
         * whose object is of another file's class: `self.ema.model.eval()` in set_mode()) */
        const IrFunc *f = I->f;
        uint32_t self = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
        if (!class_module && self != IR_NONE && o->var != IR_NONE && o->var < f->vars.len) {
            const IrVar *v = &f->vars.items[o->var];
            uint32_t root = v->base;
            for (int d = 0; d < 4 && root != IR_NONE && root != self; d++) root = f->vars.items[root].base;
            if (root == self && v->base != self && v->name && strchr(v->name, '.'))
                class_module = df_class_module_attr(I, f->cls, strchr(v->name, '.') + 1);
        }
    }
    if (((o->var != IR_NONE && I->module_vars[o->var]) || class_module) &&
        (r.kind == VK_UNKNOWN || r.kind == VK_OBJECT || (placeholder && class_module))) {
        r.flags |= VF_MAYBE_MODULE;
        r.ref = REF_UNWRAP(r.ref);
        if (r.kind == VK_UNKNOWN || r.kind == VK_NONE) r.kind = VK_MODULE, r.grad = G_NONE, r.pmask = 0;
    }
    return r;
}

static AVal df_attr__plain(Interp *I, uint32_t op)
{
    const IrOp *o = OP(I, op);
    if (o->qual && !api_is(o->qual, API_NAME_TENSOR_TYPE)) { /* (C++ marks members declared as tensors) */
        AVal r = aval(VK_MODREF, G_NONE, op);
        return r;
    }
    if (o->var != IR_NONE && !(env_get(I, o->var).flags & VF_UNSET)) {
        AVal r = env_get(I, o->var);
        return r;
    }
    AVal base = val_of(I, o->a);
    ApiEffect ae = api_attr(o->name);
    AVal r = aval(VK_UNKNOWN, G_NONE, op);
    if (base.kind == VK_MODULE || base.kind == VK_OBJECT) {
        if (base.ref != IR_NONE && !REF_IS_EXTERN(base.ref)) {
            r = df__class_attr(I, base.ref, o->name);
            if (o->var != IR_NONE) {
                /* read before any store in this call: the value an earlier call left there */
                r.flags |= VF_OUTER;
                if (r.carried == IR_NONE && I->f->cls == base.ref) r.carried = CARRIED_CALLS;
            }
            if (r.def == IR_NONE) r.def = op;
            return r;
        }
        if (ae == EFF_PARAM) { /* weight, bias */
            r.kind = VK_TENSOR, r.grad = df_mode_off(o->mode) ? G_NONE : G_LIVE, r.src = op;
            return r;
        }
        r.grad = G_MAY;
        r.flags = VF_MAYBE_MODULE;
        return r;
    }
    switch (ae) {
    case EFF_DETACH: /* .data */
        r = base, r.def = op, r.grad = G_NONE, r.elem = G_NONE, r.pmask = 0;
        if (r.kind == VK_UNKNOWN) r.kind = VK_TENSOR;
        return r;
    case EFF_GRAD: r.kind = VK_TENSOR; return r;
    case EFF_SHAPE: r.kind = VK_SCALAR, r.flags = VF_SHAPE; return r;
    case EFF_SCALAR: r.kind = VK_SCALAR; return r;
    default: break;
    }
    /* attributes of values that carry a graph carry it too (outputs.logits, out.last_hidden_state) */
    r = base;
    r.def = op;
    r.kind = base.kind == VK_TENSOR ? VK_TENSOR : VK_UNKNOWN;
    if (base.kind == VK_CONTAINER) r.grad = GL_MAX(base.grad, base.elem);
    r.flags &= (uint16_t)~(VF_ZERO_DIM | VF_PIECES | VF_LOSSMOD);
    if (base.flags & VF_OUTER) r.flags |= VF_OUTER;
    return r;
}

/* Is unpack op's element left alone while a sibling element of the same unpacking, stored to a
 * variable, is what backward() is called on (and op's is not)? */
static bool df__sibling_differentiated(const Interp *I, uint32_t op)
{
    const IrFunc *f = I->f;
    const IrOp *o = &f->ops.items[op];
    const IrOp *next = op + 1 < f->ops.len ? &f->ops.items[op + 1] : NULL;
    uint32_t mine = next && next->kind == IR_STORE && next->a == op ? next->var : IR_NONE;
    if (mine == IR_NONE || mine >= I->nvars || I->backward_vars[mine]) return false;
    for (uint32_t k = o->a + 1; k + 1 < f->ops.len && k < o->a + 48; k++) {
        const IrOp *u = &f->ops.items[k];
        if (u->kind != IR_UNPACK || u->a != o->a || k == op) continue;
        const IrOp *st = &f->ops.items[k + 1];
        if (st->kind == IR_STORE && st->a == k && st->var < I->nvars && I->backward_vars[st->var]) return true;
    }
    return false;
}

/* Is x the number read out of y (`y.item()`, `float(y)`), y being the same expression as x's
 * receiver (`losses["mse"].item()` and `losses["mse"]`)? Bounded chains of loads, attributes and
 * constant items. */
static bool df__item_of_other(const IrFunc *f, uint32_t x, uint32_t y)
{
    if (x == IR_NONE || y == IR_NONE || f->ops.items[x].kind != IR_CALL) return false;
    const char *m = ir_call_method(f, x);
    uint32_t r = IR_NONE;
    if (m && (!strcmp(m, "item") || !strcmp(m, "tolist"))) r = ir_call_receiver(f, x);
    else if (f->ops.items[x].nargs == 1 && f->ops.items[x].a != IR_NONE && f->ops.items[f->ops.items[x].a].kind == IR_LOAD &&
             f->ops.items[f->ops.items[x].a].name && api_builtin(f->ops.items[f->ops.items[x].a].name) == B_SCALAR)
        r = f->args.items[f->ops.items[x].args];
    for (int depth = 0; depth < 8 && r != IR_NONE; depth++) {
        const IrOp *p = &f->ops.items[r], *q = &f->ops.items[y];
        if (p->kind != q->kind) return false;
        if (p->kind == IR_LOAD) return p->var == q->var && p->var != IR_NONE;
        if (p->kind == IR_ATTR) {
            if (!p->name || !q->name || strcmp(p->name, q->name)) return false;
        } else if (p->kind == IR_ITEM) {
            const IrOp *pi = p->b != IR_NONE ? &f->ops.items[p->b] : NULL, *qi = q->b != IR_NONE ? &f->ops.items[q->b] : NULL;
            if (!pi || !qi || pi->kind != IR_CONST || qi->kind != IR_CONST || !pi->name || !qi->name || strcmp(pi->name, qi->name))
                return false;
        } else {
            return false;
        }
        r = p->a, y = q->a;
        if (r == IR_NONE || y == IR_NONE) return false;
    }
    return false;
}

static AVal df_load(Interp *I, uint32_t op)
{
    const IrOp *o = OP(I, op);
    if (o->qual) return aval(VK_MODREF, G_NONE, op);
    const IrVar *var = &I->f->vars.items[o->var];
    if (var->is_global && I->f->index != 0) {
        /* a helper defined in an enclosing function: that function */
        uint32_t g = var->name ? df_closure_def(I->fx, I->f, var->name) : IR_NONE;
        if (g != IR_NONE) {
            AVal r = aval(VK_FUNC, G_NONE, IR_NONE);
            r.ref = g;
            r.flags = VF_OUTER;
            return r;
        }
        /* the module's value of that name, when the module has analysed it */
        const IrFunc *top = I->m->funcs.items[0];
        FuncFacts *tf = &I->fx->funcs[0];
        /* the module's variable of that name (stores are to plain variables, one slot per name) */
        uint32_t slot = strmap_get(&top->var_index, var->name, strlen(var->name));
        /* (before the module is analysed, `__init__` first: a name the module binds once to a class
         * or function it defines is that class or function) */
        if (!tf->analysed && slot != UINT32_MAX && slot < top->vars.len) {
            if (!I->fx->top_defs) { /* one pass over the module body, not one per load */
                uint32_t *d = ARENA_NEW_N(I->m->arena, uint32_t, top->vars.len + 1);
                uint8_t *seen = gl_calloc(top->vars.len + 1, 1);
                for (uint32_t v = 0; v < top->vars.len; v++) d[v] = IR_NONE;
                for (uint32_t i = 0; i < top->ops.len; i++) {
                    const IrOp *t = &top->ops.items[i];
                    if (t->kind != IR_STORE || t->var >= top->vars.len) continue;
                    bool define = t->a != IR_NONE && top->ops.items[t->a].kind == IR_DEFINE;
                    d[t->var] = !seen[t->var] && define ? t->a : IR_NONE;
                    seen[t->var] = 1;
                }
                gl_free(seen);
                I->fx->top_defs = d;
            }
            const IrOp *def = I->fx->top_defs[slot] != IR_NONE ? &top->ops.items[I->fx->top_defs[slot]] : NULL;
            if (def) {
                bool cls = def->name && !strcmp(def->name, "class");
                AVal r = aval(cls ? VK_CLASS : VK_FUNC, G_NONE, IR_NONE);
                r.ref = cls ? IR_NONE - 1 - def->aux : def->aux;
                r.flags = VF_OUTER;
                return r;
            }
        }
        for (uint32_t i = 0; i < top->ops.len && tf->val && slot != UINT32_MAX; i++) {
            const IrOp *t = &top->ops.items[i];
            if (t->kind == IR_STORE && t->var == slot && tf->reached[i]) {
                AVal r = tf->val[i];
                r.flags |= VF_OUTER;
                r.def = IR_NONE;
                r.carried = IR_NONE;
                if (I->module_vars[o->var] && (r.kind == VK_UNKNOWN || r.kind == VK_OBJECT)) r.flags |= VF_MAYBE_MODULE;
                return r;
            }
        }
        AVal r = aval(VK_UNKNOWN, G_MAY, IR_NONE);
        r.flags = VF_OUTER;
        if (I->module_vars[o->var]) r.flags |= VF_MAYBE_MODULE;
        return r;
    }
    AVal r = env_get(I, o->var);
    if (r.flags & VF_UNSET) {
        r = aval(VK_UNKNOWN, G_NONE, IR_NONE);
        if (I->f->index == 0) r.grad = G_MAY;
    }
    df__optim_hint(I, o->var, &r);
    return r;
}

/* Is there a store to var, in loop lp before op t, that runs on every path reaching t (structured
 * code, early exits aside)? One walk back from t: a region closed before t, and the branch before
 * the one t is in (`else`, `except`), are stepped over; what is left runs whenever t does. */
static bool df__store_dominates(const IrFunc *f, const IrLoop *lp, uint32_t t, uint32_t var)
{
    int depth = 0; /* regions entered from their end, walking back */
    for (uint32_t i = t; i-- > lp->op + 1;) {
        const IrOp *o = &f->ops.items[i];
        switch (o->kind) {
        case IR_END_LOOP: case IR_END_IF: case IR_END_TRY: case IR_END_WITH: depth++; break;
        case IR_ELSE: case IR_EXCEPT:
            if (depth == 0) depth++; /* t is in this branch: skip the ones before it */
            break;
        case IR_LOOP: case IR_IF: case IR_TRY: case IR_WITH:
            if (depth > 0) depth--;
            break;
        case IR_STORE:
            if (depth == 0 && o->var == var) return true;
            break;
        default: break;
        }
    }
    return false;
}

/* Can the value stored at op reach the backward called on var: before it, or around a loop that
 * holds both (with `exact`, unless every path to the backward stores the variable again first:
 * `loss = criterion(...)`; `loss.backward()`; ...; `loss = metric(...)`)? (`loss = sum(losses) / n`
 * after the training loop is a float) */
static bool df__store_reaches_backward(const Interp *I, uint32_t op, uint32_t var, bool exact)
{
    uint32_t last = I->backward_last[var];
    if (last == IR_NONE || op == IR_NONE || op < last) return true;
    for (uint32_t l = ir_op_loop(I->f, op); l != IR_NONE; l = I->f->loops.items[l].parent) {
        const IrLoop *lp = &I->f->loops.items[l];
        if (!ir_loop_contains(I->f, l, last)) continue;
        /* (bounded: a long loop body is taken to reach it) */
        if (!exact || last - lp->op > 4096) return true;
        return !df__store_dominates(I->f, lp, last, var);
    }
    return false;
}

/* `loss = loss_l + loss_c` differentiated by `loss.backward()`: an elementwise result has the
 * larger shape of its operands, so a 0-dim sum is made of 0-dim tensors (or numbers): the variables
 * added, subtracted, multiplied or divided into it are 0-dim too (`loss_l.data[0]` later). */
static void df__zero_dim_operands(Interp *I, uint32_t vop)
{
    uint32_t stack[8], n = 0;
    if (vop != IR_NONE && vop < I->f->ops.len) stack[n++] = vop;
    while (n) {
        const IrOp *o = OP(I, stack[--n]);
        if (o->kind == IR_BINOP && o->aux <= BIN_DIV) {
            if (o->a != IR_NONE && n < 8) stack[n++] = o->a;
            if (o->b != IR_NONE && n < 8) stack[n++] = o->b;
        } else if (o->kind == IR_LOAD && !o->qual && o->var != IR_NONE && o->var < I->nvars) {
            AVal a = env_get(I, o->var);
            if ((a.flags & VF_UNSET) || (a.kind != VK_TENSOR && a.kind != VK_UNKNOWN) || (a.flags & VF_ZERO_DIM))
                continue;
            a.flags |= VF_ZERO_DIM;
            if (a.kind == VK_UNKNOWN) a.kind = VK_TENSOR;
            env_set(I, o->var, a);
        }
    }
}

static void df_store(Interp *I, uint32_t op, uint32_t var, AVal v)
{
    if (var == IR_NONE) return;
    if (I->backward_vars[var] && df__store_reaches_backward(I, op, var, false)) {
        /* `.backward()` is called on this variable: whatever it holds carries a graph (when it
         * gets there) and is a 0-dim loss (a validation loss of the same name too) */
        if (v.grad < G_LIVE && v.kind != VK_SCALAR && df__store_reaches_backward(I, op, var, true)) v.grad = G_LIVE;
        v.flags |= VF_ZERO_DIM;
        if (v.kind == VK_UNKNOWN) v.kind = VK_TENSOR;
        if (op != IR_NONE && op < I->f->ops.len && OP(I, op)->kind == IR_STORE) df__zero_dim_operands(I, OP(I, op)->a);
    }
    if (I->module_vars[var] && (v.kind == VK_UNKNOWN || v.kind == VK_OBJECT)) {
        v.flags |= VF_MAYBE_MODULE;
        v.ref = REF_UNWRAP(v.ref); /* `.train()`/`.parameters()` on it: a model */
    } else if (I->module_vars[var] && v.kind == VK_TENSOR && (v.flags & VF_MODEL_OUT)) {
        /* what calling a "model" returned, with module-only methods called on it: the callee was
         * a class (`Model: nn.Module` given the class, `model = Model(envs).to(device)`) and this
         * is the model */
        v = aval(VK_MODULE, G_NONE, v.def);
        v.flags = VF_MAYBE_MODULE;
    }
    env_set(I, var, v);
    /* assigning the base invalidates what we knew of its attributes */
    env_set_attrs(I, var, aval_unset());
}

/* What one iteration of a loop over `it` gives (the NEXT op at op). */
static AVal df__item_of(AVal it, uint32_t op)
{
    AVal r = aval(VK_UNKNOWN, G_NONE, op);
    uint16_t pair = it.flags & VF_ENUM ? VF_PAIR : 0;
    it.flags &= (uint16_t)~VF_ENUM;
    if (it.flags & VF_MODLIST) {
        r.kind = VK_MODULE;
        r.flags = VF_MODLIST | pair;
    } else if (it.kind == VK_RANGE || it.kind == VK_SCALAR) {
        r.kind = VK_SCALAR;
    } else if (it.kind == VK_CONTAINER) {
        r.grad = it.elem;
        r.flags = it.flags & (VF_MODEL_OUT | VF_BATCH);
        if (it.flags & VF_PIECES) r.kind = VK_TENSOR;
        r.carried = it.carried;
    } else if (it.kind == VK_TENSOR) {
        r.kind = VK_TENSOR, r.grad = it.grad, r.src = it.src, r.carried = it.carried;
    } else if (it.kind == VK_MODULE) {
        r.kind = VK_MODULE;
    } else {
        r.flags = VF_BATCH; /* iterating a loader or an unknown iterable: a batch */
        r.grad = it.grad >= G_POST ? it.grad : G_NONE;
    }
    r.flags |= pair;
    return r;
}

/* The zip call (builtin, not shadowed) that the NEXT op at next iterates, with no starred
 * argument; IR_NONE otherwise. */
static uint32_t df__zip_of_next(Interp *I, uint32_t next)
{
    const IrFunc *f = I->f;
    const IrOp *n = next != IR_NONE ? OP(I, next) : NULL;
    if (!n || n->kind != IR_NEXT || n->a == IR_NONE) return IR_NONE;
    const IrOp *call = OP(I, n->a);
    if (call->kind != IR_CALL || call->a == IR_NONE) return IR_NONE;
    const IrOp *callee = OP(I, call->a);
    if (callee->kind != IR_LOAD || callee->qual || !callee->name || api_builtin(callee->name) != B_ZIP ||
        val_of(I, call->a).kind != VK_UNKNOWN)
        return IR_NONE;
    for (uint32_t i = 0; i < call->nargs; i++)
        if (f->kw.items[call->args + i]) return IR_NONE; /* zip(*rows), strict=... */
    return n->a;
}

static void df_step(Interp *I, uint32_t op)
{
    const IrOp *o = OP(I, op);
    AVal r = aval(VK_UNKNOWN, G_NONE, op);
    bool off = df_mode_off(o->mode);
    switch ((IrOpKind)o->kind) {
    case IR_CONST:
        r.kind = o->aux == CONST_NONE ? VK_NONE : o->aux == CONST_OTHER ? VK_UNKNOWN : VK_SCALAR;
        break;
    case IR_PARAM: {
        const IrFunc *f = I->f;
        bool is_self = f->cls != IR_NONE && o->aux == 0;
        for (uint32_t i = 0; i < f->decorators.len; i++)
            if (strstr(f->decorators.items[i], api_name(PY_NAME_STATICMETHOD))) is_self = false;
        ValKind declared = api_declared_type(o->qual); /* a C++ parameter's type */
        if (is_self) {
            r.kind = df__class_is_module(I->m, f->cls) ? VK_MODULE : VK_OBJECT;
            r.ref = f->cls;
        } else if (declared == VK_MODULE || declared == VK_OPTIM || declared == VK_LOADER) {
            r.kind = declared;
        } else {
            r.grad = G_MAY;
            if (declared == VK_TENSOR) r.kind = VK_TENSOR;
            if (o->aux < 16) r.pmask = (uint16_t)(1u << o->aux);
            /* the first call site's argument tells what kind of object this is (a model, a
             * loader, an optimizer); its graph state stays unknown so the summary holds for
             * every caller */
            if (I->hints && o->aux < I->nhints) {
                const AVal *h = &I->hints[o->aux];
                /* (a value the caller treats as a model, `net = build_net(); net.eval()`, too) */
                if (h->kind == VK_MODULE || h->kind == VK_LOADER || h->kind == VK_OPTIM || h->kind == VK_OBJECT ||
                    (h->kind == VK_UNKNOWN && (h->flags & VF_MAYBE_MODULE))) {
                    r.kind = h->kind;
                    r.ref = h->ref;
                    r.flags |= h->flags & (VF_MAYBE_MODULE | VF_LOSSMOD);
                    r.grad = G_NONE;
                    r.pmask = 0;
                }
            }
        }
        break;
    }
    case IR_LOAD: r = df_load(I, op); break;
    case IR_STORE:
        r = val_of(I, o->a);
        /* a declared type (C++ `torch::Tensor x = ...`): a tensor even when the value's kind is unknown */
        if (api_is(o->qual, API_NAME_TENSOR_TYPE) && r.kind == VK_UNKNOWN) r.kind = VK_TENSOR;
        df_store(I, op, o->var, r);
        r = env_get(I, o->var);
        break;
    case IR_DEL:
        /* `del x` unbinds x; `del buf[:]` leaves a container (what remains is judged as empty) */
        if (o->var != IR_NONE) env_set(I, o->var, aval(o->aux ? VK_CONTAINER : VK_NONE, G_NONE, op));
        break;
    case IR_ATTR:
        r = df_attr(I, op);
        /* C++: a member declared as a tensor (`batch.first`, `this->buf`) */
        if (api_is(o->qual, API_NAME_TENSOR_TYPE) && r.kind == VK_UNKNOWN) r.kind = VK_TENSOR;
        break;
    case IR_SET_ATTR:
        r = val_of(I, o->b);
        if (o->var != IR_NONE) df_store(I, op, o->var, r);
        if (api_attr(o->name) == EFF_GRAD) I->ff->calls_zero_grad = 1; /* p.grad = None */
        break;
    case IR_ITEM: {
        AVal b = val_of(I, o->a);
        r = b;
        r.def = op;
        if (b.kind == VK_CONTAINER || b.kind == VK_UNKNOWN) {
            r.grad = b.kind == VK_CONTAINER ? b.elem : b.grad;
            r.kind = (b.flags & (VF_BATCH | VF_PIECES)) ? VK_TENSOR : VK_UNKNOWN;
            if (b.kind == VK_CONTAINER && (b.flags & VF_MODEL_OUT)) r.kind = VK_TENSOR;
        }
        r.flags &= (uint16_t)~(VF_ZERO_DIM | VF_PIECES);
        break;
    }
    case IR_SET_ITEM: {
        r = val_of(I, o->c);
        uint32_t rv = ir_root_var(I->f, o->a);
        if (rv != IR_NONE) {
            AVal c = env_get(I, rv);
            /* (an unknown value that carries a graph is a tensor: `nll = 0` then `nll += -logp` in a
             * loop, then `nll[mask] = 0.`) */
            if (c.kind == VK_UNKNOWN && c.grad >= G_POST) c.kind = VK_TENSOR;
            if (c.kind == VK_UNKNOWN && !(c.flags & VF_UNSET)) c.kind = VK_CONTAINER;
            if (c.kind == VK_TENSOR) c.grad = GL_MAX(c.grad, grad_of_arg(&r));
            else c.elem = GL_MAX(c.elem, grad_of_arg(&r));
            env_set(I, rv, c);
        }
        break;
    }
    case IR_CALL: r = df_call(I, op); break;
    case IR_BINOP: {
        AVal a = val_of(I, o->a), b = val_of(I, o->b);
        if (a.kind == VK_CONTAINER && (b.kind == VK_CONTAINER || b.kind == VK_UNKNOWN) && o->aux == BIN_ADD) {
            r = a;
            r.def = op;
            r.elem = GL_MAX(a.elem, GL_MAX(b.elem, b.kind == VK_UNKNOWN ? b.grad : G_NONE));
            r.flags |= b.flags & VF_MODEL_OUT;
            break;
        }
        r.kind = (a.kind == VK_TENSOR || b.kind == VK_TENSOR) ? VK_TENSOR
               : (a.kind == VK_SCALAR && b.kind == VK_SCALAR) ? VK_SCALAR : VK_UNKNOWN;
        r.grad = off ? G_NONE : GL_MAX(a.grad, b.grad);
        r.src = b.grad > a.grad ? b.src : a.src;
        r.flags = (uint16_t)((a.flags | b.flags) & (VF_MODEL_OUT | VF_BATCH | VF_SHAPE | VF_OUTER));
        bool a0 = (a.flags & VF_ZERO_DIM) || df__scalar_like(&a), b0 = (b.flags & VF_ZERO_DIM) || df__scalar_like(&b);
        if (a0 && b0 && ((a.flags | b.flags) & VF_ZERO_DIM)) r.flags |= VF_ZERO_DIM;
        r.carried = a.carried != IR_NONE ? a.carried : b.carried;
        r.pmask = a.pmask | b.pmask;
        r.cmask = a.cmask | b.cmask;
        break;
    }
    case IR_UNOP: {
        AVal a = val_of(I, o->a);
        if (o->aux == UN_NOT) { r.kind = VK_SCALAR; break; }
        r = a;
        r.def = op;
        if (off) r.grad = G_NONE;
        break;
    }
    case IR_COMPARE: r.kind = VK_TENSOR; break;
    case IR_BUILD: {
        r.kind = o->aux == BUILD_STR ? VK_SCALAR : VK_CONTAINER;
        for (uint32_t i = 0; i < o->nargs; i++) {
            AVal e = val_of(I, I->f->args.items[o->args + i]);
            uint8_t g = grad_of_arg(&e);
            if (g > r.elem) r.elem = g, r.src = e.src;
            r.flags |= e.flags & (VF_MODEL_OUT | VF_BATCH | VF_OPAQUE);
            if (e.carried != IR_NONE) r.carried = e.carried;
            r.pmask |= e.pmask;
            r.cmask |= e.cmask;
        }
        if (off) r.elem = G_NONE;
        break;
    }
    case IR_UNPACK: {
        AVal s = val_of(I, o->a);
        r = s;
        r.def = op;
        /* `rewards, loss = finish(...)` where finish returns `..., loss_tensor` */
        bool zero = df__zero_dim_tuple_element(I, o->a, o->aux);
        int plain = df__plain_tuple_element(I, o->a, o->aux);
        if (plain > 0) {
            /* `output, n = step(...)` where step returns `out, loss.item()`: the element is plain;
             * `loss, cost = solve(...)` returning `loss, solver.model.ObjVal`: it is not known to be
             * a graph */
            r = aval(zero ? VK_TENSOR : VK_UNKNOWN, plain == 1 ? G_NONE : G_MAY, op);
            if (zero) r.flags |= VF_ZERO_DIM;
            break;
        }
        if (o->aux == IR_UNPACK_STAR) {
            r.kind = VK_CONTAINER;
            r.elem = grad_of_arg(&s);
            break;
        }
        const IrOp *src = o->a != IR_NONE ? OP(I, o->a) : NULL;
        if (src && src->kind == IR_CALL && o->aux == 1) {
            /* `_, predicted = out.max(1)`, `vals, idx = torch.topk(x, k)`: the indices have no graph */
            const char *mname = ir_call_method(I->f, o->a);
            if (!mname && src->qual && !strncmp(src->qual, "torch.", 6) && !strchr(src->qual + 6, '.'))
                mname = src->qual + 6; /* torch.max(prob, dim=1) */
            if (mname && (api_method(mname).flags & M_INDICES)) {
                r = aval(VK_TENSOR, G_NONE, op);
                break;
            }
        }
        if (src && src->kind == IR_BUILD && src->aux == BUILD_TUPLE && o->aux < src->nargs) {
            /* `a, b = 0, 0`: each name gets its own element */
            r = val_of(I, I->f->args.items[src->args + o->aux]);
            r.def = op;
            break;
        }
        uint32_t zip = df__zip_of_next(I, o->a);
        if (zip != IR_NONE && o->aux < OP(I, zip)->nargs) {
            /* `for gt, pred, p in zip(labels, texts, probs)`: each name gets an item of its own
             * iterable (strings decoded from a tensor carry no graph) */
            r = df__item_of(val_of(I, I->f->args.items[OP(I, zip)->args + o->aux]), op);
            break;
        }
        if (s.flags & VF_PAIR) {
            /* (index, item) from enumerate: the item is what the loop would have given */
            r.flags &= (uint16_t)~VF_PAIR;
            if (o->aux == 0) r = aval(VK_SCALAR, G_NONE, op);
            break;
        }
        if (s.flags & VF_MODLIST) {
            /* (name, module) from named_modules() */
            r.kind = o->aux == 0 ? VK_SCALAR : VK_MODULE;
            break;
        }
        r.grad = grad_of_arg(&s);
        r.elem = s.elem;
        r.kind = (s.flags & (VF_BATCH | VF_MODEL_OUT | VF_PIECES)) ? VK_TENSOR : VK_UNKNOWN;
        if (s.kind == VK_LOADER) r.kind = VK_UNKNOWN, r.flags |= VF_BATCH;
        /* `loss, loss_node = loss_compute(out, y, n)` with a callable nothing describes, and only
         * loss_node differentiated: that is the graph; the other element is a statistic (the
         * annotated Transformer returns `sloss.data * norm, sloss`), not known to carry one */
        if (r.grad == G_LIVE && src && src->kind == IR_CALL && s.src != o->a && plain == 0 && df__sibling_differentiated(I, op))
            r.grad = G_MAY;
        r.flags &= (uint16_t)~(VF_ZERO_DIM | VF_PIECES | VF_LOSSMOD);
        if (zero) r.flags |= VF_ZERO_DIM, r.kind = VK_TENSOR;
        break;
    }
    case IR_SELECT: {
        AVal a = val_of(I, o->a), b = val_of(I, o->b);
        r = aval_join(&a, &b);
        /* `x.item() if hasattr(x, "item") else x`: the other branch runs only when x is no tensor */
        if (df__item_of_other(I->f, o->a, o->b)) r = a;
        else if (df__item_of_other(I->f, o->b, o->a)) r = b;
        r.def = op;
        break;
    }
    case IR_NEXT: r = df__item_of(val_of(I, o->a), op); break;
    case IR_DEFINE:
        if (o->name && !strcmp(o->name, "class")) {
            r.kind = VK_CLASS;
            r.ref = IR_NONE - 1 - o->aux;
        } else {
            r.kind = VK_FUNC;
            r.ref = o->aux;
        }
        break;
    case IR_RETURN: {
        AVal v = o->a == IR_NONE ? aval(VK_NONE, G_NONE, op) : val_of(I, o->a);
        /* `def build(cfg) -> pl.LightningModule: return getattr(zoo, cfg.name)(...)`: a model,
         * as its annotation says, when nothing else is known of it */
        if (v.kind == VK_UNKNOWN && api_declared_type(I->f->ret_qual) == VK_MODULE) v.kind = VK_MODULE, v.grad = G_NONE;
        I->ff->ret = (I->ff->ret.flags & VF_UNSET) ? v : aval_join(&I->ff->ret, &v);
        df__note_tuple_return(I, o->a);
        r = v;
        break;
    }
    case IR_YIELD: {
        AVal v = val_of(I, o->a);
        AVal c = aval(VK_CONTAINER, G_NONE, op);
        c.elem = grad_of_arg(&v);
        c.pmask = v.pmask;
        c.cmask = v.cmask;
        I->ff->ret = (I->ff->ret.flags & VF_UNSET) ? c : aval_join(&I->ff->ret, &c);
        break;
    }
    case IR_WITH: r = val_of(I, o->a); break;
    default: break;
    }
    *VAL(I, op) = r;
}

/* Control flow: regions. Returns the next op to interpret. */
/* `if x is not None:` — x is None where the test fails (pre: the environment that path starts
 * from); `if x is None:` — x is None inside. So `if h is not None: h = h.detach()` detaches on
 * every path that has a state, and the first iteration's None carries no graph. */
static void df__refine_none_test(Interp *I, const IrOp *o, DfNode **pre)
{
    if (o->kind != IR_IF || o->a == IR_NONE) return;
    const IrOp *c = OP(I, o->a);
    if (c->kind != IR_COMPARE || !c->name || c->a == IR_NONE || c->b == IR_NONE) return;
    const IrOp *x = OP(I, c->a), *y = OP(I, c->b);
    if (x->kind != IR_LOAD || x->var == IR_NONE || x->var >= I->nvars || y->kind != IR_CONST || y->aux != CONST_NONE)
        return;
    AVal none = aval(VK_NONE, G_NONE, o->a);
    if (!strcmp(c->name, "is not")) *pre = df_env_with(I, *pre, x->var, none);
    else if (!strcmp(c->name, "is")) env_set(I, x->var, none);
}

static uint32_t df_control(Interp *I, uint32_t op)
{
    const IrOp *o = OP(I, op);
    switch ((IrOpKind)o->kind) {
    case IR_IF:
    case IR_TRY: {
        Region r;
        memset(&r, 0, sizeof r);
        r.kind = o->kind;
        r.op = op;
        r.pre = df_env_share(I);
        r.pre_dead = I->dead;
        r.alt_dead = true;
        df__refine_none_test(I, o, &r.pre);
        array_push(&I->regions, r);
        return op + 1;
    }
    case IR_ELSE: {
        if (!I->regions.len) return op + 1;
        Region *r = array_back(&I->regions);
        r->alt = df_env_share(I);
        r->alt_dead = I->dead;
        r->has_else = 1;
        I->env = r->pre;
        I->dead = r->pre_dead;
        return op + 1;
    }
    case IR_END_IF: {
        if (!I->regions.len) return op + 1;
        Region r = array_pop(&I->regions);
        DfNode *other = r.has_else ? r.alt : r.pre;
        bool other_dead = r.has_else ? r.alt_dead : r.pre_dead;
        if (I->dead && !other_dead) I->env = other, I->dead = false;
        else if (!I->dead && !other_dead) I->env = df_env_join(I, df_env_share(I), other);
        return op + 1;
    }
    case IR_EXCEPT: {
        if (!I->regions.len) return op + 1;
        Region *r = array_back(&I->regions);
        if (!r->in_handler) {
            r->alt = df_env_share(I);
            r->alt_dead = I->dead;
            r->in_handler = 1;
            /* a handler may start anywhere in the body: join of before and after */
            if (!I->dead) I->env = df_env_join(I, r->alt, r->pre);
            else I->env = r->pre;
            I->dead = r->pre_dead;
        } else {
            if (!I->dead) {
                if (r->alt_dead) r->alt = df_env_share(I), r->alt_dead = false;
                else r->alt = df_env_join(I, r->alt, df_env_share(I));
            }
            I->env = r->pre;
            I->dead = r->pre_dead;
        }
        return op + 1;
    }
    case IR_END_TRY: {
        if (!I->regions.len) return op + 1;
        Region r = array_pop(&I->regions);
        if (r.in_handler && !r.alt_dead) {
            if (I->dead) I->env = r.alt, I->dead = false;
            else I->env = df_env_join(I, df_env_share(I), r.alt);
        }
        return op + 1;
    }
    case IR_LOOP: {
        Region r;
        memset(&r, 0, sizeof r);
        r.kind = IR_LOOP;
        r.op = op;
        r.loop = o->aux;
        r.pre = r.alt = r.brk = r.cont = df_env_share(I);
        r.pre_dead = I->dead;
        r.brk_dead = r.cont_dead = true;
        array_push(&I->regions, r);
        return op + 1;
    }
    case IR_BREAK:
    case IR_CONTINUE: {
        for (uint32_t i = I->regions.len; i-- > 0;) {
            Region *r = &I->regions.items[i];
            if (r->kind != IR_LOOP || r->loop != o->aux) continue;
            DfNode **dst = o->kind == IR_BREAK ? &r->brk : &r->cont;
            bool *dd = o->kind == IR_BREAK ? &r->brk_dead : &r->cont_dead;
            if (!I->dead) {
                if (*dd) *dst = df_env_share(I), *dd = false;
                else *dst = df_env_join(I, *dst, df_env_share(I));
            }
            break;
        }
        I->dead = true;
        return op + 1;
    }
    case IR_END_LOOP: {
        if (!I->regions.len) return op + 1;
        Region *r = array_back(&I->regions);
        if (NEVER(r->kind != IR_LOOP)) return op + 1;
        /* the back edge: fall-through joined with continues */
        DfNode *back = df_env_share(I);
        bool back_dead = I->dead;
        if (!r->cont_dead) {
            if (back_dead) back = r->cont, back_dead = false;
            else back = df_env_join(I, back, r->cont);
        }
        if (!back_dead) I->ff->backedge[r->loop] = back;
        /* the new header: entry joined with the back edge; values that changed are phis */
        bool changed = false;
        if (!back_dead) r->alt = df_env_header(I, r->pre, back, r->alt, r->op, r->loop, &changed);
        if (changed && r->pass + 1 < DF_MAX_PASSES) {
            r->pass++;
            I->env = r->alt;
            I->dead = r->pre_dead;
            r->brk_dead = r->cont_dead = true;
            return r->op + 1;
        }
        /* exit: the header (the loop may stop at any iteration) joined with the breaks */
        Region done = array_pop(&I->regions);
        I->env = done.alt;
        I->dead = done.pre_dead;
        if (!done.brk_dead) {
            if (I->dead) I->env = done.brk, I->dead = false;
            else I->env = df_env_join(I, done.alt, done.brk);
        }
        return op + 1;
    }
    case IR_RETURN:
        if (!I->dead) df_step(I, op);
        I->dead = true;
        return op + 1;
    case IR_RAISE:
        I->dead = true;
        return op + 1;
    default:
        return op + 1;
    }
}

static void df_analyse_func(Facts *fx, uint32_t fi, int depth, const AVal *hints, uint32_t nhints)
{
    const IrModule *m = fx->m;
    const IrFunc *f = m->funcs.items[fi];
    FuncFacts *ff = &fx->funcs[fi];
    if (ff->analysed || ff->in_progress) return;
    ff->in_progress = 1;
    Interp I;
    memset(&I, 0, sizeof I);
    I.m = m;
    I.fx = fx;
    I.f = f;
    I.ff = ff;
    I.arena = m->arena;
    I.nvars = f->vars.len;
    I.depth = depth;
    I.hints = hints;
    I.nhints = nhints;
    df_env_init(&I);
    ff->env_height = I.height;
    ff->val = ARENA_NEW_N(I.arena, AVal, f->ops.len ? f->ops.len : 1);
    ff->reached = ARENA_NEW_N(I.arena, uint8_t, f->ops.len ? f->ops.len : 1);
    ff->backedge = ARENA_NEW_N(I.arena, DfNode *, f->loops.len ? f->loops.len : 1);
    ff->ret = aval_unset();
    I.backward_vars = ARENA_NEW_N(I.arena, uint8_t, I.nvars ? I.nvars : 1);
    I.backward_last = ARENA_NEW_N(I.arena, uint32_t, I.nvars ? I.nvars : 1);
    for (uint32_t i = 0; i < I.nvars; i++) I.backward_last[i] = IR_NONE;
    I.module_vars = ARENA_NEW_N(I.arena, uint8_t, I.nvars ? I.nvars : 1);
    I.bw_calls = ARENA_NEW_N(I.arena, uint8_t, f->ops.len ? f->ops.len : 1);
    I.optim_vars = ARENA_NEW_N(I.arena, uint8_t, I.nvars ? I.nvars : 1);
    I.attr_head = ARENA_NEW_N(I.arena, uint32_t, I.nvars ? I.nvars : 1);
    I.attr_next = ARENA_NEW_N(I.arena, uint32_t, I.nvars ? I.nvars : 1);
    for (uint32_t i = 0; i < I.nvars; i++) I.attr_head[i] = I.attr_next[i] = IR_NONE;
    for (uint32_t i = I.nvars; i-- > 0;) {
        uint32_t b = f->vars.items[i].base;
        if (b != IR_NONE && b < I.nvars) I.attr_next[i] = I.attr_head[b], I.attr_head[b] = i;
    }
    df_prescan(&I);

    /* a budget against pathological inputs: every op is interpreted at most this many times */
    uint64_t budget = (uint64_t)f->ops.len * 64 + 1024;
    for (uint32_t op = 0; op < f->ops.len && budget; budget--) {
        const IrOp *o = &f->ops.items[op];
        switch ((IrOpKind)o->kind) {
        case IR_IF: case IR_ELSE: case IR_END_IF: case IR_TRY: case IR_EXCEPT: case IR_END_TRY:
        case IR_LOOP: case IR_END_LOOP: case IR_BREAK: case IR_CONTINUE: case IR_RETURN:
        case IR_RAISE:
            if (!I.dead) ff->reached[op] = 1;
            op = df_control(&I, op);
            continue;
        default:
            break;
        }
        if (!I.dead) {
            ff->reached[op] = 1;
            df_step(&I, op);
        }
        op++;
    }
    array_free(&I.regions);

    /* class attributes, from __init__ (and any method: what self.<x> holds between calls) */
    if (f->cls != IR_NONE) {
        ClassFacts *cf = &fx->classes[f->cls];
        const IrClass *c = m->classes.items[f->cls];
        bool is_init = c->init == fi;
        bool resets = false;
        uint32_t self = ir_first_param(f);
        for (uint32_t v = 0; v < I.nvars; v++) {
            const IrVar *var = &f->vars.items[v];
            if (var->base == IR_NONE || f->vars.items[var->base].base != IR_NONE) continue;
            if (!f->vars.items[var->base].is_param) continue;
            if (env_get(&I, v).flags & VF_UNSET) continue;
            /* only self's attributes (self is parameter 0) */
            if (var->base != self) continue;
            const char *attr = strrchr(var->name, '.') + 1;
            bool known = false;
            for (uint32_t k = 0; k < cf->attr_names.len && !known; k++) known = !strcmp(cf->attr_names.items[k], attr);
            if (!known && (is_init || !api_is(f->name, API_NAME_FORWARD))) {
                /* __init__ first; other methods (setup()) add what __init__ did not set */
                array_push(&cf->attr_names, attr);
                AVal a = env_get(&I, v);
                a.carried = IR_NONE;
                a.grad = GL_MIN(a.grad, G_MAY);
                a.pmask = 0, a.cmask = 0; /* parameters of the method that stored it, not of its readers */
                array_push(&cf->attr_vals, a);
            }
            if (is_init) {
            } else if (env_get(&I, v).grad == G_NONE && !api_is(f->name, API_NAME_FORWARD)) {
                resets = true;
            }
        }
        if (resets && !is_init) array_push(&cf->reset_methods, f->name);
        /* state forward() carries from one call to the next: self.X stored from a model call that
         * read self.X as it was left by the previous call */
        if (c->forward == fi) {
            for (uint32_t k = 0; k < f->ops.len; k++) {
                const IrOp *o = &f->ops.items[k];
                if (o->kind != IR_SET_ATTR || o->var == IR_NONE || !ff->reached[k]) continue;
                const AVal *v = &ff->val[k];
                if (!(v->flags & VF_MODEL_OUT) || GL_MAX(v->grad, v->elem) != G_LIVE || v->src == IR_NONE) continue;
                const IrOp *call = &f->ops.items[v->src];
                if (call->kind != IR_CALL) continue;
                for (uint32_t a = 0; a < call->nargs; a++) {
                    uint32_t ao = f->args.items[call->args + a];
                    if (ff->val[ao].carried == CARRIED_CALLS && f->ops.items[ao].var == o->var) {
                        array_push(&cf->carried_attrs, strrchr(f->vars.items[o->var].name, '.') + 1);
                        break;
                    }
                }
            }
        }
    }
    ff->in_progress = 0;
    ff->analysed = 1;
}

static void df__mark_module_classes(const IrModule *m)
{
    /* classes that subclass torch.nn.Module, directly or through local classes (fixed point) */
    for (int pass = 0; pass < 8; pass++) {
        bool changed = false;
        for (uint32_t i = 0; i < m->classes.len; i++) {
            IrClass *c = m->classes.items[i];
            if (c->is_module) continue;
            for (uint32_t b = 0; b < c->bases.len && !c->is_module; b++) {
                const char *q = c->bases.items[b];
                if (api_module_base(q)) c->is_module = 1, changed = true;
                /* an imported base we cannot see, and the class defines forward(): a Module
                 * (FairseqEncoder, timm's and HF's base classes) */
                if (!c->is_module && c->forward != IR_NONE && !api_is(q, PY_NAME_OBJECT))
                    c->is_module = 1, changed = true;
                for (uint32_t j = 0; j < m->classes.len && !c->is_module; j++)
                    if (m->classes.items[j]->is_module && !strcmp(m->classes.items[j]->name, q))
                        c->is_module = 1, changed = true;
            }
        }
        if (!changed) break;
    }
}

/* Does top-level function d wrap what it is given in grad-off mode: a decorator of the file whose
 * nested wrapper calls d's parameter under `with torch.no_grad():` (`def nograd(f): def new_f(*a):
 * with t.no_grad(): return f(*a)`)? */
static bool df__grad_off_decorator(const IrModule *m, uint32_t d)
{
    const IrFunc *df = m->funcs.items[d];
    uint32_t p = ir_first_param(df);
    if (p == IR_NONE || p >= df->vars.len) return false;
    const char *pname = df->vars.items[p].name;
    for (uint32_t w = d + 1; w < m->funcs.len && pname; w++) {
        const IrFunc *wf = m->funcs.items[w];
        if (wf->parent != d) continue;
        for (uint32_t i = 0; i < wf->ops.len; i++) {
            const IrOp *o = &wf->ops.items[i];
            if (o->kind != IR_CALL || !df_mode_off(o->mode) || o->a == IR_NONE) continue;
            const IrOp *callee = &wf->ops.items[o->a];
            if (callee->kind == IR_LOAD && callee->var < wf->vars.len && wf->vars.items[callee->var].name &&
                !strcmp(wf->vars.items[callee->var].name, pname))
                return true;
        }
    }
    return false;
}

void df_run_grad_off(IrFunc *f)
{
    if (f->base_mode == GRAD_DEFAULT) f->base_mode = GRAD_NO_GRAD;
    for (uint32_t i = 0; i < f->ops.len; i++)
        if (f->ops.items[i].mode == GRAD_DEFAULT) f->ops.items[i].mode = GRAD_NO_GRAD;
}

/* Functions decorated with such a decorator run with grad off. The file's top-level functions are
 * looked up by name once (a map built on the first undotted decorator: `@property` on every
 * method of a large class asks many times), and each decorator is judged once. */
static void df__mark_local_grad_decorators(const IrModule *m)
{
    StrMap top;
    strmap_init(&top);
    bool built = false;
    uint8_t *verdict = NULL; /* [function]: 0 not judged, 1 no, 2 a grad-off decorator */
    for (uint32_t fi = 1; fi < m->funcs.len; fi++) {
        IrFunc *f = m->funcs.items[fi];
        if (f->base_mode != GRAD_DEFAULT) continue;
        for (uint32_t k = 0; k < f->decorators.len; k++) {
            const char *q = f->decorators.items[k];
            if (!q || strchr(q, '.')) continue;
            if (!built) {
                built = true;
                verdict = gl_calloc(m->funcs.len, 1);
                for (uint32_t g = m->funcs.len; g-- > 1;) /* the first definition of a name wins */
                    if (m->funcs.items[g]->parent == 0 && m->funcs.items[g]->cls == IR_NONE && m->funcs.items[g]->name)
                        strmap_put(&top, m->funcs.items[g]->name, strlen(m->funcs.items[g]->name), g);
            }
            uint32_t d = strmap_get(&top, q, strlen(q));
            if (d == UINT32_MAX || d == fi) continue;
            if (!verdict[d]) verdict[d] = df__grad_off_decorator(m, d) ? 2 : 1;
            if (verdict[d] != 2) continue;
            df_run_grad_off(f);
            break;
        }
    }
    gl_free(verdict);
    strmap_free(&top);
}

/* Does top-level function d return a context that turns grad off, at least on some path, and
 * nothing but contexts (`return torch.no_grad()` on new torch, `return contextlib.suppress()` on
 * old)? */
static bool df__grad_off_context_factory(const IrModule *m, uint32_t d)
{
    const IrFunc *g = m->funcs.items[d];
    bool off = false;
    for (uint32_t i = 0; i < g->ops.len; i++) {
        const IrOp *o = &g->ops.items[i];
        if (o->kind != IR_RETURN) continue;
        if (o->a == IR_NONE || g->ops.items[o->a].kind != IR_CALL) return false;
        const IrOp *c = &g->ops.items[o->a];
        const char *q = c->qual ? c->qual : c->a != IR_NONE ? g->ops.items[c->a].qual : NULL;
        ApiEffect e = api_function(q);
        if (e == EFF_NOGRAD || e == EFF_INFER) off = true;
        else if (!q || strncmp(q, "contextlib.", 11) != 0) return false;
    }
    return off;
}

/* `with _no_grad_ctx():` where the file's function returns torch.no_grad() (on the torch versions
 * that have it): the block runs with grad off, as under set_grad_enabled(<expr>). */
static void df__mark_local_grad_contexts(const IrModule *m)
{
    StrMap top;
    strmap_init(&top);
    bool built = false;
    uint8_t *verdict = NULL; /* [function]: 0 not judged, 1 no, 2 returns a grad-off context */
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        IrFunc *f = m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *w = &f->ops.items[i];
            if (w->kind != IR_WITH || w->aux != GRAD_KEEP || w->a == IR_NONE) continue;
            const IrOp *call = &f->ops.items[w->a];
            if (call->kind != IR_CALL || call->a == IR_NONE || call->nargs) continue;
            const IrOp *callee = &f->ops.items[call->a];
            if (callee->kind != IR_LOAD || callee->qual || callee->var >= f->vars.len) continue;
            const char *name = f->vars.items[callee->var].name;
            if (!name || !f->vars.items[callee->var].is_global) continue;
            if (!built) {
                built = true;
                verdict = gl_calloc(m->funcs.len, 1);
                for (uint32_t g = m->funcs.len; g-- > 1;)
                    if (m->funcs.items[g]->parent == 0 && m->funcs.items[g]->cls == IR_NONE && m->funcs.items[g]->name)
                        strmap_put(&top, m->funcs.items[g]->name, strlen(m->funcs.items[g]->name), g);
            }
            uint32_t d = strmap_get(&top, name, strlen(name));
            if (d == UINT32_MAX || d == fi) continue;
            if (!verdict[d]) verdict[d] = df__grad_off_context_factory(m, d) ? 2 : 1;
            if (verdict[d] != 2) continue;
            /* the block: up to the END_WITH that closes this WITH (they nest) */
            uint32_t depth = 0;
            for (uint32_t k = i + 1; k < f->ops.len; k++) {
                IrOp *o = &f->ops.items[k];
                if (o->kind == IR_WITH) depth++;
                if (o->kind == IR_END_WITH && depth-- == 0) break;
                if (o->mode == GRAD_DEFAULT) o->mode = GRAD_MAYBE_OFF;
            }
        }
    }
    gl_free(verdict);
    strmap_free(&top);
}

void df_analyse(const IrModule *m, Facts *out)
{
    api_init(); /* here, so the tables exist before any test counts allocations */
    out->m = m;
    array_init(&out->ext_classes);
    out->backprops = ARENA_NEW_N(m->arena, uint8_t, m->funcs.len ? m->funcs.len : 1);
    memset(out->backprops, 0, m->funcs.len ? m->funcs.len : 1);
    out->runs_subs = ARENA_NEW_N(m->arena, uint8_t, m->funcs.len ? m->funcs.len : 1);
    memset(out->runs_subs, 0, m->funcs.len ? m->funcs.len : 1);
    out->funcs = ARENA_NEW_N(m->arena, FuncFacts, m->funcs.len ? m->funcs.len : 1);
    out->classes = ARENA_NEW_N(m->arena, ClassFacts, m->classes.len ? m->classes.len : 1);
    strmap_init(&out->nested_defs);
    strmap_init(&out->method_names);
    for (uint32_t ci = 0; ci < m->classes.len; ci++) {
        const IrClass *c = m->classes.items[ci];
        for (uint32_t k = 0; k < c->methods.len; k++) {
            const char *name = m->funcs.items[c->methods.items[k]]->name;
            if (name) strmap_put(&out->method_names, name, strlen(name), c->methods.items[k]);
        }
    }
    out->cxx = false;
    out->top_defs = NULL;
    for (uint32_t i = 1; i < m->funcs.len && !out->cxx; i++) out->cxx = m->funcs.items[i]->cxx_key != NULL;
    for (uint32_t i = 1; i < m->funcs.len; i++) {
        const IrFunc *g = m->funcs.items[i];
        if (g->parent == IR_NONE || g->parent == 0 || g->is_lambda || !g->name) continue;
        const char *key = arena_printf(m->arena, "%u:%s", g->parent, g->name);
        strmap_put(&out->nested_defs, key, strlen(key), i);
    }
    df__mark_module_classes(m);
    df__mark_local_grad_decorators(m);
    df__mark_local_grad_contexts(m);
    df_mark_framework_hooks(m, out); /* before the analysis: it sets the grad mode of some methods */
    /* __init__ first (attribute kinds), then the module, then what no one called */
    for (uint32_t i = 0; i < m->classes.len; i++)
        if (m->classes.items[i]->init != IR_NONE) df_analyse_func(out, m->classes.items[i]->init, 0, NULL, 0);
    for (uint32_t i = 0; i < m->funcs.len; i++) df_analyse_func(out, i, 0, NULL, 0);
    df_mark_training_funcs(m, out);
    df_mark_forward_funcs(m, out);
    df_mark_grad_off_callees(m, out);
    for (uint32_t i = 0; i < m->funcs.len; i++) df_classify_loops(m, out, m->funcs.items[i]);
    df_mark_per_step_funcs(m, out);
}

bool df_export_summary(const Facts *fx, uint32_t fi, ExternSummary *out)
{
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len) return false;
    const IrFunc *f = m->funcs.items[fi];
    const FuncFacts *ff = &fx->funcs[fi];
    if (f->cls != IR_NONE || f->is_lambda || f->parent != 0 || !ff->analysed) return false;
    df_summary_of(fx, fi, out);
    if (ff->ret.flags & VF_UNSET) out->kind = VK_NONE; /* returns nothing (what it does still counts) */
    out->trains = ff->trains;
    out->evaluates = df_func_evaluates(fx, fi);
    out->backprops = !ff->trains && df_func_backprops(fx, fi);
    return true;
}

void df_summary_of(const Facts *fx, uint32_t fi, ExternSummary *out)
{
    const FuncFacts *ff = &fx->funcs[fi];
    memset(out, 0, sizeof *out);
    if (!(ff->ret.flags & VF_UNSET)) {
        out->kind = ff->ret.kind;
        out->grad = ff->ret.grad;
        out->elem = ff->ret.elem;
        /* not VF_MAYBE_MODULE: a guess from how one function uses a name does not travel well */
        out->flags = ff->ret.flags & (VF_ZERO_DIM | VF_MODEL_OUT | VF_LOSSMOD | VF_NOREDUCE);
        out->pmask = ff->ret.pmask;
        out->cmask = ff->ret.cmask;
    }
    out->nparams = (uint8_t)GL_MIN(fx->m->funcs.items[fi]->nparams, 255);
    out->ret_tuple = ff->ret_tuple;
    out->ret_plain = ff->ret_plain;
    out->ret_weak = ff->ret_weak;
    out->ret_zero = ff->ret_tuple && ff->ret_tuple != 0xff ? ff->ret_zero : 0;
    /* grad follows a parameter (IrFunc.grad_param): other files' callers may pass False, and the
     * summary does not say which argument turns it off, so the graph is only "maybe" there */
    if (fx->m->funcs.items[fi]->grad_param) {
        if (out->grad > G_MAY) out->grad = G_MAY;
        if (out->elem > G_MAY) out->elem = G_MAY;
        out->ret_weak = out->ret_tuple && out->ret_tuple != 0xff ? (uint16_t)~out->ret_plain : 0;
    }
}

uint32_t df_closure_def(const Facts *fx, const IrFunc *f, const char *name)
{
    const IrModule *m = fx->m;
    char key[160];
    for (uint32_t p = f->parent, hops = 0; p != IR_NONE && p != 0 && p < m->funcs.len && hops < 16;
         p = m->funcs.items[p]->parent, hops++) {
        int n = snprintf(key, sizeof key, "%u:%s", p, name);
        if (n <= 0 || (size_t)n >= sizeof key) return IR_NONE;
        uint32_t g = strmap_get(&fx->nested_defs, key, (size_t)n);
        if (g != UINT32_MAX) return g;
        /* bound to something else there: what it holds is not known here */
        const IrFunc *pf = m->funcs.items[p];
        uint32_t slot = strmap_get(&pf->var_index, name, strlen(name));
        if (slot != UINT32_MAX && !pf->vars.items[slot].is_global) return IR_NONE;
    }
    return IR_NONE;
}

void df_facts_free(Facts *f)
{
    array_free(&f->ext_classes);
    if (f->m) strmap_free(&f->nested_defs), strmap_free(&f->method_names);
    if (!f->classes) return;
    for (uint32_t i = 0; i < f->m->classes.len; i++) {
        array_free(&f->classes[i].attr_names);
        array_free(&f->classes[i].module_attrs);
        array_free(&f->classes[i].attr_vals);
        array_free(&f->classes[i].reset_methods);
        array_free(&f->classes[i].carried_attrs);
    }
}

/* Is variable var self_var or an attribute of it (self.a, self.a.b)? */
static bool df__on_var(const IrFunc *f, uint32_t var, uint32_t self_var)
{
    for (int guard = 0; var != IR_NONE && var < f->vars.len && guard < 8; guard++) {
        if (var == self_var) return true;
        var = f->vars.items[var].base;
    }
    return false;
}

/* Marks fresh[v] for the plain locals of f that f binds only to fresh displays (`nll = []`, `out =
 * {}`): what goes into them stays in the call (or leaves through the return, which the summary
 * tells). One pass over the function. */
static void df__fresh_locals(const IrFunc *f, uint8_t *fresh)
{
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if ((o->kind != IR_STORE && o->kind != IR_PARAM) || o->var >= f->vars.len) continue;
        const IrVar *v = &f->vars.items[o->var];
        bool display = o->kind == IR_STORE && o->a != IR_NONE && f->ops.items[o->a].kind == IR_BUILD;
        if (v->is_param || v->is_global || v->base != IR_NONE || !display) fresh[o->var] = 2;
        else if (fresh[o->var] != 2) fresh[o->var] = 1;
    }
}

/* Is value op a number that keeps nothing of a graph: a constant, or `.item()` / `.tolist()` /
 * `.numpy()` of something? */
static bool df__stores_number(const IrFunc *f, uint32_t op)
{
    if (op == IR_NONE || op >= f->ops.len) return false;
    const IrOp *o = &f->ops.items[op];
    if (o->kind == IR_CONST) return true;
    const char *mname = o->kind == IR_CALL ? ir_call_method(f, op) : NULL;
    return mname && api_method(mname).effect == EFF_SCALAR;
}

/* Is var, or what it is an attribute of, a parameter of f other than self_var? */
static bool df__on_param(const IrFunc *f, uint32_t var, uint32_t self_var)
{
    for (int guard = 0; var != IR_NONE && var < f->vars.len && guard < 8; guard++) {
        if (var == self_var) return false;
        if (f->vars.items[var].is_param) return true;
        var = f->vars.items[var].base;
    }
    return false;
}

static bool df__stores_outside(const IrModule *m, uint32_t fi, bool own_state_ok, bool args_ok)
{
    if (fi >= m->funcs.len) return true;
    const IrFunc *f = m->funcs.items[fi];
    uint32_t self_var = own_state_ok && f->cls != IR_NONE && f->nparams > 0 ? ir_first_param(f) : IR_NONE;
    uint8_t *fresh = NULL; /* df__fresh_locals', made at the first store into a container */
    bool out = false;
    for (uint32_t i = 0; i < f->ops.len && !out; i++) {
        const IrOp *o = &f->ops.items[i];
        const char *mname = o->kind == IR_CALL ? ir_call_method(f, i) : NULL;
        bool mutates = mname && (api_method(mname).flags & M_MUTATES);
        if (o->kind == IR_YIELD) out = true;
        else if (o->kind == IR_SET_ATTR) out = !df__on_var(f, o->var, self_var) && !(args_ok && df__on_param(f, o->var, self_var));
        else if (o->kind == IR_STORE) out = o->var < f->vars.len && f->vars.items[o->var].is_global;
        else if (o->kind == IR_SET_ITEM && df__stores_number(f, o->c)) continue; /* `out["loss"] = loss.item()` */
        else if (o->kind == IR_SET_ITEM || mutates) {
            uint32_t root = o->kind == IR_SET_ITEM ? ir_root_var(f, o->a) : ir_root_var(f, ir_call_receiver(f, i));
            if (!fresh) {
                fresh = gl_calloc(f->vars.len + 1, 1);
                df__fresh_locals(f, fresh);
            }
            bool own = root != IR_NONE && root < f->vars.len && fresh[root] == 1;
            out = !own && (o->kind == IR_SET_ITEM || !df__on_var(f, root, self_var)) &&
                  !(args_ok && df__on_param(f, root, self_var));
        }
    }
    gl_free(fresh);
    return out;
}

bool df_func_stores_outside(const IrModule *m, uint32_t fi, bool own_state_ok)
{
    return df__stores_outside(m, fi, own_state_ok, false);
}

bool df_func_stores_beyond_args(const IrModule *m, uint32_t fi) { return df__stores_outside(m, fi, true, true); }
