/* The LSP session: reads messages, checks them, dispatches them, and keeps diagnostics current.
 *
 * Single-threaded and synchronous: each message is handled before the next is read. Linting is
 * deferred to the moment the input is idle, so a burst of didChange notifications (typing) costs one
 * lint of the document, not one per keystroke; a request that needs the lint (code actions, hover,
 * pull diagnostics) lints first. Nothing here runs user code. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "lsp/lsp.h"
#include "lsp/lsp_int.h"
#include "out/out.h"

void rpc_error(RpcError *e, int code, const char *fmt, ...)
{
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

static void lsp__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void lsp__log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gradleak lsp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

LspDoc *lsp_find_doc(LspServer *s, const char *uri)
{
    for (uint32_t i = 0; i < s->docs.len; i++)
        if (!strcmp(s->docs.items[i]->uri, uri)) return s->docs.items[i];
    return lsp_nb_find_cell(s, uri);
}

static void lsp__notify(LspServer *s, const char *method, json_t *params);

/* The options for d from the configuration that governs its file. NULL when the configuration
 * excludes the file. A broken configuration file is shown to the user (once per message) and the
 * defaults are used meanwhile, so editing never stops working. */
const LintOptions *lsp_options_for(LspServer *s, const LspDoc *d, LintOptions *o)
{
    lint_options_default(o);
    const Settings *st;
    ConfigError err;
    /* a document without a file (untitled:) gets the settings of the workspace root */
    const char *path = d->path[0] == '/' ? d->path : s->root ? s->root : ".";
    if (config_settings_for(s->cfg, path, &st, &err) < 0) {
        if (!s->config_error || strcmp(s->config_error, err.message) != 0) {
            gl_free(s->config_error);
            s->config_error = gl_strdup(err.message);
            lsp__log("configuration error: %s (linting with the defaults)", err.message);
            lsp__notify(s, "window/showMessage",
                        json_pack("{s:i,s:o}", "type", 1, "message", lsp_jstr(err.message)));
        }
        return o;
    }
    if (d->path[0] != '/') {
        o->rules = st->rules;
        return o;
    }
    if (settings_excluded(st, d->path)) return NULL;
    settings_rules_for(st, d->path, &o->rules);
    return o;
}

void lsp_ensure_linted(LspServer *s, LspDoc *d)
{
    if (d->notebook) { /* a notebook cell: its notebook is linted as one module */
        lsp_nb_lint(s, d->notebook);
        return;
    }
    if (!d->dirty && d->has_result) return;
    LintOptions o;
    lsp_doc_lint(d, lsp_options_for(s, d, &o), &s->cache, s->cache_dir);
    if (d->lang == LANG_CXX && d->result.cxx == CXX_UNAVAILABLE && !s->cxx_warned) {
        /* one clear message, not one per keystroke; Python documents are linted as before */
        const char *why = "libclang is not available";
        engine_cxx_available(&why);
        s->cxx_warned = true;
        lsp__log("C++ documents are not linted: %s", why);
        lsp__notify(s, "window/showMessage", json_pack("{s:i,s:o}", "type", 2, "message",
                                                       lsp_jstr(arena_printf(&d->result.arena,
                                                                             "gradleak: C++ documents are not linted: %s", why))));
    }
}

/* ---- output ---- */

static void lsp__send(LspServer *s, json_t *msg)
{
    if (!msg) return;
    json_object_set_new(msg, "jsonrpc", json_string("2.0"));
    char *text = s->write_failed ? NULL : json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!text) return;
    if (lsp_write(s->out_fd, text, strlen(text)) != 0) {
        lsp__log("cannot write to the client: %s; stopping", strerror(errno));
        s->write_failed = true;
    }
    free(text); /* json_dumps allocates with jansson's allocator, which is malloc */
}

static void lsp__respond(LspServer *s, json_t *id, json_t *result)
{
    json_t *m = json_object();
    json_object_set(m, "id", id ? id : json_null());
    json_object_set_new(m, "result", result ? result : json_null());
    lsp__send(s, m);
}

