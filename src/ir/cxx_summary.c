/* What a method keeps of its arguments, the summaries C++ functions export under their C++ names
 * (cross-file summaries for C++: docs/cxx.md, "Across files") and those Python methods of top-level
 * classes export under "Class#method" (an object of an imported class: `meter.add(loss)`). Queries
 * over the facts of one file, beside the analysis in dataflow.c. */
#include <stdio.h>
#include <string.h>
#include "base/strmap.h"
#include "ir/dataflow_int.h"

/* The tensor a view is taken of: `buf_.select(1, i)`, `buf_[i]`, `buf_.narrow(...)` -> `buf_`. */
static uint32_t df__view_base(const IrFunc *f, uint32_t op)
{
    for (int guard = 0; guard < 8 && op != IR_NONE && op < f->ops.len; guard++) {
        const IrOp *o = &f->ops.items[op];
        if (o->kind == IR_ITEM) { op = o->a; continue; }
        const char *m = o->kind == IR_CALL ? ir_call_method(f, op) : NULL;
        if (m && (!strcmp(m, "select") || !strcmp(m, "narrow") || !strcmp(m, "slice") || !strcmp(m, "index") ||
                  !strcmp(m, "view") || !strcmp(m, "reshape") || !strcmp(m, "flatten") || !strcmp(m, "squeeze") ||
                  !strcmp(m, "unsqueeze") || !strcmp(m, "transpose") || !strcmp(m, "diagonal"))) {
            op = ir_call_receiver(f, op);
            continue;
        }
        break;
    }
    return op;
}

/* The attribute of self that op of g starts again (`self.items = ...`, `self.items.clear()`,
 * `.pop()`, with resize also `.resize()`), or NULL. */
static const char *df__restarted_attr(const IrFunc *g, uint32_t op, uint32_t self_var, bool resize)
{
    const IrOp *q = &g->ops.items[op];
    if (q->kind == IR_SET_ATTR && q->name && q->a != IR_NONE && g->ops.items[q->a].kind == IR_LOAD &&
        g->ops.items[q->a].var == self_var)
        return q->name;
    const char *qm = q->kind == IR_CALL ? ir_call_method(g, op) : NULL;
    const char *qa = qm ? ir_self_attr(g, ir_call_receiver(g, op), self_var) : NULL;
    if (qa && (!strcmp(qm, "clear") || !strcmp(qm, "pop") || (resize && !strcmp(qm, "resize")))) return qa;
    return NULL;
}

/* The attributes that methods of class ci divide by (`self.sum / self.count`, `/ max(self.n, 1)`),
 * into *out. */
static void df__denominators(const IrModule *m, uint32_t ci, StrMap *out)
{
    if (ci >= m->classes.len) return;
    const IrClass *c = m->classes.items[ci];
    for (uint32_t k = 0; k < c->methods.len; k++) {
        const IrFunc *g = m->funcs.items[c->methods.items[k]];
        uint32_t self_var = ir_first_param(g);
        if (self_var == IR_NONE) continue;
        for (uint32_t i = 0; i < g->ops.len; i++) {
            const IrOp *o = &g->ops.items[i];
            if (o->kind != IR_BINOP || (o->aux != BIN_DIV && o->aux != BIN_FLOORDIV) || o->b == IR_NONE) continue;
            const char *d = ir_self_attr(g, o->b, self_var);
            const IrOp *den = &g->ops.items[o->b];
            for (uint32_t a = 0; !d && den->kind == IR_CALL && a < den->nargs; a++) /* max(self.n, 1) */
                d = ir_self_attr(g, g->args.items[den->args + a], self_var);
            if (d) strmap_put(out, d, strlen(d), 1);
        }
    }
}

