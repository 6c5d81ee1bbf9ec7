/* The SQLite side of the cache: opening (folder, CACHEDIR.TAG, WAL, schema), lookups, the batched
 * write, and turning every database failure into "no cache" with one warning. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "base/array.h"
#include "cache/cache.h"
#include "cache/cache_db.h"

static const char cachedir_tag[] =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by gradleak.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n";

/* One result waiting for cache_flush. */
typedef struct Pending {
    char *path;
    uint64_t settings, content, size;
    void *blob;
    size_t len;
} Pending;

struct Cache {
    sqlite3 *db;           /* NULL when disabled */
    sqlite3_stmt *get;
    char *dir;
    char *db_path;
    char warning[768];
    bool corrupt;          /* seen SQLITE_CORRUPT/NOTADB: move the file aside at close */
    pthread_mutex_t mu;
    Array(Pending) pending;
};

/* ---- the tool's identity: a rebuilt binary must not trust results of the old one ---- */

static pthread_once_t tool_once = PTHREAD_ONCE_INIT;
static char tool_id[64];

static void cache__tool_init(void)
{
    /* The version string alone is not enough during development (the analysis changes under one
     * version): hash the executable. It is a few MB, read once per run. */
    uint64_t h = 0;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    bool ok = false;
    if (fd >= 0) {
        StrBuf sb;
        sb_init(&sb);
        char buf[1 << 16];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) sb_append(&sb, buf, (size_t)n);
        ok = n == 0 && sb.len > 0;
        if (ok) h = cache_hash64(sb.data, sb.len, 0);
        sb_free(&sb);
        close(fd);
    }
    if (!ok) h = cache_hash64(__DATE__ " " __TIME__, strlen(__DATE__ " " __TIME__), 1);
    snprintf(tool_id, sizeof tool_id, "%s+%016llx", GL_VERSION, (unsigned long long)h);
}

const char *cache_tool_id(void)
{
    pthread_once(&tool_once, cache__tool_init);
    return tool_id;
}

/* ---- warnings ---- */

static void cache__warn(Cache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cache__warn(Cache *c, const char *fmt, ...)
{
    if (c->warning[0]) return; /* the first one explains it; later ones are consequences */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warning, sizeof c->warning, fmt, ap);
    va_end(ap);
}

bool cache_db_is_corruption(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

/* Turns the cache off after a database error, with the warning that says what happened. */
static void cache__fail(Cache *c, int rc, const char *doing)
{
    const char *why = c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc);
    if (cache_db_is_corruption(rc)) {
        c->corrupt = true;
        cache__warn(c, "the cache database %s is damaged (%s); linting without the cache (it is rebuilt on the next run)",
                    c->db_path, why);
    } else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
        cache__warn(c, "the cache database %s is locked by another process (%s for %d ms); %s",
                    c->db_path, doing, CACHE_BUSY_TIMEOUT_MS,
                    !strcmp(doing, "writing") ? "results of this run are not cached" : "linting without the cache");
    } else if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_PERM) {
        cache__warn(c, "the cache database %s cannot be written (%s); %s (check its permissions, or set "
                    "GRADLEAK_CACHE_DIR, or use --no-cache)",
                    c->db_path, why, !strcmp(doing, "writing") ? "results of this run are not cached" : "linting without the cache");
    } else {
        cache__warn(c, "the cache database %s failed while %s (%s); linting without the cache", c->db_path, doing, why);
    }
    if (c->get) sqlite3_finalize(c->get);
    c->get = NULL;
    if (c->db) sqlite3_close_v2(c->db);
    c->db = NULL;
}

/* ---- opening ---- */

/* mkdir -p for the cache folder, then CACHEDIR.TAG and a .gitignore that ignores everything
 * (as ruff does), each written atomically so concurrent first runs see either nothing or all. */
static int cache__make_dir(Cache *c)
{
    StrBuf p;
    sb_init(&p);
    sb_puts(&p, c->dir);
    for (size_t i = 1; i <= p.len; i++) {
        if (i < p.len && p.data[i] != '/') continue;
        char save = p.data[i];
        p.data[i] = 0;
        if (mkdir(p.data, 0777) != 0 && errno != EEXIST) {
            cache__warn(c, "cannot create the cache folder %s: %s; linting without the cache (set GRADLEAK_CACHE_DIR, "
                        "or use --no-cache)", p.data, strerror(errno));
            sb_free(&p);
            return -1;
        }
        p.data[i] = save;
    }
    sb_free(&p);
    static const struct {
        const char *name, *text;
    } files[] = {{"CACHEDIR.TAG", cachedir_tag}, {".gitignore", "# Created by gradleak automatically.\n*\n"}};
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        char path[4096], tmp[4200];
        snprintf(path, sizeof path, "%s/%s", c->dir, files[i].name);
        if (access(path, F_OK) == 0) continue;
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f) continue; /* a read-only folder: the database open reports it */
        bool ok = fputs(files[i].text, f) >= 0;
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) unlink(tmp);
    }
    return 0;
}

