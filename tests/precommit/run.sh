#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml) run by Debian's pre-commit: `pre-commit try-repo` on
# fixture git repositories built in a temp dir, with the gradleak under test on PATH (the hook is
# `language: system`). A hazard fails the hook (exit 1, the finding printed); a clean tree passes;
# a file excluded by gradleak.toml passes even though pre-commit names it (--force-exclude); files
# pre-commit does not select (types_or) are not linted. `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
if ! command -v pre-commit >/dev/null 2>&1; then
    echo "skip precommit (no pre-commit: ./configure --install-deps --with-tests installs Debian's)"
    exit 0
fi
if ! command -v git >/dev/null 2>&1; then
    echo "skip precommit (no git)"
    exit 0
fi
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }

# the binary under test, as `gradleak`, first on PATH; pre-commit's state under the temp dir
mkdir -p "$T/bin" "$T/home"
ln -s "$GRADLEAK" "$T/bin/gradleak"
export PATH="$T/bin:$PATH" PRE_COMMIT_HOME="$T/home/pre-commit" HOME="$T/home"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1

# the hook repository: this repository's manifest, committed
hooks="$T/hooks"
mkdir -p "$hooks"
cp "$ROOT/.pre-commit-hooks.yaml" "$hooks/"
(cd "$hooks" && git init -q && git add .pre-commit-hooks.yaml && git commit -qm hooks) || { fail precommit-setup "git init failed"; exit 1; }

# project NAME: a fresh git repository with the files written by the caller into $T/NAME
commit_all() { (cd "$T/$1" && git init -q 2>/dev/null; git add -A && git commit -qm files) >/dev/null 2>&1; }
try_repo() {
    (cd "$T/$1" && pre-commit try-repo "$hooks" gradleak --all-files --color never) >"$T/$1.out" 2>&1
    RC=$?
    OUT=$(cat "$T/$1.out")
}
hazard='import torch

def evaluate(model, loader, criterion):
    model.eval()
    total = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        total += loss
    return total / len(loader)
'
clean='import torch

def evaluate(model, loader, criterion):
    model.eval()
    total = 0
    with torch.no_grad():
        for x, y in loader:
            total += criterion(model(x), y).item()
    return total / len(loader)
'

# precommit-1: a hazard fails the hook with the finding printed
mkdir -p "$T/bad"
printf '%s' "$hazard" >"$T/bad/train.py"
commit_all bad
try_repo bad
if [ $RC = 1 ] && [[ $OUT == *"Failed"* ]] && [[ $OUT == *"train.py:8:9: GL101"* ]]; then ok precommit-1-hazard-fails
else fail precommit-1-hazard-fails "rc=$RC: ${OUT:0:800}"; fi

# precommit-2: a clean tree passes
mkdir -p "$T/good"
printf '%s' "$clean" >"$T/good/train.py"
printf 'print("not python to the hook")\n' >"$T/good/notes.txt"
commit_all good
try_repo good
if [ $RC = 0 ] && [[ $OUT == *"Passed"* ]]; then ok precommit-2-clean-passes
else fail precommit-2-clean-passes "rc=$RC: ${OUT:0:800}"; fi

# precommit-3: exclude in gradleak.toml holds for files pre-commit names (--force-exclude)
mkdir -p "$T/excl/gen"
printf '%s' "$clean" >"$T/excl/train.py"
printf '%s' "$hazard" >"$T/excl/gen/generated.py"
printf 'exclude = ["gen"]\n' >"$T/excl/gradleak.toml"
commit_all excl
try_repo excl
if [ $RC = 0 ] && [[ $OUT == *"Passed"* ]] && [[ $OUT != *"GL101"* ]]; then ok precommit-3-force-exclude
else fail precommit-3-force-exclude "rc=$RC: ${OUT:0:800}"; fi

# precommit-4: the same hazard in a .txt file is not the hook's business (types_or: python, pyi, jupyter)
mkdir -p "$T/txt"
printf '%s' "$clean" >"$T/txt/train.py"
printf '%s' "$hazard" >"$T/txt/train.txt"
commit_all txt
try_repo txt
if [ $RC = 0 ]; then ok precommit-4-types; else fail precommit-4-types "rc=$RC: ${OUT:0:800}"; fi

# precommit-5: the manifest has the fields the issue fixes (and that Debian's 3.0.4 accepts)
m=$(cat "$ROOT/.pre-commit-hooks.yaml")
if [[ $m == *"id: gradleak"* && $m == *"language: system"* && $m == *"types_or: [python, pyi, jupyter]"* &&
    $m == *"require_serial: true"* && $m == *"entry: gradleak check --force-exclude"* ]]; then
    ok precommit-5-manifest
else fail precommit-5-manifest "unexpected .pre-commit-hooks.yaml"; fi

# precommit-6: a notebook is linted (types_or: jupyter); the finding is shown in its cell
mkdir -p "$T/nb"
printf '%s' "$clean" >"$T/nb/train.py"
python3 - "$T/nb/eval.ipynb" "$hazard" <<'EOF'
import json, sys
src = sys.argv[2].splitlines(keepends=True)
nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# eval"]},
                {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["%matplotlib inline\n"] + src}],
      "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
open(sys.argv[1], "w").write(json.dumps(nb, indent=1) + "\n")
EOF
commit_all nb
try_repo nb
if [ $RC = 1 ] && [[ $OUT == *"Failed"* ]] && [[ $OUT == *"eval.ipynb:cell 2:9:9: GL101"* ]]; then ok precommit-6-notebook
else fail precommit-6-notebook "rc=$RC: ${OUT:0:800}"; fi

[ "$fails" = 0 ]
