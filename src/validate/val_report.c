/* `validate --report FILE.html`: one self-contained page (inline CSS and SVG, no scripts, nothing
 * fetched) with, per finding, the memory curve of the leaky and the fixed run, the fitted slopes,
 * the flagged code and the dataflow path behind the finding. */
#include <math.h>
#include <stdio.h>
#include "base/strbuf.h"
#include "base/rule_catalog.h"
#include "validate/val_run.h"

#define RPT_LEAKY "#d62728"
#define RPT_FIXED "#1f77b4"

static void rpt__esc(FILE *fp, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (c == '<') fputs("&lt;", fp);
        else if (c == '>') fputs("&gt;", fp);
        else if (c == '&') fputs("&amp;", fp);
        else if (c == '"') fputs("&quot;", fp);
        else if (c == '\r') continue;
        else if ((unsigned char)c < 0x20 && c != '\n' && c != '\t') fputc('?', fp);
        else fputc(c, fp);
    }
}

static const char *rpt__class(ValVerdict v)
{
    switch (v) {
    case VAL_NOT_REPRODUCED: return "not-reproduced";
    case VAL_FIX_INCOMPLETE: return "fix-incomplete";
    case VAL_FIX_CRASHED: return "fix-crashed";
    default: return val_verdict_name(v);
    }
}

static void rpt__escs(FILE *fp, const char *s) { rpt__esc(fp, s ? s : "", s ? strlen(s) : 0); }

/* One run's primary series for the finding's loop, or NULL. */
static const DoubleList *rpt__series(const ValSession *s, const ValFinding *f, int v)
{
    const ValGroup *g = &s->groups[f->group];
    const ValRunOut *r = &g->run[v];
    if (!r->attempted || !r->loops) return NULL;
    const ValSeries *ser = &r->loops[g->loops.items[f->loop].k];
    if (!ser->t.len) return NULL;
    const char *name;
    return val_primary(r, ser, &name);
}

static void rpt__chart(FILE *fp, const ValSession *s, const ValFinding *f)
{
    const DoubleList *ys[2] = {rpt__series(s, f, VAL_LEAKY), rpt__series(s, f, VAL_FIXED)};
    const double W = 640, H = 260, L = 78, R = 16, T = 16, B = 40;
    double ymax = 1, xmax = 1;
    for (int v = 0; v < 2; v++) {
        if (!ys[v]) continue;
        xmax = GL_MAX(xmax, (double)ys[v]->len - 1);
        for (uint32_t i = 0; i < ys[v]->len; i++) ymax = GL_MAX(ymax, ys[v]->items[i] - ys[v]->items[0]);
    }
    /* a readable top: 1, 2 or 5 times a power of ten */
    double p = pow(10, floor(log10(ymax))), top = p;
    while (top < ymax) top = top == p ? 2 * p : top == 2 * p ? 5 * p : 10 * p;
    ymax = top;
    fprintf(fp, "<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n", W, H, W, H);
    fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" stroke=\"#999\"/>\n", L, T,
            W - L - R, H - T - B);
    for (int k = 0; k <= 4; k++) {
        double yv = ymax * k / 4, py = H - B - (H - T - B) * k / 4;
        char b[32];
        val_fmt_bytes(b, sizeof b, yv);
        fprintf(fp, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">+%s</text>\n",
                L, py, W - R, py, L - 6, py + 4, b);
    }
    for (int k = 0; k <= 5; k++) {
        double xv = xmax * k / 5, px = L + (W - L - R) * k / 5;
        fprintf(fp, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%.0f</text>\n", px, H - B + 16, xv);
    }
    fprintf(fp, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">iteration</text>\n", L + (W - L - R) / 2,
            H - 6);
    static const char *const colors[2] = {RPT_LEAKY, RPT_FIXED};
    for (int v = 0; v < 2; v++) {
        if (!ys[v]) continue;
        fprintf(fp, "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"3\" points=\"",
                v == VAL_LEAKY ? "leaky" : "fixed", colors[v]);
        for (uint32_t i = 0; i < ys[v]->len; i++) {
            double px = L + (W - L - R) * (double)i / xmax;
            double py = H - B - (H - T - B) * (ys[v]->items[i] - ys[v]->items[0]) / ymax;
            if (py < T) py = T;
            if (py > H - B) py = H - B;
            fprintf(fp, "%.1f,%.1f ", px, py);
        }
        fputs("\"/>\n", fp);
    }
    fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" "
                "font-size=\"12\">leaky</text>\n", L + 10, T + 10, RPT_LEAKY, L + 30, T + 15);
    fprintf(fp, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" "
                "font-size=\"12\">fixed</text>\n", L + 80, T + 10, RPT_FIXED, L + 100, T + 15);
    fputs("</svg>\n", fp);
}

