/* Shared by the files of the grad dataflow (dataflow.c the interpreter, prescan.c the evidence read
 * before it, loops.c the loop kinds and per-function marks after it); not for the rules. */
#ifndef GL_DATAFLOW_INT_H
#define GL_DATAFLOW_INT_H

#include "ir/api.h"
#include "ir/dataflow.h"

/* Abstract values (dataflow.h). A join takes the maximum; joining a value with itself gives it back
 * bit for bit (the environments' trees rely on it to skip what two environments share). */
static inline AVal aval(uint8_t kind, uint8_t grad, uint32_t def)
{
    AVal v;
    memset(&v, 0, sizeof v);
    v.kind = kind, v.grad = grad, v.def = def;
    v.src = v.carried = v.ref = IR_NONE;
    return v;
}

static inline AVal aval_unset(void)
{
    AVal v = aval(VK_UNKNOWN, G_NONE, IR_NONE);
    v.flags = VF_UNSET;
    return v;
}

static inline bool aval_eq(const AVal *a, const AVal *b)
{
    return a->kind == b->kind && a->grad == b->grad && a->elem == b->elem && a->flags == b->flags &&
           a->def == b->def && a->carried == b->carried && a->ref == b->ref && a->pmask == b->pmask &&
           a->cmask == b->cmask;
}

static inline AVal aval_join(const AVal *a, const AVal *b)
{
    if (a->flags & VF_UNSET) return *b;
    if (b->flags & VF_UNSET) return *a;
    AVal r = *a;
    if (a->kind != b->kind) r.kind = VK_UNKNOWN;
    r.grad = GL_MAX(a->grad, b->grad);
    /* a model on one path, something unknown on the other (`self.model = load(path)` or
     * `build(cfg)`): an object that may be a model */
    bool module_or_unknown = (a->kind == VK_MODULE && b->kind == VK_UNKNOWN) || (b->kind == VK_MODULE && a->kind == VK_UNKNOWN);
    r.elem = GL_MAX(a->elem, b->elem);
    r.flags = (uint16_t)((a->flags | b->flags) & ~VF_UNSET);
    if (module_or_unknown) r.kind = VK_OBJECT, r.flags |= VF_MAYBE_MODULE;
    /* 0-dim on both paths; or a Python number or None on one (an accumulator's `total = 0`
     * before the loop that adds 0-dim tensors, `loss = None` when a branch has no loss): neither
     * can be indexed */
    bool zero_a = (a->flags & VF_ZERO_DIM) || ((a->kind == VK_SCALAR || a->kind == VK_NONE) && (b->flags & VF_ZERO_DIM));
    bool zero_b = (b->flags & VF_ZERO_DIM) || ((b->kind == VK_SCALAR || b->kind == VK_NONE) && (a->flags & VF_ZERO_DIM));
    if (!(zero_a && zero_b)) r.flags &= (uint16_t)~VF_ZERO_DIM;
    r.pmask = a->pmask | b->pmask;
    r.cmask = a->cmask | b->cmask;
    if (b->grad > a->grad) r.src = b->src;
    if (a->def != b->def) r.def = GL_MIN(a->def, b->def);
    if (r.carried == IR_NONE) r.carried = b->carried;
    if (a->ref != b->ref) r.ref = IR_NONE;
    return r;
}

/* Environments: a persistent tree over the variables, DF_FAN values per leaf, DF_FAN children per
 * inner node, `height` inner levels. A copy is a pointer; the current environment writes in place
 * only the nodes it made since its last copy (their stamp is the interpreter's epoch), others are
 * copied along the path; a join or a comparison walks only what two environments do not share.
 * So the cost of a region (an if, a loop and its passes) is that of what it changes, not of every
 * variable of the scope: lint time stays linear in a scope of many loops and many names. */
#define DF_FAN_BITS 3
#define DF_FAN (1u << DF_FAN_BITS)
struct DfNode {
    uint32_t stamp; /* the epoch that may write it in place; 0: never */
    uint8_t live;   /* some value below has grad or elem G_LIVE */
    uint8_t live_held; /* ... and is held outside a plain local (df_backedge_live) */
    uint32_t def_lo, def_hi; /* the range of the defining ops of the live values below */
    union {
        struct DfNode *kid[DF_FAN];
        AVal val[DF_FAN];
    } u;
};

