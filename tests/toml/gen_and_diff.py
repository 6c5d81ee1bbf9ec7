#!/usr/bin/env python3
"""Differential test of gradleak's TOML reader (toml_dump) against Python's tomllib.

Generates N random documents -- well-formed ones of gradleak's subset, table-redefinition puzzles
over a tiny key alphabet, value soups, byte-level mutations of all of these, and documents with
features outside the subset -- and runs both parsers on each. tomllib is the oracle:

  * tomllib accepts and the document is inside the subset: toml_dump must print the same tree,
    with the same key order, the same types, and floats equal at repr() level;
  * tomllib rejects (or cannot decode the bytes as UTF-8): toml_dump must reject;
  * tomllib accepts but the document is outside the subset -- a date or time, an integer that does
    not fit in 64 bits (tomllib keeps Python's unbounded ints, TOML 1.0 says reject), or nesting
    deeper than TOML_MAX_DEPTH: toml_dump must reject, with the message that names that feature.

Every rejection by toml_dump must be exit 1 with exactly one line `error: LINE:COL: message` on
stderr, the position inside the document. Anything else (crash, timeout, other exit code) fails.

usage: gen_and_diff.py --dump build/tests/toml_dump [--n 10000] [--seed 1] [--keep DIR] [-j JOBS]
"""
import argparse
import datetime
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor

MAX_DEPTH = 128  # TOML_MAX_DEPTH in src/config/toml.h
OUTSIDE_MESSAGES = {
    "date": "dates are not supported in gradleak configuration",
    "bigint": "does not fit in 64 bits",
    "deep": "deeper than",
}
ERR_RE = re.compile(r"^error: (\d+):(\d+): (.+)\n$")


class Outside(Exception):
    """The document is valid TOML outside gradleak's subset."""


# ---- generation ----

BARE = "abcxyzABZ019_-"
TINY_KEYS = ["a", "b", "c"]
STRING_CHARS = (
    list("abcdef XYZ 0189 -_.,=[]{}#") + ["'", '"', "\\", "\t", "é", "ß", "€", "😀", "\u2028", "\ufeff",
                                           "\uffff", "\x7f", "\x00", "\x1f", "\r", "\n", "\r\n"])
ESCAPES = ["\\b", "\\t", "\\n", "\\f", "\\r", '\\"', "\\\\", "\\u00e9", "\\u0000", "\\U0001F600",
           "\\uD800", "\\U00110000", "\\u12", "\\x41", "\\e", "\\ ", "\\u001F", "\\U0010FFFF", "\\uFFFF"]
VALID_ESCAPES = ESCAPES[:10] + ["\\u001F", "\\U0010FFFF", "\\uFFFF", "\\u007f", "\\U0000E000", "\\U0000d7ff"]


