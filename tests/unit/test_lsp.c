/* Unit tests for the LSP server's parts: the Content-Length framing reader (table-driven, every
 * input also fed one byte at a time), position conversion in UTF-8/16/32 with every line ending,
 * file uris, and incremental re-lints (a kept tree plus edits gives the same findings as a fresh
 * lint of the final text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include "count_alloc.h"
#include "lsp/lsp_doc.h"
#include "lsp/lsp_io.h"

/* ---- a scripted byte source ---- */

typedef struct Script {
    const char *data;
    size_t len, pos;
    size_t chunk; /* bytes per read (0 = all that fits) */
} Script;

static ssize_t script_read(void *ctx, char *buf, size_t cap)
{
    Script *s = ctx;
    size_t n = s->len - s->pos;
    if (s->chunk && n > s->chunk) n = s->chunk;
    if (n > cap) n = cap;
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    return (ssize_t)n;
}

/* Reads everything and renders it as one line per event: "M:<body>", "E:<why>" (why's first word),
 * ending in "EOF". */
static char *read_all(const char *data, size_t len, size_t chunk, size_t max_body)
{
    Script sc = {data, len, 0, chunk};
    LspReader r;
    lsp_reader_init(&r, script_read, &sc, -1);
    if (max_body) r.max_body = max_body;
    size_t cap = 4096, n = 0;
    char *out = malloc(cap);
    out[0] = 0;
    for (int guard = 0; guard < 1000; guard++) {
        const char *body, *why;
        size_t blen;
        LspReadStatus st = lsp_read(&r, &body, &blen, &why);
        char line[512];
        if (st == LSP_READ_EOF) snprintf(line, sizeof line, "EOF");
        else if (st == LSP_READ_ERROR) snprintf(line, sizeof line, "E:%.*s\n", (int)strcspn(why, " "), why);
        else snprintf(line, sizeof line, "M:%.*s\n", (int)(blen > 300 ? 300 : blen), body);
        size_t ln = strlen(line);
        if (n + ln + 1 > cap) cap = (n + ln + 1) * 2, out = realloc(out, cap);
        memcpy(out + n, line, ln + 1);
        n += ln;
        if (st == LSP_READ_EOF) break;
    }
    lsp_reader_free(&r);
    return out;
}

#define MSG(body) "Content-Length: " #body "\r\n\r\n"

typedef struct FrameCase {
    const char *id;
    const char *input;
    size_t max_body;
    const char *want;
} FrameCase;

