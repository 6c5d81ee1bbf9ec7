/* Open documents: text kept in sync with the client, positions in the negotiated encoding. */
#include <ctype.h>
#include <strings.h>
#include "engine/run.h"
#include "lsp/lsp_doc.h"

/* Units of the character at s[0..avail) in enc, and its byte length in *bytes. An invalid UTF-8
 * byte is one byte and one unit (the client saw U+FFFD, one UTF-16 unit). */
static uint32_t lsp__char_units(const char *s, size_t avail, LspEncoding enc, uint32_t *bytes)
{
    int k = utf8_seq_len((const unsigned char *)s, avail);
    *bytes = k ? (uint32_t)k : 1;
    switch (enc) {
    case LSP_ENC_UTF8: return *bytes;
    case LSP_ENC_UTF16: return k == 4 ? 2 : 1;
    case LSP_ENC_UTF32: return 1;
    }
    return 1;
}

static uint32_t lsp__line_end(const char *src, size_t len, uint32_t start)
{
    uint32_t e = start;
    while (e < len && src[e] != '\n' && src[e] != '\r') e++;
    return e;
}

uint32_t lsp_text_offset(const char *src, size_t len, const LineIndex *li, LspPos p, LspEncoding enc)
{
    if (p.line >= li->n) return (uint32_t)len;
    uint32_t i = li->starts[p.line], end = lsp__line_end(src, len, i), units = 0;
    while (i < end && units < p.character) {
        uint32_t bytes, u = lsp__char_units(src + i, end - i, enc, &bytes);
        if (units + u > p.character) break; /* inside a character: its start */
        units += u;
        i += bytes;
    }
    return i;
}

LspPos lsp_text_position(const char *src, size_t len, const LineIndex *li, uint32_t off, LspEncoding enc)
{
    if (off > len) off = (uint32_t)len;
    LspPos p;
    p.line = lineindex_line_of(li, off);
    uint32_t i = li->starts[p.line], units = 0;
    while (i < off) {
        uint32_t bytes, u = lsp__char_units(src + i, len - i, enc, &bytes);
        if (i + bytes > off) break; /* off is inside this character */
        units += u;
        i += bytes;
    }
    p.character = units;
    return p;
}

static void lsp__reindex(LspDoc *d)
{
    lineindex_free(&d->lines);
    lineindex_build(&d->lines, d->text.data, d->text.len);
}

/* Python or C++ (LibTorch) by the client's language id, else by the extension; false for others. */
static bool lsp__language(const char *language, const char *path, SourceLang *lang)
{
    static const char *const cxx_ids[] = {"cpp", "c++", "cuda-cpp", "cuda"};
    static const char *const cxx_exts[] = {".cpp", ".cc", ".cxx", ".cu", ".c++"};
    *lang = LANG_PYTHON;
    if (language && (!strcmp(language, "python") || !strcmp(language, "py"))) return true;
    for (size_t i = 0; language && i < ARRAY_LEN(cxx_ids); i++)
        if (!strcmp(language, cxx_ids[i])) return *lang = LANG_CXX, true;
    size_t n = strlen(path);
    if ((n > 3 && !strcmp(path + n - 3, ".py")) || (n > 4 && !strcmp(path + n - 4, ".pyi"))) return true;
    for (size_t i = 0; i < ARRAY_LEN(cxx_exts); i++) {
        size_t e = strlen(cxx_exts[i]);
        if (n > e && !strcmp(path + n - e, cxx_exts[i])) return *lang = LANG_CXX, true;
    }
    return false;
}

LspDoc *lsp_doc_new(const char *uri, const char *language, int64_t version, const char *text, size_t len)
{
    LspDoc *d = gl_calloc(1, sizeof *d);
    d->uri = gl_strdup(uri);
    d->path = lsp_uri_to_path(uri);
    if (!d->path) d->path = gl_strdup(uri);
    d->lintable = lsp__language(language, d->path, &d->lang);
    d->version = version;
    d->lint = lint_doc_new();
    sb_init(&d->text);
    lsp_doc_set_text(d, text, len);
    return d;
}

void lsp_doc_free(LspDoc *d)
{
    if (!d) return;
    if (d->has_result) lint_result_free(&d->result);
    lint_doc_free(d->lint);
    lineindex_free(&d->lines);
    sb_free(&d->text);
    gl_free(d->uri);
    gl_free(d->path);
    gl_free(d);
}

