/* GL201 tensor-move-discarded: a tensor conversion called as a statement.
 *
 * ## What it does
 * Flags `x.cuda()`, `x.to(device)`, `x.cpu()`, `x.half()`, `x.float()`, `x.double()`,
 * `x.bfloat16()` and `x.type(...)` used as a statement when `x` is a tensor (a batch from a data
 * loader, a torch factory result, a model output, a variable the function uses as a tensor
 * elsewhere: `imgs.size(0)`, `tags.unsqueeze(1)`, or a part of a batch fed to a model as its input:
 * `data = batch.text; data.to(device); model(data, h)`). Modules are not flagged: `model.cuda()`
 * and `model.to(device)` convert a module in place (also one built from a class passed in and then
 * loaded); neither are parameters used as nothing else nor a whole batch object (a tokenizer's
 * BatchEncoding, a graph library's Data move themselves), nor, in C++, a move through `->` (only a
 * module holder is reached with an arrow), nor a model class turned into its instance under the
 * same name (`self.model = self.model(width=w)`), nor, outside loops, a tensor the function made
 * with a factory and never reads again (`x = torch.zeros(2); x.cuda()` to start the GPU). In a script that gets `torch` and `F` through `from
 * module import *`, their functions are torch's.
 *
 * ## Why is this bad?
 * Tensor conversions return a NEW tensor and leave the original untouched. The result is thrown
 * away, so the code goes on using the CPU (or old-dtype) tensor: a device mismatch error at best,
 * silent CPU work at worst.
 *
 * ## Example
 * ```python
 * for x_batch, y_batch in dataloader:
 *     x_batch.cuda()
 *     y_batch.cuda()
 * ```
 *
 * Use instead:
 * ```python
 * for x_batch, y_batch in dataloader:
 *     x_batch = x_batch.cuda()
 *     y_batch = y_batch.cuda()
 * ```
 *
 * ## Fix safety
 * Assigning the result back (`x = x.cuda()`) is safe when `x` is a plain name or attribute: it is
 * what the code meant, and other references to the old tensor keep it.
 *
 * ## References
 * - https://pytorch.org/docs/stable/generated/torch.Tensor.to.html
 * - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to
 */
#include <string.h>
#include "ir/api.h"
#include "rules/rule.h"

static bool is_move(const char *m)
{
    static const char *const names[] = {"cuda", "to", "cpu", "half", "float", "double", "bfloat16", "type", "long", "int", "bool", "byte", "short"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (!strcmp(m, names[i])) return true;
    return false;
}

/* Is every value stored to var a part of another value: an attribute, an item, an unpacked
 * element? */
static bool holds_parts(const IrFunc *f, const FuncFacts *ff, uint32_t var)
{
    bool any = false;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_STORE || o->var != var || !ff->reached[i] || o->a == IR_NONE) continue;
        uint8_t k = f->ops.items[o->a].kind;
        if (k != IR_ATTR && k != IR_ITEM && k != IR_UNPACK) return false;
        any = true;
    }
    return any;
}

/* Is variable var used as a tensor elsewhere in f: a method only tensors have that reads it
 * (`images.size(0)`, `labels.unsqueeze(1)`, `x.sum()`, `x.item()`), or a model's first input?
 * Modules have none of these. */
static bool used_as_tensor(const RuleCtx *c, const IrFunc *f, const FuncFacts *ff, uint32_t var)
{
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || !ff->reached[i]) continue;
        /* the input of a model call (`output, hidden = model(data, hidden)`) that is a part of
         * something (`data = batch.text`, `x, y = batch`): a tensor, never a module (a whole batch
         * may be an object whose to() converts in place: a graph library's Data, a tokenizer's
         * BatchEncoding) */
        if (df_is_module_call(c->fx, f, i) && o->nargs >= 1 && holds_parts(f, ff, var)) {
            const IrOp *a0 = &f->ops.items[f->args.items[o->args]];
            if (!f->kw.items[o->args] && a0->kind == IR_LOAD && a0->var == var) return true;
        }
        uint32_t r = ir_call_receiver(f, i);
        if (r == IR_NONE || f->ops.items[r].kind != IR_LOAD || f->ops.items[r].var != var) continue;
        ApiMethod am = api_method(ir_call_method(f, i));
        if (!am.flags && (am.effect == EFF_DIFF || am.effect == EFF_SHAPE || am.effect == EFF_REDUCE || am.effect == EFF_PIECES ||
                          am.effect == EFF_NONDIFF || am.effect == EFF_INPLACE || am.effect == EFF_SCALAR))
            return true;
    }
    return false;
}

/* Is the member access right after the receiver (source offsets from..end) an arrow? */
static bool arrow_after(const RuleCtx *c, uint32_t from, uint32_t end)
{
    uint32_t e = from;
    while (e < end && e < c->m->len && (c->m->src[e] == ' ' || c->m->src[e] == '\t' || c->m->src[e] == '\n')) e++;
    return e + 1 < c->m->len && c->m->src[e] == '-' && c->m->src[e + 1] == '>';
}

