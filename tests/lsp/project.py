#!/usr/bin/env python3
"""The language server sees what `check` sees across files: a document whose helper functions sit
in other files of the project (read from disk, as `gradleak check FILE` reads them) gets the same
diagnostics as `gradleak check --output-format json FILE`.

Cases (each also checks the finding that only the cross-file summary gives, so that equality with
`check` cannot pass by both missing it):
  lsp-proj-1  a helper in helpers.py returns a model's loss; summed in a loop of train.py: GL101
  lsp-proj-2  a helper that computes under torch.no_grad(): what it returns carries no graph, so
              summing it is not GL101 (linted alone, the helper is opaque and it would be)
  lsp-proj-3  a package: `from .losses import ...` resolved next to the document
  lsp-proj-4  the helper file changed on disk and saved (didSave): the document is linted again
  lsp-proj-5  unsaved edits of the document itself: the buffer is linted, the helpers read from disk
  lsp-proj-6  the helpers are linted through the cache `check` uses (GRADLEAK_CACHE_DIR)
  lsp-proj-7  the server exits 0 after shutdown (under the sanitizers: nothing leaked)

usage: project.py GRADLEAK   (prints "ok <id>" / "FAIL <id> <why>"; exit 1 on a failure)
"""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

GL = sys.argv[1]
failures = 0


def ok(cid, what=""):
    print("ok %s %s" % (cid, what), flush=True)


def fail(cid, why):
    global failures
    failures += 1
    print("FAIL %s %s" % (cid, why), flush=True)


HELPERS = """import torch
import torch.nn.functional as F


def train_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def scored(out, y):
    with torch.no_grad():
        return F.cross_entropy(out, y)
"""

TRAIN = """import torch
from helpers import scored, train_loss


def fit(train_loader, val_loader, epochs):
    model = torch.nn.Linear(10, 2).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in train_loader:
            loss = train_loss(model, x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        seen = 0.0
        for x, y in val_loader:
            seen += train_loss(model, x, y)
        score = 0.0
        for x, y in val_loader:
            score += scored(model(x), y)
        print(epoch, seen, score)
"""
SEEN_LINE = 16   # 1-based: `seen += train_loss(...)`, GL101 only with helpers.py's summary
SCORE_LINE = 19  # `score += scored(...)`: GL101 only without it

# the same helper with its loss under no_grad: nothing in train.py is GL101 any more
HELPERS_NO_GRAD = HELPERS.replace("    return F.cross_entropy(model(x), y)",
                                  "    with torch.no_grad():\n        return F.cross_entropy(model(x), y)")


