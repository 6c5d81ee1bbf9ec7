/* What the LSP client sees of a lint: diagnostics, code actions (fix, noqa, fix-all) and hover. */
#include <ctype.h>
#include <stdio.h>
#include <strings.h>
#include "base/strbuf.h"
#include "engine/fix.h"
#include "base/noqa.h"
#include "lsp/lsp_int.h"
#include "out/out.h"


static int lsp__severity(Severity sev)
{
    switch (sev) {
    case SEV_ERROR: return 1;
    case SEV_WARNING: return 2;
    case SEV_INFO: return 3;
    }
    return 2;
}

static json_t *lsp__edits_json(const LspServer *s, const LspDoc *d, const Edit *edits, uint32_t n)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:o,s:o}", "range", lsp_range_json(s, d, edits[i].start, edits[i].end),
                                             "newText", lsp_jstr(edits[i].text ? edits[i].text : "")));
    return arr;
}

/* ---- diagnostics, written straight to JSON text ----
 * A re-lint of a large file publishes a hundred diagnostics per keystroke; building them as jansson
 * trees and dumping those was a tenth of the time per edit, so they are written as text (and
 * parsed back where a tree is needed: code actions, pull diagnostics). */

static void lsp__w_str(StrBuf *b, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)(str ? str : "");
    sb_putc(b, '"');
    while (*p) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        if (p > run) sb_append(b, (const char *)run, (size_t)(p - run));
        if (!*p) break;
        if (*p >= 0x80) {
            int k = utf8_seq_len(p, 4); /* stops at the NUL: it is no continuation byte */
            if (k) sb_append(b, (const char *)p, (size_t)k), p += k;
            else sb_puts(b, "\xef\xbf\xbd"), p++; /* U+FFFD for an invalid byte */
            continue;
        }
        char esc[7] = {'\\', (char)*p, 0};
        if (*p == '\n') esc[1] = 'n';
        else if (*p == '\t') esc[1] = 't';
        else if (*p == '\r') esc[1] = 'r';
        else if (*p < 0x20) esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[*p >> 4], esc[5] = hex[*p & 15];
        sb_puts(b, esc);
        p++;
    }
    sb_putc(b, '"');
}

static void lsp__w_uint(StrBuf *b, uint32_t v)
{
    char buf[12], *e = buf + sizeof buf, *q = e;
    do *--q = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    sb_append(b, q, (size_t)(e - q));
}

static void lsp__w_range(StrBuf *b, const LspServer *s, const LspDoc *d, uint32_t start, uint32_t end)
{
    LspPos x = lsp_text_position(d->text.data, d->text.len, &d->lines, start, s->enc);
    LspPos y = lsp_text_position(d->text.data, d->text.len, &d->lines, end < start ? start : end, s->enc);
    sb_puts(b, "{\"start\":{\"line\":");
    lsp__w_uint(b, x.line);
    sb_puts(b, ",\"character\":");
    lsp__w_uint(b, x.character);
    sb_puts(b, "},\"end\":{\"line\":");
    lsp__w_uint(b, y.line);
    sb_puts(b, ",\"character\":");
    lsp__w_uint(b, y.character);
    sb_puts(b, "}}");
}

