/* gradleak's command line: check, rule, rules, version, and the debug tools (ir, verify, bench). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/crash.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "cli/fixes.h"
#include "cli/notebook.h"
#include "cli/spill.h"
#include "cli/walk.h"
#include "config/config.h"
#include "out/baseline.h"
#include "engine/engine.h"
#include "engine/project.h"
#include "engine/result_codec.h"
#include "engine/suppress.h"
#include "front/py/py.h"
#include "ir/dataflow.h"
#include "lsp/lsp.h"
#include "out/out.h"
#include "validate/validate.h"

#define EXIT_CLEAN 0
#define EXIT_FINDINGS 1
#define EXIT_ERROR 2

static const char *const usage_text =
    "gradleak " GL_VERSION ": find GPU-memory hazards in PyTorch training code\n"
    "\n"
    "Usage: gradleak <command> [options]\n"
    "\n"
    "Commands:\n"
    "  check [PATHS...]   Lint Python and C++ (LibTorch) files (default: .)\n"
    "  rule CODE          Print a rule's documentation (code or name)\n"
    "  rules              List all rules\n"
    "  validate [PATHS]   Run the flagged loops and measure the growth (runs your code, sandboxed;\n"
    "                     see 'gradleak validate --help')\n"
    "  lsp                Run the language server on stdin/stdout (for editors; see README.md)\n"
    "  version            Print the version, the commit and the build date\n"
    "  debug ir FILE      Dump the IR and the loop kinds of a file\n"
    "  debug verify FILES Check fixtures' inline `# expect:` lines against the findings\n"
    "  debug bench PATHS  Time parse-only against full lint on the same files\n"
    "  debug cache [DIR]  Check the cache database (integrity, schema, rows; exit 1 if damaged)\n"
    "\n"
    "Options for check:\n"
    "  --select CODES         Only these rules (comma-separated codes or names; ALL for every rule)\n"
    "  --ignore CODES         Skip these rules\n"
    "  --extend-select CODES  Add rules to the selection\n"
    "  --exclude GLOBS        Leave these paths out (comma-separated; replaces the file's exclude)\n"
    "  --extend-exclude GLOBS Leave these paths out too\n"
    "  --force-exclude        Apply exclude to paths named on the command line too (pre-commit)\n"
    "  --torch-version X.Y    The torch the code runs on (rules for removed APIs follow it)\n"
    "  --config FILE          Read settings from FILE only, for every path\n"
    "  --isolated             Read no configuration file\n"
    "  --output-format FMT    full (default), concise, json, sarif, github\n"
    "  --fix                  Apply the safe fixes (findings marked [*]) and write the files\n"
    "  --unsafe-fixes         Also apply (and mark [*]) fixes that may change behaviour\n"
    "  --diff                 Print the fixes as a unified diff instead; write nothing\n"
    "                         (exit 1 if there is a diff)\n"
    "  --statistics           Count findings per rule instead of listing them\n"
    "  --exit-zero            Exit 0 even when there are findings\n"
    "  --trace                Show the dataflow facts behind each finding\n"
    "  -j, --jobs N           Lint N files at a time (default: number of cores)\n"
    "  --max-file-size BYTES  Skip larger files with a note (default 8 MiB)\n"
    "  -p DIR                 C++: folder of compile_commands.json (default: searched upward from\n"
    "                         each file); without one, a C++17 command line and the LibTorch\n"
    "                         headers of $LIBTORCH or the system, else gradleak's stub header\n"
    "  --parse-timeout SECS   Skip a file whose parse takes longer, with a note (default 10)\n"
    "  --no-color             Never color the output (also: NO_COLOR=1)\n"
    "  --baseline FILE        Report only findings not in FILE (JSON, made by --write-baseline)\n"
    "  --write-baseline       Write every finding to the --baseline FILE (default gradleak-baseline.json)\n"
    "  --no-cache             Neither read nor write the cache (.gradleak_cache/, or GRADLEAK_CACHE_DIR)\n"
    "\n"
    "Settings come from the nearest gradleak.toml, or pyproject.toml with [tool.gradleak], above each\n"
    "file (keys: select, ignore, extend-select, per-file-ignores, exclude, extend-exclude,\n"
    "torch-version, jobs); flags override them.\n"
    "\n"
    "Exit status: 0 no findings, 1 findings, 2 usage or internal error.\n"
    "Suppress a finding with `# noqa: GL101` on its line, or a file with `# gradleak: noqa`;\n"
    "in C++ with `// NOLINT(GL101)` or `// noqa: GL101`.\n";

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gradleak: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'gradleak --help' for usage.\n");
    exit(EXIT_ERROR);
}

/* A rule-selection flag: its codes become one RuleOp, applied after the configuration file's. */
static bool add_rule_op(ConfigOverrides *ov, RuleOpKind kind, const char *list, const char *flag)
{
    RuleOp op;
    ConfigError err;
    op.kind = kind;
    if (config_parse_codes(list, &op.codes, &err) < 0) {
        fprintf(stderr, "gradleak: error: %s: %s\n", flag, err.message);
        return false;
    }
    array_push(&ov->rule_ops, op);
    return true;
}

/* Reads a whole file. Returns NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused below) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)(UINT32_MAX / 2)) {
        int e = errno;
        if (S_ISDIR(st.st_mode)) e = EISDIR;
        else if (!S_ISREG(st.st_mode)) e = ENODEV; /* FIFO, socket, device: "No such device" */
        else if (st.st_size > (off_t)(UINT32_MAX / 2)) e = EFBIG;
        close(fd);
        errno = e;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return NULL;
    }
    StrBuf sb;
    sb_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_append(&sb, buf, n);
    bool err = ferror(f);
    fclose(f);
    if (err) {
        sb_free(&sb);
        errno = EIO;
        return NULL;
    }
    *len = sb.len;
    return sb_take(&sb);
}

/* The working folder when the run began. Every file is opened through it (an absolute path), so
 * nothing depends on the process's cwd once linting has begun (libclang's driver may change it). */
static char run_cwd[4096];

/* path as an absolute path (through run_cwd) in buf, or path itself when it is absolute already
 * or too long for buf. */
static const char *run_abs(const char *path, char *buf, size_t cap)
{
    if (path[0] == '/' || !run_cwd[0]) return path;
    int n = snprintf(buf, cap, "%s/%s", run_cwd, path);
    return n > 0 && (size_t)n < cap ? buf : path;
}

/* One file of a run. A run may have tens of thousands, so a job is small: its result (and, when a
 * later step needs them, its bytes) wait in the run's spill, not in memory. */
typedef struct FileJob {
    const char *path;
    uint64_t src_at;   /* the bytes that were linted, in the spill (SPILL_NONE: not kept) */
    uint64_t res_at;   /* the LintResult, lint_result_encode'd, in the spill */
    uint32_t src_len;
    uint32_t res_len;
    uint32_t rules;    /* its rules (configuration, flags, per-file-ignores): Run.rules.items[rules] */
    int16_t read_errno; /* not linted: the read's errno, -1 for an internal error, or JOB_NB_* */
    bool nb;           /* a notebook: src_at holds its blob (nb.h), or with JOB_NB_* the reason it was not linted */
    bool done;         /* linted: res_at holds its result */
    bool cached;       /* served from the cache */
} FileJob;

