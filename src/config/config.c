/* Project settings: discovery of gradleak.toml / pyproject.toml, strict key checking, merging with
 * the command-line overrides, globs for exclude and per-file-ignores. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/file.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "config/config.h"
#include "config/toml.h"

/* Configuration files larger than this are refused: a settings file is a few hundred bytes. */
#define CONFIG_MAX_BYTES (1u << 20)

struct Config {
    ConfigOverrides ov;
    char *cwd;
    pthread_mutex_t mu;
    /* Every Settings read (one per configuration file, plus the defaults), owned. */
    Array(Settings *) loaded;
    /* directory (absolute) -> index into loaded, or DIR_ERROR + index into errors */
    StrMap dirs;
    Array(char *) dir_keys; /* the keys of dirs, owned */
    Array(char *) errors;   /* messages of files that failed to load, owned */
};

#define DIR_ERROR 0x80000000u

static void config__err(ConfigError *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void config__err(ConfigError *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

/* ---- codes and versions ---- */

/* One token of a code list into set (value on or off). Returns false when it names no rule. */
static bool config__code(const char *tok, RuleSet *set)
{
    if (!strcasecmp(tok, "ALL") || !strcasecmp(tok, "GL")) {
        for (int i = 0; i < RULE_COUNT; i++) set->on[i] = 1;
        return true;
    }
    bool any = false;
    size_t n = strlen(tok);
    for (int i = 0; i < RULE_COUNT; i++) {
        const RuleInfo *ri = rule_info((RuleId)i);
        /* prefixes select families, as ruff: GL1 = GL101..GL107 */
        if (!strncasecmp(ri->code, tok, n) || !strcmp(ri->name, tok)) set->on[i] = 1, any = true;
    }
    return any;
}

int config_parse_codes(const char *list, RuleSet *out, ConfigError *err)
{
    memset(out, 0, sizeof *out);
    char *copy = gl_strdup(list);
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        if (!config__code(tok, out)) {
            config__err(err, "unknown rule '%s' (see 'gradleak rules')", tok);
            rc = -1;
            break;
        }
    }
    gl_free(copy);
    return rc;
}

int config_parse_torch_version(const char *s, TorchVersion *out)
{
    unsigned long part[2] = {0, 0};
    const char *p = s;
    for (int i = 0; i < 2; i++) {
        if (*p < '0' || *p > '9') return -1;
        char *end;
        part[i] = strtoul(p, &end, 10);
        if (part[i] > 999) return -1;
        p = end;
        if (i == 0 && *p++ != '.') return -1;
    }
    /* a patch level and a local suffix ("2.1.0+cu121") are allowed and ignored */
    if (*p && *p != '.' && *p != '+' && *p != 'a' && *p != 'b' && *p != 'r' && *p != 'd') return -1;
    out->major = (uint16_t)part[0];
    out->minor = (uint16_t)part[1];
    return 0;
}

static bool config__version_before(TorchVersion v, TorchVersion since)
{
    return v.major < since.major || (v.major == since.major && v.minor < since.minor);
}

/* ---- paths ---- */

/* Absolute, lexically normalised form of path ("." and ".." resolved, no symlinks followed),
 * relative to cwd. gl_free the result. */
static char *config__abspath(const char *cwd, const char *path)
{
    StrBuf in;
    sb_init(&in);
    if (path[0] == '/') sb_puts(&in, path);
    else sb_printf(&in, "%s/%s", cwd, path);
    char *out = gl_malloc(in.len + 2);
    size_t n = 0;
    const char *p = in.data;
    while (*p) {
        while (*p == '/') p++;
        const char *seg = p;
        while (*p && *p != '/') p++;
        size_t len = (size_t)(p - seg);
        if (!len || (len == 1 && seg[0] == '.')) continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (n > 0 && out[n - 1] != '/') n--;
            if (n > 0) n--;
            continue;
        }
        out[n++] = '/';
        memcpy(out + n, seg, len);
        n += len;
    }
    if (!n) out[n++] = '/';
    out[n] = 0;
    sb_free(&in);
    return out;
}

char *config_abspath(const char *path)
{
    char cwd[4096];
    return config__abspath(getcwd(cwd, sizeof cwd) ? cwd : "/", path);
}

