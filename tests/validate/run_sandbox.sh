#!/usr/bin/env bash
# The sandbox `gradleak validate` runs user code in (src/validate/val_sandbox.c), through the
# sandbox_run driver: a setsid grandchild is killed, a fork bomb is contained, network connects
# fail, a 1 GiB write is stopped, secrets in the environment do not reach the child, the whole
# run ends within the limit + 2 s, and (bubblewrap) writes outside its folder fail or stay in a
# private /tmp, home folders are unreadable, and a missing bwrap is a note, not a failure. Each case runs with the namespaces and, where they change the
# mechanism, without them (process group + cgroup only). One line per case: "ok <id>" / "FAIL <id> <why>".
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=${GRADLEAK_TESTBIN:-$PWD/build/tests}
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
SB=$BIN/sandbox_run
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-sandbox.XXXXXX") || exit 2
# folders outside /tmp (the sandbox's /tmp is private, so a test folder there proves nothing)
B=$(mktemp -d "$PWD/build/sandbox-test.XXXXXX") || exit 2
trap 'rm -rf "$T" "$B"' EXIT
cd "$T" || exit 2
nfail=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; nfail=$((nfail + 1)); }
if [ ! -x "$SB" ]; then
    fail sandbox/driver "$SB is not built (ninja tests_release)"
    exit 1