static void lsp__w_diag(StrBuf *b, const LspServer *s, const LspDoc *d, const Diag *g)
{
    const RuleInfo *ri = out_rule(g->rule);
    sb_puts(b, "{\"range\":");
    lsp__w_range(b, s, d, g->span.start, g->span.end);
    sb_puts(b, ",\"severity\":");
    lsp__w_uint(b, (uint32_t)lsp__severity(g->severity));
    sb_puts(b, ",\"code\":");
    lsp__w_str(b, ri->code);
    sb_puts(b, ",\"codeDescription\":{\"href\":");
    lsp__w_str(b, rule_url(ri->id));
    sb_puts(b, "},\"source\":\"gradleak\",\"message\":");
    lsp__w_str(b, g->message ? g->message : ri->summary);
    if (g->n_related) {
        sb_puts(b, ",\"relatedInformation\":[");
        for (uint32_t i = 0; i < g->n_related; i++) {
            sb_puts(b, i ? ",{\"location\":{\"uri\":" : "{\"location\":{\"uri\":");
            lsp__w_str(b, d->uri);
            sb_puts(b, ",\"range\":");
            lsp__w_range(b, s, d, g->related[i].span.start, g->related[i].span.end);
            sb_puts(b, "},\"message\":");
            lsp__w_str(b, g->related[i].message);
            sb_putc(b, '}');
        }
        sb_putc(b, ']');
    }
    /* the fix travels with the diagnostic (as ruff does), so a client can show it before asking */
    sb_puts(b, ",\"data\":{\"rule\":");
    lsp__w_str(b, ri->name);
    if (g->hint) {
        sb_puts(b, ",\"hint\":");
        lsp__w_str(b, g->hint);
    }
    if (g->fix) {
        sb_puts(b, ",\"fix\":{\"message\":");
        lsp__w_str(b, g->fix->message);
        sb_puts(b, g->fix->safety == FIX_SAFE ? ",\"applicability\":\"safe\",\"edits\":["
                                              : ",\"applicability\":\"unsafe\",\"edits\":[");
        for (uint32_t i = 0; i < g->fix->n_edits; i++) {
            sb_puts(b, i ? ",{\"range\":" : "{\"range\":");
            lsp__w_range(b, s, d, g->fix->edits[i].start, g->fix->edits[i].end);
            sb_puts(b, ",\"newText\":");
            lsp__w_str(b, g->fix->edits[i].text);
            sb_putc(b, '}');
        }
        sb_puts(b, "]}");
    }
    sb_puts(b, "}}");
}

void lsp_diagnostics_write(StrBuf *b, const LspServer *s, const LspDoc *d)
{
    sb_putc(b, '[');
    for (uint32_t i = 0; d->has_result && i < d->result.diags.len; i++) {
        if (i) sb_putc(b, ',');
        lsp__w_diag(b, s, d, &d->result.diags.items[i]);
    }
    sb_putc(b, ']');
}

static json_t *lsp__diag_json(const LspServer *s, const LspDoc *d, const Diag *g)
{
    StrBuf b;
    sb_init(&b);
    lsp__w_diag(&b, s, d, g);
    json_t *j = json_loadb(b.data, b.len, 0, NULL);
    sb_free(&b);
    return j ? j : json_object();
}

json_t *lsp_diagnostics_json(const LspServer *s, const LspDoc *d)
{
    StrBuf b;
    sb_init(&b);
    lsp_diagnostics_write(&b, s, d);
    json_t *j = json_loadb(b.data, b.len, 0, NULL);
    sb_free(&b);
    return j ? j : json_array();
}

/* ---- code actions ---- */

/* Does the client's `only` list (NULL = everything) admit kind? A listed kind admits its
 * sub-kinds: "source" admits "source.fixAll.gradleak". */
static bool lsp__kind_wanted(const json_t *only, const char *kind)
{
    if (!only) return true;
    size_t i;
    json_t *v;
    json_array_foreach(only, i, v) {
        if (!json_is_string(v)) continue;
        const char *k = json_string_value(v);
        size_t n = strlen(k);
        if (!strncmp(kind, k, n) && (kind[n] == 0 || kind[n] == '.')) return true;
    }
    return false;
}

static json_t *lsp__workspace_edit(const LspDoc *d, json_t *edits)
{
    json_t *changes = json_object();
    json_object_set_new(changes, d->uri, edits);
    return json_pack("{s:o}", "changes", changes);
}

static json_t *lsp__action(const char *title, const char *kind, json_t *diags, json_t *edit, bool preferred)
{
    json_t *a = json_pack("{s:o,s:s}", "title", lsp_jstr(title), "kind", kind);
    if (diags) json_object_set_new(a, "diagnostics", diags);
    if (preferred) json_object_set_new(a, "isPreferred", json_true());
    json_object_set_new(a, "edit", edit);
    return a;
}

