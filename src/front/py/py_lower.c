/* Lowers a tree-sitter-python tree into gradleak's IR with one explicit work stack, through the IR
 * builder (ir/build.h): this file knows Python's syntax, the builder knows the IR.
 *
 * Nothing here recurses over the syntax tree: statements, expressions and assignment targets are
 * all work items on one stack, so 100,000 nested parentheses cost stack entries in the heap, not C
 * frames. A work item either lowers a node (pushing the items for its children, in reverse so they
 * run in source order) or performs an action once the values it needs are on the builder's value
 * stack. */
#include <pthread.h>
#include <time.h>
#include <tree_sitter/api.h>
#include "base/strbuf.h"
#include "base/strmap.h"
#include "front/py/py.h"
#include "front/py/py_chunk.h"
#include "front/py/py_tree.h"
#include "ir/api.h"
#include "ir/build.h"

const TSLanguage *tree_sitter_python(void);

typedef enum PyNodeKind {
    PN_OTHER,
#define PY_NODE(e, s) PN_##e,
#include "front/py/py_nodes.def"
#undef PY_NODE
    PN_COUNT
} PyNodeKind;

static const char *const py_node_names[] = {
    "",
#define PY_NODE(e, s) s,
#include "front/py/py_nodes.def"
#undef PY_NODE
};

/* Symbol id -> PyNodeKind, built once per process (the language is static). */
static uint8_t *py_symbol_kind;
static uint32_t py_symbol_count;
static TSFieldId fid_left, fid_right, fid_body, fid_condition, fid_consequence, fid_alternative,
    fid_name, fid_value, fid_object, fid_attribute, fid_function, fid_arguments, fid_subscript,
    fid_operator, fid_parameters, fid_superclasses, fid_definition, fid_alias, fid_module_name,
    fid_type, fid_key, fid_subject, fid_return_type;

static void py__init_tables(void)
{
    const TSLanguage *lang = tree_sitter_python();
    uint32_t n = ts_language_symbol_count(lang);
    uint8_t *kinds = gl_calloc(n, 1);
    for (uint32_t s = 0; s < n; s++) {
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        if (!name) continue;
        for (int k = 1; k < PN_COUNT; k++)
            if (strcmp(name, py_node_names[k]) == 0) {
                /* Anonymous tokens share names with node types ("lambda", "yield", "none"...):
                 * only named symbols map to node kinds. */
                if (ts_language_symbol_type(lang, (TSSymbol)s) == TSSymbolTypeRegular) kinds[s] = (uint8_t)k;
                break;
            }
        /* `\` at the end of a line is an extra node like a comment, wherever it sits (`return a, b,\`
         * must not lower to a third, empty element) */
        if (!strcmp(name, "line_continuation")) kinds[s] = PN_COMMENT;
    }
#define FID(v, s) v = ts_language_field_id_for_name(lang, s, (uint32_t)strlen(s))
    FID(fid_left, "left"); FID(fid_right, "right"); FID(fid_body, "body"); FID(fid_condition, "condition");
    FID(fid_consequence, "consequence"); FID(fid_alternative, "alternative"); FID(fid_name, "name");
    FID(fid_value, "value"); FID(fid_object, "object"); FID(fid_attribute, "attribute");
    FID(fid_function, "function"); FID(fid_arguments, "arguments"); FID(fid_subscript, "subscript");
    FID(fid_operator, "operator"); FID(fid_parameters, "parameters"); FID(fid_superclasses, "superclasses");
    FID(fid_definition, "definition"); FID(fid_alias, "alias"); FID(fid_module_name, "module_name");
    FID(fid_type, "type"); FID(fid_key, "key"); FID(fid_subject, "subject");
    FID(fid_return_type, "return_type");
#undef FID
    py_symbol_count = n;
    py_symbol_kind = kinds;
}

static PyNodeKind py__kind(TSNode n)
{
    if (ts_node_is_null(n)) return PN_OTHER;
    TSSymbol s = ts_node_symbol(n);
    if (s == (TSSymbol)-1) return PN_ERROR; /* ts_builtin_sym_error */
    if (s >= py_symbol_count) return PN_OTHER;
    return (PyNodeKind)py_symbol_kind[s];
}

typedef enum WorkKind {
    W_STMT,   /* lower a statement or block */
    W_EXPR,   /* evaluate an expression, pushing its value */
    W_EXIT,   /* build the op of node from the values its children pushed */
    W_TARGET, /* pop a value and assign it to the target pattern node */
    W_ACTION, /* perform action `aux` */
} WorkKind;

typedef enum Action {
    A_EXPR_STMT, A_POP, A_DUP, A_FOR_BEGIN, A_WHILE_BEGIN, A_END_LOOP, A_IF, A_ELSE, A_END_IF, A_TRY,
    A_EXCEPT, A_END_TRY, A_WITH, A_END_WITH, A_RETURN, A_FUNC_BEGIN, A_FUNC_END, A_CLASS_BEGIN,
    A_CLASS_END, A_AUG, A_UNPACK, A_SET_ATTR, A_SET_ITEM, A_COMP_NEXT, A_COMP_END, A_COMP_BUILD, A_WALRUS, A_CALL,
    A_CONST_UNKNOWN, A_CONST_STR, A_BREAK, A_CONTINUE,
} Action;

typedef struct Work {
    uint8_t kind;  /* WorkKind */
    uint8_t act;   /* Action for W_ACTION */
    uint32_t aux;  /* action data: region id, loop id, value, index */
    uint32_t aux2;
    uint32_t vbase; /* value-stack height when the node's children started */
    TSNode node;
    TSNode node2;  /* decorated_definition for A_FUNC_BEGIN/A_CLASS_BEGIN */
} Work;

typedef struct Lower {
    IrModule *m;
    IrBuilder B;            /* values, open functions, classes, loops and with blocks (ir/build.h) */
    const char *src;
    Array(Work) work;
    PyImports imports;
    PyChunkLog *log;        /* the top-level statement being lowered is logged for reuse (py_chunk.h), or NULL */
    TSTreeCursor cursor;
    Array(TSNode) kids;     /* scratch for py__children */
} Lower;

static IrBuildFn *L_fn(Lower *L) { return ir_build_fn(&L->B); }
static IrFunc *L_f(Lower *L) { return ir_build_func(&L->B); }

static Span py__span(TSNode n)
{
    TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    Span sp = {ts_node_start_byte(n), ts_node_end_byte(n), s.row, s.column, e.row, e.column};
    return sp;
}

static const char *py__text(Lower *L, TSNode n)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return arena_strndup(L->B.arena, L->src + s, e - s);
}

/* Children of n (all of them, named and anonymous) into L->kids, through a cursor: ts_node_child(i)
 * is linear in i, which would make wide nodes quadratic. Returns the first index used. */
static uint32_t py__children(Lower *L, TSNode n)
{
    uint32_t first = L->kids.len;
    ts_tree_cursor_reset(&L->cursor, n);
    if (ts_tree_cursor_goto_first_child(&L->cursor)) {
        do array_push(&L->kids, ts_tree_cursor_current_node(&L->cursor));
        while (ts_tree_cursor_goto_next_sibling(&L->cursor));
    }
    return first;
}

static uint32_t emit(Lower *L, IrOpKind kind, TSNode n) { return ir_build_emit(&L->B, kind, py__span(n)); }
static IrOp *op_at(Lower *L, uint32_t i) { return ir_build_op(&L->B, i); }

static void push_work(Lower *L, WorkKind k, TSNode n)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = (uint8_t)k;
    w.node = n;
    array_push(&L->work, w);
}

/* A schedule is built in source order and pushed reversed, so it runs in source order. */
typedef Array(Work) Schedule;

static void sched_node(Schedule *s, WorkKind k, TSNode n)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = (uint8_t)k;
    w.node = n;
    array_push(s, w);
}

static void sched_action(Schedule *s, Action a, TSNode n, uint32_t aux, uint32_t aux2)
{
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = W_ACTION;
    w.act = (uint8_t)a;
    w.node = n;
    w.aux = aux;
    w.aux2 = aux2;
    array_push(s, w);
}

static uint32_t pop_val(Lower *L)
{
    if (NEVER(L->B.vals.len == 0)) return IR_NONE;
    return ir_build_pop(&L->B);
}

static void push_val(Lower *L, uint32_t v) { ir_build_push(&L->B, v); }

/* What name is imported as (NULL: not imported). Every lookup goes through here: a statement kept
 * for reuse depends on the answers (py_chunk.h). */
static const char *py__imported(Lower *L, const char *name, size_t len)
{
    const char *q = py_imports_get(&L->imports, name, len);
    return L->log ? py_chunk_log_import(L->log, name, len, q) : q;
}

/* The builder's variable hook: logs the module variables a kept statement uses. */
static void py__on_var(void *ctx, const IrFunc *f, uint32_t v)
{
    Lower *L = ctx;
    if (L->log && f->index == 0) py_chunk_log_var(L->log, f, v);
}

/* Dotted name of an identifier/attribute chain, resolved through imports ("nn.Linear" ->
 * "torch.nn.Linear"); NULL when the chain has anything but names. Iterative over the chain. */
static const char *py__static_qual(Lower *L, TSNode n)
{
    StrBuf parts;
    sb_init(&parts);
    const char *result = NULL;
    TSNode cur = n;
    const char *segs[64];
    uint32_t nseg = 0;
    for (;;) {
        PyNodeKind k = py__kind(cur);
        if (k == PN_CALL) { cur = ts_node_child_by_field_id(cur, fid_function); continue; }
        if (k == PN_IDENTIFIER) {
            const char *name = py__text(L, cur);
            const char *q = py__imported(L, name, strlen(name));
            sb_puts(&parts, q ? q : name);
            for (uint32_t i = nseg; i-- > 0;) sb_printf(&parts, ".%s", segs[i]);
            result = arena_strndup(L->B.arena, parts.data, parts.len);
            break;
        }
        if (k != PN_ATTRIBUTE || nseg == ARRAY_LEN(segs)) break;
        segs[nseg++] = py__text(L, ts_node_child_by_field_id(cur, fid_attribute));
        cur = ts_node_child_by_field_id(cur, fid_object);
    }
    sb_free(&parts);
    return result;
}

