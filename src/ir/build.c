/* The IR builder under both front ends (build.h): ops, variables, loops, regions, grad-mode scopes,
 * functions and classes, from spans and names. */
#include "ir/build.h"

IrFunc *ir_build_init(IrBuilder *b, IrModule *m, Span whole)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->arena = m->arena;
    IrFunc *top = ir_func_new(m, "<module>");
    top->span = whole;
    IrBuildFn fn = {top, IR_NONE, 0, 0, IR_NONE, false};
    array_push(&b->funcs, fn);
    return top;
}

void ir_build_free(IrBuilder *b)
{
    array_free(&b->vals), array_free(&b->funcs), array_free(&b->modes), array_free(&b->scopes);
    array_free(&b->classes);
}

uint32_t ir_build_op2(IrBuilder *b, IrOpKind kind, uint32_t a, uint32_t b2, uint32_t aux, Span span)
{
    uint32_t op = ir_build_emit(b, kind, span);
    IrOp *o = ir_build_op(b, op);
    o->a = a;
    o->b = b2;
    o->aux = aux;
    return op;
}

/* ---- variables ------------------------------------------------------------------------------- */

uint32_t ir_build_var(IrBuilder *b, const char *name, size_t len)
{
    IrFunc *f = ir_build_func(b);
    uint32_t v = ir_func_var(f, b->arena, name, len);
    if (b->on_var) b->on_var(b->on_var_ctx, f, v);
    return v;
}

uint32_t ir_build_pseudo_var(IrBuilder *b, uint32_t base, const char *attr)
{
    IrFunc *f = ir_build_func(b);
    uint32_t v = ir_func_pseudo_var(f, b->arena, base, attr);
    if (b->on_var) b->on_var(b->on_var_ctx, f, v);
    return v;
}

uint32_t ir_build_member_var(IrBuilder *b, uint32_t obj, const char *attr)
{
    if (obj == IR_NONE) return IR_NONE;
    IrFunc *f = ir_build_func(b);
    const IrOp *base = &f->ops.items[obj];
    /* the 128-byte bound keeps `a.b.c.d...` chains from making ever longer names */
    if ((base->kind == IR_LOAD || base->kind == IR_ATTR) && base->var != IR_NONE &&
        strlen(f->vars.items[base->var].name) < 128)
        return ir_build_pseudo_var(b, base->var, attr);
    return IR_NONE;
}

/* ---- leaves, stores, calls ------------------------------------------------------------------- */

uint32_t ir_build_const(IrBuilder *b, ConstKind kind, const char *text, Span span)
{
    uint32_t op = ir_build_emit(b, IR_CONST, span);
    IrOp *o = ir_build_op(b, op);
    o->aux = kind;
    o->name = text;
    return op;
}

uint32_t ir_build_load(IrBuilder *b, const char *name, size_t len, const char *qual, Span span)
{
    uint32_t op = ir_build_emit(b, IR_LOAD, span);
    uint32_t v = ir_build_var(b, name, len);
    IrOp *o = ir_build_op(b, op);
    o->var = v;
    o->qual = qual;
    o->name = ir_build_func(b)->vars.items[v].name;
    return op;
}

uint32_t ir_build_store(IrBuilder *b, const char *name, size_t len, uint32_t value, Span span)
{
    uint32_t op = ir_build_emit(b, IR_STORE, span);
    uint32_t v = ir_build_var(b, name, len);
    IrOp *o = ir_build_op(b, op);
    o->a = value;
    o->var = v;
    o->name = ir_build_func(b)->vars.items[v].name;
    return op;
}

uint32_t ir_build_param(IrBuilder *b, const char *name, size_t len, const char *qual, uint32_t pos, Span span)
{
    IrFunc *f = ir_build_func(b);
    uint32_t op = ir_build_emit(b, IR_PARAM, span);
    uint32_t v = ir_build_var(b, name, len);
    IrOp *o = ir_build_op(b, op);
    o->var = v;
    o->name = f->vars.items[v].name;
    o->aux = pos;
    o->qual = qual;
    f->vars.items[v].is_param = 1;
    uint32_t st = ir_build_emit(b, IR_STORE, span);
    IrOp *s = ir_build_op(b, st);
    s->a = op;
    s->var = v;
    s->name = f->vars.items[v].name;
    return op;
}

uint32_t ir_build_attr(IrBuilder *b, uint32_t obj, const char *name, Span span)
{
    uint32_t op = ir_build_emit(b, IR_ATTR, span);
    IrOp *o = ir_build_op(b, op);
    o->a = obj;
    o->name = name;
    return op;
}