static int cache__exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, NULL, NULL, NULL); }

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS files ("
    "  path TEXT NOT NULL,"            /* absolute, lexically normalised */
    "  tool TEXT NOT NULL,"            /* cache_tool_id(): version + build */
    "  settings INTEGER NOT NULL,"     /* hash of everything that changes this file's findings */
    "  content INTEGER NOT NULL,"      /* cache_hash64 of the bytes */
    "  size INTEGER NOT NULL,"
    "  result BLOB NOT NULL,"          /* engine/result_codec.h: lint_result_encode */
    "  checksum INTEGER NOT NULL,"     /* cache_hash64 of result: damage inside a page is a miss */
    "  used INTEGER NOT NULL,"         /* unix time of the last write */
    "  PRIMARY KEY (path, tool, settings)"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS validation_runs ("
    "  id INTEGER PRIMARY KEY,"
    "  path TEXT NOT NULL, rule TEXT NOT NULL, line INTEGER NOT NULL,"
    "  device TEXT, torch_version TEXT, iterations INTEGER,"
    "  leaky_bytes_per_iter REAL, fixed_bytes_per_iter REAL, r2 REAL,"
    "  verdict TEXT NOT NULL, duration_s REAL, time INTEGER NOT NULL"
    ");"
    "CREATE INDEX IF NOT EXISTS validation_runs_finding ON validation_runs (path, rule, line);";

int cache_db_open(const char *db_path, sqlite3 **out, int *version)
{
    sqlite3 *db = NULL;
    *out = NULL;
    /* (not SQLITE_OPEN_NOFOLLOW: it refuses a link anywhere in the path, so a project under a
     * linked home folder would lose its cache; cache_open checks the files themselves) */
    int rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (db) sqlite3_close_v2(db);
        return rc;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, CACHE_BUSY_TIMEOUT_MS);
    /* Reading the header is the first real I/O: garbage and truncation show up here. */
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *version = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) {
        sqlite3_close_v2(db);
        return rc;
    }
    if (*version != CACHE_SCHEMA_VERSION) {
        /* New (or older) database: WAL first (persistent, needs no transaction), then the schema
         * under the write lock, checking the version again once we hold it. */
        rc = cache__exec(db, "PRAGMA journal_mode=WAL");
        if (rc == SQLITE_OK) rc = cache__exec(db, "BEGIN IMMEDIATE");
        if (rc == SQLITE_OK) {
            rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
            if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) *version = sqlite3_column_int(st, 0);
            sqlite3_finalize(st);
            if (rc == SQLITE_OK && *version < CACHE_SCHEMA_VERSION) {
                /* older layouts hold nothing worth migrating: it is a cache */
                if (*version > 0) rc = cache__exec(db, "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS validation_runs;");
                if (rc == SQLITE_OK) rc = cache__exec(db, schema_sql);
                if (rc == SQLITE_OK) {
                    char sql[64];
                    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", CACHE_SCHEMA_VERSION);
                    rc = cache__exec(db, sql);
                }
                if (rc == SQLITE_OK) *version = CACHE_SCHEMA_VERSION;
            }
            if (rc == SQLITE_OK) rc = cache__exec(db, "COMMIT");
            else cache__exec(db, "ROLLBACK");
        }
        if (rc != SQLITE_OK) {
            sqlite3_close_v2(db);
            return rc;
        }
    }
    /* WAL with synchronous=NORMAL survives a killed process (not a power cut: it is a cache). */
    cache__exec(db, "PRAGMA synchronous=NORMAL");
    *out = db;
    return SQLITE_OK;
}

/* Moves a damaged database (and its WAL and shared-memory files) out of the way. */
void cache_db_discard(const char *db_path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s%s", db_path, suffixes[i]);
        unlink(p);
    }
}

/* The folder the user chose ($GRADLEAK_CACHE_DIR, read by the command line), or NULL. */
static const char *cache_chosen;

void cache_choose_dir(const char *dir) { cache_chosen = dir && dir[0] ? dir : NULL; }

char *cache_dir_default(const char *root)
{
    if (cache_chosen) return gl_strdup(cache_chosen);
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s/.gradleak_cache", root ? root : ".");
    return sb_take(&sb);
}

