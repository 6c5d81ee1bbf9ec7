/* Evidence read from a whole function before it is interpreted: which variables carry a graph
 * (backward() is called on them) and which are models (module-only methods, a callable fed its own
 * result, the source of what backward() differentiates, a callable applied to a batch moved to a
 * device). Linear scans and bounded work lists; nothing recurses. */
#include "ir/dataflow_int.h"

/* Does every class of the run that defines method `name` return something other than a model's
 * output (what a call on an object of unknown class reaches, df_method_qual)? */
bool df_duck_method_plain(const Interp *I, const char *name)
{
    if (!I->fx->ext || !name) return false;
    char buf[256];
    AVal unknown = aval(VK_UNKNOWN, G_MAY, IR_NONE);
    const char *q = df_method_qual(I->fx, &unknown, name, buf, sizeof buf);
    const ExternSummary *s = df_ext(I->fx, q);
    return s && !(s->flags & VF_MODEL_OUT) && s->grad < G_POST && s->elem < G_POST;
}

bool df_expr_reads(const IrFunc *f, uint32_t op, const uint32_t *vars, uint32_t n)
{
    uint32_t stack[32], sp = 0, visits = 0;
    stack[sp++] = op;
    while (sp && visits++ < 64) {
        uint32_t k = stack[--sp];
        if (k == IR_NONE || k >= f->ops.len) continue;
        const IrOp *o = &f->ops.items[k];
        if (o->kind == IR_LOAD || o->kind == IR_ATTR) { /* a variable, or `self.h` */
            for (uint32_t q = 0; q < n; q++)
                if (vars[q] == o->var) return true;
            if (o->kind == IR_LOAD) continue;
        }
        if (o->kind == IR_CALL || o->kind == IR_BUILD)
            for (uint32_t q = 0; q < o->nargs && sp < ARRAY_LEN(stack); q++) stack[sp++] = f->args.items[o->args + q];
        if (o->a != IR_NONE && o->kind != IR_DEFINE && sp < ARRAY_LEN(stack)) stack[sp++] = o->a; /* callee, receiver */
        if (o->b != IR_NONE && (o->kind == IR_BINOP || o->kind == IR_ITEM || o->kind == IR_SELECT || o->kind == IR_COMPARE) &&
            sp < ARRAY_LEN(stack))
            stack[sp++] = o->b;
    }
    return false;
}

/* Does the module's own code assign name (`decoder = checkpoint["decoder"]`), rather than import
 * it or leave it unbound? */
static bool df__module_assigns(const IrModule *m, const char *name)
{
    const IrFunc *top = m->funcs.items[0];
    uint32_t slot = name ? strmap_get(&top->var_index, name, strlen(name)) : UINT32_MAX;
    for (uint32_t i = 0; slot != UINT32_MAX && i < top->ops.len; i++)
        if (top->ops.items[i].kind == IR_STORE && top->ops.items[i].var == slot) return true;
    return false;
}

/* The variable a chain of methods, attributes and items starts from (`out.detach().numpy()[0]`:
 * out), or IR_NONE. */
static uint32_t df__chain_root(const IrFunc *f, uint32_t op)
{
    for (int d = 0; d < 16 && op != IR_NONE && op < f->ops.len; d++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind == IR_LOAD) return o->var;
        if (o->kind == IR_ATTR || o->kind == IR_ITEM) op = o->a;
        else if (o->kind == IR_CALL && ir_call_method(f, op)) op = ir_call_receiver(f, op);
        else return IR_NONE;
    }
    return IR_NONE;
}

/* Is what call op returns (stored to direct[0..n)) handed to an environment's `step` in loop
 * body (op, lend), through a chain of methods on it (`action = out.detach().numpy()`), when the
 * loop does not collect those values (`taken.append(a)`: a rollout for an update)? */
