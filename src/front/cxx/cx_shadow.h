/* The shadow source of a C++ file: function definitions clang dropped or could not resolve, put
 * into class templates with a dependent base so that clang keeps their bodies (cx_shadow.c). */
#ifndef GL_CX_SHADOW_H
#define GL_CX_SHADOW_H

#include "base/array.h"
#include "base/base.h"
#include "base/strbuf.h"

/* A namespace-level function definition, as byte offsets of the file. */
typedef struct CxShadowFn {
    uint32_t start;        /* the declaration's first byte (return type) */
    uint32_t qual;         /* the qualifier "ns::Runner::" (== name when unqualified) */
    uint32_t cls, cls_end; /* the class name "Runner" (empty for a free function) */
    uint32_t name;         /* the function's name */
    uint32_t brace;        /* the body's '{' */
    uint32_t end;          /* after the body's '}' */
} CxShadowFn;

typedef Array(CxShadowFn) CxShadowFns;

/* Shadow bytes [sh, sh+len) are the file's [orig, orig+len). */
typedef struct CxSeg {
    uint32_t sh, orig, len;
} CxSeg;

typedef struct CxShadow {
    StrBuf text;
    Array(CxSeg) segs;
} CxShadow;

/* Appends the file's namespace-level function definitions to out; returns out->len. */
uint32_t cx_shadow_scan(const char *src, size_t len, CxShadowFns *out);
/* The shadow source of fns[0..n) (each class's functions in one class template; usings, e.g.
 * "using GlB::model_;\n", go into every one). */
void cx_shadow_build(CxShadow *sh, const char *src, size_t len, const CxShadowFn *fns, uint32_t n, const char *usings);
/* The file offset of shadow offset off (is_end: an end offset may be one past a segment). */
bool cx_shadow_map(const CxShadow *sh, uint32_t off, bool is_end, uint32_t *out);
void cx_shadow_free(CxShadow *sh);

#endif
