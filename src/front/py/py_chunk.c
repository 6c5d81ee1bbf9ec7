/* Reuse of lowered top-level statements between lints of one document: logging, keeping, copying back. */
#include "front/py/py_chunk.h"

/* ---- the import table ------------------------------------------------------------------------ */

const char *py_imports_get(const PyImports *im, const char *name, size_t len)
{
    uint32_t i = strmap_get(&im->map, name, len);
    return i == UINT32_MAX ? NULL : im->quals.items[i];
}

void py_imports_put(PyImports *im, const char *local, const char *qual)
{
    array_push(&im->quals, qual);
    array_push(&im->locals, local);
    strmap_put(&im->map, local, strlen(local), im->quals.len - 1);
}

void py_imports_free(PyImports *im)
{
    strmap_free(&im->map);
    array_free(&im->quals);
    array_free(&im->locals);
}

/* ---- the log of one statement's lowering ----------------------------------------------------- */

void py_chunk_log_init(PyChunkLog *log, Arena *arena, PyU32Array *var_local)
{
    memset(log, 0, sizeof *log);
    log->arena = arena;
    log->ok = true;
    strmap_init(&log->dep_index);
    strmap_init(&log->own);
    log->var_local = var_local;
}

void py_chunk_log_free(PyChunkLog *log)
{
    for (uint32_t i = 0; i < log->var_slots.len; i++) log->var_local->items[log->var_slots.items[i]] = 0;
    strmap_free(&log->dep_index), strmap_free(&log->own);
    array_free(&log->deps), array_free(&log->imports), array_free(&log->vars), array_free(&log->var_slots);
}

const char *py_chunk_log_import(PyChunkLog *log, const char *name, size_t len, const char *qual)
{
    if (strmap_get(&log->own, name, len) != UINT32_MAX) return qual; /* its own import: in its arena */
    uint32_t i = strmap_get(&log->dep_index, name, len);
    if (i == UINT32_MAX) {
        PyImportDep d = {arena_strndup(log->arena, name, len), qual ? arena_strdup(log->arena, qual) : NULL};
        array_push(&log->deps, d);
        i = log->deps.len - 1;
        strmap_put(&log->dep_index, d.name, len, i);
    }
    return log->deps.items[i].qual;
}

void py_chunk_log_import_made(PyChunkLog *log, const char *local, const char *qual)
{
    PyImportRec r = {local, qual};
    array_push(&log->imports, r);
    strmap_put(&log->own, local, strlen(local), 1);
}

void py_chunk_log_var(PyChunkLog *log, const IrFunc *top, uint32_t v)
{
    PyU32Array *vl = log->var_local;
    if (vl->len <= v) {
        array_reserve(vl, v + 1);
        memset(vl->items + vl->len, 0, sizeof(uint32_t) * (v + 1 - vl->len));
        vl->len = v + 1;
    }
    if (vl->items[v]) return;
    const IrVar *var = &top->vars.items[v];
    PyChunkVar cv = {NULL, IR_NONE};
    if (var->base == IR_NONE) {
        cv.name = arena_strdup(log->arena, var->name);
    } else {
        /* the base was used first (the op that reads the attribute reads it) */
        if (var->base >= vl->len || !vl->items[var->base]) {
            log->ok = false;
            return;
        }
        cv.base = vl->items[var->base] - 1;
        cv.name = arena_strdup(log->arena, strrchr(var->name, '.') + 1);
    }
    array_push(&log->vars, cv);
    array_push(&log->var_slots, v);
    vl->items[v] = log->vars.len;
}

void py_chunk_mark(const IrModule *m, uint32_t region, PyChunkMark *mk)
{
    const IrFunc *top = m->funcs.items[0];
    mk->ops = top->ops.len, mk->args = top->args.len, mk->loops = top->loops.len;
    mk->funcs = m->funcs.len, mk->classes = m->classes.len, mk->region = region;
    mk->comments = m->comments.len, mk->errors = m->error_spans.len, mk->n_nodes = m->n_nodes;
}

/* ---- kept statements ------------------------------------------------------------------------- */

