/* Lowers a libclang AST of LibTorch code into gradleak's IR, so the same dataflow and rules run on
 * C++ as on Python.
 *
 * libclang visits children through callbacks and recurses inside itself (clang bounds nesting:
 * -fbracket-depth). This file never recurses: a cursor's direct children are collected into an
 * array (a visitor that returns CXChildVisit_Continue), and statements, expressions and
 * assignment targets are work items on one explicit stack, as in py_lower.c. Items nested deeper
 * than CX_MAX_DEPTH are lowered as unknown values (and the result says so).
 *
 * How C++ maps onto the Python-shaped IR:
 *  - names resolve through clang to their declarations and are spelled the Python way
 *    (torch::nn::Linear -> "torch.nn.Linear"), so src/ir/torch_api.def serves both languages;
 *  - a scope holding a torch::NoGradGuard / c10::InferenceMode / torch::AutoGradMode(false)
 *    variable is a WITH region from the declaration to the end of the enclosing block;
 *  - methods get an implicit `self` parameter; `this->x` and implicit member accesses are
 *    attributes of `self`; a constructor is `__init__` and assigns every field;
 *  - variables whose declared type is a module, optimizer or data loader are built by a call of
 *    that class (a ModuleHolder stands for its Impl class), so `model->forward(x)` and `model(x)`
 *    are model calls and the loop kinds come out as for Python;
 *  - overloaded operators on tensors (`total += loss`) lower like built-in ones; `true`/`false`
 *    are the constants True/False; positional backward(grad, retain_graph, create_graph)
 *    arguments get their keyword names. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
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

extern const char gl_libtorch_stub[];

static const CxApi *A;

typedef enum WorkKind { W_DECL, W_STMT, W_EXPR, W_EXIT, W_TARGET, W_VARDECL, W_ACTION } WorkKind;

typedef enum Action {
    A_EXPR_STMT, A_POP, A_DUP, A_CONST_UNKNOWN, A_FOR_BEGIN, A_WHILE_BEGIN, A_END_LOOP, A_IF, A_ELSE,
    A_END_IF, A_TRY, A_EXCEPT, A_END_TRY, A_RETURN, A_BREAK, A_CONTINUE, A_SCOPE_BEGIN, A_SCOPE_END,
    A_FUNC_BEGIN, A_FUNC_END, A_CLASS_BEGIN, A_CLASS_END, A_INIT_BEGIN, A_CALL, A_AUG, A_STORE_VAR,
    A_SET_ATTR, A_SET_ITEM, A_SET_SELF, A_COERCE, A_GUARD, A_PASS, A_UNPACK,
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

/* ---- small helpers --------------------------------------------------------------------------- */

static IrBuildFn *L_fn(Lower *L) { return ir_build_fn(&L->B); }
static IrFunc *L_f(Lower *L) { return ir_build_func(&L->B); }
static IrOp *op_at(Lower *L, uint32_t i) { return ir_build_op(&L->B, i); }

static const char *cx__str(Lower *L, CXString s)
{
    const char *c = A->clang_getCString(s);
    const char *r = arena_strdup(L->arena, c ? c : "");
    A->clang_disposeString(s);
    return r;
}

static const char *cx__spelling(Lower *L, CXCursor c) { return cx__str(L, A->clang_getCursorSpelling(c)); }

static enum CXChildVisitResult cx__kid(CXCursor c, CXCursor parent, CXClientData d)
{
    GL_UNUSED(parent);
    Array(CXCursor) *k = d;
    array_push(k, c);
    return CXChildVisit_Continue;
}

/* Direct children of c, appended to L->kids; returns the first index. */
static uint32_t cx__children(Lower *L, CXCursor c)
{
    uint32_t first = L->kids.len;
    A->clang_visitChildren(c, cx__kid, &L->kids);
    return first;
}

static bool cx__offsets(Lower *L, CXCursor c, uint32_t *s, uint32_t *e)
{
    CXSourceRange r = A->clang_getCursorExtent(c);
    CXFile f1, f2;
    unsigned o1, o2;
    A->clang_getFileLocation(A->clang_getRangeStart(r), &f1, NULL, NULL, &o1);
    A->clang_getFileLocation(A->clang_getRangeEnd(r), &f2, NULL, NULL, &o2);
    if (!A->clang_Location_isFromMainFile(A->clang_getRangeStart(r))) return false;
    if (L->shadow && !(cx_shadow_map(L->shadow, o1, false, &o1) && cx_shadow_map(L->shadow, o2, true, &o2)))
        return false;
    if (o1 > L->len || o2 > L->len || o2 < o1) return false;
    *s = o1, *e = o2;
    return true;
}

/* Row and column of a byte offset (clang counts the same bytes). */
static void cx__pos(Lower *L, uint32_t off, uint32_t *row, uint32_t *col)
{
    if (off > L->len) off = (uint32_t)L->len;
    uint32_t r = lineindex_line_of(&L->lines, off);
    *row = r;
    *col = off - L->lines.starts[r];
}

static Span cx__span_of(Lower *L, CXCursor c, Span fallback)
{
    uint32_t s, e;
    if (!cx__offsets(L, c, &s, &e)) return fallback;
    Span sp;
    sp.start = s, sp.end = e;
    cx__pos(L, s, &sp.row, &sp.col);
    cx__pos(L, e, &sp.end_row, &sp.end_col);
    return sp;
}

static const char *cx__text(Lower *L, Span s)
{
    return arena_strndup(L->arena, L->src + s.start, s.end > s.start ? s.end - s.start : 0);
}

static bool cx__is_expr(CXCursor c) { return A->clang_isExpression(A->clang_getCursorKind(c)) != 0; }

static uint32_t emit(Lower *L, IrOpKind kind, Span span) { return ir_build_emit(&L->B, kind, span); }
static void push_val(Lower *L, uint32_t v) { ir_build_push(&L->B, v); }
static uint32_t pop_val(Lower *L) { return ir_build_pop(&L->B); }

static void sched(Schedule *s, WorkKind k, CXCursor c, Span span, uint16_t depth)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = (uint8_t)k;
    w.c = c;
    w.span = span;
    w.depth = depth;
    array_push(s, w);
}

static Work *sched_act(Schedule *s, Action a, CXCursor c, Span span, uint32_t aux, uint32_t aux2)
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

static uint32_t cx__const(Lower *L, Span sp, ConstKind k, const char *text)
{
    return ir_build_const(&L->B, k, text, sp);
}

static uint32_t cx__load(Lower *L, Span sp, const char *name, const char *qual)
{
    return ir_build_load(&L->B, name, strlen(name), qual, sp);
}

/* ---- names and types ------------------------------------------------------------------------- */

/* "torch::nn::Linear" for a declaration (inline and anonymous namespaces skipped). */
static const char *cx__cxx_qual(Lower *L, CXCursor decl)
{
    const char *segs[24];
    uint32_t n = 0;
    CXCursor c = decl;
    for (int guard = 0; guard < 24 && !A->clang_Cursor_isNull(c); guard++) {
        enum CXCursorKind k = A->clang_getCursorKind(c);
        if (k == CXCursor_TranslationUnit || A->clang_isDeclaration(k) == 0) break;
        const char *sp = cx__spelling(L, c);
        bool skip = !sp[0] || (k == CXCursor_Namespace && (!strncmp(sp, "__", 2) || !strcmp(sp, "detail")));
        if (!skip && n < ARRAY_LEN(segs)) segs[n++] = sp;
        c = A->clang_getCursorSemanticParent(c);
    }
    if (!n) return NULL;
    StrBuf b;
    sb_init(&b);
    for (uint32_t i = n; i-- > 0;) sb_printf(&b, "%s%s", b.len ? "::" : "", segs[i]);
    const char *r = arena_strndup(L->arena, b.data, b.len);
    sb_free(&b);
    return r;
}

/* The Python spelling of a C++ name, as src/ir/torch_api.def knows it, or NULL. */
static const char *cx__py_qual(Lower *L, const char *cxx)
{
    if (!cxx) return NULL;
    static const struct { const char *cxx, *py; } special[] = {
        {"c10::cuda::CUDACachingAllocator::emptyCache", "torch.cuda.empty_cache"},
        {"torch::cuda::empty_cache", "torch.cuda.empty_cache"},
        {"torch::data::make_data_loader", "torch.utils.data.DataLoader"},
        {"torch::nll_loss", "torch.nn.functional.nll_loss"},
        {"torch::mse_loss", "torch.nn.functional.mse_loss"},
        {"torch::l1_loss", "torch.nn.functional.l1_loss"},
        {"torch::cross_entropy_loss", "torch.nn.functional.cross_entropy"},
        {"torch::binary_cross_entropy", "torch.nn.functional.binary_cross_entropy"},
        {"torch::binary_cross_entropy_with_logits", "torch.nn.functional.binary_cross_entropy_with_logits"},
        {"torch::smooth_l1_loss", "torch.nn.functional.smooth_l1_loss"},
        {"torch::kl_div", "torch.nn.functional.kl_div"},
        {"at::nll_loss", "torch.nn.functional.nll_loss"},
        {"at::mse_loss", "torch.nn.functional.mse_loss"},
        {"at::cross_entropy_loss", "torch.nn.functional.cross_entropy"},
    };
    for (size_t i = 0; i < ARRAY_LEN(special); i++)
        if (!strcmp(cxx, special[i].cxx)) return special[i].py;
    size_t n = strlen(cxx);
    if (n > 7 && !strcmp(cxx + n - 7, "Options")) return NULL; /* LinearOptions: a value, not a module */
    StrBuf b;
    sb_init(&b);
    const char *p = cxx;
    if (!strncmp(p, "at::", 4)) sb_puts(&b, "torch"), p += 2;
    else if (!strncmp(p, "c10::", 5)) sb_puts(&b, "torch"), p += 3;
    for (; *p; p++) {
        if (p[0] == ':' && p[1] == ':') sb_putc(&b, '.'), p++;
        else sb_putc(&b, *p);
    }
    /* torch::nn::LinearImpl is what torch::nn::Linear holds */
    if (b.len > 4 && !strcmp(b.data + b.len - 4, "Impl") && !strncmp(b.data, "torch.", 6)) b.len -= 4, b.data[b.len] = 0;
    const char *r = arena_strndup(L->arena, b.data, b.len);
    sb_free(&b);
    return r;
}

static bool cx__is_main(CXCursor decl)
{
    return A->clang_Location_isFromMainFile(A->clang_getCursorLocation(decl)) != 0;
}

/* Strips references, pointers and smart pointers: the type a variable really refers to. */
static CXType cx__core_type(Lower *L, CXType t)
{
    for (int guard = 0; guard < 8; guard++) {
        t = A->clang_getCanonicalType(t);
        if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) {
            t = A->clang_getPointeeType(t);
            continue;
        }
        if (t.kind != CXType_Record) break;
        const char *q = cx__cxx_qual(L, A->clang_getTypeDeclaration(t));
        if (q && (!strcmp(q, "std::shared_ptr") || !strcmp(q, "std::unique_ptr")) &&
            A->clang_Type_getNumTemplateArguments(t) > 0) {
            t = A->clang_Type_getTemplateArgumentAsType(t, 0);
            continue;
        }
        break;
    }
    return t;
}

static bool cx__last_is(const char *q, const char *name)
{
    const char *c = strrchr(q, ':');
    c = c ? c + 1 : q;
    return !strcmp(c, name);
}

/* Classifies a record: walks its bases (iteratively, bounded) looking for torch::nn::Module,
 * torch::nn::ModuleHolder<Impl>, torch::optim::Optimizer. */
static TyInfo cx__classify_record(Lower *L, CXCursor decl)
{
    TyInfo ti = {TY_OTHER, NULL, NULL};
    const char *q = cx__cxx_qual(L, decl);
    if (!q) return ti;
    if (!strcmp(q, "at::Tensor") || !strcmp(q, "torch::Tensor") || !strcmp(q, "torch::autograd::Variable") ||
        !strcmp(q, "at::TensorBase")) {
        ti.cls = TY_TENSOR;
        return ti;
    }
    if (cx__last_is(q, "NoGradGuard") || cx__last_is(q, "AutoGradMode") || cx__last_is(q, "InferenceMode")) {
        ti.cls = cx__last_is(q, "NoGradGuard") ? TY_NOGRAD : cx__last_is(q, "InferenceMode") ? TY_INFER : TY_AUTOGRAD;
        return ti;
    }
    static const char *const containers[] = {
        "std::vector", "std::deque", "std::list", "std::map", "std::unordered_map", "std::array",
        "std::set", "std::unordered_set", "c10::List", "c10::Dict", "torch::OrderedDict",
    };
    for (size_t i = 0; i < ARRAY_LEN(containers); i++)
        if (!strcmp(q, containers[i])) { ti.cls = TY_CONTAINER; return ti; }
    if (!strncmp(q, "torch::data::", 13) && strstr(q, "DataLoader")) {
        ti.cls = TY_LOADER, ti.qual = "torch.utils.data.DataLoader";
        return ti;
    }
    /* bases, breadth first */
    CXCursor queue[32];
    uint32_t head = 0, tail = 0;
    queue[tail++] = decl;
    while (head < tail) {
        CXCursor c = queue[head++];
        const char *cq = cx__cxx_qual(L, c);
        if (!cq) continue;
        if (!strcmp(cq, "torch::nn::Module") || !strcmp(cq, "torch::jit::Module") ||
            !strcmp(cq, "torch::jit::script::Module")) {
            ti.cls = TY_MODULE;
            break;
        }
        if (!strcmp(cq, "torch::optim::Optimizer")) {
            ti.cls = TY_OPTIM;
            break;
        }
        uint32_t first = cx__children(L, c);
        for (uint32_t i = first; i < L->kids.len && tail < ARRAY_LEN(queue); i++) {
            CXCursor k = L->kids.items[i];
            if (A->clang_getCursorKind(k) != CXCursor_CXXBaseSpecifier) continue;
            CXType bt = A->clang_getCanonicalType(A->clang_getCursorType(k));
            CXCursor bd = A->clang_getTypeDeclaration(bt);
            const char *bq = cx__cxx_qual(L, bd);
            if (bq && !strcmp(bq, "torch::nn::ModuleHolder")) {
                /* a holder (TORCH_MODULE(Net)): the module is its Impl */
                ti.cls = TY_MODULE;
                if (A->clang_Type_getNumTemplateArguments(bt) > 0) {
                    CXCursor impl = A->clang_getTypeDeclaration(A->clang_getCanonicalType(
                        A->clang_Type_getTemplateArgumentAsType(bt, 0)));
                    if (!A->clang_Cursor_isNull(impl) && cx__is_main(impl)) ti.local = cx__spelling(L, impl);
                }
                L->kids.len = first;
                goto done;
            }
            if (!A->clang_Cursor_isNull(bd)) queue[tail++] = bd;
        }
        L->kids.len = first;
    }
done:
    if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM) {
        if (!ti.local && cx__is_main(decl)) ti.local = cx__spelling(L, decl);
        if (!ti.local) ti.qual = cx__py_qual(L, q);
        if (ti.qual && ti.cls == TY_MODULE && strncmp(ti.qual, "torch.nn.", 9) != 0) ti.qual = "torch.nn.Module";
        if (ti.qual && ti.cls == TY_OPTIM && strncmp(ti.qual, "torch.optim.", 12) != 0) ti.qual = "torch.optim.Optimizer";
    }
    return ti;
}

static TyInfo cx__classify(Lower *L, CXType t)
{
    TyInfo none = {TY_OTHER, NULL, NULL};
    CXType core = cx__core_type(L, t);
    switch (core.kind) {
    case CXType_Bool: case CXType_Int: case CXType_UInt: case CXType_Long: case CXType_ULong:
    case CXType_LongLong: case CXType_ULongLong: case CXType_Float: case CXType_Double: case CXType_Short:
    case CXType_UShort: case CXType_Char_S: case CXType_Char_U: case CXType_SChar: case CXType_UChar:
    case CXType_LongDouble:
        none.cls = TY_SCALAR;
        return none;
    case CXType_Record: break;
    default: return none;
    }
    const char *key = cx__str(L, A->clang_getTypeSpelling(core));
    uint32_t hit = strmap_get(&L->types, key, strlen(key));
    if (hit != UINT32_MAX) return L->tyinfo.items[hit];
    TyInfo ti = cx__classify_record(L, A->clang_getTypeDeclaration(core));
    array_push(&L->tyinfo, ti);
    strmap_put(&L->types, key, strlen(key), L->tyinfo.len - 1);
    return ti;
}