/* Errors are recorded once, by the full walk in py__collect_comments. */
static void py__error(Lower *L, TSNode n)
{
    GL_UNUSED(L);
    GL_UNUSED(n);
}

/* ---- statements ------------------------------------------------------------------------------ */

static bool py__is_statement(PyNodeKind k)
{
    switch (k) {
    case PN_EXPRESSION_STATEMENT: case PN_RETURN_STATEMENT: case PN_BREAK_STATEMENT:
    case PN_CONTINUE_STATEMENT: case PN_IF_STATEMENT: case PN_FOR_STATEMENT: case PN_WHILE_STATEMENT:
    case PN_TRY_STATEMENT: case PN_WITH_STATEMENT: case PN_FUNCTION_DEFINITION: case PN_CLASS_DEFINITION:
    case PN_DECORATED_DEFINITION: case PN_GLOBAL_STATEMENT: case PN_NONLOCAL_STATEMENT:
    case PN_IMPORT_STATEMENT: case PN_IMPORT_FROM_STATEMENT: case PN_DELETE_STATEMENT:
    case PN_RAISE_STATEMENT: case PN_MATCH_STATEMENT: case PN_BLOCK: case PN_ASSERT_STATEMENT:
        return true;
    default:
        return false;
    }
}

static void py__record_import(Lower *L, const char *local, const char *qual)
{
    py_imports_put(&L->imports, local, qual);
    if (L->log) py_chunk_log_import_made(L->log, local, qual);
}

/* "pkg" + "f" -> "pkg.f"; "." + "f" -> ".f" (a bare relative prefix already ends in a dot) */
static const char *py__join_module(Lower *L, const char *module, const char *name)
{
    size_t n = strlen(module);
    return arena_printf(L->B.arena, n && module[n - 1] == '.' ? "%s%s" : "%s.%s", module, name);
}

static void py__import(Lower *L, TSNode n, PyNodeKind k)
{
    uint32_t first = py__children(L, n);
    const char *module = NULL;
    if (k == PN_IMPORT_FROM_STATEMENT) {
        TSNode mn = ts_node_child_by_field_id(n, fid_module_name);
        /* `from .utils import f` keeps its dots: ".utils.f" (the project pass resolves them) */
        if (py__kind(mn) == PN_DOTTED_NAME || py__kind(mn) == PN_RELATIVE_IMPORT) module = py__text(L, mn);
    }
    for (uint32_t i = first; i < L->kids.len; i++) {
        TSNode c = L->kids.items[i];
        PyNodeKind ck = py__kind(c);
        if (k == PN_IMPORT_FROM_STATEMENT && ts_node_eq(c, ts_node_child_by_field_id(n, fid_module_name))) continue;
        if (ck == PN_WILDCARD_IMPORT && module) {
            /* `from utils import *`: the names the file reads and never binds may be utils' (IrModule.star_imports) */
            py__record_import(L, arena_printf(L->B.arena, "*%s", module), module);
            continue;
        }
        if (ck == PN_DOTTED_NAME) {
            const char *name = py__text(L, c);
            if (k == PN_IMPORT_STATEMENT) {
                /* `import torch.nn` binds `torch` */
                const char *dot = strchr(name, '.');
                const char *local = dot ? arena_strndup(L->B.arena, name, (size_t)(dot - name)) : name;
                py__record_import(L, local, local);
            } else if (module) {
                py__record_import(L, name, py__join_module(L, module, name));
            }
        } else if (ck == PN_ALIASED_IMPORT) {
            TSNode nm = ts_node_child_by_field_id(c, fid_name), al = ts_node_child_by_field_id(c, fid_alias);
            if (ts_node_is_null(nm) || ts_node_is_null(al)) continue;
            const char *name = py__text(L, nm);
            const char *qual = module ? py__join_module(L, module, name) : name;
            py__record_import(L, py__text(L, al), qual);
        }
    }
    L->kids.len = first;
}

