/* `gradleak validate`: options, linting, grouping findings into programs, the leaky and fixed runs,
 * verdicts, and the table / JSON / SARIF output (the HTML report is val_report.c). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "cache/history.h"
#include "engine/engine.h"
#include "engine/fix.h"
#include "out/out.h"
#include "nb/nb.h"
#include "validate/val_env.h"
#include "validate/val_fs.h"
#include "validate/val_nvml.h"
#include "validate/val_run.h"
#include "validate/validate.h"

#define EXIT_CLEAN 0
#define EXIT_FINDINGS 1
#define EXIT_ERROR 2

const char *const val_usage_text =
    "Usage: gradleak validate [PATHS...] [options]\n"
    "\n"
    "Lints PATHS (default: .), then runs the program once with every growth finding's loop\n"
    "(GL101-GL105) instrumented and once with the findings' fixes applied, and reports whether the\n"
    "memory growth is real. This RUNS YOUR CODE, in a sandbox: its own process group and PID\n"
    "namespace, no network, a scrubbed environment, a temporary copy of the project, CPU,\n"
    "file-size and memory limits, and a wall-clock kill of everything it started.\n"
    "\n"
    "Options:\n"
    "  --cmd \"COMMAND\"       Run this instead of `python FILE` for each flagged file, e.g.\n"
    "                        --cmd \"python train.py --epochs 1\" (from the current folder, which is\n"
    "                        copied); all findings are then measured in one run per variant\n"
    "  --device DEV          auto (default), cuda or cpu (cpu hides the GPUs from the program)\n"
    "  --iterations N        Samples per loop before it is left (default 30, at least 8)\n"
    "  --timeout S           Wall-clock limit per run in seconds (default 60)\n"
    "  --python PATH         Interpreter (default: python3 on PATH)\n"
    "  --memory-cap MIB      Stop a run whose memory grows past this (default 4096)\n"
    "  --select CODES        Only these growth rules (e.g. GL101,GL104)\n"
    "  --fail-on WHAT        confirmed (default: exit 1 when a finding is confirmed), finding\n"
    "                        (exit 1 when there is any growth finding), never\n"
    "  --output-format FMT   full (default: a table), json, sarif (evidence in result properties)\n"
    "  --report FILE.html    Write a self-contained page with the memory curves, leaky vs fixed\n"
    "  --env NAME            Pass this environment variable through (repeatable; nothing else is\n"
    "                        passed but PATH, locale, LD_LIBRARY_PATH, CUDA and virtualenv settings)\n"
    "  --keep-temp           Keep the working copies and results (their folder is printed)\n"
    "  --no-history          Do not record the runs in .gradleak_cache/\n"
    "  --no-color            Never color the output\n"
    "\n"
    "Verdicts: confirmed (grows >= 4 KB/iteration with r2 >= 0.9 and the fixed run is flat),\n"
    "not reproduced (flat), inconclusive: <why> (never reached, crashed, timed out, no torch...).\n"
    "Exit status: 0, 1 per --fail-on, 2 usage or internal error.\n";

typedef enum FailOn { FAIL_CONFIRMED, FAIL_FINDING, FAIL_NEVER } FailOn;

typedef struct Cli {
    Arena arena;
    const char *cmd;
    const char *python;
    const char *device;     /* auto, cuda, cpu */
    uint32_t iterations;
    double timeout;
    uint64_t mem_cap;
    RuleSet select;
    FailOn fail_on;
    OutFormat fmt;
    const char *report;
    Array(const char *) keep_env;
    bool keep_temp, no_history, color, tty;
    char *harness;          /* gl_free */
    char *tmp;              /* session temp folder, gl_free */
    ValNvml *nvml;
    bool cuda;              /* runs get the GPUs */
    ValFile *files;
    LintResult *lints;
    uint32_t n_files;
    Array(ValGroup) groups;
    Array(ValFinding) findings;
    uint32_t progress_done, progress_total;
} Cli;

static void cli__die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "gradleak: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nRun 'gradleak validate --help' for usage.\n");
}

static bool cli__is_growth_rule(int rule)
{
    const char *code = rule_info((RuleId)rule)->code;
    return !strncmp(code, "GL10", 4) && code[4] >= '1' && code[4] <= '5' && !code[5];
}

static bool cli__parse_codes(const char *list, RuleSet *set)
{
    char *copy = gl_strdup(list);
    bool ok = true;
    for (char *tok = strtok(copy, ", "); tok && ok; tok = strtok(NULL, ", ")) {
        bool any = false;
        for (int i = 0; i < RULE_COUNT; i++) {
            const RuleInfo *ri = rule_info((RuleId)i);
            if ((!strncasecmp(ri->code, tok, strlen(tok)) || !strcmp(ri->name, tok)) && cli__is_growth_rule(i))
                set->on[i] = 1, any = true;
        }
        if (!any) {
            fprintf(stderr, "gradleak: error: --select: '%s' is not a growth rule (validate runs GL101-GL105)\n", tok);
            ok = false;
        }
    }
    gl_free(copy);
    return ok;
}

/* ---- the harness, the interpreter, the command ---- */

static bool cli__file_exists(const char *path) { return access(path, R_OK) == 0; }

/* The harness is shipped next to the binary: <bindir>/share/gradleak/harness (the build tree's
 * build/share/...) or <bindir>/../share/gradleak/harness (an installed prefix); GRADLEAK_HARNESS_DIR
 * overrides both. */
