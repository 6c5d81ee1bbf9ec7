/* Collects the files to lint: walks directories without following symlinked directories,
 * skipping VCS/virtualenv/build folders and what the root .gitignore names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/strbuf.h"
#include "engine/walk.h"

static const char *const skip_dirs[] = {
    ".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".env", "env", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradleak_cache", "build", "dist", "site-packages",
    ".eggs", "_build",
};

static bool walk__skip_dir(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(skip_dirs); i++)
        if (!strcmp(name, skip_dirs[i])) return true;
    return false;
}

static bool walk__lintable(const char *name)
{
    /* Python, and C++ sources (LibTorch); C++ headers are linted only when named explicitly */
    static const char *const exts[] = {".py", ".pyi", ".ipynb", ".cpp", ".cc", ".cxx", ".cu"};
    size_t n = strlen(name);
    for (size_t i = 0; i < ARRAY_LEN(exts); i++) {
        size_t e = strlen(exts[i]);
        if (n > e && !strcmp(name + n - e, exts[i])) return true;
    }
    return false;
}

void walk_ignore_load(WalkIgnore *ig, const char *root)
{
    memset(ig, 0, sizeof *ig);
    array_init(&ig->patterns);
    char path[4096];
    snprintf(path, sizeof path, "%s/.gitignore", root);
    /* a regular file only: opening a FIFO named .gitignore would wait for a writer forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) line[--n] = 0;
        if (!n || line[0] == '#' || line[0] == '!') continue; /* negations: not supported, ignored */
        if (line[n - 1] == '/') line[--n] = 0;
        if (!n) continue;
        array_push(&ig->patterns, gl_strdup(line[0] == '/' ? line + 1 : line));
    }
    fclose(f);
}

void walk_ignore_free(WalkIgnore *ig)
{
    for (uint32_t i = 0; i < ig->patterns.len; i++) gl_free(ig->patterns.items[i]);
    array_free(&ig->patterns);
}

static bool walk__ignored(const WalkIgnore *ig, const char *rel, const char *name)
{
    for (uint32_t i = 0; i < ig->patterns.len; i++) {
        const char *p = ig->patterns.items[i];
        if (strchr(p, '/') ? fnmatch(p, rel, FNM_PATHNAME) == 0 : fnmatch(p, name, 0) == 0) return true;
    }
    return false;
}

/* Iterative: a stack of directories to visit. */
int walk_paths(const char *const *paths, int n, const WalkIgnore *ig, WalkList *out, WalkErrFn on_err, void *ctx)
{
    Array(char *) stack;
    array_init(&stack);
    int errors = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            on_err(ctx, paths[i], strerror(errno));
            errors++;
            continue;
        }
        if (ig->skip && ig->skip(ig->skip_ctx, paths[i], S_ISDIR(st.st_mode), true)) continue;
        if (S_ISDIR(st.st_mode)) {
            array_push(&stack, gl_strdup(paths[i]));
        } else {
            WalkFile wf = {gl_strdup(paths[i]), true};
            array_push(out, wf);
        }
        while (stack.len) {
            char *dir = array_pop(&stack);
            DIR *d = opendir(dir);
            if (!d) {
                on_err(ctx, dir, strerror(errno));
                errors++;
                gl_free(dir);
                continue;
            }
            struct dirent *e;
            while ((e = readdir(d))) {
                if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
                StrBuf p;
                sb_init(&p);
                if (!strcmp(dir, ".")) sb_puts(&p, e->d_name);
                else sb_printf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
                struct stat es;
                bool is_link = lstat(p.data, &es) == 0 && S_ISLNK(es.st_mode);
                if (is_link && stat(p.data, &es) != 0) {
                    /* a dangling or looping link named like a source file: it cannot be linted, and
                     * that is said (a link to a folder or to another kind of file is no source) */
                    int why = errno;
                    if (walk__lintable(e->d_name) && !walk__ignored(ig, p.data, e->d_name) &&
                        !(ig->skip && ig->skip(ig->skip_ctx, p.data, false, false))) {
                        StrBuf m;
                        sb_init(&m);
                        sb_printf(&m, "broken symbolic link (%s)", strerror(why));
                        on_err(ctx, p.data, m.data);
                        sb_free(&m);
                        errors++;
                    }
                    sb_free(&p);
                    continue;
                }
                if (lstat(p.data, &es) != 0 && !is_link) { sb_free(&p); continue; }
                if (is_link) stat(p.data, &es);
                if (S_ISDIR(es.st_mode)) {
                    if (is_link || walk__skip_dir(e->d_name) || walk__ignored(ig, p.data, e->d_name) ||
                        (ig->skip && ig->skip(ig->skip_ctx, p.data, true, false))) {
                        sb_free(&p);
                        continue;
                    }
                    array_push(&stack, sb_take(&p));
                } else if (S_ISREG(es.st_mode) && walk__lintable(e->d_name) && !walk__ignored(ig, p.data, e->d_name) &&
                           !(ig->skip && ig->skip(ig->skip_ctx, p.data, false, false))) {
                    /* an exact copy: a run keeps every path, and the buffer has room to spare */
                    WalkFile wf = {gl_strndup(p.data, p.len), false};
                    array_push(out, wf);
                    sb_free(&p);
                } else {
                    sb_free(&p);
                }
            }
            closedir(d);
            gl_free(dir);
        }
    }
    array_free(&stack);
    return errors;
}

