#!/usr/bin/env bash
# `gradleak validate --device cpu` end to end: the fixtures in fixtures/run/ (one per growth rule,
# and one per project shape: a trainer method, the loop in another file, two findings in one loop,
# a Lightning-style module, a helper returning the carried state, a sampling function, a
# framework-driven module; leaky and fixed), the loop that drives a finding and its call path
# (--plan, JSON), the reasons for lines nothing repeats, fix sets (fix incomplete, fix crashed,
# the no_grad fix applied by the probe), runs spread over a fake GPU list, the import hook (a
# flagged module imported by the program), the inconclusive verdicts (never reached, crashed, timed
# out), SARIF evidence, --fail-on, and the HTML report rendered in headless Chromium. Needs a Python with torch (Debian's python3-torch); without one
# the torch cases are skipped with a note, except in CI (CI or GRADLEAK_REQUIRE_TORCH set), where
# that is a failure. One line per case: "ok <id>" / "FAIL <id> <why>".
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-validate-test.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
nfail=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; nfail=$((nfail + 1)); }
RC=0
gl() { "$GRADLEAK" "$@" >"$T/out" 2>"$T/err" </dev/null; RC=$?; }

# ---- without torch ----
gl validate --device bogus fixtures/run
if [ $RC = 2 ] && grep -q 'expected auto, cuda or cpu' "$T/err"; then ok validate/usage-device; else fail validate/usage-device "rc=$RC $(cat "$T/err")"; fi
gl validate --iterations 3 fixtures/run
if [ $RC = 2 ]; then ok validate/usage-iterations; else fail validate/usage-iterations "rc=$RC"; fi
GRADLEAK_HARNESS_DIR=/nonexistent "$GRADLEAK" validate fixtures/run >"$T/out" 2>"$T/err"; RC=$?
if [ $RC = 2 ] && grep -q 'harness' "$T/err"; then ok validate/harness-missing; else fail validate/harness-missing "rc=$RC $(cat "$T/err")"; fi
mkdir -p "$T/clean" && printf 'import torch\n\nx = torch.zeros(3)\n' >"$T/clean/a.py"
gl validate "$T/clean"
if [ $RC = 0 ] && grep -q 'no growth findings' "$T/out"; then ok validate/nothing-to-validate; else fail validate/nothing-to-validate "rc=$RC $(cat "$T/out")"; fi
# a run killed where it had no PID namespace (nothing took its processes with it) left a setsid
# daemon in its working folder: the next validate kills it before it removes the folder
mkdir -p "$T/left/tmp" "$T/left/proj"
dead=$(sh -c 'echo $$')
stale="$T/left/tmp/gradleak-validate-$dead.AbCdEf"
mkdir -p "$stale/proj"
lmark="29$RANDOM.$RANDOM"
(cd "$stale/proj" && setsid sleep "$lmark" </dev/null >/dev/null 2>&1 &)
for _ in $(seq 50); do pgrep -f "sleep $lmark" >/dev/null && break; sleep 0.1; done
lstarted=$(pgrep -f "sleep $lmark" | grep -c .)
cp fixtures/run/gl101_val_loss.py "$T/left/proj/leak.py"
TMPDIR=$T/left/tmp "$GRADLEAK" validate --no-history --python /bin/false --device cpu --timeout 10 \
    "$T/left/proj/leak.py" >"$T/out" 2>"$T/err" </dev/null
for _ in $(seq 20); do pgrep -f "sleep $lmark" >/dev/null || break; sleep 0.1; done
lleft=$(pgrep -f "sleep $lmark" | grep -c .)
if [ "$lstarted" = 1 ] && [ "$lleft" = 0 ] && [ ! -e "$stale" ]; then ok validate/stale-run-daemon-killed
else fail validate/stale-run-daemon-killed "started=$lstarted left=$lleft folder=$(ls -d "$stale" 2>/dev/null) $(tail -2 "$T/err")"; fi
for p in $(pgrep -f "sleep $lmark"); do kill -9 "$p"; done
# the configuration `check` reads (exclude, per-file-ignores) decides what validate lints too: one
# project run (src/engine/run.h) for both
mkdir -p "$T/conf/skip"
printf 'import torch\n\n\ndef train(model, loader, opt):\n    total = 0\n    for x, y in loader:\n        loss = model(x).sum()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n        total += loss\n    return total\n' >"$T/conf/a.py"
cp "$T/conf/a.py" "$T/conf/c.py" && cp "$T/conf/a.py" "$T/conf/skip/b.py"
printf 'exclude = ["skip"]\n\n[per-file-ignores]\n"c.py" = ["GL101"]\n' >"$T/conf/gradleak.toml"
(cd "$T/conf" && "$GRADLEAK" validate --plan . >"$T/out" 2>"$T/err"); RC=$?
checked=$(cd "$T/conf" && "$GRADLEAK" check --no-cache --output-format concise . | grep -c ': GL101')
if [ $RC = 0 ] && [ "$checked" = 1 ] && grep -q '^  a.py:11 GL101' "$T/out" && ! grep -q 'c.py\|b.py' "$T/out"; then
    ok validate/configuration-as-check
