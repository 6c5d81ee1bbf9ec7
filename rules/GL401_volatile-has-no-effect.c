/* GL401 volatile-has-no-effect: `Variable(..., volatile=...)` is ignored since PyTorch 0.4.
 *
 * ## What it does
 * Flags every `Variable(...)` (`torch.autograd.Variable`, `autograd.Variable`) call that passes
 * the `volatile` keyword, also through a wrapper lambda that forwards its keywords to it
 * (`Variable = lambda *args, **kwargs: autograd.Variable(*args, **kwargs).cuda()`, the usual way
 * old notebooks moved every Variable to the GPU), or through a class of the file built on torch's
 * (`class Variable(autograd.Variable)` whose `__init__` moves the data and passes the rest on).
 * Also the attribute form on a tensor or Variable: `x.volatile = True` (not an object's own
 * `self.volatile`). Not `volatile=False`: that spells out the old default, a graph the code wants.
 *
 * ## Why is this bad?
 * `volatile=True` was how pre-0.4 code switched off graph construction for inference. Since
 * PyTorch 0.4 the flag is ignored (with a warning), so the graph IS built: code ported from old
 * tutorials that relies on it keeps every sampling step's graph alive and runs out of memory.
 *
 * ## Example
 * ```python
 * x = Variable(seed.view(1, 1, -1), volatile=True)
 * out, hidden = model(x, hidden)
 * ```
 *
 * Use instead:
 * ```python
 * with torch.no_grad():
 *     out, hidden = model(seed.view(1, 1, -1), hidden)
 * ```
 *
 * ## Fix safety
 * No automatic fix: the `no_grad` block has to cover the code that used the volatile variable.
 *
 * ## References
 * - https://pytorch.org/blog/pytorch-0_4_0-migration-guide/
 */
#include "rules/rule.h"

/* What the callee of call op is bound to when that is a wrapper lambda that forwards its keywords
 * (`Variable = lambda *a, **kw: autograd.Variable(*a, **kw).cuda()`): the forwarded call's name
 * (the lambda's qual, set by the front end), from the binding in f or, for a global, in the
 * module; NULL otherwise. */
static const char *forwarded_callee(const RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    if (o->a == IR_NONE || f->ops.items[o->a].kind != IR_LOAD) return NULL;
    uint32_t var = f->ops.items[o->a].var;
    if (var >= f->vars.len) return NULL;
    const IrFunc *g = f;
    if (f->vars.items[var].is_global && f->index != 0) {
        g = c->m->funcs.items[0];
        const char *name = f->vars.items[var].name;
        var = strmap_get(&g->var_index, name, strlen(name));
        if (var == UINT32_MAX) return NULL;
    }
    const char *q = NULL;
    for (uint32_t i = 0; i < g->ops.len; i++) {
        const IrOp *s = &g->ops.items[i];
        if (s->kind != IR_STORE || s->var != var || s->a == IR_NONE) continue;
        const IrOp *v = &g->ops.items[s->a];
        q = v->kind == IR_CONST && v->aux == CONST_OTHER ? v->qual : NULL; /* the last binding wins */
    }
    return q;
}

/* Is the callee of call op a class of the file built on torch's Variable (`class
 * Variable(autograd.Variable)` that moves its data to the GPU and passes the rest on)? */
static bool variable_subclass(const RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const IrOp *o = &f->ops.items[op];
    const IrOp *callee = o->a != IR_NONE ? &f->ops.items[o->a] : NULL;
    if (!callee || callee->kind != IR_LOAD || !callee->name) return false;
    for (uint32_t k = 0; k < c->m->classes.len; k++) {
        const IrClass *cls = c->m->classes.items[k];
        if (strcmp(cls->name, callee->name) != 0) continue;
        for (uint32_t b = 0; b < cls->bases.len; b++) {
            const char *base = cls->bases.items[b], *dot = strrchr(base, '.');
            if (!strcmp(dot ? dot + 1 : base, "Variable") && (!dot || !strncmp(base, "torch.", 6))) return true;
        }
    }
    return false;
}

void rule_GL401(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind == IR_SET_ATTR && o->name && !strcmp(o->name, "volatile") && o->a != IR_NONE &&
                ff->analysed && ff->val[o->a].kind == VK_TENSOR && !(o->b != IR_NONE && ir_const_false(f, o->b))) {
                /* `x.volatile = True` on a Variable: the attribute form, just as ignored */
                Diag *d = rule_report(c, o->span, SEV_ERROR,
                                      "`.volatile` is ignored since PyTorch 0.4: setting it does not stop '%s' from "
                                      "recording an autograd graph",
                                      rule_text(c, f, o->a));
                rule_hint(c, d, "Remove the assignment and run the inference code under `with torch.no_grad():`");
                continue;
            }
            if (o->kind != IR_CALL) continue;
            uint32_t v = ir_call_kwarg(f, i, "volatile");
            if (v == IR_NONE || ir_const_false(f, v)) continue; /* False: the graph the code asks for */
            const char *q = o->qual ? strrchr(o->qual, '.') : NULL;
            q = q ? q + 1 : o->qual;
            const char *name = q ? q : ir_call_method(f, i);
            if (!name) {
                name = forwarded_callee(c, f, i); /* a wrapper that passes `volatile=` on */
                const char *dot = name ? strrchr(name, '.') : NULL;
                if (dot) name = dot + 1;
            }
            if ((!name || strcmp(name, "Variable") != 0) && !variable_subclass(c, f, i)) continue;
            Diag *d = rule_report(c, f->ops.items[v].span, SEV_ERROR,
                                  "`volatile=` is ignored since PyTorch 0.4: this Variable still records an "
                                  "autograd graph");
            rule_hint(c, d, "Remove `volatile=` and run the inference code under `with torch.no_grad():`");
        }
    }
}
