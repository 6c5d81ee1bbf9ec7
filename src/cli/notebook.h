/* `check` on Jupyter notebooks: --fix/--diff written back into the .ipynb (a run reads a notebook
 * into what is linted: engine/run.c). */
#ifndef GL_CLI_NOTEBOOK_H
#define GL_CLI_NOTEBOOK_H

#include <stdio.h>
#include "cli/fixes.h"
#include "engine/engine.h"
#include "engine/nb_lint.h"
#include "nb/nb.h"

/* cli_fix_file for a notebook: *blob and *len are its blob (run_nb_load), *res its findings. The fixes
 * go into the cells' sources (nb_write_back) and the file is rewritten; --diff prints one diff per
 * changed cell (`--- nb.ipynb:cell 4`). On a write, *blob and *res are replaced by the new
 * notebook's blob and its findings. */
void cli_fix_notebook(CliFix *cf, const char *path, char **blob, size_t *len, LintResult *res, const LintOptions *o,
                      FILE *diff_out);

#endif
