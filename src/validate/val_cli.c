/* `gradleak validate`: options, linting, finding what drives each flagged line (val_drive.c),
 * grouping findings into programs, and the verdicts. The runs are val_exec.c's, the output
 * val_output.c's and the HTML report val_report.c's. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/file.h"
#include "base/strbuf.h"
#include "cache/history.h"
#include "engine/engine.h"
#include "engine/fix.h"
#include "engine/run.h"
#include "out/out.h"
#include "engine/nb_lint.h"
#include "nb/nb.h"
#include "validate/val_env.h"
#include "validate/val_fs.h"
#include "validate/val_nvml.h"
#include "validate/val_cli.h"
#include "validate/val_drive.h"
#include "validate/val_run.h"
#include "validate/validate.h"

#define EXIT_CLEAN 0
#define EXIT_FINDINGS 1
#define EXIT_ERROR 2

const char *const val_usage_text =
    "Usage: gradleak validate [PATHS...] [options]\n"
    "\n"
    "Lints PATHS (default: .), then runs the program once with every growth finding's loop\n"
    "instrumented and once with the findings' fixes applied, and reports whether the memory growth\n"
    "is real. A finding inside a function or method is sampled at the loop that drives it: the\n"
    "nearest loop, in any file of the run, whose iteration reaches the function through calls;\n"
    "with no such loop (a framework calls it), at each call of the function. This RUNS YOUR CODE,\n"
    "in a sandbox: its own process group and PID namespace, no network, a scrubbed environment, a\n"
    "temporary copy of the project as the only writable folder (bubblewrap: the rest of the\n"
    "filesystem read-only, a private /tmp, home folders hidden), CPU, file-size and memory limits,\n"
    "and a wall-clock kill of everything it started.\n"
    "\n"
    "Options:\n"
    "  --cmd \"COMMAND\"       Run this instead of `python FILE` for each flagged file, e.g.\n"
    "                        --cmd \"python train.py --epochs 1\" (from the current folder, which is\n"
    "                        copied); all findings are then measured in one run per variant\n"
    "  --device DEV          auto (default), cuda or cpu (cpu hides the GPUs from the program)\n"
    "  --gpus all|0,2,3      Spread the runs over these GPUs, one run per GPU at a time, each run\n"
    "                        seeing only its GPU (default: all visible; with --device cpu the list\n"
    "                        only sets how many CPU runs go at once)\n"
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
    "  --allow-read DIR      Let the program read DIR although it lies in a hidden home folder\n"
    "                        (a dataset, a model checkpoint; repeatable; never writable)\n"
    "  --plan                Print what would run (each program, where each finding is sampled,\n"
    "                        the call path, the fixes) and run nothing\n"
    "  --keep-temp           Keep the working copies and results (their folder is printed)\n"
    "  --no-history          Do not record the runs in .gradleak_cache/\n"
    "  --no-color            Never color the output\n"
    "\n"
    "Verdicts: confirmed (grows >= 4 KB/iteration with r2 >= 0.9 and the fixed run is flat),\n"
    "fix incomplete (the fixed run still grows), fix crashed (the fix made the program crash),\n"
    "not reproduced (flat), inconclusive: <why> (never reached, driven by a framework without\n"
    "--cmd, crashed, timed out, no torch...).\n"
    "Exit status: 0, 1 per --fail-on, 2 usage or internal error.\n";

/* SIGKILLs our processes whose working directory is `dir` or below it: what a killed run left
 * behind where it had no PID namespace to take them with it (a `setsid` daemon of the program,
 * started in its copy of the project). A daemon that changed directory elsewhere is not found. */
static void cli__kill_left_in(const char *dir)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t dl = strlen(dir);
    while (d && (e = readdir(d))) {
        char *end = NULL;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end || pid <= 1 || pid == (long)getpid()) continue;
        char link[64], cwd[4096];
        snprintf(link, sizeof link, "/proc/%ld/cwd", pid);
        ssize_t n = readlink(link, cwd, sizeof cwd - 1); /* fails for other users' processes */
        if (n <= 0) continue;
        cwd[n] = 0;
        if ((size_t)n >= dl && !strncmp(cwd, dir, dl) && (cwd[dl] == 0 || cwd[dl] == '/')) kill((pid_t)pid, SIGKILL);
    }
    if (d) closedir(d);
}

