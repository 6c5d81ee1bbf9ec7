#!/bin/sh
# TOML reader suite: the differential test against Python's tomllib (10000 generated documents, fixed
# seed), then each hand-written case in tests/toml/cases/: NAME.toml with NAME.json (the exact output
# of toml_dump) or NAME.err (its exact stderr). Prints `ok <id>` / `FAIL <id> <why>`.
# Env: TOML_DUMP (the program; default $GRADLEAK_TESTBIN/toml_dump, which tests/run sets, then
# build/tests/toml_dump), TOML_DIFF_SEED (default 1).
set -u
cd "$(dirname "$0")/../.." || exit 2
DUMP=${TOML_DUMP:-${GRADLEAK_TESTBIN:-build/tests}/toml_dump}
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }

if [ ! -x "$DUMP" ]; then
    fail toml-diff "missing $DUMP (build it with ninja)"
    exit 1
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

if python3 tests/toml/gen_and_diff.py --dump "$DUMP" --n 10000 --seed "${TOML_DIFF_SEED:-1}" \
    --keep "${TMPDIR:-/tmp}/toml-diff-fail" >"$tmp/diff.log" 2>&1; then
    tail -n 1 "$tmp/diff.log"
    ok toml-diff
else
    cat "$tmp/diff.log"
    fail toml-diff "$(tail -n 1 "$tmp/diff.log")"
fi

for src in tests/toml/cases/*.toml; do
    name=toml-case-$(basename "$src" .toml)
    base=${src%.toml}
    "$DUMP" "$src" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ -f "$base.json" ]; then
        if [ $rc -ne 0 ]; then fail "$name" "exit $rc: $(head -c 200 "$tmp/err")"
        elif cmp -s "$tmp/out" "$base.json"; then ok "$name"
        else fail "$name" "output differs from $base.json: $(head -c 200 "$tmp/out")"; fi
    elif [ -f "$base.err" ]; then
        if [ $rc -ne 1 ]; then fail "$name" "exit $rc, want 1"
        elif cmp -s "$tmp/err" "$base.err"; then ok "$name"
        else fail "$name" "stderr $(head -c 200 "$tmp/err") differs from $base.err"; fi
    else
        fail "$name" "no $base.json or $base.err"
    fi
done
[ "$fails" -eq 0 ]