static void py__stmt(Lower *L, TSNode n, Schedule *s)
{
    PyNodeKind k = py__kind(n);
    switch (k) {
    case PN_MODULE:
    case PN_BLOCK:
    case PN_ERROR: {
        if (k == PN_ERROR) py__error(L, n);
        uint32_t first = py__children(L, n);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (ck == PN_COMMENT) continue;
            if (ck == PN_ERROR || py__is_statement(ck)) sched_node(s, W_STMT, c);
            else if (ts_node_is_missing(c)) py__error(L, c);
        }
        L->kids.len = first;
        break;
    }
    case PN_EXPRESSION_STATEMENT: {
        uint32_t first = py__children(L, n);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (!ts_node_is_named(c) || ck == PN_COMMENT) continue;
            if (ck == PN_ASSIGNMENT) {
                /* a = b = value: evaluate the innermost right side once, then assign left to right */
                TSNode lefts[32];
                uint32_t nl = 0;
                TSNode cur = c;
                while (py__kind(cur) == PN_ASSIGNMENT && nl < ARRAY_LEN(lefts)) {
                    lefts[nl++] = ts_node_child_by_field_id(cur, fid_left);
                    cur = ts_node_child_by_field_id(cur, fid_right);
                }
                if (ts_node_is_null(cur)) break; /* annotation only: `x: int` */
                if (py__kind(cur) == PN_AUGMENTED_ASSIGNMENT) { sched_node(s, W_STMT, cur); break; }
                sched_node(s, W_EXPR, cur);
                for (uint32_t j = 0; j < nl; j++) {
                    if (j + 1 < nl) sched_action(s, A_DUP, c, 0, 0);
                    sched_node(s, W_TARGET, lefts[j]);
                }
            } else if (ck == PN_AUGMENTED_ASSIGNMENT) {
                sched_node(s, W_STMT, c);
            } else {
                sched_node(s, W_EXPR, c);
                sched_action(s, A_EXPR_STMT, c, 0, 0);
            }
        }
        L->kids.len = first;
        break;
    }
    case PN_AUGMENTED_ASSIGNMENT: {
        TSNode left = ts_node_child_by_field_id(n, fid_left), right = ts_node_child_by_field_id(n, fid_right);
        if (ts_node_is_null(left) || ts_node_is_null(right)) { py__error(L, n); break; }
        sched_node(s, W_EXPR, left);
        sched_node(s, W_EXPR, right);
        sched_action(s, A_AUG, n, 0, 0);
        sched_node(s, W_TARGET, left);
        break;
    }
    case PN_RETURN_STATEMENT: {
        TSNode v = ts_node_named_child(n, 0);
        bool has = !ts_node_is_null(v) && py__kind(v) != PN_COMMENT;
        if (has) sched_node(s, W_EXPR, v);
        sched_action(s, A_RETURN, n, has, 0);
        break;
    }
    case PN_BREAK_STATEMENT: sched_action(s, A_BREAK, n, 0, 0); break;
    case PN_CONTINUE_STATEMENT: sched_action(s, A_CONTINUE, n, 0, 0); break;
    case PN_IF_STATEMENT: {
        /* if/elif/else becomes nested IF regions: each elif lives in the previous ELSE */
        uint32_t regions[256];
        uint32_t nr = 0;
        uint32_t r = ir_build_region(&L->B);
        regions[nr++] = r;
        sched_node(s, W_EXPR, ts_node_child_by_field_id(n, fid_condition));
        sched_action(s, A_IF, n, r, 0);
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_consequence));
        uint32_t first = py__children(L, n);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (ck == PN_ELIF_CLAUSE && nr < ARRAY_LEN(regions)) {
                sched_action(s, A_ELSE, c, regions[nr - 1], 0);
                uint32_t r2 = ir_build_region(&L->B);
                regions[nr++] = r2;
                sched_node(s, W_EXPR, ts_node_child_by_field_id(c, fid_condition));
                sched_action(s, A_IF, c, r2, 0);
                sched_node(s, W_STMT, ts_node_child_by_field_id(c, fid_consequence));
            } else if (ck == PN_ELSE_CLAUSE) {
                sched_action(s, A_ELSE, c, regions[nr - 1], 0);
                sched_node(s, W_STMT, ts_node_child_by_field_id(c, fid_body));
            }
        }
        L->kids.len = first;
        while (nr > 0) sched_action(s, A_END_IF, n, regions[--nr], 0);
        break;
    }
    case PN_FOR_STATEMENT: {
        TSNode left = ts_node_child_by_field_id(n, fid_left), right = ts_node_child_by_field_id(n, fid_right);
        if (ts_node_is_null(right)) { py__error(L, n); break; }
        sched_node(s, W_EXPR, right);
        sched_action(s, A_FOR_BEGIN, n, 0, 0);
        if (!ts_node_is_null(left)) sched_node(s, W_TARGET, left);
        else sched_action(s, A_POP, n, 0, 0);
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_body));
        sched_action(s, A_END_LOOP, n, 0, 0);
        TSNode alt = ts_node_child_by_field_id(n, fid_alternative);
        if (!ts_node_is_null(alt)) sched_node(s, W_STMT, ts_node_child_by_field_id(alt, fid_body));
        break;
    }
    case PN_WHILE_STATEMENT: {
        sched_action(s, A_WHILE_BEGIN, n, 0, 0);
        TSNode cond = ts_node_child_by_field_id(n, fid_condition);
        if (!ts_node_is_null(cond)) {
            sched_node(s, W_EXPR, cond);
            sched_action(s, A_POP, n, 0, 0);
        }
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_body));
        sched_action(s, A_END_LOOP, n, 0, 0);
        TSNode alt = ts_node_child_by_field_id(n, fid_alternative);
        if (!ts_node_is_null(alt)) sched_node(s, W_STMT, ts_node_child_by_field_id(alt, fid_body));
        break;
    }
    case PN_TRY_STATEMENT: {
        uint32_t r = ir_build_region(&L->B);
        sched_action(s, A_TRY, n, r, 0);
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_body));
        uint32_t first = py__children(L, n);
        TSNode finally_body = {0};
        bool has_finally = false;
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (ck == PN_ELSE_CLAUSE) sched_node(s, W_STMT, ts_node_child_by_field_id(c, fid_body));
        }
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (ck == PN_EXCEPT_CLAUSE || ck == PN_EXCEPT_GROUP_CLAUSE) {
                sched_action(s, A_EXCEPT, c, r, 0);
                TSNode alias = ts_node_child_by_field_id(c, fid_alias);
                if (!ts_node_is_null(alias)) {
                    sched_action(s, A_CONST_UNKNOWN, alias, 0, 0);
                    sched_node(s, W_TARGET, alias);
                }
                TSNode last = ts_node_named_child(c, ts_node_named_child_count(c) - 1);
                if (py__kind(last) == PN_BLOCK) sched_node(s, W_STMT, last);
            } else if (ck == PN_FINALLY_CLAUSE) {
                TSNode last = ts_node_named_child(c, ts_node_named_child_count(c) - 1);
                if (py__kind(last) == PN_BLOCK) finally_body = last, has_finally = true;
            }
        }
        L->kids.len = first;
        sched_action(s, A_END_TRY, n, r, 0);
        if (has_finally) sched_node(s, W_STMT, finally_body);
        break;
    }
    case PN_WITH_STATEMENT: {
        TSNode items[64];
        uint32_t ni = 0;
        uint32_t first = py__children(L, n);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            if (py__kind(c) != PN_WITH_CLAUSE) continue;
            for (uint32_t j = 0; j < ts_node_named_child_count(c) && ni < ARRAY_LEN(items); j++) {
                TSNode it = ts_node_named_child(c, j);
                if (py__kind(it) == PN_WITH_ITEM) items[ni++] = it;
            }
        }
        L->kids.len = first;
        for (uint32_t i = 0; i < ni; i++) {
            TSNode v = ts_node_child_by_field_id(items[i], fid_value);
            TSNode alias = {0};
            bool has_alias = false;
            if (py__kind(v) == PN_AS_PATTERN) {
                TSNode at = ts_node_child_by_field_id(v, fid_alias);
                if (!ts_node_is_null(at)) alias = ts_node_named_child(at, 0), has_alias = !ts_node_is_null(alias);
                v = ts_node_named_child(v, 0);
            }
            if (ts_node_is_null(v)) continue;
            sched_node(s, W_EXPR, v);
            sched_action(s, A_WITH, items[i], has_alias, 0);
            if (has_alias) sched_node(s, W_TARGET, alias);
        }
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_body));
        for (uint32_t i = ni; i-- > 0;) sched_action(s, A_END_WITH, items[i], 0, 0);
        break;
    }
    case PN_DECORATED_DEFINITION: {
        TSNode def = ts_node_child_by_field_id(n, fid_definition);
        if (ts_node_is_null(def)) break;
        Work w;
        memset(&w, 0, sizeof w);
        w.kind = W_ACTION;
        w.act = py__kind(def) == PN_CLASS_DEFINITION ? A_CLASS_BEGIN : A_FUNC_BEGIN;
        w.node = def;
        w.node2 = n;
        w.aux2 = 1;
        array_push(s, w);
        sched_node(s, W_STMT, ts_node_child_by_field_id(def, fid_body));
        sched_action(s, w.act == A_CLASS_BEGIN ? A_CLASS_END : A_FUNC_END, def, 0, 0);
        break;
    }
    case PN_FUNCTION_DEFINITION:
    case PN_CLASS_DEFINITION: {
        bool cls = k == PN_CLASS_DEFINITION;
        sched_action(s, cls ? A_CLASS_BEGIN : A_FUNC_BEGIN, n, 0, 0);
        sched_node(s, W_STMT, ts_node_child_by_field_id(n, fid_body));
        sched_action(s, cls ? A_CLASS_END : A_FUNC_END, n, 0, 0);
        break;
    }
    case PN_GLOBAL_STATEMENT:
    case PN_NONLOCAL_STATEMENT: {
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
            TSNode c = ts_node_named_child(n, i);
            if (py__kind(c) != PN_IDENTIFIER) continue;
            const char *name = py__text(L, c);
            uint32_t v = ir_build_var(&L->B, name, strlen(name));
            L_f(L)->vars.items[v].is_global = 1;
            /* a flag on a module variable: not a change a statement can replay */
            if (L->log && L_f(L)->index == 0) L->log->ok = false;
        }
        break;
    }
    case PN_IMPORT_STATEMENT:
    case PN_IMPORT_FROM_STATEMENT:
        py__import(L, n, k);
        break;
    case PN_DELETE_STATEMENT: {
        TSNode t = ts_node_named_child(n, 0);
        TSNode list[64];
        uint32_t nt = 0;
        if (py__kind(t) == PN_EXPRESSION_LIST) {
            for (uint32_t i = 0; i < ts_node_named_child_count(t) && nt < ARRAY_LEN(list); i++)
                list[nt++] = ts_node_named_child(t, i);
        } else if (!ts_node_is_null(t)) {
            list[nt++] = t;
        }
        for (uint32_t i = 0; i < nt; i++) {
            /* `del buf[:]`, `del self.buf[k]`: items taken out of a container (aux 1) */
            TSNode target = list[i];
            bool items = py__kind(target) == PN_SUBSCRIPT;
            if (items) target = ts_node_child_by_field_id(target, fid_value);
            uint32_t var = IR_NONE;
            if (py__kind(target) == PN_IDENTIFIER) {
                const char *name = py__text(L, target);
                var = ir_build_var(&L->B, name, strlen(name));
            } else if (items && py__kind(target) == PN_ATTRIBUTE) {
                TSNode obj = ts_node_child_by_field_id(target, fid_object);
                if (py__kind(obj) != PN_IDENTIFIER) continue;
                const char *oname = py__text(L, obj);
                var = ir_build_pseudo_var(&L->B, ir_build_var(&L->B, oname, strlen(oname)),
                                          py__text(L, ts_node_child_by_field_id(target, fid_attribute)));
            }
            if (var == IR_NONE) continue;
            uint32_t op = emit(L, IR_DEL, list[i]);
            op_at(L, op)->var = var;
            op_at(L, op)->aux = items;
        }
        break;
    }
    case PN_RAISE_STATEMENT:
        emit(L, IR_RAISE, n); /* the path ends: what follows it, or an else that raises, is not reached */
        break;
    case PN_ASSERT_STATEMENT:
        break;
    case PN_MATCH_STATEMENT: {
        TSNode subj = ts_node_child_by_field_id(n, fid_subject);
        if (!ts_node_is_null(subj)) {
            sched_node(s, W_EXPR, subj);
            sched_action(s, A_POP, n, 0, 0);
        }
        TSNode body = ts_node_child_by_field_id(n, fid_body);
        uint32_t regions[256], nr = 0;
        for (uint32_t i = 0; !ts_node_is_null(body) && i < ts_node_named_child_count(body); i++) {
            TSNode c = ts_node_named_child(body, i);
            if (py__kind(c) != PN_CASE_CLAUSE || nr == ARRAY_LEN(regions)) continue;
            if (nr) sched_action(s, A_ELSE, c, regions[nr - 1], 0);
            uint32_t r = ir_build_region(&L->B);
            regions[nr++] = r;
            sched_action(s, A_CONST_UNKNOWN, c, 0, 0);
            sched_action(s, A_IF, c, r, 0);
            sched_node(s, W_STMT, ts_node_child_by_field_id(c, fid_consequence));
        }
        while (nr > 0) sched_action(s, A_END_IF, n, regions[--nr], 0);
        break;
    }
    default:
        break;
    }
}

/* ---- expressions ----------------------------------------------------------------------------- */

static uint32_t py__const(Lower *L, TSNode n, ConstKind ck)
{
    const char *text = NULL;
    if (ck == CONST_INT || ck == CONST_FLOAT || ck == CONST_BOOL) text = py__text(L, n);
    /* keep short literal strings (keys, device names) for messages and rules */
    if (ck == CONST_STR && ts_node_end_byte(n) - ts_node_start_byte(n) < 64) text = py__text(L, n);
    return ir_build_const(&L->B, ck, text, py__span(n));
}

/* `lambda *a, **kw: autograd.Variable(*a, **kw).cuda()`: the resolved name of the first call in the
 * lambda's body that passes on the lambda's own `**` parameter ("torch.autograd.Variable"), so
 * what a caller passes as a keyword is known to reach it; NULL otherwise. Walks the body with a
 * cursor, at most 4,096 nodes. */
static const char *py__lambda_forwards(Lower *L, TSNode n)
{
    TSNode params = ts_node_child_by_field_id(n, fid_parameters), body = ts_node_child_by_field_id(n, fid_body);
    if (ts_node_is_null(params) || ts_node_is_null(body)) return NULL;
    const char *kw = NULL;
    for (uint32_t i = 0; i < ts_node_named_child_count(params) && !kw; i++) {
        TSNode p = ts_node_named_child(params, i);
        if (py__kind(p) == PN_DICTIONARY_SPLAT_PATTERN && ts_node_named_child_count(p))
            kw = py__text(L, ts_node_named_child(p, 0));
    }
    if (!kw) return NULL;
    const char *found = NULL;
    TSTreeCursor cur = ts_tree_cursor_new(body);
    for (uint32_t seen = 0; seen < 4096 && !found; seen++) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (py__kind(c) == PN_CALL) {
            TSNode args = ts_node_child_by_field_id(c, fid_arguments);
            for (uint32_t i = 0; !ts_node_is_null(args) && i < ts_node_named_child_count(args) && !found; i++) {
                TSNode a = ts_node_named_child(args, i);
                if (py__kind(a) == PN_DICTIONARY_SPLAT && ts_node_named_child_count(a) &&
                    !strcmp(py__text(L, ts_node_named_child(a, 0)), kw))
                    found = ts_node_is_null(ts_node_child_by_field_id(c, fid_function))
                                ? NULL
                                : py__static_qual(L, ts_node_child_by_field_id(c, fid_function));
            }
        }
        if (ts_tree_cursor_goto_first_child(&cur)) continue;
        bool next = false;
        while (!next) {
            if (ts_tree_cursor_goto_next_sibling(&cur)) { next = true; break; }
            if (!ts_tree_cursor_goto_parent(&cur)) break;
        }
        if (!next) break;
    }
    ts_tree_cursor_delete(&cur);
    return found;
}

