#!/usr/bin/env python3
"""`gradleak lsp` benchmark (not a test): edit-to-diagnostics latency and memory over many edits.

    tools/lsp-bench.py [build/gradleak] [--edits 200] [--memory-edits 10000] [--burst 1]

A 5,000-line training file is built from fixtures/examples (whole training scripts repeated), opened,
and edited in the middle the way typing does: one character inserted at the end of a code line, then
removed again, so the file keeps its size. Latency: from writing each didChange to reading the
publishDiagnostics of that version (--edits of them; p50/p95/max). Memory: the server's VmRSS after
the latency run and every 1,000 of --memory-edits further edits; with --burst K the client sends K
edits and then waits for the diagnostics of the last one (the server lints when its input is idle).
Python's standard library only, so it runs wherever the binary does.
"""
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def arg(name, default):
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


GL = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else os.path.join(ROOT, "build/gradleak")
N_EDITS = arg("--edits", 200)
N_MEM = arg("--memory-edits", 10000)
BURST = max(1, arg("--burst", 1))

parts = []
for f in ["train.py", "train_bptt.py", "charlm/evaluate.py", "charlm/model.py"]:
    with open(os.path.join(ROOT, "fixtures/examples", f), encoding="utf-8") as fh:
        parts.append(fh.read())
text = ""
i = 0
while text.count("\n") < 5000:
    text += parts[i % len(parts)] + "\n"
    i += 1
lines = text.split("\n")
edit_line = len(lines) // 2
while not re.match(r"^\s+\S.*\)$", lines[edit_line]):
    edit_line += 1
edit_char = len(lines[edit_line])  # an ASCII line: UTF-16 units are bytes

proc = subprocess.Popen([GL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(obj):
    body = json.dumps(obj).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def recv():
    length = None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server closed its output")
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
            return len(m["params"]["diagnostics"])


def cpu_ms():
    """CPU time the server has run, in ms (schedstat: ns on a CPU). On a loaded machine the wall-clock
    latency includes waiting for a core; this is the work itself."""
    with open("/proc/%d/schedstat" % proc.pid) as fh:
        return int(fh.read().split()[0]) / 1e6


def rss_mb():
    with open("/proc/%d/status" % proc.pid) as fh:
        return int(re.search(r"VmRSS:\s+(\d+) kB", fh.read()).group(1)) / 1024


uri = "file:///bench/train_5000.py"
version = 1


def edit(k):
    global version
    version += 1
    at = {"line": edit_line, "character": edit_char}
    if k % 2 == 0:
        change = {"range": {"start": at, "end": at}, "text": " "}
    else:
        change = {"range": {"start": at, "end": {"line": edit_line, "character": edit_char + 1}}, "text": ""}
    send({"jsonrpc": "2.0", "method": "textDocument/didChange",
          "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}})
    return version


def pct(a, q):
    return a[min(len(a) - 1, max(0, -(-int(q * len(a) * 1000) // 1000) - 1))]


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}}})
recv()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
t = time.perf_counter()
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
n = wait_version(1)
print("file: %d lines, %d bytes, %d findings; edits at line %d" % (text.count("\n"), len(text.encode()), n, edit_line + 1))
print("didOpen -> diagnostics: %.1f ms" % ((time.perf_counter() - t) * 1000))
for k in range(10):  # warm-up
    wait_version(edit(k))
lat = []
cpu = []
for k in range(N_EDITS):
    t = time.perf_counter()
    c = cpu_ms()
    n = wait_version(edit(k))
    lat.append((time.perf_counter() - t) * 1000)
    cpu.append(cpu_ms() - c)
lat.sort()
cpu.sort()
print("didChange -> publishDiagnostics over %d edits: min %.1f ms, p50 %.1f ms, p95 %.1f ms, max %.1f ms (%d findings each)"
      % (N_EDITS, lat[0], pct(lat, 0.5), pct(lat, 0.95), lat[-1], n))
print("server CPU time per edit (apply, re-parse, lint, publish): min %.1f ms, p50 %.1f ms, p95 %.1f ms, max %.1f ms"
      % (cpu[0], pct(cpu, 0.5), pct(cpu, 0.95), cpu[-1]))
with open("/proc/loadavg") as fh:
    print("machine: %d cores, load average %s" % (os.cpu_count(), " ".join(fh.read().split()[:3])))
start = rss_mb()
samples = ["%.1f" % start]
t0 = time.time()
for k in range(N_MEM):
    v = edit(k)
    if (k + 1) % BURST == 0 or k == N_MEM - 1:
        wait_version(v)
    if (k + 1) % 1000 == 0:
        samples.append("%.1f" % rss_mb())
end = rss_mb()
print("RSS over %d edits (burst %d, %.1f s): start %.1f MB, end %.1f MB; every 1,000: %s"
      % (N_MEM, BURST, time.time() - t0, start, end, " ".join(samples)))
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
recv()
send({"jsonrpc": "2.0", "method": "exit"})
print("server exit %d" % proc.wait())
