/* JSON helpers of the language server: strings, typed members, positions and ranges (no server
 * state: the dispatcher and the features both use them). */
#include "lsp/lsp_int.h"
#include "out/out.h"

json_t *lsp_jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j) return j;
    char *clean = out_utf8_sanitize(s, strlen(s));
    j = json_string(clean);
    gl_free(clean);
    return j ? j : json_string("");
}

json_t *lsp_get(const json_t *obj, const char *key, json_type type)
{
    if (!json_is_object(obj)) return NULL;
    json_t *v = json_object_get(obj, key);
    return v && json_typeof(v) == type ? v : NULL;
}

static bool lsp__uint(const json_t *j, uint32_t *out)
{
    if (!json_is_integer(j)) return false;
    json_int_t v = json_integer_value(j);
    if (v < 0 || v > (json_int_t)UINT32_MAX) return false;
    *out = (uint32_t)v;
    return true;
}

bool lsp_json_pos(const json_t *j, LspPos *p)
{
    return json_is_object(j) && lsp__uint(json_object_get(j, "line"), &p->line) &&
           lsp__uint(json_object_get(j, "character"), &p->character);
}

bool lsp_json_range(const json_t *j, LspPos *start, LspPos *end)
{
    return json_is_object(j) && lsp_json_pos(json_object_get(j, "start"), start) &&
           lsp_json_pos(json_object_get(j, "end"), end);
}

json_t *lsp_range_json(const LspServer *s, const LspDoc *d, uint32_t start, uint32_t end)
{
    LspPos a = lsp_text_position(d->text.data, d->text.len, &d->lines, start, s->enc);
    LspPos b = lsp_text_position(d->text.data, d->text.len, &d->lines, end < start ? start : end, s->enc);
    return json_pack("{s:{s:I,s:I},s:{s:I,s:I}}", "start", "line", (json_int_t)a.line, "character",
                     (json_int_t)a.character, "end", "line", (json_int_t)b.line, "character",
                     (json_int_t)b.character);
}
