/* The Python front end: source bytes -> tree-sitter tree -> IR. The only user of tree-sitter. */
#ifndef GL_PY_H
#define GL_PY_H

#include "ir/ir.h"

typedef struct PyParseStats {
    uint32_t n_nodes; /* nodes the comment walk visited (it skips subtrees without '#' or errors) */
    uint64_t parse_ns, lower_ns;
    uint32_t chunks_lowered, chunks_reused; /* top-level statements lowered, and copied from the last lint (py_lower_reuse) */
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
/* A syntax tree kept between lints of one document (the LSP), so the next parse is incremental:
 * tree-sitter reuses every subtree that the recorded edits did not touch. Opaque outside this folder. */
typedef struct PyTree PyTree;

/* Records one edit of the document the tree was parsed from: bytes [start, old_end) of old_src
 * (the text before this edit) were replaced by text[0..text_len). Call once per edit, in order;
 * offsets past the end are clamped. */
void py_tree_edit(PyTree *t, const char *old_src, size_t old_len, uint32_t start, uint32_t old_end,
                  const char *text, size_t text_len);
/* py_lower that parses against *tree (NULL: a fresh parse) and leaves the new tree in *tree (the
 * caller owns it: py_tree_free). On failure *tree is freed and set to NULL.
 * The kept tree also keeps the lowered top-level statements: one whose text, column and imports
 * are unchanged since the last call is copied, not lowered again (py_chunk.h). m's IR is the same
 * as py_lower's, field for field; it may point into memory the tree keeps until the next call. */
int py_lower_reuse(IrModule *m, PyTree **tree, uint64_t timeout_us, PyParseStats *stats);
/* An empty kept tree (py_lower_reuse makes one with reuse on when *tree is NULL); reuse off keeps
 * only the syntax tree (tests compare the two). */
PyTree *py_tree_new(bool reuse);
/* The whole text was replaced: the next parse starts afresh (the kept statements stay, keyed by text). */
void py_tree_reset(PyTree *t);
void py_tree_free(PyTree *t);

/* Parse only (the benchmark floor): returns the node count, or -1. */
long py_parse_only(const char *src, size_t len);

#endif
