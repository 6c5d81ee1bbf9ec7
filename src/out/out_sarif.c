/* SARIF 2.1.0 output for GitHub code scanning (checked with `Sarif.Multitool validate --rule-kind Gh;Sarif`). */
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "out/out_int.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define SARIF_TOOL_URI "https://github.com/gradleak/gradleak"

static json_t *sarif__str(const char *s)
{
    char *clean = out_utf8_sanitize(s ? s : "", s ? strlen(s) : 0);
    json_t *j = json_string(clean);
    gl_free(clean);
    return NEVER(!j) ? json_string("\xEF\xBF\xBD") : j;
}

static json_t *sarif__text(const char *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "text", sarif__str(s));
    return o;
}

/* ---- paths and URIs ---- */

/* Appends the absolute, lexically normalised form of path ('.', '..' and repeated '/' removed; no
 * trailing '/' except for the root). Symlinks are not resolved: the CLI hands us the paths it read. */
static void sarif__abspath(StrBuf *out, const char *path)
{
    StrBuf raw;
    sb_init(&raw);
    if (path[0] != '/') {
        char cwd[4096];
        sb_puts(&raw, getcwd(cwd, sizeof cwd) ? cwd : "/");
        sb_putc(&raw, '/');
    }
    sb_puts(&raw, path);
    sb_clear(out);
    sb_append(out, "", 0);
    for (const char *p = raw.data; *p;) {
        while (*p == '/') p++;
        const char *q = p;
        while (*q && *q != '/') q++;
        size_t n = (size_t)(q - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (out->len > 0 && out->data[out->len - 1] != '/') out->len--;
            if (out->len > 0) out->len--;
            out->data[out->len] = 0;
        } else {
            sb_putc(out, '/');
            sb_append(out, p, n);
        }
        p = q;
    }
    if (out->len == 0) sb_putc(out, '/');
    sb_free(&raw);
}

/* RFC 3986: unreserved characters and '/' stay, every other byte is %XX. */
static void sarif__uri_encode(StrBuf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || c == '/')
            sb_putc(out, (char)c);
        else
            sb_printf(out, "%%%02X", c);
    }
}

/* The artifactLocation of path: relative to root with uriBaseId %SRCROOT% when it lies under root
 * (GitHub needs repository-relative URIs), else an absolute file:// URI. */
static json_t *sarif__artifact(const char *root_abs, const char *path)
{
    StrBuf abs, uri;
    sb_init(&abs);
    sb_init(&uri);
    sarif__abspath(&abs, path);
    size_t rn = strlen(root_abs);
    json_t *o = json_object();
    const char *rel = NULL;
    if (rn == 1) rel = abs.data + 1; /* root is "/" */
    else if (strncmp(abs.data, root_abs, rn) == 0 && abs.data[rn] == '/') rel = abs.data + rn + 1;
    if (rel && *rel) {
        sarif__uri_encode(&uri, rel);
        json_object_set_new(o, "uri", json_string(uri.data));
        json_object_set_new(o, "uriBaseId", json_string("%SRCROOT%"));
    } else {
        sb_puts(&uri, "file://");
        sarif__uri_encode(&uri, abs.data);
        json_object_set_new(o, "uri", json_string(uri.data));
    }
    sb_free(&abs);
    sb_free(&uri);
    return o;
}

/* ---- rules ---- */

/* The text under "## What it does" in a rule's doc, or NULL. */
static char *sarif__what_it_does(const char *doc)
{
    static const char head[] = "## What it does";
    const char *p = doc ? strstr(doc, head) : NULL;
    if (!p) return NULL;
    p += sizeof head - 1;
    const char *e = strstr(p, "\n## ");
    if (!e) e = p + strlen(p);
    while (p < e && (*p == '\n' || *p == '\r' || *p == ' ')) p++;
    while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ')) e--;
    return e > p ? gl_strndup(p, (size_t)(e - p)) : NULL;
}

