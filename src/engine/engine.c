/* The per-file driver: parse, lower, analyse, run the enabled rules, apply suppressions, sort. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/crash.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "engine/engine.h"
#include "rules/rule.h"
#include "engine/suppress.h"
#include "front/cxx/cx.h"
#include "front/py/py.h"
#include "ir/api.h"

typedef void (*RuleFn)(RuleCtx *);

static const RuleFn rule_fns[RULE_COUNT] = {
#define RULE(id, name, sev, flags, measure, since, summary) rule_##id,
#include "rules/rules.def"
#undef RULE
};

void lint_options_default(LintOptions *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < RULE_COUNT; i++) o->rules.on[i] = 1;
}

static int diag_cmp(const void *pa, const void *pb)
{
    const Diag *a = pa, *b = pb;
    if (a->span.start != b->span.start) return a->span.start < b->span.start ? -1 : 1;
    if (a->rule != b->rule) return a->rule < b->rule ? -1 : 1;
    return 0;
}

static bool lang_skip_binary(const char *src, size_t len)
{
    /* a NUL byte in the first 8 KiB that is not in a comment: treated as binary, like git does */
    size_t n = len < 8192 ? len : 8192;
    return memchr(src, 0, n) != NULL && memchr(src, '\n', n) == NULL;
}

/* What rules share between the languages is written the Python way; in C++ a 0-dim tensor's value
 * is `.item().toFloat()` (`.item()` returns a c10::Scalar, which does not add to a float; not
 * `.item<float>()`, which needs `.template` where the tensor's type is dependent), and the
 * front end's `self.x` (a member, implicit or through this) is `this->x`. Rules word the rest for
 * C++ themselves (rule_no_grad_name, rule_func_name). */
/* GRADLEAK_DEBUG_CXX (the command line reads it): print where each C++ file's time goes */
static bool engine_cxx_timing;

void engine_set_cxx_timing(bool on) { engine_cxx_timing = on; }

SourceLang engine_lang_of(const char *path)
{
    static const char *const exts[] = {".cpp", ".cc", ".cxx", ".cu", ".c++", ".hpp", ".hh", ".hxx", ".cuh", ".h"};
    size_t n = strlen(path);
    for (size_t i = 0; i < ARRAY_LEN(exts); i++) {
        size_t e = strlen(exts[i]);
        if (n > e && !strcmp(path + n - e, exts[i])) return LANG_CXX;
    }
    return LANG_PYTHON;
}

bool engine_cxx_available(const char **why) { return cx_available(why); }

uint64_t engine_cxx_key(const char *path, const LintOptions *o)
{
    CxConfig cc = {o ? o->cxx_compdb : NULL, o ? o->cxx_pch_dir : NULL};
    return cx_config_key(path, &cc);
}

bool engine_deps_fresh(const char *deps) { return !deps || cx_deps_fresh(deps); }

void engine_collect_comments(IrModule *m, SourceLang lang)
{
    if (lang == LANG_CXX) cx_collect_comments(m);
    else py_lower(m, 0, NULL);
}

int engine_lower(IrModule *m, SourceLang lang, const LintOptions *o)
{
    if (lang == LANG_PYTHON) return py_lower(m, 0, NULL);
    CxConfig cc = {o ? o->cxx_compdb : NULL, o ? o->cxx_pch_dir : NULL};
    CxResult cr;
    return cx_lower(m, &cc, &cr);
}

/* The methods top-level class ci inherits from base classes of the file and does not override
 * (into out, at most cap; counted when out is NULL). */
static uint32_t engine__inherited(const IrModule *m, uint32_t ci, uint32_t *out, uint32_t cap)
{
    const IrClass *c = m->classes.items[ci];
    if (!c->bases.len || !c->methods.len || m->funcs.items[c->methods.items[0]]->parent != 0) return 0;
    uint32_t n = 0, cur = ci;
    for (int depth = 0; depth < 8; depth++) {
        uint32_t next = ir_class_local_base(m, cur);
        if (next == IR_NONE || next == ci) break;
        const IrClass *base = m->classes.items[next];
        for (uint32_t i = 0; i < base->methods.len; i++) {
            uint32_t g = base->methods.items[i];
            if (g == base->init || ir_class_method(m, ci, m->funcs.items[g]->name) != g) continue;
            if (out && n < cap) out[n] = g;
            n++;
        }
        cur = next;
    }
    return out && n > cap ? cap : n;
}

