/* A generic growable array, one macro for every element type (tree-sitter's array.h). */
#ifndef GL_ARRAY_H
#define GL_ARRAY_H

#include "base/base.h"

#define Array(T)       \
    struct {           \
        T *items;      \
        uint32_t len;  \
        uint32_t cap;  \
    }

#define array_init(a) ((a)->items = NULL, (a)->len = 0, (a)->cap = 0)
#define array_free(a) (gl_free((a)->items), array_init(a))
#define array_clear(a) ((a)->len = 0)
#define array_reserve(a, n) \
    array__grow((void **)&(a)->items, &(a)->cap, (n), sizeof(*(a)->items))
#define array_push(a, v) \
    (array__grow((void **)&(a)->items, &(a)->cap, (a)->len + 1, sizeof(*(a)->items)), \
     (a)->items[(a)->len++] = (v))
#define array_pop(a) ((a)->items[--(a)->len])
#define array_back(a) (&(a)->items[(a)->len - 1])
#define array_get(a, i) (&(a)->items[(i)])

/* Grows *items to hold at least n elements (doubling). */
void array__grow(void **items, uint32_t *cap, uint32_t n, size_t elem_size);

#endif
