/* Growable byte strings and small text helpers (UTF-8, line index). */
#ifndef GL_STRBUF_H
#define GL_STRBUF_H

#include <stdarg.h>
#include "base/base.h"

typedef struct StrBuf {
    char *data; /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
} StrBuf;

void sb_init(StrBuf *sb);
void sb_free(StrBuf *sb);
void sb_clear(StrBuf *sb);
void sb_append(StrBuf *sb, const char *s, size_t n);
void sb_puts(StrBuf *sb, const char *s);
void sb_putc(StrBuf *sb, char c);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
char *sb_take(StrBuf *sb); /* hands the buffer to the caller (gl_free it); sb is reset */

/* Length in bytes of the valid UTF-8 sequence at s (1..4), or 0 when invalid/truncated. */
int utf8_seq_len(const unsigned char *s, size_t avail);
/* Number of code points in s[0..n) counting each invalid byte as one. */
size_t utf8_count(const char *s, size_t n);
/* Number of UTF-16 code units for s[0..n) (invalid bytes count as one each, as U+FFFD). */
size_t utf16_count(const char *s, size_t n);

/* Line starts of a buffer; "\n", "\r\n" and lone "\r" all end a line. */
typedef struct LineIndex {
    uint32_t *starts; /* starts[i] = byte offset of line i (0-based) */
    uint32_t n;
} LineIndex;

void lineindex_build(LineIndex *li, const char *src, size_t len);
void lineindex_free(LineIndex *li);
uint32_t lineindex_line_of(const LineIndex *li, uint32_t offset); /* 0-based line */
/* Byte length of line i without its terminator. */
uint32_t lineindex_line_len(const LineIndex *li, const char *src, size_t len, uint32_t line);

#endif
