/* Suppression comments: `# noqa`, `# noqa: GL101, F401`, `# gradleak: noqa` (the whole file), and
 * in C++ `// NOLINT(GL101)`, `// NOLINTNEXTLINE(GL101)`, `// noqa: GL101`. The one reader of their
 * syntax: the engine applies them (engine/suppress.c), GL901 reports and fixes the unused ones, the
 * LSP adds a code to one.
 *
 *     Noqa q;
 *     if (noqa_parse(comment, len, &q) && !q.foreign) ... q.codes[0..q.n_codes) (none: every rule)
 */
#ifndef GL_NOQA_H
#define GL_NOQA_H

#include "base/diag.h"

/* A parsed suppression comment. n_codes == 0 means every rule. */
typedef struct Noqa {
    uint32_t row;   /* the line it suppresses on (set by the caller: the comment's, or the next) */
    bool file_level;
    bool foreign;   /* names only other linters' codes (# noqa: F401): suppresses no gradleak finding */
    bool next_line; /* NOLINTNEXTLINE: applies to the line after the comment */
    uint32_t n_codes;
    RuleId codes[RULE_COUNT];
    bool used[RULE_COUNT + 1]; /* [j]: codes[j] suppressed a finding; [RULE_COUNT]: a bare noqa did */
    Span span;      /* the comment token (set by the caller) */
} Noqa;

/* Parses the text of one comment token; a noqa may follow other text after a second `#`
 * (`# type: ignore  # noqa: GL301`). Returns true when it is a suppression comment. */
bool noqa_parse(const char *text, size_t len, Noqa *out);
/* The same, for a directive that starts exactly at text (its `#` or `//`: marker is 1 or 2). */
bool noqa_parse_at(const char *text, size_t len, size_t marker, Noqa *out);
/* Reads a code list ("GL101, GL302 F401") into codes (at most cap), keeping gradleak's codes;
 * *n_any (when not NULL) gets the number of code-like tokens of any linter. */
uint32_t noqa_parse_codes(const char *p, const char *end, RuleId *codes, uint32_t cap, uint32_t *n_any);
/* Where the directive of comment [text, end) is: *hash at its own `#` or `//`, *list just after the
 * colon that opens its code list (`noqa:`; NULL when it has no list). false when it has no list. */
bool noqa_find_list(const char *text, const char *end, const char **hash, const char **list);
/* Is [t, p) a code-shaped word: letters then digits (`GL301`, `F401`, `E501`)? */
bool noqa_code_like(const char *t, const char *p);
/* The end of a code list starting at list: after the last code-shaped word (letters then digits,
 * `GL301`, `F401`), so `# noqa: GL301 because ...` ends after GL301. list when it has none. */
const char *noqa_list_end(const char *list, const char *end);

#endif