typedef struct Region {
    uint8_t kind;   /* IR_IF, IR_TRY, IR_LOOP */
    uint8_t has_else, in_handler, pass;
    uint32_t op;    /* the opening op */
    uint32_t loop;  /* loop id for IR_LOOP */
    DfNode *pre;    /* IF/TRY: env before; LOOP: env at entry */
    DfNode *alt;    /* IF: then-branch end; TRY: try-body end + handler ends; LOOP: header env */
    DfNode *brk;    /* LOOP: join of break envs */
    DfNode *cont;   /* LOOP: join of continue envs */
    bool alt_dead, brk_dead, cont_dead, pre_dead;
} Region;

typedef struct Interp {
    const AVal *hints; /* kinds of the arguments at the first call site, or NULL */
    uint32_t nhints;
    const IrModule *m;
    Facts *fx;
    const IrFunc *f;
    FuncFacts *ff;
    Arena *arena;
    uint32_t nvars;
    DfNode *env;    /* the current environment (df_env.c) */
    uint32_t epoch; /* nodes of env with this stamp are env's own (written in place) */
    uint8_t height; /* of the environments' trees */
    bool dead;
    Array(Region) regions;
    uint8_t *backward_vars; /* variables .backward() is called on somewhere: they carry a graph */
    uint32_t *backward_last; /* per variable: the last op that calls .backward() on it, or IR_NONE */
    uint32_t *attr_head;    /* per variable: its first attribute pseudo-var (self.a of self), or IR_NONE */
    uint32_t *attr_next;    /* per variable: the next attribute pseudo-var of the same base */
    uint8_t *module_vars;   /* variables with module-only methods called on them */
    uint8_t *bw_calls;      /* [op] bit 0: a method call whose result the function differentiates
                             * (`losses = self.model.calculate_loss(b)` ... `loss.backward()`); bit 1:
                             * one whose result an environment's step is handed (a policy's) */
    uint8_t *optim_vars;    /* bit 0: zero_grad() is called on the variable, bit 1: step(); both: an
                             * optimizer (a module has no step(), a scheduler no zero_grad()) */
    int depth;
} Interp;

/* df_env.c: environments. */
void df_env_init(Interp *I);                          /* env: every variable unset */
const AVal *df_env_at(const DfNode *e, uint8_t height, uint32_t v);
void df_env_set(Interp *I, uint32_t v, AVal val);     /* in the current environment */
DfNode *df_env_with(Interp *I, DfNode *e, uint32_t v, AVal val); /* a copy of e with v = val */
DfNode *df_env_share(Interp *I);                      /* env, which later writes will not change */
DfNode *df_env_join(Interp *I, DfNode *a, DfNode *b); /* per variable aval_join(a, b) */
/* END_LOOP: the new header from the entry `pre` and the back edge `back` (a variable that differs
 * is a phi of loop `loop` opened by op `loop_op`); sets *changed when it differs from `alt`. */
DfNode *df_env_header(Interp *I, DfNode *pre, DfNode *back, DfNode *alt, uint32_t loop_op, uint32_t loop,
                      bool *changed);
/* The variables of e whose grad or elem is G_LIVE, in increasing order, appended to out. */
typedef Array(uint32_t) DfVarList;
void df_env_live(const DfNode *e, uint8_t height, uint32_t nvars, DfVarList *out);

/* prescan.c: evidence gathered from the whole function before it is interpreted (which variables
 * carry a graph, which are models). */
void df_prescan(Interp *I);
/* prescan.c: is name a method of another file's class, known to return no graph and no model
 * output, whatever the receiver (`tracker.log(x)`)? */
bool df_duck_method_plain(const Interp *I, const char *name);
/* dataflow.c: does a method of class ci call a Module-only method (`.train()`, `.parameters()`) on
 * self.<attr>? Then self.<attr> holds a model. */
bool df_class_module_attr(Interp *I, uint32_t ci, const char *attr);

/* loops.c, after every function is analysed, in this order. */
void df_mark_framework_hooks(const IrModule *m, Facts *fx); /* before the analysis: sets grad modes */
/* Before the analysis: f runs with grad off, as if decorated @torch.no_grad() (a framework stage,
 * a decorator of the file); the IR is this file's own and not shared while it is analysed. */
void df_run_grad_off(IrFunc *f);
void df_mark_training_funcs(const IrModule *m, Facts *fx);
void df_mark_forward_funcs(const IrModule *m, Facts *fx);
void df_mark_grad_off_callees(const IrModule *m, Facts *fx);
void df_classify_loops(const IrModule *m, Facts *fx, const IrFunc *f);
void df_mark_per_step_funcs(const IrModule *m, Facts *fx);


/* What function fi returns, as a summary for other files (its kind, grad and flags that travel, the
 * parameters it comes from; zero when it never returns) and its parameter count. */
void df_summary_of(const Facts *fx, uint32_t fi, ExternSummary *out);

#endif
