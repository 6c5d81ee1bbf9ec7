/* libFuzzer target: the LSP server (src/lsp/) on raw bytes.
 * - Normally the input is the whole stdin of a `gradleak lsp` session (framing, JSON, methods,
 *   params, edits, positions): the server must neither crash nor leak, must stop at the end of the
 *   input, and must exit with one of the spec's codes (0 or 1). Answers go to /dev/null.
 * - An input starting with byte 0x01 drives the message reader alone: the rest (after a chunk-size
 *   byte) is fed in chunks of 1..N bytes, so headers and bodies split at every boundary; each
 *   message body must lie inside what was read and each framing error must say why.
 * Seeds: tests/fuzz/corpus/lsp/ (well-formed sessions, broken framing, reader-* copies). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "base/base.h"
#include "lsp/lsp.h"
#include "lsp/lsp_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Chunks {
    const uint8_t *p;
    size_t n;
    uint8_t step; /* chunk sizes cycle through 1..step */
    size_t k;
} Chunks;

static ssize_t chunks_read(void *ctx, char *buf, size_t cap)
{
    Chunks *c = ctx;
    if (!c->n) return 0;
    size_t want = 1 + (c->k++ % c->step);
    if (want > cap) want = cap;
    if (want > c->n) want = c->n;
    memcpy(buf, c->p, want);
    c->p += want, c->n -= want;
    return (ssize_t)want;
}

static void fuzz__reader(const uint8_t *data, size_t size)
{
    uint8_t step = size ? data[0] : 1;
    if (size) data++, size--;
    Chunks c = {data, size, step ? step : 1, 0};
    LspReader r;
    lsp_reader_init(&r, chunks_read, &c, -1);
    r.max_body = 1 << 16;
    for (size_t i = 0; i <= size + 1; i++) { /* each call consumes input or ends it */
        const char *body, *why;
        size_t len;
        LspReadStatus st = lsp_read(&r, &body, &len, &why);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_MESSAGE && (len > size || (len && !body))) __builtin_trap();
        if (st == LSP_READ_ERROR && (!why || !why[0])) __builtin_trap();
    }
    lsp_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size && data[0] == 1) {
        fuzz__reader(data + 1, size - 1);
        return 0;
    }
    int in = memfd_create("lsp-in", MFD_CLOEXEC);
    if (in < 0) return 0;
    if ((size && write(in, data, size) != (ssize_t)size) || lseek(in, 0, SEEK_SET) != 0) {
        close(in);
        return 0;
    }
    int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (out >= 0) {
        /* its log (every framing fault) is silenced by -close_fd_mask=2 in tools/fuzz.sh */
        int rc = lsp_serve(in, out);
        if (rc != 0 && rc != 1) __builtin_trap(); /* the spec's exit codes only */
        close(out);
    }
    close(in);
    return 0;
}