else
    fail validate/configuration-as-check "rc=$RC check=$checked: $(head -c 400 "$T/out") $(head -c 200 "$T/err")"
fi
gl validate --help
if [ $RC = 0 ] && grep -q -- '--fail-on' "$T/out" && grep -q sandbox "$T/out"; then ok validate/help; else fail validate/help "rc=$RC"; fi
"$GRADLEAK" check fixtures/run/*_fixed.py >"$T/out" 2>&1; RC=$?
if [ $RC = 0 ]; then ok validate/fixed-forms-lint-clean; else fail validate/fixed-forms-lint-clean "$(head -5 "$T/out")"; fi

# what drives each finding, without running anything (--plan)
gl validate --plan fixtures/run/
plan=$(cat "$T/out")
want_plan() { # id, fixed string the plan must hold
    if [ $RC = 0 ] && grep -qF -- "$2" <<<"$plan"; then ok "validate/plan/$1"; else fail "validate/plan/$1" "no '$2' in: $(head -c 400 <<<"$plan")"; fi
}
want_plan trainer-method "sampled at the loop in fixtures/run/trainer_method.py:28 that calls train_step"
want_plan trainer-method-path "call path: loop at fixtures/run/trainer_method.py:28 -> fixtures/run/trainer_method.py:29 Trainer.train_step()"
want_plan other-file "sampled at the loop in fixtures/run/two_files/train.py:18 that calls training_step"
want_plan other-file-program "python fixtures/run/two_files/train.py"
want_plan lightning-style "sampled at the loop in fixtures/run/lightning_style.py:34 that calls training_step"
want_plan framework "not run: driven by a framework; give --cmd"
want_plan no-grad-fix "fixed run: torch.no_grad() around the loop at fixtures/run/sampling_function.py:28"
want_plan two-in-one-loop "sampled at the loop in fixtures/run/two_in_one_loop.py:19 (Evaluator.run)"
# lines that nothing repeats: each reason says which case it is
mkdir -p "$T/once"
cat >"$T/once/base.py" <<'EOF'
import sys
import torch
import torch.nn as nn


class Lit(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.seen = []

    def training_step(self, batch, batch_idx):
        loss = self.net(batch).sum()
        self.seen.append(loss)
        return loss
EOF
{ cat "$T/once/base.py"; printf '\n\ndef main():\n    Lit().training_step(torch.zeros(3, 4), 1)\n\n\nif __name__ == "__main__":\n    main()\n'; } >"$T/once/once.py"
{ cat "$T/once/base.py"; printf '\n\nif __name__ == "__main__":\n    Lit().training_step(torch.zeros(3, 4), 1)\n'; } >"$T/once/guard.py"
{ cat "$T/once/base.py"; printf '\n\ndef main(args):\n    if args.debug:\n        Lit().training_step(torch.zeros(3, 4), 1)\n\n\nif __name__ == "__main__":\n    main(None)\n'; } >"$T/once/flag.py"
rm "$T/once/base.py"
gl validate --plan "$T/once"
plan=$(cat "$T/out")
want_plan called-once "'Lit.training_step' is called once ($T/once/once.py:19, in main), not in a loop: nothing repeats it"
want_plan main-guard "'Lit.training_step' is called once, under the \`if __name__ == \"__main__\":\` guard ($T/once/guard.py:19)"
want_plan cli-flag "'Lit.training_step' runs only when a command-line flag is set (\`if args.debug:\` at $T/once/flag.py:19)"
# findings through another file's summary, as `check` finds them (the helper read from disk)
mkdir -p "$T/xfile"
printf 'import torch\n\n\ndef compute_loss(model, x):\n    return model(x).sum()\n' >"$T/xfile/helpers.py"
printf 'import torch\nfrom helpers import compute_loss\n\n\ndef evaluate(model, batches):\n    total = 0\n    for x in batches:\n        total += compute_loss(model, x)\n    return total\n\n\nif __name__ == "__main__":\n    print(evaluate(torch.nn.Linear(4, 4), [torch.zeros(4)] * 50))\n' >"$T/xfile/main.py"
gl validate --plan "$T/xfile/main.py"
plan=$(cat "$T/out")
want_plan cross-file-summary "$T/xfile/main.py:8 GL101"
gl validate --gpus , fixtures/run
if [ $RC = 2 ] && grep -q -- '--gpus: no GPU' "$T/err"; then ok validate/usage-gpus; else fail validate/usage-gpus "rc=$RC $(cat "$T/err")"; fi

# ---- with torch ----
PY=
for p in ${GRADLEAK_PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' >/dev/null 2>&1; then PY=$(command -v "$p"); break; fi
done
if [ -z "$PY" ]; then
    if [ -n "${CI:-}${GRADLEAK_REQUIRE_TORCH:-}" ]; then
        fail validate/torch "no Python with torch (CI must have Debian's python3-torch: ./configure --install-deps --with-tests)"
    else
        echo "note: validate/torch cases skipped: no Python with torch here (./configure --install-deps --with-tests installs python3-torch)"
    fi
    [ $nfail -eq 0 ]
    exit
fi

# 1. every fixture, one invocation, CPU; default --fail-on confirmed -> exit 1
gl validate --no-history --device cpu --iterations 10 --timeout 120 --python "$PY" --output-format json --report "$T/fixtures.html" fixtures/run/
cp "$T/out" "$T/fixtures.json"
if [ $RC = 1 ]; then ok validate/fixtures-exit-1; else fail validate/fixtures-exit-1 "rc=$RC $(tail -3 "$T/err")"; fi
# id file[:line] code verdict predicted measured(!x = not x) fix(= the fixed run must be flat)
while read -r id file code verdict pred meas needfix; do
    got=$("$PY" - "$T/fixtures.json" "$file" "$code" <<'EOF'
import json, sys
name, _, line = sys.argv[2].partition(":")
rows = [r for r in json.load(open(sys.argv[1])) if r["path"].endswith("/" + name) and r["code"] == sys.argv[3]
        and (not line or r["line"] == int(line))]
if len(rows) != 1:
    print("rows=%d" % len(rows)); sys.exit()
r = rows[0]
fx = r.get("fixed", {}).get("bytesPerIteration")
print(r["verdict"].replace(" ", "_"), r["predictedClass"], r["measuredClass"], "none" if fx is None else int(fx),
      int(r.get("leaky", {}).get("bytesPerIteration") or 0), (r.get("reason") or "-").replace(" ", "_"))
EOF
)
    set -- $got
    why="got: $got"
    good=1
    [ "${1:-}" = "$verdict" ] || good=0
    [ "${2:-}" = "$pred" ] || good=0
    case $meas in
        !*) [ "${3:-}" != "${meas#!}" ] || good=0 ;;
        *) [ "${3:-}" = "$meas" ] || good=0 ;;
    esac
    if [ "$needfix" = fix ]; then
        # the fixed run is flat: under 4 KB per iteration
        if [ "${4:-none}" = none ] || [ "${4#-}" -ge 4096 ]; then good=0; fi
    fi
    if [ $good = 1 ]; then ok "validate/fixture/$id"; else fail "validate/fixture/$id" "$why"; fi
done <<'EOF'
gl101-val-loss gl101_val_loss.py GL101 confirmed device device fix
gl101-after-backward-host gl101_running_loss_after_backward.py GL101 confirmed host host fix
gl101-accum-then-backward-host gl101_accum_then_backward.py GL101 confirmed host host fix
gl102-collect gl102_collect_outputs.py GL102 confirmed device device fix
gl103-self-hidden gl103_self_hidden.py GL103 confirmed device device -
gl103-self-hidden-retain gl103_self_hidden.py GL105 confirmed device device -
gl104-sample gl104_sample_chars.py GL104 confirmed device device fix
gl105-tbptt-retain gl105_tbptt_retain_graph.py GL105 confirmed device device fix
gl105-tbptt-state gl105_tbptt_retain_graph.py GL103 confirmed device device fix
seed000-generation seed000_evaluate.py:44 GL104 confirmed device device fix
seed000-priming-two-iterations seed000_evaluate.py:38 GL104 inconclusive device none -
trainer-method trainer_method.py GL102 confirmed host host fix
loop-in-other-file two_files/trainer.py GL102 confirmed host host fix
two-in-one-loop-gl101 two_in_one_loop.py GL101 confirmed device device fix
two-in-one-loop-gl102 two_in_one_loop.py GL102 confirmed device device fix
lightning-style-fit-loop lightning_style.py GL102 confirmed host host fix
helper-returns-state helper_returns_state.py GL105 fix_crashed device device -
sampling-function-no-grad-fix sampling_function.py GL104 confirmed device device fix
framework-without-cmd framework_driven/litmodule.py GL102 inconclusive host none -
gl109-running-stats gl109_running_stats.py GL109 confirmed device device fix
EOF
if grep -q 'Call path' "$T/fixtures.html" && grep -q 'calls <code>Trainer.train_step()</code>' "$T/fixtures.html" &&
    grep -q 'Measured at:</b> sampled at the loop in fixtures/run/trainer_method.py:28 that calls train_step' "$T/fixtures.html"; then
    ok validate/report-call-path
else fail validate/report-call-path "$(grep -c 'Call path' "$T/fixtures.html")"; fi
# the evidence of the project shapes: the measured loop, the call path, the fix, the time split
shape=$("$PY" - "$T/fixtures.json" <<'EOF'
import json, sys
rows = {(r["path"].split("fixtures/run/")[-1], r["code"]): r for r in json.load(open(sys.argv[1]))}
def show(key):
    r = rows.get(key)
    if r is None:
        print(key, "missing"); return
    at = r["measuredAt"]
    hop = at["callPath"][0] if at["callPath"] else {}
    print(key[0], at["kind"], at["path"].split("fixtures/run/")[-1], at["line"], at.get("calls", "-"),
          hop.get("line", "-"), hop.get("calls", "-"))
show(("trainer_method.py", "GL102"))
show(("two_files/trainer.py", "GL102"))
r = rows[("framework_driven/litmodule.py", "GL102")]
print("framework", r.get("reason"))
r = rows[("sampling_function.py", "GL104")]
print("no_grad", "torch.no_grad() around the loop" in r.get("fix", ""))
r = rows[("helper_returns_state.py", "GL105")]
print("crash", "because of the fix" in r.get("reason", ""), "backward through the graph a second time" in r.get("reason", ""))
t = rows[("gl101_val_loss.py", "GL101")]["leaky"].get("time", {})
print("split", sorted(t), t.get("start", 0) > 0 and t.get("sampled", 0) > 0)
EOF
)
want_shape() {
    if grep -qxF -- "$2" <<<"$shape"; then ok "validate/shape/$1"; else fail "validate/shape/$1" "no '$2' in: $shape"; fi
}
want_shape trainer-method "trainer_method.py loop trainer_method.py 28 train_step 29 Trainer.train_step"
want_shape other-file "two_files/trainer.py loop two_files/train.py 18 training_step 19 Classifier.training_step"
want_shape framework "framework driven by a framework; give --cmd"
want_shape no-grad-fix "no_grad True"
want_shape fix-crashed "crash True True"
want_shape time-split "split ['rest', 'sampled', 'start', 'warmup'] True"

# a framework-driven module with --cmd: sampled at each call of training_step
(cd fixtures/run/framework_driven && "$GRADLEAK" validate --no-history --cmd "python fit.py" --python "$PY" --device cpu \
    --iterations 10 --output-format json litmodule.py >"$T/out" 2>"$T/err"); RC=$?
fw=$("$PY" -c "
import json, sys
r = json.load(open('$T/out'))[0]
print(r['verdict'], r['measuredAt']['kind'], r['measuredAt']['function'])" 2>&1)
if [ $RC = 1 ] && [ "$fw" = "confirmed calls LitClassifier.training_step" ]; then ok validate/framework-with-cmd
else fail validate/framework-with-cmd "rc=$RC $fw $(tail -3 "$T/err")"; fi

# a loop with a second hazard that check does not see: the fixed run still grows
mkdir -p "$T/hidden"
cat >"$T/hidden/hidden.py" <<'EOF'
import torch
import torch.nn as nn


def evaluate(model, batches):
    total = 0.0
    for i, x in enumerate(batches):
        logits = model(x)
        total += logits.sum()
        setattr(model, "last_%d" % i, logits)
    return float(total)


model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10))
g = torch.Generator().manual_seed(0)
print(evaluate(model, [torch.randn(64, 256, generator=g) for _ in range(100)]))
EOF
# (--select GL101: GL108 reports the loop too, and its fix, no_grad around the loop, would hide the second hazard)
gl validate --no-history --python "$PY" --device cpu --iterations 10 --select GL101 "$T/hidden/hidden.py"
if [ $RC = 1 ] && grep -q 'fix incomplete' "$T/out" && grep -q 'fixed run still grows +.*/iter: another hazard on this loop?' "$T/out"; then
    ok validate/fix-incomplete
