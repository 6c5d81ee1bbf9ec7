/* Private to src/front/cxx: the state of one C++ lowering and what its files share (cx_lower.c: driver,
 * statements, declarations, functions; cx_expr.c: expressions and targets; cx_compdb.c: the command
 * line; cx_pch.c: precompiled headers). */
#ifndef GL_CX_INT_H
#define GL_CX_INT_H

#include "base/strbuf.h"
#include "base/strmap.h"
#include "front/cxx/cx.h"
#include "front/cxx/cx_shadow.h"
#include "ir/build.h"

#if GL_HAVE_LIBCLANG
#include "front/cxx/cx_clang.h"

#define CX_MAX_DEPTH 400
#define CX_STUB_DIR "/__gradleak__/libtorch"
#define CX_COMPAT_DIR "/__gradleak__/compat"
#define CX_N_STUB_NAMES 22

extern const char gl_libtorch_stub[];
/* libclang's table (cx_clang.h), set by cx_lower and cx_config_key before any other use. */
extern const CxApi *cx_A;
/* Names that lead to the stub when the real headers are absent (cx_compdb.c). */
extern const char *const cx_stub_names[CX_N_STUB_NAMES];


typedef enum WorkKind { W_DECL, W_STMT, W_EXPR, W_EXIT, W_TARGET, W_VARDECL, W_ACTION } WorkKind;

typedef enum Action {
    A_EXPR_STMT, A_POP, A_DUP, A_CONST_UNKNOWN, A_FOR_BEGIN, A_WHILE_BEGIN, A_END_LOOP, A_IF, A_ELSE,
    A_END_IF, A_TRY, A_EXCEPT, A_END_TRY, A_RETURN, A_BREAK, A_CONTINUE, A_SCOPE_BEGIN, A_SCOPE_END,
    A_FUNC_BEGIN, A_FUNC_END, A_CLASS_BEGIN, A_CLASS_END, A_INIT_BEGIN, A_CALL, A_AUG, A_STORE_VAR,
    A_SET_ATTR, A_SET_ITEM, A_SET_SELF, A_COERCE, A_GUARD, A_PASS, A_UNPACK, A_NEW_OBJECT, A_BINDINGS,
} Action;

typedef struct Work {
    uint8_t kind, act;
    uint16_t depth;
    uint32_t aux, aux2, vbase;
    Span span;
    CXCursor c;
} Work;

typedef Array(Work) Schedule;

typedef struct ClassCtx {
    uint32_t index;
    Array(CXCursor) fields; /* FieldDecls, assigned by __init__ */
} ClassCtx;

/* What a declared type means to the analysis. */
typedef enum TyClass {
    TY_OTHER, TY_SCALAR, TY_TENSOR, TY_MODULE, TY_OPTIM, TY_LOADER, TY_CONTAINER, TY_NOGRAD, TY_INFER,
    TY_AUTOGRAD,
} TyClass;

typedef struct TyInfo {
    uint8_t cls;       /* TyClass */
    const char *qual;  /* "torch.nn.Linear", "torch.optim.SGD" */
    const char *local; /* a class of this file that implements it ("NetImpl"), or NULL */
} TyInfo;

typedef struct Lower {
    IrModule *m;
    IrBuilder B;              /* values, open functions, loops, guard scopes (ir/build.h) */
    Arena *arena;
    const char *src;
    size_t len;
    CXTranslationUnit tu;
    Array(Work) work;
    Array(ClassCtx) classes;  /* beside B.classes: the fields __init__ assigns */
    Array(CXCursor) kids;     /* scratch */
    StrMap class_index;       /* class name -> IrClass index */
    StrMap types;             /* canonical type spelling -> index into tyinfo */
    Array(TyInfo) tyinfo;
    LineIndex lines;
    bool truncated;
    const CxShadow *shadow;    /* lowering the shadow source: its offsets map to the file's */
    Array(uint32_t) skip;      /* [start, end) pairs of file offsets: functions the shadow lowers */
} Lower;

typedef struct Args {
    Array(const char *) v;
    Arena *arena;
} Args;

/* ---- the builder and the work stack ---------------------------------------------------------- */

static inline IrBuildFn *L_fn(Lower *L) { return ir_build_fn(&L->B); }
static inline IrFunc *L_f(Lower *L) { return ir_build_func(&L->B); }
static inline IrOp *op_at(Lower *L, uint32_t i) { return ir_build_op(&L->B, i); }
static inline uint32_t emit(Lower *L, IrOpKind kind, Span span) { return ir_build_emit(&L->B, kind, span); }
static inline void push_val(Lower *L, uint32_t v) { ir_build_push(&L->B, v); }
static inline uint32_t pop_val(Lower *L) { return ir_build_pop(&L->B); }
static inline uint32_t cx_const(Lower *L, Span sp, ConstKind k, const char *text)
{
    return ir_build_const(&L->B, k, text, sp);
}
static inline uint32_t cx_load(Lower *L, Span sp, const char *name, const char *qual)
{
    return ir_build_load(&L->B, name, strlen(name), qual, sp);
}
static inline bool cx_is_expr(CXCursor c) { return cx_A->clang_isExpression(cx_A->clang_getCursorKind(c)) != 0; }

