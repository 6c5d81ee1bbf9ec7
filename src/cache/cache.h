/* The on-disk cache of lint results (opaque blobs; engine/result_codec.h makes them): `.gradleak_cache/` (with CACHEDIR.TAG) holding one SQLite
 * database. sqlite3.h stays inside src/cache/; callers see only this header.
 *
 * A result is served when tool version, settings hash, path, size and content hash all match.
 * Anything wrong with the database (corrupt, truncated, read-only, locked past the busy timeout,
 * a newer schema) turns the cache off for the run with ONE warning (cache_warning); results are
 * then exactly those of --no-cache. A database found corrupt is moved out of the way so the next
 * run starts a fresh one.
 *
 *     Cache *c = cache_open(dir);                 // never NULL
 *     if (cache_get(c, abs_path, settings, content, size, &blob, &n) == 1) { use blob; gl_free(blob); }
 *     cache_put(c, abs_path, settings, content, size, blob, n);   // queued in memory
 *     cache_flush(c);                             // one BEGIN IMMEDIATE transaction
 *     if (cache_warning(c)) fprintf(stderr, "gradleak: warning: %s\n", cache_warning(c));
 *     cache_close(c);
 */
#ifndef GL_CACHE_H
#define GL_CACHE_H

#include "base/strbuf.h"

/* Bumped whenever the tables change; an older database is rebuilt, a newer one is left alone. */
#define CACHE_SCHEMA_VERSION 1
/* How long a write waits for another process's transaction before giving up (ms). */
#define CACHE_BUSY_TIMEOUT_MS 3000
#define CACHE_DB_NAME "cache.db"

typedef struct Cache Cache;

/* The cache folder the user chose ($GRADLEAK_CACHE_DIR: the command line reads it and says it
 * here, once, before any thread starts; NULL or "" for none). It may be a symbolic link. */
void cache_choose_dir(const char *dir);
/* The chosen folder when there is one, else <root>/.gradleak_cache (root NULL = "."). gl_free it. */
char *cache_dir_default(const char *root);

/* Opens or creates the cache in dir (the folder, CACHEDIR.TAG and the schema). Never NULL: a cache
 * that cannot be used is returned disabled, with its warning set. Thread-safe afterwards: get and
 * put may be called from worker threads. */
Cache *cache_open(const char *dir);
/* Writes nothing that is still queued: call cache_flush first. NULL is fine. */
void cache_close(Cache *c);
bool cache_enabled(const Cache *c);
/* The one warning for the user ("...; linting without the cache"), or NULL. */
const char *cache_warning(const Cache *c);

/* Looks up the result stored for path under this settings hash. Returns 1 with *blob (gl_malloc'ed,
 * the caller frees it) and *len when size and content hash match, 0 otherwise (a miss, or the cache
 * is off). A database error turns the cache off (with the warning) and answers 0. */
int cache_get(Cache *c, const char *path, uint64_t settings, uint64_t content, uint64_t size, void **blob,
              size_t *len);
/* Queues a result to be written by cache_flush (copies blob). */
void cache_put(Cache *c, const char *path, uint64_t settings, uint64_t content, uint64_t size, const void *blob,
               size_t len);
/* Writes the queued results in one transaction (BEGIN IMMEDIATE, waiting up to the busy timeout).
 * Returns 0, or -1 (nothing written; the warning is set). */
int cache_flush(Cache *c);

/* PRAGMA integrity_check and the row counts, as text for `gradleak debug cache` and the tests.
 * Returns 0 when the database is sound ("ok"), -1 otherwise (out says why). */
int cache_check(const char *dir, StrBuf *out);

/* 64-bit hash of data (content hashes, blob checksums). Not cryptographic. */
uint64_t cache_hash64(const void *data, size_t len, uint64_t seed);

#endif
