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
    "  version            Print the version\n"
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

/* One file of a run. Workers fill in the results; the main thread reads them after the pool is
 * joined. */
typedef struct FileJob {
    const char *path;
    LintOptions opts;  /* the rules of this file (configuration, flags, per-file-ignores) */
    char *key;         /* absolute path: the cache key (NULL: not cached) */
    uint64_t ext_hash; /* of the other files' summaries attached to opts (0: none) */
    char *src;
    size_t len;
    LintResult res;    /* compact: the findings, notes and summaries, not the IR */
    int read_errno;
    bool done;
    bool cached;       /* served from the cache */
} FileJob;

typedef struct Pool {
    FileJob *jobs;
    uint32_t n;
    uint32_t next;
    pthread_mutex_t mu;
    Cache *cache;
} Pool;

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

/* The summaries that project_attach gave o, for the names file r calls: what a re-lint depends on
 * besides the file itself. */
static uint64_t ext_key(const LintOptions *o, const LintResult *r)
{
    if (!o->ext) return 0;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < r->n_calls; i++) {
        const ExternSummary *s = o->ext(o->ext_ctx, r->calls[i].qual);
        uint8_t b[12] = {0};
        if (s) {
            b[0] = 1, b[1] = s->kind, b[2] = s->grad, b[3] = s->elem, b[4] = s->nparams;
            memcpy(b + 5, &s->flags, 2), memcpy(b + 7, &s->pmask, 2), b[9] = s->cmask;
        }
        h = cache_hash64(r->calls[i].qual, strlen(r->calls[i].qual), h);
        h = cache_hash64(b, sizeof b, h);
    }
    return h ? h : 1;
}

static void lint_job(FileJob *j, Cache *cache)
{
    const LintOptions *o = &j->opts;
    if (gl_crash_skipped(j->path)) { /* it crashed an earlier execution of this run (src/base/crash.h) */
        j->read_errno = -1;
        return;
    }
    if (!j->src) j->src = read_file(j->path, &j->len); /* a second round reuses the first's bytes */
    if (!j->src) {
        j->read_errno = errno ? errno : EIO;
        return;
    }
    uint64_t content = 0, skey = 0;
    if (cache && j->key) {
        content = cache_hash64(j->src, j->len, 0);
        skey = settings_key(o, j->ext_hash);
        if (engine_lang_of(j->path) == LANG_CXX) {
            /* a C++ file's results also follow its compile flags and the headers it is parsed with */
            uint64_t ck = engine_cxx_key(j->path, o);
            skey = cache_hash64(&ck, sizeof ck, skey);
        }
        void *blob;
        size_t n;
        if (cache_get(cache, j->key, skey, content, j->len, &blob, &n) == 1) {
            if (lint_result_decode(blob, n, &j->res) == 0) j->cached = true;
            else lint_result_free(&j->res);
            gl_free(blob);
        }
        if (j->cached) {
            j->done = true;
            return;
        }
    }
    LintResult full;
    if (engine_lint(j->path, j->src, j->len, engine_lang_of(j->path), o, &full) < 0) {
        lint_result_free(&full);
        memset(&j->res, 0, sizeof j->res);
        j->read_errno = -1;
        return;
    }
    /* Keep what the run needs and drop the arena with the file's IR (it is most of the memory):
     * the encoding is both the compact copy and the blob the cache stores. */
    StrBuf sb;
    sb_init(&sb);
    lint_result_encode(&sb, &full);
    lint_result_free(&full);
    if (lint_result_decode(sb.data, sb.len, &j->res) < 0) {
        lint_result_free(&j->res);
        memset(&j->res, 0, sizeof j->res);
        j->read_errno = -1; /* our own encoding: a bug */
        sb_free(&sb);
        return;
    }
    if (cache && j->key) cache_put(cache, j->key, skey, content, j->len, sb.data, sb.len);
    sb_free(&sb);
    j->done = true;
}

static void *pool_worker(void *arg)
{
    Pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        uint32_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        lint_job(&p->jobs[i], p->cache);
    }
}

/* Lints jobs[0..n) on nthreads workers. Each job's result depends on that job alone, so the
 * order the workers take them in changes nothing. */