static void lsp__respond_error(LspServer *s, json_t *id, const RpcError *e)
{
    json_t *m = json_object();
    json_object_set(m, "id", id ? id : json_null());
    json_object_set_new(m, "error", json_pack("{s:i,s:o}", "code", e->code, "message", lsp_jstr(e->message)));
    lsp__send(s, m);
}

static void lsp__notify(LspServer *s, const char *method, json_t *params)
{
    lsp__send(s, json_pack("{s:s,s:o}", "method", method, "params", params));
}

static void lsp__request(LspServer *s, const char *method, json_t *params)
{
    char id[32];
    snprintf(id, sizeof id, "gradleak-%llu", (unsigned long long)++s->next_id);
    lsp__send(s, json_pack("{s:s,s:s,s:o}", "id", id, "method", method, "params", params));
}

static void lsp__publish(LspServer *s, LspDoc *d)
{
    if (s->write_failed) return;
    /* written as text: see lsp_diagnostics_write */
    StrBuf b;
    sb_init(&b);
    json_t *uri = lsp_jstr(d->uri);
    char *uri_text = json_dumps(uri, JSON_ENCODE_ANY);
    json_decref(uri);
    sb_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":%s",
              uri_text ? uri_text : "\"\"");
    free(uri_text);
    if (d->version >= 0) sb_printf(&b, ",\"version\":%lld", (long long)d->version);
    sb_puts(&b, ",\"diagnostics\":");
    lsp_diagnostics_write(&b, s, d);
    sb_puts(&b, "}}");
    if (lsp_write(s->out_fd, b.data, b.len) != 0) {
        lsp__log("cannot write to the client: %s; stopping", strerror(errno));
        s->write_failed = true;
    }
    sb_free(&b);
}

/* Lints every changed document; pushes its diagnostics unless the client pulls them. */
static void lsp__flush(LspServer *s)
{
    for (uint32_t i = 0; i < s->docs.len; i++) {
        LspDoc *d = s->docs.items[i];
        if (!d->dirty) continue;
        lsp_ensure_linted(s, d);
        if (!s->pull) lsp__publish(s, d);
    }
    lsp_nb_flush(s, s->pull ? NULL : lsp__publish);
}

/* ---- settings ---- */


static bool lsp__is_config_file(const char *uri)
{
    const char *base = strrchr(uri, '/');
    base = base ? base + 1 : uri;
    return !strcmp(base, "pyproject.toml") || !strcmp(base, "gradleak.toml");
}

static void lsp__settings_changed(LspServer *s)
{
    config_reload(s->cfg);
    gl_free(s->config_error);
    s->config_error = NULL;
    for (uint32_t i = 0; i < s->docs.len; i++) lsp_doc_invalidate(s->docs.items[i]);
    lsp_nb_invalidate(s);
    if (s->pull && s->refresh) lsp__request(s, "workspace/diagnostic/refresh", json_null());
}

/* ---- lifecycle ---- */

