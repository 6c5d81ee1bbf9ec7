/* The text formats (full with code frames, concise), --statistics, out_write's dispatch, and the
 * position/rule helpers every formatter shares. */
#include <stdio.h>
#include "base/array.h"
#include "base/strbuf.h"
#include "nb/nb.h"
#include "out/out_int.h"

/* ---- shared helpers ---- */

int out_format_parse(const char *name, OutFormat *fmt)
{
    static const struct {
        const char *name;
        OutFormat fmt;
    } names[] = {
        {"full", OUT_FULL}, {"concise", OUT_CONCISE}, {"json", OUT_JSON},
        {"sarif", OUT_SARIF}, {"github", OUT_GITHUB},
    };
    if (!name) return -1;
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        if (strcmp(name, names[i].name) == 0) {
            *fmt = names[i].fmt;
            return 0;
        }
    }
    return -1;
}

const char *out_format_name(OutFormat fmt)
{
    switch (fmt) {
    case OUT_FULL: return "full";
    case OUT_CONCISE: return "concise";
    case OUT_JSON: return "json";
    case OUT_SARIF: return "sarif";
    case OUT_GITHUB: return "github";
    }
    return "?";
}

int out_write(FILE *fp, OutFormat fmt, const OutFile *files, uint32_t n_files, const OutOptions *o)
{
    OutStream *s = out_stream_begin(fp, fmt, o);
    for (uint32_t i = 0; i < n_files; i++) out_stream_file(s, &files[i]);
    return out_stream_end(s);
}

OutStream *out_stream_begin(FILE *fp, OutFormat fmt, const OutOptions *o)
{
    static const OutOptions defaults;
    OutStream *s = gl_calloc(1, sizeof *s);
    s->fp = fp;
    s->fmt = fmt;
    s->o = o ? o : &defaults;
    for (int r = 0; r <= RULE_COUNT; r++) s->stats[r].rule = r;
    if (fmt == OUT_JSON) out_json_begin(s);
    else if (fmt == OUT_SARIF) out_sarif_begin(s);
    return s;
}

void out_stream_file(OutStream *s, const OutFile *f)
{
    out_count_add(&s->counts, f, s->o->unsafe_fixes);
    for (uint32_t j = 0; j < f->n_diags; j++) {
        const Diag *d = &f->diags[j];
        OutStat *st = &s->stats[d->rule >= 0 && d->rule < RULE_COUNT ? d->rule : RULE_COUNT];
        st->count++;
        if (d->fix) st->fixable = s->any_fix = true;
    }
    switch (s->fmt) {
    case OUT_FULL: out_text_file(s, f, false); break;
    case OUT_CONCISE: out_text_file(s, f, true); break;
    case OUT_JSON: out_json_file(s, f); break;
    case OUT_SARIF: out_sarif_file(s, f); break;
    case OUT_GITHUB: out_github_file(s, f); break;
    }
    s->files++;
}

int out_stream_end(OutStream *s)
{
    switch (s->fmt) {
    case OUT_FULL:
    case OUT_CONCISE: out_text_end(s); break;
    case OUT_JSON: out_json_end(s); break;
    case OUT_SARIF: out_sarif_end(s); break;
    case OUT_GITHUB: break;
    }
    int rc = s->failed || fflush(s->fp) != 0 || ferror(s->fp) ? -1 : 0;
    gl_free(s->root);
    gl_free(s->tail);
    gl_free(s);
    return rc;
}

void out_json_element(OutStream *s, const char *dump)
{
    int depth = s->indent + 2;
    fprintf(s->fp, "%s\n%*s", s->items ? "," : "", depth, "");
    /* a JSON text has no raw line break inside a string: every one is the layout's */
    for (const char *p = dump; *p; p++) {
        fputc(*p, s->fp);
        if (*p == '\n') fprintf(s->fp, "%*s", depth, "");
    }
    s->items++;
}

void out_json_close(OutStream *s)
{
    if (s->items) fprintf(s->fp, "\n%*s", s->indent, "");
    fputc(']', s->fp);
}

OutPos out_pos(const char *src, size_t len, uint32_t row, uint32_t off, uint32_t byte_col)
{
    OutPos p = {row + 1, byte_col + 1};
    if (!src || off > len) return p;
    uint32_t ls = off;
    while (ls > 0 && src[ls - 1] != '\n' && src[ls - 1] != '\r') ls--;
    /* a UTF-8 byte-order mark is not a column */
    if (ls == 0 && off >= 3 && len >= 3 && !memcmp(src, "\xEF\xBB\xBF", 3)) ls = 3;
    p.col = (uint32_t)utf8_count(src + ls, off - ls) + 1;
    return p;
}

