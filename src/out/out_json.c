/* ruff-compatible JSON output (an array of findings, or --statistics rows), built with jansson one
 * finding at a time and written as the array's next element. */
#include <jansson.h>
#include <stdlib.h>
#include "base/strbuf.h"
#include "out/out_int.h"

/* A JSON string from any bytes: jansson refuses invalid UTF-8, so it is replaced by U+FFFD first. */
static json_t *json__str(const char *s)
{
    if (!s) return json_null();
    char *clean = out_utf8_sanitize(s, strlen(s));
    json_t *j = json_string(clean);
    gl_free(clean);
    return NEVER(!j) ? json_string("\xEF\xBF\xBD") : j;
}

static json_t *json__pos(OutPos p)
{
    json_t *o = json_object();
    json_object_set_new(o, "row", json_integer(p.row));
    json_object_set_new(o, "column", json_integer(p.col));
    return o;
}

/* Position of an edit's offset: edits carry no rows, so the file's line index gives them. */
static OutPos json__offset_pos(const OutFile *f, LineIndex *li, uint32_t off)
{
    if (!f->src) return (OutPos){1, off + 1};
    if (!li->starts) lineindex_build(li, f->src, f->len);
    if (off > f->len) off = (uint32_t)f->len;
    uint32_t row = lineindex_line_of(li, off);
    return out_file_pos(f, row, off, off - li->starts[row]);
}

static json_t *json__fix(const OutFile *f, LineIndex *li, const Fix *fix)
{
    if (!fix) return json_null();
    json_t *o = json_object(), *edits = json_array();
    json_object_set_new(o, "applicability", json_string(fix->safety == FIX_SAFE ? "safe" : "unsafe"));
    json_object_set_new(o, "message", json__str(fix->message));
    for (uint32_t i = 0; i < fix->n_edits; i++) {
        const Edit *e = &fix->edits[i];
        json_t *ej = json_object();
        json_object_set_new(ej, "content", json__str(e->text ? e->text : ""));
        json_object_set_new(ej, "location", json__pos(json__offset_pos(f, li, e->start)));
        json_object_set_new(ej, "end_location", json__pos(json__offset_pos(f, li, e->end)));
        json_array_append_new(edits, ej);
    }
    json_object_set_new(o, "edits", edits);
    return o;
}

static json_t *json__diag(const OutFile *f, LineIndex *li, const Diag *d)
{
    const RuleInfo *ri = out_rule(d->rule);
    OutPos start = out_span_start(f, &d->span);
    json_t *o = json_object();
    json_object_set_new(o, "code", json_string(ri->code));
    json_object_set_new(o, "message", json__str(d->message ? d->message : ""));
    json_object_set_new(o, "filename", json__str(f->path));
    /* notebooks: the cell's 1-based index among all cells, as ruff (rows are the cell's) */
    if (f->cells) json_object_set_new(o, "cell", json_integer(out_cell(f, d->span.row)));
    json_object_set_new(o, "location", json__pos(start));
    json_object_set_new(o, "end_location", json__pos(out_span_end(f, &d->span)));
    json_object_set_new(o, "fix", json__fix(f, li, d->fix));
    json_object_set_new(o, "url", json__str(ri->id < RULE_COUNT ? rule_url(ri->id) : NULL));
    /* A `# noqa` for the finding goes on its first line (the engine's suppressions read it there). */
    json_object_set_new(o, "noqa_row", json_integer(start.row));
    json_object_set_new(o, "severity", json_string(out_severity_name(d->severity)));
    json_object_set_new(o, "growth", d->growth == GROWTH_DEVICE ? json_string("device")
                                     : d->growth == GROWTH_HOST ? json_string("host")
                                                                : json_null());
    json_t *rel = json_array();
    for (uint32_t i = 0; i < d->n_related; i++) {
        const Related *r = &d->related[i];
        json_t *rj = json_object();
        json_object_set_new(rj, "message", json__str(r->message ? r->message : ""));
        json_object_set_new(rj, "location", json__pos(out_span_start(f, &r->span)));
        json_object_set_new(rj, "end_location", json__pos(out_span_end(f, &r->span)));
        json_array_append_new(rel, rj);
    }
    json_object_set_new(o, "related", rel);
    return o;
}

/* One element of the streamed array, dumped as json_dumpf would lay it out inside the array. */
static void json__element(OutStream *s, json_t *v)
{
    char *dump = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(v);
    if (!dump) {
        s->failed = true;
        return;
    }
    out_json_element(s, dump);
    free(dump); /* jansson's own allocation */
}

void out_json_begin(OutStream *s)
{
    fputc('[', s->fp);
}

void out_json_file(OutStream *s, const OutFile *f)
{
    if (s->o->statistics) return;
    LineIndex li = {NULL, 0};
    for (uint32_t j = 0; j < f->n_diags; j++) json__element(s, json__diag(f, &li, &f->diags[j]));
    if (li.starts) lineindex_free(&li);
}

void out_json_end(OutStream *s)
{
    if (s->o->statistics) {
        OutStat rows[RULE_COUNT + 1];
        uint32_t k = out_stream_statistics_rows(s, rows);
        for (uint32_t i = 0; i < k; i++) {
            const RuleInfo *ri = out_rule(rows[i].rule);
            json_t *o = json_object();
            json_object_set_new(o, "code", json_string(ri->code));
            json_object_set_new(o, "name", json_string(ri->name));
            json_object_set_new(o, "count", json_integer(rows[i].count));
            json_object_set_new(o, "fixable", json_boolean(rows[i].fixable));
            json__element(s, o);
        }
    }
    out_json_close(s);
    fputc('\n', s->fp);
}
