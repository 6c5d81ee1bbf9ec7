/* `gradleak debug SUBCOMMAND`: the developers' tools (ir, summaries, verify, bench, cache). */
#ifndef GL_CLI_DEBUG_H
#define GL_CLI_DEBUG_H

/* Runs `debug argv[0] argv[1..]`. Returns the exit status, or -1 for an unknown subcommand. */
int cli_debug(int argc, char **argv);

#endif