/* read_errno of a notebook that was not linted: its reason is in the spill at src_at. */
#define JOB_NB_BROKEN (-2) /* not a readable nbformat 4 notebook: an error */
#define JOB_NB_OTHER (-3)  /* a notebook of another language: a note */

/* The files linted together in one run, and what they share. */
typedef struct Run {
    FileJob *jobs;
    uint32_t n;
    LintOptions base;     /* the flags' options; each file's rules replace base.rules */
    Array(RuleSet) rules; /* the distinct rule sets of the files */
    Cache *cache;         /* may be NULL */
    Spill *spill;
    Project *proj;        /* files linted together (engine/project.h); NULL when alone */
    FileJob *found;       /* the helpers read from disk: the project's files n.. (summaries only) */
    uint32_t n_found;
    pthread_mutex_t mu;   /* guards proj while the workers lint */
    bool keep_src;        /* keep every file's bytes (debug verify), not only those a later step needs */
    bool alone;           /* no project: each file on its own, no helpers from disk (debug verify) */
} Run;

static void run_init(Run *run, FileJob *jobs, uint32_t n, const LintOptions *base, Cache *cache, Spill *spill)
{
    memset(run, 0, sizeof *run);
    run->jobs = jobs;
    run->n = n;
    run->base = *base;
    array_init(&run->rules);
    run->cache = cache;
    run->spill = spill;
    pthread_mutex_init(&run->mu, NULL);
}

/* A job for path, nothing in the spill yet. */
static FileJob job_new(const char *path)
{
    return (FileJob){.path = path, .src_at = SPILL_NONE, .res_at = SPILL_NONE};
}

static void run_free(Run *run)
{
    project_free(run->proj);
    run->proj = NULL;
    gl_free(run->found);
    run->found = NULL;
    run->n_found = 0;
    array_free(&run->rules);
    pthread_mutex_destroy(&run->mu);
}

/* The index of rs in run->rules, added when new. Files next to each other share their settings,
 * so the newest sets are tried first. */
static uint32_t run_rules_index(Run *run, const RuleSet *rs)
{
    for (uint32_t k = run->rules.len; k-- > 0;)
        if (!memcmp(&run->rules.items[k], rs, sizeof *rs)) return k;
    array_push(&run->rules, *rs);
    return run->rules.len - 1;
}

/* The options a job is linted with (without the other files' summaries). */
static LintOptions run_options(const Run *run, const FileJob *j)
{
    LintOptions o = run->base;
    if (run->rules.len) o.rules = run->rules.items[j->rules];
    return o;
}

/* Everything besides the bytes and the path that decides a file's findings: its cache key. */
static uint64_t settings_key(const LintOptions *o, uint64_t ext_hash)
{
    uint8_t buf[RULE_COUNT + 16];
    size_t n = 0;
    memcpy(buf, o->rules.on, RULE_COUNT), n += RULE_COUNT;
    buf[n++] = o->trace;
    memcpy(buf + n, &o->max_bytes, sizeof o->max_bytes), n += sizeof o->max_bytes;
    memcpy(buf + n, &ext_hash, sizeof ext_hash), n += sizeof ext_hash;
    return cache_hash64(buf, n, 0x676c);
}

/* The summaries that project_attach gave o, for the names file i calls: what a re-lint depends on
 * besides the file itself. */
static uint64_t ext_key(const LintOptions *o, const Project *p, uint32_t i)
{
    if (!o->ext) return 0;
    uint32_t n;
    const ImportedCall *calls = project_calls(p, i, &n);
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t k = 0; k < n; k++) {
        const ExternSummary *s = o->ext(o->ext_ctx, calls[k].qual);
        uint8_t b[12] = {0};
        if (s) {
            b[0] = 1, b[1] = s->kind, b[2] = s->grad, b[3] = s->elem, b[4] = s->nparams;
            memcpy(b + 5, &s->flags, 2), memcpy(b + 7, &s->pmask, 2), b[9] = s->cmask;
        }
        h = cache_hash64(calls[k].qual, strlen(calls[k].qual), h);
        h = cache_hash64(b, sizeof b, h);
    }
    return h ? h : 1;
}

/* Lints j, the run's file i: its first lint, or with relint a lint again with the other files'
 * summaries (the run's project). The result goes to the spill (j->res_at); the first lint also
 * keeps the bytes there when a later step needs them (findings to show or fix, calls that a
 * re-lint may follow) and gives the project the file's summaries. A re-lint leaves the project
 * alone: the other workers are reading it. */
static void lint_job(Run *run, FileJob *j, uint32_t i, bool relint)
{
    if (gl_crash_skipped(j->path)) { /* it crashed an earlier execution of this run (src/base/crash.h) */
        j->read_errno = -1;
        return;
    }
    LintOptions o = run_options(run, j);
    uint64_t ext_hash = 0;
    if (relint) {
        project_attach(run->proj, i, &o);
        ext_hash = ext_key(&o, run->proj, i);
    }
    size_t len = j->src_len;
    /* a re-lint lints the first lint's bytes */
    char absbuf[4096 + 1024];
    char *src = j->src_at != SPILL_NONE ? spill_get(run->spill, j->src_at, len)
                                        : read_file(run_abs(j->path, absbuf, sizeof absbuf), &len);
    if (!src) {
        j->read_errno = (int16_t)(errno > 0 && errno < INT16_MAX ? errno : EIO);
        return;
    }
    /* a notebook: its code cells, joined and masked, are what is linted; the blob is what is kept */
    const char *code = src;
    size_t code_len = len;
    if (nb_is_path(j->path)) {
        char note[512];
        NbStatus st = j->src_at != SPILL_NONE ? NB_OK : cli_nb_load(&src, &len, note, sizeof note);
        Notebook nbv;
        if (st == NB_OK && nb_blob_view(src, len, &nbv) < 0) st = NB_ERROR, snprintf(note, sizeof note, "internal error");
        if (st != NB_OK) {
            j->src_at = spill_put(run->spill, note, strlen(note));
            j->src_len = (uint32_t)strlen(note);
            j->read_errno = st == NB_NOT_PYTHON ? JOB_NB_OTHER : JOB_NB_BROKEN;
            gl_free(src);
            return;
        }
        j->nb = true;
        code = nbv.code;
        code_len = nbv.len;
    }
    char *key = run->cache ? config_abspath(run_abs(j->path, absbuf, sizeof absbuf)) : NULL;
    uint64_t content = 0, skey = 0;
    StrBuf blob;
    sb_init(&blob);
    LintResult res;
    memset(&res, 0, sizeof res);
    bool cached = false;
    if (key) {
        content = cache_hash64(code, code_len, 0); /* a notebook's code: not its outputs */
        if (j->nb) { /* ... and where its cells end (nb_lint_displayed) */
            Notebook nbk;
            if (nb_blob_view(src, len, &nbk) == 0)
                for (uint32_t k = 0; k < nbk.n_cells; k++) content = cache_hash64(&nbk.cells[k].end, 4, content);
        }
        skey = settings_key(&o, ext_hash);
        if (engine_lang_of(j->path) == LANG_CXX) {
            /* a C++ file's results also follow its compile flags and the headers it is parsed with */
            uint64_t ck = engine_cxx_key(run_abs(j->path, absbuf, sizeof absbuf), &o);
            skey = cache_hash64(&ck, sizeof ck, skey);
        }
        void *data;
        size_t n;
        if (cache_get(run->cache, key, skey, content, code_len, &data, &n) == 1) {
            if (lint_result_decode(data, n, &res) == 0 && engine_deps_fresh(res.deps)) {
                /* (a C++ result stands only while the project headers it includes are unchanged) */
                cached = true;
                sb_append(&blob, data, n);
            } else {
                lint_result_free(&res);
            }
            gl_free(data);
        }
    }
    if (!cached) {
        o.display_path = j->path; /* files are read by absolute path; crash reports name them as given */
        if (engine_lint(run_abs(j->path, absbuf, sizeof absbuf), code, code_len, engine_lang_of(j->path), &o, &res) < 0) {
            lint_result_free(&res);
            gl_free(key);
            gl_free(src);
            j->read_errno = -1;
            return;
        }
        Notebook nbd;
        if (j->nb && nb_blob_view(src, len, &nbd) == 0) nb_lint_displayed(&res, nbd.code, nbd.len, nbd.cells, nbd.n_cells);
        /* the encoding is both what waits in the spill and the blob the cache stores */
        lint_result_encode(&blob, &res);
        if (key) cache_put(run->cache, key, skey, content, code_len, blob.data, blob.len);
    }
    /* (a notebook's notes name cells: the output needs its map) */
    if (!relint && j->src_at == SPILL_NONE && (res.diags.len || res.n_calls || run->keep_src || (j->nb && res.notes))) {
        j->src_at = spill_put(run->spill, src, len);
        j->src_len = (uint32_t)len;
    }
    if (!relint && run->proj) {
        pthread_mutex_lock(&run->mu);
        project_set(run->proj, i, j->path, &res);
        pthread_mutex_unlock(&run->mu);
    }
    j->res_at = spill_put(run->spill, blob.data, blob.len);
    j->res_len = (uint32_t)blob.len;
    j->done = true;
    j->cached = cached;
    sb_free(&blob);
    lint_result_free(&res);
    gl_free(key);
    gl_free(src);
}

