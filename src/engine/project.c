/* Linting files together: resolving imported names to the files that define them, and the rounds of
 * re-linting that carry function summaries from file to file (see project.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "base/strbuf.h"
#include "base/strmap.h"
#include "engine/project.h"

typedef struct ProjFile {
    Project *p;        /* the lookup callback gets the importing file; this leads back to the rest */
    const char *dir;   /* absolute directory: "/w/pkg" */
    const char *stem;  /* absolute path without ".py"/".pyi" and without "/__init__": "/w/pkg/utils" */
    ExportedFunc *exports;
    uint32_t n_exports;
    ImportedCall *calls;
    uint32_t n_calls;
    bool changed;      /* its summaries changed when it was linted again */
} ProjFile;

/* One exported function under one of its names ("utils.f", "pkg.utils.f"): a chain per name. */
typedef struct ProjEntry {
    uint32_t file, export, next;
} ProjEntry;

struct Project {
    Arena arena;
    ProjFile **files;  /* stable addresses: a file's ProjFile is its lookup context */
    uint32_t n, cap;
    uint32_t round;
    StrMap by_name;   /* "pkg.utils.f" -> first entry */
    Array(ProjEntry) entries;
    StrMap stems;     /* the files' stems -> index (rebuilt with by_name) */
    StrMap tried;     /* module stems looked for on disk -> 1 found, 0 not */
    StrMap dirs;      /* folder -> index into listings: each folder is read once */
    Array(StrMap *) listings;
    uint32_t n_found; /* files added from disk */
    bool indexed;     /* by_name and stems are up to date */
};

static const ExternSummary *project__lookup(void *ctx, const char *qual);

Project *project_new(uint32_t n)
{
    Project *p = gl_calloc(1, sizeof *p);
    arena_init(&p->arena);
    strmap_init(&p->by_name);
    strmap_init(&p->tried);
    strmap_init(&p->stems);
    strmap_init(&p->dirs);
    array_init(&p->listings);
    array_init(&p->entries);
    for (uint32_t i = 0; i < n; i++) project_add(p);
    return p;
}

uint32_t project_add(Project *p)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 16;
        p->files = gl_realloc(p->files, p->cap * sizeof *p->files);
    }
    ProjFile *f = ARENA_NEW(&p->arena, ProjFile);
    f->p = p;
    p->files[p->n] = f;
    p->indexed = false;
    return p->n++;
}

void project_free(Project *p)
{
    if (!p) return;
    strmap_free(&p->by_name);
    strmap_free(&p->tried);
    strmap_free(&p->stems);
    strmap_free(&p->dirs);
    for (uint32_t i = 0; i < p->listings.len; i++) strmap_free(p->listings.items[i]);
    array_free(&p->listings);
    array_free(&p->entries);
    gl_free(p->files);
    arena_free(&p->arena);
    gl_free(p);
}

void project_attach(Project *p, uint32_t i, LintOptions *o)
{
    o->ext = project__lookup;
    o->ext_ctx = p->files[i];
}

/* "/w/pkg/utils.py" -> stem "/w/pkg/utils", dir "/w/pkg"; a package's "__init__.py" is the package. */
static void project__paths(Project *p, ProjFile *f, const char *path)
{
    char *real = realpath(path, NULL);
    const char *abs = real ? real : path;
    char *stem = arena_strdup(&p->arena, abs);
    free(real); /* realpath's own malloc, not ours */
    char *slash = strrchr(stem, '/');
    f->dir = slash ? arena_strndup(&p->arena, stem, (size_t)(slash - stem)) : ".";
    char *dot = strrchr(stem, '.');
    if (dot && (!slash || dot > slash)) *dot = 0;
    size_t len = strlen(stem);
    if (len >= 9 && !strcmp(stem + len - 9, "/__init__")) stem[len - 9] = 0;
    f->stem = stem;
}