static json_t *h_initialize(LspServer *s, json_t *params, RpcError *e)
{
    if (!json_is_object(params)) {
        rpc_error(e, RPC_INVALID_PARAMS, "initialize needs params with capabilities");
        return NULL;
    }
    json_t *caps = lsp_get(params, "capabilities", JSON_OBJECT);
    json_t *general = lsp_get(caps, "general", JSON_OBJECT);
    json_t *encs = lsp_get(general, "positionEncodings", JSON_ARRAY);
    /* UTF-8 is what our spans are in: take it when offered, then UTF-32, else the default UTF-16 */
    s->enc = LSP_ENC_UTF16;
    bool has8 = false, has32 = false;
    size_t i;
    json_t *v;
    json_array_foreach(encs, i, v) {
        if (!json_is_string(v)) continue;
        has8 |= !strcmp(json_string_value(v), "utf-8");
        has32 |= !strcmp(json_string_value(v), "utf-32");
    }
    if (has8) s->enc = LSP_ENC_UTF8;
    else if (has32) s->enc = LSP_ENC_UTF32;
    json_t *td = lsp_get(caps, "textDocument", JSON_OBJECT);
    s->pull = lsp_get(td, "diagnostic", JSON_OBJECT) != NULL;
    json_t *ws = lsp_get(caps, "workspace", JSON_OBJECT);
    json_t *wd = lsp_get(ws, "diagnostics", JSON_OBJECT);
    s->refresh = json_is_true(json_object_get(wd ? wd : json_null(), "refreshSupport"));
    json_t *watch = lsp_get(ws, "didChangeWatchedFiles", JSON_OBJECT);
    s->watch_dynamic = watch && json_is_true(json_object_get(watch, "dynamicRegistration"));

    /* the workspace root: rootUri, else the first workspace folder, else rootPath */
    json_t *ru = lsp_get(params, "rootUri", JSON_STRING);
    json_t *folders = lsp_get(params, "workspaceFolders", JSON_ARRAY);
    if (!ru && folders && json_array_size(folders)) ru = lsp_get(json_array_get(folders, 0), "uri", JSON_STRING);
    if (ru) s->root = lsp_uri_to_path(json_string_value(ru));
    json_t *rp = lsp_get(params, "rootPath", JSON_STRING);
    if (!s->root && rp) s->root = gl_strdup(json_string_value(rp));
    /* the helpers a document imports are linted through the cache `check` uses in this folder */
    gl_free(s->cache_dir);
    s->cache_dir = cache_dir_default(s->root ? s->root : ".");

    static const char *const enc_names[] = {"utf-16", "utf-8", "utf-32"};
    json_t *c = json_object();
    json_object_set_new(c, "positionEncoding", json_string(enc_names[s->enc]));
    json_object_set_new(c, "textDocumentSync", json_pack("{s:b,s:i,s:{s:b}}", "openClose", 1, "change", 2, "save",
                                                         "includeText", 0));
    /* notebooks (LSP 3.17): .ipynb files, their Python cells linted together (lsp_nb.c). No cell
     * filter: markdown cells come too, so cells are numbered as `check` numbers them. */
    json_object_set_new(c, "notebookDocumentSync",
                        json_pack("{s:[{s:{s:s}},{s:{s:s}}],s:b}", "notebookSelector", "notebook", "pattern", "**/*.ipynb",
                                  "notebook", "notebookType", "jupyter-notebook", "save", 1));
    json_object_set_new(c, "codeActionProvider", json_pack("{s:[s,s],s:b}", "codeActionKinds", "quickfix",
                                                           "source.fixAll.gradleak", "resolveProvider", 0));
    json_object_set_new(c, "hoverProvider", json_true());
    if (s->pull)
        json_object_set_new(c, "diagnosticProvider", json_pack("{s:s,s:b,s:b}", "identifier", "gradleak",
                                                               "interFileDependencies", 0, "workspaceDiagnostics", 0));
    s->initialized = true;
    return json_pack("{s:o,s:{s:s,s:s}}", "capabilities", c, "serverInfo", "name", "gradleak", "version", GL_VERSION);
}

static void n_initialized(LspServer *s, json_t *params)
{
    GL_UNUSED(params);
    if (!s->watch_dynamic) return;
    /* reload the settings when a configuration file changes on disk */
    lsp__request(s, "client/registerCapability",
                 json_pack("{s:[{s:s,s:s,s:{s:[{s:s},{s:s}]}}]}", "registrations", "id", "gradleak-config-watch",
                           "method", "workspace/didChangeWatchedFiles", "registerOptions", "watchers", "globPattern",
                           "**/pyproject.toml", "globPattern", "**/gradleak.toml"));
}

static json_t *h_shutdown(LspServer *s, json_t *params, RpcError *e)
{
    GL_UNUSED(params), GL_UNUSED(e);
    s->shutdown = true;
    return json_null();
}

/* ---- text synchronisation ---- */

static json_t *lsp__text_doc_uri(json_t *params, const char **uri)
{
    json_t *td = lsp_get(params, "textDocument", JSON_OBJECT);
    json_t *u = td ? lsp_get(td, "uri", JSON_STRING) : NULL;
    *uri = u ? json_string_value(u) : NULL;
    return td;
}

