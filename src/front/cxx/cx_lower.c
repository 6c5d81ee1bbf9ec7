/* Lowers a libclang AST of LibTorch code into gradleak's IR, so the same dataflow and rules run on
 * C++ as on Python.
 *
 * libclang visits children through callbacks and recurses inside itself (clang bounds nesting:
 * -fbracket-depth). This file never recurses: a cursor's direct children are collected into an
 * array (a visitor that returns CXChildVisit_Continue), and statements, expressions and
 * assignment targets are work items on one explicit stack, as in py_lower.c, and turn into calls of
 * the IR builder (ir/build.h) that the Python front end uses too. Items nested deeper than
 * CX_MAX_DEPTH are lowered as unknown values (and the result says so). Expressions and targets are
 * in cx_expr.c, the command line in cx_compdb.c, precompiled headers in cx_pch.c (cx_int.h).
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "front/cxx/cx_int.h"

#if GL_HAVE_LIBCLANG

const CxApi *cx_A;

/* ---- small helpers --------------------------------------------------------------------------- */

const char *cx_str(Lower *L, CXString s)
{
    const char *c = cx_A->clang_getCString(s);
    const char *r = arena_strdup(L->arena, c ? c : "");
    cx_A->clang_disposeString(s);
    return r;
}

const char *cx_spelling(Lower *L, CXCursor c) { return cx_str(L, cx_A->clang_getCursorSpelling(c)); }

static enum CXChildVisitResult cx__kid(CXCursor c, CXCursor parent, CXClientData d)
{
    GL_UNUSED(parent);
    Array(CXCursor) *k = d;
    array_push(k, c);
    return CXChildVisit_Continue;
}

/* Direct children of c, appended to L->kids; returns the first index. */
uint32_t cx_children(Lower *L, CXCursor c)
{
    uint32_t first = L->kids.len;
    cx_A->clang_visitChildren(c, cx__kid, &L->kids);
    return first;
}

bool cx_offsets(Lower *L, CXCursor c, uint32_t *s, uint32_t *e)
{
    CXSourceRange r = cx_A->clang_getCursorExtent(c);
    CXFile f1, f2;
    unsigned o1, o2;
    cx_A->clang_getFileLocation(cx_A->clang_getRangeStart(r), &f1, NULL, NULL, &o1);
    cx_A->clang_getFileLocation(cx_A->clang_getRangeEnd(r), &f2, NULL, NULL, &o2);
    if (!cx_A->clang_Location_isFromMainFile(cx_A->clang_getRangeStart(r))) return false;
    if (L->shadow && !(cx_shadow_map(L->shadow, o1, false, &o1) && cx_shadow_map(L->shadow, o2, true, &o2)))
        return false;
    if (o1 > L->len || o2 > L->len || o2 < o1) return false;
    *s = o1, *e = o2;
    return true;
}

/* Row and column of a byte offset (clang counts the same bytes). */
void cx_pos(Lower *L, uint32_t off, uint32_t *row, uint32_t *col)
{
    if (off > L->len) off = (uint32_t)L->len;
    uint32_t r = lineindex_line_of(&L->lines, off);
    *row = r;
    *col = off - L->lines.starts[r];
}

Span cx_span_of(Lower *L, CXCursor c, Span fallback)
{
    uint32_t s, e;
    if (!cx_offsets(L, c, &s, &e)) return fallback;
    Span sp;
    sp.start = s, sp.end = e;
    cx_pos(L, s, &sp.row, &sp.col);
    cx_pos(L, e, &sp.end_row, &sp.end_col);
    return sp;
}

const char *cx_text(Lower *L, Span s)
{
    return arena_strndup(L->arena, L->src + s.start, s.end > s.start ? s.end - s.start : 0);
}


/* ---- statements and declarations ------------------------------------------------------------- */

static bool cx__has_body(Lower *L, CXCursor c, CXCursor *body)
{
    uint32_t first = cx_children(L, c);
    bool found = false;
    for (uint32_t i = first; i < L->kids.len; i++)
        if (cx_A->clang_getCursorKind(L->kids.items[i]) == CXCursor_CompoundStmt) *body = L->kids.items[i], found = true;
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
        cx_pos(L, sp.end, &sp.end_row, &sp.end_col);
    }
    return sp;
}

