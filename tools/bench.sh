#!/bin/sh
# `ninja bench`: (1) lint time against the parse-only floor on the same files, in one process;
# (2) `gradleak check` as users run it: -j 1 against -j 2 without the cache, a cold and a warm cache
# run, and the peak RSS of each; (3) lint time against the size of one scope, per doubling. The corpus is BENCH_CORPUS (a folder of real PyTorch code kept
# outside the repository, e.g. one brought in with the search tool's fetch); without it, the
# repository's own fixtures. BENCH_SKIP_PARSE=1 skips (1); BENCH_BIN picks the binary.
set -eu
cd "$(dirname "$0")/.."
corpus=${BENCH_CORPUS:-fixtures}
bin=${BENCH_BIN:-$PWD/build/gradleak}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
if [ "${BENCH_SKIP_PARSE:-0}" != 1 ]; then
    echo "gradleak bench on $corpus (single thread, best of 3; lint/parse is the figure to watch)"
    "$bin" debug bench "$corpus"
    echo
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export GRADLEAK_CACHE_DIR="$tmp/cache"

# run NAME ARGS...: one `gradleak check` on the corpus; prints and records seconds and peak RSS
run() {
    name=$1
    shift
    # GNU time's %e/%M: wall seconds, peak RSS in KiB
    # exit 2 with files not analysed (a truncated notebook in a real corpus) is still a timing
    rc=0
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" check --output-format concise --exit-zero "$@" "$corpus" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    if [ $rc = 2 ] && grep -q 'not analysed' "$tmp/$name.out"; then
        [ "$name" = j1 ] && echo "note: $(grep 'not analysed' "$tmp/$name.out" | head -1)"
    elif [ $rc != 0 ]; then
        echo "bench: check $* failed:"; tail -3 "$tmp/$name.err"; exit 1
    fi
    # (the last line: GNU time writes "Command exited with non-zero status 2" before it)
    read -r secs kib <<EOF_TIME
$(tail -n 1 "$tmp/time")
EOF_TIME
    printf '%-34s %7.2f s   peak RSS %6.1f MB\n' "$name ($*)" "$secs" "$(echo "$kib" | awk '{ print $1 / 1024 }')"
    eval "t_$name=$secs; m_$name=$kib"
}

echo "gradleak check on $corpus ($(nproc) cores here)"
run j1 --no-cache -j 1
run j2 --no-cache -j 2
rm -rf "$GRADLEAK_CACHE_DIR"
run cold -j 2
run warm -j 2
cmp -s "$tmp/j1.out" "$tmp/j2.out" && cmp -s "$tmp/j1.out" "$tmp/cold.out" && cmp -s "$tmp/j1.out" "$tmp/warm.out" ||
    { echo "bench: the four runs disagree"; exit 1; }
echo "findings: $(grep -c ': GL[0-9]' "$tmp/j1.out" || true) (identical in all four runs)"
awk -v a="$t_j1" -v b="$t_j2" -v c="$t_cold" -v w="$t_warm" -v m="$m_j2" 'BEGIN {
    printf "-j 2 speed-up over -j 1 (no cache):  %.2fx   (target >= 1.7x)\n", a / b
    printf "warm cache / cold cache:             %.1f%%   (target <= 10%%)\n", 100 * w / c
    printf "peak RSS with -j 2:                  %.1f MB  (target < 150 MB)\n", m / 1024
}'

# (3) lint time against the size of one scope (tools/scale-bench.py): each doubling of the
# statements in a module, a function, nested loops, one loop body, a module whose blocks have
# names of their own, a module of comprehensions, and of the findings in a file should at most
# double the time. BENCH_SKIP_SCALE=1 skips it; BENCH_SCALE_SIZES overrides the sizes.
if [ "${BENCH_SKIP_SCALE:-0}" != 1 ]; then
    echo
    echo "lint time per scope size (CPU s of one gradleak check -j 1, best of 2; ratio per doubling, target <= 2.2x)"
    python3 tools/scale-bench.py --gradleak "$bin" --repeat 2 --sizes "${BENCH_SCALE_SIZES:-10000,20000,40000,80000}"
fi