static void n_did_open(LspServer *s, json_t *params)
{
    const char *uri;
    json_t *td = lsp__text_doc_uri(params, &uri);
    json_t *text = td ? lsp_get(td, "text", JSON_STRING) : NULL;
    if (!uri || !text) {
        lsp__log("didOpen without textDocument.uri and text: ignored");
        return;
    }
    json_t *lang = lsp_get(td, "languageId", JSON_STRING);
    json_t *ver = lsp_get(td, "version", JSON_INTEGER);
    LspDoc *old = lsp_find_doc(s, uri);
    LspDoc *d = lsp_doc_new(uri, lang ? json_string_value(lang) : NULL, ver ? json_integer_value(ver) : -1,
                            json_string_value(text), json_string_length(text));
    if (old) {
        /* opened twice: the new text wins */
        for (uint32_t i = 0; i < s->docs.len; i++)
            if (s->docs.items[i] == old) s->docs.items[i] = d;
        lsp_doc_free(old);
    } else {
        array_push(&s->docs, d);
    }
}

/* Applies a didChange's contentChanges to d (whole-text and ranged changes, in order). Every
 * change is checked before any is applied: false (with *bad the first malformed one's index) leaves
 * the text untouched. Also used for notebook cells (lsp_nb.c). */
bool lsp_apply_changes(const LspServer *s, LspDoc *d, json_t *changes, size_t *bad)
{
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        LspPos a, b;
        json_t *range = json_object_get(c, "range");
        if (!lsp_get(c, "text", JSON_STRING) || (range && !json_is_null(range) && !lsp_json_range(range, &a, &b))) {
            *bad = i;
            return false;
        }
    }
    json_array_foreach(changes, i, c) {
        json_t *text = json_object_get(c, "text");
        json_t *range = json_object_get(c, "range");
        LspPos a, b;
        if (!range || json_is_null(range)) {
            lsp_doc_set_text(d, json_string_value(text), json_string_length(text));
            continue;
        }
        lsp_json_range(range, &a, &b);
        uint32_t x = lsp_text_offset(d->text.data, d->text.len, &d->lines, a, s->enc);
        uint32_t y = lsp_text_offset(d->text.data, d->text.len, &d->lines, b, s->enc);
        if (y < x) { uint32_t t = x; x = y; y = t; }
        lsp_doc_replace(d, x, y, json_string_value(text), json_string_length(text));
    }
    return true;
}

static void n_did_change(LspServer *s, json_t *params)
{
    const char *uri;
    json_t *td = lsp__text_doc_uri(params, &uri);
    json_t *changes = lsp_get(params, "contentChanges", JSON_ARRAY);
    LspDoc *d = uri ? lsp_find_doc(s, uri) : NULL;
    if (!d || !changes) {
        lsp__log("didChange %s: %s", uri ? uri : "(no uri)", !d ? "document not open" : "no contentChanges");
        return;
    }
    size_t bad;
    if (!lsp_apply_changes(s, d, changes, &bad)) {
        lsp__log("didChange %s: change %zu is malformed; the document is unchanged", uri, bad);
        return;
    }
    json_t *ver = lsp_get(td, "version", JSON_INTEGER);
    if (ver) d->version = json_integer_value(ver);
}

static void n_did_save(LspServer *s, json_t *params)
{
    const char *uri;
    lsp__text_doc_uri(params, &uri);
    if (uri && lsp__is_config_file(uri)) {
        lsp__settings_changed(s);
        return;
    }
    /* a saved file may be a helper other documents import (their runs read it from disk, as
     * `check` does): those that call imported names are linted again */
    bool any = false;
    for (uint32_t i = 0; uri && i < s->docs.len; i++) {
        LspDoc *d = s->docs.items[i];
        if (!d->has_result || !lint_result_calls(&d->result) || !strcmp(d->uri, uri)) continue;
        lsp_doc_invalidate(d);
        any = true;
    }
    if (any && s->pull && s->refresh) lsp__request(s, "workspace/diagnostic/refresh", json_null());
}

