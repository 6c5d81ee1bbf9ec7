/* Private to src/front/py: what py_lower_reuse keeps of a document between lints (py_tree.c). */
#ifndef GL_PY_TREE_H
#define GL_PY_TREE_H

#include <tree_sitter/api.h>
#include "front/py/py.h"
#include "front/py/py_chunk.h"

struct PyTree {
    TSParser *parser;    /* kept with the tree: a parser is cheaper to reuse than to rebuild */
    TSTree *tree;        /* NULL until the first successful parse */
    bool reuse;          /* keep and reuse lowered statements */
    PyChunkCache chunks; /* the lowered top-level statements of the last lint */
};

/* Is root cut short by tree-sitter's 16-bit child count (a tree that must not be freed)? */
bool py_tree_truncated(const char *src, size_t len, TSNode root);
/* Keeps a tree that cannot be freed safely reachable for the life of the process. */
void py_tree_quarantine(TSTree *t);

#endif
