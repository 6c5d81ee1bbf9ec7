/* The validation history (table validation_runs): append one run, list them. */
#include <stdio.h>
#include <time.h>
#include "cache/cache.h"
#include "cache/cache_db.h"
#include "cache/history.h"

/* Opens the database of cache_dir for the history, creating the folder like cache_open does. */
static sqlite3 *history__open(const char *cache_dir, char *err, size_t err_size)
{
    char *dir = cache_dir ? gl_strdup(cache_dir) : cache_dir_default(".");
    /* cache_open makes the folder, CACHEDIR.TAG and the schema, and says what went wrong */
    Cache *c = cache_open(dir);
    bool usable = cache_enabled(c);
    if (!usable) snprintf(err, err_size, "%s", cache_warning(c) ? cache_warning(c) : "the cache cannot be opened");
    cache_close(c);
    sqlite3 *db = NULL;
    if (usable) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, CACHE_DB_NAME);
        int version = 0;
        int rc = cache_db_open(path, &db, &version);
        if (rc != SQLITE_OK || version != CACHE_SCHEMA_VERSION) {
            snprintf(err, err_size, "%s: %s", path, rc != SQLITE_OK ? sqlite3_errstr(rc) : "schema from a newer gradleak");
            if (db) sqlite3_close_v2(db);
            db = NULL;
        }
    }
    gl_free(dir);
    return db;
}

int history_add_validation(const char *cache_dir, const ValidationRun *run, char *err, size_t err_size)
{
    if (!run || !run->path || !run->rule || !run->verdict) {
        snprintf(err, err_size, "history_add_validation: path, rule and verdict are required");
        return -1;
    }
    sqlite3 *db = history__open(cache_dir, err, err_size);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "INSERT INTO validation_runs (path, rule, line, device, torch_version, iterations, "
                                "leaky_bytes_per_iter, fixed_bytes_per_iter, r2, verdict, duration_s, time) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, run->path, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, run->rule, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, run->line);
        sqlite3_bind_text(st, 4, run->device, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, run->torch_version, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 6, run->iterations);
        sqlite3_bind_double(st, 7, run->leaky_bytes_per_iter);
        sqlite3_bind_double(st, 8, run->fixed_bytes_per_iter);
        sqlite3_bind_double(st, 9, run->r2);
        sqlite3_bind_text(st, 10, run->verdict, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 11, run->duration_s);
        sqlite3_bind_int64(st, 12, run->time ? run->time : (int64_t)time(NULL));
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, err_size, "cannot record the validation run in the cache database: %s", sqlite3_errmsg(db));
        if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close_v2(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static const char *history__text(sqlite3_stmt *st, int col) { return (const char *)sqlite3_column_text(st, col); }

int history_each_validation(const char *cache_dir, HistoryFn fn, void *ctx, char *err, size_t err_size)
{
    sqlite3 *db = history__open(cache_dir, err, err_size);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT path, rule, line, device, torch_version, iterations, leaky_bytes_per_iter, "
                                "fixed_bytes_per_iter, r2, verdict, duration_s, time FROM validation_runs ORDER BY id",
                                -1, &st, NULL);
    int rows = 0;
    while (rc == SQLITE_OK) {
        int s = sqlite3_step(st);
        if (s == SQLITE_DONE) break;
        if (s != SQLITE_ROW) {
            rc = s;
            break;
        }
        ValidationRun r;
        r.path = history__text(st, 0);
        r.rule = history__text(st, 1);
        r.line = (uint32_t)sqlite3_column_int64(st, 2);
        r.device = history__text(st, 3);
        r.torch_version = history__text(st, 4);
        r.iterations = (uint32_t)sqlite3_column_int64(st, 5);
        r.leaky_bytes_per_iter = sqlite3_column_double(st, 6);
        r.fixed_bytes_per_iter = sqlite3_column_double(st, 7);
        r.r2 = sqlite3_column_double(st, 8);
        r.verdict = history__text(st, 9);
        r.duration_s = sqlite3_column_double(st, 10);
        r.time = sqlite3_column_int64(st, 11);
        rows++;
        if (fn(ctx, &r)) break;
    }
    if (rc != SQLITE_OK) snprintf(err, err_size, "cannot read the validation history: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close_v2(db);
    return rc == SQLITE_OK ? rows : -1;
}
