/* Masking IPython syntax in a code cell: byte for byte, so rows and columns stay where they are. */
#include <ctype.h>
#include "nb/nb.h"

/* Cell magics whose body is Python run in the kernel: the body is linted. Every other cell magic
 * (%%bash, %%html, %%writefile, %%javascript, %%sql, ...) makes the whole cell blank. */
static const char *const nb__python_cell_magics[] = {"time", "timeit", "capture", "prun", "debug", "memit",
                                                     "py", "python"};
/* Line magics that run the Python statement after their options: only the magic is masked. */
static const char *const nb__python_line_magics[] = {"time", "timeit", "prun", "memit", "debug"};

static bool nb__word_is(const char *s, size_t n, const char *const *words, size_t nwords)
{
    for (size_t i = 0; i < nwords; i++)
        if (strlen(words[i]) == n && !memcmp(s, words[i], n)) return true;
    return false;
}

static bool nb__ident(char c) { return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }

/* The lexical state carried from one line to the next. */
typedef struct NbLex {
    int depth;      /* open brackets */
    char triple;    /* the quote of an open triple-quoted string, or 0 */
    bool cont;      /* the previous line ended with a backslash */
    bool mask_cont; /* ... and it was a masked line: this one is masked too */
} NbLex;

/* Advances the state over line[0..n) (no line break inside). */
static void nb__lex_line(NbLex *lx, const char *s, size_t n)
{
    size_t i = 0;
    lx->cont = false;
    while (i < n) {
        char c = s[i];
        if (lx->triple) {
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == lx->triple && i + 2 < n && s[i + 1] == c && s[i + 2] == c) {
                lx->triple = 0;
                i += 3;
                continue;
            }
            i++;
            continue;
        }
        if (c == '#') return;
        if (c == '\\' && i + 1 == n) {
            lx->cont = true;
            return;
        }
        if (c == '"' || c == '\'') {
            if (i + 2 < n && s[i + 1] == c && s[i + 2] == c) {
                lx->triple = c;
                i += 3;
                continue;
            }
            for (i++; i < n && s[i] != c; i++)
                if (s[i] == '\\') i++;
            i++;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') lx->depth++;
        else if ((c == ')' || c == ']' || c == '}') && lx->depth > 0) lx->depth--;
        i++;
    }
}

/* Fills code[a..b) with a no-op: "0" then spaces (a CR stays, so line ends do not change). */
static void nb__blank(char *code, const char *text, size_t a, size_t b, bool zero)
{
    for (size_t i = a; i < b; i++) code[i] = text[i] == '\r' ? '\r' : ' ';
    if (zero && a < b) code[a] = '0';
}

/* Masks one logical-line start at line[0..n) (code is the same line of the masked copy). Returns
 * true when something was masked. */
