/* The Python front end: source bytes -> tree-sitter tree -> IR. The only user of tree-sitter. */
#ifndef GL_PY_H
#define GL_PY_H

#include "ir/ir.h"

typedef struct PyParseStats {
    uint32_t n_nodes;
    uint64_t parse_ns, lower_ns;
} PyParseStats;

/* Why py_lower could not produce an IR (its negative return values). */
enum {
    PY_ERR_PARSER = -1,     /* the parser failed (input over 2 GiB) */
    PY_ERR_TIMEOUT = -2,    /* parsing took longer than timeout_us */
    PY_ERR_TREE_LIMIT = -3, /* a syntax error too large for tree-sitter 0.20.7 (an ERROR node of 65,536+ children) */
};

/* Parses and lowers src into m (whose arena, path, src and len the caller has set).
 * Returns 0, or a PY_ERR_* code when the parser itself failed.
 * Syntax errors are not failures: they are recorded in m->error_spans and lowered around. */
int py_lower(IrModule *m, uint64_t timeout_us, PyParseStats *stats);
/* Parse only (the benchmark floor): returns the node count, or -1. */
long py_parse_only(const char *src, size_t len);

#endif
