/* Finding the files to lint. */
#ifndef GL_WALK_H
#define GL_WALK_H

#include "base/array.h"

typedef struct WalkFile {
    char *path;
    bool explicit_path; /* named on the command line (linted whatever its extension) */
} WalkFile;

typedef Array(WalkFile) WalkList;
typedef struct WalkIgnore {
    Array(char *) patterns;
    /* Optional: answers true for a path to leave out (the configuration's exclude). Called for
     * every directory and lintable file found by the walk, and for paths named on the command line
     * (explicit_path: the caller decides, e.g. only with --force-exclude). */
    bool (*skip)(void *ctx, const char *path, bool is_dir, bool explicit_path);
    void *skip_ctx;
} WalkIgnore;

typedef void (*WalkErrFn)(void *ctx, const char *path, const char *why);

void walk_ignore_load(WalkIgnore *ig, const char *root);
void walk_ignore_free(WalkIgnore *ig);
int walk_paths(const char *const *paths, int n, const WalkIgnore *ig, WalkList *out, WalkErrFn on_err, void *ctx);
void walk_sort_unique(WalkList *l);
/* C++: the project headers the C++ files of l include (`#include "x.h"`, found beside the includer
 * or in an include/ folder up to four levels above it, followed transitively) are appended, once:
 * a function defined in a header is analysed in the header, not in each file that includes it. */
void walk_add_cxx_headers(WalkList *l);
void walk_list_free(WalkList *l);

#endif