static uint32_t py__load_name(Lower *L, TSNode n)
{
    const char *name = py__text(L, n);
    size_t len = strlen(name);
    return ir_build_load(&L->B, name, len, py__imported(L, name, len), py__span(n));
}

/* Arguments of a call in order: values pushed for each; kw names recorded by py__call_kw. */
static void py__sched_args(Lower *L, TSNode args, Schedule *s)
{
    if (ts_node_is_null(args)) return;
    if (py__kind(args) == PN_GENERATOR_EXPRESSION) { sched_node(s, W_EXPR, args); return; }
    uint32_t first = py__children(L, args);
    for (uint32_t i = first; i < L->kids.len; i++) {
        TSNode c = L->kids.items[i];
        if (!ts_node_is_named(c) || py__kind(c) == PN_COMMENT) continue;
        if (py__kind(c) == PN_KEYWORD_ARGUMENT) {
            TSNode v = ts_node_child_by_field_id(c, fid_value);
            if (!ts_node_is_null(v)) sched_node(s, W_EXPR, v);
            else sched_action(s, A_CONST_UNKNOWN, c, 0, 0);
        } else {
            sched_node(s, W_EXPR, c);
        }
    }
    L->kids.len = first;
}

static void py__emit_call(Lower *L, TSNode n, uint32_t vbase)
{
    IrFunc *f = L_f(L);
    uint32_t nvals = L->B.vals.len - vbase;
    if (NEVER(nvals == 0)) return;
    uint32_t callee = L->B.vals.items[vbase];
    uint32_t op = ir_build_call(&L->B, callee, f->ops.items[callee].qual, py__span(n));
    TSNode args = ts_node_child_by_field_id(n, fid_arguments);
    /* keyword names, in the same order py__sched_args pushed the values */
    uint32_t k = 0;
    if (!ts_node_is_null(args) && py__kind(args) != PN_GENERATOR_EXPRESSION) {
        uint32_t first = py__children(L, args);
        for (uint32_t i = first; i < L->kids.len && k < nvals - 1; i++) {
            TSNode c = L->kids.items[i];
            if (!ts_node_is_named(c) || py__kind(c) == PN_COMMENT) continue;
            const char *kw = NULL;
            if (py__kind(c) == PN_KEYWORD_ARGUMENT) {
                TSNode nm = ts_node_child_by_field_id(c, fid_name);
                kw = ts_node_is_null(nm) ? "?" : py__text(L, nm);
            } else if (py__kind(c) == PN_LIST_SPLAT) {
                kw = "*";
            } else if (py__kind(c) == PN_DICTIONARY_SPLAT) {
                kw = "**";
            }
            ir_build_arg(&L->B, op, L->B.vals.items[vbase + 1 + k], kw);
            k++;
        }
        L->kids.len = first;
    }
    for (; k < nvals - 1; k++) ir_build_arg(&L->B, op, L->B.vals.items[vbase + 1 + k], NULL);
    L->B.vals.len = vbase;
    push_val(L, op);
}

static BinOp py__binop(const char *t)
{
    static const struct { const char *s; BinOp op; } map[] = {
        {"+", BIN_ADD}, {"-", BIN_SUB}, {"*", BIN_MUL}, {"/", BIN_DIV}, {"//", BIN_FLOORDIV},
        {"%", BIN_MOD}, {"**", BIN_POW}, {"@", BIN_MATMUL}, {"&", BIN_AND}, {"|", BIN_OR},
        {"^", BIN_XOR}, {"<<", BIN_LSHIFT}, {">>", BIN_RSHIFT},
    };
    size_t n = strlen(t);
    if (n && t[n - 1] == '=') n--; /* augmented: "+=" */
    for (size_t i = 0; i < ARRAY_LEN(map); i++)
        if (strlen(map[i].s) == n && memcmp(map[i].s, t, n) == 0) return map[i].op;
    return BIN_OTHER;
}

/* Schedules the evaluation of expression n, or evaluates it at once when it is a leaf. */
static void py__expr(Lower *L, TSNode n, Schedule *s)
{
    PyNodeKind k = py__kind(n);
    uint32_t vbase = L->B.vals.len;
    switch (k) {
    case PN_IDENTIFIER:
    case PN_KEYWORD_IDENTIFIER:
        push_val(L, py__load_name(L, n));
        return;
    case PN_INTEGER: push_val(L, py__const(L, n, CONST_INT)); return;
    case PN_FLOAT: push_val(L, py__const(L, n, CONST_FLOAT)); return;
    case PN_TRUE: case PN_FALSE: push_val(L, py__const(L, n, CONST_BOOL)); return;
    case PN_NONE: push_val(L, py__const(L, n, CONST_NONE)); return;
    case PN_STRING: case PN_CONCATENATED_STRING: {
        /* an f-string: the expressions it interpolates are evaluated (what they read and call is
         * seen: `f"{loss.data[0]}"`, `f"{val_loss.item()}"`), and their values dropped; the string
         * stays a constant */
        bool any = false;
        uint32_t nparts = k == PN_STRING ? 1 : ts_node_named_child_count(n);
        for (uint32_t p = 0; p < nparts; p++) {
            TSNode str = k == PN_STRING ? n : ts_node_named_child(n, p);
            if (py__kind(str) != PN_STRING) continue;
            for (uint32_t i = 0; i < ts_node_named_child_count(str); i++) {
                TSNode in = ts_node_named_child(str, i);
                if (py__kind(in) != PN_INTERPOLATION || ts_node_named_child_count(in) == 0) continue;
                TSNode e = ts_node_named_child(in, 0);
                if (py__kind(e) == PN_COMMENT) continue;
                sched_node(s, W_EXPR, e);
                sched_action(s, A_POP, e, 0, 0);
                any = true;
            }
        }
        if (any) sched_action(s, A_CONST_STR, n, 0, 0);
        else push_val(L, py__const(L, n, CONST_STR));
        return;
    }
    case PN_ELLIPSIS: case PN_SLICE: push_val(L, py__const(L, n, CONST_OTHER)); return;
    case PN_PARENTHESIZED_EXPRESSION:
    case PN_AWAIT:
    case PN_LIST_SPLAT:
    case PN_DICTIONARY_SPLAT: {
        TSNode c = {0};
        bool found = false;
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++) {
            c = ts_node_named_child(n, i);
            if (py__kind(c) != PN_COMMENT) { found = true; break; }
        }
        if (found) sched_node(s, W_EXPR, c);
        else sched_action(s, A_CONST_UNKNOWN, n, 0, 0);
        return;
    }
    case PN_ATTRIBUTE:
        sched_node(s, W_EXPR, ts_node_child_by_field_id(n, fid_object));
        break;
    case PN_CALL: {
        TSNode fn = ts_node_child_by_field_id(n, fid_function);
        if (ts_node_is_null(fn)) { sched_action(s, A_CONST_UNKNOWN, n, 0, 0); return; }
        sched_node(s, W_EXPR, fn);
        py__sched_args(L, ts_node_child_by_field_id(n, fid_arguments), s);
        sched_action(s, A_CALL, n, 0, 0);
        /* A_CALL needs vbase: store it in the action after commit (see py__run) */
        s->items[s->len - 1].vbase = vbase;
        return;
    }
    case PN_SUBSCRIPT: {
        sched_node(s, W_EXPR, ts_node_child_by_field_id(n, fid_value));
        TSNode sub = ts_node_child_by_field_id(n, fid_subscript);
        if (!ts_node_is_null(sub)) sched_node(s, W_EXPR, sub);
        break;
    }
    case PN_BINARY_OPERATOR:
    case PN_BOOLEAN_OPERATOR: {
        TSNode l = ts_node_child_by_field_id(n, fid_left), r = ts_node_child_by_field_id(n, fid_right);
        if (ts_node_is_null(l) || ts_node_is_null(r)) { sched_action(s, A_CONST_UNKNOWN, n, 0, 0); return; }
        sched_node(s, W_EXPR, l);
        sched_node(s, W_EXPR, r);
        break;
    }
    case PN_LAMBDA: {
        /* opaque, but a wrapper that forwards its keywords names what it calls (its qual) */
        uint32_t v = py__const(L, n, CONST_OTHER);
        const char *fw = py__lambda_forwards(L, n);
        if (fw) op_at(L, v)->qual = fw;
        push_val(L, v);
        return;
    }
    case PN_NAMED_EXPRESSION: {
        TSNode v = ts_node_child_by_field_id(n, fid_value), nm = ts_node_child_by_field_id(n, fid_name);
        if (ts_node_is_null(v) || ts_node_is_null(nm)) { sched_action(s, A_CONST_UNKNOWN, n, 0, 0); return; }
        sched_node(s, W_EXPR, v);
        sched_action(s, A_WALRUS, nm, 0, 0);
        return;
    }
    case PN_LIST_COMPREHENSION:
    case PN_SET_COMPREHENSION:
    case PN_GENERATOR_EXPRESSION:
    case PN_DICTIONARY_COMPREHENSION: {
        /* Lowered as loops, one for each `for` clause (nested in order), the `if` clauses inside;
         * after the loops, the container is built of what the body produced. */
        uint32_t first = py__children(L, n), nfor = 0;
        TSNode body = ts_node_child_by_field_id(n, fid_body);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            PyNodeKind ck = py__kind(c);
            if (ck == PN_FOR_IN_CLAUSE) {
                TSNode right = ts_node_child_by_field_id(c, fid_right), left = ts_node_child_by_field_id(c, fid_left);
                if (ts_node_is_null(right) || ts_node_is_null(left)) continue;
                sched_node(s, W_EXPR, right);
                sched_action(s, A_COMP_NEXT, c, 0, 0);
                sched_node(s, W_TARGET, left);
                nfor++;
            } else if (ck == PN_IF_CLAUSE) {
                TSNode cond = ts_node_named_child(c, 0);
                if (ts_node_is_null(cond)) continue;
                sched_node(s, W_EXPR, cond);
                sched_action(s, A_POP, c, 0, 0);
            }
        }
        L->kids.len = first;
        if (py__kind(body) == PN_PAIR) {
            sched_node(s, W_EXPR, ts_node_child_by_field_id(body, fid_key));
            sched_node(s, W_EXPR, ts_node_child_by_field_id(body, fid_value));
            sched_action(s, A_COMP_END, n, nfor, 0);
            sched_action(s, A_COMP_BUILD, n, BUILD_DICT, 2);
        } else if (!ts_node_is_null(body)) {
            sched_node(s, W_EXPR, body);
            sched_action(s, A_COMP_END, n, nfor, 0);
            sched_action(s, A_COMP_BUILD, n, k == PN_SET_COMPREHENSION ? BUILD_SET : BUILD_LIST, 1);
        } else {
            sched_action(s, A_COMP_END, n, nfor, 0);
            sched_action(s, A_CONST_UNKNOWN, n, 0, 0);
        }
        return;
    }
    case PN_YIELD: {
        TSNode v = ts_node_named_child(n, 0);
        if (!ts_node_is_null(v)) sched_node(s, W_EXPR, v);
        break;
    }
    default: {
        /* tuples, lists, sets, dicts, comparisons, unary/not, conditional expressions, and anything
         * unknown: evaluate the named children, then build in W_EXIT */
        uint32_t first = py__children(L, n);
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            if (!ts_node_is_named(c)) continue;
            PyNodeKind ck = py__kind(c);
            if (ck == PN_COMMENT) continue;
            if (ck == PN_PAIR) {
                TSNode key = ts_node_child_by_field_id(c, fid_key), val = ts_node_child_by_field_id(c, fid_value);
                if (!ts_node_is_null(key)) sched_node(s, W_EXPR, key);
                if (!ts_node_is_null(val)) sched_node(s, W_EXPR, val);
            } else if (ck == PN_ERROR) {
                py__error(L, c);
            } else if (k == PN_OTHER && ck == PN_OTHER) {
                /* unknown container of unknown things: skip */
            } else {
                sched_node(s, W_EXPR, c);
            }
        }
        L->kids.len = first;
        break;
    }
    }
    Work w;
    memset(&w, 0, sizeof w);
    w.kind = W_EXIT;
    w.node = n;
    w.vbase = vbase;
    array_push(s, w);
}

