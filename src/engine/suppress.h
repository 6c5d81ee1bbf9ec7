/* Applying suppression comments (# noqa, # gradleak: noqa), and fixture expectations (# expect:). */
#ifndef GL_SUPPRESS_H
#define GL_SUPPRESS_H

#include "base/noqa.h"
#include "ir/ir.h"

/* Drops the findings that suppression comments (base/noqa.h) suppress, marking in each comment
 * which of its codes were used. Returns the file's suppression comments (*out, in arena), for the
 * rules that run after suppressions (GL901). */
uint32_t suppress_apply(const IrModule *m, Arena *arena, DiagList *diags, Noqa **out);

/* One expectation of a fixture: codes expected on a line (or none, for `# ok:`). */
typedef struct Expect {
    uint32_t row; /* 0-based */
    uint32_t n_codes;
    RuleId codes[8];
    bool ok;
} Expect;

/* Expectations of a fixture file, from its comments. Returns the number found (at most cap). */
uint32_t expect_parse(const IrModule *m, Expect *out, uint32_t cap);

#endif
