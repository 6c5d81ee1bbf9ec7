/* The rule SDK: reporting findings (messages, related locations, hints, traces), the words that
 * differ between Python and C++, and the per-step question (rule_runs_per_step) the GL3xx rules
 * share. Building fixes is rules/rule_fix.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/strbuf.h"
#include "ir/api.h"
#include "rules/rule.h"

static bool rule__ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

static uint32_t rule__once_per_outer(RuleCtx *ctx, const IrFunc *f, uint32_t op);

const char *rule_say(const RuleCtx *c, const char *text)
{
    if (!c->cxx || !text || (!strstr(text, ".item()") && !strstr(text, "self."))) return text;
    StrBuf b;
    sb_init(&b);
    for (const char *p = text; *p;) {
        if (!strncmp(p, ".item()", 7)) sb_puts(&b, ".item().toFloat()"), p += 7;
        else if (!strncmp(p, "self.", 5) && (p == text || !rule__ident_char(p[-1]))) sb_puts(&b, "this->"), p += 5;
        else sb_putc(&b, *p++);
    }
    const char *r = arena_strndup(c->arena, b.data, b.len);
    sb_free(&b);
    return r;
}

Diag *rule_report(RuleCtx *c, Span span, Severity sev, const char *fmt, ...)
{
    Diag d;
    memset(&d, 0, sizeof d);
    d.rule = c->rule;
    d.severity = sev;
    d.span = span;
    va_list ap;
    va_start(ap, fmt);
    d.message = rule_say(c, arena_vprintf(c->arena, fmt, ap));
    va_end(ap);
    array_push(c->out, d);
    return array_back(c->out);
}

void rule_related(RuleCtx *c, Diag *d, Span span, const char *fmt, ...)
{
    Related *r = ARENA_NEW_N(c->arena, Related, d->n_related + 1);
    if (d->n_related) memcpy(r, d->related, sizeof(Related) * d->n_related);
    va_list ap;
    va_start(ap, fmt);
    r[d->n_related].span = span;
    r[d->n_related].message = rule_say(c, arena_vprintf(c->arena, fmt, ap));
    va_end(ap);
    d->related = r;
    d->n_related++;
}

void rule_hint(RuleCtx *c, Diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    d->hint = rule_say(c, arena_vprintf(c->arena, fmt, ap));
    va_end(ap);
}

void rule_trace_value(RuleCtx *c, Diag *d, const IrFunc *f, const char *role, uint32_t op, const AVal *v)
{
    if (!c->trace) return;
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s", role);
    if (op < f->ops.len) sb_printf(&sb, " '%s' (line %u)", rule_text(c, f, op), f->ops.items[op].span.row + 1);
    sb_printf(&sb, ": %s, %s", df_kind_name(v->kind), df_grad_name(v->grad));
    if (v->kind == VK_CONTAINER) sb_printf(&sb, ", items %s", df_grad_name(v->elem));
    if (v->src != IR_NONE && v->src < f->ops.len)
        sb_printf(&sb, "; graph from '%s' (line %u)", rule_text(c, f, v->src), f->ops.items[v->src].span.row + 1);
    if (v->carried == CARRIED_CALLS) sb_puts(&sb, "; kept in an attribute from one call to the next");
    else if (v->carried != IR_NONE && v->carried < f->loops.len)
        sb_printf(&sb, "; carried around the loop at line %u", f->loops.items[v->carried].span.row + 1);
    if (v->flags & VF_MODEL_OUT) sb_puts(&sb, "; model output");
    if (v->flags & VF_ZERO_DIM) sb_puts(&sb, "; 0-dim");
    if (v->flags & VF_OUTER) sb_puts(&sb, "; lives outside this call");
    if (v->flags & VF_OPAQUE) sb_puts(&sb, "; returned by an imported function gradleak was not given");
    rule_trace(c, d, "%s", sb.data);
    sb_free(&sb);
}

void rule_trace(RuleCtx *c, Diag *d, const char *fmt, ...)
{
    if (!c->trace) return;
    va_list ap;
    va_start(ap, fmt);
    const char *line = arena_vprintf(c->arena, fmt, ap);
    va_end(ap);
    d->trace = d->trace ? arena_printf(c->arena, "%s\n%s", d->trace, line) : line;
}

void rule_fix(RuleCtx *c, Diag *d, FixSafety safety, const char *msg, uint32_t start, uint32_t end, const char *text)
{
    Edit e = {start, end, text};
    rule_fix_edits(c, d, safety, msg, &e, 1); /* one path, so the C++ check holds for every fix */
}

