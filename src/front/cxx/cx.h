/* The C++ (LibTorch) front end: source bytes -> libclang AST -> IR. The only user of libclang,
 * which is loaded at run time (dlopen), so a machine without it still lints Python. */
#ifndef GL_CX_H
#define GL_CX_H

#include "ir/ir.h"

/* How the file's headers were found: the analysis is the same, the precision is not. */
typedef enum CxMode {
    CX_MODE_LIBTORCH,  /* real LibTorch headers (from the compile command, $LIBTORCH or the system) */
    CX_MODE_STUB,      /* LibTorch headers not found: grammars/libtorch/torch_stub.h stands in */
} CxMode;

typedef struct CxConfig {
    const char *compdb_dir; /* -p DIR: folder of compile_commands.json; NULL = search upward */
} CxConfig;

typedef struct CxResult {
    CxMode mode;
    bool from_compdb;       /* flags came from a compile_commands.json */
    uint32_t n_errors;      /* clang errors (parse errors, unresolved names, headers not found) */
    const char *first_error;/* "3:5: expected ';'" or "hdr.h:3:5: ..." (the first fatal one first), or NULL */
    bool truncated;         /* nesting deeper than CX_MAX_DEPTH was skipped */
    uint64_t parse_ns, lower_ns;
} CxResult;

/* Is libclang loadable? On false, *why says what to install (a static string). Thread-safe. */
bool cx_available(const char **why);
/* Parses src (the contents of m->path; unsaved buffers are fine) and lowers it into m.
 * Returns 0, or a negative error code when libclang is missing (-1) or failed to parse (-2).
 * Errors in the code itself are not failures: see CxResult.n_errors. */
int cx_lower(IrModule *m, const CxConfig *cfg, CxResult *res);
/* Every comment of a C++ source (// and block comments), lexically: no libclang needed. */
void cx_collect_comments(IrModule *m);
const char *cx_mode_name(CxMode mode);

#endif