/* Removes the working folders of earlier validate runs that were killed (SIGKILL, a lost CI job)
 * before they could clean up: gradleak-validate-PID.XXXXXX of ours whose PID is gone. A folder
 * holds copies of the project (up to 512 MiB each). A reused PID only keeps a folder longer.
 * What such a run left running in its folder is killed first. */
static void cli__sweep_stale(const char *tmproot)
{
    DIR *d = opendir(tmproot);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, "gradleak-validate-", 18)) continue;
        char *end = NULL;
        long pid = strtol(n + 18, &end, 10);
        if (end == n + 18 || *end != '.' || strlen(end) != 7 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to ask */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", tmproot, n);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        char real[PATH_MAX];
        cli__kill_left_in(realpath(path, real) ? real : path);
        val_remove_tree(path);
    }
    if (d) closedir(d);
}

static void cli__die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "gradleak: error: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\nRun 'gradleak validate --help' for usage.\n");
}

static bool cli__is_growth_rule(int rule) { return val_rule_measure(rule) != VAL_MEASURE_NONE; }

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
            fprintf(stderr, "gradleak: error: --select: '%s' is not a growth rule (validate runs %s)\n", tok, val_rule_codes());
            ok = false;
        }
    }
    gl_free(copy);
    return ok;
}

/* What cli__file fills: the runner, and whether a file could not be linted. */
typedef struct ValRun {
    Cli *c;
    int rc;
} ValRun;

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

/* The last lines of a traceback (the fixed run's crash), joined with " | ". */
static const char *cli__last_lines(Arena *a, const char *text, int lines)
{
    if (!text) return "";
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) n--;
    size_t s = n;
    for (int k = 0; k < lines && s; k++) {
        if (k) s--;
        while (s && text[s - 1] != '\n') s--;
    }
    StrBuf sb;
    sb_init(&sb);
    for (size_t i = s; i < n; i++) {
        if (text[i] == '\n') sb_puts(&sb, " | ");
        else if (text[i] != '\r') sb_putc(&sb, text[i]);
    }
    const char *out = arena_strndup(a, sb.data ? sb.data : "", sb.len > 600 ? 600 : sb.len);
    sb_free(&sb);
    return out;
}

/* Why a loop the program should reach was never reached, from what the call graph knows. */
static const char *cli__never_reached(Cli *c, const ValLoop *lp)
{
    Arena *a = &c->arena;
    const char *where = arena_printf(a, "%s:%u", c->files[lp->file].path, lp->ref.line);
    if (lp->drive.gate)
        return arena_printf(a, "never reached: the %s at %s runs only when a command-line flag is set (%s); give --cmd "
                               "with that flag", lp->ref.is_func ? "function" : "loop", where, lp->drive.gate);
    if (lp->drive.guard && c->cmd && lp->drive.entry != UINT32_MAX)
        return arena_printf(a, "never reached: the %s at %s is reached from `%s` of %s, which runs only when that file is "
                               "the script; give --cmd \"python %s\"", lp->ref.is_func ? "function" : "loop", where,
                            lp->drive.guard, c->files[lp->drive.entry].path, c->files[lp->drive.entry].path);
    if (lp->ref.is_func)
        return arena_printf(a, "'%s' was never called (%s); run the program that calls it with --cmd \"python ...\"",
                            lp->drive.func ? lp->drive.func : "the function", lp->drive.why ? lp->drive.why : "no loop calls it");
    return "loop never reached (run the program that calls it with --cmd \"python ...\")";
}

