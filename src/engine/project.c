/* Linting files together: resolving imported names to the files that define them, and the rounds of
 * re-linting that carry function summaries from file to file (see project.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    ProjFile *files;
    uint32_t n;
    uint32_t round;
    StrMap by_name;   /* "pkg.utils.f" -> first entry */
    Array(ProjEntry) entries;
};

static const ExternSummary *project__lookup(void *ctx, const char *qual);

Project *project_new(uint32_t n)
{
    Project *p = gl_calloc(1, sizeof *p);
    arena_init(&p->arena);
    p->n = n;
    p->files = ARENA_NEW_N(&p->arena, ProjFile, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) p->files[i].p = p;
    strmap_init(&p->by_name);
    array_init(&p->entries);
    return p;
}

void project_free(Project *p)
{
    if (!p) return;
    strmap_free(&p->by_name);
    array_free(&p->entries);
    arena_free(&p->arena);
    gl_free(p);
}

void project_attach(Project *p, uint32_t i, LintOptions *o)
{
    o->ext = project__lookup;
    o->ext_ctx = &p->files[i];
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
    ProjFile *f = &p->files[i];
    if (!f->stem) project__paths(p, f, path);
    if (f->exports) {
        /* linted again: did its summaries change (a helper of a helper)? */
        f->changed = f->n_exports != r->n_exports;
        for (uint32_t k = 0; k < r->n_exports && !f->changed; k++)
            f->changed = memcmp(&f->exports[k].summary, &r->exports[k].summary, sizeof(ExternSummary)) != 0;
        if (!f->changed) return;
    }
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
    strmap_free(&p->by_name);
    strmap_init(&p->by_name);
    array_clear(&p->entries);
    StrBuf key;
    sb_init(&key);
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjFile *f = &p->files[i];
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
            if (&p->files[pe->file] != self && !strcmp(p->files[pe->file].stem, target)) {
                *file = pe->file;
                return &p->files[pe->file].exports[pe->export].summary;
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
        const ProjFile *f = &p->files[pe->file];
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
        const ProjFile *f = &p->files[i];
        bool again = false;
        for (uint32_t k = 0; k < f->n_calls && !again; k++) {
            uint32_t file;
            const ExternSummary *s = project__resolve(f, f->calls[k].qual, &file);
            if (!s || !project__informative(s, &f->calls[k])) continue;
            /* first round: every file that reaches another; later: those whose helpers changed */
            again = p->round == 0 || p->files[file].changed;
        }
        if (again) which[n++] = i;
    }
    for (uint32_t i = 0; i < p->n; i++) p->files[i].changed = false;
    p->round++;
    return n;
}
