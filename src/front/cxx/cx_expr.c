/* Expressions and assignment targets of the C++ front end (cx_int.h): names and declared types spelled
 * the Python way, operators, calls, and the work items that evaluate them. */
#include <ctype.h>
#include "front/cxx/cx_int.h"
#include "ir/api.h"

#if GL_HAVE_LIBCLANG

/* ---- names and types ------------------------------------------------------------------------- */

/* "torch::nn::Linear" for a declaration (inline and anonymous namespaces skipped). */
const char *cx_cxx_qual(Lower *L, CXCursor decl)
{
    const char *segs[24];
    uint32_t n = 0;
    CXCursor c = decl;
    for (int guard = 0; guard < 24 && !cx_A->clang_Cursor_isNull(c); guard++) {
        enum CXCursorKind k = cx_A->clang_getCursorKind(c);
        if (k == CXCursor_TranslationUnit || cx_A->clang_isDeclaration(k) == 0) break;
        const char *sp = cx_spelling(L, c);
        bool skip = !sp[0] || (k == CXCursor_Namespace && (!strncmp(sp, "__", 2) || !strcmp(sp, "detail")));
        if (!skip && n < ARRAY_LEN(segs)) segs[n++] = sp;
        c = cx_A->clang_getCursorSemanticParent(c);
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
const char *cx_py_qual(Lower *L, const char *cxx)
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

bool cx_is_main(CXCursor decl)
{
    return cx_A->clang_Location_isFromMainFile(cx_A->clang_getCursorLocation(decl)) != 0;
}

/* Strips references, pointers and smart pointers: the type a variable really refers to. */
static CXType cx__core_type(Lower *L, CXType t)
{
    for (int guard = 0; guard < 8; guard++) {
        t = cx_A->clang_getCanonicalType(t);
        if (t.kind == CXType_Pointer || t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) {
            t = cx_A->clang_getPointeeType(t);
            continue;
        }
        if (t.kind != CXType_Record) break;
        const char *q = cx_cxx_qual(L, cx_A->clang_getTypeDeclaration(t));
        if (q && (!strcmp(q, "std::shared_ptr") || !strcmp(q, "std::unique_ptr")) &&
            cx_A->clang_Type_getNumTemplateArguments(t) > 0) {
            t = cx_A->clang_Type_getTemplateArgumentAsType(t, 0);
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
    const char *q = cx_cxx_qual(L, decl);
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
        const char *cq = cx_cxx_qual(L, c);
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
        uint32_t first = cx_children(L, c);
        for (uint32_t i = first; i < L->kids.len && tail < ARRAY_LEN(queue); i++) {
            CXCursor k = L->kids.items[i];
            if (cx_A->clang_getCursorKind(k) != CXCursor_CXXBaseSpecifier) continue;
            CXType bt = cx_A->clang_getCanonicalType(cx_A->clang_getCursorType(k));
            CXCursor bd = cx_A->clang_getTypeDeclaration(bt);
            const char *bq = cx_cxx_qual(L, bd);
            if (bq && !strcmp(bq, "torch::nn::ModuleHolder")) {
                /* a holder (TORCH_MODULE(Net)): the module is its Impl */
                ti.cls = TY_MODULE;
                if (cx_A->clang_Type_getNumTemplateArguments(bt) > 0) {
                    CXCursor impl = cx_A->clang_getTypeDeclaration(cx_A->clang_getCanonicalType(
                        cx_A->clang_Type_getTemplateArgumentAsType(bt, 0)));
                    if (!cx_A->clang_Cursor_isNull(impl) && cx_is_main(impl)) ti.local = cx_spelling(L, impl);
                }
                L->kids.len = first;
                goto done;
            }
            if (!cx_A->clang_Cursor_isNull(bd)) queue[tail++] = bd;
        }
        L->kids.len = first;
    }
done:
    if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM) {
        if (!ti.local && cx_is_main(decl)) ti.local = cx_spelling(L, decl);
        if (!ti.local) ti.qual = cx_py_qual(L, q);
        if (ti.qual && ti.cls == TY_MODULE && strncmp(ti.qual, "torch.nn.", 9) != 0) ti.qual = "torch.nn.Module";
        if (ti.qual && ti.cls == TY_OPTIM && strncmp(ti.qual, "torch.optim.", 12) != 0) ti.qual = "torch.optim.Optimizer";
    }
    return ti;
}

TyInfo cx_classify(Lower *L, CXType t)
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
    const char *key = cx_str(L, cx_A->clang_getTypeSpelling(core));
    uint32_t hit = strmap_get(&L->types, key, strlen(key));
    if (hit != UINT32_MAX) return L->tyinfo.items[hit];
    TyInfo ti = cx__classify_record(L, cx_A->clang_getTypeDeclaration(core));
    array_push(&L->tyinfo, ti);
    strmap_put(&L->types, key, strlen(key), L->tyinfo.len - 1);
    return ti;
}

const char *cx_local_class(Lower *L, CXType t)
{
    CXType core = cx__core_type(L, t);
    if (core.kind != CXType_Record) return NULL;
    if (cx_classify(L, t).cls != TY_OTHER) return NULL;
    CXCursor d = cx_A->clang_getTypeDeclaration(core);
    if (cx_A->clang_Cursor_isNull(d)) return NULL;
    const char *name = cx_spelling(L, d);
    return name[0] && strmap_get(&L->class_index, name, strlen(name)) != UINT32_MAX ? name : NULL;
}

const char *cx_extern_key(Lower *L, CXCursor decl)
{
    if (cx_A->clang_Cursor_isNull(decl)) return NULL;
    enum CXCursorKind k = cx_A->clang_getCursorKind(decl);
    if (k == CXCursor_CXXMethod) {
        if (cx_A->clang_CXXMethod_isStatic(decl)) return NULL;
        /* methods of modules are model calls, of tensors and containers the library's */
        CXCursor cls = cx_A->clang_getCursorSemanticParent(decl);
        TyInfo owner = cx_classify(L, cx_A->clang_getCursorType(cls));
        /* a class of this file has its methods here (a class declared in a .cpp is that file's own) */
        if (owner.cls != TY_OTHER || cx_is_main(cls)) return NULL;
    } else if (k != CXCursor_FunctionDecl) {
        return NULL;
    }
    const char *q = cx_cxx_qual(L, decl);
    if (!q || q[0] == '_') return NULL;
    static const char *const lib[] = {"std::", "torch::", "at::", "c10::", "caffe2::", "cuda", "thrust::", "cub::", "pybind11::"};
    for (size_t i = 0; i < ARRAY_LEN(lib); i++)
        if (!strncmp(q, lib[i], strlen(lib[i]))) return NULL;
    return arena_printf(L->arena, "::%s", q);
}

/* Emits the construction of a module/optimizer/loader of type ti: a call of the local class (so
 * its methods are known) or of the torch class by name. */
uint32_t cx_class_ref(Lower *L, const char *name, Span sp)
{
    /* the class itself, not its name: a constructor's fields are analysed before the file's top
     * level binds the class names */
    uint32_t ci = strmap_get(&L->class_index, name, strlen(name));
    if (ci == UINT32_MAX) return cx_load(L, sp, name, NULL);
    return ir_build_define(&L->B, IR_NONE - 1 - ci, "class", sp);
}

uint32_t cx_construct(Lower *L, const TyInfo *ti, Span sp)
{
    uint32_t callee;
    if (ti->local && ti->cls == TY_OTHER) callee = cx_class_ref(L, ti->local, sp);
    else if (ti->local) callee = cx_load(L, sp, ti->local, NULL);
    else callee = cx_load(L, sp, "torch", ti->qual ? ti->qual : "torch.nn.Module");
    return ir_build_call(&L->B, callee, op_at(L, callee)->qual, sp);
}

/* v converted to a C++ number (the declared type of what it is stored in, or added to, is int64_t,
 * double...): a number carries no graph, whatever the analysis makes of the expression. Lowered as
 * Python's float(v), which the dataflow knows. */
uint32_t cx_scalar(Lower *L, uint32_t v, Span sp)
{
    uint32_t callee = cx_load(L, sp, "float", NULL);
    uint32_t op = ir_build_call(&L->B, callee, NULL, sp);
    ir_build_arg(&L->B, op, v, NULL);
    return op;
}

/* ---- source text helpers --------------------------------------------------------------------- */

static uint32_t cx_skip_ws(Lower *L, uint32_t i, uint32_t end)
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
const char *cx_op_at(Lower *L, uint32_t i, uint32_t end)
{
    static const char *const ops[] = {
        "<<=", ">>=", "->*", "...", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "==", "!=", "<=", ">=",
        "&&", "||", "<<", ">>", "++", "--", "->", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "=",
        "!", "~", ",",
    };
    i = cx_skip_ws(L, i, end);
    for (size_t k = 0; k < ARRAY_LEN(ops); k++) {
        size_t n = strlen(ops[k]);
        if (i + n <= end && !memcmp(L->src + i, ops[k], n)) return ops[k];
    }
    return "?";
}

/* The member name of a MemberRefExpr whose spelling libclang leaves empty (dependent code:
 * `batch.data`, `loss.template item<float>`): the identifier before any template arguments. */
const char *cx_member_name(Lower *L, Span sp)
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

static BinOp cx_binop(const char *t)
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

static bool cx_is_compare(const char *t)
{
    return !strcmp(t, "==") || !strcmp(t, "!=") || !strcmp(t, "<") || !strcmp(t, ">") || !strcmp(t, "<=") ||
           !strcmp(t, ">=");
}

static bool cx_is_aug(const char *t)
{
    size_t n = strlen(t);
    return n >= 2 && t[n - 1] == '=' && !cx_is_compare(t);
}

/* ---- expressions ----------------------------------------------------------------------------- */

/* Is this child of an operator call the reference to the operator function itself? */
static bool cx__is_fnref(CXCursor k)
{
    CXType t = cx_A->clang_getCursorType(k);
    if (t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto) return true;
    if (t.kind == CXType_Pointer) {
        CXType p = cx_A->clang_getPointeeType(t);
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
    if (cx_is_aug(opt) && n == 2) {
        sched(s, W_EXPR, opnds[0], sp, d);
        sched(s, W_EXPR, opnds[1], sp, d);
        sched_act(s, A_AUG, c, sp, cx_binop(opt), 0);
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
    } else if (cx_is_compare(opt)) {
        k = IR_COMPARE;
    } else if (!strcmp(opt, "&&") || !strcmp(opt, "||")) {
        k = IR_SELECT;
    } else if (!strcmp(opt, ",")) {
        sched_act(s, A_PASS, c, sp, n, 1); /* the last operand */
        return;
    } else {
        k = IR_BINOP;
        aux = cx_binop(opt);
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
CXCursor cx_unwrap(Lower *L, CXCursor c)
{
    for (int guard = 0; guard < 32; guard++) {
        enum CXCursorKind k = cx_A->clang_getCursorKind(c);
        if (k != CXCursor_UnexposedExpr && k != CXCursor_ParenExpr) break;
        uint32_t first = cx_children(L, c);
        uint32_t n = L->kids.len - first;
        CXCursor only = n == 1 ? L->kids.items[first] : c;
        L->kids.len = first;
        if (n != 1 || !cx_is_expr(only)) break;
        c = only;
    }
    return c;
}

/* A name clang left unresolved in a dependent expression of the shadow (`torch::cat({buf, out}, 1)`
 * with `out` of a type the shadow does not know): torch's function, by the name as written, pushed
 * as a load of it. False when the text is no torch:: or at:: name. */
static bool cx__push_torch_by_text(Lower *L, Span sp)
{
    const char *text = sp.end > sp.start && sp.end - sp.start < 96 ? cx_text(L, sp) : "";
    if (strncmp(text, "torch::", 7) != 0 && strncmp(text, "at::", 4) != 0) return false;
    if (strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:") != strlen(text)) return false;
    push_val(L, cx_load(L, sp, "torch", cx_py_qual(L, text)));
    return true;
}

static bool cx__std_fn(Lower *L, CXCursor ref, const char *name)
{
    if (cx_A->clang_Cursor_isNull(ref)) return false;
    const char *q = cx_cxx_qual(L, ref);
    return q && !strncmp(q, "std::", 5) && !strcmp(q + 5, name);
}

/* The declaration a dependent call names (in a template, std::get<0>(hc) where hc's type depends
 * on a template parameter references nothing; its callee names the candidate declarations). */
static CXCursor cx__dependent_callee(Lower *L, CXCursor callee_expr)
{
    CXCursor callee = cx_unwrap(L, callee_expr);
    enum CXCursorKind ck = cx_A->clang_getCursorKind(callee);
    if (ck == CXCursor_OverloadedDeclRef && cx_A->clang_getNumOverloadedDecls(callee) > 0)
        return cx_A->clang_getOverloadedDecl(callee, 0);
    if (ck == CXCursor_DeclRefExpr) return cx_A->clang_getCursorReferenced(callee);
    return cx_A->clang_getNullCursor();
}

/* What a call expression calls: its referenced declaration, or for a dependent call the one its
 * callee names. */
static CXCursor cx__call_decl(Lower *L, CXCursor call)
{
    CXCursor r = cx_A->clang_getCursorReferenced(call);
    if (!cx_A->clang_Cursor_isNull(r)) return r;
    uint32_t first = cx_children(L, call);
    CXCursor callee = first < L->kids.len ? L->kids.items[first] : r;
    bool has = first < L->kids.len && cx_is_expr(callee);
    L->kids.len = first;
    return has ? cx__dependent_callee(L, callee) : r;
}

void cx_expr(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = cx_A->clang_getCursorKind(c);
    Span sp = cx_span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    if (w->depth > CX_MAX_DEPTH) {
        L->truncated = true;
        push_val(L, cx_const(L, sp, CONST_OTHER, NULL));
        return;
    }
    switch (k) {
    case CXCursor_IntegerLiteral: push_val(L, cx_const(L, sp, CONST_INT, cx_text(L, sp))); return;
    case CXCursor_FloatingLiteral: push_val(L, cx_const(L, sp, CONST_FLOAT, cx_text(L, sp))); return;
    case CXCursor_StringLiteral:
    case CXCursor_CharacterLiteral:
        push_val(L, cx_const(L, sp, CONST_STR, sp.end - sp.start < 64 ? cx_text(L, sp) : NULL));
        return;
    case CXCursor_CXXBoolLiteralExpr: {
        const char *t = cx_text(L, sp);
        push_val(L, cx_const(L, sp, CONST_BOOL, !strcmp(t, "true") ? "True" : !strcmp(t, "false") ? "False" : t));
        return;
    }
    case CXCursor_CXXNullPtrLiteralExpr: push_val(L, cx_const(L, sp, CONST_NONE, NULL)); return;
    case CXCursor_LambdaExpr: case CXCursor_CXXThrowExpr: case CXCursor_CXXTypeidExpr:
    case CXCursor_UnaryExpr: case CXCursor_CXXDeleteExpr: case CXCursor_SizeOfPackExpr:
        push_val(L, cx_const(L, sp, CONST_OTHER, NULL));
        return;
    case CXCursor_CXXThisExpr:
        push_val(L, cx_load(L, sp, "self", NULL));
        return;
    case CXCursor_DeclRefExpr:
    case CXCursor_OverloadedDeclRef: {
        CXCursor r = cx_A->clang_getCursorReferenced(c);
        if (k == CXCursor_OverloadedDeclRef && cx_A->clang_getNumOverloadedDecls(c) > 0) r = cx_A->clang_getOverloadedDecl(c, 0);
        const char *name = cx_spelling(L, c);
        if (cx_A->clang_Cursor_isNull(r)) {
            if (cx__push_torch_by_text(L, sp)) return;
            push_val(L, name[0] ? cx_load(L, sp, name, NULL) : cx_const(L, sp, CONST_OTHER, NULL));
            return;
        }
        enum CXCursorKind rk = cx_A->clang_getCursorKind(r);
        if (rk == CXCursor_EnumConstantDecl) { push_val(L, cx_const(L, sp, CONST_OTHER, name)); return; }
        if (cx_is_main(r) || rk == CXCursor_ParmDecl) {
            if (L->shadow && cx__push_torch_by_text(L, sp)) return; /* the shadow's using-declaration */
            /* a variable or function of this file: by name (static members by their own name) */
            push_val(L, cx_load(L, sp, cx_spelling(L, r), NULL));
            return;
        }
        /* a function of another file of the project: by its C++ name (cross-file summaries) */
        const char *q = L->shadow ? NULL : cx_extern_key(L, r);
        if (!q) q = cx_py_qual(L, cx_cxx_qual(L, r));
        push_val(L, cx_load(L, sp, "torch", q));
        return;
    }
    case CXCursor_MemberRefExpr: {
        const char *name = cx_spelling(L, c);
        if (!name[0]) name = cx_member_name(L, sp);
        uint32_t first = cx_children(L, c);
        CXCursor base = c;
        bool has_base = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) base = L->kids.items[i], has_base = true;
        L->kids.len = first;
        if (!has_base && L->shadow && !L_fn(L)->has_self) {
            if (cx__push_torch_by_text(L, sp)) return;
            /* a free function of the shadow: an unknown name is a variable of its own */
            push_val(L, cx_load(L, sp, name, NULL));
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
        uint32_t first = cx_children(L, c);
        CXCursor ops[2];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 2; i++)
            if (cx_is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        cx__sched_operator(L, s, "[]", ops, n, sp, d, c);
        return;
    }
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator: {
        uint32_t first = cx_children(L, c);
        CXCursor ops[2];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 2; i++)
            if (cx_is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        const char *opt = "?";
        uint32_t s0, e0;
        if (n == 2 && cx_offsets(L, ops[0], &s0, &e0)) opt = cx_op_at(L, e0, (uint32_t)L->len);
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
        uint32_t first = cx_children(L, c);
        CXCursor op = c;
        bool has = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) op = L->kids.items[i], has = true;
        L->kids.len = first;
        uint32_t s0, e0;
        const char *opt = "?";
        if (has && cx_offsets(L, op, &s0, &e0)) {
            if (s0 > sp.start) opt = cx_op_at(L, sp.start, s0);
            else opt = cx_op_at(L, e0, sp.end);
        }
        if (!has) { push_val(L, cx_const(L, sp, CONST_OTHER, NULL)); return; }
        cx__sched_operator(L, s, opt, &op, 1, sp, d, c);
        return;
    }
    case CXCursor_ConditionalOperator: {
        uint32_t first = cx_children(L, c);
        CXCursor ops[3];
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len && n < 3; i++)
            if (cx_is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
        L->kids.len = first;
        if (n != 3) { push_val(L, cx_const(L, sp, CONST_OTHER, NULL)); return; }
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
        uint32_t first = cx_children(L, c);
        uint32_t vb = L->B.vals.len;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) sched(s, W_EXPR, L->kids.items[i], sp, d);
        L->kids.len = first;
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_LIST, x.vbase = vb;
        array_push(s, x);
        return;
    }
    case CXCursor_CallExpr: {
        CXCursor r = cx_A->clang_getCursorReferenced(c);
        enum CXCursorKind rk = cx_A->clang_Cursor_isNull(r) ? CXCursor_InvalidFile : cx_A->clang_getCursorKind(r);
        const char *rname = cx_A->clang_Cursor_isNull(r) ? "" : cx_spelling(L, r);
        uint32_t first = cx_children(L, c);
        uint32_t nk = L->kids.len - first;
        CXCursor *kids = ARENA_NEW_N(L->arena, CXCursor, nk ? nk : 1);
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) kids[n++] = L->kids.items[i];
        L->kids.len = first;
        if (cx_A->clang_Cursor_isNull(r) && n > 0) {
            r = cx__dependent_callee(L, kids[0]);
            rk = cx_A->clang_Cursor_isNull(r) ? CXCursor_InvalidFile : cx_A->clang_getCursorKind(r);
        }
        bool is_fn = rk == CXCursor_FunctionDecl || rk == CXCursor_FunctionTemplate;
        bool make = is_fn && (cx__std_fn(L, r, "make_shared") || cx__std_fn(L, r, "make_unique"));
        if (rk == CXCursor_Constructor || make) {
            TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(c));
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
            const char *local = cx_local_class(L, cx_A->clang_getCursorType(c));
            const char *from = nargs == 1 ? cx_local_class(L, cx_A->clang_getCursorType(args[0])) : NULL;
            if (local && !(from && !strcmp(from, local))) {
                /* an object of a class of this file: a call of the class, as in Python */
                uint32_t vb = L->B.vals.len;
                for (uint32_t i = 0; i < nargs; i++) sched(s, W_EXPR, args[i], sp, d);
                TyInfo li = {TY_OTHER, NULL, local};
                Work *x = sched_act(s, A_NEW_OBJECT, c, sp, L->tyinfo.len, 0);
                x->vbase = vb;
                array_push(&L->tyinfo, li);
                return;
            }
            if (nargs == 1) { sched(s, W_EXPR, args[0], sp, d); return; } /* copy, move, conversion */
            /* a string built from a literal (`std::string("train")`, its allocator a default
             * argument): the literal, so `mode == std::string("train")` compares with a constant */
            if (nargs > 1 && ti.cls != TY_TENSOR &&
                cx_A->clang_getCursorKind(cx_unwrap(L, args[0])) == CXCursor_StringLiteral) {
                sched(s, W_EXPR, args[0], sp, d);
                for (uint32_t i = 1; i < nargs; i++) {
                    sched(s, W_EXPR, args[i], sp, d);
                    sched_act(s, A_POP, c, sp, 0, 0);
                }
                return;
            }
            uint32_t vb = L->B.vals.len;
            for (uint32_t i = 0; i < nargs; i++) sched(s, W_EXPR, args[i], sp, d);
            Work x;
            memset(&x, 0, sizeof x);
            x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_TUPLE, x.vbase = vb;
            if (ti.cls == TY_TENSOR && nargs == 0) { push_val(L, cx_const(L, sp, CONST_OTHER, NULL)); return; }
            array_push(s, x);
            return;
        }
        if (!strncmp(rname, "operator", 8) && !isalnum((unsigned char)rname[8]) && rname[8] != '_') {
            CXCursor *opnds = ARENA_NEW_N(L->arena, CXCursor, n ? n : 1);
            uint32_t no = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!(cx__is_fnref(kids[i]) && !strncmp(cx_spelling(L, kids[i]), "operator", 8))) opnds[no++] = kids[i];
            const char *opt = rname + 8;
            while (*opt == ' ') opt++;
            if (!strcmp(opt, "bool") || !opt[0] || isalpha((unsigned char)opt[0])) {
                /* conversion operators: the object */
                if (no) sched(s, W_EXPR, opnds[0], sp, d);
                else push_val(L, cx_const(L, sp, CONST_OTHER, NULL));
                return;
            }
            cx__sched_operator(L, s, opt, opnds, no, sp, d, c);
            return;
        }
        if (n == 0) { push_val(L, cx_const(L, sp, CONST_OTHER, NULL)); return; }
        /* std::move/forward: the argument; std::get<I>(t): an item */
        if (cx__std_fn(L, r, "move") || cx__std_fn(L, r, "forward")) {
            if (n >= 2) sched(s, W_EXPR, kids[1], sp, d);
            else push_val(L, cx_const(L, sp, CONST_OTHER, NULL));
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
        uint32_t first = cx_children(L, c);
        uint32_t vb = L->B.vals.len;
        uint32_t n = 0;
        CXCursor last = c;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) last = L->kids.items[i], n++;
        if (n == 1) {
            L->kids.len = first;
            sched(s, W_EXPR, last, sp, d);
            return;
        }
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) sched(s, W_EXPR, L->kids.items[i], sp, d);
        L->kids.len = first;
        if (!n) { push_val(L, cx_const(L, sp, CONST_OTHER, NULL)); return; }
        Work x;
        memset(&x, 0, sizeof x);
        x.kind = W_EXIT, x.c = c, x.span = sp, x.aux = IR_BUILD, x.aux2 = BUILD_TUPLE, x.vbase = vb;
        array_push(s, x);
        return;
    }
    }
}

