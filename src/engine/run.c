/* One project run (see run.h): the jobs, the worker pool, the cache, the spill and the rounds of
 * cross-file summaries. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/crash.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "engine/result_codec.h"
#include "engine/run.h"
#include "engine/nb_lint.h"
#include "nb/nb.h"

NbStatus run_nb_load(char **src, size_t *len, char *note, size_t notesz)
{
    Notebook nb;
    NbStatus st = nb_read(*src, *len, &nb, note, notesz);
    if (st != NB_OK) return st;
    StrBuf blob;
    sb_init(&blob);
    nb_blob_encode(&nb, &blob);
    nb_free(&nb);
    gl_free(*src);
    *len = blob.len;
    *src = sb_take(&blob);
    return NB_OK;
}

/* path as an absolute path (through run->cwd) in buf, or path itself when it is absolute already
 * or too long for buf. */
static const char *run__abs(const EngineRun *run, const char *path, char *buf, size_t cap)
{
    if (path[0] == '/' || !run->cwd[0]) return path;
    int n = snprintf(buf, cap, "%s/%s", run->cwd, path);
    return n > 0 && (size_t)n < cap ? buf : path;
}

void run_init(EngineRun *run, RunJob *jobs, uint32_t n, const LintOptions *base, Cache *cache, Spill *spill)
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
RunJob run_job_new(const char *path)
{
    return (RunJob){.path = path, .src_at = SPILL_NONE, .res_at = SPILL_NONE};
}

void run_free(EngineRun *run)
{
    project_free(run->proj);
    run->proj = NULL;
    gl_free(run->found);
    run->found = NULL;
    run->n_found = 0;
    array_free(&run->rules);
    if (run->has_doc_result) lint_result_free(&run->doc_result);
    run->has_doc_result = false;
    pthread_mutex_destroy(&run->mu);
}

/* The index of rs in run->rules, added when new. Files next to each other share their settings,
 * so the newest sets are tried first. */
static uint32_t run__rules_index(EngineRun *run, const RuleSet *rs)
{
    for (uint32_t k = run->rules.len; k-- > 0;)
        if (!memcmp(&run->rules.items[k], rs, sizeof *rs)) return k;
    array_push(&run->rules, *rs);
    return run->rules.len - 1;
}

/* The options a job is linted with (without the other files' summaries). */
LintOptions run_options(const EngineRun *run, const RunJob *j)
{
    LintOptions o = run->base;
    if (run->rules.len) o.rules = run->rules.items[j->rules];
    return o;
}

/* Everything besides the bytes and the path that decides a file's findings: its cache key. */
static uint64_t run__settings_key(const LintOptions *o, uint64_t ext_hash)
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
static uint64_t run__ext_key(const LintOptions *o, const Project *p, uint32_t i)
{
    if (!o->ext) return 0;
    uint32_t n;
    const ImportedCall *calls = project_calls(p, i, &n);
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t k = 0; k < n; k++) {
        if (calls[k].import_only) continue;
        const ExternSummary *s = o->ext(o->ext_ctx, calls[k].qual);
        uint8_t b[22] = {0};
        if (s) {
            b[0] = 1, b[1] = s->kind, b[2] = s->grad, b[3] = s->elem, b[4] = s->nparams;
            memcpy(b + 5, &s->flags, 2), memcpy(b + 7, &s->pmask, 2), b[9] = s->cmask;
            b[10] = s->keep_acc, b[11] = s->keep_coll, b[12] = s->trains, b[13] = s->evaluates;
            b[14] = s->ret_tuple, memcpy(b + 15, &s->ret_plain, 2), memcpy(b + 17, &s->ret_weak, 2);
            memcpy(b + 19, &s->ret_zero, 2), b[21] = s->backprops;
        }
        h = cache_hash64(calls[k].qual, strlen(calls[k].qual), h);
        h = cache_hash64(b, sizeof b, h);
    }
    uint64_t per_step = project_per_step_mask(p, i); /* C++: its functions that others call each step */
    if (per_step) h = cache_hash64(&per_step, sizeof per_step, h);
    uint64_t grad_off = project_grad_off_mask(p, i); /* its functions others call with grad off */
    if (grad_off) h = cache_hash64(&grad_off, sizeof grad_off, h ^ 0x67);
    uint64_t after_train = project_after_train_mask(p, i); /* its functions others call after training */
    if (after_train) h = cache_hash64(&after_train, sizeof after_train, h ^ 0x74);
    return h ? h : 1;
}

/* Lints j, the run's file i: its first lint, or with relint a lint again with the other files'
 * summaries (the run's project). The result goes to the spill (j->res_at); the first lint also
 * keeps the bytes there when a later step needs them (findings to show or fix, calls that a
 * re-lint may follow) and gives the project the file's summaries. A re-lint leaves the project
 * alone: the other workers are reading it. */
