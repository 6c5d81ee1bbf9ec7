/* What a method keeps of its arguments, and the summaries C++ functions export under their C++ names
 * (cross-file summaries for C++: docs/cxx.md, "Across files"). Queries over the facts of one file,
 * beside the analysis in dataflow.c. */
#include <string.h>
#include "ir/dataflow_int.h"

/* Is op `self.<attr>` (an attribute of method f's first parameter)? Its name, else NULL. */
static const char *df__self_attr(const IrFunc *f, uint32_t op, uint32_t self_var)
{
    if (op == IR_NONE || op >= f->ops.len) return NULL;
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_ATTR || o->a == IR_NONE || !o->name) return NULL;
    const IrOp *b = &f->ops.items[o->a];
    return b->kind == IR_LOAD && b->var == self_var ? o->name : NULL;
}

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

void df_method_keeps(const Facts *fx, uint32_t fi, uint8_t *acc, uint8_t *coll, uint32_t *acc_at, uint32_t *coll_at)
{
    *acc = *coll = 0;
    *acc_at = *coll_at = IR_NONE;
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len) return;
    const IrFunc *f = m->funcs.items[fi];
    const FuncFacts *ff = &fx->funcs[fi];
    uint32_t self_op = ir_first_param(f);
    if (!ff->analysed || f->cls == IR_NONE || self_op == IR_NONE) return;
    uint32_t self_var = f->ops.items[self_op].var;
    /* parameters rebound in the method (`v = v.item()`) are not what reaches the member */
    uint16_t rebound = 0;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_STORE || o->var >= f->vars.len || !f->vars.items[o->var].is_param) continue;
        if (o->a != IR_NONE && f->ops.items[o->a].kind == IR_PARAM) continue;
        for (uint32_t k = 0; k < f->ops.len; k++)
            if (f->ops.items[k].kind == IR_PARAM && f->ops.items[k].var == o->var && f->ops.items[k].aux < 16)
                rebound |= (uint16_t)(1u << f->ops.items[k].aux);
    }
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (!ff->reached[i]) continue;
        if (o->kind == IR_SET_ATTR && o->b != IR_NONE && o->a != IR_NONE) {
            /* self.x = <binop on self.x and a parameter>: `sum_ += v`, `sum_ = sum_ + v` */
            const IrOp *v = &f->ops.items[o->b];
            const IrOp *base = &f->ops.items[o->a];
            if (base->kind != IR_LOAD || base->var != self_var || v->kind != IR_BINOP || v->b == IR_NONE) continue;
            const char *lhs = df__self_attr(f, v->a, self_var);
            if (!lhs || !o->name || strcmp(lhs, o->name) != 0) continue;
            uint16_t pm = (uint16_t)(ff->val[v->b].pmask & ~rebound);
            if (ff->val[v->b].kind == VK_CONTAINER || ff->val[v->b].kind == VK_SCALAR) continue;
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
            into = df__self_attr(f, df__view_base(f, o->a), self_var);
            into_val = o->c;
        } else if (o->kind == IR_CALL && ir_call_method(f, i) && o->nargs) {
            const char *mn = ir_call_method(f, i);
            if (!strcmp(mn, "copy_") || !strcmp(mn, "index_put_") || !strcmp(mn, "index_copy_") ||
                !strcmp(mn, "masked_scatter_") || !strcmp(mn, "index_add_")) {
                into = df__self_attr(f, df__view_base(f, ir_call_receiver(f, i)), self_var);
                into_val = f->args.items[o->args + o->nargs - 1];
            }
        }
        if (into && (ff->val[into_val].kind != VK_SCALAR)) {
            uint16_t pm = (uint16_t)(ff->val[into_val].pmask & ~rebound);
            for (uint32_t k = 1; k < 9; k++)
                if (pm & (1u << k)) {
                    *coll |= (uint8_t)(1u << (k - 1));
                    if (*coll_at == IR_NONE) *coll_at = i;
                }
            continue;
        }
        if (o->kind != IR_CALL) continue;
        const char *mname = ir_call_method(f, i);
        const char *attr = mname ? df__self_attr(f, ir_call_receiver(f, i), self_var) : NULL;
        if (!attr || (strcmp(mname, "append") && strcmp(mname, "extend") && strcmp(mname, "insert"))) continue;
        /* started again in the method (`items_.clear()`, `items_ = {}`): bounded per call */
        bool reset = false;
        for (uint32_t k = 0; k < f->ops.len && !reset; k++) {
            const IrOp *q = &f->ops.items[k];
            if (!ff->reached[k]) continue;
            if (q->kind == IR_SET_ATTR && q->name && !strcmp(q->name, attr) && q->a != IR_NONE &&
                f->ops.items[q->a].kind == IR_LOAD && f->ops.items[q->a].var == self_var)
                reset = true;
            const char *qm = q->kind == IR_CALL ? ir_call_method(f, k) : NULL;
            const char *qa = qm ? df__self_attr(f, ir_call_receiver(f, k), self_var) : NULL;
            if (qa && !strcmp(qa, attr) && (!strcmp(qm, "clear") || !strcmp(qm, "pop") || !strcmp(qm, "resize")))
                reset = true;
        }
        if (reset) continue;
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
}

bool df_export_cxx(const Facts *fx, uint32_t fi, ExternSummary *out)
{
    const IrModule *m = fx->m;
    if (fi >= m->funcs.len || !m->funcs.items[fi]->cxx_key) return false;
    const FuncFacts *ff = &fx->funcs[fi];
    if (!ff->analysed) return false;
    memset(out, 0, sizeof *out);
    if (!(ff->ret.flags & VF_UNSET)) {
        out->kind = ff->ret.kind;
        out->grad = ff->ret.grad;
        out->elem = ff->ret.elem;
        out->flags = ff->ret.flags & (VF_ZERO_DIM | VF_MODEL_OUT | VF_LOSSMOD | VF_NOREDUCE);
        out->pmask = ff->ret.pmask;
        out->cmask = ff->ret.cmask;
    }
    out->nparams = (uint8_t)GL_MIN(m->funcs.items[fi]->nparams, 255);
    out->trains = ff->trains != 0;
    uint32_t a1, a2;
    df_method_keeps(fx, fi, &out->keep_acc, &out->keep_coll, &a1, &a2);
    return true;
}

const ExternSummary *df_call_extern(const Facts *fx, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_CALL || o->a == IR_NONE || !fx->ext) return NULL;
    const char *q = f->ops.items[o->a].qual;
    return q && q[0] == ':' ? fx->ext(fx->ext_ctx, q) : NULL;
}
