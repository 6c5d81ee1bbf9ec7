/* libclang, loaded at run time: one table of function pointers filled by dlopen/dlsym. Only the
 * files of src/front/cxx/ include this (clang-c/Index.h stays in this folder). */
#ifndef GL_CX_CLANG_H
#define GL_CX_CLANG_H

#include <clang-c/CXCompilationDatabase.h>
#include <clang-c/Index.h>
#include "base/arena.h"
#include "base/base.h"

typedef struct CxApi {
#define CX_FN(ret, name, params) ret(*name) params;
#include "front/cxx/cx_clang.def"
#undef CX_FN
} CxApi;

/* The loaded table, or NULL (with *why set) when libclang cannot be loaded. Loaded once. */
const CxApi *cx_api(const char **why);

/* The project headers tu includes, "<hash> <path>\n" each (cx_deps.c): every included file with an
 * absolute path outside the folders of skip[0..nskip). NULL when there are none. In arena. */
const char *cx_deps_list(CXTranslationUnit tu, Arena *arena, const char *const *skip, uint32_t nskip);

#endif
