/* Linting files together: resolving imported names to the files that define them, and the rounds of
 * re-linting that carry function summaries from file to file (see project.h). */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/strbuf.h"
#include "base/strmap.h"
#include "engine/project.h"
#include "ir/api.h"

/* What a file that takes part in a resolution keeps: where it lies, and the summaries others call.
 * The lookup callback of a file linted again gets its place, which leads back to the rest. */
typedef struct ProjPlace {
    Project *p;
    uint32_t file;
    const char *dir;   /* absolute directory: "/w/pkg" */
    const char *stem;  /* absolute path without ".py"/".pyi" and without "/__init__": "/w/pkg/utils" */
    ExportedFunc *exports; /* only the functions that some file calls by name (Project.wanted) */
    uint32_t n_exports;
    bool changed;      /* its summaries changed when it was linted again */
    uint64_t grad_off; /* bit k: some file calls exports[k] with grad off (project__call_masks) */
    uint64_t per_step; /* bit k: some file calls exports[k] once per training step (project__call_masks) */
    uint64_t after_train; /* bit k: some file calls exports[k] after a training call (project__call_masks) */
    uint64_t after_train_seen; /* the same, from every lint so far, first or again (project_set): a caller
                                * learns that `trainer.train()` trains from the other file's summary */
} ProjPlace;

/* The names one file calls. Files often call the same (every training script calls the same
 * DataLoader): equal lists are kept once. */
typedef struct ProjCalls {
    uint32_t n;
    ImportedCall items[];
} ProjCalls;

/* A file of the project: a run may have tens of thousands, so this is two pointers. */
typedef struct ProjFile {
    const ProjCalls *calls; /* NULL until its first project_set */
    ProjPlace *place;       /* NULL: no call of the run can reach it, and none of its calls reaches a file */
} ProjFile;

/* One exported function under one of its names ("utils.f", "pkg.utils.f"): a chain per name. */
typedef struct ProjEntry {
    uint32_t file, export, next;
} ProjEntry;

struct Project {
    Arena arena;
    ProjFile *files;
    uint8_t *grad_findings; /* [file]: its last lint reported GL104 or GL108, which grad-off callers
                             * of its functions can silence (project__call_masks) */
    uint8_t *step_costly;   /* [file]: it calls empty_cache() or gc.collect(), which per-step callers
                             * of its functions make findings (project__call_masks) */
    uint32_t n, cap;
    uint32_t round;
    ProjectLoad load;
    void *load_ctx;
    StrMap quals;     /* every called name, once -> its index in qual_list */
    Array(const char *) qual_list; /* the copies the files' calls point to */
    StrMap lists;     /* every distinct list of calls (keyed by its names and flags) -> index in list_of */
    Array(const ProjCalls *) list_of;
    StrMap wanted;    /* the function names called ("f" of "utils.f"), by project__begin */
    StrMap per_step;  /* C++ names some file calls once per training step, by project__begin */
    bool placed;      /* wanted and the places are up to date (project__begin) */
    StrMap by_name;   /* "pkg.utils.f" -> first entry */
    Array(ProjEntry) entries;
    bool indexed;     /* by_name is up to date */
    /* the helpers the files import from files not given */
    StrMap tried;     /* module stems looked for on disk -> 1 found, 0 not */
    StrMap entries_seen; /* "folder/name" -> 1 when it exists, 0 when not */
    uint32_t n_found; /* files added from disk */
    uint64_t *known;  /* while project_missing runs: the hashes of the files' stems, sorted */
    uint32_t n_known;
};

static const ExternSummary *project__lookup(void *ctx, const char *qual);
static bool project__called_per_step(void *ctx, const char *name);
static bool project__called_grad_off(void *ctx, const char *name);
static bool project__called_after_train(void *ctx, const char *name);
static const ExternSummary *project__resolve(const ProjPlace *from, const char *qual, uint32_t *file);

Project *project_new(uint32_t n, ProjectLoad load, void *load_ctx)
{
    Project *p = gl_calloc(1, sizeof *p);
    arena_init(&p->arena);
    p->load = load;
    p->load_ctx = load_ctx;
    strmap_init(&p->quals);
    array_init(&p->qual_list);
    strmap_init(&p->lists);
    array_init(&p->list_of);
    strmap_init(&p->wanted);
    strmap_init(&p->per_step);
    strmap_init(&p->by_name);
    array_init(&p->entries);
    strmap_init(&p->tried);
    strmap_init(&p->entries_seen);
    p->cap = n + PROJECT_MAX_FOUND; /* room for the helpers read from disk: no copy of a long array */
    p->files = gl_calloc(p->cap, sizeof *p->files);
    p->grad_findings = gl_calloc(p->cap, 1);
    p->step_costly = gl_calloc(p->cap, 1);
    for (uint32_t i = 0; i < n; i++) project_add(p);
    return p;
}