class Gen:
    def __init__(self, rng):
        self.r = rng

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def chance(self, p):
        return self.r.random() < p

    def ws(self):
        return self.pick(["", "", "", " ", "  ", "\t", " \t "])

    def nl(self):
        return "\r\n" if self.chance(0.1) else "\n"

    def comment(self):
        if not self.chance(0.25):
            return ""
        body = "".join(self.pick(STRING_CHARS[:40] + ["é", "😀", "#", "\t"]) for _ in range(self.r.randrange(8)))
        if self.chance(0.03):
            body += self.pick(["\x00", "\x7f", "\r", "\x1b"])
        return self.ws() + "#" + body

    def key_part(self, pool=None):
        if pool is not None and not self.chance(0.05):
            k = self.pick(pool)
            form = self.r.randrange(10)
            if form == 0:
                return '"' + k + '"'
            if form == 1:
                return "'" + k + "'"
            return k
        form = self.r.randrange(10)
        if form < 6:
            return "".join(self.pick(BARE) for _ in range(1 + self.r.randrange(6)))
        if form < 8:
            return '"' + self.str_body(basic=True, multiline=False, n=self.r.randrange(6)) + '"'
        return "'" + "".join(self.pick("ab é.[]= #\"") for _ in range(self.r.randrange(5))) + "'"

    def key(self, pool=None, max_parts=3):
        parts = [self.key_part(pool) for _ in range(1 + self.r.randrange(max_parts))]
        out = parts[0]
        for p in parts[1:]:
            out += self.pick(["", "", " "]) + "." + self.pick(["", "", " "]) + p
        return out

    def str_body(self, basic, multiline, n):
        out = []
        for _ in range(n):
            if basic and self.chance(0.25):
                out.append(self.pick(VALID_ESCAPES if self.chance(0.95) else ESCAPES))
                continue
            c = self.pick(STRING_CHARS)
            bad = c in ("\x7f", "\x00", "\x1f", "\r") or (c in ("\n", "\r\n") and not multiline)
            if bad and not self.chance(0.03):
                c = "x"
            if basic and c == "\\":
                c = "\\\\"
            if basic and c == '"' and not multiline:
                c = '\\"'
            if not basic and c == "'" and not multiline:
                c = "q"
            out.append(c)
        if basic and multiline and self.chance(0.3):
            out.insert(self.r.randrange(len(out) + 1), "\\" + self.pick(["", " ", "\t "]) + self.nl() + self.ws())
        return "".join(out)

    def string(self):
        n = self.r.randrange(10)
        kind = self.r.randrange(4)
        if kind == 0:
            return '"' + self.str_body(True, False, n) + '"'
        if kind == 1:
            return "'" + self.str_body(False, False, n) + "'"
        lead = self.nl() if self.chance(0.5) else ""
        q = '"""' if kind == 2 else "'''"
        body = self.str_body(kind == 2, True, n)
        tail = self.pick(["", "", "", q[0], q[0] * 2])
        return q + lead + body + tail + q

    def digits(self, alphabet, n):
        out = self.pick(alphabet)
        for _ in range(n - 1):
            if self.chance(0.15):
                out += "_"
            out += self.pick(alphabet)
        return out

    def integer(self):
        form = self.r.randrange(12)
        if form == 0:
            return self.pick(["9223372036854775807", "-9223372036854775808", "9223372036854775808",
                              "-9223372036854775809", "0x7fffffffffffffff", "0x8000000000000000",
                              "0o777777777777777777777", "0o1777777777777777777777", "0b" + "1" * 63,
                              "0b1" + "0" * 63, "+9_223_372_036_854_775_807", "99999999999999999999"])
        if form == 1:
            return "0x" + self.digits("0123456789abcdefABCDEF", 1 + self.r.randrange(10))
        if form == 2:
            return "0o" + self.digits("01234567", 1 + self.r.randrange(8))
        if form == 3:
            return "0b" + self.digits("01", 1 + self.r.randrange(12))
        sign = self.pick(["", "", "+", "-"])
        if self.chance(0.15):
            return sign + "0"
        return sign + self.pick("123456789") + self.digits("0123456789", 1 + self.r.randrange(8))[1:]

    def float_(self):
        form = self.r.randrange(10)
        if form == 0:
            return self.pick(["", "+", "-"]) + self.pick(["inf", "nan"])
        if form == 1:
            return repr(self.r.uniform(-1e6, 1e6)) if self.chance(0.5) else repr(float("%se%d" % (self.r.random(), self.r.randrange(-330, 310))))
        if form == 2:
            return self.pick(["1e400", "-1e400", "4.9e-324", "2.4e-324", "1e-400", "0.1", "0.30000000000000004",
                              "1.7976931348623157e308", "1.7976931348623159e308", "-0.0", "+0.0", "0e0",
                              "123456789012345678901234567890.5", "9007199254740993.0", "1E5", "1e+05", "1e-05"])
        sign = self.pick(["", "", "+", "-"])
        intpart = "0" if self.chance(0.2) else self.pick("123456789") + self.digits("0123456789", 1 + self.r.randrange(5))[1:]
        frac = "." + self.digits("0123456789", 1 + self.r.randrange(6)) if self.chance(0.7) else ""
        exp = ""
        if not frac or self.chance(0.4):
            exp = self.pick("eE") + self.pick(["", "+", "-"]) + self.digits("0123456789", 1 + self.r.randrange(3))
        return sign + intpart + frac + exp

    def scalar(self):
        form = self.r.randrange(10)
        if form < 3:
            return self.string()
        if form < 6:
            return self.integer()
        if form < 8:
            return self.float_()
        return self.pick(["true", "false"])

    def array(self, depth):
        items = [self.value(depth + 1) for _ in range(self.r.randrange(5))]
        sep = lambda: self.ws() + (self.comment() + self.nl() if self.chance(0.2) else "") + self.ws()
        out = "[" + sep()
        for i, it in enumerate(items):
            out += it + sep()
            if i + 1 < len(items) or self.chance(0.3):
                out += "," + sep()
        return out + "]"

    def inline_table(self, depth, pool=None):
        n = self.r.randrange(4)
        out = "{" + self.ws()
        for i in range(n):
            out += self.key(pool, 2) + self.ws() + "=" + self.ws() + self.value(depth + 1, pool)
            if i + 1 < n:
                out += self.ws() + "," + self.ws()
        return out + self.ws() + "}"

    def value(self, depth=0, pool=None):
        if depth < 4:
            form = self.r.randrange(10)
            if form == 0:
                return self.array(depth)
            if form == 1:
                return self.inline_table(depth, pool)
        return self.scalar()

    def keyvals(self, pool=None, n=None):
        out = ""
        for _ in range(self.r.randrange(4) if n is None else n):
            out += self.ws() + self.key(pool) + self.ws() + "=" + self.ws() + self.value(0, pool) + self.comment() + self.nl()
            if self.chance(0.1):
                out += self.comment() + self.nl()
        return out

    def header(self, pool=None, max_parts=3):
        aot = self.chance(0.3)
        o, c = ("[[", "]]") if aot else ("[", "]")
        return self.ws() + o + self.ws() + self.key(pool, max_parts) + self.ws() + c + self.comment() + self.nl()

    # whole documents

    def doc_valid(self):
        out = self.keyvals()
        for _ in range(self.r.randrange(5)):
            out += (self.nl() if self.chance(0.3) else "") + self.header() + self.keyvals()
        return out

    def doc_tables_loose(self):
        """Random headers and key/value lines over three names, with quoting and spacing."""
        out = ""
        for _ in range(1 + self.r.randrange(7)):
            if self.chance(0.5):
                out += self.header(TINY_KEYS, 3)
            else:
                out += self.keyvals(TINY_KEYS, 1 + self.r.randrange(2))
        return out

    def doc_tables(self):
        """Headers and dotted keys over three names, reusing paths already seen (their prefixes,
        extensions and suffixes), so that every table-redefinition rule gets exercised."""
        seen = [()]
        header = ()
        out = ""

        def related():
            p = list(self.pick(seen))
            if p and self.chance(0.4):
                p = p[:self.r.randrange(len(p))]  # a proper prefix
            while not p or self.chance(0.4):
                p.append(self.pick(TINY_KEYS))
            return tuple(p[:5])

        for _ in range(1 + self.r.randrange(8)):
            if self.chance(0.45):
                header = related()
                seen.append(header)
                aot = self.chance(0.3)
                out += ("[[%s]]" if aot else "[%s]") % ".".join(header) + self.nl()
            else:
                # A dotted key relative to the current header, often reaching a seen path.
                below = [p[len(header):] for p in seen if p[:len(header)] == header and len(p) > len(header)]
                rel = list(self.pick(below)) if below and self.chance(0.6) else []
                if rel and self.chance(0.3):
                    rel = rel[:1 + self.r.randrange(len(rel))]
                while not rel or self.chance(0.3):
                    rel.append(self.pick(TINY_KEYS))
                seen.append(header + tuple(rel))
                value = self.pick(["1", "{}", "{ c = 1 }", "[]", "[{}]", '"s"', "{ a.b = 1 }"])
                out += ".".join(rel) + " = " + value + self.nl()
        return out

    def doc_soup(self):
        """One value built from number, string and bracket fragments, valid or nearly so."""
        frags = ["0", "1", "9", "_", ".", "e", "E", "+", "-", "x", "o", "b", "f", "inf", "nan", "0x", "1_0",
                 "[", "]", ",", "{", "}", "=", "a", '"', "'", '"""', "'''", "\\", "\\u00", " ", "\t", "\n",
                 "true", "false", "#", ":", "T", "Z", "1979-05-27", "07:32:00", "2024-02-30"]
        body = "".join(self.pick(frags) for _ in range(1 + self.r.randrange(6)))
        return "a = " + body + self.pick(["", "\n", "\nb = 1\n"])

    def doc_outside(self):
        """Valid TOML that is outside the subset: dates, times, integers past 64 bits."""
        thing = self.pick(["1979-05-27", "1979-05-27T07:32:00Z", "1979-05-27 07:32:00.999999-07:00",
                           "07:32:00", "1979-05-27T00:32:00.5", "18446744073709551616", "-9223372036854775809",
                           "0xffffffffffffffff", "0b1" + "0" * 64, "1979-05-27t07:32:00+01:30"])
        if self.chance(0.5):
            thing = "[1, " + thing + "]" if self.chance(0.5) else "{ x = " + thing + " }"
        lines = self.doc_valid().split("\n")
        at = self.r.randrange(len(lines) + 1)
        lines.insert(at, "date_or_big = " + thing)
        return "\n".join(lines) + "\n"

    def mutate(self, text):
        b = bytearray(text.encode("utf-8", "surrogatepass"))
        tokens = [b"[", b"]", b"[[", b"]]", b"{", b"}", b"=", b".", b",", b'"', b"'", b'"""', b"'''", b"\\",
                  b"#", b"\n", b"\r", b"\r\n", b"\t", b" ", b"\x00", b"\x7f", b"\x1f", b"_", b"+", b"-", b"0",
                  b"0x", b"e", b"inf", b"nan", b"true", b"a", b"a.b", b"\\u", b"\xff", b"\xc3", b"\xc0\xaf",
                  b"\xed\xa0\x80", b"\xf4\x90\x80\x80", "é".encode(), b"1979-05-27", b"07:32:00", b"\xef\xbb\xbf"]
        for _ in range(1 + self.r.randrange(3)):
            op = self.r.randrange(7)
            pos = self.r.randrange(len(b) + 1)
            if op == 0 and b:
                del b[pos:pos + 1 + self.r.randrange(3)]
            elif op in (1, 2):
                b[pos:pos] = self.pick(tokens)
            elif op == 3 and b:
                b[min(pos, len(b) - 1)] = self.r.randrange(256)
            elif op == 4:
                lines = bytes(b).split(b"\n")
                i = self.r.randrange(len(lines))
                lines.insert(self.r.randrange(len(lines) + 1), lines[i])
                b = bytearray(b"\n".join(lines))
            elif op == 5:
                lines = bytes(b).split(b"\n")
                i, j = self.r.randrange(len(lines)), self.r.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
                b = bytearray(b"\n".join(lines))
            else:
                del b[pos:]
        return bytes(b)

    def document(self):
        kind = self.r.randrange(100)
        if kind < 22:
            return "valid", self.doc_valid().encode()
        if kind < 37:
            return "tables", self.doc_tables().encode()
        if kind < 47:
            return "tables-loose", self.doc_tables_loose().encode()
        if kind < 57:
            return "soup", self.doc_soup().encode()
        if kind < 62:
            return "outside", self.doc_outside().encode()
        base = self.pick([self.doc_valid, self.doc_tables, self.doc_tables_loose, self.doc_soup, self.doc_valid])()
        return "mutated", self.mutate(base)