/* Per loop of function fi, the first op of its body (nested loops included) that trains: a
 * backward, an optimizer step, or a call of a function that trains or backpropagates (of this file
 * or another's); UINT32_MAX where none does. NULL when fi has no loop. Freed by the caller. */
static uint32_t *engine__first_training_ops(const IrModule *m, const Facts *fx, uint32_t fi)
{
    const IrFunc *f = m->funcs.items[fi];
    const FuncFacts *ff = &fx->funcs[fi];
    if (!f->loops.len || !ff->analysed) return NULL;
    uint32_t *first = gl_malloc(sizeof *first * f->loops.len);
    for (uint32_t li = 0; li < f->loops.len; li++) first[li] = UINT32_MAX;
    for (uint32_t op = 0; op < f->ops.len; op++) {
        if (f->ops.items[op].kind != IR_CALL || !ff->reached[op]) continue;
        bool trains = df_call_trains(fx, f, op, true);
        for (uint32_t l = trains ? ir_op_loop(f, op) : IR_NONE; l != IR_NONE; l = f->loops.items[l].parent)
            if (first[l] == UINT32_MAX) first[l] = op;
    }
    return first;
}

/* What other files linted with this one need from it (its functions' summaries), and what it needs
 * from them (the imported names it calls). */
static void engine__project_facts(const IrModule *m, const Facts *fx, LintResult *out)
{
    /* a method a class inherits from a base class of the file is also the subclass's ("Net#test_"
     * for `class Net(BasicModel)`): another file calls it on a Net */
    uint32_t n_inherited = 0;
    for (uint32_t ci = 0; ci < m->classes.len; ci++) n_inherited += engine__inherited(m, ci, NULL, 0);
    out->exports = ARENA_NEW_N(&out->arena, ExportedFunc, m->funcs.len + n_inherited + 1);
    for (uint32_t ci = 0; ci < m->classes.len && n_inherited; ci++) {
        uint32_t inh[64];
        uint32_t n = engine__inherited(m, ci, inh, ARRAY_LEN(inh));
        for (uint32_t k = 0; k < n; k++) {
            ExportedFunc *e = &out->exports[out->n_exports];
            const char *mname = NULL;
            if (!df_export_method(fx, inh[k], &e->summary, &mname)) continue;
            e->name = arena_printf(&out->arena, "%s#%s", m->classes.items[ci]->name, m->funcs.items[inh[k]]->name);
            out->n_exports++;
        }
    }
    for (uint32_t fi = 1; fi < m->funcs.len; fi++) {
        ExportedFunc *e = &out->exports[out->n_exports];
        /* C++: free functions and methods under their C++ names ("::ns::Class::method") */
        const char *key = m->funcs.items[fi]->cxx_key;
        const char *mname = NULL; /* Python: a method of a top-level class, as "Class#method" */
        if (key ? !df_export_cxx(fx, fi, &e->summary)
                : !df_export_summary(fx, fi, &e->summary) && !df_export_method(fx, fi, &e->summary, &mname))
            continue;
        e->name = arena_strdup(&out->arena, key ? key : mname ? mname : m->funcs.items[fi]->name);
        out->n_exports++;
    }
    StrMap seen;
    strmap_init(&seen);
    Array(ImportedCall) calls;
    array_init(&calls);
    for (uint32_t fi = 0; fi < m->funcs.len; fi++) {
        const IrFunc *f = m->funcs.items[fi];
        const FuncFacts *ff = &fx->funcs[fi];
        uint32_t *first_train = engine__first_training_ops(m, fx, fi);
        for (uint32_t op = 0; op < f->ops.len; op++) {
            const IrOp *o = &f->ops.items[op];
            /* (empty_cache(), gc.collect(): another file's step loop calling its functions makes
             * findings, GL301/GL302) */
            if (o->kind == IR_CALL && o->qual && (!strcmp(o->qual, "torch.cuda.empty_cache") || !strcmp(o->qual, "gc.collect")))
                out->step_costly = true;
            if (o->kind != IR_CALL || o->a == IR_NONE || !ff->reached[op]) continue;
            const char *q = f->ops.items[o->a].qual;
            char mbuf[256];
            uint32_t recv = q ? IR_NONE : ir_call_receiver(f, op);
            /* a method of an object of an imported class: "utils.Meter#add"; calling the object
             * runs its forward (`criterion(out, y)`): "utils.DiceLoss#forward" */
            bool listed = false; /* "#update": asked for only as a training call (GL108) */
            if (recv != IR_NONE) q = df_method_qual(fx, &ff->val[recv], ir_call_method(f, op), mbuf, sizeof mbuf);
            else if (!q && ff->val[o->a].kind == VK_OBJECT && REF_IS_EXTERN(ff->val[o->a].ref))
                q = df_method_qual(fx, &ff->val[o->a], "forward", mbuf, sizeof mbuf);
            if (!q && recv != IR_NONE)
                listed = (q = df_listed_duck_qual(fx, &ff->val[recv], ir_call_method(f, op), mbuf, sizeof mbuf)) != NULL;
            /* calling an object of a plain class runs its __call__ (a loss object held on self:
             * `self.compute_loss(p, t)`) */
            char cbuf[256];
            const char *dunder = NULL;
            if (!f->ops.items[o->a].qual && ff->val[o->a].kind == VK_OBJECT && REF_IS_EXTERN(ff->val[o->a].ref))
                dunder = df_method_qual(fx, &ff->val[o->a], "__call__", cbuf, sizeof cbuf);
            if (!q) q = dunder, dunder = NULL;
            if (!q || !strncmp(q, "torch.", 6)) continue;
            /* the name, and what it is through the star imports before the last (df_ext) */
            char alt[9][256];
            const char *names[9] = {q};
            uint32_t nnames = 1;
            for (uint32_t s = m->star_imports.len - 1; s-- > 0 && nnames < 9;) {
                const char *a = df_star_alternative(m, q, s, alt[nnames], sizeof alt[nnames]);
                if (!a) break;
                names[nnames++] = a;
            }
            if (dunder && nnames < 9) names[nnames++] = dunder;
            /* an object a lowercase helper of another file returned (`model = restore(path)`): its
             * class is unknown, so the method is also the duck-typed "#sketch", for the grad-off
             * callers of the project (project__call_masks) */
            if (recv != IR_NONE && REF_IS_EXTERN(ff->val[recv].ref) && nnames < 9 &&
                REF_EXTERN_INDEX(ff->val[recv].ref) < fx->ext_classes.len &&
                !api_camel_last(fx->ext_classes.items[REF_EXTERN_INDEX(ff->val[recv].ref)])) {
                AVal unknown = {.kind = VK_UNKNOWN, .ref = IR_NONE};
                const char *duck = df_method_qual(fx, &unknown, ir_call_method(f, op), alt[nnames], sizeof alt[nnames]);
                if (duck) names[nnames++] = duck;
            }
            for (uint32_t n = 0; n < nnames; n++) {
                const char *name = names[n];
                uint32_t k = strmap_get(&seen, name, strlen(name));
                if (k == UINT32_MAX) {
                    ImportedCall ic = {.qual = arena_strdup(&out->arena, name)};
                    strmap_put(&seen, ic.qual, strlen(ic.qual), k = calls.len);
                    array_push(&calls, ic);
                }
                if (!calls.items[k].per_step) { /* called once per training step? */
                    bool per_step = ff->runs_per_step;
                    for (uint32_t l = ir_op_loop(f, op); l != IR_NONE && !per_step; l = f->loops.items[l].parent)
                        per_step = f->loops.items[l].kind == LOOP_STEP;
                    calls.items[k].per_step = per_step;
                }
                bool off = df_mode_off(o->mode) || df_mode_off(f->base_mode) || (ff->called_grad_off && o->mode != GRAD_ENABLE);
                if (!listed && off) calls.items[k].grad_off = true;
                /* after a training call of the same loop iteration (`trainer.test(Xt, Yt)` after
                 * `trainer.train(X, Y)`) */
                uint32_t l = ir_op_loop(f, op);
                if (!listed && !off && l != IR_NONE && first_train && first_train[l] < op) calls.items[k].after_train = true;
                for (uint32_t i = 0; i < o->nargs; i++) {
                    if (f->kw.items[o->args + i]) continue;
                    const AVal *a = &ff->val[f->args.items[o->args + i]];
                    if (GL_MAX(a->grad, a->elem) >= G_POST) calls.items[k].graph_arg = true;
                    if (a->kind == VK_MODULE || (a->flags & VF_MAYBE_MODULE)) calls.items[k].module_arg = true;
                }
            }
        }
        gl_free(first_train);
    }
    for (uint32_t k = 0; k < m->imported.len; k++) { /* after the calls: run.c, lint_result_calls */
        const char *name = m->imported.items[k];
        if (!strncmp(name, "torch.", 6) || strmap_get(&seen, name, strlen(name)) != UINT32_MAX) continue;
        ImportedCall ic = {.qual = arena_strdup(&out->arena, name), .import_only = true};
        strmap_put(&seen, ic.qual, strlen(ic.qual), calls.len);
        array_push(&calls, ic);
    }
    out->calls = ARENA_NEW_N(&out->arena, ImportedCall, calls.len ? calls.len : 1);
    if (calls.len) memcpy(out->calls, calls.items, sizeof(ImportedCall) * calls.len);
    out->n_calls = calls.len;
    array_free(&calls);
    strmap_free(&seen);
}

