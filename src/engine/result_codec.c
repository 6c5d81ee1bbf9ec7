/* A file's lint result as bytes: what the cache stores, and how the CLI keeps results compact. */
#include "engine/result_codec.h"

/* ---- encoding: little-endian u32s and length-prefixed strings (0xFFFFFFFF = NULL) ---- */

#define BLOB_MAGIC "GLR3" /* GLR3: the C++ project headers (deps) after the notes */
#define NO_STRING 0xFFFFFFFFu

static void put_u32(StrBuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    sb_append(b, (const char *)x, 4);
}

static void put_str(StrBuf *b, const char *s)
{
    if (!s) {
        put_u32(b, NO_STRING);
        return;
    }
    size_t n = strlen(s);
    put_u32(b, (uint32_t)n);
    sb_append(b, s, n);
}

static void put_span(StrBuf *b, const Span *s)
{
    put_u32(b, s->start), put_u32(b, s->end), put_u32(b, s->row), put_u32(b, s->col);
    put_u32(b, s->end_row), put_u32(b, s->end_col);
}

static void put_summary(StrBuf *b, const ExternSummary *s)
{
    put_u32(b, s->kind), put_u32(b, s->grad), put_u32(b, s->elem), put_u32(b, s->nparams);
    put_u32(b, s->flags), put_u32(b, s->pmask), put_u32(b, s->cmask);
    put_u32(b, s->keep_acc), put_u32(b, s->keep_coll), put_u32(b, s->trains), put_u32(b, s->evaluates);
    put_u32(b, s->backprops);
    put_u32(b, s->ret_tuple), put_u32(b, s->ret_plain), put_u32(b, s->ret_weak), put_u32(b, s->ret_zero);
}

void lint_result_encode(StrBuf *out, const LintResult *r)
{
    const Diag *diags = r->diags.items;
    uint32_t n = r->diags.len;
    sb_append(out, BLOB_MAGIC, 4);
    put_u32(out, (r->syntax_error ? 1u : 0u) | (r->skipped ? 2u : 0u) | ((uint32_t)(r->cxx & 3u) << 2) | (r->step_costly ? 16u : 0u));
    put_str(out, r->notes);
    put_str(out, r->deps);
    put_u32(out, r->n_exports);
    for (uint32_t i = 0; i < r->n_exports; i++) {
        put_str(out, r->exports[i].name);
        put_summary(out, &r->exports[i].summary);
    }
    put_u32(out, r->n_calls);
    for (uint32_t i = 0; i < r->n_calls; i++) {
        put_str(out, r->calls[i].qual);
        put_u32(out, (r->calls[i].graph_arg ? 1u : 0u) | (r->calls[i].module_arg ? 2u : 0u) | (r->calls[i].per_step ? 4u : 0u) |
                         (r->calls[i].grad_off ? 8u : 0u) | (r->calls[i].import_only ? 16u : 0u) |
                         (r->calls[i].after_train ? 32u : 0u));
    }
    put_u32(out, n);
    for (uint32_t i = 0; i < n; i++) {
        const Diag *d = &diags[i];
        put_u32(out, (uint32_t)d->rule);
        put_u32(out, (uint32_t)d->severity);
        put_u32(out, (uint32_t)d->growth);
        put_span(out, &d->span);
        put_str(out, d->message);
        put_str(out, d->hint);
        put_u32(out, d->n_related);
        for (uint32_t k = 0; k < d->n_related; k++) {
            put_span(out, &d->related[k].span);
            put_str(out, d->related[k].message);
        }
        put_u32(out, d->fix ? 1 : 0);
        if (d->fix) {
            put_str(out, d->fix->message);
            put_u32(out, (uint32_t)d->fix->safety);
            put_u32(out, d->fix->n_edits);
            for (uint32_t k = 0; k < d->fix->n_edits; k++) {
                put_u32(out, d->fix->edits[k].start);
                put_u32(out, d->fix->edits[k].end);
                put_str(out, d->fix->edits[k].text);
            }
        }
        put_str(out, d->trace);
        put_u32(out, d->loop_line);
    }
}

/* ---- decoding: every read is bounds-checked; the first failure sticks ---- */

typedef struct Reader {
    const unsigned char *p, *end;
    bool bad;
    Arena *arena;
} Reader;