static int walk__cmp(const void *a, const void *b)
{
    return strcmp(((const WalkFile *)a)->path, ((const WalkFile *)b)->path);
}

void walk_sort_unique(WalkList *l)
{
    if (l->len > 1) qsort(l->items, l->len, sizeof(WalkFile), walk__cmp);
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->len; i++) {
        if (k && !strcmp(l->items[k - 1].path, l->items[i].path)) {
            gl_free(l->items[i].path);
            continue;
        }
        l->items[k++] = l->items[i];
    }
    l->len = k;
}

static bool walk__ends(const char *p, const char *const *exts, size_t n)
{
    size_t len = strlen(p);
    for (size_t i = 0; i < n; i++) {
        size_t e = strlen(exts[i]);
        if (len > e && !strcmp(p + len - e, exts[i])) return true;
    }
    return false;
}

/* dir/name with "." and ".." segments resolved lexically (a leading ".." stays), into b. */
static void walk__join(StrBuf *b, const char *dir, size_t dlen, const char *name, size_t nlen)
{
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%.*s%s%.*s", (int)dlen, dir, dlen ? "/" : "", (int)nlen, name);
    sb_clear(b);
    if (n <= 0 || (size_t)n >= sizeof tmp) return;
    size_t seg_start[256];
    uint32_t nseg = 0;
    bool abs = tmp[0] == '/';
    if (abs) sb_putc(b, '/');
    for (char *p = tmp + abs, *save = NULL, *t = strtok_r(p, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (!strcmp(t, ".")) continue;
        if (!strcmp(t, "..") && nseg && strcmp(b->data + seg_start[nseg - 1], "..") != 0) {
            b->len = seg_start[--nseg];
            if (b->len > (size_t)abs) b->len--; /* the '/' before it */
            b->data[b->len] = 0;
            continue;
        }
        if (b->len > (size_t)abs) sb_putc(b, '/');
        if (nseg < 256) seg_start[nseg++] = b->len;
        sb_puts(b, t);
    }
}

/* A vendored third-party header (third_party/zmq.hpp, extern/doctest.h): not the project's code. */
static bool walk__vendored(const char *p)
{
    static const char *const dirs[] = {"third_party/", "third-party/", "thirdparty/", "3rdparty/", "vendor/",
                                       "external/", "extern/", "deps/", "_deps/"};
    for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
        const char *h = strstr(p, dirs[i]);
        if (h && (h == p || h[-1] == '/')) return true;
    }
    return false;
}

void walk_add_cxx_headers(WalkList *l)
{
    static const char *const sources[] = {".cpp", ".cc", ".cxx", ".cu", ".c++", ".h", ".hpp", ".hh", ".hxx", ".cuh"};
    static const char *const headers[] = {".h", ".hpp", ".hh", ".hxx", ".cuh"};
    StrBuf cand, dir;
    sb_init(&cand);
    sb_init(&dir);
    uint32_t added = 0;
    for (uint32_t i = 0; i < l->len && added < 4096; i++) {
        const char *path = l->items[i].path;
        if (!walk__ends(path, sources, ARRAY_LEN(sources))) continue;
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        char line[4096];
        const char *slash = strrchr(path, '/');
        size_t dlen = slash ? (size_t)(slash - path) : 0;
        for (int nl = 0; nl < 100000 && fgets(line, sizeof line, f); nl++) {
            const char *p = line;
            while (*p == ' ' || *p == '\t') p++;
            if (*p++ != '#') continue;
            while (*p == ' ' || *p == '\t') p++;
            if (strncmp(p, "include", 7) != 0) continue;
            p += 7;
            while (*p == ' ' || *p == '\t') p++;
            if (*p++ != '"') continue;
            const char *q = strchr(p, '"');
            if (!q || q == p) continue;
            /* beside the includer, then the include/ folders above it (docs/cxx.md) */
            bool found = false;
            for (int up = -1; up < 4 && !found; up++) {
                sb_clear(&dir);
                sb_append(&dir, path, dlen);
                for (int k = 0; k < up; k++) sb_puts(&dir, dir.len ? "/.." : "..");
                if (up >= 0) sb_puts(&dir, dir.len ? "/include" : "include");
                walk__join(&cand, dir.data ? dir.data : "", dir.len, p, (size_t)(q - p));
                struct stat st;
                if (!cand.len || stat(cand.data, &st) != 0 || !S_ISREG(st.st_mode)) continue;
                found = true;
                if (!walk__ends(cand.data, headers, ARRAY_LEN(headers)) || walk__vendored(cand.data)) continue;
                bool dup = false;
                for (uint32_t k = 0; k < l->len && !dup; k++) dup = !strcmp(l->items[k].path, cand.data);
                if (dup) continue;
                WalkFile wf = {gl_strndup(cand.data, cand.len), false};
                array_push(l, wf);
                added++;
                path = l->items[i].path; /* the push may have moved the items */
            }
        }
        fclose(f);
    }
    sb_free(&cand);
    sb_free(&dir);
}

void walk_list_free(WalkList *l)
{
    for (uint32_t i = 0; i < l->len; i++) gl_free(l->items[i].path);
    array_free(l);
}