/* path relative to root when it lies below it, else path itself. Points into path. */
static const char *config__relative(const char *root, const char *abs)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/') return abs[1] ? abs + 1 : abs;
    if (!strncmp(abs, root, n) && abs[n] == '/') return abs + n + 1;
    if (!strcmp(abs, root)) return "";
    return abs;
}

/* ---- globs ---- */

typedef enum GlobTok { GT_LIT, GT_ANY1, GT_STAR, GT_DSTAR, GT_DSTAR_SLASH, GT_CLASS } GlobTok;

typedef struct GlobItem {
    GlobTok kind;
    char c;              /* GT_LIT */
    const char *cls;     /* GT_CLASS: the text between '[' and ']' */
    size_t cls_len;
} GlobItem;

static bool config__class_match(const char *cls, size_t len, unsigned char ch)
{
    bool neg = false;
    size_t i = 0;
    if (i < len && (cls[i] == '!' || cls[i] == '^')) neg = true, i++;
    bool hit = false;
    while (i < len) {
        unsigned char lo = (unsigned char)cls[i];
        if (lo == '\\' && i + 1 < len) lo = (unsigned char)cls[++i];
        unsigned char hi = lo;
        if (i + 2 < len && cls[i + 1] == '-') {
            hi = (unsigned char)cls[i + 2];
            if (hi == '\\' && i + 3 < len) hi = (unsigned char)cls[++i + 2];
            i += 2;
        }
        if (ch >= lo && ch <= hi) hit = true;
        i++;
    }
    return hit != neg && ch != '/';
}

/* Dynamic programming over (pattern item, text position): no recursion, no exponential
 * backtracking, O(items * len) time. */
bool config_glob_match(const char *pattern, const char *text)
{
    size_t plen = strlen(pattern), n = strlen(text);
    GlobItem *items = gl_calloc(plen + 1, sizeof(GlobItem));
    size_t ni = 0;
    for (size_t i = 0; i < plen;) {
        GlobItem it;
        memset(&it, 0, sizeof it);
        char c = pattern[i];
        if (c == '*' && i + 1 < plen && pattern[i + 1] == '*') {
            i += 2;
            while (i < plen && pattern[i] == '*') i++;
            if (i < plen && pattern[i] == '/') it.kind = GT_DSTAR_SLASH, i++;
            else it.kind = GT_DSTAR;
        } else if (c == '*') {
            it.kind = GT_STAR, i++;
        } else if (c == '?') {
            it.kind = GT_ANY1, i++;
        } else if (c == '[') {
            size_t j = i + 1;
            if (j < plen && (pattern[j] == '!' || pattern[j] == '^')) j++;
            if (j < plen && pattern[j] == ']') j++;
            while (j < plen && pattern[j] != ']') j += pattern[j] == '\\' && j + 1 < plen ? 2 : 1;
            if (j < plen) {
                it.kind = GT_CLASS, it.cls = pattern + i + 1, it.cls_len = j - i - 1;
                i = j + 1;
            } else {
                it.kind = GT_LIT, it.c = '[', i++; /* an unclosed '[' is a literal */
            }
        } else if (c == '\\' && i + 1 < plen) {
            it.kind = GT_LIT, it.c = pattern[i + 1], i += 2;
        } else {
            it.kind = GT_LIT, it.c = c, i++;
        }
        items[ni++] = it;
    }
    bool *prev = gl_calloc(n + 1, sizeof(bool)), *cur = gl_calloc(n + 1, sizeof(bool));
    prev[0] = true;
    for (size_t k = 0; k < ni; k++) {
        const GlobItem *it = &items[k];
        bool any_prev = false; /* some prev[m] with m < j (for GT_DSTAR_SLASH) */
        for (size_t j = 0; j <= n; j++) {
            unsigned char ch = j ? (unsigned char)text[j - 1] : 0;
            bool v = false;
            switch (it->kind) {
            case GT_LIT: v = j && prev[j - 1] && ch == (unsigned char)it->c; break;
            case GT_ANY1: v = j && prev[j - 1] && ch != '/'; break;
            case GT_CLASS: v = j && prev[j - 1] && config__class_match(it->cls, it->cls_len, ch); break;
            case GT_STAR: v = prev[j] || (j && cur[j - 1] && ch != '/'); break;
            case GT_DSTAR: v = prev[j] || (j && cur[j - 1]); break;
            case GT_DSTAR_SLASH: v = prev[j] || (j && ch == '/' && any_prev); break;
            }
            if (prev[j]) any_prev = true;
            cur[j] = v;
        }
        bool *t = prev;
        prev = cur, cur = t;
    }
    bool result = prev[n];
    gl_free(prev);
    gl_free(cur);
    gl_free(items);
    return result;
}

