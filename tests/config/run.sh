#!/usr/bin/env bash
# Project configuration (src/config/): discovery of gradleak.toml / [tool.gradleak], every key,
# errors with file:line:col, command-line overrides, exclusion and --force-exclude. One line per
# case: "ok <id>" or "FAIL <id> <why>"; exits 1 when a case failed.
#
#   GRADLEAK=build/gradleak tests/config/run.sh [ID-PREFIX]
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
only=${1:-}

T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-config.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

nfail=0
OUT='' ERR='' RC='' GOT=''
# gl DIR ARGS...: runs gradleak in DIR (relative to $T); sets OUT, ERR, RC and GOT, the sorted
# "path:line:CODE" list of the findings (concise format is added).
gl() {
    local dir=$1
    shift
    (cd "$T/$dir" && "$GRADLEAK" "$@" --output-format concise >"$T/.out" 2>"$T/.err" </dev/null)
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    GOT=$(printf '%s\n' "$OUT" | sed -nE 's/^([^:]+):([0-9]+):[0-9]+: (GL[0-9]+) .*/\1:\2:\3/p' | LC_ALL=C sort | tr '\n' ' ')
}
ok() { echo "ok $1"; }
fail() {
    echo "FAIL $1 $2"
    nfail=$((nfail + 1))
}
why() { printf 'rc=%s got=%q stderr=%q' "$RC" "$GOT" "${ERR:0:400}"; }
want() { [[ -z $only || $1 == "$only"* ]]; }
# expect ID RC GOT: the last run exited RC and found exactly GOT
expect() {
    if [[ $RC == "$2" && $GOT == "$3" ]]; then ok "$1"; else fail "$1" "want rc=$2 got='$3': $(why)"; fi
}
# expect_err ID TEXT...: the last run exited 2, printed nothing on stdout, and stderr holds every TEXT
expect_err() {
    local id=$1 t
    shift
    [[ $RC == 2 && -z $OUT ]] || { fail "$id" "want exit 2 and no findings: $(why)"; return; }
    for t in "$@"; do [[ $ERR == *"$t"* ]] || { fail "$id" "stderr lacks '$t': $(why)"; return; }; done
    ok "$id"
}

# A file with GL301 (line 9), GL302 (line 10) and GL401 (line 11).
hazard() {
    mkdir -p "$(dirname "$1")"
    cat >"$1" <<'EOF'
import gc
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader


def train(model, ds, opt):
    for x, y in DataLoader(ds):
        torch.cuda.empty_cache()
        gc.collect()
        v = Variable(x, volatile=True)
        loss = model(v).sum()
        loss.backward()
        opt.step()
EOF
}
# mk DIR: a fresh project tree under $T/DIR with a.py, pkg/b.py, pkg/legacy/c.py, tests/test_d.py
mk() {
    rm -rf "${T:?}/$1"
    hazard "$T/$1/a.py"
    hazard "$T/$1/pkg/b.py"
    hazard "$T/$1/pkg/legacy/c.py"
    hazard "$T/$1/tests/test_d.py"
}
ALL_A='a.py:10:GL302 a.py:11:GL401 a.py:9:GL301'

# ---- discovery -------------------------------------------------------------------------------
if want cfg-1.1; then # no configuration anywhere: every rule
    mk p11
    gl p11 check a.py
    expect cfg-1.1 1 "$ALL_A "
fi
if want cfg-1.2; then # [tool.gradleak] in pyproject.toml
    mk p12
    printf '[project]\nname = "p"\n\n[tool.gradleak]\nselect = ["GL301"]\n' >"$T/p12/pyproject.toml"
    gl p12 check a.py pkg/b.py
    expect cfg-1.2 1 "a.py:9:GL301 pkg/b.py:9:GL301 "
fi
if want cfg-1.3; then # gradleak.toml
    mk p13
    printf 'select = ["GL3"]\nignore = ["GL301"]\n' >"$T/p13/gradleak.toml"
    gl p13 check a.py
    expect cfg-1.3 1 "a.py:10:GL302 "
