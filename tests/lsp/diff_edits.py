#!/usr/bin/env python3
"""Differential test of `gradleak lsp` against `gradleak check`: random edits, same findings.

    diff_edits.py GRADLEAK [--batches 60] [--seed 1]

A training file (fixtures/examples, and a block of constructs the lowering treats specially) is
opened in the server and edited through incremental didChange notifications the way typing does:
characters (ASCII, é, emoji: UTF-16 columns), deletions, lines of code pasted (imports that rebind
names, definitions, classes, syntax errors), lines deleted, blocks moved, edits taken back. Several
edits go out without waiting, sometimes several in one notification. After each batch the published
diagnostics of its last version must equal a fresh `gradleak check --output-format json` of the same
text: rule, range, message, related locations and the fix. A text with a syntax error is compared
too, but a difference there is counted, not failed: tree-sitter 0.20.7's error recovery can build
another tree when it parses incrementally than from scratch (tests/unit/test_pyreuse.c shows the
kept statements themselves are exact on such texts). Prints `ok <id>` / `FAIL <id> <why>`.
Python's standard library only.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
GL = sys.argv[1]


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


BATCHES = arg("--batches", 60)
rng = random.Random(arg("--seed", 1))

EXTRA = '''import torch
from torch import nn
x = 1; y = 2
class Model(nn.Module):
    size = 4
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 4)
        self.hidden = None
    @torch.no_grad()
    def forward(self, x):  # é😀
        out, self.hidden = self.rnn(x, self.hidden)
        return out
model = Model()
losses = []
for step, (x, y) in enumerate(loader):
    with torch.set_grad_enabled(True):
        loss = model(x).sum()
        if step % 10 == 0:
            print(loss, "é😀")
    losses.append(loss)
    loss.backward()
    torch.cuda.empty_cache()
'''

SNIPPETS = [
    "import numpy as torch\n",
    "import torch\n",
    "from torch import nn\n",
    "import torch.nn as nn\n",
    "nn = None\n",
    "def helper(x):\n    return x * 2\n",
    "def train(model, loader, opt):\n    total = 0\n    for x, y in loader:\n        loss = model(x).sum()\n"
    "        loss.backward()\n        opt.step()\n        total += loss\n    return total\n",
    "class M(nn.Module):\n    def forward(self, x):\n        self.h = x\n        return x\n",
    "x = (\n",
    "global total\n",
    "for i in range(3):\n    pass\n",
    "if True:\n",
    "@torch.no_grad()\n",
    "s = 'é😀'; t = 1\n",
    "# noqa: GL101 é\n",
    "'''doc\n",
    "with torch.no_grad():\n    y = model(x)\n",
    "del x\n",
]
CHARS = ["a", "x", "(", ")", ":", "\n", " ", "    ", "#", "'", ",", ".", "=", "é", "😀", "\t", "[", "0"]


def base_text():
    parts = []
    for f in ["train.py", "train_bptt.py", "charlm/model.py", "charlm/evaluate.py"]:
        with open(os.path.join(ROOT, "fixtures/examples", f), encoding="utf-8") as fh:
            parts.append(fh.read())
    return parts[0] + "\n" + parts[1] + "\n" + EXTRA + parts[2] + "\n" + parts[3]


# ---- positions: LSP lines end at \n, \r\n or \r; characters are UTF-16 units ----

def line_starts(text):
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            starts.append(i)
            continue
        i += 1
        if c in "\r\n":
            starts.append(i)
    return starts


def u16(s):
    return len(s.encode("utf-16-le")) // 2


def lsp_pos(text, starts, off):
    """(line, UTF-16 character) of code point offset off."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= off:
            lo = mid
        else:
            hi = mid - 1
    return {"line": lo, "character": u16(text[starts[lo]:off])}


def check_pos(text, starts, row, col):
    """LSP position of `gradleak check`'s 1-based row and code point column."""
    s = starts[row - 1] if row - 1 < len(starts) else len(text)
    return {"line": row - 1, "character": u16(text[s:s + col - 1])}


# ---- the server ----

