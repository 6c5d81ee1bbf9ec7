/* LSP framing: reads `Content-Length`-framed messages from an untrusted stream, writes them back. */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>
#include "lsp/lsp_io.h"

#define CL_NAME "content-length"
#define CL_NAME_LEN 14

static ssize_t lsp__read_fd(void *ctx, char *buf, size_t cap)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        return n;
    }
}

void lsp_reader_init(LspReader *r, LspReadFn fn, void *ctx, int fd)
{
    memset(r, 0, sizeof *r);
    r->read = fn;
    r->ctx = ctx;
    r->fd = fd;
    r->max_body = LSP_MAX_BODY;
    r->cap = 4096; /* never NULL: pointer arithmetic on it is always defined */
    r->buf = gl_malloc(r->cap);
}

void lsp_reader_init_fd(LspReader *r, int fd)
{
    lsp_reader_init(r, lsp__read_fd, NULL, fd);
    r->ctx = &r->fd;
}

void lsp_reader_free(LspReader *r)
{
    gl_free(r->buf);
    r->buf = NULL;
    r->pos = r->len = r->cap = 0;
}

/* Reads more input after the unread bytes. Returns the number of bytes added; 0 at end of input
 * (a read error is treated as the end: there is nobody left to answer). */
static size_t lsp__fill(LspReader *r)
{
    if (r->eof) return 0;
    if (r->pos && (r->pos == r->len || r->pos >= r->cap / 2)) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        /* a header block is at most LSP_MAX_HEADER bytes and a body at most max_body, so the
         * buffer never needs more than both plus the look-ahead after a body */
        size_t limit = r->max_body + 2 * LSP_MAX_HEADER + 4096;
        size_t cap = r->cap ? r->cap * 2 : 65536;
        if (cap > limit) cap = limit;
        if (cap <= r->cap) {
            /* cannot happen (every path consumes bytes before the buffer is this full); recover
             * by dropping what is buffered */
            if (NEVER(1)) r->pos = r->len = 0;
            cap = r->cap;
        }
        r->buf = gl_realloc(r->buf, cap);
        r->cap = cap;
    }
    ssize_t n = r->read(r->ctx, r->buf + r->len, r->cap - r->len);
    if (n <= 0) {
        r->eof = true;
        return 0;
    }
    r->len += (size_t)n;
    return (size_t)n;
}

/* Offset of the first case-insensitive occurrence of "content-length" in s[0..n), or -1. */
static long lsp__find_cl(const char *s, size_t n)
{
    for (size_t i = 0; i + CL_NAME_LEN <= n; i++)
        if ((s[i] == 'c' || s[i] == 'C') && !strncasecmp(s + i, CL_NAME, CL_NAME_LEN)) return (long)i;
    return -1;
}

/* Is there a complete header line `Content-Length: <digits>` ending in a raw line break that starts
 * in s[0..n) (it may run on into s[n..avail))? Such a line cannot be part of a JSON text (raw line
 * breaks never occur inside JSON strings, and letters outside strings spell only true/false/null),
 * so it is the start of the next message. Returns its offset or -1. */
static long lsp__find_header_line(const char *s, size_t n, size_t avail)
{
    for (size_t i = 0; i < n;) {
        long k = lsp__find_cl(s + i, avail - i);
        if (k < 0 || i + (size_t)k >= n) return -1;
        size_t p = i + (size_t)k + CL_NAME_LEN;
        if (p < avail && s[p] == ':') {
            p++;
            while (p < avail && (s[p] == ' ' || s[p] == '\t')) p++;
            size_t digits = p;
            while (p < avail && isdigit((unsigned char)s[p])) p++;
            if (p > digits) {
                while (p < avail && (s[p] == ' ' || s[p] == '\t')) p++;
                if (p < avail && (s[p] == '\r' || s[p] == '\n')) return (long)(i + (size_t)k);
            }
        }
        i += (size_t)k + 1;
    }
    return -1;
}

