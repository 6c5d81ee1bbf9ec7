/* Reuse of lowered top-level statements between lints of one document (the LSP), private to src/front/py.
 *
 * A top-level statement's IR is a function of its syntax subtree and of the module-wide lowering
 * state it reads: the import table (names it looks up), the module function's variable table (slots
 * of the names it uses) and the counters it continues (module ops, args and loops, functions,
 * classes, if/try regions). So while a statement is lowered, what it reads of that state is logged
 * (PyChunkLog); its output is kept, relative to those counters, as a PyChunk. On the next lint a
 * statement with the same text, column and symbol, without syntax errors, whose logged imports
 * resolve the same way again, is not lowered: its PyChunk is copied into the module with every
 * index moved by the counters' new values and every span by the statement's new position. The
 * result is the IR a fresh lowering builds, field for field (tests/unit/test_pyreuse.c checks it
 * after thousands of random edits). */
#ifndef GL_PY_CHUNK_H
#define GL_PY_CHUNK_H

#include "ir/ir.h"

/* The import table the lowering resolves names through: local name -> qualified name. */
typedef struct PyImports {
    StrMap map;                 /* local -> index into quals (the last import of a name wins) */
    Array(const char *) quals;
    Array(const char *) locals; /* parallel to quals: the local name ("*pkg.mod" for `from pkg.mod import *`) */
} PyImports;

const char *py_imports_get(const PyImports *im, const char *name, size_t len); /* NULL when not imported */
void py_imports_put(PyImports *im, const char *local, const char *qual);
void py_imports_free(PyImports *im);

typedef Array(uint32_t) PyU32Array;

typedef struct PyImportDep {
    const char *name;
    const char *qual; /* what it resolved to when the statement was lowered; NULL: not imported */
} PyImportDep;

typedef struct PyImportRec {
    const char *local, *qual;
} PyImportRec;

/* A module variable a statement used, in the order it first used them (the order decides the slots
 * of the ones it creates). */
typedef struct PyChunkVar {
    const char *name; /* a plain variable's name; for an attribute pseudo-variable, the attribute */
    uint32_t base;    /* pseudo-variable: its base, as an index into the same list; IR_NONE: plain */
} PyChunkVar;

/* What one top-level statement read from and did to the module-wide state while it was lowered.
 * Everything it allocates goes to *arena, the arena the statement's own lowering uses. */
typedef struct PyChunkLog {
    Arena *arena;
    bool ok;                        /* false once something makes the statement unsafe to reuse */
    StrMap dep_index;               /* name -> index into deps */
    Array(PyImportDep) deps;        /* imports it looked up that it did not make itself */
    StrMap own;                     /* names it imported itself (later lookups of them are its own) */
    Array(PyImportRec) imports;     /* imports it made, in order */
    Array(PyChunkVar) vars;
    PyU32Array *var_local;     /* module slot -> index into vars + 1 (0: not used yet); shared, reset after */
    Array(uint32_t) var_slots;      /* the module slot of each of vars (to reset var_local) */
} PyChunkLog;

void py_chunk_log_init(PyChunkLog *log, Arena *arena, PyU32Array *var_local);
void py_chunk_log_free(PyChunkLog *log);
/* A lookup of name in the import table gave qual: logs it, and returns the string to use (a copy
 * in the statement's arena, since the import that made qual may be lowered again without it). */
const char *py_chunk_log_import(PyChunkLog *log, const char *name, size_t len, const char *qual);
void py_chunk_log_import_made(PyChunkLog *log, const char *local, const char *qual);
/* The statement used module variable slot v (just looked up or created in the module function top). */
void py_chunk_log_var(PyChunkLog *log, const IrFunc *top, uint32_t v);

/* The module-wide counters, taken before a statement is lowered. */
typedef struct PyChunkMark {
    uint32_t ops, args, loops, funcs, classes, region, comments, errors, n_nodes;
} PyChunkMark;

void py_chunk_mark(const IrModule *m, uint32_t region, PyChunkMark *mk);

/* Where a statement is: its text and position. */
typedef struct PyChunkAt {
    uint32_t symbol;      /* its syntax node's symbol */
    const char *text;     /* its bytes */
    uint32_t len;
    uint32_t start, row, col;
} PyChunkAt;

typedef struct PyChunk PyChunk;

/* The statements of one document's last lint. Not thread-safe; one per document. */
typedef struct PyChunkCache {
    Array(PyChunk *) chunks;
    Array(uint32_t) table;   /* open addressing on the text hash: index into chunks + 1, 0 empty */
    uint32_t gen;            /* bumped by every lint: a chunk no lint used last time is dropped */
    PyU32Array var_local;    /* scratch for PyChunkLog */
    uint32_t hits, misses;   /* of the last lint (for tests and stats) */
} PyChunkCache;

void py_chunk_cache_init(PyChunkCache *cc);
void py_chunk_cache_free(PyChunkCache *cc);
void py_chunk_cache_begin(PyChunkCache *cc); /* a lint starts */
void py_chunk_cache_end(PyChunkCache *cc);   /* the lint ended: drops the chunks it did not use */

/* A kept statement for at whose logged imports resolve the same through im, or NULL. */
const PyChunk *py_chunk_find(PyChunkCache *cc, const PyChunkAt *at, const PyImports *im);
/* Copies c into m as the next top-level statement, at its new position at: ops, functions, classes,
 * loops, regions (*region is advanced), imports (into im), and, when comments is set, the comments
 * and node count the comment walk found in it. Allocations that live as long as m go to m->arena. */
void py_chunk_splice(const PyChunk *c, const PyChunkAt *at, IrModule *m, PyImports *im, uint32_t *region,
                     bool comments);
/* Keeps the statement just lowered at `at` (module state before it: mk; the log of its lowering,
 * whose arena passes to the cache; comments: whether the comment walk visited it). */
void py_chunk_save(PyChunkCache *cc, const PyChunkAt *at, const PyChunkMark *mk, PyChunkLog *log, Arena *arena,
                   const IrModule *m, uint32_t region, bool comments);

#endif
