/* Loop kinds, and the per-function marks that need every function's facts: which functions train
 * one step per call, run inside a forward, run with grad off or run every step (framework hooks),
 * and the one question three places ask: what does this iteration yield that is moved to a device?
 * (docs/architecture.md, "Loop kinds") */
#include <stdio.h>

#include "ir/dataflow_int.h"

static bool df__func_backprops(const Facts *fx, uint32_t fi, int depth);
static bool df__func_backprops_scan(const Facts *fx, uint32_t fi, int depth);

/* ---- queries for the rules ------------------------------------------------------------------- */

bool df_is_backward_call(const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL) return false;
    const char *m = ir_call_method(f, op);
    if (m && (api_method(m).flags & M_RUNS_BACKWARD)) return true;
    ApiEffect e = api_function_exact(o->qual);
    return e == EFF_BACKWARD || e == EFF_GRADFN;
}

bool df_is_optimizer_step(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const char *mname = o->kind == IR_CALL ? ir_call_method(f, op) : NULL;
    uint32_t r = mname ? ir_call_receiver(f, op) : IR_NONE;
    const FuncFacts *ff = &fx->funcs[f->index];
    if (r != IR_NONE && (api_method(mname).flags & M_STEP) && ff->val[r].kind == VK_OPTIM) return true;
    /* a helper gradleak cannot see, handed the optimizer and a loss that carries a graph, or a list
     * of such (`self.take_optimisation_step(self.opt, self.net, loss)` of a base class in another file):
     * it steps the optimizer on that loss */
    if (o->kind != IR_CALL || o->nargs < 2 || df_call_target(fx->m, fx, f, op) != IR_NONE) return false;
    bool optim = false, graph = false;
    for (uint32_t k = 0; k < o->nargs; k++) {
        const AVal *a = &ff->val[f->args.items[o->args + k]];
        if (a->kind == VK_OPTIM) optim = true;
        else if (GL_MAX(a->grad, a->elem) >= G_POST && a->kind != VK_MODULE && !(a->flags & VF_MAYBE_MODULE))
            graph = true; /* (or a list of them: `reinforce_update(opt, log_probs, returns)`) */
    }
    return optim && graph;
}

bool df_call_trains(const Facts *fx, const IrFunc *f, uint32_t op, bool whole_runs)
{
    if (df_is_backward_call(f, op) || df_is_optimizer_step(fx, f, op)) return true;
    uint32_t t = df_call_target(fx->m, fx, f, op);
    if (t == IR_NONE) { /* `agent.learn()` of another file's class */
        const ExternSummary *es = df_call_extern(fx, f, op);
        return es && (es->trains || (whole_runs && es->backprops));
    }
    return t != f->index && (fx->funcs[t].trains || (whole_runs && df_func_backprops(fx, t)));
}

bool df_env_step_shape(uint32_t mflags, uint32_t nargs, const AVal *args, const AVal *recv)
{
    return (mflags & M_STEP) && nargs == 1 && (args[0].flags & VF_MODEL_OUT) && recv->kind != VK_OPTIM &&
           recv->kind != VK_MODULE && recv->kind != VK_TENSOR && recv->kind != VK_CONTAINER &&
           !(recv->flags & VF_MAYBE_MODULE);
}

bool df_is_env_step(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const char *mname = o->kind == IR_CALL ? ir_call_method(f, op) : NULL;
    uint32_t r = mname ? ir_call_receiver(f, op) : IR_NONE;
    if (r == IR_NONE || o->nargs != 1) return false;
    const FuncFacts *ff = &fx->funcs[f->index];
    return df_env_step_shape(api_method(mname).flags, 1, &ff->val[f->args.items[o->args]], &ff->val[r]);
}

bool df_is_module_call(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL) return false;
    const AVal *r = &fx->funcs[f->index].val[op];
    return (r->flags & VF_MODEL_OUT) && r->src == op;
}

uint32_t df_unique_method(const IrModule *m, const char *name)
{
    uint32_t t = IR_NONE;
    for (uint32_t ci = 0; name && ci < m->classes.len; ci++) {
        uint32_t g = ir_class_method(m, ci, name);
        if (g == IR_NONE || g == t) continue;
        if (t != IR_NONE) return IR_NONE; /* two candidates */
        t = g;
    }
    return t;
}

/* `if h is None: h = init` at op (the load of h in the test): the op that ends the if when its
 * branch only binds a default (no model call, no return, no else), else IR_NONE. */
static uint32_t df__none_default_end(const Facts *fx, const IrFunc *g, uint32_t op)
{
    uint32_t cmp = IR_NONE, ifop = IR_NONE;
    for (uint32_t j = op + 1; j < g->ops.len && j < op + 4 && ifop == IR_NONE; j++) {
        const IrOp *o = &g->ops.items[j];
        if (o->kind == IR_COMPARE && o->a == op && o->b != IR_NONE && g->ops.items[o->b].kind == IR_CONST &&
            g->ops.items[o->b].aux == CONST_NONE && o->name && !strcmp(o->name, "is"))
            cmp = j;
        else if (o->kind == IR_IF && cmp != IR_NONE && o->a == cmp)
            ifop = j;
    }
    if (ifop == IR_NONE) return IR_NONE;
    uint32_t depth = 0;
    for (uint32_t j = ifop + 1; j < g->ops.len && j < ifop + 64; j++) {
        const IrOp *o = &g->ops.items[j];
        if (o->kind == IR_IF) depth++;
        else if (o->kind == IR_END_IF && depth) depth--;
        else if (o->kind == IR_END_IF) return j;
        else if ((o->kind == IR_ELSE && !depth) || o->kind == IR_RETURN || o->kind == IR_LOOP ||
                 (o->kind == IR_CALL && df_is_module_call(fx, g, j)))
            return IR_NONE;
    }
    return IR_NONE;
}

/* Does the function or method of the file that call op runs cut its argument k before using it
 * (`h = tuple([each.data for each in h])`, `h = h.detach()` first thing in a char-RNN's
 * predict())? A state fed back through it links nothing across calls. */
