/* `gradleak validate`'s output: the table, the JSON rows, the evidence in SARIF results'
 * properties, and the history rows (the HTML report is val_report.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include "base/strbuf.h"
#include "cache/history.h"
#include "nb/nb.h"
#include "validate/val_cli.h"


static void out__pad(FILE *fp, const char *s, int width)
{
    int n = (int)utf8_count(s, strlen(s));
    fputs(s, fp);
    for (; n < width; n++) fputc(' ', fp);
}

/* A notebook's cell that holds row, or NULL (not a notebook). */
static const NbCell *out__cell(const ValFile *vf, uint32_t row)
{
    return vf->cells ? nb_cell_of_row(vf->cells, vf->n_cells, row) : NULL;
}

/* A 1-based line of file vf as JSON: "line", and in a notebook the cell's line and "cell". */
static void out__line(json_t *o, const char *key, const char *cell_key, const ValFile *vf, uint32_t line)
{
    const NbCell *cell = line ? out__cell(vf, line - 1) : NULL;
    json_object_set_new(o, key, json_integer(line - (cell ? cell->row : 0)));
    if (cell) json_object_set_new(o, cell_key, json_integer(cell->index));
}

/* A run's measure for the table: "+4.2 MB/it (r2 1.00)" (slope) or "peak 310 MB" (peak). */
void val_out_measure(const ValFinding *f, ValVariant v, bool with_r2, char *buf, size_t cap)
{
    char b[32];
    if (f->measure == VAL_MEASURE_PEAK) {
        if (f->peak[v] <= 0 && !f->fit[v].ok) {
            snprintf(buf, cap, "-");
            return;
        }
        val_fmt_bytes(b, sizeof b, f->peak[v]);
        snprintf(buf, cap, "peak %s", b);
        return;
    }
    if (!f->fit[v].ok) {
        snprintf(buf, cap, "-");
        return;
    }
    val_fmt_bytes(b, sizeof b, f->fit[v].slope);
    if (with_r2) snprintf(buf, cap, "%s%s/it (r2 %.2f)", f->fit[v].slope > 0 ? "+" : "", b, f->fit[v].r2);
    else snprintf(buf, cap, "%s%s/it", f->fit[v].slope > 0 ? "+" : "", b);
}

