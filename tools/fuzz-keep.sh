#!/usr/bin/env bash
# Keeps what long fuzz runs found: for each target, the inputs of build/fuzz/corpus/<target>/ that
# reach edges the committed seeds do not (libFuzzer -merge=1 -use_counters=0: new edges only, not new
# hit counts) and are at most KEEP_MAX_BYTES (4096) long are copied to tests/fuzz/corpus/<target>/
# as found-<sha1>. Run after `FUZZ_SECONDS=600 tools/fuzz.sh`, then review and commit them.
#
#   tools/fuzz-keep.sh [TARGET...]     (default: lint lsp toml cxx; fix's finds go to the lint seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
max=${KEEP_MAX_BYTES:-4096}
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(lint lsp toml cxx)
export ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-keep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for t in "${targets[@]}"; do
    bin=build/fuzz/fuzz_$t
    [ -x "$bin" ] || { echo "fuzz-keep: $bin not built (run tools/fuzz.sh first)" >&2; exit 2; }
    seeds=tests/fuzz/corpus/$t
    found=(build/fuzz/corpus/$t)
    [ "$t" = lint ] && found+=(build/fuzz/corpus/fix)
    rm -rf "$tmp/m"
    mkdir -p "$tmp/m"
    cp "$seeds"/* "$tmp/m/"
    "$bin" -merge=1 -use_counters=0 -timeout=30 -rss_limit_mb=2048 -max_len=16384 "$tmp/m" "${found[@]}" \
        >"$tmp/merge-$t.log" 2>&1 || { tail -n 20 "$tmp/merge-$t.log" >&2; exit 1; }
    kept=0
    for f in "$tmp/m"/*; do
        name=${f##*/}
        [ -e "$seeds/$name" ] && continue
        [ "$(stat -c %s "$f")" -le "$max" ] || continue
        cmp -s "$f" "$seeds/found-$name" 2>/dev/null || cp "$f" "$seeds/found-$name"
        kept=$((kept + 1))
    done
    echo "fuzz-keep: $t: $kept inputs with new edges kept in $seeds"
done
# the lint seeds are fix's too: a kept input must not trip the fix target (an input found by the
# lint target, or by an older binary, can)
if [[ " ${targets[*]} " == *" lint "* ]] && [ -x build/fuzz/fuzz_fix ]; then
    if ! build/fuzz/fuzz_fix -runs=0 -timeout=30 -rss_limit_mb=2048 tests/fuzz/corpus/lint >"$tmp/fix-replay.log" 2>&1; then
        grep -E 'invariant|ERROR|Test unit written' "$tmp/fix-replay.log" | head -n 5 >&2
        echo "fuzz-keep: a lint seed trips fuzz_fix: fix the bug, add the input to tests/fuzz/regress/fix/" >&2
        exit 1
    fi
    echo "fuzz-keep: fix replays every lint seed cleanly"
fi