/* The peak-class verdict (VAL_MEASURE_PEAK): the leaky run holds more at once than the fixed one. */
static void cli__verdict_peak(Cli *c, ValFinding *f, const ValSeries *ls, const ValSeries *fs, bool fixed_ok)
{
    Arena *a = &c->arena;
    for (uint32_t i = 0; i < ls->peak.len; i++) f->peak[VAL_LEAKY] = GL_MAX(f->peak[VAL_LEAKY], ls->peak.items[i]);
    for (uint32_t i = 0; fs && i < fs->peak.len; i++) f->peak[VAL_FIXED] = GL_MAX(f->peak[VAL_FIXED], fs->peak.items[i]);
    f->metric = c->groups.items[f->group].run[VAL_LEAKY].cuda ? "max_memory_allocated" : "most bytes saved for backward at once";
    if (!fixed_ok) {
        f->reason = "a peak is measured against the fixed run, which did not run to the loop";
        return;
    }
    double d = f->peak[VAL_LEAKY] - f->peak[VAL_FIXED];
    char b[32], bl[32], bf[32];
    val_fmt_bytes(b, sizeof b, d), val_fmt_bytes(bl, sizeof bl, f->peak[VAL_LEAKY]), val_fmt_bytes(bf, sizeof bf, f->peak[VAL_FIXED]);
    if (d >= VAL_PEAK_FLOOR_BYTES && d >= VAL_PEAK_RATIO * f->peak[VAL_FIXED]) {
        f->verdict = VAL_CONFIRMED;
        f->measured = "device";
        f->class_match = true;
        f->reason = arena_printf(a, "peak %s leaky against %s fixed: %s more held at once", bl, bf, b);
    } else {
        f->verdict = VAL_NOT_REPRODUCED;
        f->reason = arena_printf(a, "peak %s leaky against %s fixed: no real difference", bl, bf);
    }
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
        f->reason = lp->static_error ? lp->error : arena_printf(a, "cannot instrument the loop: %s", lp->error);
        return;
    }
    const ValRunOut *L = &g->run[VAL_LEAKY];
    const ValSeries *ls = L->loops ? &L->loops[lp->k] : NULL;
    uint32_t n = ls ? ls->t.len : 0;
    const char *trouble = cli__run_trouble(a, L);
    if (n == 0) {
        f->reason = trouble ? trouble : cli__never_reached(c, lp);
        return;
    }
    if (n < need) {
        const char *what = lp->ref.is_func ? "the function was called" : "the loop ran";
        f->reason = trouble ? arena_printf(a, "%s after %u iterations of the loop", trouble, n)
                            : arena_printf(a, "%s only %u times (need %u; raise the data size or --cmd arguments)", what, n, need);
        return;
    }
    if (!strcmp(c->device, "cuda") && L->torch_seen && !L->cuda) {
        f->reason = arena_printf(a, "--device cuda, but torch in the sandbox saw no GPU (the run fell back to CPU): %s",
                                 cli__last_line(a, L->sb.err_tail));
        return;
    }
    const ValRunOut *F = &g->run[VAL_FIXED];
    const ValSeries *fs = F->loops ? &F->loops[lp->k] : NULL;
    uint32_t fn = fs ? fs->t.len : 0;
    if (f->measure == VAL_MEASURE_PEAK) {
        cli__verdict_peak(c, f, ls, fs, lp->has_fix && fn >= need);
        return;
    }
    const DoubleList *y = val_primary(L, ls, &f->metric);
    f->fit[VAL_LEAKY] = val_fit(y, warm);
    bool have_heap = ls->heap.len && ls->heap.items[ls->heap.len - 1] > 0;
    f->host_fit = val_fit(have_heap ? &ls->heap : &ls->rss, warm);
    ValFit *lf = &f->fit[VAL_LEAKY];
    bool grows = lf->slope >= VAL_FLOOR_BYTES && lf->r2 >= VAL_MIN_R2;
    bool host_grows = f->host_fit.slope >= VAL_HOST_FLOOR_BYTES && f->host_fit.r2 >= VAL_MIN_R2;
    if (grows) f->measured = "device";
    else if (host_grows) f->measured = "host";
    f->class_match = !strcmp(pred, f->measured) || (!strcmp(pred, "host") && !strcmp(f->measured, "none"));
    /* a host-class prediction (the graph's nodes kept after backward) is measured on the C heap */
    bool host_path = !grows && host_grows && !strcmp(pred, "host");
    double floor = host_path ? VAL_HOST_FLOOR_BYTES : VAL_FLOOR_BYTES;
    if (host_path) {
        *lf = f->host_fit;
        f->metric = have_heap ? "C heap in use" : "resident set";
    }
    if (lf->slope < floor) {
        f->verdict = VAL_NOT_REPRODUCED;
        if (!strcmp(pred, "host")) f->reason = "predicted host-only growth: no growth measured";
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
        f->reason = f->d->fix || f->fix_note ? "another finding on this loop has no automatic fix, so none was applied: leaky run only"
                                             : "no automatic fix to compare with: leaky run only";
        return;
    }
    if (fn < need) {
        const char *ft = cli__run_trouble(a, F);
        if (ft && !strncmp(ft, "crashed", 7)) {
            f->verdict = VAL_FIX_CRASHED;
            f->reason = arena_printf(a, "the fixed run crashed because of the fix (exit %d): %s", F->sb.exit_code,
                                     cli__last_lines(a, F->sb.err_tail, 3));
            return;
        }
        f->reason = arena_printf(a, "the fixed run %s", ft ? ft : fn ? "ran too few iterations" : "never reached the loop");
        if (fn >= 3) f->fit[VAL_FIXED] = val_fit(val_primary(F, fs, &(const char *){NULL}), GL_MIN(warm, fn - 2));
        return;
    }
    const char *fm = NULL;
    if (host_path) {
        bool fh = fs->heap.len && fs->heap.items[fs->heap.len - 1] > 0;
        f->fit[VAL_FIXED] = val_fit(fh ? &fs->heap : &fs->rss, warm);
    } else {
        f->fit[VAL_FIXED] = val_fit(val_primary(F, fs, &fm), warm);
    }
    if (fabs(f->fit[VAL_FIXED].slope) < floor || f->fit[VAL_FIXED].r2 < VAL_MIN_R2 / 2) {
        f->verdict = VAL_CONFIRMED;
        return;
    }
    /* On the host the fixed run keeps what the fix stores instead (a detached scalar is a few
     * hundred bytes of tensor object): the fix is what removes at least three quarters of it. */
    if (host_path && f->fit[VAL_FIXED].slope < lf->slope / 4) {
        char b[32];
        val_fmt_bytes(b, sizeof b, f->fit[VAL_FIXED].slope);
        f->verdict = VAL_CONFIRMED;
        f->reason = arena_printf(a, "the fixed run grows %s/iteration on the host: the detached values it still keeps", b);
        return;
    }
    char b[32];
    val_fmt_bytes(b, sizeof b, f->fit[VAL_FIXED].slope);
    f->verdict = VAL_FIX_INCOMPLETE;
    f->reason = arena_printf(a, "fixed run still grows %s%s/iter: another hazard on this loop?", f->fit[VAL_FIXED].slope > 0 ? "+" : "", b);
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
        } else if ((t = TAKE("--gpus"))) {
            if (t < 0) return -1;
            c->gpus_arg = val;
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
        } else if ((t = TAKE("--allow-read"))) {
            if (t < 0) return -1;
            char *real = realpath(val, NULL);
            if (!real) {
                fprintf(stderr, "gradleak: error: --allow-read: cannot use '%s': %s\n", val, strerror(errno));
                return -1;
            }
            array_push(&c->allow_read, arena_strdup(&c->arena, real));
            free(real);
        } else if (!strcmp(a, "--plan")) {
            c->plan = true;
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
    const char *real = val_exec_real(a, path);
    if (!real) return ".";
    const char *slash = strrchr(real, '/');
    return slash == real ? "/" : arena_strndup(a, real, (size_t)(slash - real));
}

