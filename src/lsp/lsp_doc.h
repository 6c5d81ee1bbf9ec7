/* Open documents of the LSP server: their text, line index, position encoding and last lint. */
#ifndef GL_LSP_DOC_H
#define GL_LSP_DOC_H

#include "base/strbuf.h"
#include "cache/cache.h"
#include "engine/engine.h"

/* How the client counts `character` in a Position (LSP 3.17 positionEncoding). */
typedef enum LspEncoding { LSP_ENC_UTF16, LSP_ENC_UTF8, LSP_ENC_UTF32 } LspEncoding;

typedef struct LspPos {
    uint32_t line, character; /* 0-based; character in units of the encoding */
} LspPos;

/* Byte offset of (line, character) in src, whose line starts are li. Lines end at "\n", "\r\n" or
 * "\r" (as the spec says). A line past the end gives len; a character past the line's end gives the
 * line's end; a character inside a multi-unit character (half a surrogate pair) gives its start. */
uint32_t lsp_text_offset(const char *src, size_t len, const LineIndex *li, LspPos p, LspEncoding enc);
/* Position of byte offset off (clamped to len; an offset inside a line break or a UTF-8 sequence
 * counts from the line start up to it). */
LspPos lsp_text_position(const char *src, size_t len, const LineIndex *li, uint32_t off, LspEncoding enc);

typedef struct LspDoc {
    char *uri;
    char *path;       /* the file path of a file:// uri, otherwise the uri */
    bool lintable;    /* Python or C++ (by language id or extension) */
    SourceLang lang;
    int64_t version;
    StrBuf text;      /* data is never NULL */
    LineIndex lines;  /* of text, rebuilt after every change */
    LintDoc *lint;    /* the kept syntax tree */
    LintResult result;/* the last lint of text when !dirty */
    bool has_result;
    bool dirty;       /* changed since the last lint */
    uint64_t result_seq; /* bumped by every lint: pull diagnostics' resultId */
    struct LspNotebook *notebook; /* a notebook cell: linted with its notebook (lsp_nb.c); else NULL */
} LspDoc;

LspDoc *lsp_doc_new(const char *uri, const char *language, int64_t version, const char *text, size_t len);
void lsp_doc_free(LspDoc *d);
/* The whole text replaced (full sync). */
void lsp_doc_set_text(LspDoc *d, const char *text, size_t len);
/* Bytes [start, end) replaced by text (incremental sync); offsets are clamped to the text. */
void lsp_doc_replace(LspDoc *d, uint32_t start, uint32_t end, const char *text, size_t len);
/* Lints the current text with o if it changed since the last lint; o NULL (an excluded file) gives
 * an empty result. Returns true when it linted. The document is one project run (engine/run.h) as
 * `gradleak check FILE` makes it: the helpers it imports are read from disk and their summaries
 * applied, through *cache (opened from cache_dir when a helper is first needed; NULL cache_dir:
 * none). */
bool lsp_doc_lint(LspDoc *d, const LintOptions *o, Cache **cache, const char *cache_dir);
/* One project run (engine/run.h) of an editor's text[0..len) as the file at path, with the file's
 * options o (lsp_doc_lint; a notebook's joined cells): the text is linted (incrementally on ld when
 * not NULL), the helpers it imports are read from disk. Returns 0 with *out, or -1. */
int lsp_run_lint(const char *path, const char *text, size_t len, SourceLang lang, LintDoc *ld, const LintOptions *o,
                 Cache **cache, const char *cache_dir, LintResult *out);
/* Drops the last lint (the settings changed); the next lsp_doc_lint lints again. */
void lsp_doc_invalidate(LspDoc *d);

/* "file:///a%20b/c.py" -> "/a b/c.py" (gl_free it); NULL when uri is not a file uri. */
char *lsp_uri_to_path(const char *uri);
/* "/a b/c.py" -> "file:///a%20b/c.py" (gl_free it). */
char *lsp_path_to_uri(const char *path);

#endif