/* Emits the construction of a module/optimizer/loader of type ti: a call of the local class (so
 * its methods are known) or of the torch class by name. */
static uint32_t cx__construct(Lower *L, const TyInfo *ti, Span sp)
{
    uint32_t callee;
    if (ti->local) callee = cx__load(L, sp, ti->local, NULL);
    else callee = cx__load(L, sp, "torch", ti->qual ? ti->qual : "torch.nn.Module");
    return ir_build_call(&L->B, callee, op_at(L, callee)->qual, sp);
}

/* v converted to a C++ number (the declared type of what it is stored in, or added to, is int64_t,
 * double...): a number carries no graph, whatever the analysis makes of the expression. Lowered as
 * Python's float(v), which the dataflow knows. */
static uint32_t cx__scalar(Lower *L, uint32_t v, Span sp)
{
    uint32_t callee = cx__load(L, sp, "float", NULL);
    uint32_t op = ir_build_call(&L->B, callee, NULL, sp);
    ir_build_arg(&L->B, op, v, NULL);
    return op;
}

/* ---- source text helpers --------------------------------------------------------------------- */

static uint32_t cx__skip_ws(Lower *L, uint32_t i, uint32_t end)
{
    while (i < end) {
        char c = L->src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') { i++; continue; }
        if (c == '/' && i + 1 < end && L->src[i + 1] == '/') {
            while (i < end && L->src[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < end && L->src[i + 1] == '*') {
            i += 2;
            while (i + 1 < end && !(L->src[i] == '*' && L->src[i + 1] == '/')) i++;
            i += 2;
            continue;
        }
        break;
    }
    return i;
}

/* The operator token starting at byte i (longest match). */
static const char *cx__op_at(Lower *L, uint32_t i, uint32_t end)
{
    static const char *const ops[] = {
        "<<=", ">>=", "->*", "...", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "==", "!=", "<=", ">=",
        "&&", "||", "<<", ">>", "++", "--", "->", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "=",
        "!", "~", ",",
    };
    i = cx__skip_ws(L, i, end);
    for (size_t k = 0; k < ARRAY_LEN(ops); k++) {
        size_t n = strlen(ops[k]);
        if (i + n <= end && !memcmp(L->src + i, ops[k], n)) return ops[k];
    }
    return "?";
}

/* The member name of a MemberRefExpr whose spelling libclang leaves empty (dependent code:
 * `batch.data`, `loss.template item<float>`): the identifier before any template arguments. */
static const char *cx__member_name(Lower *L, Span sp)
{
    if (sp.end <= sp.start) return "?";
    uint32_t e = sp.end;
    if (L->src[e - 1] == '>') {
        int depth = 0;
        while (e > sp.start) {
            char c = L->src[--e];
            if (c == '>') depth++;
            else if (c == '<' && --depth == 0) break;
        }
    }
    while (e > sp.start && (L->src[e - 1] == ' ' || L->src[e - 1] == '\t' || L->src[e - 1] == '\n')) e--;
    uint32_t s = e;
    while (s > sp.start && (isalnum((unsigned char)L->src[s - 1]) || L->src[s - 1] == '_')) s--;
    return s < e ? arena_strndup(L->arena, L->src + s, e - s) : "?";
}

static BinOp cx__binop(const char *t)
{
    static const struct { const char *s; BinOp op; } map[] = {
        {"+", BIN_ADD}, {"-", BIN_SUB}, {"*", BIN_MUL}, {"/", BIN_DIV}, {"%", BIN_MOD}, {"&", BIN_AND},
        {"|", BIN_OR}, {"^", BIN_XOR}, {"<<", BIN_LSHIFT}, {">>", BIN_RSHIFT},
    };
    size_t n = strlen(t);
    if (n > 1 && t[n - 1] == '=' && strcmp(t, "==") && strcmp(t, "<=") && strcmp(t, ">=") && strcmp(t, "!=")) n--;
    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if (strlen(map[i].s) == n && !memcmp(map[i].s, t, n)) return map[i].op;
    return BIN_OTHER;
}

static bool cx__is_compare(const char *t)
{
    return !strcmp(t, "==") || !strcmp(t, "!=") || !strcmp(t, "<") || !strcmp(t, ">") || !strcmp(t, "<=") ||
           !strcmp(t, ">=");
}

static bool cx__is_aug(const char *t)
{
    size_t n = strlen(t);
    return n >= 2 && t[n - 1] == '=' && !cx__is_compare(t);
}

/* ---- expressions ----------------------------------------------------------------------------- */

/* Is this child of an operator call the reference to the operator function itself? */
static bool cx__is_fnref(CXCursor k)
{
    CXType t = A->clang_getCursorType(k);
    if (t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto) return true;
    if (t.kind == CXType_Pointer) {
        CXType p = A->clang_getPointeeType(t);
        return p.kind == CXType_FunctionProto || p.kind == CXType_FunctionNoProto;
    }
    return false;
}

/* Schedules an operator applied to operands[0..n) (built-in or overloaded). */
static void cx__sched_operator(Lower *L, Schedule *s, const char *opt, const CXCursor *opnds, uint32_t n, Span sp,
                               uint16_t d, CXCursor c)
{
    if (n == 0) { sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0); return; }
    if (!strcmp(opt, "=") && n == 2) {
        sched(s, W_EXPR, opnds[1], sp, d);
        sched_act(s, A_DUP, c, sp, 0, 0);
        sched(s, W_TARGET, opnds[0], sp, d);
        return;
    }
    if (cx__is_aug(opt) && n == 2) {
        sched(s, W_EXPR, opnds[0], sp, d);
        sched(s, W_EXPR, opnds[1], sp, d);
        sched_act(s, A_AUG, c, sp, cx__binop(opt), 0);
        sched_act(s, A_DUP, c, sp, 0, 0);
        sched(s, W_TARGET, opnds[0], sp, d);
        return;
    }
    if (!strcmp(opt, "()")) {
        Work *w = NULL;
        uint32_t vb = L->B.vals.len;
        for (uint32_t i = 0; i < n; i++) sched(s, W_EXPR, opnds[i], sp, d);
        w = sched_act(s, A_CALL, c, sp, 0, 0);
        w->vbase = vb;
        return;
    }
    for (uint32_t i = 0; i < n; i++) sched(s, W_EXPR, opnds[i], sp, d);
    IrOpKind k;
    uint32_t aux = 0;
    if (!strcmp(opt, "->") || !strcmp(opt, "++") || !strcmp(opt, "--") || (n == 1 && (!strcmp(opt, "*") || !strcmp(opt, "&") || !strcmp(opt, "+")))) {
        sched_act(s, A_PASS, c, sp, n, 0);
        return;
    }
    if (n == 1) {
        k = IR_UNOP;
        aux = !strcmp(opt, "!") ? UN_NOT : !strcmp(opt, "~") ? UN_INVERT : UN_NEG;
    } else if (!strcmp(opt, "[]")) {
        k = IR_ITEM;
    } else if (cx__is_compare(opt)) {
        k = IR_COMPARE;
    } else if (!strcmp(opt, "&&") || !strcmp(opt, "||")) {
        k = IR_SELECT;
    } else if (!strcmp(opt, ",")) {
        sched_act(s, A_PASS, c, sp, n, 1); /* the last operand */
        return;
    } else {
        k = IR_BINOP;
        aux = cx__binop(opt);
    }
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = W_EXIT;
    w.c = c;
    w.span = sp;
    w.aux = k;
    w.aux2 = aux;
    w.vbase = L->B.vals.len;
    array_push(s, w);
    /* COMPARE keeps the operator text in the op's name */
    array_back(s)->act = (uint8_t)(k == IR_COMPARE ? (opt[0] == '=' ? 1 : opt[0] == '!' ? 2 : opt[0] == '<' ? (opt[1] ? 4 : 3) : (opt[1] ? 6 : 5)) : 0);
}

/* The cursor under implicit wrappers (UnexposedExpr with one child, parentheses). */
static CXCursor cx__unwrap(Lower *L, CXCursor c)
{
    for (int guard = 0; guard < 32; guard++) {
        enum CXCursorKind k = A->clang_getCursorKind(c);
        if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr) break;
        uint32_t first = cx__children(L, c);
        uint32_t n = L->kids.len - first;
        CXCursor only = n == 1 ? L->kids.items[first] : c;
        L->kids.len = first;
        if (n != 1 || !cx__is_expr(only)) break;
        c = only;
    }
    return c;
}

static bool cx__std_fn(Lower *L, CXCursor ref, const char *name)
{
    if (A->clang_Cursor_isNull(ref)) return false;
    const char *q = cx__cxx_qual(L, ref);
    return q && !strncmp(q, "std::", 5) && !strcmp(q + 5, name);
}

/* The declaration a dependent call names (in a template, std::get<0>(hc) where hc's type depends
 * on a template parameter references nothing; its callee names the candidate declarations). */
static CXCursor cx__dependent_callee(Lower *L, CXCursor callee_expr)
{
    CXCursor callee = cx__unwrap(L, callee_expr);
    enum CXCursorKind ck = A->clang_getCursorKind(callee);
    if (ck == CXCursor_OverloadedDeclRef && A->clang_getNumOverloadedDecls(callee) > 0)
        return A->clang_getOverloadedDecl(callee, 0);
    if (ck == CXCursor_DeclRefExpr) return A->clang_getCursorReferenced(callee);
    return A->clang_getNullCursor();
}

/* What a call expression calls: its referenced declaration, or for a dependent call the one its
 * callee names. */
static CXCursor cx__call_decl(Lower *L, CXCursor call)
{
    CXCursor r = A->clang_getCursorReferenced(call);
    if (!A->clang_Cursor_isNull(r)) return r;
    uint32_t first = cx__children(L, call);
    CXCursor callee = first < L->kids.len ? L->kids.items[first] : r;
    bool has = first < L->kids.len && cx__is_expr(callee);
    L->kids.len = first;
    return has ? cx__dependent_callee(L, callee) : r;
}

