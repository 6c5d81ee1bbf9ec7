/* The IR builder both front ends lower through: value stack, open functions, classes, loops, grad-mode
 * scopes and region ids, and the emission of ops into an IrModule.
 *
 * A front end walks its syntax tree with an explicit work stack of its own items (they hold its
 * parser's nodes: TSNode, CXCursor) and turns each node into builder calls; everything here takes
 * spans, names and op kinds only, so no parser type reaches src/ir/. Values are op indices on the
 * builder's value stack (an expression pushes its value, a statement pops what it consumes). Every op
 * gets the grad mode in force: the innermost open `with`/guard that sets one, else the function's
 * decorator mode. */
#ifndef GL_IR_BUILD_H
#define GL_IR_BUILD_H

#include "ir/ir.h"

/* An open function. */
typedef struct IrBuildFn {
    IrFunc *f;
    uint32_t loop;        /* innermost open loop, IR_NONE */
    uint32_t mode_depth;  /* IrBuilder.modes height when the function opened */
    uint32_t scope_depth; /* IrBuilder.scopes height when the function opened */
    uint32_t cls;         /* class whose body is open directly in it (defs there are methods), IR_NONE */
    bool has_self;        /* a C++ method: `self` is its implicit first parameter */
} IrBuildFn;

typedef struct IrBuilder {
    IrModule *m;
    Arena *arena;            /* names and texts go here (the Python front end switches it while it
                              * lowers a statement kept for reuse: py_chunk.h) */
    Array(uint32_t) vals;    /* the value stack: op indices */
    Array(IrBuildFn) funcs;  /* open functions, innermost last; funcs.items[0] is the module */
    Array(uint8_t) modes;    /* GradMode of the open WITH regions, innermost last */
    Array(uint32_t) scopes;  /* per open block scope: the guard regions it closes (C++) */
    Array(uint32_t) classes; /* open class bodies */
    uint32_t next_region;    /* IF/TRY region ids */
    /* Called with every variable slot looked up or created (ir_build_var, ir_build_pseudo_var), or NULL. */
    void (*on_var)(void *ctx, const IrFunc *f, uint32_t var);
    void *on_var_ctx;
} IrBuilder;

/* The work items of a front end are scheduled in source order into a scratch array and pushed
 * reversed onto its work stack, so they run in source order (both are Array()s of its item type). */
#define IR_SCHEDULE_COMMIT(work, sched)                                                   \
    do {                                                                                  \
        for (uint32_t sc__i = (sched)->len; sc__i-- > 0;) array_push((work), (sched)->items[sc__i]); \
        array_clear(sched);                                                               \
    } while (0)

/* Starts building m: opens the module function "<module>" (span: the whole file). */
IrFunc *ir_build_init(IrBuilder *b, IrModule *m, Span whole);
/* Frees the builder's stacks (the module keeps everything it built). */
void ir_build_free(IrBuilder *b);

static inline IrBuildFn *ir_build_fn(IrBuilder *b) { return array_back(&b->funcs); }
static inline IrFunc *ir_build_func(IrBuilder *b) { return array_back(&b->funcs)->f; }
static inline IrOp *ir_build_op(IrBuilder *b, uint32_t op) { return &array_back(&b->funcs)->f->ops.items[op]; }
static inline void ir_build_push(IrBuilder *b, uint32_t v) { array_push(&b->vals, v); }
/* The value on top (popped), or IR_NONE when the stack is empty. */
static inline uint32_t ir_build_pop(IrBuilder *b) { return b->vals.len ? array_pop(&b->vals) : IR_NONE; }
/* The value on top (left there), or IR_NONE. */
static inline uint32_t ir_build_top(const IrBuilder *b)
{
    return b->vals.len ? b->vals.items[b->vals.len - 1] : IR_NONE;
}
static inline uint32_t ir_build_region(IrBuilder *b) { return b->next_region++; }

/* The grad mode an op emitted now runs under. */
static inline uint8_t ir_build_mode(const IrBuilder *b)
{
    const IrBuildFn *fn = &b->funcs.items[b->funcs.len - 1];
    for (uint32_t i = b->modes.len; i-- > fn->mode_depth;)
        if (b->modes.items[i] != GRAD_KEEP) return b->modes.items[i];
    return fn->f->base_mode;
}

/* Appends an op of kind (operands IR_NONE) to the open function; returns its index. Inline: every op
 * of both front ends goes through here. */
static inline uint32_t ir_build_emit(IrBuilder *b, IrOpKind kind, Span span)
{
    IrFunc *f = ir_build_func(b);
    IrOp op;
    memset(&op, 0, sizeof op);
    op.kind = (uint8_t)kind;
    op.mode = ir_build_mode(b);
    op.a = op.b = op.c = op.var = IR_NONE;
    op.span = span;
    array_push(&f->ops, op);
    return f->ops.len - 1;
}
/* An op with operands a and b (IR_NONE: absent) and aux. */
uint32_t ir_build_op2(IrBuilder *b, IrOpKind kind, uint32_t a, uint32_t b2, uint32_t aux, Span span);

