/* Instrumenting a flagged loop: the probe wraps a `for` loop's iterable in
 * `__gradleak_iter__(k, (...))` and puts `__gradleak_while__(k) and (...)` around a `while` loop's
 * condition. Only the header line changes, so the file keeps its line numbers (tracebacks and
 * findings still point at the user's lines). The harness (src/validate/harness) defines both names. */
#ifndef GL_VAL_INSTRUMENT_H
#define GL_VAL_INSTRUMENT_H

#include "base/diag.h"
#include "base/strbuf.h"

/* A loop's identity that survives fixes (fixes add no functions and no loops): the function it is
 * in and its index among that function's loops, in source order. */
typedef struct ValLoopRef {
    uint32_t func, loop;
    bool is_while;
    bool is_func;  /* not a loop: the function `func` itself, sampled at each call (loop unused) */
    bool no_grad;  /* the fixed run's fix for the loop: run its body with grad off (GL104's documented
                    * fix, applied by the probe where the finding has no mechanical one) */
    uint32_t line; /* 1-based header line (the def line for is_func) in the source it was found in */
} ValLoopRef;

/* Finds the loop whose header starts on 1-based line `line`. Returns 0, or -1 with *why set
 * (a static string) when there is none or it cannot be instrumented. */
int val_loop_find(const char *path, const char *src, size_t len, uint32_t line, ValLoopRef *out, const char **why);

/* A function is probed at each call by `__gradleak_call__(k); ` in front of its first statement, on
 * that statement's line; a first statement that is compound (for, if, with...) cannot take it.
 *
 * Appends to out the source with probe k inserted in each loop refs[i] (probe ids ks[i]); the refs
 * are resolved in src by (func, loop). Returns 0, or -1 with *why set when a loop is gone or its
 * header cannot be rewritten. On success refs[i].line is updated to the line in src. */
int val_instrument(const char *path, const char *src, size_t len, ValLoopRef *refs, const uint32_t *ks, uint32_t n,
                   StrBuf *out, const char **why);

#endif