static char *cli__harness_dir(void)
{
    const char *env = getenv("GRADLEAK_HARNESS_DIR");
    StrBuf sb;
    sb_init(&sb);
    if (env && env[0]) {
        sb_printf(&sb, "%s/gradleak_harness/__init__.py", env);
        bool ok = cli__file_exists(sb.data);
        sb_free(&sb);
        return ok ? gl_strdup(env) : NULL;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    static const char *const rel[] = {"/share/gradleak/harness", "/../share/gradleak/harness"};
    for (size_t i = 0; i < ARRAY_LEN(rel); i++) {
        sb_clear(&sb);
        sb_printf(&sb, "%s%s/gradleak_harness/__init__.py", exe, rel[i]);
        if (cli__file_exists(sb.data)) {
            sb_clear(&sb);
            sb_printf(&sb, "%s%s", exe, rel[i]);
            char *r = realpath(sb.data, NULL);
            sb_free(&sb);
            if (!r) return NULL;
            char *out = gl_strdup(r);
            free(r);
            return out;
        }
    }
    sb_free(&sb);
    return NULL;
}

/* Shell-like words: blanks separate, '...' is literal, "..." and \ escape. */
static char **cli__split(Arena *a, const char *s, uint32_t *n)
{
    Array(char *) words;
    array_init(&words);
    StrBuf w;
    sb_init(&w);
    bool in_word = false;
    for (const char *p = s;; p++) {
        char c = *p;
        if (!c || c == ' ' || c == '\t' || c == '\n') {
            if (in_word) array_push(&words, arena_strdup(a, w.data ? w.data : ""));
            sb_clear(&w);
            in_word = false;
            if (!c) break;
            continue;
        }
        in_word = true;
        if (c == '\'') {
            while (p[1] && p[1] != '\'') sb_putc(&w, *++p);
            if (p[1]) p++;
        } else if (c == '"') {
            while (p[1] && p[1] != '"') {
                if (p[1] == '\\' && p[2]) p++;
                sb_putc(&w, *++p);
            }
            if (p[1]) p++;
        } else if (c == '\\' && p[1]) {
            sb_putc(&w, *++p);
        } else {
            sb_putc(&w, c);
        }
    }
    sb_free(&w);
    char **v = ARENA_NEW_N(a, char *, words.len + 1);
    for (uint32_t i = 0; i < words.len; i++) v[i] = words.items[i];
    *n = words.len;
    array_free(&words);
    return v;
}

static bool cli__is_python(const char *word)
{
    const char *b = strrchr(word, '/');
    b = b ? b + 1 : word;
    return !strncmp(b, "python", 6);
}

/* `python [opts] SCRIPT|-m MOD ARGS` -> `python [opts] -m gradleak_harness SCRIPT|-m MOD ARGS`. */
static char **cli__harness_argv(Cli *c, char **words, uint32_t n)
{
    char **v = ARENA_NEW_N(&c->arena, char *, n + 4);
    uint32_t o = 0, i = 0;
    if (n && cli__is_python(words[0])) {
        v[o++] = (char *)(c->python ? c->python : words[0]);
        i = 1;
        /* interpreter options stay in front; -W and -X take a value */
        while (i < n && words[i][0] == '-' && strcmp(words[i], "-m") && strcmp(words[i], "-c") && strcmp(words[i], "-")) {
            bool val = (!strcmp(words[i], "-W") || !strcmp(words[i], "-X")) && i + 1 < n;
            v[o++] = words[i++];
            if (val) v[o++] = words[i++];
        }
        v[o++] = arena_strdup(&c->arena, "-m");
        v[o++] = arena_strdup(&c->arena, "gradleak_harness");
    }
    for (; i < n; i++) v[o++] = words[i];
    v[o] = NULL;
    return v;
}

/* ---- running one variant of one program ---- */

typedef struct PollCtx {
    Cli *c;
    ValGroup *g;
    ValRunOut *r;
    const char *results;
    const char *variant;
    off_t off;
    uint32_t samples;
    int64_t nvml_base;
    bool nvml_per_process;
    double last_draw;
} PollCtx;

static int64_t cli__rss(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/statm", (long)pid);
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    long size = 0, res = 0;
    int n = fscanf(f, "%ld %ld", &size, &res);
    fclose(f);
    return n == 2 ? (int64_t)res * sysconf(_SC_PAGESIZE) : -1;
}

static bool cli__poll(void *ctx, pid_t pid, double elapsed)
{
    PollCtx *p = ctx;
    Cli *c = p->c;
    bool stop = false;
    if (c->nvml && pid > 0) {
        int64_t b = val_nvml_process_bytes(c->nvml, pid);
        if (b >= 0) p->nvml_per_process = true;
        else if (!p->nvml_per_process) {
            int64_t u = val_nvml_used_bytes(c->nvml);
            b = u >= 0 ? u - p->nvml_base : -1;
        }
        if (b >= 0) {
            p->r->nvml = true;
            if (b > p->r->nvml_peak) p->r->nvml_peak = b;
            if ((uint64_t)b > c->mem_cap) stop = true;
        }
    }
    if (pid > 0) {
        int64_t rss = cli__rss(pid);
        if (rss > 0 && (uint64_t)rss > c->mem_cap) stop = true;
    }
    if (c->tty) {
        int fd = open(p->results, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            char buf[8192];
            ssize_t n;
            if (lseek(fd, p->off, SEEK_SET) == p->off)
                while ((n = read(fd, buf, sizeof buf)) > 0) {
                    p->off += n;
                    for (ssize_t i = 0; i + 4 < n; i++) p->samples += !memcmp(buf + i, "{\"k\":", 5);
                }
            close(fd);
        }
        if (elapsed - p->last_draw >= 0.2) {
            p->last_draw = elapsed;
            fprintf(stderr, "\r\033[K[%u/%u] %s: %s run, %u samples of %u, %.0f s", c->progress_done + 1,
                    c->progress_total, p->g->label, p->variant, p->samples, c->iterations * p->g->loops.len, elapsed);
            fflush(stderr);
        }
    }
    return stop;
}

/* realpath of path; NULL when it does not exist. arena copy. */
static const char *cli__real(Arena *a, const char *path)
{
    char *r = realpath(path, NULL);
    if (!r) return NULL;
    const char *out = arena_strdup(a, r);
    free(r);
    return out;
}

/* path relative to root when it lies under root, else NULL */
static const char *cli__under(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (!strncmp(root, path, n) && path[n] == '/') return path + n + 1;
    if (!strcmp(root, "/")) return path + 1;
    return NULL;
}

static void cli__run_variant(Cli *c, ValGroup *g, uint32_t gi, ValVariant v)
{
    ValRunOut *r = &g->run[v];
    Arena *a = &c->arena;
    r->attempted = true;
    r->loops = ARENA_NEW_N(a, ValSeries, g->loops.len ? g->loops.len : 1);
    const char *vname = v == VAL_LEAKY ? "leaky" : "fixed";
    const char *dir = arena_printf(a, "%s/g%u-%s", c->tmp, gi, vname);
    const char *work = arena_printf(a, "%s/work", dir);
    const char *gl = arena_printf(a, "%s/gl", dir);
    const char *home = arena_printf(a, "%s/home", dir);
    const char *tmpd = arena_printf(a, "%s/tmp", dir);
    const char *results = arena_printf(a, "%s/results.jsonl", gl);
    const char *specp = arena_printf(a, "%s/spec.json", gl);
    if (mkdir(dir, 0700) != 0 || mkdir(gl, 0700) != 0 || mkdir(home, 0700) != 0 || mkdir(tmpd, 0700) != 0) {
        r->error = arena_printf(a, "cannot create %s: %s", dir, strerror(errno));
        return;
    }
    char *why = NULL;
    if (val_copy_tree(g->root, work, 512ull << 20, &why) != 0) {
        r->error = arena_strdup(a, why);
        gl_free(why);
        return;
    }
    const char *root_real = cli__real(a, g->root);
    const char *work_real = cli__real(a, work);
    json_t *files = json_object();
    for (uint32_t fi = 0; fi < g->files.len && !r->error; fi++) {
        uint32_t f = g->files.items[fi];
        ValFile *vf = &c->files[f];
        const char *src = vf->src;
        size_t len = vf->len;
        StrBuf fixed;
        sb_init(&fixed);
        if (v == VAL_FIXED) {
            /* A loop's fixes go in together, and only when every finding on it has one: fixing half
             * (dropping retain_graph=True but not detaching the carried state) breaks the program. */
            const Fix **fx = gl_calloc(c->findings.len + 1, sizeof *fx);
            uint32_t nfx = 0;
            for (uint32_t k = 0; k < c->findings.len; k++) {
                const ValFinding *fd = &c->findings.items[k];
                if (fd->group == gi && fd->file == f && fd->d->fix && g->loops.items[fd->loop].has_fix)
                    fx[nfx++] = fd->d->fix;
            }
            sb_append(&fixed, "", 0);
            fix_apply(vf->src, vf->len, fx, nfx, &fixed);
            gl_free(fx);
            src = fixed.data, len = fixed.len;
        }
        ValLoopRef *refs = gl_calloc(g->loops.len + 1, sizeof *refs);
        uint32_t *ks = gl_calloc(g->loops.len + 1, sizeof *ks);
        uint32_t nr = 0;
        for (uint32_t l = 0; l < g->loops.len; l++) {
            ValLoop *lp = &g->loops.items[l];
            if (lp->file != f || lp->error) continue;
            refs[nr] = lp->ref, ks[nr] = lp->k, nr++;
        }
        StrBuf ins;
        sb_init(&ins);
        const char *iwhy = NULL;
        if (val_instrument(vf->path, src, len, refs, ks, nr, &ins, &iwhy) != 0) {
            r->error = arena_printf(a, "%s: cannot instrument the %s source: %s", vf->path, vname, iwhy);
        } else {
            const char *served = arena_printf(a, "%s/src%u.py", gl, fi);
            if (val_write_file(served, ins.data ? ins.data : "", ins.len) != 0)
                r->error = arena_printf(a, "cannot write %s: %s", served, strerror(errno));
            const char *real = cli__real(a, vf->path);
            const char *rel = real && root_real ? cli__under(root_real, real) : NULL;
            if (rel && work_real) json_object_set_new(files, arena_printf(a, "%s/%s", work_real, rel), json_string(served));
            if (real) json_object_set_new(files, real, json_string(served));
        }
        sb_free(&ins);
        sb_free(&fixed);
        gl_free(refs);
        gl_free(ks);
    }
    if (r->error) {
        json_decref(files);
        return;
    }
    json_t *spec = json_object();
    json_object_set_new(spec, "results", json_string(results));
    json_object_set_new(spec, "iterations", json_integer(c->iterations));
    json_object_set_new(spec, "budget_s", json_real(c->timeout > 4 ? c->timeout - 2.5 : c->timeout * 0.6));
    json_object_set_new(spec, "max_growth", json_integer((json_int_t)c->mem_cap));
    json_object_set_new(spec, "files", files);
    json_t *loops = json_array();
    for (uint32_t l = 0; l < g->loops.len; l++)
        if (!g->loops.items[l].error) json_array_append_new(loops, json_integer(g->loops.items[l].k));
    json_object_set_new(spec, "loops", loops);
    char *spec_text = json_dumps(spec, JSON_INDENT(1));
    json_decref(spec);
    int wrc = spec_text ? val_write_file(specp, spec_text, strlen(spec_text)) : -1;
    free(spec_text);
    if (wrc != 0) {
        r->error = arena_printf(a, "cannot write %s", specp);
        return;
    }
    ValEnvOpts eo = {home, tmpd, c->harness, specp, c->cuda, c->keep_env.items, c->keep_env.len};
    char **env = val_env_build(&eo);
    ValSandboxOpts so;
    memset(&so, 0, sizeof so);
    so.argv = g->argv;
    so.envp = env;
    so.cwd = work;
    so.timeout_s = c->timeout;
    PollCtx pc;
    memset(&pc, 0, sizeof pc);
    pc.c = c, pc.g = g, pc.r = r, pc.results = results, pc.variant = vname;
    if (c->nvml) {
        int64_t u = val_nvml_used_bytes(c->nvml);
        pc.nvml_base = u > 0 ? u : 0;
        r->nvml_base = 0;
    }
    so.poll = cli__poll;
    so.poll_ctx = &pc;
    char *swhy = NULL;
    if (val_sandbox_run(&so, &r->sb, &swhy) != 0) {
        r->error = arena_strdup(a, swhy);
        gl_free(swhy);
    } else {
        val_results_read(results, a, r, g->loops.len);
    }
    val_env_free(env);
    if (c->tty) fprintf(stderr, "\r\033[K");
    if (!c->keep_temp) val_remove_tree(work);
}

/* ---- verdicts ---- */

static const char *cli__last_line(Arena *a, const char *text)
{
    if (!text) return "";
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) n--;
    size_t s = n;
    while (s && text[s - 1] != '\n') s--;
    return arena_strndup(a, text + s, n - s > 300 ? 300 : n - s);
}