/* The result of a linted job back from the spill, and with src its bytes when they were kept (else
 * *src is NULL). Returns 0, or -1 with errno when the spill cannot be read back. */
static int job_load(const Run *run, const FileJob *j, LintResult *res, char **src, size_t *len)
{
    memset(res, 0, sizeof *res);
    if (src) *src = NULL, *len = 0;
    char *blob = spill_get(run->spill, j->res_at, j->res_len);
    if (!blob) return -1;
    int rc = lint_result_decode(blob, j->res_len, res);
    gl_free(blob);
    if (rc < 0) {
        lint_result_free(res);
        memset(res, 0, sizeof *res);
        errno = EINVAL; /* our own encoding: a bug */
        return -1;
    }
    if (src && j->src_at != SPILL_NONE) {
        *src = spill_get(run->spill, j->src_at, j->src_len);
        if (!*src) {
            lint_result_free(res);
            memset(res, 0, sizeof *res);
            return -1;
        }
        *len = j->src_len;
    }
    return 0;
}

/* File i of the run's project: one of the n files of the run, or a helper read from disk. */
static FileJob *run_job(const Run *run, uint32_t i)
{
    return i < run->n ? &run->jobs[i] : &run->found[i - run->n];
}

/* The project's ProjectLoad: file i's path and latest result. */
static int run_load(void *ctx, uint32_t i, const char **path, LintResult *out)
{
    const Run *run = ctx;
    const FileJob *j = run_job(run, i);
    if (!j->done) return -1;
    *path = j->path;
    return out ? job_load(run, j, out, NULL, NULL) : 0;
}

/* One pass of lints: jobs[k] is the run's file file[k] (file NULL: file k). */
typedef struct Pool {
    Run *run;
    FileJob *jobs;
    const uint32_t *file;
    uint32_t n;
    bool relint;
    uint32_t next;
    pthread_mutex_t mu;
} Pool;

static void *pool_worker(void *arg)
{
    Pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        uint32_t k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= p->n) return NULL;
        lint_job(p->run, &p->jobs[k], p->file ? p->file[k] : k, p->relint);
    }
}

/* Lints the pass's jobs on nthreads workers. Each job's result depends on that job alone (and on
 * the project, which does not change during a pass), so the order the workers take them in
 * changes nothing. */
