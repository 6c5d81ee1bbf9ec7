/* IR construction helpers, queries and the textual dump used by `gradleak debug ir`. */
#include <stdio.h>
#include <string.h>
#include "base/strbuf.h"
#include "ir/ir.h"

const char *const ir_op_names[IR_OP_COUNT] = {
#define IR_OP(name, text) text,
#include "ir/ir.def"
#undef IR_OP
};

IrFunc *ir_func_new(IrModule *m, const char *name)
{
    IrFunc *f = ARENA_NEW(m->arena, IrFunc);
    f->name = name;
    f->qualname = name;
    f->index = m->funcs.len;
    f->parent = IR_NONE;
    f->cls = IR_NONE;
    array_push(&m->funcs, f);
    return f;
}

void ir_module_free(IrModule *m)
{
    for (uint32_t i = 0; i < m->funcs.len; i++) {
        IrFunc *f = m->funcs.items[i];
        array_free(&f->ops), array_free(&f->args), array_free(&f->kw);
        array_free(&f->vars), array_free(&f->loops), array_free(&f->decorators);
        strmap_free(&f->var_index);
        strmap_free(&f->pseudo_index);
    }
    for (uint32_t i = 0; i < m->classes.len; i++) {
        IrClass *c = m->classes.items[i];
        array_free(&c->bases), array_free(&c->methods);
    }
    array_free(&m->funcs), array_free(&m->classes), array_free(&m->error_spans);
    array_free(&m->comments);
    array_free(&m->star_imports);
    array_free(&m->imported);
}

/* Variable lookup is hashed: generated files put tens of thousands of names in one scope (a linear
 * search made a 4 MiB file of small functions take minutes; tests/badinput bad-2.1). */
uint32_t ir_func_var(IrFunc *f, Arena *arena, const char *name, size_t len)
{
    uint32_t i = strmap_get(&f->var_index, name, len);
    if (i != UINT32_MAX) return i;
    IrVar v = {arena_strndup(arena, name, len), IR_NONE, 0, 0};
    array_push(&f->vars, v);
    strmap_put(&f->var_index, v.name, len, f->vars.len - 1);
    return f->vars.len - 1;
}

void ir_func_index_pseudo(IrFunc *f, uint32_t v)
{
    const char *name = f->vars.items[v].name;
    if (strmap_get(&f->pseudo_index, name, strlen(name)) == UINT32_MAX)
        strmap_put(&f->pseudo_index, name, strlen(name), v);
}

uint32_t ir_func_pseudo_var(IrFunc *f, Arena *arena, uint32_t base, const char *attr)
{
    /* the first variable of that base and attribute; by its name ("<base's name>.<attr>") in the
     * index, which holds every pseudo-var (a scan of the variables per attribute was quadratic in a
     * class of many attributes). An attribute with a dot in it never matched a variable: kept so. */
    const char *bname = f->vars.items[base].name;
    size_t bl = strlen(bname), al = strlen(attr);
    bool dotted = strchr(attr, '.') != NULL;
    if (!dotted) {
        char buf[256];
        char *key = bl + al + 1 < sizeof buf ? buf : gl_malloc(bl + al + 1);
        memcpy(key, bname, bl);
        key[bl] = '.';
        memcpy(key + bl + 1, attr, al);
        uint32_t i = strmap_get(&f->pseudo_index, key, bl + al + 1);
        if (key != buf) gl_free(key);
        if (i != UINT32_MAX && f->vars.items[i].base == base) return i;
        if (i != UINT32_MAX) /* another base of the same name (never made by the front ends): scan */
            for (uint32_t k = 0; k < f->vars.len; k++) {
                const IrVar *v = &f->vars.items[k];
                if (v->base == base && strcmp(strrchr(v->name, '.') + 1, attr) == 0) return k;
            }
    }
    IrVar v = {arena_printf(arena, "%s.%s", bname, attr), base, 0, 0};
    array_push(&f->vars, v);
    if (!dotted) ir_func_index_pseudo(f, f->vars.len - 1);
    return f->vars.len - 1;
}

bool ir_loop_contains(const IrFunc *f, uint32_t loop, uint32_t op)
{
    if (loop == IR_NONE) return false;
    const IrLoop *l = &f->loops.items[loop];
    return op > l->op && op < l->end;
}

uint32_t ir_op_loop(const IrFunc *f, uint32_t op)
{
    /* Loops are numbered in source order (their LOOP ops ascend: both front ends emit the op as they
     * number the loop) and nest, so the innermost loop holding op is the last one that starts before
     * it or one of that loop's ancestors: O(log loops + depth), not O(loops) per op (a module of
     * 20,000 loops asked this for every op). */
    uint32_t lo = 0, hi = f->loops.len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->loops.items[mid].op < op) lo = mid + 1;
        else hi = mid;
    }
    uint32_t l = lo ? lo - 1 : IR_NONE;
    for (uint32_t guard = 0; l != IR_NONE && guard <= f->loops.len; guard++) {
        if (ir_loop_contains(f, l, op)) return l;
        uint32_t up = f->loops.items[l].parent;
        if (NEVER(up != IR_NONE && up >= l)) break; /* a parent is numbered before its children */
        l = up;
    }
    return IR_NONE;
}