struct PyChunk {
    Arena *arena;        /* owns everything below, and the strings the IR points to */
    uint32_t gen;        /* the last lint that used it */
    bool reusable;       /* false: kept only until no IR points into its arena any more */
    uint64_t hash;       /* of text */
    PyChunkAt at;        /* where it was lowered (text points into the arena) */
    PyChunkMark mk;      /* the module counters before it, then */
    PyChunkMark end;     /* and after it */
    PyImportDep *deps;
    uint32_t n_deps;
    PyImportRec *imports;
    uint32_t n_imports;
    PyChunkVar *vars;
    uint32_t n_vars;
    IrOp *ops;           /* module-level ops; var is an index into vars */
    uint8_t *var_named;  /* ops[i].name is its variable's name (set again from the new slot) */
    uint32_t *args;
    const char **kw;
    IrLoop *loops;       /* module-level loops */
    IrFunc *funcs;       /* as lowered (before the analysis writes loop kinds); arrays in the arena */
    IrClass *classes;
    Span *comments;
};

static uint64_t py_chunk__hash(const char *s, uint32_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15u ^ len;
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDu;
        h ^= h >> 32;
    }
    for (; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3u;
    return h ^ (h >> 29);
}

void py_chunk_cache_init(PyChunkCache *cc) { memset(cc, 0, sizeof *cc); }

static void py_chunk__free(PyChunk *c)
{
    arena_free(c->arena);
    gl_free(c->arena);
    gl_free(c);
}

void py_chunk_cache_free(PyChunkCache *cc)
{
    for (uint32_t i = 0; i < cc->chunks.len; i++) py_chunk__free(cc->chunks.items[i]);
    array_free(&cc->chunks), array_free(&cc->table), array_free(&cc->var_local);
}

void py_chunk_cache_begin(PyChunkCache *cc)
{
    cc->gen++;
    cc->hits = cc->misses = 0;
}

static void py_chunk__index(PyChunkCache *cc)
{
    uint32_t cap = 16;
    while (cap < cc->chunks.len * 2 + 2) cap *= 2;
    array_reserve(&cc->table, cap);
    cc->table.len = cap;
    memset(cc->table.items, 0, sizeof(uint32_t) * cap);
    for (uint32_t i = 0; i < cc->chunks.len; i++) {
        const PyChunk *c = cc->chunks.items[i];
        if (!c->reusable) continue;
        uint32_t k = (uint32_t)c->hash & (cap - 1);
        while (cc->table.items[k]) k = (k + 1) & (cap - 1);
        cc->table.items[k] = i + 1;
    }
}

void py_chunk_cache_end(PyChunkCache *cc)
{
    /* The IR of this lint points into the arenas of the chunks it used or made (gen): those stay.
     * The others were used by an earlier lint whose IR is gone. */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < cc->chunks.len; i++) {
        PyChunk *c = cc->chunks.items[i];
        if (c->gen == cc->gen) cc->chunks.items[keep++] = c;
        else py_chunk__free(c);
    }
    cc->chunks.len = keep;
    py_chunk__index(cc);
}

static bool py_chunk__deps_hold(const PyChunk *c, const PyImports *im)
{
    for (uint32_t i = 0; i < c->n_deps; i++) {
        const char *q = py_imports_get(im, c->deps[i].name, strlen(c->deps[i].name));
        const char *was = c->deps[i].qual;
        if (q != was && (!q || !was || strcmp(q, was) != 0)) return false;
    }
    return true;
}

const PyChunk *py_chunk_find(PyChunkCache *cc, const PyChunkAt *at, const PyImports *im)
{
    if (!cc->table.len) return NULL;
    uint64_t h = py_chunk__hash(at->text, at->len);
    uint32_t cap = cc->table.len;
    for (uint32_t k = (uint32_t)h & (cap - 1); cc->table.items[k]; k = (k + 1) & (cap - 1)) {
        PyChunk *c = cc->chunks.items[cc->table.items[k] - 1];
        if (c->hash != h || c->at.len != at->len || c->at.symbol != at->symbol || c->at.col != at->col ||
            memcmp(c->at.text, at->text, at->len) != 0 || !py_chunk__deps_hold(c, im))
            continue;
        c->gen = cc->gen;
        cc->hits++;
        return c;
    }
    cc->misses++;
    return NULL;
}

/* ---- moving IR: indices by the new counters, spans by the new position ---------------------- */

typedef struct Delta {
    uint32_t ops, args, loops, funcs, classes, region; /* added (mod 2^32) to each kind of index */
    uint32_t byte, row;
    const uint32_t *vars; /* chunk var index -> module slot */
} Delta;

static void py_chunk__span(Span *s, const Delta *d)
{
    s->start += d->byte, s->end += d->byte;
    s->row += d->row, s->end_row += d->row;
}