static void n_did_close(LspServer *s, json_t *params)
{
    const char *uri;
    lsp__text_doc_uri(params, &uri);
    for (uint32_t i = 0; uri && i < s->docs.len; i++) {
        LspDoc *d = s->docs.items[i];
        if (strcmp(d->uri, uri) != 0) continue;
        /* the server owns the client's list: clear it */
        if (!s->pull) lsp__notify(s, "textDocument/publishDiagnostics", json_pack("{s:s,s:[]}", "uri", uri, "diagnostics"));
        lsp_doc_free(d);
        s->docs.items[i] = s->docs.items[--s->docs.len];
        return;
    }
}

/* ---- notebooks (lsp_nb.c) ---- */

static void lsp__clear(LspServer *s, const char *uri)
{
    if (!s->pull) lsp__notify(s, "textDocument/publishDiagnostics", json_pack("{s:s,s:[]}", "uri", uri, "diagnostics"));
}

static void n_nb_did_open(LspServer *s, json_t *params) { lsp_nb_did_open(s, params); }
static void n_nb_did_change(LspServer *s, json_t *params) { lsp_nb_did_change(s, params, lsp__clear); }
static void n_nb_did_save(LspServer *s, json_t *params) { GL_UNUSED(s), GL_UNUSED(params); }
static void n_nb_did_close(LspServer *s, json_t *params) { lsp_nb_did_close(s, params, lsp__clear); }

static void n_did_change_watched(LspServer *s, json_t *params)
{
    json_t *changes = lsp_get(params, "changes", JSON_ARRAY);
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        json_t *u = lsp_get(c, "uri", JSON_STRING);
        if (u && lsp__is_config_file(json_string_value(u))) {
            lsp__settings_changed(s);
            return;
        }
    }
}

/* Settings come from pyproject.toml / gradleak.toml, never from the client: whatever `settings` holds
 * (VS Code and Helix send null, Neovim and eglot {}), nothing changes. Also for a cancelled
 * progress: the server starts none. Both are accepted quietly instead of logged as unknown. */
static void n_ignored(LspServer *s, json_t *params)
{
    GL_UNUSED(s), GL_UNUSED(params);
}

static json_t *h_diagnostic(LspServer *s, json_t *params, RpcError *e)
{
    const char *uri;
    lsp__text_doc_uri(params, &uri);
    if (!uri) {
        rpc_error(e, RPC_INVALID_PARAMS, "textDocument/diagnostic needs textDocument.uri");
        return NULL;
    }
    LspDoc *d = lsp_find_doc(s, uri);
    if (!d) return json_pack("{s:s,s:[]}", "kind", "full", "items");
    lsp_ensure_linted(s, d);
    char rid[32];
    snprintf(rid, sizeof rid, "%llu", (unsigned long long)d->result_seq);
    json_t *prev = lsp_get(params, "previousResultId", JSON_STRING);
    if (prev && !strcmp(json_string_value(prev), rid)) return json_pack("{s:s,s:s}", "kind", "unchanged", "resultId", rid);
    return json_pack("{s:s,s:s,s:o}", "kind", "full", "resultId", rid, "items", lsp_diagnostics_json(s, d));
}

/* ---- dispatch ---- */

/* The document a request names (params.textDocument.uri), linted; NULL when there is none. */
static LspDoc *lsp__request_doc(LspServer *s, json_t *params)
{
    json_t *td = lsp_get(params, "textDocument", JSON_OBJECT);
    json_t *uri = td ? lsp_get(td, "uri", JSON_STRING) : NULL;
    LspDoc *d = uri ? lsp_find_doc(s, json_string_value(uri)) : NULL;
    if (d) lsp_ensure_linted(s, d);
    return d;
}

static json_t *h_code_action(LspServer *s, json_t *params, RpcError *e)
{
    LspDoc *d = lsp__request_doc(s, params);
    LintOptions lo;
    const LintOptions *opts = d ? lsp_options_for(s, d, &lo) : NULL;
    return lsp_code_actions(s, d, opts, params, e);
}

static json_t *h_hover(LspServer *s, json_t *params, RpcError *e)
{
    return lsp_hover(s, lsp__request_doc(s, params), params, e);
}

