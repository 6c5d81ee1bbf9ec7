/* Internals shared by the LSP server's files: the session state and JSON helpers. */
#ifndef GL_LSP_INT_H
#define GL_LSP_INT_H

#include <jansson.h>
#include "base/array.h"
#include "base/strbuf.h"
#include "config/config.h"
#include "lsp/lsp_doc.h"
#include "lsp/lsp_io.h"

/* JSON-RPC 2.0 and LSP error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define LSP_SERVER_NOT_INITIALIZED -32002

typedef struct RpcError {
    int code; /* 0 = no error */
    char message[256];
} RpcError;

void rpc_error(RpcError *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef struct LspServer {
    int out_fd;
    LspReader rd;
    bool initialized;     /* `initialize` was answered */
    bool shutdown;        /* `shutdown` was answered */
    bool exit;            /* `exit` arrived: stop serving */
    bool write_failed;    /* the client is gone */
    LspEncoding enc;
    bool pull;            /* the client pulls diagnostics (textDocument/diagnostic): do not push */
    bool refresh;         /* the client accepts workspace/diagnostic/refresh */
    bool cxx_warned;      /* said once that C++ documents are not linted (libclang missing) */
    bool watch_dynamic;   /* the client accepts a dynamic workspace/didChangeWatchedFiles registration */
    char *root;           /* workspace root folder, or NULL */
    Array(LspDoc *) docs;
    Array(struct LspNotebook *) notebooks; /* notebook documents (lsp_nb.c); their cells are not in docs */
    uint64_t next_id;     /* ids of our requests to the client */
    Config *cfg;          /* the project's configuration files, read on demand, reloaded on change */
    Cache *cache;         /* helpers' lint results (as `check`'s); opened when a document first imports one */
    char *cache_dir;
    char *config_error;   /* the last configuration error shown to the user, or NULL */
} LspServer;

/* JSON building: strings are copied; invalid UTF-8 (a message quoting cut-off source) becomes
 * U+FFFD, so no value is ever NULL. */
json_t *lsp_jstr(const char *s);
json_t *lsp_range_json(const LspServer *s, const LspDoc *d, uint32_t start, uint32_t end);
/* Reads {line, character} with non-negative integers; false when absent or malformed. */
bool lsp_json_pos(const json_t *j, LspPos *p);
bool lsp_json_range(const json_t *j, LspPos *start, LspPos *end);
/* Member of an object with a given type, or NULL (missing, or another type). */
json_t *lsp_get(const json_t *obj, const char *key, json_type type);

LspDoc *lsp_find_doc(LspServer *s, const char *uri);
/* Applies a didChange's contentChanges to d; false (nothing applied, *bad the first malformed
 * change) when one is malformed. */
bool lsp_apply_changes(const LspServer *s, LspDoc *d, json_t *changes, size_t *bad);
/* The options d is linted with (from the configuration governing its file), filled into *o; NULL
 * when the configuration excludes the file. */
const LintOptions *lsp_options_for(LspServer *s, const LspDoc *d, LintOptions *o);
/* Lints d if it changed. */
void lsp_ensure_linted(LspServer *s, LspDoc *d);

/* lsp_nb.c: notebook documents. clear (may be NULL) empties the client's diagnostics for a uri;
 * publish pushes a document's. */
typedef struct LspNotebook LspNotebook;
void lsp_nb_did_open(LspServer *s, json_t *params);
void lsp_nb_did_change(LspServer *s, json_t *params, void (*clear)(LspServer *, const char *uri));
void lsp_nb_did_close(LspServer *s, json_t *params, void (*clear)(LspServer *, const char *uri));
LspDoc *lsp_nb_find_cell(LspServer *s, const char *uri);
void lsp_nb_lint(LspServer *s, LspNotebook *nb);
void lsp_nb_flush(LspServer *s, void (*publish)(LspServer *, LspDoc *));
void lsp_nb_invalidate(LspServer *s);
void lsp_nb_free_all(LspServer *s);

/* lsp_json.c: JSON helpers (above) and ranges; lsp_features.c: what the client sees of a lint. The
 * server dispatches: it finds the document, lints it and works out its options, then hands them to
 * a feature, which never calls back into the server. d is NULL for a document the server does not
 * have; opts NULL when the configuration excludes its file. */
json_t *lsp_diagnostics_json(const LspServer *s, const LspDoc *d);
/* The same array as JSON text, appended to b (what publishDiagnostics sends). */
void lsp_diagnostics_write(StrBuf *b, const LspServer *s, const LspDoc *d);
json_t *lsp_code_actions(const LspServer *s, const LspDoc *d, const LintOptions *opts, json_t *params, RpcError *e);
json_t *lsp_hover(const LspServer *s, const LspDoc *d, json_t *params, RpcError *e);

#endif
