/* Comments of a C++ source, found lexically (strings, character literals and raw strings are
 * skipped), so suppressions and fixture expectations work without libclang and in code that
 * clang cannot parse. */
#include <ctype.h>
#include "front/cxx/cx.h"

typedef struct Lex {
    const char *s;
    size_t len, i;
    uint32_t row, col;
} Lex;

static void lex__advance(Lex *x)
{
    if (x->s[x->i] == '\n') x->row++, x->col = 0;
    else x->col++;
    x->i++;
}

static bool lex__ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

void cx_collect_comments(IrModule *m)
{
    Lex x = {m->src, m->len, 0, 0, 0};
    while (x.i < x.len) {
        char c = x.s[x.i];
        char n = x.i + 1 < x.len ? x.s[x.i + 1] : 0;
        if (c == '/' && (n == '/' || n == '*')) {
            Span sp = {(uint32_t)x.i, 0, x.row, x.col, 0, 0};
            lex__advance(&x), lex__advance(&x);
            if (n == '/') {
                while (x.i < x.len && x.s[x.i] != '\n' && x.s[x.i] != '\r') lex__advance(&x);
            } else {
                while (x.i < x.len && !(x.s[x.i] == '*' && x.i + 1 < x.len && x.s[x.i + 1] == '/')) lex__advance(&x);
                if (x.i < x.len) lex__advance(&x), lex__advance(&x);
            }
            sp.end = (uint32_t)x.i, sp.end_row = x.row, sp.end_col = x.col;
            array_push(&m->comments, sp);
            continue;
        }
        if (c == 'R' && n == '"' && (x.i == 0 || !lex__ident_char(x.s[x.i - 1]) ||
                                     x.s[x.i - 1] == 'u' || x.s[x.i - 1] == 'U' || x.s[x.i - 1] == 'L' ||
                                     x.s[x.i - 1] == '8')) {
            /* raw string R"delim( ... )delim" */
            size_t d0 = x.i + 2, d = d0;
            while (d < x.len && d - d0 < 16 && x.s[d] != '(' && x.s[d] != '"' && x.s[d] != '\n') d++;
            if (d < x.len && x.s[d] == '(') {
                size_t dl = d - d0;
                while (x.i <= d) lex__advance(&x);
                while (x.i < x.len) {
                    if (x.s[x.i] == ')' && x.i + 1 + dl < x.len && !memcmp(x.s + x.i + 1, x.s + d0, dl) &&
                        x.s[x.i + 1 + dl] == '"') {
                        for (size_t k = 0; k < dl + 2; k++) lex__advance(&x);
                        break;
                    }
                    lex__advance(&x);
                }
                continue;
            }
        }
        if (c == '"' || (c == '\'' && !(x.i > 0 && isxdigit((unsigned char)x.s[x.i - 1])))) {
            /* a string or character literal (a ' after a digit is a digit separator: 1'000) */
            lex__advance(&x);
            while (x.i < x.len && x.s[x.i] != c && x.s[x.i] != '\n') {
                if (x.s[x.i] == '\\' && x.i + 1 < x.len) lex__advance(&x);
                lex__advance(&x);
            }
            if (x.i < x.len && x.s[x.i] == c) lex__advance(&x);
            continue;
        }
        lex__advance(&x);
    }
}