static void pool_run(Pool *p, int nthreads)
{
    if (nthreads <= 1 || p->n < 2) {
        pool_worker(p);
        return;
    }
    if (nthreads > 64) nthreads = 64;
    if ((uint32_t)nthreads > p->n) nthreads = (int)p->n;
    pthread_t th[64];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, pool_worker, p) == 0) started++;
    if (!started) pool_worker(p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* Lints every file of the run, then lints again, in rounds, the files whose calls reach a function
 * of another file (engine/project.h). The helpers they import from files not given (pre-commit
 * passes only the changed ones) are read from disk and linted for their summaries only, so a
 * file's findings do not depend on which files came with it. A re-lint is cached under the
 * summaries it was given (ext_key). The project stays in run->proj (--fix re-lints files against
 * it); run_free frees it. */
static void run_lint(Run *run, int nthreads)
{
    if (run->n >= 1 && !run->alone) run->proj = project_new(run->n, run_load, run);
    Pool first = {run, run->jobs, NULL, run->n, false, 0, PTHREAD_MUTEX_INITIALIZER};
    pool_run(&first, nthreads);
    if (!run->proj) return;
    uint32_t k;
    const char **paths;
    for (int pass = 0; pass < PROJECT_MAX_ROUNDS && (k = project_missing(run->proj, &paths)) != 0; pass++) {
        /* the paths live as long as the project; the helpers take the first file's rules */
        run->found = gl_realloc(run->found, (run->n_found + k) * sizeof *run->found);
        uint32_t *idx = gl_calloc(k, sizeof *idx);
        for (uint32_t j = 0; j < k; j++) {
            run->found[run->n_found + j] = job_new(paths[j]);
            run->found[run->n_found + j].rules = run->jobs[0].rules;
            idx[j] = project_add(run->proj);
        }
        Pool p = {run, run->found + run->n_found, idx, k, false, 0, PTHREAD_MUTEX_INITIALIZER};
        run->n_found += k;
        pool_run(&p, nthreads);
        gl_free(idx);
    }
    uint32_t total = run->n + run->n_found;
    uint32_t *which = gl_calloc(total, sizeof *which);
    while ((k = project_next_round(run->proj, which)) != 0) {
        FileJob *again = gl_calloc(k, sizeof *again);
        for (uint32_t m = 0; m < k; m++) {
            again[m] = *run_job(run, which[m]);
            again[m].res_at = SPILL_NONE, again[m].done = again[m].cached = false, again[m].read_errno = 0;
        }
        Pool p = {run, again, which, k, true, 0, PTHREAD_MUTEX_INITIALIZER};
        pool_run(&p, nthreads);
        /* the new summaries go to the project only now that no worker reads it */
        for (uint32_t m = 0; m < k; m++) {
            FileJob *old = run_job(run, which[m]);
            LintResult res;
            if (!again[m].done || job_load(run, &again[m], &res, NULL, NULL) < 0)
                continue; /* keep the first lint's result */
            project_set(run->proj, which[m], old->path, &res);
            lint_result_free(&res);
            old->res_at = again[m].res_at;
            old->res_len = again[m].res_len;
            old->cached = again[m].cached;
        }
        gl_free(again);
    }
    gl_free(which);
}

static void walk_err(void *ctx, const char *path, const char *why)
{
    int *errors = ctx;
    fprintf(stderr, "gradleak: error: %s: %s\n", path, why);
    (*errors)++;
}

static int default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The walk's exclusion filter: a path is left out when the settings that govern it exclude it.
 * Paths named on the command line are linted anyway, unless --force-exclude. A configuration
 * error is remembered (the first one) and everything is skipped from then on. */
typedef struct ExcludeCtx {
    Config *cfg;
    bool force;
    bool failed;
    ConfigError err;
} ExcludeCtx;

static bool exclude_filter(void *ctx, const char *path, bool is_dir, bool explicit_path)
{
    GL_UNUSED(is_dir);
    ExcludeCtx *x = ctx;
    if (x->failed) return true;
    if (explicit_path && !x->force) return false;
    const Settings *s;
    if (config_settings_for(x->cfg, path, &s, &x->err) < 0) {
        x->failed = true;
        return true;
    }
    return explicit_path ? settings_excluded(s, path) : settings_excluded_entry(s, path);
}

static int cmd_check(int argc, char **argv)
{
    LintOptions o;
    lint_options_default(&o);
    OutFormat fmt = OUT_FULL;
    bool exit_zero = false, statistics = false, color = isatty(1) && !getenv("NO_COLOR");
    bool force_exclude = false, use_cache = true, write_baseline = false, use_baseline = false;
    const char *baseline_file = NULL;
    Baseline bl;
    memset(&bl, 0, sizeof bl);
    int jobs = 0;
    ConfigOverrides ov;
    config_overrides_init(&ov);
    CliFix cf;
    memset(&cf, 0, sizeof cf);
    const char **paths = gl_calloc((size_t)argc + 1, sizeof(char *));
    int npaths = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKE(flag)                                                                   \
    (!strcmp(a, flag) ? (i + 1 < argc ? (val = argv[++i], 1) : (die_usage("%s needs a value", flag), 0)) \
                      : (!strncmp(a, flag "=", strlen(flag) + 1) ? (val = a + strlen(flag) + 1, 1) : 0))
        if (TAKE("--select")) {
            if (!add_rule_op(&ov, RULE_OP_SELECT, val, "--select")) goto usage_error;
        } else if (TAKE("--ignore")) {
            if (!add_rule_op(&ov, RULE_OP_IGNORE, val, "--ignore")) goto usage_error;
        } else if (TAKE("--extend-select")) {
            if (!add_rule_op(&ov, RULE_OP_EXTEND, val, "--extend-select")) goto usage_error;
        } else if (TAKE("--exclude")) {
            ov.has_exclude = true;
            char *copy = gl_strdup(val), *save = NULL;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                array_push(&ov.exclude, gl_strdup(tok));
            gl_free(copy);
        } else if (TAKE("--extend-exclude")) {
            char *copy = gl_strdup(val), *save = NULL;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                array_push(&ov.extend_exclude, gl_strdup(tok));
            gl_free(copy);
        } else if (TAKE("--torch-version")) {
            if (config_parse_torch_version(val, &ov.torch) < 0)
                die_usage("--torch-version: expected a version like 2.1, got '%s'", val);
        } else if (TAKE("--config")) {
            gl_free(ov.config_file);
            ov.config_file = gl_strdup(val);
        } else if (!strcmp(a, "--isolated")) {
            ov.isolated = true;
        } else if (TAKE("--baseline")) {
            baseline_file = val;
        } else if (!strcmp(a, "--write-baseline")) {
            write_baseline = true;
        } else if (!strcmp(a, "--force-exclude")) {
            force_exclude = true;
        } else if (TAKE("--output-format")) {
            if (out_format_parse(val, &fmt) != 0)
                die_usage("--output-format: unknown format '%s' (full, concise, json, sarif, github)", val);
        } else if (TAKE("--jobs") || TAKE("-j")) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 1024) die_usage("--jobs: expected a number from 1 to 1024, got '%s'", val);
            jobs = (int)n;
        } else if (TAKE("-p") || TAKE("--compile-commands-dir")) {
            struct stat st;
            if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode))
                die_usage("-p: '%s' is not a folder (give the folder that holds compile_commands.json)", val);
            o.cxx_compdb = val;
        } else if (TAKE("--max-file-size")) {
            char *end;
            unsigned long n = strtoul(val, &end, 10);
            if (*end || n == 0 || n > UINT32_MAX) die_usage("--max-file-size: expected a byte count, got '%s'", val);
            o.max_bytes = (uint32_t)n;
        } else if (TAKE("--parse-timeout")) {
            char *end;
            double secs = strtod(val, &end);
            if (*end || !(secs >= 0.001 && secs <= 3600))
                die_usage("--parse-timeout: expected seconds from 0.001 to 3600, got '%s'", val);
            o.parse_timeout_ms = (uint32_t)(secs * 1000.0 + 0.5);
        } else if (cli_fix_flag(&cf, a)) {
        } else if (!strcmp(a, "--exit-zero")) {
            exit_zero = true;
        } else if (!strcmp(a, "--statistics")) {
            statistics = true;
        } else if (!strcmp(a, "--trace")) {
            o.trace = true;
        } else if (!strcmp(a, "--no-color")) {
            color = false;
        } else if (!strcmp(a, "--no-cache")) {
            use_cache = false;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) paths[npaths++] = argv[i];
        } else if (a[0] == '-' && a[1]) {
            die_usage("unknown option '%s'", a);
        } else {
            paths[npaths++] = a;
        }
