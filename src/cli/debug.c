/* `gradleak debug`: the developers' tools (ir, summaries, verify, bench, cache). */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include "base/file.h"
#include "base/strbuf.h"
#include "cache/cache.h"
#include "cli/debug.h"
#include "engine/run.h"
#include "engine/suppress.h"
#include "front/py/py.h"
#include "ir/dataflow.h"

#define EXIT_CLEAN 0
#define EXIT_FINDINGS 1
#define EXIT_ERROR 2

static void debug__die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gradleak: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'gradleak --help' for usage.\n");
    exit(EXIT_ERROR);
}

static void debug__walk_err(void *ctx, const char *path, const char *why)
{
    int *errors = ctx;
    fprintf(stderr, "gradleak: error: %s: %s\n", path, why);
    (*errors)++;
}

static void debug__emit_stdout(void *ctx, const char *s)
{
    GL_UNUSED(ctx);
    fputs(s, stdout);
}

static int debug__ir(int argc, char **argv)
{
    if (argc < 1) debug__die_usage("%s", "debug ir: which file?");
    int rc = EXIT_CLEAN;
    for (int i = 0; i < argc; i++) {
        size_t len;
        char *src = gl_read_file(argv[i], GL_READ_ANY_SIZE, &len);
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
            ir_dump(&m, debug__emit_stdout, NULL);
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
static int debug__summaries(int argc, char **argv)
{
    if (argc < 1) debug__die_usage("%s", "debug summaries: which files?");
    LintOptions o;
    lint_options_default(&o);
    RunJob *jobs = gl_calloc((size_t)argc, sizeof *jobs);
    Spill *spill = spill_open_memory();
    EngineRun run;
    run_init(&run, jobs, (uint32_t)argc, &o, NULL, spill);
    for (int i = 0; i < argc; i++) jobs[i] = run_job_new(argv[i]);
    run_lint(&run, 1);
    int rc = EXIT_CLEAN;
    for (int i = 0; i < argc; i++) {
        LintResult res;
        if (!jobs[i].done || run_job_load(&run, &jobs[i], &res, NULL, NULL) < 0) {
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
            if (s->trains) printf(", trains");
            if (s->backprops) printf(", backprops");
            if (s->evaluates) printf(", evaluates");
            printf("\n");
        }
        lint_result_free(&res);
    }
    run_free(&run);
    spill_close(spill);
    gl_free(jobs);
    return rc;
}

static bool debug__has_code(const Expect *e, int rule)
{
    for (uint32_t k = 0; k < e->n_codes; k++)
        if ((int)e->codes[k] == rule) return true;
    return false;
}

/* clang -verify for gradleak: every `# expect:` (`// expect:` in C++) must be seen, nothing
 * unexpected may appear. */
static int debug__verify(int argc, char **argv)
{
    int failed = 0, passed = 0, errors = 0;
    WalkIgnore ig;
    memset(&ig, 0, sizeof ig);
    WalkList files;
    array_init(&files);
    walk_paths((const char *const *)argv, argc, &ig, &files, debug__walk_err, &errors);
    walk_sort_unique(&files);
    LintOptions o;
    lint_options_default(&o);
    RunJob *jobs = gl_calloc(files.len ? files.len : 1, sizeof *jobs);
    for (uint32_t fi = 0; fi < files.len; fi++) jobs[fi] = run_job_new(files.items[fi].path);
    Spill *spill = spill_open_memory();
    /* the files of a folder named project_* are linted together (cross-file summaries); sorted
     * paths keep them next to each other */
    for (uint32_t fi = 0, end; fi < files.len; fi = end) {
        const char *p = strstr(jobs[fi].path, "/project_");
        const char *slash = p ? strchr(p + 1, '/') : NULL;
        size_t prefix = slash ? (size_t)(slash - jobs[fi].path) + 1 : 0;
        for (end = fi + 1; prefix && end < files.len && !strncmp(jobs[end].path, jobs[fi].path, prefix);) end++;
        EngineRun run;
        run_init(&run, jobs + fi, end - fi, &o, NULL, spill);
        run.keep_src = true;
        run.alone = end - fi == 1; /* a fixture outside a project_* folder is linted on its own */
        run_lint(&run, 1);
        run_free(&run);
    }
    EngineRun all;
    run_init(&all, jobs, 0, &o, NULL, spill); /* only to read the results back */
    for (uint32_t fi = 0; fi < files.len; fi++) {
        const char *path = jobs[fi].path;
        LintResult r;
        char *src;
        size_t len;
        if (!jobs[fi].done || run_job_load(&all, &jobs[fi], &r, &src, &len) < 0) {
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
                if (ex[k].row == dg->span.row && debug__has_code(&ex[k], dg->rule)) expected = true;
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

static double debug__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parse-only against full lint on the same files, in one process, single-threaded, each pass
 * repeated and the minimum kept (these machines are noisy). */
static int debug__bench(int argc, char **argv)
{
    int errors = 0;
    WalkIgnore ig;
    memset(&ig, 0, sizeof ig);
    WalkList files;
    array_init(&files);
    walk_paths((const char *const *)argv, argc, &ig, &files, debug__walk_err, &errors);
    walk_sort_unique(&files);
    char **srcs = gl_calloc(files.len ? files.len : 1, sizeof(char *));
    size_t *lens = gl_calloc(files.len ? files.len : 1, sizeof(size_t));
    size_t bytes = 0, lines = 0;
    for (uint32_t i = 0; i < files.len; i++) {
        srcs[i] = gl_read_file(files.items[i].path, GL_READ_ANY_SIZE, &lens[i]);
        if (!srcs[i]) continue;
        bytes += lens[i];
        for (size_t k = 0; k < lens[i]; k++) lines += srcs[i][k] == '\n';
    }
    LintOptions o;
    lint_options_default(&o);
    double best_parse = 1e30, best_lint = 1e30, best_project = 1e30;
    size_t findings = 0, project_findings = 0;
    RunJob *jobs = gl_calloc(files.len ? files.len : 1, sizeof *jobs);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = debug__now_s();
        for (uint32_t i = 0; i < files.len; i++)
            if (srcs[i]) py_parse_only(srcs[i], lens[i]);
        double t1 = debug__now_s();
        findings = 0;
        for (uint32_t i = 0; i < files.len; i++) {
            if (!srcs[i]) continue;
            LintResult r;
            engine_lint(files.items[i].path, srcs[i], lens[i], engine_lang_of(files.items[i].path), &o, &r);
            findings += r.diags.len;
            lint_result_free(&r);
        }
        double t2 = debug__now_s();
        /* the same files linted together: cross-file summaries, and the files linted again (the
         * bytes are put in the spill first, so that the files are not read again) */
        uint32_t n = 0;
        Spill *spill = spill_open_memory();
        for (uint32_t i = 0; i < files.len; i++) {
            if (!srcs[i]) continue;
            jobs[n] = run_job_new(files.items[i].path);
            jobs[n].src_at = spill_put(spill, srcs[i], lens[i]);
            jobs[n++].src_len = (uint32_t)lens[i];
        }
        EngineRun run;
        run_init(&run, jobs, n, &o, NULL, spill);
        double t2b = debug__now_s();
        run_lint(&run, 1);
        double t3 = debug__now_s();
        project_findings = 0;
        for (uint32_t i = 0; i < n; i++) {
            LintResult r;
            if (!jobs[i].done || run_job_load(&run, &jobs[i], &r, NULL, NULL) < 0) continue;
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
static int debug__cache(int argc, char **argv)
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


int cli_debug(int argc, char **argv)
{
    if (argc < 1) return -1;
    if (!strcmp(argv[0], "ir")) return debug__ir(argc - 1, argv + 1);
    if (!strcmp(argv[0], "verify")) return debug__verify(argc - 1, argv + 1);
    if (!strcmp(argv[0], "bench")) return debug__bench(argc - 1, argv + 1);
    if (!strcmp(argv[0], "cache")) return debug__cache(argc - 1, argv + 1);
    if (!strcmp(argv[0], "summaries")) return debug__summaries(argc - 1, argv + 1);
    return -1;
}