static bool df__steps_env(const IrFunc *f, uint32_t op, uint32_t lend, const uint32_t *direct, uint32_t n, uint32_t callee_var)
{
    uint32_t chain[8], nc = 0;
    for (uint32_t k = 0; k < n && nc < ARRAY_LEN(chain); k++) chain[nc++] = direct[k];
    bool stepped = false;
    /* (within 512 ops of the call: each call of a loop asks, so a huge body stays linear) */
    if (lend > op + 512) lend = op + 512;
    for (uint32_t k = op + 1; k < lend && !stepped; k++) {
        const IrOp *o = &f->ops.items[k];
        uint32_t root = IR_NONE;
        if (o->kind == IR_STORE && o->var != IR_NONE && o->a != IR_NONE && (root = df__chain_root(f, o->a)) != IR_NONE) {
            for (uint32_t q = 0; q < nc; q++)
                if (chain[q] == root && nc < ARRAY_LEN(chain)) { chain[nc++] = o->var; break; }
            continue;
        }
        const char *m = o->kind == IR_CALL && o->nargs == 1 && !f->kw.items[o->args] ? ir_call_method(f, k) : NULL;
        uint32_t rcv = m && !strcmp(m, "step") ? ir_call_receiver(f, k) : IR_NONE;
        if (rcv == IR_NONE || f->ops.items[rcv].kind != IR_LOAD || f->ops.items[rcv].var == callee_var) continue;
        root = df__chain_root(f, f->args.items[o->args]);
        for (uint32_t q = 0; q < nc && !stepped; q++) stepped = chain[q] == root;
    }
    if (!stepped) return false;
    for (uint32_t z = op + 1; z < lend; z++) {
        const IrOp *zo = &f->ops.items[z];
        const char *zm = zo->kind == IR_CALL && zo->nargs ? ir_call_method(f, z) : NULL;
        if (!zm || !(api_method(zm).flags & M_MUTATES) || !api_method_collects(zm, zo->nargs)) continue;
        for (uint32_t q = 0; q < zo->nargs; q++)
            if (df_expr_reads(f, f->args.items[zo->args + q], chain, nc)) return false;
    }
    return true;
}

/* The variables call op's result is stored to (directly, or unpacked) right after it, at most
 * cap into stored; how many. */
static uint32_t df__call_stores(const IrFunc *f, uint32_t op, uint32_t *stored, uint32_t cap)
{
    uint32_t ns = 0;
    for (uint32_t k = op + 1; k < f->ops.len && k < op + 32 && ns < cap; k++) {
        const IrOp *s = &f->ops.items[k];
        if (s->kind == IR_STORE && s->var != IR_NONE &&
            (s->a == op || (s->a != IR_NONE && f->ops.items[s->a].kind == IR_UNPACK && f->ops.items[s->a].a == op)))
            stored[ns++] = s->var;
    }
    return ns;
}

/* Method calls in loops whose result an environment's step is handed (`action =
 * agent.select_action(state)`, then `env.step(action)`), of a method torch does not define: a
 * policy's, bit 1 of bw_calls. On a model whose class nothing shows, it runs the model. */
static void df__prescan_policy_methods(Interp *I)
{
    const IrFunc *f = I->f;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        uint32_t li = o->kind == IR_CALL ? ir_op_loop(f, i) : IR_NONE;
        const char *m = li != IR_NONE ? ir_call_method(f, i) : NULL;
        uint32_t recv = m ? ir_call_receiver(f, i) : IR_NONE;
        if (recv == IR_NONE || f->ops.items[recv].kind != IR_LOAD || f->ops.items[recv].var == IR_NONE || m[0] == '_' ||
            api_method_listed(m) || api_method(m).flags || api_method(m).effect != EFF_NONE)
            continue;
        uint32_t stored[8], ns = df__call_stores(f, i, stored, ARRAY_LEN(stored));
        if (ns && df__steps_env(f, i, f->loops.items[li].end, stored, ns, f->ops.items[recv].var)) I->bw_calls[i] |= 2;
    }
}

