/* libFuzzer target: the fix engine (src/engine/fix.h). Python bytes -> fix_file to a fixed point.
 * A fixed file must parse with no syntax error the input did not have: fix_file reverts such a pass,
 * and a revert is a bug in a fix, so it counts as a crash here. Also: the output is a fixed point
 * (fixing it again changes nothing), and a UTF-8 BOM survives. The first input byte's low bit
 * turns on unsafe fixes. */
#include <stdio.h>
#include "engine/fix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz__fail(const char *what, const FixOutcome *r)
{
    fprintf(stderr, "fuzz_fix: invariant broken: %s%s%s\n", what, r && r->error[0] ? ": " : "", r ? r->error : "");
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    LintOptions lo;
    lint_options_default(&lo);
    FixOptions fo;
    fix_options_default(&fo);
    fo.unsafe = size && (data[0] & 1);
    FixOutcome r;
    if (fix_file("fuzz.py", (const char *)data, size, LANG_PYTHON, &lo, &fo, &r) != 0) return 0;
    if (r.reverted) fuzz__fail("a fix broke the syntax (reverted)", &r);
    if (r.changed) {
        if (size >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) && (r.len < 3 || memcmp(r.src, "\xef\xbb\xbf", 3)))
            fuzz__fail("the BOM was lost", &r);
        if (!r.capped) {
            FixOutcome again;
            if (fix_file("fuzz.py", r.src, r.len, LANG_PYTHON, &lo, &fo, &again) == 0) {
                bool moved = again.changed;
                fix_outcome_free(&again);
                if (moved) fuzz__fail("the fixed output is not a fixed point", &r);
            }
        }
    }
    fix_outcome_free(&r);
    return 0;
}