static void cx__expr(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = A->clang_getCursorKind(c);
    Span sp = cx__span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    if (w->depth > CX_MAX_DEPTH) {
        L->truncated = true;
        push_val(L, cx__const(L, sp, CONST_OTHER, NULL));
        return;
    }
    switch (k) {
    case CXCursor_IntegerLiteral: push_val(L, cx__const(L, sp, CONST_INT, cx__text(L, sp))); return;
    case CXCursor_FloatingLiteral: push_val(L, cx__const(L, sp, CONST_FLOAT, cx__text(L, sp))); return;
    case CXCursor_StringLiteral:
    case CXCursor_CharacterLiteral:
        push_val(L, cx__const(L, sp, CONST_STR, sp.end - sp.start < 64 ? cx__text(L, sp) : NULL));
        return;
    case CXCursor_CXXBoolLiteralExpr: {
        const char *t = cx__text(L, sp);
        push_val(L, cx__const(L, sp, CONST_BOOL, !strcmp(t, "true") ? "True" : !strcmp(t, "false") ? "False" : t));
        return;
    }
    case CXCursor_CXXNullPtrLiteralExpr: push_val(L, cx__const(L, sp, CONST_NONE, NULL)); return;
    case CXCursor_LambdaExpr: case CXCursor_CXXThrowExpr: case CXCursor_CXXTypeidExpr:
    case CXCursor_UnaryExpr: case CXCursor_CXXDeleteExpr: case CXCursor_SizeOfPackExpr:
        push_val(L, cx__const(L, sp, CONST_OTHER, NULL));
        return;
    case CXCursor_CXXThisExpr:
        push_val(L, cx__load(L, sp, "self", NULL));
        return;
    case CXCursor_DeclRefExpr:
    case CXCursor_OverloadedDeclRef: {
        CXCursor r = A->clang_getCursorReferenced(c);
        if (k == CXCursor_OverloadedDeclRef && A->clang_getNumOverloadedDecls(c) > 0) r = A->clang_getOverloadedDecl(c, 0);
        const char *name = cx__spelling(L, c);
        if (A->clang_Cursor_isNull(r)) {
            push_val(L, name[0] ? cx__load(L, sp, name, NULL) : cx__const(L, sp, CONST_OTHER, NULL));
            return;
        }
        enum CXCursorKind rk = A->clang_getCursorKind(r);
        if (rk == CXCursor_EnumConstantDecl) { push_val(L, cx__const(L, sp, CONST_OTHER, name)); return; }
        if (cx__is_main(r) || rk == CXCursor_ParmDecl) {
            /* a variable or function of this file: by name (static members by their own name) */
            push_val(L, cx__load(L, sp, cx__spelling(L, r), NULL));
            return;
        }
        const char *q = cx__py_qual(L, cx__cxx_qual(L, r));
        push_val(L, cx__load(L, sp, "torch", q));
        return;
    }
    case CXCursor_MemberRefExpr: {
        const char *name = cx__spelling(L, c);
        if (!name[0]) name = cx__member_name(L, sp);
        uint32_t first = cx__children(L, c);
        CXCursor base = c;
        bool has_base = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) base = L->kids.items[i], has_base = true;
        L->kids.len = first;
        if (!has_base && L->shadow && !L_fn(L)->has_self) {
            /* a free function of the shadow: an unknown name is a variable of its own */
            push_val(L, cx__load(L, sp, name, NULL));
            return;
        }
        if (has_base) {
            sched(s, W_EXPR, base, sp, d);
        } else {
            /* implicit this->name */
            Work x = *w;
            x.kind = W_ACTION;
            x.act = A_CONST_UNKNOWN;
            if (L_fn(L)->has_self) x.act = A_PASS, x.aux = 0, x.aux2 = 2;
            array_push(s, x);
        }
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT;
        x.c = c;
        x.span = sp;
        x.aux = IR_ATTR;
        x.vbase = L->B.vals.len;
        array_push(s, x);
        /* the member's name travels in the op: set in W_EXIT from the cursor again */
        return;
    }
    case CXCursor_ArraySubscriptExpr: {
        uint32_t first = cx__children(L, c);
        CXCursor ops[2];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 2; i++)
            if (cx__is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        cx__sched_operator(L, s, "[]", ops, n, sp, d, c);
        return;
    }
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator: {
        uint32_t first = cx__children(L, c);
        CXCursor ops[2];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 2; i++)
            if (cx__is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        const char *opt = "?";
        uint32_t s0, e0;
        if (n == 2 && cx__offsets(L, ops[0], &s0, &e0)) opt = cx__op_at(L, e0, (uint32_t)L->len);
        if (!strcmp(opt, "?")) { /* macro-expanded: operands without the operator */
            for (uint32_t i = 0; i < n; i++) sched(s, W_EXPR, ops[i], sp, d);
            Work x;
            memset(&x, 0, sizeof x);
            x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.vbase = L->B.vals.len;
            array_push(s, x);
            return;
        }
        cx__sched_operator(L, s, opt, ops, n, sp, d, c);
        return;
    }
    case CXCursor_UnaryOperator: {
        uint32_t first = cx__children(L, c);
        CXCursor op = c;
        bool has = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) op = L->kids.items[i], has = true;
        L->kids.len = first;
        uint32_t s0, e0;
        const char *opt = "?";
        if (has && cx__offsets(L, op, &s0, &e0)) {
            if (s0 > sp.start) opt = cx__op_at(L, sp.start, s0);
            else opt = cx__op_at(L, e0, sp.end);
        }
        if (!has) { push_val(L, cx__const(L, sp, CONST_OTHER, NULL)); return; }
        cx__sched_operator(L, s, opt, &op, 1, sp, d, c);
        return;
    }
    case CXCursor_ConditionalOperator: {
        uint32_t first = cx__children(L, c);
        CXCursor ops[3];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 3; i++)
            if (cx__is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        if (n != 3) { push_val(L, cx__const(L, sp, CONST_OTHER, NULL)); return; }
        sched(s, W_EXPR, ops[0], sp, d);
        sched_act(s, A_POP, c, sp, 0, 0);
        sched(s, W_EXPR, ops[1], sp, d);
        sched(s, W_EXPR, ops[2], sp, d);
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_SELECT, x.vbase = L->B.vals.len;
        array_push(s, x);
        return;
    }
    case CXCursor_InitListExpr: {
        uint32_t first = cx__children(L, c);
        uint32_t vb = L->B.vals.len;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) sched(s, W_EXPR, L->kids.items[i], sp, d);
        L->kids.len = first;
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_LIST, x.vbase = vb;
        array_push(s, x);
        return;
    }
    case CXCursor_CallExpr: {
        CXCursor r = A->clang_getCursorReferenced(c);
        enum CXCursorKind rk = A->clang_Cursor_isNull(r) ? CXCursor_InvalidFile : A->clang_getCursorKind(r);
        const char *rname = A->clang_Cursor_isNull(r) ? "" : cx__spelling(L, r);
        uint32_t first = cx__children(L, c);
        uint32_t nk = L->kids.len - first;
        CXCursor *kids = ARENA_NEW_N(L->arena, CXCursor, nk ? nk : 1);
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) kids[n++] = L->kids.items[i];
        L->kids.len = first;
        if (A->clang_Cursor_isNull(r) && n > 0) {
            r = cx__dependent_callee(L, kids[0]);
            rk = A->clang_Cursor_isNull(r) ? CXCursor_InvalidFile : A->clang_getCursorKind(r);
        }
        bool is_fn = rk == CXCursor_FunctionDecl || rk == CXCursor_FunctionTemplate;
        bool make = is_fn && (cx__std_fn(L, r, "make_shared") || cx__std_fn(L, r, "make_unique"));
        if (rk == CXCursor_Constructor || make) {
            TyInfo ti = cx__classify(L, A->clang_getCursorType(c));
            uint32_t nargs = make && n ? n - 1 : n;
            CXCursor *args = make && n ? kids + 1 : kids;
            if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) {
                /* the arguments are evaluated (they may hold calls); the value is the object */
                for (uint32_t i = 0; i < nargs; i++) {
                    sched(s, W_EXPR, args[i], sp, d);
                    sched_act(s, A_POP, c, sp, 0, 0);
                }
                sched_act(s, A_COERCE, c, sp, 0, 0)->vbase = L->tyinfo.len;
                array_push(&L->tyinfo, ti); /* a copy the action reads */
                return;
            }
            if (ti.cls == TY_CONTAINER) {
                uint32_t vb = L->B.vals.len;
                for (uint32_t i = 0; i < nargs; i++) sched(s, W_EXPR, args[i], sp, d);
                Work x;
                memset(&x, 0, sizeof x);
                x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_LIST, x.vbase = vb;
                array_push(s, x);
                return;
            }
            if (nargs == 1) { sched(s, W_EXPR, args[0], sp, d); return; } /* copy, move, conversion */
            uint32_t vb = L->B.vals.len;
            for (uint32_t i = 0; i < nargs; i++) sched(s, W_EXPR, args[i], sp, d);
            Work x;
            memset(&x, 0, sizeof x);
            x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_TUPLE, x.vbase = vb;
            if (ti.cls == TY_TENSOR && nargs == 0) { push_val(L, cx__const(L, sp, CONST_OTHER, NULL)); return; }
            array_push(s, x);
            return;
        }
        if (!strncmp(rname, "operator", 8) && !isalnum((unsigned char)rname[8]) && rname[8] != '_') {
            CXCursor *opnds = ARENA_NEW_N(L->arena, CXCursor, n ? n : 1);
            uint32_t no = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!(cx__is_fnref(kids[i]) && !strncmp(cx__spelling(L, kids[i]), "operator", 8))) opnds[no++] = kids[i];
            const char *opt = rname + 8;
            while (*opt == ' ') opt++;
            if (!strcmp(opt, "bool") || !opt[0] || isalpha((unsigned char)opt[0])) {
                /* conversion operators: the object */
                if (no) sched(s, W_EXPR, opnds[0], sp, d);
                else push_val(L, cx__const(L, sp, CONST_OTHER, NULL));
                return;
            }
            cx__sched_operator(L, s, opt, opnds, no, sp, d, c);
            return;
        }
        if (n == 0) { push_val(L, cx__const(L, sp, CONST_OTHER, NULL)); return; }
        /* std::move/forward: the argument; std::get<I>(t): an item */
        if (cx__std_fn(L, r, "move") || cx__std_fn(L, r, "forward")) {
            if (n >= 2) sched(s, W_EXPR, kids[1], sp, d);
            else push_val(L, cx__const(L, sp, CONST_OTHER, NULL));
            return;
        }
        /* std::make_tuple(h, c), std::make_pair, std::forward_as_tuple: a tuple of the arguments, so
         * the state it packs keeps its graph (as Python's (h, c)) */
        if (is_fn && (cx__std_fn(L, r, "make_tuple") || cx__std_fn(L, r, "make_pair") ||
                      cx__std_fn(L, r, "forward_as_tuple"))) {
            uint32_t vb = L->B.vals.len;
            for (uint32_t i = 1; i < n; i++) sched(s, W_EXPR, kids[i], sp, d);
            Work x;
            memset(&x, 0, sizeof x);
            x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_TUPLE, x.vbase = vb;
            array_push(s, x);
            return;
        }
        uint32_t vb = L->B.vals.len;
        for (uint32_t i = 0; i < n; i++) sched(s, W_EXPR, kids[i], sp, d);
        Work *x = sched_act(s, A_CALL, c, sp, 0, 0);
        x->vbase = vb;
        if (cx__std_fn(L, r, "get")) x->aux = 1; /* std::get */
        return;
    }
    case CXCursor_CXXNewExpr:
    case CXCursor_PackExpansionExpr:
    default: {
        /* wrappers, casts, unknown expressions: one child passes through, several are joined */
        uint32_t first = cx__children(L, c);
        uint32_t vb = L->B.vals.len;
        uint32_t n = 0;
        CXCursor last = c;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) last = L->kids.items[i], n++;
        if (n == 1) {
            L->kids.len = first;
            sched(s, W_EXPR, last, sp, d);
            return;
        }
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) sched(s, W_EXPR, L->kids.items[i], sp, d);
        L->kids.len = first;
        if (!n) { push_val(L, cx__const(L, sp, CONST_OTHER, NULL)); return; }
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_TUPLE, x.vbase = vb;
        array_push(s, x);
        return;
    }
    }
}

static void cx__exit(Lower *L, const Work *w)
{
    IrFunc *f = L_f(L);
    uint32_t nv = L->B.vals.len > w->vbase ? L->B.vals.len - w->vbase : 0;
    uint32_t *v = nv ? L->B.vals.items + (L->B.vals.len - nv) : NULL; /* items is NULL before the first push */
    IrOpKind kind = (IrOpKind)w->aux;
    bool build = kind != IR_ATTR && kind != IR_ITEM && kind != IR_BINOP && kind != IR_SELECT && kind != IR_COMPARE &&
                 kind != IR_UNOP;
    uint32_t op = build ? ir_build_build(&L->B, (BuildKind)w->aux2, v, nv, w->span) : emit(L, kind, w->span);
    IrOp *o = op_at(L, op);
    switch (kind) {
    case IR_ATTR: {
        o->a = nv ? v[0] : IR_NONE;
        const char *name = cx__spelling(L, w->c);
        o->name = name[0] ? name : cx__member_name(L, w->span);
        /* the IR speaks Python: a C++ container's push_back is an append */
        if (!strcmp(o->name, "push_back") || !strcmp(o->name, "emplace_back") || !strcmp(o->name, "push_front") ||
            !strcmp(o->name, "emplace_front"))
            o->name = "append";
        /* a data member declared as a tensor: the dataflow takes it as one (not for methods) */
        if (cx__classify(L, A->clang_getCursorType(w->c)).cls == TY_TENSOR &&
            A->clang_getCursorKind(A->clang_getCursorReferenced(w->c)) == CXCursor_FieldDecl)
            o->qual = "torch.Tensor";
        /* a member of a variable is a pseudo-variable, but not of a torch name (torch::kCUDA) */
        if (o->a != IR_NONE && (!f->ops.items[o->a].qual || !strcmp(f->ops.items[o->a].qual, "torch.Tensor")))
            o->var = ir_build_member_var(&L->B, o->a, o->name);
        break;
    }
    case IR_ITEM: case IR_BINOP: case IR_SELECT: case IR_COMPARE: case IR_UNOP:
        o->a = nv ? v[0] : IR_NONE;
        o->b = nv > 1 ? v[nv - 1] : IR_NONE;
        o->aux = w->aux2;
        if (w->aux == IR_COMPARE) {
            static const char *const names[] = {"?", "==", "!=", "<", "<=", ">", ">="};
            o->name = w->act < ARRAY_LEN(names) ? names[w->act] : "?";
        }
        if (w->aux == IR_UNOP) o->b = IR_NONE;
        break;
    default:
        break; /* a BUILD (of w->aux2) of the values, or an expression libclang left unexposed */
    }
    L->B.vals.len -= nv;
    push_val(L, op);
}

/* Keyword names of positional arguments, where the rules read keywords. */
static const char *cx__kw_for(const char *method, const char *qual, uint32_t pos)
{
    if (method && !strcmp(method, "backward")) return pos == 1 ? "retain_graph" : pos == 2 ? "create_graph" : NULL;
    if (qual && !strcmp(qual, "torch.autograd.backward")) return pos == 2 ? "retain_graph" : pos == 3 ? "create_graph" : NULL;
    if (qual && !strcmp(qual, "torch.autograd.grad")) return pos == 3 ? "retain_graph" : pos == 4 ? "create_graph" : NULL;
    return NULL;
}

/* Is call a method call on a module (its object's declared type) that is declared to return a
 * tensor? (`ac->log_prob(a)`; not forward, which is handled by name, nor a parameters() list.) */
static bool cx__module_method(Lower *L, CXCursor call)
{
    if (A->clang_getCursorKind(call) != CXCursor_CallExpr) return false;
    if (cx__classify(L, A->clang_getCursorType(call)).cls != TY_TENSOR) return false;
    uint32_t first = cx__children(L, call);
    CXCursor callee = first < L->kids.len ? L->kids.items[first] : call;
    bool ok = first < L->kids.len;
    L->kids.len = first;
    if (!ok) return false;
    callee = cx__unwrap(L, callee);
    if (A->clang_getCursorKind(callee) != CXCursor_MemberRefExpr) return false;
    CXCursor m = A->clang_getCursorReferenced(callee);
    if (A->clang_Cursor_isNull(m) || A->clang_getCursorKind(m) != CXCursor_CXXMethod || A->clang_CXXMethod_isStatic(m))
        return false;
    TyInfo owner = cx__classify(L, A->clang_getCursorType(A->clang_getCursorSemanticParent(m)));
    return owner.cls == TY_MODULE;
}

static void cx__emit_call(Lower *L, const Work *w)
{
    IrFunc *f = L_f(L);
    uint32_t nv = L->B.vals.len - w->vbase;
    if (NEVER(nv == 0)) { push_val(L, cx__const(L, w->span, CONST_OTHER, NULL)); return; }
    uint32_t *v = L->B.vals.items + w->vbase;
    uint32_t callee = v[0];
    const IrOp *co = &f->ops.items[callee];
    const char *method = co->kind == IR_ATTR ? co->name : NULL;
    /* register_module("fc", m) returns m; register_parameter a parameter; register_buffer its tensor */
    if (method && (!strcmp(method, "register_module") || !strcmp(method, "register_buffer")) && nv >= 3) {
        uint32_t val = v[2];
        L->B.vals.len = w->vbase;
        push_val(L, val);
        return;
    }
    if (w->aux == 1 && nv == 2) { /* std::get<I>(t) */
        uint32_t t = v[1];
        L->B.vals.len = w->vbase;
        uint32_t idx = cx__const(L, w->span, CONST_INT, NULL);
        const char *lt = strchr(cx__text(L, w->span), '<');
        if (lt) op_at(L, idx)->name = arena_strndup(L->arena, lt + 1, strspn(lt + 1, "0123456789"));
        push_val(L, ir_build_op2(&L->B, IR_ITEM, t, idx, 0, w->span));
        return;
    }
    /* m->forward(x) is m(x): the callee is the module (loop-invariant when m is) */
    if (method && !strcmp(method, "forward") && co->a != IR_NONE && L->shadow && !L_fn(L)->has_self &&
        !f->ops.items[co->a].qual) {
        /* types partly unknown (the shadow): `m->forward(x)` is LibTorch's module call whatever m is */
        TyInfo mod = {TY_MODULE, "torch.nn.Module", NULL};
        callee = cx__construct(L, &mod, w->span);
        co = &f->ops.items[callee];
        method = NULL;
        v = L->B.vals.items + w->vbase;
    } else if (method && !strcmp(method, "forward") && co->a != IR_NONE) {
        callee = co->a;
        co = &f->ops.items[callee];
        method = co->kind == IR_ATTR ? co->name : NULL;
        if (co->kind == IR_ATTR) method = NULL; /* self.fc->forward(x): a submodule call */
    } else if (method && co->a != IR_NONE && w->aux != 1 && cx__module_method(L, w->c)) {
        /* ac->log_prob(a), net->encode(x): a method of a module declared to return a tensor computes
         * it from the module's parameters, as forward does */
        callee = co->a;
        co = &f->ops.items[callee];
        method = NULL;
    }
    const char *qual = co->qual;
    bool reg_param = method && !strcmp(method, "register_parameter");
    if (reg_param) {
        callee = cx__load(L, w->span, "torch", "torch.nn.Parameter");
        qual = "torch.nn.Parameter";
    }
    /* requires_grad(true) in the options of a factory: the keyword the model reads */
    bool requires_grad = false;
    for (uint32_t i = 1; i < nv; i++) {
        const IrOp *a = &f->ops.items[v[i]];
        if (a->kind != IR_CALL || a->a == IR_NONE) continue;
        const IrOp *ac = &f->ops.items[a->a];
        const char *an = ac->kind == IR_ATTR ? ac->name : ac->qual ? strrchr(ac->qual, '.') : NULL;
        if (an && *an == '.') an++;
        if (!an || strcmp(an, "requires_grad") != 0) continue;
        requires_grad = a->nargs == 0 || (f->ops.items[f->args.items[a->args]].name &&
                                          !strcmp(f->ops.items[f->args.items[a->args]].name, "True"));
    }
    uint32_t true_op = requires_grad ? cx__const(L, w->span, CONST_BOOL, "True") : IR_NONE;
    uint32_t op = ir_build_call(&L->B, callee, qual, w->span);
    uint32_t first_arg = reg_param ? 2 : 1;
    for (uint32_t i = first_arg; i < nv; i++) ir_build_arg(&L->B, op, L->B.vals.items[w->vbase + i], cx__kw_for(method, qual, i - 1));
    if (true_op != IR_NONE) ir_build_arg(&L->B, op, true_op, "requires_grad");
    L->B.vals.len = w->vbase;
    /* a call declared to return a number (float metric(const Tensor&), x.size(0)) returns no graph */
    if (cx__classify(L, A->clang_getCursorType(w->c)).cls == TY_SCALAR) op = cx__scalar(L, op, w->span);
    push_val(L, op);
}

/* ---- targets --------------------------------------------------------------------------------- */