static uint32_t py_chunk__ref(uint32_t v, uint32_t delta) { return v == IR_NONE ? v : v + delta; }

/* What every op needs, at any level: regions, defined functions and classes, span. */
static void py_chunk__op(IrOp *o, const Delta *d)
{
    switch ((IrOpKind)o->kind) {
    case IR_IF: case IR_ELSE: case IR_END_IF: case IR_TRY: case IR_EXCEPT: case IR_END_TRY:
        o->aux += d->region;
        break;
    case IR_DEFINE:
        /* classes are encoded from the top (IR_NONE - 1 - class), functions from the bottom */
        if (o->name && !strcmp(o->name, "class")) o->aux -= d->classes;
        else o->aux += d->funcs;
        break;
    default:
        break;
    }
    py_chunk__span(&o->span, d);
}

#define COPY_N(arena, p, n) ((n) ? memcpy(ARENA_NEW_N((arena), __typeof__(*(p)), (n)), (p), sizeof(*(p)) * (n)) : NULL)

/* Arrays of a kept function point into the chunk's arena; the module's own are on the heap. */
#define ARRAY_COPY(dst, src)                                                       \
    do {                                                                           \
        array_init(dst);                                                           \
        if ((src)->len) {                                                          \
            array_reserve(dst, (src)->len);                                        \
            memcpy((dst)->items, (src)->items, sizeof(*(src)->items) * (src)->len); \
            (dst)->len = (src)->len;                                               \
        }                                                                          \
    } while (0)

#define ARRAY_KEEP(arena, dst, src)                              \
    do {                                                         \
        (dst)->items = COPY_N(arena, (src)->items, (src)->len);  \
        (dst)->len = (dst)->cap = (src)->len;                    \
    } while (0)