/* Does pattern match rel (a path relative to the settings' root) or one of its parent folders?
 * Patterns without a '/' match one path component (`legacy`, `*_pb2.py`); others match from the
 * root (`src/gen/` then `*.py`); absolute patterns match the absolute path. */
static bool config__path_matches(const char *pattern, const char *rel, const char *abs, bool parents)
{
    while (pattern[0] == '.' && pattern[1] == '/') pattern += 2;
    size_t plen = strlen(pattern);
    char *pat = gl_strndup(pattern, plen);
    while (plen > 1 && pat[plen - 1] == '/') pat[--plen] = 0;
    bool absolute = pat[0] == '/';
    bool component = !strchr(pat, '/');
    const char *text = absolute ? abs : rel;
    size_t n = strlen(text);
    char *buf = gl_malloc(n + 1);
    bool hit = false;
    /* every prefix of text that ends at a component boundary, the whole path last */
    size_t start = absolute ? 1 : 0; /* skip the leading '/' of an absolute path */
    for (size_t end = start; end <= n && !hit; end++) {
        if (end < n && (text[end] != '/' || !parents)) continue;
        if (end == start) continue;
        if (component) {
            size_t b = end;
            while (b > start && text[b - 1] != '/') b--;
            memcpy(buf, text + b, end - b);
            buf[end - b] = 0;
        } else {
            memcpy(buf, text, end);
            buf[end] = 0;
        }
        hit = config_glob_match(pat, buf);
    }
    gl_free(buf);
    gl_free(pat);
    return hit;
}

/* ---- reading a file ---- */

static void settings__defaults(Settings *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < RULE_COUNT; i++) s->rules.on[i] = 1;
    array_init(&s->per_file_ignores);
    array_init(&s->exclude);
}

void settings_free(Settings *s)
{
    if (!s) return;
    gl_free(s->config_path);
    gl_free(s->root);
    for (uint32_t i = 0; i < s->per_file_ignores.len; i++) gl_free(s->per_file_ignores.items[i].glob);
    array_free(&s->per_file_ignores);
    for (uint32_t i = 0; i < s->exclude.len; i++) gl_free(s->exclude.items[i]);
    array_free(&s->exclude);
    memset(s, 0, sizeof *s);
}


/* The checks below share one error format: "path:line:col: what (valid: ...)". */
typedef struct Reader {
    const char *path;
    ConfigError *err;
} Reader;

static int reader__fail_at(Reader *r, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int reader__fail_at(Reader *r, uint32_t line, uint32_t col, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    config__err(r->err, "%s:%u:%u: %s", r->path, line, col, what);
    return -1;
}

/* An array of strings; every element checked. */
static int reader__strings(Reader *r, const char *key, const TomlValue *v)
{
    if (toml_type(v) != TOML_ARRAY)
        return reader__fail_at(r, toml_line(v), toml_col(v), "'%s' must be an array of strings, got %s (e.g. %s = [\"...\"])",
                               key, toml_type_name(toml_type(v)), strcmp(key, "per-file-ignores") ? key : "\"tests/*\"");
    for (size_t i = 0; i < toml_array_len(v); i++) {
        const TomlValue *e = toml_array_at(v, i);
        if (toml_type(e) != TOML_STRING)
            return reader__fail_at(r, toml_line(e), toml_col(e), "'%s' must be an array of strings, but element %zu is %s",
                                   key, i + 1, toml_type_name(toml_type(e)));
        if (strlen(toml_as_string(e)) != toml_string_len(e))
            return reader__fail_at(r, toml_line(e), toml_col(e), "'%s': element %zu contains a NUL character", key, i + 1);
    }
    return 0;
}

/* An array of rule codes into *out. */
static int reader__codes(Reader *r, const char *key, const TomlValue *v, RuleSet *out)
{
    if (reader__strings(r, key, v) < 0) return -1;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < toml_array_len(v); i++) {
        const TomlValue *e = toml_array_at(v, i);
        if (!config__code(toml_as_string(e), out))
            return reader__fail_at(r, toml_line(e), toml_col(e), "'%s': unknown rule '%s' (see 'gradleak rules')", key,
                                   toml_as_string(e));
    }
    return 0;
}

