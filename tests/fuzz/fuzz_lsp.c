/* libFuzzer target: the LSP server (src/lsp/) on raw bytes. Mode by the first byte's low bit:
 * 0 = the whole server, lsp_serve() reading the rest of the input as its stdin (framing, JSON-RPC,
 *     documents, incremental edits, lint, code actions, hover); answers go to /dev/null;
 * 1 = the message reader alone, fed in chunks whose sizes come from the input (headers and bodies
 *     split at every boundary), checking each message body lies inside what was read. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    data++, size--;
    if (mode & 1) {
        Chunks c = {data, size, (uint8_t)(1 + (mode >> 1)), 0};
        LspReader r;
        lsp_reader_init(&r, chunks_read, &c, -1);
        r.max_body = 1 << 16;
        for (int i = 0; i < 100000; i++) {
            const char *body, *why;
            size_t len;
            LspReadStatus st = lsp_read(&r, &body, &len, &why);
            if (st == LSP_READ_EOF) break;
            if (st == LSP_READ_MESSAGE && (len > size || (len && !body))) __builtin_trap();
            if (st == LSP_READ_ERROR && (!why || !why[0])) __builtin_trap();
        }
        lsp_reader_free(&r);
        return 0;
    }
    int in = memfd_create("lsp-in", MFD_CLOEXEC);
    int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (in < 0 || out < 0 || write(in, data, size) != (ssize_t)size || lseek(in, 0, SEEK_SET) != 0) {
        if (in >= 0) close(in);
        if (out >= 0) close(out);
        return 0;
    }
    lsp_serve(in, out); /* its log (every framing fault) is silenced by -close_fd_mask=2 in tools/fuzz.sh */
    close(in);
    close(out);
    return 0;
}