bool df_arg_cut_by_callee(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op, uint32_t k)
{
    uint32_t t = df_call_target(m, fx, f, op);
    const char *mname = ir_call_method(f, op);
    uint32_t r = mname ? ir_call_receiver(f, op) : IR_NONE;
    if (t == IR_NONE && r != IR_NONE && fx->funcs[f->index].val[r].ref == IR_NONE) t = df_unique_method(m, mname);
    if (t == IR_NONE || t == f->index || !fx->funcs[t].analysed) return false;
    const IrFunc *g = m->funcs.items[t];
    const FuncFacts *gf = &fx->funcs[t];
    /* the parameter: a method called on an object takes self first */
    uint32_t pos = k + (g->cls != IR_NONE && r != IR_NONE ? 1 : 0), pvar = IR_NONE;
    for (uint32_t i = 0; i < g->ops.len && pvar == IR_NONE; i++)
        if (g->ops.items[i].kind == IR_PARAM && g->ops.items[i].aux == pos) pvar = g->ops.items[i].var;
    if (pvar == IR_NONE) return false;
    /* its first read, stored back to it at once from a value without a graph (after a default
     * for a state not given: `if h is None: h = self.init_hidden(1)`) */
    for (uint32_t i = 0; i < g->ops.len; i++) {
        const IrOp *o = &g->ops.items[i];
        if (o->kind != IR_LOAD || o->var != pvar) continue;
        uint32_t skip = df__none_default_end(fx, g, i);
        if (skip != IR_NONE) {
            i = skip;
            continue;
        }
        /* (through a comprehension over it: `tuple([each.data for each in h])`; nothing may run
         * the model on it first) */
        for (uint32_t j = i + 1; j < g->ops.len && j < i + 32; j++) {
            const IrOp *st = &g->ops.items[j];
            if (st->kind == IR_STORE && st->var == pvar && st->a != IR_NONE)
                return gf->reached[j] && GL_MAX(gf->val[st->a].grad, gf->val[st->a].elem) == G_NONE &&
                       g->ops.items[st->a].kind != IR_PARAM;
            if (st->kind == IR_IF || st->kind == IR_RETURN || df_is_module_call(fx, g, j)) return false;
        }
        return false;
    }
    return false;
}

/* A call of a function or method of the file that runs a model and returns its output, training
 * nothing (`out, h = self.forward_step(x, h)` in a decoder's evaluate()): for feedback, a model
 * call. */
bool df_is_local_model_call(const IrModule *m, const Facts *fx, const IrFunc *f, uint32_t op)
{
    if (f->ops.items[op].kind != IR_CALL || df_is_module_call(fx, f, op)) return false;
    const AVal *r = &fx->funcs[f->index].val[op];
    if (!(r->flags & VF_MODEL_OUT) || GL_MAX(r->grad, r->elem) != G_LIVE) return false;
    uint32_t t = df_call_target(m, fx, f, op);
    return t != IR_NONE && t != f->index && !fx->funcs[t].trains && df_func_evaluates(fx, t);
}

/* A backward after the loop, in the same iteration of the enclosing loop (or in the function when
 * the loop is outermost): the loop builds one step's graph (the classic char-rnn train() that
 * accumulates the loss over time steps and calls backward once). */
static bool df__backward_after(const IrFunc *f, const uint32_t *next_bw, const uint32_t *next_model_loop,
                               const IrLoop *l)
{
    uint32_t end = l->parent != IR_NONE ? f->loops.items[l->parent].end : f->ops.len;
    /* next_bw[op]: the first reached backward at or after op (one scan per function, not per loop);
     * in a script or notebook, a loop that runs a model again before it (a training cell after the
     * test loop) is another pass, not the rest of this step */
    if (l->end + 1 >= f->ops.len) return false;
    uint32_t bw = next_bw[l->end + 1];
    /* (only in a module's body: in a function, the loop between may be the other branch of an
     * if: teacher forcing or not) */
    return bw < end && (f->index != 0 || next_model_loop[l->end + 1] > bw);
}

/* ---- what an iteration yields, moved to a device ------------------------------------------------ */

void df_yield_init(DfYield *y, const IrFunc *f)
{
    y->nops = f->ops.len, y->nvars = f->vars.len;
    y->part = gl_calloc(y->nops + 1, 1), y->dev = gl_calloc(y->nops + 1, 1);
    y->part_var = gl_calloc(y->nvars + 1, 1), y->dev_var = gl_calloc(y->nvars + 1, 1);
}

void df_yield_free(DfYield *y)
{
    gl_free(y->part), gl_free(y->dev), gl_free(y->part_var), gl_free(y->dev_var);
    memset(y, 0, sizeof *y);
}

bool df_yield_moved(DfYield *y, const IrFunc *f, uint32_t next, uint32_t end, const uint8_t *reached)
{
    DfYield own;
    if (!y) df_yield_init(&own, f), y = &own;
    uint32_t lo = next == IR_NONE ? 0 : next;
    end = GL_MIN(end, GL_MIN(f->ops.len, y->nops));
    if (lo >= end) {
        if (y == &own) df_yield_free(&own);
        return false;
    }
    uint8_t *part = y->part, *dev = y->dev;
    memset(part + lo, 0, end - lo), memset(dev + lo, 0, end - lo);
#define DF_IN(x) ((x) != IR_NONE && (x) >= lo && (x) < end)
    bool moved = false;
    /* two passes: `for batch in loader: x = batch[0]` stores after the element's own store, and a
     * loop's later iterations see what its earlier stores made */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t op = lo; op < end; op++) {
            const IrOp *o = &f->ops.items[op];
            bool pa = DF_IN(o->a) && part[o->a], da = DF_IN(o->a) && dev[o->a];
            switch ((IrOpKind)o->kind) {
            case IR_NEXT: /* the iteration's own, or one over a part: `for k, v in batch.items()` */
                if (op == next || next == IR_NONE || pa) part[op] = 1;
                break;
            case IR_UNPACK: case IR_ITEM: case IR_ATTR: /* x, y = batch; batch[0]; batch.text */
                part[op] = pa, dev[op] = da;
                break;
            case IR_LOAD:
                if (o->var < y->nvars) part[op] = y->part_var[o->var], dev[op] = y->dev_var[o->var];
                break;
            case IR_STORE:
                if (o->var < y->nvars) y->part_var[o->var] |= pa, y->dev_var[o->var] |= da;
                break;
            case IR_BUILD: /* {k: v.to(device) for k, v in batch.items()}, (x.cuda(), y.cuda()) */
                for (uint32_t k = 0; k < o->nargs; k++) {
                    uint32_t e = f->args.items[o->args + k];
                    if (DF_IN(e)) dev[op] |= dev[e];
                }
                break;
            case IR_CALL: {
                const char *mname = ir_call_method(f, op);
                uint32_t r = ir_call_receiver(f, op);
                if (!mname || !DF_IN(r) || !(part[r] || dev[r])) break;
                uint32_t fl = api_method(mname).flags;
                if (fl & M_DEVICE) {
                    dev[op] = 1;
                    if (!reached || reached[op]) moved = true;
                }
                if ((fl & M_ITEMS) && part[r]) part[op] = 1;
                break;
            }
            default:
                break;
            }
        }
    }
