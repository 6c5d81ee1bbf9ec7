/* Finding the loop that drives a flagged line through the run's call graph (see val_drive.h).
 * The graph is built from the IR of every file of the run: each call site is kept with the name it
 * calls and how (a plain name, an imported module's function, `self.m()`, `obj.m()`); a search goes
 * upward from the flagged function, breadth first, and stops at the first call site that sits in a
 * loop. No recursion: the search is a queue over function ids. */
#include <stdio.h>
#include "base/strbuf.h"
#include "base/strmap.h"
#include "engine/engine.h"
#include "ir/ir.h"
#include "validate/val_drive.h"

typedef enum SiteKind { SITE_PLAIN, SITE_QUAL, SITE_SELF, SITE_METHOD } SiteKind;

/* One call, by the name it calls. */
typedef struct Site {
    uint32_t file, func, op, line;
    uint32_t loop;      /* innermost loop of the caller that holds the call, or IR_NONE */
    uint8_t kind;       /* SiteKind */
    const char *name;   /* the function or method name called */
    const char *module; /* SITE_QUAL: the module's last component ("trainer" of "pkg.trainer.f") */
    const char *recv;   /* SITE_METHOD: the receiver variable's name, or NULL */
    uint32_t next;      /* the next site that calls the same name, or IR_NONE */
} Site;

typedef struct GFile {
    Arena arena;
    IrModule m;
    const char *stem; /* file name without folder and ".py" */
    uint32_t base;    /* global id of its funcs[0] */
    bool ok;
} GFile;

struct ValGraph {
    const ValSrc *src;
    uint32_t n, n_funcs;
    GFile *files;
    Array(Site) sites;
    StrMap by_name; /* name -> first site (keys live in the files' arenas) */
    bool loose;     /* method calls reach classes of files the caller does not import (second try) */
    uint8_t *imports; /* [a * n + b]: 0 not asked yet, 1 no, 2 yes (runs of up to DRIVE_CACHE_FILES files) */
};

#define DRIVE_CACHE_FILES 2048

/* Hooks a framework calls once per batch or step (Lightning, Hugging Face Trainer, callbacks). */
static const char *const drive_hooks[] = {
    "training_step", "validation_step", "test_step", "predict_step", "compute_loss", "prediction_step",
    "training_step_end", "validation_step_end", "evaluation_loop", "training_epoch_end", "validation_epoch_end",
};

/* Method names that torch objects answer too (`opt.step()`): a call on a receiver that looks like
 * an optimizer, scheduler or model does not reach a user method of that name. */
static const char *const drive_common[] = {"step", "zero_grad", "backward", "train", "eval", "to", "cuda", "forward", "item"};

static bool drive__in(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, set[i])) return true;
    return false;
}

static const char *drive__last(const char *qual, const char **module, Arena *a)
{
    const char *dot = strrchr(qual, '.');
    *module = NULL;
    if (!dot) return qual;
    const char *start = dot;
    while (start > qual && start[-1] != '.') start--;
    if (start < dot) *module = arena_strndup(a, start, (size_t)(dot - start));
    return dot + 1;
}

static void drive__index_file(ValGraph *g, uint32_t fi)
{
    GFile *gf = &g->files[fi];
    for (uint32_t f = 0; f < gf->m.funcs.len; f++) {
        const IrFunc *fn = gf->m.funcs.items[f];
        for (uint32_t o = 0; o < fn->ops.len; o++) {
            const IrOp *op = &fn->ops.items[o];
            if (op->kind != IR_CALL || op->a == IR_NONE || op->a >= fn->ops.len) continue;
            const IrOp *ce = &fn->ops.items[op->a];
            Site s;
            memset(&s, 0, sizeof s);
            s.file = fi, s.func = f, s.op = o, s.line = op->span.row + 1;
            s.loop = ir_op_loop(fn, o);
            if (ce->qual && strchr(ce->qual, '.')) {
                s.kind = SITE_QUAL;
                s.name = drive__last(ce->qual, &s.module, &gf->arena);
            } else if (ce->kind == IR_LOAD && ce->var != IR_NONE && ce->var < fn->vars.len) {
                s.kind = SITE_PLAIN;
                s.name = fn->vars.items[ce->var].name;
            } else if (ce->kind == IR_ATTR && ce->name) {
                s.name = ce->name;
                const IrOp *b = ce->a != IR_NONE && ce->a < fn->ops.len ? &fn->ops.items[ce->a] : NULL;
                const char *bn = b && b->kind == IR_LOAD && b->var != IR_NONE && b->var < fn->vars.len
                                     ? fn->vars.items[b->var].name
                                     : NULL;
                s.kind = bn && !strcmp(bn, "self") ? SITE_SELF : SITE_METHOD;
                s.recv = bn;
            } else {
                continue;
            }
            if (!s.name) continue;
            size_t len = strlen(s.name);
            s.next = strmap_get(&g->by_name, s.name, len);
            array_push(&g->sites, s);
            strmap_put(&g->by_name, s.name, len, g->sites.len - 1);
        }
    }
}