const char *rule_text(RuleCtx *c, const IrFunc *f, uint32_t op)
{
    const char *t = ir_span_text(c->m, f->ops.items[op].span, c->arena);
    if (strlen(t) > 60) t = arena_printf(c->arena, "%.57s...", t);
    return t;
}

uint32_t rule_line(Span s) { return s.row + 1; }

const char *rule_no_grad_name(const RuleCtx *c) { return c->cxx ? "torch::NoGradGuard" : "torch.no_grad()"; }

const char *rule_no_grad_stmt(const RuleCtx *c)
{
    return c->cxx ? "`torch::NoGradGuard no_grad;` (or `c10::InferenceMode guard;`) at the top of the block"
                  : "`with torch.no_grad():`";
}

const char *rule_true(const RuleCtx *c) { return c->cxx ? "true" : "True"; }

const char *rule_func_name(RuleCtx *c, const char *qualname)
{
    if (!c->cxx || !strchr(qualname, '.')) return qualname;
    StrBuf b;
    sb_init(&b);
    for (const char *p = qualname; *p; p++) {
        if (*p == '.') sb_puts(&b, "::");
        else sb_putc(&b, *p);
    }
    const char *r = arena_strndup(c->arena, b.data, b.len);
    sb_free(&b);
    return r;
}

void rule_report_per_step_calls(RuleCtx *c, const char *qual, const PerStepText *t)
{
    for (uint32_t fi = 0; fi < c->m->funcs.len; fi++) {
        const IrFunc *f = c->m->funcs.items[fi];
        for (uint32_t i = 0; i < f->ops.len; i++) {
            const IrOp *o = &f->ops.items[i];
            if (o->kind != IR_CALL || !o->qual || strcmp(o->qual, qual) != 0) continue;
            uint32_t loop;
            if (!rule_runs_per_step(c, f, i, &loop)) continue;
            Diag *d;
            /* C++ spells it many ways (c10::cuda::CUDACachingAllocator::emptyCache()): name the call written */
            const char *call = c->cxx ? rule_text(c, f, i) : t->call;
            if (loop != IR_NONE) {
                const IrLoop *l = &f->loops.items[loop];
                /* once per optimizer step, under a test that picks one micro-batch of the inner loop */
                bool once = rule__once_per_outer(c, f, i) == loop;
                const char *kind = once ? "step" : df_loop_kind_name(l->kind);
                d = rule_report(c, o->span, SEV_WARNING, "`%s` runs every iteration of the %s loop at line %u%s: %s",
                                call, kind, rule_line(l->span),
                                once ? " (once per step: the test picks one micro-batch of each)"
                                : t->module_note && l->in_module_method ? " (inside a Module method, so every step)" : "",
                                t->why_loop);
                rule_related(c, d, l->span, "the %s loop", kind);
            } else {
                d = rule_report(c, o->span, SEV_WARNING, "`%s` runs every step: `%s` %s%s", call,
                                rule_func_name(c, f->qualname),
                                !strcmp(f->name, "training_step") && f->cls != IR_NONE
                                    ? "is Lightning's training_step, called once per batch"
                                    : "is called from a training loop",
                                t->why_func);
            }
            rule_hint(c, d, "%s", t->hint);
            uint32_t rs, re;
            const char *text;
            if ((o->flags & IR_F_STMT) && rule_stmt_removal(c, o->span, &rs, &re, &text))
                rule_fix(c, d, FIX_UNSAFE, arena_printf(c->arena, "Remove `%s`", call), rs, re, text);
        }
    }
}

/* The if/try regions of a function, built once per function on first use (a scan from the top of
 * the function per question made a module with thousands of per-step calls quadratic): each region
 * with its kind, condition, first else/except op and the region around it, and for every op the
 * innermost region open at it. Up to 256 levels, as deep as the old scan looked. */