/* Why a run gave too few samples of a loop, or NULL when it simply ended. */
static const char *cli__run_trouble(Arena *a, const ValRunOut *r)
{
    if (r->error) return r->error;
    if (!r->harness_started) {
        if (r->sb.exit_code == 127) return arena_printf(a, "could not start: %s", cli__last_line(a, r->sb.err_tail));
        return arena_printf(a, "the harness did not start (exit %d): %s", r->sb.exit_code, cli__last_line(a, r->sb.err_tail));
    }
    if (r->sb.timed_out) return arena_printf(a, "timed out after %.0f s", r->sb.wall_s);
    if (r->sb.stopped || (r->exit_why && !strcmp(r->exit_why, "memory cap"))) return "stopped at the memory cap";
    if (r->exit_why && !strcmp(r->exit_why, "budget")) return "the time budget ran out";
    if (r->sb.exit_code != 0 && !(r->exit_why && !strcmp(r->exit_why, "sampled"))) {
        const char *last = cli__last_line(a, r->sb.err_tail);
        if (strstr(r->sb.err_tail ? r->sb.err_tail : "", "No module named 'torch'")) return "no torch: the interpreter cannot import torch (use --python)";
        return arena_printf(a, "crashed (exit %d): %s", r->sb.exit_code, last);
    }
    return NULL;
}