else fail validate/fix-incomplete "rc=$RC $(cat "$T/out")"; fi

# progress on a terminal: finding k of n, leaky/fixed, iteration i of N (script(1) gives it a tty)
if command -v script >/dev/null 2>&1; then
    script -qfc "$GRADLEAK validate --no-history --python $PY --device cpu --iterations 10 --select GL102 fixtures/run/gl102_collect_outputs.py" \
        "$T/tty" >/dev/null 2>&1 </dev/null
    if tr '\r' '\n' <"$T/tty" | grep -aq 'finding 1 of 1: leaky run, iteration [0-9]* of 10' &&
        tr '\r' '\n' <"$T/tty" | grep -aq 'finding 1 of 1: fixed run, iteration'; then ok validate/progress-tty
    else fail validate/progress-tty "$(tr '\r' '\n' <"$T/tty" | tail -3)"; fi
fi
# a peak-class measure (GL108's, run here on GL101 through the test hook): leaky vs fixed peak
GRADLEAK_VALIDATE_PEAK=GL101 "$GRADLEAK" validate --no-history --python "$PY" --device cpu --iterations 10 \
    --select GL101 --output-format json fixtures/run/gl101_val_loss.py >"$T/out" 2>"$T/err"; RC=$?
pk=$("$PY" -c "
import json
r = json.load(open('$T/out'))[0]
print(r['measure'], r['verdict'], r['leaky']['peakBytes'] > 1e6 and r['fixed']['peakBytes'] < r['leaky']['peakBytes'] / 2)" 2>&1)
if [ $RC = 1 ] && [ "$pk" = "peak confirmed True" ]; then ok validate/peak-measure; else fail validate/peak-measure "rc=$RC $pk"; fi
GRADLEAK_VALIDATE_PEAK=GL101 "$GRADLEAK" validate --no-history --python "$PY" --device cpu --iterations 10 \
    --select GL101 fixtures/run/gl101_val_loss.py >"$T/out" 2>"$T/err"
if grep -q 'peak [0-9.]* [KM]B *peak [0-9.]* [KMB]' "$T/out"; then ok validate/peak-table; else fail validate/peak-table "$(cat "$T/out")"; fi

# runs spread over a (fake) list of two GPUs: the same verdicts as one at a time, each run on its slot
set -- fixtures/run/gl101_val_loss.py fixtures/run/gl102_collect_outputs.py fixtures/run/sampling_function.py fixtures/run/two_in_one_loop.py
gl validate --no-history --python "$PY" --device cpu --iterations 10 --output-format json "$@"
cp "$T/out" "$T/serial.json"
gl validate --no-history --python "$PY" --device cpu --gpus 0,1 --iterations 10 --output-format json "$@"
cp "$T/out" "$T/spread.json"
cmp=$("$PY" - "$T/serial.json" "$T/spread.json" <<'EOF'
import json, sys
def key(path):
    return sorted((r["path"], r["line"], r["code"], r["verdict"]) for r in json.load(open(path)))
spread = json.load(open(sys.argv[2]))
gpus = sorted({r[v]["gpu"] for r in spread for v in ("leaky", "fixed") if v in r})
print(key(sys.argv[1]) == key(sys.argv[2]), len(key(sys.argv[1])), gpus)
EOF
)
if [ "$cmp" = "True 8 ['0', '1']" ] && grep -q 'runs of 4 programs on 2 GPUs (0,1)' "$T/err"; then ok validate/gpus-same-as-serial
else fail validate/gpus-same-as-serial "$cmp $(tail -2 "$T/err")"; fi

# 2. the flagged file is a module the program imports (served by the import hook), with --cmd
mkdir -p "$T/proj/pkg"
cat >"$T/proj/pkg/__init__.py" </dev/null
sed -n '1,/^def main/p' fixtures/run/gl101_val_loss.py | sed '$d' >"$T/proj/pkg/evalmod.py"
cat >"$T/proj/main.py" <<'EOF'
import torch
import torch.nn as nn
from pkg.evalmod import evaluate, make_batches

model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 10))
print(evaluate(model, make_batches(100), nn.CrossEntropyLoss()))
EOF
(cd "$T/proj" && "$GRADLEAK" validate --cmd "python main.py" --python "$PY" --device cpu --iterations 10 \
    --select GL101 --output-format json pkg/evalmod.py >"$T/out" 2>"$T/err"); RC=$?
