#!/usr/bin/env bash
# Bad input: every kind of hostile file reliability.md lists, each with a defined outcome. Every case
# lints the bad input TOGETHER WITH a good file (hazard.py, GL301 at 9:9) and checks: the exit status
# is the one defined, no signal, no "bug in gradleak", the good file's finding is still reported,
# the bad file's own outcome (its finding, a note on stderr, or nothing), and a time bound.
# Big inputs (4 MiB, 100,000-deep nesting) are generated here, never committed.
# One line per case, "ok <id>" / "FAIL <id> <why>"; exits 1 when a case failed.
#
#   GRADLEAK=build/gradleak tests/badinput/run.sh [ID-PREFIX]
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
only=${1:-}
# the sanitizer build is several times slower: time bounds scale
slow=1
case $GRADLEAK in */asan/*) slow=5 ;; */valgrind/*) slow=20 ;; esac
# ...and parses 4 MiB in more than the default 10 s budget
budget=()
[ "$slow" = 1 ] || budget=(--parse-timeout $((20 * slow)))
big_bytes=$((4 * 1024 * 1024))
[ "$slow" -lt 20 ] || big_bytes=$((512 * 1024)) # valgrind: the size does not change what is checked

T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-bad.XXXXXX") || exit 2
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
chmod 755 "$T"
cd "$T" || exit 2

nfail=0
OUT='' ERR='' RC='' SECS=''
ok() { echo "ok $1${2:+ $2}"; }
fail() {
    echo "FAIL $1 $2"
    nfail=$((nfail + 1))
}
why() { printf 'rc=%s %ss stdout=%q stderr=%q' "$RC" "$SECS" "${OUT:0:400}" "${ERR:0:400}"; }
want() { [[ -z $only || $1 == "$only"* ]]; }

# gl ARGS...: gradleak check in $T with a wall-clock limit; sets OUT, ERR, RC, SECS
gl() {
    local t0 t1
    t0=$(date +%s.%N)
    timeout -k 5 $((120 * slow)) "$GRADLEAK" check --isolated --no-cache --no-color --output-format concise "$@" \
        >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    t1=$(date +%s.%N)
    SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

H='import torch
from torch.utils.data import DataLoader


def train(model, ds, opt):
    for x, y in DataLoader(ds):
        loss = model(x).sum()
        loss.backward()
        torch.cuda.empty_cache()
'
printf '%s' "$H" >hazard.py

# check ID WANT_RC MAX_SECONDS [PATTERN-IN-STDOUT] [PATTERN-IN-STDERR] -- after a gl call:
# the common checks (rc, no signal, no internal error, hazard.py still linted, time) plus patterns.
check() {
    local id=$1 want_rc=$2 max=$3 pout=${4:-} perr=${5:-}
    if [ "$RC" -ge 124 ]; then fail "$id" "killed or timed out: $(why)"; return 1; fi
    [[ $RC == "$want_rc" ]] || { fail "$id" "exit $RC, want $want_rc: $(why)"; return 1; }
    [[ $ERR != *"bug in gradleak"* ]] || { fail "$id" "internal error: $(why)"; return 1; }
    [[ $OUT == *"hazard.py:9:9: GL301"* ]] || { fail "$id" "the good file was not linted: $(why)"; return 1; }
    awk -v s="$SECS" -v m="$((max * slow))" 'BEGIN { exit !(s <= m) }' || { fail "$id" "took ${SECS}s (limit $((max * slow))s)"; return 1; }
    [[ -z $pout || $OUT =~ $pout ]] || { fail "$id" "stdout lacks /$pout/: $(why)"; return 1; }
    [[ -z $perr || $ERR =~ $perr ]] || { fail "$id" "stderr lacks /$perr/: $(why)"; return 1; }
    ok "$id" "(${SECS}s)"
}

py() { python3 -c "$1"; }

# ---- bytes --------------------------------------------------------------------------------------
if want bad-1.1; then { printf '\xef\xbb\xbf'; printf '%s' "$H"; } >bom.py
    gl bom.py hazard.py; check bad-1.1 1 10 'bom.py:9:9: GL301'; fi
if want bad-1.2; then printf '%s' "$H" | sed 's/$/\r/' >crlf.py
    gl crlf.py hazard.py; check bad-1.2 1 10 'crlf.py:9:9: GL301'; fi
if want bad-1.3; then printf '%s' "$H" | tr '\n' '\r' >cr.py
    gl cr.py hazard.py; check bad-1.3 1 10 'cr.py:9:9: GL301'; fi
if want bad-1.4; then { printf 'x = 1\0\n'; printf '%s' "$H"; } >nul.py; printf '\0\1\2\3' >bin.py
    gl nul.py bin.py hazard.py; check bad-1.4 1 10 'nul.py:10:9: GL301' 'bin.py: skipped'; fi
if want bad-1.5; then { printf 's = "caf\xff\xfe"  # \xc3\x28\n\x80x = 1\n'; printf '%s' "$H"; } >utf8.py
    gl utf8.py hazard.py; check bad-1.5 1 10 'utf8.py:11:9: GL301'; fi
if want bad-1.6; then { printf '# -*- coding: latin-1 -*-\ns = "caf\xe9"\n'; printf '%s' "$H"; } >latin1.py
    gl latin1.py hazard.py; check bad-1.6 1 10 'latin1.py:11:9: GL301'; fi
if want bad-1.7; then : >empty.py
    gl empty.py hazard.py; check bad-1.7 1 10 '' && [[ $OUT != *empty.py* && -z $ERR ]] ||
        { [[ $OUT != *empty.py* && -z $ERR ]] || fail bad-1.7b "an empty file is clean and silent: $(why)"; }; fi
if want bad-1.8; then printf '%s' "${H%$'\n'}" >nonl.py
    gl nonl.py hazard.py; check bad-1.8 1 10 'nonl.py:9:9: GL301'; fi
if want bad-1.9; then printf '\xff\xfex\x00 \x00=\x00 \x001\x00\n\x00' >utf16.py
    gl utf16.py hazard.py; check bad-1.9 1 10; fi

# ---- size ---------------------------------------------------------------------------------------
# big.py: 4 MiB (under valgrind 512 KiB) of real code (many small functions), the hazard last (at its last line)
mkbig() {
    [ -f big.py ] && return
    py "
h = open('hazard.py').read()
line = 'def f%d(model, x):\n    return model(x) + 1\n'
out, n = [], 0
while n < $big_bytes - len(h):
    s = line % len(out); out.append(s); n += len(s)
open('big.py', 'w').write(''.join(out) + h)
"
}
if want bad-2.1; then
    mkbig
    nl=$(wc -l <big.py)
    gl "${budget[@]}" big.py hazard.py; check bad-2.1 1 30 "big.py:$nl:9: GL301"
    cap=$((big_bytes / 4)) # under the size of big.py whatever the build (valgrind's is 512 KiB)
    gl --max-file-size $cap big.py hazard.py; check bad-2.2 1 10 '' "big.py: skipped: [0-9]+ bytes is over the $cap-byte limit"
fi

# ---- depth --------------------------------------------------------------------------------------
if want bad-3.1; then py "open('parens.py', 'w').write('x = ' + '(' * 100000 + '1' + ')' * 100000 + '\n')"
    gl parens.py hazard.py; check bad-3.1 1 10; fi
if want bad-3.2; then py "open('unclosed.py', 'w').write('x = ' + '(' * 100000 + '\n')"
    gl unclosed.py hazard.py; check bad-3.2 1 10 '' 'unclosed.py: skipped: a syntax error too large'; fi
if want bad-3.3; then py "open('binop.py', 'w').write('x = ' + '+'.join(['a'] * 100000) + '\n')"
    gl binop.py hazard.py; check bad-3.3 1 10; fi
if want bad-3.4; then py "open('indent.py', 'w').write(''.join(' ' * i + 'if x:\n' for i in range(3000)) + ' ' * 3000 + 'pass\n')"
    gl "${budget[@]}" indent.py hazard.py; check bad-3.4 1 10 '' 'indent.py: syntax error'; fi
if want bad-3.5; then py "open('loops.py', 'w').write(''.join('    ' * i + 'for x in loader:\n' for i in range(1000)) + '    ' * 1000 + 'total += model(x)\n')"
    gl loops.py hazard.py; check bad-3.5 1 20; fi
if want bad-3.6; then py "open('else.py', 'w').write('if x:\n' + 'else:\n' * 70000)"
    gl else.py hazard.py; check bad-3.6 1 10 '' 'else.py: skipped'; fi
if want bad-3.7; then py "open('calls.py', 'w').write('x = ' + 'f(' * 50000 + ')' * 50000 + '\n' + 'y = a' + '.b' * 100000 + '\n')"
    gl calls.py hazard.py; check bad-3.7 1 10; fi

# ---- budgets ------------------------------------------------------------------------------------
if want bad-4.1; then
    mkbig
    # the parse budget: a tiny budget on a big file skips it with a note; the others are linted
    gl --parse-timeout 0.001 big.py hazard.py 2>/dev/null
    if [[ $ERR == *"big.py: skipped: parsing took longer"* ]]; then
        # hazard.py parses in far less than 1 ms... on a loaded machine it may not: accept both
        [[ $RC == 1 || $RC == 0 ]] && [[ $ERR != *"bug in gradleak"* ]] && ok bad-4.1 "(${SECS}s)" || fail bad-4.1 "$(why)"
    else
        fail bad-4.1 "no parse-timeout note: $(why)"
    fi
    gl --parse-timeout 0 hazard.py; [[ $RC == 2 && $ERR == *"--parse-timeout"* ]] && ok bad-4.2 || fail bad-4.2 "$(why)"
fi

# ---- the file system ----------------------------------------------------------------------------
if want bad-5.1; then
    mkdir -p w1/sub && cp hazard.py w1/sub/a.py
    ln -s .. w1/sub/up; ln -s . w1/self; ln -s loop_b w1/loop_a; ln -s loop_a w1/loop_b; ln -s nowhere.py w1/dangling.py
    gl w1 hazard.py; check bad-5.1 2 10 'w1/sub/a.py:9:9: GL301' 'w1/dangling.py: broken symbolic link'
    n=$(printf '%s\n' "$OUT" | grep -c 'GL301'); [ "$n" = 2 ] || fail bad-5.1b "each file once: $n findings: $(why)"
fi
if want bad-5.2; then
    mkdir -p w2/pkg.py && cp hazard.py w2/pkg.py/inner.py
    gl w2 w2/pkg.py hazard.py; check bad-5.2 1 10 'w2/pkg.py/inner.py:9:9: GL301'
fi
if want bad-5.3; then
    cp hazard.py noread.py; chmod 000 noread.py
    if [ "$(id -u)" = 0 ]; then
        # root reads through chmod 000: run as nobody, for whom it is unreadable
        if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
            chmod 644 hazard.py; chmod 755 "$T"
            t0=$(date +%s)
            setpriv --reuid=65534 --regid=65534 --clear-groups timeout 60 "$GRADLEAK" check --isolated --no-cache \
                --output-format concise noread.py hazard.py >"$T/.out" 2>"$T/.err" </dev/null
            RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err") SECS=$(($(date +%s) - t0))
            check bad-5.3 2 10 '' 'noread.py: cannot read: Permission denied'
        else
            ok bad-5.3 "# skip: root, and setpriv cannot drop to nobody here"
        fi
    else
        gl noread.py hazard.py; check bad-5.3 2 10 '' 'noread.py: cannot read: Permission denied'
    fi
    chmod 644 noread.py
fi
if want bad-5.4; then
    rm -f fifo.py; mkfifo fifo.py
    gl fifo.py hazard.py; check bad-5.4 2 10 '' 'fifo.py: cannot read: not a regular file'
    mkdir -p w4 && mkfifo w4/pipe.py && cp hazard.py w4/ok.py
    gl w4 hazard.py; check bad-5.4b 1 10 'w4/ok.py:9:9' && [[ $ERR != *pipe.py* ]] || fail bad-5.4c "the walk lints regular files only: $(why)"
    # a dangling or looping link named like a source file in a walked folder is not analysed, and said
    mkdir -p w4d && cp hazard.py w4d/ok.py && ln -sf /nonexistent/gone.py w4d/gone.py && ln -sf self.py w4d/self.py
    gl w4d hazard.py; check bad-5.4d 2 10 'w4d/ok.py:9:9' 'w4d/gone.py: broken symbolic link' &&
        { [[ $ERR == *"w4d/self.py: broken symbolic link"* && $OUT == *"2 files were not analysed"* ]] ||
            fail bad-5.4e "a looping link is counted: $(why)"; }
fi
if want bad-5.5; then
    # files that vanish mid-run: -j 1 lints big.py (seconds) first; v*.py are deleted meanwhile
    mkbig
    mkdir -p w5 && cp big.py w5/a_big.py && for i in 1 2 3; do cp hazard.py "w5/v$i.py"; done
    ( sleep 0.3; rm -f w5/v*.py ) &
    gl "${budget[@]}" -j 1 w5 hazard.py
    wait
    nv=$(printf '%s\n' "$ERR" | grep -c 'vanished before it could be read')
    check bad-5.5 1 30 'w5/a_big.py:[0-9]+:9: GL301' &&
        { [ "$nv" -gt 0 ] || echo "note: bad-5.5: the files were read before they vanished (a fast machine): $nv vanished"; }
fi

if want bad-5.6; then
    # FIFOs where gradleak reads on its own, not named by the user: the root's .gitignore, the
    # configuration files, a helper module it looks up for a summary. Never opened: no hang.
    for f in .gitignore gradleak.toml pyproject.toml utils.py; do
        d=w56/${f#.}; mkdir -p "$d"; cp hazard.py "$d/"; printf 'from utils import helper\nx = helper(1)\n' >"$d/main.py"
        touch "$d/setup.py"; rm -f "$d/$f"; mkfifo "$d/$f"
        t0=$(date +%s.%N)
        (cd "$d" && timeout -k 2 $((20 * slow)) "$GRADLEAK" check --no-cache --output-format concise hazard.py main.py \
            >"$T/.out" 2>"$T/.err" </dev/null)
        RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
        SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        check "bad-5.6-${f#.}" 1 10
    done
fi

# ---- the summary counts what was not analysed ---------------------------------------------------
# A skipped, unreadable or unusable path is counted in the summary, which then never says "All
# checks passed!" (nothing checked it): binary, over --max-file-size, a symlink loop, a FIFO, a
# notebook that is not JSON (truncated), and mixed with clean and flagged files.
if want bad-7; then
    printf '\0\1\2\3' >bin7.py; printf 'import torch\nx = 1\n' >clean7.py
    head -c 300 /dev/zero | tr '\0' 'x' >big7.py
    rm -f loop7a loop7b fifo7.py; ln -s loop7b loop7a; ln -s loop7a loop7b; mkfifo fifo7.py
    printf '{"cells": [' >trunc7.ipynb
    while IFS='|' read -r id want_rc args want; do
        # shellcheck disable=SC2086
        gl --max-file-size 280 $args
        if [ "$RC" -ge 124 ]; then fail "$id" "killed or timed out: $(why)"; continue; fi
        [[ $RC == "$want_rc" ]] || { fail "$id" "exit $RC, want $want_rc: $(why)"; continue; }
        [[ $OUT == *"$want"* ]] || { fail "$id" "the summary lacks '$want': $(why)"; continue; }
        case $want in
            "All checks passed!") ;;
            *) [[ $OUT != *"All checks passed"* ]] || { fail "$id" "'All checks passed' with files not analysed: $(why)"; continue; } ;;
        esac
        ok "$id"
    done <<'EOF'
bad-7.1|0|bin7.py|1 file was not analysed
bad-7.2|0|big7.py|1 file was not analysed
bad-7.3|2|loop7a|1 file was not analysed
bad-7.4|2|fifo7.py|1 file was not analysed
bad-7.5|2|clean7.py bin7.py big7.py loop7a fifo7.py|4 files were not analysed
bad-7.6|0|clean7.py bin7.py|No findings in the files analysed.
bad-7.7|1|hazard.py bin7.py|1 file was not analysed
bad-7.8|0|clean7.py|All checks passed!
bad-7.9|2|trunc7.ipynb|1 file was not analysed
bad-7.10|2|clean7.py trunc7.ipynb|1 file was not analysed
EOF
fi

# ---- internal errors ----------------------------------------------------------------------------
if want bad-6.1 && [[ $GRADLEAK == */valgrind/* ]]; then
    ok bad-6.1 "# skip: under valgrind the re-execution runs valgrind's own binary"
elif want bad-6.1; then
    mkdir -p w6 && cp hazard.py w6/a.py && cp hazard.py w6/c.py && { cat hazard.py; echo '# gradleak-test-crash'; } >w6/b.py
    for kind in segv abort; do
        GRADLEAK_TEST_CRASH=$kind gl -j 2 w6
        id=bad-6.1-$kind
        if [ "$RC" -ge 124 ]; then fail "$id" "died by a signal: $(why)"; continue; fi
        [[ $RC == 2 ]] || { fail "$id" "want exit 2: $(why)"; continue; }
        [[ $ERR == *"internal error: SIG"*"while checking w6/b.py (rule GL"*"this is a bug in gradleak "[0-9]* ]] ||
            { fail "$id" "the report names the file, the rule and the version: $(why)"; continue; }
        [[ $OUT == *"w6/a.py:9:9: GL301"* && $OUT == *"w6/c.py:9:9: GL301"* && $OUT != *"w6/b.py:"* ]] ||
            { fail "$id" "the other files are still linted: $(why)"; continue; }
        ok "$id"
    done
    # the hook is inert without the variable: the marker is just a comment
    gl w6; [[ $RC == 1 && $OUT == *"w6/b.py:9:9: GL301"* ]] && ok bad-6.2 || fail bad-6.2 "$(why)"
fi

[ "$nfail" -eq 0 ]