OutPos out_file_pos(const OutFile *f, uint32_t row, uint32_t off, uint32_t byte_col)
{
    OutPos p = out_pos(f->src, f->len, row, off, byte_col);
    const NbCell *c = f->cells ? nb_cell_of_row(f->cells, f->n_cells, row) : NULL;
    if (c && row >= c->row) p.row -= c->row;
    return p;
}

uint32_t out_cell(const OutFile *f, uint32_t row)
{
    const NbCell *c = f->cells ? nb_cell_of_row(f->cells, f->n_cells, row) : NULL;
    return c ? c->index : 0;
}

uint32_t out_file_line(const OutFile *f, uint32_t row)
{
    const NbCell *c = f->cells ? nb_cell_of_row(f->cells, f->n_cells, row) : NULL;
    if (!f->cells) return row + 1;
    if (!c || !c->json_line) return 1;
    return c->json_lines && row >= c->row ? c->json_line + (row - c->row) : c->json_line;
}

OutPos out_span_start(const OutFile *f, const Span *s)
{
    return out_file_pos(f, s->row, s->start, s->col);
}

OutPos out_span_end(const OutFile *f, const Span *s)
{
    return out_file_pos(f, s->end_row, s->end, s->end_col);
}

const RuleInfo *out_rule(RuleId rule)
{
    const RuleInfo *ri = rule_info(rule);
    GL_ASSERT(ri != NULL); /* a Diag's rule is a RuleId: the engine sets it, the cache codec checks it */
    return ri;
}

const char *out_severity_name(Severity s)
{
    switch (s) {
    case SEV_ERROR: return "error";
    case SEV_WARNING: return "warning";
    case SEV_INFO: return "info";
    }
    return "error";
}

char *out_utf8_sanitize(const char *s, size_t n)
{
    StrBuf sb;
    sb_init(&sb);
    sb_append(&sb, "", 0);
    for (size_t i = 0; i < n;) {
        int k = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (k) {
            sb_append(&sb, s + i, (size_t)k);
            i += (size_t)k;
        } else {
            sb_append(&sb, "\xEF\xBF\xBD", 3);
            i++;
        }
    }
    return sb_take(&sb);
}

void out_count_add(OutCounts *c, const OutFile *f, bool unsafe_fixes)
{
    for (uint32_t j = 0; j < f->n_diags; j++) {
        const Diag *d = &f->diags[j];
        c->total++;
        if (d->severity == SEV_WARNING) c->warnings++;
        else if (d->severity == SEV_INFO) c->infos++;
        else c->errors++;
        if (!d->fix) continue;
        if (d->fix->safety == FIX_SAFE || unsafe_fixes) c->fixable++;
        else c->unsafe_hidden++;
    }
}

OutCounts out_count(const OutFile *files, uint32_t n, bool unsafe_fixes)
{
    OutCounts c = {0};
    for (uint32_t i = 0; i < n; i++) out_count_add(&c, &files[i], unsafe_fixes);
    return c;
}

/* ---- text ---- */

/* ANSI styles, or "" when color is off. */
typedef struct TextStyle {
    const char *bold, *err, *warn, *info, *gutter, *help, *ok, *reset;
} TextStyle;

static const TextStyle text__plain = {"", "", "", "", "", "", "", ""};
static const TextStyle text__color = {"\x1b[1m", "\x1b[1;31m", "\x1b[1;33m", "\x1b[1;36m",
                                      "\x1b[1;34m", "\x1b[1;36m", "\x1b[1;32m", "\x1b[0m"};

static const char *text__sev_style(const TextStyle *st, Severity s)
{
    return s == SEV_WARNING ? st->warn : s == SEV_INFO ? st->info : st->err;
}

/* Frame layout: a tab shows as 4 spaces (ruff's snippets do the same), every other code point as one
 * column; invalid UTF-8 and control characters show as U+FFFD so the terminal never sees raw escapes. */
#define TEXT_TAB_WIDTH 4
/* A span over more lines than this shows its first and last lines around a "..." gutter. */
#define TEXT_MAX_SPAN_LINES 6

/* Display width of src[a..b) in the frame. */
static uint32_t text__width(const char *src, uint32_t a, uint32_t b)
{
    uint32_t w = 0;
    for (uint32_t i = a; i < b;) {
        int k = utf8_seq_len((const unsigned char *)src + i, b - i);
        w += src[i] == '\t' ? TEXT_TAB_WIDTH : 1;
        i += k ? (uint32_t)k : 1;
    }
    return w;
}