static void cli__push_file(ValGroup *g, uint32_t f)
{
    for (uint32_t k = 0; k < g->files.len; k++)
        if (g->files.items[k] == f) return;
    array_push(&g->files, f);
}

/* The short name of a qualname: "train_step" of "Trainer.train_step". */
static const char *cli__short(const char *q)
{
    const char *d = q ? strrchr(q, '.') : NULL;
    return d ? d + 1 : q ? q : "?";
}

/* The group (program) a finding runs in: with --cmd the one program, else the file that runs what
 * drives it (the entry of its call path), created when new. */
static uint32_t cli__group_for(Cli *c, uint32_t prog, uint32_t *shared)
{
    Arena *a = &c->arena;
    if (c->cmd && *shared != UINT32_MAX) return *shared;
    for (uint32_t gi = 0; gi < c->groups.len && !c->cmd; gi++)
        if (c->groups.items[gi].entry == prog) return gi;
    ValGroup g;
    memset(&g, 0, sizeof g);
    array_init(&g.files);
    array_init(&g.loops);
    g.entry = UINT32_MAX;
    uint32_t nw = 0;
    if (c->cmd) {
        char **w = cli__split(a, c->cmd, &nw);
        g.argv = cli__harness_argv(c, w, nw);
        g.root = ".";
        g.label = c->cmd;
    } else {
        const ValFile *vf = &c->files[prog];
        const char *base = strrchr(vf->path, '/');
        base = base ? base + 1 : vf->path;
        char *w[3] = {(char *)(c->python ? c->python : "python3"), (char *)base, NULL};
        g.argv = cli__harness_argv(c, w, 2);
        g.root = cli__dirname(a, vf->path);
        g.label = arena_printf(a, "python %s", vf->path);
        g.entry = prog;
    }
    array_push(&c->groups, g);
    if (c->cmd) *shared = c->groups.len - 1;
    return c->groups.len - 1;
}