typedef struct RuleRegion {
    uint8_t kind;    /* IR_IF or IR_TRY */
    uint32_t op;     /* the IF or TRY op */
    uint32_t cond;   /* the if's condition op */
    uint32_t else_op; /* the first else/except op seen while it was innermost, or IR_NONE */
    uint32_t parent; /* the region around it, or IR_NONE */
} RuleRegion;

typedef struct RuleRegions {
    RuleRegion *reg;
    uint32_t *open;            /* [op]: the innermost region open before op, or IR_NONE */
    uint8_t *stored_in_handler; /* [var]: assigned in an except handler (an error flag: `oom = True`) */
} RuleRegions;

static const RuleRegions *rule__regions(RuleCtx *c, const IrFunc *f)
{
    if (!c->regions) {
        c->regions = ARENA_NEW_N(c->scratch, RuleRegions *, c->m->funcs.len + 1);
        memset(c->regions, 0, sizeof *c->regions * (c->m->funcs.len + 1));
    }
    if (f->index < c->m->funcs.len && c->regions[f->index]) return c->regions[f->index];
    RuleRegions *r = ARENA_NEW(c->scratch, RuleRegions);
    uint32_t nops = f->ops.len, nreg = 0;
    for (uint32_t i = 0; i < nops; i++) nreg += f->ops.items[i].kind == IR_IF || f->ops.items[i].kind == IR_TRY;
    r->reg = ARENA_NEW_N(c->scratch, RuleRegion, nreg + 1);
    r->open = ARENA_NEW_N(c->scratch, uint32_t, nops + 1);
    r->stored_in_handler = ARENA_NEW_N(c->scratch, uint8_t, f->vars.len + 1);
    memset(r->stored_in_handler, 0, f->vars.len + 1);
    uint32_t stack[256], n = 0, k = 0, depth_try = 0;
    bool in_handler = false;
    for (uint32_t i = 0; i < nops; i++) {
        const IrOp *o = &f->ops.items[i];
        r->open[i] = n ? stack[n - 1] : IR_NONE;
        switch (o->kind) {
        case IR_IF: case IR_TRY:
            if (n < ARRAY_LEN(stack)) {
                r->reg[k] = (RuleRegion){o->kind, i, o->a, IR_NONE, n ? stack[n - 1] : IR_NONE};
                stack[n++] = k++;
            }
            break;
        case IR_ELSE: case IR_EXCEPT:
            if (n && r->reg[stack[n - 1]].else_op == IR_NONE) r->reg[stack[n - 1]].else_op = i;
            break;
        case IR_END_IF: case IR_END_TRY:
            if (n) n--;
            break;
        default: break;
        }
        if (o->kind == IR_TRY) depth_try++;
        else if (o->kind == IR_EXCEPT) in_handler = true;
        else if (o->kind == IR_END_TRY) { if (depth_try) depth_try--; in_handler = false; }
        else if (o->kind == IR_STORE && in_handler && o->var < f->vars.len) r->stored_in_handler[o->var] = 1;
    }
    if (f->index < c->m->funcs.len) c->regions[f->index] = r;
    return r;
}

/* Is op on a path that runs rarely: an except handler, a branch taken on an error flag set in a
 * handler (`if oom:`), or under an equality test that picks one iteration (`if updates == 0:`)?
 * Periodic tests (`if step % 100 == 0`) are not rare. */
static bool rule__rare_path_of(RuleCtx *ctx, const IrFunc *f, uint32_t op, bool errors_only);

static bool rule__rare_path(RuleCtx *ctx, const IrFunc *f, uint32_t op) { return rule__rare_path_of(ctx, f, op, false); }

bool rule_on_error_path(RuleCtx *c, const IrFunc *f, uint32_t op) { return rule__rare_path_of(c, f, op, true); }

/* Is lhs the index of a loop around op that runs inside a loop that itself steps an optimizer
 * (`for i, sample in enumerate(samples): if i == 1: ...` over the micro-batches of one accumulated
 * step)? One iteration of the inner loop recurs every step. */
static uint32_t rule__inner_index_loop(const IrFunc *f, const IrOp *lhs, uint32_t op);