static void cx__target(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = cx__unwrap(L, w->c);
    enum CXCursorKind k = A->clang_getCursorKind(c);
    Span sp = cx__span_of(L, c, w->span);
    uint32_t value = pop_val(L);
    TyInfo ti = cx__classify(L, A->clang_getCursorType(c));
    if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) {
        /* assigning to a module-typed variable or field: it holds a module whatever the expression */
        value = cx__construct(L, &ti, sp);
    }
    if (ti.cls == TY_SCALAR) value = cx__scalar(L, value, sp);
    if (k == CXCursor_DeclRefExpr) {
        CXCursor r = A->clang_getCursorReferenced(c);
        const char *name = A->clang_Cursor_isNull(r) ? cx__spelling(L, c) : cx__spelling(L, r);
        ir_build_store(&L->B, name, strlen(name), value, sp);
        return;
    }
    if (k == CXCursor_MemberRefExpr) {
        uint32_t first = cx__children(L, c);
        CXCursor base = c;
        bool has = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx__is_expr(L->kids.items[i])) base = L->kids.items[i], has = true;
        L->kids.len = first;
        const char *name = cx__spelling(L, c);
        if (!name[0]) name = cx__member_name(L, sp);
        if (!has && L->shadow && !L_fn(L)->has_self) {
            ir_build_store(&L->B, name, strlen(name), value, sp);
            return;
        }
        Work *x;
        if (has) sched(s, W_EXPR, base, sp, (uint16_t)(w->depth + 1));
        else if (L_fn(L)->has_self) sched_act(s, A_PASS, c, sp, 0, 2);
        else { sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0); }
        x = sched_act(s, A_SET_ATTR, c, sp, value, 0);
        GL_UNUSED(x);
        return;
    }
    if (k == CXCursor_ArraySubscriptExpr ||
        (k == CXCursor_CallExpr && !strcmp(cx__spelling(L, c), "operator[]"))) {
        uint32_t first = cx__children(L, c);
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor kk = L->kids.items[i];
            if (!cx__is_expr(kk) || (cx__is_fnref(kk) && !strncmp(cx__spelling(L, kk), "operator", 8))) continue;
            if (n < 2) sched(s, W_EXPR, kk, sp, (uint16_t)(w->depth + 1)), n++;
        }
        L->kids.len = first;
        while (n < 2) sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0), n++;
        sched_act(s, A_SET_ITEM, c, sp, value, 0);
        return;
    }
    if (k == CXCursor_CallExpr && cx__std_fn(L, cx__call_decl(L, c), "tie")) {
        /* std::tie(a, b) = f(): each name gets an element */
        uint32_t first = cx__children(L, c);
        uint32_t idx = 0;
        for (uint32_t i = first + 1; i < L->kids.len; i++) {
            CXCursor kk = L->kids.items[i];
            if (!cx__is_expr(kk)) continue;
            sched_act(s, A_UNPACK, kk, sp, value, idx++);
            sched(s, W_TARGET, kk, sp, (uint16_t)(w->depth + 1));
        }
        L->kids.len = first;
        return;
    }
    /* *p = v and other targets: nothing modelled */
}

/* ---- statements and declarations ------------------------------------------------------------- */

static bool cx__has_body(Lower *L, CXCursor c, CXCursor *body)
{
    uint32_t first = cx__children(L, c);
    bool found = false;
    for (uint32_t i = first; i < L->kids.len; i++)
        if (A->clang_getCursorKind(L->kids.items[i]) == CXCursor_CompoundStmt) *body = L->kids.items[i], found = true;
    L->kids.len = first;
    return found;
}

static bool cx__text_has_else(Lower *L, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i + 4 <= to && i + 4 <= L->len; i++)
        if (!memcmp(L->src + i, "else", 4) && (i == 0 || !isalnum((unsigned char)L->src[i - 1])) &&
            (i + 4 >= L->len || !isalnum((unsigned char)L->src[i + 4])))
            return true;
    return false;
}

/* The offsets of the two `;` and the `)` of a for header, from the `for` keyword. */
static void cx__for_header(Lower *L, uint32_t start, uint32_t end, uint32_t *semi1, uint32_t *semi2, uint32_t *rparen)
{
    *semi1 = *semi2 = *rparen = end;
    uint32_t i = start;
    while (i < end && L->src[i] != '(') i++;
    int depth = 0, nsemi = 0;
    for (; i < end; i++) {
        char c = L->src[i];
        if (c == '"' || c == '\'') {
            char q = c;
            for (i++; i < end && L->src[i] != q; i++)
                if (L->src[i] == '\\') i++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') {
            if (--depth == 0) { *rparen = i; return; }
        } else if (c == ';' && depth == 1) {
            if (nsemi++ == 0) *semi1 = i;
            else *semi2 = i;
        }
    }
}

static Span cx__header_span(Span full, Lower *L, uint32_t hdr_end)
{
    Span sp = full;
    if (hdr_end > sp.start && hdr_end <= sp.end) {
        sp.end = hdr_end + 1;
        cx__pos(L, sp.end, &sp.end_row, &sp.end_col);
    }
    return sp;
}

static void cx__stmt(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = A->clang_getCursorKind(c);
    Span sp = cx__span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    if (w->depth > CX_MAX_DEPTH) { L->truncated = true; return; }
    if (cx__is_expr(c)) {
        /* only a call whose value is dropped is a call statement (`x = x.cuda();` is not) */
        CXCursor top = cx__unwrap(L, c);
        if (A->clang_getCursorKind(top) == CXCursor_BinaryOperator) {
            /* `X.to(device), y.to(device);`: each operand of a comma is a statement of its own */
            uint32_t first = cx__children(L, top);
            CXCursor ops[2];
            uint32_t n = 0;
            for (uint32_t i = first; i < L->kids.len && n < 2; i++)
                if (cx__is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
            L->kids.len = first;
            uint32_t s0, e0;
            if (n == 2 && cx__offsets(L, ops[0], &s0, &e0) && !strcmp(cx__op_at(L, e0, (uint32_t)L->len), ",")) {
                sched(s, W_STMT, ops[0], sp, d);
                sched(s, W_STMT, ops[1], sp, d);
                return;
            }
        }
        bool call = A->clang_getCursorKind(top) == CXCursor_CallExpr &&
                    strncmp(cx__spelling(L, top), "operator", 8) != 0;
        sched(s, W_EXPR, c, sp, d);
        sched_act(s, A_EXPR_STMT, c, sp, call, 0);
        return;
    }
    uint32_t first = cx__children(L, c);
    uint32_t n = L->kids.len - first;
    CXCursor *kids = ARENA_NEW_N(L->arena, CXCursor, n ? n : 1);
    memcpy(kids, L->kids.items + first, sizeof(CXCursor) * n);
    L->kids.len = first;
    switch (k) {
    case CXCursor_CompoundStmt:
        sched_act(s, A_SCOPE_BEGIN, c, sp, 0, 0);
        for (uint32_t i = 0; i < n; i++) sched(s, W_STMT, kids[i], sp, d);
        sched_act(s, A_SCOPE_END, c, sp, 0, 0);
        break;
    case CXCursor_DeclStmt:
        for (uint32_t i = 0; i < n; i++)
            if (A->clang_getCursorKind(kids[i]) == CXCursor_VarDecl) sched(s, W_VARDECL, kids[i], sp, d);
        break;
    case CXCursor_VarDecl:
        sched(s, W_VARDECL, c, sp, d);
        break;
    case CXCursor_ReturnStmt:
        if (n && cx__is_expr(kids[n - 1])) sched(s, W_EXPR, kids[n - 1], sp, d);
        sched_act(s, A_RETURN, c, sp, n && cx__is_expr(kids[n - 1]), 0);
        break;
    case CXCursor_BreakStmt: sched_act(s, A_BREAK, c, sp, 0, 0); break;
    case CXCursor_ContinueStmt: sched_act(s, A_CONTINUE, c, sp, 0, 0); break;
    case CXCursor_IfStmt: {
        if (n < 2) break;
        uint32_t s1, e1, s2, e2;
        bool has_else = n >= 3 && cx__offsets(L, kids[n - 2], &s1, &e1) && cx__offsets(L, kids[n - 1], &s2, &e2) &&
                        cx__text_has_else(L, e1, s2);
        uint32_t then_i = has_else ? n - 2 : n - 1, cond_i = then_i - 1;
        for (uint32_t i = 0; i < cond_i; i++) sched(s, W_STMT, kids[i], sp, d);
        uint32_t r = ir_build_region(&L->B);
        if (A->clang_getCursorKind(kids[cond_i]) == CXCursor_VarDecl) {
            sched(s, W_VARDECL, kids[cond_i], sp, d);
            sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0);
        } else {
            sched(s, W_EXPR, kids[cond_i], sp, d);
        }
        sched_act(s, A_IF, c, sp, r, 0);
        sched(s, W_STMT, kids[then_i], sp, d);
        if (has_else) {
            sched_act(s, A_ELSE, c, sp, r, 0);
            sched(s, W_STMT, kids[n - 1], sp, d);
        }
        sched_act(s, A_END_IF, c, sp, r, 0);
        break;
    }
    case CXCursor_SwitchStmt: {
        if (n < 2) break;
        uint32_t r = ir_build_region(&L->B);
        for (uint32_t i = 0; i + 2 < n; i++) sched(s, W_STMT, kids[i], sp, d);
        if (cx__is_expr(kids[n - 2])) sched(s, W_EXPR, kids[n - 2], sp, d);
        else sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0);
        sched_act(s, A_IF, c, sp, r, 0);
        sched(s, W_STMT, kids[n - 1], sp, d);
        sched_act(s, A_END_IF, c, sp, r, 0);
        break;
    }
    case CXCursor_CaseStmt: case CXCursor_DefaultStmt: case CXCursor_LabelStmt:
        if (n) sched(s, W_STMT, kids[n - 1], sp, d);
        break;
    case CXCursor_WhileStmt: {
        if (n < 2) break;
        uint32_t s0, e0;
        Span hs = sp;
        if (cx__offsets(L, kids[n - 2], &s0, &e0)) hs = cx__header_span(sp, L, e0);
        sched_act(s, A_WHILE_BEGIN, c, hs, 0, 0);
        if (A->clang_getCursorKind(kids[n - 2]) == CXCursor_VarDecl) sched(s, W_VARDECL, kids[n - 2], sp, d);
        else {
            sched(s, W_EXPR, kids[n - 2], sp, d);
            sched_act(s, A_POP, c, sp, 0, 0);
        }
        sched(s, W_STMT, kids[n - 1], sp, d);
        sched_act(s, A_END_LOOP, c, sp, 0, 0);
        break;
    }
    case CXCursor_DoStmt: {
        if (n < 2) break;
        sched_act(s, A_WHILE_BEGIN, c, sp, 0, 0);
        sched(s, W_STMT, kids[0], sp, d);
        sched(s, W_EXPR, kids[1], sp, d);
        sched_act(s, A_POP, c, sp, 0, 0);
        sched_act(s, A_END_LOOP, c, sp, 0, 0);
        break;
    }
    case CXCursor_ForStmt: {
        if (n < 1) break;
        uint32_t semi1, semi2, rparen;
        cx__for_header(L, sp.start, sp.end, &semi1, &semi2, &rparen);
        Span hs = cx__header_span(sp, L, rparen);
        CXCursor body = kids[n - 1];
        int cond = -1, inc = -1;
        for (uint32_t i = 0; i + 1 < n; i++) {
            uint32_t s0, e0;
            if (!cx__offsets(L, kids[i], &s0, &e0)) continue;
            if (s0 < semi1) sched(s, W_STMT, kids[i], sp, d);
            else if (s0 < semi2) cond = (int)i;
            else if (s0 < rparen) inc = (int)i;
        }
        sched_act(s, A_WHILE_BEGIN, c, hs, 0, 0);
        if (cond >= 0) {
            if (A->clang_getCursorKind(kids[cond]) == CXCursor_VarDecl) sched(s, W_VARDECL, kids[cond], sp, d);
            else sched(s, W_EXPR, kids[cond], sp, d), sched_act(s, A_POP, c, sp, 0, 0);
        }
        sched(s, W_STMT, body, sp, d);
        if (inc >= 0) sched(s, W_EXPR, kids[inc], sp, d), sched_act(s, A_POP, c, sp, 0, 0);
        sched_act(s, A_END_LOOP, c, sp, 0, 0);
        break;
    }
    case CXCursor_CXXForRangeStmt: {
        if (n < 3) break;
        CXCursor var = kids[n - 3], range = kids[n - 2], body = kids[n - 1];
        uint32_t s0, e0;
        Span hs = sp;
        if (cx__offsets(L, range, &s0, &e0)) hs = cx__header_span(sp, L, e0);
        for (uint32_t i = 0; i + 3 < n; i++) sched(s, W_STMT, kids[i], sp, d);
        sched(s, W_EXPR, range, sp, d);
        sched_act(s, A_FOR_BEGIN, c, hs, 0, 0);
        if (A->clang_getCursorKind(var) == CXCursor_VarDecl) sched_act(s, A_STORE_VAR, var, hs, IR_F_TARGET, 0);
        else sched_act(s, A_POP, c, sp, 0, 0);
        sched(s, W_STMT, body, sp, d);
        sched_act(s, A_END_LOOP, c, sp, 0, 0);
        break;
    }
    case CXCursor_CXXTryStmt: {
        if (n < 1) break;
        uint32_t r = ir_build_region(&L->B);
        sched_act(s, A_TRY, c, sp, r, 0);
        sched(s, W_STMT, kids[0], sp, d);
        for (uint32_t i = 1; i < n; i++) {
            if (A->clang_getCursorKind(kids[i]) != CXCursor_CXXCatchStmt) continue;
            sched_act(s, A_EXCEPT, kids[i], sp, r, 0);
            CXCursor b;
            if (cx__has_body(L, kids[i], &b)) sched(s, W_STMT, b, sp, d);
        }
        sched_act(s, A_END_TRY, c, sp, r, 0);
        break;
    }
    default:
        break; /* null statements, goto, asm, local class declarations */
    }
}

static void cx__vardecl(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    Span sp = cx__span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    TyInfo ti = cx__classify(L, A->clang_getCursorType(c));
    uint32_t first = cx__children(L, c);
    CXCursor init = c;
    bool has_init = false;
    for (uint32_t i = first; i < L->kids.len; i++)
        if (cx__is_expr(L->kids.items[i])) init = L->kids.items[i], has_init = true;
    L->kids.len = first;
    if (ti.cls == TY_NOGRAD || ti.cls == TY_INFER || ti.cls == TY_AUTOGRAD) {
        /* a guard: grad mode changes until the end of the enclosing block */
        uint8_t mode = ti.cls == TY_NOGRAD ? GRAD_NO_GRAD : ti.cls == TY_INFER ? GRAD_INFERENCE : GRAD_MAYBE_OFF;
        if (has_init) {
            CXCursor ctor = cx__unwrap(L, init);
            uint32_t f2 = cx__children(L, ctor);
            for (uint32_t i = f2; i < L->kids.len; i++) {
                CXCursor a = cx__unwrap(L, L->kids.items[i]);
                if (A->clang_getCursorKind(a) != CXCursor_CXXBoolLiteralExpr) continue;
                const char *t = cx__text(L, cx__span_of(L, a, sp));
                bool on = !strcmp(t, "true");
                if (ti.cls == TY_AUTOGRAD) mode = on ? GRAD_ENABLE : GRAD_NO_GRAD;
                if (ti.cls == TY_INFER) mode = on ? GRAD_INFERENCE : GRAD_KEEP;
                break;
            }
            L->kids.len = f2;
        }
        sched_act(s, A_GUARD, c, sp, mode, 0);
        return;
    }
    if (has_init) sched(s, W_EXPR, init, sp, d);
    else sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0);
    if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) {
        sched_act(s, A_COERCE, c, sp, 1, 0)->vbase = L->tyinfo.len;
        array_push(&L->tyinfo, ti);
        sched_act(s, A_POP, c, sp, 0, 0); /* A_COERCE with aux 1 keeps the init; drop it */
    }
    sched_act(s, A_STORE_VAR, c, sp, 0, 0);
}

/* Schedules a function definition (free function, method, constructor, template). */
static void cx__sched_func(Lower *L, CXCursor c, Span sp, uint32_t cls, Schedule *s)
{
    CXCursor body;
    if (!cx__has_body(L, c, &body)) return;
    sched_act(s, A_FUNC_BEGIN, c, sp, cls, 0);
    sched(s, W_STMT, body, sp, 0);
    sched_act(s, A_FUNC_END, c, sp, 0, 0);
}

