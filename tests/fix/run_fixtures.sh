#!/usr/bin/env bash
# Fixes on the rule fixtures: for every fixtures/rules/<CODE>/pos_* file, apply that rule's fixes
# (--fix --unsafe-fixes --select CODE) to a copy, re-lint with every rule, and expect: each finding
# of CODE that had a fix is gone, no rule reports more than before, the file re-parses (gradleak
# and Python's own ast), and a second --fix changes nothing (the fixed point). Rules that have
# fixes must offer one on every positive fixture, except the cases listed below with the reason.
# Prints `ok <id>` / `FAIL <id> <why>`.
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-build/gradleak}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }

# Rules with fixes, and positive fixtures where no fix is expected (why).
with_fixes=" GL101 GL102 GL103 GL104 GL105 GL108 GL109 GL201 GL301 GL302 GL402 GL403 "
declare -A no_fix=(
    [GL103/pos_self_hidden_module.py]="state kept in self. by forward: no fix (rule doc)"
    [GL102/pos_extend_pair.py]="the graph-carrying values are inside a list display passed to extend()"
    [GL102/pos_plus_eq_list.py]="'+= [z]' stores through a list display, not a call argument"
    [GL201/pos_dict_batch_to.py]="the moved tensor is a subscript (batch[k]); GL201 only rebinds names"
    [GL101/pos_epoch_sum_one_backward.py]="summed over the loader and differentiated once: the fix is a backward per batch (rule doc)"
    [GL101/pos_hf_batches_summed_one_backward.py]="summed over the loader and differentiated once: the fix is a backward per batch (rule doc)"
    [GL101/pos_loader_sum_nested_backward.py]="summed over the loader and differentiated once: the fix is a backward per batch (rule doc)"
    [GL101/pos_meter_object_update.py]="the graph-carrying argument of a method that sums it: the hint says what to pass (rule doc)"
    [GL101/pos_meter_through_library_call.py]="the graph-carrying argument of a method that sums it: the hint says what to pass (rule doc)"
    [GL109/pos_helper_function_tuple.py]="statistics unpacked from one helper's tuple: no single value to detach (rule doc)"
)
# GL901 decides from the other rules' findings: it is fixed with every rule on
select_for() { [ "$1" = GL901 ] && echo ALL || echo "$1"; }

# counts CODE FILE -> "total fixable per-code-json"
summary() {
    python3 - "$1" "$2" <<'PY'
import json, sys, collections
code, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
per = collections.Counter(x["code"] for x in d)
fixable = sum(1 for x in d if x["code"] == code and x["fix"])
print(per[code], fixable, json.dumps(per, sort_keys=True))
PY
}

for f in fixtures/rules/GL*/pos_*.py; do
    code=$(basename "$(dirname "$f")")
    id="fix-${code}/$(basename "$f")"
    work="$tmp/$code-$(basename "$f")"
    cp "$f" "$work"
    "$GRADLEAK" check --output-format json --unsafe-fixes "$work" >"$tmp/before.json" 2>/dev/null
    read -r n_before n_fixable per_before < <(summary "$code" "$tmp/before.json")
    key="$code/$(basename "$f")"
    if [ "$n_fixable" = 0 ]; then
        if [[ $with_fixes == *" $code "* ]] && [ -z "${no_fix[$key]:-}" ]; then
            fail "$id" "no fix offered for $n_before $code finding(s) (list it in no_fix with a reason if that is right)"
        else
            ok "$id (no fix: ${no_fix[$key]:-rule has none})"
        fi
        continue
    fi
    "$GRADLEAK" check --fix --unsafe-fixes --select "$(select_for "$code")" --no-color "$work" >"$tmp/fix.out" 2>"$tmp/fix.err"
    rc=$?
    if [ $rc = 2 ] || grep -q 'error\|syntax' "$tmp/fix.err"; then
        fail "$id" "--fix failed (exit $rc): $(head -c 300 "$tmp/fix.err")"
        continue
    fi
    "$GRADLEAK" check --output-format json --unsafe-fixes "$work" >"$tmp/after.json" 2>"$tmp/after.err"
    read -r n_after _ per_after < <(summary "$code" "$tmp/after.json")
    why=
    [ "$n_after" -le $((n_before - n_fixable)) ] || why="$why; $code: $n_before before, $n_fixable fixable, $n_after after"
    more=$(python3 -c '
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
# GL108 is what stays of an evaluation loop once GL101/GL102 stop it keeping graphs (their fixes
# detach what the loop keeps; the loop still runs with grad on): expected, not new
grown = lambda k: not (k == "GL108" and sys.argv[3] in ("GL101", "GL102"))
print(" ".join("%s:%d>%d" % (k, b.get(k, 0), v) for k, v in a.items() if v > b.get(k, 0) and grown(k)))' "$per_before" "$per_after" "$code")
    [ -z "$more" ] || why="$why; new findings: $more"
    grep -q 'syntax error' "$tmp/after.err" && why="$why; gradleak reports a syntax error after the fix"
    python3 -c 'import ast, sys; ast.parse(open(sys.argv[1], "rb").read())' "$work" 2>"$tmp/ast.err" ||
        why="$why; Python cannot parse the fixed file: $(tail -n 1 "$tmp/ast.err")"
    cp "$work" "$tmp/once"
    "$GRADLEAK" check --fix --unsafe-fixes --select "$(select_for "$code")" "$work" >/dev/null 2>&1
    cmp -s "$work" "$tmp/once" || why="$why; a second --fix changed the file again"
    cmp -s "$work" "$f" && why="$why; the file did not change"
    if [ -n "$why" ]; then fail "$id" "${why#; }"; else ok "$id ($n_fixable fixed)"; fi
done
[ "$fails" = 0 ]