# Fixed documents that random generation would rarely reach: nesting limits, big inputs.
def fixed_documents():
    docs = [
        ("deep", b"a = " + b"[" * 100000),
        ("deep", b"a = " + b"[" * 127 + b"]" * 127 + b"\n"),
        ("deep", b"a = " + b"[" * 128 + b"]" * 128 + b"\n"),
        ("deep", b"a = " + b"{b = " * 100 + b"1" + b"}" * 100 + b"\n"),
        ("deep", b"[" + b".".join([b"k"] * 127) + b"]\n"),
        ("deep", b"[" + b".".join([b"k"] * 129) + b"]\n"),
        ("deep", b".".join([b"k"] * 128) + b" = 1\n"),
        ("deep", b"[[" + b".".join([b"k"] * 127) + b"]]\n"),
        ("wide", b"".join(b"k%d = %d\n" % (i, i) for i in range(20000))),
        ("wide", b"a = [" + b",".join(b"%d" % i for i in range(20000)) + b"]\n"),
        ("wide", b"".join(b"[[t]]\nx = %d\n" % i for i in range(2000))),
        ("empty", b""),
        ("empty", b"\n\r\n# only a comment"),
    ]
    return docs


# ---- comparison ----

def tag_tomllib(v, depth=0):
    """tomllib's result in toml_dump's shape: tables are lists of (key, value) pairs in order."""
    if depth > MAX_DEPTH:
        raise Outside("deep")
    if isinstance(v, dict):
        return ("table", [(k, tag_tomllib(x, depth + 1)) for k, x in v.items()])
    if isinstance(v, list):
        return ("array", [tag_tomllib(x, depth + 1) for x in v])
    if isinstance(v, bool):
        return ("bool", "true" if v else "false")
    if isinstance(v, int):
        if not -(2 ** 63) <= v < 2 ** 63:
            raise Outside("bigint")
        return ("integer", str(v))
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, str):
        return ("string", v)
    if isinstance(v, (datetime.date, datetime.time)):
        raise Outside("date")
    raise TypeError(type(v))


