/* Reading the harness's records (one JSON object per line), fitting lines to them, and the small
 * formatting helpers the table and the report share. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/file.h"
#include "base/strbuf.h"
#include "validate/val_fs.h"
#include "base/rule_catalog.h"
#include "validate/val_run.h"
#include "validate/validate.h"

/* GRADLEAK_VALIDATE_PEAK (a test hook; the command line reads it): codes measured by their peak */
static const char *val_peak_codes;

void val_set_peak_codes(const char *codes) { val_peak_codes = codes && codes[0] ? codes : NULL; }

ValMeasure val_rule_measure(int rule)
{
    const RuleInfo *ri = rule >= 0 && rule < RULE_COUNT ? rule_info((RuleId)rule) : NULL;
    if (ri && val_peak_codes && strstr(val_peak_codes, ri->code)) return VAL_MEASURE_PEAK;
    if (!ri) return VAL_MEASURE_NONE;
    switch (ri->measure) {
    case RM_SLOPE: return VAL_MEASURE_SLOPE;
    case RM_PEAK: return VAL_MEASURE_PEAK;
    case RM_NONE: break;
    }
    return VAL_MEASURE_NONE;
}

bool val_rule_no_grad_fix(int rule)
{
    const RuleInfo *ri = rule >= 0 && rule < RULE_COUNT ? rule_info((RuleId)rule) : NULL;
    return ri && (ri->flags & RF_NOGRAD_FIX);
}

const char *val_rule_codes(void)
{
    static char buf[256];
    if (buf[0]) return buf;
    size_t n = 0;
    for (int i = 0; i < RULE_COUNT && n + 8 < sizeof buf; i++)
        if (val_rule_measure(i) != VAL_MEASURE_NONE)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", rule_info((RuleId)i)->code);
    return buf;
}

static double res__num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static const char *res__str(json_t *o, const char *key, Arena *a)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? arena_strdup(a, json_string_value(v)) : NULL;
}

void val_results_read(const char *path, Arena *a, ValRunOut *out, uint32_t n_loops)
{
    size_t len = 0;
    char *text = gl_read_file(path, GL_READ_ANY_SIZE, &len);
    if (!text) return;
    for (char *line = text, *next; line < text + len; line = next) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        next = nl ? nl + 1 : text + len;
        if (!nl) break; /* a record cut by a kill: incomplete */
        json_error_t err;
        json_t *o = json_loadb(line, (size_t)(nl - line), 0, &err);
        if (!json_is_object(o)) {
            json_decref(o);
            continue;
        }
        const char *ev = json_string_value(json_object_get(o, "event"));
        json_t *k = json_object_get(o, "k");
        if (ev) {
            if (!strcmp(ev, "start")) {
                out->harness_started = true;
                out->harness_wall = res__num(o, "wall");
            }
            else if (!strcmp(ev, "torch")) {
                out->torch_seen = true;
                out->cuda = json_is_true(json_object_get(o, "cuda"));
                out->torch_version = res__str(o, "version", a);
                out->device = res__str(o, "device", a);
            } else if (!strcmp(ev, "exit") && !out->exit_why) {
                out->exit_why = res__str(o, "why", a);
            }
        } else if (json_is_integer(k) && json_integer_value(k) >= 0 && json_integer_value(k) < (json_int_t)n_loops) {
            ValSeries *s = &out->loops[json_integer_value(k)];
            array_push(&s->t, res__num(o, "t"));
            array_push(&s->alloc, res__num(o, "alloc"));
            array_push(&s->reserved, res__num(o, "reserved"));
            array_push(&s->rss, res__num(o, "rss"));
            array_push(&s->heap, res__num(o, "heap"));
            array_push(&s->saved, res__num(o, "saved"));
            array_push(&s->peak, res__num(o, "peak"));
        }
        json_decref(o);
    }
    gl_free(text);
}

void val_series_free(ValSeries *s)
{
    array_free(&s->t);
    array_free(&s->alloc);
    array_free(&s->reserved);
    array_free(&s->rss);
    array_free(&s->heap);
    array_free(&s->saved);
    array_free(&s->peak);
}

bool val_run_split(const ValRunOut *r, const ValSeries *s, uint32_t warm, double *start, double *warmup, double *sampled)
{
    *start = *warmup = *sampled = 0;
    if (!s || !s->t.len) return false;
    /* the interpreter's start before the harness ran: from gradleak's clock to the harness's */
    double pre = r->harness_wall > 0 && r->spawn_wall > 0 ? r->harness_wall - r->spawn_wall : 0;
    if (pre < 0) pre = 0;
    uint32_t w = warm < s->t.len ? warm : s->t.len - 1;
    *start = pre + s->t.items[0];
    *warmup = s->t.items[w] - s->t.items[0];
    *sampled = s->t.items[s->t.len - 1] - s->t.items[w];
    return true;
}

ValFit val_fit(const DoubleList *y, uint32_t from)
{
    ValFit f;
    memset(&f, 0, sizeof f);
    f.from = from;
    if (y->len <= from + 1) return f;
    f.n = y->len - from;
    double n = f.n, mx = (n - 1) / 2.0, my = 0;
    for (uint32_t i = from; i < y->len; i++) my += y->items[i];
    my /= n;
    double sxx = 0, sxy = 0, syy = 0;
    for (uint32_t i = from; i < y->len; i++) {
        double dx = (double)(i - from) - mx, dy = y->items[i] - my;
        sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
    }
    f.slope = sxx > 0 ? sxy / sxx : 0;
    /* r² of a perfectly flat series is 1: the line explains it exactly */
    f.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    f.ok = true;
    return f;
}

const DoubleList *val_primary(const ValRunOut *r, const ValSeries *s, const char **name)
{
    bool any_alloc = false;
    for (uint32_t i = 0; i < s->alloc.len; i++) any_alloc |= s->alloc.items[i] > 0;
    if (r->cuda && any_alloc) {
        *name = "memory_allocated";
        return &s->alloc;
    }
    *name = "saved for backward";
    return &s->saved;
}

void val_fmt_bytes(char *buf, size_t cap, double b)
{
    double a = fabs(b);
    const char *sign = b < 0 ? "-" : "";
    if (a < 1000) snprintf(buf, cap, "%s%.0f B", sign, a);
    else if (a < 1e6) snprintf(buf, cap, "%s%.1f KB", sign, a / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%s%.1f MB", sign, a / 1e6);
    else snprintf(buf, cap, "%s%.2f GB", sign, a / 1e9);
}

const char *val_verdict_name(ValVerdict v)
{
    switch (v) {
    case VAL_CONFIRMED: return "confirmed";
    case VAL_NOT_REPRODUCED: return "not reproduced";
    case VAL_FIX_INCOMPLETE: return "fix incomplete";
    case VAL_FIX_CRASHED: return "fix crashed";
    case VAL_INCONCLUSIVE: break;
    }
    return "inconclusive";
}