/* Could s[0..avail) be the start of such a header line, cut off by the end of the data read so far? */
static bool lsp__partial_header_line(const char *s, size_t avail)
{
    size_t k = 0;
    for (; k < avail && k < CL_NAME_LEN; k++)
        if (tolower((unsigned char)s[k]) != CL_NAME[k]) return false;
    if (k == avail) return true;
    if (s[k++] != ':') return false;
    while (k < avail && (s[k] == ' ' || s[k] == '\t')) k++;
    while (k < avail && isdigit((unsigned char)s[k])) k++;
    while (k < avail && (s[k] == ' ' || s[k] == '\t')) k++;
    return k == avail;
}

/* End of the header block in s[0..n): the offset of the blank line's first byte, with *sep the
 * length of the terminator ("\r\n\r\n" or, leniently, "\n\n" / "\n\r\n"). -1 if not complete. */
static long lsp__header_end(const char *s, size_t n, size_t *sep)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\n') continue;
        size_t j = i + 1;
        if (j < n && s[j] == '\r') j++;
        if (j < n && s[j] == '\n') {
            size_t start = i > 0 && s[i - 1] == '\r' ? i - 1 : i;
            *sep = j + 1 - start;
            return (long)start;
        }
    }
    return -1;
}

static bool lsp__is_token_char(char c)
{
    return isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static LspReadStatus lsp__error(LspReader *r, const char **why, bool resync, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static LspReadStatus lsp__error(LspReader *r, const char **why, bool resync, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->resync = resync;
    *why = r->why;
    return LSP_READ_ERROR;
}

LspReadStatus lsp_read(LspReader *r, const char **body, size_t *len, const char **why)
{
    *body = NULL;
    *len = 0;
    *why = NULL;
    for (;;) {
        const char *p = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        if (r->resync) {
            long k = lsp__find_cl(p, avail);
            if (k >= 0) {
                r->pos += (size_t)k;
                r->resync = false;
                continue;
            }
            /* keep a tail that may be the start of the name */
            if (avail > CL_NAME_LEN) r->pos += avail - CL_NAME_LEN;
            if (r->eof) {
                r->pos = r->len;
                return LSP_READ_EOF;
            }
            lsp__fill(r);
            continue;
        }
        /* blank lines between messages are harmless */
        while (r->pos < r->len && (r->buf[r->pos] == '\r' || r->buf[r->pos] == '\n' || r->buf[r->pos] == ' '))
            r->pos++;
        p = r->buf + r->pos;
        avail = r->len - r->pos;
        if (!avail) {
            if (r->eof) return LSP_READ_EOF;
            lsp__fill(r);
            continue;
        }
        size_t sep = 0;
        long hend = lsp__header_end(p, avail, &sep);
        if (hend < 0) {
            if (avail > LSP_MAX_HEADER) {
                r->pos++; /* the resync must not find this same header again */
                return lsp__error(r, why, true, "no end of the message header within %d bytes", LSP_MAX_HEADER);
            }
            if (r->eof) {
                r->pos = r->len;
                return lsp__error(r, why, false, "the input ended inside a message header");
            }
            lsp__fill(r);
            continue;
        }
        if (hend > LSP_MAX_HEADER) {
            r->pos++;
            return lsp__error(r, why, true, "no end of the message header within %d bytes", LSP_MAX_HEADER);
        }
        /* The header block p[0..hend): `Name: value` lines. */
        size_t n_body = 0;
        bool have_len = false;
        for (size_t ls = 0; ls < (size_t)hend;) {
            size_t le = ls;
            while (le < (size_t)hend && p[le] != '\n') le++;
            size_t next = le + 1, lend = le;
            if (lend > ls && p[lend - 1] == '\r') lend--;
            size_t c = ls;
            while (c < lend && lsp__is_token_char(p[c])) c++;
            if (c == ls || c >= lend || p[c] != ':') {
                /* Not a header line: the tail of a body that was longer than its Content-Length
                 * said, or plain garbage. Start again at a Content-Length in it, if any. */
                long k = lsp__find_cl(p + ls, (size_t)hend - ls);
                if (k > 0) {
                    r->pos += ls + (size_t)k;
                    return lsp__error(r, why, false, "%zu unexpected bytes before a message header", ls + (size_t)k);
                }
                r->pos += (size_t)hend + sep;
                return lsp__error(r, why, true, "malformed message header");
            }
            if (c - ls > CL_NAME_LEN && !strncasecmp(p + c - CL_NAME_LEN, CL_NAME, CL_NAME_LEN)) {
                /* `1Content-Length: 5`: the tail of a longer body, then a header */
                r->pos += c - CL_NAME_LEN;
                return lsp__error(r, why, false, "%zu unexpected bytes before a message header", c - CL_NAME_LEN);
            }
            if (c - ls == CL_NAME_LEN && !strncasecmp(p + ls, CL_NAME, CL_NAME_LEN) && !have_len) {
                size_t v = c + 1;
                while (v < lend && (p[v] == ' ' || p[v] == '\t')) v++;
                size_t d = v;
                uint64_t val = 0;
                bool overflow = false;
                while (d < lend && isdigit((unsigned char)p[d])) {
                    if (val > (UINT64_MAX - 9) / 10) overflow = true;
                    else val = val * 10 + (uint64_t)(p[d] - '0');
                    d++;
                }
                size_t t = d;
                while (t < lend && (p[t] == ' ' || p[t] == '\t')) t++;
                if (d == v || t != lend) {
                    int shown = (int)GL_MIN(lend - v, 40);
                    r->pos += (size_t)hend + sep;
                    return lsp__error(r, why, true, "invalid Content-Length '%.*s'", shown, p + v);
                }
                if (overflow || val > r->max_body) {
                    r->pos += (size_t)hend + sep;
                    return lsp__error(r, why, true, "Content-Length %s%llu is over the limit of %zu bytes",
                                      overflow ? "above " : "", (unsigned long long)val, r->max_body);
                }
                n_body = (size_t)val;
                have_len = true;
            }
            ls = next;
        }
        if (!have_len) {
            r->pos += (size_t)hend + sep;
            return lsp__error(r, why, true, "a message header without Content-Length");
        }
        /* The body: n_body bytes after the header, unless the next message's header turns up
         * inside them first. */
        size_t off = (size_t)hend + sep, scanned = 0;
        for (;;) {
            p = r->buf + r->pos;
            avail = r->len - r->pos - off;
            size_t have = GL_MIN(avail, n_body);
            size_t from = scanned > 64 ? scanned - 64 : 0;
            long k = lsp__find_header_line(p + off + from, have - from, avail - from);
            if (k >= 0) {
                r->pos += off + from + (size_t)k;
                return lsp__error(r, why, false,
                                  "message body shorter than its Content-Length %zu: the next message starts after %zu bytes",
                                  n_body, from + (size_t)k);
            }
            scanned = have;
            /* A body whose last bytes may begin the next header (`...}Cont`) is not valid JSON
             * anyway: wait for the rest of that line to know whether the next message starts there. */
            bool cut = false;
            for (size_t i = n_body > 48 ? n_body - 48 : 0; have == n_body && i < n_body && !cut; i++)
                cut = (p[off + i] | 0x20) == 'c' && lsp__partial_header_line(p + off + i, avail - i);
            if (cut && !r->eof && lsp__fill(r)) continue;
            if (have == n_body) {
                *body = p + off;
                *len = n_body;
                r->pos += off + n_body;
                return LSP_READ_MESSAGE;
            }
            if (r->eof) {
                r->pos = r->len;
                return lsp__error(r, why, false, "the input ended inside a message body (%zu of %zu bytes)", have,
                                  n_body);
            }
            lsp__fill(r);
        }
    }
}

bool lsp_reader_pending(LspReader *r)
{
    if (r->pos < r->len || r->eof) return true;
    if (r->fd < 0) return true;
    struct pollfd pf = {r->fd, POLLIN, 0};
    int n;
    do n = poll(&pf, 1, 0);
    while (n < 0 && errno == EINTR);
    return n != 0;
}

int lsp_write(int fd, const char *json, size_t len)
{
    char head[64];
    int hn = snprintf(head, sizeof head, "Content-Length: %zu\r\n\r\n", len);
    struct iovec iov[2] = {{head, (size_t)hn}, {(void *)json, len}};
    int cnt = 2;
    struct iovec *v = iov;
    while (cnt) {
        ssize_t n = writev(fd, v, cnt);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        size_t done = (size_t)n;
        while (cnt && done >= v->iov_len) done -= v->iov_len, v++, cnt--;
        if (cnt) v->iov_base = (char *)v->iov_base + done, v->iov_len -= done;
    }
    return 0;
}