def outside_kinds(v, depth=0, found=None):
    """Every outside-subset feature in tomllib's result (toml_dump may trip on any one first)."""
    found = set() if found is None else found
    if depth > MAX_DEPTH:
        found.add("deep")
    if isinstance(v, dict):
        for x in v.values():
            outside_kinds(x, depth + 1, found)
    elif isinstance(v, list):
        for x in v:
            outside_kinds(x, depth + 1, found)
    elif isinstance(v, (datetime.date, datetime.time)):
        found.add("date")
    elif isinstance(v, int) and not isinstance(v, bool) and not -(2 ** 63) <= v < 2 ** 63:
        found.add("bigint")
    return found


class Obj(list):
    """A JSON object from toml_dump, as its (key, value) pairs in order."""


def tag_ours(j):
    if isinstance(j, Obj):
        if len(j) == 2 and j[0][0] == "type" and j[1][0] == "value" and isinstance(j[0][1], str) \
                and isinstance(j[1][1], str):
            typ, val = j[0][1], j[1][1]
            if typ == "float":
                return ("float", repr(float(val)))
            return (typ, val)
        return ("table", [(k, tag_ours(x)) for k, x in j])
    if isinstance(j, list):
        return ("array", [tag_ours(x) for x in j])
    raise TypeError(type(j))