#undef DF_IN
    /* the variables' marks go: the next iteration asked about starts from none */
    for (uint32_t op = lo; op < end; op++)
        if (f->ops.items[op].kind == IR_STORE && f->ops.items[op].var < y->nvars)
            y->part_var[f->ops.items[op].var] = y->dev_var[f->ops.items[op].var] = 0;
    if (y == &own) df_yield_free(&own);
    return moved;
}

/* A loop over batches from the host: its iterable is a DataLoader, or what it yields (unpacked,
 * indexed) is moved to a device inside the loop (`x, y = x.to(device), y.to(device)`). Such a loop
 * runs once per batch however it is nested, so it is never one step's bounded sequence. Iterating
 * a tensor, its pieces (`xb.chunk(4)`), a range or modules is not a batch loop, whatever is moved. */
static bool df__batch_loop(const IrFunc *f, const FuncFacts *ff, const IrLoop *l, DfYield *y)
{
    if (l->iter == IR_NONE) return false;
    const AVal *it = &ff->val[l->iter];
    if (it->kind == VK_LOADER) return true;
    if (it->kind != VK_UNKNOWN || (it->flags & (VF_PIECES | VF_SHAPE | VF_MODLIST | VF_MODEL_OUT))) return false;
    return df_yield_moved(y, f, l->op + 1, l->end, ff->reached); /* the loop's NEXT follows its LOOP op */
}

/* Functions that make one training step per call: a reached backward() or optimizer step in their
 * body outside any loop of their own, or such a call to a function of the file that does (a few
 * levels). One with its step inside a loop is a whole training run, not a step. */
void df_mark_training_funcs(const IrModule *m, Facts *fx)
{
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        FuncFacts *ff = &fx->funcs[fi];
        if (fi == 0 || !ff->analysed) continue; /* the module body is not called */
        for (uint32_t op = 0; op < f->ops.len && !ff->trains; op++) {
            const IrOp *o = &f->ops.items[op];
            if (o->kind != IR_CALL || !ff->reached[op]) continue;
            /* one step per call: a backward inside a loop of its own makes it a whole training run */
            if ((df_is_backward_call(f, op) || df_is_optimizer_step(fx, f, op)) && ir_op_loop(f, op) == IR_NONE)
                ff->trains = 1;
        }
    }
    for (int pass = 0; pass < 4; pass++) {
        bool changed = false;
        for (uint32_t fi = 1; fi < m->funcs.len; fi++) {
            const IrFunc *f = m->funcs.items[fi];
            FuncFacts *ff = &fx->funcs[fi];
            if (ff->trains || !ff->analysed) continue;
            for (uint32_t op = 0; op < f->ops.len && !ff->trains; op++) {
                const IrOp *o = &f->ops.items[op];
                if (o->kind != IR_CALL || !ff->reached[op] || ir_op_loop(f, op) != IR_NONE) continue;
                uint32_t t = df_call_target(m, fx, f, op);
                if (t != IR_NONE && t != fi && fx->funcs[t].trains) ff->trains = 1, changed = true;
            }
        }
        if (!changed) break;
    }
}

/* The framework hooks of frameworks.def. */
#define FW_PER_STEP 1
#define FW_GRAD_OFF 2
#define FW_RETURNS_LOSS 4
typedef struct FrameworkHook {
    const char *base, *method;
    uint8_t flags;
} FrameworkHook;
static const FrameworkHook framework_hooks[] = {
#define FRAMEWORK_HOOK(b, m, fl) {b, m, fl},
#include "ir/frameworks.def"
};
static const FrameworkHook module_hooks[] = {
#define MODULE_HOOK(m, fl) {NULL, m, fl},
#include "ir/frameworks.def"
};

/* A class built on a base of another file (`class LitEmbedding(LitCore)`) that defines Lightning's
 * `training_step(self, batch, batch_idx)`: a LightningModule whose base gradleak cannot see. */
static bool df__lightning_like(const IrModule *m, uint32_t ci)
{
    const IrClass *c = m->classes.items[ci];
    bool imported = false;
    for (uint32_t b = 0; b < c->bases.len && !imported; b++) {
        const char *q = c->bases.items[b];
        imported = strchr(q, '.') && strncmp(q, "torch.", 6) != 0;
        for (uint32_t j = 0; j < m->classes.len && imported; j++) imported = strcmp(m->classes.items[j]->name, q) != 0;
    }
    if (!imported) return false;
    uint32_t ts = ir_class_method(m, ci, "training_step");
    return ts != IR_NONE && m->funcs.items[ts]->nparams >= 3;
}

void df_mark_framework_hooks(const IrModule *m, Facts *fx)
{
    for (uint32_t ci = 0; ci < m->classes.len; ci++) {
        const IrClass *c = m->classes.items[ci];
        int lightning = -1; /* df__lightning_like, asked once per class when needed */
        for (uint32_t k = 0; k < c->methods.len; k++) {
            uint32_t fi = c->methods.items[k];
            const char *name = m->funcs.items[fi]->name;
            for (uint32_t h = 0; h < ARRAY_LEN(framework_hooks); h++) {
                const FrameworkHook *fh = &framework_hooks[h];
                if (strcmp(fh->method, name) != 0) continue;
                if (!ir_class_derives_from(m, ci, fh->base)) {
                    if (strcmp(fh->base, "LightningModule") != 0) continue;
                    if (lightning < 0) lightning = df__lightning_like(m, ci);
                    if (!lightning) continue;
                }
                if (fh->flags & FW_PER_STEP) fx->funcs[fi].runs_per_step = 1;
                if (fh->flags & FW_GRAD_OFF) {
                    /* the framework runs it under no_grad: analysed as if it were decorated so */
                    fx->funcs[fi].called_grad_off = 1;
                    df_run_grad_off(m->funcs.items[fi]);
                }
                if (fh->flags & FW_RETURNS_LOSS) fx->funcs[fi].returns_loss = 1;
                break;
            }
            /* a Module's training_step whose base gradleak cannot see (a LightningModule of another file) */
            for (uint32_t h = 0; c->is_module && h < ARRAY_LEN(module_hooks); h++)
                if (!strcmp(module_hooks[h].method, name) && (module_hooks[h].flags & FW_PER_STEP))
                    fx->funcs[fi].runs_per_step = 1;
        }
    }
}

/* Whether call op of method f runs the model the method belongs to: `self(x)`, `self.forward(x)`
 * (self_var: f's first parameter). */