void val_out_table(Cli *c, FILE *fp)
{
    const char *dev = NULL, *torchv = NULL;
    for (uint32_t g = 0; g < c->groups.len && !dev; g++)
        if (c->groups.items[g].run[VAL_LEAKY].device) {
            dev = c->groups.items[g].run[VAL_LEAKY].device;
            torchv = c->groups.items[g].run[VAL_LEAKY].torch_version;
        }
    fprintf(fp, "gradleak validate: %u growth finding%s in %u program%s; device %s, torch %s, %u iterations\n\n",
            c->findings.len, c->findings.len == 1 ? "" : "s", c->groups.len, c->groups.len == 1 ? "" : "s",
            dev ? dev : "(none ran)", torchv ? torchv : "-", c->iterations);
    int wf = 7;
    for (uint32_t i = 0; i < c->findings.len; i++) {
        const ValFinding *f = &c->findings.items[i];
        int w = (int)strlen(c->files[f->file].path) + 12;
        if (w > wf) wf = w;
    }
    fprintf(fp, "%-*s %-7s %-24s %-14s %-15s %-16s %s\n", wf, "finding", "iters", "leaky", "fixed", "class pred/meas",
            "verdict", "time");
    uint32_t nconf = 0, nnot = 0, ninc = 0, nfix = 0;
    for (uint32_t i = 0; i < c->findings.len; i++) {
        ValFinding *f = &c->findings.items[i];
        ValGroup *g = &c->groups.items[f->group];
        const ValLoop *lp = &g->loops.items[f->loop];
        char where[512], iters[32], lk[64], fx[48], cls[48], t[32];
        const NbCell *cell = out__cell(&c->files[f->file], f->d->span.row);
        if (cell)
            snprintf(where, sizeof where, "%s:cell %u:%u %s", c->files[f->file].path, cell->index,
                     f->d->span.row - cell->row + 1, rule_info((RuleId)f->d->rule)->code);
        else
            snprintf(where, sizeof where, "%s:%u %s", c->files[f->file].path, f->d->span.row + 1,
                     rule_info((RuleId)f->d->rule)->code);
        uint32_t nl = g->run[VAL_LEAKY].loops ? g->run[VAL_LEAKY].loops[lp->k].t.len : 0;
        uint32_t nf = g->run[VAL_FIXED].loops ? g->run[VAL_FIXED].loops[lp->k].t.len : 0;
        if (g->run[VAL_FIXED].attempted) snprintf(iters, sizeof iters, "%u/%u", nl, nf);
        else snprintf(iters, sizeof iters, "%u/-", nl);
        val_out_measure(f, VAL_LEAKY, true, lk, sizeof lk);
        val_out_measure(f, VAL_FIXED, false, fx, sizeof fx);
        if (f->verdict == VAL_FIX_CRASHED) snprintf(fx, sizeof fx, "crashed");
        snprintf(cls, sizeof cls, "%s/%s%s", f->d->growth == GROWTH_HOST ? "host" : "device", f->measured,
                 f->fit[VAL_LEAKY].ok ? (f->class_match ? "" : " (!)") : "");
        snprintf(t, sizeof t, "%.1f s", f->seconds);
        const char *vn = val_verdict_name(f->verdict);
        const char *col = !c->color ? "" : f->verdict == VAL_NOT_REPRODUCED ? "\033[32m" : f->verdict == VAL_INCONCLUSIVE ? "\033[33m" : "\033[1;31m";
        fprintf(fp, "%-*s %-7s %-24s %-14s %-15s %s", wf, where, iters, lk, fx, cls, col);
        out__pad(fp, vn, 16);
        fprintf(fp, "%s %s\n", c->color ? "\033[0m" : "", t);
        if (lp->where) fprintf(fp, "    %s\n", lp->where);
        if (lp->drive.n_path) fprintf(fp, "    call path: %s\n", val_drive_path_text(&lp->drive, c->srcs, &c->arena));
        if (f->fix_note && g->run[VAL_FIXED].attempted) fprintf(fp, "    fixed run: %s\n", f->fix_note);
        if (f->reason) fprintf(fp, "    %s%s\n", f->verdict == VAL_INCONCLUSIVE ? "inconclusive: " : "", f->reason);
        nconf += f->verdict == VAL_CONFIRMED;
        nnot += f->verdict == VAL_NOT_REPRODUCED;
        ninc += f->verdict == VAL_INCONCLUSIVE;
        nfix += f->verdict == VAL_FIX_INCOMPLETE || f->verdict == VAL_FIX_CRASHED;
    }
    for (uint32_t g = 0; g < c->groups.len; g++) {
        const ValRunOut *r = &c->groups.items[g].run[VAL_LEAKY];
        if (r->sb.note) {
            fprintf(fp, "\nnote: sandbox: %s", r->sb.note);
            break;
        }
    }
    if (nfix) fprintf(fp, "\n%u confirmed, %u growing with a fix that does not stop it, %u not reproduced, %u inconclusive.\n", nconf, nfix, nnot, ninc);
    else fprintf(fp, "\n%u confirmed, %u not reproduced, %u inconclusive.\n", nconf, nnot, ninc);
}