static void text__put_source(FILE *fp, const char *src, uint32_t a, uint32_t b)
{
    for (uint32_t i = a; i < b;) {
        unsigned char c = (unsigned char)src[i];
        int k = utf8_seq_len((const unsigned char *)src + i, b - i);
        if (c == '\t') fputs("    ", fp);
        else if (!k || c < 0x20 || c == 0x7f) fputs("\xEF\xBF\xBD", fp);
        else if (k == 2 && c == 0xC2 && (unsigned char)src[i + 1] < 0xA0) fputs("\xEF\xBF\xBD", fp); /* C1 */
        else fwrite(src + i, 1, (size_t)k, fp);
        i += k ? (uint32_t)k : 1;
    }
}

typedef struct TextLine {
    uint32_t start, end, next; /* content [start, end); next = start of the following line (or len) */
} TextLine;

static TextLine text__line_from(const char *src, uint32_t len, uint32_t start)
{
    TextLine l = {start, start, start};
    while (l.end < len && src[l.end] != '\n' && src[l.end] != '\r') l.end++;
    l.next = l.end;
    if (l.next < len) l.next += (src[l.next] == '\r' && l.next + 1 < len && src[l.next + 1] == '\n') ? 2 : 1;
    return l;
}

static uint32_t text__line_start(const char *src, uint32_t off)
{
    while (off > 0 && src[off - 1] != '\n' && src[off - 1] != '\r') off--;
    return off;
}

static bool text__prev_line(const char *src, uint32_t len, uint32_t start, TextLine *out)
{
    if (start == 0) return false;
    uint32_t e = start - 1;
    if (src[e] == '\n' && e > 0 && src[e - 1] == '\r') e--;
    *out = text__line_from(src, len, text__line_start(src, e));
    return true;
}

static uint32_t text__digits(uint32_t n)
{
    uint32_t d = 1;
    while (n >= 10) n /= 10, d++;
    return d;
}

static void text__gutter(FILE *fp, const TextStyle *st, uint32_t w, uint32_t row)
{
    if (row) fprintf(fp, "%s%*u |%s", st->gutter, (int)w, row, st->reset);
    else fprintf(fp, "%s%*s |%s", st->gutter, (int)w, "", st->reset);
}

static void text__source_line(FILE *fp, const TextStyle *st, uint32_t w, uint32_t row, const char *src,
                              TextLine l)
{
    text__gutter(fp, st, w, row);
    if (l.end > l.start) {
        fputc(' ', fp);
        text__put_source(fp, src, l.start, l.end);
    }
    fputc('\n', fp);
}

/* The code frame: the line before, the flagged lines with ^^^ under the span, the line after. */
static void text__frame(FILE *fp, const TextStyle *st, const OutFile *f, const Diag *d)
{
    const char *src = f->src;
    uint32_t len = (uint32_t)GL_MIN(f->len, (size_t)UINT32_MAX);
    uint32_t start = d->span.start, end = GL_MAX(d->span.end, d->span.start);
    if (!src || start > len || end > len) return;
    /* a notebook's frame shows only the finding's cell */
    const NbCell *cell = f->cells ? nb_cell_of_row(f->cells, f->n_cells, d->span.row) : NULL;
    uint32_t cell_lo = cell ? cell->start : 0, cell_hi = cell ? GL_MIN(cell->end, len) : len;

    Array(TextLine) lines;
    array_init(&lines);
    TextLine l = text__line_from(src, len, text__line_start(src, start));
    array_push(&lines, l);
    while (l.next < len && l.next < end) {
        l = text__line_from(src, len, l.next);
        array_push(&lines, l);
    }
    uint32_t first_row = out_span_start(f, &d->span).row, last_row = first_row + lines.len - 1;
    TextLine before, after = text__line_from(src, len, lines.items[lines.len - 1].next);
    bool has_before = lines.items[0].start > cell_lo && text__prev_line(src, len, lines.items[0].start, &before);
    bool has_after = lines.items[lines.len - 1].next < cell_hi;
    uint32_t w = text__digits(last_row + (has_after ? 1 : 0));
    const char *mark = text__sev_style(st, d->severity);

    text__gutter(fp, st, w, 0);
    fputc('\n', fp);
    if (has_before && first_row > 1) text__source_line(fp, st, w, first_row - 1, src, before);
    for (uint32_t i = 0; i < lines.len; i++) {
        if (lines.len > TEXT_MAX_SPAN_LINES && i == TEXT_MAX_SPAN_LINES / 2) {
            fprintf(fp, "%s...%s\n", st->gutter, st->reset);
            i = lines.len - TEXT_MAX_SPAN_LINES / 2;
        }
        TextLine li = lines.items[i];
        text__source_line(fp, st, w, first_row + i, src, li);
        uint32_t a = GL_MAX(start, li.start), b = GL_MIN(end, li.end);
        if (i > 0) {
            while (a < b && (src[a] == ' ' || src[a] == '\t' || src[a] == '\f')) a++;
            if (a >= b) continue; /* a blank line inside the span gets no carets */
        }
        uint32_t pad = text__width(src, li.start, a), n = b > a ? text__width(src, a, b) : 1;
        text__gutter(fp, st, w, 0);
        fprintf(fp, " %*s%s", (int)pad, "", mark);
        for (uint32_t k = 0; k < n; k++) fputc('^', fp);
        if (i == lines.len - 1) fprintf(fp, " %s", out_rule(d->rule)->code);
        fprintf(fp, "%s\n", st->reset);
    }
    if (has_after) text__source_line(fp, st, w, last_row + 1, src, after);
    text__gutter(fp, st, w, 0);
    fputc('\n', fp);
    array_free(&lines);
}

