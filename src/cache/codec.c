/* A file's lint result as bytes (what the cache stores), and the hash used for keys and checksums. */
#include "cache/cache.h"

/* ---- hashing: one lane of xxHash64's structure; fast, and good enough for cache keys ---- */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t load64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t round64(uint64_t acc, uint64_t input)
{
    acc += input * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

uint64_t cache_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    size_t n = len;
    /* four independent accumulators, as xxHash64, so the multiplies overlap */
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    uint64_t h;
    if (n >= 32) {
        while (n >= 32) {
            v1 = round64(v1, load64(p));
            v2 = round64(v2, load64(p + 8));
            v3 = round64(v3, load64(p + 16));
            v4 = round64(v4, load64(p + 24));
            p += 32, n -= 32;
        }
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        uint64_t vs[4] = {v1, v2, v3, v4};
        for (int i = 0; i < 4; i++) h = (h ^ round64(0, vs[i])) * P1 + P4;
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;
    while (n >= 8) {
        h ^= round64(0, load64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8, n -= 8;
    }
    while (n--) {
        h ^= (*p++) * P5;
        h = rotl64(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- encoding: little-endian u32s and length-prefixed strings (0xFFFFFFFF = NULL) ---- */

#define BLOB_MAGIC "GLR1"
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

void cache_result_encode(StrBuf *out, const Diag *diags, uint32_t n, const char *notes, uint32_t flags)
{
    sb_append(out, BLOB_MAGIC, 4);
    put_u32(out, flags);
    put_str(out, notes);
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

int cache_result_decode(const void *blob, size_t len, Arena *arena, DiagList *diags, const char **notes,
                        uint32_t *flags)
{
    array_init(diags);
    *notes = NULL;
    *flags = 0;
    if (!blob || len < 4 || memcmp(blob, BLOB_MAGIC, 4) != 0) return -1;
    Reader r = {(const unsigned char *)blob + 4, (const unsigned char *)blob + len, false, arena};
    uint32_t fl = get_u32(&r);
    const char *nt = get_str(&r);
    uint32_t n = get_count(&r, 16);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        Diag d;
        memset(&d, 0, sizeof d);
        d.rule = (int)get_u32(&r);
        uint32_t sev = get_u32(&r), growth = get_u32(&r);
        if (d.rule < 0 || d.rule >= 4096 || sev > SEV_INFO || growth > GROWTH_HOST) r.bad = true;
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
    if (r.bad || r.p != r.end || (fl & ~(CACHE_RESULT_SYNTAX_ERROR | CACHE_RESULT_SKIPPED))) {
        array_free(diags);
        return -1;
    }
    *notes = nt;
    *flags = fl;
    return 0;
}
