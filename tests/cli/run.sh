#!/usr/bin/env bash
# CLI behaviour of `gradleak`: exit codes, rule selection, output formats, noqa, odd inputs, the
# directory walk, output order, and the small commands. One line per case: "ok <id>" or
# "FAIL <id> <why>"; exits 1 when a case failed.
#
#   GRADLEAK=build/gradleak tests/cli/run.sh [ID-PREFIX]
#
# Cases are tables: `simple` rows (exit status, a regex that stdout must match, the arguments)
# and `fcase` rows (a shell function that does its own checks). Ids are stable: add new cases at
# the end of their group, never renumber.
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
only=${1:-}

T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-cli.XXXXXX") || exit 2
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 2

nfail=0
OUT='' ERR='' RC=''
# gl ARGS...: runs gradleak in the current directory, sets OUT, ERR and RC.
gl() {
    "$GRADLEAK" "$@" >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}
ok() { echo "ok $1${2:+ $2}"; }
fail() {
    echo "FAIL $1 $2"
    nfail=$((nfail + 1))
}
# why: a short description of the last run, for FAIL lines
why() { printf 'rc=%s stdout=%q stderr=%q' "$RC" "${OUT:0:600}" "${ERR:0:300}"; }
want() { [[ -z $only || $1 == "$only"* ]]; }

# ---------------------------------------------------------------------------------------------
# Inputs. H: GL301 at 9:9 (empty_cache in the step loop at line 6).
H='import torch
from torch.utils.data import DataLoader


def train(model, ds, opt):
    for x, y in DataLoader(ds):
        loss = model(x).sum()
        loss.backward()
        torch.cuda.empty_cache()
'
printf '%s' "$H" >hazard.py
printf 'import torch\n\nx = torch.zeros(3)\n' >clean.py
# GL201 at 6:9
printf 'import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        x.cuda()\n' >move.py
# GL301 at 12:9, GL401 at 12:60, GL302 at 13:9; line 12 carries a trailing marker NOQA to replace
multi() {
    cat <<EOF
import gc
import torch
from torch.autograd import Variable
from torch.utils.data import DataLoader


def train(model, ds, opt):
    for x, y in DataLoader(ds):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        torch.cuda.empty_cache(); v = Variable(x, volatile=True)$1
        gc.collect()
EOF
}
multi '' >multi.py
multi '  # noqa' >nq_all.py
multi '  # noqa: GL301' >nq_one.py
multi '  # noqa: GL301,GL401' >nq_two.py
multi '  # noqa: GL301, GL401, GL302' >nq_extra.py
multi '  # NOQA:GL401' >nq_upper.py
{ echo '# gradleak: noqa'; multi ''; } >nq_file.py
{ echo '# gradleak: noqa: GL301'; multi ''; } >nq_file_one.py
multi '  # type: ignore  # noqa: GL301' >nq_typeignore.py
multi '  # noqa: GL401, GL999, GL301' >nq_unknown_mid.py
multi '  # noqa: GL999' >nq_unknown_only.py
printf 'import torch\nx = 1  # noqa\n' >nq_unused.py
printf 'import torch\nx = 1  # noqa: GL301\n' >nq_unused_code.py

# ---------------------------------------------------------------------------------------------
# simple rows: id | exit status | ERE that stdout must match ('' = anything) | arguments
simple_rows=$(cat <<'EOF'
cli-1.1|0|All checks passed|check clean.py
cli-1.2|1|^hazard.py:9:9: GL301 |check hazard.py
cli-1.3|2||check --no-such-option clean.py
cli-1.4|2||check --select GL999 hazard.py
cli-1.5|2||frobnicate
cli-1.6|2||check does-not-exist.py
cli-1.7|0|^hazard.py:9:9: GL301 |check --exit-zero hazard.py
cli-1.8|2||
cli-1.9|2||check --ignore NOPE hazard.py
cli-1.10|2||check --output-format xml hazard.py
cli-1.11|2||check -j 0 hazard.py
cli-1.12|2||check --select
cli-1.13|2||rule GL999
cli-2.1|1|^move.py:6:9: GL201 |check --output-format concise --select GL201 move.py hazard.py
cli-2.2|0|All checks passed|check --select GL101 hazard.py move.py
cli-2.3|0|All checks passed|check --ignore GL301 hazard.py
cli-2.4|1|^hazard.py:9:9: GL301 |check --select GL3 --output-format concise hazard.py
cli-2.5|1|^hazard.py:9:9: GL301 |check --select gl301 --output-format concise hazard.py
cli-2.6|1|^hazard.py:9:9: GL301 |check --select empty-cache-in-step-loop --output-format concise hazard.py
cli-2.7|1|^move.py:6:9: GL201 |check --select GL3 --extend-select GL201 --output-format concise move.py
cli-2.8|1|^move.py:6:9: GL201 |check --select=GL201 --output-format=concise move.py
cli-2.9|0|All checks passed|check --select ALL --ignore GL2,GL3 hazard.py move.py
EOF
)

