#!/usr/bin/env python3
"""`gradleak lsp` under random edits: it must not crash, its memory must stay flat, and a document
edited incrementally must get the same diagnostics as the same text opened fresh.

    tools/lsp-stress.py [build/gradleak] [--edits 10000] [--seed 1] [--tolerance-kib 1024]
                        [--tolerance-pct 5] [--check-every 1000]

A training script (fixtures/examples, repeated to about 300 lines) is opened and then changed by
random incremental didChange notifications: inserted code lines, brackets, quotes and colons that
break the syntax, non-ASCII text (two-byte, three-byte, astral characters that are surrogate pairs
in UTF-16, a combining accent, U+2028), all three line endings, a rare NUL; deletions of up to a
few lines; replacements; sometimes several changes in one notification, and rarely a whole-text
replacement. Positions are UTF-16 code units, computed on the client's own copy of the text, never
inside a CRLF. The text stays between 0.75 and 1.25 times its first size, so memory is compared at
like sizes. The client waits for the diagnostics of the latest version after a random burst of one
to four edits (the server lints when its input is idle), and now and then asks for a hover and for
code actions.

Every --check-every edits it records the server's VmRSS (/proc/PID/status) and opens the current
text as a second document: its diagnostics must equal those of the edited one. At the end the RSS
after the first checkpoint (the warm-up) and the largest later one may differ by at most
--tolerance-kib or --tolerance-pct, whichever is larger; the server must answer shutdown and exit 0.
Exit status 0 when all of that holds, 1 otherwise. Python's standard library only.
"""
import json
import os
import random
import re
import select
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def arg(name, default, conv=int):
    if name in sys.argv:
        return conv(sys.argv[sys.argv.index(name) + 1])
    return default


GL = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else os.path.join(ROOT, "build/gradleak")
N_EDITS = arg("--edits", 10000)
SEED = arg("--seed", 1)
TOL_KIB = arg("--tolerance-kib", 1024)
TOL_PCT = arg("--tolerance-pct", 5.0, float)
CHECK_EVERY = arg("--check-every", 1000)
TIMEOUT = arg("--timeout", 60.0, float)  # seconds without an answer: the server hangs

rng = random.Random(SEED)

parts = []
for f in ["train.py", "train_bptt.py", "charlm/model.py"]:
    with open(os.path.join(ROOT, "fixtures/examples", f), encoding="utf-8") as fh:
        parts.append(fh.read())
text = ""
while text.count("\n") < 300:
    text += parts[len(text) % len(parts)] + "\n"
base_len = len(text)

CODE = [
    "    total += loss\n", "loss.backward(retain_graph=True)\n", "for step, (x, y) in enumerate(loader):\n",
    "with torch.no_grad():\n", "    out = model(x)\n", "def helper(a, b=2):\n", "class Net(nn.Module):\n",
    "import torch\n", "h = h.detach()\n", "losses.append(loss)\n", "optimizer.step()\n", "    return total\n",
    "if step % 100 == 0:\n", "print(loss.item())\n", "x = x.cuda()\n", "total += loss  # noqa: GL101\n",
    "async def f():\n", "lambda q: q\n", "@torch.no_grad()\n", "try:\n", "except RuntimeError:\n",
]
BREAK = ["(", ")", "[", "]", "{", "}", ":", "'", '"', '"""', "\\", "=", "+=", ",", ".", "#", "  ", "\t", "def",
         "for", "in", "else", "*", "**"]
UNICODE = ["é", "ü", "ß", "日本語", "\U0001F525", "\U0001D518", "e\u0301", "\u00a0", "\u2028", "Ω = 1\n",
           "# 注释\n", "s = '\U0001F600'\n"]
EOLS = ["\n", "\r\n", "\r"]
UNICODE_LINES = ["# 注释: ü, é, \U0001F525\n", "name = 'naïve \U0001D518'\n", "π = 3.14159\n", "# e\u0301\u00a0\u2028\n",
                 "print('日本語')\n"]
WORDS = "loss total model x y h step optimizer torch backward item detach cuda".split()


def snippet():
    r = rng.random()
    if r < 0.35:
        return rng.choice(CODE)
    if r < 0.60:
        return rng.choice(BREAK)
    if r < 0.78:
        return rng.choice(UNICODE)
    if r < 0.88:
        return rng.choice(EOLS)
    if r < 0.885:
        return "\x00"
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


# ---- the client's copy of the text, and LSP positions ----

EOL = re.compile(r"\r\n|\r|\n")


def line_starts(t):
    return [0] + [m.end() for m in EOL.finditer(t)]