fi
if want cfg-1.4; then # the closest file wins, and it does not inherit from the outer one
    mk p14
    printf 'select = ["GL301"]\n' >"$T/p14/gradleak.toml"
    printf '[tool.gradleak]\nselect = ["GL302"]\n' >"$T/p14/pkg/pyproject.toml"
    gl p14 check
    expect cfg-1.4 1 "a.py:9:GL301 pkg/b.py:10:GL302 pkg/legacy/c.py:10:GL302 tests/test_d.py:9:GL301 "
fi
if want cfg-1.5; then # a pyproject.toml without [tool.gradleak] is passed over
    mk p15
    printf 'select = ["GL401"]\n' >"$T/p15/gradleak.toml"
    printf '[tool.ruff]\nline-length = 100\n' >"$T/p15/pkg/pyproject.toml"
    gl p15 check pkg/b.py
    expect cfg-1.5 1 "pkg/b.py:11:GL401 "
fi
if want cfg-1.6; then # gradleak.toml beats pyproject.toml in the same folder
    mk p16
    printf 'select = ["GL401"]\n' >"$T/p16/gradleak.toml"
    printf '[tool.gradleak]\nselect = ["GL301"]\n' >"$T/p16/pyproject.toml"
    gl p16 check a.py
    expect cfg-1.6 1 "a.py:11:GL401 "
fi
if want cfg-1.7; then # run from a subfolder: the file above the cwd governs, patterns stay relative to it
    mk p17
    printf 'select = ["GL301"]\nexclude = ["pkg/legacy"]\n' >"$T/p17/gradleak.toml"
    gl p17/pkg check
    expect cfg-1.7 1 "b.py:9:GL301 "
fi

# ---- keys ------------------------------------------------------------------------------------
if want cfg-2.1; then # extend-select on top of select
    mk p21
    printf 'select = ["GL301"]\nextend-select = ["GL401"]\n' >"$T/p21/gradleak.toml"
    gl p21 check a.py
    expect cfg-2.1 1 "a.py:11:GL401 a.py:9:GL301 "
fi
if want cfg-2.2; then # per-file-ignores: a glob, a whole folder, a basename
    mk p22
    cat >"$T/p22/gradleak.toml" <<'EOF'
[per-file-ignores]
"tests/*.py" = ["GL301"]
"legacy" = ["GL3", "GL4"]
"b.py" = ["GL401"]
EOF
    gl p22 check
    expect cfg-2.2 1 "a.py:10:GL302 a.py:11:GL401 a.py:9:GL301 pkg/b.py:10:GL302 pkg/b.py:9:GL301 tests/test_d.py:10:GL302 tests/test_d.py:11:GL401 "
fi
if want cfg-2.3; then # per-file-ignores negation: everything outside tests/ ignores GL3
    mk p23
    printf '[per-file-ignores]\n"!tests/**" = ["GL3"]\n' >"$T/p23/gradleak.toml"
    gl p23 check a.py tests/test_d.py
    expect cfg-2.3 1 "a.py:11:GL401 tests/test_d.py:10:GL302 tests/test_d.py:11:GL401 tests/test_d.py:9:GL301 "
fi
if want cfg-2.4; then # exclude (a folder name anywhere) and extend-exclude (a glob)
    mk p24
    printf 'select = ["GL301"]\nexclude = ["legacy"]\nextend-exclude = ["tests/test_*.py"]\n' >"$T/p24/gradleak.toml"
    gl p24 check
    expect cfg-2.4 1 "a.py:9:GL301 pkg/b.py:9:GL301 "
fi
if want cfg-2.5; then # torch-version: volatile=True is right before 0.4, so GL401 is off
    mk p25
    printf 'torch-version = "0.3"\n' >"$T/p25/gradleak.toml"
    gl p25 check a.py
    expect cfg-2.5 1 "a.py:10:GL302 a.py:9:GL301 "
fi
if want cfg-2.6; then # torch-version 2.1: everything on
    mk p26
    printf '[tool.gradleak]\ntorch-version = "2.1.0+cu121"\n' >"$T/p26/pyproject.toml"
    gl p26 check a.py
    expect cfg-2.6 1 "$ALL_A "
fi
if want cfg-2.7; then # jobs from the file: same findings as -j 1
    mk p27
    printf 'jobs = 3\nselect = ["GL301"]\n' >"$T/p27/gradleak.toml"
    gl p27 check
    local_got=$GOT
    gl p27 check -j 1
    [[ $RC == 1 && $GOT == "$local_got" && $GOT == *pkg/b.py* ]] && ok cfg-2.7 || fail cfg-2.7 "jobs=3 vs -j 1: '$local_got' $(why)"