/* Findings into programs, each finding onto the loop (or function) that drives it. */
static void cli__group(Cli *c)
{
    Arena *a = &c->arena;
    c->srcs = ARENA_NEW_N(a, ValSrc, c->n_files + 1);
    for (uint32_t i = 0; i < c->n_files; i++)
        c->srcs[i] = (ValSrc){c->files[i].path, c->files[i].src ? c->files[i].src : "", c->files[i].src ? c->files[i].len : 0};
    c->graph = val_graph_new(c->srcs, c->n_files);
    uint32_t shared = UINT32_MAX;
    for (uint32_t fi = 0; fi < c->n_files; fi++) {
        ValFile *vf = &c->files[fi];
        for (uint32_t d = 0; d < vf->n_diags; d++) {
            const Diag *dg = &vf->diags[d];
            if (!cli__is_growth_rule(dg->rule) || !c->select.on[dg->rule]) continue;
            ValDrive dr;
            val_graph_drive(c->graph, fi, dg->span.row + 1, dg->loop_line, a, &dr);
            uint32_t prog = dr.entry != UINT32_MAX ? dr.entry : dr.kind == VAL_DRIVE_LOOP ? dr.file : fi;
            uint32_t gi = cli__group_for(c, prog, &shared);
            ValGroup *g = &c->groups.items[gi];
            /* the loop: shared by the findings it drives; a finding nothing drives gets its own */
            uint32_t li = UINT32_MAX;
            for (uint32_t l = 0; l < g->loops.len && dr.kind != VAL_DRIVE_NONE; l++) {
                const ValLoop *x = &g->loops.items[l];
                if (x->file == dr.file && x->drive.kind == dr.kind && x->ref.func == dr.ref.func &&
                    x->ref.loop == dr.ref.loop && x->ref.is_func == dr.ref.is_func)
                    li = l;
            }
            if (li == UINT32_MAX) {
                ValLoop lp;
                memset(&lp, 0, sizeof lp);
                lp.file = dr.file;
                lp.k = g->loops.len;
                lp.ref = dr.ref;
                lp.drive = dr;
                /* a notebook's loop is named by its cell, as every other location is */
                const ValFile *dvf = &c->files[dr.file];
                const NbCell *dcell = dvf->cells && dr.ref.line ? nb_cell_of_row(dvf->cells, dvf->n_cells, dr.ref.line - 1) : NULL;
                const char *where = dcell ? arena_printf(a, "%s:cell %u:%u", dvf->path, dcell->index, dr.ref.line - dcell->row)
                                          : arena_printf(a, "%s:%u", dvf->path, dr.ref.line);
                if (dr.kind == VAL_DRIVE_NONE) {
                    lp.error = dr.why ? dr.why : "nothing repeats the flagged line";
                    lp.static_error = true;
                    lp.ref.line = dg->span.row + 1;
                } else if (dr.kind == VAL_DRIVE_CALLS && dr.framework && !c->cmd) {
                    lp.error = "driven by a framework; give --cmd";
                    lp.static_error = true;
                    lp.where = arena_printf(a, "'%s' is called by a framework (no loop of the run calls it)", dr.func);
                } else if (dr.kind == VAL_DRIVE_CALLS) {
                    lp.where = arena_printf(a, "sampled at each call of %s (%s: %s)", dr.func, where,
                                            dr.framework ? "a framework calls it" : "no loop of the run calls it");
                } else if (dr.calls) {
                    lp.where = arena_printf(a, "sampled at the loop in %s that calls %s", where, cli__short(dr.calls));
                } else if (dr.file != fi) {
                    lp.where = arena_printf(a, "sampled at the loop in %s", where);
                }
                array_push(&g->loops, lp);
                li = g->loops.len - 1;
                if (!lp.error) cli__push_file(g, dr.file);
            }
            cli__push_file(g, fi); /* its fix goes into the fixed run's copy of it */
            /* the fix set: every finding on the loop, with its fix or the documented one
             * (torch.no_grad() around a loop that never calls backward); no fix for one, no fixed run */
            ValLoop *lpp = &g->loops.items[li];
            ValFinding f;
            memset(&f, 0, sizeof f);
            f.file = fi, f.d = dg, f.group = gi, f.loop = li;
            f.measure = val_rule_measure(dg->rule);
            if (!lpp->fix_seen) lpp->has_fix = true, lpp->fix_seen = true;
            if (dg->fix) {
                f.fix_note = dg->fix->message;
            } else if (val_rule_no_grad_fix(dg->rule) && !lpp->drive.backward_seen && !lpp->ref.is_func && !lpp->ref.is_while &&
                       lpp->drive.kind == VAL_DRIVE_LOOP) {
                lpp->ref.no_grad = true;
                f.fix_note = arena_printf(a, "torch.no_grad() around the loop at %s:%u (the rule's documented fix, applied by "
                                             "gradleak: the finding has no automatic one)",
                                          c->files[lpp->file].path, lpp->ref.line);
            } else {
                lpp->has_fix = false;
            }
            array_push(&c->findings, f);
        }
    }
    /* k of n for the progress: a group's findings are numbered together */
    for (uint32_t gi = 0; gi < c->groups.len; gi++) {
        ValGroup *g = &c->groups.items[gi];
        g->first = UINT32_MAX;
        for (uint32_t i = 0; i < c->findings.len; i++)
            if (c->findings.items[i].group == gi) {
                if (g->first == UINT32_MAX) g->first = i;
                g->count++;
            }
        if (g->first == UINT32_MAX) g->first = 0;
    }
}