static bool rule__index_of_inner_loop(const IrFunc *f, const IrOp *lhs, uint32_t op)
{
    return rule__inner_index_loop(f, lhs, op) != IR_NONE;
}

/* (the inner loop whose index lhs is, or IR_NONE) */
static uint32_t rule__inner_index_loop(const IrFunc *f, const IrOp *lhs, uint32_t op)
{
    if (!lhs || lhs->kind != IR_LOAD || lhs->var == IR_NONE) return IR_NONE;
    for (uint32_t li = ir_op_loop(f, op), guard = 0; li != IR_NONE && guard < 16; li = f->loops.items[li].parent, guard++) {
        const IrLoop *l = &f->loops.items[li];
        bool index = false;
        for (uint32_t k = l->op + 1; k < l->end && k < l->op + 8 && !index; k++) {
            const IrOp *st = &f->ops.items[k];
            index = st->kind == IR_STORE && st->var == lhs->var && st->a != IR_NONE &&
                    (f->ops.items[st->a].kind == IR_NEXT || f->ops.items[st->a].kind == IR_UNPACK);
        }
        if (!index) continue;
        if (l->parent == IR_NONE || !l->has_backward) return IR_NONE;
        if (f->loops.items[l->parent].has_opt_step) return li;
        /* (`scaler.step(optimizer)` with an optimizer passed in: a step() call of the outer body) */
        const IrLoop *p = &f->loops.items[l->parent];
        for (uint32_t k = p->op + 1; k < p->end; k++) {
            const char *m = f->ops.items[k].kind == IR_CALL && ir_op_loop(f, k) == l->parent ? ir_call_method(f, k) : NULL;
            if (m && (api_method(m).flags & M_STEP)) return li;
        }
        return IR_NONE;
    }
    return IR_NONE;
}

/* The loop that op runs once per iteration of because a test of an inner loop's index picks one
 * micro-batch (rule__index_of_inner_loop): the outer loop; IR_NONE when op is not under one. */
static uint32_t rule__once_per_outer(RuleCtx *ctx, const IrFunc *f, uint32_t op)
{
    const RuleRegions *rr = rule__regions(ctx, f);
    for (uint32_t k = rr->open[op], guard = 0; k != IR_NONE && guard < 256; k = rr->reg[k].parent, guard++) {
        const RuleRegion *g = &rr->reg[k];
        if (g->kind != IR_IF || (g->else_op != IR_NONE && g->else_op < op) || g->cond == IR_NONE) continue;
        const IrOp *c = &f->ops.items[g->cond];
        if (c->kind != IR_COMPARE || !c->name || strcmp(c->name, "==") || c->a == IR_NONE) continue;
        uint32_t li = rule__inner_index_loop(f, &f->ops.items[c->a], op);
        if (li != IR_NONE) return f->loops.items[li].parent;
    }
    return IR_NONE;
}

/* errors_only: an except handler or a flag set in one (`if oom:`), not `if step == 0` */
static bool rule__rare_path_of(RuleCtx *ctx, const IrFunc *f, uint32_t op, bool errors_only)
{
    if (op >= f->ops.len) return false;
    const RuleRegions *rr = rule__regions(ctx, f);
    for (uint32_t k = rr->open[op], guard = 0; k != IR_NONE && guard < 256; k = rr->reg[k].parent, guard++) {
        const RuleRegion *g = &rr->reg[k];
        bool in_else = g->else_op != IR_NONE && g->else_op < op;
        if (g->kind == IR_TRY && in_else) return true;
        if (g->kind != IR_IF || in_else || g->cond == IR_NONE) continue;
        const IrOp *c = &f->ops.items[g->cond];
        /* `a and b == 0`: look at both operands of a boolean operator */
        if (c->kind == IR_SELECT && c->b != IR_NONE && f->ops.items[c->b].kind == IR_COMPARE) c = &f->ops.items[c->b];
        else if (c->kind == IR_SELECT && c->a != IR_NONE && f->ops.items[c->a].kind == IR_COMPARE) c = &f->ops.items[c->a];
        if (!errors_only && c->kind == IR_COMPARE && c->name && (!strcmp(c->name, "==") || !strcmp(c->name, "is"))) {
            const IrOp *lhs = c->a != IR_NONE ? &f->ops.items[c->a] : NULL;
            if (!(lhs && lhs->kind == IR_BINOP && lhs->aux == BIN_MOD) && !rule__index_of_inner_loop(f, lhs, op)) return true;
        }
        /* a flag assigned in an except handler */
        if (c->kind == IR_LOAD && c->var != IR_NONE && c->var < f->vars.len && rr->stored_in_handler[c->var]) return true;
    }
    return false;
}