/* The evidence of one finding as a JSON object (the json format's rows, SARIF's properties). */
static json_t *out__evidence(Cli *c, const ValFinding *f)
{
    const ValGroup *g = &c->groups.items[f->group];
    const ValLoop *lp = &g->loops.items[f->loop];
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(val_verdict_name(f->verdict)));
    if (f->reason) json_object_set_new(o, "reason", json_string(f->reason));
    json_object_set_new(o, "predictedClass", json_string(f->d->growth == GROWTH_HOST ? "host" : "device"));
    json_object_set_new(o, "measuredClass", json_string(f->measured ? f->measured : "none"));
    json_object_set_new(o, "classMatches", json_boolean(f->class_match));
    out__line(o, "loopLine", "loopCell", &c->files[lp->file], lp->ref.line);
    json_object_set_new(o, "measure", json_string(f->measure == VAL_MEASURE_PEAK ? "peak" : "slope"));
    json_t *at = json_object();
    json_object_set_new(at, "kind", json_string(lp->ref.is_func ? "calls" : lp->drive.kind == VAL_DRIVE_NONE ? "none" : "loop"));
    json_object_set_new(at, "path", json_string(c->files[lp->file].path));
    out__line(at, "line", "cell", &c->files[lp->file], lp->ref.line);
    if (lp->drive.func) json_object_set_new(at, "function", json_string(lp->drive.func));
    if (lp->drive.calls) json_object_set_new(at, "calls", json_string(lp->drive.calls));
    if (lp->where) json_object_set_new(at, "text", json_string(lp->where));
    json_t *path = json_array();
    for (uint32_t k = 0; k < lp->drive.n_path; k++) {
        json_t *h = json_object();
        json_object_set_new(h, "path", json_string(c->files[lp->drive.path[k].file].path));
        out__line(h, "line", "cell", &c->files[lp->drive.path[k].file], lp->drive.path[k].line);
        if (lp->drive.path[k].callee) json_object_set_new(h, "calls", json_string(lp->drive.path[k].callee));
        json_array_append_new(path, h);
    }
    json_object_set_new(at, "callPath", path);
    json_object_set_new(o, "measuredAt", at);
    if (f->fix_note) json_object_set_new(o, "fix", json_string(f->fix_note));
    if (f->metric) json_object_set_new(o, "metric", json_string(f->metric));
    for (int v = 0; v < VAL_NVARIANTS; v++) {
        const ValRunOut *r = &g->run[v];
        if (!r->attempted) continue;
        json_t *run = json_object();
        uint32_t n = r->loops ? r->loops[lp->k].t.len : 0;
        json_object_set_new(run, "iterations", json_integer(n));
        if (f->fit[v].ok) {
            json_object_set_new(run, "bytesPerIteration", json_real(round(f->fit[v].slope)));
            json_object_set_new(run, "r2", json_real(round(f->fit[v].r2 * 1000) / 1000));
        }
        if (f->measure == VAL_MEASURE_PEAK) json_object_set_new(run, "peakBytes", json_real(round(f->peak[v])));
        json_object_set_new(run, "seconds", json_real(round(r->sb.wall_s * 100) / 100));
        double st, wu, sa;
        if (val_run_split(r, r->loops ? &r->loops[lp->k] : NULL, GL_MAX(2u, c->iterations / 5), &st, &wu, &sa)) {
            json_t *split = json_object();
            json_object_set_new(split, "start", json_real(round(st * 1000) / 1000));
            json_object_set_new(split, "warmup", json_real(round(wu * 1000) / 1000));
            json_object_set_new(split, "sampled", json_real(round(sa * 1000) / 1000));
            json_object_set_new(split, "rest", json_real(round(GL_MAX(0.0, r->sb.wall_s - st - wu - sa) * 1000) / 1000));
            json_object_set_new(run, "time", split);
        }
        if (r->gpu) json_object_set_new(run, "gpu", json_string(r->gpu));
        json_object_set_new(run, "exitCode", json_integer(r->sb.exit_code));
        if (r->nvml) json_object_set_new(run, "nvmlPeakBytes", json_integer(r->nvml_peak));
        json_object_set_new(o, v == VAL_LEAKY ? "leaky" : "fixed", run);
    }
    if (g->run[VAL_LEAKY].device) json_object_set_new(o, "device", json_string(g->run[VAL_LEAKY].device));
    if (g->run[VAL_LEAKY].torch_version) json_object_set_new(o, "torchVersion", json_string(g->run[VAL_LEAKY].torch_version));
    json_object_set_new(o, "seconds", json_real(round(f->seconds * 100) / 100));
    json_object_set_new(o, "sharedStart", json_false());
    json_object_set_new(o, "sharedStartWhyNot",
                        json_string("one interpreter cannot be reset between the leaky and the fixed variant (module "
                                    "globals, model weights, optimizer and RNG state, the CUDA context and allocator "
                                    "carry over; a fork after `import torch` would import torch before the program "
                                    "does), and the fixed run starts only when the leaky one grew"));
    return o;
}