static void cx__stmt(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = cx_A->clang_getCursorKind(c);
    Span sp = cx_span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    if (w->depth > CX_MAX_DEPTH) { L->truncated = true; return; }
    if (cx_is_expr(c)) {
        /* only a call whose value is dropped is a call statement (`x = x.cuda();` is not) */
        CXCursor top = cx_unwrap(L, c);
        if (cx_A->clang_getCursorKind(top) == CXCursor_BinaryOperator) {
            /* `X.to(device), y.to(device);`: each operand of a comma is a statement of its own */
            uint32_t first = cx_children(L, top);
            CXCursor ops[2];
            uint32_t n = 0;
            for (uint32_t i = first; i < L->kids.len && n < 2; i++)
                if (cx_is_expr(L->kids.items[i])) ops[n++] = L->kids.items[i];
            L->kids.len = first;
            uint32_t s0, e0;
            if (n == 2 && cx_offsets(L, ops[0], &s0, &e0) && !strcmp(cx_op_at(L, e0, (uint32_t)L->len), ",")) {
                sched(s, W_STMT, ops[0], sp, d);
                sched(s, W_STMT, ops[1], sp, d);
                return;
            }
        }
        bool call = cx_A->clang_getCursorKind(top) == CXCursor_CallExpr &&
                    strncmp(cx_spelling(L, top), "operator", 8) != 0;
        sched(s, W_EXPR, c, sp, d);
        sched_act(s, A_EXPR_STMT, c, sp, call, 0);
        return;
    }
    uint32_t first = cx_children(L, c);
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
        for (uint32_t i = 0; i < n; i++) {
            if (cx_A->clang_getCursorKind(kids[i]) == CXCursor_VarDecl) {
                sched(s, W_VARDECL, kids[i], sp, d);
            } else if (cx_A->clang_getCursorKind(kids[i]) == CXCursor_UnexposedDecl) {
                /* a structured binding `auto [y, state] = lstm->forward(x, state);`: its initializer,
                 * then each name gets an element */
                uint32_t f2 = cx_children(L, kids[i]);
                CXCursor init = kids[i];
                bool has = false;
                for (uint32_t j = f2; j < L->kids.len; j++)
                    if (cx_is_expr(L->kids.items[j])) init = L->kids.items[j], has = true;
                L->kids.len = f2;
                if (!has) continue;
                sched(s, W_EXPR, init, sp, d);
                sched_act(s, A_BINDINGS, kids[i], sp, 0, 0);
            }
        }
        break;
    case CXCursor_VarDecl:
        sched(s, W_VARDECL, c, sp, d);
        break;
    case CXCursor_ReturnStmt:
        if (n && cx_is_expr(kids[n - 1])) sched(s, W_EXPR, kids[n - 1], sp, d);
        sched_act(s, A_RETURN, c, sp, n && cx_is_expr(kids[n - 1]), 0);
        break;
    case CXCursor_BreakStmt: sched_act(s, A_BREAK, c, sp, 0, 0); break;
    case CXCursor_ContinueStmt: sched_act(s, A_CONTINUE, c, sp, 0, 0); break;
    case CXCursor_IfStmt: {
        if (n < 2) break;
        uint32_t s1, e1, s2, e2;
        bool has_else = n >= 3 && cx_offsets(L, kids[n - 2], &s1, &e1) && cx_offsets(L, kids[n - 1], &s2, &e2) &&
                        cx__text_has_else(L, e1, s2);
        uint32_t then_i = has_else ? n - 2 : n - 1, cond_i = then_i - 1;
        for (uint32_t i = 0; i < cond_i; i++) sched(s, W_STMT, kids[i], sp, d);
        uint32_t r = ir_build_region(&L->B);
        if (cx_A->clang_getCursorKind(kids[cond_i]) == CXCursor_VarDecl) {
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
        if (cx_is_expr(kids[n - 2])) sched(s, W_EXPR, kids[n - 2], sp, d);
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
        if (cx_offsets(L, kids[n - 2], &s0, &e0)) hs = cx__header_span(sp, L, e0);
        sched_act(s, A_WHILE_BEGIN, c, hs, 0, 0);
        if (cx_A->clang_getCursorKind(kids[n - 2]) == CXCursor_VarDecl) sched(s, W_VARDECL, kids[n - 2], sp, d);
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
            if (!cx_offsets(L, kids[i], &s0, &e0)) continue;
            if (s0 < semi1) sched(s, W_STMT, kids[i], sp, d);
            else if (s0 < semi2) cond = (int)i;
            else if (s0 < rparen) inc = (int)i;
        }
        sched_act(s, A_WHILE_BEGIN, c, hs, 0, 0);
        if (cond >= 0) {
            if (cx_A->clang_getCursorKind(kids[cond]) == CXCursor_VarDecl) sched(s, W_VARDECL, kids[cond], sp, d);
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
        if (cx_offsets(L, range, &s0, &e0)) hs = cx__header_span(sp, L, e0);
        for (uint32_t i = 0; i + 3 < n; i++) sched(s, W_STMT, kids[i], sp, d);
        sched(s, W_EXPR, range, sp, d);
        sched_act(s, A_FOR_BEGIN, c, hs, 0, 0);
        if (cx_A->clang_getCursorKind(var) == CXCursor_VarDecl) sched_act(s, A_STORE_VAR, var, hs, IR_F_TARGET, 0);
        else if (cx_A->clang_getCursorKind(var) == CXCursor_UnexposedDecl) sched_act(s, A_BINDINGS, var, hs, 0, 0);
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
            if (cx_A->clang_getCursorKind(kids[i]) != CXCursor_CXXCatchStmt) continue;
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
    Span sp = cx_span_of(L, c, w->span);
    uint16_t d = (uint16_t)(w->depth + 1);
    TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(c));
    uint32_t first = cx_children(L, c);
    CXCursor init = c;
    bool has_init = false;
    for (uint32_t i = first; i < L->kids.len; i++)
        if (cx_is_expr(L->kids.items[i])) init = L->kids.items[i], has_init = true;
    L->kids.len = first;
    if (ti.cls == TY_NOGRAD || ti.cls == TY_INFER || ti.cls == TY_AUTOGRAD) {
        /* a guard: grad mode changes until the end of the enclosing block */
        uint8_t mode = ti.cls == TY_NOGRAD ? GRAD_NO_GRAD : ti.cls == TY_INFER ? GRAD_INFERENCE : GRAD_MAYBE_OFF;
        if (has_init) {
            CXCursor ctor = cx_unwrap(L, init);
            uint32_t f2 = cx_children(L, ctor);
            for (uint32_t i = f2; i < L->kids.len; i++) {
                CXCursor a = cx_unwrap(L, L->kids.items[i]);
                if (cx_A->clang_getCursorKind(a) != CXCursor_CXXBoolLiteralExpr) continue;
                const char *t = cx_text(L, cx_span_of(L, a, sp));
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
    const char *name = cx_spelling(L, c);
    bool free_fns = !strcmp(name, "GlFree__");
    uint32_t cls = free_fns ? IR_NONE : strmap_get(&L->class_index, name, strlen(name));
    if (!free_fns && cls == UINT32_MAX) return false;
    uint32_t first = cx_children(L, c);
    for (uint32_t i = first; i < L->kids.len; i++) {
        CXCursor m = L->kids.items[i];
        enum CXCursorKind mk = cx_A->clang_getCursorKind(m);
        if (mk == CXCursor_CXXMethod || mk == CXCursor_Constructor || mk == CXCursor_FunctionTemplate)
            cx__sched_func(L, m, cx_span_of(L, m, sp), cls, s);
    }
    L->kids.len = first;
    return true;
}

static void cx__decl(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = cx_A->clang_getCursorKind(c);
    if (k != CXCursor_TranslationUnit && !cx_is_main(c)) return;
    Span sp = cx_span_of(L, c, w->span);
    switch (k) {
    case CXCursor_TranslationUnit:
    case CXCursor_Namespace:
    case CXCursor_LinkageSpec:
    case CXCursor_UnexposedDecl: {
        uint32_t first = cx_children(L, c);
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
        CXCursor parent = cx_A->clang_getCursorSemanticParent(c);
        enum CXCursorKind pk = cx_A->clang_getCursorKind(parent);
        if (pk == CXCursor_ClassDecl || pk == CXCursor_StructDecl || pk == CXCursor_ClassTemplate) {
            const char *pn = cx_spelling(L, parent);
            cls = strmap_get(&L->class_index, pn, strlen(pn));
            if (cls == UINT32_MAX && pn[0] && !cx_is_main(parent) && cx_A->clang_isCursorDefinition(parent)) {
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
        if (!cx_A->clang_isCursorDefinition(c)) break;
        if (L->shadow && cx__shadow_class(L, c, sp, s)) break;
        sched_act(s, A_CLASS_BEGIN, c, sp, 0, 0);
        uint32_t first = cx_children(L, c);
        bool has_ctor = false;
        CXCursor body;
        for (uint32_t i = first; i < L->kids.len; i++)
            if (cx_A->clang_getCursorKind(L->kids.items[i]) == CXCursor_Constructor && cx__has_body(L, L->kids.items[i], &body))
                has_ctor = true;
        if (!has_ctor) sched_act(s, A_INIT_BEGIN, c, sp, 0, 0), sched_act(s, A_FUNC_END, c, sp, 0, 0);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor m = L->kids.items[i];
            enum CXCursorKind mk = cx_A->clang_getCursorKind(m);
            if (mk == CXCursor_CXXMethod || mk == CXCursor_Constructor || mk == CXCursor_FunctionTemplate)
                cx__sched_func(L, m, cx_span_of(L, m, sp), IR_NONE - 2 /* the open class */, s);
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
    CXCursor cls = cx_A->clang_getCursorSemanticParent(fn);
    enum CXCursorKind ck = cx_A->clang_getCursorKind(cls);
    if ((ck != CXCursor_ClassDecl && ck != CXCursor_StructDecl) || cx_is_main(cls)) return;
    uint32_t first = cx_children(L, cls);
    uint32_t n = L->kids.len - first;
    CXCursor *fields = ARENA_NEW_N(L->arena, CXCursor, n ? n : 1);
    memcpy(fields, L->kids.items + first, sizeof(CXCursor) * n);
    L->kids.len = first;
    for (uint32_t i = 0; i < n; i++) {
        if (cx_A->clang_getCursorKind(fields[i]) != CXCursor_FieldDecl) continue;
        TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(fields[i]));
        if (ti.cls != TY_MODULE && ti.cls != TY_OPTIM && ti.cls != TY_LOADER) continue;
        uint32_t v = cx_construct(L, &ti, sp);
        cx__set_attr(L, cx_load(L, sp, "self", NULL), v, cx_spelling(L, fields[i]), sp);
    }
}

/* A method of the shadow source (its class unseen): the members it uses as LibTorch modules
 * (`model_->forward(x)`, `net.forward(x)`, `model_->eval()`, `policy_->parameters()`) hold modules,
 * whatever their unknown types. */
static void cx__shadow_members(Lower *L, CXCursor fn, Span sp)
{
    uint32_t s0, e0;
    if (!cx_offsets(L, fn, &s0, &e0)) return;
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
        uint32_t v = cx_construct(L, &mod, sp);
        cx__set_attr(L, cx_load(L, sp, "self", NULL), v, names[j], sp);
    }
}

/* Does the class that t names (through references and pointers) declare a method other than its
 * constructors? */
static bool cx__has_methods(Lower *L, CXType t)
{
    for (int guard = 0; guard < 4; guard++) {
        t = cx_A->clang_getCanonicalType(t);
        if (t.kind != CXType_Pointer && t.kind != CXType_LValueReference && t.kind != CXType_RValueReference) break;
        t = cx_A->clang_getPointeeType(t);
    }
    CXCursor d = cx_A->clang_getTypeDeclaration(t);
    if (cx_A->clang_Cursor_isNull(d)) return false;
    uint32_t first = cx_children(L, d);
    bool any = false;
    for (uint32_t i = first; i < L->kids.len && !any; i++) any = cx_A->clang_getCursorKind(L->kids.items[i]) == CXCursor_CXXMethod;
    L->kids.len = first;
    return any;
}

static void cx__func_begin(Lower *L, const Work *w, Schedule *s)
{
    CXCursor c = w->c;
    enum CXCursorKind k = cx_A->clang_getCursorKind(c);
    bool synth = w->act == A_INIT_BEGIN;
    const char *nm = synth || k == CXCursor_Constructor ? "__init__" : cx_spelling(L, c);
    uint32_t cls = w->aux;
    uint32_t class_ctx = IR_NONE;
    if (cls == IR_NONE - 2 || synth) {
        class_ctx = L->classes.len ? L->classes.len - 1 : IR_NONE;
        cls = class_ctx != IR_NONE ? L->classes.items[class_ctx].index : IR_NONE;
    }
    if (cls == IR_NONE - 3) { /* a header's class, lowered just before: by name */
        const char *pn = cx_spelling(L, cx_A->clang_getCursorSemanticParent(c));
        cls = strmap_get(&L->class_index, pn, strlen(pn));
        if (cls == UINT32_MAX) cls = IR_NONE - 1;
    }
    bool is_method = cls != IR_NONE;
    if (cls == IR_NONE - 1) cls = IR_NONE; /* method of an unseen class: self, no class */
    bool is_static = !synth && k == CXCursor_CXXMethod && cx_A->clang_CXXMethod_isStatic(c);
    Span name_sp = w->span;
    if (!synth) {
        CXSourceLocation loc = cx_A->clang_getCursorLocation(c);
        unsigned off;
        cx_A->clang_getFileLocation(loc, NULL, NULL, NULL, &off);
        if (L->shadow && !cx_shadow_map(L->shadow, off, false, &off)) off = UINT_MAX;
        if (off < L->len) {
            name_sp.start = off;
            name_sp.end = off + (uint32_t)strlen(nm == cx_spelling(L, c) ? nm : "");
            cx_pos(L, name_sp.start, &name_sp.row, &name_sp.col);
            cx_pos(L, name_sp.end, &name_sp.end_row, &name_sp.end_col);
        }
    }
    bool has_self = is_method && !is_static;
    IrFunc *f = ir_build_func_begin(&L->B, nm, name_sp, is_static ? IR_NONE : cls, has_self);
    /* the name the calls of other files reach it by (not for the shadow: its names are made up) */
    if (!synth && !L->shadow && (k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod)) f->cxx_key = cx_extern_key(L, c);
    uint32_t pos = 0;
    if (has_self) cx__param(L, "self", NULL, pos++, name_sp);
    if (has_self && L->shadow && !synth) cx__shadow_members(L, c, name_sp);
    if (has_self && !L->shadow && !synth) cx__header_members(L, c, name_sp);
    if (!synth) {
        uint32_t first = cx_children(L, c);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor p = L->kids.items[i];
            if (cx_A->clang_getCursorKind(p) != CXCursor_ParmDecl) continue;
            const char *pn = cx_spelling(L, p);
            if (!pn[0]) pn = arena_printf(L->arena, "<arg%u>", pos);
            TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(p));
            const char *q = ti.cls == TY_MODULE ? "torch.nn.Module" : ti.cls == TY_TENSOR ? "torch.Tensor"
                          : ti.cls == TY_OPTIM ? "torch.optim.Optimizer"
                          : ti.cls == TY_LOADER ? "torch.utils.data.DataLoader" : NULL;
            cx__param(L, pn, q, pos++, cx_span_of(L, p, name_sp));
            /* an object of a class of this file with methods (`Storage& storage`): one, so its methods
             * are known (not a plain struct of tensors, whose fields carry the caller's graph) */
            const char *local = ti.cls == TY_OTHER ? cx_local_class(L, cx_A->clang_getCursorType(p)) : NULL;
            if (local && !cx__has_methods(L, cx_A->clang_getCursorType(p))) local = NULL;
            if (local) {
                Span ps = cx_span_of(L, p, name_sp);
                uint32_t obj = ir_build_call(&L->B, cx_class_ref(L, local, ps), NULL, ps);
                ir_build_store(&L->B, pn, strlen(pn), obj, ps);
            }
        }
        f->nparams = pos;
        /* a constructor: fields first (their default initializers), then the member initializers */
        if (k == CXCursor_Constructor) {
            if (class_ctx != IR_NONE) cx__field_inits(L, class_ctx, name_sp, s);
            for (uint32_t i = first; i < L->kids.len; i++) {
                CXCursor mref = L->kids.items[i];
                if (cx_A->clang_getCursorKind(mref) != CXCursor_MemberRef || i + 1 >= L->kids.len) continue;
                CXCursor val = L->kids.items[i + 1];
                if (!cx_is_expr(val)) continue;
                Span vs = cx_span_of(L, val, name_sp);
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
        Span fs = cx_span_of(L, fd, sp);
        uint32_t first = cx_children(L, fd);
        CXCursor init = fd;
        bool has = false;
        for (uint32_t k = first; k < L->kids.len; k++)
            if (cx_is_expr(L->kids.items[k])) init = L->kids.items[k], has = true;
        L->kids.len = first;
        TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(fd));
        if (has) sched(s, W_EXPR, init, fs, 1);
        else if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER || ti.cls == TY_CONTAINER) {
            Work *x = sched_act(s, A_COERCE, fd, fs, 0, 0);
            x->vbase = L->tyinfo.len;
            array_push(&L->tyinfo, ti);
        } else if ((ti.local = cx_local_class(L, cx_A->clang_getCursorType(fd))) != NULL) {
            /* a member object of a class of this file (a trainer's RolloutBuffer buffer_;) */
            Work *x = sched_act(s, A_COERCE, fd, fs, 0, 0);
            x->vbase = L->tyinfo.len;
            array_push(&L->tyinfo, ti);
        } else continue;
        sched_act(s, A_SET_SELF, fd, fs, 0, 0);
    }
}

static void cx__func_end(Lower *L, const Work *w)
{
    /* a function declared to return a value whose every return statement clang dropped (errors
     * in it: a member of a type from a header not found): it returns something unknown, not
     * nothing (`return std::make_tuple(model_->forward(x), code);` may be the model's output) */
    enum CXCursorKind ck = cx_A->clang_getCursorKind(w->c);
    if (ck == CXCursor_FunctionDecl || ck == CXCursor_CXXMethod || ck == CXCursor_FunctionTemplate) {
        CXType rt = cx_A->clang_getCursorResultType(w->c);
        const IrFunc *cur = L_f(L);
        bool returns = false;
        for (uint32_t i = 0; i < cur->ops.len && !returns; i++) returns = cur->ops.items[i].kind == IR_RETURN;
        if (!returns && rt.kind != CXType_Void && rt.kind != CXType_Invalid && strcmp(cur->name, "main") != 0) {
            Span end = w->span;
            if (end.end > end.start) end.start = end.end - 1, cx_pos(L, end.start, &end.row, &end.col);
            uint32_t unknown = ir_build_call(&L->B, cx_load(L, end, "<dropped>", NULL), NULL, end);
            ir_build_op2(&L->B, IR_RETURN, unknown, IR_NONE, 0, end);
        }
    }
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
    const char *name = cx_spelling(L, c);
    IrClass *ic = ir_build_class_begin(&L->B, name[0] ? name : "<anonymous>", w->span);
    ClassCtx cc;
    memset(&cc, 0, sizeof cc);
    cc.index = ic->index;
    uint32_t first = cx_children(L, c);
    for (uint32_t i = first; i < L->kids.len; i++) {
        CXCursor k = L->kids.items[i];
        enum CXCursorKind kk = cx_A->clang_getCursorKind(k);
        if (kk == CXCursor_FieldDecl) {
            array_push(&cc.fields, k);
        } else if (kk == CXCursor_CXXBaseSpecifier) {
            CXCursor bd = cx_A->clang_getTypeDeclaration(cx_A->clang_getCanonicalType(cx_A->clang_getCursorType(k)));
            const char *bq = cx_A->clang_Cursor_isNull(bd) ? NULL : cx_cxx_qual(L, bd);
            if (!bq) bq = cx_spelling(L, k);
            const char *pq = bq && strstr(bq, "::") && !cx_is_main(bd) ? cx_py_qual(L, bq) : bq;
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
    case A_CONST_UNKNOWN: push_val(L, cx_const(L, w->span, CONST_OTHER, NULL)); break;
    case A_PASS:
        if (w->aux2 == 2) { push_val(L, cx_load(L, w->span, "self", NULL)); break; } /* implicit this */
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
            cx_pos(L, end.start, &end.row, &end.col);
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
    case A_CALL: cx_emit_call(L, w); break;
    case A_AUG: {
        uint32_t rhs = pop_val(L), lhs = pop_val(L);
        if (cx_classify(L, cx_A->clang_getCursorType(w->c)).cls == TY_SCALAR) rhs = cx_scalar(L, rhs, w->span);
        uint32_t op = ir_build_op2(B, IR_BINOP, lhs, rhs, w->aux, w->span);
        op_at(L, op)->flags |= IR_F_AUG;
        push_val(L, op);
        break;
    }
    case A_STORE_VAR: {
        const char *name = cx_spelling(L, w->c);
        uint32_t v = pop_val(L);
        if (!name[0]) break;
        if (cx_classify(L, cx_A->clang_getCursorType(w->c)).cls == TY_SCALAR) v = cx_scalar(L, v, w->span);
        uint32_t op = ir_build_store(B, name, strlen(name), v, cx_span_of(L, w->c, w->span));
        op_at(L, op)->flags |= (uint8_t)w->aux;
        /* the declared type: a tensor whatever the analysis makes of the initializer */
        if (cx_classify(L, cx_A->clang_getCursorType(w->c)).cls == TY_TENSOR) op_at(L, op)->qual = "torch.Tensor";
        break;
    }
    case A_SET_ATTR: {
        uint32_t obj = pop_val(L);
        const char *name = cx_spelling(L, w->c);
        if (!name[0]) name = cx_member_name(L, w->span);
        cx__set_attr(L, obj, w->aux, name, w->span);
        break;
    }
    case A_SET_SELF: {
        uint32_t v = pop_val(L);
        TyInfo ti = cx_classify(L, cx_A->clang_getCursorType(cx_A->clang_getCursorReferenced(w->c)));
        if (cx_A->clang_getCursorKind(w->c) == CXCursor_FieldDecl) ti = cx_classify(L, cx_A->clang_getCursorType(w->c));
        if (ti.cls == TY_MODULE || ti.cls == TY_OPTIM || ti.cls == TY_LOADER) v = cx_construct(L, &ti, w->span);
        if (!L_fn(L)->has_self) break;
        uint32_t self = cx_load(L, w->span, "self", NULL);
        cx__set_attr(L, self, v, cx_spelling(L, w->c), w->span);
        break;
    }
    case A_COERCE: {
        TyInfo ti = L->tyinfo.items[w->vbase];
        if (ti.cls == TY_CONTAINER) {
            push_val(L, ir_build_build(B, BUILD_LIST, NULL, 0, w->span));
            break;
        }
        push_val(L, cx_construct(L, &ti, w->span));
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
    case A_BINDINGS: {
        /* `auto [a, b] = v` (and in a range for): a = v[0], b = v[1], as Python's a, b = v */
        uint32_t v = pop_val(L);
        uint32_t first = cx_children(L, w->c);
        uint32_t idx = 0;
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor b = L->kids.items[i];
            if (cx_A->clang_getCursorKind(b) != CXCursor_UnexposedDecl) continue;
            const char *name = cx_spelling(L, b);
            uint32_t u = ir_build_op2(B, IR_UNPACK, v, IR_NONE, idx++, w->span);
            if (name[0]) ir_build_store(B, name, strlen(name), u, cx_span_of(L, b, w->span));
        }
        L->kids.len = first;
        break;
    }
    case A_NEW_OBJECT: {
        /* Meter m(args): a call of the class with the constructor's arguments */
        uint32_t nv = B->vals.len > w->vbase ? B->vals.len - w->vbase : 0;
        uint32_t callee = cx_class_ref(L, L->tyinfo.items[w->aux].local, w->span);
        uint32_t op = ir_build_call(B, callee, NULL, w->span);
        for (uint32_t i = 0; i < nv; i++) ir_build_arg(B, op, B->vals.items[w->vbase + i], NULL);
        B->vals.len = w->vbase;
        push_val(L, op);
        break;
    }
    }
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
        case W_EXPR: cx_expr(L, &w, s); break;
        case W_EXIT: cx_exit(L, &w); break;
        case W_TARGET: cx_target(L, &w, s); break;
        case W_VARDECL: cx__vardecl(L, &w, s); break;
        case W_ACTION: cx__action(L, &w, s); break;
        }
        IR_SCHEDULE_COMMIT(&L->work, s);
    }
}

/* The namespace-level function definitions that go to the shadow source: those clang dropped
 * (no function of the AST starts inside them: `void Runner::warm(int n) {...}` of a class whose
 * header was not found) and those with an unknown name in their parameters or body
 * (`double accuracy(Data &d, ResNet model)`, `img.to(at::kCUDA);`).
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
    array_push(&stack, cx_A->clang_getTranslationUnitCursor(tu));
    while (stack.len && stack.len < 4096) {
        CXCursor c = array_pop(&stack);
        uint32_t first = cx_children(L, c);
        for (uint32_t i = first; i < L->kids.len; i++) {
            CXCursor k = L->kids.items[i];
            enum CXCursorKind kk = cx_A->clang_getCursorKind(k);
            if (!cx_is_main(k)) continue;
            if (kk == CXCursor_Namespace || kk == CXCursor_LinkageSpec || kk == CXCursor_UnexposedDecl) array_push(&stack, k);
            uint32_t so, eo;
            if ((kk == CXCursor_FunctionDecl || kk == CXCursor_CXXMethod || kk == CXCursor_Constructor ||
                 kk == CXCursor_Destructor || kk == CXCursor_FunctionTemplate) && cx_offsets(L, k, &so, &eo))
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
            unknown = undeclared->items[k] > fn->name && undeclared->items[k] < fn->end;
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
    unsigned nd = cx_A->clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = cx_A->clang_getDiagnostic(tu, i);
        const char *msg = cx_str(L, cx_A->clang_getDiagnosticSpelling(dg));
        cx_A->clang_disposeDiagnostic(dg);
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
        if (tu) cx_A->clang_disposeTranslationUnit(tu), tu = NULL;
        if (cx_parse(idx, path, args->v.items, (int)args->v.len, unsaved, nun, opts, &tu) != CXError_Success) tu = NULL;
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
        cx__run(L, cx_A->clang_getTranslationUnitCursor(tu), whole, s);
        L->shadow = NULL;
        cx_A->clang_disposeTranslationUnit(tu);
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
    cx_A = cx_api(&why);
    if (!cx_A) return -1;
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
    cx_abs_path(m->path, abs_path, sizeof abs_path);
    Args args;
    array_init(&args.v);
    args.arena = L.arena;
    const char *inc_dir = NULL;
    bool real = cx_command(&L, abs_path, cfg, &args, res, &inc_dir);
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

    CXIndex idx = cx_A->clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    /* not SkipFunctionBodies: it skips the main file's bodies too (libclang 14), which are what is
     * linted */
    unsigned opts = CXTranslationUnit_KeepGoing | CXTranslationUnit_IgnoreNonErrorsFromIncludedFiles;
    uint64_t pch_key = 0;
    const char *pch = cx_pch(&L, idx, &args, real, inc_dir, cfg, unsaved + 1, nun - 1, &pch_key);
    if (pch) cx_args_add(&args, "-include-pch"), cx_args_add(&args, pch);
    enum CXErrorCode ec = cx_parse(idx, abs_path, args.v.items, (int)args.v.len, unsaved, nun,
                                                         opts, &tu);
    if (pch) {
        /* a PCH libclang will not read (built by another libclang, a header changed since) is a
         * fatal error about the PCH: parse again without it */
        bool bad = ec != CXError_Success || !tu;
        for (unsigned i = 0, nd = tu ? cx_A->clang_getNumDiagnostics(tu) : 0; i < nd && !bad; i++) {
            CXDiagnostic dg = cx_A->clang_getDiagnostic(tu, i);
            if (cx_A->clang_getDiagnosticSeverity(dg) == CXDiagnostic_Fatal) {
                const char *msg = cx_str(&L, cx_A->clang_getDiagnosticSpelling(dg));
                bad = strstr(msg, "PCH") || strstr(msg, "precompiled") || strstr(msg, "AST file");
            }
            cx_A->clang_disposeDiagnostic(dg);
        }
        if (bad) {
            if (tu) cx_A->clang_disposeTranslationUnit(tu);
            tu = NULL;
            cx_pch_reject(pch_key, pch);
            args.v.len -= 2;
            pch = NULL;
            ec = cx_parse(idx, abs_path, args.v.items, (int)args.v.len, unsaved, nun, opts, &tu);
        }
    }
    res->pch = pch != NULL;
    /* headers that are not the project's: the system's, LibTorch's, CUDA's, the stub */
    const char *skip[64];
    uint32_t nskip = 0;
    static const char *const sys[] = {"/usr/include", "/usr/lib", "/usr/local/include", "/usr/local/cuda", "/__gradleak__"};
    for (size_t i = 0; i < ARRAY_LEN(sys); i++) skip[nskip++] = sys[i];
    const CxEnv *env = cx_env();
    if (env->libtorch && env->libtorch[0] == '/') skip[nskip++] = env->libtorch;
    if (env->cuda_home && env->cuda_home[0] == '/') skip[nskip++] = env->cuda_home;
    if (inc_dir && nskip < ARRAY_LEN(skip)) {
        const char *t = strstr(inc_dir, "/torch/csrc/api/include");
        skip[nskip++] = t ? arena_strndup(L.arena, inc_dir, (size_t)(t - inc_dir)) : inc_dir;
    }
    for (uint32_t i = 0; i + 1 < args.v.len && nskip < ARRAY_LEN(skip); i++)
        if (!strcmp(args.v.items[i], "-isystem") || !strcmp(args.v.items[i], "-idirafter")) skip[nskip++] = args.v.items[++i];
        else if (!strncmp(args.v.items[i], "-isystem", 8) && args.v.items[i][8]) skip[nskip++] = args.v.items[i] + 8;
    if (ec != CXError_Success || !tu) {
        array_free(&args.v);
        cx_A->clang_disposeIndex(idx);
        lineindex_free(&L.lines);
        return -2;
    }
    uint64_t t1 = now_ns();
    res->deps = cx_deps_list(tu, L.arena, skip, nskip);
    /* errors in this file (unknown names from headers that were not found, syntax errors) */
    unsigned nd = cx_A->clang_getNumDiagnostics(tu);
    bool fatal_seen = false;
    Array(uint32_t) undeclared; /* offsets of unknown names in this file: their functions go to the shadow */
    array_init(&undeclared);
    Array(uint32_t) errs; /* offsets of every error in this file: coverage per function */
    array_init(&errs);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = cx_A->clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = cx_A->clang_getDiagnosticSeverity(dg);
        CXSourceLocation loc = cx_A->clang_getDiagnosticLocation(dg);
        /* errors in headers count too: a header that fails (a missing CUDA header) costs the AST
         * of this file whole statements */
        if (sev >= CXDiagnostic_Error) {
            const char *spell = cx_str(&L, cx_A->clang_getDiagnosticSpelling(dg));
            bool limit = strstr(spell, "too many errors emitted") != NULL;
            if (cx_A->clang_Location_isFromMainFile(loc)) {
                unsigned eoff;
                cx_A->clang_getFileLocation(loc, NULL, NULL, NULL, &eoff);
                array_push(&errs, (uint32_t)eoff);
            }
            if (cx_A->clang_Location_isFromMainFile(loc) &&
                (!strncmp(spell, "use of undeclared identifier", 28) || !strncmp(spell, "unknown type name", 17))) {
                unsigned uoff;
                cx_A->clang_getFileLocation(loc, NULL, NULL, NULL, &uoff);
                array_push(&undeclared, (uint32_t)uoff);
            }
            if (!limit && (!res->first_error || (sev == CXDiagnostic_Fatal && !fatal_seen))) {
                unsigned line, col;
                CXFile df;
                cx_A->clang_getFileLocation(loc, &df, &line, &col, NULL);
                const char *msg = cx_str(&L, cx_A->clang_getDiagnosticSpelling(dg));
                const char *where = cx_A->clang_Location_isFromMainFile(loc) ? "" : cx_str(&L, cx_A->clang_getFileName(df));
                res->first_error = arena_printf(L.arena, "%s%s%u:%u: %s", where, where[0] ? ":" : "", line, col, msg);
                fatal_seen = sev == CXDiagnostic_Fatal;
            }
            res->n_errors++;
        }
        cx_A->clang_disposeDiagnostic(dg);
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
    cx__run(&L, cx_A->clang_getTranslationUnitCursor(tu), whole, &s);
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
    cx_A->clang_disposeTranslationUnit(tu);
    cx_A->clang_disposeIndex(idx);
    res->parse_ns = t1 - t0;
    res->lower_ns = now_ns() - t1;
    return 0;
}

#endif /* GL_HAVE_LIBCLANG */