static bool df__calls_own_model(const IrFunc *f, uint32_t op, uint32_t self_var)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL || o->a == IR_NONE) return false;
    const IrOp *callee = &f->ops.items[o->a];
    if (callee->kind == IR_LOAD) return callee->var == self_var;
    const char *mname = ir_call_method(f, op);
    uint32_t r = ir_call_receiver(f, op);
    return mname && !strcmp(mname, "forward") && r != IR_NONE && f->ops.items[r].kind == IR_LOAD &&
           f->ops.items[r].var == self_var;
}

/* Whether loop l of method f runs the whole model of its class each iteration: itself, or through
 * another method of the class that does (`self.calculate_loss(x)` calling `self(x)`). */
static bool df__loop_runs_own_model(const IrModule *m, const Facts *fx, const IrFunc *f, const IrLoop *l,
                                    uint32_t self_var)
{
    for (uint32_t op = l->op + 1; op < l->end; op++) {
        if (!fx->funcs[f->index].reached[op] || f->ops.items[op].kind != IR_CALL) continue;
        if (df__calls_own_model(f, op, self_var)) return true;
        uint32_t t = df_call_target(m, fx, f, op);
        if (t == IR_NONE || t == f->index || m->funcs.items[t]->cls != f->cls) continue;
        const IrFunc *g = m->funcs.items[t];
        uint32_t gself = ir_first_param(g);
        for (uint32_t k = 0; k < g->ops.len; k++)
            if (df__calls_own_model(g, k, gself)) return true;
        /* a method no forward() reaches that runs the class's submodules itself (a model that is a
         * container of an encoder and a decoder: `self.encode_and_decode(batch)`): the whole model */
        const FuncFacts *gf = &fx->funcs[t];
        if (gf->in_forward || !gf->analysed || gself == IR_NONE) continue;
        if (fx->runs_subs && fx->runs_subs[t]) { /* asked by an earlier loop */
            if (fx->runs_subs[t] == 2) return true;
            continue;
        }
        bool subs = false;
        for (uint32_t k = 0; k < g->ops.len && !subs; k++) {
            if (!gf->reached[k] || g->ops.items[k].kind != IR_CALL || !df_is_module_call(fx, g, k)) continue;
            uint32_t callee = g->ops.items[k].a;
            if (callee == IR_NONE || g->ops.items[callee].kind != IR_ATTR) continue;
            uint32_t v = ir_root_var(g, callee); /* self.encoder, self.decoder.forward: down to self */
            for (int guard = 0; v != IR_NONE && v < g->vars.len && g->vars.items[v].base != IR_NONE && guard < 8; guard++)
                v = g->vars.items[v].base;
            subs = v == gself;
        }
        if (fx->runs_subs) fx->runs_subs[t] = subs ? 2 : 1;
        if (subs) return true;
    }
    return false;
}

/* Functions whose loops run inside one forward: a Module's forward() (or __call__), the functions
 * nested in it, and what they call in the file (a few levels: `self.decode(h)` from forward). */
void df_mark_forward_funcs(const IrModule *m, Facts *fx)
{
    for (uint32_t i = 0; i < m->classes.len; i++) {
        const IrClass *c = m->classes.items[i];
        if (!c->is_module) continue;
        if (c->forward != IR_NONE) fx->funcs[c->forward].in_forward = 1;
        uint32_t call = ir_class_method(m, i, api_name(PY_NAME_CALL));
        if (call != IR_NONE) fx->funcs[call].in_forward = 1;
    }
    for (int pass = 0; pass < 6; pass++) {
        bool changed = false;
        for (uint32_t fi = 1; fi < m->funcs.len; fi++) {
            const IrFunc *f = m->funcs.items[fi];
            FuncFacts *ff = &fx->funcs[fi];
            if (!ff->in_forward && f->parent != IR_NONE && f->parent != 0 && fx->funcs[f->parent].in_forward)
                ff->in_forward = 1, changed = true;
            if (!ff->in_forward || !ff->analysed) continue;
            for (uint32_t op = 0; op < f->ops.len; op++) {
                if (f->ops.items[op].kind != IR_CALL || !ff->reached[op]) continue;
                uint32_t t = df_call_target(m, fx, f, op);
                if (t != IR_NONE && !fx->funcs[t].in_forward) fx->funcs[t].in_forward = 1, changed = true;
            }
        }
        if (!changed) break;
    }
}

/* The method of that name when exactly one class of the file defines it (not a dunder), else IR_NONE. */
static uint32_t df__only_method(const IrModule *m, const char *method)
{
    if (method[0] == '_' || m->classes.len > 256) return IR_NONE; /* (asked per call: bounded) */
    uint32_t found = IR_NONE;
    for (uint32_t ci = 0; ci < m->classes.len; ci++) {
        uint32_t k = ir_class_method(m, ci, method);
        if (k == IR_NONE) continue;
        if (found != IR_NONE) return IR_NONE;
        found = k;
    }
    return found;
}

/* The function of the file that call op wraps in a grad-off context used as a decorator
 * (`torch.no_grad()(self.one_epoch)`, `torch.inference_mode()(evaluate)`), or IR_NONE. */
static uint32_t df__inline_grad_off_target(const IrModule *m, const IrFunc *f, const FuncFacts *ff, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->a == IR_NONE || o->nargs != 1 || f->kw.items[o->args]) return IR_NONE;
    const IrOp *ctx = &f->ops.items[o->a];
    ApiEffect e = ctx->kind == IR_CALL && !ctx->nargs ? api_function(ctx->qual) : EFF_NONE;
    if (e != EFF_NOGRAD && e != EFF_INFER) return IR_NONE;
    const AVal *fn = &ff->val[f->args.items[o->args]];
    return fn->kind == VK_FUNC && fn->ref < m->funcs.len ? fn->ref : IR_NONE;
}

/* The name other files reach Python function fi by ("f", "Class#method" of a top-level class),
 * written into buf; NULL for the module, nested functions, lambdas and C++ functions. */
static const char *df__export_name(const IrModule *m, uint32_t fi, char *buf, size_t n)
{
    const IrFunc *f = m->funcs.items[fi];
    if (fi == 0 || f->parent != 0 || f->is_lambda || !f->name || f->cxx_key) return NULL;
    if (f->cls == IR_NONE) snprintf(buf, n, "%s", f->name);
    else if (f->cls < m->classes.len) snprintf(buf, n, "%s#%s", m->classes.items[f->cls]->name, f->name);
    else return NULL;
    return buf;
}

