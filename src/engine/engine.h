/* The per-file driver: source bytes in, diagnostics out (parse, lower, analyse, run rules, noqa). */
#ifndef GL_ENGINE_H
#define GL_ENGINE_H

#include "base/arena.h"
#include "base/diag.h"
#include "base/rule_catalog.h"
#include "ir/ir.h"
#include "ir/dataflow.h"

#define ENGINE_PARSE_TIMEOUT_MS 10000u

typedef enum SourceLang { LANG_PYTHON, LANG_CXX } SourceLang;

typedef struct LintOptions {
    RuleSet rules;       /* enabled rules */
    bool trace;          /* attach dataflow traces to findings */
    uint32_t max_bytes;  /* files larger than this are skipped with a note (0 = default 8 MiB) */
    const char *display_path; /* the path as the user gave it (crash reports, the crash retry's skip
                               * list); NULL: the path engine_lint is given */
    const char *cxx_compdb; /* C++: folder of compile_commands.json (-p); NULL = search upward */
    const char *cxx_pch_dir; /* C++: where precompiled headers are kept; NULL = a private temporary folder */
    uint32_t parse_timeout_ms; /* a parse that takes longer is abandoned with a note (0 = ENGINE_PARSE_TIMEOUT_MS) */
    ExternLookup ext;    /* optional: summaries of functions in the other files linted together */
    void *ext_ctx;
    ExternPerStep ext_per_step; /* optional (C++): which of this file's functions others call each step */
    ExternPerStep ext_grad_off; /* optional: which of this file's functions another file calls with grad off */
    ExternPerStep ext_after_train; /* optional: which of them another file calls after a training step */
} LintOptions;

/* How a C++ file was parsed (LintResult.cxx). */
typedef enum CxxParse { CXX_NONE, CXX_LIBTORCH, CXX_STUB, CXX_UNAVAILABLE } CxxParse;

/* An imported name the file calls ("utils.f"), with what its call sites pass: a summary can change
 * their results only in some cases (a sanitizer matters where a graph is passed in). */
typedef struct ImportedCall {
    const char *qual;
    bool graph_arg;  /* some call passes a value with a graph (live or post-backward) */
    bool module_arg; /* some call passes a module */
    bool per_step;   /* some call runs once per training step (in a step loop, or in a function
                      * that runs every step): the callee's file marks it so (ExternPerStep) */
    bool import_only; /* imported, never called (`from models import Seq`, the model loaded by a
                       * helper): only says which modules the file names (duck-typed methods) */
    bool grad_off;   /* some call runs with grad off (`with torch.no_grad(): evaluate(net, val)`, or in a
                      * function called so): the callee's file marks it so (LintOptions.ext_grad_off) */
    bool after_train; /* some call, with grad on, follows a training call in the iteration of a loop
                       * (`trainer.train(X, Y); trainer.test(Xt, Yt)` per epoch): the callee's file
                       * marks it so (LintOptions.ext_after_train) */
} ImportedCall;

/* A top-level function's summary, for the files that import it (see engine/project.h). */
typedef struct ExportedFunc {
    const char *name;
    ExternSummary summary;
} ExportedFunc;

/* Everything one file's lint produced. Owns its memory: free with lint_result_free. */
typedef struct LintResult {
    Arena arena;          /* diagnostics, messages, fixes live here */
    DiagList diags;       /* sorted by position, suppressions applied */
    const char *notes;    /* tool notes about this file ("syntax error at 3:5: linted around it"), or NULL */
    Span *comments;       /* every comment of the file, in source order (for editors adding a noqa) */
    uint32_t n_comments;
    bool syntax_error;
    bool skipped;         /* too large / binary / no libclang */
    uint8_t cxx;          /* CxxParse: for C++ files, which headers the file was parsed against */
    uint32_t n_syntax_errors; /* ERROR/MISSING regions (fix_file reverts a fix that adds one) */
    const char *deps;     /* C++: the project headers the file includes, "<hash> <path>\n" each, or NULL:
                           * a cached result stands only while engine_deps_fresh(deps) */
    ExportedFunc *exports; /* summaries of the file's top-level functions */
    uint32_t n_exports;
    ImportedCall *calls;  /* the imported callables the file calls, each name once */
    uint32_t n_calls;
    bool step_costly;     /* it calls torch.cuda.empty_cache() or gc.collect(): another file's step
                           * loop calling its functions makes findings (GL301/GL302) */
} LintResult;

void lint_options_default(LintOptions *o); /* every rule on */
/* Lints src[0..len) as the file at path. Returns 0, or a negative error code on a tool failure
 * (never for broken user code: that becomes notes/diagnostics). */
int engine_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                LintResult *out);
void lint_result_free(LintResult *r);
/* Does the file call an imported name (not only import one)? Its runs depend on other files then. */
bool lint_result_calls(const LintResult *r);
/* Print, for each C++ file, its parse and lowering times on stderr (GRADLEAK_DEBUG_CXX; set once
 * before any thread starts). */
void engine_set_cxx_timing(bool on);
/* The language of a path by its extension: .cpp .cc .cxx .cu (and headers .h .hpp .cuh) are C++. */
SourceLang engine_lang_of(const char *path);
/* Is C++ linting available (libclang loadable)? On false, *why says what to install. */
bool engine_cxx_available(const char **why);
/* What decides a C++ file's results besides its bytes and the settings (compile flags, header
 * mode, the LibTorch headers' identity, libclang's version), hashed: part of its cache key. */
uint64_t engine_cxx_key(const char *path, const LintOptions *o);
/* Are the headers of LintResult.deps unchanged (same contents)? true for NULL. */
bool engine_deps_fresh(const char *deps);
/* The comments of a file, for fixture expectations: into m (whose src/len/arena are set). */
void engine_collect_comments(IrModule *m, SourceLang lang);
/* Parses and lowers one file into m (for `debug ir`). Returns 0, or negative when the front end
 * failed or (C++) libclang is missing. o may be NULL. */
int engine_lower(IrModule *m, SourceLang lang, const LintOptions *o);

/* One document linted again after each edit (the LSP): it keeps the syntax tree, so a re-lint
 * parses incrementally. Not thread-safe; one per document. */
typedef struct LintDoc LintDoc;
LintDoc *lint_doc_new(void);
void lint_doc_free(LintDoc *d);
/* Bytes [start, old_end) of old_src (the text before this edit) become text[0..text_len). Call once
 * per edit, in order, between lints. */
void lint_doc_edit(LintDoc *d, const char *old_src, size_t old_len, uint32_t start, uint32_t old_end,
                   const char *text, size_t text_len);
void lint_doc_reset(LintDoc *d); /* the whole text was replaced: the next lint parses from scratch */
/* engine_lint for the document's current text src[0..len) (the text the recorded edits lead to). */
int engine_lint_doc(LintDoc *d, const char *path, const char *src, size_t len, SourceLang lang,
                    const LintOptions *o, LintResult *out);

#endif