#undef TAKE
    }
    if (!npaths) paths[npaths++] = ".";
    if (ov.config_file && ov.isolated) {
        fprintf(stderr, "gradleak: error: --config and --isolated cannot be used together\n");
        goto usage_error;
    }
    if (baseline_file && !write_baseline) {
        char err[1024];
        if (baseline_read(baseline_file, &bl, err, sizeof err) < 0) {
            fprintf(stderr, "gradleak: error: %s\n", err);
            goto usage_error;
        }
        use_baseline = true;
    }
    Config *cfg = config_new(&ov);
    ExcludeCtx xc;
    memset(&xc, 0, sizeof xc);
    xc.cfg = cfg;
    xc.force = force_exclude;
    /* The cwd's settings decide the run-wide things (jobs); a broken file stops here. */
    const Settings *top;
    if (config_settings_for(cfg, ".", &top, &xc.err) < 0) {
        fprintf(stderr, "gradleak: error: %s\n", xc.err.message);
        config_free(cfg);
        gl_free(paths);
        return EXIT_ERROR;
    }
    if (!jobs) jobs = top->jobs ? top->jobs : default_jobs();
    if (!getcwd(run_cwd, sizeof run_cwd)) run_cwd[0] = 0;

    int errors = 0;
    WalkIgnore ig;
    walk_ignore_load(&ig, ".");
    ig.skip = exclude_filter;
    ig.skip_ctx = &xc;
    WalkList files;
    array_init(&files);
    walk_paths(paths, npaths, &ig, &files, walk_err, &errors);
    walk_add_cxx_headers(&files);
    walk_sort_unique(&files);
    walk_ignore_free(&ig);
    gl_free(paths);
    if (xc.failed) {
        fprintf(stderr, "gradleak: error: %s\n", xc.err.message);
        walk_list_free(&files);
        config_free(cfg);
        return EXIT_ERROR;
    }

    FileJob *jobsv = gl_calloc(files.len ? files.len : 1, sizeof(FileJob));
    Cache *cache = NULL;
    char *pch_dir = NULL;
    if (use_cache && files.len) {
        char *dir = cache_dir_default(top->root);
        cache = cache_open(dir);
        if (cache_enabled(cache)) {
            /* C++: the precompiled LibTorch headers live beside the results (keyed by flags and headers) */
            char abuf[4096 + 1024];
            const char *adir = run_abs(dir, abuf, sizeof abuf); /* never relative to a cwd */
            size_t n = strlen(adir) + 8;
            pch_dir = gl_malloc(n);
            snprintf(pch_dir, n, "%s/pch", adir);
        }
        gl_free(dir);
    }
    if (pch_dir) o.cxx_pch_dir = pch_dir; /* every file's options come from o (run_options) */
    Spill *spill = spill_open();
    Run run;
    run_init(&run, jobsv, files.len, &o, cache, spill);
    uint32_t n_cxx_off = 0, n_cxx_stub = 0, n_cxx_real = 0, n_nb_other = 0;
    for (uint32_t i = 0; i < files.len; i++) {
        FileJob *j = &jobsv[i];
        *j = job_new(files.items[i].path);
        const Settings *s;
        ConfigError err;
        if (config_settings_for(cfg, j->path, &s, &err) < 0) {
            /* a configuration file below the cwd that the walk did not consult (explicit paths) */
            fprintf(stderr, "gradleak: error: %s\n", err.message);
            run_free(&run);
            spill_close(spill);
            cache_close(cache);
            gl_free(jobsv);
            walk_list_free(&files);
            config_free(cfg);
            return EXIT_ERROR;
        }
        RuleSet rs = o.rules;
        settings_rules_for(s, j->path, &rs);
        j->rules = run_rules_index(&run, &rs);
    }
    /* The jobs own the paths from here on, and the walk's list goes: a run may have many files. */
    uint32_t nfiles = files.len;
    array_free(&files);
    run_lint(&run, jobs);
    if (!cli_fix_active(&cf)) {
        /* only --fix lints files again against the others' summaries */
        project_free(run.proj);
        run.proj = NULL;
    }

    /* The output, file by file in path order: each file's result comes back from the spill, is
     * fixed, filtered by the baseline, written and freed. */
    OutOptions oo;
    memset(&oo, 0, sizeof oo);
    oo.color = color;
    oo.show_fix_hints = true;
    oo.unsafe_fixes = cf.unsafe;
    oo.statistics = statistics;
    oo.not_analysed = (uint32_t)errors; /* paths the walk could not use (a symlink loop, a missing path) */
    /* --diff prints the diffs instead of the findings, as ruff does; --write-baseline writes them
     * to the baseline, and the output shows none */
    OutStream *os = cf.diff ? NULL : out_stream_begin(stdout, fmt, &oo);
    BaselineWriter bw;
    baseline_writer_init(&bw);
    uint32_t nfind = 0;
    /* oo.not_analysed counts every file not analysed (the summary's line); C++ files among them
     * also make the exit status 2 (a skipped Python file, binary or too large, does not) */
    uint32_t n_cxx_not_analysed = 0;
    for (uint32_t i = 0; i < nfiles; i++) {
        FileJob *j = &jobsv[i];
        bool is_cxx = engine_lang_of(j->path) == LANG_CXX;
        if (j->read_errno == JOB_NB_BROKEN || j->read_errno == JOB_NB_OTHER) {
            char *why = spill_get(spill, j->src_at, j->src_len);
            if (j->read_errno == JOB_NB_OTHER) n_nb_other++;
            else errors++;
            fprintf(stderr, "gradleak: %s: %s: %s\n", j->read_errno == JOB_NB_OTHER ? "note" : "error", j->path,
                    why ? why : "not linted");
            gl_free(why);
            continue;
        }
        if (j->read_errno) {
            oo.not_analysed++;
            n_cxx_not_analysed += is_cxx;
            if (j->read_errno == ENOENT) { /* the walk saw it: deleted since (a concurrent checkout, a build) */
                fprintf(stderr, "gradleak: warning: %s: vanished before it could be read: skipped\n", j->path);
                continue;
            }
            if (j->read_errno > 0)
                fprintf(stderr, "gradleak: error: %s: cannot read: %s\n", j->path,
                        j->read_errno == ENODEV ? "not a regular file" : strerror(j->read_errno));
            else
                fprintf(stderr, "gradleak: error: %s: not linted: internal error (this is a bug in gradleak " GL_VERSION ")\n",
                        j->path);
            errors++;
            continue;
        }
        LintResult res;
        char *src;
        size_t len;
        if (job_load(&run, j, &res, &src, &len) < 0) {
            oo.not_analysed++;
            fprintf(stderr, "gradleak: error: %s: its result cannot be read back from the temporary file in %s: %s\n",
                    j->path, getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp", strerror(errno));
            errors++;
            continue;
        }
        if (res.cxx == CXX_UNAVAILABLE || res.skipped) oo.not_analysed++;
        if (is_cxx && res.skipped) n_cxx_not_analysed++;
        Notebook nbv; /* a notebook: src is its blob; the output shows its cells' text */
        bool is_nb = j->nb && src && nb_blob_view(src, len, &nbv) == 0;
        if (res.cxx == CXX_UNAVAILABLE) {
            n_cxx_off++;
        } else if (res.notes && (res.skipped || res.syntax_error)) {
            char *note = is_nb ? nb_rewrite_lines(nbv.cells, nbv.n_cells, res.notes) : NULL;
            fprintf(stderr, "gradleak: warning: %s: %s\n", j->path, note ? note : res.notes);
            gl_free(note);
        }
        if (res.cxx == CXX_STUB) n_cxx_stub++;
        if (res.cxx == CXX_LIBTORCH) n_cxx_real++;
        LintOptions fo = run_options(&run, j);
        if (run.proj) project_attach(run.proj, i, &fo); /* fixed files are re-linted with the others' summaries */
        if (is_nb) cli_fix_notebook(&cf, j->path, &src, &len, &res, &fo, stdout);
        else cli_fix_file(&cf, j->path, &src, &len, &res, &fo, stdout);
        if (run.proj) project_set(run.proj, i, j->path, &res);
        if (is_nb && nb_blob_view(src, len, &nbv) == 0) nb_lint_messages(&res, nbv.cells, nbv.n_cells);
        else is_nb = false;
        if (use_baseline) {
            /* findings the baseline covers are dropped; the rest are new */
            uint32_t keep = 0;
            for (uint32_t d = 0; d < res.diags.len; d++) {
                Diag *dg = &res.diags.items[d];
                char *source = is_nb ? baseline_source(nbv.text, nbv.len, &dg->span) : baseline_source(src, len, &dg->span);
                if (!baseline_match(&bl, out_rule(dg->rule)->code, j->path, source)) res.diags.items[keep++] = *dg;
                gl_free(source);
            }
            res.diags.len = keep;
            baseline_linted(&bl, j->path);
        }
        OutFile of = {j->path, src, len, res.diags.items, res.diags.len, NULL, 0};
        if (is_nb) of.src = nbv.text, of.len = nbv.len, of.cells = nbv.cells, of.n_cells = nbv.n_cells;
        if (write_baseline) baseline_writer_add(&bw, &of);
        else if (os) out_stream_file(os, &of);
        nfind += res.diags.len;
        lint_result_free(&res);
        gl_free(src);
    }
    /* C++: one line on how the files were parsed (stderr: machine formats stay clean) */
    if (n_cxx_off) {
        const char *why = "libclang is not available";
        engine_cxx_available(&why);
        fprintf(stderr, "gradleak: warning: %u C++ file%s not linted: %s\n", n_cxx_off, n_cxx_off == 1 ? "" : "s", why);
    }
    if (n_cxx_stub) {
        const char *force = getenv("GRADLEAK_CXX_HEADERS");
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against gradleak's LibTorch stub header (%s)\n", n_cxx_stub,
                n_cxx_stub == 1 ? "" : "s",
                force && !strcmp(force, "stub") ? "GRADLEAK_CXX_HEADERS=stub"
                                                : "LibTorch headers not found: set LIBTORCH, or give a compile_commands.json with -p");
    }
    if (n_nb_other)
        fprintf(stderr, "gradleak: note: %u notebook%s not linted: not Python\n", n_nb_other, n_nb_other == 1 ? "" : "s");
    if (n_cxx_real)
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against the LibTorch headers\n", n_cxx_real,
                n_cxx_real == 1 ? "" : "s");
    run_free(&run);
    spill_close(spill);
    if (write_baseline) {
        char err[1024];
        const char *file = baseline_file ? baseline_file : "gradleak-baseline.json";
        long n = baseline_writer_finish(&bw, file, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "gradleak: error: %s\n", err);
            errors++;
        } else {
            fprintf(stderr, "gradleak: wrote %ld finding%s to the baseline %s\n", n, n == 1 ? "" : "s", file);
        }
        nfind = 0; /* the findings went to the file, not to the output */
    }
    baseline_writer_free(&bw);
    if (use_baseline) {
        /* stale entries: of files linted in this run, nothing matched them any more */
        uint32_t stale = 0;
        for (uint32_t e = 0; e < bl.entries.len; e++) {
            const BaselineEntry *be = &bl.entries.items[e];
            if (be->used >= be->count || !be->linted) continue;
            if (stale++ < 20)
                fprintf(stderr, "gradleak: warning: %s: stale baseline entry: %s %s `%s`%s\n", baseline_file, be->path,
                        be->rule, be->source, be->count - be->used > 1 ? " (and more of it)" : "");
        }
        if (stale > 20) fprintf(stderr, "gradleak: warning: %s: %u more stale entries\n", baseline_file, stale - 20);
        if (stale)
            fprintf(stderr, "gradleak: %u baseline entr%s no longer match%s (fixed, or the code changed): run with "
                    "--write-baseline to refresh %s\n", stale, stale == 1 ? "y" : "ies", stale == 1 ? "es" : "",
                    baseline_file);
        baseline_free(&bl);
    }
    oo.fixed = cf.fixed;
    if (n_cxx_not_analysed)
        fprintf(stderr, "gradleak: warning: %u C++ file%s not analysed (exit status 2 unless --exit-zero)\n",
                n_cxx_not_analysed, n_cxx_not_analysed == 1 ? "" : "s");
    if (cf.diff) {
        fflush(stdout);
        if (cf.fixed) fprintf(stderr, "Would fix %u error%s.\n", cf.fixed, cf.fixed == 1 ? "" : "s");
        else fputs("No errors would be fixed.\n", stderr);
        nfind = cf.changed;
    } else if (out_stream_end(os) != 0) {
        fprintf(stderr, "gradleak: error: writing the output failed: %s\n", strerror(errno));
        errors++;
    }
    fflush(stdout);
    if (cache) {
        if (getenv("GRADLEAK_DEBUG_CACHE")) {
            uint32_t hits = 0;
            for (uint32_t i = 0; i < nfiles; i++) hits += jobsv[i].cached;
            fprintf(stderr, "gradleak: cache: %u hits, %u misses%s\n", hits, nfiles - hits,
                    cache_enabled(cache) ? "" : " (cache off)");
        }
        cache_flush(cache);
        if (cache_warning(cache)) fprintf(stderr, "gradleak: warning: %s\n", cache_warning(cache));
        cache_close(cache);
    }
    gl_free(pch_dir);
    for (uint32_t i = 0; i < nfiles; i++) gl_free((char *)jobsv[i].path); /* the walk's, handed over above */
    gl_free(jobsv);
    config_free(cfg);
    if (errors || cf.errors) return EXIT_ERROR;
    if (n_cxx_not_analysed && !exit_zero) return EXIT_ERROR; /* a clean exit would claim files it never read */
    return nfind && !exit_zero ? EXIT_FINDINGS : EXIT_CLEAN;