/* Functions that some call in the file runs with grad off, directly (`with torch.no_grad():
 * evaluate(model)`) or because the calling function is itself called so (a few levels); and the
 * functions and methods another file calls so (Facts.ext_grad_off, by their export names). */
void df_mark_grad_off_callees(const IrModule *m, Facts *fx)
{
    for (uint32_t fi = 1; fi < m->funcs.len && (fx->ext_grad_off || fx->ext_after_train); fi++) {
        char name[256];
        if (!df__export_name(m, fi, name, sizeof name)) continue;
        if (fx->ext_grad_off && fx->ext_grad_off(fx->ext_ctx, name)) fx->funcs[fi].called_grad_off = 1;
        if (fx->ext_after_train && fx->ext_after_train(fx->ext_ctx, name)) fx->funcs[fi].called_after_train = 1;
    }
    for (int pass = 0; pass < 6; pass++) {
        bool changed = false;
        for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
            const IrFunc *f = m->funcs.items[fi];
            const FuncFacts *ff = &fx->funcs[fi];
            if (!ff->analysed) continue;
            for (uint32_t op = 0; op < f->ops.len; op++) {
                const IrOp *o = &f->ops.items[op];
                if (o->kind != IR_CALL || !ff->reached[op]) continue;
                /* `torch.no_grad()(self.one_epoch)`: the context as a decorator, applied inline */
                uint32_t wrapped = df__inline_grad_off_target(m, f, ff, op);
                if (wrapped != IR_NONE && !fx->funcs[wrapped].called_grad_off)
                    fx->funcs[wrapped].called_grad_off = 1, changed = true;
                bool off = df_mode_off(o->mode) || (ff->called_grad_off && o->mode != GRAD_ENABLE);
                if (!off) continue;
                uint32_t t = df_call_target(m, fx, f, op);
                const char *method = ir_call_method(f, op);
                /* `self.decoder.greedy_search(h)` on a submodule given to __init__: the one class of
                 * the file that defines the method */
                if (t == IR_NONE && method && ir_call_receiver(f, op) != IR_NONE) t = df__only_method(m, method);
                if (t != IR_NONE && t != fi && !fx->funcs[t].called_grad_off)
                    fx->funcs[t].called_grad_off = 1, changed = true;
                /* a base class calls self.validate() under no_grad: the subclasses' validate() */
                uint32_t r = ir_call_receiver(f, op);
                const AVal *rv = r != IR_NONE ? &ff->val[r] : NULL;
                if (!method || !rv || (rv->kind != VK_OBJECT && rv->kind != VK_MODULE) || rv->ref >= m->classes.len)
                    continue;
                for (uint32_t ci = 0; ci < m->classes.len; ci++) {
                    if (ci == rv->ref || !ir_class_derives_from(m, ci, m->classes.items[rv->ref]->name)) continue;
                    uint32_t sub = ir_class_method(m, ci, method);
                    if (sub != IR_NONE && sub != fi && !fx->funcs[sub].called_grad_off)
                        fx->funcs[sub].called_grad_off = 1, changed = true;
                }
            }
        }
        if (!changed) break;
    }
}

/* Is op the C++ front end's stand-in for a module it could not type (`m->forward(x)` in a function
 * lowered with types partly unknown): `torch.nn.Module()`, built with no argument at the call? */
static bool df__shadow_module(const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    return o->kind == IR_CALL && o->nargs == 0 && o->qual && !strcmp(o->qual, "torch.nn.Module") && o->a != IR_NONE &&
           f->ops.items[o->a].kind == IR_LOAD;
}

/* Is op a chain of attributes (`trainer.policy_net.get_action`) read from a variable whose value
 * the loop li did not make? */
static bool df__attr_of_outer(const IrFunc *f, const FuncFacts *ff, uint32_t li, uint32_t op)
{
    if (op == IR_NONE || f->ops.items[op].kind != IR_ATTR) return false;
    for (int depth = 0; depth < 8 && op != IR_NONE && f->ops.items[op].kind == IR_ATTR; depth++) op = f->ops.items[op].a;
    if (op == IR_NONE || f->ops.items[op].kind != IR_LOAD) return false;
    return ff->val[op].def == IR_NONE || !ir_loop_contains(f, li, ff->val[op].def);
}

