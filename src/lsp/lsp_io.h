/* LSP base protocol framing: `Content-Length: N\r\n\r\n` + N bytes of JSON, read robustly. */
#ifndef GL_LSP_IO_H
#define GL_LSP_IO_H

#include <sys/types.h>
#include "base/base.h"

/* Bytes of a header block before we call it garbage, and the default cap on one message body.
 * 64 MiB leaves room for the largest lintable file (8 MiB) escaped as JSON several times over. */
#define LSP_MAX_HEADER 8192
#define LSP_MAX_BODY ((size_t)64 << 20)

/* Where the reader's bytes come from: read(2) semantics (n > 0 bytes, 0 = end of input, < 0 =
 * error). Tests plug in scripted sources; the server reads stdin. */
typedef ssize_t (*LspReadFn)(void *ctx, char *buf, size_t cap);

typedef struct LspReader {
    LspReadFn read;
    void *ctx;
    int fd;          /* for lsp_reader_pending's poll; -1 when the source is not a descriptor */
    char *buf;       /* unread bytes are buf[pos..len) */
    size_t pos, len, cap;
    size_t max_body;
    bool eof;
    bool resync;     /* after a framing error: drop bytes up to the next `Content-Length:` */
    char why[200];   /* the last framing error */
} LspReader;

typedef enum LspReadStatus {
    LSP_READ_MESSAGE, /* *body, *len: one message body (valid until the next lsp_read) */
    LSP_READ_ERROR,   /* a framing error, described in *why; the reader has moved past it */
    LSP_READ_EOF,     /* no more input */
} LspReadStatus;

void lsp_reader_init(LspReader *r, LspReadFn fn, void *ctx, int fd);
void lsp_reader_init_fd(LspReader *r, int fd);
void lsp_reader_free(LspReader *r);
/* Reads the next message. Framing faults (no or bad Content-Length, a header block that never
 * ends, a body cap exceeded, a body cut short by the next message's header, input ending inside a
 * message) come back as LSP_READ_ERROR, once per fault; the reader then skips to the next header.
 * A body shorter than its Content-Length is recognised as soon as the next `Content-Length: N`
 * line arrives inside it: a raw line break cannot occur inside JSON text, so that line can only
 * be a new message. */
LspReadStatus lsp_read(LspReader *r, const char **body, size_t *len, const char **why);
/* True when a message may be read without waiting (bytes buffered, or the descriptor is readable). */
bool lsp_reader_pending(LspReader *r);

/* Writes one framed message to fd. Returns 0, or -1 on a write error. */
int lsp_write(int fd, const char *json, size_t len);

#endif
