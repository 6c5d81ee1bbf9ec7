#!/bin/sh
# LSP notebook documents: tests/lsp/notebook.js (VS Code Jupyter's notebookDocument/* sequence) with
# npm's vscode-jsonrpc, found as tests/lsp/run.sh finds it (VSCODE_JSONRPC_DIR, else build/node,
# which run.sh or ./configure --install-deps fills). Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
mods=${VSCODE_JSONRPC_DIR:-build/node/node_modules}
if ! command -v node >/dev/null 2>&1; then
    echo "skip lsp-notebook (node is not installed)"
    exit 0
fi
if [ ! -f "$mods/vscode-jsonrpc/package.json" ]; then
    echo "skip lsp-notebook (vscode-jsonrpc not in $mods: run tests/lsp/run.sh or ./configure --install-deps first)"
    exit 0
fi
out=$(NODE_PATH=$(cd "$mods" && pwd) timeout 120 node tests/lsp/notebook.js "$GL" 2>&1 </dev/null)
rc=$?
printf '%s\n' "$out"
if [ "$rc" != 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL '; then echo "FAIL lsp-notebook-run node exited $rc"; exit 1; fi
[ "$rc" = 0 ]