/* Is class ci a plain Python class: no base but object, so no Module? */
static bool df__plain_class(const IrModule *m, uint32_t ci)
{
    if (ci == IR_NONE || ci >= m->classes.len) return false;
    const IrClass *c = m->classes.items[ci];
    for (uint32_t k = 0; k < c->bases.len; k++)
        if (strcmp(c->bases.items[k], "object") != 0) return false;
    return !c->is_module;
}

/* In a function that calls backward(): a variable called inside a loop with its own previous
 * result (`out, state = model(x, state)`, `h = rnn(x, h)`, `model.decoder(x, state)` on a
 * parameter) is a recurrent model, even when it is a parameter the function never calls a Module
 * method on. */
static void df__prescan_feedback_calls(Interp *I)
{
    const IrFunc *f = I->f;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || o->a == IR_NONE || ir_op_loop(f, i) == IR_NONE) continue;
        const IrOp *callee = &f->ops.items[o->a];
        if (callee->var == IR_NONE || callee->var >= I->nvars) continue;
        if (callee->kind == IR_ATTR) {
            /* `model.decoder(x, state)`: an attribute of a parameter (not self's: its methods), or
             * of a model that self holds (`self.model.decoder(x, state)` in a translator given the
             * model, where `self.model.eval()` or `.parameters()` shows what it is) */
            const IrOp *base = callee->a != IR_NONE ? &f->ops.items[callee->a] : NULL;
            uint32_t self_var = f->cls != IR_NONE ? ir_first_param(f) : IR_NONE;
            if (base && base->kind == IR_ATTR && self_var != IR_NONE && base->a != IR_NONE &&
                f->ops.items[base->a].kind == IR_LOAD && f->ops.items[base->a].var == self_var && base->name &&
                ir_class_method(I->m, f->cls, base->name) == IR_NONE &&
                ((base->var < I->nvars && I->module_vars[base->var]) || df_class_module_attr(I, f->cls, base->name)))
                base = &f->ops.items[base->a], self_var = IR_NONE;
            /* (or the model a plain helper class holds, called itself: `outs, state =
             * self.model(x, state)` in a text generator; in a Module, or a class of unknown bases,
             * `self.cell(x, h)` is a layer its forward unrolls) */
            else if (base && base->kind == IR_LOAD && self_var != IR_NONE && base->var == self_var && callee->name &&
                     df__plain_class(I->m, f->cls) && ir_class_method(I->m, f->cls, callee->name) == IR_NONE)
                self_var = IR_NONE;
            /* (or of a model the module made: `decoder = checkpoint["decoder"]` at the top of an
             * evaluation script; not of an imported module) */
            if (!base || base->kind != IR_LOAD || base->var >= f->vars.len || base->qual ||
                !(f->vars.items[base->var].is_param ||
                  (f->vars.items[base->var].is_global && f->index != 0 && df__module_assigns(I->m, f->vars.items[base->var].name))) ||
                (self_var != IR_NONE && base->var == self_var))
                continue;
            /* `hidden = model.repackage_hidden(hidden)`: a method another file's class defines
             * that returns no model output is no recurrent model */
            if (df_duck_method_plain(I, callee->name)) continue;
        } else if (callee->kind != IR_LOAD) {
            continue;
        }
        /* `t_h, t_m = divmod(t_m, 60)`: a builtin fed its own result is no model */
        if (f->vars.items[callee->var].is_global && api_builtin(f->vars.items[callee->var].name) != B_NONE) continue;
        /* nor is a helper defined beside the function (`x, pad = _pad(x, size)` in a decorator) */
        if (callee->kind == IR_LOAD && f->vars.items[callee->var].is_global && f->vars.items[callee->var].name &&
            df_closure_def(I->fx, f, f->vars.items[callee->var].name) != IR_NONE)
            continue;
        uint32_t stored[8], ns = df__call_stores(f, i, stored, ARRAY_LEN(stored));
        uint32_t ns0 = ns; /* (the direct stores, before what the iteration derives from them) */
        /* the arguments read from variables, and the variables of a tuple argument (`h, c =
         * decoder.step(x, (h, c))`) */
        uint32_t loads[16], nl = 0;
        for (uint32_t a = 0; a < o->nargs && nl < ARRAY_LEN(loads); a++) {
            uint32_t ao = f->args.items[o->args + a];
            const IrOp *arg = &f->ops.items[ao];
            if (arg->kind != IR_BUILD) loads[nl++] = ao;
            else
                for (uint32_t e = 0; e < arg->nargs && nl < ARRAY_LEN(loads); e++) loads[nl++] = f->args.items[arg->args + e];
        }
        /* ... and the variables the rest of the iteration computes from those (`ys = torch.cat([ys,
         * next_word])` after `_, next_word = torch.max(model.generator(out), 1)` and `out =
         * model.decode(memory, ys)`): an autoregressive decoder fed its own choices */
        uint32_t lend = f->loops.items[ir_op_loop(f, i)].end;
        for (uint32_t k = i + 1; k < lend && k < i + 256 && ns && ns < ARRAY_LEN(stored); k++) {
            const IrOp *st = &f->ops.items[k];
            if (st->kind != IR_STORE || st->var == IR_NONE || st->a == IR_NONE) continue;
            bool known = false;
            for (uint32_t q = 0; q < ns && !known; q++) known = stored[q] == st->var;
            if (!known && df_expr_reads(f, st->a, stored, ns)) stored[ns++] = st->var;
        }
        /* a callable whose result an environment's step is handed, through a chain of methods on it
         * (`action = policy_net(obs).detach().numpy()`, then `env.step(action)`): a policy applied
         * to observations in a rollout */
        if (callee->kind == IR_LOAD && ns0 && df__steps_env(f, i, lend, stored, ns0, callee->var))
            I->module_vars[callee->var] = 1;
        for (uint32_t a = 0; a < nl; a++) {
            const IrOp *arg = &f->ops.items[loads[a]];
            if (arg->kind != IR_LOAD || arg->var == IR_NONE || arg->var == callee->var) continue;
            /* an attribute called on what the iteration itself computed first (`out = self.conv(out)`
             * after `out = x`) is a layer applied once, not fed its previous result; so is any
             * callable given what the iteration computed afresh (`img = make_grid(img)` after `img =
             * G(z).detach()`: nothing of the previous iteration's img was read before), unlike a
             * state cut at the top of the iteration (`h = h.detach()`) */
            bool fresh = false, read = false;
            for (uint32_t k = f->loops.items[ir_op_loop(f, i)].op + 1; k < i && !fresh && (callee->kind == IR_ATTR || !read); k++) {
                const IrOp *ko = &f->ops.items[k];
                if (ko->var != arg->var) continue;
                if (ko->kind == IR_LOAD) read = true;
                fresh = ko->kind == IR_STORE && (callee->kind == IR_ATTR || !read);
            }
            for (uint32_t k = 0; k < ns && !fresh; k++)
                if (stored[k] == arg->var) I->module_vars[callee->var] = 1;
        }
    }
}