fi
PY=$(command -v python3 || echo /usr/bin/python3)
OUT=
# sb ARGS...: runs the driver, sets OUT and ELAPSED (seconds, as measured from outside)
sb() {
    local t0 t1
    t0=$(date +%s.%N)
    OUT=$("$SB" "$@" 2>&1)
    t1=$(date +%s.%N)
    ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
field() { printf '%s\n' "$OUT" | sed -n "s/^$1=//p" | head -n 1; }
within() { awk -v e="$1" -v l="$2" 'BEGIN { exit !(e <= l) }'; }
# survivors MARKER: processes whose command line holds MARKER (checked, never killed from here)
survivors() { pgrep -f "$1" 2>/dev/null | grep -c . ; }

# ns: namespaces (and a cgroup where one can be made); nons: no namespaces; bare: neither namespaces
# nor cgroup (what is left: the process group, and gradleak as subreaper of the run's orphans)
sb --no-ns --timeout 5 -- true
have_cgroup=$(field cgroup)
for mode in ns nons bare; do
    flags=
    [ $mode = nons ] && flags=--no-ns
    [ $mode = bare ] && flags="--no-ns --no-cgroup"

    # 1. a grandchild that calls setsid (leaves the process group) dies with the run
    marker="sleep 29$RANDOM.5"
    sb $flags --timeout 2 -- sh -c "setsid $marker & sleep 300"
    sleep 0.3
    n=$(survivors "$marker")
    if [ "$(field timed_out)" = 1 ] && [ "$n" = 0 ]; then ok "sandbox/setsid-grandchild-killed/$mode"
    else fail "sandbox/setsid-grandchild-killed/$mode" "survivors=$n $(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi

    # 2. total time is at most the limit + 2 s
    sb $flags --timeout 2 -- sleep 100
    if [ "$(field timed_out)" = 1 ] && within "$ELAPSED" 4; then ok "sandbox/time-limit/$mode"
    else fail "sandbox/time-limit/$mode" "elapsed=$ELAPSED $(printf '%s' "$OUT" | tr '\n' ' ' | head -c 300)"; fi

    # 3. a fork bomb is contained (pids cgroup / RLIMIT_NPROC, then the wall clock) and leaves nothing
    # (not in bare mode as root: nothing would bound it but the clock, on a shared machine)
    if [ "$(id -u)" = 0 ] && { [ $mode = bare ] || { [ $mode = nons ] && [ "$have_cgroup" = 0 ]; }; }; then
        echo "note: sandbox/fork-bomb-contained/$mode skipped: root without namespaces or a pids cgroup"
        continue
    fi
    marker="forkbomb-$RANDOM$RANDOM"
    sb $flags --timeout 3 --procs 64 -- "$PY" -c "
import os, sys, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
" "$marker"
    sleep 0.5
    n=$(survivors "$marker")
    if [ "$(field timed_out)" = 1 ] && [ "$n" = 0 ] && within "$ELAPSED" 5; then ok "sandbox/fork-bomb-contained/$mode"
    else fail "sandbox/fork-bomb-contained/$mode" "survivors=$n elapsed=$ELAPSED $(field note)"; fi
done

# 4. no network: connecting to a listener on the host's loopback fails inside, works outside
"$PY" -c "
import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(5)
open('port', 'w').write(str(s.getsockname()[1]))
time.sleep(20)
" &
lpid=$!
for _ in $(seq 50); do [ -s port ] && break; sleep 0.1; done
port=$(cat port 2>/dev/null)
probe="
import socket, sys
for host, port in (('127.0.0.1', $port), ('1.1.1.1', 53)):
    try:
        socket.create_connection((host, port), timeout=2).close(); print('connected', host)
    except OSError as e:
        print('refused', host, e.errno)
"
outside=$("$PY" -c "$probe" 2>&1)
sb --timeout 10 -- "$PY" -c "$probe"
kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
if [ "$(field netns)" = 1 ] && printf '%s' "$OUT" | grep -q 'refused 127.0.0.1' && ! printf '%s' "$OUT" | grep -q connected &&
    printf '%s' "$outside" | grep -q 'connected 127.0.0.1'; then ok sandbox/network-connect-fails
else fail sandbox/network-connect-fails "outside=[$outside] inside=$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi

# 5. a 1 GiB write is stopped at RLIMIT_FSIZE (64 MiB here)
sb --timeout 20 --fsize $((64 << 20)) -- dd if=/dev/zero of=big bs=1M count=1024
size=$(stat -c %s big 2>/dev/null || echo 0)
if [ "$size" -le $((64 << 20)) ] && [ "$(field exit)" != 0 ]; then ok sandbox/1gib-write-stopped
else fail sandbox/1gib-write-stopped "size=$size exit=$(field exit)"; fi
rm -f big

# 6. secrets in the parent's environment are absent in the child; PATH and HOME are set
export GRADLEAK_TEST_API_TOKEN=tok-s3cr3t-1 AWS_SECRET_ACCESS_KEY=aws-s3cr3t-2 HF_TOKEN=hf-s3cr3t-3 SSH_AUTH_SOCK=/tmp/agent.sock
sb --timeout 10 -- env
unset GRADLEAK_TEST_API_TOKEN AWS_SECRET_ACCESS_KEY HF_TOKEN SSH_AUTH_SOCK
if ! printf '%s' "$OUT" | grep -q 's3cr3t\|SSH_AUTH_SOCK' && printf '%s' "$OUT" | grep -q '^PATH=' &&
    printf '%s' "$OUT" | grep -q "^HOME=$T"; then ok sandbox/secret-env-absent
else fail sandbox/secret-env-absent "$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 500)"; fi

# 7. the exit status and output come back; a missing program is exit 127 with a reason
sb --timeout 10 -- sh -c 'echo to-out; echo to-err >&2; exit 3'
if [ "$(field exit)" = 3 ] && printf '%s' "$OUT" | grep -q to-out && printf '%s' "$OUT" | grep -q to-err; then ok sandbox/exit-status
else fail sandbox/exit-status "$(printf '%s' "$OUT" | tr '\n' ' ')"; fi
sb --timeout 10 -- /nonexistent/program
if [ "$(field exit)" = 127 ] && printf '%s' "$OUT" | grep -q 'cannot run'; then ok sandbox/missing-program
else fail sandbox/missing-program "$(printf '%s' "$OUT" | tr '\n' ' ')"; fi

# 8. the program gets its own /proc in the PID namespace (pid 1 is the sandbox's init; CUDA needs this)
sb --timeout 10 -- sh -c 'cat /proc/self/stat | cut -d" " -f1; ls /proc | grep -c "^[0-9]"'
if [ "$(field pidns)" = 1 ]; then
    n=$(printf '%s\n' "$OUT" | sed -n '/^--- stdout/,/^--- stderr/p' | sed -n 3p)
    if [ -n "$n" ] && [ "$n" -lt 10 ]; then ok sandbox/private-proc
    else fail sandbox/private-proc "$(printf '%s' "$OUT" | tr '\n' ' ')"; fi
else
    echo "note: no PID namespace here ($(field note)); sandbox/private-proc not applicable"
fi

# 9. the filesystem (bubblewrap): read-only but for the run's folder, a private /tmp and /dev/shm,
# home folders hidden. Run from $T/work (the one writable folder) with a fake HOME for gradleak
# itself, so the test touches none of the real user's files; the real home (passwd) is only listed.
if [ -z "$(field fs)" ] || [ "$(field fs)" = 0 ]; then sb --timeout 10 -- true; fi
if [ "$(field fs)" = 1 ]; then
    mkdir -p "$T/work" "$B/proj" "$B/fakehome/.ssh"
    echo 'secret-key-material' >"$B/fakehome/.ssh/id_test"
    echo 'ro-data' >"$B/fakehome/data.txt"
    tag=$RANDOM$RANDOM
    realhome=$(getent passwd "$(id -u)" | cut -d: -f6)
    # a file directly in the real home (.bashrc, .profile...): never bound back, so never readable
    homefile=
    for f in "$realhome"/.* "$realhome"/*; do [ -f "$f" ] && [ -r "$f" ] && [ -s "$f" ] && { homefile=$f; break; }; done
    # sbw ARGS...: sb from $T/work with HOME=$B/fakehome for the sandbox_run process
    sbw() { (cd "$T/work" && HOME="$B/fakehome" sb "$@"; printf '%s\n' "$OUT" >"$T/sbw.out"); OUT=$(cat "$T/sbw.out"); }
    sbw --rw "$T/work" --timeout 20 -- sh -c "
        echo x >/tmp/gradleak-escape-$tag && echo wrote-tmp
        echo x >$B/fakehome/.escape-$tag && echo wrote-fakehome
        echo x >$realhome/.gradleak-escape-$tag && echo wrote-realhome
        echo x >$B/proj/escape-$tag && echo wrote-project
        echo x >/dev/shm/gradleak-escape-$tag && echo wrote-shm
        echo x >/var/tmp/gradleak-escape-$tag && echo wrote-vartmp
        echo x >$T/work/inside-$tag && echo wrote-work
        cat $B/fakehome/.ssh/id_test && echo read-ssh
        [ -n '$homefile' ] && cat '$homefile' >/dev/null 2>&1 && echo read-realhome-file
        cat /etc/shadow >/dev/null 2>&1 && echo read-shadow
        echo done"
    leaked=
    for f in /tmp/gradleak-escape-$tag "$B/fakehome/.escape-$tag" "$realhome/.gradleak-escape-$tag" "$B/proj/escape-$tag" \
        /dev/shm/gradleak-escape-$tag /var/tmp/gradleak-escape-$tag; do
        [ -e "$f" ] && leaked="$leaked $f"
    done
    rm -f /tmp/gradleak-escape-$tag /dev/shm/gradleak-escape-$tag /var/tmp/gradleak-escape-$tag "$realhome/.gradleak-escape-$tag"
    o1=$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 600)
    if [ -z "$leaked" ] && printf '%s' "$OUT" | grep -q '^done'; then ok sandbox/fs-writes-stay-inside
    else fail sandbox/fs-writes-stay-inside "left on the host:$leaked; $o1"; fi
    if [ -e "$T/work/inside-$tag" ] && printf '%s' "$OUT" | grep -q wrote-work; then ok sandbox/fs-own-folder-writable
    else fail sandbox/fs-own-folder-writable "$o1"; fi
    if printf '%s' "$OUT" | grep -q 'wrote-project\|wrote-fakehome\|wrote-realhome\|wrote-vartmp'; then
        fail sandbox/fs-readonly-elsewhere "a write outside succeeded: $o1"
    else ok sandbox/fs-readonly-elsewhere; fi
    if printf '%s' "$OUT" | grep -q 'secret-key-material\|read-ssh\|read-realhome-file\|read-shadow'; then
        fail sandbox/fs-secrets-unreadable "$o1"
    else ok sandbox/fs-secrets-unreadable; fi
    # /tmp and /dev/shm are private but usable (the harness and DataLoader workers write there)
    if printf '%s' "$OUT" | grep -q wrote-tmp && printf '%s' "$OUT" | grep -q wrote-shm; then ok sandbox/fs-private-tmp-usable
    else fail sandbox/fs-private-tmp-usable "$o1"; fi

    # 10. --ro (validate --allow-read): a folder inside the hidden home is readable, not writable
    sbw --rw "$T/work" --ro "$B/fakehome" --timeout 10 -- sh -c "cat $B/fakehome/data.txt; echo x >$B/fakehome/w-$tag && echo wrote"
    if printf '%s' "$OUT" | grep -q ro-data && ! printf '%s' "$OUT" | grep -q '^wrote' && [ ! -e "$B/fakehome/w-$tag" ]; then
        ok sandbox/fs-allow-read
    else fail sandbox/fs-allow-read "$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi

    # 11. an interpreter inside the hidden home (a venv, pyenv) still runs: its prefix is bound back
    if "$PY" -m venv --without-pip "$B/fakehome/venv" >/dev/null 2>&1; then
        sbw --rw "$T/work" --timeout 20 -- "$B/fakehome/venv/bin/python" -c 'import sys, json; print("prefix", sys.prefix)'
        if printf '%s' "$OUT" | grep -q "^prefix $B/fakehome/venv" && [ "$(field exit)" = 0 ]; then ok sandbox/fs-venv-in-home
        else fail sandbox/fs-venv-in-home "$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi
    else
        echo "note: sandbox/fs-venv-in-home skipped: python3 -m venv is unavailable"
    fi

    # 12. without bubblewrap, or where it cannot make namespaces, the run still happens and says so
    GRADLEAK_BWRAP= sb --timeout 10 -- true
    if [ "$(field fs)" = 0 ] && [ "$(field exit)" = 0 ] && printf '%s' "$(field note)" | grep -q 'no filesystem isolation: bubblewrap (bwrap) is not installed'; then
        ok sandbox/fs-degrades-without-bwrap
    else fail sandbox/fs-degrades-without-bwrap "$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi
    GRADLEAK_BWRAP=/bin/false sb --timeout 10 -- true
    if [ "$(field fs)" = 0 ] && [ "$(field exit)" = 0 ] && printf '%s' "$(field note)" | grep -q 'bwrap cannot make its namespaces'; then
        ok sandbox/fs-degrades-when-bwrap-fails
    else fail sandbox/fs-degrades-when-bwrap-fails "$(printf '%s' "$OUT" | tr '\n' ' ' | head -c 400)"; fi

    # 13. the program's host pid is known (RSS and NVML sampling read it): the program, not bwrap
    marker="pidmark-$RANDOM$RANDOM"
    "$SB" --timeout 10 -- sh -c 'sleep 1.5; echo end' "$marker" >"$T/pid.out" 2>&1 &
    bgp=$!
    sleep 0.8
    shpid=
    for p in $(pgrep -f "$marker"); do [ "$(cat /proc/$p/comm 2>/dev/null)" = sh ] && shpid=$p; done
    wait "$bgp"
    OUT=$(cat "$T/pid.out")
    if [ -n "$shpid" ] && [ "$(field pid)" = "$shpid" ]; then ok sandbox/fs-program-pid
    else fail sandbox/fs-program-pid "program=$shpid reported=$(field pid)"; fi
elif command -v bwrap >/dev/null 2>&1 && ! printf '%s' "$(field note)" | grep -q 'bwrap cannot make its namespaces'; then
    fail sandbox/fs-isolation "bwrap is installed but the run had no filesystem isolation: $(field note)"
else
    echo "note: sandbox/fs-* skipped: no filesystem isolation here ($(field note))"
fi

[ $nfail -eq 0 ]