static void cli__verdict(Cli *c, ValFinding *f)
{
    Arena *a = &c->arena;
    ValGroup *g = &c->groups.items[f->group];
    ValLoop *lp = &g->loops.items[f->loop];
    uint32_t warm = GL_MAX(2u, c->iterations / 5);
    uint32_t need = warm + 5;
    const char *pred = f->d->growth == GROWTH_HOST ? "host" : "device";
    f->measured = "none";
    f->nvml_growth = g->run[VAL_LEAKY].nvml ? g->run[VAL_LEAKY].nvml_peak : -1;
    f->verdict = VAL_INCONCLUSIVE;
    if (lp->error) {
        f->reason = arena_printf(a, "cannot instrument the loop: %s", lp->error);
        return;
    }
    const ValRunOut *L = &g->run[VAL_LEAKY];
    const ValSeries *ls = L->loops ? &L->loops[lp->k] : NULL;
    uint32_t n = ls ? ls->t.len : 0;
    const char *trouble = cli__run_trouble(a, L);
    if (n == 0) {
        if (trouble) f->reason = trouble;
        else if (!L->torch_seen && L->harness_started)
            f->reason = "loop never reached (run the program that calls it with --cmd \"python ...\")";
        else f->reason = "loop never reached (run the program that calls it with --cmd \"python ...\")";
        return;
    }
    if (n < need) {
        f->reason = trouble ? arena_printf(a, "%s after %u iterations of the loop", trouble, n)
                            : arena_printf(a, "the loop ran only %u iterations (need %u; raise the data size or --cmd arguments)", n, need);
        return;
    }
    if (!strcmp(c->device, "cuda") && L->torch_seen && !L->cuda) {
        f->reason = arena_printf(a, "--device cuda, but torch in the sandbox saw no GPU (the run fell back to CPU): %s",
                                 cli__last_line(a, L->sb.err_tail));
        return;
    }
    const DoubleList *y = val_primary(L, ls, &f->metric);
    f->fit[VAL_LEAKY] = val_fit(y, warm);
    bool have_heap = ls->heap.len && ls->heap.items[ls->heap.len - 1] > 0;
    f->host_fit = val_fit(have_heap ? &ls->heap : &ls->rss, warm);
    ValFit *lf = &f->fit[VAL_LEAKY];
    bool grows = lf->slope >= VAL_FLOOR_BYTES && lf->r2 >= VAL_MIN_R2;
    if (grows) f->measured = "device";
    else if (f->host_fit.slope >= VAL_HOST_FLOOR_BYTES && f->host_fit.r2 >= VAL_MIN_R2) f->measured = "host";
    f->class_match = !strcmp(pred, f->measured) || (!strcmp(pred, "host") && !strcmp(f->measured, "none"));
    if (lf->slope < VAL_FLOOR_BYTES) {
        f->verdict = VAL_NOT_REPRODUCED;
        if (!strcmp(pred, "host"))
            f->reason = "predicted host-only growth: no device growth measured, as predicted";
        return;
    }
    if (lf->r2 < VAL_MIN_R2) {
        char b[32];
        val_fmt_bytes(b, sizeof b, lf->slope);
        f->reason = arena_printf(a, "growth is not steady (%s/iteration, r2 = %.2f)", b, lf->r2);
        return;
    }
    if (!lp->has_fix) {
        f->verdict = VAL_CONFIRMED;
        f->reason = f->d->fix ? "the other finding on this loop has no automatic fix, so neither was applied: leaky run only"
                              : "no automatic fix to compare with: leaky run only";
        return;
    }
    const ValRunOut *F = &g->run[VAL_FIXED];
    const ValSeries *fs = F->loops ? &F->loops[lp->k] : NULL;
    uint32_t fn = fs ? fs->t.len : 0;
    if (fn < need) {
        const char *ft = cli__run_trouble(a, F);
        f->reason = arena_printf(a, "the fixed run %s", ft ? ft : fn ? "ran too few iterations" : "never reached the loop");
        if (fn >= 3) f->fit[VAL_FIXED] = val_fit(val_primary(F, fs, &(const char *){NULL}), GL_MIN(warm, fn - 2));
        return;
    }
    const char *fm = NULL;
    f->fit[VAL_FIXED] = val_fit(val_primary(F, fs, &fm), warm);
    if (fabs(f->fit[VAL_FIXED].slope) < VAL_FLOOR_BYTES) {
        f->verdict = VAL_CONFIRMED;
        return;
    }
    char b[32];
    val_fmt_bytes(b, sizeof b, f->fit[VAL_FIXED].slope);
    f->reason = arena_printf(a, "the fixed run still grows (%s/iteration)", b);
}

