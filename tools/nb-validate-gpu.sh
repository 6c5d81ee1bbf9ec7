#!/usr/bin/env bash
# GPU proof for `gradleak validate` on notebooks: each fixtures/run/*.py program (leaky ones, not
# *_fixed.py) is also written as a notebook (its top-level blocks as code cells, with a markdown cell,
# line magics, a shell escape and a %%bash cell around them), and both are validated on the GPU in
# one run. The notebook's verdicts and slopes must match the script's (same loop, cell-relative
# location). Prints one `ok`/`FAIL` line per finding (with both verdicts and slopes); exit 1 on a mismatch.
#
#   tools/nb-validate-gpu.sh [build/gradleak] [PROGRAM.py...]     (needs python3 with torch and CUDA)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
GL=${1:-build/gradleak}
DEV=${GRADLEAK_DEVICE:-cuda} # GRADLEAK_DEVICE=cpu tries the plumbing without a GPU
case $GL in /*) ;; *) GL=$PWD/$GL ;; esac
shift || true
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(fixtures/run/gl101_accum_then_backward.py fixtures/run/gl101_val_loss.py
    fixtures/run/gl102_collect_outputs.py fixtures/run/gl103_self_hidden.py)
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT
for p in "${progs[@]}"; do
    b=$(basename "$p" .py)
    cp "$p" "$T/$b.py"
    python3 - "$p" "$T/${b}_nb.ipynb" <<'PY'
import json, sys
parts = [x for x in open(sys.argv[1]).read().split("\n\n\n") if x.strip()]
cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# " + sys.argv[1]]},
         {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
          "source": ["%matplotlib inline\n", "!nvidia-smi --query-gpu=name --format=csv\n", "%load_ext autoreload"]},
         {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["%%bash\n", "echo skipped"]}]
for x in parts:
    cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                  "source": x.strip("\n").splitlines(keepends=True)})
nb = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
open(sys.argv[2], "w").write(json.dumps(nb, indent=1) + "\n")
PY
done
(cd "$T" && "$GL" validate --python "${PYTHON:-python3}" --device "$DEV" --output-format json ./*.py ./*.ipynb >val.json 2>val.err) || true
[ -s "$T/val.json" ] || { cat "$T/val.err"; exit 2; }
python3 - "$T/val.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
py = {(r["path"].split("/")[-1][:-3], r["code"]): r for r in rows if r["path"].endswith(".py")}
nb = {(r["path"].split("/")[-1][:-9], r["code"]): r for r in rows if r["path"].endswith(".ipynb")}
bad = 0
for k, r in sorted(py.items()):
    n = nb.get(k)
    same = n is not None and n.get("verdict") == r.get("verdict") and "cell" in n
    print(("ok " if same else "FAIL ") + "%s %s: .py %s, notebook %s (cell %s, line %s)" % (
        k[0], k[1], r.get("verdict"), n and n.get("verdict"), n and n.get("cell"), n and n.get("line")))
    print("    .py      " + json.dumps({x: r.get(x) for x in r if x not in ("path", "message", "code")})[:400])
    print("    notebook " + json.dumps({x: n.get(x) for x in n if x not in ("path", "message", "code")})[:400] if n else "")
    bad += not same
sys.exit(1 if bad else 0)
PY
