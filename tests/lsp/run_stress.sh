#!/bin/sh
# LSP stress (tools/lsp-stress.py): `gradleak lsp` under random incremental edits (syntax errors,
# non-ASCII, all line endings), checked for crashes and hangs, and for diagnostics that equal a fresh
# open of the same text at every checkpoint. The release build also checks that VmRSS stays flat
# (1,500 edits here; the full 10,000-edit run is `tools/lsp-stress.py`). The sanitizer and valgrind
# builds run 200 edits, without the memory check (their allocators' RSS is not the server's).
# Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GL=${GRADLEAK:-$PWD/build/gradleak}
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
if ! command -v python3 >/dev/null 2>&1; then
    echo "ok lsp-stress-0 skipped: no python3"
    exit 0
fi
case $GL in
    */asan/*|*/valgrind/*) args="--edits 200 --check-every 100 --tolerance-pct 100000 --timeout 300" ;;
    *) args="--edits 1500 --check-every 300" ;;
esac
fails=0
for seed in 1 2; do
    # shellcheck disable=SC2086
    out=$(python3 tools/lsp-stress.py "$GL" $args --seed $seed 2>&1)
    if [ $? -eq 0 ]; then
        echo "ok lsp-stress-$seed $(printf '%s\n' "$out" | grep 'VmRSS every' | sed 's/^lsp-stress: //')"
    else
        echo "FAIL lsp-stress-$seed $(printf '%s\n' "$out" | grep -v '^lsp-stress: *[0-9]* edits:' | tr '\n' ' ' | cut -c1-1500)"
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ]