/* Was v made by a torch factory call in the function (`torch.zeros(2)`)? */
static bool made_by_factory(const IrFunc *f, const AVal *v)
{
    uint32_t d = v->def;
    if (d == IR_NONE || d >= f->ops.len) return false;
    if (f->ops.items[d].kind == IR_STORE) d = f->ops.items[d].a;
    if (d == IR_NONE || d >= f->ops.len) return false;
    const IrOp *o = &f->ops.items[d];
    return o->kind == IR_CALL && o->qual && api_function(o->qual) == EFF_FACTORY;
}

/* Is variable var read after op (or anywhere in the loops around it, for the next iteration)? */
static bool read_again(const IrFunc *f, uint32_t op, uint32_t var)
{
    uint32_t from = op + 1;
    uint32_t l = ir_op_loop(f, op);
    while (l != IR_NONE && f->loops.items[l].parent != IR_NONE) l = f->loops.items[l].parent;
    if (l != IR_NONE) from = f->loops.items[l].op;
    for (uint32_t i = from; i < f->ops.len; i++)
        if (i != op && f->ops.items[i].kind == IR_LOAD && f->ops.items[i].var == var && i != ir_call_receiver(f, op))
            return true;
    return false;
}

void rule_GL201(RuleCtx *c)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        const FuncFacts *ff = &c->fx->funcs[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL || !(o->flags & IR_F_STMT) || !ff->reached[i]) continue;
            const char *m = ir_call_method(f, i);
            uint32_t recv = ir_call_receiver(f, i);
            if (!m || !is_move(m) || recv == IR_NONE) continue;
            if (!strcmp(m, "type") && o->nargs == 0) continue; /* x.type() returns the type name */
            const AVal *rv = &ff->val[recv];
            /* only tensors: modules convert in place; unknown objects are given the benefit */
            bool tensor = rv->kind == VK_TENSOR || (rv->grad >= G_POST && rv->kind == VK_UNKNOWN);
            /* a parameter of unknown kind that the function uses as a tensor elsewhere */
            const IrOp *ro0 = &f->ops.items[recv];
            if (!tensor && rv->kind == VK_UNKNOWN && ro0->kind == IR_LOAD && ro0->var < f->vars.len &&
                !f->vars.items[ro0->var].is_global)
                tensor = used_as_tensor(c, f, ff, ro0->var);
            if (!tensor || (rv->flags & VF_MAYBE_MODULE)) continue;
            /* `self.model = self.model(size=n)`: a class called into its instance, a module */
            if ((rv->flags & VF_MODEL_OUT) && rv->src != IR_NONE && rv->src < f->ops.len && ro0->var != IR_NONE &&
                f->ops.items[rv->src].kind == IR_CALL && f->ops.items[rv->src].a != IR_NONE &&
                f->ops.items[f->ops.items[rv->src].a].var == ro0->var)
                continue;
            /* `x = torch.zeros(2); x.cuda()  # start the GPU`: a one-off statement (in no loop) on
             * a tensor the function made itself and never reads again: nothing expects it moved */
            if (ro0->kind == IR_LOAD && ir_op_loop(f, i) == IR_NONE && made_by_factory(f, rv) && !read_again(f, i, ro0->var))
                continue;
            /* C++: `net->to(device)` goes through a pointer, which a module holder is and a
             * torch::Tensor (a value type) is not */
            if (c->cxx && arrow_after(c, f->ops.items[recv].span.end, o->span.end)) continue;
            const char *rt = ir_span_text(c->m, f->ops.items[recv].span, c->arena);
            const char *call = ir_span_text(c->m, o->span, c->arena);
            Diag *d = rule_report(c, o->span, SEV_ERROR,
                                  "`%s` returns a new tensor and the result is discarded: `%s` is not moved or "
                                  "converted in place (only modules are)", call, rt);
            rule_hint(c, d, "Assign the result: `%s = %s`", rt, call);
            const IrOp *ro = &f->ops.items[recv];
            /* the call must end its statement's line (or come before `;` or a comment): tree-sitter
             * accepts `y.to()dev`, which Python does not, and `y = y.to()dev` then no longer parses
             * (found by fuzz_fix) */
            uint32_t e = o->span.end;
            while (e < c->m->len && (c->m->src[e] == ' ' || c->m->src[e] == '\t')) e++;
            bool ends = e >= c->m->len || strchr("\r\n;#", c->m->src[e]);
            /* and the receiver must be a plain dotted name: in `x.<bad bytes>   y.to(dev)` tree-sitter
             * makes one attribute of `x.<bad bytes>   y` around an error node, and assigning to that
             * text does not parse (found by fuzz_fix) */
            bool plain = rt[0] != '\0';
            for (const char *q = rt; *q && plain; q++)
                plain = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                        *q == '_' || *q == '.';
            if ((ro->kind == IR_LOAD || ro->kind == IR_ATTR) && o->span.row == o->span.end_row && ends && plain)
                rule_fix(c, d, FIX_SAFE, arena_printf(c->arena, "Assign the result to `%s`", rt), o->span.start,
                         o->span.start, arena_printf(c->arena, "%s = ", rt));
        }
    }
}
