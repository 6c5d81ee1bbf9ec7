#!/usr/bin/env bash
# Jupyter notebooks end to end: `check` on tests/notebook/fixtures/*.ipynb (findings across cells,
# every kind of IPython syntax, string and list sources, broken and non-Python notebooks), every
# output format's cell locations, --fix/--diff written back into the JSON byte for byte (validated
# with Debian's python3-nbformat when present), the cache key (outputs do not re-lint), and a
# notebook with 50 MB of embedded output generated here. `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
ROOT=$PWD
FIX=$PWD/tests/notebook/fixtures
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT INT TERM
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }
export NO_COLOR=1
PY=
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import nbformat' >/dev/null 2>&1; then PY=$p; break; fi
done

cp "$FIX"/*.ipynb "$T/"
cd "$T" || exit 2

# ---- nb-1: findings, locations, errors ----
"$GRADLEAK" check --no-cache --output-format concise . >out.txt 2>err.txt
rc=$?
expect_lines() { # id file lines...
    local id=$1 file=$2
    shift 2
    for l in "$@"; do
        if ! grep -qxF -- "$l" "$file"; then
            fail "$id" "missing line: $l"$'\n'"$(cat "$file")"
            return
        fi
    done
    ok "$id"
}
expect_lines nb-1.1-hazard-across-cells out.txt \
    "hazard_cells.ipynb:cell 5:6:5: GL101 [*] 'total_loss' keeps the autograd graph of every iteration: 'loss' is added after backward() and 'total_loss' lives across the step loop at cell 5, line 1; the graph's nodes pile up on the host" \
    "hazard_cells.ipynb:cell 5:7:5: GL102 'history' collects tensors that carry an autograd graph: 'loss' is appended to 'history', which lives across the step loop at cell 5, line 1; it was added after backward(), so autograd nodes pile up on the host"
expect_lines nb-1.2-string-source out.txt "string_source.ipynb:cell 2:7:5: GL101 [*] 'total' keeps the autograd graph of every iteration: 'loss' is added after backward() and 'total' lives across the step loop at cell 2, line 2; the graph's nodes pile up on the host"
expect_lines nb-1.3-magics out.txt \
    "magics.ipynb:cell 3:9:5: GL101 [*] 'total' keeps the autograd graph of every iteration: 'loss' is added after backward() and 'total' lives across the step loop at cell 3, line 3; the graph's nodes pile up on the host" \
    "magics.ipynb:cell 7:9:1: GL201 [*] \`x.cuda()\` returns a new tensor and the result is discarded: \`x\` is not moved or converted in place (only modules are)" \
    "magics.ipynb:cell 9:3:5: GL201 [*] \`t.cuda()\` returns a new tensor and the result is discarded: \`t\` is not moved or converted in place (only modules are)"
n=$(grep -c 'ipynb:cell' out.txt)
# (y.cpu() ending cell 8 is displayed, not discarded: no GL201; t.cuda() ending a loop in cell 9 is)
if [ "$n" = 6 ]; then ok nb-1.4-nothing-else; else fail nb-1.4-nothing-else "expected 6 findings (the %%bash/%%writefile/%%html cells, a cell's displayed last expression, noqa'd and empty notebooks are silent), got $n"$'\n'"$(cat out.txt)"; fi
expect_lines nb-1.5-broken-notebooks err.txt \
    "gradleak: error: invalid.ipynb: not a notebook: invalid JSON at line 2, column 0: ']' expected near end of file" \
    "gradleak: error: nbformat3.ipynb: nbformat 3 notebooks are not supported (gradleak reads nbformat 4): convert it with \`jupyter nbconvert --to notebook --nbformat 4\`" \
    "gradleak: error: not_notebook.ipynb: not a Jupyter notebook: the JSON has no \"cells\" list" \
    "gradleak: note: r_kernel.ipynb: the notebook's language is R, not Python: not linted" \
    "gradleak: note: 1 notebook not linted: not Python" \
    "gradleak: warning: syntax_error.ipynb: syntax error at cell 3, line 3:5: linted around it"
if ! grep -q "empty\|magics\|string_source\|noqa\|hazard_cells" err.txt; then ok nb-1.5b-readable-notebooks-quiet
else fail nb-1.5b-readable-notebooks-quiet "$(cat err.txt)"; fi
if [ "$rc" = 2 ]; then ok nb-1.6-exit-2-on-broken; else fail nb-1.6-exit-2-on-broken "rc=$rc"; fi
"$GRADLEAK" check --no-cache hazard_cells.ipynb magics.ipynb >/dev/null 2>&1
rc=$?
if [ "$rc" = 1 ]; then ok nb-1.7-exit-1; else fail nb-1.7-exit-1 "rc=$rc"; fi
"$GRADLEAK" check --no-cache --exclude '*.ipynb' . >ex.txt 2>&1
if grep -q "All checks passed" ex.txt; then ok nb-1.8-exclude; else fail nb-1.8-exclude "$(cat ex.txt)"; fi

# ---- nb-2: the formats ----
"$GRADLEAK" check --no-cache hazard_cells.ipynb >full.txt 2>&1
if grep -qxF "hazard_cells.ipynb:cell 5:6:5: GL101 [*] 'total_loss' keeps the autograd graph of every iteration: 'loss' is added after backward() and 'total_loss' lives across the step loop at cell 5, line 1; the graph's nodes pile up on the host" full.txt &&
    grep -qxF "  = note: cell 5, line 3: the graph comes from 'model(x)'" full.txt &&
    grep -qxF "6 |     total_loss += loss" full.txt && ! grep -q "print(total_loss)" full.txt; then
    ok nb-2.1-full-frame-in-cell
else
    fail nb-2.1-full-frame-in-cell "$(cat full.txt)"
fi
"$GRADLEAK" check --no-cache --trace hazard_cells.ipynb >trace.txt 2>&1
if grep -q "trace: .*cell 5, line " trace.txt && ! grep -q "trace: .*[^,] line 1[0-9]" trace.txt; then ok nb-2.2-trace-cells; else fail nb-2.2-trace-cells "$(grep trace trace.txt)"; fi
"$GRADLEAK" check --no-cache --output-format json hazard_cells.ipynb >j.json 2>/dev/null
if python3 - j.json <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
f = d[0]
assert f["cell"] == 5, f["cell"]
assert f["location"] == {"row": 6, "column": 5}, f["location"]
assert f["noqa_row"] == 6
e = f["fix"]["edits"][0]
assert e["location"]["row"] == 6, e
EOF
then ok nb-2.3-json-cell; else fail nb-2.3-json-cell "$(head -40 j.json)"; fi
"$GRADLEAK" check --no-cache --output-format sarif hazard_cells.ipynb >s.sarif 2>/dev/null
line=$(grep -n '"    total_loss += loss\\n",' hazard_cells.ipynb | cut -d: -f1)
if python3 - s.sarif "$line" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"][0]
reg = r["locations"][0]["physicalLocation"]["region"]
assert reg["startLine"] == int(sys.argv[2]), (reg, sys.argv[2])
p = r["properties"]
assert p["cell"] == 5 and p["cellLine"] == 6 and p["cellColumn"] == 5, p
assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("hazard_cells.ipynb")
EOF
then ok nb-2.4-sarif-region; else fail nb-2.4-sarif-region "$(head -80 s.sarif)"; fi
# GitHub's validator (tests/out/run.sh installs it into build/node)
mt=${SARIF_MULTITOOL:-$ROOT/build/node/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool}
if [ -f "$mt" ]; then
    chmod u+x "$mt" 2>/dev/null
    "$mt" validate --rule-kind "Gh;Sarif" --level "Error;Warning" --output v.json s.sarif >mt.log 2>&1
    if [ -s v.json ] && python3 -c '
import json, sys
rep = json.load(open("v.json", encoding="utf-8-sig"))
sys.exit(1 if any(r.get("level", "warning") in ("error", "warning") for run in rep["runs"] for r in run.get("results", [])) else 0)'; then
        ok nb-2.4b-sarif-multitool
    else
        fail nb-2.4b-sarif-multitool "$(cat mt.log v.json 2>/dev/null | head -c 800)"
    fi
else
    echo "skip nb-2.4b-sarif-multitool (run tests/out/run.sh first: it installs the validator)"
fi
"$GRADLEAK" check --no-cache --output-format github hazard_cells.ipynb >g.txt 2>/dev/null
if grep -q "^::warning file=hazard_cells.ipynb,line=$line,col=1,endLine=$line,endColumn=1,title=GL101 tensor-accumulated-across-iterations::cell 5, line 6, column 5: " g.txt; then
    ok nb-2.5-github
else
    fail nb-2.5-github "$(cat g.txt)"
fi

# ---- nb-3: fixes ----
mkdir fx && cp hazard_cells.ipynb magics.ipynb string_source.ipynb noqa.ipynb fx/ && cp -r fx orig
"$GRADLEAK" check --no-cache --diff fx >diff.txt 2>&1
if grep -qxF -- "--- fx/hazard_cells.ipynb:cell 5" diff.txt && grep -qxF -- "+    total_loss += loss.item()" diff.txt &&
    grep -qxF -- "+x = x.cuda()" diff.txt && diff -r orig fx >/dev/null; then
    ok nb-3.1-diff
else
    fail nb-3.1-diff "$(cat diff.txt)"
fi
"$GRADLEAK" check --no-cache --fix --unsafe-fixes fx >fix.txt 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q "Found 6 errors (6 fixed, 0 remaining)" fix.txt; then ok nb-3.2-fix; else fail nb-3.2-fix "rc=$rc $(cat fix.txt)"; fi
# only the fixed source strings change, line for line
d=$(diff orig/magics.ipynb fx/magics.ipynb | grep '^[<>]')
want='<     "    total += loss"
>     "    total += loss.item()"
<     "x.cuda()\n",
>     "x = x.cuda()\n",
<     "    t.cuda()"
>     "    t = t.cuda()"'
if [ "$d" = "$want" ]; then ok nb-3.3-splice-only-sources; else fail nb-3.3-splice-only-sources "$d"; fi
if cmp -s orig/noqa.ipynb fx/noqa.ipynb; then ok nb-3.4-unfixed-byte-identical; else fail nb-3.4-unfixed-byte-identical "noqa.ipynb changed"; fi
if grep -q '"source": "import torch' fx/string_source.ipynb && grep -q 'total += loss.item()\\n"' fx/string_source.ipynb; then
    ok nb-3.5-string-source-stays-string
else
    fail nb-3.5-string-source-stays-string "$(grep source fx/string_source.ipynb)"
fi
if [ -n "$PY" ]; then
    if out=$("$PY" - fx/*.ipynb <<'EOF' 2>&1
import sys, warnings, nbformat
warnings.simplefilter("ignore")
for f in sys.argv[1:]:
    nb = nbformat.read(f, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
EOF
    ); then ok nb-3.6-valid-nbformat; else fail nb-3.6-valid-nbformat "$out"; fi
else
    echo "skip nb-3.6-valid-nbformat (no python3-nbformat: ./configure --install-deps installs it)"
fi
# escaping as the file escapes: an ASCII-only file (ensure_ascii) gets \u escapes, indent 2, no final newline
python3 - <<'EOF'
import json
src = ["# caf\u00e9 \ud83d\ude00\n", "import torch\n", "x = torch.zeros(3)\n", "x.cuda()\n", "print(x)"]
nb = {"nbformat": 4, "nbformat_minor": 4, "metadata": {"z": 1, "a": [1, 2]},
      "cells": [{"outputs": [], "source": src, "cell_type": "code", "metadata": {"tags": ["t"]}, "execution_count": None}]}
open("ascii.ipynb", "w").write(json.dumps(nb, indent=2, ensure_ascii=True))
nb["cells"][0]["source"] = src[:3] + ["x = x.cuda()\n", "print(x)"]
open("ascii.want", "w").write(json.dumps(nb, indent=2, ensure_ascii=True))
EOF
"$GRADLEAK" check --no-cache --fix ascii.ipynb >/dev/null 2>&1
if cmp -s ascii.ipynb ascii.want; then ok nb-3.7-escaping-kept; else fail nb-3.7-escaping-kept "$(diff ascii.want ascii.ipynb)"; fi

# ---- nb-4: the cache key is the code ----
mkdir c && cp hazard_cells.ipynb c/
(cd c && GRADLEAK_DEBUG_CACHE=1 "$GRADLEAK" check . >/dev/null 2>c1.txt)
python3 - c/hazard_cells.ipynb <<'EOF'
import json, sys
nb = json.load(open(sys.argv[1]))
for i, c in enumerate(nb["cells"]):
    if c["cell_type"] == "code":
        c["execution_count"] = 100 + i
        c["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["run %d\n" % i]}]
json.dump(nb, open(sys.argv[1], "w"), indent=1)
EOF
(cd c && GRADLEAK_DEBUG_CACHE=1 "$GRADLEAK" check . >out2.txt 2>c2.txt)
if grep -q "1 hits, 0 misses" c/c2.txt && grep -q "cell 5:6:5: GL101" c/out2.txt; then ok nb-4.1-outputs-do-not-relint; else fail nb-4.1-outputs-do-not-relint "$(cat c/c1.txt c/c2.txt)"; fi
sed -i 's/total_loss += loss/total_loss += loss  # edited/' c/hazard_cells.ipynb
(cd c && GRADLEAK_DEBUG_CACHE=1 "$GRADLEAK" check . >/dev/null 2>c3.txt)
if grep -q "0 hits, 1 misses" c/c3.txt; then ok nb-4.2-code-relints; else fail nb-4.2-code-relints "$(cat c/c3.txt)"; fi

# ---- nb-5: 50 MB of embedded output ----
python3 - <<'EOF'
import json, base64, os
png = base64.b64encode(os.urandom(37_500_000)).decode()  # 50 MB of base64
src = ["import torch\n", "model = torch.nn.Linear(2, 2)\n", "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
       "total = 0\n", "for x in [torch.randn(2)] * 3:\n", "    loss = model(x).sum()\n", "    loss.backward()\n",
       "    opt.step()\n", "    total += loss"]
nb = {"cells": [{"cell_type": "code", "execution_count": 3, "id": "a", "metadata": {},
                 "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": ["<Figure>"]}}],
                 "source": src}],
      "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}
open("huge.ipynb", "w").write(json.dumps(nb, indent=1) + "\n")
EOF
cp huge.ipynb huge.orig
start=$(date +%s.%N)
"$GRADLEAK" check --no-cache huge.ipynb >h.txt 2>&1
end=$(date +%s.%N)
secs=$(echo "$end - $start" | bc)
if grep -q "huge.ipynb:cell 1:9:5: GL101" h.txt && [ "$(echo "$secs < 5" | bc)" = 1 ]; then
    ok "nb-5.1-huge-outputs (${secs}s)"
else
    fail nb-5.1-huge-outputs "${secs}s $(head -5 h.txt)"
fi
"$GRADLEAK" check --no-cache --fix huge.ipynb >/dev/null 2>&1
d=$(cmp -l huge.orig huge.ipynb 2>&1 | head -1)
if [ "$(stat -c %s huge.ipynb)" = $(($(stat -c %s huge.orig) + 7)) ] &&
    [ "$(diff <(grep -v 'total += loss' huge.orig) <(grep -v 'total += loss' huge.ipynb) | wc -l)" = 0 ]; then
    ok nb-5.2-huge-fix-keeps-outputs
else
    fail nb-5.2-huge-fix-keeps-outputs "$d"
fi

# ---- nb-6: validate runs the notebook as a script (IPython lines masked), results in cells ----
if /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
    mkdir v && cp "$ROOT/fixtures/run/gl101_accum_then_backward.py" v/accum.py
    python3 - v/accum.py v/accum.ipynb <<'EOF'
import json, sys
parts = open(sys.argv[1]).read().split("\n\n\n")
cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# GL101 as a notebook"]},
         {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
          "source": ["%matplotlib inline\n", "!echo setup\n", "%load_ext autoreload"]},
         {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["%%bash\n", "exit 3"]}]
for p in parts:
    cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                  "source": p.strip("\n").splitlines(keepends=True)})
nb = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
open(sys.argv[2], "w").write(json.dumps(nb, indent=1) + "\n")
EOF
    (cd v && "$GRADLEAK" validate --python /usr/bin/python3 accum.ipynb accum.py >val.txt 2>&1)
    # the same iterations, classes and verdict for the notebook (cell 6, line 9) as for the script
    # (line 24); the measured bytes differ from run to run (a few hundred bytes on the host)
    nbv=$(grep '^accum.ipynb:cell 6:9 GL101 ' v/val.txt | sed 's/  */ /g' | cut -d' ' -f4- | sed 's/ [0-9.]* s$//; s/[-+]\{0,1\}[0-9.]* [KMG]\{0,1\}B\/it/N\/it/g')
    pyv=$(grep '^accum.py:24 GL101 ' v/val.txt | sed 's/  */ /g' | cut -d' ' -f3- | sed 's/ [0-9.]* s$//; s/[-+]\{0,1\}[0-9.]* [KMG]\{0,1\}B\/it/N\/it/g')
    if [ -n "$pyv" ] && [ "$nbv" = "$pyv" ]; then
        ok nb-6.1-validate-notebook-as-script
    else
        fail nb-6.1-validate-notebook-as-script "[$nbv] vs [$pyv] $(cat v/val.txt)"
    fi
    # JSON: the finding's and the measured loop's lines are the cell's, with the cell named
    (cd v && "$GRADLEAK" validate --python /usr/bin/python3 --output-format json accum.ipynb >val.json 2>val.err)
    if python3 - v/val.json <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
r = [x for x in rows if x["code"] == "GL101"][0]
at = r["measuredAt"]
assert (r["cell"], r["line"]) == (6, 9), r
assert r["loopCell"] == at["cell"] and r["loopLine"] == at["line"] and at["line"] < 40, r
EOF
    then
        ok nb-6.2-validate-json-cells
    else
        fail nb-6.2-validate-json-cells "$(cat v/val.json v/val.err)"
    fi
else
    echo "skip nb-6.1-validate-notebook-as-script (no python3-torch)"
fi

[ "$fails" = 0 ]