static void run__lint_job(EngineRun *run, RunJob *j, uint32_t i, bool relint)
{
    if (gl_crash_skipped(j->path)) { /* it crashed an earlier execution of this run (src/base/crash.h) */
        j->read_errno = -1;
        return;
    }
    LintOptions o = run_options(run, j);
    uint64_t ext_hash = 0;
    if (relint) {
        project_attach(run->proj, i, &o);
        ext_hash = run__ext_key(&o, run->proj, i);
    }
    size_t len = j->src_len;
    /* a re-lint lints the first lint's bytes */
    char absbuf[4096 + 1024];
    char *src = j->src_at != SPILL_NONE ? spill_get(run->spill, j->src_at, len)
                                        : gl_read_file(run__abs(run, j->path, absbuf, sizeof absbuf), GL_READ_ANY_SIZE, &len);
    if (!src) {
        j->read_errno = (int16_t)(errno > 0 && errno < INT16_MAX ? errno : EIO);
        return;
    }
    /* the language server's document: its text, linted incrementally on its LintDoc, never cached */
    bool doc = run->given && i == 0;
    SourceLang lang = doc ? run->doc_lang : engine_lang_of(j->path);
    /* a notebook: its code cells, joined and masked, are what is linted; the blob is what is kept */
    const char *code = src;
    size_t code_len = len;
    if (!doc && nb_is_path(j->path)) {
        char note[512];
        NbStatus st = j->src_at != SPILL_NONE ? NB_OK : run_nb_load(&src, &len, note, sizeof note);
        Notebook nbv;
        if (st == NB_OK && nb_blob_view(src, len, &nbv) < 0) st = NB_ERROR, snprintf(note, sizeof note, "internal error");
        if (st != NB_OK) {
            j->src_at = spill_put(run->spill, note, strlen(note));
            j->src_len = (uint32_t)strlen(note);
            j->read_errno = st == NB_NOT_PYTHON ? RUN_NB_OTHER : RUN_NB_BROKEN;
            gl_free(src);
            return;
        }
        j->nb = true;
        code = nbv.code;
        code_len = nbv.len;
    }
    char *key = run->cache && !doc ? config_abspath(run__abs(run, j->path, absbuf, sizeof absbuf)) : NULL;
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
        skey = run__settings_key(&o, ext_hash);
        if (lang == LANG_CXX) {
            /* a C++ file's results also follow its compile flags and the headers it is parsed with */
            uint64_t ck = engine_cxx_key(run__abs(run, j->path, absbuf, sizeof absbuf), &o);
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
        const char *apath = run__abs(run, j->path, absbuf, sizeof absbuf);
        int rc = doc && run->doc ? engine_lint_doc(run->doc, apath, code, code_len, lang, &o, &res)
                     : engine_lint(apath, code, code_len, lang, &o, &res);
        if (rc < 0) {
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
    if (!relint && j->src_at == SPILL_NONE && (res.diags.len || lint_result_calls(&res) || run->keep_src || (j->nb && res.notes))) {
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
    if (doc) { /* kept whole: the encoding leaves out what only an editor needs (the comments) */
        if (run->has_doc_result) lint_result_free(&run->doc_result);
        run->doc_result = res;
        run->has_doc_result = true;
    } else {
        lint_result_free(&res);
    }
    gl_free(key);
    gl_free(src);
}

/* The result of a linted job back from the spill, and with src its bytes when they were kept (else
 * *src is NULL). Returns 0, or -1 with errno when the spill cannot be read back. */
int run_job_load(const EngineRun *run, const RunJob *j, LintResult *res, char **src, size_t *len)
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
static RunJob *run__job(const EngineRun *run, uint32_t i)
{
    return i < run->n ? &run->jobs[i] : &run->found[i - run->n];
}

/* The project's ProjectLoad: file i's path and latest result. */
static int run__load(void *ctx, uint32_t i, const char **path, LintResult *out)
{
    const EngineRun *run = ctx;
    const RunJob *j = run__job(run, i);
    if (!j->done) return -1;
    *path = j->path;
    return out ? run_job_load(run, j, out, NULL, NULL) : 0;
}

/* One pass of lints: jobs[k] is the run's file file[k] (file NULL: file k). */
typedef struct RunPool {
    EngineRun *run;
    RunJob *jobs;
    const uint32_t *file;
    uint32_t n;
    bool relint;
    uint32_t next;
    pthread_mutex_t mu;
} RunPool;

static void *run__worker(void *arg)
{
    RunPool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        uint32_t k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= p->n) return NULL;
        run__lint_job(p->run, &p->jobs[k], p->file ? p->file[k] : k, p->relint);
    }
}

/* Lints the pass's jobs on nthreads workers. Each job's result depends on that job alone (and on
 * the project, which does not change during a pass), so the order the workers take them in
 * changes nothing. */
static void run__pool(RunPool *p, int nthreads)
{
    if (nthreads <= 1 || p->n < 2) {
        run__worker(p);
        return;
    }
    if (nthreads > 64) nthreads = 64;
    if ((uint32_t)nthreads > p->n) nthreads = (int)p->n;
    pthread_t th[64];
    int started = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, run__worker, p) == 0) started++;
    if (!started) run__worker(p);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* Lints every file of the run, then lints again, in rounds, the files whose calls reach a function
 * of another file (engine/project.h). The helpers they import from files not given (pre-commit
 * passes only the changed ones) are read from disk and linted for their summaries only, so a
 * file's findings do not depend on which files came with it. A re-lint is cached under the
 * summaries it was given (run__ext_key). The project stays in run->proj (--fix re-lints files against
 * it); run_free frees it. */