/* ---- output ---- */

static void cli__pad(FILE *fp, const char *s, int width)
{
    int n = (int)utf8_count(s, strlen(s));
    fputs(s, fp);
    for (; n < width; n++) fputc(' ', fp);
}

/* A notebook's cell that holds row, or NULL (not a notebook). */
static const NbCell *cli__cell(const ValFile *vf, uint32_t row)
{
    return vf->cells ? nb_cell_of_row(vf->cells, vf->n_cells, row) : NULL;
}

static void cli__table(Cli *c, FILE *fp)
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
    fprintf(fp, "%-*s %-7s %-22s %-12s %-15s %-16s %s\n", wf, "finding", "iters", "leaky/iteration", "fixed/iter",
            "class pred/meas", "verdict", "time");
    uint32_t nconf = 0, nnot = 0, ninc = 0;
    for (uint32_t i = 0; i < c->findings.len; i++) {
        ValFinding *f = &c->findings.items[i];
        ValGroup *g = &c->groups.items[f->group];
        const ValLoop *lp = &g->loops.items[f->loop];
        char where[512], iters[32], lk[64], fx[48], cls[48], b[32], t[32];
        const NbCell *cell = cli__cell(&c->files[f->file], f->d->span.row);
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
        if (f->fit[VAL_LEAKY].ok) {
            val_fmt_bytes(b, sizeof b, f->fit[VAL_LEAKY].slope);
            snprintf(lk, sizeof lk, "%s%s (r2 %.2f)", f->fit[VAL_LEAKY].slope > 0 ? "+" : "", b, f->fit[VAL_LEAKY].r2);
        } else snprintf(lk, sizeof lk, "-");
        if (f->fit[VAL_FIXED].ok) {
            val_fmt_bytes(b, sizeof b, f->fit[VAL_FIXED].slope);
            snprintf(fx, sizeof fx, "%s%s", f->fit[VAL_FIXED].slope > 0 ? "+" : "", b);
        } else snprintf(fx, sizeof fx, "-");
        snprintf(cls, sizeof cls, "%s/%s%s", f->d->growth == GROWTH_HOST ? "host" : "device", f->measured,
                 f->fit[VAL_LEAKY].ok ? (f->class_match ? "" : " (!)") : "");
        snprintf(t, sizeof t, "%.1f s", f->seconds);
        const char *vn = val_verdict_name(f->verdict);
        const char *col = !c->color ? "" : f->verdict == VAL_CONFIRMED ? "\033[1;31m" : f->verdict == VAL_NOT_REPRODUCED ? "\033[32m" : "\033[33m";
        fprintf(fp, "%-*s %-7s %-22s %-12s %-15s %s", wf, where, iters, lk, fx, cls, col);
        cli__pad(fp, vn, 16);
        fprintf(fp, "%s %s\n", c->color ? "\033[0m" : "", t);
        if (f->reason) fprintf(fp, "    %s%s\n", f->verdict == VAL_INCONCLUSIVE ? "inconclusive: " : "", f->reason);
        nconf += f->verdict == VAL_CONFIRMED;
        nnot += f->verdict == VAL_NOT_REPRODUCED;
        ninc += f->verdict == VAL_INCONCLUSIVE;
    }
    for (uint32_t g = 0; g < c->groups.len; g++) {
        const ValRunOut *r = &c->groups.items[g].run[VAL_LEAKY];
        if (r->sb.note) {
            fprintf(fp, "\nnote: sandbox: %s", r->sb.note);
            break;
        }
    }
    fprintf(fp, "\n%u confirmed, %u not reproduced, %u inconclusive.\n", nconf, nnot, ninc);
}

/* The evidence of one finding as a JSON object (the json format's rows, SARIF's properties). */
static json_t *cli__evidence(Cli *c, const ValFinding *f)
{
    const ValGroup *g = &c->groups.items[f->group];
    const ValLoop *lp = &g->loops.items[f->loop];
    json_t *o = json_object();
    json_object_set_new(o, "verdict", json_string(val_verdict_name(f->verdict)));
    if (f->reason) json_object_set_new(o, "reason", json_string(f->reason));
    json_object_set_new(o, "predictedClass", json_string(f->d->growth == GROWTH_HOST ? "host" : "device"));
    json_object_set_new(o, "measuredClass", json_string(f->measured ? f->measured : "none"));
    json_object_set_new(o, "classMatches", json_boolean(f->class_match));
    const NbCell *lc = lp->ref.line ? cli__cell(&c->files[f->file], lp->ref.line - 1) : NULL;
    json_object_set_new(o, "loopLine", json_integer(lp->ref.line - (lc ? lc->row : 0)));
    if (lc) json_object_set_new(o, "loopCell", json_integer(lc->index));
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
        json_object_set_new(run, "seconds", json_real(round(r->sb.wall_s * 100) / 100));
        json_object_set_new(run, "exitCode", json_integer(r->sb.exit_code));
        if (r->nvml) json_object_set_new(run, "nvmlPeakBytes", json_integer(r->nvml_peak));
        json_object_set_new(o, v == VAL_LEAKY ? "leaky" : "fixed", run);
    }
    if (g->run[VAL_LEAKY].device) json_object_set_new(o, "device", json_string(g->run[VAL_LEAKY].device));
    if (g->run[VAL_LEAKY].torch_version) json_object_set_new(o, "torchVersion", json_string(g->run[VAL_LEAKY].torch_version));
    json_object_set_new(o, "seconds", json_real(round(f->seconds * 100) / 100));
    return o;
}

static int cli__json(Cli *c, FILE *fp)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < c->findings.len; i++) {
        const ValFinding *f = &c->findings.items[i];
        json_t *o = cli__evidence(c, f);
        json_object_set_new(o, "path", json_string(c->files[f->file].path));
        const NbCell *cell = cli__cell(&c->files[f->file], f->d->span.row);
        json_object_set_new(o, "line", json_integer(f->d->span.row + 1 - (cell ? cell->row : 0)));
        if (cell) json_object_set_new(o, "cell", json_integer(cell->index));
        json_object_set_new(o, "code", json_string(rule_info((RuleId)f->d->rule)->code));
        json_object_set_new(o, "message", json_string(f->d->message));
        json_array_append_new(arr, o);
    }
    int rc = json_dumpf(arr, fp, JSON_INDENT(2)) == 0 ? 0 : -1;
    fputc('\n', fp);
    json_decref(arr);
    return rc;
}

