/* Shared by the files of the grad dataflow (dataflow.c the interpreter, prescan.c the evidence read
 * before it, loops.c the loop kinds and per-function marks after it); not for the rules. */
#ifndef GL_DATAFLOW_INT_H
#define GL_DATAFLOW_INT_H

#include "ir/api.h"
#include "ir/dataflow.h"

typedef struct Region {
    uint8_t kind;   /* IR_IF, IR_TRY, IR_LOOP */
    uint8_t has_else, in_handler, pass;
    uint32_t op;    /* the opening op */
    uint32_t loop;  /* loop id for IR_LOOP */
    AVal *pre;      /* IF/TRY: env before; LOOP: env at entry */
    AVal *alt;      /* IF: then-branch end; TRY: try-body end + handler ends; LOOP: header env */
    AVal *brk;      /* LOOP: join of break envs */
    AVal *cont;     /* LOOP: join of continue envs */
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
    AVal *env;
    bool dead;
    Array(Region) regions;
    uint8_t *backward_vars; /* variables .backward() is called on somewhere: they carry a graph */
    uint8_t *has_attrs;     /* variables that are the base of attribute pseudo-vars (self, x in x.a) */
    uint8_t *module_vars;   /* variables with module-only methods called on them */
    uint8_t *bw_calls;      /* [op]: a method call whose result the function differentiates
                             * (`losses = self.model.calculate_loss(b)` ... `loss.backward()`) */
    uint8_t *optim_vars;    /* bit 0: zero_grad() is called on the variable, bit 1: step(); both: an
                             * optimizer (a module has no step(), a scheduler no zero_grad()) */
    int depth;
} Interp;

/* prescan.c: evidence gathered from the whole function before it is interpreted (which variables
 * carry a graph, which are models). */
void df_prescan(Interp *I);

/* loops.c, after every function is analysed, in this order. */
void df_mark_framework_hooks(const IrModule *m, Facts *fx); /* before the analysis: sets grad modes */
void df_mark_training_funcs(const IrModule *m, Facts *fx);
void df_mark_forward_funcs(const IrModule *m, Facts *fx);
void df_mark_grad_off_callees(const IrModule *m, Facts *fx);
void df_classify_loops(const IrModule *m, Facts *fx, const IrFunc *f);
void df_mark_per_step_funcs(const IrModule *m, Facts *fx);


#endif
