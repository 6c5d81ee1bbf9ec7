#!/usr/bin/env bash
# IR golden tests in tree-sitter's corpus format. Each tests/ir/cases/*.txt holds cases:
#
#   ===
#   name of the case
#   ===
#   <Python source>
#   ---
#   <expected output of `gradleak debug ir` on that source>
#
# (header and separator lines are 3 or more '=' / '-'). Each case's source goes to a temp .py file
# (trailing blank lines dropped, one final newline), `gradleak debug ir` runs on it, and its stdout
# must equal the expected part (trailing blank lines ignored). Ids: ir-<file stem>.<n>, n counting
# from 1 in file order: add new cases at the end of a file.
#
#   tests/ir/run.sh [FILTER]       FILTER: a substring of the id or of the case name
#   UPDATE=1 tests/ir/run.sh       rewrite the expected parts from the current output (review the
#                                  diff before committing)
set -u
cd "$(dirname "$0")/../.." || exit 2
GRADLEAK=${GRADLEAK:-$PWD/build/gradleak}
case $GRADLEAK in /*) ;; *) GRADLEAK=$PWD/$GRADLEAK ;; esac
if [ ! -x "$GRADLEAK" ]; then
    echo "FAIL ir-0.0 $GRADLEAK is not built"
    exit 1
fi
export GRADLEAK
exec python3 - "${1:-}" <<'PY'
import difflib, glob, os, re, subprocess, sys, tempfile

gradleak = os.environ["GRADLEAK"]
update = os.environ.get("UPDATE", "") not in ("", "0")
flt = sys.argv[1]
HDR = re.compile(r"^={3,}\s*$")
SEP = re.compile(r"^-{3,}\s*$")


def parse(text):
    """Returns [(name, source_lines, expected_lines, header_lines)] and checks the layout."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cases, i = [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        if not HDR.match(lines[i]) or i + 2 >= len(lines) or not HDR.match(lines[i + 2]):
            raise ValueError("line %d: expected a '===' / name / '===' header" % (i + 1))
        name, head = lines[i + 1].strip(), lines[i:i + 3]
        i += 3
        src = []
        while i < len(lines) and not SEP.match(lines[i]):
            if HDR.match(lines[i]):
                raise ValueError("case %r: no '---' line before the next header" % name)
            src.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError("case %r: no '---' line" % name)
        i += 1
        exp = []
        while i < len(lines) and not (HDR.match(lines[i]) and i + 2 < len(lines) and HDR.match(lines[i + 2])):
            exp.append(lines[i])
            i += 1
        cases.append((name, strip_blank(src), strip_blank(exp), head))
    return cases


def strip_blank(ls):
    ls = list(ls)
    while ls and not ls[-1].strip():
        ls.pop()
    return ls


def run(src_lines, tmpdir):
    path = os.path.join(tmpdir, "case.py")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(src_lines) + "\n")
    p = subprocess.run([gradleak, "debug", "ir", path], capture_output=True)
    out = p.stdout.decode("utf-8", "replace")
    return p.returncode, strip_blank(out.split("\n")), p.stderr.decode("utf-8", "replace")


failed = 0
with tempfile.TemporaryDirectory(prefix="gradleak-ir.") as tmpdir:
    for path in sorted(glob.glob("tests/ir/cases/*.txt")):
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            cases = parse(text)
        except ValueError as e:
            print("FAIL ir-%s.0 %s: %s" % (stem, path, e))
            failed += 1
            continue
        rewritten, changed = [], False
        for n, (name, src, exp, head) in enumerate(cases, 1):
            cid = "ir-%s.%d" % (stem, n)
            selected = not flt or flt in cid or flt in name
            got = exp
            if selected:
                rc, out, err = run(src, tmpdir)
                if rc != 0 or err.strip():
                    print("FAIL %s %s: debug ir exited %d: %s" % (cid, name, rc, err.strip()[:300]))
                    failed += 1
                elif out != exp:
                    if update:
                        got, changed = out, True
                        print("ok %s %s # updated" % (cid, name))
                    else:
                        diff = difflib.unified_diff(exp, out, "expected", "got", lineterm="", n=1)
                        print("FAIL %s %s: output differs\n    %s" % (cid, name, "\n    ".join(diff)))
                        failed += 1
                else:
                    print("ok %s %s" % (cid, name))
            rewritten.append("\n".join(head + src + ["---"] + got))
        if update and changed:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n\n".join(rewritten) + "\n")
sys.exit(1 if failed else 0)
PY
