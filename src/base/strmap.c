/* Open-addressing (linear probing) string map; FNV-1a hashes. */
#include "base/strmap.h"

uint32_t strmap_hash(const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 16777619u;
    return h;
}

void strmap_init(StrMap *m) { m->slots = NULL, m->cap = 0, m->len = 0; }

void strmap_free(StrMap *m)
{
    gl_free(m->slots);
    strmap_init(m);
}

static StrMapEntry *strmap__find(const StrMap *m, const char *key, size_t len, uint32_t h)
{
    uint32_t mask = m->cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        StrMapEntry *e = &m->slots[i];
        if (!e->key) return e;
        if (e->hash == h && e->keylen == len && memcmp(e->key, key, len) == 0) return e;
    }
}

uint32_t strmap_get(const StrMap *m, const char *key, size_t len)
{
    if (!m->cap) return UINT32_MAX;
    StrMapEntry *e = strmap__find(m, key, len, strmap_hash(key, len));
    return e->key ? e->value : UINT32_MAX;
}

void strmap_put(StrMap *m, const char *key, size_t len, uint32_t value)
{
    if ((m->len + 1) * 4 >= m->cap * 3) {
        StrMap bigger = {gl_calloc(m->cap ? m->cap * 2 : 16, sizeof(StrMapEntry)), m->cap ? m->cap * 2 : 16, 0};
        for (uint32_t i = 0; i < m->cap; i++) {
            StrMapEntry *e = &m->slots[i];
            if (!e->key) continue;
            *strmap__find(&bigger, e->key, e->keylen, e->hash) = *e;
            bigger.len++;
        }
        gl_free(m->slots);
        *m = bigger;
    }
    uint32_t h = strmap_hash(key, len);
    StrMapEntry *e = strmap__find(m, key, len, h);
    if (!e->key) m->len++;
    e->key = key, e->keylen = (uint32_t)len, e->hash = h, e->value = value;
}