/* A class template of the shadow source: GlFree__ holds free functions; another one holds the
 * out-of-line methods of that class (a class of the file when there is one). Returns false when
 * the class is new (lowered as a class). */
static bool cx__shadow_class(Lower *L, CXCursor c, Span sp, Schedule *s)
{
    const char *name = cx__spelling(L, c);
    bool free_fns = !strcmp(name, "GlFree__");
    uint32_t cls = free_fns ? IR_NONE : strmap_get(&L->class_index, name, strlen(name));
    if (!free_fns && cls == UINT32_MAX) return false;
    uint32_t first = cx__children(L, c);
    for (uint32_t i = first; i < L->kids.len; i++) {
        CXCursor m = L->kids.items[i];
        enum CXCursorKind mk = A->clang_getCursorKind(m);
        if (mk == CXCursor_CXXMethod || mk == CXCursor_Constructor || mk == CXCursor_FunctionTemplate)
            cx__sched_func(L, m, cx__span_of(L, m, sp), cls, s);
    }
    L->kids.len = first;
    return true;
}

static void cx__decl(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = A->clang_getCursorKind(c);
    if (k != CXCursor_TranslationUnit && !cx__is_main(c)) return;
    Span sp = cx__span_of(L, c, w->span);
    switch (k) {
    case CXCursor_TranslationUnit:
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
    case CXCursor_UnexposedDecl: {
        uint32_t first = cx__children(L, c);
        for (uint32_t i = first; i < L->kids.len; i++) sched(s, W_DECL, L->kids.items[i], sp, 0);
        L->kids.len = first;
        break;
    }
    case CXCursor_FunctionDecl:
    case CXCursor_FunctionTemplate:
    case CXCursor_CXXMethod:
    case CXCursor_Constructor: {
        for (uint32_t i = 0; i + 1 < L->skip.len; i += 2)
            if (sp.start >= L->skip.items[i] && sp.start < L->skip.items[i + 1]) return; /* the shadow's */
        /* out-of-line methods (Net::forward) belong to their class when it is in this file */
        uint32_t cls = IR_NONE;
        CXCursor parent = A->clang_getCursorSemanticParent(c);
        enum CXCursorKind pk = A->clang_getCursorKind(parent);
        if (pk == CXCursor_ClassDecl || pk == CXCursor_StructDecl || pk == CXCursor_ClassTemplate) {
            const char *pn = cx__spelling(L, parent);
            cls = strmap_get(&L->class_index, pn, strlen(pn));
            if (cls == UINT32_MAX && pn[0] && !cx__is_main(parent) && A->clang_isCursorDefinition(parent)) {
                /* a class of a header (a trainer declared in runner.h): a class of its own here, so its
                 * members flow between its methods; the methods type its members (cx__header_members) */
                sched_act(s, A_CLASS_BEGIN, parent, sp, 0, 0);
                sched_act(s, A_CLASS_END, parent, sp, 0, 0);
                cls = IR_NONE - 3;
            } else if (cls == UINT32_MAX) {
                cls = IR_NONE - 1; /* a method of a class we do not see */
            }
        }
        cx__sched_func(L, c, sp, cls, s);
        break;
    }
    case CXCursor_ClassDecl:
    case CXCursor_StructDecl:
    case CXCursor_ClassTemplate: {
        if (!A->clang_isCursorDefinition(c)) break;
        if (L->shadow && cx__shadow_class(L, c, sp, s)) break;
        sched_act(s, A_CLASS_BEGIN, c, sp, 0, 0);
        uint32_t first = cx__children(L, c);
        bool has_ctor = false;
        CXCursor body;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (A->clang_getCursorKind(L->kids.items[i]) == CXCursor_Constructor && cx__has_body(L, L->kids.items[i], &body))
                has_ctor = true;
        if (!has_ctor) sched_act(s, A_INIT_BEGIN, c, sp, 0, 0), sched_act(s, A_FUNC_END, c, sp, 0, 0);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor m = L->kids.items[i];
            enum CXCursorKind mk = A->clang_getCursorKind(m);
            if (mk == CXCursor_CXXMethod || mk == CXCursor_Constructor || mk == CXCursor_FunctionTemplate)
                cx__sched_func(L, m, cx__span_of(L, m, sp), IR_NONE - 2 /* the open class */, s);
            else if (mk == CXCursor_ClassDecl || mk == CXCursor_StructDecl || mk == CXCursor_ClassTemplate)
                sched(s, W_DECL, m, sp, 0);
        }
        L->kids.len = first;
        sched_act(s, A_CLASS_END, c, sp, 0, 0);
        break;
    }
    case CXCursor_VarDecl:
        sched(s, W_VARDECL, c, sp, 0);
        break;
    default:
        break;
    }
}

/* ---- functions and classes ------------------------------------------------------------------- */

static void cx__param(Lower *L, const char *name, const char *qual, uint32_t pos, Span sp)
{
    ir_build_param(&L->B, name, strlen(name), qual, pos, sp);
}

static void cx__field_inits(Lower *L, uint32_t class_ctx, Span sp, Schedule *s);
static void cx__set_attr(Lower *L, uint32_t obj, uint32_t value, const char *name, Span sp);

/* An out-of-line method of a class declared in a header: its members of module, optimizer and
 * data-loader types hold those (the class's constructor is not lowered here: it may be in another
 * file), so `model_->forward(x)` is a model call in a trainer's methods. */
static void cx__header_members(Lower *L, CXCursor fn, Span sp)
{
    CXCursor cls = A->clang_getCursorSemanticParent(fn);
    enum CXCursorKind ck = A->clang_getCursorKind(cls);
    if ((ck != CXCursor_ClassDecl && ck != CXCursor_StructDecl) || cx__is_main(cls)) return;
    uint32_t first = cx__children(L, cls);
    uint32_t n = L->kids.len - first;
    CXCursor *fields = ARENA_NEW_N(L->arena, CXCursor, n ? n : 1);
    memcpy(fields, L->kids.items + first, sizeof(CXCursor) * n);
    L->kids.len = first;
    for (uint32_t i = 0; i < n; i++) {
        if (A->clang_getCursorKind(fields[i]) != CXCursor_FieldDecl) continue;
        TyInfo ti = cx__classify(L, A->clang_getCursorType(fields[i]));
        if (ti.cls != TY_MODULE && ti.cls != TY_OPTIM && ti.cls != TY_LOADER) continue;
        uint32_t v = cx__construct(L, &ti, sp);
        cx__set_attr(L, cx__load(L, sp, "self", NULL), v, cx__spelling(L, fields[i]), sp);
    }
}

/* A method of the shadow source (its class unseen): the members it uses as LibTorch modules
 * (`model_->forward(x)`, `net.forward(x)`, `model_->eval()`, `policy_->parameters()`) hold modules,
 * whatever their unknown types. */
static void cx__shadow_members(Lower *L, CXCursor fn, Span sp)
{
    uint32_t s0, e0;
    if (!cx__offsets(L, fn, &s0, &e0)) return;
    const char *names[8];
    uint32_t n = 0;
    /* module-only methods of LibTorch (a tensor has none of them) */
    static const char *const calls[] = {"->forward(", ".forward(", "->eval()", "->train(", "->parameters(",
                                        "->named_parameters(", "->named_modules(", "->children("};
    for (uint32_t i = s0; i + 9 < e0 && n < ARRAY_LEN(names); i++) {
        uint32_t k = i;
        bool hit = false;
        for (size_t ci = 0; ci < ARRAY_LEN(calls) && !hit; ci++)
            hit = i + strlen(calls[ci]) <= e0 && !memcmp(L->src + i, calls[ci], strlen(calls[ci]));
        if (!hit) continue;
        uint32_t b = k;
        while (b > s0 && (isalnum((unsigned char)L->src[b - 1]) || L->src[b - 1] == '_')) b--;
        if (b == k || (b > s0 && (L->src[b - 1] == '.' || L->src[b - 1] == '>' || L->src[b - 1] == ':'))) continue;
        const char *nm = arena_strndup(L->arena, L->src + b, k - b);
        bool dup = false;
        for (uint32_t j = 0; j < n && !dup; j++) dup = !strcmp(names[j], nm);
        if (!dup) names[n++] = nm;
    }
    TyInfo mod = {TY_MODULE, "torch.nn.Module", NULL};
    for (uint32_t j = 0; j < n; j++) {
        uint32_t v = cx__construct(L, &mod, sp);
        cx__set_attr(L, cx__load(L, sp, "self", NULL), v, names[j], sp);
    }
}

static void cx__func_begin(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = A->clang_getCursorKind(c);
    bool synth = w->act == A_INIT_BEGIN;
    const char *nm = synth || k == CXCursor_Constructor ? "__init__" : cx__spelling(L, c);
    uint32_t cls = w->aux;
    uint32_t class_ctx = IR_NONE;
    if (cls == IR_NONE - 2 || synth) {
        class_ctx = L->classes.len ? L->classes.len - 1 : IR_NONE;
        cls = class_ctx != IR_NONE ? L->classes.items[class_ctx].index : IR_NONE;
    }
    if (cls == IR_NONE - 3) { /* a header's class, lowered just before: by name */
        const char *pn = cx__spelling(L, A->clang_getCursorSemanticParent(c));
        cls = strmap_get(&L->class_index, pn, strlen(pn));
        if (cls == UINT32_MAX) cls = IR_NONE - 1;
    }
    bool is_method = cls != IR_NONE;
    if (cls == IR_NONE - 1) cls = IR_NONE; /* method of an unseen class: self, no class */
    bool is_static = !synth && k == CXCursor_CXXMethod && A->clang_CXXMethod_isStatic(c);
    Span name_sp = w->span;
    if (!synth) {
        CXSourceLocation loc = A->clang_getCursorLocation(c);
        unsigned off;
        A->clang_getFileLocation(loc, NULL, NULL, NULL, &off);
        if (L->shadow && !cx_shadow_map(L->shadow, off, false, &off)) off = UINT_MAX;
        if (off < L->len) {
            name_sp.start = off;
            name_sp.end = off + (uint32_t)strlen(nm == cx__spelling(L, c) ? nm : "");
            cx__pos(L, name_sp.start, &name_sp.row, &name_sp.col);
            cx__pos(L, name_sp.end, &name_sp.end_row, &name_sp.end_col);
        }
    }
    bool has_self = is_method && !is_static;
    IrFunc *f = ir_build_func_begin(&L->B, nm, name_sp, is_static ? IR_NONE : cls, has_self);
    uint32_t pos = 0;
    if (has_self) cx__param(L, "self", NULL, pos++, name_sp);
    if (has_self && L->shadow && !synth) cx__shadow_members(L, c, name_sp);
    if (has_self && !L->shadow && !synth) cx__header_members(L, c, name_sp);
    if (!synth) {
        uint32_t first = cx__children(L, c);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor p = L->kids.items[i];
            if (A->clang_getCursorKind(p) != CXCursor_ParmDecl) continue;
            const char *pn = cx__spelling(L, p);
            if (!pn[0]) pn = arena_printf(L->arena, "<arg%u>", pos);
            TyInfo ti = cx__classify(L, A->clang_getCursorType(p));
            const char *q = ti.cls == TY_MODULE ? "torch.nn.Module" : ti.cls == TY_TENSOR ? "torch.Tensor"
                          : ti.cls == TY_OPTIM ? "torch.optim.Optimizer"
                          : ti.cls == TY_LOADER ? "torch.utils.data.DataLoader" : NULL;
            cx__param(L, pn, q, pos++, cx__span_of(L, p, name_sp));
        }
        f->nparams = pos;
        /* a constructor: fields first (their default initializers), then the member initializers */
        if (k == CXCursor_Constructor) {
            if (class_ctx != IR_NONE) cx__field_inits(L, class_ctx, name_sp, s);
            for (uint32_t i = first; i < L->kids.len; i++) {
                CXCursor mref = L->kids.items[i];
                if (A->clang_getCursorKind(mref) != CXCursor_MemberRef || i + 1 >= L->kids.len) continue;
                CXCursor val = L->kids.items[i + 1];
                if (!cx__is_expr(val)) continue;
                Span vs = cx__span_of(L, val, name_sp);
                sched(s, W_EXPR, val, vs, 1);
                sched_act(s, A_SET_SELF, mref, vs, 0, 0);
            }
        }
        L->kids.len = first;
    } else {
        f->nparams = pos;
        if (class_ctx != IR_NONE) cx__field_inits(L, class_ctx, name_sp, s);
    }
}

/* Schedules self.<field> = <default> for every field of the open class. */
static void cx__field_inits(Lower *L, uint32_t class_ctx, Span sp, Schedule *s)
{
    ClassCtx *cc = &L->classes.items[class_ctx];
    for (uint32_t i = 0; i < cc->fields.len; i++) {
        CXCursor fd = cc->fields.items[i];
        Span fs = cx__span_of(L, fd, sp);
        uint32_t first = cx__children(L, fd);
        CXCursor init = fd;
        bool has = false;
        for (uint32_t k = first; k < L->kids.len; k++)
            if (cx__is_expr(L->kids.items[k])) init = L->kids.items[k], has = true;
        L->kids.len = first;
        TyInfo ti = cx__classify(L, A->clang_getCursorType(fd));
        if (has) sched(s, W_EXPR, init, fs, 1);
        else if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER || ti.cls == TY_CONTAINER) {
            Work *x = sched_act(s, A_COERCE, fd, fs, 0, 0);
            x->vbase = L->tyinfo.len;
            array_push(&L->tyinfo, ti);
        } else continue;
        sched_act(s, A_SET_SELF, fd, fs, 0, 0);
    }
}

static void cx__func_end(Lower *L, const Work *w)
{
    IrFunc *f = ir_build_func_end(&L->B);
    if (f->index == 0) return;
    if (f->cls != IR_NONE || L_fn(L)->has_self) return; /* methods are reached through their class */
    if (w->act == A_FUNC_END && f->name[0] == '_' && !strcmp(f->name, "__init__")) return;
    uint32_t op = ir_build_define(&L->B, f->index, NULL, f->span);
    ir_build_store(&L->B, f->name, strlen(f->name), op, f->span);
}

static void cx__class_begin(Lower *L, const Work *w)
{
    CXCursor c = w->c;
    const char *name = cx__spelling(L, c);
    IrClass *ic = ir_build_class_begin(&L->B, name[0] ? name : "<anonymous>", w->span);
    ClassCtx cc;
    memset(&cc, 0, sizeof cc);
    cc.index = ic->index;
    uint32_t first = cx__children(L, c);
    for (uint32_t i = first; i < L->kids.len; i++) {
        CXCursor k = L->kids.items[i];
        enum CXCursorKind kk = A->clang_getCursorKind(k);
        if (kk == CXCursor_FieldDecl) {
            array_push(&cc.fields, k);
        } else if (kk == CXCursor_CXXBaseSpecifier) {
            CXCursor bd = A->clang_getTypeDeclaration(A->clang_getCanonicalType(A->clang_getCursorType(k)));
            const char *bq = A->clang_Cursor_isNull(bd) ? NULL : cx__cxx_qual(L, bd);
            if (!bq) bq = cx__spelling(L, k);
            const char *pq = bq && strstr(bq, "::") && !cx__is_main(bd) ? cx__py_qual(L, bq) : bq;
            if (pq) array_push(&ic->bases, pq);
        }
    }
    L->kids.len = first;
    array_push(&L->classes, cc);
    strmap_put(&L->class_index, ic->name, strlen(ic->name), ic->index);
}

static void cx__class_end(Lower *L, const Work *w)
{
    if (!L->classes.len) return;
    ClassCtx cc = array_pop(&L->classes);
    array_free(&cc.fields);
    uint32_t op;
    IrClass *ic = ir_build_class_end(&L->B, w->span, &op);
    if (NEVER(!ic || ic->index != cc.index)) return;
    ir_build_store(&L->B, ic->name, strlen(ic->name), op, w->span);
}