static void py__exit(Lower *L, TSNode n, uint32_t vbase)
{
    PyNodeKind k = py__kind(n);
    uint32_t nv = L->B.vals.len - vbase;
    uint32_t *v = nv ? L->B.vals.items + vbase : NULL; /* no pointer arithmetic on an empty (NULL) array */
    uint32_t op;
    IrFunc *f = L_f(L);
    switch (k) {
    case PN_ATTRIBUTE: {
        TSNode an = ts_node_child_by_field_id(n, fid_attribute);
        op = ir_build_attr(&L->B, nv ? v[0] : IR_NONE, ts_node_is_null(an) ? "?" : py__text(L, an), py__span(n));
        IrOp *o = op_at(L, op);
        if (o->a != IR_NONE) {
            const IrOp *base = &f->ops.items[o->a];
            /* only name chains resolve (torch.cuda.empty_cache); an attribute of a call's result
             * (nn.Linear(4, 4).cuda) is a method of an object, not a dotted name */
            if (base->qual && (base->kind == IR_LOAD || base->kind == IR_ATTR))
                o->qual = arena_printf(L->B.arena, "%s.%s", base->qual, o->name);
            o->var = ir_build_member_var(&L->B, o->a, o->name);
        }
        break;
    }
    case PN_SUBSCRIPT:
        op = emit(L, IR_ITEM, n);
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        op_at(L, op)->b = nv > 1 ? v[1] : IR_NONE;
        break;
    case PN_BINARY_OPERATOR: {
        op = emit(L, IR_BINOP, n);
        TSNode opn = ts_node_child_by_field_id(n, fid_operator);
        op_at(L, op)->aux = ts_node_is_null(opn) ? BIN_OTHER : py__binop(py__text(L, opn));
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        op_at(L, op)->b = nv > 1 ? v[1] : IR_NONE;
        break;
    }
    case PN_BOOLEAN_OPERATOR:
    case PN_CONDITIONAL_EXPRESSION:
        op = emit(L, IR_SELECT, n);
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        op_at(L, op)->b = nv > 1 ? v[nv - 1] : IR_NONE;
        break;
    case PN_COMPARISON_OPERATOR: {
        op = emit(L, IR_COMPARE, n);
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        op_at(L, op)->b = nv > 1 ? v[1] : IR_NONE;
        /* the first operator ("==", "<", "in", "is not"): anonymous children between operands */
        for (uint32_t i = 0; i < ts_node_child_count(n) && i < 8; i++) {
            TSNode c = ts_node_child(n, i);
            if (!ts_node_is_named(c)) { op_at(L, op)->name = py__text(L, c); break; }
        }
        break;
    }
    case PN_NOT_OPERATOR:
    case PN_UNARY_OPERATOR: {
        op = emit(L, IR_UNOP, n);
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        op_at(L, op)->aux = k == PN_NOT_OPERATOR ? UN_NOT : UN_NEG;
        if (k == PN_UNARY_OPERATOR) {
            TSNode opn = ts_node_child_by_field_id(n, fid_operator);
            const char *t = ts_node_is_null(opn) ? "-" : py__text(L, opn);
            op_at(L, op)->aux = t[0] == '~' ? UN_INVERT : t[0] == '+' ? UN_POS : UN_NEG;
        }
        break;
    }
    case PN_YIELD:
        op = emit(L, IR_YIELD, n);
        op_at(L, op)->a = nv ? v[0] : IR_NONE;
        break;
    case PN_TUPLE: case PN_EXPRESSION_LIST: case PN_PATTERN_LIST: case PN_TUPLE_PATTERN:
    case PN_LIST: case PN_LIST_PATTERN: case PN_SET: case PN_DICTIONARY:
        op = ir_build_build(&L->B,
                            k == PN_LIST || k == PN_LIST_PATTERN ? BUILD_LIST : k == PN_SET ? BUILD_SET
                            : k == PN_DICTIONARY ? BUILD_DICT : BUILD_TUPLE, v, nv, py__span(n));
        break;
    default:
        /* unknown expression kinds: a value that joins whatever its parts carry */
        op = ir_build_build(&L->B, BUILD_TUPLE, v, nv, py__span(n));
        if (k == PN_ERROR) py__error(L, n);
        break;
    }
    L->B.vals.len = vbase;
    push_val(L, op);
}

/* ---- targets --------------------------------------------------------------------------------- */

static void py__target(Lower *L, TSNode n, Schedule *s)
{
    PyNodeKind k = py__kind(n);
    uint32_t value = pop_val(L);
    switch (k) {
    case PN_IDENTIFIER:
    case PN_KEYWORD_IDENTIFIER: {
        const char *name = py__text(L, n);
        ir_build_store(&L->B, name, strlen(name), value, py__span(n));
        /* `model = model.RNNModel(...)` at the top level: from here on the name is the object the
         * call made, not the imported module (an optional import's `amp = None` keeps it) */
        if (ir_build_func(&L->B)->index == 0 && value != IR_NONE && value < ir_build_func(&L->B)->ops.len &&
            ir_build_func(&L->B)->ops.items[value].kind == IR_CALL && py__imported(L, name, strlen(name)))
            py__record_import(L, name, NULL);
        break;
    }
    case PN_TUPLE: case PN_LIST: case PN_PATTERN_LIST: case PN_TUPLE_PATTERN: case PN_LIST_PATTERN:
    case PN_EXPRESSION_LIST: {
        uint32_t first = py__children(L, n), idx = 0;
        for (uint32_t i = first; i < L->kids.len; i++) {
            TSNode c = L->kids.items[i];
            if (!ts_node_is_named(c) || py__kind(c) == PN_COMMENT) continue;
            bool star = py__kind(c) == PN_LIST_SPLAT_PATTERN || py__kind(c) == PN_LIST_SPLAT;
            sched_action(s, A_UNPACK, c, value, star ? IR_UNPACK_STAR : idx);
            TSNode inner = star ? ts_node_named_child(c, 0) : c;
            if (ts_node_is_null(inner)) sched_action(s, A_POP, c, 0, 0);
            else sched_node(s, W_TARGET, inner);
            idx++;
        }
        L->kids.len = first;
        break;
    }
    case PN_PARENTHESIZED_EXPRESSION: {
        TSNode inner = ts_node_named_child(n, 0);
        push_val(L, value);
        if (!ts_node_is_null(inner)) sched_node(s, W_TARGET, inner);
        else pop_val(L);
        break;
    }
    case PN_ATTRIBUTE:
        sched_node(s, W_EXPR, ts_node_child_by_field_id(n, fid_object));
        sched_action(s, A_SET_ATTR, n, value, 0);
        break;
    case PN_SUBSCRIPT: {
        sched_node(s, W_EXPR, ts_node_child_by_field_id(n, fid_value));
        TSNode sub = ts_node_child_by_field_id(n, fid_subscript);
        if (!ts_node_is_null(sub)) sched_node(s, W_EXPR, sub);
        else sched_action(s, A_CONST_UNKNOWN, n, 0, 0);
        sched_action(s, A_SET_ITEM, n, value, 0);
        break;
    }
    case PN_LIST_SPLAT_PATTERN:
    case PN_LIST_SPLAT: {
        TSNode inner = ts_node_named_child(n, 0);
        sched_action(s, A_UNPACK, n, value, IR_UNPACK_STAR);
        if (!ts_node_is_null(inner)) sched_node(s, W_TARGET, inner);
        else sched_action(s, A_POP, n, 0, 0);
        break;
    }
    default:
        if (k == PN_ERROR) py__error(L, n);
        break;
    }
}