uint32_t ir_build_set_attr(IrBuilder *b, uint32_t obj, uint32_t value, const char *name, uint32_t var, Span span)
{
    uint32_t op = ir_build_emit(b, IR_SET_ATTR, span);
    IrOp *o = ir_build_op(b, op);
    o->a = obj;
    o->b = value;
    o->name = name;
    o->var = var;
    return op;
}

uint32_t ir_build_call(IrBuilder *b, uint32_t callee, const char *qual, Span span)
{
    uint32_t op = ir_build_emit(b, IR_CALL, span);
    IrOp *o = ir_build_op(b, op);
    o->a = callee;
    o->qual = qual;
    o->args = ir_build_func(b)->args.len;
    return op;
}

void ir_build_arg(IrBuilder *b, uint32_t call, uint32_t value, const char *kw)
{
    IrFunc *f = ir_build_func(b);
    array_push(&f->args, value);
    array_push(&f->kw, kw);
    f->ops.items[call].nargs++;
}

uint32_t ir_build_build(IrBuilder *b, BuildKind kind, const uint32_t *v, uint32_t n, Span span)
{
    IrFunc *f = ir_build_func(b);
    uint32_t op = ir_build_emit(b, IR_BUILD, span);
    IrOp *o = ir_build_op(b, op);
    o->aux = kind;
    o->args = f->args.len;
    o->nargs = n;
    for (uint32_t i = 0; i < n; i++) {
        array_push(&f->args, v[i]);
        array_push(&f->kw, (const char *)NULL);
    }
    return op;
}

void ir_build_expr_stmt(IrBuilder *b, uint32_t v, bool call_stmt, Span span)
{
    if (v == IR_NONE) return;
    IrFunc *f = ir_build_func(b);
    if (f->ops.items[v].kind == IR_CALL && call_stmt) f->ops.items[v].flags |= IR_F_STMT;
    ir_build_op2(b, IR_EXPR, v, IR_NONE, 0, span);
}

/* ---- loops and regions ----------------------------------------------------------------------- */

void ir_build_loop_begin(IrBuilder *b, bool is_while, Span span)
{
    IrFunc *f = ir_build_func(b);
    IrLoop loop;
    memset(&loop, 0, sizeof loop);
    loop.parent = ir_build_fn(b)->loop;
    loop.is_while = is_while;
    loop.iter = is_while ? IR_NONE : ir_build_pop(b);
    loop.end = IR_NONE;
    loop.feedback_call = IR_NONE;
    loop.span = span;
    array_push(&f->loops, loop);
    uint32_t id = f->loops.len - 1;
    ir_build_fn(b)->loop = id;
    /* loops are numbered as their LOOP ops are emitted: ir_op_loop relies on it */
    uint32_t op = ir_build_emit(b, IR_LOOP, span);
    ir_build_op(b, op)->aux = id;
    f->loops.items[id].op = op;
    if (!is_while) ir_build_push(b, ir_build_op2(b, IR_NEXT, loop.iter, IR_NONE, 0, span));
}

void ir_build_loop_comprehension(IrBuilder *b)
{
    uint32_t id = ir_build_fn(b)->loop;
    if (NEVER(id == IR_NONE)) return;
    ir_build_func(b)->loops.items[id].is_comp = 1;
}

void ir_build_loop_end(IrBuilder *b, Span span)
{
    IrFunc *f = ir_build_func(b);
    uint32_t id = ir_build_fn(b)->loop;
    if (NEVER(id == IR_NONE)) return;
    uint32_t op = ir_build_emit(b, IR_END_LOOP, span);
    ir_build_op(b, op)->aux = id;
    f->loops.items[id].end = op;
    ir_build_fn(b)->loop = f->loops.items[id].parent;
}

void ir_build_jump(IrBuilder *b, IrOpKind kind, Span span)
{
    uint32_t id = ir_build_fn(b)->loop;
    if (id == IR_NONE) return;
    ir_build_op(b, ir_build_emit(b, kind, span))->aux = id;
}

void ir_build_if(IrBuilder *b, uint32_t region, Span span)
{
    uint32_t cond = ir_build_pop(b);
    ir_build_op2(b, IR_IF, cond, IR_NONE, region, span);
}

void ir_build_mark(IrBuilder *b, IrOpKind kind, uint32_t region, Span span)
{
    ir_build_op(b, ir_build_emit(b, kind, span))->aux = region;
}

/* ---- grad-mode regions ----------------------------------------------------------------------- */