static int cli__sarif(Cli *c, FILE *fp)
{
    OutFile *of = gl_calloc(c->n_files + 1, sizeof *of);
    char ***props = gl_calloc(c->n_files + 1, sizeof *props);
    for (uint32_t i = 0; i < c->n_files; i++) {
        of[i].path = c->files[i].path;
        of[i].src = c->files[i].text ? c->files[i].text : c->files[i].src;
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
        json_object_set_new(wrap, "validation", cli__evidence(c, f));
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

/* A notebook runs as a script: its code cells in order, with the IPython-only lines and the
 * %%bash-style cells masked into no-ops (src/nb). The script is what is linted, instrumented and
 * served for the notebook's path (`python -m gradleak_harness nb.ipynb`); results map back to cells.
 * Returns 0, or -1 after printing why it cannot be read. */
static int cli__notebook(ValFile *vf)
{
    Notebook nb;
    char err[512];
    NbStatus st = nb_read(vf->src, vf->len, &nb, err, sizeof err);
    if (st != NB_OK) {
        fprintf(stderr, "gradleak: %s: %s: %s\n", st == NB_NOT_PYTHON ? "note" : "error", vf->path, err);
        gl_free(vf->src);
        vf->src = gl_strdup("");
        vf->len = 0;
        return st == NB_NOT_PYTHON ? 0 : -1;
    }
    gl_free(vf->src);
    vf->src = nb.code, vf->len = nb.len, vf->text = nb.text, vf->cells = nb.cells, vf->n_cells = nb.n_cells;
    return 0;
}

/* ---- the session ---- */

typedef Array(const char *) PathList;

static int cli__parse(Cli *c, int argc, char **argv, PathList *paths)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKE(flag)                                                                           \
    (!strcmp(a, flag) ? (i + 1 < argc ? (val = argv[++i], 1) : (cli__die_usage("%s needs a value", flag), -1)) \
                      : (!strncmp(a, flag "=", strlen(flag) + 1) ? (val = a + strlen(flag) + 1, 1) : 0))
        int t;
        if ((t = TAKE("--cmd"))) {
            if (t < 0) return -1;
            c->cmd = val;
        } else if ((t = TAKE("--device"))) {
            if (t < 0) return -1;
            if (strcmp(val, "auto") && strcmp(val, "cuda") && strcmp(val, "cpu")) {
                cli__die_usage("--device: expected auto, cuda or cpu, got '%s'", val);
                return -1;
            }
            c->device = val;
        } else if ((t = TAKE("--iterations"))) {
            if (t < 0) return -1;
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 8 || n > 100000) {
                cli__die_usage("--iterations: expected a number from 8 to 100000, got '%s'", val);
                return -1;
            }
            c->iterations = (uint32_t)n;
        } else if ((t = TAKE("--timeout"))) {
            if (t < 0) return -1;
            char *end;
            double s = strtod(val, &end);
            if (*end || !(s >= 1 && s <= 86400)) {
                cli__die_usage("--timeout: expected seconds from 1 to 86400, got '%s'", val);
                return -1;
            }
            c->timeout = s;
        } else if ((t = TAKE("--python"))) {
            if (t < 0) return -1;
            c->python = val;
        } else if ((t = TAKE("--memory-cap"))) {
            if (t < 0) return -1;
            char *end;
            unsigned long long m = strtoull(val, &end, 10);
            if (*end || m < 16 || m > (1ull << 30)) {
                cli__die_usage("--memory-cap: expected MiB (at least 16), got '%s'", val);
                return -1;
            }
            c->mem_cap = (uint64_t)m << 20;
        } else if ((t = TAKE("--select"))) {
            if (t < 0) return -1;
            memset(&c->select, 0, sizeof c->select);
            if (!cli__parse_codes(val, &c->select)) return -1;
        } else if ((t = TAKE("--fail-on"))) {
            if (t < 0) return -1;
            if (!strcmp(val, "confirmed")) c->fail_on = FAIL_CONFIRMED;
            else if (!strcmp(val, "finding")) c->fail_on = FAIL_FINDING;
            else if (!strcmp(val, "never")) c->fail_on = FAIL_NEVER;
            else {
                cli__die_usage("--fail-on: expected confirmed, finding or never, got '%s'", val);
                return -1;
            }
        } else if ((t = TAKE("--output-format"))) {
            if (t < 0) return -1;
            if (out_format_parse(val, &c->fmt) != 0 || (c->fmt != OUT_FULL && c->fmt != OUT_JSON && c->fmt != OUT_SARIF)) {
                cli__die_usage("--output-format: validate writes full, json or sarif, not '%s'", val);
                return -1;
            }
        } else if ((t = TAKE("--report"))) {
            if (t < 0) return -1;
            c->report = val;
        } else if ((t = TAKE("--env"))) {
            if (t < 0) return -1;
            array_push(&c->keep_env, val);
        } else if (!strcmp(a, "--keep-temp")) {
            c->keep_temp = true;
        } else if (!strcmp(a, "--no-history")) {
            c->no_history = true;
        } else if (!strcmp(a, "--no-color")) {
            c->color = false;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) array_push(paths, argv[i]);
        } else if (a[0] == '-' && a[1]) {
            cli__die_usage("unknown option '%s'", a);
            return -1;
        } else {
            array_push(paths, a);
        }
#undef TAKE
    }
    return 0;
}

static const char *cli__dirname(Arena *a, const char *path)
{
    const char *real = cli__real(a, path);
    if (!real) return ".";
    const char *slash = strrchr(real, '/');
    return slash == real ? "/" : arena_strndup(a, real, (size_t)(slash - real));
}

