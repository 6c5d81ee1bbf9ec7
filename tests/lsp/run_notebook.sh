#!/bin/sh
# LSP notebook documents: tests/lsp/notebook.js (VS Code Jupyter's notebookDocument/* sequence) with
# npm's vscode-jsonrpc, found as tests/lsp/run.sh finds it (VSCODE_JSONRPC_DIR, else build/node,
# installed there when missing, as run.sh does). Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
mods=${VSCODE_JSONRPC_DIR:-build/node/node_modules}
if [ ! -f "$mods/vscode-jsonrpc/package.json" ] && [ -z "${VSCODE_JSONRPC_DIR:-}" ] && command -v npm >/dev/null 2>&1; then
    mkdir -p build/node # as tests/lsp/run.sh installs it
    timeout 300 npm install --prefix build/node --no-audit --no-fund --silent vscode-jsonrpc@8.2.1 >/dev/null 2>&1 || true
fi
if ! command -v node >/dev/null 2>&1; then
    echo "skip lsp-notebook (node is not installed)"
    exit 0
fi
if [ ! -f "$mods/vscode-jsonrpc/package.json" ]; then
    echo "skip lsp-notebook (vscode-jsonrpc not in $mods and npm could not install it)"
    exit 0
fi
out=$(NODE_PATH=$(cd "$mods" && pwd) timeout 120 node tests/lsp/notebook.js "$GL" 2>&1 </dev/null)
rc=$?
printf '%s\n' "$out"
if [ "$rc" != 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL '; then echo "FAIL lsp-notebook-run node exited $rc"; exit 1; fi
[ "$rc" = 0 ]
