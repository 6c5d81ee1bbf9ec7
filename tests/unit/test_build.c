/* The IR builder both front ends lower through (src/ir/build.c), driven directly: grad-mode regions
 * (Python `with`, C++ guard scopes), loops, functions, classes and attribute pseudo-variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include "ir/build.h"

typedef struct Fixture {
    Arena arena;
    IrModule m;
    IrBuilder b;
} Fixture;

static Span at(uint32_t row) { Span s = {row * 10, row * 10 + 5, row, 0, row, 5}; return s; }

static Fixture *fx_new(void)
{
    Fixture *x = calloc(1, sizeof *x);
    arena_init(&x->arena);
    x->m.arena = &x->arena;
    x->m.path = "t.py";
    x->m.src = "";
    ir_build_init(&x->b, &x->m, at(0));
    return x;
}

static void fx_free(Fixture *x)
{
    ir_build_free(&x->b);
    ir_module_free(&x->m);
    arena_free(&x->arena);
    free(x);
}

static const IrOp *op(Fixture *x, uint32_t fn, uint32_t i) { return &x->m.funcs.items[fn]->ops.items[i]; }

/* build-1: an op inside `with torch.no_grad():` runs without grad; the WITH itself and the op after
 * END_WITH run in the enclosing mode; a WITH that sets no mode (GRAD_KEEP) leaves the outer one. */
static void test_with_modes(void **state)
{
    GL_UNUSED(state);
    Fixture *x = fx_new();
    IrBuilder *b = &x->b;
    uint32_t ctx = ir_build_const(b, CONST_OTHER, NULL, at(1));
    uint32_t w = ir_build_with(b, ctx, GRAD_NO_GRAD, at(1));
    uint32_t in = ir_build_const(b, CONST_INT, "1", at(2));
    ir_build_with(b, ctx, GRAD_KEEP, at(3));
    uint32_t inner = ir_build_const(b, CONST_INT, "2", at(4));
    ir_build_end_with(b, at(4));
    ir_build_end_with(b, at(5));
    uint32_t after = ir_build_const(b, CONST_INT, "3", at(6));
    assert_int_equal(op(x, 0, w)->mode, GRAD_DEFAULT);
    assert_int_equal(op(x, 0, w)->aux, GRAD_NO_GRAD);
    assert_int_equal(op(x, 0, in)->mode, GRAD_NO_GRAD);
    assert_int_equal(op(x, 0, inner)->mode, GRAD_NO_GRAD);
    assert_int_equal(op(x, 0, after)->mode, GRAD_DEFAULT);
    assert_int_equal(b->modes.len, 0);
    fx_free(x);
}

/* build-2: a C++ guard lasts to the end of its block scope, which closes it with an END_WITH; a guard
 * outside any scope (a global) is an empty region. */
static void test_guard_scopes(void **state)
{
    GL_UNUSED(state);
    Fixture *x = fx_new();
    IrBuilder *b = &x->b;
    ir_build_guard(b, GRAD_NO_GRAD, at(1)); /* namespace scope: CONST, WITH, END_WITH */
    assert_int_equal(x->m.funcs.items[0]->ops.len, 3);
    assert_int_equal(op(x, 0, 2)->kind, IR_END_WITH);
    uint32_t global = ir_build_const(b, CONST_INT, "0", at(2));
    assert_int_equal(op(x, 0, global)->mode, GRAD_DEFAULT);
    ir_build_scope_begin(b);
    ir_build_guard(b, GRAD_INFERENCE, at(3));
    uint32_t in = ir_build_const(b, CONST_INT, "1", at(4));
    ir_build_scope_end(b, at(5));
    uint32_t after = ir_build_const(b, CONST_INT, "2", at(6));
    assert_int_equal(op(x, 0, in)->mode, GRAD_INFERENCE);
    assert_int_equal(op(x, 0, after - 1)->kind, IR_END_WITH);
    assert_int_equal(op(x, 0, after)->mode, GRAD_DEFAULT);
    ir_build_scope_end(b, at(7)); /* no scope open: nothing */
    assert_int_equal(x->m.funcs.items[0]->ops.len, after + 1);
    fx_free(x);
}

/* build-3: loops are numbered as their LOOP ops are emitted, nest through parent, and a for loop's
 * NEXT of the iterable is the value its target gets; break outside a loop emits nothing. */
