/* The per-file driver: source bytes in, diagnostics out (parse, lower, analyse, run rules, noqa). */
#ifndef GL_ENGINE_H
#define GL_ENGINE_H

#include "base/arena.h"
#include "base/diag.h"
#include "engine/rules.h"
#include "ir/ir.h"

typedef enum SourceLang { LANG_PYTHON, LANG_CXX } SourceLang;

typedef struct LintOptions {
    RuleSet rules;       /* enabled rules */
    bool trace;          /* attach dataflow traces to findings */
    uint32_t max_bytes;  /* files larger than this are skipped with a note (0 = default 8 MiB) */
    const char *cxx_compdb; /* C++: folder of compile_commands.json (-p); NULL = search upward */
} LintOptions;

/* How a C++ file was parsed (LintResult.cxx). */
typedef enum CxxParse { CXX_NONE, CXX_LIBTORCH, CXX_STUB, CXX_UNAVAILABLE } CxxParse;

/* Everything one file's lint produced. Owns its memory: free with lint_result_free. */
typedef struct LintResult {
    Arena arena;          /* diagnostics, messages, fixes live here */
    DiagList diags;       /* sorted by position, suppressions applied */
    const char *notes;    /* tool notes about this file ("syntax error at 3:5: linted around it"), or NULL */
    bool syntax_error;
    bool skipped;         /* too large / binary / no libclang */
    uint8_t cxx;          /* CxxParse: for C++ files, which headers the file was parsed against */
} LintResult;

void lint_options_default(LintOptions *o); /* every rule on */
/* Lints src[0..len) as the file at path. Returns 0, or a negative error code on a tool failure
 * (never for broken user code: that becomes notes/diagnostics). */
int engine_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                LintResult *out);
void lint_result_free(LintResult *r);
/* The language of a path by its extension: .cpp .cc .cxx .cu (and headers .h .hpp .cuh) are C++. */
SourceLang engine_lang_of(const char *path);
/* Is C++ linting available (libclang loadable)? On false, *why says what to install. */
bool engine_cxx_available(const char **why);
/* The comments of a file, for fixture expectations: into m (whose src/len/arena are set). */
void engine_collect_comments(IrModule *m, SourceLang lang);
/* Parses and lowers one file into m (for `debug ir`). Returns 0, or negative when the front end
 * failed or (C++) libclang is missing. o may be NULL. */
int engine_lower(IrModule *m, SourceLang lang, const LintOptions *o);

#endif