void project_set(Project *p, uint32_t i, const char *path, const LintResult *r)
{
    ProjFile *f = p->files[i];
    if (!f->stem) project__paths(p, f, path);
    if (f->exports) {
        /* linted again: did its summaries change (a helper of a helper)? */
        f->changed = f->n_exports != r->n_exports;
        for (uint32_t k = 0; k < r->n_exports && !f->changed; k++)
            f->changed = memcmp(&f->exports[k].summary, &r->exports[k].summary, sizeof(ExternSummary)) != 0;
        if (!f->changed) return;
    }
    p->indexed = false;
    f->exports = ARENA_NEW_N(&p->arena, ExportedFunc, r->n_exports ? r->n_exports : 1);
    for (uint32_t k = 0; k < r->n_exports; k++) {
        f->exports[k].name = arena_strdup(&p->arena, r->exports[k].name);
        f->exports[k].summary = r->exports[k].summary;
    }
    f->n_exports = r->n_exports;
    if (!f->calls) {
        f->calls = ARENA_NEW_N(&p->arena, ImportedCall, r->n_calls ? r->n_calls : 1);
        for (uint32_t k = 0; k < r->n_calls; k++) {
            f->calls[k] = r->calls[k];
            f->calls[k].qual = arena_strdup(&p->arena, r->calls[k].qual);
        }
        f->n_calls = r->n_calls;
    }
}

/* Every name an exported function can be imported under: "utils.f", "pkg.utils.f", "w.pkg.utils.f". */
static void project__index(Project *p)
{
    if (p->indexed) return;
    p->indexed = true;
    strmap_free(&p->by_name);
    strmap_init(&p->by_name);
    strmap_free(&p->stems);
    strmap_init(&p->stems);
    array_clear(&p->entries);
    for (uint32_t i = 0; i < p->n; i++)
        if (p->files[i]->stem) strmap_put(&p->stems, p->files[i]->stem, strlen(p->files[i]->stem), i);
    StrBuf key;
    sb_init(&key);
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjFile *f = p->files[i];
        if (!f->stem) continue;
        const char *end = f->stem + strlen(f->stem);
        for (uint32_t k = 0; k < f->n_exports; k++) {
            for (const char *s = end; s > f->stem;) {
                while (s > f->stem && s[-1] != '/') s--; /* back to the start of a component */
                sb_clear(&key);
                for (const char *c = s; c < end; c++) sb_putc(&key, *c == '/' ? '.' : *c);
                sb_printf(&key, ".%s", f->exports[k].name);
                const char *name = arena_strdup(&p->arena, key.data);
                ProjEntry e = {i, k, strmap_get(&p->by_name, name, key.len)};
                array_push(&p->entries, e);
                strmap_put(&p->by_name, name, key.len, p->entries.len - 1);
                if (s > f->stem) s--; /* onto the '/' before it */
            }
        }
    }
    sb_free(&key);
}

/* How many leading path components two directories share. */
static int project__closeness(const char *a, const char *b)
{
    int shared = 0;
    for (size_t i = 0;; i++) {
        bool end_a = a[i] == 0 || a[i] == '/', end_b = b[i] == 0 || b[i] == '/';
        if (end_a && end_b) {
            shared++;
            if (!a[i] || !b[i]) return shared;
            continue;
        }
        if (a[i] != b[i]) return shared;
    }
}

static const ExternSummary *project__resolve(const ProjFile *from, const char *qual, uint32_t *file)
{
    const Project *p = from->p;
    const ProjFile *self = from;
    size_t dots = strspn(qual, ".");
    const char *name = qual + dots;
    char target[PATH_MAX];
    target[0] = 0;
    if (dots) {
        /* relative: ".utils.f" is utils.py next to the caller, "..utils.f" one directory up */
        const char *fn = strrchr(name, '.');
        size_t dlen = strlen(from->dir);
        for (size_t up = 1; up < dots; up++) {
            while (dlen > 0 && from->dir[dlen - 1] != '/') dlen--;
            if (dlen > 0) dlen--;
        }
        int n = fn ? snprintf(target, sizeof target, "%.*s/%.*s", (int)dlen, from->dir, (int)(fn - name), name)
                   : snprintf(target, sizeof target, "%.*s", (int)dlen, from->dir);
        if (n < 0 || (size_t)n >= sizeof target) return NULL;
        for (char *c = target + dlen + 1; fn && *c; c++)
            if (*c == '.') *c = '/';
        /* the index key: the target's last component and the function */
        const char *last = strrchr(target, '/');
        char key[PATH_MAX];
        n = snprintf(key, sizeof key, "%s.%s", last ? last + 1 : target, fn ? fn + 1 : name);
        if (n < 0 || (size_t)n >= sizeof key) return NULL;
        name = key;
        for (uint32_t e = strmap_get(&p->by_name, name, strlen(name)); e != UINT32_MAX;
             e = p->entries.items[e].next) {
            const ProjEntry *pe = &p->entries.items[e];
            if (p->files[pe->file] != self && !strcmp(p->files[pe->file]->stem, target)) {
                *file = pe->file;
                return &p->files[pe->file]->exports[pe->export].summary;
            }
        }
        return NULL;
    }
    /* absolute: every file the name fits; the one closest to the caller wins, a tie between files
     * that disagree knows nothing */
    const ExternSummary *best = NULL;
    int best_score = -1;
    bool tie = false;
    for (uint32_t e = strmap_get(&p->by_name, name, strlen(name)); e != UINT32_MAX; e = p->entries.items[e].next) {
        const ProjEntry *pe = &p->entries.items[e];
        const ProjFile *f = p->files[pe->file];
        if (f == self) continue;
        int score = project__closeness(from->dir, f->dir);
        const ExternSummary *s = &f->exports[pe->export].summary;
        if (score > best_score) {
            best = s, best_score = score, tie = false, *file = pe->file;
        } else if (score == best_score && memcmp(s, best, sizeof *s) != 0) {
            tie = true;
        }
    }
    return tie ? NULL : best;
}

