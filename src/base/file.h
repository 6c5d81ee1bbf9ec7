/* Reading a whole file: the one reader every part of gradleak uses for source, settings,
 * notebooks, records and headers.
 *
 *     size_t len;
 *     char *src = gl_read_file(path, GL_READ_ANY_SIZE, &len);
 *     if (!src) report(path, strerror(errno));   // EISDIR, ENODEV (FIFO, socket), EFBIG, EIO, ...
 *     ... src[len] == 0 ...
 *     gl_free(src);
 */
#ifndef GL_FILE_H
#define GL_FILE_H

#include "base/base.h"

#define GL_READ_ANY_SIZE ((size_t)UINT32_MAX / 2) /* the largest file a span can address */

/* The bytes of the regular file at path, NUL-terminated (*len excludes the NUL), or NULL with errno
 * set: a directory is EISDIR, a FIFO, socket or device ENODEV (opening never waits for a writer),
 * a file over max bytes EFBIG, a read error EIO. */
char *gl_read_file(const char *path, size_t max, size_t *len);

#endif