if [ $RC = 1 ] && grep -q '"verdict": "confirmed"' "$T/out" && grep -q '"path": "pkg/evalmod.py"' "$T/out"; then
    ok validate/import-hook-cmd
else fail validate/import-hook-cmd "rc=$RC $(tr '\n' ' ' <"$T/out" | head -c 600) $(tail -3 "$T/err")"; fi
# ... one history row per finding in the project's .gradleak_cache (SQLite, table validation_runs)
hist=$("$PY" -c "
import sqlite3
db = sqlite3.connect('$T/proj/.gradleak_cache/cache.db')
for row in db.execute('select path, rule, line, verdict, iterations, leaky_bytes_per_iter > 4096, device from validation_runs'):
    print(*row)" 2>&1)
if [ "$hist" = "pkg/evalmod.py GL101 22 confirmed 10 1 cpu" ]; then ok validate/history-row
else fail validate/history-row "$hist"; fi
# ... and the working copy is a copy: the project is untouched (no __pycache__, no new files)
if [ -z "$(find "$T/proj" -name __pycache__)" ] && [ "$(find "$T/proj" -path "$T/proj/.gradleak_cache" -prune -o -type f -print | wc -l)" = 3 ]; then
    ok validate/project-untouched
else fail validate/project-untouched "$(find "$T/proj")"; fi

# 3. inconclusive verdicts: never reached, crashed (with its error), timed out (within the limit)
mkdir -p "$T/inc"
body='    model = torch.nn.Linear(2, 2)
    total = 0
    for x in batches:
        loss = model(x).sum()
        total += loss
    return total'
printf 'import torch\n\n\ndef evaluate(batches):\n%s\n' "$body" >"$T/inc/never.py"
printf 'import torch\n\nraise RuntimeError("synthetic failure before the loop")\n\n\ndef evaluate(batches):\n%s\n' "$body" >"$T/inc/crash.py"
printf 'import time\nimport torch\n\n\ndef evaluate(batches):\n%s\n\n\ntime.sleep(60)\nevaluate([torch.zeros(2)] * 50)\n' "$body" >"$T/inc/slow.py"
t0=$(date +%s)
gl validate --no-history --python "$PY" --device cpu --timeout 20 --output-format json "$T/inc"
t1=$(date +%s)
verdict_of() { "$PY" -c "
import json, sys
for r in json.load(open('$T/out')):
    if r['path'].endswith('/$1'): print(r['verdict'], '|', r.get('reason', ''))"; }
v=$(verdict_of never.py)
case $v in "inconclusive | loop never reached"*) ok validate/inconclusive-never-reached ;; *) fail validate/inconclusive-never-reached "$v" ;; esac
v=$(verdict_of crash.py)
case $v in *"crashed"*"synthetic failure before the loop"*) ok validate/inconclusive-crashed ;; *) fail validate/inconclusive-crashed "$v" ;; esac
v=$(verdict_of slow.py)
case $v in *"timed out"*) ok validate/inconclusive-timed-out ;; *) fail validate/inconclusive-timed-out "$v" ;; esac
if [ $RC = 0 ] && [ $((t1 - t0)) -le 70 ]; then ok validate/inconclusive-exit-0; else fail validate/inconclusive-exit-0 "rc=$RC took $((t1 - t0)) s"; fi

