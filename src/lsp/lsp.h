/* `gradleak lsp`: a Language Server Protocol server on stdio (diagnostics, quick fixes, hover). */
#ifndef GL_LSP_H
#define GL_LSP_H

/* Serves LSP messages from in_fd, answering on out_fd, until `exit` or the end of input. Logs to
 * stderr. Returns the process exit code the spec asks for: 0 when `shutdown` came before `exit`
 * (or the end of input), 1 otherwise. */
int lsp_serve(int in_fd, int out_fd);

/* The command line: `gradleak lsp [--help]`. Returns the exit code. */
int lsp_main(int argc, char **argv);

#endif