void df_method_keeps(const Facts *fx, uint32_t fi, uint8_t *acc, uint8_t *coll, uint32_t *acc_at, uint32_t *coll_at)
{
    *acc = *coll = 0;
    *acc_at = *coll_at = IR_NONE;
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len) return;
    const IrFunc *f = m->funcs.items[fi];
    const FuncFacts *ff = &fx->funcs[fi];
    uint32_t self_var = ir_first_param(f);
    if (!ff->analysed || f->cls == IR_NONE || self_var == IR_NONE) return;
    /* parameters rebound in the method (`v = v.item()`) are not what reaches the member */
    uint16_t rebound = 0;
    uint32_t pvar[16]; /* the variable of parameter k */
    for (uint32_t k = 0; k < 16; k++) pvar[k] = IR_NONE;
    for (uint32_t i = 0; i < f->ops.len; i++)
        if (f->ops.items[i].kind == IR_PARAM && f->ops.items[i].aux < 16) pvar[f->ops.items[i].aux] = f->ops.items[i].var;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_STORE || o->var >= f->vars.len || !f->vars.items[o->var].is_param) continue;
        if (o->a != IR_NONE && f->ops.items[o->a].kind == IR_PARAM) continue;
        for (uint32_t k = 0; k < 16; k++)
            if (pvar[k] == o->var) rebound |= (uint16_t)(1u << k);
    }
    StrMap resets; /* attributes the method starts again (found on the first append) */
    strmap_init(&resets);
    StrMap denoms; /* attributes some method of the class divides by (found on the first sum) */
    strmap_init(&denoms);
    bool denoms_done = false;
    uint16_t counts = 0; /* parameters added into such an attribute: counts, not values */
    bool resets_done = false;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (!ff->reached[i]) continue;
        if (o->kind == IR_SET_ATTR && o->b != IR_NONE && o->a != IR_NONE) {
            /* self.x = <binop on self.x and a parameter>: `sum_ += v`, `sum_ = sum_ + v` */
            const IrOp *v = &f->ops.items[o->b];
            const IrOp *base = &f->ops.items[o->a];
            if (base->kind != IR_LOAD || base->var != self_var || v->kind != IR_BINOP || v->b == IR_NONE) continue;
            const char *lhs = ir_self_attr(f, v->a, self_var);
            if (!lhs || !o->name || strcmp(lhs, o->name) != 0) continue;
            uint16_t pm = (uint16_t)(ff->val[v->b].pmask & ~rebound);
            if (ff->val[v->b].kind == VK_CONTAINER || ff->val[v->b].kind == VK_SCALAR) continue;
            if (!denoms_done) denoms_done = true, df__denominators(m, f->cls, &denoms);
            if (strmap_get(&denoms, o->name, strlen(o->name)) != UINT32_MAX) {
                counts |= pm; /* `self.count += n` where the class divides by self.count: n is a count */
                continue;
            }
            for (uint32_t k = 1; k < 9; k++)
                if (pm & (1u << k)) {
                    *acc |= (uint8_t)(1u << (k - 1));
                    if (*acc_at == IR_NONE) *acc_at = i;
                }
            continue;
        }
        /* written into a member tensor: `buf_[i] = v`, `buf_.index_put_({i}, v)`,
         * `buf_.select(1, i).copy_(v)`: the member's graph then holds v's */
        const char *into = NULL;
        uint32_t into_val = IR_NONE;
        if (o->kind == IR_SET_ITEM && o->a != IR_NONE && o->c != IR_NONE) {
            into = ir_self_attr(f, df__view_base(f, o->a), self_var);
            into_val = o->c;
        } else if (o->kind == IR_CALL && ir_call_method(f, i) && o->nargs) {
            const char *mn = ir_call_method(f, i);
            if (!strcmp(mn, "copy_") || !strcmp(mn, "index_put_") || !strcmp(mn, "index_copy_") ||
                !strcmp(mn, "masked_scatter_") || !strcmp(mn, "index_add_")) {
                into = ir_self_attr(f, df__view_base(f, ir_call_receiver(f, i)), self_var);
                into_val = f->args.items[o->args + o->nargs - 1];
            }
        }
        if (into && (ff->val[into_val].kind != VK_SCALAR)) {
            /* `self.sums[i] += v`: a sum kept in an element of the member, not a store */
            uint32_t added = ir_element_sum(f, i, self_var);
            uint16_t pm = (uint16_t)(ff->val[added != IR_NONE ? added : into_val].pmask & ~rebound);
            for (uint32_t k = 1; k < 9; k++)
                if (pm & (1u << k)) {
                    if (added != IR_NONE) {
                        *acc |= (uint8_t)(1u << (k - 1));
                        if (*acc_at == IR_NONE) *acc_at = i;
                    } else {
                        *coll |= (uint8_t)(1u << (k - 1));
                        if (*coll_at == IR_NONE) *coll_at = i;
                    }
                }
            continue;
        }
        if (o->kind != IR_CALL) continue;
        const char *mname = ir_call_method(f, i);
        const char *attr = mname ? ir_self_attr(f, ir_call_receiver(f, i), self_var) : NULL;
        if (!attr || (strcmp(mname, "append") && strcmp(mname, "extend") && strcmp(mname, "insert"))) continue;
        /* started again in the method (`items_.clear()`, `items_ = {}`): bounded per call */
        if (!resets_done) {
            resets_done = true;
            for (uint32_t k = 0; k < f->ops.len; k++) {
                const char *ra = ff->reached[k] ? df__restarted_attr(f, k, self_var, true) : NULL;
                if (ra) strmap_put(&resets, ra, strlen(ra), 1);
            }
        }
        if (strmap_get(&resets, attr, strlen(attr)) != UINT32_MAX) continue;
        for (uint32_t a = 0; a < o->nargs; a++) {
            if (f->kw.items[o->args + a]) continue;
            const AVal *av = &ff->val[f->args.items[o->args + a]];
            if (av->kind == VK_SCALAR) continue;
            uint16_t pm = (uint16_t)(av->pmask & ~rebound);
            for (uint32_t k = 1; k < 9; k++)
                if (pm & (1u << k)) {
                    *coll |= (uint8_t)(1u << (k - 1));
                    if (*coll_at == IR_NONE) *coll_at = i;
                }
        }
    }
    strmap_free(&resets);
    strmap_free(&denoms);
    /* the weight of a weighted mean (`self.sum += val * n; self.count += n`) is a count: passing
     * `len(batch)` or a size is no graph kept, whatever its value looks like */
    for (uint32_t k = 1; k < 9; k++)
        if (counts & (1u << k)) *acc &= (uint8_t)~(1u << (k - 1));
}

