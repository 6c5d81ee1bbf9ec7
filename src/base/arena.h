/* Bump allocator for everything that lives as long as one file's lint (syntax, IR, facts, diags). */
#ifndef GL_ARENA_H
#define GL_ARENA_H

#include <stdarg.h>
#include "base/base.h"

typedef struct ArenaChunk ArenaChunk;

typedef struct Arena {
    ArenaChunk *head;
    size_t used_total;
} Arena;

void arena_init(Arena *a);
/* An arena whose first chunk holds about `first` bytes instead of 64 KiB: for thousands of small
 * arenas that live long (the CLI's compact per-file results). */
void arena_init_sized(Arena *a, size_t first);
void *arena_alloc(Arena *a, size_t n);  /* zeroed, 16-byte aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);
void arena_free(Arena *a);  /* frees every chunk; the arena can be reused after arena_init */

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_NEW_N(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

#endif