void df_classify_loops(const IrModule *m, Facts *fx, const IrFunc *f)
{
    FuncFacts *ff = &fx->funcs[f->index];
    bool in_method = ir_func_in_module_class(m, f);
    for (uint32_t li = 0; li < f->loops.len; li++) {
        IrLoop *l = &f->loops.items[li];
        l->in_module_method = in_method;
        for (uint32_t op = l->op + 1; op < l->end; op++) {
            if (!ff->reached[op] || ir_op_loop(f, op) != li) continue;
            const IrOp *o = &f->ops.items[op];
            if (o->kind != IR_CALL) continue;
            if (df_is_backward_call(f, op)) l->has_backward = 1;
            uint32_t mfl = api_method(ir_call_method(f, op)).flags;
            /* zero_grad() alone is not a step: evaluation loops clear gradients too, and so do loops
             * over folds or runs between trainings; a step is backward() or optimizer.step() */
            if (df_is_optimizer_step(fx, f, op)) l->has_opt_step = 1;
            if (mfl & M_STEP) {
                for (uint32_t k = 0; k < o->nargs; k++)
                    if (ff->val[f->args.items[o->args + k]].kind == VK_OPTIM) l->has_opt_step = 1;
            }
            /* a callee that changes every iteration (for layer in self.layers: x = layer(x)) is a
             * stack of layers or heads, not one model called again */
            const AVal *callee = &ff->val[o->a];
            bool invariant = callee->def == IR_NONE || !ir_loop_contains(f, li, callee->def) || callee->carried == li ||
                             callee->kind == VK_MODREF || callee->kind == VK_FUNC ||
                             /* self.net read as an earlier call or another method left it */
                             (f->ops.items[o->a].kind == IR_ATTR && (callee->flags & VF_OUTER)) ||
                             /* model.decoder, trainer.policy_net.act of an object the loop does not
                              * rebind */
                             df__attr_of_outer(f, ff, li, o->a) ||
                             /* `m->forward(x)` where the C++ front end could not type m: its stand-in
                              * module, built at the call (torch.nn.Module() itself, which no code
                              * builds) */
                             df__shadow_module(f, o->a);
            uint32_t target = df_call_target(m, fx, f, op);
            /* a model of the file whose forward trains (a meta-learner stepping its optimizer) */
            if (target == IR_NONE && callee->kind == VK_MODULE && callee->ref < m->classes.len &&
                df_is_module_call(fx, f, op) && m->classes.items[callee->ref]->forward != IR_NONE)
                target = m->classes.items[callee->ref]->forward;
            if (target != IR_NONE && target != f->index && fx->funcs[target].trains) l->has_step_call = 1;
            if (target == IR_NONE) { /* a function or method of another file of the run that trains */
                const ExternSummary *es = df_call_extern(fx, f, op);
                if (!es) es = df_call_extern_listed(fx, f, op); /* `agent.update()` */
                if (es && es->trains) l->has_step_call = 1;
            }
            bool local_model = df_is_local_model_call(m, fx, f, op);
            if ((df_is_module_call(fx, f, op) || local_model) && invariant) {
                if (!local_model) l->has_model_call = 1;
                for (uint32_t k = 0; k < o->nargs; k++) {
                    const AVal *a = &ff->val[f->args.items[o->args + k]];
                    if (a->carried == li && (a->flags & VF_MODEL_OUT) && GL_MAX(a->grad, a->elem) >= G_POST &&
                        !df_arg_cut_by_callee(m, fx, f, op, k)) {
                        l->has_feedback = 1;
                        if (l->feedback_call == IR_NONE) l->feedback_call = op;
                    }
                }
            }
        }
    }
    uint32_t self_var = f->cls != IR_NONE && !ff->in_forward ? ir_first_param(f) : IR_NONE;
    uint8_t *by_batches = gl_calloc(f->loops.len ? f->loops.len : 1, 1); /* STEP only as a batch loop */
    DfYield y; /* df__batch_loop's scratch, one per function */
    df_yield_init(&y, f);
    uint32_t *next_bw = gl_malloc(sizeof *next_bw * (f->ops.len + 1)); /* df__backward_after's */
    next_bw[f->ops.len] = IR_NONE;
    for (uint32_t op = f->ops.len; op-- > 0;)
        next_bw[op] = ff->reached[op] && df_is_backward_call(f, op) ? op : next_bw[op + 1];
    uint32_t *next_model_loop = gl_malloc(sizeof *next_model_loop * (f->ops.len + 1)); /* ... and its */
    next_model_loop[f->ops.len] = IR_NONE;
    for (uint32_t op = f->ops.len; op-- > 0;) {
        const IrOp *o = &f->ops.items[op];
        bool ml = o->kind == IR_LOOP && o->aux < f->loops.len && f->loops.items[o->aux].has_model_call;
        next_model_loop[op] = ml ? op : next_model_loop[op + 1];
    }
    for (uint32_t li = 0; li < f->loops.len; li++) {
        IrLoop *l = &f->loops.items[li];
        const AVal *it = l->iter != IR_NONE ? &ff->val[l->iter] : NULL;
        const IrLoop *parent = l->parent != IR_NONE ? &f->loops.items[l->parent] : NULL;
        /* a loop over batches that calls a model (or iterates a DataLoader) */
        bool batches = (l->has_model_call || (it && it->kind == VK_LOADER)) && df__batch_loop(f, ff, l, &y);
        bool seq_iter = it && (it->kind == VK_TENSOR || (it->flags & (VF_PIECES | VF_SHAPE)));
        /* `for t in torch.arange(n_steps)`: a counter made by a factory, not the input's steps */
        if (seq_iter && it->kind == VK_TENSOR && !(it->flags & (VF_PIECES | VF_SHAPE)) && it->def != IR_NONE &&
            it->def < f->ops.len && f->ops.items[it->def].kind == IR_CALL && api_function(f->ops.items[it->def].qual) == EFF_FACTORY)
            seq_iter = false;
        l->backward_after = df__backward_after(f, next_bw, next_model_loop, l);
        /* In a Module, forward and what it calls loop over one input's time steps or layers. Other
         * methods (a model's own fit_epoch, evaluate or generate) are classified by what they do,
         * except that a loop over the input's steps (`range(x.size(1))`) stays a sequence unless it
         * runs the whole model each time (`for j in range(X.size(0)): self.loss_of(X[j])`). */
        if (self_var != IR_NONE && (seq_iter || !l->has_model_call) && l->in_module_method &&
            df__loop_runs_own_model(m, fx, f, l, self_var))
            seq_iter = false, l->has_model_call = 1;
        /* (a method no forward reaches that feeds back what a forward helper returned, `out, h =
         * self.forward_step(x, h)` in evaluate(), decodes: a feedback loop) */
        if (l->in_module_method && (ff->in_forward || seq_iter || (!l->has_backward && !l->has_opt_step &&
                                                                   !l->has_step_call && !l->has_model_call &&
                                                                   !l->has_feedback && !batches)))
            l->kind = LOOP_SEQUENCE;
        else if (l->has_backward || l->has_opt_step) l->kind = LOOP_STEP;
        /* (but not a loop that feeds the model its own output after the iteration's last backward:
         * `img = nca(img)` to write pictures once the step is done is sampling) */
        else if (!batches && parent && (parent->has_backward || parent->has_opt_step) && parent->kind == LOOP_STEP &&
                 !(l->has_feedback && parent->has_backward && (next_bw[l->end] == IR_NONE || next_bw[l->end] >= parent->end)))
            l->kind = LOOP_SEQUENCE;
        else if (parent && parent->kind == LOOP_SEQUENCE) l->kind = LOOP_SEQUENCE;
        else if (!batches && l->backward_after) l->kind = LOOP_SEQUENCE;
        else if (l->has_step_call) l->kind = LOOP_STEP; /* calls a step function: train_step(batch) */
        else if (l->has_feedback) l->kind = LOOP_FEEDBACK;
        else if (batches) l->kind = LOOP_STEP, by_batches[li] = 1;
        else if (seq_iter) l->kind = LOOP_SEQUENCE;
        else if (l->has_model_call) l->kind = LOOP_STEP;
        else l->kind = LOOP_UNKNOWN;
    }
    /* a loop that calls a function training in a loop of its own (`for epoch in range(n):
     * train_epoch(...)`, of the file or of another file of the run) is an epoch loop, also when it
     * is taken for a step loop only because it runs a model (the evaluation that follows) */
    for (uint32_t li = 0; li < f->loops.len; li++) {
        IrLoop *l = &f->loops.items[li];
        bool model_only = l->kind == LOOP_STEP && !l->has_backward && !l->has_opt_step && !l->has_step_call &&
                          !by_batches[li];
        for (uint32_t op = l->op + 1; op < l->end && (l->kind == LOOP_UNKNOWN || model_only); op++) {
            if (f->ops.items[op].kind != IR_CALL || !ff->reached[op] || ir_op_loop(f, op) != li) continue;
            uint32_t t = df_call_target(m, fx, f, op);
            const ExternSummary *es = t == IR_NONE ? df_call_extern(fx, f, op) : NULL;
            if (t == IR_NONE && !es) es = df_call_extern_listed(fx, f, op); /* `agent.update()` */
            if ((t != IR_NONE && t != f->index && !fx->funcs[t].trains && df__func_backprops(fx, t, 3)) ||
                (es && es->backprops))
                l->kind = LOOP_EPOCH, model_only = false;
        }
    }
    /* a loop with a step loop inside is an epoch loop, unless it steps itself: a batch loop whose
     * batches each run several steps (`for _ in range(ppo_epochs): step(batch)`) is one too, and so
     * is one taken for a step only because it runs a model (a sample drawn after each epoch) */
    for (uint32_t li = f->loops.len; li-- > 0;) {
        IrLoop *l = &f->loops.items[li];
        if (l->kind != LOOP_STEP || l->parent == IR_NONE) continue;
        IrLoop *p = &f->loops.items[l->parent];
        bool by_model_call = !p->has_backward && !p->has_opt_step && !p->has_step_call && !p->has_feedback;
        if (p->kind == LOOP_UNKNOWN || (p->kind == LOOP_STEP && (by_batches[l->parent] || by_model_call)))
            p->kind = LOOP_EPOCH;
    }
    gl_free(by_batches);
    df_yield_free(&y);
    gl_free(next_bw);
    gl_free(next_model_loop);
}