uint32_t project_add(Project *p)
{
    if (p->n == p->cap) {
        p->cap += p->cap / 4 + 16;
        p->files = gl_realloc(p->files, p->cap * sizeof *p->files);
        p->grad_findings = gl_realloc(p->grad_findings, p->cap);
        p->step_costly = gl_realloc(p->step_costly, p->cap);
    }
    p->grad_findings[p->n] = 0;
    p->step_costly[p->n] = 0;
    p->files[p->n] = (ProjFile){NULL, NULL};
    p->placed = p->indexed = false; /* its exports and its calls count from now on */
    return p->n++;
}

void project_free(Project *p)
{
    if (!p) return;
    strmap_free(&p->quals);
    array_free(&p->qual_list);
    strmap_free(&p->lists);
    array_free(&p->list_of);
    strmap_free(&p->wanted);
    strmap_free(&p->per_step);
    strmap_free(&p->by_name);
    array_free(&p->entries);
    strmap_free(&p->tried);
    strmap_free(&p->entries_seen);
    gl_free(p->files);
    gl_free(p->grad_findings);
    gl_free(p->step_costly);
    arena_free(&p->arena);
    gl_free(p);
}

const ImportedCall *project_calls(const Project *p, uint32_t i, uint32_t *n)
{
    const ProjCalls *c = p->files[i].calls;
    *n = c ? c->n : 0;
    return c ? c->items : NULL;
}

void project_attach(Project *p, uint32_t i, LintOptions *o)
{
    o->ext = project__lookup;
    o->ext_ctx = p->files[i].place; /* NULL: none of its calls can reach another file */
    o->ext_per_step = p->per_step.len || (p->files[i].place && p->files[i].place->per_step) ? project__called_per_step : NULL;
    o->ext_grad_off = p->files[i].place && p->files[i].place->grad_off ? project__called_grad_off : NULL;
    o->ext_after_train = p->files[i].place && p->files[i].place->after_train ? project__called_after_train : NULL;
}

/* The function a qualified name calls: "f" of "pkg.utils.f" or ".f". */
static const char *project__func(const char *qual)
{
    const char *dot = strrchr(qual, '.');
    return dot ? dot + 1 : qual;
}

/* "Meter#add" -> "#add": the name a call on an object of unknown class looks a method up by, or
 * NULL for a function and for C++ names. */
static const char *project__duck(const char *name)
{
    return name[0] == ':' ? NULL : strchr(name, '#');
}

static bool project__wanted(const Project *p, const char *name)
{
    if (strmap_get(&p->wanted, name, strlen(name)) != UINT32_MAX) return true;
    const char *duck = project__duck(name);
    return duck && duck != name && strmap_get(&p->wanted, duck, strlen(duck)) != UINT32_MAX;
}

/* "/w/pkg/utils.py" -> stem "/w/pkg/utils", dir "/w/pkg"; a package's "__init__.py" is the package.
 * Both into buffers of PATH_MAX; false when the path does not fit. */
static bool project__stem(const char *path, char *stem, char *dir)
{
    char *real = realpath(path, NULL);
    const char *abs = real ? real : path;
    size_t n = strlen(abs);
    bool fits = n < PATH_MAX;
    if (fits) memcpy(stem, abs, n + 1);
    free(real); /* realpath's own malloc, not ours */
    if (!fits) return false;
    char *slash = strrchr(stem, '/');
    if (slash) memcpy(dir, stem, (size_t)(slash - stem)), dir[slash - stem] = 0;
    else strcpy(dir, ".");
    char *dot = strrchr(stem, '.');
    if (dot && (!slash || dot > slash)) *dot = 0;
    size_t len = strlen(stem);
    if (len >= 9 && !strcmp(stem + len - 9, "/__init__")) stem[len - 9] = 0;
    return true;
}

static ProjPlace *project__place(Project *p, uint32_t i, const char *path)
{
    ProjFile *f = &p->files[i];
    if (f->place) return f->place;
    ProjPlace *pl = f->place = ARENA_NEW(&p->arena, ProjPlace);
    pl->p = p;
    pl->file = i;
    char stem[PATH_MAX], dir[PATH_MAX];
    if (project__stem(path, stem, dir)) {
        pl->stem = arena_strdup(&p->arena, stem);
        pl->dir = arena_strdup(&p->arena, dir);
    } else { /* too long to be imported: matches nothing */
        pl->stem = arena_strdup(&p->arena, path);
        pl->dir = ".";
    }
    return pl;
}