static void reader__push_strings(const TomlValue *v, Settings *s)
{
    for (size_t i = 0; i < toml_array_len(v); i++) array_push(&s->exclude, gl_strdup(toml_as_string(toml_array_at(v, i))));
}

/* Reads the [tool.gradleak] table (or gradleak.toml's root) into s, checking every key. */
static int reader__table(Reader *r, const TomlValue *t, const ConfigOverrides *ov, Settings *s)
{
    const TomlValue *excl = NULL, *extend_excl = NULL;
    bool has_select = false;
    RuleSet select, extend, ignore;
    memset(&extend, 0, sizeof extend);
    memset(&ignore, 0, sizeof ignore);
    for (size_t i = 0; i < toml_table_len(t); i++) {
        const char *key = toml_table_key_at(t, i);
        const TomlValue *v = toml_table_value_at(t, i);
        uint32_t kl, kc;
        toml_table_key_pos(t, i, &kl, &kc);
        if (!strcmp(key, "select")) {
            if (reader__codes(r, key, v, &select) < 0) return -1;
            has_select = true;
        } else if (!strcmp(key, "extend-select")) {
            if (reader__codes(r, key, v, &extend) < 0) return -1;
        } else if (!strcmp(key, "ignore")) {
            if (reader__codes(r, key, v, &ignore) < 0) return -1;
        } else if (!strcmp(key, "exclude")) {
            if (reader__strings(r, key, v) < 0) return -1;
            excl = v;
        } else if (!strcmp(key, "extend-exclude")) {
            if (reader__strings(r, key, v) < 0) return -1;
            extend_excl = v;
        } else if (!strcmp(key, "per-file-ignores")) {
            if (toml_type(v) != TOML_TABLE)
                return reader__fail_at(r, toml_line(v), toml_col(v),
                                       "'per-file-ignores' must be a table of glob = [codes], got %s "
                                       "(e.g. [tool.gradleak.per-file-ignores] \"tests/*\" = [\"GL301\"])",
                                       toml_type_name(toml_type(v)));
            for (size_t k = 0; k < toml_table_len(v); k++) {
                const char *glob = toml_table_key_at(v, k);
                const TomlValue *codes = toml_table_value_at(v, k);
                PerFileIgnore pfi;
                memset(&pfi, 0, sizeof pfi);
                if (strlen(glob) != toml_table_key_len(v, k) || !glob[0] || (glob[0] == '!' && !glob[1])) {
                    uint32_t gl, gc;
                    toml_table_key_pos(v, k, &gl, &gc);
                    return reader__fail_at(r, gl, gc, "'per-file-ignores': empty or invalid glob");
                }
                if (reader__codes(r, "per-file-ignores", codes, &pfi.codes) < 0) return -1;
                pfi.negated = glob[0] == '!';
                pfi.glob = gl_strdup(glob + pfi.negated);
                array_push(&s->per_file_ignores, pfi);
            }
        } else if (!strcmp(key, "torch-version")) {
            const char *ver = toml_as_string(v);
            if (!ver || config_parse_torch_version(ver, &s->torch) < 0)
                return reader__fail_at(r, toml_line(v), toml_col(v),
                                       "'torch-version' must be a string like \"2.1\", got %s%s%s",
                                       ver ? "\"" : toml_type_name(toml_type(v)), ver ? ver : "", ver ? "\"" : "");
        } else if (!strcmp(key, "jobs")) {
            int64_t n;
            if (!toml_as_int(v, &n) || n < 1 || n > 1024)
                return reader__fail_at(r, toml_line(v), toml_col(v), "'jobs' must be an integer from 1 to 1024");
            s->jobs = (int)n;
        } else {
            char shown[80];
            snprintf(shown, sizeof shown, "%s", key);
            return reader__fail_at(r, kl, kc, "unknown key '%s'; valid keys: " CONFIG_KEYS, shown);
        }
    }
    if (has_select) s->rules = select;
    for (int i = 0; i < RULE_COUNT; i++) {
        if (extend.on[i]) s->rules.on[i] = 1;
        if (ignore.on[i]) s->rules.on[i] = 0;
    }
    if (!ov || !ov->has_exclude) {
        if (excl) reader__push_strings(excl, s);
    }
    if (extend_excl) reader__push_strings(extend_excl, s);
    return 0;
}

