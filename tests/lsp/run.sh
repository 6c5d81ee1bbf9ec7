#!/bin/sh
# LSP suite: `gradleak lsp` driven by real clients. Neovim 0.7 headless (tests/lsp/nvim_client.lua:
# diagnostic, quick fix applied, cleared, clean exit) and node with npm's vscode-jsonrpc
# (tests/lsp/client.js: the full message set, incremental edits, UTF-16/UTF-8 columns, pull
# diagnostics, malformed input). Prints `ok <id>` / `FAIL <id> <why>`.
# Env: GRADLEAK (the binary; tests/run sets it), VSCODE_JSONRPC_DIR (a node_modules folder holding
# vscode-jsonrpc, instead of build/node, where ./configure --install-deps --with-tests or this script installs it).
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
NODE_DIR=build/node
PKG=vscode-jsonrpc@8.2.1
fails=0
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }

if [ ! -x "$GL" ]; then
    fail lsp-binary "missing $GL (build it with ninja)"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-lsp.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# --help is true and the command exists
if "$GL" lsp --help | grep -q 'Usage: gradleak lsp'; then echo "ok lsp-0.1 lsp --help"; else fail lsp-0.1 "no usage from lsp --help"; fi
"$GL" lsp --bogus </dev/null >/dev/null 2>&1
rc=$?
[ "$rc" = 2 ] && echo "ok lsp-0.2 unknown option: exit 2" || fail lsp-0.2 "exit $rc"

# ---- Neovim ----
if command -v nvim >/dev/null 2>&1; then
    mkdir -p "$tmp/nvim"
    printf 'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        s = "é😀"; x.cuda()\n' >"$tmp/nvim/train.py"
    root=$PWD
    (cd "$tmp/nvim" && GRADLEAK=$GL GL_FILE=train.py HOME=$tmp/nvim XDG_STATE_HOME=$tmp/nvim XDG_DATA_HOME=$tmp/nvim \
        timeout 60 nvim --headless --clean -n -c "luafile $root/tests/lsp/nvim_client.lua" -c 'cquit 3') >"$tmp/nvim.out" 2>&1 </dev/null
    rc=$?
    grep -a '^\(ok\|FAIL\) ' "$tmp/nvim.out"
    n=$(grep -ac '^ok ' "$tmp/nvim.out")
    if [ "$rc" != 0 ] || [ "$n" != 6 ]; then
        fail nvim-run "nvim exit $rc, $n of 6 cases ok: $(grep -av '^\(ok\|FAIL\) ' "$tmp/nvim.out" | tail -n 5 | tr '\n' ' ')"
    fi
else
    echo "skip nvim (Neovim is not installed: ./configure --install-deps --with-tests installs Debian's neovim)"
fi

# ---- node + vscode-jsonrpc ----
mods=${VSCODE_JSONRPC_DIR:-$NODE_DIR/node_modules}
if [ ! -f "$mods/vscode-jsonrpc/package.json" ] && [ -z "${VSCODE_JSONRPC_DIR:-}" ] && command -v npm >/dev/null 2>&1; then
    mkdir -p "$NODE_DIR"
    timeout 300 npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent "$PKG" >"$tmp/npm.log" 2>&1 || true
fi
if ! command -v node >/dev/null 2>&1; then
    echo "skip vscode-jsonrpc (node is not installed)"
elif [ ! -f "$mods/vscode-jsonrpc/package.json" ]; then
    echo "skip vscode-jsonrpc (npm could not install $PKG: $(tail -n 1 "$tmp/npm.log" 2>/dev/null))"
else
    NODE_PATH=$(cd "$mods" && pwd) timeout 300 node tests/lsp/client.js "$GL" >"$tmp/node.out" 2>&1 </dev/null
    rc=$?
    cat "$tmp/node.out"
    if [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$tmp/node.out"; then fail node-run "node exited $rc"; fi
    grep -q '^FAIL ' "$tmp/node.out" && fails=$((fails + 1))
fi

[ "$fails" = 0 ]