uint32_t df_outliving_loop(const IrFunc *f, const AVal *v, uint32_t loop, bool growth_only)
{
    for (uint32_t l = loop; l != IR_NONE; l = f->loops.items[l].parent) {
        bool created_inside = v->def != IR_NONE && ir_loop_contains(f, l, v->def) && v->carried != l &&
                              !(v->flags & VF_OUTER);
        if (created_inside) return IR_NONE;
        uint8_t k = f->loops.items[l].kind;
        if (!growth_only || k == LOOP_STEP || k == LOOP_FEEDBACK) return l;
    }
    return IR_NONE;
}

void df_mark_per_step_funcs(const IrModule *m, Facts *fx)
{
    /* functions that run every step: the framework hooks of frameworks.def (marked above), C++
     * functions that another file's training loop calls (a trainer's train_step defined here), and
     * what a step loop or a hook calls (transitively, a few levels) */
    for (uint32_t fi = 0; fi < m->funcs.len && fx->ext_per_step; fi++) {
        char name[256];
        const char *key = m->funcs.items[fi]->cxx_key ? m->funcs.items[fi]->cxx_key
                                                       : df__export_name(m, fi, name, sizeof name);
        if (key && fx->ext_per_step(fx->ext_ctx, key)) fx->funcs[fi].runs_per_step = 1;
    }
    for (int pass = 0; pass < 4; pass++) {
        for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
            const IrFunc *f = m->funcs.items[fi];
            FuncFacts *ff = &fx->funcs[fi];
            for (uint32_t op = 0; op < f->ops.len; op++) {
                const IrOp *o = &f->ops.items[op];
                if (o->kind != IR_CALL || !ff->reached[op] || o->a == IR_NONE) continue;
                uint32_t l = ir_op_loop(f, op);
                bool per_step = ff->runs_per_step;
                for (uint32_t k = l; k != IR_NONE && !per_step; k = f->loops.items[k].parent)
                    if (f->loops.items[k].kind == LOOP_STEP) per_step = true;
                if (!per_step) continue;
                uint32_t t = df_call_target(m, fx, f, op);
                if (t == IR_NONE) continue;
                fx->funcs[t].runs_per_step = 1;
                if (!df_mode_off(o->mode) && (!ff->called_grad_off || ff->per_step_grad_on))
                    fx->funcs[t].per_step_grad_on = 1;
            }
        }
    }
}

/* The parameter (not self) that op reads, through items and attributes (`seq`, `batch[0]`,
 * `x.shape`), or IR_NONE. */
static uint32_t df__param_read(const IrFunc *f, uint32_t op)
{
    for (int guard = 0; op != IR_NONE && op < f->ops.len && guard < 8; guard++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind == IR_LOAD) {
            bool self = f->cls != IR_NONE && o->var == ir_first_param(f);
            return o->var < f->vars.len && f->vars.items[o->var].is_param && !self ? o->var : IR_NONE;
        }
        if (o->kind == IR_ITEM || o->kind == IR_ATTR) op = o->a;
        else if (o->kind == IR_CALL && ir_call_method(f, op)) op = ir_call_receiver(f, op); /* x.size(0) */
        else return IR_NONE;
    }
    return IR_NONE;
}

/* Is a variable loop l carries (read in the body before the body stores it: `h` in `out, h =
 * rnn(x, h)`) read after the loop (a primed state that a generation loop goes on with)? */
static bool df__carried_state_outlives(const IrFunc *f, const IrLoop *l)
{
    uint32_t nv = f->vars.len;
    uint32_t *first_load = gl_calloc(nv + 1, sizeof *first_load); /* op + 1 */
    uint8_t *carried = gl_calloc(nv + 1, 1);
    bool any = false, out = false;
    for (uint32_t k = l->op + 1; k < l->end && k < f->ops.len; k++) {
        const IrOp *o = &f->ops.items[k];
        if (o->var == IR_NONE || o->var >= nv) continue;
        if (o->kind == IR_LOAD && !first_load[o->var]) first_load[o->var] = k + 1;
        if (o->kind == IR_STORE && first_load[o->var]) carried[o->var] = 1, any = true;
    }
    for (uint32_t k = l->end + 1; any && k < f->ops.len && !out; k++) {
        const IrOp *o = &f->ops.items[k];
        out = o->kind == IR_LOAD && o->var != IR_NONE && o->var < nv && carried[o->var];
    }
    gl_free(first_load);
    gl_free(carried);
    return out;
}

bool df_loop_unrolls_input(const IrFunc *f, uint32_t li)
{
    if (li >= f->loops.len) return false;
    const IrLoop *l = &f->loops.items[li];
    if (l->iter == IR_NONE || l->is_comp || l->end == IR_NONE || df__carried_state_outlives(f, l)) return false;
    const IrOp *it = &f->ops.items[l->iter];
    /* `for i in range(len(seq)):`, `range(seq.size(0))`, `range(seq.size()[0])`, `range(seq.shape[0])`
     * (not `for x in seq:`, which may as well be a loader: a state carried from batch to batch
     * chains them all) */
    if (it->kind != IR_CALL || it->nargs != 1 || it->a == IR_NONE) return false;
    const IrOp *callee = &f->ops.items[it->a];
    if (callee->kind != IR_LOAD || !callee->name || api_builtin(callee->name) != B_RANGE) return false;
    uint32_t n = f->args.items[it->args];
    const IrOp *no = &f->ops.items[n];
    if (no->kind == IR_CALL && no->nargs == 1 && no->a != IR_NONE && f->ops.items[no->a].kind == IR_LOAD &&
        f->ops.items[no->a].name && api_builtin(f->ops.items[no->a].name) == B_LEN)
        return df__param_read(f, f->args.items[no->args]) != IR_NONE;
    /* (a size read off a parameter: not the parameter itself, an int such as max_len) */
    return no->kind != IR_LOAD && df__param_read(f, n) != IR_NONE;
}

