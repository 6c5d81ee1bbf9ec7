#!/bin/sh
# LSP suite, part 2: the message sequences of Neovim, VS Code (vscode-languageclient), Helix and
# Emacs eglot replayed with their quirks (tests/lsp/clients.py): void params absent, null or {},
# exit status 0 after shutdown and 1 without, didChangeConfiguration with null settings,
# $/cancelRequest, $/setTrace, window/workDoneProgress/cancel, unknown $/ messages.
# Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
if ! command -v python3 >/dev/null 2>&1; then
    echo "FAIL lsp-clients python3 is needed (./configure --install-deps)"
    exit 1
fi
exec python3 tests/lsp/clients.py "$GL"
