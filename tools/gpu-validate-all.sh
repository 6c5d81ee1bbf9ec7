#!/usr/bin/env bash
# Runs every runnable fixture (fixtures/run/), leaky and fixed, with `gradleak validate` on a GPU
# host, and prints per finding: verdict, leaky and fixed slope (or peak), r², iterations and the
# run's wall time with its split (start / warm-up / sampled). With 2+ GPUs (nvidia-smi -L), the same
# set again spread over two GPUs (--gpus 0,1): the verdicts must match, and the wall times of both
# are printed. Also the framework-driven fixture with its --cmd.
#
#   tools/gpu-validate-all.sh /path/to/gradleak [PYTHON]      (from anywhere; PYTHON default python3)
#
# The binary may be a static build without the share/ folder: the harness is then taken from this
# checkout (src/validate/harness). Results (JSON, stderr) go to $OUT (default /tmp/gpu-validate).
# Exit status: 0 when every run finished and the 1- and 2-GPU verdicts agree, 1 otherwise.
set -u
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 /path/to/gradleak [PYTHON]" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PY=${2:-python3}
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
if [ -z "${GRADLEAK_HARNESS_DIR:-}" ] && [ ! -d "$(dirname "$BIN")/share/gradleak/harness" ]; then
    export GRADLEAK_HARNESS_DIR=$ROOT/src/validate/harness
fi
OUT=${OUT:-/tmp/gpu-validate}
mkdir -p "$OUT"
ITERS=${ITERS:-30}
status=0

"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.device_count())' || status=1
nvidia-smi -L 2>/dev/null
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
echo "GPUs: ${ngpu:-0}"

# run NAME GPUS [validate args...]: one validate invocation, its wall time in $OUT/NAME.wall
run() {
    local name=$1 gpus=$2
    shift 2
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" validate --no-history --device cuda --gpus "$gpus" --iterations "$ITERS" --timeout 300 --python "$PY" \
        --output-format json "$@" >"$OUT/$name.json" 2>"$OUT/$name.err"
    local rc=$?
    t1=$(date +%s.%N)
    echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" >"$OUT/$name.wall"
    t1=$(cut -d' ' -f2 "$OUT/$name.wall")
    echo "== $name: exit $(cut -d' ' -f1 "$OUT/$name.wall"), wall ${t1} s ($(tail -1 "$OUT/$name.err"))"
}

report() {
    "$PY" - "$OUT/$1.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
def slope(run, peak):
    if not run:
        return "-"
    if peak:
        return "peak %.1f MB" % (run.get("peakBytes", 0) / 1e6)
    if "bytesPerIteration" not in run:
        return "-"
    return "%+.1f KB/it r2 %.2f" % (run["bytesPerIteration"] / 1e3, run.get("r2", 0))
for r in rows:
    peak = r.get("measure") == "peak"
    lk, fx = r.get("leaky"), r.get("fixed")
    t = (lk or {}).get("time", {})
    split = "start %.1f warm %.1f sampled %.1f" % (t.get("start", 0), t.get("warmup", 0), t.get("sampled", 0)) if t else ""
    print("%-46s %-16s leaky %-24s fixed %-24s iters %s/%s  %.1f s  %s  gpu %s/%s" % (
        "%s:%d %s" % (r["path"], r["line"], r["code"]), r["verdict"], slope(lk, peak), slope(fx, peak),
        (lk or {}).get("iterations", 0), (fx or {}).get("iterations", "-"), r.get("seconds", 0), split,
        (lk or {}).get("gpu", "-"), (fx or {}).get("gpu", "-")))
    at = r.get("measuredAt", {})
    if at.get("text"):
        print("    " + at["text"])
    if r.get("reason"):
        print("    " + r["reason"][:300])
EOF
}

verdicts() {
    "$PY" -c '
import json, sys
for r in sorted(json.load(open(sys.argv[1])), key=lambda r: (r["path"], r["line"], r["code"])):
    print(r["path"], r["line"], r["code"], r["verdict"])' "$OUT/$1.json"
}

run gpu1 0 fixtures/run/
report gpu1
(cd fixtures/run/framework_driven && run framework 0 --cmd "python fit.py" litmodule.py)
report framework
if [ "${ngpu:-0}" -ge 2 ]; then
    run gpu2 0,1 fixtures/run/
    report gpu2
    if [ "$(verdicts gpu1)" = "$(verdicts gpu2)" ]; then
        echo "1 GPU and 2 GPUs: same verdicts; wall $(cut -d' ' -f2 "$OUT/gpu1.wall") s against $(cut -d' ' -f2 "$OUT/gpu2.wall") s"
    else
        echo "1 GPU and 2 GPUs: verdicts DIFFER:"
        diff <(verdicts gpu1) <(verdicts gpu2)
        status=1
    fi
else
    echo "(one GPU: the 2-GPU spread was not run)"
fi
for f in "$OUT"/*.wall; do
    [ "$(cut -d' ' -f1 "$f")" = 2 ] && { echo "$(basename "$f" .wall): gradleak exited 2 (see $OUT/$(basename "$f" .wall).err)"; status=1; }
done
exit $status