static bool df__func_evaluates(const Facts *fx, uint32_t t, int depth)
{
    const IrModule *m = fx->m;
    const IrFunc *g = m->funcs.items[t];
    const FuncFacts *gf = &fx->funcs[t];
    /* (a method may keep its per-call state on its object: in a loop that never trains, that
     * state feeds no backward either) */
    if (!gf->analysed || gf->trains || df_mode_off(g->base_mode) || df_func_stores_beyond_args(m, t)) return false;
    bool model = false;
    for (uint32_t i = 0; i < g->ops.len; i++) {
        if (!gf->reached[i]) continue;
        const IrOp *o = &g->ops.items[i];
        if (df_is_backward_call(g, i)) return false;
        if (o->kind != IR_CALL || df_mode_off(o->mode)) continue;
        /* a model call inside a loop of its own is a whole evaluation pass, reported at that loop
         * (also a method of another file that runs one: `model.decode(ys, memory)`) */
        uint32_t u = df_call_target(m, fx, g, i);
        const ExternSummary *es = u == IR_NONE ? df_call_extern(fx, g, i) : NULL;
        if (df_is_module_call(fx, g, i) || (es && es->evaluates)) {
            /* (but a recurrent model unrolled over the input it is given, `for i in
             * range(line.size(0)): out, h = rnn(line[i], h)`, is one forward of it) */
            uint32_t li = ir_op_loop(g, i);
            if (li != IR_NONE && !(g->loops.items[li].parent == IR_NONE && g->loops.items[li].kind == LOOP_FEEDBACK &&
                                   df_loop_unrolls_input(g, li)))
                return false;
            model = true;
        } else if (!model && ir_op_loop(g, i) == IR_NONE && u != IR_NONE && u != t && depth < 3 &&
                   df__func_evaluates(fx, u, depth + 1)) {
            /* validation_step(x) -> self.infer(x) -> self.module_(x): a helper of a helper */
            model = true;
        }
    }
    return model;
}

bool df_func_evaluates(const Facts *fx, uint32_t fi) { return fi < fx->m->funcs.len && df__func_evaluates(fx, fi, 0); }

/* Does function fi call backward() or step an optimizer anywhere, itself or through the functions
 * of the file it calls (depth levels)? A PPO update with its own epochs and minibatches counts. */
bool df_func_backprops(const Facts *fx, uint32_t fi) { return df__func_backprops(fx, fi, 3); }

static bool df__func_backprops(const Facts *fx, uint32_t fi, int depth)
{
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len || depth < 0) return false;
    /* the answer at the full depth is kept: every loop of a file may ask of one big function */
    if (depth == 3 && fx->backprops && fx->backprops[fi]) return fx->backprops[fi] == 2;
    bool r = df__func_backprops_scan(fx, fi, depth);
    if (depth == 3 && fx->backprops) fx->backprops[fi] = r ? 2 : 1;
    return r;
}

static bool df__func_backprops_scan(const Facts *fx, uint32_t fi, int depth)
{
    const IrModule *m = fx->m;
    const IrFunc *g = m->funcs.items[fi];
    const FuncFacts *gf = &fx->funcs[fi];
    if (!gf->analysed) return false;
    for (uint32_t op = 0; op < g->ops.len; op++) {
        if (g->ops.items[op].kind != IR_CALL || !gf->reached[op]) continue;
        if (df_is_backward_call(g, op) || df_is_optimizer_step(fx, g, op)) return true;
        uint32_t t = df_call_target(m, fx, g, op);
        if (t != IR_NONE && t != fi && df__func_backprops(fx, t, depth - 1)) return true;
    }
    return false;
}

uint32_t df_outliving_step(const Facts *fx, const IrFunc *f, const AVal *v, uint32_t loop)
{
    uint32_t l = df_outliving_loop(f, v, loop, true);
    if (l == IR_NONE) return l;
    const IrLoop *L = &f->loops.items[l];
    const FuncFacts *ff = &fx->funcs[f->index];
    /* a rollout: a while loop or one over a range, that trains nothing itself ... */
    if (L->has_backward || L->has_opt_step || L->has_step_call) return l;
    if (!L->is_while && (L->iter == IR_NONE || ff->val[L->iter].kind != VK_RANGE)) return l;
    if (L->parent == IR_NONE) {
        /* ... the function's own episode (`def train(env, policy, opt)`: a list made before the
         * loop, filled while the environment steps, then the update): one call's rollout */
        if (v->def == IR_NONE || v->def >= L->op || (v->flags & VF_OUTER) || f->index == 0) return l;
        for (uint32_t op = L->end + 1; op < f->ops.len; op++) {
            if (f->ops.items[op].kind != IR_CALL || !ff->reached[op]) continue;
            if (df_is_backward_call(f, op) || df_is_optimizer_step(fx, f, op)) return IR_NONE;
            uint32_t t = df_call_target(fx->m, fx, f, op);
            if (t != IR_NONE && t != f->index && df__func_backprops(fx, t, 3)) return IR_NONE;
        }
        return l;
    }
    /* ... collecting into a value the enclosing loop makes again every iteration ... */
    const IrLoop *P = &f->loops.items[L->parent];
    if (v->def == IR_NONE || !ir_loop_contains(f, L->parent, v->def) || v->carried == L->parent ||
        (v->flags & VF_OUTER))
        return l;
    /* ... and followed, in that iteration, by the update that consumes it */
    for (uint32_t op = L->end + 1; op < P->end; op++) {
        if (f->ops.items[op].kind != IR_CALL || !ff->reached[op]) continue;
        if (df_is_backward_call(f, op) || df_is_optimizer_step(fx, f, op)) return IR_NONE;
        uint32_t t = df_call_target(fx->m, fx, f, op);
        if (t != IR_NONE && t != f->index && df__func_backprops(fx, t, 3)) return IR_NONE;
    }
    return l;
}