bool df_export_cxx(const Facts *fx, uint32_t fi, ExternSummary *out)
{
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len || !m->funcs.items[fi]->cxx_key) return false;
    const FuncFacts *ff = &fx->funcs[fi];
    if (!ff->analysed) return false;
    df_summary_of(fx, fi, out);
    out->trains = ff->trains != 0;
    uint32_t a1, a2;
    df_method_keeps(fx, fi, &out->keep_acc, &out->keep_coll, &a1, &a2);
    return true;
}

/* Does some method of class ci other than __init__ start attribute attr again (`self.items = []`,
 * `self.items.clear()`)? Then what its methods append to it is bounded by
 * how often the caller starts it again (a rollout buffer cleared after each update). */
static bool df__attr_restarted(const IrModule *m, uint32_t ci, const char *attr)
{
    const IrClass *c = m->classes.items[ci];
    for (uint32_t k = 0; k < c->methods.len; k++) {
        uint32_t gi = c->methods.items[k];
        if (gi == c->init) continue;
        const IrFunc *g = m->funcs.items[gi];
        uint32_t self_var = ir_first_param(g);
        if (self_var == IR_NONE) continue;
        for (uint32_t i = 0; i < g->ops.len; i++) {
            const char *ra = df__restarted_attr(g, i, self_var, false);
            if (ra && !strcmp(ra, attr)) return true;
        }
    }
    return false;
}

bool df_export_method(const Facts *fx, uint32_t fi, ExternSummary *out, const char **name)
{
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len) return false;
    const IrFunc *f = m->funcs.items[fi];
    const FuncFacts *ff = &fx->funcs[fi];
    if (f->cxx_key || f->cls == IR_NONE || f->cls >= m->classes.len || f->parent != 0 || f->is_lambda ||
        !ff->analysed)
        return false;
    const IrClass *c = m->classes.items[f->cls];
    df_summary_of(fx, fi, out);
    if (ff->ret.flags & VF_UNSET) out->kind = VK_NONE; /* returns nothing */
    out->trains = ff->trains; /* runner.train_step(x, y): a loop that calls it is a step loop */
    out->evaluates = df_func_evaluates(fx, fi); /* model.predict(u): a loop that calls it evaluates */
    out->backprops = !ff->trains && df_func_backprops(fx, fi); /* trainer.fit_epoch(loader) */
    uint32_t acc_at, coll_at;
    df_method_keeps(fx, fi, &out->keep_acc, &out->keep_coll, &acc_at, &coll_at);
    if (out->keep_coll && coll_at != IR_NONE) {
        /* appended to an attribute another method empties: bounded by the caller's rhythm */
        const IrOp *o = &f->ops.items[coll_at];
        uint32_t self_var = ir_first_param(f);
        const char *attr = NULL;
        if (o->kind == IR_CALL) attr = ir_self_attr(f, df__view_base(f, ir_call_receiver(f, coll_at)), self_var);
        else if (o->kind == IR_SET_ITEM) attr = ir_self_attr(f, df__view_base(f, o->a), self_var);
        if (!attr || df__attr_restarted(m, f->cls, attr)) out->keep_coll = 0;
    }
    *name = arena_printf(m->arena, "%s#%s", c->name, f->name);
    return true;
}

