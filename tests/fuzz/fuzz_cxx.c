/* libFuzzer target: C++ bytes -> libclang (against the embedded LibTorch stub, with its precompiled
 * header) -> IR -> dataflow -> every rule. Beyond "no crash, no leak, no sanitizer report" it checks
 * what every consumer of a LintResult relies on: spans inside the file and in order, rule ids in
 * range, messages present. libclang itself is not instrumented and costs ~0.2 s an input, so this
 * target runs a few inputs a second: it is for the front end's handling of whatever AST clang
 * recovers from broken code (tests/fuzz/corpus/cxx: the C++ rule fixtures' shapes). */
#include <stdio.h>
#include <stdlib.h>
#include "front/cxx/cx.h"
#include "engine/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const CxEnv env = {.headers = "stub"}; /* the same headers on every machine, and fast */
    cx_set_env(&env);
    return 0;
}

static void fuzz__fail(const char *what, const Diag *d)
{
    fprintf(stderr, "fuzz_cxx: invariant broken: %s (rule %d, span %u..%u at %u:%u)\n", what, d ? d->rule : -1,
            d ? d->span.start : 0, d ? d->span.end : 0, d ? d->span.row : 0, d ? d->span.col : 0);
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0; /* clang's time grows with the input; small inputs find the bugs */
    LintOptions o;
    lint_options_default(&o);
    o.trace = size && (data[0] & 1);
    LintResult r;
    if (engine_lint("fuzz.cpp", (const char *)data, size, LANG_CXX, &o, &r) == 0) {
        for (uint32_t i = 0; i < r.diags.len; i++) {
            const Diag *d = &r.diags.items[i];
            if (d->rule < 0 || d->rule >= RULE_COUNT) fuzz__fail("rule id out of range", d);
            if (!d->message || !d->message[0]) fuzz__fail("finding without a message", d);
            if (d->span.start > d->span.end || d->span.end > size) fuzz__fail("span outside the file", d);
            if (d->span.row > d->span.end_row) fuzz__fail("span ends on an earlier row", d);
            if (i && d->span.start < r.diags.items[i - 1].span.start) fuzz__fail("findings not sorted", d);
            for (uint32_t k = 0; k < d->n_related; k++)
                if (d->related[k].span.end > size) fuzz__fail("related span outside the file", d);
            if (d->fix)
                for (uint32_t k = 0; k < d->fix->n_edits; k++)
                    if (d->fix->edits[k].start > d->fix->edits[k].end || d->fix->edits[k].end > size)
                        fuzz__fail("fix edit outside the file", d);
        }
    }
    lint_result_free(&r);
    return 0;
}