/* Keeps the exports of r that some file calls by name; with compare, says whether they differ from
 * what was kept before (a helper of a helper changed). */
static bool project__keep_exports(Project *p, uint32_t i, const char *path, const LintResult *r, bool compare)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < r->n_exports; k++) n += project__wanted(p, r->exports[k].name);
    if (!n && !p->files[i].place) return false;
    ProjPlace *pl = project__place(p, i, path);
    if (compare && n == pl->n_exports) {
        bool same = true;
        for (uint32_t k = 0, m = 0; k < r->n_exports && same; k++)
            if (project__wanted(p, r->exports[k].name))
                same = !strcmp(pl->exports[m].name, r->exports[k].name) &&
                       !memcmp(&pl->exports[m].summary, &r->exports[k].summary, sizeof(ExternSummary)), m++;
        if (same) return false;
    }
    p->indexed = false;
    pl->exports = ARENA_NEW_N(&p->arena, ExportedFunc, n ? n : 1);
    pl->n_exports = 0;
    for (uint32_t k = 0; k < r->n_exports; k++) {
        if (!project__wanted(p, r->exports[k].name)) continue;
        pl->exports[pl->n_exports].name = arena_strdup(&p->arena, r->exports[k].name);
        pl->exports[pl->n_exports++].summary = r->exports[k].summary;
    }
    return true;
}

/* The project's copy of r's calls: each name once, each distinct list once. */
static const ProjCalls *project__calls(Project *p, const LintResult *r)
{
    StrBuf key;
    sb_init(&key);
    sb_append(&key, "", 0);
    for (uint32_t k = 0; k < r->n_calls; k++) {
        sb_puts(&key, r->calls[k].qual);
        sb_putc(&key, (char)('0' + r->calls[k].after_train * 32 + r->calls[k].import_only * 16 + r->calls[k].grad_off * 8 +
                             r->calls[k].per_step * 4 + r->calls[k].graph_arg * 2 + r->calls[k].module_arg));
        sb_putc(&key, 0); /* a name never holds a NUL: the key is unambiguous */
    }
    uint32_t at = strmap_get(&p->lists, key.data, key.len);
    if (at != UINT32_MAX) {
        sb_free(&key);
        return p->list_of.items[at];
    }
    ProjCalls *c = arena_alloc(&p->arena, sizeof *c + sizeof(ImportedCall) * r->n_calls);
    c->n = r->n_calls;
    for (uint32_t k = 0; k < r->n_calls; k++) {
        const char *q = r->calls[k].qual;
        size_t len = strlen(q);
        uint32_t qi = strmap_get(&p->quals, q, len);
        if (qi == UINT32_MAX) {
            qi = p->qual_list.len;
            array_push(&p->qual_list, arena_strndup(&p->arena, q, len));
            strmap_put(&p->quals, p->qual_list.items[qi], len, qi);
        }
        c->items[k] = r->calls[k];
        c->items[k].qual = p->qual_list.items[qi];
    }
    array_push(&p->list_of, c);
    strmap_put(&p->lists, arena_strndup(&p->arena, key.data, key.len), key.len, p->list_of.len - 1);
    sb_free(&key);
    return c;
}

void project_set(Project *p, uint32_t i, const char *path, const LintResult *r)
{
    ProjFile *f = &p->files[i];
    if (!f->calls) f->calls = project__calls(p, r);
    bool grad_findings = false;
    for (uint32_t k = 0; k < r->diags.len && !grad_findings; k++)
        grad_findings = r->diags.items[k].rule == RULE_GL104 || r->diags.items[k].rule == RULE_GL108;
    p->grad_findings[i] = grad_findings;
    p->step_costly[i] = r->step_costly;
    /* before the rounds, only the calls count: the exports are read (through load) once it is
     * known which are called */
    if (p->placed) {
        bool changed = project__keep_exports(p, i, path, r, true);
        if (f->place) f->place->changed = changed;
        /* a call after one that a summary made a training call (`trainer.test()` after
         * `trainer.train()` of another file): the callee's file learns it in the next round */
        for (uint32_t k = 0; f->place && k < r->n_calls; k++) {
            if (!r->calls[k].after_train || r->calls[k].grad_off || r->calls[k].import_only) continue;
            uint32_t file;
            const ExternSummary *s = project__resolve(f->place, r->calls[k].qual, &file);
            if (!s || !s->evaluates || s->trains || s->backprops) continue;
            ProjPlace *pl = p->files[file].place;
            const ExportedFunc *e = (const ExportedFunc *)(const void *)((const char *)s - offsetof(ExportedFunc, summary));
            uint32_t at = (uint32_t)(e - pl->exports);
            if (at < 64) pl->after_train_seen |= 1ull << at;
        }
        /* C++: a call that a summary made a step loop's (train_step from a loop that now trains):
         * its callee's file learns it in the next round */
        for (uint32_t k = 0; k < r->n_calls; k++) {
            const char *q = r->calls[k].qual;
            if (r->calls[k].per_step && q[0] == ':' && strmap_get(&p->per_step, q, strlen(q)) == UINT32_MAX)
                strmap_put(&p->per_step, arena_strdup(&p->arena, q), strlen(q), p->round);
        }
    }
}