/* ---- queries: helpers that only read the IR ---------------------------------------------------- */

uint32_t ir_call_receiver(const IrFunc *f, uint32_t call)
{
    const IrOp *c = &f->ops.items[call];
    if (c->kind != IR_CALL || c->a == IR_NONE) return IR_NONE;
    const IrOp *callee = &f->ops.items[c->a];
    return callee->kind == IR_ATTR ? callee->a : IR_NONE;
}

const char *ir_call_method(const IrFunc *f, uint32_t call)
{
    const IrOp *c = &f->ops.items[call];
    if (c->kind != IR_CALL || c->a == IR_NONE) return NULL;
    const IrOp *callee = &f->ops.items[c->a];
    return callee->kind == IR_ATTR ? callee->name : NULL;
}

uint32_t ir_call_kwarg(const IrFunc *f, uint32_t call, const char *kw)
{
    const IrOp *c = &f->ops.items[call];
    for (uint32_t i = 0; i < c->nargs; i++) {
        const char *k = f->kw.items[c->args + i];
        if (k && !strcmp(k, kw)) return f->args.items[c->args + i];
    }
    return IR_NONE;
}

static bool ir__const_is(const IrFunc *f, uint32_t op, const char *text)
{
    if (op == IR_NONE) return false;
    const IrOp *o = &f->ops.items[op];
    return o->kind == IR_CONST && o->name && !strcmp(o->name, text);
}

bool ir_const_true(const IrFunc *f, uint32_t op) { return ir__const_is(f, op, "True"); }
bool ir_const_false(const IrFunc *f, uint32_t op) { return ir__const_is(f, op, "False"); }

uint32_t ir_root_var(const IrFunc *f, uint32_t op)
{
    /* through subscripts: metrics["loss"].append(x) grows `metrics` */
    for (int guard = 0; op != IR_NONE && guard < 16; guard++) {
        const IrOp *o = &f->ops.items[op];
        if ((o->kind == IR_LOAD || o->kind == IR_ATTR) && o->var != IR_NONE) return o->var;
        if (o->kind != IR_ITEM) return IR_NONE;
        op = o->a;
    }
    return IR_NONE;
}

uint32_t ir_class_local_base(const IrModule *m, uint32_t ci)
{
    const IrClass *c = m->classes.items[ci];
    for (uint32_t b = 0; b < c->bases.len; b++)
        for (uint32_t j = 0; j < m->classes.len; j++)
            if (j != ci && !strcmp(m->classes.items[j]->name, c->bases.items[b])) return j;
    return IR_NONE;
}

uint32_t ir_class_method(const IrModule *m, uint32_t cls, const char *name)
{
    /* the class's own method, else one it inherits from a base class of the file (`class
     * Net(BasicModel)` calling `self.test_` that BasicModel defines); bounded, cycles too */
    for (int depth = 0; depth < 8 && cls != IR_NONE; depth++) {
        const IrClass *c = m->classes.items[cls];
        for (uint32_t k = 0; k < c->methods.len; k++)
            if (!strcmp(m->funcs.items[c->methods.items[k]]->name, name)) return c->methods.items[k];
        cls = ir_class_local_base(m, cls);
    }
    return IR_NONE;
}

bool ir_class_derives_from(const IrModule *m, uint32_t ci, const char *base)
{
    uint32_t cur = ci;
    for (int depth = 0; depth < 8 && cur != IR_NONE; depth++) {
        const IrClass *c = m->classes.items[cur];
        uint32_t next = IR_NONE;
        for (uint32_t b = 0; b < c->bases.len; b++) {
            const char *q = c->bases.items[b];
            const char *last = strrchr(q, '.');
            if (strstr(last ? last + 1 : q, base)) return true;
            for (uint32_t j = 0; j < m->classes.len && next == IR_NONE; j++)
                if (j != cur && !strcmp(m->classes.items[j]->name, q)) next = j;
        }
        cur = next;
    }
    return false;
}

bool ir_func_in_module_class(const IrModule *m, const IrFunc *f)
{
    for (uint32_t guard = 0; f && guard < 64; guard++) {
        if (f->cls != IR_NONE && m->classes.items[f->cls]->is_module) return true;
        if (f->parent == IR_NONE) return false;
        f = m->funcs.items[f->parent];
    }
    return false;
}

const char *ir_span_text(const IrModule *m, Span s, Arena *arena)
{
    uint32_t end = s.end;
    if (end > m->len) end = (uint32_t)m->len;
    if (s.start > end) return "";
    for (uint32_t i = s.start; i < end; i++)
        if (m->src[i] == '\n' || m->src[i] == '\r') { end = i; break; }
    return arena_strndup(arena, m->src + s.start, end - s.start);
}