bool rule_on_periodic_path(RuleCtx *ctx, const IrFunc *f, uint32_t op, uint32_t loop)
{
    if (op >= f->ops.len || loop >= f->loops.len) return false;
    const RuleRegions *rr = rule__regions(ctx, f);
    for (uint32_t k = rr->open[op], guard = 0; k != IR_NONE && guard < 256; k = rr->reg[k].parent, guard++) {
        const RuleRegion *g = &rr->reg[k];
        if (g->op <= f->loops.items[loop].op) break; /* opened outside the loop */
        if (g->kind != IR_IF || g->cond == IR_NONE || (g->else_op != IR_NONE && g->else_op < op)) continue;
        uint32_t tests[2] = {g->cond, IR_NONE};
        const IrOp *c = &f->ops.items[g->cond];
        if (c->kind == IR_SELECT) tests[0] = c->a, tests[1] = c->b;
        for (int t = 0; t < 2; t++) {
            const IrOp *e = tests[t] != IR_NONE ? &f->ops.items[tests[t]] : NULL;
            if (!e || e->kind != IR_COMPARE || !e->name || strcmp(e->name, "==") || e->a == IR_NONE) continue;
            const IrOp *lhs = &f->ops.items[e->a];
            if (lhs->kind == IR_BINOP && lhs->aux == BIN_MOD) return true;
        }
    }
    return false;
}

bool rule_in_branch_of_loop(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t loop)
{
    if (op >= f->ops.len || loop >= f->loops.len) return false;
    const RuleRegions *rr = rule__regions(c, f);
    /* regions nest: the innermost one open at op was opened inside the loop when it starts after it */
    return rr->open[op] != IR_NONE && rr->reg[rr->open[op]].op > f->loops.items[loop].op;
}

/* Does a function of the file that trains call f where it trains (a trainer's get_loss(), summed
 * over sampled models and returned for the caller's backward)? Every function's answer comes from
 * one pass over the file, on the first question. */
static bool rule__called_by_trainer(RuleCtx *c, const IrFunc *f)
{
    if (!c->trainer_called) {
        c->trainer_called = ARENA_NEW_N(c->scratch, uint8_t, c->m->funcs.len + 1);
        memset(c->trainer_called, 0, c->m->funcs.len + 1);
        for (uint32_t gi = 0; gi < c->m->funcs.len; gi++) {
            const IrFunc *g = c->m->funcs.items[gi];
            const FuncFacts *gf = &c->fx->funcs[gi];
            if (!gf->analysed || !(gf->trains || df_func_backprops(c->fx, gi))) continue;
            for (uint32_t i = 0; i < g->ops.len; i++) {
                if (g->ops.items[i].kind != IR_CALL || !gf->reached[i]) continue;
                uint32_t t = df_call_target(c->m, c->fx, g, i);
                if (t == IR_NONE || t == gi || t >= c->m->funcs.len) continue;
                /* called where the caller trains: in a loop that steps, or in a function of one step */
                uint32_t li = ir_op_loop(g, i);
                const IrLoop *l = li != IR_NONE ? &g->loops.items[li] : NULL;
                if (l ? (l->has_backward || l->has_opt_step || l->has_step_call) : gf->trains) c->trainer_called[t] = 1;
            }
        }
    }
    return c->trainer_called[f->index] != 0;
}