/* Findings into programs: with --cmd one program for everything, else one per flagged file. */
static void cli__group(Cli *c)
{
    Arena *a = &c->arena;
    uint32_t shared = UINT32_MAX;
    for (uint32_t fi = 0; fi < c->n_files; fi++) {
        ValFile *vf = &c->files[fi];
        uint32_t gi = UINT32_MAX;
        for (uint32_t d = 0; d < vf->n_diags; d++) {
            const Diag *dg = &vf->diags[d];
            if (!cli__is_growth_rule(dg->rule) || !c->select.on[dg->rule]) continue;
            if (gi == UINT32_MAX) {
                if (c->cmd && shared != UINT32_MAX) gi = shared;
                else {
                    ValGroup g;
                    memset(&g, 0, sizeof g);
                    array_init(&g.files);
                    array_init(&g.loops);
                    uint32_t nw = 0;
                    if (c->cmd) {
                        char **w = cli__split(a, c->cmd, &nw);
                        g.argv = cli__harness_argv(c, w, nw);
                        g.root = ".";
                        g.label = c->cmd;
                    } else {
                        const char *base = strrchr(vf->path, '/');
                        base = base ? base + 1 : vf->path;
                        char *w[3] = {(char *)(c->python ? c->python : "python3"), (char *)base, NULL};
                        g.argv = cli__harness_argv(c, w, 2);
                        g.root = cli__dirname(a, vf->path);
                        g.label = arena_printf(a, "python %s", vf->path);
                    }
                    array_push(&c->groups, g);
                    gi = c->groups.len - 1;
                    if (c->cmd) shared = gi;
                }
                array_push(&c->groups.items[gi].files, fi);
            }
            ValGroup *g = &c->groups.items[gi];
            uint32_t line = dg->loop_line ? dg->loop_line : dg->span.row + 1;
            uint32_t li = UINT32_MAX;
            for (uint32_t l = 0; l < g->loops.len; l++)
                if (g->loops.items[l].file == fi && g->loops.items[l].ref.line == line) li = l;
            if (li == UINT32_MAX) {
                ValLoop lp;
                memset(&lp, 0, sizeof lp);
                lp.file = fi;
                lp.k = g->loops.len;
                const char *why = NULL;
                if (val_loop_find(vf->path, vf->src, vf->len, line, &lp.ref, &why) != 0) {
                    lp.ref.line = line;
                    lp.error = why;
                }
                array_push(&g->loops, lp);
                li = g->loops.len - 1;
            }
            /* has_fix: every finding on the loop has a fix (cleared by the first that has none) */
            ValLoop *lpp = &g->loops.items[li];
            if (!lpp->fix_seen) lpp->has_fix = true, lpp->fix_seen = true;
            if (!dg->fix) lpp->has_fix = false;
            ValFinding f;
            memset(&f, 0, sizeof f);
            f.file = fi, f.d = dg, f.group = gi, f.loop = li;
            array_push(&c->findings, f);
        }
    }
}

/* Did some loop that has fixes grow steadily in the leaky run (the fixed run is then worth its time)? */
static bool cli__grew(Cli *c, const ValGroup *g)
{
    const ValRunOut *r = &g->run[VAL_LEAKY];
    uint32_t warm = GL_MAX(2u, c->iterations / 5);
    for (uint32_t l = 0; l < g->loops.len && r->loops; l++) {
        const ValLoop *lp = &g->loops.items[l];
        if (!lp->has_fix || lp->error || r->loops[lp->k].t.len < warm + 5) continue;
        const char *name;
        ValFit fit = val_fit(val_primary(r, &r->loops[lp->k], &name), warm);
        if (fit.slope >= VAL_FLOOR_BYTES && fit.r2 >= VAL_MIN_R2) return true;
    }
    return false;
}

/* One history row per finding (.gradleak_cache/cache.db, table validation_runs). Best effort: a
 * database that cannot be written is a warning, never a different exit status. */
static void cli__history(Cli *c)
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