/* The run's file i (RunResultFn): its bytes and findings become c->files[i] and c->lints[i]. A
 * notebook runs as a script: its code cells in order, with the IPython-only lines and the
 * %%bash-style cells masked into no-ops (src/nb). The script is what is linted, instrumented and
 * served for the notebook's path (`python -m gradleak_harness nb.ipynb`); results map back to cells. */
static int cli__file(void *ctx, EngineRun *run, uint32_t i, RunJob *j)
{
    ValRun *vr = ctx;
    Cli *c = vr->c;
    ValFile *vf = &c->files[i];
    vf->path = arena_strdup(&c->arena, j->path);
    if (j->read_errno == RUN_NB_BROKEN || j->read_errno == RUN_NB_OTHER) {
        char *why = spill_get(run->spill, j->src_at, j->src_len);
        fprintf(stderr, "gradleak: %s: %s: %s\n", j->read_errno == RUN_NB_OTHER ? "note" : "error", vf->path,
                why ? why : "not linted");
        gl_free(why);
        if (j->read_errno == RUN_NB_BROKEN) vr->rc = EXIT_ERROR;
        vf->src = gl_strdup(""); /* nothing of it runs */
        return 0;
    }
    char *src = NULL;
    size_t len = 0;
    if (j->read_errno || run_job_load(run, j, &c->lints[i], &src, &len) < 0 || !src) {
        if (j->read_errno > 0)
            fprintf(stderr, "gradleak: error: %s: cannot read: %s\n", vf->path, strerror(j->read_errno));
        else
            fprintf(stderr, "gradleak: error: %s: internal error while linting (this is a bug in gradleak " GL_VERSION ")\n",
                    vf->path);
        gl_free(src);
        vr->rc = EXIT_ERROR;
        return 0;
    }
    Notebook nb;
    if (j->nb && nb_blob_view(src, len, &nb) == 0) {
        /* (the engine dropped the findings on a displayed last expression: nb_lint_displayed) */
        vf->src = gl_strndup(nb.code, nb.len), vf->len = nb.len, vf->text = gl_strndup(nb.text, nb.len);
        vf->cells = gl_malloc(nb.n_cells * sizeof *nb.cells + 1);
        memcpy(vf->cells, nb.cells, nb.n_cells * sizeof *nb.cells);
        vf->n_cells = nb.n_cells;
        gl_free(src);
        nb_lint_messages(&c->lints[i], vf->cells, vf->n_cells); /* messages name cells ('cell 3, line 2') */
    } else {
        vf->src = src, vf->len = len;
    }
    vf->diags = c->lints[i].diags.items;
    vf->n_diags = c->lints[i].diags.len;
    return 0;
}