/* ---- definitions ----------------------------------------------------------------------------- */

static void py__params(Lower *L, IrFunc *f, TSNode params)
{
    if (ts_node_is_null(params)) return;
    uint32_t first = py__children(L, params);
    uint32_t pos = 0;
    for (uint32_t i = first; i < L->kids.len; i++) {
        TSNode c = L->kids.items[i];
        if (!ts_node_is_named(c)) continue;
        PyNodeKind ck = py__kind(c);
        TSNode name = c;
        TSNode type = {0};
        bool typed = false;
        if (ck == PN_DEFAULT_PARAMETER || ck == PN_TYPED_DEFAULT_PARAMETER) {
            name = ts_node_child_by_field_id(c, fid_name);
            if (ck == PN_TYPED_DEFAULT_PARAMETER) type = ts_node_child_by_field_id(c, fid_type), typed = true;
        } else if (ck == PN_TYPED_PARAMETER) {
            name = ts_node_named_child(c, 0);
            type = ts_node_child_by_field_id(c, fid_type), typed = true;
        }
        if (py__kind(name) == PN_LIST_SPLAT_PATTERN || py__kind(name) == PN_DICTIONARY_SPLAT_PATTERN)
            name = ts_node_named_child(name, 0);
        if (py__kind(name) != PN_IDENTIFIER) continue;
        const char *nm = py__text(L, name);
        const char *qual = typed && !ts_node_is_null(type) ? py__static_qual(L, ts_node_named_child(type, 0)) : NULL;
        uint32_t pop = ir_build_param(&L->B, nm, strlen(nm), qual, pos++, py__span(name));
        if (ck == PN_DEFAULT_PARAMETER || ck == PN_TYPED_DEFAULT_PARAMETER) {
            /* a literal default (`optimizer=None`, `train=False`): what a call that leaves it out passes */
            TSNode dv = ts_node_child_by_field_id(c, fid_value);
            const char *dt = ts_node_is_null(dv) ? NULL : py__text(L, dv);
            uint8_t pd = !dt ? 0 : !strcmp(dt, "None") ? IR_PDEF_NONE : !strcmp(dt, "False") ? IR_PDEF_FALSE
                       : !strcmp(dt, "True") ? IR_PDEF_TRUE : 0;
            ir_build_op(&L->B, pop)->pad = pd;
        }
    }
    f->nparams = pos;
    L->kids.len = first;
}

static uint8_t py__decorator_mode(const char *q)
{
    if (!q) return GRAD_DEFAULT;
    if (!strcmp(q, "torch.no_grad") || !strcmp(q, "torch.autograd.no_grad") || !strcmp(q, "no_grad") ||
        !strcmp(q, "torch.autograd.grad_mode.no_grad"))
        return GRAD_NO_GRAD;
    if (!strcmp(q, "torch.inference_mode") || !strcmp(q, "inference_mode")) return GRAD_INFERENCE;
    if (!strcmp(q, "torch.enable_grad") || !strcmp(q, "enable_grad")) return GRAD_ENABLE;
    return GRAD_DEFAULT;
}

static void py__func_begin(Lower *L, const Work *w)
{
    TSNode n = w->node;
    bool is_lambda = py__kind(n) == PN_LAMBDA;
    TSNode name = ts_node_child_by_field_id(n, fid_name);
    const char *nm = ts_node_is_null(name) ? "<lambda>" : py__text(L, name);
    IrFunc *f = ir_build_func_begin(&L->B, nm, py__span(ts_node_is_null(name) ? n : name), L_fn(L)->cls, false);
    f->is_lambda = is_lambda;
    if (w->aux2) {
        /* decorators of a decorated_definition */
        TSNode d = w->node2;
        for (uint32_t i = 0; i < ts_node_named_child_count(d); i++) {
            TSNode c = ts_node_named_child(d, i);
            if (py__kind(c) != PN_DECORATOR) continue;
            const char *q = py__static_qual(L, ts_node_named_child(c, 0));
            if (!q) continue;
            array_push(&f->decorators, q);
            uint8_t mode = py__decorator_mode(q);
            if (mode != GRAD_DEFAULT) f->base_mode = mode;
        }
    }
    py__params(L, f, ts_node_child_by_field_id(n, fid_parameters));
    TSNode rt = is_lambda ? (TSNode){0} : ts_node_child_by_field_id(n, fid_return_type);
    if (!ts_node_is_null(rt)) f->ret_qual = py__static_qual(L, py__kind(rt) == PN_TYPE ? ts_node_named_child(rt, 0) : rt);
}

static void py__func_end(Lower *L, const Work *w)
{
    IrFunc *f = ir_build_func_end(&L->B);
    if (f->index == 0) return;
    if (f->cls != IR_NONE) return; /* methods are reached through their class */
    uint32_t op = ir_build_define(&L->B, f->index, NULL, py__span(w->node));
    TSNode name = ts_node_child_by_field_id(w->node, fid_name);
    if (!ts_node_is_null(name)) {
        push_val(L, op);
        py__target(L, name, NULL);
    }
}

static void py__class_begin(Lower *L, const Work *w)
{
    TSNode n = w->node;
    TSNode name = ts_node_child_by_field_id(n, fid_name);
    /* defs directly in the class body become its methods */
    IrClass *c = ir_build_class_begin(&L->B, ts_node_is_null(name) ? "?" : py__text(L, name),
                                      py__span(ts_node_is_null(name) ? n : name));
    TSNode sup = ts_node_child_by_field_id(n, fid_superclasses);
    for (uint32_t i = 0; !ts_node_is_null(sup) && i < ts_node_named_child_count(sup); i++) {
        TSNode b = ts_node_named_child(sup, i);
        if (py__kind(b) == PN_KEYWORD_ARGUMENT) continue;
        const char *q = py__static_qual(L, b);
        if (q) array_push(&c->bases, q);
    }
}

static void py__class_end(Lower *L, const Work *w)
{
    uint32_t op;
    if (NEVER(!ir_build_class_end(&L->B, py__span(w->node), &op))) return;
    TSNode name = ts_node_child_by_field_id(w->node, fid_name);
    if (!ts_node_is_null(name)) {
        push_val(L, op);
        py__target(L, name, NULL);
    }
}

/* ---- the driver ------------------------------------------------------------------------------ */

/* `torch.<name>` read from a file that never imports torch itself (it comes with `from utils
 * import *`, or from an earlier notebook cell run elsewhere): the name is torch's all the same.
 * Returns "torch.<name>" for the callee of call op ctx, or NULL. */
static const char *py__unimported_torch_qual(Lower *L, uint32_t ctx)
{
    const IrFunc *f = L_f(L);
    const IrOp *o = &f->ops.items[ctx];
    if (o->a == IR_NONE) return NULL;
    const IrOp *attr = &f->ops.items[o->a];
    if (attr->kind != IR_ATTR || !attr->name || attr->a == IR_NONE) return NULL;
    const IrOp *base = &f->ops.items[attr->a];
    if (base->kind != IR_LOAD || base->qual || base->var >= f->vars.len) return NULL;
    const IrVar *v = &f->vars.items[base->var];
    if (!v->name || strcmp(v->name, "torch") != 0 || v->is_param || py__imported(L, "torch", 5)) return NULL;
    return arena_printf(L->B.arena, "torch.%s", attr->name);
}

/* When arg reads a parameter of f whose default is the literal True: its position + 1 (self
 * counts), else 0. */
static uint32_t py__true_param_pos(const IrFunc *f, const IrOp *arg)
{
    if (arg->kind != IR_LOAD || arg->var >= f->vars.len || !f->vars.items[arg->var].is_param) return 0;
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind == IR_PARAM && o->var == arg->var) return o->pad == IR_PDEF_TRUE ? o->aux + 1 : 0;
    }
    return 0;
}

static uint8_t py__with_mode(Lower *L, uint32_t ctx)
{
    const IrOp *o = &L_f(L)->ops.items[ctx];
    if (o->kind != IR_CALL) return GRAD_KEEP;
    const char *q = o->qual ? o->qual : py__unimported_torch_qual(L, ctx);
    if (!q) return GRAD_KEEP;
    uint8_t m = py__decorator_mode(q);
    if (m != GRAD_DEFAULT) return m;
    if (!strcmp(q, "torch.set_grad_enabled") || !strcmp(q, "torch.autograd.set_grad_enabled") ||
        !strcmp(q, "set_grad_enabled")) {
        if (o->nargs >= 1) {
            const IrOp *arg = &L_f(L)->ops.items[L_f(L)->args.items[o->args]];
            if (arg->kind == IR_CONST && arg->name && !strcmp(arg->name, "False")) return GRAD_NO_GRAD;
            if (arg->kind == IR_CONST && arg->name && !strcmp(arg->name, "True")) return GRAD_ENABLE;
            uint32_t pos = py__true_param_pos(L_f(L), arg);
            if (pos) {
                /* `set_grad_enabled(track_gradient)` of a parameter that defaults to True: on,
                 * as the callers that leave it out want; those passing False are told apart at
                 * the call (IrFunc.grad_param) */
                if (!L_f(L)->grad_param) L_f(L)->grad_param = pos;
                if (L_f(L)->grad_param == pos) return GRAD_KEEP;
            }
        }
        return GRAD_MAYBE_OFF;
    }
    return GRAD_KEEP;
}