/* The header must stay one line (editors' problem matchers and errorformat read it): line breaks in
 * a path or message become spaces. */
static void text__put_oneline(FILE *fp, const char *s)
{
    for (; s && *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, fp);
}

/* `path:line:col: CODE [*] message`: ruff's [*] marks a finding that --fix (or --fix with
 * --unsafe-fixes, when that is given) would fix. */
static void text__header(FILE *fp, const TextStyle *st, const OutFile *f, const Diag *d, const OutOptions *o)
{
    OutPos p = out_span_start(f, &d->span);
    fputs(st->bold, fp);
    text__put_oneline(fp, f->path);
    if (f->cells) fprintf(fp, ":cell %u", out_cell(f, d->span.row));
    fprintf(fp, "%s:%u:%u: %s%s%s ", st->reset, p.row, p.col, text__sev_style(st, d->severity),
            out_rule(d->rule)->code, st->reset);
    if (o->show_fix_hints && d->fix && (d->fix->safety == FIX_SAFE || o->unsafe_fixes))
        fprintf(fp, "%s[*]%s ", st->help, st->reset);
    text__put_oneline(fp, d->message);
    fputc('\n', fp);
}

static void text__not_analysed(FILE *fp, const OutOptions *o)
{
    if (o->not_analysed)
        fprintf(fp, "%u file%s not analysed (see the messages above).\n", o->not_analysed, o->not_analysed == 1 ? " was" : "s were");
}

static void text__summary(FILE *fp, const TextStyle *st, OutCounts c, const OutOptions *o)
{
    if (c.total == 0 && o->fixed == 0) {
        /* a skipped file was not checked: passing it would be a claim nothing supports */
        if (o->not_analysed) fputs("No findings in the files analysed.\n", fp);
        else fprintf(fp, "%sAll checks passed!%s\n", st->ok, st->reset);
        text__not_analysed(fp, o);
        return;
    }
    uint32_t all = c.total + o->fixed;
    if (o->fixed) fprintf(fp, "Found %u error%s (%u fixed, %u remaining).\n", all, all == 1 ? "" : "s", o->fixed, c.total);
    else fprintf(fp, "Found %u error%s.\n", all, all == 1 ? "" : "s");
    text__not_analysed(fp, o);
    if (!o->show_fix_hints) return;
    if (c.fixable) {
        fprintf(fp, "%s[*]%s %u fixable with the `--fix` option", st->help, st->reset, c.fixable);
        if (c.unsafe_hidden)
            fprintf(fp, " (%u hidden fix%s can be enabled with the `--unsafe-fixes` option)", c.unsafe_hidden,
                    c.unsafe_hidden == 1 ? "" : "es");
        fputs(".\n", fp);
    } else if (c.unsafe_hidden) {
        fprintf(fp, "No fixes available (%u hidden fix%s can be enabled with the `--unsafe-fixes` option).\n",
                c.unsafe_hidden, c.unsafe_hidden == 1 ? "" : "es");
    }
}