class Server:
    def __init__(self, root, env=None):
        self.p = subprocess.Popen([GL, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=root, env=env)
        self.buf = b""
        self.msgs = []
        self.next_id = 1

    def send(self, method, params, request=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        rid = None
        if request:
            rid = self.next_id
            self.next_id += 1
            msg["id"] = rid
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()
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

    def wait_for(self, pred, timeout=30):
        end = time.time() + timeout
        while True:
            for i, m in enumerate(self.msgs):
                if pred(m):
                    del self.msgs[i]
                    return m
            left = end - time.time()
            if left <= 0 or not self._pump(left):
                if time.time() >= end:
                    return None

    def diagnostics(self, uri, version=None):
        m = self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                          and m["params"]["uri"] == uri
                          and (version is None or m["params"].get("version") == version))
        return None if m is None else m["params"]["diagnostics"]

    def start(self, root):
        rid = self.send("initialize", {"processId": os.getpid(), "rootUri": "file://" + root,
                                       "capabilities": {"textDocument": {"synchronization": {"didSave": True}}}},
                        request=True)
        self.wait_for(lambda m: m.get("id") == rid)
        self.send("initialized", {})

    def stop(self):
        rid = self.send("shutdown", None, request=True)
        self.wait_for(lambda m: m.get("id") == rid, 10)
        self.send("exit", None)
        try:
            rc = self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "hung"
        return rc, self.p.stderr.read().decode(errors="replace")


def lsp_set(diags):
    """(code, 1-based line, 1-based column, message) of each published diagnostic."""
    return sorted((d.get("code"), d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1,
                   d["message"]) for d in diags)


def check_set(root, rel):
    """The same for `gradleak check --output-format json` of the file at root/rel, run in root."""
    r = subprocess.run([GL, "check", "--no-cache", "--output-format", "json", "--exit-zero", rel], cwd=root,
                       capture_output=True, text=True)
    return sorted((f["code"], f["location"]["row"], f["location"]["column"], f["message"]) for f in json.loads(r.stdout))


def lines_of(s, code="GL101"):
    return sorted(x[1] for x in s if x[0] == code)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def same(cid, got, want, need_lines, what):
    """got (the server's) must equal want (check's), and check must see GL101 exactly at need_lines."""
    if want is None or lines_of(want) != need_lines:
        fail(cid, "check itself does not give GL101 at %r (got %r): the case is broken" % (need_lines, want))
    elif got is None:
        fail(cid, "no diagnostics published")
    elif got != want:
        fail(cid, "the server's diagnostics differ from check's:\n  lsp:   %r\n  check: %r" % (got, want))
    else:
        ok(cid, what)


def main():
    tmp = tempfile.mkdtemp(prefix="gradleak-lsp-proj.")
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, GRADLEAK_CACHE_DIR=cache)
    try:
        root = os.path.join(tmp, "proj")
        write(os.path.join(root, "helpers.py"), HELPERS)
        write(os.path.join(root, "train.py"), TRAIN)
        write(os.path.join(root, "pkg", "__init__.py"), "")
        write(os.path.join(root, "pkg", "losses.py"), HELPERS)
        write(os.path.join(root, "pkg", "run.py"), TRAIN.replace("from helpers import", "from .losses import"))
        s = Server(root, env)
        s.start(root)

        uri = "file://" + os.path.join(root, "train.py")
        s.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": TRAIN}})
        got = s.diagnostics(uri, 1)
        got = None if got is None else lsp_set(got)
        want = check_set(root, "train.py")
        same("lsp-proj-1", got, want, [SEEN_LINE], "a loss helper of helpers.py summed in train.py: GL101, as check")
        if got is not None and want is not None and SCORE_LINE not in lines_of(got) and got == want:
            ok("lsp-proj-2", "a no_grad helper's result is not GL101, as check")
        else:
            fail("lsp-proj-2", "line %d: lsp %r, check %r" % (SCORE_LINE, got, want))

        puri = "file://" + os.path.join(root, "pkg", "run.py")
        ptext = TRAIN.replace("from helpers import", "from .losses import")
        s.send("textDocument/didOpen", {"textDocument": {"uri": puri, "languageId": "python", "version": 1, "text": ptext}})
        got = s.diagnostics(puri, 1)
        same("lsp-proj-3", None if got is None else lsp_set(got), check_set(root, "pkg/run.py"), [SEEN_LINE],
             "a relative import in a package, as check")

        if os.path.isdir(cache) and any(f.startswith("cache.db") for f in os.listdir(cache)):
            ok("lsp-proj-6", "the helpers went through the cache in GRADLEAK_CACHE_DIR")
        else:
            fail("lsp-proj-6", "no cache database in %s: %r" % (cache, os.listdir(cache) if os.path.isdir(cache) else None))

        # the helper is changed and saved: train.py is linted again and follows it
        write(os.path.join(root, "helpers.py"), HELPERS_NO_GRAD)
        huri = "file://" + os.path.join(root, "helpers.py")
        s.send("textDocument/didSave", {"textDocument": {"uri": huri}})
        got = s.diagnostics(uri, 1)
        same("lsp-proj-4", None if got is None else lsp_set(got), check_set(root, "train.py"), [],
             "helpers.py saved with no_grad: train.py re-linted, GL101 gone, as check")

        # unsaved edits: a second sum of the helper's loss in the buffer only
        write(os.path.join(root, "helpers.py"), HELPERS)
        edited = TRAIN.replace("        score = 0.0\n", "        again = 0.0\n        for x, y in val_loader:\n"
                               "            again += train_loss(model, x, y)\n        score = 0.0\n")
        s.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                          "contentChanges": [{"text": edited}]})
        got = s.diagnostics(uri, 2)
        write(os.path.join(root, "buffer.py"), edited)
        same("lsp-proj-5", None if got is None else lsp_set(got), check_set(root, "buffer.py"),
             [SEEN_LINE, SEEN_LINE + 3], "the unsaved buffer, its helpers from disk, as check")
        rc, err = s.stop()
        if rc == 0:
            ok("lsp-proj-7", "exit 0 after shutdown (a sanitizer build: no leak, no error)")
        else:
            fail("lsp-proj-7", "exit %s: %s" % (rc, err[-1500:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)


main()