/* The edit that makes line `line` suppress `code`: add the code to a noqa comment already on the
 * line (`# noqa: F401` -> `# noqa: F401, GL101`), or append `  # noqa: GL101` to the line. Returns
 * false when the line already has a bare noqa (nothing to add). */
static bool lsp__noqa_edit(const LspDoc *d, uint32_t line, const char *code, Edit *out, StrBuf *text)
{
    const char *src = d->text.data;
    uint32_t ls = d->lines.starts[line], le = ls;
    while (le < d->text.len && src[le] != '\n' && src[le] != '\r') le++;
    if (d->lang == LANG_CXX) {
        /* C++: `// NOLINT(GL101)`, or the code added to a NOLINT(...) already on the line */
        for (uint32_t p = ls; p + 7 <= le; p++) {
            if (memcmp(src + p, "NOLINT(", 7) != 0) continue;
            uint32_t q = p + 7;
            while (q < le && src[q] != ')') q++;
            if (q == le) break;
            out->start = out->end = q;
            sb_printf(text, "%s%s", q > p + 7 ? ", " : "", code);
            return true;
        }
        uint32_t at = le;
        while (at > ls && (src[at - 1] == ' ' || src[at - 1] == '\t')) at--;
        out->start = at;
        out->end = le;
        sb_printf(text, "%s// NOLINT(%s)", at > ls ? "  " : "", code);
        return true;
    }
    const LintResult *r = &d->result;
    for (uint32_t i = 0; i < r->n_comments; i++) {
        const Span *c = &r->comments[i];
        if (c->start < ls || c->start >= le) continue;
        /* the comment's suppression directive, read as the engine reads it (base/noqa.h) */
        Noqa q;
        if (!noqa_parse(src + c->start, c->end - c->start, &q) || q.file_level) continue;
        const char *hash, *list;
        if (!noqa_find_list(src + c->start, src + c->end, &hash, &list))
            return false; /* bare noqa: suppresses everything */
        /* after the last code of the list */
        const char *end = noqa_list_end(list, src + c->end);
        out->start = out->end = (uint32_t)(end - src);
        sb_printf(text, "%s%s", end > list ? ", " : " ", code);
        return true;
    }
    /* no noqa on the line: append one after the code (and after any other comment) */
    uint32_t at = le;
    while (at > ls && (src[at - 1] == ' ' || src[at - 1] == '\t')) at--;
    out->start = at;
    out->end = le;
    sb_printf(text, "%s# noqa: %s", at > ls ? "  " : "", code);
    return true;
}

static bool lsp__diag_matches(const LspServer *s, const LspDoc *d, const Diag *g, const json_t *ctx_diags)
{
    if (!ctx_diags || !json_array_size(ctx_diags)) return true;
    LspPos gp = lsp_text_position(d->text.data, d->text.len, &d->lines, g->span.start, s->enc);
    const char *code = out_rule(g->rule)->code;
    size_t i;
    json_t *cd;
    json_array_foreach(ctx_diags, i, cd) {
        json_t *c = lsp_get(cd, "code", JSON_STRING);
        LspPos a, b;
        if (!c || strcmp(json_string_value(c), code) != 0) continue;
        if (!lsp_json_range(lsp_get(cd, "range", JSON_OBJECT), &a, &b) || a.line == gp.line) return true;
    }
    return false;
}

/* Every safe fix of the document applied to a fixed point by the fix engine (engine/fix.h: fixes
 * never overlap, passes re-lint, a pass that breaks the syntax reverts everything), as one edit
 * from the first changed byte to the last. NULL when nothing applies. */