bool lint_result_calls(const LintResult *r)
{
    return r->n_calls && !r->calls[0].import_only; /* the imports come after the calls */
}

struct LintDoc {
    PyTree *tree; /* NULL until a successful parse, and after a reset */
};

LintDoc *lint_doc_new(void) { return gl_calloc(1, sizeof(LintDoc)); }

void lint_doc_free(LintDoc *d)
{
    if (!d) return;
    py_tree_free(d->tree);
    gl_free(d);
}

void lint_doc_edit(LintDoc *d, const char *old_src, size_t old_len, uint32_t start, uint32_t old_end,
                   const char *text, size_t text_len)
{
    py_tree_edit(d->tree, old_src, old_len, start, old_end, text, text_len);
}

void lint_doc_reset(LintDoc *d) { py_tree_reset(d->tree); }

static int engine__lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                        LintResult *out, PyTree **tree);

int engine_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                LintResult *out)
{
    return engine__lint(path, src, len, lang, o, out, NULL);
}

int engine_lint_doc(LintDoc *d, const char *path, const char *src, size_t len, SourceLang lang,
                    const LintOptions *o, LintResult *out)
{
    return engine__lint(path, src, len, lang, o, out, &d->tree);
}

static int engine__lint_file(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                             LintResult *out, PyTree **tree);