# 4. SARIF evidence, --fail-on never, and the HTML report
gl validate --no-history --python "$PY" --device cpu --iterations 10 --output-format sarif --fail-on never --report "$T/report.html" \
    --select GL102 fixtures/run/gl102_collect_outputs.py
sarif=$("$PY" - "$T/out" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
res = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "GL102"]
v = res[0]["properties"].get("validation", {}) if res else {}
print(v.get("verdict"), v.get("leaky", {}).get("bytesPerIteration", 0) > 4096, abs(v.get("fixed", {}).get("bytesPerIteration", 1e9)) < 4096)
EOF
)
if [ $RC = 0 ] && [ "$sarif" = "confirmed True True" ]; then ok validate/sarif-evidence; else fail validate/sarif-evidence "rc=$RC $sarif"; fi
if [ -s "$T/report.html" ] && [ "$(grep -c '<polyline' "$T/report.html")" = 2 ] && ! grep -qi '<script\|src="http\|href="http' "$T/report.html" &&
    grep -q 'outputs.append(logits)' "$T/report.html" && grep -q 'Dataflow path' "$T/report.html"; then
    ok validate/report-self-contained
else fail validate/report-self-contained "$(wc -c <"$T/report.html" 2>/dev/null) bytes"; fi
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
    rm -f "$T/shot.png"
    timeout 90 "$CHROME" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
        --window-size=1000,1300 --screenshot="$T/shot.png" "file://$T/report.html" >"$T/chrome.log" 2>&1
    counts=$([ -s "$T/shot.png" ] && "$PY" tests/validate/png_colors.py "$T/shot.png" d62728 1f77b4)
    set -- $counts
    if [ "${1:-0}" -ge 300 ] && [ "${2:-0}" -ge 300 ]; then ok validate/report-renders-charts
    else fail validate/report-renders-charts "leaky/fixed curve pixels: ${counts:-no screenshot} $(tail -2 "$T/chrome.log")"; fi
