/* gradleak's command line: check (flags, then one project run: engine/run.h, then the output),
 * rule, rules, version; validate, lsp and debug (cli/debug.c) are dispatched from here. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/crash.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "cli/debug.h"
#include "cli/fixes.h"
#include "cli/notebook.h"
#include "config/config.h"
#include "engine/run.h"
#include "front/cxx/cx.h"
#include "lsp/lsp.h"
#include "out/baseline.h"
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

/* What `check` writes as the run hands it each file (check_output_file), and what it counts. */
typedef struct CheckOut {
    CliFix *cf;
    OutOptions oo;     /* oo.not_analysed counts every file not analysed (the summary's line) */
    OutStream *os;     /* NULL with --diff */
    Baseline *bl;      /* --baseline: findings it covers are dropped; NULL without */
    bool write_baseline;
    BaselineWriter bw;
    uint32_t nfind;
    int errors;
    /* C++ files not analysed also make the exit status 2 (a skipped Python file, binary or too
     * large, does not) */
    uint32_t n_cxx_not_analysed;
    uint32_t n_cxx_off, n_cxx_stub, n_cxx_real, n_nb_other;
} CheckOut;

/* One file of the run (RunResultFn): its notes, its fixes, the baseline, the output. */
static int check_output_file(void *ctx, EngineRun *run, uint32_t i, RunJob *j)
{
    CheckOut *co = ctx;
    if (i == 0 && !cli_fix_active(co->cf)) {
        /* only --fix lints files again against the others' summaries */
        project_free(run->proj);
        run->proj = NULL;
    }
    bool is_cxx = engine_lang_of(j->path) == LANG_CXX;
    if (j->read_errno == RUN_NB_BROKEN || j->read_errno == RUN_NB_OTHER) {
        char *why = spill_get(run->spill, j->src_at, j->src_len);
        if (j->read_errno == RUN_NB_OTHER) co->n_nb_other++;
        else co->errors++, co->oo.not_analysed++; /* a broken notebook: never "All checks passed!" */
        fprintf(stderr, "gradleak: %s: %s: %s\n", j->read_errno == RUN_NB_OTHER ? "note" : "error", j->path,
                why ? why : "not linted");
        gl_free(why);
        return 0;
    }
    if (j->read_errno) {
        co->oo.not_analysed++;
        co->n_cxx_not_analysed += is_cxx;
        if (j->read_errno == ENOENT) { /* the walk saw it: deleted since (a concurrent checkout, a build) */
            fprintf(stderr, "gradleak: warning: %s: vanished before it could be read: skipped\n", j->path);
            return 0;
        }
        if (j->read_errno > 0)
            fprintf(stderr, "gradleak: error: %s: cannot read: %s\n", j->path,
                    j->read_errno == ENODEV ? "not a regular file" : strerror(j->read_errno));
        else
            fprintf(stderr, "gradleak: error: %s: not linted: internal error (this is a bug in gradleak " GL_VERSION ")\n",
                    j->path);
        co->errors++;
        return 0;
    }
    LintResult res;
    char *src;
    size_t len;
    if (run_job_load(run, j, &res, &src, &len) < 0) {
        co->oo.not_analysed++;
        fprintf(stderr, "gradleak: error: %s: its result cannot be read back from the temporary file in %s: %s\n",
                j->path, getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp", strerror(errno));
        co->errors++;
        return 0;
    }
    if (res.cxx == CXX_UNAVAILABLE || res.skipped) co->oo.not_analysed++;
    if (is_cxx && res.skipped) co->n_cxx_not_analysed++;
    Notebook nbv; /* a notebook: src is its blob; the output shows its cells' text */
    bool is_nb = j->nb && src && nb_blob_view(src, len, &nbv) == 0;
    if (res.cxx == CXX_UNAVAILABLE) {
        co->n_cxx_off++;
    } else if (res.notes && (res.skipped || res.syntax_error)) {
        char *note = is_nb ? nb_rewrite_lines(nbv.cells, nbv.n_cells, res.notes) : NULL;
        fprintf(stderr, "gradleak: warning: %s: %s\n", j->path, note ? note : res.notes);
        gl_free(note);
    }
    if (res.cxx == CXX_STUB) co->n_cxx_stub++;
    if (res.cxx == CXX_LIBTORCH) co->n_cxx_real++;
    LintOptions fo = run_options(run, j);
    if (run->proj) project_attach(run->proj, i, &fo); /* fixed files are re-linted with the others' summaries */
    if (is_nb) cli_fix_notebook(co->cf, j->path, &src, &len, &res, &fo, stdout);
    else cli_fix_file(co->cf, j->path, &src, &len, &res, &fo, stdout);
    if (run->proj) project_set(run->proj, i, j->path, &res);
    if (is_nb && nb_blob_view(src, len, &nbv) == 0) nb_lint_messages(&res, nbv.cells, nbv.n_cells);
    else is_nb = false;
    if (co->bl) {
        /* findings the baseline covers are dropped; the rest are new */
        uint32_t keep = 0;
        for (uint32_t d = 0; d < res.diags.len; d++) {
            Diag *dg = &res.diags.items[d];
            char *source = is_nb ? baseline_source(nbv.text, nbv.len, &dg->span) : baseline_source(src, len, &dg->span);
            if (!baseline_match(co->bl, out_rule(dg->rule)->code, j->path, source)) res.diags.items[keep++] = *dg;
            gl_free(source);
        }
        res.diags.len = keep;
        baseline_linted(co->bl, j->path);
    }
    OutFile of = {j->path, src, len, res.diags.items, res.diags.len, NULL, 0};
    if (is_nb) of.src = nbv.text, of.len = nbv.len, of.cells = nbv.cells, of.n_cells = nbv.n_cells;
    if (co->write_baseline) baseline_writer_add(&co->bw, &of);
    else if (co->os) out_stream_file(co->os, &of);
    co->nfind += res.diags.len;
    lint_result_free(&res);
    gl_free(src);
    return 0;
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
    ConfigError cerr;
    /* The cwd's settings decide the run-wide things (jobs); a broken file stops here. */
    const Settings *top;
    if (config_settings_for(cfg, ".", &top, &cerr) < 0) {
        fprintf(stderr, "gradleak: error: %s\n", cerr.message);
        config_free(cfg);
        gl_free(paths);
        return EXIT_ERROR;
    }
    if (!jobs) jobs = top->jobs ? top->jobs : default_jobs();
    int errors = 0;
    WalkList files;
    if (run_walk(paths, npaths, cfg, force_exclude, &files, walk_err, &errors, &cerr) < 0) {
        fprintf(stderr, "gradleak: error: %s\n", cerr.message);
        gl_free(paths);
        config_free(cfg);
        return EXIT_ERROR;
    }
    gl_free(paths);

    RunJob *jobsv = gl_calloc(files.len ? files.len : 1, sizeof(RunJob));
    Cache *cache = NULL;
    char *pch_dir = NULL;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    if (use_cache && files.len) {
        char *dir = cache_dir_default(top->root);
        cache = cache_open(dir);
        if (cache_enabled(cache)) {
            /* C++: the precompiled LibTorch headers live beside the results (keyed by flags and headers) */
            size_t n = strlen(cwd) + strlen(dir) + 8;
            pch_dir = gl_malloc(n);
            if (dir[0] == '/' || !cwd[0]) snprintf(pch_dir, n, "%s/pch", dir); /* never relative to a cwd */
            else snprintf(pch_dir, n, "%s/%s/pch", cwd, dir);
        }
        gl_free(dir);
    }
    if (pch_dir) o.cxx_pch_dir = pch_dir; /* every file's options come from o (run_options) */
    Spill *spill = spill_open(getenv("TMPDIR"));
    EngineRun run;
    run_init(&run, jobsv, files.len, &o, cache, spill);
    memcpy(run.cwd, cwd, sizeof cwd);
    for (uint32_t i = 0; i < files.len; i++) jobsv[i] = run_job_new(files.items[i].path);
    /* The jobs own the paths from here on, and the walk's list goes: a run may have many files. */
    uint32_t nfiles = files.len;
    array_free(&files);
    if (run_set_rules(&run, cfg, &cerr) < 0) {
        /* a configuration file below the cwd that the walk did not consult (explicit paths) */
        fprintf(stderr, "gradleak: error: %s\n", cerr.message);
        run_free(&run);
        spill_close(spill);
        cache_close(cache);
        for (uint32_t i = 0; i < nfiles; i++) gl_free((char *)jobsv[i].path);
        gl_free(jobsv);
        gl_free(pch_dir);
        config_free(cfg);
        return EXIT_ERROR;
    }

    /* The output, file by file in path order: each file's result comes back from the spill, is
     * fixed, filtered by the baseline, written and freed. */
    CheckOut co;
    memset(&co, 0, sizeof co);
    co.cf = &cf;
    co.oo.color = color;
    co.oo.show_fix_hints = true;
    co.oo.unsafe_fixes = cf.unsafe;
    co.oo.statistics = statistics;
    co.oo.not_analysed = (uint32_t)errors; /* paths the walk could not use (a symlink loop, a missing path) */
    co.errors = errors;
    co.bl = use_baseline ? &bl : NULL;
    co.write_baseline = write_baseline;
    baseline_writer_init(&co.bw);
    /* --diff prints the diffs instead of the findings, as ruff does; --write-baseline writes them
     * to the baseline, and the output shows none */
    co.os = cf.diff ? NULL : out_stream_begin(stdout, fmt, &co.oo);
    engine_run(&run, jobs, check_output_file, &co);
    errors = co.errors;
    uint32_t nfind = co.nfind;
    /* C++: one line on how the files were parsed (stderr: machine formats stay clean) */
    if (co.n_cxx_off) {
        const char *why = "libclang is not available";
        engine_cxx_available(&why);
        fprintf(stderr, "gradleak: warning: %u C++ file%s not linted: %s\n", co.n_cxx_off, co.n_cxx_off == 1 ? "" : "s", why);
    }
    if (co.n_cxx_stub) {
        const char *force = getenv("GRADLEAK_CXX_HEADERS");
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against gradleak's LibTorch stub header (%s)\n", co.n_cxx_stub,
                co.n_cxx_stub == 1 ? "" : "s",
                force && !strcmp(force, "stub") ? "GRADLEAK_CXX_HEADERS=stub"
                                                : "LibTorch headers not found: set LIBTORCH, or give a compile_commands.json with -p");
    }
    if (co.n_nb_other)
        fprintf(stderr, "gradleak: note: %u notebook%s not linted: not Python\n", co.n_nb_other, co.n_nb_other == 1 ? "" : "s");
    if (co.n_cxx_real)
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against the LibTorch headers\n", co.n_cxx_real,
                co.n_cxx_real == 1 ? "" : "s");
    run_free(&run);
    spill_close(spill);
    if (write_baseline) {
        char err[1024];
        const char *file = baseline_file ? baseline_file : "gradleak-baseline.json";
        long n = baseline_writer_finish(&co.bw, file, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "gradleak: error: %s\n", err);
            errors++;
        } else {
            fprintf(stderr, "gradleak: wrote %ld finding%s to the baseline %s\n", n, n == 1 ? "" : "s", file);
        }
        nfind = 0; /* the findings went to the file, not to the output */
    }
    baseline_writer_free(&co.bw);
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
    co.oo.fixed = cf.fixed;
    if (co.n_cxx_not_analysed)
        fprintf(stderr, "gradleak: warning: %u C++ file%s not analysed (exit status 2 unless --exit-zero)\n",
                co.n_cxx_not_analysed, co.n_cxx_not_analysed == 1 ? "" : "s");
    if (cf.diff) {
        fflush(stdout);
        if (cf.fixed) fprintf(stderr, "Would fix %u error%s.\n", cf.fixed, cf.fixed == 1 ? "" : "s");
        else fputs("No errors would be fixed.\n", stderr);
        nfind = cf.changed;
    } else if (out_stream_end(co.os) != 0) {
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
    if (co.n_cxx_not_analysed && !exit_zero) return EXIT_ERROR; /* a clean exit would claim files it never read */
    return nfind && !exit_zero ? EXIT_FINDINGS : EXIT_CLEAN;

usage_error:
    config_overrides_free(&ov);
    gl_free(paths);
    return EXIT_ERROR;
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


int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_ERROR : EXIT_CLEAN;
    }
    const char *cmd = argv[1];
    /* an internal error exits 2 with a report, never by a signal; `check` goes on without the file */
    gl_crash_install(argv, !strcmp(cmd, "check"), getenv(GL_CRASH_SKIP_VAR), getenv("GRADLEAK_TEST_CRASH"));
    /* the environment is read here (and by the language server's own settings), and handed down:
     * README.md, "Environment variables" */
    cache_choose_dir(getenv("GRADLEAK_CACHE_DIR"));
    engine_set_cxx_timing(getenv("GRADLEAK_DEBUG_CXX") != NULL);
    val_set_peak_codes(getenv("GRADLEAK_VALIDATE_PEAK"));
    static CxEnv cxenv;
    cxenv = (CxEnv){getenv("LIBTORCH"), getenv("CUDA_HOME"), getenv("GRADLEAK_CXX_HEADERS"), getenv("GRADLEAK_PCH"),
                    getenv("GRADLEAK_PCH_MAX_MB"), getenv("GRADLEAK_LIBCLANG"), getenv("TMPDIR")};
    cx_set_env(&cxenv);
    if (!strcmp(cmd, "check")) {
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                fputs(usage_text, stdout);
                return EXIT_CLEAN;
            }
        return cmd_check(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "rule")) return cmd_rule(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate")) return val_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "rules")) return cmd_rules();
    if (!strcmp(cmd, "lsp")) return lsp_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        /* the first line alone is the version, as before (scripts read it) */
        printf("gradleak %s\ncommit %s\nbuilt %s\n", GL_VERSION, gl_build_commit, gl_build_date);
        return EXIT_CLEAN;
    }
    if (!strcmp(cmd, "debug")) {
        int rc = cli_debug(argc - 2, argv + 2);
        if (rc >= 0) return rc;
    }
    fprintf(stderr, "gradleak: error: unknown command '%s'\nRun 'gradleak --help' for usage.\n", cmd);
    return EXIT_ERROR;
}