void py_chunk_splice(const PyChunk *c, const PyChunkAt *at, IrModule *m, PyImports *im, uint32_t *region,
                     bool comments)
{
    IrFunc *top = m->funcs.items[0];
    Delta d;
    d.ops = top->ops.len - c->mk.ops, d.args = top->args.len - c->mk.args, d.loops = top->loops.len - c->mk.loops;
    d.funcs = m->funcs.len - c->mk.funcs, d.classes = m->classes.len - c->mk.classes;
    d.region = *region - c->mk.region;
    d.byte = at->start - c->at.start, d.row = at->row - c->at.row;
    /* the module variables it uses, looked up (or made) in the order the lowering did */
    uint32_t *slots = c->n_vars ? ARENA_NEW_N(m->arena, uint32_t, c->n_vars) : NULL;
    for (uint32_t i = 0; i < c->n_vars; i++) {
        const PyChunkVar *v = &c->vars[i];
        slots[i] = v->base == IR_NONE ? ir_func_var(top, m->arena, v->name, strlen(v->name))
                                      : ir_func_pseudo_var(top, m->arena, slots[v->base], v->name);
    }
    d.vars = slots;
    uint32_t n_ops = c->end.ops - c->mk.ops, n_args = c->end.args - c->mk.args, n_loops = c->end.loops - c->mk.loops;
    array_reserve(&top->ops, top->ops.len + n_ops);
    for (uint32_t i = 0; i < n_ops; i++) {
        IrOp o = c->ops[i];
        o.a = py_chunk__ref(o.a, d.ops), o.b = py_chunk__ref(o.b, d.ops), o.c = py_chunk__ref(o.c, d.ops);
        if (o.kind == IR_CALL || o.kind == IR_BUILD) o.args += d.args; /* set even without arguments */
        if (o.var != IR_NONE) {
            o.var = slots[o.var];
            if (c->var_named[i]) o.name = top->vars.items[o.var].name;
        }
        if (o.kind == IR_LOOP || o.kind == IR_END_LOOP || o.kind == IR_BREAK || o.kind == IR_CONTINUE) o.aux += d.loops;
        py_chunk__op(&o, &d);
        top->ops.items[top->ops.len++] = o;
    }
    array_reserve(&top->args, top->args.len + n_args);
    array_reserve(&top->kw, top->kw.len + n_args);
    for (uint32_t i = 0; i < n_args; i++) {
        top->args.items[top->args.len++] = c->args[i] + d.ops;
        top->kw.items[top->kw.len++] = c->kw[i];
    }
    for (uint32_t i = 0; i < n_loops; i++) {
        IrLoop l = c->loops[i];
        l.op += d.ops, l.end = py_chunk__ref(l.end, d.ops), l.iter = py_chunk__ref(l.iter, d.ops);
        l.feedback_call = py_chunk__ref(l.feedback_call, d.ops);
        l.parent = py_chunk__ref(l.parent, d.loops);
        py_chunk__span(&l.span, &d);
        array_push(&top->loops, l);
    }
    for (uint32_t i = 0; i < c->end.funcs - c->mk.funcs; i++) {
        const IrFunc *src = &c->funcs[i];
        IrFunc *f = ARENA_NEW(m->arena, IrFunc);
        *f = *src;
        f->index += d.funcs;
        if (f->parent != 0) f->parent = py_chunk__ref(f->parent, d.funcs);
        f->cls = py_chunk__ref(f->cls, d.classes);
        py_chunk__span(&f->span, &d);
        ARRAY_COPY(&f->ops, &src->ops);
        ARRAY_COPY(&f->args, &src->args);
        ARRAY_COPY(&f->kw, &src->kw);
        ARRAY_COPY(&f->vars, &src->vars);
        ARRAY_COPY(&f->loops, &src->loops);
        ARRAY_COPY(&f->decorators, &src->decorators);
        for (uint32_t k = 0; k < f->ops.len; k++) py_chunk__op(&f->ops.items[k], &d);
        for (uint32_t k = 0; k < f->loops.len; k++) py_chunk__span(&f->loops.items[k].span, &d);
        strmap_init(&f->var_index);
        strmap_init(&f->pseudo_index);
        for (uint32_t k = 0; k < f->vars.len; k++) {
            if (f->vars.items[k].base == IR_NONE)
                strmap_put(&f->var_index, f->vars.items[k].name, strlen(f->vars.items[k].name), k);
            else ir_func_index_pseudo(f, k);
        }
        array_push(&m->funcs, f);
    }
    for (uint32_t i = 0; i < c->end.classes - c->mk.classes; i++) {
        const IrClass *src = &c->classes[i];
        IrClass *k = ARENA_NEW(m->arena, IrClass);
        *k = *src;
        k->index += d.classes;
        k->init = py_chunk__ref(k->init, d.funcs), k->forward = py_chunk__ref(k->forward, d.funcs);
        py_chunk__span(&k->span, &d);
        ARRAY_COPY(&k->bases, &src->bases);
        ARRAY_COPY(&k->methods, &src->methods);
        for (uint32_t j = 0; j < k->methods.len; j++) k->methods.items[j] += d.funcs;
        array_push(&m->classes, k);
    }
    *region += c->end.region - c->mk.region;
    for (uint32_t i = 0; i < c->n_imports; i++) py_imports_put(im, c->imports[i].local, c->imports[i].qual);
    if (comments) {
        for (uint32_t i = 0; i < c->end.comments - c->mk.comments; i++) {
            Span s = c->comments[i];
            py_chunk__span(&s, &d);
            array_push(&m->comments, s);
        }
        m->n_nodes += c->end.n_nodes - c->mk.n_nodes;
    }
}

/* Can the statement's module-level output be moved: does every op it refers to lie in it? */
static bool py_chunk__closed(const IrFunc *top, const PyChunkMark *mk, const PyChunkLog *log)
{
    const PyU32Array *vl = log->var_local;
#define INSIDE(v) ((v) == IR_NONE || ((v) >= mk->ops && (v) < top->ops.len))
    for (uint32_t i = mk->ops; i < top->ops.len; i++) {
        const IrOp *o = &top->ops.items[i];
        if (!INSIDE(o->a) || !INSIDE(o->b) || !INSIDE(o->c)) return false;
        if ((o->kind == IR_CALL || o->kind == IR_BUILD) && (o->args < mk->args || o->args + o->nargs > top->args.len))
            return false;
        if (o->kind != IR_CALL && o->kind != IR_BUILD && (o->args || o->nargs)) return false;
        if (o->var != IR_NONE && (o->var >= vl->len || !vl->items[o->var])) return false;
        if ((o->kind == IR_LOOP || o->kind == IR_END_LOOP || o->kind == IR_BREAK || o->kind == IR_CONTINUE) &&
            (o->aux < mk->loops || o->aux >= top->loops.len))
            return false;
    }
    for (uint32_t i = mk->args; i < top->args.len; i++)
        if (!INSIDE(top->args.items[i])) return false;
    for (uint32_t i = mk->loops; i < top->loops.len; i++) {
        const IrLoop *l = &top->loops.items[i];
        if (!INSIDE(l->op) || !INSIDE(l->end) || !INSIDE(l->iter) || !INSIDE(l->feedback_call)) return false;
        if (l->parent != IR_NONE && (l->parent < mk->loops || l->parent >= i)) return false;
    }
#undef INSIDE
    return true;
}

