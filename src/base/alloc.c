/* The swappable allocator behind gl_malloc and friends, and the assertion handler. */
#include <stdio.h>
#include "base/array.h"

static GlAllocator current = {malloc, realloc, free};

void gl_set_allocator(const GlAllocator *a)
{
    static const GlAllocator libc = {malloc, realloc, free};
    current = a ? *a : libc;
}

static void *gl__check(void *p, size_t n)
{
    if (!p && n) {
        fprintf(stderr, "gradleak: out of memory (allocating %zu bytes)\n", n);
        abort();
    }
    return p;
}

void *gl_malloc(size_t n) { return gl__check(current.malloc_fn(n ? n : 1), n ? n : 1); }

void *gl_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return gl__check(NULL, SIZE_MAX);
    void *p = gl_malloc(n * size);
    memset(p, 0, n * size);
    return p;
}

void *gl_realloc(void *p, size_t n) { return gl__check(current.realloc_fn(p, n ? n : 1), n ? n : 1); }

void gl_free(void *p)
{
    if (p) current.free_fn(p);
}

char *gl_strndup(const char *s, size_t n)
{
    char *d = gl_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *gl_strdup(const char *s) { return gl_strndup(s, strlen(s)); }

#ifdef GL_DEBUG
void gl_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "gradleak: assertion failed: %s (%s:%d)\nthis is a bug in gradleak %s\n", expr, file,
            line, GL_VERSION);
    abort();
}
#endif

void array__grow(void **items, uint32_t *cap, uint32_t n, size_t elem_size)
{
    if (n <= *cap) return;
    uint32_t c = *cap ? *cap : 8;
    while (c < n) c = c > UINT32_MAX / 2 ? n : c * 2;
    *items = gl_realloc(*items, (size_t)c * elem_size);
    *cap = c;
}
