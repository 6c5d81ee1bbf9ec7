/* Bump allocator: chunks of growing size, freed all at once when a file's lint is done. */
#include <stdarg.h>
#include <stdio.h>
#include "base/arena.h"

struct ArenaChunk {
    ArenaChunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_MIN_CHUNK (4 * 1024) /* small: every linted file keeps one arena (its findings) until the output */

void arena_init(Arena *a) { a->head = NULL, a->used_total = 0; }

void arena_init_sized(Arena *a, size_t first)
{
    arena_init(a);
    first = (first + 15) & ~(size_t)15;
    ArenaChunk *c = gl_malloc(sizeof(ArenaChunk) + first);
    c->size = first, c->used = 0, c->next = NULL;
    a->head = c;
}

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    ArenaChunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t size = ARENA_MIN_CHUNK;
        if (c && c->size < 16 * 1024 * 1024) size = c->size * 2; /* geometric, capped */
        if (c && size < 256) size = 256; /* after a tiny first chunk (arena_init_sized) */
        if (size < n) size = n;
        c = gl_malloc(sizeof(ArenaChunk) + size);
        c->size = size, c->used = 0, c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used_total += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *d = arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_vprintf(Arena *a, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *d = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
    if (n > 0) vsnprintf(d, (size_t)n + 1, fmt, ap);
    return d;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *d = arena_vprintf(a, fmt, ap);
    va_end(ap);
    return d;
}

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        gl_free(c);
        c = next;
    }
    arena_init(a);
}