/* ---- actions --------------------------------------------------------------------------------- */

static void cx__set_attr(Lower *L, uint32_t obj, uint32_t value, const char *name, Span sp)
{
    uint32_t op = ir_build_set_attr(&L->B, obj, value, name, IR_NONE, sp);
    if (obj != IR_NONE && !L_f(L)->ops.items[obj].qual) op_at(L, op)->var = ir_build_member_var(&L->B, obj, name);
}

static void cx__action(Lower *L, Work *w, Schedule *s)
{
    IrBuilder *B = &L->B;
    switch ((Action)w->act) {
    case A_EXPR_STMT: ir_build_expr_stmt(B, pop_val(L), w->aux != 0, w->span); break;
    case A_POP: pop_val(L); break;
    case A_DUP: push_val(L, ir_build_top(B)); break;
    case A_CONST_UNKNOWN: push_val(L, cx__const(L, w->span, CONST_OTHER, NULL)); break;
    case A_PASS:
        if (w->aux2 == 2) { push_val(L, cx__load(L, w->span, "self", NULL)); break; } /* implicit this */
        if (w->aux2 == 1 && w->aux > 1) { /* comma: keep the last */
            uint32_t last = pop_val(L);
            B->vals.len -= GL_MIN(B->vals.len, w->aux - 1);
            push_val(L, last);
            break;
        }
        /* one operand passes through: nothing to do */
        break;
    case A_FOR_BEGIN: ir_build_loop_begin(B, false, w->span); break;
    case A_WHILE_BEGIN: ir_build_loop_begin(B, true, w->span); break;
    case A_END_LOOP: ir_build_loop_end(B, w->span); break;
    case A_BREAK: ir_build_jump(B, IR_BREAK, w->span); break; /* outside a loop: a switch's break */
    case A_CONTINUE: ir_build_jump(B, IR_CONTINUE, w->span); break;
    case A_IF: ir_build_if(B, w->aux, w->span); break;
    case A_ELSE: ir_build_mark(B, IR_ELSE, w->aux, w->span); break;
    case A_END_IF: ir_build_mark(B, IR_END_IF, w->aux, w->span); break;
    case A_TRY: ir_build_mark(B, IR_TRY, w->aux, w->span); break;
    case A_EXCEPT: ir_build_mark(B, IR_EXCEPT, w->aux, w->span); break;
    case A_END_TRY: ir_build_mark(B, IR_END_TRY, w->aux, w->span); break;
    case A_RETURN: {
        uint32_t v = w->aux ? pop_val(L) : IR_NONE;
        ir_build_op2(B, IR_RETURN, v, IR_NONE, 0, w->span);
        break;
    }
    case A_SCOPE_BEGIN: ir_build_scope_begin(B); break;
    case A_SCOPE_END: {
        /* the guards of the block end at its closing brace */
        Span end = w->span;
        if (end.end > end.start) {
            end.start = end.end - 1;
            cx__pos(L, end.start, &end.row, &end.col);
        }
        ir_build_scope_end(B, end);
        break;
    }
    case A_GUARD: ir_build_guard(B, (uint8_t)w->aux, w->span); break;
    case A_FUNC_BEGIN:
    case A_INIT_BEGIN: cx__func_begin(L, w, s); break;
    case A_FUNC_END: cx__func_end(L, w); break;
    case A_CLASS_BEGIN: cx__class_begin(L, w); break;
    case A_CLASS_END: cx__class_end(L, w); break;
    case A_CALL: cx__emit_call(L, w); break;
    case A_AUG: {
        uint32_t rhs = pop_val(L), lhs = pop_val(L);
        if (cx__classify(L, A->clang_getCursorType(w->c)).cls == TY_SCALAR) rhs = cx__scalar(L, rhs, w->span);
        uint32_t op = ir_build_op2(B, IR_BINOP, lhs, rhs, w->aux, w->span);
        op_at(L, op)->flags |= IR_F_AUG;
        push_val(L, op);
        break;
    }
    case A_STORE_VAR: {
        const char *name = cx__spelling(L, w->c);
        uint32_t v = pop_val(L);
        if (!name[0]) break;
        if (cx__classify(L, A->clang_getCursorType(w->c)).cls == TY_SCALAR) v = cx__scalar(L, v, w->span);
        uint32_t op = ir_build_store(B, name, strlen(name), v, cx__span_of(L, w->c, w->span));
        op_at(L, op)->flags |= (uint8_t)w->aux;
        /* the declared type: a tensor whatever the analysis makes of the initializer */
        if (cx__classify(L, A->clang_getCursorType(w->c)).cls == TY_TENSOR) op_at(L, op)->qual = "torch.Tensor";
        break;
    }
    case A_SET_ATTR: {
        uint32_t obj = pop_val(L);
        const char *name = cx__spelling(L, w->c);
        if (!name[0]) name = cx__member_name(L, w->span);
        cx__set_attr(L, obj, w->aux, name, w->span);
        break;
    }
    case A_SET_SELF: {
        uint32_t v = pop_val(L);
        TyInfo ti = cx__classify(L, A->clang_getCursorType(A->clang_getCursorReferenced(w->c)));
        if (A->clang_getCursorKind(w->c) == CXCursor_FieldDecl) ti = cx__classify(L, A->clang_getCursorType(w->c));
        if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) v = cx__construct(L, &ti, w->span);
        if (!L_fn(L)->has_self) break;
        uint32_t self = cx__load(L, w->span, "self", NULL);
        cx__set_attr(L, self, v, cx__spelling(L, w->c), w->span);
        break;
    }
    case A_COERCE: {
        TyInfo ti = L->tyinfo.items[w->vbase];
        if (ti.cls == TY_CONTAINER) {
            push_val(L, ir_build_build(B, BUILD_LIST, NULL, 0, w->span));
            break;
        }
        push_val(L, cx__construct(L, &ti, w->span));
        if (w->aux == 1 && B->vals.len >= 2) {
            /* keep the constructed object on top, the initializer below it (popped by the caller) */
            uint32_t top = B->vals.items[B->vals.len - 1];
            B->vals.items[B->vals.len - 1] = B->vals.items[B->vals.len - 2];
            B->vals.items[B->vals.len - 2] = top;
        }
        break;
    }
    case A_SET_ITEM: {
        uint32_t idx = pop_val(L), obj = pop_val(L);
        uint32_t op = ir_build_op2(B, IR_SET_ITEM, obj, idx, 0, w->span);
        op_at(L, op)->c = w->aux;
        break;
    }
    case A_UNPACK: push_val(L, ir_build_op2(B, IR_UNPACK, w->aux, IR_NONE, w->aux2, w->span)); break;
    }
}

/* ---- compile commands and the stub ----------------------------------------------------------- */

typedef struct Args {
    Array(const char *) v;
    Arena *arena;
} Args;

static void args_add(Args *a, const char *s) { array_push(&a->v, arena_strdup(a->arena, s)); }

static bool cx__file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Finds compile_commands.json: in -p DIR, else in the file's folder or above (also DIR/build/). */
static CXCompilationDatabase cx__find_db(Lower *L, const char *abs_path, const char *dir_hint)
{
    CXCompilationDatabase_Error err;
    if (dir_hint) {
        CXCompilationDatabase db = A->clang_CompilationDatabase_fromDirectory(dir_hint, &err);
        return err == CXCompilationDatabase_NoError ? db : NULL;
    }
    char dir[PATH_MAX];
    size_t an = strlen(abs_path);
    if (an >= sizeof dir) return NULL;
    memcpy(dir, abs_path, an + 1);
    for (int guard = 0; guard < 64; guard++) {
        char *slash = strrchr(dir, '/');
        if (!slash) break;
        *slash = 0;
        const char *d = dir[0] ? dir : "/";
        for (int b = 0; b < 2; b++) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s%s/compile_commands.json", d, b ? "/build" : "");
            if (!cx__file_exists(path)) continue;
            char folder[PATH_MAX + 16];
            snprintf(folder, sizeof folder, "%s%s", d, b ? "/build" : "");
            CXCompilationDatabase db = A->clang_CompilationDatabase_fromDirectory(folder, &err);
            if (err == CXCompilationDatabase_NoError) return db;
        }
        if (!dir[0]) break;
    }
    GL_UNUSED(L);
    return NULL;
}

/* A flag of a compile command that does not change how the file parses (warnings, debug info,
 * optimisation, code generation, dependency files): dropped, so that the files of a project share
 * one precompiled header, and so that -Werror cannot turn a warning into a lost statement. `-O`
 * defines __OPTIMIZE__ and -fPIC __PIC__: a PCH would be refused for those, so they go from the
 * file's command too. */
static bool cx__flag_irrelevant(const char *a)
{
    static const char *const prefixes[] = {
        "-W", "-g", "-O", "-fPIC", "-fpic", "-fPIE", "-fpie", "-pipe", "-fdiagnostics", "-fcolor-diagnostics",
        "-fno-color-diagnostics", "-fno-omit-frame-pointer", "-fomit-frame-pointer", "-fstack-protector",
        "-flto", "-ffunction-sections", "-fdata-sections", "-fvisibility", "-pedantic", "-fsanitize",
        "-fno-sanitize", "-fprofile", "-fcoverage", "--coverage", "-ftest-coverage", "-fexceptions",
        "-fno-exceptions", "-fdebug-prefix-map", "-ffile-prefix-map", "-fmacro-prefix-map", "-save-temps",
        "-fno-strict-aliasing", "-fstrict-aliasing", "-frecord-gcc-switches",
    };
    if (!strncmp(a, "-Wl,", 4) || !strncmp(a, "-Wp,", 4)) return true;
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++)
        if (!strncmp(a, prefixes[i], strlen(prefixes[i]))) return true;
    return false;
}

/* Flags whose value is a path (joined "-Idir" or separate "-I dir"): made absolute against the
 * command's folder, so that no -working-directory is needed. libclang 14's driver applies
 * -working-directory by changing the process's working folder, which breaks every relative path
 * used afterwards (the next file of the run, the cache, --fix's writes). */
static const char *const cx_path_flags[] = {
    "-isystem", "-iquote", "-idirafter", "-imacros", "-include", "-isysroot", "-iprefix", "--sysroot=", "-I", "-F",
};

static const char *cx__abs_in(Lower *L, const char *dir, const char *p)
{
    if (!p[0] || p[0] == '/' || !dir[0]) return p;
    return arena_printf(L->arena, "%s/%s", dir, p);
}

/* Flags of the file's compile command, without the compiler, -c/-o, the file itself and the flags
 * that do not change the parse; relative paths made absolute against the command's folder. */
static bool cx__db_args(Lower *L, CXCompilationDatabase db, const char *abs_path, Args *out)
{
    CXCompileCommands cmds = A->clang_CompilationDatabase_getCompileCommands(db, abs_path);
    if (!cmds) return false;
    bool ok = false;
    if (A->clang_CompileCommands_getSize(cmds) > 0) {
        CXCompileCommand cmd = A->clang_CompileCommands_getCommand(cmds, 0);
        unsigned n = A->clang_CompileCommand_getNumArgs(cmd);
        const char *dir = cx__str(L, A->clang_CompileCommand_getDirectory(cmd));
        for (unsigned i = 1; i < n; i++) {
            const char *a = cx__str(L, A->clang_CompileCommand_getArg(cmd, i));
            if (!strcmp(a, "-c")) continue;
            if (!strcmp(a, "-o") || !strcmp(a, "-MF") || !strcmp(a, "-MT") || !strcmp(a, "-MQ") ||
                !strcmp(a, "-include-pch") || !strcmp(a, "-Xclang")) { i++; continue; }
            if (!strncmp(a, "-M", 2) || !strcmp(a, "--") || !strncmp(a, "-working-directory", 18)) continue;
            if (cx__flag_irrelevant(a)) continue;
            const char *base = strrchr(a, '/');
            base = base ? base + 1 : a;
            const char *fbase = strrchr(abs_path, '/');
            fbase = fbase ? fbase + 1 : abs_path;
            if (a[0] != '-' && !strcmp(base, fbase)) continue; /* the source file itself */
            bool done = false;
            for (size_t k = 0; k < ARRAY_LEN(cx_path_flags) && !done; k++) {
                size_t fl = strlen(cx_path_flags[k]);
                if (strncmp(a, cx_path_flags[k], fl) != 0) continue;
                done = true;
                if (!a[fl] && i + 1 < n && cx_path_flags[k][fl - 1] != '=') { /* "-I dir" */
                    args_add(out, a);
                    args_add(out, cx__abs_in(L, dir, cx__str(L, A->clang_CompileCommand_getArg(cmd, ++i))));
                } else {
                    args_add(out, arena_printf(L->arena, "%.*s%s", (int)fl, a, cx__abs_in(L, dir, a + fl)));
                }
            }
            if (!done) args_add(out, a);
        }
        ok = true;
    }
    A->clang_CompileCommands_dispose(cmds);
    return ok;
}

static bool cx__has_torch_header(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/torch/torch.h", dir);
    return cx__file_exists(p);
}

/* Include folders of real LibTorch headers: $LIBTORCH, then the system (Debian libtorch-dev).
 * *dir gets the folder that holds torch/torch.h. */
static bool cx__find_libtorch(Lower *L, Args *out, const char **dir)
{
    const char *roots[3] = {getenv("LIBTORCH"), "/usr/local", "/usr"};
    for (int i = 0; i < 3; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        const char *api = arena_printf(L->arena, "%s/include/torch/csrc/api/include", roots[i]);
        if (!cx__has_torch_header(api)) continue;
        *dir = api;
        args_add(out, "-isystem");
        args_add(out, api);
        /* /usr/include is a system folder already: naming it again breaks libstdc++'s #include_next */
        if (strcmp(roots[i], "/usr") != 0) {
            args_add(out, "-isystem");
            args_add(out, arena_printf(L->arena, "%s/include", roots[i]));
        }
        return true;
    }
    return false;
}

/* Names that lead to the stub when the real headers are absent. */
static const char *const cx_stub_names[] = {
    "torch/torch.h", "torch/script.h", "torch/all.h", "torch/extension.h", "torch/nn.h", "torch/optim.h",
    "torch/data.h", "torch/cuda.h", "torch/autograd.h", "torch/types.h", "torch/serialize.h",
    "torch/nn/module.h", "torch/nn/functional.h", "torch/nn/modules.h", "torch/utils.h", "torch/jit.h",
    "ATen/ATen.h", "c10/cuda/CUDACachingAllocator.h", "c10/cuda/CUDAFunctions.h", "c10/core/GradMode.h",
    "c10/core/InferenceMode.h", "torch/csrc/autograd/grad_mode.h",
};

/* The file's path as clang sees it: absolute, so compile_commands.json entries match. */
static void cx__abs_path(const char *path, char *out, size_t cap)
{
    StrBuf b;
    sb_init(&b);
    if (path[0] == '/') {
        sb_puts(&b, path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) memcpy(cwd, ".", 2);
        sb_printf(&b, "%s/%s", cwd, path);
    }
    size_t pn = b.len < cap - 1 ? b.len : cap - 1;
    memcpy(out, b.data, pn);
    out[pn] = 0;
    sb_free(&b);
}

/* The CUDA toolkit's headers (the c10/cuda headers include cuda_runtime_api.h): $CUDA_HOME, then
 * /usr/local/cuda. Without them a file that includes a c10/cuda header loses whole statements. */
static const char *cx__cuda_include(Lower *L)
{
    const char *roots[2] = {getenv("CUDA_HOME"), "/usr/local/cuda"};
    for (int i = 0; i < 2; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        const char *inc = arena_printf(L->arena, "%s/include", roots[i]);
        if (cx__file_exists(arena_printf(L->arena, "%s/cuda_runtime_api.h", inc))) return inc;
    }
    return NULL;
}

/* The command line a file is parsed with: its compile command (compile_commands.json) or a C++17
 * default, then the LibTorch headers (the command's, $LIBTORCH's or the system's) or the stub.
 * Sets res->from_compdb and res->mode, and *inc_dir to the real headers' folder. Returns whether
 * the real headers are used. */
