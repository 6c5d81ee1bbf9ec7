#!/bin/sh
# Output-format suite: runs the out_sample test program in every format and checks the documents with real
# consumers: Python's json for JSON and SARIF, Microsoft's SARIF multitool (the validator GitHub's
# code-scanning rules come from) with --rule-kind "Gh;Sarif". Prints `ok <id>` / `FAIL <id> <why>`.
# Env: OUT_SAMPLE (the sample program; default $GRADLEAK_TESTBIN/out_sample, which tests/run sets),
# SARIF_MULTITOOL (a validator binary to use instead of installing npm's into build/node).
set -u
cd "$(dirname "$0")/../.." || exit 2
SAMPLE=${OUT_SAMPLE:-${GRADLEAK_TESTBIN:-build/tests}/out_sample}
NODE_DIR=build/node
MT_PKG=@microsoft/sarif-multitool-linux
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1 $2"; fails=$((fails + 1)); }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -x "$SAMPLE" ]; then
    fail out-sample "missing $SAMPLE (build it with ninja)"
    exit 1
fi

for f in full concise json sarif github; do
    if "$SAMPLE" "$f" "$PWD" >"$tmp/out.$f" 2>"$tmp/err.$f"; then ok "out-run-$f"
    else fail "out-run-$f" "exit $? ($(head -c 200 "$tmp/err.$f"))"; fi
done

# Every format reports the same 7 findings.
n=$(grep -c '^sample/[^:]*:[0-9]*:[0-9]*: GL[0-9]* ' "$tmp/out.concise")
[ "$n" = 7 ] && ok out-concise-count || fail out-concise-count "want 7 finding lines, got $n"
n=$(grep -c '^::\(error\|warning\|notice\) file=' "$tmp/out.github")
[ "$n" = 7 ] && ok out-github-count || fail out-github-count "want 7 annotations, got $n"
tail -n 2 "$tmp/out.full" | head -n 1 | grep -qx 'Found 7 errors\.' && ok out-full-summary ||
    fail out-full-summary "no 'Found 7 errors.' line"

if command -v python3 >/dev/null 2>&1; then
    if python3 - "$tmp/out.json" "$tmp/out.sarif" >"$tmp/py.log" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8"))
assert isinstance(j, list) and len(j) == 7, "json: want 7 findings"
keys = ["code", "message", "filename", "location", "end_location", "fix", "url", "noqa_row",
        "severity", "growth", "related"]
for d in j:
    assert list(d) == keys, "json keys: %s" % list(d)
s = json.load(open(sys.argv[2], encoding="utf-8"))
run = s["runs"][0]
assert len(run["results"]) == 7, "sarif: want 7 results"
assert run["columnKind"] == "unicodeCodePoints"
for r in run["results"]:
    loc = r["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%", "sarif: uri not relative"
    assert not loc["artifactLocation"]["uri"].startswith("file:"), "sarif: absolute uri"
    assert ":" in r["partialFingerprints"]["primaryLocationLineHash"]
EOF
    then ok out-json-parse; else fail out-json-parse "$(tail -n 1 "$tmp/py.log")"; fi
else
    echo "skip out-json-parse (no python3)"
fi

# The SARIF validator: an explicit binary, one already installed in build/node, or npm install there.
mt=${SARIF_MULTITOOL:-}
if [ -z "$mt" ]; then
    mt="$NODE_DIR/node_modules/$MT_PKG/Sarif.Multitool"
    if [ ! -f "$mt" ] && command -v npm >/dev/null 2>&1; then
        mkdir -p "$NODE_DIR"
        timeout 300 npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent "$MT_PKG" >"$tmp/npm.log" 2>&1 ||
            true
    fi
    # npm may refuse the package's postinstall script (chmod u+x), so do it here.
    [ -f "$mt" ] && chmod u+x "$mt" 2>/dev/null
fi
if [ -n "$mt" ] && [ -x "$mt" ]; then
    cp "$tmp/out.sarif" "$tmp/sample.sarif"
    # The multitool exits 0 even when the document has errors: read its report instead.
    "$mt" validate --rule-kind "Gh;Sarif" --level "Error;Warning" --output "$tmp/validate.json" \
        "$tmp/sample.sarif" >"$tmp/mt.log" 2>&1
    if [ ! -s "$tmp/validate.json" ]; then
        fail out-sarif-validate "the validator wrote no report ($(tail -n 3 "$tmp/mt.log" | tr '\n' ' '))"
    elif python3 - "$tmp/validate.json" >"$tmp/mtres.log" 2>&1 <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1], encoding="utf-8-sig"))
bad = 0
for run in rep.get("runs", []):
    for n in run.get("invocations", []):
        for k in ("toolExecutionNotifications", "toolConfigurationNotifications"):
            for x in n.get(k, []):
                if x.get("level") == "error":
                    print("tool error:", x.get("message", {}).get("text")); bad += 1
        if n.get("executionSuccessful") is False:
            print("validator did not run successfully"); bad += 1
    for r in run.get("results", []):
        lvl = r.get("level", "warning")
        msg = r.get("message", {})
        print(lvl, r.get("ruleId"), msg.get("id"), msg.get("arguments"))
        if lvl == "error":
            bad += 1
sys.exit(1 if bad else 0)
EOF
    then
        ok out-sarif-validate
        [ -s "$tmp/mtres.log" ] && sed 's/^/  note: /' "$tmp/mtres.log"
    else
        fail out-sarif-validate "$(grep -m 3 '^\(error\|tool\|validator\)' "$tmp/mtres.log" | tr '\n' ' ')"
    fi
else
    echo "skip sarif-multitool (npm could not install $MT_PKG)"
fi

[ "$fails" = 0 ]
