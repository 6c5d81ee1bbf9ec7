/* A LintResult as bytes and back: what the cache stores, and how the CLI keeps a finished file's
 * result small (the lint's own arena also holds the file's whole IR). */
#ifndef GL_RESULT_CODEC_H
#define GL_RESULT_CODEC_H

#include "base/strbuf.h"
#include "engine/engine.h"

/* Appends the encoding of r to out: findings (with related notes, fixes, traces), notes, flags,
 * exported summaries and imported calls. Not the comment spans (only editors use them). */
void lint_result_encode(StrBuf *out, const LintResult *r);
/* Decodes a blob of lint_result_encode into *out (its own arena; free with lint_result_free,
 * also after a failure). Every length and count is checked against the blob: damaged input
 * answers -1 with an empty result and never reads past it. */
int lint_result_decode(const void *blob, size_t len, LintResult *out);

#endif