/* Is var a parameter of the function (`model` in `def train(model, loader)`), or an attribute of
 * self that is not one of the class's methods (`self.net`)? */
static bool df__passed_in(const Interp *I, uint32_t var, const uint8_t *is_param)
{
    const IrFunc *f = I->f;
    if (var >= I->nvars) return false;
    if (is_param[var]) return true;
    uint32_t base = f->vars.items[var].base;
    if (base == IR_NONE || base >= I->nvars || !is_param[base] || f->cls == IR_NONE) return false;
    const char *name = f->vars.items[var].name;
    const char *dot = name ? strrchr(name, '.') : NULL;
    return dot && ir_class_method(I->m, f->cls, dot + 1) == IR_NONE;
}

/* Is var the state a call's own result is fed back through (`logits, (h, c) = model(x, hidden)`
 * then `hidden = (h.detach(), c.detach())`)? Follows var's stores through tuples, unpacking,
 * items, unary ops and method receivers (bounded) back to the call. Such an argument says nothing
 * about what the loss is computed from: its first value (`hidden = model.init_hidden(b)`) is no
 * model. */
static bool df__fed_back(const IrFunc *f, uint32_t call, uint32_t var, const uint32_t *start, const uint32_t *stores,
                         uint32_t nvars)
{
    uint32_t stack[64], sp = 0, visits = 0;
    for (uint32_t k = start[var]; k < start[var + 1] && sp < ARRAY_LEN(stack); k++) stack[sp++] = stores[k];
    while (sp && visits++ < 128) {
        uint32_t op = stack[--sp];
        if (op == call) return true;
        if (op >= f->ops.len || op < call) continue; /* the fed-back value is made after the call */
        const IrOp *o = &f->ops.items[op];
        switch ((IrOpKind)o->kind) {
        case IR_LOAD:
            if (o->var < nvars)
                for (uint32_t k = start[o->var]; k < start[o->var + 1] && sp < ARRAY_LEN(stack); k++) stack[sp++] = stores[k];
            break;
        case IR_UNPACK: case IR_ITEM: case IR_UNOP: case IR_ATTR:
            if (o->a != IR_NONE && sp < ARRAY_LEN(stack)) stack[sp++] = o->a;
            break;
        case IR_BUILD:
            for (uint32_t k = 0; k < o->nargs && sp < ARRAY_LEN(stack); k++) stack[sp++] = f->args.items[o->args + k];
            break;
        case IR_CALL: {
            uint32_t recv = ir_call_receiver(f, op); /* h.detach(), h.clone() */
            if (recv != IR_NONE && sp < ARRAY_LEN(stack)) stack[sp++] = recv;
            break;
        }
        default:
            break;
        }
    }
    return false;
}