# GL3 must select GL301 and GL302 and nothing else
case_prefix_family() {
    gl check --select GL3 --output-format concise multi.py
    local codes
    codes=$(printf '%s\n' "$OUT" | grep -oE ' GL[0-9]{3} ' | tr -d ' ' | sort -u | tr '\n' ' ')
    [ "$RC" = 1 ] && [ "$codes" = "GL301 GL302 " ] || { fail "$1" "want GL301 GL302 only, got '$codes' $(why)"; return; }
    ok "$1"
}
case_ignore_one() {
    gl check --ignore GL301 --output-format concise multi.py
    local codes
    codes=$(printf '%s\n' "$OUT" | grep -oE ' GL[0-9]{3} ' | tr -d ' ' | sort -u | tr '\n' ' ')
    [ "$RC" = 1 ] && [ "$codes" = "GL302 GL401 " ] || { fail "$1" "want GL302 GL401, got '$codes' $(why)"; return; }
    ok "$1"
}
case_unknown_rule_msg() {
    gl check --select GL999 hazard.py
    [[ $ERR == *"unknown rule 'GL999'"* && -z $OUT ]] || { fail "$1" "want 'unknown rule' on stderr only: $(why)"; return; }
    ok "$1"
}
case_missing_path_msg() {
    gl check does-not-exist.py hazard.py
    [[ $RC = 2 && $ERR == *does-not-exist.py* && $OUT == *GL301* ]] ||
        { fail "$1" "a missing path is an error (2) but the other paths are still linted: $(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# output formats
case_full() {
    gl check --no-color hazard.py
    [[ $RC = 1 && $OUT == *"hazard.py:9:9: GL301 "* && $OUT == *"torch.cuda.empty_cache()"* && $OUT == *"^^^^"* &&
        $OUT == *"Found 1 error"* ]] || { fail "$1" "full format: $(why)"; return; }
    [[ $OUT != *$'\e['* ]] || { fail "$1" "--no-color output has escape codes"; return; }
    ok "$1"
}
case_concise() {
    gl check --output-format concise multi.py
    local want='multi.py:12:9: GL301 
multi.py:12:60: GL401 
multi.py:13:9: GL302 '
    local got
    got=$(printf '%s\n' "$OUT" | grep -oE '^multi\.py:[0-9]+:[0-9]+: GL[0-9]+ ')
    [[ $RC = 1 && $got == "$want" ]] || { fail "$1" "concise lines: got '$got' $(why)"; return; }
    ok "$1"
}
json_check='
import json, sys
d = json.load(sys.stdin)
assert isinstance(d, list), "not a list"
assert len(d) == int(sys.argv[1]), "want %s results, got %d" % (sys.argv[1], len(d))
for r in d:
    for k in ("code", "message", "filename", "location", "end_location", "fix", "url", "severity"):
        assert k in r, "missing key " + k
    for k in ("location", "end_location"):
        assert set(r[k]) >= {"row", "column"}, k
    assert r["severity"] in ("error", "warning", "info"), r["severity"]
    assert r["url"].endswith(r["code"]), r["url"]
    assert r["fix"] is None or ("edits" in r["fix"] and "applicability" in r["fix"]), r["fix"]
print(" ".join("%s:%d:%d-%d:%d:%s" % (r["filename"], r["location"]["row"], r["location"]["column"],
      r["end_location"]["row"], r["end_location"]["column"], r["code"]) for r in d))
'
case_json() {
    gl check --output-format json hazard.py move.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c "$json_check" 2 2>&1) ||
        { fail "$1" "json: $got"; return; }
    [[ $RC = 1 && $got == "hazard.py:9:9-9:33:GL301 move.py:6:9-6:17:GL201" ]] ||
        { fail "$1" "json results: $got $(why)"; return; }
    ok "$1"
}
case_json_empty() {
    gl check --output-format json clean.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c "$json_check" 0 2>&1) || { fail "$1" "json: $got"; return; }
    [ "$RC" = 0 ] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_json_fix() {
    gl check --output-format json move.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
f = json.load(sys.stdin)[0]["fix"]
e = f["edits"][0]
print(f["applicability"], repr(e["content"]), e["location"]["row"], e["location"]["column"])' 2>&1)
    [[ $got == "safe 'x = ' 6 9" ]] || { fail "$1" "GL201 fix: $got"; return; }
    ok "$1"
}
case_sarif() {
    gl check --output-format sarif hazard.py move.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["version"] == "2.1.0", d["version"]
res = d["runs"][0]["results"]
ids = {r["id"] for r in d["runs"][0]["tool"]["driver"]["rules"]}
out = []
for r in res:
    assert r["ruleId"] in ids, r["ruleId"]
    loc = r["locations"][0]["physicalLocation"]
    out.append("%s:%d:%d:%s" % (loc["artifactLocation"]["uri"], loc["region"]["startLine"], loc["region"]["startColumn"], r["ruleId"]))
print(" ".join(out))' 2>&1) || { fail "$1" "sarif: $got"; return; }
    [[ $RC = 1 && $got == *"hazard.py:9:9:GL301"* && $got == *"move.py:6:9:GL201"* ]] ||
        { fail "$1" "sarif results: $got"; return; }
    ok "$1"
}
case_sarif_empty() {
    gl check --output-format sarif clean.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["version"] == "2.1.0"
print(len(d["runs"][0]["results"]))' 2>&1)
    [[ $RC = 0 && $got == 0 ]] || { fail "$1" "sarif: $got $(why)"; return; }
    ok "$1"
}
case_github() {
    gl check --output-format github hazard.py move.py
    local bad
    bad=$(printf '%s\n' "$OUT" | grep -vE '^::(error|warning) ' | grep -v '^$')
    [[ $RC = 1 && -z $bad && $OUT == *"::warning file=hazard.py,line=9,col=9,"* &&
        $OUT == *"::error file=move.py,line=6,col=9,"* ]] || { fail "$1" "github lines: $(why)"; return; }
    ok "$1"
}
case_statistics() {
    gl check --statistics multi.py move.py
    local got
    got=$(printf '%s\n' "$OUT" | awk -F'\t' '{ print $1 " " $2 }' | tr '\n' ',')
    [[ $RC = 1 && $got == "1 GL201,1 GL301,1 GL302,1 GL401," ]] || { fail "$1" "statistics: '$got' $(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# noqa.
# codes_of FILE [ARGS]: sets CODES to the sorted "line:code" pairs reported for FILE
CODES=
codes_of() {
    local f=$1
    shift
    gl check --output-format concise "$@" "$f"
    CODES=$(printf '%s\n' "$OUT" | sed -nE 's/^[^:]+:([0-9]+):[0-9]+: (GL[0-9]+) .*/\1:\2/p' | sort -t: -k1,1n -k2 | tr '\n' ' ')
}
noqa_rows=$(cat <<'EOF'
cli-3.1|multi.py|12:GL301 12:GL401 13:GL302 
cli-3.2|nq_all.py|13:GL302 
cli-3.3|nq_one.py|12:GL401 13:GL302 
cli-3.4|nq_two.py|13:GL302 
cli-3.5|nq_extra.py|12:GL901 13:GL302 
cli-3.6|nq_upper.py|12:GL301 13:GL302 
cli-3.7|nq_file.py|
cli-3.8|nq_file_one.py|13:GL401 14:GL302 
cli-3.9|nq_unused.py|
cli-3.10|nq_unused_code.py|2:GL901 
cli-3.14|nq_typeignore.py|12:GL401 13:GL302 
cli-3.15|nq_unknown_mid.py|13:GL302 
cli-3.16|nq_unknown_only.py|12:GL301 12:GL401 13:GL302 
EOF
)
case_noqa_row() {
    local id=$1 f=$2 want=$3
    codes_of "$f"
    [[ $CODES == "$want" && $RC == $([ -n "$want" ] && echo 1 || echo 0) ]] ||
        { fail "$id" "$f: want '$want', got '$CODES' $(why)"; return; }
    ok "$id"
}
case_gl901_message() {
    gl check --output-format concise nq_extra.py
    [[ $OUT == *"GL901 [*] Unused \`noqa\` directive (GL302 suppresses nothing on this line)"* ]] ||
        { fail "$1" "GL901 names the unused code: $(why)"; return; }
    ok "$1"
}
case_gl901_not_selected() {
    # GL901 off: an unused noqa is not reported; codes whose rule did not run are never "unused"
    codes_of nq_unused.py --ignore GL901
    [[ -z $CODES && $RC = 0 ]] || { fail "$1" "--ignore GL901: got '$CODES' $(why)"; return; }
    codes_of nq_unused_code.py --select GL2,GL901
    [[ -z $CODES && $RC = 0 ]] || { fail "$1" "noqa: GL301 with GL301 off is not unused: got '$CODES' $(why)"; return; }
    ok "$1"
}
case_noqa_file_clean() {
    gl check nq_file.py
    [[ $RC = 0 ]] || { fail "$1" "file-level noqa: $(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# odd inputs
syntax_top() {
    printf '%s\n\n%s' "$1" "$H" >"$2"
}
case_syntax_error() {
    # a broken statement at the top: the hazard below is still reported (2 lines lower), with a note
    syntax_top $'if x\n    pass' se.py
    gl check --output-format concise se.py
    [[ $RC = 1 && $OUT == *"se.py:12:9: GL301 "* ]] || { fail "$1" "hazard below a syntax error: $(why)"; return; }
    [[ $ERR == *"se.py"*"syntax error"* ]] || { fail "$1" "no syntax-error note on stderr: $(why)"; return; }
    ok "$1"
}
syntax_rows=$(cat <<'EOF'
cli-4.2|def f(:\n    pass|12
cli-4.3|x = = 1|11
cli-4.4|class :\n    pass|12
cli-4.5|x = )|-
cli-4.6|y = [1,, 2]|11
EOF
)
# other kinds of broken code at the top: stderr notes the error, and the hazard below is reported
# (line '-': not checked; tree-sitter's recovery of `x = )` swallows the next line's `import`)
case_syntax_row() {
    local id=$1 src line=$3
    src=$(printf '%b' "$2")
    syntax_top "$src" se2.py
    gl check --output-format concise se2.py
    local probs=
    [[ $ERR == *"se2.py"*"syntax error"* ]] || probs="no syntax-error note on stderr;"
    [[ $line = - || ($RC = 1 && $OUT == *"se2.py:$line:9: GL301 "*) ]] || probs="$probs hazard at $line:9 not reported;"
    [ -z "$probs" ] || { fail "$id" "source '$2' at the top: $probs $(why)"; return; }
    ok "$id"
}
case_bad_utf8_comment() {
    { printf '# caf\xff\xfe comment\n'; printf '%s' "$H"; } >u1.py
    gl check --output-format concise u1.py
    [[ $RC = 1 && $OUT == *"u1.py:10:9: GL301 "* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_bad_utf8_string() {
    { printf 's = "caf\xff\xfe"\n'; printf '%s' "$H"; } >u2.py
    gl check --output-format concise u2.py
    [[ $RC = 1 && $OUT == *"u2.py:10:9: GL301 "* ]] || { fail "$1" "$(why)"; return; }
    # invalid bytes before the finding on its own line count one column each
    printf 'from torch.autograd import Variable\ns = "\xff\xfe"; v = Variable(x, volatile=True)\n' >u3.py
    printf 'from torch.autograd import Variable\ns = "ab"; v = Variable(x, volatile=True)\n' >u3ok.py
    gl check --output-format concise u3ok.py
    local want=${OUT%%: GL401*}
    gl check --output-format concise u3.py
    [[ ${OUT%%: GL401*} == "${want/u3ok/u3}" ]] || { fail "$1" "columns after invalid bytes: $(why) (want ${want/u3ok/u3})"; return; }
    ok "$1"
}
case_full_bad_utf8() {
    # the code frame of a line with invalid bytes still prints, and the JSON stays valid
    printf 'from torch.autograd import Variable\nv = Variable(x, volatile=True)  # \xff\n' >u4.py
    gl check --no-color u4.py
    [[ $RC = 1 && $OUT == *"u4.py:2:"*GL401* ]] || { fail "$1" "full: $(why)"; return; }
    gl check --output-format json u4.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c "$json_check" 1 2>&1) || { fail "$1" "json: $got"; return; }
    ok "$1"
}
case_nul() {
    { printf 'x = 1\0\n'; printf '%s' "$H"; } >nul.py
    gl check --output-format concise nul.py
    [[ $RC = 1 && $OUT == *"nul.py:10:9: GL301 "* ]] || { fail "$1" "a NUL byte on line 1: $(why)"; return; }
    printf '\0\1\2\3' >bin.py
    gl check bin.py
    [[ $RC = 0 && $ERR == *bin.py*skipped* ]] || { fail "$1" "binary file: $(why)"; return; }
    ok "$1"
}
case_empty() {
    : >empty.py
    gl check empty.py
    [[ $RC = 0 && -z $ERR ]] || { fail "$1" "$(why)"; return; }
    gl check --output-format json empty.py
    [[ $RC = 0 && $(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin))') == "[]" ]] ||
        { fail "$1" "json: $(why)"; return; }
    ok "$1"
}
case_only_comments() {
    printf '# one\n# two  # noqa\n   # three\n' >comments.py
    gl check --ignore GL901 comments.py
    [[ $RC = 0 && -z $ERR ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_no_trailing_newline() {
    printf '%s' "${H%$'\n'}" >nonl.py
    gl check --output-format json nonl.py
    local got
    got=$(printf '%s' "$OUT" | python3 -c "$json_check" 1 2>&1)
    [[ $RC = 1 && $got == "nonl.py:9:9-9:33:GL301" ]] || { fail "$1" "$got $(why)"; return; }
    ok "$1"
}
case_crlf() {
    printf '%s' "$H" | sed 's/$/\r/' >crlf.py
    cp hazard.py lf.py
    multi '' | sed 's/$/\r/' >crlf_multi.py
    cp multi.py lf_multi.py
    local a b
    gl check --output-format json lf.py lf_multi.py
    a=$(printf '%s' "$OUT" | python3 -c "$json_check" 4 2>&1)
    gl check --output-format json crlf.py crlf_multi.py
    b=$(printf '%s' "$OUT" | python3 -c "$json_check" 4 2>&1)
    b=${b//crlf/lf}
    [[ $a == "$b" ]] || { fail "$1" "CRLF positions differ from LF: LF '$a' CRLF '$b'"; return; }
    gl check --no-color crlf.py
    [[ $OUT != *$'\r'* ]] || { fail "$1" "the code frame of a CRLF file prints a carriage return"; return; }
    ok "$1"
}
case_bom() {
    printf 'from torch.autograd import Variable; v = Variable(x, volatile=True)\n' >nobom.py
    printf '\xef\xbb\xbffrom torch.autograd import Variable; v = Variable(x, volatile=True)\n' >bom.py
    gl check --output-format concise nobom.py
    local want=${OUT%%: GL401*}
    gl check --output-format concise bom.py
    local got=${OUT%%: GL401*}
    [[ $RC = 1 && $got == "${want/nobom/bom}" ]] ||
        { fail "$1" "a BOM shifts line-1 columns: want '${want/nobom/bom}', got '$got' (BOM is not a column)"; return; }
    ok "$1"
}
case_bom_lines() {
    { printf '\xef\xbb\xbf'; printf '%s' "$H"; } >bom2.py
    gl check --output-format concise bom2.py
    [[ $RC = 1 && $OUT == *"bom2.py:9:9: GL301 "* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_dir_named_py() {
    mkdir -p w1/x.py
    cp hazard.py w1/x.py/inner.py
    gl check --output-format concise w1
    [[ $RC = 1 && $OUT == *"w1/x.py/inner.py:9:9: GL301"* && -z $ERR ]] || { fail "$1" "walk: $(why)"; return; }
    gl check --output-format concise w1/x.py
    [[ $RC = 1 && $OUT == *"w1/x.py/inner.py:9:9: GL301"* && -z $ERR ]] || { fail "$1" "as a path: $(why)"; return; }
    ok "$1"
}
case_unreadable() {
    if [ "$(id -u)" = 0 ]; then
        ok "$1" "# skip root"
        return
    fi
    cp hazard.py noread.py
    chmod 000 noread.py
    gl check --output-format concise noread.py hazard.py
    chmod 644 noread.py
    [[ $RC = 2 && $ERR == *noread.py* && $OUT == *"hazard.py:9:9: GL301"* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_symlink_loop() {
    mkdir -p w2/sub
    cp hazard.py w2/sub/a.py
    ln -s .. w2/sub/up
    ln -s . w2/self
    ln -s loop_b w2/loop_a
    ln -s loop_a w2/loop_b
    ln -s does-not-exist.py w2/dangling.py
    gl check --output-format concise w2
    local n
    n=$(printf '%s\n' "$OUT" | grep -c 'GL301')
    # each real file once, the directory links not followed; the dangling `*.py` link is said and
    # counted (exit 2), the links that are no source names are passed over
    [[ $RC = 2 && $n = 1 && $OUT == *"w2/sub/a.py:9:9: GL301"* && $OUT == *"1 file was not analysed"* &&
        $ERR == *"w2/dangling.py: broken symbolic link"* ]] || { fail "$1" "want one finding, one file not analysed: $(why)"; return; }
    ok "$1"
}
case_file_symlink() {
    mkdir -p w3
    ln -s ../hazard.py w3/linked.py
    gl check --output-format concise w3
    [[ $RC = 1 && $OUT == *"w3/linked.py:9:9: GL301"* ]] || { fail "$1" "a symlink to a file is linted: $(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# walking: skipped folders and the root .gitignore (read from the current directory)
case_walk_skips() {
    mkdir -p w4 && (
        cd w4 || exit 1
        for d in .git __pycache__ venv .venv node_modules build src src/build ignored_dir src/deep/ignored_dir; do
            mkdir -p "$d"
            cp ../hazard.py "$d/h.py"
        done
        cp ../hazard.py src/keep.py
        cp ../hazard.py src/skip_me.py
        cp ../hazard.py top.py
        cp ../hazard.py notes.txt
        printf '# comment\nignored_dir/\nskip_me.py\n/top_only.py\n' >.gitignore
        cp ../hazard.py top_only.py
    )
    (cd w4 && gl check --output-format concise && printf '%s\n' "$OUT" | sed -nE 's/^([^:]+):.*/\1/p' | sort -u >../walk.got)
    local got
    got=$(tr '\n' ' ' <walk.got)
    [[ $got == "src/h.py src/keep.py top.py " ]] || { fail "$1" "walked files: '$got'"; return; }
    ok "$1"
}
case_walk_explicit() {
    # a path named on the command line is linted even where a walk would skip it
    gl check --output-format concise w4/build/h.py
    [[ $RC = 1 && $OUT == *"w4/build/h.py:9:9: GL301"* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_walk_dir_symlink() {
    mkdir -p w5/real
    cp hazard.py w5/real/r.py
    ln -s real w5/alias
    gl check --output-format concise w5
    local n
    n=$(printf '%s\n' "$OUT" | grep -c GL301)
    [[ $n = 1 && $OUT == *"w5/real/r.py"* && $OUT != *alias* ]] || { fail "$1" "directory symlinks are not followed: $(why)"; return; }
    ok "$1"
}
case_walk_default_dot() {
    mkdir -p w6/pkg
    cp hazard.py w6/pkg/m.py
    (cd w6 && gl check --output-format concise && [[ $RC = 1 && $OUT == *"pkg/m.py:9:9: GL301"* ]]) ||
        { fail "$1" "check with no paths lints '.': $(why)"; return; }
    ok "$1"
}
case_pyi() {
    mkdir -p w7
    cp hazard.py w7/stub.pyi
    cp hazard.py w7/not_python.pyc
    gl check --output-format concise w7
    [[ $OUT == *"w7/stub.pyi"* && $OUT != *pyc* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# order
case_order() {
    mkdir -p w8/b w8/a/z w8/a/b
    local f
    for f in w8/b/2.py w8/b/10.py w8/a/z/x.py w8/a/b/y.py w8/c.py w8/A.py w8/a/m.py; do cp multi.py "$f"; done
    gl check --output-format concise -j 1 w8
    local one=$OUT
    gl check --output-format concise -j 2 w8
    local two=$OUT
    gl check --output-format concise --jobs 8 w8/b w8/a w8/c.py w8/A.py
    local eight=$OUT
    [[ $one == "$two" && $one == "$eight" ]] || { fail "$1" "output differs between -j 1, -j 2 and -j 8"; return; }
    local paths sorted
    paths=$(printf '%s\n' "$one" | sed -nE 's/^([^:]+):.*/\1/p' | uniq)
    sorted=$(printf '%s\n' "$paths" | LC_ALL=C sort)
    [[ $paths == "$sorted" && $(printf '%s\n' "$paths" | wc -l) = 7 ]] ||
        { fail "$1" "files not sorted by path: $(printf '%s' "$paths" | tr '\n' ' ')"; return; }
    ok "$1"
}
case_dedup() {
    gl check --output-format concise hazard.py ./hazard.py hazard.py
    # the same spelling twice is linted once (./hazard.py is another spelling: not deduplicated)
    [[ $(printf '%s\n' "$OUT" | grep -c '^hazard.py:') = 1 ]] || { fail "$1" "hazard.py reported twice: $(why)"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# small commands
case_rule_doc() {
    gl rule GL101
    local h missing=
    for h in '# GL101 tensor-accumulated-across-iterations' '## What it does' '## Why is this bad?' '## Example' \
        '## Fix safety' '## References'; do
        grep -qxF -- "$h" <<<"$OUT" || missing="$missing '$h'"
    done
    [[ $RC = 0 && -z $missing ]] || { fail "$1" "missing headings:$missing rc=$RC"; return; }
    gl rule tensor-accumulated-across-iterations
    [[ $RC = 0 && $OUT == "# GL101 "* ]] || { fail "$1" "rule by name: $(why)"; return; }
    ok "$1"
}
case_rules() {
    gl rules
    local n
    n=$(printf '%s\n' "$OUT" | grep -cE '^GL[0-9]{3} ')
    [[ $RC = 0 && $n = 16 ]] || { fail "$1" "want 16 rules, got $n"; return; }
    local c missing=
    for c in GL101 GL102 GL103 GL104 GL105 GL106 GL107 GL108 GL109 GL201 GL301 GL302 GL401 GL402 GL403 GL901; do
        grep -q "^$c " <<<"$OUT" || missing="$missing $c"
    done
    [ -z "$missing" ] || { fail "$1" "missing:$missing"; return; }
    ok "$1"
}
case_every_rule_doc() {
    local c bad=
    for c in $("$GRADLEAK" rules | awk '{ print $1 }'); do
        gl rule "$c"
        [[ $RC = 0 && $OUT == "# $c "* && $OUT == *"## What it does"* ]] || bad="$bad $c"
    done
    [ -z "$bad" ] || { fail "$1" "rule docs without a heading or failing:$bad"; return; }
    ok "$1"
}
case_version() {
    gl version
    # "gradleak X.Y.Z" alone on the first line, then the commit and the build date (UTC)
    [[ $RC = 0 && $OUT =~ ^gradleak\ [0-9]+\.[0-9]+\.[0-9]+$'\n'commit\ [0-9a-z.-]+$'\n'built\ [0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] ||
        { fail "$1" "$(why)"; return; }
    [[ $OUT == *"commit unknown"* || $OUT == *"commit $(git rev-parse --short=12 HEAD 2>/dev/null)"* ]] ||
        { fail "$1" "the commit is not this checkout's HEAD: $(why)"; return; }
    local v=$OUT
    gl --version
    [[ $RC = 0 && $OUT == "$v" ]] || { fail "$1" "--version: $(why)"; return; }
    ok "$1"
}
case_help() {
    gl --help
    [ "$RC" = 0 ] || { fail "$1" "$(why)"; return; }
    local o missing=
    for o in check rule rules version --select --ignore --extend-select --output-format --statistics --exit-zero \
        --trace -j --jobs --max-file-size --no-color full concise json sarif github noqa; do
        [[ $OUT == *"$o"* ]] || missing="$missing $o"
    done
    [ -z "$missing" ] || { fail "$1" "--help does not mention:$missing"; return; }
    local h=$OUT
    gl check --help
    [[ $RC = 0 && $OUT == "$h" ]] || { fail "$1" "check --help: $(why)"; return; }
    ok "$1"
}
case_help_options_accepted() {
    # every option --help lists is accepted by check
    local o bad=
    for o in "--select GL301" "--ignore GL301" "--extend-select GL301" "--output-format json" --statistics \
        --exit-zero --trace "-j 2" "--jobs 2" "--max-file-size 100000" --no-color; do
        # shellcheck disable=SC2086
        gl check $o clean.py
        [ "$RC" = 0 ] || bad="$bad '$o'(rc=$RC)"
    done
    [ -z "$bad" ] || { fail "$1" "options rejected:$bad"; return; }
    ok "$1"
}
case_max_file_size() {
    gl check --max-file-size 10 hazard.py
    [[ $RC = 0 && $ERR == *hazard.py*skipped* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
case_trace() {
    gl check --trace --no-color hazard.py
    [[ $RC = 1 && $OUT == *GL301* ]] || { fail "$1" "$(why)"; return; }
    ok "$1"
}
# --trace gives, for each growth rule, the facts of the value behind the finding in the user's
# words: where its graph comes from and the loop that carries it
case_trace_facts() {
    local root=$OLDPWD rule file want
    for rule_file_want in \
        "GL101|GL101/pos_ema_loss.py|added value '0.02 \* rec' \(line 27\): tensor, post-backward; graph from 'recon_crit" \
        "GL102|GL102/pos_collect_outputs_eval.py|container 'vectors' \(line 20\): container, no-grad, items graph-live; carried around the loop at line 19" \
        "GL103|GL103/pos_bare_detach_discarded.py|fed-back input 'hidden' \(line 24\): tensor, post-backward; graph from 'mrnn\(roll, hidden\)' \(line 24\); carried around the loop at line 22" \
        "GL104|GL104/pos_diffusion_sampling.py|fed-back input 'img' \(line 24\): tensor, graph-live; graph from 'unet\(img, t_batch\)'" \
        "GL105|GL105/pos_after_autograd_grad.py|no model input is carried from one step into the next"; do
        IFS='|' read -r rule file want <<<"$rule_file_want"
        gl check --trace --no-color --select "$rule" "$root/fixtures/rules/$file"
        [[ $RC = 1 ]] && grep -qE -- "= trace: $want" <<<"$OUT" || { fail "$1" "$rule: no trace /$want/: $(why)"; return; }
        grep -qE -- "= trace: loop at line [0-9]+ in .*: kind" <<<"$OUT" || { fail "$1" "$rule: no loop-kind trace: $(why)"; return; }
    done
    gl check --no-color "$root/fixtures/rules/GL104/pos_diffusion_sampling.py"
    [[ $OUT != *"= trace:"* ]] || { fail "$1" "trace lines without --trace"; return; }
    ok "$1"
}
# Files linted together share function summaries: the helper's file makes the call a graph
# source; linted alone, the caller is clean (the helper is unknown)
case_project_summaries() {
    local root=$OLDPWD d
    d=$root/fixtures/rules/GL101/project_loss_helper
    gl check --no-color --output-format concise "$d/pos_train.py" "$d/losses.py"
    [[ $RC = 1 && $OUT == *"pos_train.py:21:13: GL101"* ]] || { fail "$1" "together: $(why)"; return; }
    local both=$OUT
    # alone, the helper is read from disk: the same findings (pre-commit passes only changed files)
    gl check --no-color --output-format concise "$d/pos_train.py"
    [[ $RC = 1 && $OUT == "$both" ]] || { fail "$1" "alone differs from together: $(why)"; return; }
    gl check --no-color --output-format concise -j 1 "$d"
    local one=$OUT
    gl check --no-color --output-format concise -j 3 "$d"
    [[ $OUT == "$one" ]] || { fail "$1" "-j 1 and -j 3 differ: $(why)"; return; }
    gl debug summaries "$d/losses.py"
    [[ $OUT == *"lm_loss -> tensor, may-grad"*"calls parameter 1"* ]] || { fail "$1" "summary: $(why)"; return; }
    ok "$1"
}
# Helpers found on disk: used for their summaries, never reported; Python's search (the caller's
# folder, then the folders above it up to the project's root) and no further.
case_project_disk_helpers() {
    mkdir -p disk/outer/proj/sub
    cat >disk/outer/proj/sub/helpers.py <<'EOF'
import torch


def step_loss(model, x):
    return model(x).sum()


def noisy(model, loader):
    total = 0
    for x in loader:
        loss = model(x).sum()
        loss.backward()
        total += loss
    return total
EOF
    cat >disk/outer/proj/sub/train.py <<'EOF'
import torch
from helpers import step_loss


def train(loader):
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    agg = 0
    for x in loader:
        opt.zero_grad()
        loss = step_loss(model, x)
        loss.backward()
        opt.step()
        agg += step_loss(model, x)
    return agg
EOF
    # the same helper name above the project's root (pyproject.toml) is not on its path
    cp disk/outer/proj/sub/train.py disk/outer/proj/train2.py
    cp disk/outer/proj/sub/helpers.py disk/outer/helpers.py
    : >disk/outer/proj/pyproject.toml
    gl check --no-cache --no-color --output-format concise disk/outer/proj/sub/train.py
    [[ $RC = 1 && $OUT == *"train.py:14:9: GL101"* ]] || { fail "$1" "helper on disk not used: $(why)"; return; }
    [[ $OUT != *helpers.py* ]] || { fail "$1" "the helper's own findings were reported: $(why)"; return; }
    gl check --no-cache --no-color --output-format concise disk/outer/proj/train2.py
    [[ $RC = 0 ]] || { fail "$1" "a helper above the project root was used: $(why)"; return; }
    # with the cache: a warm run gives the same, and a changed helper changes the result
    gl check --no-color --output-format concise disk/outer/proj/sub/train.py
    gl check --no-color --output-format concise disk/outer/proj/sub/train.py
    [[ $RC = 1 && $OUT == *"train.py:14:9: GL101"* ]] || { fail "$1" "warm cache: $(why)"; return; }
    sed -i 's/return model(x).sum()/return model(x).sum().item()/' disk/outer/proj/sub/helpers.py
    gl check --no-color --output-format concise disk/outer/proj/sub/train.py
    [[ $RC = 0 ]] || { fail "$1" "stale summary after the helper changed: $(why)"; return; }
    ok "$1"
}
case_no_color_env() {
    NO_COLOR=1 gl check hazard.py
    [[ $OUT != *$'\e['* ]] || { fail "$1" "NO_COLOR output has escape codes"; return; }
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# regressions
nested_class_src() {
    cat <<EOF
import torch
import torch.nn as nn


class Net(nn.Module):
$1
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def evaluate(loader):
    model = Net()
    total = 0
    for x, y in loader:
        total += model(x).sum()
    return total
EOF
}
case_nested_class_module() {
    # a class body that holds a nested class is still an nn.Module: `Net()` is a model, and summing
    # its output across an evaluation loop is GL101, as it is without the nested class
    nested_class_src '' >nc_plain.py
    nested_class_src $'    class Config:\n        size = 4\n' >nc_nested.py
    gl check --output-format concise --select GL101 nc_plain.py
    [[ $RC = 1 && $OUT == *"nc_plain.py:19:9: GL101"* ]] || { fail "$1" "control case: $(why)"; return; }
    gl check --output-format concise --select GL101 nc_nested.py
    [[ $RC = 1 && $OUT == *"nc_nested.py:21:9: GL101"* ]] ||
        { fail "$1" "GL101 missed when the module class holds a nested class: $(why)"; return; }
    ok "$1"
}
# GL109's severity follows what the update keeps: an error when a statistic computed for the update
# alone saves a tensor (x.var(0): device growth), a warning when the output uses the same statistics
# or they save nothing (host growth); the message says which
case_gl109_severity() {
    local root=$OLDPWD want row
    gl check --output-format json --no-cache --select GL109 "$root/fixtures/rules/GL109/pos_assign_own_stats.py" \
        "$root/fixtures/rules/GL109/pos_assign_shared_stats.py" "$root/fixtures/rules/GL109/pos_helper_given_stats.py"
    [[ $RC = 1 ]] || { fail "$1" "$(why)"; return; }
    for want in "pos_assign_own_stats.py:19:warning:host" "pos_assign_own_stats.py:21:error:device" \
        "pos_assign_shared_stats.py:16:warning:host" "pos_assign_shared_stats.py:17:warning:host" \
        "pos_helper_given_stats.py:14:error:device" "pos_helper_given_stats.py:17:warning:host"; do
        row=$(python3 -c '
import json, sys
for r in json.load(sys.stdin):
    m = r["message"]
    where = "device" if "keeps an input activation on the device" in m else "host" if "stay linked on the host" in m else "?"
    print("%s:%d:%s:%s" % (r["filename"].rsplit("/", 1)[-1], r["location"]["row"], r["severity"], where))
' <<<"$OUT" | grep -c -- "^$want\$")
        [[ $row = 1 ]] || { fail "$1" "no finding $want in: $(why)"; return; }
    done
    ok "$1"
}

# ---------------------------------------------------------------------------------------------
# the table of function cases: id | function
fcases=$(cat <<'EOF'
cli-1.14|case_unknown_rule_msg
cli-1.15|case_missing_path_msg
cli-2.10|case_prefix_family
cli-2.11|case_ignore_one
cli-3.11|case_gl901_message
cli-3.12|case_gl901_not_selected
cli-3.13|case_noqa_file_clean
cli-4.1|case_syntax_error
cli-4.7|case_bad_utf8_comment
cli-4.8|case_bad_utf8_string
cli-4.9|case_full_bad_utf8
cli-4.10|case_nul
cli-4.11|case_empty
cli-4.12|case_only_comments
cli-4.13|case_no_trailing_newline
cli-4.14|case_crlf
cli-4.15|case_bom
cli-4.16|case_bom_lines
cli-4.17|case_dir_named_py
cli-4.18|case_unreadable
cli-4.19|case_symlink_loop
cli-4.20|case_file_symlink
cli-5.1|case_full
cli-5.2|case_concise
cli-5.3|case_json
cli-5.4|case_json_empty
cli-5.5|case_json_fix
cli-5.6|case_sarif
cli-5.7|case_sarif_empty
cli-5.8|case_github
cli-5.9|case_statistics
cli-6.1|case_walk_skips
cli-6.2|case_walk_explicit
cli-6.3|case_walk_dir_symlink
cli-6.4|case_walk_default_dot
cli-6.5|case_pyi
cli-7.1|case_order
cli-7.2|case_dedup
cli-8.1|case_rule_doc
cli-8.2|case_rules
cli-8.3|case_every_rule_doc
cli-8.4|case_version
cli-8.5|case_help
cli-8.6|case_help_options_accepted
cli-8.7|case_max_file_size
cli-8.8|case_trace
cli-8.9|case_no_color_env
cli-8.10|case_trace_facts
cli-8.11|case_project_summaries
cli-8.12|case_project_disk_helpers
cli-9.1|case_nested_class_module
cli-9.2|case_gl109_severity
EOF
)

if [ ! -x "$GRADLEAK" ]; then
    echo "FAIL cli-0.0 $GRADLEAK is not built"
    exit 1
fi

while IFS='|' read -r id want pat args; do
    want "$id" || continue
    # shellcheck disable=SC2086
    gl $args
    if [ "$RC" != "$want" ]; then
        fail "$id" "gradleak $args: want exit $want, $(why)"
    elif [ -n "$pat" ] && ! grep -qE -- "$pat" <<<"$OUT"; then
        fail "$id" "gradleak $args: stdout does not match /$pat/: $(why)"
    else
        ok "$id"
    fi
done <<<"$simple_rows"

while IFS='|' read -r id f codes; do
    want "$id" || continue
    case_noqa_row "$id" "$f" "$codes"
done <<<"$noqa_rows"

while IFS='|' read -r id src line; do
    want "$id" || continue
    case_syntax_row "$id" "$src" "$line"
done <<<"$syntax_rows"

while IFS='|' read -r id fn; do
    want "$id" || continue
    "$fn" "$id"
done <<<"$fcases"

[ "$nfail" -eq 0 ]
