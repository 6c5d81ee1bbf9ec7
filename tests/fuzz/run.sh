#!/usr/bin/env bash
# Every input a fuzzer ever crashed on (tests/fuzz/regress/<target>/), replayed through the real
# binaries without clang: lint (and C++) inputs through `gradleak check` (exit 0 or 1, never a signal or 2,
# and no "bug in gradleak" on stderr), fix inputs through `check --fix --unsafe-fixes` (the same), TOML
# inputs through toml_dump (exit 0 or 1), LSP sessions
# through `gradleak lsp` on stdin (exit 0 or 1). The libFuzzer
# targets themselves replay them too (tools/fuzz.sh). Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
DUMP=${GRADLEAK_TESTBIN:-build/tests}/toml_dump
fails=0
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-fuzzreg.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

for f in tests/fuzz/regress/lint/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/lint/${f##*/}
    cp "$f" "$T/input.py"
    timeout 60 "$GRADLEAK" check --no-cache --isolated "$T/input.py" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" -gt 1 ] || grep -q 'bug in gradleak' "$T/err"; then
        echo "FAIL $id exit $rc: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
# fix inputs: --fix (and --unsafe-fixes) on a copy never reports a bug (a fix that breaks the syntax
# is reverted with "this is a bug"), and exits 0 or 1
for f in tests/fuzz/regress/fix/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/fix/${f##*/}
    cp "$f" "$T/input.py"
    timeout 60 "$GRADLEAK" check --no-cache --isolated --fix --unsafe-fixes "$T/input.py" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" -gt 1 ] || grep -q 'bug in gradleak' "$T/err"; then
        echo "FAIL $id exit $rc: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
# notebook inputs: `check --fix --unsafe-fixes` on a copy; a broken notebook is exit 2 with one line,
# never a signal or "bug in gradleak"
for f in tests/fuzz/regress/nb/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/nb/${f##*/}
    cp "$f" "$T/input.ipynb"
    timeout 60 "$GRADLEAK" check --no-cache --isolated --fix --unsafe-fixes "$T/input.ipynb" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" -gt 2 ] || grep -q 'bug in gradleak' "$T/err" || [ "$(grep -c . "$T/err")" -gt 3 ]; then
        echo "FAIL $id exit $rc: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
for f in tests/fuzz/regress/cxx/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/cxx/${f##*/}
    cp "$f" "$T/input.cpp"
    GRADLEAK_CXX_HEADERS=stub timeout 60 "$GRADLEAK" check --no-cache --isolated "$T/input.cpp" >"$T/out" 2>"$T/err" </dev/null
    rc=$?
    if [ "$rc" -gt 1 ] || grep -q 'bug in gradleak' "$T/err"; then
        echo "FAIL $id exit $rc: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
for f in tests/fuzz/regress/toml/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/toml/${f##*/}
    timeout 60 "$DUMP" <"$f" >/dev/null 2>"$T/err"
    rc=$?
    if [ "$rc" -gt 1 ]; then
        echo "FAIL $id exit $rc: $(head -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
# LSP inputs are whole sessions on stdin: exit 0 or 1 (the spec's codes), never a signal
for f in tests/fuzz/regress/lsp/*; do
    [ -f "$f" ] || continue
    id=fuzz-regress/lsp/${f##*/}
    timeout 60 "$GRADLEAK" lsp <"$f" >/dev/null 2>"$T/err"
    rc=$?
    if [ "$rc" -gt 1 ]; then
        echo "FAIL $id exit $rc: $(tail -c 300 "$T/err")"
        fails=$((fails + 1))
    else
        echo "ok $id"
    fi
done
[ "$fails" -eq 0 ]
