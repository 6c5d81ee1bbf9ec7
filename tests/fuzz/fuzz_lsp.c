/* libFuzzer target: `gradleak lsp` on arbitrary bytes. The input is the whole stdin of a session
 * (framing, JSON, methods, params, edits, positions); the server must neither crash nor leak, and
 * must stop at the end of the input. The seeds (tests/fuzz/corpus/lsp/) are well-formed sessions:
 * initialize, didOpen of a file with hazards, incremental edits, code actions, hover, pull
 * diagnostics, shutdown and exit. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "base/base.h"
#include "lsp/lsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in = tmpfile();
    if (!in) return 0;
    if (size && fwrite(data, 1, size, in) != size) {
        fclose(in);
        return 0;
    }
    rewind(in);
    int out = open("/dev/null", O_WRONLY);
    if (out >= 0) {
        int rc = lsp_serve(fileno(in), out);
        if (rc != 0 && rc != 1) __builtin_trap(); /* the spec's exit codes only */
        close(out);
    }
    fclose(in);
    return 0;
}
