#!/usr/bin/env python3
"""Replays the message sequences of real LSP clients against `gradleak lsp` and checks each answer.

Each client's sequence keeps the quirks it really has on the wire:
  neovim   shutdown and exit without "params"; didChangeConfiguration {"settings": {}};
           $/cancelRequest of a request already answered
  vscode   (vscode-languageclient 9) $/setTrace, didChangeConfiguration {"settings": null},
           a hover followed at once by its $/cancelRequest, window/workDoneProgress/cancel,
           shutdown and exit without "params"
  helix    "params": null for shutdown and exit (serde's unit), "initializationOptions": null,
           didChangeConfiguration {"settings": null}
  eglot    Emacs 28 eglot: "params": null for shutdown and exit; Emacs 29+: "params": {}
Then, for every method whose params are void (shutdown, exit, initialized), params absent, null
and {} are each accepted; exit ends the server with 0 after shutdown and 1 without it; unknown
"$/" notifications are ignored silently and "$/" requests get MethodNotFound.

usage: clients.py GRADLEAK   (prints "ok <id>" / "FAIL <id> <why>"; exit 1 on a failure)
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

GL = sys.argv[1]
failures = 0
ABSENT = object()


def ok(cid):
    print("ok " + cid, flush=True)


def fail(cid, why):
    global failures
    failures += 1
    print("FAIL %s %s" % (cid, why), flush=True)


class Server:
    def __init__(self, root):
        self.p = subprocess.Popen([GL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=root)
        self.buf = b""
        self.msgs = []  # everything the server sent, in order
        self.next_id = 1

    def send(self, method, params=ABSENT, request=False):
        msg = {"jsonrpc": "2.0", "method": method}
        rid = None
        if request:
            rid = self.next_id
            self.next_id += 1
            msg["id"] = rid
        if params is not ABSENT:
            msg["params"] = params
        body = json.dumps(msg).encode()
        try:
            self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        return rid

    def _pump(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return False
        chunk = os.read(self.p.stdout.fileno(), 65536)
        if not chunk:
            return False
        self.buf += chunk
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                break
            n = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
            if len(rest) < n:
                break
            self.msgs.append(json.loads(rest[:n]))
            self.buf = rest[n:]
        return True

    def wait_for(self, pred, timeout=20):
        end = time.time() + timeout
        while True:
            for m in self.msgs:
                if pred(m):
                    return m
            left = end - time.time()
            if left <= 0 or not self._pump(left):
                if left <= 0:
                    return None

    def response(self, rid, timeout=20):
        return self.wait_for(lambda m: m.get("id") == rid and ("result" in m or "error" in m), timeout)

    def finish(self, timeout=10):
        """Closes stdin when the server has not exited; returns (exit code, stderr)."""
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "hung"
        while self._pump(0.05):
            pass
        err = self.p.stderr.read().decode(errors="replace")
        return rc, err


def caps(client):
    """The capabilities each client announces (abridged to the parts that steer a server)."""
    sync = {"dynamicRegistration": False, "didSave": True, "willSave": True, "willSaveWaitUntil": True}
    c = {"textDocument": {"synchronization": sync,
                          "publishDiagnostics": {"relatedInformation": True, "tagSupport": {"valueSet": [1, 2]}},
                          "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}}},
                          "hover": {"contentFormat": ["markdown", "plaintext"]}},
         "window": {"workDoneProgress": True},
         "workspace": {"configuration": True, "workspaceFolders": True,
                       "didChangeWatchedFiles": {"dynamicRegistration": client in ("vscode", "neovim")}}}
    if client == "vscode":
        c["general"] = {"positionEncodings": ["utf-16"]}
    if client == "helix":
        c["general"] = {"positionEncodings": ["utf-8", "utf-32", "utf-16"]}
    return c


def init_params(client, root):
    uri = "file://" + root
    folders = [{"uri": uri, "name": os.path.basename(root)}]
    info = {"neovim": {"name": "Neovim", "version": "0.9.5"}, "vscode": {"name": "Visual Studio Code", "version": "1.85.1"},
            "helix": {"name": "helix", "version": "23.10"}, "eglot": {"name": "Eglot"}}[client]
    p = {"processId": os.getpid(), "clientInfo": info, "rootUri": uri, "capabilities": caps(client),
         "workspaceFolders": folders}
    if client == "neovim":
        p.update(rootPath=root, initializationOptions={}, trace="off")
    elif client == "vscode":
        p.update(rootPath=root, locale="en", trace="off")
    elif client == "helix":
        p.update(rootPath=root, initializationOptions=None)
    else:
        p.update(rootPath=root, initializationOptions={})
    return p


SRC = "import torch\n\n\ndef f(loader):\n    for x, y in loader:\n        x.cuda()\n"


def lifecycle(cid, root, client, shutdown_params, exit_params, middle):
    """initialize -> initialized -> the client's middle part -> shutdown -> exit; checks each answer."""
    s = Server(root)
    rid = s.send("initialize", init_params(client, root), request=True)
    r = s.response(rid)
    if not r or "capabilities" not in r.get("result", {}):
        rc, err = s.finish(2)
        fail(cid + "/initialize", "no capabilities: %r %s" % (r, err[-300:]))
        return
    s.send("initialized", {})
    ok_middle = middle(s, cid)
    sid = s.send("shutdown", shutdown_params, request=True)
    r = s.response(sid)
    if not r or "result" not in r or r["result"] is not None:
        fail(cid + "/shutdown", "got %r" % (r,))
    s.send("exit", exit_params)
    rc, err = s.finish()
    stray = [m for m in s.msgs if "id" in m and "method" not in m and m["id"] not in range(1, s.next_id)]
    noisy = [l for l in err.splitlines() if "malformed" in l or "unknown notification" in l]
    if rc == 0 and ok_middle and not stray and not noisy:
        ok(cid)
    else:
        fail(cid, "exit=%s middle=%s stray=%r log=%r" % (rc, ok_middle, stray[:2], noisy[:3]))