/* In a function that calls backward(): the value it differentiates carries a graph, so a passed-in
 * callable that it was computed from is a model (or a loss module): `outputs = model(**batch);
 * accelerator.backward(outputs.loss)` with `model` a parameter. Follows the value back through
 * stores, attributes, items, arithmetic, tensor methods and call arguments (bounded). */
static void df__prescan_backward_sources(Interp *I)
{
    const IrFunc *f = I->f;
    uint32_t n = f->ops.len;
    uint8_t *seen = gl_calloc(n ? n : 1, 1);
    uint8_t *unpacked = gl_calloc(n ? n : 1, 1); /* a call whose result was unpacked on the way */
    uint8_t *is_param = gl_calloc(I->nvars ? I->nvars : 1, 1);
    /* the stores of each variable, as one list per variable (start[v]..start[v+1] in stores) */
    uint32_t *start = gl_calloc(I->nvars + 1, sizeof *start);
    for (uint32_t i = 0; i < n; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_STORE || o->var >= I->nvars || o->a == IR_NONE) continue;
        if (f->ops.items[o->a].kind == IR_PARAM) is_param[o->var] = 1;
        start[o->var + 1]++;
    }
    for (uint32_t v = 0; v < I->nvars; v++) start[v + 1] += start[v];
    uint32_t *stores = gl_calloc(start[I->nvars] ? start[I->nvars] : 1, sizeof *stores);
    uint32_t *fill = gl_calloc(I->nvars ? I->nvars : 1, sizeof *fill);
    for (uint32_t i = 0; i < n; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_STORE && o->var < I->nvars && o->a != IR_NONE) stores[start[o->var] + fill[o->var]++] = o->a;
    }
    gl_free(fill);
    Array(uint32_t) work;
    array_init(&work);