static json_t *lsp__fix_all_edits(const LspServer *s, const LspDoc *d, const LintOptions *opts, uint32_t *n_fixes)
{
    *n_fixes = 0;
    bool any = false;
    for (uint32_t i = 0; i < d->result.diags.len && !any; i++)
        any = d->result.diags.items[i].fix && fix_applicable(d->result.diags.items[i].fix, false);
    if (!any || !opts) return NULL;
    LintOptions lo = *opts;
    FixOptions fo;
    fix_options_default(&fo);
    FixOutcome r;
    if (d->notebook) {
        /* a notebook cell is linted with its notebook (lsp_nb.c): one pass of its findings' fixes,
         * not fix_file's re-lints of the cell alone */
        memset(&r, 0, sizeof r);
        StrBuf out;
        sb_init(&out);
        sb_append(&out, "", 0);
        r.applied = fix_apply_diags(d->text.data, d->text.len, d->result.diags.items, d->result.diags.len, false, RULE_NONE, &out);
        r.changed = r.applied > 0;
        r.len = out.len;
        r.src = sb_take(&out);
    } else if (fix_file(d->path, d->text.data, d->text.len, d->lang, &lo, &fo, &r) != 0) {
        return NULL;
    }
    json_t *edits = NULL;
    if (r.reverted || r.declined) {
        fprintf(stderr, "gradleak lsp: fix-all not offered for %s: %s\n", d->path, r.error);
    } else if (r.changed) {
        const char *a = d->text.data, *b = r.src;
        size_t na = d->text.len, nb = r.len, pre = 0, suf = 0;
        while (pre < na && pre < nb && a[pre] == b[pre]) pre++;
        while (suf < na - pre && suf < nb - pre && a[na - 1 - suf] == b[nb - 1 - suf]) suf++;
        /* keep UTF-8 sequences whole at both ends of the edit */
        while (pre > 0 && ((unsigned char)a[pre] & 0xC0) == 0x80) pre--;
        while (suf > 0 && ((unsigned char)a[na - suf] & 0xC0) == 0x80) suf--;
        char *text = gl_strndup(b + pre, nb - pre - suf);
        Edit e = {(uint32_t)pre, (uint32_t)(na - suf), text};
        edits = lsp__edits_json(s, d, &e, 1);
        gl_free(text);
        *n_fixes = r.applied;
    }
    fix_outcome_free(&r);
    return edits;
}

json_t *lsp_code_actions(const LspServer *s, const LspDoc *d, const LintOptions *opts, json_t *params, RpcError *e)
{
    json_t *td = lsp_get(params, "textDocument", JSON_OBJECT);
    json_t *uri = td ? lsp_get(td, "uri", JSON_STRING) : NULL;
    LspPos rs, re;
    if (!uri || !lsp_json_range(lsp_get(params, "range", JSON_OBJECT), &rs, &re)) {
        rpc_error(e, RPC_INVALID_PARAMS, "codeAction needs textDocument.uri and a range");
        return NULL;
    }
    json_t *ctx = lsp_get(params, "context", JSON_OBJECT);
    json_t *only = ctx ? lsp_get(ctx, "only", JSON_ARRAY) : NULL;
    json_t *ctx_diags = ctx ? lsp_get(ctx, "diagnostics", JSON_ARRAY) : NULL;
    json_t *actions = json_array();
    if (!d) return actions;
    uint32_t a = lsp_text_offset(d->text.data, d->text.len, &d->lines, rs, s->enc);
    uint32_t b = lsp_text_offset(d->text.data, d->text.len, &d->lines, re, s->enc);
    if (b < a) { uint32_t t = a; a = b; b = t; }
    struct { uint32_t line; int rule; } seen[64];
    uint32_t n_seen = 0;
    if (lsp__kind_wanted(only, "quickfix")) {
        for (uint32_t i = 0; i < d->result.diags.len; i++) {
            const Diag *g = &d->result.diags.items[i];
            if (g->span.start > b || g->span.end < a || !lsp__diag_matches(s, d, g, ctx_diags)) continue;
            const char *code = out_rule(g->rule)->code;
            if (g->fix && g->fix->n_edits) {
                StrBuf title;
                sb_init(&title);
                sb_printf(&title, "%s: %s%s", code, g->fix->message ? g->fix->message : "Apply the fix",
                          g->fix->safety == FIX_SAFE ? "" : " (unsafe)");
                json_array_append_new(actions, lsp__action(title.data, "quickfix", json_pack("[o]", lsp__diag_json(s, d, g)),
                                                           lsp__workspace_edit(d, lsp__edits_json(s, d, g->fix->edits,
                                                                                                  g->fix->n_edits)),
                                                           g->fix->safety == FIX_SAFE));
                sb_free(&title);
            }
            uint32_t line = lineindex_line_of(&d->lines, g->span.start);
            bool dup = false;
            for (uint32_t k = 0; k < n_seen; k++) dup |= seen[k].line == line && seen[k].rule == g->rule;
            if (dup) continue;
            if (n_seen < ARRAY_LEN(seen)) seen[n_seen].line = line, seen[n_seen].rule = g->rule, n_seen++;
            Edit ed;
            StrBuf text;
            sb_init(&text);
            if (lsp__noqa_edit(d, line, code, &ed, &text)) {
                ed.text = text.data;
                char title[64];
                snprintf(title, sizeof title, "Disable %s for this line", code);
                json_array_append_new(actions, lsp__action(title, "quickfix", json_pack("[o]", lsp__diag_json(s, d, g)),
                                                           lsp__workspace_edit(d, lsp__edits_json(s, d, &ed, 1)), false));
            }
            sb_free(&text);
        }
    }
    /* fix-all: offered when asked for by kind, or unasked when there is something to fix */
    if (lsp__kind_wanted(only, "source.fixAll.gradleak")) {
        uint32_t n = 0;
        json_t *edits = lsp__fix_all_edits(s, d, opts, &n);
        if (edits) {
            char title[80];
            snprintf(title, sizeof title, "gradleak: fix all (%u safe fix%s)", n, n == 1 ? "" : "es");
            json_array_append_new(actions, lsp__action(title, "source.fixAll.gradleak", NULL, lsp__workspace_edit(d, edits), false));
        }
    }
    return actions;
}