usage_error:
    config_overrides_free(&ov);
    gl_free(paths);
    return EXIT_ERROR;
}

/* The directory walk lent to `validate` (ValHost.walk). */
static int validate_walk(const char *const *paths, int n, char ***files)
{
    int errors = 0;
    WalkIgnore ig;
    walk_ignore_load(&ig, ".");
    WalkList wl;
    array_init(&wl);
    walk_paths(paths, n, &ig, &wl, walk_err, &errors);
    walk_sort_unique(&wl);
    walk_ignore_free(&ig);
    *files = gl_calloc(wl.len + 1, sizeof(char *));
    for (uint32_t i = 0; i < wl.len; i++) (*files)[i] = gl_strdup(wl.items[i].path);
    int count = (int)wl.len;
    walk_list_free(&wl);
    if (errors) {
        for (int i = 0; i < count; i++) gl_free((*files)[i]);
        gl_free(*files);
        *files = NULL;
        return -1;
    }
    return count;
}

static int cmd_rule(int argc, char **argv)
{
    if (argc < 1) die_usage("%s", "rule: which rule? (e.g. 'gradleak rule GL101')");
    const RuleInfo *ri = rule_by_code(argv[0]);
    if (!ri) {
        fprintf(stderr, "gradleak: error: unknown rule '%s' (see 'gradleak rules')\n", argv[0]);
        return EXIT_ERROR;
    }
    const char *doc = rule_doc(ri->id);
    printf("# %s %s\n\n%s\n\n%s", ri->code, ri->name, ri->summary, doc[0] ? "" : "\n");
    if (doc[0]) printf("%s\n", doc);
    return EXIT_CLEAN;
}

static int cmd_rules(void)
{
    for (int i = 0; i < RULE_COUNT; i++) {
        const RuleInfo *ri = rule_info((RuleId)i);
        printf("%s  %-38s %-7s  %s\n", ri->code, ri->name, ri->severity == SEV_ERROR ? "error" : "warning",
               ri->summary);
    }
    return EXIT_CLEAN;
}

static void emit_stdout(void *ctx, const char *s)
{
    GL_UNUSED(ctx);
    fputs(s, stdout);
}

