/* The syntax of suppression comments (base/noqa.h). */
#include <ctype.h>
#include <strings.h>
#include "base/noqa.h"

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Reads a code list ("GL101, GL302 F401") into codes, keeping gradleak's codes; *n_any gets the
 * number of code-like tokens of any linter (a `# noqa: F401` is another tool's business). */
uint32_t noqa_parse_codes(const char *p, const char *end, RuleId *codes, uint32_t cap, uint32_t *n_any)
{
    uint32_t n = 0, any = 0;
    for (;;) {
        p = skip_ws(p, end);
        const char *s = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
        if (p == s) break;
        char buf[64];
        size_t len = (size_t)(p - s) < sizeof buf - 1 ? (size_t)(p - s) : sizeof buf - 1;
        memcpy(buf, s, len);
        buf[len] = 0;
        any++;
        const RuleInfo *ri = rule_by_code(buf);
        if (ri && n < cap) codes[n++] = ri->id;
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
    }
    if (n_any) *n_any = any;
    return n;
}

/* `# type: ignore  # noqa: GL301` is one comment token: try each `#` in it. C++ comments start
 * with `//` or a block comment opener, and also take clang-tidy's `NOLINT(GL101)`. */
bool noqa_parse(const char *text, size_t len, Noqa *out)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '#' && noqa_parse_at(text + i, len - i, 1, out)) return true;
        if (text[i] == '/' && i + 1 < len && (text[i + 1] == '/' || text[i + 1] == '*') &&
            noqa_parse_at(text + i, len - i, 2, out))
            return true;
    }
    return false;
}

bool noqa_parse_at(const char *text, size_t len, size_t marker, Noqa *out)
{
    const char *p = text, *end = text + len;
    memset(out, 0, sizeof *out);
    if (p + marker > end) return false;
    p = skip_ws(p + marker, end);
    if (marker == 2 && (size_t)(end - p) >= 6 && !strncmp(p, "NOLINT", 6)) {
        /* NOLINT, NOLINT(GL101, GL102), NOLINTNEXTLINE(GL101) */
        p += 6;
        if ((size_t)(end - p) >= 8 && !strncmp(p, "NEXTLINE", 8)) p += 8, out->next_line = true;
        if (p < end && *p == '(') {
            const char *close = memchr(p, ')', (size_t)(end - p));
            if (!close) return false;
            uint32_t any = 0;
            out->n_codes = noqa_parse_codes(p + 1, close, out->codes, RULE_COUNT, &any);
            if (!out->n_codes && any) out->foreign = true;
        } else if (p < end && (isalnum((unsigned char)*p) || *p == '_')) {
            return false;
        }
        return true;
    }
    if ((size_t)(end - p) >= 9 && !strncasecmp(p, "gradleak:", 9)) {
        p = skip_ws(p + 9, end);
        out->file_level = true;
    }
    /* noqa may follow other comment text: `# type: ignore  # noqa` is its own comment, but
     * `# something noqa: X` is not a suppression (as ruff) */
    if ((size_t)(end - p) < 4 || strncasecmp(p, "noqa", 4) != 0) return false;
    p += 4;
    if (p < end && *p == ':') {
        uint32_t any = 0;
        out->n_codes = noqa_parse_codes(p + 1, end, out->codes, RULE_COUNT, &any);
        /* codes of other linters only: not ours to suppress with, nor to call unused */
        if (!out->n_codes && any) out->foreign = true;
    } else if (p < end && isalnum((unsigned char)*p)) {
        return false; /* `# noqaxyz` */
    }
    return true;
}

bool noqa_find_list(const char *text, const char *end, const char **hash, const char **list)
{
    *hash = *list = NULL;
    for (const char *h = text; h < end && !*list; h++) {
        size_t marker = *h == '#' ? 1 : (h + 1 < end && h[0] == '/' && h[1] == '/') ? 2 : 0;
        if (!marker) continue;
        Noqa tmp;
        if (!noqa_parse_at(h, (size_t)(end - h), marker, &tmp)) continue;
        const char *c = memchr(h, ':', (size_t)(end - h));
        /* `# gradleak: noqa: X` has two colons: the list follows the one after "noqa" */
        for (const char *k = h; k + 4 <= end; k++)
            if (!strncasecmp(k, "noqa", 4)) {
                c = k + 4 < end && k[4] == ':' ? k + 4 : NULL;
                break;
            }
        if (c) *hash = h, *list = c + 1;
    }
    return *list != NULL;
}

bool noqa_code_like(const char *t, const char *p)
{
    const char *k = t;
    while (k < p && isalpha((unsigned char)*k)) k++;
    bool letters = k > t && k < p;
    while (k < p && isdigit((unsigned char)*k)) k++;
    return letters && k == p;
}

const char *noqa_list_end(const char *list, const char *end)
{
    const char *p = list, *list_end = list;
    while (p) {
        p = skip_ws(p, end);
        const char *t = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '_')) p++;
        if (p == t || !noqa_code_like(t, p)) break;
        list_end = p;
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
    }
    return list_end;
}
