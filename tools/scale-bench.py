#!/usr/bin/env python3
"""Lint time against the size of one scope: doubling the input must at most double the time.

Generates one file per shape and size, lints each with `gradleak check --no-cache --exit-zero`
(best of --repeat runs, CPU time of the child), and prints the time and the ratio to the previous
size. Shapes (N = statements):
  toplevel   N/2 module-level blocks `for b in loader:` / `    total += model(b)` (a finding each)
  function   the same N statements inside one function
  nested     N/3 blocks `for epoch in range(3):` / `for b in loader:` / `total += model(b)`
  longbody   one `for b in loader:` loop whose body has N statements (model calls and sums)
  trainbody  one training loop whose body has N statements: model calls summed into the loss, one
             read after the step, then backward() and the step (GL108's forwards before the backward)
  findings   one loop whose body is N lines `x.cuda()` (GL201: a finding, with a fix, per line)
  clean      N/2 blocks `for b in loader:` / `    total += model(b).item()` (no finding)
  mixed      blocks for GL102, GL104, GL105, GL301, GL302, GL901 (an unused noqa) and no_grad
  noqa       one loop whose body is N lines `x.cuda()  # noqa: GL101` (GL201 and an unused noqa, GL901,
             per line)
  comprehension  N lines `outs_K = [model(x.cuda()) for x in batches()]` (GL102: a finding each)
  distinct   N/3 module-level blocks, each with names of its own (a notebook exported as one module):
             `total_K = 0` / `for b_K in loader:` / `    total_K += model(b_K)` (a finding each)

usage: scale-bench.py [--sizes 10000,20000,40000,80000] [--shapes a,b] [--repeat N]
                      [--max-ratio R] [--floor SECONDS] [--gradleak PATH] [--keep DIR]
With --max-ratio, exits 1 when the sizes together cost more than R per doubling (first to last
size, R**doublings: one noisy step of a shared machine is absorbed by its neighbours), or when one
doubling alone costs more than 1.5 R (the test uses 3: linear is 2x, the quadratic paths it guards
against cost 3.3-6x per doubling, so 11x or more over two).
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HEAD = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nloader = []\ntotal = 0\n"


def gen(shape, n):
    out = [HEAD]
    if shape == "toplevel":
        out += ["for b in loader:\n    total += model(b)\n"] * (n // 2)
    elif shape == "clean":
        out += ["for b in loader:\n    total += model(b).item()\n"] * (n // 2)
    elif shape == "function":
        out.append("\n\ndef train(loader):\n    model = torch.nn.Linear(2, 2)\n    total = 0\n")
        out += ["    for b in loader:\n        total += model(b)\n"] * (n // 2)
        out.append("    return total\n")
    elif shape == "nested":
        out += ["for epoch in range(3):\n    for b in loader:\n        total += model(b)\n"] * (n // 3)
    elif shape == "longbody":
        out.append("for b in loader:\n")
        for i in range(n // 2):
            out.append("    y%d = model(b)\n    total += y%d\n" % (i % 50, i % 50))
    elif shape == "trainbody":
        out.append("for b in loader:\n    loss = 0\n")
        for i in range(n // 2):
            out.append("    y%d = model(b)\n    loss = loss + y%d.sum()\n" % (i % 50, i % 50))
        out.append("    loss.backward()\n    opt.step()\n    print(y0.sum().item())\n")
    elif shape == "mixed":
        out.append("import gc\nlosses = []\nh = None\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n")
        blocks = ["for b in loader:\n    losses.append(model(b))\n",
                  "for b in loader:\n    h = model(b, h)\n",
                  "for b in loader:\n    loss = model(b).sum()\n    loss.backward(retain_graph=True)\n    torch.cuda.empty_cache()\n",
                  "for b in loader:\n    out = model(b)\n    out.sum().backward()\n    gc.collect()  # noqa: GL301\n",
                  "with torch.no_grad():\n    for b in loader:\n        total += model(b)\n"]
        k = 0
        while k < n:
            blk = blocks[(k // 3) % len(blocks)]
            out.append(blk)
            k += blk.count("\n")
    elif shape == "distinct":
        for k in range(n // 3):
            out.append("total_%d = 0\nfor b_%d in loader:\n    total_%d += model(b_%d)\n" % (k, k, k, k))
    elif shape == "noqa":
        out.append("x = torch.zeros(3)\nfor b in loader:\n")
        out += ["    x.cuda()  # noqa: GL101\n"] * n
    elif shape == "comprehension":
        out += ["outs_%d = [model(x.cuda()) for x in batches()]\n" % k for k in range(n)]
    elif shape == "evalhelpers":
        # a training loop whose body ends with many evaluations through the file's helpers (GL108's
        # statement form looks into each helper once)
        nh = max(1, n // 20)
        out += ["def ev_%d(m, x):\n    return m(x).sum().item()\n\n" % h for h in range(nh)]
        out.append("opt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor b in loader:\n"
                   "    opt.zero_grad()\n    model(b).sum().backward()\n    opt.step()\n")
        out += ["    a_%d = ev_%d(model, b)\n    c_%d = model(b).sum().item()\n" % (i, i % nh, i) for i in range(n // 2)]
    elif shape == "sharedloops":
        # GL108's shared-loop form and the leaks it looks up: many functions whose loop trains only
        # under `if train:`, each called with train=False, and evaluation loops that also leak
        nf = max(1, n // 12)
        out.append("opt = torch.optim.SGD(model.parameters(), lr=0.1)\n")
        out += ["def ep_%d(loader, train=True):\n    for b in loader:\n        out = model(b)\n"
                "        if train:\n            out.sum().backward()\n            opt.step()\n"
                "    outs_%d = []\n    for b in loader:\n        outs_%d.append(model(b))\n    return len(outs_%d)\n\n"
                % (k, k, k, k) for k in range(nf)]
        out += ["ep_%d(loader, False)\n" % k for k in range(nf)]
    elif shape == "classes":
        # many classes whose __init__ builds modules of classes the file defines (names of the module
        # body looked up before the module is analysed)
        out.append("class Block(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n")
        out += ["class Net_%d(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.a = Block()\n        self.b = Block()\n\n" % k for k in range(n // 6)]
    elif shape == "findings":
        out.append("x = torch.zeros(3)\nfor b in loader:\n")
        out += ["    x.cuda()\n"] * n
    else:
        raise SystemExit("unknown shape " + shape)
    return "".join(out)


def cpu_time(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit("gradleak failed (%d): %s" % (p.returncode, p.stderr.decode()[-400:]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,20000,40000,80000")
    ap.add_argument("--shapes", default="toplevel,function,nested,longbody,trainbody,findings,clean,mixed,distinct,comprehension,evalhelpers,sharedloops,classes,noqa")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-ratio", type=float, default=0)
    ap.add_argument("--floor", type=float, default=0.02, help="times below this count as this (noise)")
    ap.add_argument("--gradleak", default=os.path.join(os.path.dirname(__file__), "..", "build", "gradleak"))
    ap.add_argument("--keep")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    d = a.keep or tempfile.mkdtemp(prefix="gradleak-scale.")
    os.makedirs(d, exist_ok=True)
    bad = []
    print("%-9s %8s %9s %7s" % ("shape", "stmts", "cpu s", "ratio"))
    try:
        for shape in a.shapes.split(","):
            prev = None
            first = None
            for n in sizes:
                path = os.path.join(d, "%s_%d.py" % (shape, n))
                with open(path, "w") as f:
                    f.write(gen(shape, n))
                t = min(cpu_time([a.gradleak, "check", "--no-cache", "--exit-zero", "-j", "1", path])
                        for _ in range(a.repeat))
                # below the floor (20 ms) the ratio is noise: count it from there
                ratio = max(t, a.floor) / max(prev, a.floor) if prev is not None else None
                print("%-9s %8d %9.3f %7s" % (shape, n, t, "%.2fx" % ratio if ratio else "-"), flush=True)
                if a.max_ratio and ratio and ratio > 1.5 * a.max_ratio:
                    bad.append("%s %d: %.2fx in one doubling" % (shape, n, ratio))
                prev = t
                if first is None:
                    first = t
            if a.max_ratio and len(sizes) > 1:
                span = max(prev, a.floor) / max(first, a.floor)
                bound = a.max_ratio ** (len(sizes) - 1)
                if span > bound:
                    bad.append("%s %d -> %d: %.2fx over %d doublings (bound %.1fx)" %
                               (shape, sizes[0], sizes[-1], span, len(sizes) - 1, bound))
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    if bad:
        print("superlinear (over %.1fx per doubling): %s" % (a.max_ratio, "; ".join(bad)))
        sys.exit(1)


main()
