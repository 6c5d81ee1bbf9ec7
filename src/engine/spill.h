/* Where a project run (engine/run.h) parks what it has finished with until the output needs it
 * again (a file's encoded result, the bytes of a file with findings): an unlinked temporary file, so
 * that the memory of a run does not grow with the number of its files. */
#ifndef GL_SPILL_H
#define GL_SPILL_H

#include "base/base.h"

/* A handle that refers to nothing. */
#define SPILL_NONE UINT64_MAX

typedef struct Spill Spill;

/* A new, empty spill in the folder dir ($TMPDIR as the command line read it; NULL or "": /tmp). It
 * never fails: without a temporary file (or after a write to it failed: a full disk), the bytes are
 * kept in memory instead. */
Spill *spill_open(const char *dir);
/* The same, kept in memory from the start (the debug commands, which hold a few files). */
Spill *spill_open_memory(void);
void spill_close(Spill *s);

/* Copies data[0..len) into the spill; returns its handle. Thread-safe. */
uint64_t spill_put(Spill *s, const void *data, size_t len);
/* The len bytes put under handle at, NUL-terminated, gl_malloc'd (gl_free them); NULL with errno
 * set when the temporary file cannot be read back. Thread-safe. */
char *spill_get(Spill *s, uint64_t at, size_t len);

#endif