void out_text_file(OutStream *s, const OutFile *f, bool concise)
{
    const OutOptions *o = s->o;
    const TextStyle *st = o->color ? &text__color : &text__plain;
    FILE *fp = s->fp;
    if (o->statistics) return;
    for (uint32_t j = 0; j < f->n_diags; j++) {
        const Diag *d = &f->diags[j];
        text__header(fp, st, f, d, o);
        if (concise) continue;
        text__frame(fp, st, f, d);
        const char *help = d->hint ? d->hint : d->fix ? d->fix->message : NULL;
        if (help) fprintf(fp, "  = %shelp%s: %s\n", st->help, st->reset, help);
        for (uint32_t k = 0; k < d->n_related; k++) {
            const Related *r = &d->related[k];
            if (f->cells)
                fprintf(fp, "  = %snote%s: cell %u, line %u: %s\n", st->help, st->reset, out_cell(f, r->span.row),
                        out_span_start(f, &r->span).row, r->message ? r->message : "");
            else
                fprintf(fp, "  = %snote%s: line %u: %s\n", st->help, st->reset, r->span.row + 1,
                        r->message ? r->message : "");
        }
        /* --trace: the dataflow facts behind the finding, one per line */
        for (const char *t = d->trace; t && *t;) {
            const char *nl = strchr(t, '\n');
            size_t len = nl ? (size_t)(nl - t) : strlen(t);
            fprintf(fp, "  = %strace%s: %.*s\n", st->help, st->reset, (int)len, t);
            t += len + (nl ? 1 : 0);
        }
        fputc('\n', fp);
    }
}

static void stat__print(FILE *fp, const OutStat all[RULE_COUNT + 1], bool any_fix, bool color);

void out_text_end(OutStream *s)
{
    if (s->o->statistics) stat__print(s->fp, s->stats, s->any_fix, s->o->color);
    else text__summary(s->fp, s->o->color ? &text__color : &text__plain, s->counts, s->o);
}

/* ---- statistics ---- */

static int stat__cmp(const void *a, const void *b)
{
    const OutStat *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(out_rule(x->rule)->code, out_rule(y->rule)->code);
}

/* The rows of all[] (indexed by rule) that counted something, in out_statistics' order. */
static uint32_t stat__rows(const OutStat all[RULE_COUNT + 1], OutStat *rows)
{
    uint32_t k = 0;
    for (int r = 0; r <= RULE_COUNT; r++)
        if (all[r].count) rows[k++] = all[r];
    qsort(rows, k, sizeof *rows, stat__cmp);
    return k;
}

static void stat__collect(const OutFile *files, uint32_t n, OutStat all[RULE_COUNT + 1], bool *any_fix)
{
    for (int r = 0; r <= RULE_COUNT; r++) all[r] = (OutStat){r, 0, false};
    *any_fix = false;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < files[i].n_diags; j++) {
            const Diag *d = &files[i].diags[j];
            int r = d->rule >= 0 && d->rule < RULE_COUNT ? d->rule : RULE_COUNT;
            all[r].count++;
            if (d->fix) all[r].fixable = *any_fix = true;
        }
    }
}

static void stat__print(FILE *fp, const OutStat all[RULE_COUNT + 1], bool any_fix, bool color)
{
    const TextStyle *st = color ? &text__color : &text__plain;
    OutStat rows[RULE_COUNT + 1];
    uint32_t k = stat__rows(all, rows);
    int cw = 1, codew = 1;
    for (uint32_t i = 0; i < k; i++) {
        cw = GL_MAX(cw, (int)text__digits(rows[i].count));
        codew = GL_MAX(codew, (int)strlen(out_rule(rows[i].rule)->code));
    }
    for (uint32_t i = 0; i < k; i++) {
        const RuleInfo *ri = out_rule(rows[i].rule);
        fprintf(fp, "%*u\t%s%-*s%s\t", cw, rows[i].count, st->err, codew, ri->code, st->reset);
        if (rows[i].fixable) fprintf(fp, "%s[*]%s ", st->help, st->reset);
        else if (any_fix) fputs("[ ] ", fp);
        fprintf(fp, "%s\n", ri->name);
    }
}

void out_statistics(FILE *fp, const OutFile *files, uint32_t n, bool color)
{
    OutStat all[RULE_COUNT + 1];
    bool any_fix;
    stat__collect(files, n, all, &any_fix);
    stat__print(fp, all, any_fix, color);
}

uint32_t out_statistics_rows(const OutFile *files, uint32_t n, OutStat rows[RULE_COUNT + 1])
{
    OutStat all[RULE_COUNT + 1];
    bool any_fix;
    stat__collect(files, n, all, &any_fix);
    return stat__rows(all, rows);
}

uint32_t out_stream_statistics_rows(const OutStream *s, OutStat rows[RULE_COUNT + 1])
{
    return stat__rows(s->stats, rows);
}
