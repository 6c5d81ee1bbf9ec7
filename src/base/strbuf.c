/* Growable strings, UTF-8/UTF-16 counting and line indexes. */
#include <stdio.h>
#include "base/strbuf.h"

void sb_init(StrBuf *sb) { sb->data = NULL, sb->len = 0, sb->cap = 0; }

void sb_free(StrBuf *sb)
{
    gl_free(sb->data);
    sb_init(sb);
}

void sb_clear(StrBuf *sb)
{
    sb->len = 0;
    if (sb->data) sb->data[0] = 0;
}

static void sb__reserve(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) cap *= 2;
    sb->data = gl_realloc(sb->data, cap);
    sb->cap = cap;
}

void sb_append(StrBuf *sb, const char *s, size_t n)
{
    sb__reserve(sb, n);
    if (n) memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}

void sb_puts(StrBuf *sb, const char *s) { sb_append(sb, s, strlen(s)); }
void sb_putc(StrBuf *sb, char c) { sb_append(sb, &c, 1); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0) {
        sb__reserve(sb, (size_t)n);
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

char *sb_take(StrBuf *sb)
{
    char *d = sb->data ? sb->data : gl_strdup("");
    sb_init(sb);
    return d;
}

int utf8_seq_len(const unsigned char *s, size_t avail)
{
    if (!avail) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n;
    unsigned min;
    if ((c & 0xE0) == 0xC0) n = 2, min = 0x80;
    else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800;
    else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000;
    else return 0;
    if ((size_t)n > avail) return 0;
    unsigned cp = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

size_t utf8_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        int k = utf8_seq_len((const unsigned char *)s + i, n - i);
        i += k ? (size_t)k : 1;
        count++;
    }
    return count;
}

size_t utf16_count(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        int k = utf8_seq_len((const unsigned char *)s + i, n - i);
        count += k == 4 ? 2 : 1;
        i += k ? (size_t)k : 1;
    }
    return count;
}

void lineindex_build(LineIndex *li, const char *src, size_t len)
{
    uint32_t cap = 64, n = 0;
    uint32_t *starts = gl_malloc(cap * sizeof *starts);
    starts[n++] = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c != '\n' && c != '\r') continue;
        if (c == '\r' && i + 1 < len && src[i + 1] == '\n') i++;
        if (n == cap) cap *= 2, starts = gl_realloc(starts, cap * sizeof *starts);
        starts[n++] = (uint32_t)(i + 1);
    }
    li->starts = starts, li->n = n;
}

void lineindex_free(LineIndex *li)
{
    gl_free(li->starts);
    li->starts = NULL, li->n = 0;
}

uint32_t lineindex_line_of(const LineIndex *li, uint32_t offset)
{
    uint32_t lo = 0, hi = li->n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (li->starts[mid] <= offset) lo = mid;
        else hi = mid;
    }
    return lo;
}

uint32_t lineindex_line_len(const LineIndex *li, const char *src, size_t len, uint32_t line)
{
    if (line >= li->n) return 0;
    uint32_t s = li->starts[line], e = s;
    while (e < len && src[e] != '\n' && src[e] != '\r') e++;
    return e - s;
}
