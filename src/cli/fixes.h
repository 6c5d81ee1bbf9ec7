/* `check --fix`, `--unsafe-fixes` and `--diff`: fixing linted files, writing them back or printing diffs. */
#ifndef GL_CLI_FIXES_H
#define GL_CLI_FIXES_H

#include <stdio.h>
#include "engine/engine.h"

typedef struct CliFix {
    bool fix;    /* --fix: write fixed files */
    bool unsafe; /* --unsafe-fixes: unsafe fixes count as applicable (and are applied by --fix/--diff) */
    bool diff;   /* --diff: print a unified diff per file that would change, write nothing */
    uint32_t fixed;   /* findings fixed so far (--fix) or that would be (--diff) */
    uint32_t changed; /* files written (--fix) or that would be (--diff) */
    uint32_t errors;  /* files whose fix failed (reverted, write error) */
} CliFix;

/* Whether the flags ask for fixing at all. */
bool cli_fix_active(const CliFix *cf);

/* Parses one check option belonging to fixes (--fix, --unsafe-fixes, --no-unsafe-fixes, --diff,
 * --fix-only is not offered); returns true when arg was one. */
bool cli_fix_flag(CliFix *cf, const char *arg);

/* Fixes one linted file: *src and *len are its bytes (gl_malloc'd) and *res its findings. With --fix
 * the file is rewritten in place (same permissions, via a temporary file and rename) and *src,
 * *len and *res are replaced by the fixed text and what is left in it; with --diff the diff goes
 * to diff_out and nothing changes. Problems are printed to stderr and counted in cf->errors. */
/* Replaces path's contents by buf[0..len) (a temporary file renamed over it, same permissions).
 * Returns 0, or -1 with errno. */
int cli_fix_write(const char *path, const char *buf, size_t len);

void cli_fix_file(CliFix *cf, const char *path, char **src, size_t *len, LintResult *res, const LintOptions *o,
                  FILE *diff_out);

#endif