static bool cx__command(Lower *L, const char *abs_path, const CxConfig *cfg, Args *args, CxResult *res,
                        const char **inc_dir)
{
    size_t plen = strlen(abs_path);
    bool cuda = plen > 3 && !strcmp(abs_path + plen - 3, ".cu");
    CXCompilationDatabase db = cx__find_db(L, abs_path, cfg ? cfg->compdb_dir : NULL);
    if (db) {
        res->from_compdb = cx__db_args(L, db, abs_path, args);
        A->clang_CompilationDatabase_dispose(db);
    }
    if (!res->from_compdb) {
        if (cuda) {
            /* CUDA files: the host code, with the CUDA keywords defined away */
            static const char *const cu[] = {"-x", "c++", "-std=c++17", "-D__global__=", "-D__device__=",
                                             "-D__host__=", "-D__shared__=", "-D__constant__=",
                                             "-D__forceinline__=inline", "-D__CUDACC__"};
            for (size_t i = 0; i < ARRAY_LEN(cu); i++) args_add(args, cu[i]);
        } else {
            args_add(args, "-x");
            args_add(args, "c++");
            args_add(args, "-std=c++17");
        }
        /* no compile command: the project's include folders as CMake projects lay them out (an
         * `include/` beside the file or up to three folders above it) */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", abs_path);
        for (int up = 0; up < 4; up++) {
            char *slash = strrchr(dir, '/');
            if (!slash || slash == dir) break;
            *slash = 0;
            const char *inc = arena_printf(L->arena, "%s/include", dir);
            struct stat st;
            if (stat(inc, &st) == 0 && S_ISDIR(st.st_mode)) args_add(args, arena_printf(L->arena, "-I%s", inc));
        }
    }
    /* real headers: the compile command's include folders, else $LIBTORCH or the system */
    bool real = false;
    const char *force = getenv("GRADLEAK_CXX_HEADERS");
    if (!(force && !strcmp(force, "stub"))) {
        for (uint32_t i = 0; i < args->v.len && !real; i++) {
            const char *a = args->v.items[i];
            const char *dir = NULL;
            if ((!strcmp(a, "-I") || !strcmp(a, "-isystem")) && i + 1 < args->v.len) dir = args->v.items[i + 1];
            else if (!strncmp(a, "-I", 2)) dir = a + 2;
            else if (!strncmp(a, "-isystem", 8)) dir = a + 8;
            if (dir && dir[0] && cx__has_torch_header(dir)) real = true, *inc_dir = dir;
        }
        if (!real && cx__find_libtorch(L, args, inc_dir)) {
            real = true;
            const char *cu = cx__cuda_include(L);
            if (cu) args_add(args, "-isystem"), args_add(args, cu);
        }
    }
    res->mode = real ? CX_MODE_LIBTORCH : CX_MODE_STUB;
    if (!real) args_add(args, "-I" CX_STUB_DIR);
    else args_add(args, "-idirafter"), args_add(args, CX_COMPAT_DIR);
    /* errors about unknown warnings options in foreign compile commands are noise; and clang's
     * default of 20 errors would end the parse (and the AST) at the 20th */
    args_add(args, "-Wno-unknown-warning-option");
    args_add(args, "-ferror-limit=0");
    return real;
}

/* clang_parseTranslationUnit2, leaving the process's working folder as it was: libclang 14's
 * driver changes it for a -working-directory flag (gradleak passes none, but a compile command's
 * stray one, or a later libclang, must not make the next relative path resolve elsewhere). */
static enum CXErrorCode cx__parse(CXIndex idx, const char *path, const char *const *args, int nargs,
                                  struct CXUnsavedFile *un, unsigned nun, unsigned opts, CXTranslationUnit *tu)
{
    char before[PATH_MAX], after[PATH_MAX];
    bool have = getcwd(before, sizeof before) != NULL;
    enum CXErrorCode ec = A->clang_parseTranslationUnit2(idx, path, args, nargs, un, nun, opts, tu);
    if (have && (!getcwd(after, sizeof after) || strcmp(before, after) != 0) && chdir(before) != 0) {
        /* nothing better to do: every path gradleak uses after this point is absolute */
    }
    return ec;
}

/* FNV-1a of n bytes into h. */
static uint64_t cx__hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull; /* FNV-1a */
    return h;
}

static uint64_t cx__hash_stat(uint64_t h, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return cx__hash(h, "-", 1);
    int64_t v[4] = {(int64_t)st.st_dev, (int64_t)st.st_ino, (int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
    return cx__hash(h, v, sizeof v);
}

uint64_t cx_config_key(const char *path, const CxConfig *cfg)
{
    const char *why;
    A = cx_api(&why);
    if (!A) return 0;
    Arena arena;
    arena_init(&arena);
    Lower L;
    memset(&L, 0, sizeof L);
    L.arena = &arena;
    char abs_path[PATH_MAX + 8];
    cx__abs_path(path, abs_path, sizeof abs_path);
    Args args;
    array_init(&args.v);
    args.arena = &arena;
    CxResult res;
    memset(&res, 0, sizeof res);
    const char *inc = NULL;
    bool real = cx__command(&L, abs_path, cfg, &args, &res, &inc);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < args.v.len; i++) h = cx__hash(h, args.v.items[i], strlen(args.v.items[i]) + 1);
    h = cx__hash(h, &real, sizeof real);
    if (real && inc) {
        /* the headers' identity: a reinstalled or upgraded LibTorch changes these */
        h = cx__hash_stat(h, inc);
        h = cx__hash_stat(h, arena_printf(&arena, "%s/torch/torch.h", inc));
        h = cx__hash_stat(h, arena_printf(&arena, "%s/../../../../ATen/Functions.h", inc));
    }
    const char *ver = cx__str(&L, A->clang_getClangVersion());
    h = cx__hash(h, ver, strlen(ver));
    array_free(&args.v);
    arena_free(&arena);
    return h ? h : 1;
}

/* ---- precompiled headers ----------------------------------------------------------------------
 * Parsing <torch/torch.h> (or the stub, which pulls in the C++ standard headers) is most of a
 * file's time, and every file of a project parses the same headers with the same flags. So the
 * headers are parsed once into a PCH, kept on disk under a name that hashes the flags, the header
 * mode, the real headers' identity and libclang's version, and every file is parsed with
 * -include-pch: the file's own `#include <torch/torch.h>` is then a no-op (include guards and
 * #pragma once are in the PCH). A PCH that cannot be built or read is not used: the file is parsed
 * as before. */

static pthread_mutex_t cx_pch_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t key; bool ok; } cx_pch_seen[16]; /* this process's verdicts, under cx_pch_mu */
static uint32_t cx_pch_nseen;

static bool cx__private_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return false;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 022);
}

/* The folder for PCH files, created if needed, or NULL. */
static const char *cx__pch_dir(Lower *L, const CxConfig *cfg)
{
    const char *off = getenv("GRADLEAK_PCH");
    if (off && !strcmp(off, "0")) return NULL;
    if (cfg && cfg->pch_dir) {
        if (mkdir(cfg->pch_dir, 0755) != 0 && errno != EEXIST) return NULL;
        return cfg->pch_dir;
    }
    const char *tmp = getenv("TMPDIR");
    const char *dir = arena_printf(L->arena, "%s/gradleak-pch-%u", tmp && tmp[0] ? tmp : "/tmp", (unsigned)getuid());
    return cx__private_dir(dir) ? dir : NULL;
}

static uint64_t cx__pch_key(Lower *L, const Args *args, bool real, const char *inc_dir);

/* The PCH folder is capped: at most GRADLEAK_PCH_MAX_MB megabytes (default 1024: eight LibTorch
 * PCHs, a hundred of the stub's) and CX_PCH_MAX_FILES files. After a PCH is built, the least
 * recently used ones (a PCH's mtime is set each time a run first uses it) go until both hold. */
#define CX_PCH_MAX_FILES 16

static void cx__pch_evict(const char *dir, const char *keep)
{
    const char *env = getenv("GRADLEAK_PCH_MAX_MB");
    long long cap = env && atoll(env) > 0 ? atoll(env) << 20 : 1024ll << 20;
    DIR *d = opendir(dir);
    if (!d) return;
    struct { char name[64]; long long size; int64_t mtime; } files[256];
    uint32_t n = 0;
    long long total = 0;
    time_t now = time(NULL);
    char p[PATH_MAX + 80];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        bool tmp = len > 4 && !strcmp(e->d_name + len - 4, ".tmp");
        if (len >= sizeof files[0].name || (!tmp && (len < 5 || strcmp(e->d_name + len - 4, ".pch") != 0))) continue;
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (stat(p, &st) != 0) continue;
        if (tmp) { /* a build that died: gone after an hour */
            if (now - st.st_mtime > 3600) unlink(p);
            continue;
        }
        if (n >= ARRAY_LEN(files)) continue;
        memcpy(files[n].name, e->d_name, len + 1);
        files[n].size = (long long)st.st_size;
        files[n].mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        total += files[n].size;
        n++;
    }
    closedir(d);
    const char *keep_base = strrchr(keep, '/');
    keep_base = keep_base ? keep_base + 1 : keep;
    while ((total > cap || n > CX_PCH_MAX_FILES) && n > 1) {
        uint32_t old = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(files[i].name, keep_base) != 0 && (old == UINT32_MAX || files[i].mtime < files[old].mtime)) old = i;
        if (old == UINT32_MAX) break;
        snprintf(p, sizeof p, "%s/%s", dir, files[old].name);
        unlink(p);
        total -= files[old].size;
        files[old] = files[--n];
    }
}

/* The path of a PCH for this command line, built now if there is none; NULL: parse without. */
static const char *cx__pch(Lower *L, CXIndex idx, const Args *args, bool real, const char *inc_dir,
                           const CxConfig *cfg, struct CXUnsavedFile *stub, uint32_t nstub, uint64_t *key_out)
{
    const char *dir = cx__pch_dir(L, cfg);
    if (!dir) return NULL;
    uint64_t key = cx__pch_key(L, args, real, inc_dir);
    *key_out = key;
    const char *path = arena_printf(L->arena, "%s/%016llx.pch", dir, (unsigned long long)key);
    pthread_mutex_lock(&cx_pch_mu);
    for (uint32_t i = 0; i < cx_pch_nseen; i++)
        if (cx_pch_seen[i].key == key) {
            bool ok = cx_pch_seen[i].ok;
            pthread_mutex_unlock(&cx_pch_mu);
            return ok ? path : NULL;
        }
    bool ok = cx__file_exists(path);
    bool built = false;
    if (ok) utimensat(AT_FDCWD, path, NULL, 0); /* used: the eviction keeps the recently used */
    if (!ok) {
        /* the header the PCH is made of: what a LibTorch file includes first */
        static const char hdr_path[] = CX_STUB_DIR "/gradleak_pch.h";
        const char *hdr = real ? "#include <torch/torch.h>\n" : "#include \"" CX_STUB_DIR "/gradleak_torch_stub.h\"\n";
        struct CXUnsavedFile un[1 + 1 + ARRAY_LEN(cx_stub_names)];
        uint32_t n = 0;
        un[n++] = (struct CXUnsavedFile){hdr_path, hdr, (unsigned long)strlen(hdr)};
        for (uint32_t i = 0; i < nstub && n < ARRAY_LEN(un); i++) un[n++] = stub[i];
        Array(const char *) a;
        array_init(&a);
        for (uint32_t i = 0; i < args->v.len; i++) array_push(&a, args->v.items[i]);
        /* the headers' own template instantiations go into the PCH too, instead of being redone at
         * the end of every file (LibTorch: 6.9 s -> 2.6 s a file, clang 14) */
        array_push(&a, "-fpch-instantiate-templates");
        array_push(&a, "-x");
        array_push(&a, "c++-header");
        CXTranslationUnit tu = NULL;
        enum CXErrorCode ec = cx__parse(idx, hdr_path, a.items, (int)a.len, un, n,
                                                             CXTranslationUnit_ForSerialization | CXTranslationUnit_Incomplete,
                                                             &tu);
        array_free(&a);
        if (ec == CXError_Success && tu) {
            bool errors = false;
            unsigned nd = A->clang_getNumDiagnostics(tu);
            for (unsigned i = 0; i < nd && !errors; i++) {
                CXDiagnostic dg = A->clang_getDiagnostic(tu, i);
                errors = A->clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error;
                A->clang_disposeDiagnostic(dg);
            }
            /* headers with errors are parsed with each file instead, so the file says what failed */
            if (!errors) {
                const char *tmp = arena_printf(L->arena, "%s.%d.tmp", path, (int)getpid());
                ok = A->clang_saveTranslationUnit(tu, tmp, 0) == 0 && rename(tmp, path) == 0;
                if (!ok) unlink(tmp);
                built = ok;
            }
            A->clang_disposeTranslationUnit(tu);
        }
    }
    if (built) cx__pch_evict(dir, path);
    if (cx_pch_nseen < ARRAY_LEN(cx_pch_seen)) {
        cx_pch_seen[cx_pch_nseen].key = key;
        cx_pch_seen[cx_pch_nseen++].ok = ok;
    }
    pthread_mutex_unlock(&cx_pch_mu);
    return ok ? path : NULL;
}

/* A PCH that libclang rejected (another build of the same name, a header changed under it):
 * not used again by this process, and removed so the next run builds it afresh. */
static void cx__pch_reject(uint64_t key, const char *path)
{
    pthread_mutex_lock(&cx_pch_mu);
    for (uint32_t i = 0; i < cx_pch_nseen; i++)
        if (cx_pch_seen[i].key == key) cx_pch_seen[i].ok = false;
    pthread_mutex_unlock(&cx_pch_mu);
    unlink(path);
}

static uint64_t cx__pch_key(Lower *L, const Args *args, bool real, const char *inc_dir)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < args->v.len; i++) {
        /* the project's own include folders (-I, -iquote) do not change a PCH of <torch/torch.h> (the
         * folder of the real headers is hashed below), and clang accepts the PCH with other ones: one
         * PCH serves every target and tutorial folder of a project */
        const char *a = args->v.items[i];
        if (!strcmp(a, "-I") || !strcmp(a, "-iquote")) { i++; continue; }
        if ((!strncmp(a, "-I", 2) || !strncmp(a, "-iquote", 7)) && strcmp(a, "-I" CX_STUB_DIR) != 0) continue;
        h = cx__hash(h, a, strlen(a) + 1);
    }
    h = cx__hash(h, &real, sizeof real);
    if (real && inc_dir) {
        h = cx__hash_stat(h, inc_dir);
        h = cx__hash_stat(h, arena_printf(L->arena, "%s/torch/torch.h", inc_dir));
        h = cx__hash_stat(h, arena_printf(L->arena, "%s/../../../../ATen/Functions.h", inc_dir));
    } else {
        h = cx__hash(h, gl_libtorch_stub, strlen(gl_libtorch_stub));
    }
    const char *ver = cx__str(L, A->clang_getClangVersion());
    return cx__hash(h, ver, strlen(ver));
}

/* Partial coverage per function: "train (3), Runner::warm (1)" for the namespace-level function
 * definitions that hold clang errors (at most 6 named), or NULL. */
static const char *cx__coverage(Lower *L, const void *errs_v)
{
    const Array(uint32_t) *errs = errs_v;
    CxShadowFns fns;
    array_init(&fns);
    cx_shadow_scan(L->src, L->len, &fns);
    StrBuf b;
    sb_init(&b);
    uint32_t named = 0, more = 0;
    for (uint32_t i = 0; i < fns.len; i++) {
        const CxShadowFn *fn = &fns.items[i];
        uint32_t n = 0;
        for (uint32_t k = 0; k < errs->len; k++) n += errs->items[k] >= fn->start && errs->items[k] < fn->end;
        if (!n) continue;
        if (named == 6) { more++; continue; }
        uint32_t e = fn->name;
        while (e < fn->brace && (isalnum((unsigned char)L->src[e]) || L->src[e] == '_' || L->src[e] == '~')) e++;
        sb_printf(&b, "%s%.*s (%u)", named ? ", " : "", (int)(e - fn->qual), L->src + fn->qual, n);
        named++;
    }
    if (more) sb_printf(&b, " and %u more", more);
    const char *r = b.len ? arena_strndup(L->arena, b.data, b.len) : NULL;
    sb_free(&b);
    array_free(&fns);
    return r;
}

