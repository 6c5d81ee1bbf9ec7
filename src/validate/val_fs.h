/* Files for validation runs: the fresh working copy of the user's project, and removing it. */
#ifndef GL_VAL_FS_H
#define GL_VAL_FS_H

#include "base/base.h"

/* Copies the tree at src into dst (created), skipping version-control folders, caches and
 * virtualenvs; symlinks are recreated as symlinks. Iterative (no recursion on the tree's depth).
 * Returns 0, or -1 with *why (gl_free) when it fails or the copy would exceed cap bytes. */
int val_copy_tree(const char *src, const char *dst, uint64_t cap, char **why);
/* rm -rf, iterative, never following symlinks. Best effort. */
void val_remove_tree(const char *path);
/* Writes len bytes to path (created 0600, truncated). Returns 0 or -1 (errno set). */
int val_write_file(const char *path, const char *data, size_t len);

#endif