Cache *cache_open(const char *dir)
{
    Cache *c = gl_calloc(1, sizeof *c);
    c->dir = gl_strdup(dir);
    StrBuf p;
    sb_init(&p);
    sb_printf(&p, "%s/%s", dir, CACHE_DB_NAME);
    c->db_path = sb_take(&p);
    pthread_mutex_init(&c->mu, NULL);
    array_init(&c->pending);
    /* The project's own cache folder as a symbolic link is not followed (a repository could ship
     * `.gradleak_cache -> ~/somewhere`); GRADLEAK_CACHE_DIR names a folder the user chose. */
    struct stat st;
    if (!(cache_chosen && !strcmp(cache_chosen, dir)) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
        cache__warn(c, "the cache folder %s is a symbolic link; linting without the cache (remove it, or set "
                    "GRADLEAK_CACHE_DIR)", dir);
        return c;
    }
    if (cache__make_dir(c) < 0) return c;
    /* Nor a database, WAL, shared-memory or journal file that is a link or not a regular file:
     * SQLite would write its tables into, or truncate, whatever it names. */
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
        char p2[4200];
        snprintf(p2, sizeof p2, "%s%s", c->db_path, suffixes[i]);
        if (lstat(p2, &st) == 0 && !S_ISREG(st.st_mode)) {
            cache__warn(c, "the cache database file %s is %s; linting without the cache (remove it)", p2,
                        S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
            return c;
        }
    }
    int version = 0;
    int rc = cache_db_open(c->db_path, &c->db, &version);
    if (rc != SQLITE_OK) {
        cache__fail(c, rc, "opening");
        return c;
    }
    if (version != CACHE_SCHEMA_VERSION) {
        cache__warn(c, "the cache database %s has schema version %d, newer than this gradleak's %d; linting without "
                    "the cache (use another GRADLEAK_CACHE_DIR)", c->db_path, version, CACHE_SCHEMA_VERSION);
        sqlite3_close_v2(c->db);
        c->db = NULL;
        return c;
    }
    rc = sqlite3_prepare_v3(c->db,
                            "SELECT content, size, result, checksum FROM files WHERE path = ?1 AND tool = ?2 AND settings = ?3",
                            -1, SQLITE_PREPARE_PERSISTENT, &c->get, NULL);
    if (rc != SQLITE_OK) cache__fail(c, rc, "reading");
    return c;
}

bool cache_enabled(const Cache *c) { return c && c->db; }

const char *cache_warning(const Cache *c) { return c && c->warning[0] ? c->warning : NULL; }

int cache_get(Cache *c, const char *path, uint64_t settings, uint64_t content, uint64_t size, void **blob,
              size_t *len)
{
    *blob = NULL;
    *len = 0;
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    int hit = 0;
    if (c->db) {
        sqlite3_stmt *st = c->get;
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, cache_tool_id(), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)settings);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            const void *b = sqlite3_column_blob(st, 2);
            int n = sqlite3_column_bytes(st, 2);
            if ((uint64_t)sqlite3_column_int64(st, 0) == content && (uint64_t)sqlite3_column_int64(st, 1) == size &&
                b && n > 0 && (uint64_t)sqlite3_column_int64(st, 3) == cache_hash64(b, (size_t)n, 0)) {
                *blob = gl_malloc((size_t)n);
                memcpy(*blob, b, (size_t)n);
                *len = (size_t)n;
                hit = 1;
            }
            sqlite3_reset(st);
        } else if (rc == SQLITE_DONE) {
            sqlite3_reset(st);
        } else {
            sqlite3_reset(st);
            cache__fail(c, rc, "reading");
        }
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void cache_put(Cache *c, const char *path, uint64_t settings, uint64_t content, uint64_t size, const void *blob,
               size_t len)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    if (c->db) {
        Pending p = {gl_strdup(path), settings, content, size, gl_malloc(len ? len : 1), len};
        memcpy(p.blob, blob, len);
        array_push(&c->pending, p);
    }
    pthread_mutex_unlock(&c->mu);
}

static void cache__drop_pending(Cache *c)
{
    for (uint32_t i = 0; i < c->pending.len; i++) {
        gl_free(c->pending.items[i].path);
        gl_free(c->pending.items[i].blob);
    }
    array_free(&c->pending);
}