/* Which functions are called by name, which files export one of them (their summaries are read
 * now, through load), and which files call one of those (they need to know where they lie).
 * Everything else stays out of the project's memory. Again after files were added (their calls and
 * exports count too). */
static void project__begin(Project *p)
{
    p->indexed = false;
    for (uint32_t l = 0; l < p->list_of.len; l++)
        for (uint32_t k = 0; k < p->list_of.items[l]->n; k++) {
            const ImportedCall *ic = &p->list_of.items[l]->items[k];
            if (ic->import_only) continue;
            const char *fn = project__func(ic->qual); /* points into the kept copy */
            strmap_put(&p->wanted, fn, strlen(fn), 0);
            if (ic->per_step && ic->qual[0] == ':') strmap_put(&p->per_step, ic->qual, strlen(ic->qual), p->round);
        }
    p->placed = true;
    if (!p->wanted.len) return;
    StrMap exported;
    strmap_init(&exported);
    for (uint32_t i = 0; i < p->n; i++) {
        ProjFile *f = &p->files[i];
        LintResult r;
        const char *path;
        if (!f->calls || p->load(p->load_ctx, i, &path, &r) < 0) continue;
        project__keep_exports(p, i, path, &r, false);
        lint_result_free(&r);
        for (uint32_t k = 0; f->place && k < f->place->n_exports; k++) {
            const char *name = f->place->exports[k].name, *duck = project__duck(name);
            strmap_put(&exported, name, strlen(name), 0);
            if (duck) strmap_put(&exported, duck, strlen(duck), 0);
        }
    }
    for (uint32_t i = 0; i < p->n; i++) {
        ProjFile *f = &p->files[i];
        for (uint32_t k = 0; f->calls && k < f->calls->n && !f->place; k++) {
            if (f->calls->items[k].import_only) continue;
            const char *fn = project__func(f->calls->items[k].qual);
            const char *path;
            if (strmap_get(&exported, fn, strlen(fn)) != UINT32_MAX && p->load(p->load_ctx, i, &path, NULL) == 0)
                project__place(p, i, path);
        }
    }
    strmap_free(&exported);
}

