/* A counting allocator for unit tests: installed as a cmocka setup, it lets a test assert that
 * everything it allocated through gl_malloc was freed. Linked into every unit test. */
#ifndef GL_TEST_COUNT_ALLOC_H
#define GL_TEST_COUNT_ALLOC_H

extern long count_live_blocks;  /* blocks allocated and not yet freed */
extern long count_total_allocs; /* malloc and realloc calls since setup */

int count_alloc_setup(void **state);    /* installs the allocator, zeroes the counters */
int count_alloc_teardown(void **state); /* restores libc's allocator; fails on a leak */

#endif
