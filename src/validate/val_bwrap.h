/* The filesystem view of a validation run, built as a bubblewrap (bwrap) command line: the whole
 * filesystem read-only, the run's own folders writable, a private /tmp, /dev and /proc, home folders
 * and other secrets hidden (see val_bwrap.c and docs/validate.md). */
#ifndef GL_VAL_BWRAP_H
#define GL_VAL_BWRAP_H

#include "validate/val_sandbox.h"

/* The bwrap to use: $GRADLEAK_BWRAP when set (empty: none), else the first executable `bwrap` of
 * /usr/bin, /bin and the PATH. NULL when there is none. gl_free. */
char *val_bwrap_find(void);

/* `bwrap OPTIONS -- cmd...` for the options' paths (rw_paths, ro_paths, cwd, gpu) and envp's
 * interpreter locations. A NULL-terminated vector; every element and the vector are gl_malloc'ed
 * (val_bwrap_free). Built before fork: the child only execs it. */
char **val_bwrap_argv(const ValSandboxOpts *o, const char *bwrap, char *const *cmd);
void val_bwrap_free(char **v);

#endif