proc = subprocess.Popen([GL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(obj):
    body = json.dumps(obj).encode()
    try:
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()
    except BrokenPipeError:
        print("FAIL lsp-diff-server the server stopped reading (exit %s)" % proc.wait())
        sys.exit(1)


def recv():
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("FAIL lsp-diff-server the server closed its output (exit %s)" % proc.poll())
        if line in (b"\r\n", b"\n"):
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(proc.stdout.read(length))


def wait_version(v):
    while True:
        m = recv()
        if m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == v:
            return m["params"]["diagnostics"]


tmp = tempfile.mkdtemp(prefix="gradleak-lsp-diff.")
path = os.path.join(tmp, "train.py")
uri = "file://" + path
text = base_text()
version = 1
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": os.getpid(), "rootUri": "file://" + tmp, "capabilities": {}}})
recv()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
wait_version(1)

# ---- edits ----

sent = 0  # changes sent, edits taken back included
undo = []  # (start, inserted length, removed text), in code points


def change(start, end, new):
    """The LSP change replacing text[start:end] with new, applied to text (and recorded for undo)."""
    global text
    starts = line_starts(text)
    c = {"range": {"start": lsp_pos(text, starts, start), "end": lsp_pos(text, starts, end)}, "text": new}
    undo.append((start, len(new), text[start:end]))
    text = text[:start] + new + text[end:]
    return c


def line_offset(k):
    starts = line_starts(text)
    return starts[min(k, len(starts) - 1)]


def random_change():
    n_lines = len(line_starts(text))
    kind = rng.randrange(100)
    if kind < 35:
        at = rng.randrange(len(text) + 1)
        return [change(at, at, rng.choice(CHARS))]
    if kind < 50:
        at = rng.randrange(len(text) + 1)
        return [change(at, min(len(text), at + 1 + rng.randrange(8)), "")]
    if kind < 72:
        at = line_offset(rng.randrange(n_lines))
        return [change(at, at, rng.choice(SNIPPETS))]
    if kind < 82:
        k = rng.randrange(n_lines)
        return [change(line_offset(k), line_offset(k + 1 + rng.randrange(3)), "")]
    if kind < 92:
        k = rng.randrange(n_lines)
        s, e = line_offset(k), line_offset(k + 1 + rng.randrange(20))
        block = text[s:e]
        first = change(s, e, "")
        to = line_offset(rng.randrange(len(line_starts(text))))
        return [first, change(to, to, block)]
    at = line_offset(rng.randrange(n_lines))
    return [change(at, at, "    ")]


def undo_change():
    global text
    start, n, removed = undo.pop()
    starts = line_starts(text)
    c = {"range": {"start": lsp_pos(text, starts, start), "end": lsp_pos(text, starts, start + n)}, "text": removed}
    text = text[:start] + removed + text[start + n:]
    return c


def notify(changes):
    global version, sent
    version += 1
    sent += len(changes)
    send({"jsonrpc": "2.0", "method": "textDocument/didChange",
          "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}})


# ---- comparison ----

def norm_lsp(d):
    data = d.get("data", {})
    fix = data.get("fix")
    return (d["code"], json.dumps(d["range"], sort_keys=True), d["message"],
            tuple((r["message"], json.dumps(r["location"]["range"], sort_keys=True)) for r in d.get("relatedInformation", [])),
            (fix["message"], fix["applicability"],
             tuple((e["newText"], json.dumps(e["range"], sort_keys=True)) for e in fix["edits"])) if fix else None)


def rng_of(starts, loc, end):
    return json.dumps({"start": check_pos(text, starts, loc["row"], loc["column"]),
                       "end": check_pos(text, starts, end["row"], end["column"])}, sort_keys=True)


def norm_check(f, starts):
    fix = f.get("fix")
    return (f["code"], rng_of(starts, f["location"], f["end_location"]), f["message"],
            tuple((r["message"], rng_of(starts, r["location"], r["end_location"])) for r in f.get("related", [])),
            (fix["message"], fix["applicability"],
             tuple((e["content"], rng_of(starts, e["location"], e["end_location"])) for e in fix["edits"])) if fix else None)


def run_check():
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    r = subprocess.run([GL, "check", "--isolated", "--output-format", "json", "--exit-zero", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return json.loads(r.stdout), b"syntax error" in r.stderr


fails = 0
compared = clean = broken_same = broken_diff = edits = 0


def compare(tid, what):
    global fails, compared, clean, broken_same, broken_diff
    got = wait_version(version)
    found, syntax_error = run_check()
    starts = line_starts(text)
    want = sorted(norm_check(f, starts) for f in found)
    have = sorted(norm_lsp(d) for d in got)
    if have == want:
        compared += 1
        clean += not syntax_error
        broken_same += syntax_error
        print("ok %s %s (%d edits so far): %d findings equal%s"
              % (tid, what, edits, len(want), ", with a syntax error" if syntax_error else ""))
    elif syntax_error:
        broken_diff += 1
        print("ok %s %s: a syntax error, and the incremental parse recovered differently (%d vs %d findings)"
              % (tid, what, len(have), len(want)))
    else:
        fails += 1
        only_lsp = [x for x in have if x not in want][:2]
        only_check = [x for x in want if x not in have][:2]
        with open(os.path.join(ROOT, "build", "lsp-diff-fail.py"), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print("FAIL %s %s: the server's findings differ from check's (text in build/lsp-diff-fail.py); "
              "only the server: %s; only check: %s" % (tid, what, only_lsp, only_check))
    return syntax_error


for b in range(1, BATCHES + 1):
    if b % 8 == 0:
        # back to the start, one change per edit taken back (in one notification)
        changes = [undo_change() for _ in range(len(undo))]
        if changes:
            notify(changes)
    for _ in range(rng.randrange(3, 12)):
        if undo and rng.randrange(100) < 35:
            notify([undo_change()])
        elif rng.randrange(100) < 15:
            notify(random_change() + random_change())
        else:
            notify(random_change())
        edits += 1
    broken = compare("lsp-diff-%d" % b, "batch %d" % b)
    # then take edits back until the text parses, and compare there too
    n = 0
    while broken and undo:
        notify([undo_change()])
        n += 1
        broken = run_check()[1]
    if n:
        compare("lsp-diff-%d.1" % b, "batch %d, %d edits taken back" % (b, n))

send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
recv()
send({"jsonrpc": "2.0", "method": "exit"})
rc = proc.wait()
if rc != 0:
    fails += 1
    print("FAIL lsp-diff-exit server exit %d" % rc)
if clean < BATCHES:
    fails += 1
    print("FAIL lsp-diff-count only %d comparisons without a syntax error (want %d)" % (clean, BATCHES))
else:
    print("ok lsp-diff-summary %d edits in %d batches (%d changes sent, edits taken back included): %d comparisons "
          "equal (%d without a syntax error), %d with a syntax error recovered differently"
          % (edits, BATCHES, sent, compared, clean, broken_diff))
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
sys.exit(1 if fails else 0)