typedef json_t *(*RequestFn)(LspServer *s, json_t *params, RpcError *e);
typedef void (*NotifyFn)(LspServer *s, json_t *params);

static const struct {
    const char *method;
    RequestFn request;
} lsp_requests[] = {
    {"initialize", h_initialize},
    {"shutdown", h_shutdown},
    {"textDocument/codeAction", h_code_action},
    {"textDocument/hover", h_hover},
    {"textDocument/diagnostic", h_diagnostic},
};

static const struct {
    const char *method;
    NotifyFn notify;
} lsp_notifications[] = {
    {"initialized", n_initialized},
    {"textDocument/didOpen", n_did_open},
    {"textDocument/didChange", n_did_change},
    {"textDocument/didSave", n_did_save},
    {"textDocument/didClose", n_did_close},
    {"workspace/didChangeWatchedFiles", n_did_change_watched},
    {"workspace/didChangeConfiguration", n_ignored},
    {"window/workDoneProgress/cancel", n_ignored},
    {"notebookDocument/didOpen", n_nb_did_open},
    {"notebookDocument/didChange", n_nb_did_change},
    {"notebookDocument/didSave", n_nb_did_save},
    {"notebookDocument/didClose", n_nb_did_close},
};

static void lsp__handle_request(LspServer *s, json_t *id, const char *method, json_t *params)
{
    RpcError e = {0, ""};
    RequestFn fn = NULL;
    for (size_t i = 0; i < ARRAY_LEN(lsp_requests); i++)
        if (!strcmp(lsp_requests[i].method, method)) fn = lsp_requests[i].request;
    if (!strcmp(method, "initialize") && s->initialized) {
        rpc_error(&e, RPC_INVALID_REQUEST, "initialize may be sent only once");
    } else if (!s->initialized && strcmp(method, "initialize") != 0) {
        rpc_error(&e, LSP_SERVER_NOT_INITIALIZED, "the server is not initialized: send initialize first");
    } else if (s->shutdown) {
        rpc_error(&e, RPC_INVALID_REQUEST, "the server is shut down: only the exit notification is accepted");
    } else if (!fn) {
        rpc_error(&e, RPC_METHOD_NOT_FOUND, "method not found: %.200s", method);
    } else {
        json_t *result = fn(s, params, &e);
        if (!e.code) {
            lsp__respond(s, id, result);
            return;
        }
        json_decref(result);
    }
    lsp__respond_error(s, id, &e);
}

static void lsp__handle_notification(LspServer *s, const char *method, json_t *params)
{
    if (!strcmp(method, "exit")) {
        s->exit = true;
        return;
    }
    /* before initialize and after shutdown, notifications are dropped (the spec) */
    if (!s->initialized || s->shutdown) return;
    for (size_t i = 0; i < ARRAY_LEN(lsp_notifications); i++)
        if (!strcmp(lsp_notifications[i].method, method)) {
            lsp_notifications[i].notify(s, params);
            return;
        }
    /* $/cancelRequest, $/setTrace...: optional, and every request is answered before the next is read */
    if (strncmp(method, "$/", 2) != 0) lsp__log("ignoring unknown notification %.200s", method);
}