void cx_exit(Lower *L, const Work *w)
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
        const char *name = cx_spelling(L, w->c);
        o->name = name[0] ? name : cx_member_name(L, w->span);
        /* the IR speaks Python: a C++ container's push_back is an append */
        if (!strcmp(o->name, "push_back") || !strcmp(o->name, "emplace_back") || !strcmp(o->name, "push_front") ||
            !strcmp(o->name, "emplace_front"))
            o->name = "append";
        /* a data member declared as a tensor: the dataflow takes it as one (not for methods) */
        if (cx_classify(L, cx_A->clang_getCursorType(w->c)).cls == TY_TENSOR &&
            cx_A->clang_getCursorKind(cx_A->clang_getCursorReferenced(w->c)) == CXCursor_FieldDecl)
            o->qual = "torch.Tensor";
        /* a method of a project class: other files of the run may have its summary */
        if (!L->shadow && !o->qual) {
            CXCursor mref = cx_A->clang_getCursorReferenced(w->c);
            if (!cx_A->clang_Cursor_isNull(mref) && cx_A->clang_getCursorKind(mref) == CXCursor_CXXMethod)
                o->qual = cx_extern_key(L, mref);
        }
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
    if (cx_A->clang_getCursorKind(call) != CXCursor_CallExpr) return false;
    if (cx_classify(L, cx_A->clang_getCursorType(call)).cls != TY_TENSOR) return false;
    uint32_t first = cx_children(L, call);
    CXCursor callee = first < L->kids.len ? L->kids.items[first] : call;
    bool ok = first < L->kids.len;
    L->kids.len = first;
    if (!ok) return false;
    callee = cx_unwrap(L, callee);
    if (cx_A->clang_getCursorKind(callee) != CXCursor_MemberRefExpr) return false;
    CXCursor m = cx_A->clang_getCursorReferenced(callee);
    if (cx_A->clang_Cursor_isNull(m) || cx_A->clang_getCursorKind(m) != CXCursor_CXXMethod || cx_A->clang_CXXMethod_isStatic(m))
        return false;
    TyInfo owner = cx_classify(L, cx_A->clang_getCursorType(cx_A->clang_getCursorSemanticParent(m)));
    return owner.cls == TY_MODULE;
}