/* The source lines from the loop header to a few lines past the finding, flagged lines marked. */
static void rpt__code(FILE *fp, const ValFile *vf, const ValFinding *f, uint32_t loop_line)
{
    uint32_t flag = f->d->span.row + 1;
    uint32_t from = loop_line && loop_line < flag ? loop_line : flag;
    from = from > 2 ? from - 2 : 1;
    uint32_t to = flag + 3;
    if (to - from > 40) from = flag - 20, to = flag + 3;
    fputs("<pre class=\"code\">", fp);
    uint32_t line = 1;
    const char *p = vf->text ? vf->text : vf->src, *end = p + vf->len; /* a notebook: its cells as written */
    while (p < end && line <= to) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (line >= from) {
            bool hot = line == flag, loop = line == loop_line;
            fprintf(fp, "<span class=\"%s\"><span class=\"ln\">%4u</span> ", hot ? "hot" : loop ? "loop" : "", line);
            rpt__esc(fp, p, (size_t)(le - p));
            fputs("</span>\n", fp);
        }
        line++;
        p = nl ? nl + 1 : end;
    }
    fputs("</pre>\n", fp);
}

/* Where the finding was measured, and the call path from that loop down to the flagged line. */
static void rpt__measured(FILE *fp, const ValSession *s, const ValFinding *f)
{
    const ValGroup *g = &s->groups[f->group];
    const ValLoop *lp = &g->loops.items[f->loop];
    fputs("<p class=\"measured\"><b>Measured at:</b> ", fp);
    if (lp->where) rpt__escs(fp, lp->where);
    else if (lp->drive.kind == VAL_DRIVE_NONE) fputs("nothing (no loop repeats the flagged line)", fp);
    else {
        fputs("the loop at ", fp);
        rpt__escs(fp, s->files[lp->file].path);
        fprintf(fp, ":%u (it holds the flagged line)", lp->ref.line);
    }
    fputs("</p>\n", fp);
    if (!lp->drive.n_path) return;
    fputs("<h3>Call path</h3>\n<ol class=\"callpath\">\n<li>loop at ", fp);
    rpt__escs(fp, s->files[lp->file].path);
    fprintf(fp, ":%u", lp->ref.line);
    if (lp->drive.func) {
        fputs(" in <code>", fp);
        rpt__escs(fp, lp->drive.func);
        fputs("</code>", fp);
    }
    fputs("</li>\n", fp);
    for (uint32_t k = 0; k < lp->drive.n_path; k++) {
        const ValHop *h = &lp->drive.path[k];
        fputs("<li>", fp);
        rpt__escs(fp, s->files[h->file].path);
        fprintf(fp, ":%u calls <code>", h->line);
        rpt__escs(fp, h->callee ? h->callee : "?");
        fputs("()</code></li>\n", fp);
    }
    fputs("<li>", fp);
    rpt__escs(fp, s->files[f->file].path);
    fprintf(fp, ":%u: the flagged line (%s)</li>\n</ol>\n", f->d->span.row + 1, rule_info((RuleId)f->d->rule)->code);
}

