/* gradleak's command line: check, rule, rules, version, and the debug tools (ir, verify, bench). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "cli/walk.h"
#include "engine/engine.h"
#include "engine/suppress.h"
#include "front/py/py.h"
#include "ir/dataflow.h"
#include "out/out.h"

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
    "  version            Print the version\n"
    "  debug ir FILE      Dump the IR and the loop kinds of a file\n"
    "  debug verify FILES Check fixtures' inline `# expect:` lines against the findings\n"
    "  debug bench PATHS  Time parse-only against full lint on the same files\n"
    "\n"
    "Options for check:\n"
    "  --select CODES         Only these rules (comma-separated codes or names; ALL for every rule)\n"
    "  --ignore CODES         Skip these rules\n"
    "  --extend-select CODES  Add rules to the selection\n"
    "  --output-format FMT    full (default), concise, json, sarif, github\n"
    "  --statistics           Count findings per rule instead of listing them\n"
    "  --exit-zero            Exit 0 even when there are findings\n"
    "  --trace                Show the dataflow facts behind each finding\n"
    "  -j, --jobs N           Lint N files at a time (default: number of cores)\n"
    "  --max-file-size BYTES  Skip larger files with a note (default 8 MiB)\n"
    "  -p DIR                 C++: folder of compile_commands.json (default: searched upward from\n"
    "                         each file); without one, a C++17 command line and the LibTorch\n"
    "                         headers of $LIBTORCH or the system, else gradleak's stub header\n"
    "  --no-color             Never color the output (also: NO_COLOR=1)\n"
    "  --no-cache             Accepted and ignored (this version has no cache)\n"
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

static bool parse_codes(const char *list, RuleSet *set, bool value, const char *flag)
{
    char *copy = gl_strdup(list);
    for (char *tok = strtok(copy, ", "); tok; tok = strtok(NULL, ", ")) {
        if (!strcasecmp(tok, "ALL") || !strcasecmp(tok, "GL")) {
            for (int i = 0; i < RULE_COUNT; i++) set->on[i] = value;
            continue;
        }
        bool any = false;
        size_t n = strlen(tok);
        for (int i = 0; i < RULE_COUNT; i++) {
            const RuleInfo *ri = rule_info((RuleId)i);
            /* prefixes select families, as ruff: GL1 = GL101..GL107 */
            if (!strncasecmp(ri->code, tok, n) || !strcmp(ri->name, tok)) set->on[i] = value, any = true;
        }
        if (!any) {
            fprintf(stderr, "gradleak: error: %s: unknown rule '%s' (see 'gradleak rules')\n", flag, tok);
            gl_free(copy);
            return false;
        }
    }
    gl_free(copy);
    return true;
}

