#!/usr/bin/env bash
# C++ lint speed (docs/cxx.md "Speed"): CPU seconds (user+sys) of `gradleak check --no-cache -j 1`
# over the C++ rule fixtures, with the stub and with the real LibTorch headers, without and with the
# precompiled header (cold: built in the run; warm: already there). The real-header rows take
# minutes (~17 s a file without a PCH): REAL=0 skips them.
#   tools/cxx-bench.sh [build/gradleak]
set -u
cd "$(dirname "$0")/.." || exit 2
G=${1:-build/gradleak}
pchdir=${TMPDIR:-/tmp}/gradleak-pch-$(id -u)
all=$(ls fixtures/rules/*/*_cpp_*.cpp)
sub=$(ls fixtures/rules/GL101/*_cpp_*.cpp)
sub5=$(echo "$sub" | head -5)
m() { # LABEL [ENV=VAL...] -- FILES
    local label=$1 envs=() n l e u s
    shift
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    n=$(echo "$@" | wc -w)
    l=$(cat "$@" | wc -l)
    /usr/bin/time -f "%e %U %S" -o "$pchdir.time" env "${envs[@]}" "$G" check --no-cache -j 1 --exit-zero "$@" >/dev/null 2>&1
    read -r e u s <"$pchdir.time"
    awk -v label="$label" -v n="$n" -v l="$l" -v e="$e" -v c="$(echo "$u + $s" | bc)" 'BEGIN {
        printf "%-28s files %3d lines %5d  wall %7.1f s  cpu %7.1f s  cpu/file %6.0f ms  cpu/1000 lines %7.0f ms\n",
               label, n, l, e, c, c * 1000 / n, c * 1e6 / l }'
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$pchdir"
m "stub, no PCH" GRADLEAK_CXX_HEADERS=stub GRADLEAK_PCH=0 -- $all
m "stub, PCH cold" GRADLEAK_CXX_HEADERS=stub -- $all
m "stub, PCH warm" GRADLEAK_CXX_HEADERS=stub -- $all
if [ "${REAL:-1}" != 0 ]; then
    m "real, no PCH" GRADLEAK_PCH=0 -- $sub5
    m "real, PCH cold" -- $sub
    m "real, PCH warm" -- $sub
fi
rm -f "$pchdir.time"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
