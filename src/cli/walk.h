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
} WalkIgnore;

typedef void (*WalkErrFn)(void *ctx, const char *path, const char *why);

void walk_ignore_load(WalkIgnore *ig, const char *root);
void walk_ignore_free(WalkIgnore *ig);
int walk_paths(const char *const *paths, int n, const WalkIgnore *ig, WalkList *out, WalkErrFn on_err, void *ctx);
void walk_sort_unique(WalkList *l);
void walk_list_free(WalkList *l);

#endif