static uint32_t get_u32(Reader *r)
{
    if (r->bad || r->end - r->p < 4) {
        r->bad = true;
        return 0;
    }
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static const char *get_str(Reader *r)
{
    uint32_t n = get_u32(r);
    if (r->bad || n == NO_STRING) return NULL;
    if ((size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    const char *s = arena_strndup(r->arena, (const char *)r->p, n);
    r->p += n;
    return s;
}

/* A count of items that each take at least min_bytes: larger than the rest of the blob is damage
 * (and would otherwise let a corrupt count allocate gigabytes). */
static uint32_t get_count(Reader *r, size_t min_bytes)
{
    uint32_t n = get_u32(r);
    if (!r->bad && (size_t)n > (size_t)(r->end - r->p) / min_bytes) r->bad = true;
    return r->bad ? 0 : n;
}

static void get_span(Reader *r, Span *s)
{
    s->start = get_u32(r), s->end = get_u32(r), s->row = get_u32(r), s->col = get_u32(r);
    s->end_row = get_u32(r), s->end_col = get_u32(r);
}

/* A summary field that must fit its type. */
static uint32_t get_small(Reader *r, uint32_t max)
{
    uint32_t v = get_u32(r);
    if (v > max) r->bad = true;
    return v;
}

int lint_result_decode(const void *blob, size_t len, LintResult *out)
{
    memset(out, 0, sizeof *out);
    /* sized from the blob: thousands of these stay alive until the output is written */
    arena_init_sized(&out->arena, len * 2 + 128);
    array_init(&out->diags);
    Arena *arena = &out->arena;
    DiagList *diags = &out->diags;
    if (!blob || len < 4 || memcmp(blob, BLOB_MAGIC, 4) != 0) return -1;
    Reader r = {(const unsigned char *)blob + 4, (const unsigned char *)blob + len, false, arena};
    uint32_t fl = get_u32(&r);
    const char *nt = get_str(&r);
    const char *deps = get_str(&r);
    out->n_exports = get_count(&r, 32);
    out->exports = ARENA_NEW_N(arena, ExportedFunc, out->n_exports ? out->n_exports : 1);
    for (uint32_t i = 0; i < out->n_exports && !r.bad; i++) {
        ExportedFunc *e = &out->exports[i];
        e->name = get_str(&r);
        if (!e->name) r.bad = true;
        e->summary.kind = (uint8_t)get_small(&r, 0xff);
        e->summary.grad = (uint8_t)get_small(&r, 0xff);
        e->summary.elem = (uint8_t)get_small(&r, 0xff);
        e->summary.nparams = (uint8_t)get_small(&r, 0xff);
        e->summary.flags = (uint16_t)get_small(&r, 0xffff);
        e->summary.pmask = (uint16_t)get_small(&r, 0xffff);
        e->summary.cmask = (uint8_t)get_small(&r, 0xff);
        e->summary.keep_acc = (uint8_t)get_small(&r, 0xff);
        e->summary.keep_coll = (uint8_t)get_small(&r, 0xff);
        e->summary.trains = (uint8_t)get_small(&r, 1);
        e->summary.evaluates = (uint8_t)get_small(&r, 1);
        e->summary.backprops = (uint8_t)get_small(&r, 1);
        e->summary.ret_tuple = (uint8_t)get_small(&r, 0xff);
        e->summary.ret_plain = (uint16_t)get_small(&r, 0xffff);
        e->summary.ret_weak = (uint16_t)get_small(&r, 0xffff);
        e->summary.ret_zero = (uint16_t)get_small(&r, 0xffff);
    }
    out->n_calls = get_count(&r, 8);
    out->calls = ARENA_NEW_N(arena, ImportedCall, out->n_calls ? out->n_calls : 1);
    for (uint32_t i = 0; i < out->n_calls && !r.bad; i++) {
        out->calls[i].qual = get_str(&r);
        uint32_t f = get_small(&r, 63);
        if (!out->calls[i].qual) r.bad = true;
        out->calls[i].graph_arg = f & 1;
        out->calls[i].module_arg = (f & 2) != 0;
        out->calls[i].per_step = (f & 4) != 0;
        out->calls[i].grad_off = (f & 8) != 0;
        out->calls[i].import_only = (f & 16) != 0;
        out->calls[i].after_train = (f & 32) != 0;
    }
    uint32_t n = get_count(&r, 16);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        Diag d;
        memset(&d, 0, sizeof d);
        d.rule = (RuleId)get_u32(&r);
        uint32_t sev = get_u32(&r), growth = get_u32(&r);
        if (d.rule < 0 || d.rule >= RULE_COUNT || sev > SEV_INFO || growth > GROWTH_HOST) r.bad = true;
        d.severity = (Severity)sev;
        d.growth = (GrowthClass)growth;
        get_span(&r, &d.span);
        d.message = get_str(&r);
        if (!d.message) r.bad = true;
        d.hint = get_str(&r);
        d.n_related = get_count(&r, 28);
        if (d.n_related) {
            d.related = ARENA_NEW_N(arena, Related, d.n_related);
            for (uint32_t k = 0; k < d.n_related && !r.bad; k++) {
                get_span(&r, &d.related[k].span);
                d.related[k].message = get_str(&r);
                if (!d.related[k].message) r.bad = true;
            }
        }
        uint32_t has_fix = get_u32(&r);
        if (has_fix > 1) r.bad = true;
        if (has_fix && !r.bad) {
            Fix *fx = ARENA_NEW(arena, Fix);
            fx->message = get_str(&r);
            uint32_t safety = get_u32(&r);
            if (!fx->message || safety > FIX_UNSAFE) r.bad = true;
            fx->safety = (FixSafety)safety;
            fx->n_edits = get_count(&r, 12);
            fx->edits = fx->n_edits ? ARENA_NEW_N(arena, Edit, fx->n_edits) : NULL;
            for (uint32_t k = 0; k < fx->n_edits && !r.bad; k++) {
                fx->edits[k].start = get_u32(&r);
                fx->edits[k].end = get_u32(&r);
                fx->edits[k].text = get_str(&r);
                if (!fx->edits[k].text || fx->edits[k].end < fx->edits[k].start) r.bad = true;
            }
            d.fix = fx;
        }
        d.trace = get_str(&r);
        d.loop_line = get_u32(&r);
        if (!r.bad) array_push(diags, d);
    }
    if (r.bad || r.p != r.end || (fl & ~31u)) {
        lint_result_free(out);
        memset(out, 0, sizeof *out);
        arena_init(&out->arena);
        array_init(&out->diags);
        return -1;
    }
    out->notes = nt;
    out->deps = deps;
    out->syntax_error = fl & 1;
    out->cxx = (uint8_t)((fl >> 2) & 3u); /* CxxParse */
    out->skipped = (fl & 2) != 0;
    out->step_costly = (fl & 16) != 0;
    return 0;
}