/* Reads a whole file. Returns NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        errno = EISDIR;
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

typedef struct FileJob {
    const char *path;
    char *src;
    size_t len;
    LintResult res;
    int read_errno;
    bool done;
} FileJob;

typedef struct Pool {
    FileJob *jobs;
    uint32_t n;
    uint32_t next;
    pthread_mutex_t mu;
    const LintOptions *opts;
} Pool;

static void lint_job(FileJob *j, const LintOptions *o)
{
    j->src = read_file(j->path, &j->len);
    if (!j->src) {
        j->read_errno = errno ? errno : EIO;
        return;
    }
    if (engine_lint(j->path, j->src, j->len, engine_lang_of(j->path), o, &j->res) < 0) j->read_errno = -1;
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
        lint_job(&p->jobs[i], p->opts);
    }
}

static void lint_all(FileJob *jobs, uint32_t n, int nthreads, const LintOptions *o)
{
    if (nthreads <= 1 || n < 2) {
        for (uint32_t i = 0; i < n; i++) lint_job(&jobs[i], o);
        return;
    }
    Pool p = {jobs, n, 0, PTHREAD_MUTEX_INITIALIZER, o};
    if (nthreads > 64) nthreads = 64;
    pthread_t th[64];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, pool_worker, &p) == 0) started++;
    if (!started) pool_worker(&p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
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

static int cmd_check(int argc, char **argv)
{
    LintOptions o;
    lint_options_default(&o);
    OutFormat fmt = OUT_FULL;
    bool exit_zero = false, statistics = false, color = isatty(1) && !getenv("NO_COLOR");
    int jobs = default_jobs();
    const char **paths = gl_calloc((size_t)argc + 1, sizeof(char *));
    int npaths = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define TAKE(flag)                                                                   \
    (!strcmp(a, flag) ? (i + 1 < argc ? (val = argv[++i], 1) : (die_usage("%s needs a value", flag), 0)) \
                      : (!strncmp(a, flag "=", strlen(flag) + 1) ? (val = a + strlen(flag) + 1, 1) : 0))
        if (TAKE("--select")) {
            RuleSet s;
            memset(&s, 0, sizeof s);
            if (!parse_codes(val, &s, true, "--select")) { gl_free(paths); return EXIT_ERROR; }
            o.rules = s;
        } else if (TAKE("--ignore")) {
            if (!parse_codes(val, &o.rules, false, "--ignore")) { gl_free(paths); return EXIT_ERROR; }
        } else if (TAKE("--extend-select")) {
            if (!parse_codes(val, &o.rules, true, "--extend-select")) { gl_free(paths); return EXIT_ERROR; }
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
        } else if (!strcmp(a, "--exit-zero")) {
            exit_zero = true;
        } else if (!strcmp(a, "--statistics")) {
            statistics = true;
        } else if (!strcmp(a, "--trace")) {
            o.trace = true;
        } else if (!strcmp(a, "--no-color")) {
            color = false;
        } else if (!strcmp(a, "--no-cache")) {
            /* accepted for pre-commit configs written for later versions: there is no cache yet */
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
    int errors = 0;
    WalkIgnore ig;
    walk_ignore_load(&ig, ".");
    WalkList files;
    array_init(&files);
    walk_paths(paths, npaths, &ig, &files, walk_err, &errors);
    walk_sort_unique(&files);
    walk_ignore_free(&ig);
    gl_free(paths);

    FileJob *jobsv = gl_calloc(files.len ? files.len : 1, sizeof(FileJob));
    for (uint32_t i = 0; i < files.len; i++) jobsv[i].path = files.items[i].path;
    lint_all(jobsv, files.len, jobs, &o);

    OutFile *of = gl_calloc(files.len ? files.len : 1, sizeof(OutFile));
    uint32_t nof = 0, nfind = 0, n_cxx_off = 0, n_cxx_stub = 0, n_cxx_real = 0;
    for (uint32_t i = 0; i < files.len; i++) {
        FileJob *j = &jobsv[i];
        if (j->read_errno) {
            fprintf(stderr, "gradleak: error: %s: cannot read: %s\n", j->path,
                    j->read_errno > 0 ? strerror(j->read_errno) : "internal error (this is a bug in gradleak " GL_VERSION ")");
            errors++;
            continue;
        }
        if (j->res.cxx == CXX_UNAVAILABLE) n_cxx_off++;
        else if (j->res.notes && (j->res.skipped || j->res.syntax_error))
            fprintf(stderr, "gradleak: warning: %s: %s\n", j->path, j->res.notes);
        if (j->res.cxx == CXX_STUB) n_cxx_stub++;
        if (j->res.cxx == CXX_LIBTORCH) n_cxx_real++;
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
    if (n_cxx_stub)
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against gradleak's LibTorch stub header (LibTorch headers "
                "not found: set LIBTORCH, or give a compile_commands.json with -p)\n", n_cxx_stub, n_cxx_stub == 1 ? "" : "s");
    if (n_cxx_real)
        fprintf(stderr, "gradleak: note: %u C++ file%s parsed against the LibTorch headers\n", n_cxx_real,
                n_cxx_real == 1 ? "" : "s");
    OutOptions oo;
    memset(&oo, 0, sizeof oo);
    oo.color = color;
    oo.show_fix_hints = false; /* no --fix yet: do not advertise it */
    oo.statistics = statistics;
    if (out_write(stdout, fmt, of, nof, &oo) != 0) {
        fprintf(stderr, "gradleak: error: writing the output failed: %s\n", strerror(errno));
        errors++;
    }
    fflush(stdout);
    for (uint32_t i = 0; i < files.len; i++) {
        gl_free(jobsv[i].src);
        lint_result_free(&jobsv[i].res);
    }
    gl_free(jobsv);
    gl_free(of);
    walk_list_free(&files);
    if (errors) return EXIT_ERROR;
    return nfind && !exit_zero ? EXIT_FINDINGS : EXIT_CLEAN;
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
    for (uint32_t fi = 0; fi < files.len; fi++) {
        const char *path = files.items[fi].path;
        size_t len;
        char *src = read_file(path, &len);
        if (!src) {
            printf("FAIL %s: cannot read: %s\n", path, strerror(errno));
            failed++;
            continue;
        }
        LintResult r;
        SourceLang lang = engine_lang_of(path);
        engine_lint(path, src, len, lang, &o, &r);
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
        lint_result_free(&r);
        gl_free(src);
    }
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
    double best_parse = 1e30, best_lint = 1e30;
    size_t findings = 0;
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
        if (t1 - t0 < best_parse) best_parse = t1 - t0;
        if (t2 - t1 < best_lint) best_lint = t2 - t1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("files            %u\n", files.len);
    printf("lines            %zu\n", lines);
    printf("MB               %.2f\n", (double)bytes / 1e6);
    printf("findings         %zu\n", findings);
    printf("parse-only       %.3f s  (%.0f lines/s)\n", best_parse, (double)lines / best_parse);
    printf("full lint        %.3f s  (%.0f lines/s)\n", best_lint, (double)lines / best_lint);
    printf("lint/parse ratio %.2f\n", best_lint / best_parse);
    printf("peak RSS         %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    for (uint32_t i = 0; i < files.len; i++) gl_free(srcs[i]);
    gl_free(srcs);
    gl_free(lens);
    walk_list_free(&files);
    return EXIT_CLEAN;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_ERROR : EXIT_CLEAN;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "check")) {
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                fputs(usage_text, stdout);
                return EXIT_CLEAN;
            }
        return cmd_check(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "rule")) return cmd_rule(argc - 2, argv + 2);
    if (!strcmp(cmd, "rules")) return cmd_rules();
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("gradleak %s\n", GL_VERSION);
        return EXIT_CLEAN;
    }
    if (!strcmp(cmd, "debug") && argc >= 3) {
        if (!strcmp(argv[2], "ir")) return debug_ir(argc - 3, argv + 3);
        if (!strcmp(argv[2], "verify")) return debug_verify(argc - 3, argv + 3);
        if (!strcmp(argv[2], "bench")) return debug_bench(argc - 3, argv + 3);
    }
    fprintf(stderr, "gradleak: error: unknown command '%s'\nRun 'gradleak --help' for usage.\n", cmd);
    return EXIT_ERROR;
}
