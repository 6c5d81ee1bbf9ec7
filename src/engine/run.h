/* One project run: the files linted together, with the configuration that governs each, the
 * cache, the worker threads and the cross-file summaries (engine/project.h). `check`, `validate`
 * and the language server all lint through it, so all three see the same findings.
 *
 *     EngineRun run;
 *     run_init(&run, jobs, n, &base_options, cache, spill);   // jobs[i] = run_job_new(path)
 *     run_set_rules(&run, cfg, &err);                          // each file's rules from cfg
 *     engine_run(&run, nthreads, on_result, ctx);              // lint, then each file in order
 *     run_free(&run);
 *
 * A run may have tens of thousands of files, so a job is small: its result (and, when a later
 * step needs them, its bytes) wait in the spill (engine/spill.h), not in memory. */
#ifndef GL_RUN_H
#define GL_RUN_H

#include <pthread.h>
#include "base/array.h"
#include "cache/cache.h"
#include "config/config.h"
#include "engine/engine.h"
#include "engine/project.h"
#include "engine/spill.h"
#include "engine/walk.h"
#include "nb/nb.h"

/* One file of a run. */
typedef struct RunJob {
    const char *path;
    uint64_t src_at;   /* the bytes that were linted, in the spill (SPILL_NONE: not kept) */
    uint64_t res_at;   /* the LintResult, lint_result_encode'd, in the spill */
    uint32_t src_len;
    uint32_t res_len;
    uint32_t rules;    /* its rules (configuration, flags, per-file-ignores): EngineRun.rules.items[rules] */
    int16_t read_errno; /* not linted: the read's errno, -1 for an internal error, or RUN_NB_* */
    bool nb;           /* a notebook: src_at holds its blob (nb.h), or with RUN_NB_* the reason it was not linted */
    bool done;         /* linted: res_at holds its result */
    bool cached;       /* served from the cache */
} RunJob;

/* read_errno of a notebook that was not linted: its reason is in the spill at src_at. */
#define RUN_NB_BROKEN (-2) /* not a readable nbformat 4 notebook: an error */
#define RUN_NB_OTHER (-3)  /* a notebook of another language: a note */

/* The files linted together in one run, and what they share. */
typedef struct EngineRun {
    RunJob *jobs;
    uint32_t n;
    LintOptions base;     /* the flags' options; each file's rules replace base.rules */
    Array(RuleSet) rules; /* the distinct rule sets of the files */
    Cache *cache;         /* may be NULL */
    const char *cache_dir; /* with cache NULL: the cache is opened from here (into cache; the caller
                            * closes it) when the first helper is read from disk (the language
                            * server: a document that imports nothing never opens one) */
    Spill *spill;
    Project *proj;        /* files linted together (engine/project.h); NULL when alone */
    RunJob *found;        /* the helpers read from disk: the project's files n.. (summaries only) */
    uint32_t n_found;
    pthread_mutex_t mu;   /* guards proj while the workers lint */
    bool keep_src;        /* keep every file's bytes (debug verify), not only those a later step needs */
    bool alone;           /* no project: each file on its own, no helpers from disk (debug verify) */
    /* An editor's document (the language server): file 0's text is already in the spill (src_at),
     * in doc_lang (a notebook's cells joined and masked are Python), never read from disk, never
     * through the cache; with doc set, it is linted with engine_lint_doc on it (an incremental
     * parse). false for a run of files on disk. */
    bool given;
    LintDoc *doc;
    SourceLang doc_lang;
    LintResult doc_result; /* the document's latest lint, whole (comments included); run_take_doc_result */
    bool has_doc_result;
    char cwd[4096];       /* the working folder when the run began ("" if unknown): every file is
                           * opened through it, so nothing depends on the process's cwd once linting
                           * has begun (libclang's driver may change it) */
} EngineRun;

void run_init(EngineRun *run, RunJob *jobs, uint32_t n, const LintOptions *base, Cache *cache, Spill *spill);
void run_free(EngineRun *run);
/* A job for path, nothing in the spill yet. */
RunJob run_job_new(const char *path);
/* Gives every file of the run the rules its configuration (and the flags in base) says. Returns
 * 0, or -1 with *err when a configuration file cannot be read. */
int run_set_rules(EngineRun *run, Config *cfg, ConfigError *err);
/* The options job j of the run is linted with (its rules; the project's summaries when linting
 * again, e.g. after a fix, are added by project_attach). */
LintOptions run_options(const EngineRun *run, const RunJob *j);

/* Lints every file of the run, then lints again, in rounds, the files whose calls reach a function
 * of another file (engine/project.h). The helpers they import from files not given (pre-commit
 * passes only the changed ones) are read from disk and linted for their summaries only, so a
 * file's findings do not depend on which files came with it. The project stays in run->proj
 * (a fix re-lints files against it); run_free frees it. */
void run_lint(EngineRun *run, int nthreads);
/* The result of linted file j back from the spill, and with src its bytes when they were kept
 * (else *src is NULL). Returns 0, or -1 with errno when the spill cannot be read back. */
int run_job_load(const EngineRun *run, const RunJob *j, LintResult *res, char **src, size_t *len);

/* The document's final result (EngineRun.given), moved to *out (the caller frees it). false when it
 * was not linted (a tool failure). */
bool run_take_doc_result(EngineRun *run, LintResult *out);

/* Called by engine_run for each file of the run, in order, once every file is linted. j->read_errno
 * says whether it was linted; run_job_load reads its result. A non-zero return stops the loop. */
typedef int (*RunResultFn)(void *ctx, EngineRun *run, uint32_t i, RunJob *j);
/* run_lint, then on_result for every file. Returns on_result's first non-zero answer, or 0. */
int engine_run(EngineRun *run, int nthreads, RunResultFn on_result, void *ctx);

/* The files a run of paths[0..n) lints: directories walked (gitignore, the configuration's
 * exclude; a path named explicitly is excluded only with force_exclude), C++ headers added, sorted.
 * Problems with paths go to on_err. Returns 0, or -1 with *err when a configuration file is broken
 * (the list is then empty). */
int run_walk(const char *const *paths, int n, Config *cfg, bool force_exclude, WalkList *out, WalkErrFn on_err,
             void *ctx, ConfigError *err);


/* *src[0..*len) is a .ipynb file's bytes (gl_malloc'd). On NB_OK they are replaced by the notebook's
 * blob (nb.h: nb_blob_encode; its code is what is linted). Otherwise note gets the one-line reason
 * and *src is left alone. */
NbStatus run_nb_load(char **src, size_t *len, char *note, size_t notesz);

#endif
