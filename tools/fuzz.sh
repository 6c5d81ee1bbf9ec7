#!/usr/bin/env bash
# `ninja fuzz`: builds the libFuzzer targets tests/fuzz/fuzz_*.c with clang (-fsanitize=fuzzer,
# address,undefined; the library compiled with -DGL_DEBUG so ALWAYS/NEVER trap), replays the
# regression inputs of every crash ever found (tests/fuzz/regress/<target>/), then fuzzes each
# target for FUZZ_SECONDS. Exits 1 on any crash, leak, sanitizer report or timeout, naming the
# input to add to tests/fuzz/regress/<target>/.
#
#   FUZZ_SECONDS=60       seconds per target (.ci/run uses 60)
#   FUZZ_TARGETS="lint"   only these targets (names without fuzz_; default: every tests/fuzz/fuzz_*.c)
#   FUZZ_TIMEOUT=30       seconds one input may take (wall clock: generous, CI machines are shared;
#                         the slowest seed, 150 nested loops, takes 0.6 s of CPU in this build)
#   CC_FUZZ=clang-14      the compiler (configure finds it; ninja passes it)
#
# The committed seeds are tests/fuzz/corpus/<target>/ (read-only to the run); what the fuzzer finds
# goes to build/fuzz/corpus/<target>/ and is kept between runs. Findings go to build/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
cc=${CC_FUZZ:-}
if [ -z "$cc" ]; then
    cc=$(sed -n 's/^fuzz_cc = //p' build/config.ninja 2>/dev/null || true)
fi
[ -n "$cc" ] || cc=clang-14
command -v "${cc%% *}" >/dev/null || { echo "fuzz: $cc not found (./configure --install-deps --with-tests installs clang)" >&2; exit 2; }
[ -f build/config.ninja ] || { echo "fuzz: run ./configure first" >&2; exit 2; }

cfg() { sed -n "s/^$1 = //p" build/config.ninja | head -n 1; }
# clang does not know every GCC warning; the release build is the warning gate, not this one.
cflags="$(cfg cflags | sed 's/-Werror//g') -Wno-unknown-warning-option -Wno-error"
grammar_cflags=$(cfg grammar_cflags)
libs=$(cfg libs)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
out=build/fuzz

# ---- build (a generated ninja file, so rebuilds are incremental) ----------------------------------
mkdir -p "$out"
gdir=$(sed -n 's/^grammar_cflags = .*-I\([^ ]*\).*/\1/p' build/config.ninja)
lib_srcs=$(find src rules -type f -name '*.c' ! -path src/cli/main.c | LC_ALL=C sort)
grammar_srcs=$(ls "$gdir"/*.c)
targets=()
for f in tests/fuzz/fuzz_*.c; do
    t=${f##*/fuzz_}
    t=${t%.c}
    if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $t "* ]]; then continue; fi
    targets+=("$t")