static inline void sched(Schedule *s, WorkKind k, CXCursor c, Span span, uint16_t depth)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = (uint8_t)k;
    w.c = c;
    w.span = span;
    w.depth = depth;
    array_push(s, w);
}

static inline Work *sched_act(Schedule *s, Action a, CXCursor c, Span span, uint32_t aux, uint32_t aux2)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = W_ACTION;
    w.act = (uint8_t)a;
    w.c = c;
    w.span = span;
    w.aux = aux;
    w.aux2 = aux2;
    array_push(s, w);
    return array_back(s);
}

/* ---- cursors and source text (cx_lower.c) ---------------------------------------------------- */

const char *cx_str(Lower *L, CXString s); /* a copy in L's arena; disposes s */
const char *cx_spelling(Lower *L, CXCursor c);
uint32_t cx_children(Lower *L, CXCursor c); /* direct children appended to L->kids; the first index */
bool cx_offsets(Lower *L, CXCursor c, uint32_t *s, uint32_t *e); /* file offsets (false: not in this file) */
void cx_pos(Lower *L, uint32_t off, uint32_t *row, uint32_t *col);
Span cx_span_of(Lower *L, CXCursor c, Span fallback);
const char *cx_text(Lower *L, Span s);

/* ---- names, types, expressions, targets (cx_expr.c) ------------------------------------------ */

const char *cx_cxx_qual(Lower *L, CXCursor decl);   /* "torch::nn::Linear" */
const char *cx_py_qual(Lower *L, const char *cxx); /* "torch.nn.Linear", or NULL */
bool cx_is_main(CXCursor decl);
TyInfo cx_classify(Lower *L, CXType t);
uint32_t cx_construct(Lower *L, const TyInfo *ti, Span sp);
uint32_t cx_scalar(Lower *L, uint32_t v, Span sp);
/* The name of the class of this file (or of a header, lowered here) that type t is (through
 * references, pointers and smart pointers), when it is no module, optimizer, loader, tensor or
 * container; else NULL. */
const char *cx_local_class(Lower *L, CXType t);
/* The value of class `name` of this file (its definition), for a call that makes an object. */
uint32_t cx_class_ref(Lower *L, const char *name, Span sp);
/* "::ns::Class::method" / "::ns::f": the name other files' summaries give a function of the project
 * (not of the C++ library, LibTorch or CUDA), or NULL. */
const char *cx_extern_key(Lower *L, CXCursor decl);
const char *cx_op_at(Lower *L, uint32_t i, uint32_t end);
const char *cx_member_name(Lower *L, Span sp);
CXCursor cx_unwrap(Lower *L, CXCursor c);
void cx_expr(Lower *L, const Work *w, Schedule *s);   /* W_EXPR */
void cx_exit(Lower *L, const Work *w);                /* W_EXIT */
void cx_emit_call(Lower *L, const Work *w);           /* A_CALL */
void cx_target(Lower *L, const Work *w, Schedule *s); /* W_TARGET */

/* ---- the command line (cx_compdb.c) ---------------------------------------------------------- */

void cx_args_add(Args *a, const char *s);
bool cx_file_exists(const char *p);
void cx_abs_path(const char *path, char *out, size_t cap);
/* The command line a file is parsed with; sets res->from_compdb and res->mode, and *inc_dir to the
 * real headers' folder. Returns whether the real headers are used. */
bool cx_command(Lower *L, const char *abs_path, const CxConfig *cfg, Args *args, CxResult *res, const char **inc_dir);
enum CXErrorCode cx_parse(CXIndex idx, const char *path, const char *const *args, int nargs,
                          struct CXUnsavedFile *un, unsigned nun, unsigned opts, CXTranslationUnit *tu);
uint64_t cx_hash(uint64_t h, const void *p, size_t n); /* FNV-1a */
uint64_t cx_hash_stat(uint64_t h, const char *path);

/* ---- precompiled headers (cx_pch.c) ---------------------------------------------------------- */

/* The path of a PCH for this command line, built now if there is none; NULL: parse without. */
const char *cx_pch(Lower *L, CXIndex idx, const Args *args, bool real, const char *inc_dir, const CxConfig *cfg,
                   struct CXUnsavedFile *stub, uint32_t nstub, uint64_t *key_out);
void cx_pch_reject(uint64_t key, const char *path);

#endif /* GL_HAVE_LIBCLANG */
#endif