static const ExternSummary *project__lookup(void *ctx, const char *qual)
{
    uint32_t file;
    return project__resolve(ctx, qual, &file);
}

/* Would the summary change what the analysis assumed about these calls when it could not see the
 * callee (the arguments' graph, if any, passes through; no model inside)? If not, the file is not
 * linted again for it. */
static bool project__informative(const ExternSummary *s, const ImportedCall *c)
{
    if (s->kind == VK_NONE) return false;
    if (s->grad == G_LIVE || s->elem == G_LIVE) return true; /* a source: a model call inside */
    if (s->kind == VK_MODULE || s->kind == VK_OPTIM || s->kind == VK_LOADER) return true;
    if (s->cmask && c->module_arg) return true;
    if (!c->graph_arg) return false;
    /* a graph goes in: unless the result is derived from the arguments alone, it is cut (a sanitizer) */
    return !(s->grad == G_MAY && s->pmask && !s->flags && s->kind == VK_UNKNOWN);
}

uint32_t project_next_round(Project *p, uint32_t *which)
{
    if (p->round >= PROJECT_MAX_ROUNDS) return 0;
    project__index(p);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjFile *f = p->files[i];
        bool again = false;
        for (uint32_t k = 0; k < f->n_calls && !again; k++) {
            uint32_t file;
            const ExternSummary *s = project__resolve(f, f->calls[k].qual, &file);
            if (!s || !project__informative(s, &f->calls[k])) continue;
            /* first round: every file that reaches another; later: those whose helpers changed */
            again = p->round == 0 || p->files[file]->changed;
        }
        if (again) which[n++] = i;
    }
    for (uint32_t i = 0; i < p->n; i++) p->files[i]->changed = false;
    p->round++;
    return n;
}

/* ---- helpers the files import from files not given ---- */

/* Does folder dir hold an entry called name? Each folder is read once (a run asks about the same
 * few folders for every import of every file). */
static bool project__has(Project *p, const char *dir, size_t dlen, const char *name)
{
    uint32_t at = strmap_get(&p->dirs, dir, dlen);
    if (at == UINT32_MAX) {
        StrMap *names = ARENA_NEW(&p->arena, StrMap);
        strmap_init(names);
        const char *path = arena_strndup(&p->arena, dir, dlen);
        DIR *d = opendir(dlen ? path : "/");
        for (struct dirent *e; d && (e = readdir(d)) != NULL;)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                strmap_put(names, arena_strdup(&p->arena, e->d_name), strlen(e->d_name), 1);
        if (d) closedir(d);
        array_push(&p->listings, names);
        at = p->listings.len - 1;
        strmap_put(&p->dirs, path, dlen, at);
    }
    return strmap_get(p->listings.items[at], name, strlen(name)) != UINT32_MAX;
}

/* Does dir hold what marks a project's root (where Python's path search for it ends)? */
static bool project__is_root(Project *p, const char *dir)
{
    static const char *const marks[] = {".git", "pyproject.toml", "setup.py", "setup.cfg", "gradleak.toml"};
    for (size_t i = 0; i < ARRAY_LEN(marks); i++)
        if (project__has(p, dir, strlen(dir), marks[i])) return true;
    return false;
}

typedef enum ModuleLookup { MOD_NONE, MOD_NEW, MOD_KNOWN } ModuleLookup;

/* The file of module stem ("/w/pkg/utils"): utils.py or utils/__init__.py. MOD_NEW with its path in
 * out the first time it is found; MOD_KNOWN when it is a file of the project or was found before;
 * MOD_NONE when there is no such file. */
