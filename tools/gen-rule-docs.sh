#!/bin/sh
# Generates the rule documentation table (C) and docs/rules/<CODE>.md from the header comment of
# each rule file rules/GLnnn_<name>.c. POSIX sh + POSIX awk (Debian's default awk is mawk).
#
#   tools/gen-rule-docs.sh [-c OUT.c] [-m MD_DIR] [-d rules.def] RULE_FILE...
#
# A rule file starts with:
#   /* GL107 no-grad-not-entered: one-line purpose.
#    *
#    * ## What it does ... ## Why is this bad? ... ## Example ... Use instead: ...
#    * ## Fix safety ... ## References ...
#    */
# The doc is the text after the first line up to " */", each line without its leading " * " (or " *").
# Fails, naming the file and the heading, when one of the six headings is missing or out of order.
set -eu

out_c=
md_dir=
def=
while [ $# -gt 0 ]; do
    case $1 in
        -c) out_c=$2; shift 2 ;;
        -m) md_dir=$2; shift 2 ;;
        -d) def=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "gen-rule-docs: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ -z "$out_c" ] && [ -z "$md_dir" ]; then
    echo "usage: gen-rule-docs.sh [-c OUT.c] [-m MD_DIR] [-d rules.def] RULE_FILE..." >&2
    exit 2
fi

# Codes registered in rules.def, so a doc for an unregistered code fails here, not in the compiler.
known=
if [ -n "$def" ]; then
    known=$(sed -n 's/^[[:space:]]*RULE([[:space:]]*\(GL[0-9][0-9][0-9]\)[[:space:]]*,.*/\1/p' "$def" | tr '\n' ' ')
fi

tmp_c=
if [ -n "$out_c" ]; then
    mkdir -p "$(dirname "$out_c")"
    tmp_c=$out_c.tmp.$$
fi
if [ -n "$md_dir" ]; then
    mkdir -p "$md_dir"
fi
trap 'rm -f "$tmp_c"' EXIT

# With no rule files awk would read stdin: give it /dev/null instead.
if [ $# -eq 0 ]; then
    set -- /dev/null
fi

awk -v out_c="$tmp_c" -v md_dir="$md_dir" -v known="$known" '
function fail(msg) { print "gen-rule-docs: " msg | "cat 1>&2"; failed = 1 }

# C string literal body for one line: escape \ and ", tabs and other control bytes, and "?" when a
# trigraph could form (-std=c11 enables trigraphs).
function cstr(s,    out, i, c, q) {
    out = ""
    q = index(s, "??") > 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") out = out "\\\\"
        else if (c == "\"") out = out "\\\""
        else if (c == "\t") out = out "\\t"
        else if (c == "?" && q) out = out "\\?"
        else if (c < " ") out = out sprintf("\\%03o", ord[c])
        else out = out c
    }
    return out
}

function finish(    i, j, n, h, pos, prev, fence, l, path, base) {
    if (file == "") return
    if (!closed) { fail(file ": header comment not closed with \" */\""); file = ""; return }
    # trim blank lines at both ends
    while (ndoc > 0 && doc[ndoc] == "") ndoc--
    first = 1
    while (first <= ndoc && doc[first] == "") first++
    # headings in order, outside code fences
    prev = 0
    for (h = 1; h <= nhead; h++) {
        pos = 0; fence = 0
        for (i = first; i <= ndoc; i++) {
            l = doc[i]
            if (substr(l, 1, 3) == "```") { fence = !fence; continue }
            if (!fence && l == head[h]) { pos = i; break }
        }
        if (pos == 0) { fail(file ": missing heading \"" head[h] "\""); file = ""; return }
        if (pos < prev) { fail(file ": heading \"" head[h] "\" out of order (must come after \"" head[h-1] "\")"); file = ""; return }
        prev = pos
    }
    if (code in seen) { fail(file ": " code " is also documented in " seen[code]); file = ""; return }
    seen[code] = file
    ncodes++
    codes[ncodes] = code
    text = ""
    for (i = first; i <= ndoc; i++) text = text "    \"" cstr(doc[i]) "\\n\"\n"
    ctext[code] = text
    if (md_dir != "") {
        path = md_dir "/" code ".md"
        printf "# %s %s\n\n%s\n\n", code, name, purpose > path
        for (i = first; i <= ndoc; i++) print doc[i] > path
        close(path)
    }
    file = ""
}

BEGIN {
    nhead = split("## What it does|## Why is this bad?|## Example|Use instead:|## Fix safety|## References", head, "|")
    for (i = 1; i < 32; i++) ord[sprintf("%c", i)] = i
    nk = split(known, karr, " ")
    for (i = 1; i <= nk; i++) isknown[karr[i]] = 1
    file = ""
    ncodes = 0
    failed = 0
}

FNR == 1 {
    finish()
    if (FILENAME == "/dev/null") next
    file = FILENAME
    closed = 0
    ndoc = 0
    l = $0
    sub(/\r$/, "", l)
    if (l !~ /^\/\* GL[0-9][0-9][0-9] [a-z0-9][a-z0-9-]*: ./) {
        fail(file ":1: first line must be \"/* GLnnn kebab-name: one-line purpose.\"")
        file = ""
        next
    }
    l = substr(l, 4)
    code = substr(l, 1, 5)
    name = substr(l, 7)
    sub(/:.*/, "", name)
    purpose = l
    sub(/^[^:]*: */, "", purpose)
    base = file
    sub(/.*\//, "", base)
    if (base != code "_" name ".c") {
        fail(file ": file name must be " code "_" name ".c (from its first line)")
        file = ""
        next
    }
    if (nk > 0 && !(code in isknown)) {
        fail(file ": " code " is not registered in rules/rules.def")
        file = ""
        next
    }
    next
}

file == "" || closed { next }

{
    l = $0
    sub(/\r$/, "", l)
    if (l ~ /^[ \t]*\*\/[ \t]*$/) { closed = 1; next }
    last = 0
    if (l ~ /\*\/[ \t]*$/) { sub(/[ \t]*\*\/[ \t]*$/, "", l); last = 1 }
    if (substr(l, 1, 3) == " * ") l = substr(l, 4)
    else if (substr(l, 1, 2) == " *") l = substr(l, 3)
    sub(/[ \t]+$/, "", l)
    doc[++ndoc] = l
    if (last) closed = 1
}

END {
    finish()
    if (failed) exit 1
    if (out_c == "") exit 0
    # sort codes (insertion sort; a few dozen rules)
    for (i = 2; i <= ncodes; i++) {
        c = codes[i]
        for (j = i - 1; j >= 1 && codes[j] > c; j--) codes[j + 1] = codes[j]
        codes[j + 1] = c
    }
    print "/* Generated by tools/gen-rule-docs.sh from the header comments of rules/GL*.c. Do not edit. */" > out_c
    print "#include \"base/rule_catalog.h\"" > out_c
    print "" > out_c
    print "extern const char *const gl_rule_docs[RULE_COUNT];" > out_c
    if (ncodes == 0) {
        print "const char *const gl_rule_docs[RULE_COUNT] = { 0 };" > out_c
    } else {
        print "const char *const gl_rule_docs[RULE_COUNT] = {" > out_c
        for (i = 1; i <= ncodes; i++) {
            t = ctext[codes[i]]
            sub(/\n$/, "", t)
            printf "    [RULE_%s] =\n%s,\n", codes[i], t > out_c
        }
        print "};" > out_c
    }
    close(out_c)
}
' "$@"

if [ -n "$out_c" ]; then
    mv -f "$tmp_c" "$out_c"
fi
