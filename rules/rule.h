/* The rule SDK: what a rule sees (the file's IR, the dataflow facts, a sink for its findings) and
 * the helpers every rule shares (reporting, fixes, the per-step question). A rule file includes
 * this header and ir/ only; the engine calls rule_<CODE>() for each enabled rule of rules.def
 * (those with RF_AFTER_NOQA after suppressions, with RuleCtx.noqa filled). Implemented in
 * rules/rule_sdk.c and rules/rule_fix.c. See docs/architecture.md, "Adding a rule". */
#ifndef GL_RULE_H
#define GL_RULE_H

#include "base/arena.h"
#include "base/diag.h"
#include "base/noqa.h"
#include "ir/dataflow.h"
#include "ir/ir.h"

struct RuleLines;

typedef struct RuleCtx {
    const IrModule *m;
    const Facts *fx;
    Arena *arena;
    DiagList *out;
    RuleId rule;             /* the rule being run */
    Arena *scratch;          /* lives as long as the IR: caches shared by the rules */
    struct RuleLines *lines; /* the file's lines with their tokenizer state, built on first use */
    const char *torch_name;  /* rule_torch_name's answer, once asked */
    bool torch_name_known;
    bool cxx;                /* the file is C++ (LibTorch): findings name C++ constructs, fixes are C++ */
    bool trace;              /* --trace: rule_trace and rule_trace_value record the facts */
    const RuleSet *enabled;  /* the rules that run on this file */
    const Noqa *noqa;        /* RF_AFTER_NOQA rules: the file's suppression comments, used codes marked */
    uint32_t n_noqa;
    struct RuleRegions **regions; /* [func]: if/try nesting of every op (rule_runs_per_step), built on first use */
    uint8_t *trainer_called; /* [func]: called where a function of the file trains (rule_returns_graph_for_training),
                              * built on first use */
} RuleCtx;

#define RULE(id, name, sev, flags, measure, since, summary) void rule_##id(RuleCtx *c);
#include "rules/rules.def"
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
/* A fix of several edits (sorted by start, non-overlapping); edits and their texts are copied. */
void rule_fix_edits(RuleCtx *c, Diag *d, FixSafety safety, const char *msg, const Edit *edits, uint32_t n);
/* Offset of the first byte of the line holding off (after a BOM on the first line). */
uint32_t rule_line_start(RuleCtx *c, uint32_t off);
/* The line ending of the line holding off ("\r\n", "\n" or "\r"; the first line's for a last line
 * without one): inserted lines use the file's own. */
const char *rule_eol(RuleCtx *c, uint32_t off);
/* Edits that wrap the statements on the lines of [start, end) in a block `header:` (e.g.
 * "with torch.no_grad()"): a header line at the first statement's indentation, then every line one
 * level deeper (the block's own step, else 4 spaces, or a tab where the file indents with tabs).
 * Lines inside string literals and whitespace-only lines are left as they are. false (no edits)
 * when start is not the first code on its line or the lines cannot be re-indented exactly. */
bool rule_fix_wrap(RuleCtx *c, uint32_t start, uint32_t end, const char *header, Edit **edits, uint32_t *n);
/* Offers the fix that wraps loop `loop` of f in `with torch.no_grad():` (GL104, GL108), with the
 * given safety; nothing in C++ or when the file has no torch name or the lines cannot be re-indented. */
void rule_fix_wrap_loop_no_grad(RuleCtx *c, const IrFunc *f, uint32_t loop, Diag *d, FixSafety safety);
/* The same, under `with torch.<ctx>:` (ctx "set_grad_enabled(train)"). */
void rule_fix_wrap_loop(RuleCtx *c, const IrFunc *f, uint32_t loop, Diag *d, FixSafety safety, const char *ctx);
/* The bytes [*start, *end) that remove keyword argument `kw=value` from call (with its comma), where
 * value is the op of the argument's value; false when the source does not have that plain shape. */
bool rule_kwarg_removal(RuleCtx *c, const IrFunc *f, uint32_t call, uint32_t value, uint32_t *start, uint32_t *end);
/* How to delete the statement at stmt: its whole line (with its trailing comment), or `pass` in
 * its place when it is its block's only statement. false when the line holds another statement. */