uint32_t ir_build_with(IrBuilder *b, uint32_t ctx, uint8_t mode, Span span)
{
    /* the WITH op itself runs in the enclosing mode */
    uint32_t op = ir_build_op2(b, IR_WITH, ctx, IR_NONE, mode, span);
    array_push(&b->modes, mode);
    return op;
}

void ir_build_end_with(IrBuilder *b, Span span)
{
    if (b->modes.len > ir_build_fn(b)->mode_depth) b->modes.len--;
    ir_build_emit(b, IR_END_WITH, span);
}

void ir_build_scope_begin(IrBuilder *b) { array_push(&b->scopes, 0); }

void ir_build_scope_end(IrBuilder *b, Span span)
{
    if (b->scopes.len <= ir_build_fn(b)->scope_depth) return;
    uint32_t guards = array_pop(&b->scopes);
    for (uint32_t i = 0; i < guards; i++) ir_build_end_with(b, span);
}

void ir_build_guard(IrBuilder *b, uint8_t mode, Span span)
{
    uint32_t ctx = ir_build_const(b, CONST_OTHER, NULL, span);
    ir_build_with(b, ctx, mode, span);
    if (b->scopes.len > ir_build_fn(b)->scope_depth) (*array_back(&b->scopes))++;
    else ir_build_end_with(b, span); /* at namespace scope (a global): nothing encloses it */
}

/* ---- functions and classes ------------------------------------------------------------------- */

IrFunc *ir_build_func_begin(IrBuilder *b, const char *name, Span span, uint32_t cls, bool has_self)
{
    IrFunc *parent = ir_build_func(b);
    IrFunc *f = ir_func_new(b->m, name);
    f->parent = parent->index;
    f->span = span;
    if (cls != IR_NONE && cls < b->m->classes.len) {
        IrClass *c = b->m->classes.items[cls];
        f->cls = cls;
        f->qualname = arena_printf(b->arena, "%s.%s", c->name, name);
        array_push(&c->methods, f->index);
        if (!strcmp(name, "__init__")) c->init = f->index;
        if (!strcmp(name, "forward")) c->forward = f->index;
    } else if (parent->index != 0) {
        f->qualname = arena_printf(b->arena, "%s.%s", parent->qualname, name);
    }
    IrBuildFn fn = {f, IR_NONE, b->modes.len, b->scopes.len, IR_NONE, has_self};
    array_push(&b->funcs, fn);
    return f;
}

IrFunc *ir_build_func_end(IrBuilder *b)
{
    IrFunc *f = ir_build_func(b);
    /* names read but never bound here are globals or closure variables */
    Array(uint8_t) bound;
    array_init(&bound);
    array_reserve(&bound, f->vars.len + 1);
    memset(bound.items, 0, f->vars.len + 1);
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if ((o->kind == IR_STORE || o->kind == IR_PARAM) && o->var != IR_NONE) bound.items[o->var] = 1;
    }
    for (uint32_t i = 0; i < f->vars.len; i++)
        if (f->vars.items[i].base == IR_NONE && !bound.items[i] && f->index != 0) f->vars.items[i].is_global = 1;
    array_free(&bound);
    if (f->index == 0 || b->funcs.len < 2) return f;
    /* close the grad-mode regions and scopes a malformed body left open */
    b->modes.len = ir_build_fn(b)->mode_depth;
    b->scopes.len = ir_build_fn(b)->scope_depth;
    b->funcs.len--;
    return f;
}

uint32_t ir_build_define(IrBuilder *b, uint32_t aux, const char *name, Span span)
{
    uint32_t op = ir_build_emit(b, IR_DEFINE, span);
    ir_build_op(b, op)->aux = aux;
    ir_build_op(b, op)->name = name;
    return op;
}

IrClass *ir_build_class_begin(IrBuilder *b, const char *name, Span span)
{
    IrClass *c = ARENA_NEW(b->arena, IrClass);
    c->name = name;
    c->index = b->m->classes.len;
    c->init = c->forward = IR_NONE;
    c->span = span;
    array_push(&b->m->classes, c);
    array_push(&b->classes, c->index);
    ir_build_fn(b)->cls = c->index;
    return c;
}

IrClass *ir_build_class_end(IrBuilder *b, Span span, uint32_t *define)
{
    *define = IR_NONE;
    if (!b->classes.len) return NULL;
    uint32_t closing = array_pop(&b->classes);
    ir_build_fn(b)->cls = b->classes.len ? *array_back(&b->classes) : IR_NONE;
    *define = ir_build_define(b, IR_NONE - 1 - closing, "class", span); /* classes are encoded from the top */
    return b->m->classes.items[closing];
}