int cache_flush(Cache *c)
{
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    int rc = SQLITE_OK;
    if (c->db && c->pending.len) {
        sqlite3_stmt *put = NULL;
        rc = cache__exec(c->db, "BEGIN IMMEDIATE");
        if (rc == SQLITE_OK)
            rc = sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO files (path, tool, settings, content, size, result, "
                                           "checksum, used) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                                    -1, &put, NULL);
        int64_t now = (int64_t)time(NULL);
        for (uint32_t i = 0; i < c->pending.len && rc == SQLITE_OK; i++) {
            const Pending *p = &c->pending.items[i];
            sqlite3_bind_text(put, 1, p->path, -1, SQLITE_STATIC);
            sqlite3_bind_text(put, 2, cache_tool_id(), -1, SQLITE_STATIC);
            sqlite3_bind_int64(put, 3, (sqlite3_int64)p->settings);
            sqlite3_bind_int64(put, 4, (sqlite3_int64)p->content);
            sqlite3_bind_int64(put, 5, (sqlite3_int64)p->size);
            sqlite3_bind_blob(put, 6, p->blob, (int)p->len, SQLITE_STATIC);
            sqlite3_bind_int64(put, 7, (sqlite3_int64)cache_hash64(p->blob, p->len, 0));
            sqlite3_bind_int64(put, 8, now);
            rc = sqlite3_step(put);
            if (rc == SQLITE_DONE) rc = SQLITE_OK;
            sqlite3_reset(put);
        }
        sqlite3_finalize(put);
        /* results of other builds of gradleak are dead weight */
        if (rc == SQLITE_OK) {
            sqlite3_stmt *del = NULL;
            rc = sqlite3_prepare_v2(c->db, "DELETE FROM files WHERE tool <> ?1", -1, &del, NULL);
            if (rc == SQLITE_OK) {
                sqlite3_bind_text(del, 1, cache_tool_id(), -1, SQLITE_STATIC);
                rc = sqlite3_step(del);
                if (rc == SQLITE_DONE) rc = SQLITE_OK;
            }
            sqlite3_finalize(del);
        }
        if (rc == SQLITE_OK) rc = cache__exec(c->db, "COMMIT");
        if (rc != SQLITE_OK) {
            if (c->db && !sqlite3_get_autocommit(c->db)) cache__exec(c->db, "ROLLBACK");
            cache__fail(c, rc, "writing");
        }
    }
    cache__drop_pending(c);
    pthread_mutex_unlock(&c->mu);
    return rc == SQLITE_OK ? 0 : -1;
}

void cache_close(Cache *c)
{
    if (!c) return;
    cache__drop_pending(c);
    if (c->get) sqlite3_finalize(c->get);
    if (c->db) sqlite3_close_v2(c->db);
    if (c->corrupt) cache_db_discard(c->db_path);
    pthread_mutex_destroy(&c->mu);
    gl_free(c->dir);
    gl_free(c->db_path);
    gl_free(c);
}

static int cache__check_row(void *ctx, int n, char **vals, char **names)
{
    GL_UNUSED(names);
    StrBuf *out = ctx;
    for (int i = 0; i < n; i++) sb_printf(out, "%s%s", i ? " " : "", vals[i] ? vals[i] : "NULL");
    sb_putc(out, '\n');
    return 0;
}

int cache_check(const char *dir, StrBuf *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, CACHE_DB_NAME);
    if (access(path, F_OK) != 0) {
        sb_printf(out, "%s: no cache database\n", path);
        return -1;
    }
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, CACHE_BUSY_TIMEOUT_MS);
        StrBuf res;
        sb_init(&res);
        rc = sqlite3_exec(db, "PRAGMA integrity_check", cache__check_row, &res, NULL);
        if (rc == SQLITE_OK) {
            sb_printf(out, "integrity: %s", res.data ? res.data : "(no answer)\n");
            if (!res.data || strcmp(res.data, "ok\n") != 0) rc = SQLITE_CORRUPT;
        }
        sb_free(&res);
        if (rc == SQLITE_OK) {
            sb_puts(out, "schema version: ");
            sqlite3_exec(db, "PRAGMA user_version", cache__check_row, out, NULL);
            sb_puts(out, "journal mode: ");
            sqlite3_exec(db, "PRAGMA journal_mode", cache__check_row, out, NULL);
            sb_puts(out, "files: ");
            sqlite3_exec(db, "SELECT count(*) FROM files", cache__check_row, out, NULL);
            sb_puts(out, "validation runs: ");
            sqlite3_exec(db, "SELECT count(*) FROM validation_runs", cache__check_row, out, NULL);
        }
    }
    if (rc != SQLITE_OK) sb_printf(out, "%s: %s\n", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close_v2(db);
    return rc == SQLITE_OK ? 0 : -1;
}
