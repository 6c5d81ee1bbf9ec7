/* What the LSP client sees of a lint: diagnostics, code actions (fix, noqa, fix-all) and hover. */
#include <ctype.h>
#include <strings.h>
#include "base/strbuf.h"
#include "engine/suppress.h"
#include "lsp/lsp_int.h"
#include "out/out.h"

json_t *lsp_range_json(const LspServer *s, const LspDoc *d, uint32_t start, uint32_t end)
{
    LspPos a = lsp_text_position(d->text.data, d->text.len, &d->lines, start, s->enc);
    LspPos b = lsp_text_position(d->text.data, d->text.len, &d->lines, end < start ? start : end, s->enc);
    return json_pack("{s:{s:I,s:I},s:{s:I,s:I}}", "start", "line", (json_int_t)a.line, "character",
                     (json_int_t)a.character, "end", "line", (json_int_t)b.line, "character",
                     (json_int_t)b.character);
}

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

static json_t *lsp__diag_json(const LspServer *s, const LspDoc *d, const Diag *g)
{
    const RuleInfo *ri = out_rule(g->rule);
    json_t *j = json_object();
    json_object_set_new(j, "range", lsp_range_json(s, d, g->span.start, g->span.end));
    json_object_set_new(j, "severity", json_integer(lsp__severity(g->severity)));
    json_object_set_new(j, "code", json_string(ri->code));
    json_object_set_new(j, "codeDescription", json_pack("{s:s}", "href", rule_url(ri->id)));
    json_object_set_new(j, "source", json_string("gradleak"));
    json_object_set_new(j, "message", lsp_jstr(g->message ? g->message : ri->summary));
    if (g->n_related) {
        json_t *rel = json_array();
        for (uint32_t i = 0; i < g->n_related; i++) {
            const Related *r = &g->related[i];
            json_array_append_new(rel, json_pack("{s:{s:s,s:o},s:o}", "location", "uri", d->uri, "range",
                                                 lsp_range_json(s, d, r->span.start, r->span.end), "message",
                                                 lsp_jstr(r->message ? r->message : "")));
        }
        json_object_set_new(j, "relatedInformation", rel);
    }
    /* the fix travels with the diagnostic (as ruff does), so a client can show it before asking */
    json_t *data = json_object();
    json_object_set_new(data, "rule", json_string(ri->name));
    if (g->hint) json_object_set_new(data, "hint", lsp_jstr(g->hint));
    if (g->fix) {
        json_object_set_new(data, "fix",
                            json_pack("{s:o,s:s,s:o}", "message", lsp_jstr(g->fix->message ? g->fix->message : ""),
                                      "applicability", g->fix->safety == FIX_SAFE ? "safe" : "unsafe", "edits",
                                      lsp__edits_json(s, d, g->fix->edits, g->fix->n_edits)));
    }
    json_object_set_new(j, "data", data);
    return j;
}

json_t *lsp_diagnostics_json(const LspServer *s, const LspDoc *d)
{
    json_t *arr = json_array();
    if (!d->has_result) return arr;
    for (uint32_t i = 0; i < d->result.diags.len; i++)
        json_array_append_new(arr, lsp__diag_json(s, d, &d->result.diags.items[i]));
    return arr;
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
    const LintResult *r = &d->result;
    for (uint32_t i = 0; i < r->n_comments; i++) {
        const Span *c = &r->comments[i];
        if (c->start < ls || c->start >= le) continue;
        /* the first `#` at which a noqa starts (as suppress_parse reads it) */
        for (uint32_t h = c->start; h < c->end && h < le; h++) {
            Noqa q;
            if (src[h] != '#' || !suppress_parse(src + h, c->end - h, &q)) continue;
            if (q.file_level) break;
            uint32_t p = h + 1;
            while (p < c->end && strncasecmp(src + p, "noqa", 4) != 0) p++;
            p += 4;
            if (p >= c->end || src[p] != ':') {
                if (!q.n_codes && !q.foreign) return false; /* bare noqa: suppresses everything */
                out->start = out->end = p;
                sb_printf(text, ": %s", code);
                return true;
            }
            /* after the last code of the list */
            uint32_t end = p + 1, k = p + 1;
            for (;;) {
                while (k < c->end && (src[k] == ' ' || src[k] == '\t' || src[k] == ',')) k++;
                uint32_t t = k;
                while (k < c->end && (isalnum((unsigned char)src[k]) || src[k] == '-' || src[k] == '_')) k++;
                if (k == t) break;
                end = k;
            }
            out->start = out->end = end;
            sb_printf(text, "%s%s", end > p + 1 ? ", " : " ", code);
            return true;
        }
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

/* All safe fixes of the document that do not overlap an earlier one, as one list of edits. */
static json_t *lsp__fix_all_edits(const LspServer *s, const LspDoc *d, uint32_t *n_fixes)
{
    json_t *edits = json_array();
    uint32_t last_end = 0;
    bool any = false;
    *n_fixes = 0;
    for (uint32_t i = 0; i < d->result.diags.len; i++) {
        const Fix *f = d->result.diags.items[i].fix;
        if (!f || f->safety != FIX_SAFE || !f->n_edits) continue;
        if (any && f->edits[0].start < last_end) continue;
        json_t *fe = lsp__edits_json(s, d, f->edits, f->n_edits);
        json_array_extend(edits, fe);
        json_decref(fe);
        last_end = f->edits[f->n_edits - 1].end;
        any = true;
        (*n_fixes)++;
    }
    return edits;
}

json_t *lsp_code_actions(LspServer *s, json_t *params, RpcError *e)
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
    LspDoc *d = lsp_find_doc(s, json_string_value(uri));
    if (!d) return actions;
    lsp_ensure_linted(s, d);
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
        json_t *edits = lsp__fix_all_edits(s, d, &n);
        if (n) {
            char title[80];
            snprintf(title, sizeof title, "gradleak: fix all (%u safe fix%s)", n, n == 1 ? "" : "es");
            json_array_append_new(actions, lsp__action(title, "source.fixAll.gradleak", NULL, lsp__workspace_edit(d, edits), false));
        } else {
            json_decref(edits);
        }
    }
    return actions;
}

/* ---- hover ---- */

json_t *lsp_hover(LspServer *s, json_t *params, RpcError *e)
{
    json_t *td = lsp_get(params, "textDocument", JSON_OBJECT);
    json_t *uri = td ? lsp_get(td, "uri", JSON_STRING) : NULL;
    LspPos pos;
    if (!uri || !lsp_json_pos(lsp_get(params, "position", JSON_OBJECT), &pos)) {
        rpc_error(e, RPC_INVALID_PARAMS, "hover needs textDocument.uri and a position");
        return NULL;
    }
    LspDoc *d = lsp_find_doc(s, json_string_value(uri));
    if (!d) return json_null();
    lsp_ensure_linted(s, d);
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
        if (ri->doc && ri->doc[0]) sb_printf(&md, "%s\n\n", ri->doc);
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
