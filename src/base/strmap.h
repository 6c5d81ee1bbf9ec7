/* Open-addressing hash map from strings to uint32 values (interning, symbol tables). */
#ifndef GL_STRMAP_H
#define GL_STRMAP_H

#include "base/base.h"

typedef struct StrMapEntry {
    const char *key; /* not owned: the caller keeps keys alive (arena or static) */
    uint32_t keylen;
    uint32_t hash;
    uint32_t value;
} StrMapEntry;

typedef struct StrMap {
    StrMapEntry *slots;
    uint32_t cap, len;
} StrMap;

void strmap_init(StrMap *m);
void strmap_free(StrMap *m);
/* Returns the value for key, or IR-style UINT32_MAX when absent. */
uint32_t strmap_get(const StrMap *m, const char *key, size_t len);
/* Inserts or replaces. The key pointer is stored as is. */
void strmap_put(StrMap *m, const char *key, size_t len, uint32_t value);
uint32_t strmap_hash(const char *key, size_t len);

#endif