def position(t, starts, off):
    """UTF-16 position of code-point offset off (not inside a CRLF)."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= off:
            lo = mid
        else:
            hi = mid - 1
    return {"line": lo, "character": len(t[starts[lo]:off].encode("utf-16-le")) // 2}


def valid_offset(t, off):
    return not (0 < off < len(t) and t[off - 1] == "\r" and t[off] == "\n")


def random_offset(t):
    while True:
        off = rng.randint(0, len(t))
        if valid_offset(t, off):
            return off


def indent_of(t, start):
    end = start
    while end < len(t) and t[end] in " \t":
        end += 1
    return t[start:end]


def line_change(t):
    """A change that keeps the code mostly valid: a line inserted at a line's start with that line's
    indentation (sometimes a non-ASCII comment or string), or a whole line deleted."""
    starts = line_starts(t)
    k = rng.randrange(len(starts))
    a = starts[k]
    delete = len(t) > 1.1 * base_len or (len(t) > 0.9 * base_len and rng.random() < 0.5)
    if delete and k + 1 < len(starts):
        b, new = starts[k + 1], ""
    else:
        b = a
        line = rng.choice(CODE) if rng.random() < 0.8 else rng.choice(UNICODE_LINES)
        new = indent_of(t, a) + line.lstrip(" ")
    return {"range": {"start": position(t, starts, a), "end": position(t, starts, b)}, "text": new}, t[:a] + new + t[b:]


def junk_change(t):
    """A change that may break the syntax anywhere (a bracket, a quote, an odd line ending, a NUL,
    text torn out of the middle of a line), with the change that undoes it: (change, text, undo)."""
    a = random_offset(t)
    r = rng.random()
    b = a
    if r < 0.3:
        b = min(len(t), a + rng.randint(1, 40))
        while not valid_offset(t, b):
            b += 1
    new = "" if r < 0.15 else snippet()
    starts = line_starts(t)
    change = {"range": {"start": position(t, starts, a), "end": position(t, starts, b)}, "text": new}
    after = t[:a] + new + t[b:]
    undo = None
    if valid_offset(after, a) and valid_offset(after, a + len(new)):
        s2 = line_starts(after)
        undo = {"range": {"start": position(after, s2, a), "end": position(after, s2, a + len(new))}, "text": t[a:b]}
    return change, after, undo


# ---- the server ----

proc = subprocess.Popen([GL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
inbox = b""
failures = []


def send(obj):
    body = json.dumps(obj).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def recv():
    global inbox
    deadline = time.time() + TIMEOUT
    while True:
        head_end = inbox.find(b"\r\n\r\n")
        if head_end >= 0:
            m = re.search(rb"Content-Length:\s*(\d+)", inbox[:head_end], re.I)
            if not m:
                raise SystemExit("lsp-stress: FAIL: a message without Content-Length: %r" % inbox[:200])
            n = int(m.group(1))
            if len(inbox) >= head_end + 4 + n:
                body = inbox[head_end + 4:head_end + 4 + n]
                inbox = inbox[head_end + 4 + n:]
                return json.loads(body)
        left = deadline - time.time()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            with open("/proc/%d/stat" % proc.pid) as fh:
                st = fh.read().split(")")[-1].split()
            dump = os.path.join(os.environ.get("TMPDIR", "/tmp"), "lsp-stress-hang.py")
            with open(dump, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            raise SystemExit("lsp-stress: FAIL: no answer for %.0f s (server state %s, %.1f s of CPU; waiting for "
                             "version %d, last published %s; the client's text is in %s)" %
                             (TIMEOUT, st[0], (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK"), version,
                              {u: v for u, (v, _) in diags.items()}, dump))
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            raise SystemExit("lsp-stress: FAIL: the server closed its output (exit status %s)" % proc.wait())
        inbox += chunk


diags = {}  # uri -> (version, diagnostics) last published


def pump_until(pred):
    while True:
        m = recv()
        if m.get("method") == "textDocument/publishDiagnostics":
            p = m["params"]
            diags[p["uri"]] = (p.get("version"), p["diagnostics"])
        if pred(m):
            return m


def wait_version(uri, v):
    if diags.get(uri, (None,))[0] == v:  # already read while waiting for something else
        return diags[uri][1]
    pump_until(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
               and m["params"].get("version") == v)
    return diags[uri][1]


next_id = 10


def request(method, params=None):
    global next_id
    next_id += 1
    rid = next_id
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    send(msg)
    m = pump_until(lambda m: m.get("id") == rid)
    if "error" in m and m["error"].get("code") not in (-32801, -32800):  # content modified / cancelled
        failures.append("%s answered an error: %s" % (method, m["error"]))
    return m


def rss_kib():
    with open("/proc/%d/status" % proc.pid) as fh:
        return int(re.search(r"VmRSS:\s+(\d+) kB", fh.read()).group(1))


def normalise(ds, uri):
    return json.loads(json.dumps(ds).replace(json.dumps(uri)[1:-1], "URI"))


uri = "file:///stress/train.py"
request("initialize", {"processId": os.getpid(), "rootUri": None,
                       "capabilities": {"general": {"positionEncodings": ["utf-16"]}}})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
version = 1
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
print("lsp-stress: %d lines, %d bytes, %d findings at the start; seed %d" %
      (len(line_starts(text)), len(text.encode("utf-8")), len(wait_version(uri, 1)), SEED), flush=True)

t0 = time.time()
samples = []
sizes = []
mismatches = 0
lints = 0
burst = rng.randint(1, 4)
edits = 0


def change_doc(changes):
    global version
    version += 1
    send({"jsonrpc": "2.0", "method": "textDocument/didChange",
          "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}})


def settle():
    """Waits for the diagnostics of the latest version; sometimes asks for a hover or code actions."""
    global lints
    wait_version(uri, version)
    lints += 1
    r = rng.random()
    if r < 0.05:
        pos = position(text, line_starts(text), random_offset(text))
        request("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos})
    elif r < 0.10:
        starts = line_starts(text)
        a, b = sorted((random_offset(text), random_offset(text)))
        request("textDocument/codeAction", {"textDocument": {"uri": uri},
                                            "range": {"start": position(text, starts, a),
                                                      "end": position(text, starts, b)},
                                            "context": {"diagnostics": diags[uri][1]}})


while edits < N_EDITS:
    before = edits
    r = rng.random()
    if r < 0.001:
        # the whole text replaced (no range): the server parses from scratch
        text = "".join(rng.choice(parts) for _ in range(4))
        while len(text) < base_len:
            text += rng.choice(parts)
        change_doc([{"text": text}])
        edits += 1
    elif r < 0.45:
        # typing that breaks the code for a moment: linted broken, then undone
        prev = text
        change, text, undo = junk_change(text)
        change_doc([change])
        edits += 1
        settle()
        if undo:
            change_doc([undo])
            edits += 1
            text = prev
    else:
        changes = []
        for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 3)):
            change, text = line_change(text)
            changes.append(change)
            edits += 1
        change_doc(changes)
        burst -= 1
        if burst <= 0:
            settle()
            burst = rng.randint(1, 4)
    checkpoint = edits // CHECK_EVERY > before // CHECK_EVERY or edits >= N_EDITS
    if checkpoint:
        settle()
    if checkpoint:
        samples.append(rss_kib())
        sizes.append(len(text.encode("utf-8")))
        # the same text opened fresh must get the same diagnostics as the edited document
        fresh = "file:///stress/fresh_%d.py" % edits
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
              "params": {"textDocument": {"uri": fresh, "languageId": "python", "version": 1, "text": text}}})
        got = normalise(wait_version(fresh, 1), fresh)
        want = normalise(diags[uri][1], uri)
        if got != want:
            mismatches += 1
            if mismatches <= 3:
                failures.append("after %d edits, the edited document's diagnostics differ from a fresh open of "
                                "the same text:\n  edited: %s\n  fresh:  %s" % (edits, json.dumps(want)[:600],
                                                                                 json.dumps(got)[:600]))
                with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "lsp-stress-mismatch-%d.py" % edits),
                          "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
        send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": fresh}}})
        print("lsp-stress: %5d edits: VmRSS %d KiB, text %d bytes, %d findings" %
              (edits, samples[-1], sizes[-1], len(diags[uri][1])), flush=True)

request("shutdown")
send({"jsonrpc": "2.0", "method": "exit"})
try:
    status = proc.wait(timeout=TIMEOUT)
except subprocess.TimeoutExpired:
    proc.kill()
    status = "none (killed after %d s)" % TIMEOUT
if status != 0:
    failures.append("the server exited with status %s" % status)
if mismatches:
    failures.append("%d of %d checkpoints: incremental and fresh diagnostics differ" % (mismatches, len(samples)))
growth = max(samples[1:]) - samples[0] if len(samples) > 1 else 0
allowed = max(TOL_KIB, samples[0] * TOL_PCT / 100) if samples else 0
with open("/proc/loadavg") as fh:
    load = " ".join(fh.read().split()[:3])
print("lsp-stress: %d edits in %d notifications' lints, %.1f s (load %s); VmRSS every %d edits: %s KiB; "
      "growth after the first %d: %+d KiB (at most %d)" %
      (edits, lints, time.time() - t0, load, CHECK_EVERY, " ".join(str(s) for s in samples), CHECK_EVERY, growth,
       allowed))
if growth > allowed:
    failures.append("VmRSS grew by %d KiB after the first %d edits (at most %d KiB)" % (growth, CHECK_EVERY, allowed))
for f in failures:
    print("lsp-stress: FAIL: " + f)
if not failures:
    print("lsp-stress: ok")
sys.exit(1 if failures else 0)