#define DF_PUSH_WORK(x) do { if (work.len < 4096) array_push(&work, (x)); } while (0)
    for (uint32_t i = 0; i < n; i++) {
        /* a framework's training_step returns the loss the framework differentiates */
        if (I->ff->returns_loss && f->ops.items[i].kind == IR_RETURN && f->ops.items[i].a != IR_NONE)
            DF_PUSH_WORK(f->ops.items[i].a);
        if (!df_is_backward_call(f, i)) continue;
        const IrOp *o = &f->ops.items[i];
        uint32_t r = ir_call_receiver(f, i);
        if (o->nargs && !f->kw.items[o->args]) DF_PUSH_WORK(f->args.items[o->args]); /* x.backward(loss) */
        else if (r != IR_NONE) DF_PUSH_WORK(r);                                          /* loss.backward() */
    }
    for (uint32_t visits = 0; work.len && visits < 512; visits++) {
        uint32_t op = array_pop(&work);
        if (op >= n || seen[op]) continue;
        seen[op] = 1;
        const IrOp *o = &f->ops.items[op];
        switch ((IrOpKind)o->kind) {
        case IR_LOAD:
            if (o->var < I->nvars)
                for (uint32_t k = start[o->var]; k < start[o->var + 1]; k++) DF_PUSH_WORK(stores[k]);
            break;
        case IR_UNPACK:
            /* `loss, n_tokens, logs = criterion(...)`: which element carries the graph is unknown,
             * so the callable is not taken for a model; its arguments still are followed */
            if (o->a != IR_NONE) {
                unpacked[o->a] = 1;
                DF_PUSH_WORK(o->a);
            }
            break;
        case IR_STORE: case IR_ATTR: case IR_ITEM: case IR_UNOP:
            if (o->a != IR_NONE) DF_PUSH_WORK(o->a);
            break;
        case IR_BINOP: case IR_SELECT:
            if (o->a != IR_NONE) DF_PUSH_WORK(o->a);
            if (o->b != IR_NONE) DF_PUSH_WORK(o->b);
            break;
        case IR_BUILD:
            for (uint32_t k = 0; k < o->nargs; k++) DF_PUSH_WORK(f->args.items[o->args + k]);
            break;
        case IR_CALL: {
            if (o->a == IR_NONE) break;
            const IrOp *callee = &f->ops.items[o->a];
            uint32_t recv = ir_call_receiver(f, op);
            if ((callee->kind == IR_LOAD || callee->kind == IR_ATTR) && callee->var != IR_NONE &&
                df__passed_in(I, callee->var, is_param) && !unpacked[op])
                I->module_vars[callee->var] = 1;
            else if (recv != IR_NONE) {
                DF_PUSH_WORK(recv); /* a method of the value: out.sum(), scaler.scale(loss) */
                /* a method gradleak knows nothing of, on an object: `self.model.calculate_loss(b)` */
                const char *mname = ir_call_method(f, op);
                if (mname && !api_method(mname).flags && !api_method(mname).effect) I->bw_calls[op] |= 1;
            }
            for (uint32_t k = 0; k < o->nargs; k++) {
                if (f->kw.items[o->args + k]) continue;
                uint32_t arg = f->args.items[o->args + k];
                const IrOp *ao = &f->ops.items[arg];
                if (ao->kind == IR_LOAD && ao->var < I->nvars && df__fed_back(f, op, ao->var, start, stores, I->nvars))
                    continue;
                DF_PUSH_WORK(arg);
            }
            break;
        }
        default:
            break;
        }
    }
#undef DF_PUSH_WORK
    array_free(&work);
    gl_free(stores);
    gl_free(start);
    gl_free(is_param);
    gl_free(unpacked);
    gl_free(seen);
}

/* Variables bound only to what torch.load returns (or an item of it: `torch.load(path)["model"]`)
 * and to their own moves (`model = model.cuda()`), and called, or given a method call that torch
 * does not define: a pickled model (a tensor or a state dict is not callable). */