int val_report_write(FILE *fp, const ValSession *s)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>gradleak validate report</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:2em;max-width:72em;color:#222}\n"
          "h1{font-size:1.5em} h2{font-size:1.15em;margin-top:2em;border-top:1px solid #ccc;padding-top:1em}\n"
          ".v{padding:.1em .5em;border-radius:.3em;color:#fff;font-size:.9em}\n"
          ".confirmed{background:#b3261e} .not-reproduced{background:#2e7d32} .inconclusive{background:#9a6700}\n"
          ".fix-incomplete,.fix-crashed{background:#7b1fa2}\n"
          "table{border-collapse:collapse} td,th{padding:.2em .8em;text-align:left;border-bottom:1px solid #eee}\n"
          ".code{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.9em}\n"
          ".code .hot{background:#ffe0e0;display:inline-block;width:100%} .code .loop{background:#e8f0ff;display:inline-block;width:100%}\n"
          ".ln{color:#888}\n</style></head><body>\n",
          fp);
    fputs("<h1>gradleak validate</h1>\n<p>", fp);
    fprintf(fp, "%u growth finding%s measured over %u iterations per loop; device: ", s->n_findings,
            s->n_findings == 1 ? "" : "s", s->iterations);
    rpt__escs(fp, s->device ? s->device : "none ran");
    fputs(", torch ", fp);
    rpt__escs(fp, s->torch_version ? s->torch_version : "-");
    fputs(".</p>\n<table><tr><th>finding</th><th>verdict</th><th>leaky / iteration</th><th>fixed / iteration</th></tr>\n", fp);
    for (uint32_t i = 0; i < s->n_findings; i++) {
        const ValFinding *f = &s->findings[i];
        const char *vn = val_verdict_name(f->verdict);
        char lk[32] = "-", fx[32] = "-";
        if (f->fit[VAL_LEAKY].ok) val_fmt_bytes(lk, sizeof lk, f->fit[VAL_LEAKY].slope);
        if (f->fit[VAL_FIXED].ok) val_fmt_bytes(fx, sizeof fx, f->fit[VAL_FIXED].slope);
        fprintf(fp, "<tr><td><a href=\"#f%u\">", i);
        rpt__escs(fp, s->files[f->file].path);
        fprintf(fp, ":%u %s</a></td><td><span class=\"v %s\">%s</span></td><td>%s</td><td>%s</td></tr>\n",
                f->d->span.row + 1, rule_info((RuleId)f->d->rule)->code, rpt__class(f->verdict),
                vn, lk, fx);
    }
    fputs("</table>\n", fp);
    for (uint32_t i = 0; i < s->n_findings; i++) {
        const ValFinding *f = &s->findings[i];
        const ValFile *vf = &s->files[f->file];
        const ValGroup *g = &s->groups[f->group];
        const ValLoop *lp = &g->loops.items[f->loop];
        const char *vn = val_verdict_name(f->verdict);
        fprintf(fp, "<h2 id=\"f%u\">", i);
        rpt__escs(fp, vf->path);
        fprintf(fp, ":%u %s <span class=\"v %s\">%s</span></h2>\n<p>", f->d->span.row + 1,
                rule_info((RuleId)f->d->rule)->code, rpt__class(f->verdict), vn);
        rpt__escs(fp, f->d->message);
        fputs("</p>\n", fp);
        if (f->reason) {
            fputs("<p><b>", fp);
            fputs(f->verdict == VAL_INCONCLUSIVE ? "Inconclusive: " : "Note: ", fp);
            fputs("</b>", fp);
            rpt__escs(fp, f->reason);
            fputs("</p>\n", fp);
        }
        rpt__measured(fp, s, f);
        rpt__chart(fp, s, f);
        fputs("<table>", fp);
        for (int v = 0; v < VAL_NVARIANTS; v++) {
            const ValRunOut *r = &g->run[v];
            char b[32] = "-";
            if (f->fit[v].ok) val_fmt_bytes(b, sizeof b, f->fit[v].slope);
            fprintf(fp, "<tr><th style=\"color:%s\">%s run</th><td>", v == VAL_LEAKY ? RPT_LEAKY : RPT_FIXED,
                    v == VAL_LEAKY ? "leaky" : "fixed");
            if (!r->attempted) fputs("not run (no automatic fix)", fp);
            else if (f->fit[v].ok)
                fprintf(fp, "%s/iteration of %s (r&sup2; %.3f, fitted over iterations %u&ndash;%u), %.1f s", b,
                        f->metric ? f->metric : "memory", f->fit[v].r2, f->fit[v].from, f->fit[v].from + f->fit[v].n - 1,
                        r->sb.wall_s);
            else fprintf(fp, "%u iterations, %.1f s", r->loops ? r->loops[lp->k].t.len : 0, r->sb.wall_s);
            if (r->nvml) {
                char nb[32];
                val_fmt_bytes(nb, sizeof nb, (double)r->nvml_peak);
                fprintf(fp, "; NVML peak %s", nb);
            }
            fputs("</td></tr>\n", fp);
        }
        fprintf(fp, "<tr><th>class</th><td>predicted %s, measured %s%s</td></tr></table>\n",
                f->d->growth == GROWTH_HOST ? "host" : "device", f->measured ? f->measured : "none",
                f->fit[VAL_LEAKY].ok ? (f->class_match ? " (consistent)" : " (differs)") : "");
        fputs("<h3>Flagged code</h3>\n", fp);
        rpt__code(fp, vf, f, lp->file == f->file && !lp->ref.is_func ? lp->ref.line : 0);
        if (f->d->n_related) {
            fputs("<h3>Dataflow path</h3>\n<ol>\n", fp);
            for (uint32_t k = 0; k < f->d->n_related; k++) {
                fprintf(fp, "<li>line %u: ", f->d->related[k].span.row + 1);
                rpt__escs(fp, f->d->related[k].message);
                fputs("</li>\n", fp);
            }
            fprintf(fp, "<li>line %u: ", f->d->span.row + 1);
            rpt__escs(fp, f->d->message);
            fputs("</li>\n</ol>\n", fp);
        }
    }
    fputs("</body></html>\n", fp);
    return ferror(fp) ? -1 : 0;
}