/* ---- hover ---- */

json_t *lsp_hover(const LspServer *s, const LspDoc *d, json_t *params, RpcError *e)
{
    json_t *td = lsp_get(params, "textDocument", JSON_OBJECT);
    json_t *uri = td ? lsp_get(td, "uri", JSON_STRING) : NULL;
    LspPos pos;
    if (!uri || !lsp_json_pos(lsp_get(params, "position", JSON_OBJECT), &pos)) {
        rpc_error(e, RPC_INVALID_PARAMS, "hover needs textDocument.uri and a position");
        return NULL;
    }
    if (!d) return json_null();
    uint32_t off = lsp_text_offset(d->text.data, d->text.len, &d->lines, pos, s->enc);
    StrBuf md;
    sb_init(&md);
    uint32_t rs = 0, re = 0;
    bool any = false;
    for (uint32_t i = 0; i < d->result.diags.len; i++) {
        const Diag *g = &d->result.diags.items[i];
        if (off < g->span.start || off > g->span.end) continue;
        const RuleInfo *ri = out_rule(g->rule);
        if (any) sb_puts(&md, "\n\n---\n\n");
        sb_printf(&md, "**%s** `%s` (%s)\n\n%s\n\n", ri->code, ri->name, out_severity_name(g->severity),
                  g->message ? g->message : "");
        if (g->hint) sb_printf(&md, "help: %s\n\n", g->hint);
        if (rule_doc(ri->id)[0]) sb_printf(&md, "%s\n\n", rule_doc(ri->id));
        else sb_printf(&md, "%s\n\n", ri->summary);
        sb_printf(&md, "[%s documentation](%s)", ri->code, rule_url(ri->id));
        if (!any || g->span.end - g->span.start < re - rs) rs = g->span.start, re = g->span.end;
        any = true;
    }
    if (!any) {
        sb_free(&md);
        return json_null();
    }
    json_t *h = json_pack("{s:{s:s,s:o},s:o}", "contents", "kind", "markdown", "value", lsp_jstr(md.data), "range",
                          lsp_range_json(s, d, rs, re));
    sb_free(&md);
    return h;
}