static int debug_ir(int argc, char **argv)
{
    if (argc < 1) die_usage("%s", "debug ir: which file?");
    int rc = EXIT_CLEAN;
    for (int i = 0; i < argc; i++) {
        size_t len;
        char *src = read_file(argv[i], &len);
        if (!src) {
            fprintf(stderr, "gradleak: error: %s: %s\n", argv[i], strerror(errno));
            rc = EXIT_ERROR;
            continue;
        }
        Arena a;
        arena_init(&a);
        IrModule m;
        memset(&m, 0, sizeof m);
        m.arena = &a, m.src = src, m.len = len, m.path = argv[i];
        if (engine_lower(&m, engine_lang_of(argv[i]), NULL) == 0) {
            Facts fx;
            memset(&fx, 0, sizeof fx);
            df_analyse(&m, &fx);
            ir_dump(&m, emit_stdout, NULL);
            df_facts_free(&fx);
        }
        ir_module_free(&m);
        arena_free(&a);
        gl_free(src);
    }
    return rc;
}

/* `debug summaries FILE...`: what each file exports to the files that import it (function
 * summaries), with the cross-file summaries of the files given together applied. */
static int debug_summaries(int argc, char **argv)
{
    if (argc < 1) die_usage("%s", "debug summaries: which files?");
    LintOptions o;
    lint_options_default(&o);
    FileJob *jobs = gl_calloc((size_t)argc, sizeof *jobs);
    Spill *spill = spill_open_memory();
    Run run;
    run_init(&run, jobs, (uint32_t)argc, &o, NULL, spill);
    for (int i = 0; i < argc; i++) jobs[i] = job_new(argv[i]);
    run_lint(&run, 1);
    int rc = EXIT_CLEAN;
    for (int i = 0; i < argc; i++) {
        LintResult res;
        if (!jobs[i].done || job_load(&run, &jobs[i], &res, NULL, NULL) < 0) {
            fprintf(stderr, "gradleak: error: %s: cannot read\n", argv[i]);
            rc = EXIT_ERROR;
            continue;
        }
        const LintResult *r = &res;
        for (uint32_t k = 0; k < r->n_exports; k++) {
            const ExternSummary *s = &r->exports[k].summary;
            printf("%s: %s -> %s, %s", argv[i], r->exports[k].name, df_kind_name(s->kind), df_grad_name(s->grad));
            if (s->kind == VK_CONTAINER) printf(", items %s", df_grad_name(s->elem));
            for (uint32_t b = 0; b < 16; b++)
                if (s->pmask & (1u << b)) printf(", from parameter %u", b + 1);
            for (uint32_t b = 0; b < 8; b++)
                if (s->cmask & (1u << b)) printf(", calls parameter %u", b + 1);
            if (s->flags & VF_MODEL_OUT) printf(", model output");
            if (s->flags & VF_ZERO_DIM) printf(", 0-dim");
            printf("\n");
        }
        lint_result_free(&res);
    }
    run_free(&run);
    spill_close(spill);
    gl_free(jobs);
    return rc;
}

static bool has_code(const Expect *e, int rule)
{
    for (uint32_t k = 0; k < e->n_codes; k++)
        if ((int)e->codes[k] == rule) return true;
    return false;
}

/* clang -verify for gradleak: every `# expect:` (`// expect:` in C++) must be seen, nothing
 * unexpected may appear. */
