#!/usr/bin/env bash
# GPU proof for the validate sandbox (run on the device machine from the repository root, after
# ./configure --install-deps && ninja): every fixture of fixtures/run/ validated with --device cuda
# inside bubblewrap, plus a probe that CUDA initialises in the sandbox and /tmp writes stay private.
# Prints the table, then "gpu-sandbox: ok" or "gpu-sandbox: FAIL <why>"; exit 1 on failure.
set -u
cd "$(dirname "$0")/.." || exit 2
GL=${GRADLEAK:-build/gradleak}
PY=${GRADLEAK_PYTHON:-$(command -v python3)}
command -v bwrap >/dev/null 2>&1 || { echo "gpu-sandbox: FAIL bwrap is not installed (./configure --install-deps)"; exit 1; }
tag=$RANDOM$RANDOM
# 1. CUDA inside the sandbox (same driver paths as validate: /dev/nvidia*, a /proc of its own)
out=$(build/tests/sandbox_run --cuda --timeout 120 -- "$PY" -c "
import torch
open('/tmp/gpu-escape-$tag', 'w').write('x')
print('cuda', torch.cuda.is_available(), torch.cuda.device_count())
x = torch.ones(1 << 20, device='cuda'); print('sum', float(x.sum()))" 2>&1)
echo "$out"
fs=$(printf '%s\n' "$out" | sed -n 's/^fs=//p')
if [ "$fs" != 1 ] || ! printf '%s' "$out" | grep -q '^cuda True' || [ -e /tmp/gpu-escape-$tag ]; then
    rm -f /tmp/gpu-escape-$tag
    echo "gpu-sandbox: FAIL CUDA in the sandbox (fs=$fs)"; exit 1
fi
# 2. the fixtures, confirmed on the GPU as on the CPU
"$GL" validate --no-history --device cuda --python "$PY" --timeout 120 fixtures/run/ | tee /tmp/gpu-sandbox-table.$tag
if grep -q 'no filesystem isolation' /tmp/gpu-sandbox-table.$tag; then echo "gpu-sandbox: FAIL no filesystem isolation"; exit 1; fi
n=$(grep -c ' confirmed ' /tmp/gpu-sandbox-table.$tag)
rm -f /tmp/gpu-sandbox-table.$tag
if [ "$n" -ge 8 ]; then echo "gpu-sandbox: ok ($n confirmed)"; else echo "gpu-sandbox: FAIL only $n confirmed (8 expected, as on CPU)"; exit 1; fi