static uint64_t config__fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Applies the command-line overrides on top of what the file gave, and hashes the result. */
static void settings__finish(Settings *s, const ConfigOverrides *ov)
{
    if (ov) {
        for (uint32_t i = 0; i < ov->rule_ops.len; i++) {
            const RuleOp *op = &ov->rule_ops.items[i];
            if (op->kind == RULE_OP_SELECT) s->rules = op->codes;
            for (int k = 0; k < RULE_COUNT; k++) {
                if (op->kind == RULE_OP_EXTEND && op->codes.on[k]) s->rules.on[k] = 1;
                if (op->kind == RULE_OP_IGNORE && op->codes.on[k]) s->rules.on[k] = 0;
            }
        }
        if (ov->has_exclude)
            for (uint32_t i = 0; i < ov->exclude.len; i++) array_push(&s->exclude, gl_strdup(ov->exclude.items[i]));
        for (uint32_t i = 0; i < ov->extend_exclude.len; i++) array_push(&s->exclude, gl_strdup(ov->extend_exclude.items[i]));
        if (ov->torch.major || ov->torch.minor) s->torch = ov->torch;
        if (ov->jobs) s->jobs = ov->jobs;
    }
    uint64_t h = 0xcbf29ce484222325ull;
    h = config__fnv(h, s->rules.on, sizeof s->rules.on);
    for (uint32_t i = 0; i < s->per_file_ignores.len; i++) {
        const PerFileIgnore *p = &s->per_file_ignores.items[i];
        h = config__fnv(h, p->glob, strlen(p->glob) + 1);
        h = config__fnv(h, &p->negated, 1);
        h = config__fnv(h, p->codes.on, sizeof p->codes.on);
    }
    for (uint32_t i = 0; i < s->exclude.len; i++) h = config__fnv(h, s->exclude.items[i], strlen(s->exclude.items[i]) + 1);
    h = config__fnv(h, &s->torch, sizeof s->torch);
    h = config__fnv(h, s->root ? s->root : "", s->root ? strlen(s->root) : 0);
    s->hash = h;
}

static char *config__read(const char *path, size_t *len, ConfigError *err)
{
    char *text = gl_read_file(path, CONFIG_MAX_BYTES, len);
    if (!text)
        config__err(err, "%s: cannot read the configuration file: %s", path,
                    errno == EFBIG ? "larger than 1 MiB" : strerror(errno));
    return text;
}

/* Parses path; *has_table tells whether it configures gradleak (gradleak.toml always does). */
static int config__load(const char *file, const char *shown, const char *abs_dir, bool pyproject,
                        const ConfigOverrides *ov, Settings *out, bool *has_table, ConfigError *err)
{
    const char *path = shown; /* what messages call it (relative to the cwd when below it) */
    settings__defaults(out);
    *has_table = false;
    size_t len;
    char *src = config__read(file, &len, err);
    if (!src) return -1;
    TomlError te;
    TomlValue *root = toml_parse(src, len, &te);
    gl_free(src);
    if (!root) {
        config__err(err, "%s:%u:%u: invalid TOML: %s", path, te.line, te.col, te.message);
        return -1;
    }
    const TomlValue *t = root;
    if (pyproject) {
        const TomlValue *tool = toml_table_get(root, "tool");
        t = tool ? toml_table_get(tool, "gradleak") : NULL;
        if (t && toml_type(t) != TOML_TABLE) {
            config__err(err, "%s:%u:%u: 'tool.gradleak' must be a table", path, toml_line(t), toml_col(t));
            toml_free(root);
            return -1;
        }
    }
    int rc = 0;
    if (t) {
        *has_table = true;
        Reader r = {path, err};
        rc = reader__table(&r, t, ov, out);
    }
    toml_free(root);
    if (rc < 0) {
        settings_free(out);
        return -1;
    }
    out->config_path = gl_strdup(file);
    out->root = gl_strdup(abs_dir);
    settings__finish(out, ov);
    return 0;
}

int config_load_file(const char *path, const ConfigOverrides *ov, Settings *out, ConfigError *err)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, "/");
    char *abs = config__abspath(cwd, path);
    char *slash = strrchr(abs, '/');
    if (slash == abs) slash[1] = 0;
    else *slash = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    bool has;
    int rc = config__load(path, path, abs, !strcmp(base, "pyproject.toml"), ov, out, &has, err);
    gl_free(abs);
    return rc;
}