static int debug_verify(int argc, char **argv)
{
    int failed = 0, passed = 0, errors = 0;
    WalkIgnore ig;
    memset(&ig, 0, sizeof ig);
    WalkList files;
    array_init(&files);
    walk_paths((const char *const *)argv, argc, &ig, &files, walk_err, &errors);
    walk_sort_unique(&files);
    LintOptions o;
    lint_options_default(&o);
    FileJob *jobs = gl_calloc(files.len ? files.len : 1, sizeof *jobs);
    for (uint32_t fi = 0; fi < files.len; fi++) jobs[fi] = job_new(files.items[fi].path);
    Spill *spill = spill_open_memory();
    /* the files of a folder named project_* are linted together (cross-file summaries); sorted
     * paths keep them next to each other */
    for (uint32_t fi = 0, end; fi < files.len; fi = end) {
        const char *p = strstr(jobs[fi].path, "/project_");
        const char *slash = p ? strchr(p + 1, '/') : NULL;
        size_t prefix = slash ? (size_t)(slash - jobs[fi].path) + 1 : 0;
        for (end = fi + 1; prefix && end < files.len && !strncmp(jobs[end].path, jobs[fi].path, prefix);) end++;
        Run run;
        run_init(&run, jobs + fi, end - fi, &o, NULL, spill);
        run.keep_src = true;
        run.alone = end - fi == 1; /* a fixture outside a project_* folder is linted on its own */
        run_lint(&run, 1);
        run_free(&run);
    }
    Run all;
    run_init(&all, jobs, 0, &o, NULL, spill); /* only to read the results back */
    for (uint32_t fi = 0; fi < files.len; fi++) {
        const char *path = jobs[fi].path;
        LintResult r;
        char *src;
        size_t len;
        if (!jobs[fi].done || job_load(&all, &jobs[fi], &r, &src, &len) < 0) {
            printf("FAIL %s: cannot read: %s\n", path, strerror(jobs[fi].read_errno > 0 ? jobs[fi].read_errno : EIO));
            failed++;
            continue;
        }
        SourceLang lang = engine_lang_of(path);
        if (r.skipped) {
            printf("FAIL %s: not linted: %s\n", path, r.notes ? r.notes : "skipped");
            failed++;
            lint_result_free(&r);
            gl_free(src);
            continue;
        }
        Arena a;
        arena_init(&a);
        IrModule m;
        memset(&m, 0, sizeof m);
        m.arena = &a, m.src = src, m.len = len, m.path = path;
        engine_collect_comments(&m, lang);
        Expect ex[512];
        uint32_t nex = expect_parse(&m, ex, ARRAY_LEN(ex));
        StrBuf why;
        sb_init(&why);
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        /* a negative for its folder's rule (fixtures/rules/GL101/neg_x.py) may still expect
         * another rule's finding: an evaluation loop that is not GL101 is GL108 */
        const RuleInfo *own = NULL;
        if (base - path >= 7 && base[-1] == '/') {
            const char *dir = base - 1;
            while (dir > path && dir[-1] != '/') dir--;
            char code[8];
            if (base - 1 - dir == 5) memcpy(code, dir, 5), code[5] = 0, own = rule_by_code(code);
        }
        uint32_t nexpect = 0, nexpect_own = 0;
        for (uint32_t k = 0; k < nex; k++) {
            nexpect += ex[k].n_codes;
            for (uint32_t c = 0; c < ex[k].n_codes; c++) nexpect_own += own && (int)ex[k].codes[c] == (int)own->id;
        }
        if (!strncmp(base, "neg_", 4) && (own ? nexpect_own : nexpect))
            sb_printf(&why, "\n  a neg_ fixture must not expect findings%s%s", own ? " of " : "", own ? own->code : "");
        if (!strncmp(base, "pos_", 4) && !nexpect) sb_printf(&why, "\n  a pos_ fixture must expect a finding");
        for (uint32_t k = 0; k < nex; k++)
            for (uint32_t c = 0; c < ex[k].n_codes; c++) {
                bool seen = false;
                for (uint32_t d = 0; d < r.diags.len; d++)
                    if (r.diags.items[d].span.row == ex[k].row && r.diags.items[d].rule == (int)ex[k].codes[c]) seen = true;
                if (!seen)
                    sb_printf(&why, "\n  %s:%u: expected %s but not seen", path, ex[k].row + 1,
                              rule_info(ex[k].codes[c])->code);
            }
        for (uint32_t d = 0; d < r.diags.len; d++) {
            const Diag *dg = &r.diags.items[d];
            bool expected = false;
            for (uint32_t k = 0; k < nex; k++)
                if (ex[k].row == dg->span.row && has_code(&ex[k], dg->rule)) expected = true;
            if (!expected)
                sb_printf(&why, "\n  %s:%u: seen but not expected: %s %s", path, dg->span.row + 1,
                          rule_info((RuleId)dg->rule)->code, dg->message);
        }
        if (why.len) {
            printf("FAIL %s%s\n", path, why.data);
            failed++;
        } else {
            printf("ok %s\n", path);
            passed++;
        }
        sb_free(&why);
        ir_module_free(&m);
        arena_free(&a);
        lint_result_free(&r);
        gl_free(src);
    }
    run_free(&all);
    spill_close(spill);
    gl_free(jobs);
    walk_list_free(&files);
    printf("%d passed, %d failed\n", passed, failed);
    return failed || errors ? EXIT_FINDINGS : EXIT_CLEAN;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parse-only against full lint on the same files, in one process, single-threaded, each pass
 * repeated and the minimum kept (these machines are noisy). */
static int debug_bench(int argc, char **argv)
{
    int errors = 0;
    WalkIgnore ig;
    memset(&ig, 0, sizeof ig);
    WalkList files;
    array_init(&files);
    walk_paths((const char *const *)argv, argc, &ig, &files, walk_err, &errors);
    walk_sort_unique(&files);
    char **srcs = gl_calloc(files.len ? files.len : 1, sizeof(char *));
    size_t *lens = gl_calloc(files.len ? files.len : 1, sizeof(size_t));
    size_t bytes = 0, lines = 0;
    for (uint32_t i = 0; i < files.len; i++) {
        srcs[i] = read_file(files.items[i].path, &lens[i]);
        if (!srcs[i]) continue;
        bytes += lens[i];
        for (size_t k = 0; k < lens[i]; k++) lines += srcs[i][k] == '\n';
    }
    LintOptions o;
    lint_options_default(&o);
    double best_parse = 1e30, best_lint = 1e30, best_project = 1e30;
    size_t findings = 0, project_findings = 0;
    FileJob *jobs = gl_calloc(files.len ? files.len : 1, sizeof *jobs);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_s();
        for (uint32_t i = 0; i < files.len; i++)
            if (srcs[i]) py_parse_only(srcs[i], lens[i]);
        double t1 = now_s();
        findings = 0;
        for (uint32_t i = 0; i < files.len; i++) {
            if (!srcs[i]) continue;
            LintResult r;
            engine_lint(files.items[i].path, srcs[i], lens[i], engine_lang_of(files.items[i].path), &o, &r);
            findings += r.diags.len;
            lint_result_free(&r);
        }
        double t2 = now_s();
        /* the same files linted together: cross-file summaries, and the files linted again (the
         * bytes are put in the spill first, so that the files are not read again) */
        uint32_t n = 0;
        Spill *spill = spill_open_memory();
        for (uint32_t i = 0; i < files.len; i++) {
            if (!srcs[i]) continue;
            jobs[n] = job_new(files.items[i].path);
            jobs[n].src_at = spill_put(spill, srcs[i], lens[i]);
            jobs[n++].src_len = (uint32_t)lens[i];
        }
        Run run;
        run_init(&run, jobs, n, &o, NULL, spill);
        double t2b = now_s();
        run_lint(&run, 1);
        double t3 = now_s();
        project_findings = 0;
        for (uint32_t i = 0; i < n; i++) {
            LintResult r;
            if (!jobs[i].done || job_load(&run, &jobs[i], &r, NULL, NULL) < 0) continue;
            project_findings += r.diags.len;
            lint_result_free(&r);
        }
        run_free(&run);
        spill_close(spill);
        if (t1 - t0 < best_parse) best_parse = t1 - t0;
        if (t2 - t1 < best_lint) best_lint = t2 - t1;
        if (t3 - t2b < best_project) best_project = t3 - t2b;
    }
    gl_free(jobs);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("files            %u\n", files.len);
    printf("lines            %zu\n", lines);
    printf("MB               %.2f\n", (double)bytes / 1e6);
    printf("findings         %zu\n", findings);
    printf("parse-only       %.3f s  (%.0f lines/s)\n", best_parse, (double)lines / best_parse);
    printf("full lint        %.3f s  (%.0f lines/s)\n", best_lint, (double)lines / best_lint);
    printf("lint/parse ratio %.2f\n", best_lint / best_parse);
    printf("project lint     %.3f s  (%zu findings; files linted together, cross-file summaries)\n", best_project,
           project_findings);
    printf("project/parse    %.2f\n", best_project / best_parse);
    printf("peak RSS         %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    for (uint32_t i = 0; i < files.len; i++) gl_free(srcs[i]);
    gl_free(srcs);
    gl_free(lens);
    walk_list_free(&files);
    return EXIT_CLEAN;
}

/* The cache database's health: integrity_check, schema version, journal mode, row counts. */
static int debug_cache(int argc, char **argv)
{
    char *dir = argc > 0 ? gl_strdup(argv[0]) : cache_dir_default(".");
    StrBuf out;
    sb_init(&out);
    int rc = cache_check(dir, &out);
    fputs(out.data ? out.data : "", stdout);
    sb_free(&out);
    gl_free(dir);
    return rc == 0 ? EXIT_CLEAN : EXIT_FINDINGS;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_ERROR : EXIT_CLEAN;
    }
    const char *cmd = argv[1];
    /* an internal error exits 2 with a report, never by a signal; `check` goes on without the file */
    gl_crash_install(argv, !strcmp(cmd, "check"));
    if (!strcmp(cmd, "check")) {
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                fputs(usage_text, stdout);
                return EXIT_CLEAN;
            }
        return cmd_check(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "rule")) return cmd_rule(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate")) {
        ValHost host = {validate_walk};
        return val_main(argc - 2, argv + 2, &host);
    }
    if (!strcmp(cmd, "rules")) return cmd_rules();
    if (!strcmp(cmd, "lsp")) return lsp_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        /* the first line alone is the version, as before (scripts read it) */
        printf("gradleak %s\ncommit %s\nbuilt %s\n", GL_VERSION, gl_build_commit, gl_build_date);
        return EXIT_CLEAN;
    }
    if (!strcmp(cmd, "debug") && argc >= 3) {
        if (!strcmp(argv[2], "ir")) return debug_ir(argc - 3, argv + 3);
        if (!strcmp(argv[2], "verify")) return debug_verify(argc - 3, argv + 3);
        if (!strcmp(argv[2], "bench")) return debug_bench(argc - 3, argv + 3);
        if (!strcmp(argv[2], "cache")) return debug_cache(argc - 3, argv + 3);
        if (!strcmp(argv[2], "summaries")) return debug_summaries(argc - 3, argv + 3);
    }
    fprintf(stderr, "gradleak: error: unknown command '%s'\nRun 'gradleak --help' for usage.\n", cmd);
    return EXIT_ERROR;
}