void py_chunk_save(PyChunkCache *cc, const PyChunkAt *at, const PyChunkMark *mk, PyChunkLog *log, Arena *arena,
                   const IrModule *m, uint32_t region, bool comments)
{
    const IrFunc *top = m->funcs.items[0];
    PyChunk *c = gl_calloc(1, sizeof *c);
    c->arena = arena; /* ownership of the statement's arena moves to the cache */
    c->gen = cc->gen;
    array_push(&cc->chunks, c);
    c->reusable = log->ok && m->error_spans.len == mk->errors && py_chunk__closed(top, mk, log);
    if (!c->reusable) {
        py_chunk_log_free(log);
        return;
    }
    Arena *a = arena;
    c->at = *at;
    c->at.text = arena_strndup(a, at->text, at->len);
    c->hash = py_chunk__hash(at->text, at->len);
    c->mk = *mk;
    py_chunk_mark(m, region, &c->end);
    c->deps = COPY_N(a, log->deps.items, log->deps.len), c->n_deps = log->deps.len;
    c->imports = COPY_N(a, log->imports.items, log->imports.len), c->n_imports = log->imports.len;
    c->vars = COPY_N(a, log->vars.items, log->vars.len), c->n_vars = log->vars.len;
    uint32_t n_ops = top->ops.len - mk->ops;
    c->ops = COPY_N(a, top->ops.items + mk->ops, n_ops);
    c->var_named = n_ops ? ARENA_NEW_N(a, uint8_t, n_ops) : NULL;
    for (uint32_t i = 0; i < n_ops; i++) {
        IrOp *o = &c->ops[i];
        if (o->var == IR_NONE) continue;
        c->var_named[i] = o->name && o->name == top->vars.items[o->var].name;
        if (c->var_named[i]) o->name = NULL; /* the new slot's name is set when it is copied back */
        o->var = log->var_local->items[o->var] - 1;
    }
    /* module-level indices are kept as they were; splice adds the difference of the counters */
    c->args = COPY_N(a, top->args.items + mk->args, top->args.len - mk->args);
    c->kw = COPY_N(a, top->kw.items + mk->args, top->kw.len - mk->args);
    c->loops = COPY_N(a, top->loops.items + mk->loops, top->loops.len - mk->loops);
    uint32_t n_funcs = m->funcs.len - mk->funcs;
    c->funcs = n_funcs ? ARENA_NEW_N(a, IrFunc, n_funcs) : NULL;
    for (uint32_t i = 0; i < n_funcs; i++) {
        const IrFunc *src = m->funcs.items[mk->funcs + i];
        IrFunc *f = &c->funcs[i];
        *f = *src;
        ARRAY_KEEP(a, &f->ops, &src->ops);
        ARRAY_KEEP(a, &f->args, &src->args);
        ARRAY_KEEP(a, &f->kw, &src->kw);
        ARRAY_KEEP(a, &f->vars, &src->vars);
        ARRAY_KEEP(a, &f->loops, &src->loops);
        ARRAY_KEEP(a, &f->decorators, &src->decorators);
        memset(&f->var_index, 0, sizeof f->var_index); /* rebuilt by splice */
        memset(&f->pseudo_index, 0, sizeof f->pseudo_index);
    }
    uint32_t n_classes = m->classes.len - mk->classes;
    c->classes = n_classes ? ARENA_NEW_N(a, IrClass, n_classes) : NULL;
    for (uint32_t i = 0; i < n_classes; i++) {
        const IrClass *src = m->classes.items[mk->classes + i];
        IrClass *k = &c->classes[i];
        *k = *src;
        ARRAY_KEEP(a, &k->bases, &src->bases);
        ARRAY_KEEP(a, &k->methods, &src->methods);
    }
    if (comments) {
        c->comments = COPY_N(a, m->comments.items + mk->comments, m->comments.len - mk->comments);
    } else {
        /* The comment walk did not visit it: the file has no '#' and no syntax error, so when a
         * later walk does, it sees this node alone (no comment in it, nothing to descend for). */
        c->end.comments = c->mk.comments;
        c->end.n_nodes = c->mk.n_nodes + 1;
    }
    py_chunk_log_free(log);
}