done
{
    echo "builddir = $out"
    echo "cc = $cc"
    echo "cflags = $cflags $san -DGL_DEBUG -DGL_FUZZING -fsanitize=fuzzer-no-link"
    echo "grammar_cflags = $grammar_cflags $san -fsanitize=fuzzer-no-link"
    echo "libs = $libs"
    echo "rule cc"
    echo "  command = \$cc -MMD -MF \$out.d \$cflags -c \$in -o \$out"
    echo "  depfile = \$out.d"
    echo "  deps = gcc"
    echo "  description = CC [fuzz] \$in"
    echo "rule ccg"
    echo "  command = \$cc \$grammar_cflags -c \$in -o \$out"
    echo "  description = CC [fuzz] \$in"
    echo "rule link"
    echo "  command = \$cc $san -fsanitize=fuzzer -o \$out \$in \$libs"
    echo "  description = LINK \$out"
    objs=
    for s in $lib_srcs build/gen/rule_docs.c build/gen/libtorch_stub.c; do
        o=$out/obj/${s#build/}
        o=${o%.c}.o
        echo "build $o: cc $s"
        objs="$objs $o"
    done
    for s in $grammar_srcs; do
        o=$out/obj/grammar/${s##*/}
        o=${o%.c}.o
        echo "build $o: ccg $s"
        objs="$objs $o"
    done
    for t in "${targets[@]}"; do
        echo "build $out/obj/tests/fuzz/fuzz_$t.o: cc tests/fuzz/fuzz_$t.c"
        echo "build $out/fuzz_$t: link $out/obj/tests/fuzz/fuzz_$t.o$objs"
    done
} >"$out/build.ninja.tmp"
mv -f "$out/build.ninja.tmp" "$out/build.ninja"
nice ninja -f "$out/build.ninja" >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; echo "fuzz: build failed" >&2; exit 2; }

# ---- run ----------------------------------------------------------------------------------------
# detect_leaks: LeakSanitizer cannot run under some sandboxes (ptrace); probe once, as tests/run does.
leaks=1
if [ "${#targets[@]}" -gt 0 ] && ASAN_OPTIONS=intercept_tls_get_addr=0 "$out/fuzz_${targets[0]}" -runs=0 2>&1 </dev/null | grep -q 'LeakSanitizer has encountered a fatal error\|does not work under ptrace'; then
    leaks=0
    echo "fuzz: note: LeakSanitizer cannot run here; leak detection is off"
fi
# intercept_tls_get_addr=0: see tests/run (LeakSanitizer and libclang's dynamic TLS)
export ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=1:strict_string_checks=1:allocator_may_return_null=0:intercept_tls_get_addr=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

status=0
summary=()
for t in "${targets[@]}"; do
    bin=$out/fuzz_$t
    seeds=tests/fuzz/corpus/$t
    [ "$t" = fix ] && seeds=tests/fuzz/corpus/lint # one Python corpus, as ruff's targets share one
    work=$out/corpus/$t
    crashes=$out/crashes/$t
    mkdir -p "$work" "$crashes"
    dict=
    [ -f "tests/fuzz/$t.dict" ] && dict=-dict=tests/fuzz/$t.dict

    # 1. every input that ever crashed a target, replayed once
    reg=tests/fuzz/regress/$t
    if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
        if ! "$bin" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 "$reg"/* >"$out/regress-$t.log" 2>&1; then
            tail -n 40 "$out/regress-$t.log"
            echo "fuzz: $t: a regression input fails again (log: $out/regress-$t.log)"
            status=1
        fi
    fi

    # 2. fuzz: seeds + the kept working corpus (new inputs are written to the first folder only);
    # rule fixtures are extra seeds for the lint target
    extra=()
    opts=()
    # FUZZ_EXTRA_SEEDS=1: the rule fixtures too (230 more files: most of a 60 s run goes to replaying them)
    if [ -n "${FUZZ_EXTRA_SEEDS:-}" ] && { [ "$t" = lint ] || [ "$t" = fix ]; }; then extra=(fixtures/rules fixtures/examples); fi
    # the server logs every malformed message; sanitizer reports still reach libFuzzer's own stderr
    [ "$t" = lsp ] && opts=(-close_fd_mask=2)
    log=$out/fuzz-$t.log
    set +e
    nice "$bin" -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 "${opts[@]}" \
        -artifact_prefix="$crashes/" $dict "$work" "$seeds" "${extra[@]}" >"$log" 2>&1
    rc=$?
    set -e
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{ n += $1 } END { print n + 0 }')
    ncorpus=$(ls "$work" | wc -l)
    nseeds=$(ls "$seeds" 2>/dev/null | wc -l)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }' || true)
    line="$t: $execs executions in ${seconds} s, coverage ${cov:-?} edges, $nseeds seeds + $ncorpus found inputs"
    if [ "$rc" -ne 0 ]; then
        art=$(grep -o "Test unit written to [^ ]*" "$log" | tail -n 1 | sed 's/Test unit written to //')
        grep -E 'ERROR|SUMMARY|runtime error|invariant broken|bug in gradleak' "$log" | head -n 10
        line="$line: FAILED (exit $rc); input: ${art:-see $log}; copy it to tests/fuzz/regress/$t/ and fix the bug"
        status=1
    fi
    echo "fuzz: $line"
    summary+=("$line")
done
echo "fuzz: done (${#targets[@]} targets, $seconds s each)"
exit $status
