#!/usr/bin/env bash
# Stress: lints N generated training files (default 10,000; every one with hazards, each a little
# different) with -j 2, and the same for N/10, and prints the peak RSS of both: memory must stay
# flat (per-file memory is freed or bounded, not kept per file beyond its findings).
#   tools/stress.sh [N]          GRADLEAK=build/gradleak by default
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
bin=${GRADLEAK:-build/gradleak}
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-stress.XXXXXX")
trap 'rm -rf "$T"' EXIT
python3 - "$T" "$n" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
tmpl = '''import gc
import torch
from torch.utils.data import DataLoader


class Net{i}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM({a}, {b})
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return out


def train_{i}(model, ds, opt, epochs={e}):
    total = 0
    losses = []
    for epoch in range(epochs):
        for step, (x, y) in enumerate(DataLoader(ds, batch_size={bs})):
            out = model(x.cuda())
            loss = (out - y).pow(2).mean()
            opt.zero_grad()
            loss.backward({retain})
            opt.step()
            total += loss{item}
            losses.append(loss{detach})
            {extra}
    return total, losses


def evaluate_{i}(model, x, hidden):
    for t in range({steps}):
        x, hidden = model(x, hidden)
    return x
'''
extras = ['torch.cuda.empty_cache()', 'gc.collect()', 'pass', 'x.cuda()', 'print(loss.data[0])']
for i in range(n):
    d = os.path.join(root, 'big', 'p%03d' % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'train_%05d.py' % i), 'w') as f:
        f.write(tmpl.format(i=i, a=random.randint(1, 64), b=random.randint(1, 64), e=random.randint(1, 9),
                            bs=random.choice([8, 16, 32]), retain=random.choice(['', 'retain_graph=True']),
                            item=random.choice(['', '.item()']), detach=random.choice(['', '.detach()']),
                            extra=random.choice(extras), steps=random.randint(2, 50)))
PY
small=$((n / 10))
mkdir -p "$T/small"
for d in "$T"/big/p*; do
    k=${d##*/p}; k=$((10#$k))
    [ "$k" -lt $((small / 100)) ] && cp -r "$d" "$T/small/"
done
run() {
    local dir=$1 label=$2 rc
    set +e
    /usr/bin/time -f "%M %e" -o "$T/time" "$bin" check --isolated --no-cache -j 2 --output-format concise "$dir" >"$T/out" 2>"$T/err"
    rc=$?
    set -e
    read -r kb secs < <(tail -n 1 "$T/time")
    files=$(find "$dir" -name '*.py' | wc -l)
    findings=$(grep -c ': GL' "$T/out" || true)
    echo "stress: $label: $files files, $findings findings, exit $rc, ${secs} s, peak RSS $((kb / 1024)) MiB"
    [ "$rc" -le 1 ] || { head -n 5 "$T/err"; exit 1; }
}
run "$T/small" "$small files"
run "$T/big" "$n files"