/* Every name an exported function can be imported under: "utils.f", "pkg.utils.f", "w.pkg.utils.f". */
static void project__index(Project *p)
{
    if (p->indexed) return;
    p->indexed = true;
    strmap_free(&p->by_name);
    strmap_init(&p->by_name);
    array_clear(&p->entries);
    StrBuf key;
    sb_init(&key);
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjPlace *f = p->files[i].place;
        if (!f) continue;
        const char *end = f->stem + strlen(f->stem);
        for (uint32_t k = 0; k < f->n_exports; k++) {
            if (f->exports[k].name[0] == ':') {
                /* C++ ("::ns::Class::method"): one name for the whole program, wherever it lies */
                const char *name = f->exports[k].name;
                ProjEntry e = {i, k, strmap_get(&p->by_name, name, strlen(name))};
                array_push(&p->entries, e);
                strmap_put(&p->by_name, name, strlen(name), p->entries.len - 1);
                continue;
            }
            const char *duck = project__duck(f->exports[k].name);
            if (duck) { /* a method, also under "#method" for objects of unknown class */
                ProjEntry e = {i, k, strmap_get(&p->by_name, duck, strlen(duck))};
                array_push(&p->entries, e);
                strmap_put(&p->by_name, duck, strlen(duck), p->entries.len - 1);
            }
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

/* Does some call of file `from` name a function or class of module pl (`model.RNNPredictor(...)`
 * with pl model/model.py)? Those modules are read from disk when the file is linted alone, so
 * what they define is found whichever files the run was given. */
static bool project__referenced(const Project *p, const ProjPlace *from, const ProjPlace *pl)
{
    const ProjCalls *calls = p->files[from->file].calls;
    size_t slen = strlen(pl->stem);
    for (uint32_t k = 0; calls && k < calls->n && k < 512; k++) {
        const char *q = calls->items[k].qual;
        if (q[0] == '#' || q[0] == ':') continue;
        q += strspn(q, ".");
        const char *hash = strchr(q, '#');
        const char *end = hash ? hash : q + strlen(q);
        const char *dot = end;
        while (dot > q && dot[-1] != '.') dot--;
        if (dot <= q) continue;
        size_t mlen = (size_t)(dot - 1 - q); /* the module's dotted name: up to the last name */
        if (mlen == 0 || mlen + 1 > slen) continue;
        const char *tail = pl->stem + slen - mlen;
        if (tail[-1] != '/') continue;
        bool same = true;
        for (size_t i = 0; i < mlen && same; i++) same = (q[i] == '.' ? '/' : q[i]) == tail[i];
        if (same) return true;
    }
    return false;
}

/* Do two summaries say the same of a call (what it returns and keeps, whether it trains or
 * evaluates), whatever the number of parameters (`predict(user)` and `predict(user, items)`)? */
static bool project__same_effect(const ExternSummary *a, const ExternSummary *b)
{
    return a->kind == b->kind && a->grad == b->grad && a->elem == b->elem && a->flags == b->flags &&
           a->pmask == b->pmask && a->cmask == b->cmask && a->keep_acc == b->keep_acc && a->keep_coll == b->keep_coll &&
           a->trains == b->trains && a->evaluates == b->evaluates && a->backprops == b->backprops && a->ret_tuple == b->ret_tuple &&
           a->ret_plain == b->ret_plain && a->ret_weak == b->ret_weak && a->ret_zero == b->ret_zero;
}

static const ExternSummary *project__resolve(const ProjPlace *from, const char *qual, uint32_t *file)
{
    /* without a place, no function the file calls is exported by any file (project__begin) */
    if (!from) return NULL;
    const Project *p = from->p;
    const char *from_dir = from->dir;
    size_t dots = strspn(qual, ".");
    const char *name = qual + dots;
    char target[PATH_MAX];
    target[0] = 0;
    if (dots) {
        /* relative: ".utils.f" is utils.py next to the caller, "..utils.f" one directory up */
        const char *fn = strrchr(name, '.');
        size_t dlen = strlen(from_dir);
        for (size_t up = 1; up < dots; up++) {
            while (dlen > 0 && from_dir[dlen - 1] != '/') dlen--;
            if (dlen > 0) dlen--;
        }
        int n = fn ? snprintf(target, sizeof target, "%.*s/%.*s", (int)dlen, from_dir, (int)(fn - name), name)
                   : snprintf(target, sizeof target, "%.*s", (int)dlen, from_dir);
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
            const ProjPlace *pl = p->files[pe->file].place;
            if (pe->file != from->file && !strcmp(pl->stem, target)) {
                *file = pe->file;
                return &pl->exports[pe->export].summary;
            }
        }
        return NULL;
    }
    if (name[0] == '#') {
        /* a method called on an object of unknown class: the classes that define it in the caller's
         * own file and in the modules it names, nearest first, must all agree; when none does,
         * all of the run's */
        const ExternSummary *one = NULL;
        int best = -1;
        bool tie = false;
        for (uint32_t e = strmap_get(&p->by_name, name, strlen(name)); e != UINT32_MAX; e = p->entries.items[e].next) {
            const ProjEntry *pe = &p->entries.items[e];
            const ProjPlace *pl = p->files[pe->file].place;
            /* only the file itself and the modules it names: not whatever else the run holds */
            if (pe->file != from->file && !project__referenced(p, from, pl)) continue;
            const ExternSummary *s = &pl->exports[pe->export].summary;
            int score = pe->file == from->file ? INT32_MAX : project__closeness(from_dir, pl->dir);
            if (score > best) one = s, best = score, tie = false, *file = pe->file;
            else if (score == best && !project__same_effect(s, one)) tie = true;
        }
        /* (a name torch's API lists, `model.train()`, `opt.step()`, is an agent's only where the
         * file names the agent's module: `agent.train()`) */
        if (one || tie || api_method_listed(name + 1)) return tie ? NULL : one;
        /* none there (`policy.select_action(state)` on a parameter, in an evaluation helper that
         * imports none of the agents its callers hand it): every class of the run that defines
         * it, when they all agree */
        for (uint32_t e = strmap_get(&p->by_name, name, strlen(name)); e != UINT32_MAX; e = p->entries.items[e].next) {
            const ProjEntry *pe = &p->entries.items[e];
            const ExternSummary *s = &p->files[pe->file].place->exports[pe->export].summary;
            if (!one) one = s, *file = pe->file;
            else if (!project__same_effect(s, one)) return NULL;
        }
        return one;
    }
    /* absolute: every file the name fits; the one closest to the caller wins, a tie between files
     * that disagree knows nothing */
    const ExternSummary *best = NULL;
    int best_score = -1;
    bool tie = false;
    for (uint32_t e = strmap_get(&p->by_name, name, strlen(name)); e != UINT32_MAX; e = p->entries.items[e].next) {
        const ProjEntry *pe = &p->entries.items[e];
        const ProjFile *f = &p->files[pe->file];
        if (pe->file == from->file) continue;
        int score = project__closeness(from_dir, f->place->dir);
        const ExternSummary *s = &f->place->exports[pe->export].summary;
        if (score > best_score) {
            best = s, best_score = score, tie = false, *file = pe->file;
        } else if (score == best_score && memcmp(s, best, sizeof *s) != 0) {
            tie = true;
        }
    }
    return tie ? NULL : best;
}

static bool project__called_per_step(void *ctx, const char *name)
{
    const ProjPlace *pl = ctx;
    if (!pl) return false;
    if (name[0] == ':') return strmap_get(&pl->p->per_step, name, strlen(name)) != UINT32_MAX;
    for (uint32_t k = 0; k < pl->n_exports && k < 64; k++) /* Python: by export name */
        if ((pl->per_step >> k & 1) && !strcmp(pl->exports[k].name, name)) return true;
    return false;
}

uint64_t project_per_step_mask(const Project *p, uint32_t i)
{
    const ProjPlace *pl = p->files[i].place;
    uint64_t mask = 0;
    for (uint32_t k = 0; pl && k < pl->n_exports && k < 64; k++)
        if (strmap_get(&p->per_step, pl->exports[k].name, strlen(pl->exports[k].name)) != UINT32_MAX) mask |= 1ull << k;
    return pl ? mask | pl->per_step : mask;
}

/* Is the export called name (the linted file's) called with grad off by some other file? */
static bool project__called_grad_off(void *ctx, const char *name)
{
    const ProjPlace *pl = ctx;
    for (uint32_t k = 0; pl && k < pl->n_exports && k < 64; k++)
        if ((pl->grad_off >> k & 1) && !strcmp(pl->exports[k].name, name)) return true;
    return false;
}

uint64_t project_grad_off_mask(const Project *p, uint32_t i)
{
    const ProjPlace *pl = p->files[i].place;
    return pl ? pl->grad_off : 0;
}

uint64_t project_after_train_mask(const Project *p, uint32_t i)
{
    const ProjPlace *pl = p->files[i].place;
    return pl ? pl->after_train : 0;
}

/* Which exports each file's calls with grad off reach (`with torch.no_grad(): evaluate(net, val)`
 * in a script, evaluate in utils.py): a call in any file is enough, as for the calls inside one file
 * (loops.c, df_mark_grad_off_callees). With per_step, which Python exports some file calls once per
 * training step instead (a loss object's __call__ that a trainer's step calls). A file whose mask
 * changed is linted again (project_next_round sets its bit in again), if it can gain or lose a
 * finding by it: one with a GL104 or GL108 finding (grad off), one that calls empty_cache() or
 * gc.collect() (per step). The first lint's calls decide: a caller that is itself called with grad
 * off from a third file is not followed. */
enum { MASK_GRAD_OFF, MASK_PER_STEP, MASK_AFTER_TRAIN };

static void project__call_masks(Project *p, int which, uint8_t *again)
{
    uint64_t *mask = gl_calloc(p->n ? p->n : 1, sizeof *mask);
    const uint8_t *concerned = which == MASK_PER_STEP ? p->step_costly : which == MASK_GRAD_OFF ? p->grad_findings : NULL;
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjFile *f = &p->files[i];
        for (uint32_t k = 0; f->calls && f->place && k < f->calls->n; k++) {
            const ImportedCall *c = &f->calls->items[k];
            bool mark = which == MASK_PER_STEP ? c->per_step && c->qual[0] != ':'
                      : which == MASK_GRAD_OFF ? c->grad_off : c->after_train && !c->grad_off;
            if (!mark) continue;
            uint32_t file;
            const ExternSummary *s = project__resolve(f->place, c->qual, &file);
            if (!s || (which == MASK_PER_STEP && !concerned[file])) continue;
            /* (after training: only a function that runs a model and trains nothing can evaluate) */
            if (which == MASK_AFTER_TRAIN && (!s->evaluates || s->trains || s->backprops)) continue;
            const ProjPlace *pl = p->files[file].place;
            const ExportedFunc *e = (const ExportedFunc *)(const void *)((const char *)s - offsetof(ExportedFunc, summary));
            uint32_t at = (uint32_t)(e - pl->exports);
            if (at < 64) mask[file] |= 1ull << at;
        }
    }
    for (uint32_t i = 0; i < p->n; i++) {
        ProjPlace *pl = p->files[i].place;
        if (pl && which == MASK_AFTER_TRAIN) mask[i] |= pl->after_train_seen;
        if (!pl || (concerned && !concerned[i])) continue;
        uint64_t *have = which == MASK_PER_STEP ? &pl->per_step : which == MASK_GRAD_OFF ? &pl->grad_off : &pl->after_train;
        if (*have == mask[i]) continue;
        *have = mask[i];
        again[i] = 1;
    }
    gl_free(mask);
}

