/* The shadow source of a C++ file whose headers were not all found: clang drops an out-of-line
 * member definition (`void Runner::warm(int n) { ... }`) of a class it could not see, and every
 * statement that names an undeclared variable (`img.to(at::kCUDA);`). The shadow source puts those
 * definitions, verbatim, into class templates with a dependent base,
 *
 *     template <class GlB> struct Runner : GlB { using GlB::model_; ...  void warm(int n) { ... } };
 *
 * so that every unknown name becomes a dependent member and clang keeps the whole body with the
 * shape of each expression (`model_->forward(x)`, `outputs_.push_back(out)`): lowered as usual,
 * with types partly unknown. A return type naming a member of an unknown scope (`cv::Mat`) becomes
 * `auto` (the templates are never instantiated). Segments map the shadow's bytes back to the file's. Lexical only:
 * comments, strings, character literals and preprocessor lines are skipped; `#if 0` blocks too. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "front/cxx/cx_shadow.h"

static bool sh__ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Skips a comment, string or character literal starting at i; returns the index after it, or i. */
static size_t sh__skip(const char *s, size_t len, size_t i)
{
    if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
        while (i < len && s[i] != '\n') i++;
        return i;
    }
    if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
        i += 2;
        while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/')) i++;
        return i + 2 < len ? i + 2 : len;
    }
    if (s[i] == '"' || (s[i] == '\'' && !(i > 0 && isxdigit((unsigned char)s[i - 1])))) {
        /* raw strings R"x(...)x" are rare in training code: treated as plain strings */
        char q = s[i++];
        while (i < len && s[i] != q && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
        return i < len ? i + 1 : len;
    }
    return i;
}

/* Does s[i..len) start with word? (s need not end in NUL) */
static bool sh__at(const char *s, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);
    return i <= len && len - i >= n && !memcmp(s + i, word, n);
}

/* At the start of a line (after blanks), a preprocessor directive: the index after its last
 * line (continuations followed), or i when there is none. *if0 tracks `#if 0` nesting. */
static size_t sh__directive(const char *s, size_t len, size_t i, int *if0)
{
    size_t k = i;
    while (k < len && (s[k] == ' ' || s[k] == '\t')) k++;
    if (k >= len || s[k] != '#') return i;
    size_t d = k + 1;
    while (d < len && (s[d] == ' ' || s[d] == '\t')) d++;
    if (*if0) {
        if (sh__at(s, len, d, "if")) (*if0)++;
        else if (sh__at(s, len, d, "endif")) (*if0)--;
        else if (*if0 == 1 && (sh__at(s, len, d, "else") || sh__at(s, len, d, "elif"))) *if0 = 0;
    } else if (sh__at(s, len, d, "if 0") || sh__at(s, len, d, "if false")) {
        *if0 = 1;
    }
    while (k < len && s[k] != '\n') k += (s[k] == '\\' && k + 1 < len && s[k + 1] == '\n') ? 2 : 1;
    return k;
}

/* The matching close brace of the '{' at i (strings and comments skipped), or len. */
static size_t sh__match(const char *s, size_t len, size_t i)
{
    int depth = 0;
    for (; i < len; i++) {
        size_t j = sh__skip(s, len, i);
        if (j != i) { i = j - 1; continue; }
        if (s[i] == '{') depth++;
        else if (s[i] == '}' && --depth == 0) return i;
    }
    return len;
}

/* Reads the header [start, brace) of a block at namespace level: a function definition? */
static bool sh__function(const char *s, size_t start, size_t brace, CxShadowFn *fn)
{
    /* the first '(' at depth 0, and the name before it */
    size_t i = start;
    int angle = 0;
    for (; i < brace; i++) {
        size_t j = sh__skip(s, brace, i);
        if (j != i) { i = j - 1; continue; }
        if (s[i] == '<') angle++;
        else if (s[i] == '>' && angle) angle--;
        else if (s[i] == '(' && !angle) break;
        else if (s[i] == '=' || s[i] == ';') return false; /* an initializer: `auto x = T{...}` */
    }
    if (i >= brace) return false;
    size_t e = i;
    while (e > start && isspace((unsigned char)s[e - 1])) e--;
    size_t n = e;
    while (n > start && sh__ident(s[n - 1])) n--;
    if (n > start && s[n - 1] == '~') n--;
    if (n == e) return false;
    static const char *const kw[] = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype",
                                     "operator", "TORCH_MODULE", "static_assert", "alignas"};
    for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
        if (e - n == strlen(kw[k]) && !memcmp(s + n, kw[k], e - n)) return false;
    /* the keywords that open a block that is no function */
    for (size_t k = start; k < n; k++) {
        if (k > start && sh__ident(s[k - 1])) continue;
        if (sh__at(s, brace, k, "namespace") || sh__at(s, brace, k, "class ") || sh__at(s, brace, k, "struct ") ||
            sh__at(s, brace, k, "union ") || sh__at(s, brace, k, "enum ") || sh__at(s, brace, k, "template") ||
            sh__at(s, brace, k, "extern \"C"))
            return false;
    }
    fn->start = (uint32_t)start;
    fn->name = (uint32_t)n;
    fn->brace = (uint32_t)brace;
    fn->qual = fn->cls = fn->cls_end = (uint32_t)n;
    /* Runner::warm, ns::Runner::warm: the class is the last qualifier */
    if (n >= start + 2 && s[n - 1] == ':' && s[n - 2] == ':') {
        size_t ce = n - 2;
        while (ce > start && isspace((unsigned char)s[ce - 1])) ce--;
        if (ce > start && s[ce - 1] == '>') return false; /* Foo<T>::bar: a template's member */
        size_t cs = ce;
        while (cs > start && sh__ident(s[cs - 1])) cs--;
        if (cs == ce) return false;
        size_t q = cs;
        while (q >= start + 2 && s[q - 1] == ':' && s[q - 2] == ':') {
            q -= 2;
            while (q > start && sh__ident(s[q - 1])) q--;
        }
        fn->qual = (uint32_t)q, fn->cls = (uint32_t)cs, fn->cls_end = (uint32_t)ce;
    }
    return true;
}

