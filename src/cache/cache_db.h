/* Internal to src/cache/: the database helpers cache.c and history.c share (SQLite types). */
#ifndef GL_CACHE_DB_H
#define GL_CACHE_DB_H

#include <sqlite3.h>
#include "base/base.h"

/* Opens db_path read-write (creating it), sets the busy timeout, WAL and the schema (under
 * BEGIN IMMEDIATE). Returns SQLITE_OK with *out and *version (CACHE_SCHEMA_VERSION, or a newer
 * one the caller must not touch), or an SQLite error code with *out NULL. */
int cache_db_open(const char *db_path, sqlite3 **out, int *version);
/* Removes a damaged database and its -wal/-shm files (the next open starts afresh). */
void cache_db_discard(const char *db_path);
/* True for SQLITE_CORRUPT and SQLITE_NOTADB (extended codes included). */
bool cache_db_is_corruption(int rc);
/* "0.1.0+<hash of the executable>": results of one build are not served to another. */
const char *cache_tool_id(void);

#endif