/* Is the export called name (the linted file's) called after a training call by some other file? */
static bool project__called_after_train(void *ctx, const char *name)
{
    const ProjPlace *pl = ctx;
    for (uint32_t k = 0; pl && k < pl->n_exports && k < 64; k++)
        if ((pl->after_train >> k & 1) && !strcmp(pl->exports[k].name, name)) return true;
    return false;
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
    /* a function (C++) or method that trains makes its caller's loop a step loop */
    if (s->trains || s->evaluates || s->backprops) return true;
    /* a 0-dim result (a loss, or losses in a tuple): indexing it is GL403's, graph or not */
    if ((s->flags & VF_ZERO_DIM) || s->ret_zero) return true;
    bool method = c->qual[0] == ':' || strchr(c->qual, '#'); /* C++, or a Python class's method */
    /* a Python method given a graph: its summary replaces what its name alone suggested (`add`: a
     * set's, keeping what it is given), whether it keeps it or not */
    if (method && c->qual[0] != ':' && c->graph_arg) return true;
    if (s->kind == VK_NONE && !(method && c->graph_arg && (s->keep_acc || s->keep_coll))) return false;
    /* a source: a model call inside (G_POST: a step's loss after its backward) */
    if (s->grad >= G_POST || s->elem >= G_POST) return true;
    if (s->kind == VK_MODULE || s->kind == VK_OPTIM || s->kind == VK_LOADER) return true;
    if (s->cmask && c->module_arg) return true;
    if (!c->graph_arg) return false;
    /* a method: its summary replaces what its name alone suggested (`buf.add(v)`: a set's add) */
    if (method) return true;
    /* a graph goes in: unless the result is derived from the arguments alone, it is cut (a sanitizer) */
    return !(s->grad == G_MAY && s->pmask && !s->flags && s->kind == VK_UNKNOWN);
}