void run_lint(EngineRun *run, int nthreads)
{
    if (run->n >= 1 && !run->alone) run->proj = project_new(run->n, run__load, run);
    RunPool first = {run, run->jobs, NULL, run->n, false, 0, PTHREAD_MUTEX_INITIALIZER};
    run__pool(&first, nthreads);
    if (!run->proj) return;
    uint32_t k;
    const char **paths;
    for (int pass = 0; pass < PROJECT_MAX_ROUNDS && (k = project_missing(run->proj, &paths)) != 0; pass++) {
        if (!run->cache && run->cache_dir) run->cache = cache_open(run->cache_dir);
        /* the paths live as long as the project; the helpers take the first file's rules */
        run->found = gl_realloc(run->found, (run->n_found + k) * sizeof *run->found);
        uint32_t *idx = gl_calloc(k, sizeof *idx);
        for (uint32_t j = 0; j < k; j++) {
            run->found[run->n_found + j] = run_job_new(paths[j]);
            run->found[run->n_found + j].rules = run->jobs[0].rules;
            idx[j] = project_add(run->proj);
        }
        RunPool p = {run, run->found + run->n_found, idx, k, false, 0, PTHREAD_MUTEX_INITIALIZER};
        run->n_found += k;
        run__pool(&p, nthreads);
        gl_free(idx);
    }
    uint32_t total = run->n + run->n_found;
    uint32_t *which = gl_calloc(total, sizeof *which);
    while ((k = project_next_round(run->proj, which)) != 0) {
        RunJob *again = gl_calloc(k, sizeof *again);
        for (uint32_t m = 0; m < k; m++) {
            again[m] = *run__job(run, which[m]);
            again[m].res_at = SPILL_NONE, again[m].done = again[m].cached = false, again[m].read_errno = 0;
        }
        RunPool p = {run, again, which, k, true, 0, PTHREAD_MUTEX_INITIALIZER};
        run__pool(&p, nthreads);
        /* the new summaries go to the project only now that no worker reads it */
        for (uint32_t m = 0; m < k; m++) {
            RunJob *old = run__job(run, which[m]);
            LintResult res;
            if (!again[m].done || run_job_load(run, &again[m], &res, NULL, NULL) < 0)
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


/* The walk's exclusion filter: a path is left out when the settings that govern it exclude it.
 * Paths named on the command line are linted anyway, unless --force-exclude. A configuration
 * error is remembered (the first one) and everything is skipped from then on. */
typedef struct RunExclude {
    Config *cfg;
    bool force;
    bool failed;
    ConfigError err;
} RunExclude;

static bool run__exclude(void *ctx, const char *path, bool is_dir, bool explicit_path)
{
    GL_UNUSED(is_dir);
    RunExclude *x = ctx;
    if (x->failed) return true;
    if (explicit_path && !x->force) return false;
    const Settings *s;
    if (config_settings_for(x->cfg, path, &s, &x->err) < 0) {
        x->failed = true;
        return true;
    }
    return explicit_path ? settings_excluded(s, path) : settings_excluded_entry(s, path);
}

int run_walk(const char *const *paths, int n, Config *cfg, bool force_exclude, WalkList *out, WalkErrFn on_err,
             void *ctx, ConfigError *err)
{
    RunExclude xc;
    memset(&xc, 0, sizeof xc);
    xc.cfg = cfg;
    xc.force = force_exclude;
    WalkIgnore ig;
    walk_ignore_load(&ig, ".");
    ig.skip = run__exclude;
    ig.skip_ctx = &xc;
    array_init(out);
    walk_paths(paths, n, &ig, out, on_err, ctx);
    walk_add_cxx_headers(out);
    walk_sort_unique(out);
    walk_ignore_free(&ig);
    if (xc.failed) {
        *err = xc.err;
        walk_list_free(out);
        array_init(out);
        return -1;
    }
    return 0;
}

int run_set_rules(EngineRun *run, Config *cfg, ConfigError *err)
{
    for (uint32_t i = 0; i < run->n; i++) {
        RunJob *j = &run->jobs[i];
        const Settings *s;
        if (config_settings_for(cfg, j->path, &s, err) < 0) return -1;
        RuleSet rs = run->base.rules;
        settings_rules_for(s, j->path, &rs);
        j->rules = run__rules_index(run, &rs);
    }
    return 0;
}

bool run_take_doc_result(EngineRun *run, LintResult *out)
{
    if (!run->has_doc_result) return false;
    *out = run->doc_result;
    run->has_doc_result = false;
    return true;
}

int engine_run(EngineRun *run, int nthreads, RunResultFn on_result, void *ctx)
{
    run_lint(run, nthreads);
    for (uint32_t i = 0; on_result && i < run->n; i++) {
        int rc = on_result(ctx, run, i, &run->jobs[i]);
        if (rc) return rc;
    }
    return 0;
}
