/* Linting files together: function summaries across files, where an import names them.
 *
 * Every file is linted once on its own; that lint also exports the summaries of its top-level
 * functions and lists the imported names it calls. The project then resolves each such name to a
 * file of the set, as Python would find it ("utils.f" -> a utils.py whose directory is closest to
 * the caller; ".utils.f" -> utils.py next to the caller), and the files whose calls reach another
 * file's functions are linted again, with those summaries. A summary can change when its file is
 * linted again (a helper calling a helper), so this repeats, at most PROJECT_MAX_ROUNDS times. */
#ifndef GL_PROJECT_H
#define GL_PROJECT_H

#include "engine/engine.h"

#define PROJECT_MAX_ROUNDS 3
#define PROJECT_MAX_FOUND 256   /* helper files read from disk per run, at most */
#define PROJECT_SEARCH_LEVELS 8 /* folders searched upward for an absolute import's module */

typedef struct Project Project;

/* File i's path and latest result, for the project to read the summaries it exports (the caller
 * keeps results where it likes: the CLI, in its spill). 0 with *path (the caller's string, which
 * lives as long as the project) and, unless out is NULL, *out filled (the project frees it); -1
 * when the file has no result. */
typedef int (*ProjectLoad)(void *ctx, uint32_t i, const char **path, LintResult *out);

/* A project of n files (indices 0..n-1). Its memory stays small per file: the names each file
 * calls, and the summaries of only those functions that some file calls by name (read through
 * load when the project first needs them). */
Project *project_new(uint32_t n, ProjectLoad load, void *load_ctx);
void project_free(Project *p);
/* One more file; returns its index (load must answer for it too). */
uint32_t project_add(Project *p);
/* The files on disk that define imported names the project's files call but no file of the project
 * defines (found as Python would: see project__find_module), each once, in a stable order. The
 * caller lints them for their summaries (not their findings), adds them with project_add and
 * project_set, and may ask again (helpers of helpers). Returns how many; *paths lives as long as p. */
uint32_t project_missing(Project *p, const char ***paths);
/* Records what file i's latest lint called (the first time) and exported. The project copies what
 * it keeps: path and r can be freed after the call. */
void project_set(Project *p, uint32_t i, const char *path, const LintResult *r);
/* The files to lint again, with project_attach(), written to which[] (room for n); returns how many.
 * 0 when nothing would change (or after PROJECT_MAX_ROUNDS rounds). */
uint32_t project_next_round(Project *p, uint32_t *which);
/* The imported names file i calls, as its first lint recorded them (*n of them). */
const ImportedCall *project_calls(const Project *p, uint32_t i, uint32_t *n);
/* Which of file i's exported functions (bit k: the k-th some file calls) another file's training loop
 * calls once per step (C++): part of the cache key of its re-lint. */
uint64_t project_per_step_mask(const Project *p, uint32_t i);
/* Which of file i's exports another file calls with grad off (bit k: its k-th kept export): what
 * its lint was given through LintOptions.ext_grad_off, for the cache key. */
uint64_t project_grad_off_mask(const Project *p, uint32_t i);
uint64_t project_after_train_mask(const Project *p, uint32_t i); /* its exports others call after training */
/* Attaches the other files' summaries to o, the options file i is linted with again. */
void project_attach(Project *p, uint32_t i, LintOptions *o);

#endif