static const FrameCase frame_cases[] = {
    {"frame-1.1 two messages", "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]", 0, "M:{}\nM:[1,2,3]\nEOF"},
    {"frame-1.2 header case and Content-Type",
     "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"
     "CONTENT-LENGTH:4\r\n\r\nnull",
     0, "M:{}\nM:null\nEOF"},
    {"frame-1.3 LF-only terminators and blank lines between", "Content-Length: 2\n\n{}\r\n\r\nContent-Length: 2\n\n[]",
     0, "M:{}\nM:[]\nEOF"},
    {"frame-1.4 empty input", "", 0, "EOF"},
    {"frame-2.1 no Content-Length", "Content-Type: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}", 0, "E:a\nM:{}\nEOF"},
    {"frame-2.2 non-numeric Content-Length", "Content-Length: abc\r\n\r\n{}Content-Length: 2\r\n\r\n{}", 0,
     "E:invalid\nM:{}\nEOF"},
    {"frame-2.3 negative Content-Length", "Content-Length: -5\r\n\r\n{}Content-Length: 2\r\n\r\n{}", 0,
     "E:invalid\nM:{}\nEOF"},
    {"frame-2.4 absurd Content-Length",
     "Content-Length: 999999999999999999999999999\r\n\r\n{\"x\":1}Content-Length: 2\r\n\r\n{}", 0,
     "E:Content-Length\nM:{}\nEOF"},
    {"frame-2.5 over the body cap", "Content-Length: 100\r\n\r\n" "0123456789012345678901234567890123456789"
     "0123456789012345678901234567890123456789" "01234567890123456789" "Content-Length: 2\r\n\r\n{}",
     50, "E:Content-Length\nM:{}\nEOF"},
    {"frame-2.6 Content-Length larger than the body, next message follows",
     "Content-Length: 500\r\n\r\n{\"id\":1}Content-Length: 2\r\n\r\n{}", 0, "E:message\nM:{}\nEOF"},
    {"frame-2.7 Content-Length smaller than the body", "Content-Length: 3\r\n\r\n{\"id\":1}Content-Length: 2\r\n\r\n{}",
     0, "M:{\"i\nE:5\nM:{}\nEOF"},
    {"frame-2.8 input ends inside the body", "Content-Length: 10\r\n\r\n{\"a\"", 0, "E:the\nEOF"},
    {"frame-2.9 input ends inside the header", "Content-Length: 10\r\n", 0, "E:the\nEOF"},
    {"frame-2.10 garbage line before a header", "hello\r\nContent-Length: 2\r\n\r\n{}", 0, "E:7\nM:{}\nEOF"},
    {"frame-2.11 Content-Length: text inside a JSON string is data",
     "Content-Length: 38\r\n\r\n{\"t\":\"Content-Length: 5\\r\\n\\r\\nabcde\"}", 0,
     "M:{\"t\":\"Content-Length: 5\\r\\n\\r\\nabcde\"}\nEOF"},
    {"frame-2.12 too large by a few bytes, next header split at the end",
     "Content-Length: 12\r\n\r\n{\"id\":1}Content-Length: 2\r\n\r\n{}", 0, "E:message\nM:{}\nEOF"},
    {"frame-2.13 space-padded value", "Content-Length:   2  \r\n\r\n{}", 0, "M:{}\nEOF"},
};

static void framing_table(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof frame_cases / sizeof frame_cases[0]; i++) {
        const FrameCase *c = &frame_cases[i];
        for (size_t chunk = 0; chunk <= 1; chunk++) {
            char *got = read_all(c->input, strlen(c->input), chunk, c->max_body);
            if (strcmp(got, c->want) != 0) {
                print_error("%s (chunk %zu):\n  want %s\n  got  %s\n", c->id, chunk, c->want, got);
                bad++;
            }
            free(got);
        }
    }
    assert_int_equal(bad, 0);
}

/* A header block that never ends: one error, then the reader recovers at the next message. */
static void framing_endless_header(void **state)
{
    (void)state;
    size_t n = 20000;
    char *in = malloc(n + 64);
    memset(in, 'x', n);
    strcpy(in + n, "Content-Length: 2\r\n\r\n{}");
    char *got = read_all(in, strlen(in), 0, 0);
    assert_string_equal(got, "E:no\nM:{}\nEOF");
    free(got);
    /* a Content-Length line whose block never ends */
    memcpy(in, "Content-Length: 5\r\n", 19);
    got = read_all(in, strlen(in), 4096, 0);
    assert_string_equal(got, "E:no\nM:{}\nEOF");
    free(got);
    free(in);
}

/* A large body arriving in small pieces is returned whole, and nothing leaks. */
static void framing_large_body(void **state)
{
    (void)state;
    size_t n = 300000;
    char *in = malloc(n + 64);
    int h = sprintf(in, "Content-Length: %zu\r\n\r\n", n);
    in[h] = '"';
    memset(in + h + 1, 'a', n - 2);
    in[h + n - 1] = '"';
    Script sc = {in, (size_t)h + n, 0, 1000};
    LspReader r;
    lsp_reader_init(&r, script_read, &sc, -1);
    const char *body, *why;
    size_t len;
    assert_int_equal(lsp_read(&r, &body, &len, &why), LSP_READ_MESSAGE);
    assert_int_equal(len, n);
    assert_memory_equal(body, in + h, n);
    assert_int_equal(lsp_read(&r, &body, &len, &why), LSP_READ_EOF);
    lsp_reader_free(&r);
    free(in);
    assert_int_equal(count_live_blocks, 0);
}

/* ---- positions ---- */

