#!/bin/sh
# LSP differential suite: tests/lsp/diff_edits.py edits a training file through `gradleak lsp` at
# random (hundreds of incremental changes: characters, non-ASCII text, pasted imports and
# definitions, syntax errors, deleted and moved lines, edits taken back) and compares the published
# diagnostics with `gradleak check --output-format json` of the same text after every batch.
# Prints `ok <id>` / `FAIL <id> <why>`. Env: GRADLEAK (the binary; tests/run sets it).
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
if [ ! -x "$GL" ]; then
    echo "FAIL lsp-diff-binary missing $GL (build it with ninja)"
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "skip lsp-diff (python3 is not installed)"
    exit 0
fi
# under valgrind (tests/run --valgrind) every server start and check is ~50x slower
batches=60
[ -n "${GRADLEAK_VG_LOGS:-}" ] && batches=8
timeout 900 python3 tests/lsp/diff_edits.py "$GL" --batches "$batches"