else
    if [ -n "${CI:-}" ]; then fail validate/report-renders-charts "no chromium (./configure --install-deps --with-tests installs it)"
    else echo "note: validate/report-renders-charts skipped: no chromium"; fi
fi
# 5. a program that misbehaves before its leaky loop: writes to /tmp, to a home folder by absolute
# path, to the project folder itself and to /dev/shm, reads ~/.ssh, connects to a listener on the
# host, leaves a setsid daemon and kills its parent. None of it reaches the host (bubblewrap; without
# it the sandbox suite says what is exposed), and the leak is still measured and confirmed.
if command -v bwrap >/dev/null 2>&1; then
    B=$(mktemp -d "$ROOT/build/validate-escape.XXXXXX")
    mkdir -p "$B/proj" "$B/fakehome/.ssh"
    echo 'secret-key-material' >"$B/fakehome/.ssh/id_test"
    # the project folder holds what its copy must get past: a FIFO, a symlink loop, a dangling link,
    # a socket
    mkfifo "$B/proj/pipe.py"; ln -s loopb "$B/proj/loopa"; ln -s loopa "$B/proj/loopb"; ln -s nowhere "$B/proj/dangling.py"
    "$PY" -c "import socket; socket.socket(socket.AF_UNIX).bind('$B/proj/sock')"
    tag=$RANDOM$RANDOM
    dmark="29$RANDOM.$tag"
    realhome=$(getent passwd "$(id -u)" | cut -d: -f6)
    "$PY" -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(5); s.settimeout(60)
