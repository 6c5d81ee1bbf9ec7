/* gradleak's intermediate representation: per function, a flat array of ops in source order with
 * structured region markers (LOOP/END_LOOP, IF/ELSE/END_IF, TRY/EXCEPT/END_TRY, WITH/END_WITH).
 *
 * Why regions and not a basic-block CFG: Python's control flow is always structured (no goto), so
 * abstract interpretation over regions is exact, needs no dominator or RPO computation, and a loop's
 * body is a contiguous op range, which is what the rules ask about ("is this op inside loop L?").
 * Every value is the op that produced it (op index = value id), so temporaries are SSA by
 * construction; named variables are slots in an environment, joined at region ends, with a phi at
 * each loop header (see dataflow.c). */
#ifndef GL_IR_H
#define GL_IR_H

#include "base/arena.h"
#include "base/array.h"
#include "base/diag.h"
#include "base/strmap.h"

#define IR_NONE UINT32_MAX

typedef enum IrOpKind {
#define IR_OP(name, text) IR_##name,
#include "ir/ir.def"
#undef IR_OP
    IR_OP_COUNT
} IrOpKind;

typedef enum ConstKind { CONST_NONE, CONST_BOOL, CONST_INT, CONST_FLOAT, CONST_STR, CONST_OTHER } ConstKind;
typedef enum BuildKind { BUILD_LIST, BUILD_TUPLE, BUILD_DICT, BUILD_SET, BUILD_STR } BuildKind;
typedef enum BinOp {
    BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_FLOORDIV, BIN_MOD, BIN_POW, BIN_MATMUL,
    BIN_AND, BIN_OR, BIN_XOR, BIN_LSHIFT, BIN_RSHIFT, BIN_OTHER
} BinOp;
typedef enum UnOp { UN_NEG, UN_POS, UN_INVERT, UN_NOT } UnOp;
enum { IR_PDEF_NONE = 1, IR_PDEF_FALSE, IR_PDEF_TRUE }; /* IrOp.pad of a PARAM */

/* The grad mode an op runs under, from lexically enclosing `with` blocks and decorators. */
typedef enum GradMode {
    GRAD_DEFAULT,   /* autograd records */
    GRAD_NO_GRAD,   /* torch.no_grad(), set_grad_enabled(False) */
    GRAD_INFERENCE, /* torch.inference_mode() */
    GRAD_MAYBE_OFF, /* set_grad_enabled(<expr>): off in some phase; treated as off for hazards */
    GRAD_ENABLE,    /* torch.enable_grad() */
    GRAD_KEEP,      /* WITH only: a context that does not change grad mode */
} GradMode;

#define IR_F_AUG 0x01       /* BINOP of an augmented assignment (x += y) */
#define IR_F_STMT 0x02      /* CALL whose value is discarded (expression statement) */
#define IR_F_TARGET 0x04    /* STORE/SET_* of a loop target or with-as target */
#define IR_UNPACK_STAR 0xFFFF

typedef struct IrOp {
    uint8_t kind;      /* IrOpKind */
    uint8_t mode;      /* GradMode in force */
    uint8_t flags;     /* IR_F_* */
    uint8_t pad;       /* PARAM: its default, IR_PDEF_* (a literal None/False/True), else 0 */
    uint32_t aux;
    uint32_t a, b, c;
    uint32_t var;      /* variable slot (LOAD/STORE/DEL/PARAM, pseudo-variable for ATTR/SET_ATTR) */
    uint32_t args;     /* first index into IrFunc.args / IrFunc.kw */
    uint32_t nargs;
    const char *name;  /* attribute name, literal text */
    const char *qual;  /* resolved dotted name through imports ("torch.cuda.empty_cache"), or NULL */
    Span span;
} IrOp;

typedef enum LoopKind {
    LOOP_UNKNOWN,
    LOOP_STEP,     /* runs once per training or evaluation step */
    LOOP_EPOCH,    /* contains step loops */
    LOOP_SEQUENCE, /* runs inside one forward (time steps, chunks): bounded */
    LOOP_FEEDBACK, /* feeds model outputs back into the model (sampling, generation) */
} LoopKind;

typedef struct IrLoop {
    uint32_t op;        /* the LOOP op */
    uint32_t end;       /* the END_LOOP op: the body is (op, end) */
    uint32_t parent;    /* enclosing loop in the same function, or IR_NONE */
    uint32_t iter;      /* op of the iterable (for loops), or IR_NONE (while) */
    uint8_t is_while;
    uint8_t is_comp;    /* a comprehension's `for` clause (its body is one expression) */
    uint8_t kind;       /* LoopKind, set by the analysis */
    uint8_t has_backward, has_opt_step, has_model_call, has_feedback, in_module_method;
    uint8_t has_step_call; /* calls a function of the file that trains (FuncFacts.trains) */
    uint8_t backward_after; /* a backward() follows the loop in the same iteration of its parent (or
                             * in the function): what the loop computes may be differentiated */
    uint32_t feedback_call; /* a module call fed by its own output (for messages) */
    Span span;          /* the loop header line (`for x in y:`) */
} IrLoop;

typedef struct IrVar {
    const char *name;  /* "x", or "self.hidden" for a pseudo-variable */
    uint32_t base;     /* for pseudo-variables: the base variable; IR_NONE otherwise */
    uint8_t is_global; /* not assigned in this function (or declared global/nonlocal) */
    uint8_t is_param;
} IrVar;

typedef struct IrFunc IrFunc;
typedef struct IrClass IrClass;