/* The crash handler names the file, stage and rule this thread is on (src/base/crash.h). */
static int engine__lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                        LintResult *out, PyTree **tree)
{
    gl_ctx_file(o && o->display_path ? o->display_path : path);
    int rc = engine__lint_file(path, src, len, lang, o, out, tree);
    gl_ctx_file(NULL);
    return rc;
}

/* tree: NULL for a one-shot lint; otherwise the document's kept tree, reused and replaced. */
static int engine__lint_file(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                             LintResult *out, PyTree **tree)
{
    memset(out, 0, sizeof *out);
    arena_init(&out->arena);
    array_init(&out->diags);
    uint32_t max = o->max_bytes ? o->max_bytes : 8u << 20;
    bool lintable = len <= max && lang == LANG_PYTHON && !lang_skip_binary(src, len);
    if (tree && !lintable) {
        /* the kept tree no longer matches any parse we make: drop it */
        py_tree_free(*tree);
        *tree = NULL;
    }
    if (len > max) {
        out->skipped = true;
        out->notes = arena_printf(&out->arena, "skipped: %zu bytes is over the %u-byte limit (--max-file-size)", len, max);
        return 0;
    }
    const char *why = NULL;
    if (lang == LANG_CXX && !cx_available(&why)) {
        out->skipped = true;
        out->cxx = CXX_UNAVAILABLE;
        out->notes = arena_printf(&out->arena, "skipped: %s", why);
        return 0;
    }
    if (lang_skip_binary(src, len)) {
        out->skipped = true;
        out->notes = "skipped: looks like a binary file (NUL bytes, no newline)";
        return 0;
    }
    /* the syntax, IR and facts die with this call; what outlives it (findings, summaries) is in
     * out->arena: a project's results stay small while the whole project is linted */
    Arena scratch;
    arena_init(&scratch);
    IrModule m;
    memset(&m, 0, sizeof m);
    m.arena = &scratch;
    m.path = path;
    m.src = src;
    m.len = len;
    gl_ctx_stage("parse");
    uint64_t budget_ms = o->parse_timeout_ms ? o->parse_timeout_ms : ENGINE_PARSE_TIMEOUT_MS;
    if (lang == LANG_CXX) {
        CxConfig cc = {o->cxx_compdb, o->cxx_pch_dir};
        CxResult cr;
        int crc = cx_lower(&m, &cc, &cr);
        if (crc < 0) {
            ir_module_free(&m);
            arena_free(&scratch);
            out->skipped = true;
            out->notes = crc == -1 ? "skipped: libclang could not be loaded" : "skipped: libclang failed to parse the file";
            return 0;
        }
        out->cxx = cr.mode == CX_MODE_LIBTORCH ? CXX_LIBTORCH : CXX_STUB;
        if (cr.deps) out->deps = arena_strdup(&out->arena, cr.deps);
        if (engine_cxx_timing) /* for speed figures: where a C++ file's time goes */
            fprintf(stderr, "gradleak: cxx: %s: parse %.1f ms (%s%s), lower %.1f ms\n", path, (double)cr.parse_ns / 1e6,
                    cx_mode_name(cr.mode), cr.pch ? ", precompiled header" : "", (double)cr.lower_ns / 1e6);
        if (cr.n_errors || cr.truncated) {
            /* broken or unresolvable code is not a tool failure: clang recovers, we lint its AST */
            out->syntax_error = true;
            out->n_syntax_errors = cr.n_errors; /* fix_file reverts a fix that adds a clang error */
            out->notes = cr.n_errors
                ? arena_printf(&out->arena, "%u clang error%s (first: %s; parsed against %s): linted as far as the AST allows%s%s%s",
                               cr.n_errors, cr.n_errors == 1 ? "" : "s", cr.first_error ? cr.first_error : "?",
                               cx_mode_name(cr.mode), cr.partial ? "; errors in " : "", cr.partial ? cr.partial : "",
                               cr.n_shadow ? arena_printf(&out->arena, "; %u function%s lowered with types partly unknown",
                                                          cr.n_shadow, cr.n_shadow == 1 ? "" : "s")
                                           : "")
                : "nesting deeper than the front end handles: the deepest expressions are not analysed";
        }
    } else {
        int rc = tree ? py_lower_reuse(&m, tree, budget_ms * 1000, NULL) : py_lower(&m, budget_ms * 1000, NULL);
        if (rc < 0) {
            ir_module_free(&m);
            arena_free(&scratch);
            out->skipped = true;
            out->notes = rc == PY_ERR_TIMEOUT
                             ? arena_printf(&out->arena, "skipped: parsing took longer than the %.1f s budget (--parse-timeout)",
                                            (double)budget_ms / 1000.0)
                         : rc == PY_ERR_TREE_LIMIT ? "skipped: a syntax error too large for the parser (over 65,535 "
                                                     "tokens in one broken region); fix the syntax to lint this file"
                                                   : "skipped: the parser failed";
            return 0;
        }
    }
    if (m.error_spans.len) {
        Span e = m.error_spans.items[0];
        for (uint32_t k = 1; k < m.error_spans.len; k++)
            if (m.error_spans.items[k].start < e.start) e = m.error_spans.items[k];
        out->syntax_error = true;
        out->n_syntax_errors = m.error_spans.len;
        out->notes = arena_printf(&out->arena, "syntax error at %u:%u: linted around it", e.row + 1, e.col + 1);
    }
    Facts fx;
    memset(&fx, 0, sizeof fx);
    fx.ext = o->ext;
    fx.ext_ctx = o->ext_ctx;
    fx.ext_per_step = o->ext_per_step;
    fx.ext_grad_off = o->ext_grad_off;
    fx.ext_after_train = o->ext_after_train;
    gl_ctx_stage("dataflow");
    df_analyse(&m, &fx);
    engine__project_facts(&m, &fx, out);
    gl_ctx_stage("rules");
    RuleCtx c = {.m = &m, .fx = &fx, .arena = &out->arena, .out = &out->diags, .scratch = &scratch,
                  .cxx = lang == LANG_CXX, .trace = o->trace, .enabled = &o->rules};
    for (int i = 0; i < RULE_COUNT; i++) {
        if (!o->rules.on[i] || (rule_info((RuleId)i)->flags & RF_AFTER_NOQA)) continue;
        c.rule = (RuleId)i;
        uint32_t before = out->diags.len;
        gl_ctx_rule(rule_info((RuleId)i)->code);
        gl_crash_test_hook(src, len);
        rule_fns[i](&c);
        gl_ctx_rule(NULL);
        if (!o->trace) continue;
        for (uint32_t k = before; k < out->diags.len; k++) {
            Diag *d = &out->diags.items[k];
            /* the loop kind behind the finding: what made the loop a step/feedback loop */
            for (uint32_t fi = 0; fi < m.funcs.len; fi++) {
                const IrFunc *f = m.funcs.items[fi];
                for (uint32_t li = 0; li < f->loops.len; li++) {
                    const IrLoop *l = &f->loops.items[li];
                    if (l->span.row + 1 != d->loop_line) continue;
                    rule_trace(&c, d, "loop at line %u in %s: kind %s (backward: %s, optimizer step: %s, model call: %s, "
                               "feeds outputs back: %s, in a Module method: %s)",
                               d->loop_line, f->qualname, df_loop_kind_name(l->kind), l->has_backward ? "yes" : "no",
                               l->has_opt_step ? "yes" : "no", l->has_model_call ? "yes" : "no",
                               l->has_feedback ? "yes" : "no", l->in_module_method ? "yes" : "no");
                }
            }
        }
    }
    /* syntax errors: findings inside broken regions are dropped (tree-sitter's recovery can invent
     * structure there), the rest of the file stands */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < out->diags.len; i++) {
        const Diag *d = &out->diags.items[i];
        bool in_error = false;
        for (uint32_t k = 0; k < m.error_spans.len && !in_error; k++)
            in_error = d->span.start >= m.error_spans.items[k].start && d->span.start < m.error_spans.items[k].end;
        if (!in_error) out->diags.items[keep++] = *d;
    }
    out->diags.len = keep;
    gl_ctx_stage("suppressions");
    Noqa *noqa;
    c.n_noqa = suppress_apply(&m, &out->arena, &out->diags, &noqa);
    c.noqa = noqa;
    /* the rules about suppressions themselves (GL901), on what they left */
    for (int i = 0; i < RULE_COUNT; i++) {
        if (!o->rules.on[i] || !(rule_info((RuleId)i)->flags & RF_AFTER_NOQA)) continue;
        c.rule = (RuleId)i;
        gl_ctx_rule(rule_info((RuleId)i)->code);
        rule_fns[i](&c);
        gl_ctx_rule(NULL);
    }
    if (m.comments.len) {
        out->comments = ARENA_NEW_N(&out->arena, Span, m.comments.len);
        memcpy(out->comments, m.comments.items, sizeof(Span) * m.comments.len);
        out->n_comments = m.comments.len;
    }
    if (out->diags.len) qsort(out->diags.items, out->diags.len, sizeof(Diag), diag_cmp);
    df_facts_free(&fx);
    ir_module_free(&m);
    arena_free(&scratch);
    return 0;
}

void lint_result_free(LintResult *r)
{
    array_free(&r->diags);
    arena_free(&r->arena);
}