static void positions_utf16_emoji(void **state)
{
    (void)state;
    /* "é" is 2 bytes / 1 unit; "😀" is 4 bytes / 2 UTF-16 units / 1 UTF-32 unit */
    const char *src = "x = 1\r\ns = \"é😀\"; total += loss\rz\n";
    size_t len = strlen(src);
    LineIndex li;
    lineindex_build(&li, src, len);
    assert_int_equal(li.n, 4);
    uint32_t total = (uint32_t)(strstr(src, "total") - src);
    LspPos p16 = lsp_text_position(src, len, &li, total, LSP_ENC_UTF16);
    LspPos p8 = lsp_text_position(src, len, &li, total, LSP_ENC_UTF8);
    LspPos p32 = lsp_text_position(src, len, &li, total, LSP_ENC_UTF32);
    assert_int_equal(p16.line, 1);
    assert_int_equal(p16.character, 11); /* s = "é😀"; + space: 5 + 1 + 2 + 1 + 1 + 1 */
    assert_int_equal(p8.character, 14);
    assert_int_equal(p32.character, 10);
    assert_int_equal(lsp_text_offset(src, len, &li, p16, LSP_ENC_UTF16), total);
    assert_int_equal(lsp_text_offset(src, len, &li, p8, LSP_ENC_UTF8), total);
    assert_int_equal(lsp_text_offset(src, len, &li, p32, LSP_ENC_UTF32), total);
    /* half a surrogate pair: the emoji's start */
    uint32_t emoji = (uint32_t)(strstr(src, "😀") - src);
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){1, 8}, LSP_ENC_UTF16), emoji + 4);
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){1, 7}, LSP_ENC_UTF16), emoji);
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){1, 6}, LSP_ENC_UTF16), emoji);
    /* lone CR ends a line: 'z' is line 2 */
    LspPos pz = lsp_text_position(src, len, &li, (uint32_t)(strchr(src, 'z') - src), LSP_ENC_UTF16);
    assert_int_equal(pz.line, 2);
    assert_int_equal(pz.character, 0);
    /* past the line's end: the line's end (before "\r\n"); past the last line: the end */
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){0, 99}, LSP_ENC_UTF16), 5);
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){9, 0}, LSP_ENC_UTF16), len);
    assert_int_equal(lsp_text_offset(src, len, &li, (LspPos){3, 0}, LSP_ENC_UTF16), len);
    /* round trip of every offset that starts a character */
    for (uint32_t off = 0; off <= len; off++) {
        if (off < len && ((unsigned char)src[off] & 0xC0) == 0x80) continue;
        if (off > 0 && src[off - 1] == '\r' && src[off] == '\n') continue; /* inside "\r\n" */
        for (int e = 0; e < 3; e++) {
            LspPos p = lsp_text_position(src, len, &li, off, (LspEncoding)e);
            assert_int_equal(lsp_text_offset(src, len, &li, p, (LspEncoding)e), off);
        }
    }
    lineindex_free(&li);
}

static void uris(void **state)
{
    (void)state;
    char *p = lsp_uri_to_path("file:///home/a%20b/c%C3%A9.py");
    assert_string_equal(p, "/home/a b/c\xc3\xa9.py");
    char *u = lsp_path_to_uri(p);
    assert_string_equal(u, "file:///home/a%20b/c%C3%A9.py");
    free(p), free(u);
    p = lsp_uri_to_path("file://localhost/x.py");
    assert_string_equal(p, "/x.py");
    free(p);
    assert_null(lsp_uri_to_path("untitled:Untitled-1"));
    assert_null(lsp_uri_to_path("file://server/share/x.py"));
    p = lsp_uri_to_path("file:///a%00b%zz");
    assert_string_equal(p, "/a%00b%zz"); /* no NUL smuggled into a path; bad escapes kept */
    free(p);
}

/* ---- incremental re-lint ---- */

static const char *const train_src =
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "\n"
    "\n"
    "def train(model, ds, opt):\n"
    "    total = 0\n"
    "    for x, y in DataLoader(ds):\n"
    "        loss = model(x).sum()\n"
    "        total += loss\n"
    "        x.cuda()\n"
    "        torch.cuda.empty_cache()\n"
    "    return total\n";