def oracle(data):
    """('accept', tree) | ('reject', why) | ('outside', kinds)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return "reject", "utf-8: %s" % e
    try:
        result = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return "reject", str(e)
    except RecursionError:
        return "reject", "tomllib recursion limit"
    kinds = outside_kinds(result)
    if kinds:
        return "outside", kinds
    return "accept", tag_tomllib(result)


def run_dump(dump, data, tmpdir, idx):
    path = os.path.join(tmpdir, "doc%d.toml" % idx)
    with open(path, "wb") as f:
        f.write(data)
    try:
        p = subprocess.run([dump, path], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    finally:
        os.unlink(path)
    return p.returncode, p.stdout, p.stderr


def judge(data, expect, rc, out, err):
    """None when toml_dump behaved, else a one-line reason."""
    if rc is None:
        return "toml_dump timed out"
    if rc == 0:
        if err:
            return "exit 0 but stderr: %r" % err[:200]
        if expect[0] != "accept":
            return "accepted a document tomllib %s: %s" % (
                "rejects" if expect[0] == "reject" else "parses outside the subset",
                expect[1] if expect[0] == "reject" else sorted(expect[1]))
        try:
            ours = tag_ours(json.loads(out.decode("utf-8"), object_pairs_hook=Obj))
        except Exception as e:  # noqa: BLE001 - any malformed output is the finding
            return "unreadable JSON output (%s): %r" % (e, out[:200])
        ours = normalize(ours)
        if ours != expect[1]:
            if sorted_tree(ours) == sorted_tree(expect[1]):
                return "same tree, different key order"
            return "different result:\n   ours:    %s\n   tomllib: %s" % (short(ours), short(expect[1]))
        return None
    if rc != 1:
        return "exit status %d, stderr %r" % (rc, err[-300:])
    m = ERR_RE.match(err.decode("utf-8", "replace"))
    if not m or out:
        return "bad error output: stdout %r stderr %r" % (out[:100], err[:300])
    line, col = int(m.group(1)), int(m.group(2))
    n_lines = data.count(b"\n") + 1
    if not (1 <= line <= n_lines and col >= 1):
        return "error position %d:%d outside the document (%d lines)" % (line, col, n_lines)
    if expect[0] == "accept":
        return "rejected a document tomllib accepts: %s" % m.group(3)
    if expect[0] == "outside":
        wanted = [OUTSIDE_MESSAGES[k] for k in expect[1]]
        if not any(w in m.group(3) for w in wanted):
            return "outside-subset document (%s) rejected with the wrong message: %s" % (
                sorted(expect[1]), m.group(3))
    return None


def normalize(t):
    typ, val = t
    if typ == "table":
        return ("table", [(k, normalize(v)) for k, v in val])
    if typ == "array":
        return ("array", [normalize(v) for v in val])
    return (typ, val)


def sorted_tree(t):
    typ, val = t
    if typ == "table":
        return ("table", sorted((k, sorted_tree(v)) for k, v in val))
    if typ == "array":
        return ("array", [sorted_tree(v) for v in val])
    return t


def short(t):
    s = repr(t)
    return s if len(s) < 400 else s[:400] + "..."


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None, help="directory for failing documents")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--max-report", type=int, default=10)
    args = ap.parse_args()

    gen = Gen(random.Random(args.seed))
    docs = fixed_documents() + [gen.document() for _ in range(args.n)]
    expects = [oracle(d) for _, d in docs]

    with tempfile.TemporaryDirectory(prefix="toml-diff-") as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda i: run_dump(args.dump, docs[i][1], tmp, i), range(len(docs))))

    stats = {"accept": 0, "reject": 0, "outside": 0}
    kinds = {}
    failures = []
    for i, ((kind, data), expect, (rc, out, err)) in enumerate(zip(docs, expects, results)):
        stats[expect[0]] += 1
        k = kinds.setdefault(kind, [0, 0])
        k[0] += 1
        k[1] += expect[0] == "accept"
        why = judge(data, expect, rc, out, err)
        if why:
            failures.append((i, kind, data, why))

    keep = args.keep or os.path.join(tempfile.gettempdir(), "toml-diff-fail-seed%d" % args.seed)
    if failures:
        os.makedirs(keep, exist_ok=True)
    for i, kind, data, why in failures:
        with open(os.path.join(keep, "doc%05d.toml" % i), "wb") as f:
            f.write(data)
    for i, kind, data, why in failures[:args.max_report]:
        print("FAIL doc %d (%s, saved as %s/doc%05d.toml): %s" % (i, kind, keep, i, why))
        print("   document: %r" % data[:300])
    print("toml-diff: %d documents (kind: valid/all %s); tomllib accepts %d, rejects %d, outside the subset %d; "
          "%d disagreements" % (len(docs), ", ".join("%s %d/%d" % (k, v[1], v[0]) for k, v in sorted(kinds.items())),
                                stats["accept"], stats["reject"], stats["outside"], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