uint32_t project_next_round(Project *p, uint32_t *which)
{
    if (p->round >= PROJECT_MAX_ROUNDS) return 0;
    if (!p->placed) project__begin(p);
    project__index(p);
    uint8_t *grad_off_changed = gl_calloc(p->n ? p->n : 1, 1);
    project__call_masks(p, MASK_GRAD_OFF, grad_off_changed);
    project__call_masks(p, MASK_PER_STEP, grad_off_changed);
    project__call_masks(p, MASK_AFTER_TRAIN, grad_off_changed);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const ProjFile *f = &p->files[i];
        bool again = grad_off_changed[i];
        for (uint32_t k = 0; f->calls && k < f->calls->n && !again; k++) {
            if (f->calls->items[k].import_only) continue;
            uint32_t file;
            const ExternSummary *s = project__resolve(f->place, f->calls->items[k].qual, &file);
            if (!s || !project__informative(s, &f->calls->items[k])) continue;
            /* first round: every file that reaches another; later: those whose helpers changed */
            again = p->round == 0 || p->files[file].place->changed;
        }
        /* C++: a function of this file that another file's training loop calls, learnt in the lints
         * before this round */
        for (uint32_t k = 0; f->place && k < f->place->n_exports && !again; k++)
            again = strmap_get(&p->per_step, f->place->exports[k].name, strlen(f->place->exports[k].name)) == p->round;
        if (again) which[n++] = i;
    }
    gl_free(grad_off_changed);
    for (uint32_t i = 0; i < p->n; i++)
        if (p->files[i].place) p->files[i].place->changed = false;
    p->round++;
    return n;
}

/* ---- helpers the files import from files not given ---- */

/* Does folder dir hold an entry called name? Each question is asked of the disk once (a run asks
 * about the same few names in the same few folders for every import of every file), by one lstat:
 * not by reading the folder, whose every name would be kept (a run's folders hold all its files). */
static bool project__has(Project *p, const char *dir, size_t dlen, const char *name)
{
    StrBuf path;
    sb_init(&path);
    sb_printf(&path, "%.*s/%s", (int)dlen, dir, name);
    uint32_t at = strmap_get(&p->entries_seen, path.data, path.len);
    if (at == UINT32_MAX) {
        struct stat st;
        at = lstat(path.data, &st) == 0; /* a dangling link is an entry too, as readdir shows it */
        strmap_put(&p->entries_seen, arena_strndup(&p->arena, path.data, path.len), path.len, at);
    }
    sb_free(&path);
    return at == 1;
}

