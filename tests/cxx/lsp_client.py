#!/usr/bin/env python3
"""Minimal LSP client for tests/cxx: opens one document in `gradleak lsp`, prints the diagnostics
(code line:col) and any window/showMessage it gets, then shuts the server down.
usage: lsp_client.py GRADLEAK FILE LANGUAGE_ID"""
import json, subprocess, sys, time, os, select

gl, path, lang = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
p = subprocess.Popen([gl, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def send(msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()

buf = b""
def recv(timeout):
    global buf
    end = time.time() + timeout
    while True:
        if b"\r\n\r\n" in buf:
            head, rest = buf.split(b"\r\n\r\n", 1)
            n = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
            if len(rest) >= n:
                buf = rest[n:]
                return json.loads(rest[:n])
        left = end - time.time()
        if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
            return None
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            return None
        buf += chunk

uri = "file://" + path
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": "file://" + os.path.dirname(path), "capabilities": {}}})
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": lang, "version": 1, "text": open(path).read()}}})
got = False
diags = []
deadline = time.time() + 60
while time.time() < deadline and not got:
    m = recv(deadline - time.time())
    if m is None:
        break
    if m.get("method") == "window/showMessage":
        print("message:", m["params"]["message"])
    if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
        diags = m["params"]["diagnostics"]
        for d in diags:
            print("diag: %s %d:%d" % (d.get("code"), d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1))
        got = True
print("published" if got else "no diagnostics published")
if got and diags:
    d = diags[0]
    send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": uri},
          "range": d["range"], "context": {"diagnostics": [d]}}})
    deadline = time.time() + 30
    while time.time() < deadline:
        m = recv(deadline - time.time())
        if m is None:
            break
        if m.get("id") == 3:
            for a in m.get("result") or []:
                edits = [e["newText"] for es in ((a.get("edit") or {}).get("changes") or {}).values() for e in es]
                print("action: %s | %s" % (a.get("title"), " ".join(edits)))
            break
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
send({"jsonrpc": "2.0", "method": "exit"})
try:
    p.wait(10)
except subprocess.TimeoutExpired:
    p.kill()