static const char *sarif__level(Severity s)
{
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

/* Tag by code range, the grouping of DESIGN.md §4. */
static const char *sarif__category(const char *code)
{
    switch (strlen(code) == 5 ? code[2] : 0) {
    case '1': return "memory";
    case '2': return "correctness";
    case '3': return "performance";
    case '4': return "deprecated-api";
    case '9': return "suppression";
    }
    return "gradleak";
}

static json_t *sarif__rule(const RuleInfo *ri)
{
    const char *doc = rule_doc(ri->id)[0] ? rule_doc(ri->id) : ri->summary;
    char *what = sarif__what_it_does(rule_doc(ri->id));
    json_t *r = json_object();
    json_object_set_new(r, "id", json_string(ri->code));
    json_object_set_new(r, "name", json_string(ri->name));
    json_object_set_new(r, "shortDescription", sarif__text(ri->summary));
    json_object_set_new(r, "fullDescription", sarif__text(what ? what : ri->summary));
    json_t *help = sarif__text(doc);
    json_object_set_new(help, "markdown", sarif__str(doc));
    json_object_set_new(r, "help", help);
    json_object_set_new(r, "helpUri", sarif__str(rule_url(ri->id)));
    json_t *cfg = json_object();
    json_object_set_new(cfg, "level", json_string(sarif__level(ri->severity)));
    json_object_set_new(r, "defaultConfiguration", cfg);
    json_t *props = json_object(), *tags = json_array();
    json_array_append_new(tags, json_string(sarif__category(ri->code)));
    json_array_append_new(tags, json_string("pytorch"));
    json_object_set_new(props, "tags", tags);
    json_object_set_new(props, "precision", json_string("high"));
    json_object_set_new(props, "problem.severity",
                        json_string(ri->severity == SEV_ERROR ? "error" : ri->severity == SEV_WARNING ? "warning"
                                                                                                      : "recommendation"));
    json_object_set_new(r, "properties", props);
    gl_free(what);
    return r;
}

/* ---- results ---- */

/* FNV-1a, 64 bits: stable across platforms and runs, which is all a fingerprint needs. */
static uint64_t sarif__fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Hash of the rule and the flagged line with all whitespace removed, so re-indenting, CRLF and
 * moving the line leave it unchanged (GitHub's primaryLocationLineHash ignores whitespace too). */
static uint64_t sarif__line_hash(const OutFile *f, const Diag *d, const char *code)
{
    uint64_t h = sarif__fnv(0xcbf29ce484222325ULL, code, strlen(code) + 1);
    if (!f->src || d->span.start > f->len) return sarif__fnv(h, d->message ? d->message : "", d->message ? strlen(d->message) : 0);
    size_t a = d->span.start, b = d->span.start;
    while (a > 0 && f->src[a - 1] != '\n' && f->src[a - 1] != '\r') a--;
    while (b < f->len && f->src[b] != '\n' && f->src[b] != '\r') b++;
    for (size_t i = a; i < b; i++) {
        char c = f->src[i];
        if (c != ' ' && c != '\t' && c != '\f' && c != '\v') h = sarif__fnv(h, &c, 1);
    }
    return h;
}

static json_t *sarif__region(const OutFile *f, const Span *s)
{
    OutPos a = out_span_start(f, s), b = out_span_end(f, s);
    if (b.row < a.row || (b.row == a.row && b.col < a.col)) b = a;
    json_t *r = json_object();
    if (f->cells) { /* a notebook: the lines of the .ipynb where the sources are (no columns there) */
        uint32_t la = out_file_line(f, s->row), lb = out_file_line(f, s->end_row);
        json_object_set_new(r, "startLine", json_integer(la));
        json_object_set_new(r, "endLine", json_integer(lb < la ? la : lb));
        return r;
    }
    json_object_set_new(r, "startLine", json_integer(a.row));
    json_object_set_new(r, "startColumn", json_integer(a.col));
    json_object_set_new(r, "endLine", json_integer(b.row));
    json_object_set_new(r, "endColumn", json_integer(b.col));
    if (f->src && s->start < s->end && s->end <= f->len) {
        char *snip = out_utf8_sanitize(f->src + s->start, s->end - s->start);
        json_t *sn = json_object();
        json_object_set_new(sn, "text", json_string(snip));
        json_object_set_new(r, "snippet", sn);
        gl_free(snip);
    }
    return r;
}

static json_t *sarif__location(json_t *artifact, const OutFile *f, const Span *s)
{
    json_t *phys = json_object();
    json_object_set(phys, "artifactLocation", artifact);
    json_object_set_new(phys, "region", sarif__region(f, s));
    json_t *loc = json_object();
    json_object_set_new(loc, "physicalLocation", phys);
    return loc;
}

static const char *sarif__severity_class(const Diag *d)
{
    switch (d->growth) {
    case GROWTH_DEVICE: return "device-growth";
    case GROWTH_HOST: return "host-growth";
    case GROWTH_NONE: break;
    }
    return "no-growth";
}

static json_t *sarif__result(const OutFile *f, const Diag *d, json_t *artifact, uint64_t hash, uint32_t occurrence,
                             const char *extra_props)
{
    const RuleInfo *ri = out_rule(d->rule);
    json_t *res = json_object();
    json_object_set_new(res, "ruleId", json_string(ri->code));
    if (ri->id < RULE_COUNT) json_object_set_new(res, "ruleIndex", json_integer(ri->id));
    json_object_set_new(res, "level", json_string(sarif__level(d->severity)));
    json_object_set_new(res, "message", sarif__text(d->message));
    json_t *locs = json_array();
    json_array_append_new(locs, sarif__location(artifact, f, &d->span));
    json_object_set_new(res, "locations", locs);
    if (d->n_related) {
        json_t *rel = json_array();
        for (uint32_t i = 0; i < d->n_related; i++) {
            json_t *loc = sarif__location(artifact, f, &d->related[i].span);
            json_object_set_new(loc, "id", json_integer(i + 1));
            json_object_set_new(loc, "message", sarif__text(d->related[i].message));
            json_array_append_new(rel, loc);
        }
        json_object_set_new(res, "relatedLocations", rel);
    }
    char fp[40];
    snprintf(fp, sizeof fp, "%016llx:%u", (unsigned long long)hash, occurrence);
    json_t *fps = json_object();
    json_object_set_new(fps, "primaryLocationLineHash", json_string(fp));
    json_object_set_new(res, "partialFingerprints", fps);
    json_t *props = json_object();
    json_object_set_new(props, "severityClass", json_string(sarif__severity_class(d)));
    if (d->loop_line && f->cells) { /* a notebook: the loop's line in its cell */
        uint32_t lc = out_cell(f, d->loop_line - 1);
        json_object_set_new(props, "loopLine", json_integer(out_file_pos(f, d->loop_line - 1, UINT32_MAX, 0).row));
        json_object_set_new(props, "loopCell", json_integer(lc));
    } else if (d->loop_line) {
        json_object_set_new(props, "loopLine", json_integer(d->loop_line));
    }
    if (d->hint) json_object_set_new(props, "hint", sarif__str(d->hint));
    if (f->cells) { /* a notebook: where in which cell */
        OutPos a = out_span_start(f, &d->span), b = out_span_end(f, &d->span);
        json_object_set_new(props, "cell", json_integer(out_cell(f, d->span.row)));
        json_object_set_new(props, "cellLine", json_integer(a.row));
        json_object_set_new(props, "cellColumn", json_integer(a.col));
        json_object_set_new(props, "cellEndLine", json_integer(b.row));
        json_object_set_new(props, "cellEndColumn", json_integer(b.col));
    }
    if (extra_props) {
        json_error_t err;
        json_t *extra = json_loads(extra_props, 0, &err);
        if (json_is_object(extra)) json_object_update(props, extra);
        json_decref(extra);
    }
    json_object_set_new(res, "properties", props);
    return res;
}

void out_sarif_file(OutStream *s, const OutFile *f)
{
    const OutOptions *o = s->o;
    const char *const *props = o->sarif_props ? o->sarif_props[s->files] : NULL;
    json_t *artifact = sarif__artifact(s->root, f->path);
    /* occurrences of each line hash so far: an open-addressing table (a scan of the earlier hashes
     * made a file with 40,000 findings cost O(n^2)) */
    uint32_t cap = 16;
    while (cap < 2 * f->n_diags) cap *= 2;
    uint64_t *keys = gl_calloc(cap, sizeof *keys);
    uint32_t *counts = gl_calloc(cap, sizeof *counts); /* 0: an empty slot */
    for (uint32_t j = 0; j < f->n_diags; j++) {
        const Diag *d = &f->diags[j];
        uint64_t h = sarif__line_hash(f, d, out_rule(d->rule)->code);
        uint32_t slot = (uint32_t)(h ^ (h >> 32)) & (cap - 1);
        while (counts[slot] && keys[slot] != h) slot = (slot + 1) & (cap - 1);
        keys[slot] = h;
        uint32_t occurrence = ++counts[slot];
        json_t *res = sarif__result(f, d, artifact, h, occurrence, props ? props[j] : NULL);
        char *dump = json_dumps(res, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(res);
        if (dump) out_json_element(s, dump);
        else s->failed = true;
        free(dump); /* jansson's own allocation */
    }
    gl_free(keys);
    gl_free(counts);
    json_decref(artifact);
}

/* The document is dumped once with an empty results array, then split there: the results stream
 * in between, laid out as json_dumpf lays out the whole document. */
void out_sarif_begin(OutStream *s)
{
    const OutOptions *o = s->o;
    StrBuf root, uri;
    sb_init(&root);
    sb_init(&uri);
    sarif__abspath(&root, o->srcroot && o->srcroot[0] ? o->srcroot : ".");

    json_t *rules = json_array();
    for (int r = 0; r < RULE_COUNT; r++) json_array_append_new(rules, sarif__rule(out_rule(r)));
    json_t *driver = json_object();
    json_object_set_new(driver, "name", json_string("gradleak"));
    json_object_set_new(driver, "informationUri", json_string(SARIF_TOOL_URI));
    json_object_set_new(driver, "version", json_string(GL_VERSION));
    json_object_set_new(driver, "semanticVersion", json_string(GL_VERSION));
    json_object_set_new(driver, "rules", rules);
    json_t *tool = json_object();
    json_object_set_new(tool, "driver", driver);

    sb_puts(&uri, "file://");
    sarif__uri_encode(&uri, root.data);
    if (uri.data[uri.len - 1] != '/') sb_putc(&uri, '/');
    json_t *base = json_object(), *srcroot = json_object();
    json_object_set_new(srcroot, "uri", json_string(uri.data));
    json_object_set_new(base, "%SRCROOT%", srcroot);

    json_t *run = json_object();
    json_object_set_new(run, "tool", tool);
    json_object_set_new(run, "originalUriBaseIds", base);
    json_object_set_new(run, "columnKind", json_string("unicodeCodePoints"));
    json_object_set_new(run, "results", json_array()); /* the last member of the run: see the split below */
    json_t *runs = json_array();
    json_array_append_new(runs, run);
    json_t *doc = json_object();
    json_object_set_new(doc, "$schema", json_string(SARIF_SCHEMA));
    json_object_set_new(doc, "version", json_string("2.1.0"));
    json_object_set_new(doc, "runs", runs);

    char *dump = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    sb_free(&uri);
    s->root = sb_take(&root);
    /* The last `"results": [` of the dump is the run's: a string's quotes are escaped, so the key
     * cannot appear inside one. */
    static const char key[] = "\"results\": [";
    char *at = NULL;
    for (char *p = dump; p && (p = strstr(p, key)) != NULL; p++) at = p;
    if (NEVER(!at)) {
        s->failed = true;
        free(dump);
        return;
    }
    char *line = at;
    while (line > dump && line[-1] != '\n') line--;
    s->indent = (int)(at - line);
    char *open = at + sizeof key - 1;
    fwrite(dump, 1, (size_t)(open - dump), s->fp);
    s->tail = gl_strdup(open); /* "]" and what closes the run and the document */
    free(dump); /* jansson's own allocation */
}

void out_sarif_end(OutStream *s)
{
    if (!s->tail) return;
    if (s->items) fprintf(s->fp, "\n%*s", s->indent, "");
    fputs(s->tail, s->fp);
    fputc('\n', s->fp);
}
