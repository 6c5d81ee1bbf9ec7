#!/bin/sh
# LSP suite, part 4: across files (tests/lsp/project.py). A document whose helper functions sit in
# other files of the project gets the diagnostics `gradleak check FILE` gives: the server lints it
# as one project run (src/engine/run.h), reading the helpers from disk through the cache.
# Prints `ok <id>` / `FAIL <id> <why>`. Env: GRADLEAK (the binary; tests/run sets it).
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
if ! command -v python3 >/dev/null 2>&1; then
    echo "FAIL lsp-proj python3 is needed (./configure --install-deps)"
    exit 1
fi
exec timeout 300 python3 tests/lsp/project.py "$GL"