uint32_t cx_shadow_scan(const char *s, size_t len, CxShadowFns *out)
{
    size_t stmt = 0; /* where the current namespace-level declaration began */
    int if0 = 0;
    bool line_start = true;
    for (size_t i = 0; i < len; i++) {
        if (line_start) {
            size_t d = sh__directive(s, len, i, &if0);
            if (d != i) { i = d; stmt = d + 1 < len ? d + 1 : len; line_start = true; continue; }
        }
        line_start = s[i] == '\n';
        if (if0) continue;
        size_t j = sh__skip(s, len, i);
        if (j != i) {
            if (j > i + 1 && s[i] == '/' && s[i + 1] == '/' && j < len) line_start = false;
            i = j - 1;
            continue;
        }
        char c = s[i];
        if (c == ';' || c == '}') { stmt = i + 1; continue; }
        if (c != '{') continue;
        /* namespaces and extern "C" are transparent; a function body is skipped whole */
        size_t h = stmt;
        while (h < i && isspace((unsigned char)s[h])) h++;
        if (sh__at(s, len, h, "namespace") || sh__at(s, len, h, "extern")) { stmt = i + 1; continue; }
        size_t close = sh__match(s, len, i);
        CxShadowFn fn;
        memset(&fn, 0, sizeof fn);
        if (sh__function(s, h, i, &fn)) {
            fn.end = (uint32_t)(close < len ? close + 1 : len);
            array_push(out, fn);
        }
        i = close < len ? close : len - 1;
        stmt = i + 1;
        line_start = false;
    }
    return out->len;
}

static void sh__seg(CxShadow *sh, const char *s, uint32_t from, uint32_t to)
{
    if (to <= from) return;
    CxSeg g = {sh->text.len, from, to - from};
    array_push(&sh->segs, g);
    sb_append(&sh->text, s + from, to - from);
}

/* Does s[from, to) name a scope that usings declares as a dependent value (`cv::` with
 * "using GlB::cv;")? */
static bool sh__unknown_scope(const char *s, uint32_t from, uint32_t to, const char *usings)
{
    if (!usings) return false;
    for (uint32_t i = from; i + 2 < to; i++) {
        if (!sh__ident(s[i]) || (i > from && sh__ident(s[i - 1]))) continue;
        uint32_t e = i;
        while (e < to && sh__ident(s[e])) e++;
        if (e + 1 < to && s[e] == ':' && s[e + 1] == ':' && e - i < 120) {
            char want[140];
            snprintf(want, sizeof want, "using GlB::%.*s;", (int)(e - i), s + i);
            if (strstr(usings, want)) return true;
        }
        i = e;
    }
    return false;
}

void cx_shadow_build(CxShadow *sh, const char *s, size_t len, const CxShadowFn *fns, uint32_t n, const char *usings)
{
    sb_init(&sh->text);
    array_init(&sh->segs);
    /* the preprocessor lines: the same headers and macros (#if 0 blocks are dropped) */
    int if0 = 0;
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && s[e] != '\n') e++;
        int before = if0;
        size_t d = sh__directive(s, len, i, &if0);
        if (d != i && !before && !if0) sb_append(&sh->text, s + i, d - i), sb_putc(&sh->text, '\n');
        i = (d != i ? d : e) + 1;
    }
    /* one class template per class (free functions: in GlFree__), its functions in file order */
    bool *done = gl_calloc(n ? n : 1, sizeof *done);
    for (uint32_t a = 0; a < n; a++) {
        if (done[a]) continue;
        const CxShadowFn *fa = &fns[a];
        uint32_t clen = fa->cls_end - fa->cls;
        if (clen) sb_printf(&sh->text, "template <class GlB> struct %.*s : GlB {\n", (int)clen, s + fa->cls);
        else sb_puts(&sh->text, "template <class GlB> struct GlFree__ : GlB {\n");
        if (usings) sb_puts(&sh->text, usings);
        for (uint32_t b = a; b < n; b++) {
            const CxShadowFn *fb = &fns[b];
            if (done[b] || fb->cls_end - fb->cls != clen || memcmp(s + fb->cls, s + fa->cls, clen) != 0) continue;
            done[b] = true;
            /* the return type, or `auto` when it names a member of an unknown scope (`cv::Mat`
             * with `using GlB::cv;`: no type clang can parse; the template is never instantiated) */
            if (sh__unknown_scope(s, fb->start, fb->qual, usings)) sb_puts(&sh->text, "auto");
            else sh__seg(sh, s, fb->start, fb->qual);
            sb_putc(&sh->text, ' ');
            sh__seg(sh, s, fb->name, fb->end);   /* name, parameters, initializers, body */
            sb_putc(&sh->text, '\n');
        }
        sb_puts(&sh->text, "};\n");
    }
    gl_free(done);
}

bool cx_shadow_map(const CxShadow *sh, uint32_t off, bool is_end, uint32_t *out)
{
    for (uint32_t i = 0; i < sh->segs.len; i++) {
        const CxSeg *g = &sh->segs.items[i];
        if (off >= g->sh && (off < g->sh + g->len || (is_end && off == g->sh + g->len))) {
            *out = g->orig + (off - g->sh);
            return true;
        }
    }
    return false;
}

void cx_shadow_free(CxShadow *sh)
{
    sb_free(&sh->text);
    array_free(&sh->segs);
}