ValGraph *val_graph_new(const ValSrc *files, uint32_t n)
{
    ValGraph *g = gl_calloc(1, sizeof *g);
    g->src = files, g->n = n;
    g->files = gl_calloc(n + 1, sizeof *g->files);
    if (n <= DRIVE_CACHE_FILES) g->imports = gl_calloc((size_t)n * n + 1, 1);
    array_init(&g->sites);
    strmap_init(&g->by_name);
    for (uint32_t i = 0; i < n; i++) {
        GFile *gf = &g->files[i];
        arena_init(&gf->arena);
        gf->m.arena = &gf->arena, gf->m.src = files[i].src, gf->m.len = files[i].len, gf->m.path = files[i].path;
        gf->base = g->n_funcs;
        const char *b = strrchr(files[i].path, '/');
        b = b ? b + 1 : files[i].path;
        const char *dot = strrchr(b, '.');
        gf->stem = arena_strndup(&gf->arena, b, dot ? (size_t)(dot - b) : strlen(b));
        if (!strcmp(gf->stem, "__init__") && b > files[i].path) { /* a package: its folder's name */
            const char *e = b - 1, *s = e;
            while (s > files[i].path && s[-1] != '/') s--;
            gf->stem = arena_strndup(&gf->arena, s, (size_t)(e - s));
        }
        gf->ok = engine_lower(&gf->m, LANG_PYTHON, NULL) == 0;
        if (!gf->ok) continue;
        g->n_funcs += gf->m.funcs.len;
        drive__index_file(g, i);
    }
    return g;
}

void val_graph_free(ValGraph *g)
{
    if (!g) return;
    for (uint32_t i = 0; i < g->n; i++) {
        ir_module_free(&g->files[i].m);
        arena_free(&g->files[i].arena);
    }
    strmap_free(&g->by_name);
    array_free(&g->sites);
    gl_free(g->imports);
    gl_free(g->files);
    gl_free(g);
}

static const IrFunc *drive__fn(const ValGraph *g, uint32_t file, uint32_t f) { return g->files[file].m.funcs.items[f]; }

/* The class a function belongs to, through the functions it is nested in. */
static uint32_t drive__class_of(const ValGraph *g, uint32_t file, uint32_t f)
{
    const IrModule *m = &g->files[file].m;
    for (uint32_t guard = 0; f != IR_NONE && f < m->funcs.len && guard < 64; guard++) {
        if (m->funcs.items[f]->cls != IR_NONE) return m->funcs.items[f]->cls;
        f = m->funcs.items[f]->parent;
    }
    return IR_NONE;
}

static bool drive__class_has(const ValGraph *g, uint32_t file, uint32_t cls, const char *name)
{
    const IrModule *m = &g->files[file].m;
    if (cls == IR_NONE || cls >= m->classes.len) return false;
    const IrClass *c = m->classes.items[cls];
    for (uint32_t k = 0; k < c->methods.len; k++)
        if (c->methods.items[k] < m->funcs.len && !strcmp(m->funcs.items[c->methods.items[k]]->name, name)) return true;
    return false;
}

static bool drive__within(const ValGraph *g, uint32_t file, uint32_t f, uint32_t outer)
{
    const IrModule *m = &g->files[file].m;
    for (uint32_t guard = 0; f != IR_NONE && f < m->funcs.len && guard < 64; guard++) {
        if (f == outer) return true;
        f = m->funcs.items[f]->parent;
    }
    return false;
}