void cx_emit_call(Lower *L, const Work *w)
{
    IrFunc *f = L_f(L);
    uint32_t nv = L->B.vals.len - w->vbase;
    if (NEVER(nv == 0)) { push_val(L, cx_const(L, w->span, CONST_OTHER, NULL)); return; }
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
        uint32_t idx = cx_const(L, w->span, CONST_INT, NULL);
        const char *lt = strchr(cx_text(L, w->span), '<');
        if (lt) op_at(L, idx)->name = arena_strndup(L->arena, lt + 1, strspn(lt + 1, "0123456789"));
        push_val(L, ir_build_op2(&L->B, IR_ITEM, t, idx, 0, w->span));
        return;
    }
    /* m->forward(x) is m(x): the callee is the module (loop-invariant when m is) */
    if (method && !strcmp(method, "forward") && co->a != IR_NONE && L->shadow && !L_fn(L)->has_self &&
        !f->ops.items[co->a].qual) {
        /* types partly unknown (the shadow): `m->forward(x)` is LibTorch's module call whatever m is */
        TyInfo mod = {TY_MODULE, "torch.nn.Module", NULL};
        callee = cx_construct(L, &mod, w->span);
        co = &f->ops.items[callee];
        method = NULL;
        v = L->B.vals.items + w->vbase;
    } else if (method && !strcmp(method, "forward") && co->a != IR_NONE) {
        callee = co->a;
        co = &f->ops.items[callee];
        method = co->kind == IR_ATTR ? co->name : NULL;
        if (co->kind == IR_ATTR) method = NULL; /* self.fc->forward(x): a submodule call */
    } else if (method && co->a != IR_NONE && w->aux != 1 && !(api_method(method).flags & M_RESETS) &&
               cx__module_method(L, w->c)) {
        /* ac->log_prob(a), net->encode(x): a method of a module declared to return a tensor computes
         * it from the module's parameters, as forward does (not one that makes a fresh recurrent
         * state: net->begin_state(n, device)) */
        callee = co->a;
        co = &f->ops.items[callee];
        method = NULL;
    }
    const char *qual = co->qual;
    bool reg_param = method && !strcmp(method, "register_parameter");
    if (reg_param) {
        callee = cx_load(L, w->span, "torch", "torch.nn.Parameter");
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
    uint32_t true_op = requires_grad ? cx_const(L, w->span, CONST_BOOL, "True") : IR_NONE;
    uint32_t op = ir_build_call(&L->B, callee, qual, w->span);
    uint32_t first_arg = reg_param ? 2 : 1;
    for (uint32_t i = first_arg; i < nv; i++)
        ir_build_arg(&L->B, op, L->B.vals.items[w->vbase + i], cx__kw_for(method, qual, i - 1));
    if (true_op != IR_NONE) ir_build_arg(&L->B, op, true_op, "requires_grad");
    L->B.vals.len = w->vbase;
    /* a call declared to return a number (float metric(const Tensor&), x.size(0)) returns no graph */
    if (cx_classify(L, cx_A->clang_getCursorType(w->c)).cls == TY_SCALAR) op = cx_scalar(L, op, w->span);
    push_val(L, op);
}