int val_main(int argc, char **argv, const ValHost *host)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(val_usage_text, stdout);
            return EXIT_CLEAN;
        }
    Cli c;
    memset(&c, 0, sizeof c);
    arena_init(&c.arena);
    array_init(&c.keep_env);
    array_init(&c.groups);
    array_init(&c.findings);
    c.iterations = 30;
    c.timeout = 60;
    c.mem_cap = 4096ull << 20;
    c.device = "auto";
    c.fmt = OUT_FULL;
    c.color = isatty(1) && !getenv("NO_COLOR");
    c.tty = isatty(2);
    for (int i = 0; i < RULE_COUNT; i++) c.select.on[i] = cli__is_growth_rule(i);
    PathList paths;
    array_init(&paths);
    int rc = EXIT_CLEAN;
    if (cli__parse(&c, argc, argv, &paths) != 0) {
        rc = EXIT_ERROR;
        goto done;
    }
    if (c.fmt != OUT_FULL) c.color = false;
    c.harness = cli__harness_dir();
    if (!c.harness) {
        fprintf(stderr, "gradleak: error: the validation harness (share/gradleak/harness next to the gradleak binary) is "
                        "missing: rebuild with ninja, or set GRADLEAK_HARNESS_DIR\n");
        rc = EXIT_ERROR;
        goto done;
    }
    if (!paths.len) array_push(&paths, ".");
    char **names = NULL;
    int nfiles = host->walk(paths.items, (int)paths.len, &names);
    if (nfiles < 0) {
        rc = EXIT_ERROR;
        goto done;
    }
    c.n_files = (uint32_t)nfiles;
    c.files = gl_calloc(c.n_files + 1, sizeof *c.files);
    c.lints = gl_calloc(c.n_files + 1, sizeof *c.lints);
    LintOptions lo;
    lint_options_default(&lo);
    for (uint32_t i = 0; i < c.n_files; i++) {
        ValFile *vf = &c.files[i];
        vf->path = arena_strdup(&c.arena, names[i]);
        gl_free(names[i]);
        vf->src = val_read_file(vf->path, &vf->len);
        if (!vf->src) {
            fprintf(stderr, "gradleak: error: %s: cannot read: %s\n", vf->path, strerror(errno));
            rc = EXIT_ERROR;
            continue;
        }
        if (nb_is_path(vf->path) && cli__notebook(vf) != 0) {
            rc = EXIT_ERROR;
            continue;
        }
        if (engine_lint(vf->path, vf->src, vf->len, LANG_PYTHON, &lo, &c.lints[i]) < 0) {
            fprintf(stderr, "gradleak: error: %s: internal error while linting (this is a bug in gradleak " GL_VERSION ")\n",
                    vf->path);
            rc = EXIT_ERROR;
            continue;
        }
        if (vf->cells) {
            nb_lint_displayed(&c.lints[i], vf->src, vf->len, vf->cells, vf->n_cells);
            nb_lint_messages(&c.lints[i], vf->cells, vf->n_cells);
        }
        vf->diags = c.lints[i].diags.items;
        vf->n_diags = c.lints[i].diags.len;
    }
    gl_free(names);
    if (rc) goto done;

    cli__group(&c);
    if (c.findings.len) {
        const char *tmproot = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        StrBuf t;
        sb_init(&t);
        sb_printf(&t, "%s/gradleak-validate-XXXXXX", tmproot);
        if (!mkdtemp(t.data)) {
            fprintf(stderr, "gradleak: error: cannot create a temporary folder in %s: %s\n", tmproot, strerror(errno));
            sb_free(&t);
            rc = EXIT_ERROR;
            goto done;
        }
        c.tmp = sb_take(&t);
        char *nwhy = NULL;
        if (strcmp(c.device, "cpu") != 0) {
            c.nvml = val_nvml_open(&nwhy);
            c.cuda = c.nvml != NULL || !strcmp(c.device, "cuda");
            if (!strcmp(c.device, "cuda") && !c.nvml)
                fprintf(stderr, "gradleak: warning: --device cuda: NVML unavailable (%s); memory is read from torch only\n", nwhy);
            gl_free(nwhy);
        }
        c.progress_total = c.groups.len;
        for (uint32_t g = 0; g < c.groups.len; g++) {
            ValGroup *grp = &c.groups.items[g];
            c.progress_done = g;
            bool any_fix = false, any_loop = false;
            for (uint32_t l = 0; l < grp->loops.len; l++) {
                any_fix |= grp->loops.items[l].has_fix && !grp->loops.items[l].error;
                any_loop |= !grp->loops.items[l].error;
            }
            if (any_loop) cli__run_variant(&c, grp, g, VAL_LEAKY);
            /* the fixed run only matters when a loop with fixes grew steadily in the leaky one */
            if (any_fix && grp->run[VAL_LEAKY].attempted && cli__grew(&c, grp)) cli__run_variant(&c, grp, g, VAL_FIXED);
            grp->seconds = grp->run[VAL_LEAKY].sb.wall_s + grp->run[VAL_FIXED].sb.wall_s;
        }
        for (uint32_t i = 0; i < c.findings.len; i++) {
            ValFinding *f = &c.findings.items[i];
            uint32_t share = 0;
            for (uint32_t k = 0; k < c.findings.len; k++) share += c.findings.items[k].group == f->group;
            f->seconds = c.groups.items[f->group].seconds / (share ? share : 1);
            cli__verdict(&c, f);
        }
        if (c.nvml) val_nvml_close(c.nvml);
    }
    int wr = 0;
    if (c.fmt == OUT_SARIF) wr = cli__sarif(&c, stdout);
    else if (c.fmt == OUT_JSON) wr = cli__json(&c, stdout);
    else if (!c.findings.len) printf("gradleak validate: no growth findings (GL101-GL105) to validate.\n");
    else cli__table(&c, stdout);
    fflush(stdout);
    if (wr != 0 || ferror(stdout)) {
        fprintf(stderr, "gradleak: error: writing the output failed\n");
        rc = EXIT_ERROR;
    }
    if (c.report) {
        FILE *fp = fopen(c.report, "w");
        ValSession s = {c.files, c.n_files, c.groups.items, c.groups.len, c.findings.items, c.findings.len,
                        c.iterations, NULL, NULL};
        for (uint32_t g = 0; g < c.groups.len && !s.device; g++)
            s.device = c.groups.items[g].run[VAL_LEAKY].device, s.torch_version = c.groups.items[g].run[VAL_LEAKY].torch_version;
        if (!fp || val_report_write(fp, &s) != 0 || fclose(fp) != 0) {
            fprintf(stderr, "gradleak: error: %s: cannot write the report: %s\n", c.report, strerror(errno));
            rc = EXIT_ERROR;
        }
    }
    if (!c.no_history && c.findings.len) cli__history(&c);
    if (c.keep_temp && c.tmp) fprintf(stderr, "gradleak: working copies and results kept in %s\n", c.tmp);
    if (!rc) {
        bool any_conf = false;
        for (uint32_t i = 0; i < c.findings.len; i++) any_conf |= c.findings.items[i].verdict == VAL_CONFIRMED;
        if ((c.fail_on == FAIL_CONFIRMED && any_conf) || (c.fail_on == FAIL_FINDING && c.findings.len)) rc = EXIT_FINDINGS;
    }
done:
    if (c.tmp && !c.keep_temp) val_remove_tree(c.tmp);
    gl_free(c.tmp);
    gl_free(c.harness);
    for (uint32_t g = 0; g < c.groups.len; g++) {
        ValGroup *grp = &c.groups.items[g];
        for (int v = 0; v < VAL_NVARIANTS; v++) {
            if (grp->run[v].loops)
                for (uint32_t l = 0; l < grp->loops.len; l++) val_series_free(&grp->run[v].loops[l]);
            val_sandbox_result_free(&grp->run[v].sb);
        }
        array_free(&grp->files);
        array_free(&grp->loops);
    }
    for (uint32_t i = 0; i < c.n_files; i++) {
        gl_free(c.files[i].src);
        gl_free(c.files[i].text);
        gl_free(c.files[i].cells);
        lint_result_free(&c.lints[i]);
    }
    gl_free(c.files);
    gl_free(c.lints);
    array_free(&c.groups);
    array_free(&c.findings);
    array_free(&c.keep_env);
    array_free(&paths);
    arena_free(&c.arena);
    return rc;
}