bool rule_returns_graph_for_training(RuleCtx *c, const IrFunc *f)
{
    const FuncFacts *ff = &c->fx->funcs[f->index];
    uint8_t g = GL_MAX(ff->ret.grad, ff->ret.elem);
    /* any function that returns a live graph to a caller of the file that trains */
    if (g == G_LIVE && !ff->trains && f->index != 0 && rule__called_by_trainer(c, f)) return true;
    if (!ir_func_in_module_class(c->m, f)) return false;
    /* a method that switches a model to eval() first generates for inference: no caller trains on it */
    for (uint32_t i = 0; i < f->ops.len; i++) {
        const char *mn = f->ops.items[i].kind == IR_CALL && ff->reached[i] ? ir_call_method(f, i) : NULL;
        if (mn && (api_method(mn).flags & M_EVAL)) return false;
    }
    /* "maybe" from what it computes, not only from what it was given */
    return g == G_LIVE || (g == G_MAY && ((ff->ret.flags & VF_MODEL_OUT) || !ff->ret.pmask));
}

/* Does loop li step an environment (`env.step(action)`: step() with one argument, on an object
 * that is no optimizer, module, tensor or container)? */
bool rule_steps_env(RuleCtx *c, const IrFunc *f, uint32_t li)
{
    const IrLoop *l = &f->loops.items[li];
    const FuncFacts *ff = &c->fx->funcs[f->index];
    for (uint32_t i = l->op + 1; i < l->end; i++) {
        const IrOp *o = &f->ops.items[i];
        if (o->kind != IR_CALL || ir_op_loop(f, i) != li || !ff->reached[i] || o->nargs != 1) continue;
        const char *m = ir_call_method(f, i);
        uint32_t r = m ? ir_call_receiver(f, i) : IR_NONE;
        if (r == IR_NONE || !(api_method(m).flags & M_STEP) || df_is_optimizer_step(c->fx, f, i)) continue;
        AVal act = ff->val[f->args.items[o->args]];
        act.flags |= VF_MODEL_OUT; /* whatever the action is: the receiver decides */
        if (df_env_step_shape(api_method(m).flags, 1, &act, &ff->val[r])) return true;
    }
    return false;
}

bool rule_runs_per_step(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t *loop)
{
    *loop = IR_NONE;
    if (!c->fx->funcs[f->index].reached[op]) return false;
    if (rule__rare_path(c, f, op)) return false;
    uint32_t l = ir_op_loop(f, op), outer = rule__once_per_outer(c, f, op);
    if (outer != IR_NONE) {
        *loop = outer;
        return true;
    }
    for (uint32_t k = l; k != IR_NONE; k = f->loops.items[k].parent)
        if (f->loops.items[k].kind == LOOP_STEP) {
            *loop = k;
            return true;
        }
    if (l != IR_NONE && f->loops.items[l].in_module_method) {
        *loop = l;
        return true;
    }
    return c->fx->funcs[f->index].runs_per_step;
}

bool rule_bound_before(const IrFunc *f, uint32_t from, uint32_t before, uint32_t var)
{
    struct { uint8_t kind; bool entry, then, in_else; } st[64];
    uint32_t depth = 0;
    bool assigned = false;
    for (uint32_t k = from; k < before && k < f->ops.len; k++) {
        const IrOp *o = &f->ops.items[k];
        switch ((IrOpKind)o->kind) {
        case IR_STORE: case IR_SET_ATTR: /* (not `acc = acc * 0.9`: that carries the old value on) */
            if (o->var == var && !df_expr_reads(f, o->kind == IR_STORE ? o->a : o->b, &var, 1)) assigned = true;
            break;
        case IR_IF: case IR_LOOP: case IR_TRY:
            if (depth == ARRAY_LEN(st)) return false;
            st[depth].kind = o->kind, st[depth].entry = assigned, st[depth].then = false, st[depth].in_else = false;
            depth++;
            break;
        case IR_ELSE: case IR_EXCEPT:
            if (depth && !st[depth - 1].in_else) {
                st[depth - 1].then = assigned, st[depth - 1].in_else = true;
                assigned = st[depth - 1].entry;
            } else if (depth) { /* another handler */
                st[depth - 1].then = st[depth - 1].then && assigned;
                assigned = st[depth - 1].entry;
            }
            break;
        case IR_END_IF: case IR_END_LOOP: case IR_END_TRY:
            if (!depth) return false;
            depth--;
            assigned = st[depth].entry ||
                       (o->kind != IR_END_LOOP && st[depth].in_else && st[depth].then && assigned);
            break;
        default:
            break;
        }
    }
    return assigned;
}