/* One message body: checks its JSON-RPC shape, then dispatches it. */
static void lsp__handle(LspServer *s, const char *body, size_t len)
{
    RpcError e = {0, ""};
    json_error_t je;
    json_t *msg = json_loadb(body, len, JSON_ALLOW_NUL, &je);
    if (!msg) {
        rpc_error(&e, RPC_PARSE_ERROR, "parse error at line %d, column %d: %s", je.line, je.column, je.text);
        lsp__respond_error(s, NULL, &e);
        return;
    }
    if (!json_is_object(msg)) {
        rpc_error(&e, RPC_INVALID_REQUEST, json_is_array(msg) ? "batches are not part of LSP: send one message at a time"
                                                              : "a message must be a JSON object");
        lsp__respond_error(s, NULL, &e);
        json_decref(msg);
        return;
    }
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    json_t *ver = json_object_get(msg, "jsonrpc");
    bool id_ok = id && (json_is_string(id) || json_is_integer(id));
    /* "params": null is what clients send for methods without params (Helix and older eglot for
     * shutdown and exit, serialising "nothing"): the same as no params, for every method */
    if (json_is_null(params)) params = NULL;
    if (!method && id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
        /* a response to one of our requests (registerCapability, refresh): nothing to do */
        json_decref(msg);
        return;
    }
    if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0)
        rpc_error(&e, RPC_INVALID_REQUEST, "\"jsonrpc\": \"2.0\" is required");
    else if (id && !id_ok)
        rpc_error(&e, RPC_INVALID_REQUEST, "id must be a string or an integer");
    else if (!json_is_string(method))
        rpc_error(&e, RPC_INVALID_REQUEST, method ? "method must be a string" : "no method");
    else if (params && !json_is_object(params) && !json_is_array(params))
        rpc_error(&e, RPC_INVALID_PARAMS, "params must be an object or an array");
    if (e.code) {
        /* a malformed notification cannot be answered; a malformed request is */
        if (id) lsp__respond_error(s, id_ok ? id : NULL, &e);
        else lsp__log("dropped a malformed notification: %s", e.message);
        json_decref(msg);
        return;
    }
    if (id) lsp__handle_request(s, id, json_string_value(method), params);
    else lsp__handle_notification(s, json_string_value(method), params);
    json_decref(msg);
}

int lsp_serve(int in_fd, int out_fd)
{
    LspServer s;
    memset(&s, 0, sizeof s);
    s.out_fd = out_fd;
    array_init(&s.docs);
    array_init(&s.notebooks);
    ConfigOverrides ov;
    config_overrides_init(&ov);
    s.cfg = config_new(&ov);
    lsp_reader_init_fd(&s.rd, in_fd);
    /* a client that goes away must not kill us mid-write: write errors end the loop instead */
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        if (!lsp_reader_pending(&s.rd)) lsp__flush(&s);
        const char *body, *why;
        size_t len;
        LspReadStatus st = lsp_read(&s.rd, &body, &len, &why);
        if (st == LSP_READ_EOF) break;
        if (st == LSP_READ_ERROR) {
            RpcError e;
            rpc_error(&e, RPC_PARSE_ERROR, "%s", why);
            lsp__log("framing error: %s", why);
            lsp__respond_error(&s, NULL, &e);
        } else {
            lsp__handle(&s, body, len);
        }
        if (s.exit || s.write_failed) break;
    }
    for (uint32_t i = 0; i < s.docs.len; i++) lsp_doc_free(s.docs.items[i]);
    array_free(&s.docs);
    lsp_nb_free_all(&s);
    lsp_reader_free(&s.rd);
    gl_free(s.root);
    cache_flush(s.cache);
    cache_close(s.cache);
    gl_free(s.cache_dir);
    gl_free(s.config_error);
    config_free(s.cfg);
    /* exit code per the spec: 0 after shutdown, 1 when exit (or the end of input) came without it */
    return s.shutdown ? 0 : 1;
}

static const char *const lsp_usage =
    "Usage: gradleak lsp\n"
    "\n"
    "Runs the gradleak language server on stdin/stdout (LSP 3.17, JSON-RPC with Content-Length\n"
    "framing). Editors start it themselves; see README.md for Neovim and VS Code-style setups.\n"
    "It publishes diagnostics as you type, offers each rule's fix, \"Disable GLxxx for this line\"\n"
    "(a # noqa comment; // NOLINT(GLxxx) in C++) and a fix-all source action, and shows a rule's\n"
    "documentation on hover. Python and C++ (LibTorch) documents are linted.\n"
    "It never runs your code. Logs go to stderr.\n";

int lsp_main(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(lsp_usage, stdout);
            return 0;
        }
        /* clients commonly add --stdio; stdio is the only transport */
        if (!strcmp(argv[i], "--stdio")) continue;
        fprintf(stderr, "gradleak: error: lsp: unknown option '%s' (the server speaks LSP on stdin/stdout)\n", argv[i]);
        return 2;
    }
    return lsp_serve(0, 1);
}