const char *df_method_qual(const Facts *fx, const AVal *v, const char *method, char *buf, size_t cap)
{
    if (!method || (v->kind != VK_OBJECT && v->kind != VK_UNKNOWN && v->kind != VK_MODULE)) return NULL;
    if (!REF_IS_EXTERN(v->ref)) {
        /* an object whose class nothing names (a parameter, `self.model` set from one): a method
         * no API knows (`model.predict(u)`, `net.repackage_hidden(h)`) is looked up by its name
         * alone, "#predict", and found only when every class of the run that defines it agrees */
        /* (an object of a class nothing names, as where the classes of several branches join:
         * `policy = TD3.TD3(...)` or `policy = DDPG.DDPG(...)`, is looked up the same way) */
        if (v->ref != IR_NONE || fx->cxx) return NULL;
        if (api_method_listed(method) || method[0] == '_') return NULL;
        int n = snprintf(buf, cap, "#%s", method);
        return n > 0 && (size_t)n < cap ? buf : NULL;
    }
    uint32_t k = REF_EXTERN_INDEX(v->ref);
    if (k >= fx->ext_classes.len) return NULL;
    int n = snprintf(buf, cap, "%s#%s", fx->ext_classes.items[k], method);
    return n > 0 && (size_t)n < cap ? buf : NULL;
}

const char *df_listed_duck_qual(const Facts *fx, const AVal *v, const char *method, char *buf, size_t cap)
{
    if (!method || REF_IS_EXTERN(v->ref) || v->ref != IR_NONE || fx->cxx || method[0] == '_' ||
        (v->kind != VK_UNKNOWN && v->kind != VK_MODULE && v->kind != VK_OBJECT) || !api_method_listed(method))
        return NULL;
    int n = snprintf(buf, cap, "#%s", method);
    return n > 0 && (size_t)n < cap ? buf : NULL;
}

const ExternSummary *df_call_extern_listed(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    uint32_t r = o->kind == IR_CALL ? ir_call_receiver(f, op) : IR_NONE;
    if (r == IR_NONE || !fx->ext || f->ops.items[o->a].qual) return NULL;
    char buf[256];
    return df_ext(fx, df_listed_duck_qual(fx, &fx->funcs[f->index].val[r], ir_call_method(f, op), buf, sizeof buf));
}

const char *df_star_alternative(const IrModule *m, const char *qual, uint32_t k, char *buf, size_t cap)
{
    if (!qual || m->star_imports.len < 2 || k + 1 >= m->star_imports.len) return NULL;
    const char *last = m->star_imports.items[m->star_imports.len - 1];
    size_t n = strlen(last);
    if (strncmp(qual, last, n) != 0 || qual[n] != '.') return NULL;
    int w = snprintf(buf, cap, "%s%s", m->star_imports.items[k], qual + n);
    return w > 0 && (size_t)w < cap ? buf : NULL;
}

const ExternSummary *df_ext(const Facts *fx, const char *qual)
{
    if (!fx->ext || !qual) return NULL;
    const ExternSummary *s = fx->ext(fx->ext_ctx, qual);
    char buf[512];
    for (uint32_t k = fx->m->star_imports.len - 1, tries = 0; !s && k-- > 0 && tries++ < 8;) {
        const char *alt = df_star_alternative(fx->m, qual, k, buf, sizeof buf);
        if (!alt) break;
        s = fx->ext(fx->ext_ctx, alt);
    }
    return s;
}

const ExternSummary *df_call_extern(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL || o->a == IR_NONE || !fx->ext) return NULL;
    const char *q = f->ops.items[o->a].qual;
    if (q && q[0] == ':') return df_ext(fx, q);
    if (q && fx->funcs[f->index].val[o->a].kind == VK_MODREF && !api_is_torch(q)) return df_ext(fx, q);
    uint32_t r = ir_call_receiver(f, op);
    char buf[256];
    const char *mq = r != IR_NONE ? df_method_qual(fx, &fx->funcs[f->index].val[r], ir_call_method(f, op), buf, sizeof buf)
                                  : NULL;
    /* calling an object of another file's class runs its __call__ */
    const AVal *cv = &fx->funcs[f->index].val[o->a];
    if (r == IR_NONE && cv->kind == VK_OBJECT && REF_IS_EXTERN(cv->ref))
        mq = df_method_qual(fx, cv, api_name(PY_NAME_CALL), buf, sizeof buf);
    return df_ext(fx, mq);
}

const char *df_call_extern_name(const Facts *fx, const IrFunc *f, uint32_t op, char *buf, size_t cap)
{
    const IrOp *o = &f->ops.items[op];
    const char *q = o->a != IR_NONE ? f->ops.items[o->a].qual : NULL;
    if (q && q[0] == ':') return q + 2;
    uint32_t r = ir_call_receiver(f, op);
    const char *mq = r != IR_NONE ? df_method_qual(fx, &fx->funcs[f->index].val[r], ir_call_method(f, op), buf, cap) : NULL;
    if (!mq) return "?";
    if (buf[0] == '#') return buf + 1; /* a method of an object of unknown class: its name alone */
    char *hash = strchr(buf, '#');
    if (hash) *hash = '.';
    const char *dot = hash; /* the class's own name, not its module's */
    while (dot > buf && dot[-1] != '.') dot--;
    return dot ? dot : buf;
}