static void df__mark_unpickled(Interp *I)
{
    const IrFunc *f = I->f;
    uint32_t nv = I->nvars;
    static const char *const moves[] = {"cuda", "cpu", "to", "eval", "float", "half", "double"};
    uint8_t *state = gl_calloc(nv ? nv : 1, 1); /* 1: loaded, 2: bound to something else */
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_STORE || o->var >= nv || o->a == IR_NONE) continue;
        uint32_t a = o->a;
        const IrOp *v = &f->ops.items[a];
        const char *m = v->kind == IR_CALL ? ir_call_method(f, a) : NULL;
        uint32_t r = m ? ir_call_receiver(f, a) : IR_NONE;
        bool move = false;
        for (size_t k = 0; m && k < ARRAY_LEN(moves) && !move; k++) move = !strcmp(m, moves[k]);
        if (move && r != IR_NONE && f->ops.items[r].kind == IR_LOAD && f->ops.items[r].var == o->var) continue;
        for (int d = 0; d < 4 && (v->kind == IR_ITEM || v->kind == IR_ATTR) && v->a != IR_NONE; d++) v = &f->ops.items[v->a];
        if (v->kind == IR_CALL && api_function(v->qual) == EFF_UNPICKLE && state[o->var] != 2) state[o->var] = 1;
        else state[o->var] = 2;
    }
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || o->a == IR_NONE) continue;
        const IrOp *callee = &f->ops.items[o->a];
        if (callee->kind == IR_LOAD && callee->var < nv && state[callee->var] == 1) I->module_vars[callee->var] = 1;
        /* (or has a method called that neither a tensor nor a dict has: `net.select_action(s)`) */
        const char *m = ir_call_method(f, i);
        uint32_t r = m ? ir_call_receiver(f, i) : IR_NONE;
        const IrOp *ro = r != IR_NONE ? &f->ops.items[r] : NULL;
        if (ro && ro->kind == IR_LOAD && ro->var < nv && state[ro->var] == 1 && m[0] != '_' && !api_method_listed(m) &&
            !api_method(m).flags && api_method(m).effect == EFF_NONE)
            I->module_vars[ro->var] = 1;
    }
    gl_free(state);
}

/* A passed-in callable applied to a batch that the loop moved to a device (`out = model(x)` after
 * `x = x.to(device)`, `model(x.cuda())`, `model(**batch)` after `batch = {k: v.to(device) ...}`)
 * is a model: an evaluation function that takes the model as a parameter and never calls eval(),
 * no_grad or backward has no other evidence. Only the first argument counts, so a loss function
 * called as `criterion(out, y.to(device))` is not taken for a model. */
static void df__prescan_batch_calls(Interp *I)
{
    const IrFunc *f = I->f;
    uint32_t n = f->ops.len, nv = I->nvars;
    if (!n) return;
    bool iterates = false; /* for loops and comprehensions */
    for (uint32_t i = 0; i < n && !iterates; i++) iterates = f->ops.items[i].kind == IR_NEXT;
    if (!iterates) return;
    uint8_t *is_param = gl_calloc(nv ? nv : 1, 1);
    for (uint32_t i = 0; i < n; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_STORE && o->var < nv && o->a != IR_NONE && f->ops.items[o->a].kind == IR_PARAM) is_param[o->var] = 1;
    }

    /* every iteration of the function at once (before the analysis: nothing is known unreached) */
    DfYield y;
    df_yield_init(&y, f);
    df_yield_moved(&y, f, IR_NONE, n, NULL);
    for (uint32_t op = 0; op < n; op++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind != IR_CALL || !o->nargs || o->a == IR_NONE || !y.dev[f->args.items[o->args]] || y.dev[op]) continue;
        const IrOp *callee = &f->ops.items[o->a];
        if ((callee->kind == IR_LOAD || callee->kind == IR_ATTR) && callee->var != IR_NONE &&
            df__passed_in(I, callee->var, is_param))
            I->module_vars[callee->var] = 1;
        /* a method torch does not define, of a parameter, given the batch
         * (`model.greedy_decode(src.cuda(), n)` of a model class the file never names) */
        else if (callee->kind == IR_ATTR && callee->var != IR_NONE && callee->var < nv && callee->a != IR_NONE &&
                 f->ops.items[callee->a].kind == IR_LOAD && f->ops.items[callee->a].var < nv &&
                 is_param[f->ops.items[callee->a].var] && callee->name && !api_method(callee->name).flags &&
                 !api_method(callee->name).effect && !df_duck_method_plain(I, callee->name) &&
                 /* (a class of the file that defines it answers for the call) */
                 strmap_get(&I->fx->method_names, callee->name, strlen(callee->name)) == UINT32_MAX)
            I->module_vars[callee->var] = 1;
    }
    df_yield_free(&y);
    gl_free(is_param);
}