bool rule_stmt_removal(RuleCtx *c, Span stmt, uint32_t *start, uint32_t *end, const char **text);
/* The name the file binds to the torch module (`torch`, or the alias of `import torch as t`), or
 * NULL when it never uses one: fixes that write `torch.` need it. */
const char *rule_torch_name(RuleCtx *c);
/* Source text of an op's span (first line only). */
const char *rule_text(RuleCtx *c, const IrFunc *f, uint32_t op);
/* Whether op runs once per training step: inside a step loop, inside a loop of a Module method
 * (forward runs every step), or in a function called from a step loop. *loop gets the loop that
 * makes it so (IR_NONE for the called-function case). */
bool rule_runs_per_step(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t *loop);
/* Whether op sits under an `if` or `try` opened inside loop `loop` of f (it runs now and then, not
 * every iteration). */
bool rule_in_branch_of_loop(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t loop);
/* Whether op runs only after an error: in an except handler, or under a flag set in one (`if oom:`). */
bool rule_on_error_path(RuleCtx *c, const IrFunc *f, uint32_t op);
/* Whether op runs every few iterations of loop `loop`: under `if step % n == 0` (or `== n - 1`, or
 * either side of an `and`) opened inside that loop. */
bool rule_on_periodic_path(RuleCtx *c, const IrFunc *f, uint32_t op, uint32_t loop);
/* Whether f returns a value carrying a graph for a caller that trains on it: a method of a Module
 * class whose own model calls made it (an autoregressive decoder the subclasses' forward() runs in
 * training), or any function of the file that a training loop or step function of the file calls
 * (a trainer's helper summing sampled sub-models' losses). A feedback loop in it builds what the
 * caller trains on (GL101, GL102, GL104). */
bool rule_returns_graph_for_training(RuleCtx *c, const IrFunc *f);
/* Does loop li step an environment (`env.step(action)`: step() with one argument, on an object
 * that is no optimizer, module, tensor or container)? */
/* Is var (a variable, or an attribute's pseudo-variable: `self.pred`) bound afresh, from a value
 * that does not read it, on every path from op `from` to op `before` (`if a: loss = f(x) else:
 * loss = g(x)`, then `loss += extra`)? Structured regions only (if/else, loops, try); a bounded
 * linear walk. */
bool rule_bound_before(const IrFunc *f, uint32_t from, uint32_t before, uint32_t var);
bool rule_steps_env(RuleCtx *c, const IrFunc *f, uint32_t li);
/* How a rule words a call that runs every step (GL301, GL302). */
typedef struct PerStepText {
    const char *call;     /* "gc.collect()" */
    const char *why_loop; /* after "runs every iteration of the <kind> loop at line N: " */
    bool module_note;     /* say so when the loop is in a Module method */
    const char *why_func; /* appended to "... is called from a training loop" ("" for none) */
    const char *hint;
} PerStepText;
/* Reports every call of the function named qual that runs once per training step, with an unsafe
 * fix that removes the call when it is a statement of its own. */
void rule_report_per_step_calls(RuleCtx *c, const char *qual, const PerStepText *t);
/* Words that differ between the languages: the grad-off construct of the file's language, for
 * messages ("torch.no_grad()" / "torch::NoGradGuard") and for hints ("`with torch.no_grad():`" /
 * "`torch::NoGradGuard no_grad;`"), and "True" / "true". */
const char *rule_no_grad_name(const RuleCtx *c);
const char *rule_no_grad_stmt(const RuleCtx *c);
const char *rule_true(const RuleCtx *c);
/* text as the file's language says it: in C++, `.item()` is `.item().toFloat()` and `self.x` is
 * `this->x` (the C++ front end names members as Python attributes). rule_report, rule_related,
 * rule_hint and the fix helpers apply it to what they are given; a rule that builds text itself
 * applies it too. */
const char *rule_say(const RuleCtx *c, const char *text);
/* A function's qualified name as the file's language writes it ("Net.forward" / "Net::forward"). */
const char *rule_func_name(RuleCtx *c, const char *qualname);
/* Loop header line, 1-based. */
uint32_t rule_line(Span s);

#endif
