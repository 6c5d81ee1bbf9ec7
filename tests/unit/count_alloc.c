/* The counting allocator shared by the unit tests (see count_alloc.h). */
#include <stdlib.h>
#include "base/base.h"
#include "count_alloc.h"

long count_live_blocks, count_total_allocs;

static void *count_malloc(size_t n)
{
    count_live_blocks++, count_total_allocs++;
    return malloc(n);
}

static void *count_realloc(void *p, size_t n)
{
    if (!p) count_live_blocks++;
    count_total_allocs++;
    return realloc(p, n);
}

static void count_free(void *p)
{
    if (p) count_live_blocks--;
    free(p);
}

int count_alloc_setup(void **state)
{
    (void)state;
    static const GlAllocator counting = {count_malloc, count_realloc, count_free};
    gl_set_allocator(&counting);
    count_live_blocks = 0, count_total_allocs = 0;
    return 0;
}

int count_alloc_teardown(void **state)
{
    (void)state;
    gl_set_allocator(NULL);
    return count_live_blocks == 0 ? 0 : -1;
}