struct IrFunc {
    const char *name;      /* "forward", "<module>", "<lambda>" */
    const char *qualname;  /* "Decoder.forward" */
    uint32_t index;
    uint32_t parent;       /* enclosing function, IR_NONE for the module */
    uint32_t cls;          /* class the function is a method of, or IR_NONE */
    uint8_t base_mode;     /* GradMode from decorators (@torch.no_grad()) */
    uint32_t grad_param;   /* `with torch.set_grad_enabled(p):` where p is a parameter defaulting to
                            * True: p's position + 1 (self counts), else 0. Grad is on in the body
                            * (the default); a call that passes False gets no graph back */
    uint8_t is_async, is_lambda;
    uint32_t nparams;
    Span span;             /* the def line */
    Array(IrOp) ops;
    Array(uint32_t) args;  /* operand lists of CALL/BUILD */
    Array(const char *) kw;/* parallel to args: keyword name or NULL */
    Array(IrVar) vars;
    StrMap var_index;      /* plain variable name -> vars index (ir_func_var; attribute pseudo-vars are not in it) */
    StrMap pseudo_index;   /* attribute pseudo-var name ("self.h") -> vars index, the first of that name
                            * (ir_func_pseudo_var; see ir_func_index_pseudo) */
    Array(IrLoop) loops;
    Array(const char *) decorators; /* resolved dotted names */
    const char *ret_qual; /* the return annotation, resolved (`-> nn.Module`); NULL: none */
    const char *cxx_key;   /* C++: "::ns::Class::method", the name other files' calls reach it by
                            * (cross-file summaries), or NULL */
};

struct IrClass {
    const char *name;
    uint32_t index;
    uint32_t init;          /* __init__ function or IR_NONE */
    uint32_t forward;       /* forward function or IR_NONE */
    Array(const char *) bases; /* resolved dotted names of the bases */
    Array(uint32_t) methods;
    uint8_t is_module;      /* subclasses torch.nn.Module (directly or through a local class) */
    Span span;
};

/* One file's IR. All memory is in the arena. */
typedef struct IrModule {
    Arena *arena;
    const char *path;
    const char *src;
    size_t len;
    Array(IrFunc *) funcs;  /* funcs.items[0] is the module top level */
    Array(IrClass *) classes;
    Array(Span) error_spans;  /* syntax errors (ERROR/MISSING nodes) */
    Array(Span) comments;     /* every comment, for suppressions and fixture expectations */
    Array(const char *) star_imports; /* Python: the modules of `from X import *`, in order */
    Array(const char *) imported; /* Python: the dotted names of the file's other imports ("X.a" of
                                   * `from X import a`), at most 256: the modules it names */
    uint32_t n_nodes;
} IrModule;

extern const char *const ir_op_names[IR_OP_COUNT];

void ir_module_free(IrModule *m); /* frees the arrays; the arena is the caller's */
IrFunc *ir_func_new(IrModule *m, const char *name);
uint32_t ir_func_var(IrFunc *f, Arena *arena, const char *name, size_t len);
uint32_t ir_func_pseudo_var(IrFunc *f, Arena *arena, uint32_t base, const char *attr);
/* Puts pseudo-var v into f->pseudo_index unless a variable of its name is there (for copies of a
 * function's variables made without ir_func_pseudo_var). */
void ir_func_index_pseudo(IrFunc *f, uint32_t v);
uint32_t ir_op_loop(const IrFunc *f, uint32_t op); /* innermost loop whose body holds op, or IR_NONE */
bool ir_loop_contains(const IrFunc *f, uint32_t loop, uint32_t op);
/* Queries that only read the IR. */
uint32_t ir_call_receiver(const IrFunc *f, uint32_t call); /* op of x in x.m(...), or IR_NONE */
const char *ir_call_method(const IrFunc *f, uint32_t call);  /* "append" for x.append(...), else NULL */
uint32_t ir_call_kwarg(const IrFunc *f, uint32_t call, const char *kw); /* op of a keyword argument */
bool ir_const_true(const IrFunc *f, uint32_t op);  /* the literal True */
bool ir_const_false(const IrFunc *f, uint32_t op); /* the literal False */
uint32_t ir_root_var(const IrFunc *f, uint32_t op); /* variable behind x, x.a, x[k][j]; IR_NONE */
/* The first base class of class ci that the file defines, or IR_NONE. */
uint32_t ir_class_local_base(const IrModule *m, uint32_t ci);
uint32_t ir_class_method(const IrModule *m, uint32_t cls, const char *name); /* its function, or IR_NONE */
/* Does class ci derive from a base whose last dotted name contains `base`, directly or through
 * classes of the file (a few levels)? */
bool ir_class_derives_from(const IrModule *m, uint32_t ci, const char *base);
/* Is f a method of an nn.Module class, or nested in one? */
bool ir_func_in_module_class(const IrModule *m, const IrFunc *f);
/* The variable of f's first parameter (a method's self), or IR_NONE when it has none. */
uint32_t ir_first_param(const IrFunc *f);
/* The attribute's name when op reads `self.name` (self_var: the variable of self), else NULL. */
const char *ir_self_attr(const IrFunc *f, uint32_t op, uint32_t self_var);
/* At op i, `self.sums[k] += v` (a write into an element of an attribute of self of that element
 * plus, minus, times or over v): the op of v, else IR_NONE. */
uint32_t ir_element_sum(const IrFunc *f, uint32_t i, uint32_t self_var);
const char *ir_span_text(const IrModule *m, Span s, Arena *arena); /* source text of a span (one line) */
void ir_dump(const IrModule *m, void (*emit)(void *ctx, const char *s), void *ctx);

#endif
