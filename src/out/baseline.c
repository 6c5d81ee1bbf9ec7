/* The baseline file: JSON read and write, the key of a finding, matching with counts. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "out/baseline.h"

#define BASELINE_VERSION 1

static const char *baseline__path(const char *p)
{
    while (p[0] == '.' && p[1] == '/') p += 2;
    return p;
}

static bool baseline__word(unsigned char c) { return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

char *baseline_source(const char *src, size_t len, const Span *s)
{
    StrBuf sb;
    sb_init(&sb);
    if (!src || s->start > len) return (sb_puts(&sb, ""), sb_take(&sb));
    /* from the start of the first line to the end of the last line of the span */
    size_t a = s->start, b = s->end > s->start ? s->end : s->start;
    if (b > len) b = len;
    while (a > 0 && src[a - 1] != '\n' && src[a - 1] != '\r') a--;
    while (b < len && src[b] != '\n' && src[b] != '\r') b++;
    /* Whitespace is dropped, except one space between two word characters (`return x`), so that
     * re-indenting, re-wrapping or `f( x )` for `f(x)` keeps the key. */
    bool space = false;
    for (size_t i = a; i < b; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            space = sb.len > 0;
            continue;
        }
        if (space && baseline__word((unsigned char)sb.data[sb.len - 1]) && baseline__word(c)) sb_putc(&sb, ' ');
        space = false;
        sb_putc(&sb, (char)c);
    }
    if (!sb.data) sb_puts(&sb, "");
    return sb_take(&sb);
}

void baseline_free(Baseline *b)
{
    for (uint32_t i = 0; i < b->entries.len; i++) {
        gl_free(b->entries.items[i].rule);
        gl_free(b->entries.items[i].path);
        gl_free(b->entries.items[i].source);
    }
    array_free(&b->entries);
}

int baseline_read(const char *file, Baseline *b, char *err, size_t err_size)
{
    array_init(&b->entries);
    json_error_t je;
    json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line <= 0) snprintf(err, err_size, "%s: cannot read the baseline: %s", file, je.text);
        else snprintf(err, err_size, "%s:%d:%d: the baseline is not valid JSON: %s", file, je.line, je.column, je.text);
        return -1;
    }
    json_t *entries = json_object_get(root, "entries");
    if (!json_is_object(root) || !json_is_array(entries)) {
        snprintf(err, err_size, "%s: not a gradleak baseline (expected {\"version\": 1, \"entries\": [...]}; "
                 "write one with --write-baseline)", file);
        json_decref(root);
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e) {
        const char *rule = json_string_value(json_object_get(e, "rule"));
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *source = json_string_value(json_object_get(e, "source"));
        json_t *count = json_object_get(e, "count");
        json_int_t n = count ? (json_is_integer(count) ? json_integer_value(count) : -1) : 1;
        if (!rule || !path || !source || n < 1 || n > UINT32_MAX) {
            snprintf(err, err_size, "%s: entry %zu needs \"rule\", \"path\" and \"source\" strings and a positive "
                     "\"count\"", file, i + 1);
            json_decref(root);
            baseline_free(b);
            return -1;
        }
        BaselineEntry be = {gl_strdup(rule), gl_strdup(baseline__path(path)), gl_strdup(source), (uint32_t)n, 0, false};
        array_push(&b->entries, be);
    }
    json_decref(root);
    return 0;
}

bool baseline_match(Baseline *b, const char *rule, const char *path, const char *source)
{
    path = baseline__path(path);
    for (uint32_t i = 0; i < b->entries.len; i++) {
        BaselineEntry *e = &b->entries.items[i];
        if (e->used < e->count && !strcmp(e->rule, rule) && !strcmp(e->path, path) && !strcmp(e->source, source)) {
            e->used++;
            return true;
        }
    }
    return false;
}

void baseline_linted(Baseline *b, const char *path)
{
    path = baseline__path(path);
    for (uint32_t i = 0; i < b->entries.len; i++)
        if (!strcmp(b->entries.items[i].path, path)) b->entries.items[i].linted = true;
}

static int baseline__cmp(const void *x, const void *y)
{
    const BaselineKey *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    if (!c) c = strcmp(a->rule, b->rule);
    if (!c) c = strcmp(a->source, b->source);
    return c;
}

void baseline_writer_init(BaselineWriter *w)
{
    array_init(&w->keys);
}

void baseline_writer_free(BaselineWriter *w)
{
    for (uint32_t i = 0; i < w->keys.len; i++) {
        gl_free(w->keys.items[i].path);
        gl_free(w->keys.items[i].source);
    }
    array_free(&w->keys);
}

void baseline_writer_add(BaselineWriter *w, const OutFile *f)
{
    for (uint32_t d = 0; d < f->n_diags; d++) {
        BaselineKey k = {out_rule(f->diags[d].rule)->code, gl_strdup(baseline__path(f->path)),
                         baseline_source(f->src, f->len, &f->diags[d].span)};
        array_push(&w->keys, k);
    }
}

long baseline_write(const char *file, const OutFile *files, uint32_t n, char *err, size_t err_size)
{
    BaselineWriter w;
    baseline_writer_init(&w);
    for (uint32_t f = 0; f < n; f++) baseline_writer_add(&w, &files[f]);
    long rc = baseline_writer_finish(&w, file, err, err_size);
    baseline_writer_free(&w);
    return rc;
}

long baseline_writer_finish(BaselineWriter *w, const char *file, char *err, size_t err_size)
{
    BaselineKey *keys = w->keys.items;
    uint32_t nkeys = w->keys.len;
    if (nkeys > 1) qsort(keys, nkeys, sizeof *keys, baseline__cmp);
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(BASELINE_VERSION));
    json_object_set_new(root, "tool", json_string("gradleak " GL_VERSION));
    json_t *entries = json_array();
    for (uint32_t i = 0; i < nkeys;) {
        uint32_t j = i + 1;
        while (j < nkeys && !baseline__cmp(&keys[i], &keys[j])) j++;
        json_t *e = json_object();
        json_object_set_new(e, "rule", json_string(keys[i].rule));
        char *p = out_utf8_sanitize(keys[i].path, strlen(keys[i].path));
        char *s = out_utf8_sanitize(keys[i].source, strlen(keys[i].source));
        json_object_set_new(e, "path", json_string(p));
        json_object_set_new(e, "source", json_string(s));
        gl_free(p);
        gl_free(s);
        json_object_set_new(e, "count", json_integer(j - i));
        json_array_append_new(entries, e);
        i = j;
    }
    json_object_set_new(root, "entries", entries);
    long total = nkeys;
    StrBuf tmp;
    sb_init(&tmp);
    sb_printf(&tmp, "%s.%ld.tmp", file, (long)getpid());
    int rc = json_dump_file(root, tmp.data, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0 || rename(tmp.data, file) != 0) {
        snprintf(err, err_size, "%s: cannot write the baseline: %s", file, strerror(errno ? errno : EIO));
        unlink(tmp.data);
        total = -1;
    }
    sb_free(&tmp);
    return total;
}