static void py__action(Lower *L, Work *w, Schedule *s)
{
    IrBuilder *B = &L->B;
    Span sp = py__span(w->node);
    switch ((Action)w->act) {
    case A_EXPR_STMT: ir_build_expr_stmt(B, pop_val(L), true, sp); break;
    case A_POP: pop_val(L); break;
    case A_DUP: push_val(L, ir_build_top(B)); break;
    case A_CONST_UNKNOWN: push_val(L, py__const(L, w->node, CONST_OTHER)); break;
    case A_CONST_STR: push_val(L, py__const(L, w->node, CONST_STR)); break;
    case A_FOR_BEGIN:
    case A_WHILE_BEGIN: {
        /* the loop's span is its header: from the keyword to the end of the iterable/condition */
        bool is_while = w->act == A_WHILE_BEGIN;
        TSNode hdr_end = ts_node_child_by_field_id(w->node, is_while ? fid_condition : fid_right);
        if (!ts_node_is_null(hdr_end)) {
            Span e = py__span(hdr_end);
            sp.end = e.end, sp.end_row = e.end_row, sp.end_col = e.end_col;
        }
        if (!is_while && NEVER(B->vals.len == 0)) push_val(L, IR_NONE);
        ir_build_loop_begin(B, is_while, sp);
        break;
    }
    case A_END_LOOP: ir_build_loop_end(B, sp); break;
    case A_BREAK: ir_build_jump(B, IR_BREAK, sp); break; /* outside a loop: a syntax error, nothing to model */
    case A_CONTINUE: ir_build_jump(B, IR_CONTINUE, sp); break;
    case A_IF:
        if (NEVER(B->vals.len == 0)) push_val(L, IR_NONE);
        ir_build_if(B, w->aux, sp);
        break;
    case A_ELSE: ir_build_mark(B, IR_ELSE, w->aux, sp); break;
    case A_END_IF: ir_build_mark(B, IR_END_IF, w->aux, sp); break;
    case A_TRY: ir_build_mark(B, IR_TRY, w->aux, sp); break;
    case A_EXCEPT: ir_build_mark(B, IR_EXCEPT, w->aux, sp); break;
    case A_END_TRY: ir_build_mark(B, IR_END_TRY, w->aux, sp); break;
    case A_WITH: {
        uint32_t ctx = pop_val(L);
        ir_build_with(B, ctx, ctx == IR_NONE ? GRAD_KEEP : py__with_mode(L, ctx), sp);
        if (w->aux) push_val(L, ctx); /* the `as` target gets the context's value */
        break;
    }
    case A_END_WITH: ir_build_end_with(B, sp); break;
    case A_RETURN: {
        uint32_t v = w->aux ? pop_val(L) : IR_NONE;
        ir_build_op2(B, IR_RETURN, v, IR_NONE, 0, sp);
        break;
    }
    case A_FUNC_BEGIN: py__func_begin(L, w); break;
    case A_FUNC_END: py__func_end(L, w); break;
    case A_CLASS_BEGIN: py__class_begin(L, w); break;
    case A_CLASS_END: py__class_end(L, w); break;
    case A_AUG: {
        uint32_t rhs = pop_val(L), lhs = pop_val(L);
        TSNode opn = ts_node_child_by_field_id(w->node, fid_operator);
        uint32_t op = ir_build_op2(B, IR_BINOP, lhs, rhs, ts_node_is_null(opn) ? BIN_OTHER : py__binop(py__text(L, opn)), sp);
        op_at(L, op)->flags |= IR_F_AUG;
        push_val(L, op);
        break;
    }
    case A_UNPACK: push_val(L, ir_build_op2(B, IR_UNPACK, w->aux, IR_NONE, w->aux2, sp)); break;
    case A_SET_ATTR: {
        uint32_t obj = pop_val(L);
        TSNode an = ts_node_child_by_field_id(w->node, fid_attribute);
        const char *name = ts_node_is_null(an) ? "?" : py__text(L, an);
        uint32_t op = ir_build_set_attr(B, obj, w->aux, name, IR_NONE, sp);
        op_at(L, op)->var = ir_build_member_var(B, obj, name);
        break;
    }
    case A_SET_ITEM: {
        uint32_t idx = pop_val(L), obj = pop_val(L);
        uint32_t op = ir_build_op2(B, IR_SET_ITEM, obj, idx, 0, sp);
        op_at(L, op)->c = w->aux;
        break;
    }
    case A_COMP_NEXT:
        /* a comprehension's `for` clause: a loop over the iterable on the stack, its next item
         * pushed (as A_FOR_BEGIN) */
        if (NEVER(B->vals.len == 0)) push_val(L, IR_NONE);
        ir_build_loop_begin(B, false, sp);
        ir_build_loop_comprehension(B);
        break;
    case A_COMP_END:
        for (uint32_t i = 0; i < w->aux; i++) ir_build_loop_end(B, sp);
        break;
    case A_COMP_BUILD: {
        uint32_t n = GL_MIN(w->aux2, B->vals.len);
        uint32_t op = ir_build_build(B, (BuildKind)w->aux, n ? B->vals.items + (B->vals.len - n) : NULL, n, sp);
        B->vals.len -= n;
        push_val(L, op);
        break;
    }
    case A_WALRUS: {
        const char *name = py__text(L, w->node);
        ir_build_store(B, name, strlen(name), ir_build_top(B), sp);
        break;
    }
    case A_CALL: py__emit_call(L, w->node, w->vbase); break;
    }
    GL_UNUSED(s);
}

/* Runs the work stack until it is empty. */
static void py__run(Lower *L, Schedule *s)
{
    while (L->work.len) {
        Work w = array_pop(&L->work);
        switch ((WorkKind)w.kind) {
        case W_STMT:
            if (!ts_node_is_null(w.node)) py__stmt(L, w.node, s);
            break;
        case W_EXPR:
            if (ts_node_is_null(w.node)) push_val(L, py__const(L, w.node, CONST_OTHER));
            else py__expr(L, w.node, s);
            break;
        case W_EXIT: py__exit(L, w.node, w.vbase); break;
        case W_TARGET: py__target(L, w.node, s); break;
        case W_ACTION: py__action(L, &w, s); break;
        }
        IR_SCHEDULE_COMMIT(&L->work, s);
    }
}

/* Between top-level statements, with nothing open: no function, class, loop, with block or value.
 * A statement lowered from here reads no other state than what py_chunk.h logs. */
static bool py__top_level(const Lower *L)
{
    const IrBuildFn *fc = &L->B.funcs.items[0];
    return L->work.len == 0 && L->B.vals.len == 0 && L->B.funcs.len == 1 && L->B.modes.len == 0 && L->B.classes.len == 0 &&
           fc->loop == IR_NONE && fc->cls == IR_NONE && fc->mode_depth == 0;
}

static void py__collect_comments(IrModule *m, TSNode root, TSTreeCursor *cur)
{
    /* Comments can sit anywhere in the tree: an iterative walk that skips every subtree with no
     * error and no '#' in its text (most statements), which makes it a small part of a re-lint
     * instead of a fifth of it (measured on a 5,000-line file in the LSP). */
    ts_tree_cursor_reset(cur, root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(cur);
        uint32_t nb = ts_node_start_byte(n), ne = ts_node_end_byte(n);
        bool wanted = ts_node_has_error(n) || (ne > nb && ne <= m->len && memchr(m->src + nb, '#', ne - nb));
        m->n_nodes++;
        if (py__kind(n) == PN_COMMENT) {
            if (nb < m->len && m->src[nb] == '#') array_push(&m->comments, py__span(n)); /* not a `\` */
        }
        else if (py__kind(n) == PN_ERROR || ts_node_is_missing(n)) {
            array_push(&m->error_spans, py__span(n));
            /* nothing inside an ERROR node adds information */
            if (py__kind(n) == PN_ERROR) {
                while (!ts_tree_cursor_goto_next_sibling(cur))
                    if (!ts_tree_cursor_goto_parent(cur)) return;
                continue;
            }
        }
        if (wanted && ts_tree_cursor_goto_first_child(cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(cur))
            if (!ts_tree_cursor_goto_parent(cur)) return;
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pthread_once_t py_once_flag = PTHREAD_ONCE_INIT;

long py_parse_only(const char *src, size_t len)
{
    pthread_once(&py_once_flag, py__init_tables);
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)len);
    long n = t ? 1 : -1;
    ts_tree_delete(t);
    ts_parser_delete(p);
    return n;
}

/* After `from utils import *`, a name the file reads and never binds (nor Python does) is utils':
 * its loads, and the calls of them, get the qualified name "utils.f" an import would have given
 * (the last star import, as in Python, when there are several). Done on the whole module after
 * lowering, so statements kept for reuse (py_chunk.c, saved before this) never hold it. */
static void py__star_names(IrModule *m)
{
    if (!m->star_imports.len || !m->funcs.len) return;
    const char *from = m->star_imports.items[m->star_imports.len - 1];
    IrFunc *top = m->funcs.items[0];
    uint8_t *bound = gl_calloc(top->vars.len + 1, 1);
    bool star_quals = false; /* some load got a star import's name: attributes of it follow */
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if ((o->kind != IR_STORE && o->kind != IR_DEL) || o->var >= f->vars.len) continue;
            const IrVar *v = &f->vars.items[o->var];
            if (fi != 0 && !v->is_global) continue; /* a local, or `global x; x = ...` below */
            uint32_t slot = fi == 0 ? o->var : strmap_get(&top->var_index, v->name, strlen(v->name));
            if (slot < top->vars.len) bound[slot] = 1;
        }
    }
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        IrFunc *f = m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            IrOp *o = &f->ops.items[i];
            if (o->kind == IR_CALL && !o->qual && o->a != IR_NONE &&
                (f->ops.items[o->a].kind == IR_LOAD || f->ops.items[o->a].kind == IR_ATTR))
                o->qual = f->ops.items[o->a].qual; /* its callee comes before it */
            /* `F.softmax`, `torch.mm` of a star-imported name: the attribute's dotted name */
            if (o->kind == IR_ATTR && !o->qual && o->a != IR_NONE && o->name && f->ops.items[o->a].qual &&
                (f->ops.items[o->a].kind == IR_LOAD || f->ops.items[o->a].kind == IR_ATTR) && star_quals)
                o->qual = arena_printf(m->arena, "%s.%s", f->ops.items[o->a].qual, o->name);
            if (o->kind != IR_LOAD || o->qual || o->var >= f->vars.len) continue;
            const IrVar *v = &f->vars.items[o->var];
            if (v->base != IR_NONE || v->is_param || (fi != 0 && !v->is_global)) continue;
            uint32_t slot = fi == 0 ? o->var : strmap_get(&top->var_index, v->name, strlen(v->name));
            if ((slot < top->vars.len && bound[slot]) || api_python_builtin(v->name)) continue;
            bool closure = false; /* bound in an enclosing function */
            uint32_t depth = 0; /* (a closure 64 functions deep is taken as bound: no long walks) */
            for (uint32_t p = f->parent; fi != 0 && p != 0 && p < m->funcs.len && !closure; p = m->funcs.items[p]->parent) {
                if (++depth > 64) {
                    closure = true;
                    break;
                }
                const IrFunc *pf = m->funcs.items[p];
                uint32_t pv = strmap_get(&pf->var_index, v->name, strlen(v->name));
                closure = pv < pf->vars.len && (pf->vars.items[pv].is_param || !pf->vars.items[pv].is_global);
            }
            if (closure) continue;
            /* torch and its usual aliases, which the star-imported module imported for itself */
            const char *alias = !strcmp(v->name, "torch") ? "torch"
                              : !strcmp(v->name, "F")     ? "torch.nn.functional"
                              : !strcmp(v->name, "nn")    ? "torch.nn"
                                                          : NULL;
            o->qual = alias ? alias : arena_printf(m->arena, "%s.%s", from, v->name);
            star_quals = true;
        }
    }
    gl_free(bound);
}

