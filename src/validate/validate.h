/* `gradleak validate`: lint, then run the program with every growth finding's loop instrumented,
 * leaky and fixed, and report whether the predicted growth is real (docs: README.md "Validating
 * findings", DESIGN.md §5). The only part of gradleak that runs user code. */
#ifndef GL_VALIDATE_H
#define GL_VALIDATE_H

#include "base/base.h"

/* Measure these rules' findings (codes, e.g. "GL101,GL102") by their peak instead of their rule's
 * measure: a test hook (GRADLEAK_VALIDATE_PEAK, read by the command line). NULL: none. */
void val_set_peak_codes(const char *codes);

/* The usage text of `gradleak validate --help`. */
extern const char *const val_usage_text;

/* Runs `gradleak validate ARGS` (argv without the command name). Returns the exit status:
 * 0 nothing to fail on, 1 findings per --fail-on, 2 usage or internal error. */
int val_main(int argc, char **argv);

#endif
