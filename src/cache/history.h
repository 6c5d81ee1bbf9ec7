/* The validation history: one row per finding that `gradleak validate` ran, in the cache database
 * (.gradleak_cache/cache.db, table validation_runs). No SQLite types here. */
#ifndef GL_HISTORY_H
#define GL_HISTORY_H

#include "base/base.h"

/* One validation run of one finding. Strings are borrowed (copied on insert). */
typedef struct ValidationRun {
    const char *path;           /* the flagged file, as shown to the user */
    const char *rule;           /* "GL101" */
    uint32_t line;              /* 1-based line of the finding */
    const char *device;         /* "NVIDIA H100 80GB HBM3", "cpu" */
    const char *torch_version;  /* "2.11.0+cu128" */
    uint32_t iterations;        /* loop iterations measured */
    double leaky_bytes_per_iter; /* slope of the flagged code */
    double fixed_bytes_per_iter; /* slope with the rule's fix applied */
    double r2;                  /* fit of the leaky slope */
    const char *verdict;        /* "confirmed", "not reproduced", "inconclusive: <why>" */
    double duration_s;          /* wall time of both runs */
    int64_t time;               /* unix seconds; 0 = now */
} ValidationRun;

/* Appends one row to the history in cache_dir (NULL = cache_dir_default(".")), creating the folder
 * and the database when needed. Waits up to CACHE_BUSY_TIMEOUT_MS for a busy database. Returns 0,
 * or -1 with a one-line reason in err (the run's result stands; the history is best effort). */
int history_add_validation(const char *cache_dir, const ValidationRun *run, char *err, size_t err_size);

/* Calls fn for every stored run, oldest first (strings valid during the call only); stops early
 * when fn returns non-zero. Returns the number of rows visited, or -1 with err. */
typedef int (*HistoryFn)(void *ctx, const ValidationRun *run);
int history_each_validation(const char *cache_dir, HistoryFn fn, void *ctx, char *err, size_t err_size);

#endif