static int py__lower(IrModule *m, PyTree *keep, uint64_t timeout_us, PyParseStats *stats);

int py_lower(IrModule *m, uint64_t timeout_us, PyParseStats *stats) { return py__lower(m, NULL, timeout_us, stats); }

int py_lower_reuse(IrModule *m, PyTree **tree, uint64_t timeout_us, PyParseStats *stats)
{
    if (!*tree) *tree = py_tree_new(true);
    int rc = py__lower(m, *tree, timeout_us, stats);
    if (rc < 0) {
        py_tree_free(*tree);
        *tree = NULL;
    }
    return rc;
}

/* keep: NULL for a one-shot parse; otherwise its tree (edited by py_tree_edit) is the old tree, and
 * the new tree replaces it. */
static int py__lower(IrModule *m, PyTree *keep, uint64_t timeout_us, PyParseStats *stats)
{
    pthread_once(&py_once_flag, py__init_tables);
    if (m->len > UINT32_MAX / 2) return PY_ERR_PARSER;
    uint64_t t0 = now_ns();
    if (stats) stats->chunks_lowered = stats->chunks_reused = 0;
    TSParser *p = keep && keep->parser ? keep->parser : ts_parser_new();
    if (keep) keep->parser = p;
    ts_parser_set_language(p, tree_sitter_python());
    ts_parser_set_timeout_micros(p, timeout_us);
    /* CPython (and LSP) end lines at \n, \r\n and a lone \r; tree-sitter-python only at \n, so a
     * CR-only file would be one long broken line. Parse a copy with each lone \r turned into \n: same
     * length, same offsets, and rows that count every line end. m->src stays the user's bytes. */
    const char *text = m->src;
    const char *cr = memchr(m->src, '\r', m->len);
    for (; cr; cr = memchr(cr + 1, '\r', m->len - (size_t)(cr + 1 - m->src))) {
        size_t at = (size_t)(cr - m->src);
        if (at + 1 < m->len && m->src[at + 1] == '\n') continue;
        if (text == m->src) {
            char *copy = arena_alloc(m->arena, m->len + 1);
            memcpy(copy, m->src, m->len);
            copy[m->len] = 0;
            text = copy;
        }
        ((char *)text)[at] = '\n';
        if (at + 1 >= m->len) break;
    }
    if (text != m->src && keep && keep->tree) {
        /* py_tree_edit's points count '\n' only: with lone CRs, reparse from scratch */
        ts_tree_delete(keep->tree);
        keep->tree = NULL;
    }
    TSTree *tree = ts_parser_parse_string(p, keep ? keep->tree : NULL, text, (uint32_t)m->len);
    if (!keep) ts_parser_delete(p);
    if (!tree) return PY_ERR_TIMEOUT;
    if (ts_node_has_error(ts_tree_root_node(tree)) && py_tree_truncated(m->src, m->len, ts_tree_root_node(tree))) {
        py_tree_quarantine(tree);
        return PY_ERR_TREE_LIMIT;
    }
    uint64_t t1 = now_ns();

    Lower L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.src = text;
    strmap_init(&L.imports.map);
    TSNode root = ts_tree_root_node(tree);
    L.cursor = ts_tree_cursor_new(root);

    ir_build_init(&L.B, m, py__span(root));
    L.B.on_var = py__on_var;
    L.B.on_var_ctx = &L;

    Schedule s;
    array_init(&s);
    PyChunkCache *cache = keep && keep->reuse ? &keep->chunks : NULL;
    if (cache) py_chunk_cache_begin(cache);
    if (py__kind(root) != PN_MODULE) {
        /* (tree-sitter-python's root is always a module) */
        py__collect_comments(m, root, &L.cursor);
        push_work(&L, W_STMT, root);
        py__run(&L, &s);
    } else {
        /* The module, one top-level statement at a time, so that a document's statements can be
         * kept and reused (py_chunk.h). The comment walk's visit of the root comes first; it goes
         * into the statements only when the file has a '#' or a syntax error at all. */
        m->n_nodes++;
        uint32_t rb = ts_node_start_byte(root), re = ts_node_end_byte(root);
        bool walk = ts_node_has_error(root) || (re > rb && re <= m->len && memchr(m->src + rb, '#', re - rb));
        uint32_t first = py__children(&L, root), n_kids = L.kids.len;
        for (uint32_t i = first; i < n_kids; i++) {
            TSNode c = L.kids.items[i];
            PyNodeKind ck = py__kind(c);
            bool stmt = ck == PN_ERROR || py__is_statement(ck);
            /* a statement is kept and reused only where nothing around it is open (a statement
             * tree-sitter recovered into a bracket of the one before is not top level) */
            bool keepable = cache && stmt && ck != PN_ERROR && !ts_node_has_error(c) && py__top_level(&L);
            PyChunkAt at;
            if (keepable) {
                TSPoint pt = ts_node_start_point(c);
                at.symbol = ts_node_symbol(c);
                at.start = ts_node_start_byte(c);
                at.len = ts_node_end_byte(c) - at.start;
                at.text = text + at.start;
                at.row = pt.row, at.col = pt.column;
                const PyChunk *hit = py_chunk_find(cache, &at, &L.imports);
                if (hit) {
                    py_chunk_splice(hit, &at, m, &L.imports, &L.B.next_region, walk);
                    if (stats) stats->chunks_reused++;
                    continue;
                }
            }
            PyChunkMark mk;
            py_chunk_mark(m, L.B.next_region, &mk);
            if (walk) py__collect_comments(m, c, &L.cursor);
            if (!stmt) continue;
            PyChunkLog log;
            Arena *own = NULL;
            if (keepable) {
                /* the statement's strings go to its own arena, which the cache keeps */
                own = gl_malloc(sizeof *own);
                arena_init_sized(own, 1024);
                py_chunk_log_init(&log, own, &cache->var_local);
                L.B.arena = own;
                L.log = &log;
            }
            push_work(&L, W_STMT, c);
            py__run(&L, &s);
            if (stats) stats->chunks_lowered++;
            if (keepable) {
                L.B.arena = m->arena;
                L.log = NULL;
                if (!py__top_level(&L)) log.ok = false;
                py_chunk_save(cache, &at, &mk, &log, own, m, L.B.next_region, walk);
            }
        }
        L.kids.len = first;
    }
    /* the module's own variables: nothing is global from its point of view */
    Work endw;
    memset(&endw, 0, sizeof endw);
    L.B.funcs.len = 1;
    py__func_end(&L, &endw);
    /* the modules of `from X import *`, in order (an import replayed from a kept statement too) */
    for (uint32_t i = 0; i < L.imports.locals.len; i++) {
        const char *q = L.imports.quals.items[i];
        if (!q) continue; /* `from __future__ import annotations` */
        bool dup = false;
        for (uint32_t j = 0; j < m->star_imports.len && !dup; j++) dup = !strcmp(m->star_imports.items[j], q);
        if (L.imports.locals.items[i][0] == '*' && !dup && m->star_imports.len < 64)
            array_push(&m->star_imports, arena_strdup(m->arena, q));
        else if (L.imports.locals.items[i][0] != '*' && strchr(q, '.') && m->imported.len < 256)
            array_push(&m->imported, arena_strdup(m->arena, q));
    }
    py__star_names(m);
    /* Functions whose END never ran (impossible without a bug) still have consistent arrays. */
    array_free(&s);
    array_free(&L.work), array_free(&L.kids);
    ir_build_free(&L.B);
    py_imports_free(&L.imports);
    if (cache) py_chunk_cache_end(cache);
    ts_tree_cursor_delete(&L.cursor);
    if (keep) {
        if (keep->tree) ts_tree_delete(keep->tree);
        keep->tree = tree; /* ownership moves to keep */
    } else {
        ts_tree_delete(tree);
    }
    uint64_t t2 = now_ns();
    if (stats) stats->n_nodes = m->n_nodes, stats->parse_ns = t1 - t0, stats->lower_ns = t2 - t1;
    return 0;
}