static ModuleLookup project__module_file(Project *p, const char *stem, char *out, size_t cap)
{
    size_t len = strlen(stem);
    if (strmap_get(&p->stems, stem, len) != UINT32_MAX) return MOD_KNOWN;
    uint32_t seen = strmap_get(&p->tried, stem, len);
    if (seen != UINT32_MAX) return seen ? MOD_KNOWN : MOD_NONE;
    /* stem.py in its folder, or a package: a folder stem with an __init__.py */
    const char *slash = strrchr(stem, '/');
    if (!slash) return MOD_NONE;
    char base[NAME_MAX + 4];
    int n = snprintf(base, sizeof base, "%s.py", slash + 1);
    bool found = false;
    if (n > 0 && (size_t)n < sizeof base && project__has(p, stem, (size_t)(slash - stem), base)) {
        n = snprintf(out, cap, "%s.py", stem);
        found = n > 0 && (size_t)n < cap;
    } else if (project__has(p, stem, (size_t)(slash - stem), slash + 1) && project__has(p, stem, len, "__init__.py")) {
        n = snprintf(out, cap, "%s/__init__.py", stem);
        found = n > 0 && (size_t)n < cap;
    }
    strmap_put(&p->tried, arena_strdup(&p->arena, stem), len, found);
    return found ? MOD_NEW : MOD_NONE;
}

/* Where Python would find the module of imported name qual ("utils.f", ".utils.f") for the file from:
 * a relative module exactly; an absolute one in the caller's folder or the nearest folder above it
 * that has it, up to the project's root. The path into out; false when no such file exists. */
static bool project__find_module(Project *p, const ProjFile *from, const char *qual, char *out, size_t cap)
{
    size_t dots = strspn(qual, ".");
    const char *name = qual + dots;
    const char *fn = strrchr(name, '.');
    char mod[PATH_MAX]; /* the module's dotted name as a relative path: "pkg/utils" */
    size_t mlen = fn ? (size_t)(fn - name) : 0;
    if (mlen >= sizeof mod) return false;
    memcpy(mod, name, mlen);
    mod[mlen] = 0;
    for (char *c = mod; *c; c++)
        if (*c == '.') *c = '/';
    char stem[PATH_MAX];
    size_t dlen = strlen(from->dir);
    if (dots) {
        for (size_t up = 1; up < dots; up++) {
            while (dlen > 0 && from->dir[dlen - 1] != '/') dlen--;
            if (dlen > 0) dlen--;
        }
        int n = mlen ? snprintf(stem, sizeof stem, "%.*s/%s", (int)dlen, from->dir, mod)
                     : snprintf(stem, sizeof stem, "%.*s", (int)dlen, from->dir);
        return n > 0 && (size_t)n < sizeof stem && project__module_file(p, stem, out, cap) == MOD_NEW;
    }
    if (!mlen) return false; /* a bare name: not an import of a module */
    char dir[PATH_MAX];
    if (dlen >= sizeof dir) return false;
    memcpy(dir, from->dir, dlen + 1);
    for (int level = 0; level < PROJECT_SEARCH_LEVELS && dir[0]; level++) {
        int n = snprintf(stem, sizeof stem, "%s/%s", dir, mod);
        if (n > 0 && (size_t)n < sizeof stem) {
            ModuleLookup r = project__module_file(p, stem, out, cap);
            if (r != MOD_NONE) return r == MOD_NEW; /* the closest one wins */
        }
        if (project__is_root(p, dir)) break;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = 0;
    }
    return false;
}

uint32_t project_missing(Project *p, const char ***paths)
{
    project__index(p);
    Array(const char *) found;
    array_init(&found);
    char out[PATH_MAX];
    for (uint32_t i = 0; i < p->n && p->n_found + found.len < PROJECT_MAX_FOUND; i++) {
        const ProjFile *f = p->files[i];
        if (!f->stem) continue;
        for (uint32_t k = 0; k < f->n_calls && p->n_found + found.len < PROJECT_MAX_FOUND; k++) {
            uint32_t file;
            if (project__resolve(f, f->calls[k].qual, &file)) continue;
            if (project__find_module(p, f, f->calls[k].qual, out, sizeof out))
                array_push(&found, arena_strdup(&p->arena, out));
        }
    }
    p->n_found += found.len;
    uint32_t n = found.len;
    *paths = NULL;
    if (n) {
        *paths = (const char **)ARENA_NEW_N(&p->arena, const char *, n);
        memcpy((void *)*paths, found.items, n * sizeof(const char *));
    }
    array_free(&found);
    return n;
}