/* ---- targets --------------------------------------------------------------------------------- */

void cx_target(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = cx_unwrap(L, w->c);
    enum CXCursorKind k = cx_A->clang_getCursorKind(c);
    Span sp = cx_span_of(L, c, w->span);
    uint32_t value = pop_val(L);
    TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(c));
    if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) {
        /* assigning to a module-typed variable or field: it holds a module whatever the expression */
        value = cx_construct(L, &ti, sp);
    }
    if (ti.cls == TY_SCALAR) value = cx_scalar(L, value, sp);
    if (k == CXCursor_DeclRefExpr) {
        CXCursor r = cx_A->clang_getCursorReferenced(c);
        const char *name = cx_A->clang_Cursor_isNull(r) ? cx_spelling(L, c) : cx_spelling(L, r);
        ir_build_store(&L->B, name, strlen(name), value, sp);
        return;
    }
    if (k == CXCursor_MemberRefExpr) {
        uint32_t first = cx_children(L, c);
        CXCursor base = c;
        bool has = false;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_is_expr(L->kids.items[i])) base = L->kids.items[i], has = true;
        L->kids.len = first;
        const char *name = cx_spelling(L, c);
        if (!name[0]) name = cx_member_name(L, sp);
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
        (k == CXCursor_CallExpr && !strcmp(cx_spelling(L, c), "operator[]"))) {
        uint32_t first = cx_children(L, c);
        uint32_t n = 0;
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor kk = L->kids.items[i];
            if (!cx_is_expr(kk) || (cx__is_fnref(kk) && !strncmp(cx_spelling(L, kk), "operator", 8))) continue;
            if (n < 2) sched(s, W_EXPR, kk, sp, (uint16_t)(w->depth + 1)), n++;
        }
        L->kids.len = first;
        while (n < 2) sched_act(s, A_CONST_UNKNOWN, c, sp, 0, 0), n++;
        sched_act(s, A_SET_ITEM, c, sp, value, 0);
        return;
    }
    if (k == CXCursor_CallExpr && (cx__std_fn(L, cx__call_decl(L, c), "tie") ||
                                   cx__std_fn(L, cx__call_decl(L, c), "forward_as_tuple"))) {
        /* std::tie(a, b) = f(), std::forward_as_tuple(a, b) = f(): each name gets an element */
        uint32_t first = cx_children(L, c);
        uint32_t idx = 0;
        for (uint32_t i = first + 1; i < L->kids.len; i++) {
            CXCursor kk = L->kids.items[i];
            if (!cx_is_expr(kk)) continue;
            sched_act(s, A_UNPACK, kk, sp, value, idx++);
            sched(s, W_TARGET, kk, sp, (uint16_t)(w->depth + 1));
        }
        L->kids.len = first;
        return;
    }
    /* *p = v and other targets: nothing modelled */
}

#endif /* GL_HAVE_LIBCLANG */
