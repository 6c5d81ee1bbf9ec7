/* Unified diffs (`diff -u` / `git diff` format) of two versions of a file, for `check --diff`. */
#ifndef GL_UDIFF_H
#define GL_UDIFF_H

#include "base/strbuf.h"

/* Appends the unified diff of a[0..alen) -> b[0..blen) to out, with `--- path` / `+++ path`
 * headers and `context` lines of context around each change. Lines keep their own terminators
 * ("\n", "\r\n", "\r"), so `patch` reproduces b byte for byte; a last line without one is followed
 * by "\ No newline at end of file". Appends nothing when a and b are equal. The edit script is
 * Myers' shortest one; past a few thousand changed lines it falls back to replacing the changed
 * middle in one hunk (still a correct diff). */
void udiff(StrBuf *out, const char *path, const char *a, size_t alen, const char *b, size_t blen, int context);

#endif
