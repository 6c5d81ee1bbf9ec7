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

/* What the environment says about C++ (the command line reads it and hands it down once, before
 * any thread starts, with cx_set_env; NULL fields: not set). README.md, "Environment variables". */
typedef struct CxEnv {
    const char *libtorch;   /* $LIBTORCH: a LibTorch tree to find the headers in */
    const char *cuda_home;  /* $CUDA_HOME */
    const char *headers;    /* $GRADLEAK_CXX_HEADERS: "stub" or "libtorch" forces the headers */
    const char *pch;        /* $GRADLEAK_PCH: "0" turns precompiled headers off */
    const char *pch_max_mb; /* $GRADLEAK_PCH_MAX_MB: the precompiled-header folder's cap */
    const char *libclang;   /* $GRADLEAK_LIBCLANG: the libclang to load first */
    const char *tmpdir;     /* $TMPDIR */
} CxEnv;

/* Copies the pointers of env (which must outlive every lint); NULL clears them. */
void cx_set_env(const CxEnv *env);
/* The environment cx_set_env handed down (every field NULL before). */
const CxEnv *cx_env(void);

typedef struct CxConfig {
    const char *compdb_dir; /* -p DIR: folder of compile_commands.json; NULL = search upward */
    const char *pch_dir;    /* where precompiled headers are kept (the cache's pch/); NULL = a private
                             * folder under $TMPDIR. GRADLEAK_PCH=0 turns them off. */
} CxConfig;

typedef struct CxResult {
    CxMode mode;
    bool from_compdb;       /* flags came from a compile_commands.json */
    uint32_t n_errors;      /* clang errors (parse errors, unresolved names, headers not found) */
    const char *first_error;/* "3:5: expected ';'" or "hdr.h:3:5: ..." (the first fatal one first), or NULL */
    bool truncated;         /* nesting deeper than CX_MAX_DEPTH was skipped */
    bool pch;               /* parsed with a precompiled header of the LibTorch (or stub) headers */
    uint64_t parse_ns, lower_ns;
    const char *partial;    /* the functions holding clang errors, "train (3), Runner::warm (1)", or NULL */
    uint32_t n_shadow;      /* functions lowered from the shadow source (types partly unknown) */
    uint32_t n_shadow_fns;  /* definitions that went to the shadow source */
    const char *deps;       /* the project headers it includes (not the system's, LibTorch's or the
                             * stub): "<hash> <absolute path>\n" each, or NULL */
} CxResult;

/* Is libclang loadable? On false, *why says what to install (a static string). Thread-safe. */
bool cx_available(const char **why);
/* Parses src (the contents of m->path; unsaved buffers are fine) and lowers it into m.
 * Returns 0, or a negative error code when libclang is missing (-1) or failed to parse (-2).
 * Errors in the code itself are not failures: see CxResult.n_errors. */
int cx_lower(IrModule *m, const CxConfig *cfg, CxResult *res);
/* A hash of everything besides the file's bytes that decides its results: the compile flags
 * (compile_commands.json or the default), the header mode (stub or real LibTorch), the real
 * headers' identity (folder and torch/torch.h: device, inode, size, mtime) and libclang's version.
 * 0 when libclang is missing. Part of the cache key of a C++ file. */
uint64_t cx_config_key(const char *path, const CxConfig *cfg);
/* Do the headers listed in a CxResult.deps still have the contents they had? */
bool cx_deps_fresh(const char *deps);
/* Every comment of a C++ source (// and block comments), lexically: no libclang needed. */
void cx_collect_comments(IrModule *m);
const char *cx_mode_name(CxMode mode);

#endif