static void cli__walk_err(void *ctx, const char *path, const char *why)
{
    int *errors = ctx;
    fprintf(stderr, "gradleak: error: %s: %s\n", path, why);
    (*errors)++;
}

/* Lints paths as `check` lints them (engine/run.h): the same walk and configuration (exclude,
 * select, per-file-ignores), the same cross-file summaries; C++ files are left out (validate runs
 * Python programs). Returns 0, or -1 after printing why. */
static int cli__lint(Cli *c, const char *const *paths, int npaths)
{
    ConfigOverrides ov;
    config_overrides_init(&ov);
    Config *cfg = config_new(&ov);
    ConfigError err;
    const Settings *top;
    WalkList wl;
    int werrors = 0;
    array_init(&wl);
    if (config_settings_for(cfg, ".", &top, &err) < 0 ||
        run_walk(paths, npaths, cfg, false, &wl, cli__walk_err, &werrors, &err) < 0) {
        fprintf(stderr, "gradleak: error: %s\n", err.message);
        config_free(cfg);
        return -1;
    }
    int rc = werrors ? -1 : 0;
    RunJob *jobs = gl_calloc(wl.len + 1, sizeof *jobs);
    uint32_t n = 0;
    for (uint32_t i = 0; i < wl.len; i++)
        if (engine_lang_of(wl.items[i].path) == LANG_PYTHON) jobs[n++] = run_job_new(wl.items[i].path);
    c->n_files = n;
    c->files = gl_calloc(n + 1, sizeof *c->files);
    c->lints = gl_calloc(n + 1, sizeof *c->lints);
    LintOptions lo;
    lint_options_default(&lo);
    Spill *spill = spill_open(getenv("TMPDIR"));
    EngineRun run;
    run_init(&run, jobs, n, &lo, NULL, spill);
    run.keep_src = true; /* every file's bytes: the call graph (val_drive.c) reads them all */
    if (!getcwd(run.cwd, sizeof run.cwd)) run.cwd[0] = 0;
    ValRun vr = {c, 0};
    if (!rc && run_set_rules(&run, cfg, &err) < 0) {
        fprintf(stderr, "gradleak: error: %s\n", err.message);
        rc = -1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!rc) engine_run(&run, top->jobs ? top->jobs : cores > 0 ? (int)cores : 1, cli__file, &vr);
    if (vr.rc) rc = -1;
    if (rc) { /* nothing runs: no file was linted, or one could not be */
        for (uint32_t i = 0; i < c->n_files; i++) {
            gl_free(c->files[i].src), gl_free(c->files[i].text), gl_free(c->files[i].cells);
            lint_result_free(&c->lints[i]);
        }
        c->n_files = 0;
    }
    run_free(&run);
    spill_close(spill);
    gl_free(jobs);
    walk_list_free(&wl);
    config_free(cfg);
    return rc;
}

/* --plan: the programs, and per finding where it is sampled, the call path and its fix. */
static void cli__plan(Cli *c, FILE *fp)
{
    for (uint32_t gi = 0; gi < c->groups.len; gi++) {
        const ValGroup *g = &c->groups.items[gi];
        fprintf(fp, "program %u: %s\n", gi + 1, g->label);
        for (uint32_t i = 0; i < c->findings.len; i++) {
            const ValFinding *f = &c->findings.items[i];
            if (f->group != gi) continue;
            const ValLoop *lp = &g->loops.items[f->loop];
            fprintf(fp, "  %s:%u %s\n", c->files[f->file].path, f->d->span.row + 1, rule_info((RuleId)f->d->rule)->code);
            if (lp->error) fprintf(fp, "    not run: %s\n", lp->error);
            else if (!lp->where)
                fprintf(fp, "    sampled at the loop in %s:%u (%s)\n", c->files[lp->file].path, lp->ref.line,
                        lp->drive.func ? lp->drive.func : "?");
            if (lp->where) fprintf(fp, "    %s\n", lp->where);
            if (lp->drive.n_path) fprintf(fp, "    call path: %s\n", val_drive_path_text(&lp->drive, c->srcs, &c->arena));
            if (lp->drive.gate) fprintf(fp, "    runs only when a flag is set: %s\n", lp->drive.gate);
            fprintf(fp, "    fixed run: %s\n", !lp->has_fix ? "none (a finding on the loop has no fix)" : f->fix_note ? f->fix_note : "-");
        }
    }
}