int val_out_json(Cli *c, FILE *fp)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < c->findings.len; i++) {
        const ValFinding *f = &c->findings.items[i];
        json_t *o = out__evidence(c, f);
        json_object_set_new(o, "path", json_string(c->files[f->file].path));
        out__line(o, "line", "cell", &c->files[f->file], f->d->span.row + 1);
        json_object_set_new(o, "code", json_string(rule_info((RuleId)f->d->rule)->code));
        json_object_set_new(o, "message", json_string(f->d->message));
        json_array_append_new(arr, o);
    }
    int rc = json_dumpf(arr, fp, JSON_INDENT(2)) == 0 ? 0 : -1;
    fputc('\n', fp);
    json_decref(arr);
    return rc;
}

int val_out_sarif(Cli *c, FILE *fp)
{
    OutFile *of = gl_calloc(c->n_files + 1, sizeof *of);
    char ***props = gl_calloc(c->n_files + 1, sizeof *props);
    for (uint32_t i = 0; i < c->n_files; i++) {
        of[i].path = c->files[i].path;
        of[i].src = c->files[i].text ? c->files[i].text : c->files[i].src; /* a notebook: its cells as written */
        of[i].len = c->files[i].len;
        of[i].cells = c->files[i].cells;
        of[i].n_cells = c->files[i].n_cells;
        of[i].diags = c->files[i].diags;
        of[i].n_diags = c->files[i].n_diags;
        props[i] = gl_calloc(c->files[i].n_diags + 1, sizeof(char *));
    }
    for (uint32_t k = 0; k < c->findings.len; k++) {
        const ValFinding *f = &c->findings.items[k];
        json_t *wrap = json_object();
        json_object_set_new(wrap, "validation", out__evidence(c, f));
        uint32_t di = (uint32_t)(f->d - c->files[f->file].diags);
        props[f->file][di] = json_dumps(wrap, JSON_COMPACT);
        json_decref(wrap);
    }
    OutOptions oo;
    memset(&oo, 0, sizeof oo);
    oo.sarif_props = (const char *const *const *)props;
    int rc = out_write(fp, OUT_SARIF, of, c->n_files, &oo);
    for (uint32_t i = 0; i < c->n_files; i++) {
        for (uint32_t d = 0; d < c->files[i].n_diags; d++) free(props[i][d]);
        gl_free(props[i]);
    }
    gl_free(props);
    gl_free(of);
    return rc;
}


/* One history row per finding (.gradleak_cache/cache.db, table validation_runs). Best effort: a
 * database that cannot be written is a warning, never a different exit status. */
void val_out_history(Cli *c)
{
    for (uint32_t i = 0; i < c->findings.len; i++) {
        const ValFinding *f = &c->findings.items[i];
        const ValGroup *g = &c->groups.items[f->group];
        const ValRunOut *r = &g->run[VAL_LEAKY];
        const ValLoop *lp = &g->loops.items[f->loop];
        ValidationRun vr;
        memset(&vr, 0, sizeof vr);
        vr.path = c->files[f->file].path;
        vr.rule = rule_info((RuleId)f->d->rule)->code;
        vr.line = f->d->span.row + 1;
        vr.device = r->device ? r->device : "none";
        vr.torch_version = r->torch_version ? r->torch_version : "";
        vr.iterations = r->loops ? r->loops[lp->k].t.len : 0;
        vr.leaky_bytes_per_iter = f->fit[VAL_LEAKY].ok ? f->fit[VAL_LEAKY].slope : 0;
        vr.fixed_bytes_per_iter = f->fit[VAL_FIXED].ok ? f->fit[VAL_FIXED].slope : 0;
        vr.r2 = f->fit[VAL_LEAKY].ok ? f->fit[VAL_LEAKY].r2 : 0;
        vr.verdict = f->verdict == VAL_INCONCLUSIVE ? arena_printf(&c->arena, "inconclusive: %s", f->reason ? f->reason : "")
                                                   : val_verdict_name(f->verdict);
        vr.duration_s = f->seconds;
        char err[256];
        if (history_add_validation(NULL, &vr, err, sizeof err) != 0) {
            fprintf(stderr, "gradleak: warning: the validation history was not recorded: %s\n", err);
            return;
        }
    }
}