/* How many leading folders two paths share. */
static uint32_t drive__closeness(const char *a, const char *b)
{
    uint32_t shared = 0;
    for (size_t i = 0; a[i] && a[i] == b[i]; i++)
        if (a[i] == '/') shared++;
    return shared;
}

static bool drive__same_dir(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;
    return la == lb && !memcmp(a, b, la);
}

/* Does file a import file b's module (an op resolved to "b.x" or "pkg.b.x"), b being the file of
 * that name closest to a, as Python's search from a's folder finds it? A method call reaches
 * another file's class only from a file that imports it (or from the class's own file). */
static bool drive__imports_scan(const ValGraph *g, uint32_t a, uint32_t b);

static bool drive__imports(const ValGraph *g, uint32_t a, uint32_t b)
{
    if (a == b) return true;
    if (!g->imports) return drive__imports_scan(g, a, b);
    uint8_t *at = &g->imports[(size_t)a * g->n + b];
    if (!*at) *at = drive__imports_scan(g, a, b) ? 2 : 1;
    return *at == 2;
}

static bool drive__imports_scan(const ValGraph *g, uint32_t a, uint32_t b)
{
    const char *stem = g->files[b].stem;
    uint32_t mine = drive__closeness(g->src[a].path, g->src[b].path);
    for (uint32_t k = 0; k < g->n; k++)
        if (k != b && g->files[k].ok && !strcmp(g->files[k].stem, stem) && drive__closeness(g->src[a].path, g->src[k].path) > mine)
            return false; /* another file of that name is closer */
    const IrModule *m = &g->files[a].m;
    size_t n = strlen(stem);
    for (uint32_t f = 0; f < m->funcs.len; f++) {
        const IrFunc *fn = m->funcs.items[f];
        for (uint32_t o = 0; o < fn->ops.len; o++) {
            const char *q = fn->ops.items[o].qual;
            for (const char *p = q ? strstr(q, stem) : NULL; p; p = strstr(p + 1, stem))
                if ((p == q || p[-1] == '.') && (p[n] == '.' || p[n] == 0)) return true;
        }
    }
    return false;
}

/* Can call site s reach function t of file fi? */
static bool drive__matches(const ValGraph *g, const Site *s, uint32_t fi, uint32_t t)
{
    const IrFunc *T = drive__fn(g, fi, t);
    if (T->is_lambda || t == 0) return false;
    if (T->cls != IR_NONE) {
        if (s->kind == SITE_SELF) {
            uint32_t cc = drive__class_of(g, s->file, s->func);
            if (s->file == fi && cc == T->cls) return true;
            return !drive__class_has(g, s->file, cc, T->name); /* inherited from a class of the run */
        }
        if (s->kind != SITE_METHOD) return false;
        /* the second try: a file of the same folder that does not import it (a generic fit(module)) */
        if (g->loose ? !drive__same_dir(g->src[s->file].path, g->src[fi].path) : !drive__imports(g, s->file, fi)) return false;
        if (drive__in(T->name, drive_common, ARRAY_LEN(drive_common)) && s->recv &&
            (strstr(s->recv, "opt") || strstr(s->recv, "sched") || strstr(s->recv, "model") || strstr(s->recv, "loss")))
            return false;
        return true;
    }
    if (T->parent == 0 || T->parent == IR_NONE) {
        if (s->kind == SITE_PLAIN) return s->file == fi;
        if (s->kind == SITE_QUAL) return s->module && !strcmp(s->module, g->files[fi].stem) && drive__imports(g, s->file, fi);
        return false;
    }
    return s->kind == SITE_PLAIN && s->file == fi && drive__within(g, s->file, s->func, T->parent);
}

/* The innermost function of the file with an op on line (1-based), or IR_NONE. */
static uint32_t drive__func_at(const ValGraph *g, uint32_t file, uint32_t line, uint32_t *op)
{
    const IrModule *m = &g->files[file].m;
    for (uint32_t f = m->funcs.len; f-- > 0;) {
        const IrFunc *fn = m->funcs.items[f];
        for (uint32_t o = 0; o < fn->ops.len; o++)
            if (fn->ops.items[o].span.row + 1 == line && fn->ops.items[o].kind != IR_PARAM) {
                *op = o;
                return f;
            }
    }
    return IR_NONE;
}

typedef enum GateKind { GATE_NONE, GATE_MAIN, GATE_FLAG } GateKind;