/* --gpus: "all" (every GPU visible: CUDA_VISIBLE_DEVICES, else what NVML counts) or a list
 * "0,2,3". CPU runs take the list as given (tests spread CPU runs the same way), or one slot. */
static int cli__gpus(Cli *c)
{
    Arena *a = &c->arena;
    const char *arg = c->gpus_arg ? c->gpus_arg : "all";
    array_clear(&c->gpus);
    if (!strcmp(arg, "all")) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        if (!c->cuda) {
            array_push(&c->gpus, NULL);
            return 0;
        }
        if (vis && vis[0]) arg = vis;
        else {
            unsigned n = val_nvml_count(c->nvml);
            for (unsigned i = 0; i < n; i++) array_push(&c->gpus, arena_printf(a, "%u", i));
            if (!n) array_push(&c->gpus, NULL);
            return 0;
        }
    }
    char *copy = arena_strdup(a, arg);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        while (*tok == ' ') tok++;
        if (!*tok) continue;
        for (uint32_t k = 0; k < c->gpus.len; k++)
            if (c->gpus.items[k] && !strcmp(c->gpus.items[k], tok)) tok = NULL;
        if (tok) array_push(&c->gpus, tok);
    }
    if (!c->gpus.len) {
        fprintf(stderr, "gradleak: error: --gpus: no GPU in '%s'\n", arg);
        return -1;
    }
    return 0;
}

int val_main(int argc, char **argv)
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
    array_init(&c.allow_read);
    array_init(&c.gpus);
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
    array_push(&c.allow_read, c.harness);
    array_push(&c.allow_read, NULL); /* the sandbox reads it as a NULL-terminated list */
    if (!paths.len) array_push(&paths, ".");
    if (cli__lint(&c, paths.items, (int)paths.len) != 0) {
        rc = EXIT_ERROR;
        goto done;
    }

    cli__group(&c);
    if (c.plan) {
        cli__plan(&c, stdout);
        goto done;
    }
    if (c.findings.len) {
        const char *tmproot = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        StrBuf t;
        sb_init(&t);
        cli__sweep_stale(tmproot);
        sb_printf(&t, "%s/gradleak-validate-%ld.XXXXXX", tmproot, (long)getpid());
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
        if (cli__gpus(&c) != 0) {
            rc = EXIT_ERROR;
            goto done;
        }
        val_exec_all(&c);
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
    if (c.fmt == OUT_SARIF) wr = val_out_sarif(&c, stdout);
    else if (c.fmt == OUT_JSON) wr = val_out_json(&c, stdout);
    else if (!c.findings.len) printf("gradleak validate: no growth findings (%s) to validate.\n", val_rule_codes());
    else val_out_table(&c, stdout);
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
    if (!c.no_history && c.findings.len) val_out_history(&c);
    if (c.keep_temp && c.tmp) fprintf(stderr, "gradleak: working copies and results kept in %s\n", c.tmp);
    if (!rc) {
        /* growth measured: confirmed, or grown with a fix that does not stop it */
        bool any_conf = false;
        for (uint32_t i = 0; i < c.findings.len; i++) {
            ValVerdict v = c.findings.items[i].verdict;
            any_conf |= v == VAL_CONFIRMED || v == VAL_FIX_INCOMPLETE || v == VAL_FIX_CRASHED;
        }
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
    array_free(&c.allow_read);
    array_free(&c.gpus);
    val_graph_free(c.graph);
    array_free(&paths);
    arena_free(&c.arena);
    return rc;
}