def open_and_lint(s, cid, root, uri_name="train.py"):
    uri = "file://" + os.path.join(root, uri_name)
    s.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SRC}})
    d = s.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                   and m["params"]["diagnostics"])
    if not d or d["params"]["diagnostics"][0].get("code") != "GL201":
        fail(cid + "/diagnostics", "no GL201 published: %r" % (d,))
        return None
    return uri


def middle_neovim(root):
    def run(s, cid):
        s.send("workspace/didChangeConfiguration", {"settings": {}})
        uri = open_and_lint(s, cid, root)
        if not uri:
            return False
        s.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 5, "character": 8}, "end": {"line": 5, "character": 8}}, "rangeLength": 0, "text": "x = "}]})
        rid = s.send("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": {"line": 5, "character": 8},
                     "end": {"line": 5, "character": 8}}, "context": {"diagnostics": []}}, request=True)
        r = s.response(rid)
        s.send("$/cancelRequest", {"id": rid})  # Neovim cancels on a timer, after the answer came
        s.send("textDocument/didClose", {"textDocument": {"uri": uri}})
        return bool(r) and "result" in r
    return run


def middle_vscode(root):
    def run(s, cid):
        s.send("$/setTrace", {"value": "verbose"})
        s.send("workspace/didChangeConfiguration", {"settings": None})
        uri = open_and_lint(s, cid, root)
        if not uri:
            return False
        rid = s.send("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 9}}, request=True)
        s.send("$/cancelRequest", {"id": rid})
        r = s.response(rid)  # answered (a result, or RequestCancelled) exactly once
        n = sum(1 for m in s.msgs if m.get("id") == rid and "method" not in m)
        s.send("window/workDoneProgress/cancel", {"token": "vscode-progress-1"})
        s.send("$/progress", {"token": "x", "value": {"kind": "end"}})
        s.send("$/vscode/unknownNotification", {"anything": [1, 2]})
        s.send("textDocument/didSave", {"textDocument": {"uri": uri}})
        return bool(r) and n == 1
    return run


def middle_helix(root):
    def run(s, cid):
        s.send("workspace/didChangeConfiguration", {"settings": None})
        return open_and_lint(s, cid, root) is not None
    return run


def middle_eglot(root):
    def run(s, cid):
        s.send("workspace/didChangeConfiguration", {"settings": {}})
        uri = open_and_lint(s, cid, root)
        if uri:
            s.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SRC + "\n"}]})
        return uri is not None
    return run