fi
if want cfg-2.8; then # dotted keys and an inline per-file-ignores table
    mk p28
    printf '[tool]\ngradleak.select = ["GL302"]\ngradleak.per-file-ignores = { "a.py" = ["GL302"] }\n' >"$T/p28/pyproject.toml"
    gl p28 check a.py pkg/b.py
    expect cfg-2.8 1 "pkg/b.py:10:GL302 "
fi

# ---- errors: exit 2, file:line:col, the valid keys ----------------------------------------------
if want cfg-3.1; then
    mk p31
    printf '[tool.gradleak]\nselect = ["GL301"]\nextend_select = ["GL401"]\n' >"$T/p31/pyproject.toml"
    gl p31 check a.py
    expect_err cfg-3.1 "pyproject.toml:3:1: unknown key 'extend_select'" "valid keys: select, ignore, extend-select, per-file-ignores, exclude, extend-exclude, torch-version, jobs"
fi
if want cfg-3.2; then
    mk p32
    printf 'select = "GL301"\n' >"$T/p32/gradleak.toml"
    gl p32 check a.py
    expect_err cfg-3.2 "gradleak.toml:1:10: 'select' must be an array of strings, got string"
fi
if want cfg-3.3; then
    mk p33
    printf 'ignore = ["GL301", 7]\n' >"$T/p33/gradleak.toml"
    gl p33 check a.py
    expect_err cfg-3.3 "gradleak.toml:1:20: 'ignore' must be an array of strings, but element 2 is integer"
fi
if want cfg-3.4; then
    mk p34
    printf '\nextend-select = ["GL301", "GL999"]\n' >"$T/p34/gradleak.toml"
    gl p34 check a.py
    expect_err cfg-3.4 "gradleak.toml:2:27: 'extend-select': unknown rule 'GL999'"
fi
if want cfg-3.5; then
    mk p35
    printf 'jobs = "4"\n' >"$T/p35/gradleak.toml"
    gl p35 check a.py
    expect_err cfg-3.5 "gradleak.toml:1:8: 'jobs' must be an integer from 1 to 1024"
fi
if want cfg-3.6; then
    mk p36
    printf 'torch-version = "latest"\n' >"$T/p36/gradleak.toml"
    gl p36 check a.py
    expect_err cfg-3.6 "gradleak.toml:1:17: 'torch-version' must be a string like \"2.1\""
fi
if want cfg-3.7; then # not TOML at all
    mk p37
    printf '[tool.gradleak]\nselect = [GL301]\n' >"$T/p37/pyproject.toml"
    gl p37 check a.py
    expect_err cfg-3.7 "pyproject.toml:2:" "invalid TOML"
fi
if want cfg-3.8; then
    mk p38
    printf '[tool.gradleak]\nper-file-ignores = ["tests"]\n' >"$T/p38/pyproject.toml"
    gl p38 check a.py
    expect_err cfg-3.8 "pyproject.toml:2:20: 'per-file-ignores' must be a table"
fi
if want cfg-3.9; then # an invalid file in a subfolder found by the walk stops the run too
    mk p39
    printf 'selec = ["GL301"]\n' >"$T/p39/pkg/gradleak.toml"
    gl p39 check
    expect_err cfg-3.9 "pkg/gradleak.toml:1:1: unknown key 'selec'"
fi
if want cfg-3.10; then
    mk p310
    printf '[tool.gradleak]\nper-file-ignores = { "tests/*" = "GL301" }\n' >"$T/p310/pyproject.toml"
    gl p310 check a.py
    expect_err cfg-3.10 "pyproject.toml:2:34: 'per-file-ignores' must be an array of strings, got string (e.g. \"tests/*\" = ["
fi

# ---- the flags override the file ---------------------------------------------------------------
if want cfg-4.1; then
    mk p41
    printf 'select = ["GL301"]\n' >"$T/p41/gradleak.toml"
    gl p41 check --select GL302 a.py
    expect cfg-4.1 1 "a.py:10:GL302 "
