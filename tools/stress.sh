#!/usr/bin/env bash
# Stress: lints N generated training files (default 10,000; every one with hazards, each a little
# different) with -j 2, and the same for N/10, and prints the peak RSS of both. Memory must stay
# flat: a finished file's result waits in a temporary file, not in memory, so what grows with N is
# only the list of paths and a few dozen bytes per file. Fails when the peak RSS at N files is more
# than STRESS_MAX_RATIO (default 1.5) times the peak at N/10, when the two outputs disagree on the
# files they share, or when gradleak exits with an error.
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
max_ratio=${STRESS_MAX_RATIO:-1.5}
run() {
    local dir=$1 label=$2 rc
    set +e
    /usr/bin/time -f "%M %e" -o "$T/time" "$bin" check --isolated --no-cache -j 2 --output-format concise \
        "$dir" >"$T/$label.out" 2>"$T/err"
    rc=$?
    set -e
    read -r kb secs < <(tail -n 1 "$T/time")
    files=$(find "$dir" -name '*.py' | wc -l)
    findings=$(grep -c ': GL' "$T/$label.out" || true)
    echo "stress: $label: $files files, $findings findings, exit $rc, ${secs} s, peak RSS $kb KiB"
    [ "$rc" -le 1 ] || { head -n 5 "$T/err"; exit 1; }
    eval "kb_$label=$kb"
}
run "$T/small" small
run "$T/big" big
# the files of the small run are the first of the big one: the same findings, in the same order
if ! diff <(grep ': GL' "$T/small.out" | sed "s|^$T/small/||") \
          <(grep ': GL' "$T/big.out" | sed "s|^$T/big/||" | head -n "$(grep -c ': GL' "$T/small.out")") >/dev/null; then
    echo "stress: FAIL: the $small files' findings differ between the two runs"
    exit 1
fi
ratio=$(awk -v a="$kb_big" -v b="$kb_small" 'BEGIN { printf "%.2f", a / b }')
if awk -v r="$ratio" -v m="$max_ratio" 'BEGIN { exit !(r > m) }'; then
    echo "stress: FAIL: peak RSS grew ${ratio}x from $small to $n files (at most ${max_ratio}x)"
    exit 1
fi
echo "stress: ok: peak RSS ${ratio}x from $small to $n files (at most ${max_ratio}x)"
