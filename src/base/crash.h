/* Internal errors: what each thread is working on, and the fatal-signal handler that reports it.
 *
 * A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: a failed GL_ASSERT/ALWAYS/NEVER in debug builds
 * aborts) never ends gradleak by a signal: the handler writes "gradleak: internal error: SIGSEGV while
 * checking FILE (rule GL101)" and "this is a bug in gradleak VERSION" with async-signal-safe writes,
 * then exits 2. When the command asked for it (`check`), a crash inside a file re-executes the same
 * command with that file added to GRADLEAK_SKIP_FILES, so every other file is still linted and
 * reported; the run still exits 2. */
#ifndef GL_CRASH_H
#define GL_CRASH_H

#include "base/base.h"

/* The variable that carries the files to skip into the re-execution. */
#define GL_CRASH_SKIP_VAR "GRADLEAK_SKIP_FILES"

/* Installs the handlers (once, in main). argv is kept for the re-execution; retry_files enables it.
 * skip_list is $GRADLEAK_SKIP_FILES (the files an earlier execution crashed on, one per line) and
 * test_kind $GRADLEAK_TEST_CRASH, as the command line read them (NULL: unset). */
void gl_crash_install(char **argv, bool retry_files, const char *skip_list, const char *test_kind);

/* The calling thread's context, shown by the handler. The strings must outlive the context (paths of
 * the job list, string literals, rule codes). gl_ctx_file(NULL) clears everything. */
void gl_ctx_file(const char *path);
void gl_ctx_stage(const char *stage); /* "parse", "dataflow", "rules", "suppressions"... */
void gl_ctx_rule(const char *code);   /* NULL when no rule runs */

/* Is path one that crashed an earlier execution of this run (GRADLEAK_SKIP_FILES)? */
bool gl_crash_skipped(const char *path);

/* Test hook, inert unless GRADLEAK_TEST_CRASH is set to segv or abort: then a file containing the
 * bytes "gradleak-test-crash" crashes that way in the first rule that runs on it (tests/badinput). */
void gl_crash_test_hook(const char *src, size_t len);

#endif