static bool nb__mask_line(const char *line, size_t n, char *code)
{
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i >= n) return false;
    char c = line[i];
    size_t end = n;
    while (end > i && (line[end - 1] == '\r' || line[end - 1] == ' ' || line[end - 1] == '\t')) end--;
    if (c == '%' && i + 1 < n && line[i + 1] != '%' && line[i + 1] != '=') {
        /* a line magic: %time/%timeit keep their statement after the options */
        size_t w = i + 1;
        while (w < n && nb__ident(line[w])) w++;
        if (nb__word_is(line + i + 1, w - i - 1, nb__python_line_magics, ARRAY_LEN(nb__python_line_magics))) {
            size_t p = w;
            for (;;) {
                while (p < n && (line[p] == ' ' || line[p] == '\t')) p++;
                if (p < n && line[p] == '-') { /* an option: -n10, -r 3, -q */
                    char opt = p + 1 < n ? line[p + 1] : 0;
                    p += 2;
                    while (p < n && line[p] != ' ' && line[p] != '\t') p++;
                    if ((opt == 'n' || opt == 'r' || opt == 'p') && p < n) {
                        size_t q = p;
                        while (q < n && (line[q] == ' ' || line[q] == '\t')) q++;
                        if (q < n && isdigit((unsigned char)line[q])) {
                            while (q < n && line[q] != ' ' && line[q] != '\t') q++;
                            p = q;
                        }
                    }
                    continue;
                }
                break;
            }
            if (p < end && p - i >= 2) { /* "0;" then spaces up to the statement */
                nb__blank(code, line, i, p, true);
                code[i + 1] = ';';
                return true;
            }
        }
        nb__blank(code, line, i, n, true);
        return true;
    }
    if (c == '!' || (c == '?' && i + 1 < n)) { /* !cmd, ?obj */
        nb__blank(code, line, i, n, true);
        return true;
    }
    /* obj? and obj?? (help): the line ends with '?' outside a comment or string */
    if (end > i && line[end - 1] == '?' && !memchr(line + i, '#', end - i) && !memchr(line + i, '"', end - i) &&
        !memchr(line + i, '\'', end - i)) {
        nb__blank(code, line, i, n, true);
        return true;
    }
    /* x = !cmd, x = %magic: names (a, b.c, d[0]) then one '=' then '!' or '%name' */
    size_t p = i;
    while (p < n && (nb__ident(line[p]) || line[p] == '.' || line[p] == ',' || line[p] == ' ' || line[p] == '[' ||
                     line[p] == ']' || line[p] == '\t'))
        p++;
    if (p > i && p + 1 < n && line[p] == '=' && line[p + 1] != '=') {
        size_t q = p + 1;
        while (q < n && (line[q] == ' ' || line[q] == '\t')) q++;
        if (q < n && (line[q] == '!' || (line[q] == '%' && q + 1 < n && isalpha((unsigned char)line[q + 1])))) {
            nb__blank(code, line, q, n, true);
            return true;
        }
    }
    return false;
}

uint32_t nb_mask_cell(const char *text, size_t len, char *code, bool *skip)
{
    memcpy(code, text, len);
    *skip = false;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t')) i++;
    size_t first_end = i;
    while (first_end < len && text[first_end] != '\n') first_end++;
    uint32_t masked = 0;
    size_t start = 0;
    if (i + 2 < len && text[i] == '%' && text[i + 1] == '%') {
        size_t w = i + 2;
        while (w < first_end && nb__ident(text[w])) w++;
        masked++;
        if (!nb__word_is(text + i + 2, w - i - 2, nb__python_cell_magics, ARRAY_LEN(nb__python_cell_magics))) {
            *skip = true;
            for (size_t k = 0; k < len; k++)
                if (text[k] != '\n' && text[k] != '\r') code[k] = ' ';
            return masked;
        }
        nb__blank(code, text, i, first_end, true);
        start = first_end < len ? first_end + 1 : len;
    }
    NbLex lx = {0};
    while (start < len) {
        size_t e = start;
        while (e < len && text[e] != '\n') e++;
        bool at_start = lx.depth == 0 && !lx.triple && !lx.cont;
        bool was_mask_cont = lx.mask_cont;
        lx.mask_cont = false;
        if (was_mask_cont) { /* the continuation of a masked line (`!pip install \`) */
            nb__blank(code, text, start, e, false);
            lx.cont = e > start && text[e - 1 - (text[e - 1] == '\r' && e - 1 > start)] == '\\';
            lx.mask_cont = lx.cont;
        } else if (at_start && nb__mask_line(text + start, e - start, code + start)) {
            masked++;
            size_t n = e - start;
            if (n && text[start + n - 1] == '\r') n--;
            nb__lex_line(&lx, code + start, n); /* what is left of the line is Python */
            size_t b = e;
            while (b > start && (text[b - 1] == '\r' || text[b - 1] == ' ')) b--;
            lx.mask_cont = !lx.cont && b > start && text[b - 1] == '\\';
        } else {
            size_t n = e - start;
            if (n && text[start + n - 1] == '\r') n--;
            nb__lex_line(&lx, text + start, n);
        }
        start = e + 1;
    }
    return masked;
}
