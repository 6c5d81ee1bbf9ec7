#!/usr/bin/env bash
# Parallel linting (-j): the output is the same, in the same order, whatever N is, and the same
# whether the files come in one argv or one at a time. One line per case: "ok <id>" or
# "FAIL <id> <why>"; exits 1 when a case failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
only=${1:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-parallel.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

nfail=0
ok() { echo "ok $1"; }
fail() {
    echo "FAIL $1 $2"
    nfail=$((nfail + 1))
}
want() { [[ -z $only || $1 == "$only"* ]]; }

# The repository's fixtures, the project_* folders included: a file linted alone reads the helpers
# it imports from disk, so its findings are those it has when linted with them.
mkdir -p "$T/tree"
cp -r "$ROOT/fixtures/." "$T/tree/"
# Python only (C++ files take ~1 s each to parse; the C++ suites cover their own order)
find "$T/tree" -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' -o -name '*.cu' \) -delete
cd "$T/tree" || exit 2
nfiles=$(find . -name '*.py' | wc -l)

for fmt in concise json full; do
    want "par-1.$fmt" || continue
    "$GRADLEAK" check --no-cache -j 1 --output-format $fmt --no-color >"$T/j1" 2>"$T/j1.err"
    rc1=$?
    bad=
    for j in 2 3 8 64; do
        "$GRADLEAK" check --no-cache -j $j --output-format $fmt --no-color >"$T/jn" 2>"$T/jn.err"
        rcn=$?
        if [[ $rcn != "$rc1" ]] || ! cmp -s "$T/j1" "$T/jn" || ! cmp -s "$T/j1.err" "$T/jn.err"; then
            bad="$bad -j $j (rc $rcn vs $rc1, $(diff "$T/j1" "$T/jn" | head -2 | tr '\n' ' '))"
        fi
    done
    [[ $rc1 == 1 && -z $bad ]] && ok "par-1.$fmt" || fail "par-1.$fmt" "differs from -j 1:$bad"
done

if want par-2; then
    # sorted by path, then position
    "$GRADLEAK" check --no-cache -j 4 --output-format concise >"$T/c" 2>/dev/null
    grep -E '^[^ ]+:[0-9]+:[0-9]+: GL' "$T/c" | sed -E 's/^([^:]+):([0-9]+):([0-9]+):.*/\1 \2 \3/' >"$T/keys"
    if LC_ALL=C sort -k1,1 -k2,2n -k3,3n -c "$T/keys" 2>/dev/null && [ "$(wc -l <"$T/keys")" -gt 50 ]; then
        ok par-2
    else
        fail par-2 "not sorted by path and position ($(wc -l <"$T/keys") findings)"
    fi
fi

if want par-3; then
    # one argv against one file per run: the same findings. Except where a function's callers in
    # another file run it with grad off: a file linted alone cannot know its importers (only what
    # it imports is read from disk), call it once per training step, or call it after training; so
    # those project fixtures are left out of the comparison
    rm -rf ./rules/GL108/project_caller_grad_off_elsewhere ./rules/GL301/project_loss_object_per_step \
        ./rules/GL108/project_test_method_after_train_elsewhere
    "$GRADLEAK" check --no-cache -j 2 --output-format concise $(find . -name '*.py' | LC_ALL=C sort -r) 2>/dev/null |
        grep -E '^[^ ]+:[0-9]+:[0-9]+: GL' >"$T/all"
    : >"$T/each"
    while IFS= read -r f; do
        "$GRADLEAK" check --no-cache -j 2 --output-format concise "$f" 2>/dev/null | grep -E '^[^ ]+:[0-9]+:[0-9]+: GL' >>"$T/each"
    done < <(find . -name '*.py' | LC_ALL=C sort)
    if cmp -s "$T/all" "$T/each" && [ -s "$T/all" ]; then
        ok par-3
    else
        fail par-3 "one argv vs one at a time ($nfiles files): $(diff "$T/all" "$T/each" | head -4 | tr '\n' ' ')"
    fi
fi

if [ "$nfail" -gt 0 ]; then exit 1; fi
exit 0