/* ---- the Config: discovery and the per-directory cache ---- */

void config_overrides_init(ConfigOverrides *ov)
{
    memset(ov, 0, sizeof *ov);
    array_init(&ov->rule_ops);
    array_init(&ov->exclude);
    array_init(&ov->extend_exclude);
}

void config_overrides_free(ConfigOverrides *ov)
{
    array_free(&ov->rule_ops);
    for (uint32_t i = 0; i < ov->exclude.len; i++) gl_free(ov->exclude.items[i]);
    array_free(&ov->exclude);
    for (uint32_t i = 0; i < ov->extend_exclude.len; i++) gl_free(ov->extend_exclude.items[i]);
    array_free(&ov->extend_exclude);
    gl_free(ov->config_file);
    config_overrides_init(ov);
}

Config *config_new(ConfigOverrides *ov)
{
    Config *c = gl_calloc(1, sizeof *c);
    c->ov = *ov;
    config_overrides_init(ov);
    char cwd[4096];
    c->cwd = gl_strdup(getcwd(cwd, sizeof cwd) ? cwd : "/");
    pthread_mutex_init(&c->mu, NULL);
    array_init(&c->loaded);
    strmap_init(&c->dirs);
    array_init(&c->dir_keys);
    array_init(&c->errors);
    return c;
}

void config_reload(Config *c)
{
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < c->loaded.len; i++) {
        settings_free(c->loaded.items[i]);
        gl_free(c->loaded.items[i]);
    }
    array_clear(&c->loaded);
    strmap_free(&c->dirs);
    strmap_init(&c->dirs);
    for (uint32_t i = 0; i < c->dir_keys.len; i++) gl_free(c->dir_keys.items[i]);
    array_clear(&c->dir_keys);
    for (uint32_t i = 0; i < c->errors.len; i++) gl_free(c->errors.items[i]);
    array_clear(&c->errors);
    pthread_mutex_unlock(&c->mu);
}

void config_free(Config *c)
{
    if (!c) return;
    config_reload(c);
    array_free(&c->loaded);
    strmap_free(&c->dirs);
    array_free(&c->dir_keys);
    array_free(&c->errors);
    pthread_mutex_destroy(&c->mu);
    config_overrides_free(&c->ov);
    gl_free(c->cwd);
    gl_free(c);
}

static void config__remember(Config *c, const char *dir, uint32_t value)
{
    char *key = gl_strdup(dir);
    array_push(&c->dir_keys, key);
    strmap_put(&c->dirs, key, strlen(key), value);
}

static uint32_t config__add(Config *c, Settings *s)
{
    Settings *heap = gl_malloc(sizeof *heap);
    *heap = *s;
    array_push(&c->loaded, heap);
    return c->loaded.len - 1;
}

static bool config__is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The value for directory dir (absolute): walks up until a configured directory or one already
 * seen, then remembers the answer for every directory on the way. Called with c->mu held. */
static uint32_t config__lookup_dir(Config *c, const char *dir)
{
    Array(char *) chain;
    array_init(&chain);
    char *d = gl_strdup(dir);
    uint32_t found = UINT32_MAX;
    StrBuf p;
    sb_init(&p);
    for (;;) {
        uint32_t v = strmap_get(&c->dirs, d, strlen(d));
        if (v != UINT32_MAX) {
            found = v;
            gl_free(d);
            break;
        }
        array_push(&chain, d);
        const char *sep = strcmp(d, "/") ? "/" : "";
        static const char *const names[] = {"gradleak.toml", "pyproject.toml"};
        for (size_t k = 0; k < ARRAY_LEN(names) && found == UINT32_MAX; k++) {
            sb_clear(&p);
            sb_printf(&p, "%s%s%s", d, sep, names[k]);
            if (!config__is_file(p.data)) continue;
            Settings s;
            ConfigError err;
            bool has = false;
            if (config__load(p.data, config__relative(c->cwd, p.data), d, k == 1, &c->ov, &s, &has, &err) < 0) {
                array_push(&c->errors, gl_strdup(err.message));
                found = DIR_ERROR | (c->errors.len - 1);
            } else if (has) {
                found = config__add(c, &s);
            } else {
                settings_free(&s);
            }
        }
        if (found != UINT32_MAX) break;
        if (!strcmp(d, "/")) break;
        char *up = gl_strdup(d);
        char *slash = strrchr(up, '/');
        if (slash == up) slash[1] = 0;
        else *slash = 0;
        d = up;
    }
    sb_free(&p);
    if (found == UINT32_MAX) {
        /* no configuration file anywhere above: the defaults, rooted at the cwd */
        uint32_t v = strmap_get(&c->dirs, "", 0);
        if (v == UINT32_MAX) {
            Settings s;
            settings__defaults(&s);
            s.root = gl_strdup(c->cwd);
            settings__finish(&s, &c->ov);
            v = config__add(c, &s);
            config__remember(c, "", v);
        }
        found = v;
    }
    for (uint32_t i = 0; i < chain.len; i++) {
        config__remember(c, chain.items[i], found);
        gl_free(chain.items[i]);
    }
    array_free(&chain);
    return found;
}