/* Does an `if` around op of function f test `__name__ == "__main__"` or a command-line flag? The
 * condition's text into *text (a). The outermost such `if` wins. */
static GateKind drive__gate(const ValGraph *g, uint32_t file, uint32_t f, uint32_t op, Arena *a, const char **text,
                            uint32_t *line)
{
    const IrModule *m = &g->files[file].m;
    const IrFunc *fn = m->funcs.items[f];
    Array(uint32_t) open;
    array_init(&open);
    for (uint32_t o = 0; o < op && o < fn->ops.len; o++) {
        const IrOp *x = &fn->ops.items[o];
        if (x->kind == IR_IF) array_push(&open, o);
        else if (x->kind == IR_END_IF && open.len) open.len--;
    }
    GateKind kind = GATE_NONE;
    for (uint32_t k = 0; k < open.len && kind == GATE_NONE; k++) {
        const IrOp *x = &fn->ops.items[open.items[k]];
        Span sp = x->a != IR_NONE && x->a < fn->ops.len ? fn->ops.items[x->a].span : x->span;
        /* the whole condition: from the `if` line's start of condition to its end */
        sp.end = x->a != IR_NONE && x->a < fn->ops.len ? GL_MAX(sp.end, fn->ops.items[x->a].span.end) : sp.end;
        const char *t = ir_span_text(m, sp, a);
        if (strstr(t, "__name__") && strstr(t, "__main__")) kind = GATE_MAIN;
        else if (strstr(t, "args") || strstr(t, "argv") || strstr(t, "opt.") || strstr(t, "opts.") || strstr(t, "FLAGS") ||
                 strstr(t, "flags.") || strstr(t, "cfg.") || strstr(t, "config.") || strstr(t, "hparams"))
            kind = GATE_FLAG;
        if (kind != GATE_NONE) *text = t, *line = x->span.row + 1;
    }
    array_free(&open);
    return kind;
}

static uint32_t drive__file_of(const ValGraph *g, uint32_t gid)
{
    for (uint32_t k = 0; k < g->n; k++)
        if (g->files[k].ok && gid >= g->files[k].base && gid < g->files[k].base + g->files[k].m.funcs.len) return k;
    return 0;
}

/* Breadth-first over callers from function (file, f). Stops at the first call site in a loop
 * (want_loop) or in a module's top level (!want_loop). Returns the site index or IR_NONE;
 * down[gid] gets, for every function reached, the site in it that leads down towards (file, f). */
static uint32_t drive__search(const ValGraph *g, uint32_t file, uint32_t f, bool want_loop, uint32_t *down,
                              uint32_t *n_callers)
{
    uint32_t total = g->n_funcs ? g->n_funcs : 1;
    uint32_t *queue = gl_calloc(total + 1, sizeof *queue);
    uint8_t *seen = gl_calloc(total + 1, 1);
    uint32_t qh = 0, qt = 0, found = IR_NONE;
    queue[qt++] = g->files[file].base + f;
    seen[g->files[file].base + f] = 1;
    if (n_callers) *n_callers = 0;
    while (qh < qt && found == IR_NONE) {
        uint32_t gid = queue[qh++];
        uint32_t fi = drive__file_of(g, gid);
        uint32_t t = gid - g->files[fi].base;
        const char *name = drive__fn(g, fi, t)->name;
        for (uint32_t si = strmap_get(&g->by_name, name, strlen(name)); si != IR_NONE && found == IR_NONE;
             si = g->sites.items[si].next) {
            const Site *s = &g->sites.items[si];
            if (!drive__matches(g, s, fi, t)) continue;
            if (n_callers && gid == g->files[file].base + f) (*n_callers)++;
            uint32_t cg = g->files[s->file].base + s->func;
            if (want_loop ? s->loop != IR_NONE : s->func == 0) {
                found = si;
                break;
            }
            if (seen[cg]) continue;
            seen[cg] = 1;
            down[cg] = si;
            queue[qt++] = cg;
        }
    }
    gl_free(queue);
    gl_free(seen);
    return found;
}

static bool drive__has_backward(const IrFunc *fn, uint32_t from, uint32_t to)
{
    for (uint32_t o = from; o < to && o < fn->ops.len; o++)
        if (fn->ops.items[o].kind == IR_ATTR && fn->ops.items[o].name && !strcmp(fn->ops.items[o].name, "backward"))
            return true;
    return false;
}