/* Runs the work list from a translation unit's cursor. */
static void cx__run(Lower *L, CXCursor tu_cursor, Span whole, Schedule *s)
{
    Work root;
    memset(&root, 0, sizeof root);
    root.kind = W_DECL;
    root.c = tu_cursor;
    root.span = whole;
    array_push(&L->work, root);
    while (L->work.len) {
        Work w = array_pop(&L->work);
        switch ((WorkKind)w.kind) {
        case W_DECL: cx__decl(L, &w, s); break;
        case W_STMT: cx__stmt(L, &w, s); break;
        case W_EXPR: cx__expr(L, &w, s); break;
        case W_EXIT: cx__exit(L, &w); break;
        case W_TARGET: cx__target(L, &w, s); break;
        case W_VARDECL: cx__vardecl(L, &w, s); break;
        case W_ACTION: cx__action(L, &w, s); break;
        }
        IR_SCHEDULE_COMMIT(&L->work, s);
    }
}

/* The namespace-level function definitions that go to the shadow source: those clang dropped
 * (no function of the AST starts inside them: `void Runner::warm(int n) {...}` of a class whose
 * header was not found) and those with an unknown name in their body (`img.to(at::kCUDA);`).
 * Their ranges go to L->skip (the AST's functions there are not lowered from the AST). */
static void cx__shadow_select(Lower *L, CXTranslationUnit tu, const void *undeclared_v, CxShadowFns *out)
{
    const Array(uint32_t) *undeclared = undeclared_v;
    CxShadowFns all;
    array_init(&all);
    cx_shadow_scan(L->src, L->len, &all);
    /* where the AST's function definitions start */
    Array(uint32_t) starts;
    array_init(&starts);
    Array(CXCursor) stack;
    array_init(&stack);
    array_push(&stack, A->clang_getTranslationUnitCursor(tu));
    while (stack.len && stack.len < 4096) {
        CXCursor c = array_pop(&stack);
        uint32_t first = cx__children(L, c);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor k = L->kids.items[i];
            enum CXCursorKind kk = A->clang_getCursorKind(k);
            if (!cx__is_main(k)) continue;
            if (kk == CXCursor_Namespace || kk == CXCursor_LinkageSpec || kk == CXCursor_UnexposedDecl) array_push(&stack, k);
            uint32_t so, eo;
            if ((kk == CXCursor_FunctionDecl || kk == CXCursor_CXXMethod || kk == CXCursor_Constructor ||
                 kk == CXCursor_Destructor || kk == CXCursor_FunctionTemplate) && cx__offsets(L, k, &so, &eo))
                array_push(&starts, so);
        }
        L->kids.len = first;
    }
    array_free(&stack);
    for (uint32_t i = 0; i < all.len; i++) {
        const CxShadowFn *fn = &all.items[i];
        bool covered = false, unknown = false;
        for (uint32_t k = 0; k < starts.len && !covered; k++) covered = starts.items[k] >= fn->start && starts.items[k] < fn->end;
        for (uint32_t k = 0; k < undeclared->len && !unknown; k++)
            unknown = undeclared->items[k] > fn->brace && undeclared->items[k] < fn->end;
        if (covered && !unknown) continue;
        array_push(out, *fn);
        array_push(&L->skip, fn->start);
        array_push(&L->skip, fn->end);
    }
    array_free(&starts);
    array_free(&all);
}

/* The unknown names of a shadow parse's diagnostics, as using-declarations of the dependent base
 * ("using GlB::model_;", "using typename GlB::Config;"), appended to b. */
static void cx__shadow_usings(Lower *L, CXTranslationUnit tu, StrBuf *b)
{
    StrMap seen;
    strmap_init(&seen);
    unsigned nd = A->clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = A->clang_getDiagnostic(tu, i);
        const char *msg = cx__str(L, A->clang_getDiagnosticSpelling(dg));
        A->clang_disposeDiagnostic(dg);
        bool type = !strncmp(msg, "unknown type name '", 19);
        if (!type && strncmp(msg, "use of undeclared identifier '", 30) != 0) continue;
        const char *nm = strchr(msg, '\'') + 1;
        size_t n = strcspn(nm, "'");
        if (!n || n > 128 || strspn(nm, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n) continue;
        if (strmap_get(&seen, nm, n) != UINT32_MAX) continue;
        strmap_put(&seen, nm, n, 1);
        sb_printf(b, "using %sGlB::%.*s;\n", type ? "typename " : "", (int)n, nm);
    }
    strmap_free(&seen);
}

/* Parses the shadow source of fns (twice: the second time with the unknown names of the first
 * declared as dependent members) and lowers it into L's module. Returns the functions lowered. */
static uint32_t cx__shadow_lower(Lower *L, CXIndex idx, const char *abs_path, const Args *args,
                                 struct CXUnsavedFile *unsaved, uint32_t nun, unsigned opts, const CxShadowFns *fns,
                                 Span whole, Schedule *s)
{
    const char *path = arena_printf(L->arena, "%s.gradleak-shadow.cpp", abs_path);
    struct CXUnsavedFile main_file = unsaved[0];
    StrBuf usings;
    sb_init(&usings);
    CXTranslationUnit tu = NULL;
    CxShadow sh;
    memset(&sh, 0, sizeof sh);
    for (int pass = 0; pass < 2; pass++) {
        cx_shadow_free(&sh);
        cx_shadow_build(&sh, L->src, L->len, fns->items, fns->len, usings.len ? usings.data : NULL);
        unsaved[0] = (struct CXUnsavedFile){path, sh.text.data ? sh.text.data : "", (unsigned long)sh.text.len};
        if (tu) A->clang_disposeTranslationUnit(tu), tu = NULL;
        if (cx__parse(idx, path, args->v.items, (int)args->v.len, unsaved, nun, opts, &tu) != CXError_Success) tu = NULL;
        if (!tu) break;
        if (pass == 0) {
            cx__shadow_usings(L, tu, &usings);
            if (!usings.len) break;
        }
    }
    unsaved[0] = main_file;
    uint32_t before = L->m->funcs.len;
    if (tu) {
        L->shadow = &sh;
        cx__run(L, A->clang_getTranslationUnitCursor(tu), whole, s);
        L->shadow = NULL;
        A->clang_disposeTranslationUnit(tu);
    }
    cx_shadow_free(&sh);
    sb_free(&usings);
    return L->m->funcs.len - before;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int cx_lower(IrModule *m, const CxConfig *cfg, CxResult *res)
{
    memset(res, 0, sizeof *res);
    const char *why;
    A = cx_api(&why);
    if (!A) return -1;
    cx_collect_comments(m);
    uint64_t t0 = now_ns();

    Lower L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.arena = m->arena;
    L.src = m->src;
    L.len = m->len;
    lineindex_build(&L.lines, m->src, m->len);

    char abs_path[PATH_MAX + 8];
    cx__abs_path(m->path, abs_path, sizeof abs_path);
    Args args;
    array_init(&args.v);
    args.arena = L.arena;
    const char *inc_dir = NULL;
    bool real = cx__command(&L, abs_path, cfg, &args, res, &inc_dir);
    struct CXUnsavedFile unsaved[1 + 1 + ARRAY_LEN(cx_stub_names)];
    uint32_t nun = 0;
    unsaved[nun++] = (struct CXUnsavedFile){abs_path, m->src, (unsigned long)m->len};
    if (real) {
        /* Debian's libtorch-dev (1.13) ships the c10/cuda headers without the header its build generates
         * (c10/cuda/impl/cuda_cmake_macros.h): an empty stand-in, found only after the real folders */
        static const char macros[] = "#pragma once\n";
        unsaved[nun++] = (struct CXUnsavedFile){CX_COMPAT_DIR "/c10/cuda/impl/cuda_cmake_macros.h", macros,
                                                (unsigned long)strlen(macros)};
    } else {
        unsaved[nun++] = (struct CXUnsavedFile){CX_STUB_DIR "/gradleak_torch_stub.h", gl_libtorch_stub,
                                                (unsigned long)strlen(gl_libtorch_stub)};
        static const char fwd[] = "#include \"" CX_STUB_DIR "/gradleak_torch_stub.h\"\n";
        for (size_t i = 0; i < ARRAY_LEN(cx_stub_names); i++)
            unsaved[nun++] = (struct CXUnsavedFile){arena_printf(L.arena, "%s/%s", CX_STUB_DIR, cx_stub_names[i]), fwd,
                                                    (unsigned long)strlen(fwd)};
    }

    CXIndex idx = A->clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    /* not SkipFunctionBodies: it skips the main file's bodies too (libclang 14), which are what is
     * linted */
    unsigned opts = CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles;
    uint64_t pch_key = 0;
    const char *pch = cx__pch(&L, idx, &args, real, inc_dir, cfg, unsaved + 1, nun - 1, &pch_key);
    if (pch) args_add(&args, "-include-pch"), args_add(&args, pch);
    enum CXErrorCode ec = cx__parse(idx, abs_path, args.v.items, (int)args.v.len, unsaved, nun,
                                                         opts, &tu);
    if (pch) {
        /* a PCH libclang will not read (built by another libclang, a header changed since) is a
         * fatal error about the PCH: parse again without it */
        bool bad = ec != CXError_Success || !tu;
        for (unsigned i = 0, nd = tu ? A->clang_getNumDiagnostics(tu) : 0; i < nd && !bad; i++) {
            CXDiagnostic dg = A->clang_getDiagnostic(tu, i);
            if (A->clang_getDiagnosticSeverity(dg) == CXDiagnostic_Fatal) {
                const char *msg = cx__str(&L, A->clang_getDiagnosticSpelling(dg));
                bad = strstr(msg, "PCH") || strstr(msg, "precompiled") || strstr(msg, "AST file");
            }
            A->clang_disposeDiagnostic(dg);
        }
        if (bad) {
            if (tu) A->clang_disposeTranslationUnit(tu);
            tu = NULL;
            cx__pch_reject(pch_key, pch);
            args.v.len -= 2;
            pch = NULL;
            ec = cx__parse(idx, abs_path, args.v.items, (int)args.v.len, unsaved, nun, opts, &tu);
        }
    }
    res->pch = pch != NULL;
    /* headers that are not the project's: the system's, LibTorch's, CUDA's, the stub */
    const char *skip[64];
    uint32_t nskip = 0;
    static const char *const sys[] = {"/usr/include", "/usr/lib", "/usr/local/include", "/usr/local/cuda", "/__gradleak__"};
    for (size_t i = 0; i < ARRAY_LEN(sys); i++) skip[nskip++] = sys[i];
    if (getenv("LIBTORCH") && getenv("LIBTORCH")[0] == '/') skip[nskip++] = getenv("LIBTORCH");
    if (getenv("CUDA_HOME") && getenv("CUDA_HOME")[0] == '/') skip[nskip++] = getenv("CUDA_HOME");
    if (inc_dir && nskip < ARRAY_LEN(skip)) {
        const char *t = strstr(inc_dir, "/torch/csrc/api/include");
        skip[nskip++] = t ? arena_strndup(L.arena, inc_dir, (size_t)(t - inc_dir)) : inc_dir;
    }
    for (uint32_t i = 0; i + 1 < args.v.len && nskip < ARRAY_LEN(skip); i++)
        if (!strcmp(args.v.items[i], "-isystem") || !strcmp(args.v.items[i], "-idirafter")) skip[nskip++] = args.v.items[++i];
        else if (!strncmp(args.v.items[i], "-isystem", 8) && args.v.items[i][8]) skip[nskip++] = args.v.items[i] + 8;
    if (ec != CXError_Success || !tu) {
        array_free(&args.v);
        A->clang_disposeIndex(idx);
        lineindex_free(&L.lines);
        return -2;
    }
    uint64_t t1 = now_ns();
    res->deps = cx_deps_list(tu, L.arena, skip, nskip);
    /* errors in this file (unknown names from headers that were not found, syntax errors) */
    unsigned nd = A->clang_getNumDiagnostics(tu);
    bool fatal_seen = false;
    Array(uint32_t) undeclared; /* offsets of unknown names in this file: their functions go to the shadow */
    array_init(&undeclared);
    Array(uint32_t) errs; /* offsets of every error in this file: coverage per function */
    array_init(&errs);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = A->clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = A->clang_getDiagnosticSeverity(dg);
        CXSourceLocation loc = A->clang_getDiagnosticLocation(dg);
        /* errors in headers count too: a header that fails (a missing CUDA header) costs the AST
         * of this file whole statements */
        if (sev >= CXDiagnostic_Error) {
            const char *spell = cx__str(&L, A->clang_getDiagnosticSpelling(dg));
            bool limit = strstr(spell, "too many errors emitted") != NULL;
            if (A->clang_Location_isFromMainFile(loc)) {
                unsigned eoff;
                A->clang_getFileLocation(loc, NULL, NULL, NULL, &eoff);
                array_push(&errs, (uint32_t)eoff);
            }
            if (A->clang_Location_isFromMainFile(loc) &&
                (!strncmp(spell, "use of undeclared identifier", 28) || !strncmp(spell, "unknown type name", 17))) {
                unsigned uoff;
                A->clang_getFileLocation(loc, NULL, NULL, NULL, &uoff);
                array_push(&undeclared, (uint32_t)uoff);
            }
            if (!limit && (!res->first_error || (sev == CXDiagnostic_Fatal && !fatal_seen))) {
                unsigned line, col;
                CXFile df;
                A->clang_getFileLocation(loc, &df, &line, &col, NULL);
                const char *msg = cx__str(&L, A->clang_getDiagnosticSpelling(dg));
                const char *where = A->clang_Location_isFromMainFile(loc) ? "" : cx__str(&L, A->clang_getFileName(df));
                res->first_error = arena_printf(L.arena, "%s%s%u:%u: %s", where, where[0] ? ":" : "", line, col, msg);
                fatal_seen = sev == CXDiagnostic_Fatal;
            }
            res->n_errors++;
        }
        A->clang_disposeDiagnostic(dg);
    }

    L.tu = tu;
    strmap_init(&L.class_index);
    strmap_init(&L.types);
    Span whole = {0, (uint32_t)m->len, 0, 0, 0, 0};
    ir_build_init(&L.B, m, whole);
    Schedule s;
    array_init(&s);
    CxShadowFns shadowed;
    array_init(&shadowed);
    if (res->n_errors) cx__shadow_select(&L, tu, &undeclared, &shadowed);
    cx__run(&L, A->clang_getTranslationUnitCursor(tu), whole, &s);
    if (shadowed.len) {
        res->n_shadow = cx__shadow_lower(&L, idx, abs_path, &args, unsaved, nun, opts, &shadowed, whole, &s);
        res->n_shadow_fns = shadowed.len;
    }
    array_free(&shadowed);
    array_free(&undeclared);
    if (errs.len) res->partial = cx__coverage(&L, &errs);
    array_free(&errs);
    array_free(&L.skip);
    Work endw;
    memset(&endw, 0, sizeof endw);
    L.B.funcs.len = 1;
    cx__func_end(&L, &endw);
    res->truncated = L.truncated;
    for (uint32_t i = 0; i < L.classes.len; i++) array_free(&L.classes.items[i].fields);
    array_free(&s);
    array_free(&L.work), array_free(&L.classes), array_free(&L.kids), array_free(&L.tyinfo);
    ir_build_free(&L.B);
    strmap_free(&L.class_index);
    strmap_free(&L.types);
    lineindex_free(&L.lines);
    array_free(&args.v);
    A->clang_disposeTranslationUnit(tu);
    A->clang_disposeIndex(idx);
    res->parse_ns = t1 - t0;
    res->lower_ns = now_ns() - t1;
    return 0;
}

#endif /* GL_HAVE_LIBCLANG */