int config_settings_for(Config *c, const char *path, const Settings **out, ConfigError *err)
{
    pthread_mutex_lock(&c->mu);
    uint32_t v;
    if (c->ov.isolated || c->ov.config_file) {
        v = strmap_get(&c->dirs, "", 0);
        if (v == UINT32_MAX) {
            Settings s;
            if (c->ov.config_file) {
                ConfigError e;
                if (config_load_file(c->ov.config_file, &c->ov, &s, &e) < 0) {
                    array_push(&c->errors, gl_strdup(e.message));
                    v = DIR_ERROR | (c->errors.len - 1);
                } else {
                    v = config__add(c, &s);
                }
            } else {
                settings__defaults(&s);
                s.root = gl_strdup(c->cwd);
                settings__finish(&s, &c->ov);
                v = config__add(c, &s);
            }
            config__remember(c, "", v);
        }
    } else {
        char *abs = config__abspath(c->cwd, path);
        struct stat st;
        if (!(stat(abs, &st) == 0 && S_ISDIR(st.st_mode))) {
            char *slash = strrchr(abs, '/');
            if (slash == abs) slash[1] = 0;
            else *slash = 0;
        }
        v = config__lookup_dir(c, abs);
        gl_free(abs);
    }
    int rc = 0;
    if (v & DIR_ERROR) {
        snprintf(err->message, sizeof err->message, "%s", c->errors.items[v & ~DIR_ERROR]);
        *out = NULL;
        rc = -1;
    } else {
        *out = c->loaded.items[v];
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- per-file questions ---- */

static char *settings__abs(const Settings *s, const char *path)
{
    if (path[0] == '/') return config__abspath("/", path);
    char cwd[4096];
    return config__abspath(getcwd(cwd, sizeof cwd) ? cwd : (s->root ? s->root : "/"), path);
}

void settings_rules_for(const Settings *s, const char *path, RuleSet *out)
{
    *out = s->rules;
    if (s->torch.major || s->torch.minor)
        /* rules whose code is correct before some torch version (rules.def's `since`) */
        for (int i = 0; i < RULE_COUNT; i++)
            if (config__version_before(s->torch, rule_info((RuleId)i)->since)) out->on[i] = 0;
    if (!s->per_file_ignores.len) return;
    char *abs = settings__abs(s, path);
    const char *rel = config__relative(s->root ? s->root : "/", abs);
    for (uint32_t i = 0; i < s->per_file_ignores.len; i++) {
        const PerFileIgnore *p = &s->per_file_ignores.items[i];
        if (config__path_matches(p->glob, rel, abs, true) == p->negated) continue;
        for (int k = 0; k < RULE_COUNT; k++)
            if (p->codes.on[k]) out->on[k] = 0;
    }
    gl_free(abs);
}

static bool settings__excluded(const Settings *s, const char *path, bool parents)
{
    if (!s->exclude.len) return false;
    char *abs = settings__abs(s, path);
    const char *rel = config__relative(s->root ? s->root : "/", abs);
    bool hit = false;
    for (uint32_t i = 0; i < s->exclude.len && !hit; i++) hit = config__path_matches(s->exclude.items[i], rel, abs, parents);
    gl_free(abs);
    return hit;
}

bool settings_excluded(const Settings *s, const char *path) { return settings__excluded(s, path, true); }

bool settings_excluded_entry(const Settings *s, const char *path) { return settings__excluded(s, path, false); }