static const char *const loop_kind_names[] = {"unknown", "step", "epoch", "sequence", "feedback"};
static const char *const mode_names[] = {"", " [no_grad]", " [inference]", " [maybe_no_grad]", " [enable_grad]", ""};

static void ir__operand(StrBuf *sb, const char *label, uint32_t v)
{
    if (v != IR_NONE) sb_printf(sb, " %s=%%%u", label, v);
}

void ir_dump(const IrModule *m, void (*emit)(void *ctx, const char *s), void *ctx)
{
    StrBuf sb;
    sb_init(&sb);
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        sb_printf(&sb, "func %s", f->qualname);
        if (f->cls != IR_NONE) sb_printf(&sb, " (method of %s)", m->classes.items[f->cls]->name);
        if (f->base_mode) sb_puts(&sb, mode_names[f->base_mode]);
        sb_puts(&sb, "\n");
        for (uint32_t i = 0; i < f->loops.len; i++) {
            const IrLoop *l = &f->loops.items[i];
            sb_printf(&sb, "  loop %u: line %u, ops %%%u..%%%u, kind %s", i, l->span.row + 1, l->op, l->end,
                      loop_kind_names[l->kind]);
            if (l->parent != IR_NONE) sb_printf(&sb, ", in loop %u", l->parent);
            if (l->is_comp) sb_puts(&sb, ", comprehension");
            sb_puts(&sb, "\n");
        }
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *op = &f->ops.items[i];
            sb_printf(&sb, "  %%%u = %s", i, ir_op_names[op->kind]);
            if (op->var != IR_NONE && op->var < f->vars.len) sb_printf(&sb, " $%s", f->vars.items[op->var].name);
            if (op->name) sb_printf(&sb, " '%s'", op->name);
            if (op->qual) sb_printf(&sb, " <%s>", op->qual);
            ir__operand(&sb, "a", op->a);
            ir__operand(&sb, "b", op->b);
            ir__operand(&sb, "c", op->c);
            if (op->nargs) {
                sb_puts(&sb, " (");
                for (uint32_t k = 0; k < op->nargs; k++) {
                    const char *kw = f->kw.items[op->args + k];
                    sb_printf(&sb, "%s%s%s%%%u", k ? ", " : "", kw ? kw : "", kw ? "=" : "", f->args.items[op->args + k]);
                }
                sb_puts(&sb, ")");
            }
            if (op->kind == IR_LOOP || op->kind == IR_END_LOOP || op->kind == IR_BREAK || op->kind == IR_CONTINUE ||
                op->kind == IR_BINOP || op->kind == IR_UNPACK || op->kind == IR_BUILD || op->kind == IR_DEFINE ||
                op->kind == IR_CONST || op->kind == IR_WITH)
                sb_printf(&sb, " #%u", op->aux);
            if (op->kind == IR_DEL && op->aux) sb_puts(&sb, " items");
            if (op->flags & IR_F_AUG) sb_puts(&sb, " aug");
            if (op->flags & IR_F_STMT) sb_puts(&sb, " stmt");
            if (op->mode) sb_puts(&sb, mode_names[op->mode]);
            sb_printf(&sb, "  @%u:%u\n", op->span.row + 1, op->span.col + 1);
        }
        emit(ctx, sb.data);
        sb_clear(&sb);
    }
    sb_free(&sb);
}

uint32_t ir_first_param(const IrFunc *f)
{
    for (uint32_t k = 0; k < f->ops.len; k++)
        if (f->ops.items[k].kind == IR_PARAM && f->ops.items[k].aux == 0) return f->ops.items[k].var;
    return IR_NONE;
}

const char *ir_self_attr(const IrFunc *f, uint32_t op, uint32_t self_var)
{
    if (op == IR_NONE || op >= f->ops.len) return NULL;
    const IrOp *o = &f->ops.items[op];
    if (o->kind != IR_ATTR || o->a == IR_NONE || !o->name) return NULL;
    const IrOp *b = &f->ops.items[o->a];
    return b->kind == IR_LOAD && b->var == self_var ? o->name : NULL;
}

uint32_t ir_element_sum(const IrFunc *f, uint32_t i, uint32_t self_var)
{
    const IrOp *o = &f->ops.items[i];
    if (o->kind != IR_SET_ITEM || o->a == IR_NONE || o->c == IR_NONE) return IR_NONE;
    const IrOp *v = &f->ops.items[o->c];
    if (v->kind != IR_BINOP || v->aux > BIN_DIV || v->a == IR_NONE || v->b == IR_NONE) return IR_NONE;
    const IrOp *rd = &f->ops.items[v->a]; /* the element read: self.sums[k] */
    const char *into = ir_self_attr(f, o->a, self_var);
    const char *from = rd->kind == IR_ITEM ? ir_self_attr(f, rd->a, self_var) : NULL;
    return into && from && !strcmp(into, from) ? v->b : IR_NONE;
}
