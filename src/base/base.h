/* Common definitions for every gradleak source file: integer types, assertions, the allocator. */
#ifndef GL_BASE_H
#define GL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GL_VERSION "0.1.0"
/* the commit and the UTC build date (build/gen/version.c, tools/gen-version.sh) */
extern const char gl_build_commit[];
extern const char gl_build_date[];

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GL_UNUSED(x) ((void)(x))

/* Invariants. GL_ASSERT is checked in debug and sanitizer builds only. ALWAYS/NEVER mark defensive
 * branches that should be unreachable: they trap in debug builds (so fuzzing finds them) and let
 * release builds recover by taking the safe branch (SQLite's idiom). */
#ifdef GL_DEBUG
void gl_assert_fail(const char *expr, const char *file, int line);
#define GL_ASSERT(x) ((x) ? (void)0 : gl_assert_fail(#x, __FILE__, __LINE__))
#define ALWAYS(x) ((x) ? 1 : (gl_assert_fail(#x, __FILE__, __LINE__), 0))
#define NEVER(x) ((x) ? (gl_assert_fail(#x, __FILE__, __LINE__), 1) : 0)
#else
#define GL_ASSERT(x) ((void)0)
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#endif

/* Every heap allocation outside an arena goes through these, so tests can count leaks and inject
 * failures (tree-sitter's ts_set_allocator). gl_malloc and friends abort with a message on
 * exhaustion: a linter that runs out of memory has nothing better to do. */
typedef struct GlAllocator {
    void *(*malloc_fn)(size_t);
    void *(*realloc_fn)(void *, size_t);
    void (*free_fn)(void *);
} GlAllocator;

void gl_set_allocator(const GlAllocator *a);
void *gl_malloc(size_t n);
void *gl_calloc(size_t n, size_t size);
void *gl_realloc(void *p, size_t n);
void gl_free(void *p);
char *gl_strdup(const char *s);
char *gl_strndup(const char *s, size_t n);

#endif