static char *diag_dump(const LintResult *r)
{
    char *out = calloc(1, 8192);
    size_t n = 0;
    for (uint32_t i = 0; i < r->diags.len && n < 8000; i++) {
        const Diag *d = &r->diags.items[i];
        n += (size_t)snprintf(out + n, 8192 - n, "%d@%u-%u:%u:%u-%u:%u;", d->rule, d->span.start, d->span.end,
                              d->span.row, d->span.col, d->span.end_row, d->span.end_col);
    }
    return out;
}

/* Apply a sequence of edits to a document (through LspDoc, as didChange does), linting after each;
 * every incremental lint must equal a fresh lint of the same text. */
static void incremental_equals_fresh(void **state)
{
    (void)state;
    LintOptions o;
    lint_options_default(&o);
    LspDoc *d = lsp_doc_new("file:///t/train.py", "python", 1, train_src, strlen(train_src));
    struct { const char *find; int del; const char *ins; } edits[] = {
        {"total += loss", 13, "total += loss.item()"},  /* fixes GL101 */
        {"        x.cuda()", 0, "        # é😀\n"},     /* a line with non-ASCII above */
        {"        torch.cuda", 0, "\n\n"},              /* blank lines shift rows */
        {"loss.item()", 11, "loss"},                    /* GL101 again */
        {"def train", 0, "\r\n"},                       /* a CRLF */
        {"    return total\n", 17, ""},                 /* delete the last line */
        {"import torch\n", 0, "x = (\n"},               /* a syntax error at the top */
        {"x = (\n", 6, ""},                             /* and gone again */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *at = strstr(d->text.data, edits[i].find);
        assert_non_null(at);
        uint32_t start = (uint32_t)(at - d->text.data);
        lsp_doc_replace(d, start, start + (uint32_t)edits[i].del, edits[i].ins, strlen(edits[i].ins));
        Cache *no_cache = NULL; /* a project run without a cache */
        assert_true(lsp_doc_lint(d, &o, &no_cache, NULL));
        LintResult fresh;
        assert_int_equal(engine_lint(d->path, d->text.data, d->text.len, LANG_PYTHON, &o, &fresh), 0);
        char *a = diag_dump(&d->result), *b = diag_dump(&fresh);
        if (strcmp(a, b) != 0) print_error("edit %zu:\n  incremental %s\n  fresh       %s\n", i, a, b);
        assert_string_equal(a, b);
        if (i != 6 && !fresh.diags.len) print_error("edit %zu: no findings in\n%s\n", i, d->text.data);
        assert_true(i == 6 || fresh.diags.len > 0);
        free(a), free(b);
        lint_result_free(&fresh);
    }
    lsp_doc_free(d);
}

/* The front end builds its symbol table once per process: do that before counting allocations. */
static int warm_then_count(void **state)
{
    LintOptions o;
    lint_options_default(&o);
    LintResult r;
    engine_lint("warm.py", "x = 1\n", 6, LANG_PYTHON, &o, &r);
    lint_result_free(&r);
    return count_alloc_setup(state);
}

int main(void)
{
    const struct CMUnitTest framing[] = {
        cmocka_unit_test(framing_table),
        cmocka_unit_test(framing_endless_header),
        cmocka_unit_test_setup_teardown(framing_large_body, count_alloc_setup, count_alloc_teardown),
    };
    const struct CMUnitTest text[] = {
        cmocka_unit_test(positions_utf16_emoji),
        cmocka_unit_test(uris),
    };
    const struct CMUnitTest relint[] = {
        cmocka_unit_test_setup_teardown(incremental_equals_fresh, warm_then_count, count_alloc_teardown),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("lsp framing", framing, NULL, NULL);
    failed += cmocka_run_group_tests_name("lsp positions", text, NULL, NULL);
    failed += cmocka_run_group_tests_name("lsp re-lint", relint, NULL, NULL);
    return failed ? 1 : 0;
}