static void lint_all(FileJob *jobs, uint32_t n, int nthreads, Cache *cache)
{
    if (nthreads <= 1 || n < 2) {
        for (uint32_t i = 0; i < n; i++) lint_job(&jobs[i], cache);
        return;
    }
    Pool p = {jobs, n, 0, PTHREAD_MUTEX_INITIALIZER, cache};
    if (nthreads > 64) nthreads = 64;
    if ((uint32_t)nthreads > n) nthreads = (int)n;
    pthread_t th[64];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, pool_worker, &p) == 0) started++;
    if (!started) pool_worker(&p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* File i of a project: one of the n files of the run, or a helper read from disk. */
static FileJob *project_job(FileJob *jobs, uint32_t n, FileJob *found, uint32_t i)
{
    return i < n ? &jobs[i] : &found[i - n];
}

/* Files linted together share their functions' summaries: lint again, in rounds, the files whose
 * calls reach a function of another file (engine/project.h). The helpers they import from files
 * not given (pre-commit passes only the changed ones) are read from disk and linted for their
 * summaries only, so a file's findings do not depend on which files came with it. A re-lint is
 * cached under the summaries it was given (ext_key). With keep, the project is handed to the
 * caller (who frees it) instead of freed: --fix re-lints files against it. */
static void lint_project(FileJob *jobs, uint32_t n, int nthreads, Cache *cache, Project **keep)
{
    if (keep) *keep = NULL;
    if (n < 1) return;
    Project *p = project_new(n);
    for (uint32_t i = 0; i < n; i++)
        if (jobs[i].done) project_set(p, i, jobs[i].path, &jobs[i].res);
    FileJob *found = NULL;
    uint32_t n_found = 0, k;
    const char **paths;
    for (int pass = 0; pass < PROJECT_MAX_ROUNDS && (k = project_missing(p, &paths)) != 0; pass++) {
        found = gl_realloc(found, (n_found + k) * sizeof *found);
        for (uint32_t j = 0; j < k; j++)
            found[n_found + j] = (FileJob){.path = paths[j], .opts = jobs[0].opts, .key = cache ? config_abspath(paths[j]) : NULL};
        lint_all(found + n_found, k, nthreads, cache);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t idx = project_add(p);
            if (found[n_found + j].done) project_set(p, idx, paths[j], &found[n_found + j].res);
        }
        n_found += k;
    }
    uint32_t total = n + n_found;
    uint32_t *which = gl_calloc(total, sizeof *which);
    FileJob *again = gl_calloc(total, sizeof *again);
    while ((k = project_next_round(p, which)) != 0) {
        for (uint32_t j = 0; j < k; j++) {
            const FileJob *old = project_job(jobs, n, found, which[j]);
            again[j] = (FileJob){.path = old->path, .opts = old->opts, .key = old->key, .src = old->src, .len = old->len};
            project_attach(p, which[j], &again[j].opts);
            again[j].ext_hash = ext_key(&again[j].opts, &old->res);
        }
        lint_all(again, k, nthreads, cache);
        for (uint32_t j = 0; j < k; j++) {
            FileJob *old = project_job(jobs, n, found, which[j]);
            if (!again[j].done) {
                lint_result_free(&again[j].res);
                continue; /* keep the first lint's result */
            }
            lint_result_free(&old->res);
            old->res = again[j].res;
            old->cached = again[j].cached;
            project_set(p, which[j], old->path, &old->res);
        }
    }
    for (uint32_t j = 0; j < n_found; j++) {
        lint_result_free(&found[j].res);
        gl_free(found[j].src);
        gl_free(found[j].key);
    }
    gl_free(found);
    gl_free(again);
    gl_free(which);
    if (keep) *keep = p;
    else project_free(p);
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

    int errors = 0;
    WalkIgnore ig;
    walk_ignore_load(&ig, ".");
    ig.skip = exclude_filter;
    ig.skip_ctx = &xc;
    WalkList files;
    array_init(&files);
    walk_paths(paths, npaths, &ig, &files, walk_err, &errors);
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
    for (uint32_t i = 0; i < files.len; i++) {
        FileJob *j = &jobsv[i];
        j->path = files.items[i].path;
        j->opts = o;
        const Settings *s;
        ConfigError err;
        if (config_settings_for(cfg, j->path, &s, &err) < 0) {
            /* a configuration file below the cwd that the walk did not consult (explicit paths) */
            fprintf(stderr, "gradleak: error: %s\n", err.message);
            for (uint32_t k = 0; k < i; k++) gl_free(jobsv[k].key);
            gl_free(jobsv);
            walk_list_free(&files);
            config_free(cfg);
            return EXIT_ERROR;
        }
        settings_rules_for(s, j->path, &j->opts.rules);
        if (use_cache) j->key = config_abspath(j->path);
    }
    Cache *cache = NULL;
    char *pch_dir = NULL;
    if (use_cache && files.len) {
        char *dir = cache_dir_default(top->root);
        cache = cache_open(dir);
        if (cache_enabled(cache)) {
            /* C++: the precompiled LibTorch headers live beside the results (keyed by flags and headers) */
            size_t n = strlen(dir) + 8;
            pch_dir = gl_malloc(n);
            snprintf(pch_dir, n, "%s/pch", dir);
            for (uint32_t i = 0; i < files.len; i++) jobsv[i].opts.cxx_pch_dir = pch_dir;
        }
        gl_free(dir);
    }
    lint_all(jobsv, files.len, jobs, cache);
    Project *proj = NULL;
    lint_project(jobsv, files.len, jobs, cache, cli_fix_active(&cf) ? &proj : NULL);
    for (uint32_t i = 0; i < files.len && !cli_fix_active(&cf); i++)
        if (!jobsv[i].res.diags.len) {
            /* code frames only: the bytes of clean files can go now */
            gl_free(jobsv[i].src);
            jobsv[i].src = NULL;
        }

    OutFile *of = gl_calloc(files.len ? files.len : 1, sizeof(OutFile));
    uint32_t nof = 0, nfind = 0, n_cxx_off = 0, n_cxx_stub = 0, n_cxx_real = 0;
    for (uint32_t i = 0; i < files.len; i++) {
        FileJob *j = &jobsv[i];
        if (j->read_errno) {
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
        if (j->res.cxx == CXX_UNAVAILABLE) n_cxx_off++;
        else if (j->res.notes && (j->res.skipped || j->res.syntax_error))
            fprintf(stderr, "gradleak: warning: %s: %s\n", j->path, j->res.notes);
        if (j->res.cxx == CXX_STUB) n_cxx_stub++;
        if (j->res.cxx == CXX_LIBTORCH) n_cxx_real++;
        if (proj) project_attach(proj, i, &j->opts); /* fixed files are re-linted with the others' summaries */
        cli_fix_file(&cf, j->path, &j->src, &j->len, &j->res, &j->opts, stdout);
        if (proj && j->done) project_set(proj, i, j->path, &j->res);
        if (use_baseline) {
            /* findings the baseline covers are dropped; the rest are new */
            uint32_t keep = 0;
            for (uint32_t d = 0; d < j->res.diags.len; d++) {
                Diag *dg = &j->res.diags.items[d];
                char *source = baseline_source(j->src, j->len, &dg->span);
                if (!baseline_match(&bl, out_rule(dg->rule)->code, j->path, source)) j->res.diags.items[keep++] = *dg;
                gl_free(source);
            }
            j->res.diags.len = keep;
        }
        of[nof].path = j->path;
        of[nof].src = j->src;
        of[nof].len = j->len;
        of[nof].diags = j->res.diags.items;
        of[nof].n_diags = j->res.diags.len;
        nfind += j->res.diags.len;
        nof++;
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
    if (n_cxx_real)
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against the LibTorch headers\n", n_cxx_real,
                n_cxx_real == 1 ? "" : "s");
    if (write_baseline) {
        char err[1024];
        const char *file = baseline_file ? baseline_file : "gradleak-baseline.json";
        long n = baseline_write(file, of, nof, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "gradleak: error: %s\n", err);
            errors++;
        } else {
            fprintf(stderr, "gradleak: wrote %ld finding%s to the baseline %s\n", n, n == 1 ? "" : "s", file);
        }
        nfind = 0;
        nof = 0; /* the findings went to the file, not to the output */
    }
    if (use_baseline) {
        /* stale entries: of files linted in this run, nothing matched them any more */
        uint32_t stale = 0;
        for (uint32_t e = 0; e < bl.entries.len; e++) {
            const BaselineEntry *be = &bl.entries.items[e];
            if (be->used >= be->count) continue;
            bool linted = false;
            for (uint32_t i = 0; i < nof && !linted; i++) {
                const char *p = of[i].path;
                while (p[0] == '.' && p[1] == '/') p += 2;
                linted = !strcmp(p, be->path);
            }
            if (!linted) continue;
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
    OutOptions oo;
    memset(&oo, 0, sizeof oo);
    oo.color = color;
    oo.show_fix_hints = true;
    oo.unsafe_fixes = cf.unsafe;
    oo.fixed = cf.fixed;
    oo.statistics = statistics;
    if (cf.diff) {
        /* --diff prints the diffs (above) instead of the findings, as ruff does */
        fflush(stdout);
        if (cf.fixed) fprintf(stderr, "Would fix %u error%s.\n", cf.fixed, cf.fixed == 1 ? "" : "s");
        else fputs("No errors would be fixed.\n", stderr);
        nfind = cf.changed;
    } else if (out_write(stdout, fmt, of, nof, &oo) != 0) {
        fprintf(stderr, "gradleak: error: writing the output failed: %s\n", strerror(errno));
        errors++;
    }
    fflush(stdout);
    if (cache) {
        if (getenv("GRADLEAK_DEBUG_CACHE")) {
            uint32_t hits = 0;
            for (uint32_t i = 0; i < files.len; i++) hits += jobsv[i].cached;
            fprintf(stderr, "gradleak: cache: %u hits, %u misses%s\n", hits, files.len - hits,
                    cache_enabled(cache) ? "" : " (cache off)");
        }
        cache_flush(cache);
        if (cache_warning(cache)) fprintf(stderr, "gradleak: warning: %s\n", cache_warning(cache));
        cache_close(cache);
    }
    gl_free(pch_dir);
    for (uint32_t i = 0; i < files.len; i++) {
        gl_free(jobsv[i].src);
        gl_free(jobsv[i].key);
        lint_result_free(&jobsv[i].res);
    }
    gl_free(jobsv);
    gl_free(of);
    walk_list_free(&files);
    config_free(cfg);
    if (proj) project_free(proj);
    if (errors || cf.errors) return EXIT_ERROR;
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
    printf("# %s %s\n\n%s\n\n%s", ri->code, ri->name, ri->summary, ri->doc && ri->doc[0] ? "" : "\n");
    if (ri->doc && ri->doc[0]) printf("%s\n", ri->doc);
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
    for (int i = 0; i < argc; i++) jobs[i].path = argv[i], jobs[i].opts = o;
    lint_all(jobs, (uint32_t)argc, 1, NULL);
    lint_project(jobs, (uint32_t)argc, 1, NULL, NULL);
    int rc = EXIT_CLEAN;
    for (int i = 0; i < argc; i++) {
        const LintResult *r = &jobs[i].res;
        if (!jobs[i].done) {
            fprintf(stderr, "gradleak: error: %s: cannot read\n", argv[i]);
            rc = EXIT_ERROR;
        }
        for (uint32_t k = 0; jobs[i].done && k < r->n_exports; k++) {
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
        gl_free(jobs[i].src);
        lint_result_free(&jobs[i].res);
    }
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
    for (uint32_t fi = 0; fi < files.len; fi++) jobs[fi].path = files.items[fi].path, jobs[fi].opts = o;
    lint_all(jobs, files.len, 1, NULL);
    /* the files of a folder named project_* are linted together (cross-file summaries); sorted
     * paths keep them next to each other */
    for (uint32_t fi = 0, end; fi < files.len; fi = end) {
        const char *p = strstr(jobs[fi].path, "/project_");
        const char *slash = p ? strchr(p + 1, '/') : NULL;
        size_t prefix = slash ? (size_t)(slash - jobs[fi].path) + 1 : 0;
        for (end = fi + 1; prefix && end < files.len && !strncmp(jobs[end].path, jobs[fi].path, prefix);) end++;
        if (end - fi > 1) lint_project(jobs + fi, end - fi, 1, NULL, NULL);
    }
    for (uint32_t fi = 0; fi < files.len; fi++) {
        const char *path = jobs[fi].path;
        size_t len = jobs[fi].len;
        const char *src = jobs[fi].src;
        if (!jobs[fi].done) {
            printf("FAIL %s: cannot read: %s\n", path, strerror(jobs[fi].read_errno > 0 ? jobs[fi].read_errno : EIO));
            failed++;
            continue;
        }
        const LintResult r = jobs[fi].res;
        SourceLang lang = engine_lang_of(path);
        if (r.skipped) {
            printf("FAIL %s: not linted: %s\n", path, r.notes ? r.notes : "skipped");
            failed++;
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
        uint32_t nexpect = 0;
        for (uint32_t k = 0; k < nex; k++) nexpect += ex[k].n_codes;
        if (!strncmp(base, "neg_", 4) && nexpect) sb_printf(&why, "\n  a neg_ fixture must not expect findings");
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
    }
    for (uint32_t fi = 0; fi < files.len; fi++) {
        gl_free(jobs[fi].src);
        lint_result_free(&jobs[fi].res);
    }
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
        /* the same files linted together: cross-file summaries, and the files linted again */
        uint32_t n = 0;
        for (uint32_t i = 0; i < files.len; i++)
            if (srcs[i]) jobs[n++] = (FileJob){.path = files.items[i].path, .opts = o, .src = srcs[i], .len = lens[i]};
        lint_all(jobs, n, 1, NULL);
        lint_project(jobs, n, 1, NULL, NULL);
        double t3 = now_s();
        project_findings = 0;
        for (uint32_t i = 0; i < n; i++) {
            project_findings += jobs[i].res.diags.len;
            lint_result_free(&jobs[i].res);
        }
        if (t1 - t0 < best_parse) best_parse = t1 - t0;
        if (t2 - t1 < best_lint) best_lint = t2 - t1;
        if (t3 - t2 < best_project) best_project = t3 - t2;
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
        printf("gradleak %s\n", GL_VERSION);
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