open('$B/port', 'w').write(str(s.getsockname()[1]))
try:
    c, _ = s.accept(); open('$B/accepted', 'w').write('yes')
except OSError:
    pass
" &
    lpid=$!
    for _ in $(seq 50); do [ -s "$B/port" ] && break; sleep 0.1; done
    cat >"$B/proj/misbehave.py" <<PYEOF
import os, signal, socket, subprocess
report = []
def attempt(name, fn):
    try:
        fn()
        report.append(name + " ok")
    except Exception as e:
        report.append(name + " failed " + type(e).__name__)
def w(p):
    def f():
        with open(p, "w") as fh:
            fh.write("escaped")
    return f
attempt("write-tmp", w("/tmp/gradleak-escape-$tag"))
attempt("write-home-abs", w("$B/fakehome/.escape-$tag"))
attempt("write-real-home", w("$realhome/.gradleak-escape-$tag"))
attempt("write-project", w("$B/proj/escape-$tag"))
attempt("write-shm", w("/dev/shm/gradleak-escape-$tag"))
attempt("read-ssh", lambda: open("$B/fakehome/.ssh/id_test").read())
attempt("connect", lambda: socket.create_connection(("127.0.0.1", $(cat "$B/port")), timeout=2).close())
attempt("daemon", lambda: subprocess.Popen(["sleep", "$dmark"], start_new_session=True))
attempt("kill-parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
with open("escape-report.txt", "w") as fh:
    fh.write("\n".join(report) + "\n")
PYEOF
    sed -n '4,$p' fixtures/run/gl101_val_loss.py >>"$B/proj/misbehave.py"
    HOME=$B/fakehome "$GRADLEAK" validate --no-history --keep-temp --python "$PY" --device cpu --iterations 10 \
        --output-format json "$B/proj/misbehave.py" >"$T/out" 2>"$T/err" </dev/null
    RC=$?
    kept=$(sed -n 's/^gradleak: working copies and results kept in //p' "$T/err")
    report=$(cat "$kept"/g0-leaky/work/escape-report.txt 2>/dev/null | tr '\n' ',')
    sleep 0.3
    leaked=
    for f in /tmp/gradleak-escape-$tag "$B/fakehome/.escape-$tag" "$realhome/.gradleak-escape-$tag" "$B/proj/escape-$tag" \
        /dev/shm/gradleak-escape-$tag "$B/accepted"; do
        [ -e "$f" ] && leaked="$leaked $f"
    done
    daemons=$(pgrep -f "sleep $dmark" | grep -c .)
    kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
    rm -f /tmp/gradleak-escape-$tag /dev/shm/gradleak-escape-$tag "$realhome/.gradleak-escape-$tag"
    verdict=$("$PY" -c "
import json
print(*[r['verdict'] for r in json.load(open('$T/out')) if r['code'] == 'GL101'])" 2>&1)
    case $report in *write-project*) ;; *) leaked="$leaked (no report from the program: $report)" ;; esac
    if [ -z "$leaked" ] && [ "$daemons" = 0 ]; then ok validate/misbehaving-program-contained
    else fail validate/misbehaving-program-contained "left on the host:$leaked daemons=$daemons report=$report"; fi
    case $report in
        *"write-home-abs failed"*"write-real-home failed"*"write-project failed"*"read-ssh failed"*"connect failed"*)
            ok validate/misbehaving-program-refused ;;
        *) fail validate/misbehaving-program-refused "report=$report" ;;
    esac
    if [ $RC = 1 ] && [ "$verdict" = confirmed ]; then ok validate/misbehaving-program-still-confirmed
    else fail validate/misbehaving-program-still-confirmed "rc=$RC verdict=$verdict $(tail -3 "$T/err")"; fi
    [ -n "$kept" ] && rm -rf "$kept"
    rm -rf "$B"
