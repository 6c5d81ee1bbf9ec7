/* What a rule sees: the file's IR, the dataflow facts, and a sink for its findings. */
#ifndef GL_RULE_CTX_H
#define GL_RULE_CTX_H

#include "engine/engine.h"
#include "ir/dataflow.h"

typedef struct RuleCtx {
    const IrModule *m;
    const Facts *fx;
    Arena *arena;
    DiagList *out;
    const LintOptions *opts;
    RuleId rule; /* the rule being run */
} RuleCtx;

#define RULE(id, code, name, sev, summary) void rule_##id(RuleCtx *c);
#include "rules.def"
#undef RULE

Diag *rule_report(RuleCtx *c, Span span, Severity sev, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void rule_related(RuleCtx *c, Diag *d, Span span, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void rule_hint(RuleCtx *c, Diag *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rule_trace(RuleCtx *c, Diag *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A --trace line with the dataflow facts of value v (the value of op in f), in the user's words:
 * "<role> 'text' (line N): tensor, graph-live; graph from 'model(x)' (line M); carried around
 * the loop at line L; model output". */
void rule_trace_value(RuleCtx *c, Diag *d, const IrFunc *f, const char *role, uint32_t op, const AVal *v);
/* A one-edit fix. */
void rule_fix(RuleCtx *c, Diag *d, FixSafety safety, const char *msg, uint32_t start, uint32_t end, const char *text);
/* Source text of an op's span (first line only). */
const char *rule_text(RuleCtx *c, const IrFunc *f, uint32_t op);
/* Whether op runs once per training step: inside a step loop, inside a loop of a Module method
 * (forward runs every step), or in a function called from a step loop. *loop gets the loop that
 * makes it so (IR_NONE for the called-function case). */
bool rule_runs_per_step(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t *loop);
/* How a rule words a call that runs every step (GL301, GL302). */
typedef struct PerStepText {
    const char *call;     /* "gc.collect()" */
    const char *why_loop; /* after "runs every iteration of the <kind> loop at line N: " */
    bool module_note;     /* say so when the loop is in a Module method */
    const char *why_func; /* appended to "... is called from a training loop" ("" for none) */
    const char *hint;
} PerStepText;
/* Reports every call of the function named qual that runs once per training step. */
void rule_report_per_step_calls(RuleCtx *c, const char *qual, const PerStepText *t);
/* Loop header line, 1-based. */
uint32_t rule_line(Span s);

#endif
