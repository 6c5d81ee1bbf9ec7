#!/usr/bin/env bash
# Installing without building: `ninja install` (tools/install.sh) into a DESTDIR and run from there;
# the release tarball (ninja dist) unpacked in a fresh folder and run with a scrubbed environment
# (env -i PATH=/usr/bin:/bin); the wheel (ninja wheel) pip-installed into a venv that sees Debian's
# python3-torch, with `check`, `python -m gradleak` and `validate --device cpu`; the man page renders
# without warnings; the completions load in bash. Runs in the release phase (the artifacts are built
# from the release objects); `ninja check` builds dist/ first.
# One line per case: "ok <id>" / "FAIL <id> <why>".
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
case $GRADLEAK in
    */asan/*|*/valgrind/*) echo "note: tests/dist runs in the release phase only"; exit 0 ;;
esac
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-dist-test.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
nfail=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; nfail=$((nfail + 1)); }

version=$("$GRADLEAK" version | sed -n '1s/^gradleak //p')
want_version=$("$GRADLEAK" version)
# the findings on the bundled examples, as the build under test reports them
cp -r fixtures/examples "$T/examples"
(cd "$T" && "$GRADLEAK" check --no-cache --output-format concise examples >"$T/want.txt" 2>&1)
want_rc=$?

# ---- the man page and the completions (build/share, generated from the binary) ----
man_page=build/share/man/man1/gradleak.1
if ! command -v man >/dev/null 2>&1; then
    fail dist/man-renders "no man here (./configure --install-deps --with-tests installs man-db)"
elif [ ! -f "$man_page" ]; then
    fail dist/man-renders "$man_page is missing (ninja man)"
else
    bad=
    for w in 64 80 120; do
        MANWIDTH=$w man --warnings -l "$man_page" >"$T/man.txt" 2>"$T/man.err" || bad="$bad width $w: exit $?"
        [ -s "$T/man.err" ] && bad="$bad width $w: $(head -3 "$T/man.err")"
    done
    # generated from --help and the rule docs: every option and every rule is in the rendered page
    missing=
    for o in $("$GRADLEAK" --help | grep -oE '^  (-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+') \
        $("$GRADLEAK" validate --help | grep -oE '^  --[a-z-]+') $("$GRADLEAK" rules | awk '{ print $1 }'); do
        grep -qF -- "$o" "$T/man.txt" || missing="$missing $o"
    done
    grep -q "## What it does" "$man_page" && missing="$missing (markdown left in the page)"
    if [ -n "$bad" ]; then fail dist/man-renders "$bad"
    elif [ -n "$missing" ]; then fail dist/man-renders "not in the page:$missing"
    else ok dist/man-renders; fi
fi

comp=build/share/bash-completion/completions/gradleak
# complete WORDS...: what the bash completion offers for the last word
complete_words() {
    bash --norc --noprofile -c 'source "$1" || exit 3; shift
        complete -p gradleak >/dev/null || exit 4
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gradleak; echo "${COMPREPLY[*]}"' _ "$comp" "$@" 2>&1
}
if [ ! -f "$comp" ]; then
    fail dist/bash-completion "$comp is missing (ninja completions)"
else
    r1=$(complete_words gradleak check --output-format "")
    r2=$(complete_words gradleak validate --device c)
    r3=$(complete_words gradleak ru)
    r4=$(complete_words gradleak check --sel)
    r5=$(complete_words gradleak rule GL10)
    if [ "$r1" = "full concise json sarif github" ] && [ "$r2" = "cuda cpu" ] && [ "$r3" = "rule rules" ] &&
        [ "$r4" = "--select" ] && [[ $r5 == "GL101 GL102"* ]]; then
        ok dist/bash-completion
    else
        fail dist/bash-completion "got [$r1] [$r2] [$r3] [$r4] [$r5]"
    fi
fi
zcomp=build/share/zsh/site-functions/_gradleak
fcomp=build/share/fish/vendor_completions.d/gradleak.fish
if [ -f "$zcomp" ] && [ -f "$fcomp" ] && head -1 "$zcomp" | grep -q '^#compdef gradleak' &&
    grep -q -- "-l output-format -x -a 'full concise json sarif github'" "$fcomp"; then
    zok=1
    # zsh and fish parse them; fish also answers a completion from them
    if command -v zsh >/dev/null 2>&1; then zsh -n "$zcomp" 2>"$T/zsh.err" || zok=
    else echo "note: dist/zsh-fish-completions: no zsh to parse _gradleak (./configure --install-deps --with-tests)"; fi
    if command -v fish >/dev/null 2>&1; then
        fish --no-execute "$fcomp" 2>"$T/fish.err" || zok=
        got=$(fish --no-config -c "source $fcomp; complete -C 'gradleak validate --device '" 2>>"$T/fish.err" | cut -f1 | tr '\n' ' ')
        [ "$got" = "auto cpu cuda " ] || { zok=; echo "fish offers [$got] for --device" >>"$T/fish.err"; }
    else echo "note: dist/zsh-fish-completions: no fish to parse gradleak.fish (./configure --install-deps --with-tests)"; fi
    if [ -n "$zok" ]; then ok dist/zsh-fish-completions; else fail dist/zsh-fish-completions "$(cat "$T"/*.err 2>/dev/null | head -3)"; fi
else
    fail dist/zsh-fish-completions "missing or without the generated options: $zcomp $fcomp"
fi

# ---- ninja install: PREFIX and DESTDIR ----
if GRADLEAK_BIN=$GRADLEAK PREFIX=/opt/gl DESTDIR=$T/root tools/install.sh >"$T/install.log" 2>&1; then
    r=$T/root/opt/gl
    missing=
    for f in bin/gradleak share/gradleak/harness/gradleak_harness/__init__.py share/man/man1/gradleak.1 \
        share/bash-completion/completions/gradleak share/zsh/site-functions/_gradleak \
        share/fish/vendor_completions.d/gradleak.fish; do
        [ -f "$r/$f" ] || missing="$missing $f"
    done
    [ -x "$r/bin/gradleak" ] || missing="$missing (bin/gradleak not executable)"
    (cd "$T" && "$r/bin/gradleak" check --no-cache --output-format concise examples >"$T/got.txt" 2>&1)
    rc=$?
    mkdir -p "$T/empty"
    "$r/bin/gradleak" validate --no-history "$T/empty" >"$T/val.out" 2>&1
    vrc=$?
    if [ -n "$missing" ]; then fail dist/install-destdir "not installed:$missing"
    elif [ $rc != "$want_rc" ] || ! cmp -s "$T/want.txt" "$T/got.txt"; then
        fail dist/install-destdir "installed binary: rc=$rc, output differs: $(diff "$T/want.txt" "$T/got.txt" | head -3)"
    elif [ $vrc != 0 ]; then fail dist/install-destdir "validate does not find the installed harness: $(head -2 "$T/val.out")"
    else ok dist/install-destdir; fi
else
    fail dist/install-destdir "tools/install.sh: $(tail -2 "$T/install.log")"
fi
# the harness is found from the binary's location: a binary copied elsewhere alone says so
mkdir -p "$T/lonely" && cp "$GRADLEAK" "$T/lonely/gradleak"
"$T/lonely/gradleak" validate "$T/empty" >"$T/val.out" 2>&1
if [ $? = 2 ] && grep -q 'harness' "$T/val.out"; then ok dist/harness-beside-binary; else fail dist/harness-beside-binary "$(head -2 "$T/val.out")"; fi

# ---- the release tarball ----
tarball=dist/gradleak-$version-x86_64-linux.tar.gz
if [ ! -f "$tarball" ]; then
    fail dist/tarball "$tarball is missing (ninja dist)"
else
    mkdir -p "$T/fresh" && cp -r fixtures/examples "$T/fresh/examples"
    tar -xzf "$tarball" -C "$T/fresh"
    b=$T/fresh/gradleak-$version-x86_64-linux/bin/gradleak
    (cd "$T/fresh" && env -i PATH=/usr/bin:/bin "$b" check --no-cache --output-format concise examples >"$T/got.txt" 2>&1)
    rc=$?
    got_version=$(env -i PATH=/usr/bin:/bin "$b" version 2>&1)
    mkdir -p "$T/fresh/empty"
    (cd "$T/fresh" && env -i PATH=/usr/bin:/bin "$b" validate --no-history empty >"$T/val.out" 2>&1)
    vrc=$?
    layout=
    for f in README.md LICENSE THIRD_PARTY_NOTICES share/gradleak/harness/gradleak_harness/__init__.py share/man/man1/gradleak.1 \
        share/bash-completion/completions/gradleak share/zsh/site-functions/_gradleak \
        share/fish/vendor_completions.d/gradleak.fish; do
        [ -f "$T/fresh/gradleak-$version-x86_64-linux/$f" ] || layout="$layout $f"
    done
    if [ $rc != "$want_rc" ] || ! cmp -s "$T/want.txt" "$T/got.txt"; then
        fail dist/tarball "env -i check: rc=$rc, output differs: $(diff "$T/want.txt" "$T/got.txt" | head -3)"
    elif [ "$got_version" != "$want_version" ]; then
        fail dist/tarball "stale tarball (run ninja dist): it says '$got_version', the build '$want_version'"
    elif [ $vrc != 0 ]; then fail dist/tarball "validate does not find the harness: $(head -2 "$T/val.out")"
    elif [ -n "$layout" ]; then fail dist/tarball "missing:$layout"
    else ok dist/tarball; fi

    # static as far as it goes: only glibc's own libraries, nothing newer than GLIBC_2.31
    needed=$(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    newest=$(objdump -T "$b" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sort -uV | tail -1)
    extra=
    for l in $needed; do
        case $l in libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|ld-linux-x86-64.so.2) ;; *) extra="$extra $l" ;; esac
    done
    if [ -n "$extra" ]; then fail dist/tarball-glibc-2.31 "links more than glibc:$extra"
    elif [ "$(printf '%s\nGLIBC_2.31\n' "$newest" | sort -V | tail -1)" != GLIBC_2.31 ]; then
        fail dist/tarball-glibc-2.31 "needs $newest: $(objdump -T "$b" | grep -E '\(GLIBC_2\.(3[2-9]|[4-9][0-9])\)' | awk '{ print $NF }' | tr '\n' ' ')"
    else ok dist/tarball-glibc-2.31; fi

    # libclang stays optional: C++ files are linted with it (when this machine has it), and a clear
    # message without it
    cpp=fixtures/rules/GL104/pos_cpp_sample_chars.cpp
    env -i PATH=/usr/bin:/bin GRADLEAK_CXX_HEADERS=stub "$b" check --no-cache --select GL104 "$ROOT/$cpp" >"$T/cxx.out" 2>&1
    crc=$?
    env -i PATH=/usr/bin:/bin GRADLEAK_LIBCLANG=/nonexistent/libclang.so "$b" check --no-cache "$ROOT/$cpp" >"$T/nocxx.out" 2>&1
    nrc=$?
    if ! grep -q 'GRADLEAK_LIBCLANG=/nonexistent/libclang.so cannot be loaded' "$T/nocxx.out"; then
        fail dist/tarball-libclang-optional "without libclang (rc=$nrc): $(head -3 "$T/nocxx.out")"
    elif "$GRADLEAK" check --no-cache --select GL104 "$cpp" >/dev/null 2>&1; [ $? = 1 ] && [ $crc != 1 ]; then
        fail dist/tarball-libclang-optional "the build lints $cpp, the release binary does not (rc=$crc): $(head -3 "$T/cxx.out")"
    else ok dist/tarball-libclang-optional; fi
fi

# ---- the wheel ----
wheel=dist/gradleak-$version-py3-none-manylinux_2_31_x86_64.whl
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ ! -f "$wheel" ]; then
    fail dist/wheel-install "$wheel is missing (ninja wheel)"
elif [ -z "$PY" ] || ! "$PY" -c 'import ensurepip' >/dev/null 2>&1; then
    fail dist/wheel-install "no python3 with venv here (./configure --install-deps --with-tests installs python3-venv)"
else
    # the wheel's own files: metadata a user expects, RECORD hashes that pip checks
    if "$PY" - "$wheel" >"$T/meta.out" 2>&1 <<'EOF'
import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
info = [n for n in names if n.endswith(".dist-info/METADATA")][0].rsplit("/", 1)[0]
meta = z.read(info + "/METADATA").decode()
for key in ("Name: gradleak", "Project-URL: Source", "Project-URL: Issues", "Classifier: Operating System :: POSIX :: Linux",
            "Requires-Python:", "Description-Content-Type: text/markdown", "License: MIT"):
    assert key in meta, key
for name in ("LICENSE", "THIRD_PARTY_NOTICES"):
    assert info + "/" + name in names, name
wheel = z.read(info + "/WHEEL").decode()
assert "Tag: py3-none-manylinux_2_31_x86_64" in wheel and "Root-Is-Purelib: false" in wheel, wheel
for line in z.read(info + "/RECORD").decode().splitlines():
    path, h, size = line.split(",")
    if path.endswith("/RECORD"):
        continue
    blob = z.read(path)
    assert h == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode(), path
    assert int(size) == len(blob), path
exe = [i for i in z.infolist() if i.filename.endswith(".data/scripts/gradleak")][0]
assert (exe.external_attr >> 16) & 0o111, "the binary is not executable in the wheel"
print("ok")
EOF
    then ok dist/wheel-metadata; else fail dist/wheel-metadata "$(tail -2 "$T/meta.out")"; fi

    "$PY" -m venv --system-site-packages "$T/venv" >"$T/venv.log" 2>&1 &&
        "$T/venv/bin/pip" install --no-index --disable-pip-version-check -q "$ROOT/$wheel" >>"$T/venv.log" 2>&1
    if [ $? != 0 ]; then
        fail dist/wheel-install "venv + pip install --no-index: $(tail -3 "$T/venv.log")"
    else
        # on PATH from the venv; `python -m gradleak` execs the same binary
        (cd "$T" && env -i PATH="$T/venv/bin:/usr/bin:/bin" HOME="$T" gradleak check --no-cache --output-format concise examples >"$T/got.txt" 2>&1)
        rc=$?
        mv_out=$(cd "$T" && env -i PATH="$T/venv/bin:/usr/bin:/bin" HOME="$T" python -m gradleak version 2>&1)
        if [ $rc != "$want_rc" ] || ! cmp -s "$T/want.txt" "$T/got.txt"; then
            fail dist/wheel-install "gradleak check from the venv: rc=$rc: $(diff "$T/want.txt" "$T/got.txt" | head -3)"
        elif [ "$mv_out" != "$want_version" ]; then
            fail dist/wheel-install "python -m gradleak version: '$mv_out' (want '$want_version')"
        else ok dist/wheel-install; fi

        # validate with the venv's python, which sees Debian's python3-torch
        if "$T/venv/bin/python" -c 'import torch' >/dev/null 2>&1; then
            mkdir -p "$T/proj" && cp fixtures/run/gl101_val_loss.py "$T/proj/"
            (cd "$T/proj" && env -i PATH="$T/venv/bin:/usr/bin:/bin" HOME="$T" gradleak validate --no-history \
                --device cpu --iterations 10 --timeout 120 --output-format json . >"$T/val.json" 2>"$T/val.err")
            vrc=$?
            # the summed validation loss (GL101) and, in the same loop, the forward with grad on (GL108)
            verdict=$("$PY" -c 'import json,sys; print(" ".join(sorted(r["code"] + ":" + r["verdict"] for r in json.load(open(sys.argv[1])))))' "$T/val.json" 2>&1)
            if [ $vrc = 1 ] && [ "$verdict" = "GL101:confirmed GL108:confirmed" ]; then ok dist/wheel-validate-cpu
            else fail dist/wheel-validate-cpu "rc=$vrc verdicts: $verdict $(tail -2 "$T/val.err")"; fi
        elif [ -n "${CI:-}" ]; then
            fail dist/wheel-validate-cpu "the venv sees no torch (./configure --install-deps --with-tests installs python3-torch)"
        else
            echo "note: dist/wheel-validate-cpu skipped: $PY has no torch (./configure --install-deps --with-tests installs python3-torch)"
        fi
    fi
fi

# pipx (when this machine has it): the app is the wheel's binary, linked into PIPX_BIN_DIR, and it
# still finds the harness (through the link, in the pipx venv's share/)
if [ -f "$wheel" ] && command -v pipx >/dev/null 2>&1 && [ -n "$PY" ]; then
    PIPX_HOME=$T/pipx PIPX_BIN_DIR=$T/pipx-bin pipx install --python "$PY" --pip-args=--no-index "$ROOT/$wheel" >"$T/pipx.log" 2>&1
    prc=$?
    mkdir -p "$T/empty"
    if [ $prc != 0 ]; then fail dist/wheel-pipx "pipx install: $(tail -3 "$T/pipx.log")"
    elif ! "$T/pipx-bin/gradleak" validate --no-history "$T/empty" >"$T/val.out" 2>&1; then
        fail dist/wheel-pipx "the pipx app does not find the harness: $(head -2 "$T/val.out")"
    elif [ "$("$T/pipx-bin/gradleak" version)" != "$want_version" ]; then fail dist/wheel-pipx "version differs"
    else ok dist/wheel-pipx; fi
fi

[ $nfail -eq 0 ]