void lsp_doc_set_text(LspDoc *d, const char *text, size_t len)
{
    sb_clear(&d->text);
    sb_append(&d->text, text, len);
    if (!d->text.data) sb_append(&d->text, "", 0);
    lint_doc_reset(d->lint);
    lsp__reindex(d);
    d->dirty = true;
}

void lsp_doc_replace(LspDoc *d, uint32_t start, uint32_t end, const char *text, size_t len)
{
    size_t old = d->text.len;
    if (start > old) start = (uint32_t)old;
    if (end > old) end = (uint32_t)old;
    if (end < start) end = start;
    lint_doc_edit(d->lint, d->text.data, old, start, end, text, len);
    size_t tail = old - end, n = old - (end - start) + len;
    if (n + 1 > d->text.cap) {
        size_t cap = d->text.cap * 2 > n + 1 ? d->text.cap * 2 : n + 1;
        d->text.data = gl_realloc(d->text.data, cap);
        d->text.cap = cap;
    }
    memmove(d->text.data + start + len, d->text.data + end, tail);
    memcpy(d->text.data + start, text, len);
    d->text.len = n;
    d->text.data[n] = 0;
    lsp__reindex(d);
    d->dirty = true;
}

int lsp_run_lint(const char *path, const char *text, size_t len, SourceLang lang, LintDoc *ld, const LintOptions *o,
                 Cache **cache, const char *cache_dir, LintResult *out)
{
    Spill *spill = spill_open_memory();
    RunJob job = run_job_new(path);
    job.src_at = spill_put(spill, text, len);
    job.src_len = (uint32_t)len;
    EngineRun run;
    run_init(&run, &job, 1, o, *cache, spill);
    run.cache_dir = cache_dir;
    run.given = true;
    run.doc = ld;
    run.doc_lang = lang;
    run.alone = path[0] != '/'; /* untitled: no folder to find its imports from */
    run_lint(&run, 1);
    bool linted = run_take_doc_result(&run, out);
    if (run.cache && run.cache != *cache) *cache = run.cache; /* opened by this run: kept for the next */
    if (*cache) cache_flush(*cache);
    run_free(&run);
    spill_close(spill);
    return linted ? 0 : -1;
}

bool lsp_doc_lint(LspDoc *d, const LintOptions *o, Cache **cache, const char *cache_dir)
{
    if (!d->dirty && d->has_result) return false;
    if (d->has_result) lint_result_free(&d->result);
    d->has_result = false;
    if (d->lintable && o) {
        if (lsp_run_lint(d->path, d->text.data, d->text.len, d->lang, d->lint, o, cache, cache_dir, &d->result) == 0)
            d->has_result = true;
    }
    if (!d->has_result) {
        /* not Python or C++, or a tool failure: an empty result, so the client's list is cleared */
        memset(&d->result, 0, sizeof d->result);
        arena_init(&d->result.arena);
        array_init(&d->result.diags);
        d->has_result = true;
    }
    d->dirty = false;
    d->result_seq++;
    return true;
}

void lsp_doc_invalidate(LspDoc *d) { d->dirty = true; }

static int lsp__hex(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

char *lsp_uri_to_path(const char *uri)
{
    if (strncasecmp(uri, "file://", 7) != 0) return NULL;
    const char *p = uri + 7;
    /* file://localhost/x and file:///x; another authority is a network path we cannot open */
    if (!strncasecmp(p, "localhost/", 10)) p += 9;
    if (*p != '/') return NULL;
    size_t n = strlen(p);
    char *out = gl_malloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (p[i] == '%' && i + 2 < n && (h = lsp__hex(p[i + 1])) >= 0 && (l = lsp__hex(p[i + 2])) >= 0 &&
            (h || l)) {
            *o++ = (char)(h * 16 + l);
            i += 2;
        } else if (p[i] == '?' || p[i] == '#') {
            break;
        } else {
            *o++ = p[i];
        }
    }
    *o = 0;
    return out;
}

char *lsp_path_to_uri(const char *path)
{
    StrBuf sb;
    sb_init(&sb);
    sb_puts(&sb, "file://");
    if (path[0] != '/') sb_putc(&sb, '/');
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (isalnum(*p) || strchr("/-._~!$&'()*+,;=:@", *p)) sb_putc(&sb, (char)*p);
        else sb_printf(&sb, "%%%02X", *p);
    }
    return sb_take(&sb);
}
