/* `check` on Jupyter notebooks: reading one into what is linted, its findings' messages in cells,
 * and --fix/--diff written back into the .ipynb. */
#ifndef GL_CLI_NOTEBOOK_H
#define GL_CLI_NOTEBOOK_H

#include <stdio.h>
#include "cli/fixes.h"
#include "engine/engine.h"
#include "nb/nb.h"

/* *src[0..*len) is a .ipynb file's bytes (gl_malloc'd). On NB_OK they are replaced by the notebook's
 * blob (nb.h: nb_blob_encode; its code is what is linted). Otherwise note gets the one-line reason
 * and *src is left alone. */
NbStatus cli_nb_load(char **src, size_t *len, char *note, size_t notesz);

/* cli_fix_file for a notebook: *blob and *len are its blob (cli_nb_load), *res its findings. The fixes
 * go into the cells' sources (nb_write_back) and the file is rewritten; --diff prints one diff per
 * changed cell (`--- nb.ipynb:cell 4`). On a write, *blob and *res are replaced by the new
 * notebook's blob and its findings. */
void cli_fix_notebook(CliFix *cf, const char *path, char **blob, size_t *len, LintResult *res, const LintOptions *o,
                      FILE *diff_out);

#endif