fi
if want cfg-4.2; then
    mk p42
    printf 'select = ["GL3"]\n' >"$T/p42/gradleak.toml"
    gl p42 check --ignore GL302 --extend-select GL401 a.py
    expect cfg-4.2 1 "a.py:11:GL401 a.py:9:GL301 "
fi
if want cfg-4.3; then # --exclude replaces the file's exclude; --extend-exclude adds
    mk p43
    printf 'select = ["GL301"]\nexclude = ["legacy"]\n' >"$T/p43/gradleak.toml"
    gl p43 check --exclude tests
    expect cfg-4.3 1 "a.py:9:GL301 pkg/b.py:9:GL301 pkg/legacy/c.py:9:GL301 "
fi
if want cfg-4.4; then
    mk p44
    printf 'select = ["GL301"]\nexclude = ["legacy"]\n' >"$T/p44/gradleak.toml"
    gl p44 check --extend-exclude 'tests,pkg/b.py'
    expect cfg-4.4 1 "a.py:9:GL301 "
fi
if want cfg-4.5; then
    mk p45
    printf 'torch-version = "0.3"\n' >"$T/p45/gradleak.toml"
    gl p45 check --torch-version 2.4 a.py
    expect cfg-4.5 1 "$ALL_A "
fi
if want cfg-4.6; then # --config: one file for every path; --isolated: none
    mk p46
    printf 'select = ["GL301"]\n' >"$T/p46/gradleak.toml"
    printf 'select = ["GL401"]\n' >"$T/p46/other.toml"
    gl p46 check --config other.toml a.py
    expect cfg-4.6a 1 "a.py:11:GL401 "
    gl p46 check --isolated a.py
    expect cfg-4.6b 1 "$ALL_A "
fi
if want cfg-4.7; then # --isolated skips a broken file
    mk p47
    printf 'nonsense = 1\n' >"$T/p47/gradleak.toml"
    gl p47 check --isolated --select GL301 a.py
    expect cfg-4.7 1 "a.py:9:GL301 "
fi
if want cfg-4.8; then
    mk p48
    gl p48 check --torch-version two a.py
    [[ $RC == 2 && $ERR == *"--torch-version"* ]] && ok cfg-4.8 || fail cfg-4.8 "$(why)"
fi

# ---- --force-exclude (the pre-commit hook passes file names) ------------------------------------
if want cfg-5.1; then # a named file is linted even when excluded...
    mk p51
    printf 'select = ["GL301"]\nexclude = ["legacy", "tests/*.py"]\n' >"$T/p51/gradleak.toml"
    gl p51 check pkg/legacy/c.py tests/test_d.py a.py
    expect cfg-5.1 1 "a.py:9:GL301 pkg/legacy/c.py:9:GL301 tests/test_d.py:9:GL301 "
fi
if want cfg-5.2; then # ...unless --force-exclude
    mk p52
    printf 'select = ["GL301"]\nexclude = ["legacy", "tests/*.py"]\n' >"$T/p52/gradleak.toml"
    gl p52 check --force-exclude pkg/legacy/c.py tests/test_d.py a.py
    expect cfg-5.2 1 "a.py:9:GL301 "
fi
if want cfg-5.3; then # only excluded files named: nothing to lint, exit 0
    mk p53
    printf 'exclude = ["legacy"]\n' >"$T/p53/gradleak.toml"
    gl p53 check --force-exclude pkg/legacy/c.py
    expect cfg-5.3 0 ""
fi
if want cfg-5.4; then # a named folder inside an excluded one, with --force-exclude
    mk p54
    printf 'exclude = ["pkg"]\n' >"$T/p54/gradleak.toml"
    gl p54 check --force-exclude pkg/legacy
    expect cfg-5.4a 0 ""
    gl p54 check --select GL301 pkg/legacy
    expect cfg-5.4b 1 "pkg/legacy/c.py:9:GL301 "
fi
if want cfg-5.5; then # absolute paths are matched against patterns relative to the config file
    mk p55
    printf 'select = ["GL301"]\nexclude = ["pkg/legacy/*.py"]\n' >"$T/p55/gradleak.toml"
    gl p55 check --force-exclude "$T/p55/pkg/legacy/c.py" "$T/p55/pkg/b.py"
    expect cfg-5.5 1 "$T/p55/pkg/b.py:9:GL301 "
fi

if [ "$nfail" -gt 0 ]; then exit 1; fi
exit 0