/* Does f call torch (`torch.multinomial`, `F.softmax`), or a tensor method that samples or picks
 * tokens (`.argmax()`, `.topk()`, `.multinomial()`, `.softmax()`)? With m, a method of f's own
 * class that does counts too (`i = self.sample_token(outs[-1])`), one level down. */
static bool df__works_on_tensors(const IrModule *m, const IrFunc *f)
{
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL) continue;
        if (api_is_torch(o->qual)) return true;
        const char *mn = ir_call_method(f, i);
        if (mn && (api_method(mn).flags & M_PICKS)) return true;
        uint32_t r = mn && m && f->cls != IR_NONE && f->nparams ? ir_call_receiver(f, i) : IR_NONE;
        uint32_t g = r != IR_NONE && f->ops.items[r].kind == IR_LOAD && f->ops.items[r].var == ir_first_param(f)
                         ? ir_class_method(m, f->cls, mn)
                         : IR_NONE;
        if (g != IR_NONE && g != f->index && df__works_on_tensors(NULL, m->funcs.items[g])) return true;
    }
    return false;
}

void df_prescan(Interp *I)
{
    const IrFunc *f = I->f;
    df__mark_unpickled(I);
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL) continue;
        const char *m = ir_call_method(f, i);
        uint32_t recv = ir_call_receiver(f, i);
        uint32_t var = recv != IR_NONE ? f->ops.items[recv].var : IR_NONE;
        if (!m || var == IR_NONE) continue;
        if (f->ops.items[recv].kind != IR_LOAD && f->ops.items[recv].kind != IR_ATTR) continue;
        uint32_t fl = api_method(m).flags;
        /* `loss.backward()`: no gradient given (C++ lowers its default arguments as unnamed
         * constants: `loss.backward()` there has four) */
        const IrOp *grad = o->nargs && !f->kw.items[o->args] ? &f->ops.items[f->args.items[o->args]] : NULL;
        bool no_gradient = grad && grad->kind == IR_CONST && grad->aux == CONST_OTHER && !grad->name;
        if ((fl & M_BACKWARD) && (o->nargs == 0 || no_gradient)) I->backward_vars[var] = 1, I->backward_last[var] = i;
        if (fl & M_BACKWARD) I->backward_vars[var] |= 2;
        /* (a forward given no input is a data layer's, not a module's) */
        if ((fl & (M_MODULE_ONLY | M_STATE)) && !((fl & M_CALLS_MODEL) && o->nargs == 0)) I->module_vars[var] = 1;
        if (fl & M_ZERO_GRAD) I->ff->calls_zero_grad = 1, I->optim_vars[var] |= 1;
        if (fl & M_STEP) I->optim_vars[var] |= 2;
    }
    bool trains = false;
    for (uint32_t v = 0; v < I->nvars && !trains; v++) trains = I->backward_vars[v] != 0;
    /* `(total / n).backward()`, `accelerator.backward(loss)`: a backward on an expression */
    for (uint32_t i = 0; i < f->ops.len && !trains; i++) trains = df_is_backward_call(f, i);
    for (uint32_t v = 0; v < I->nvars; v++)
        if (I->backward_vars[v] & 1) I->backward_vars[v] = 1;
        else I->backward_vars[v] = 0;
    if (trains || I->ff->returns_loss) {
        df__prescan_feedback_calls(I);
        df__prescan_backward_sources(I);
    } else if (df__works_on_tensors(I->m, f)) {
        /* a sampling function (`out, h = model(x, h)` with model a parameter) differentiates
         * nothing; a callable fed its own result there is a model when the function calls torch or
         * picks tokens from tensors, not when it iterates plain Python (`x = f(x)`) */
        df__prescan_feedback_calls(I);
    }
    df__prescan_batch_calls(I);
    df__prescan_policy_methods(I);
}
