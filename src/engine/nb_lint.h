/* Linting notebooks: the notebook text (src/nb/) meets the lint's results. The messages of a lint
 * of a notebook's joined code name cells, and a cell's displayed last expression is not a
 * discarded move. */
#ifndef GL_ENGINE_NB_LINT_H
#define GL_ENGINE_NB_LINT_H

#include "engine/engine.h"
#include "nb/nb.h"

/* The same for every message, hint, note, trace and fix title of a lint of the joined code
 * (rewritten into the result's arena). */
void nb_lint_messages(LintResult *res, const NbCell *cells, uint32_t n);
/* IPython displays the value of a cell's last expression: a `x.cuda()` that ends a cell is shown,
 * not discarded, so GL201 findings there are dropped (ruff's B018 makes the same exception). For a
 * lint of the joined code (nb_lint_displayed) and, as the fix engine's lint (FixLintFn), of
 * nb_fix_source's text (nb_fix_lint: cells end at the boundary lines). */
void nb_lint_displayed(LintResult *res, const char *code, size_t len, const NbCell *cells, uint32_t n);
int nb_fix_lint(const char *path, const char *src, size_t len, SourceLang lang, const LintOptions *o,
                LintResult *out);

#endif