static bool drive__framework(const ValGraph *g, uint32_t file, uint32_t t)
{
    const IrModule *m = &g->files[file].m;
    const IrFunc *T = m->funcs.items[t];
    if (T->cls == IR_NONE || T->cls >= m->classes.len) return false;
    if (drive__in(T->name, drive_hooks, ARRAY_LEN(drive_hooks)) || !strncmp(T->name, "on_", 3)) return true;
    const IrClass *c = m->classes.items[T->cls];
    for (uint32_t k = 0; k < c->bases.len; k++) {
        const char *b = c->bases.items[k];
        if (b && (strstr(b, "lightning") || strstr(b, "Lightning") || strstr(b, "transformers") || strstr(b, "Callback") ||
                  strstr(b, "ignite") || strstr(b, "accelerate")))
            return true;
    }
    return false;
}

/* The entry: the file whose top level reaches function gid (itself when gid is a top level), with
 * the gates on the way. */
static void drive__entry(const ValGraph *g, uint32_t gid, Arena *a, ValDrive *out, uint32_t *down)
{
    uint32_t fi = drive__file_of(g, gid), f = gid - g->files[fi].base;
    out->entry = UINT32_MAX;
    if (f == 0) {
        out->entry = fi;
        return;
    }
    uint32_t si = drive__search(g, fi, f, false, down, NULL);
    if (si == IR_NONE) return;
    const Site *s = &g->sites.items[si];
    out->entry = s->file;
    const char *t;
    uint32_t line;
    GateKind gk = drive__gate(g, s->file, 0, s->op, a, &t, &line);
    if (gk == GATE_MAIN) out->guard = arena_printf(a, "if %s: (line %u)", t, line);
    /* a command-line flag on the way down from the top level (the functions the search went through) */
    if (gk == GATE_FLAG && !out->gate) out->gate = arena_printf(a, "`if %s:` at %s:%u", t, g->src[s->file].path, line);
    for (uint32_t k = 0; k < g->n_funcs && !out->gate; k++) {
        if (down[k] == IR_NONE) continue;
        const Site *d = &g->sites.items[down[k]];
        if (drive__gate(g, d->file, d->func, d->op, a, &t, &line) == GATE_FLAG)
            out->gate = arena_printf(a, "`if %s:` at %s:%u", t, g->src[d->file].path, line);
    }
}

static const char *drive__qualname(const ValGraph *g, uint32_t file, uint32_t f)
{
    const IrFunc *fn = drive__fn(g, file, f);
    return fn->qualname ? fn->qualname : fn->name;
}