else
    echo "note: validate/misbehaving-program-* skipped: bubblewrap is not installed (./configure --install-deps)"
fi

# 6. gradleak itself SIGKILLed mid-run: nothing it started survives (the program, a setsid daemon of
# it), and the next validate removes the dead run's working folder; two validate runs at once on
# the same project both finish with their own verdicts and history rows.
if command -v bwrap >/dev/null 2>&1; then
    V=$(mktemp -d "$ROOT/build/validate-kill.XXXXXX")
    mkdir -p "$V/tmp" "$V/proj"
    tag=$RANDOM$RANDOM
    dmark="28$RANDOM.$tag"
    { printf 'import subprocess, time\nsubprocess.Popen(["sleep", "%s"], start_new_session=True)\ntime.sleep(600)\n' "$dmark"
      sed -n '4,$p' fixtures/run/gl101_val_loss.py; } >"$V/proj/slow.py"
    TMPDIR=$V/tmp "$GRADLEAK" validate --no-history --python "$PY" --device cpu --timeout 120 "$V/proj/slow.py" \
        >/dev/null 2>&1 </dev/null &
    gpid=$!
    for _ in $(seq 100); do pgrep -f "sleep $dmark" >/dev/null && break; sleep 0.1; done
    started=$(pgrep -f "sleep $dmark" | grep -c .)
    kill -9 "$gpid"; wait "$gpid" 2>/dev/null
    sleep 1
    left=$(pgrep -f "sleep $dmark|$V/proj/slow.py" | grep -c .)
    stale=$(ls "$V/tmp" | grep -c '^gradleak-validate-')
    if [ "$started" -ge 1 ] && [ "$left" = 0 ] && [ "$stale" = 1 ]; then ok validate/sigkill-leaves-no-process
    else fail validate/sigkill-leaves-no-process "daemon started=$started, survivors=$left, working folders=$stale"; fi
    # two runs at once (also the next runs after the kill: the dead run's folder goes)
    cp fixtures/run/gl101_val_loss.py "$V/proj/leak.py"
    for k in 1 2; do
        (cd "$V/proj" && TMPDIR=$V/tmp "$GRADLEAK" validate --python "$PY" --device cpu --iterations 8 --timeout 120 \
            --select GL101 --output-format json leak.py >"$T/par$k.out" 2>"$T/par$k.err" </dev/null; echo $? >"$T/par$k.rc") &
    done
    wait
    v1=$(grep -c '"verdict": "confirmed"' "$T/par1.out"); v2=$(grep -c '"verdict": "confirmed"' "$T/par2.out")
    rows=$("$PY" -c "
import sqlite3
print(sqlite3.connect('$V/proj/.gradleak_cache/cache.db').execute('select count(*) from validation_runs').fetchone()[0])" 2>&1)
    if [ "$(cat "$T/par1.rc")" = 1 ] && [ "$(cat "$T/par2.rc")" = 1 ] && [ "$v1" = 1 ] && [ "$v2" = 1 ] && [ "$rows" = 2 ]; then
        ok validate/two-runs-at-once
    else fail validate/two-runs-at-once "rc=$(cat "$T/par1.rc")/$(cat "$T/par2.rc") confirmed=$v1/$v2 history rows=$rows $(tail -2 "$T/par1.err")"; fi
    if [ -z "$(ls "$V/tmp")" ]; then ok validate/stale-working-folder-removed
    else fail validate/stale-working-folder-removed "left in TMPDIR: $(ls "$V/tmp")"; fi
    rm -rf "$V"
else
    echo "note: validate/sigkill-* skipped: bubblewrap is not installed (./configure --install-deps)"
fi

[ $nfail -eq 0 ]