/* Variables of the open function. */
uint32_t ir_build_var(IrBuilder *b, const char *name, size_t len);
uint32_t ir_build_pseudo_var(IrBuilder *b, uint32_t base, const char *attr);
/* The pseudo-variable "base.attr" of `obj.attr`, where obj is a LOAD or ATTR of a variable (one or two
 * levels: self.rnn.hidden), so stores and loads of it flow like a local's; IR_NONE otherwise. */
uint32_t ir_build_member_var(IrBuilder *b, uint32_t obj, const char *attr);

/* Leaves and stores. */
uint32_t ir_build_const(IrBuilder *b, ConstKind kind, const char *text, Span span);
uint32_t ir_build_load(IrBuilder *b, const char *name, size_t len, const char *qual, Span span);
uint32_t ir_build_store(IrBuilder *b, const char *name, size_t len, uint32_t value, Span span);
/* PARAM at position pos, and its STORE into the parameter's variable. Returns the PARAM op. */
uint32_t ir_build_param(IrBuilder *b, const char *name, size_t len, const char *qual, uint32_t pos, Span span);
uint32_t ir_build_attr(IrBuilder *b, uint32_t obj, const char *name, Span span);
uint32_t ir_build_set_attr(IrBuilder *b, uint32_t obj, uint32_t value, const char *name, uint32_t var, Span span);

/* CALL of callee; its arguments follow with ir_build_arg (before any other op's operand list). */
uint32_t ir_build_call(IrBuilder *b, uint32_t callee, const char *qual, Span span);
void ir_build_arg(IrBuilder *b, uint32_t call, uint32_t value, const char *kw);
/* BUILD of kind from values v[0..n). */
uint32_t ir_build_build(IrBuilder *b, BuildKind kind, const uint32_t *v, uint32_t n, Span span);
/* An expression statement of value v (a call's value marked discarded when call_stmt). */
void ir_build_expr_stmt(IrBuilder *b, uint32_t v, bool call_stmt, Span span);

/* Loops: LOOP (and for a `for` loop, NEXT of the iterable popped from the value stack, pushed as the
 * target's value); span is the header line. END_LOOP closes the innermost loop. */
void ir_build_loop_begin(IrBuilder *b, bool is_while, Span span);
/* Marks the loop just begun as a comprehension's (`[f(x) for x in xs]`). */
void ir_build_loop_comprehension(IrBuilder *b);
void ir_build_loop_end(IrBuilder *b, Span span);
/* BREAK or CONTINUE of the innermost loop; nothing outside a loop (a C++ switch's break). */
void ir_build_jump(IrBuilder *b, IrOpKind kind, Span span);
/* IF (condition popped), and the ELSE/END_IF/TRY/EXCEPT/END_TRY markers of region. */
void ir_build_if(IrBuilder *b, uint32_t region, Span span);
void ir_build_mark(IrBuilder *b, IrOpKind kind, uint32_t region, Span span);

/* WITH of context value ctx setting mode (GRAD_KEEP: none) until ir_build_end_with. */
uint32_t ir_build_with(IrBuilder *b, uint32_t ctx, uint8_t mode, Span span);
void ir_build_end_with(IrBuilder *b, Span span);
/* Block scopes whose guard variables (a C++ torch::NoGradGuard) set a mode until the block ends:
 * a guard is a WITH region closed by the end of its scope (at once when no scope is open). */
void ir_build_scope_begin(IrBuilder *b);
void ir_build_scope_end(IrBuilder *b, Span span);
void ir_build_guard(IrBuilder *b, uint8_t mode, Span span);

/* Opens a function nested in the open one: a method of class cls (IR_NONE: none; "__init__" and
 * "forward" are noted on the class), qualified by its class or enclosing function. The caller sets
 * decorators and base_mode before emitting its ops. */
IrFunc *ir_build_func_begin(IrBuilder *b, const char *name, Span span, uint32_t cls, bool has_self);
/* Closes the open function: names read but never bound in it become globals. Returns it; the
 * module function stays open. */
IrFunc *ir_build_func_end(IrBuilder *b);
/* DEFINE of function or class aux (a class is IR_NONE - 1 - index). */
uint32_t ir_build_define(IrBuilder *b, uint32_t aux, const char *name, Span span);
/* A class, open until ir_build_class_end; defs directly in its body are its methods. */
IrClass *ir_build_class_begin(IrBuilder *b, const char *name, Span span);
/* Closes the innermost class; emits its DEFINE into *define. NULL when none is open. */
IrClass *ir_build_class_end(IrBuilder *b, Span span, uint32_t *define);

#endif