def main():
    root = tempfile.mkdtemp(prefix="gradleak-lsp-clients.")
    with open(os.path.join(root, "train.py"), "w") as f:
        f.write(SRC)
    lifecycle("lsp-clients/neovim", root, "neovim", ABSENT, ABSENT, middle_neovim(root))
    lifecycle("lsp-clients/vscode", root, "vscode", ABSENT, ABSENT, middle_vscode(root))
    lifecycle("lsp-clients/helix", root, "helix", None, None, middle_helix(root))
    lifecycle("lsp-clients/eglot-emacs28", root, "eglot", None, None, middle_eglot(root))
    lifecycle("lsp-clients/eglot-emacs29", root, "eglot", {}, {}, middle_eglot(root))

    forms = [("absent", ABSENT), ("null", None), ("empty", {})]
    # every void method: absent / null / {} params
    for name, sp in forms:
        for ename, ep in forms:
            lifecycle("lsp-void/shutdown-%s/exit-%s" % (name, ename), root, "neovim", sp, ep, lambda s, cid: True)
    for name, ip in forms:
        s = Server(root)
        rid = s.send("initialize", init_params("neovim", root), request=True)
        s.response(rid)
        s.send("initialized", ip)
        rid = s.send("shutdown", request=True)
        r = s.response(rid)
        s.send("exit")
        rc, err = s.finish()
        if r and "result" in r and rc == 0 and "malformed" not in err:
            ok("lsp-void/initialized-%s" % name)
        else:
            fail("lsp-void/initialized-%s" % name, "rc=%s %r %s" % (rc, r, err[-200:]))
    # exit without shutdown: status 1, whatever the params
    for name, ep in forms:
        s = Server(root)
        rid = s.send("initialize", init_params("helix", root), request=True)
        s.response(rid)
        s.send("initialized", {})
        s.send("exit", ep)
        rc, err = s.finish()
        if rc == 1:
            ok("lsp-exit/without-shutdown-%s" % name)
        else:
            fail("lsp-exit/without-shutdown-%s" % name, "exit status %s (want 1): %s" % (rc, err[-200:]))
    # "$/" requests: MethodNotFound; "$/" notifications: nothing; the server still answers
    s = Server(root)
    rid = s.send("initialize", init_params("vscode", root), request=True)
    s.response(rid)
    s.send("initialized", {})
    s.send("$/cancelRequest", {"id": 999})
    s.send("$/setTrace", {"value": "off"})
    s.send("$/somethingNew", None)
    rid = s.send("$/someRequest", {}, request=True)
    r = s.response(rid)
    sid = s.send("shutdown", request=True)
    r2 = s.response(sid)
    s.send("exit")
    rc, err = s.finish()
    extra = [m for m in s.msgs if "id" in m and "method" not in m and m["id"] not in (1, rid, sid)]
    if r and r.get("error", {}).get("code") == -32601 and r2 and rc == 0 and not extra:
        ok("lsp-dollar/ignored-and-method-not-found")
    else:
        fail("lsp-dollar/ignored-and-method-not-found", "rc=%s %r %r extra=%r" % (rc, r, r2, extra))
    subprocess.run(["rm", "-rf", root])
    sys.exit(1 if failures else 0)


main()
