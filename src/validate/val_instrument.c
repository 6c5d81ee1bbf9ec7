/* Rewriting a flagged loop's header to call the probe (see val_instrument.h). */
#include <stdio.h>
#include "base/arena.h"
#include "engine/engine.h"
#include "ir/ir.h"
#include "validate/val_instrument.h"

typedef struct InsEdit {
    uint32_t at;
    char text[64];
} InsEdit;

static bool ins__ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* The iterable of `for TARGET in ITERABLE` inside header[start, end): the first `in` keyword at
 * bracket depth 0 outside strings (a target cannot hold one). Returns its offset, or 0. */
static uint32_t ins__for_iterable(const char *src, uint32_t start, uint32_t end)
{
    int depth = 0;
    char quote = 0;
    for (uint32_t i = start + 3; i + 1 < end; i++) {
        char c = src[i];
        if (quote) {
            if (c == '\\') i++;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (depth == 0 && c == 'i' && src[i + 1] == 'n' && !ins__ident(src[i - 1]) &&
                 (i + 2 >= end || !ins__ident(src[i + 2]))) {
            uint32_t j = i + 2;
            while (j < end && (src[j] == ' ' || src[j] == '\t' || src[j] == '\\' || src[j] == '\n' || src[j] == '\r')) j++;
            return j < end ? j : 0;
        }
    }
    return 0;
}

/* Where the body of the `def` at start begins: after the header's ':' (at bracket depth 0, outside
 * strings and comments), past blank lines and comments. 0 with *why when the first statement is
 * compound (a probe cannot share its line) or cannot be found. */
static uint32_t ins__first_stmt(const char *src, uint32_t len, uint32_t start, const char **why)
{
    int depth = 0;
    char quote = 0;
    uint32_t i = start;
    *why = "the function's header could not be read";
    for (; i < len; i++) {
        char c = src[i];
        if (quote) {
            if (c == '\\') i++;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '#') {
            while (i < len && src[i] != '\n') i++;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (c == ':' && depth == 0) break;
    }
    if (i >= len) return 0;
    for (i++; i < len;) {
        char c = src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') i++;
        else if (c == '#') {
            while (i < len && src[i] != '\n') i++;
        } else break;
    }
    if (i >= len) return 0;
    static const char *const compound[] = {"for", "while", "if", "with", "try", "def", "class", "async", "match", "@"};
    for (size_t k = 0; k < ARRAY_LEN(compound); k++) {
        size_t n = strlen(compound[k]);
        if (i + n <= len && !memcmp(src + i, compound[k], n) && (compound[k][0] == '@' || i + n == len || !ins__ident(src[i + n]))) {
            *why = "the function's first statement is compound: no probe can share its line";
            return 0;
        }
    }
    return i;
}

int val_loop_find(const char *path, const char *src, size_t len, uint32_t line, ValLoopRef *out, const char **why)
{
    Arena a;
    arena_init(&a);
    IrModule m;
    memset(&m, 0, sizeof m);
    m.arena = &a, m.src = src, m.len = len, m.path = path;
    int rc = -1;
    *why = "no loop starts on the flagged line";
    if (engine_lower(&m, LANG_PYTHON, NULL) != 0) {
        *why = "the file could not be parsed";
    } else {
        for (uint32_t f = 0; f < m.funcs.len && rc; f++) {
            const IrFunc *fn = m.funcs.items[f];
            for (uint32_t l = 0; l < fn->loops.len; l++) {
                const IrLoop *lp = &fn->loops.items[l];
                if (lp->span.row + 1 != line) continue;
                out->func = f, out->loop = l, out->is_while = lp->is_while, out->line = line;
                rc = 0;
                break;
            }
        }
    }
    ir_module_free(&m);
    arena_free(&a);
    return rc;
}

static int ins__cmp(const void *x, const void *y)
{
    const InsEdit *a = x, *b = y;
    return a->at < b->at ? -1 : a->at > b->at;
}

int val_instrument(const char *path, const char *src, size_t len, ValLoopRef *refs, const uint32_t *ks, uint32_t n,
                   StrBuf *out, const char **why)
{
    Arena a;
    arena_init(&a);
    IrModule m;
    memset(&m, 0, sizeof m);
    m.arena = &a, m.src = src, m.len = len, m.path = path;
    InsEdit *ed = gl_calloc(2 * (size_t)n + 1, sizeof *ed);
    uint32_t ne = 0;
    int rc = 0;
    if (engine_lower(&m, LANG_PYTHON, NULL) != 0) {
        *why = "the file could not be parsed";
        rc = -1;
    }
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (refs[i].is_func) {
            if (refs[i].func == 0 || refs[i].func >= m.funcs.len) {
                *why = "the function is gone from the fixed source";
                rc = -1;
                break;
            }
            const IrFunc *fn = m.funcs.items[refs[i].func];
            uint32_t at = ins__first_stmt(src, (uint32_t)len, fn->span.start, why);
            if (!at) {
                rc = -1;
                break;
            }
            ed[ne].at = at;
            snprintf(ed[ne].text, sizeof ed[ne].text, "__gradleak_call__(%u); ", ks[i]);
            ne++;
            refs[i].line = fn->span.row + 1;
            continue;
        }
        if (refs[i].func >= m.funcs.len || refs[i].loop >= m.funcs.items[refs[i].func]->loops.len) {
            *why = "the loop is gone from the fixed source";
            rc = -1;
            break;
        }
        const IrLoop *lp = &m.funcs.items[refs[i].func]->loops.items[refs[i].loop];
        if ((bool)lp->is_while != refs[i].is_while) {
            *why = "the loop changed kind in the fixed source";
            rc = -1;
            break;
        }
        uint32_t s = lp->span.start, e = lp->span.end;
        if (e <= s || e > len) {
            *why = "the loop header has no span";
            rc = -1;
            break;
        }
        while (e > s && (src[e - 1] == ' ' || src[e - 1] == '\t')) e--;
        uint32_t body;
        if (refs[i].is_while) {
            if (len - s < 5 || memcmp(src + s, "while", 5) != 0) {
                *why = "the loop header does not start with 'while'";
                rc = -1;
                break;
            }
            body = s + 5;
            while (body < e && (src[body] == ' ' || src[body] == '\t')) body++;
        } else {
            if (len - s < 3 || memcmp(src + s, "for", 3) != 0) {
                *why = "'async for' loops are not instrumented";
                rc = -1;
                break;
            }
            body = ins__for_iterable(src, s, e);
        }
        if (!body || body >= e) {
            *why = "the loop header could not be read";
            rc = -1;
            break;
        }
        ed[ne].at = body;
        if (refs[i].is_while && refs[i].no_grad) {
            *why = "the torch.no_grad() fix is not applied to while loops";
            rc = -1;
            break;
        }
        if (refs[i].is_while) snprintf(ed[ne].text, sizeof ed[ne].text, "__gradleak_while__(%u) and (", ks[i]);
        else snprintf(ed[ne].text, sizeof ed[ne].text, "__gradleak_iter__(%u, (", ks[i]);
        ne++;
        ed[ne].at = e;
        snprintf(ed[ne].text, sizeof ed[ne].text, "%s", refs[i].is_while ? ")" : refs[i].no_grad ? "), 1)" : "))");
        ne++;
        refs[i].line = lp->span.row + 1;
    }
    if (rc == 0) {
        qsort(ed, ne, sizeof *ed, ins__cmp);
        uint32_t at = 0;
        for (uint32_t i = 0; i < ne; i++) {
            sb_append(out, src + at, ed[i].at - at);
            sb_puts(out, ed[i].text);
            at = ed[i].at;
        }
        sb_append(out, src + at, len - at);
    }
    gl_free(ed);
    ir_module_free(&m);
    arena_free(&a);
    return rc;
}
