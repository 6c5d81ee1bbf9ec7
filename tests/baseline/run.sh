#!/usr/bin/env bash
# `check --baseline FILE` / `--write-baseline`: only new findings are reported; entries survive
# moved code, blank lines and re-indentation; counts; stale entries; bad files. One line per case:
# "ok <id>" or "FAIL <id> <why>"; exits 1 when a case failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
only=${1:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-baseline.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
export GRADLEAK_CACHE_DIR=$T/.cache

nfail=0
ok() { echo "ok $1"; }
fail() {
    echo "FAIL $1 $2"
    nfail=$((nfail + 1))
}
want() { [[ -z $only || $1 == "$only"* ]]; }
OUT='' ERR='' RC='' GOT=''
gl() {
    "$GRADLEAK" check --output-format concise "$@" >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    GOT=$(printf '%s\n' "$OUT" | sed -nE 's/^([^:]+):([0-9]+):[0-9]+: (GL[0-9]+) .*/\1:\2:\3/p' | LC_ALL=C sort | tr '\n' ' ')
}
why() { printf 'rc=%s got=%q stderr=%q' "$RC" "$GOT" "${ERR:0:400}"; }

# train.py: GL301 (line 9) and GL201 (line 10)
write_train() {
    cat >train.py <<'EOF'
import torch
from torch.utils.data import DataLoader


def train(model, ds, opt):
    for x, y in DataLoader(ds):
        loss = model(x).sum()
        loss.backward()
        torch.cuda.empty_cache()
        x.cuda()
EOF
}

if want bl-1; then
    write_train
    cp train.py other.py
    gl --baseline bl.json --write-baseline
    [[ $RC == 0 && -z $GOT && $ERR == *"wrote 4 findings to the baseline bl.json"* ]] && ok bl-1.1 || fail bl-1.1 "$(why)"
    n=$(python3 -c 'import json,sys; d=json.load(open("bl.json")); print(d["version"], len(d["entries"]), sorted(e["count"] for e in d["entries"]), sorted({e["source"] for e in d["entries"]}))' 2>&1)
    [[ $n == "1 4 [1, 1, 1, 1] ['torch.cuda.empty_cache()', 'x.cuda()']" ]] && ok bl-1.2 || fail bl-1.2 "file: $n"
    gl --baseline bl.json
    [[ $RC == 0 && -z $GOT && -z $ERR ]] && ok bl-1.3 || fail bl-1.3 "nothing new: $(why)"
    # moved down, re-indented inside an if, spaces inside the call: still covered
    python3 - <<'EOF'
src = open("train.py").read()
src = src.replace("def train", "\n\n# a comment\nX = 1\n\n\ndef train")
src = src.replace("        torch.cuda.empty_cache()\n", "        if True:\n            torch.cuda.empty_cache( )\n")
open("train.py", "w").write(src)
EOF
    gl --baseline bl.json
    [[ $RC == 0 && -z $GOT && -z $ERR ]] && ok bl-1.4 || fail bl-1.4 "moved code: $(why)"
    # a second identical statement is new: the count says one
    sed -i 's/^        x.cuda()$/        x.cuda()\n        x.cuda()/' train.py
    gl --baseline bl.json
    [[ $RC == 1 && $GOT == "train.py:18:GL201 " && -z $ERR ]] && ok bl-1.5 || fail bl-1.5 "second x.cuda(): $(why)"
    # a new finding elsewhere is reported, with the old ones still covered
    printf 'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        y.half()\n' >new.py
    gl --baseline bl.json
    [[ $RC == 1 && $GOT == "new.py:6:GL201 train.py:18:GL201 " ]] && ok bl-1.6 || fail bl-1.6 "$(why)"
    # --statistics and json see only the new findings
    gl --baseline bl.json --statistics
    [[ $OUT == *"2	GL201"* && $OUT != *GL301* ]] && ok bl-1.7 || fail bl-1.7 "statistics: $OUT"
fi

if want bl-2; then
    rm -f ./*.py bl.json
    write_train
    cp train.py other.py
    gl --baseline bl.json --write-baseline
    # fixed in train.py: its two entries are stale; other.py's are fine
    printf 'import torch\n' >train.py
    gl --baseline bl.json
    [[ $RC == 0 && -z $GOT && $ERR == *"stale baseline entry: train.py GL201 \`x.cuda()\`"* &&
        $ERR == *"stale baseline entry: train.py GL301"* && $ERR == *"2 baseline entries no longer match"* && $ERR != *other.py* ]] &&
        ok bl-2.1 || fail bl-2.1 "$(why)"
    # linting only other.py: train.py's entries are not judged (pre-commit passes a few files)
    gl --baseline bl.json other.py
    [[ $RC == 0 && -z $ERR ]] && ok bl-2.2 || fail bl-2.2 "$(why)"
    # refresh
    gl --baseline bl.json --write-baseline
    gl --baseline bl.json
    [[ $RC == 0 && -z $ERR ]] && ok bl-2.3 || fail bl-2.3 "$(why)"
    # --write-baseline without --baseline: gradleak-baseline.json
    gl --write-baseline
    [[ -f gradleak-baseline.json && $ERR == *"gradleak-baseline.json"* ]] && ok bl-2.4 || fail bl-2.4 "$(why)"
fi

if want bl-3; then
    write_train
    gl --baseline missing.json
    [[ $RC == 2 && -z $OUT && $ERR == *"missing.json: cannot read the baseline"* ]] && ok bl-3.1 || fail bl-3.1 "$(why)"
    printf '{"version": 1, "entries": [' >broken.json
    gl --baseline broken.json
    [[ $RC == 2 && -z $OUT && $ERR == *"broken.json:1:"*"not valid JSON"* ]] && ok bl-3.2 || fail bl-3.2 "$(why)"
    printf '{"version": 1, "entries": [{"rule": "GL301", "path": "train.py", "count": 1}]}' >shape.json
    gl --baseline shape.json
    [[ $RC == 2 && $ERR == *"entry 1 needs"* ]] && ok bl-3.3 || fail bl-3.3 "$(why)"
    printf '[]' >array.json
    gl --baseline array.json
    [[ $RC == 2 && $ERR == *"not a gradleak baseline"* ]] && ok bl-3.4 || fail bl-3.4 "$(why)"
    # a hand-written entry with "./" and a count of 2 covers both copies
    printf 'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        y.half()\n        y.half()\n' >two.py
    printf '{"version": 1, "entries": [{"rule": "GL201", "path": "./two.py", "source": "y.half()", "count": 2}]}' >two.json
    gl --baseline two.json two.py
    [[ $RC == 0 && -z $GOT && -z $ERR ]] && ok bl-3.5 || fail bl-3.5 "$(why)"
fi

if [ "$nfail" -gt 0 ]; then exit 1; fi
exit 0
