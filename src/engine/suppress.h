/* Suppression comments (# noqa, # gradleak: noqa) and fixture expectations (# expect:). */
#ifndef GL_SUPPRESS_H
#define GL_SUPPRESS_H

#include "engine/engine.h"
#include "ir/ir.h"

/* A parsed `# noqa[: CODES]` comment. n_codes == 0 means every rule. */
typedef struct Noqa {
    uint32_t row;
    bool file_level;
    bool foreign;  /* names only other linters' codes (# noqa: F401): suppresses no gradleak finding */
    bool next_line; /* NOLINTNEXTLINE: applies to the line after the comment */
    uint32_t n_codes;
    RuleId codes[RULE_COUNT];
    bool used[RULE_COUNT + 1];
    Span span;
} Noqa;

/* Parses the text of one comment token; a noqa may follow other text after a second `#`
 * (`# type: ignore  # noqa: GL301`). Returns true when it is a noqa comment. */
bool suppress_parse(const char *text, size_t len, Noqa *out);
/* Drops suppressed findings from diags and adds GL901 for noqa comments that suppress nothing
 * (when GL901 is enabled). */
void suppress_apply(const IrModule *m, const LintOptions *o, Arena *arena, DiagList *diags);

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