void val_graph_drive(ValGraph *g, uint32_t file, uint32_t line, uint32_t loop_line, Arena *a, ValDrive *out)
{
    memset(out, 0, sizeof *out);
    out->entry = UINT32_MAX;
    out->kind = VAL_DRIVE_NONE;
    out->file = file;
    if (file >= g->n || !g->files[file].ok) {
        out->why = "the file could not be parsed";
        return;
    }
    const IrModule *m = &g->files[file].m;
    uint32_t *down = gl_calloc(g->n_funcs + 1, sizeof *down);
    for (uint32_t k = 0; k <= g->n_funcs; k++) down[k] = IR_NONE;
    /* 1. the rule's own loop, when one starts on its line in this file */
    if (loop_line) {
        for (uint32_t f = 0; f < m->funcs.len; f++) {
            const IrFunc *fn = m->funcs.items[f];
            for (uint32_t l = 0; l < fn->loops.len; l++) {
                if (fn->loops.items[l].span.row + 1 != loop_line) continue;
                out->kind = VAL_DRIVE_LOOP;
                out->ref.func = f, out->ref.loop = l, out->ref.is_while = fn->loops.items[l].is_while;
                out->ref.line = loop_line;
                out->func = drive__qualname(g, file, f);
                out->backward_seen = drive__has_backward(fn, fn->loops.items[l].op, fn->loops.items[l].end);
                drive__entry(g, g->files[file].base + f, a, out, down);
                gl_free(down);
                return;
            }
        }
    }
    uint32_t op = 0;
    uint32_t t = drive__func_at(g, file, line, &op);
    if (t == IR_NONE) {
        out->why = "no code on the flagged line";
        gl_free(down);
        return;
    }
    const IrFunc *T = m->funcs.items[t];
    uint32_t tl = ir_op_loop(T, op);
    if (T->is_lambda && tl == IR_NONE) {
        out->why = "the flagged line is in a lambda: no loop or call of it can be sampled";
        gl_free(down);
        return;
    }
    if (tl != IR_NONE) { /* the flagged line is in a loop of its own function */
        out->kind = VAL_DRIVE_LOOP;
        out->ref.func = t, out->ref.loop = tl, out->ref.is_while = T->loops.items[tl].is_while;
        out->ref.line = T->loops.items[tl].span.row + 1;
        out->func = drive__qualname(g, file, t);
        out->backward_seen = drive__has_backward(T, T->loops.items[tl].op, T->loops.items[tl].end);
        drive__entry(g, g->files[file].base + t, a, out, down);
        gl_free(down);
        return;
    }
    uint32_t n_callers = 0;
    uint32_t si = t ? drive__search(g, file, t, true, down, &n_callers) : IR_NONE;
    if (si == IR_NONE && t) {
        /* a generic fit(module, loader) in a file that never imports the module's class */
        g->loose = true;
        for (uint32_t k = 0; k <= g->n_funcs; k++) down[k] = IR_NONE;
        si = drive__search(g, file, t, true, down, NULL);
        g->loose = si != IR_NONE; /* kept while the path is walked, below */
        if (si == IR_NONE)
            for (uint32_t k = 0; k <= g->n_funcs; k++) down[k] = IR_NONE;
    }
    if (si != IR_NONE) {
        const Site *s = &g->sites.items[si];
        const IrFunc *L = drive__fn(g, s->file, s->func);
        out->kind = VAL_DRIVE_LOOP;
        out->file = s->file;
        out->ref.func = s->func, out->ref.loop = s->loop, out->ref.is_while = L->loops.items[s->loop].is_while;
        out->ref.line = L->loops.items[s->loop].span.row + 1;
        out->func = drive__qualname(g, s->file, s->func);
        out->calls = s->name;
        out->backward_seen = drive__has_backward(L, L->loops.items[s->loop].op, L->loops.items[s->loop].end) ||
                             drive__has_backward(T, 0, T->ops.len);
        /* the path: this site, then down[] of each function below it, to the flagged function */
        Array(ValHop) hops;
        array_init(&hops);
        uint32_t cur = si;
        for (uint32_t guard = 0; cur != IR_NONE && guard < 64; guard++) {
            const Site *c = &g->sites.items[cur];
            ValHop h = {c->file, c->line, c->name};
            array_push(&hops, h);
            /* the function c calls on the path is the one whose callers include c: the next hop is
             * the site recorded in that function (down[] of the callee) */
            uint32_t callee = IR_NONE;
            for (uint32_t k = 0; k < g->n_funcs && callee == IR_NONE; k++) {
                uint32_t kf = drive__file_of(g, k);
                if (!drive__matches(g, c, kf, k - g->files[kf].base)) continue;
                if (k == g->files[file].base + t) callee = k;
                else if (down[k] != IR_NONE) callee = k;
            }
            if (callee == IR_NONE || callee == g->files[file].base + t) break;
            uint32_t kf = drive__file_of(g, callee);
            out->backward_seen |= drive__has_backward(drive__fn(g, kf, callee - g->files[kf].base), 0, UINT32_MAX);
            hops.items[hops.len - 1].callee = drive__qualname(g, kf, callee - g->files[kf].base);
            cur = down[callee];
        }
        if (hops.len) hops.items[hops.len - 1].callee = drive__qualname(g, file, t);
        out->path = ARENA_NEW_N(a, ValHop, hops.len ? hops.len : 1);
        memcpy(out->path, hops.items, hops.len * sizeof(ValHop));
        out->n_path = hops.len;
        array_free(&hops);
        for (uint32_t k = 0; k < out->n_path && !out->gate; k++) {
            const ValHop *h = &out->path[k];
            uint32_t hop_op;
            uint32_t hf = drive__func_at(g, h->file, h->line, &hop_op);
            const char *text;
            uint32_t gl;
            if (hf != IR_NONE && drive__gate(g, h->file, hf, hop_op, a, &text, &gl) == GATE_FLAG)
                out->gate = arena_printf(a, "`if %s:` at %s:%u", text, g->src[h->file].path, gl);
        }
        for (uint32_t k = 0; k <= g->n_funcs; k++) down[k] = IR_NONE;
        drive__entry(g, g->files[s->file].base + s->func, a, out, down);
        g->loose = false;
        gl_free(down);
        return;
    }
    /* 2. no loop reaches it */
    out->func = drive__qualname(g, file, t);
    out->ref.func = t, out->ref.is_func = true, out->ref.line = T->span.row + 1;
    out->backward_seen = drive__has_backward(T, 0, T->ops.len);
    if (t == 0) {
        const char *text;
        uint32_t gl;
        GateKind gk = drive__gate(g, file, 0, op, a, &text, &gl);
        out->why = gk == GATE_MAIN   ? arena_printf(a, "runs once, under `if %s:` (line %u): no loop repeats it", text, gl)
                   : gk == GATE_FLAG ? arena_printf(a, "runs only when a command-line flag is set (`if %s:` at line %u), "
                                                   "and once: no loop repeats it", text, gl)
                                     : "runs once, at the top level of the file: no loop repeats it";
        gl_free(down);
        return;
    }
    if (!n_callers) {
        out->framework = drive__framework(g, file, t);
        out->kind = VAL_DRIVE_CALLS;
        out->why = out->framework ? "driven by a framework" : "no loop of the run calls it";
        gl_free(down);
        return;
    }
    /* called, but never from a loop: say how it runs once */
    for (uint32_t k = 0; k <= g->n_funcs; k++) down[k] = IR_NONE;
    uint32_t ms = drive__search(g, file, t, false, down, NULL);
    if (ms == IR_NONE) {
        out->kind = VAL_DRIVE_CALLS;
        out->why = "no loop of the run calls it";
        gl_free(down);
        return;
    }
    const Site *s = &g->sites.items[ms];
    const char *text;
    uint32_t gl;
    GateKind gk = drive__gate(g, s->file, 0, s->op, a, &text, &gl);
    /* a flag gate anywhere on the way down counts too */
    const char *flag = NULL;
    uint32_t flag_line = 0, flag_file = s->file;
    if (gk == GATE_FLAG) flag = text, flag_line = gl;
    for (uint32_t k = 0; k < g->n_funcs && !flag; k++) {
        if (down[k] == IR_NONE) continue;
        const Site *d = &g->sites.items[down[k]];
        if (drive__gate(g, d->file, d->func, d->op, a, &text, &gl) == GATE_FLAG) flag = text, flag_line = gl, flag_file = d->file;
    }
    /* the call that runs it: the first caller of the flagged function */
    const Site *first = NULL;
    const char *name = T->name;
    for (uint32_t si2 = strmap_get(&g->by_name, name, strlen(name)); si2 != IR_NONE && !first; si2 = g->sites.items[si2].next)
        if (drive__matches(g, &g->sites.items[si2], file, t)) first = &g->sites.items[si2];
    if (!first) first = s;
    const char *called = drive__qualname(g, file, t);
    if (flag)
        out->why = arena_printf(a, "'%s' runs only when a command-line flag is set (`if %s:` at %s:%u), and once: no loop "
                                   "repeats it", called, flag, g->src[flag_file].path, flag_line);
    else if (first->func == 0 && gk == GATE_MAIN)
        out->why = arena_printf(a, "'%s' is called once, under the `if %s:` guard (%s:%u): no loop repeats it", called, text,
                                g->src[first->file].path, first->line);
    else
        out->why = arena_printf(a, "'%s' is called once (%s:%u, in %s), not in a loop: nothing repeats it", called,
                                g->src[first->file].path, first->line, drive__qualname(g, first->file, first->func));
    gl_free(down);
}

const char *val_drive_path_text(const ValDrive *d, const ValSrc *files, Arena *a)
{
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "loop at %s:%u", files[d->file].path, d->ref.line);
    for (uint32_t k = 0; k < d->n_path; k++)
        sb_printf(&sb, " -> %s:%u %s()", files[d->path[k].file].path, d->path[k].line, d->path[k].callee ? d->path[k].callee : "?");
    const char *r = arena_strdup(a, sb.data ? sb.data : "");
    sb_free(&sb);
    return r;
}