static void test_loops(void **state)
{
    GL_UNUSED(state);
    Fixture *x = fx_new();
    IrBuilder *b = &x->b;
    ir_build_jump(b, IR_BREAK, at(0));
    assert_int_equal(x->m.funcs.items[0]->ops.len, 0);
    ir_build_push(b, ir_build_load(b, "loader", 6, NULL, at(1)));
    ir_build_loop_begin(b, false, at(1));
    uint32_t next = ir_build_pop(b);
    assert_int_equal(op(x, 0, next)->kind, IR_NEXT);
    assert_int_equal(op(x, 0, next)->a, 0);
    ir_build_loop_begin(b, true, at(2));
    ir_build_jump(b, IR_BREAK, at(3));
    ir_build_loop_end(b, at(3));
    ir_build_loop_end(b, at(4));
    const IrFunc *f = x->m.funcs.items[0];
    assert_int_equal(f->loops.len, 2);
    assert_int_equal(f->loops.items[0].iter, 0);
    assert_int_equal(f->loops.items[1].parent, 0);
    assert_int_equal(f->loops.items[1].iter, IR_NONE);
    assert_int_equal(op(x, 0, f->loops.items[1].op + 1)->aux, 1); /* the BREAK leaves the inner loop */
    assert_int_equal(ir_op_loop(f, f->loops.items[1].op + 1), 1);
    assert_int_equal(ir_build_fn(b)->loop, IR_NONE);
    fx_free(x);
}

/* build-4: methods are noted on their class (__init__, forward) and qualified by it; a nested def by
 * its function; a name read but never bound in a function is a global there. */
static void test_functions_and_classes(void **state)
{
    GL_UNUSED(state);
    Fixture *x = fx_new();
    IrBuilder *b = &x->b;
    IrClass *c = ir_build_class_begin(b, "Net", at(1));
    IrFunc *fwd = ir_build_func_begin(b, "forward", at(2), ir_build_fn(b)->cls, false);
    ir_build_param(b, "self", 4, NULL, 0, at(2));
    ir_build_load(b, "torch", 5, "torch", at(3));
    ir_build_load(b, "self", 4, NULL, at(3));
    IrFunc *inner = ir_build_func_begin(b, "helper", at(4), ir_build_fn(b)->cls, false);
    assert_string_equal(inner->qualname, "Net.forward.helper");
    assert_ptr_equal(ir_build_func_end(b), inner);
    assert_ptr_equal(ir_build_func_end(b), fwd);
    uint32_t define;
    assert_ptr_equal(ir_build_class_end(b, at(5), &define), c);
    assert_int_equal(op(x, 0, define)->aux, IR_NONE - 1 - c->index);
    assert_string_equal(fwd->qualname, "Net.forward");
    assert_int_equal(c->forward, fwd->index);
    assert_int_equal(c->methods.len, 1);
    uint32_t torch = ir_func_var(fwd, &x->arena, "torch", 5), self = ir_func_var(fwd, &x->arena, "self", 4);
    assert_true(fwd->vars.items[torch].is_global);
    assert_false(fwd->vars.items[self].is_global);
    assert_true(fwd->vars.items[self].is_param);
    assert_int_equal(ir_build_fn(b)->cls, IR_NONE);
    assert_null(ir_build_class_end(b, at(6), &define));
    assert_int_equal(define, IR_NONE);
    fx_free(x);
}

/* build-5: `self.h` of a variable is a pseudo-variable; an attribute of a call's value is not. */
static void test_member_vars(void **state)
{
    GL_UNUSED(state);
    Fixture *x = fx_new();
    IrBuilder *b = &x->b;
    uint32_t self = ir_build_load(b, "self", 4, NULL, at(1));
    uint32_t v = ir_build_member_var(b, self, "h");
    assert_int_not_equal(v, IR_NONE);
    assert_string_equal(x->m.funcs.items[0]->vars.items[v].name, "self.h");
    assert_int_equal(ir_build_member_var(b, self, "h"), v);
    uint32_t call = ir_build_call(b, self, NULL, at(2));
    ir_build_arg(b, call, self, "k");
    assert_int_equal(op(x, 0, call)->nargs, 1);
    assert_int_equal(ir_build_member_var(b, call, "h"), IR_NONE);
    assert_int_equal(ir_build_member_var(b, IR_NONE, "h"), IR_NONE);
    fx_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_with_modes, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_guard_scopes, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_loops, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_functions_and_classes, count_alloc_setup, count_alloc_teardown),
        cmocka_unit_test_setup_teardown(test_member_vars, count_alloc_setup, count_alloc_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