/* Does dir hold what marks a project's root (where Python's path search for it ends)? */
static bool project__is_root(Project *p, const char *dir)
{
    static const char *const marks[] = {".git", "pyproject.toml", "setup.py", "setup.cfg", "gradleak.toml"};
    for (size_t i = 0; i < ARRAY_LEN(marks); i++)
        if (project__has(p, dir, strlen(dir), marks[i])) return true;
    return false;
}

/* FNV-1a, 64 bits, of a stem: the project's files are known by these while project_missing runs
 * (a run may have many files; their stems are not kept). */
static uint64_t project__hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int project__cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Is stem one of the project's files? (A hash collision only makes a file on disk look known: its
 * helpers are then not read, as when it is missing.) */
static bool project__known(const Project *p, const char *stem)
{
    uint64_t h = project__hash(stem);
    return p->known && bsearch(&h, p->known, p->n_known, sizeof h, project__cmp_u64) != NULL;
}

typedef enum ModuleLookup { MOD_NONE, MOD_NEW, MOD_KNOWN } ModuleLookup;

/* The file of module stem ("/w/pkg/utils"): utils.py or utils/__init__.py. MOD_NEW with its path in
 * out the first time it is found; MOD_KNOWN when it is a file of the project or was found before;
 * MOD_NONE when there is no such file. */
static ModuleLookup project__module_file(Project *p, const char *stem, char *out, size_t cap)
{
    size_t len = strlen(stem);
    if (project__known(p, stem)) return MOD_KNOWN;
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
static bool project__find_module(Project *p, const char *from_dir, const char *qual, char *out, size_t cap)
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
    size_t dlen = strlen(from_dir);
    if (dots) {
        for (size_t up = 1; up < dots; up++) {
            while (dlen > 0 && from_dir[dlen - 1] != '/') dlen--;
            if (dlen > 0) dlen--;
        }
        int n = mlen ? snprintf(stem, sizeof stem, "%.*s/%s", (int)dlen, from_dir, mod)
                     : snprintf(stem, sizeof stem, "%.*s", (int)dlen, from_dir);
        return n > 0 && (size_t)n < sizeof stem && project__module_file(p, stem, out, cap) == MOD_NEW;
    }
    if (!mlen) return false; /* a bare name: not an import of a module */
    char dir[PATH_MAX];
    if (dlen >= sizeof dir) return false;
    memcpy(dir, from_dir, dlen + 1);
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
    if (!p->placed) project__begin(p);
    project__index(p);
    *paths = NULL;
    if (p->n_found >= PROJECT_MAX_FOUND) return 0;
    char stem[PATH_MAX], dir[PATH_MAX], out[PATH_MAX];
    p->known = gl_calloc(p->n ? p->n : 1, sizeof *p->known);
    p->n_known = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const char *path;
        if (!p->files[i].calls) continue;
        if (p->files[i].place) p->known[p->n_known++] = project__hash(p->files[i].place->stem);
        else if (p->load(p->load_ctx, i, &path, NULL) == 0 && project__stem(path, stem, dir))
            p->known[p->n_known++] = project__hash(stem);
    }
    qsort(p->known, p->n_known, sizeof *p->known, project__cmp_u64);
    Array(const char *) found;
    array_init(&found);
    for (uint32_t i = 0; i < p->n && p->n_found + found.len < PROJECT_MAX_FOUND; i++) {
        const ProjFile *f = &p->files[i];
        if (!f->calls) continue;
        const char *from_dir = NULL; /* the file's folder, found when first needed */
        for (uint32_t k = 0; k < f->calls->n && p->n_found + found.len < PROJECT_MAX_FOUND; k++) {
            uint32_t file;
            const char *qual = f->calls->items[k].qual;
            if (f->calls->items[k].import_only || project__resolve(f->place, qual, &file)) continue;
            if (!from_dir) {
                const char *path;
                if (f->place) from_dir = f->place->dir;
                else if (p->load(p->load_ctx, i, &path, NULL) == 0 && project__stem(path, stem, dir)) from_dir = dir;
                else break;
            }
            if (project__find_module(p, from_dir, qual, out, sizeof out))
                array_push(&found, arena_strdup(&p->arena, out));
        }
    }
    gl_free(p->known);
    p->known = NULL;
    p->n_found += found.len;
    uint32_t n = found.len;
    if (n) {
        *paths = (const char **)ARENA_NEW_N(&p->arena, const char *, n);
        memcpy((void *)*paths, found.items, n * sizeof(const char *));
    }
    array_free(&found);
    return n;
}
