#!/usr/bin/env python3
"""Writes the committed seed corpus of the fuzz targets: tests/fuzz/corpus/lint/ (Python bytes) and
tests/fuzz/corpus/toml/ (TOML bytes) and
tests/fuzz/corpus/lsp/ (LSP sessions). fuzz_fix shares the lint seeds. Each seed is small (at most 16 KiB, libFuzzer's -max_len here)
and named after the failure mode of reliability.md section 2 it exercises (depth-, parse-, utf8-,
bom-, eol-, nul-, size-, syntax-, ...) or the language feature it covers (py-, rule-, noqa-).
Re-run after editing; the output is deterministic:   python3 tests/fuzz/make_corpus.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

LOOP = b"""import torch
from torch.utils.data import DataLoader


def train(model, ds, opt):
    total = 0
    for x, y in DataLoader(ds):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        total += loss
        torch.cuda.empty_cache()
    return total
"""

RNN = b"""import torch


def evaluate(model, x, hidden):
    for i in range(100):
        x, hidden = model(x.view(1, 1, -1), hidden)
    return x
"""


def lint_seeds():
    s = {}
    # --- depth: nesting of every kind (CPython stops at 200 parens / 100 indents; tree-sitter does not)
    for n in (10, 200, 1000, 5000):
        s[f"depth-parens-{n}"] = b"x = " + b"(" * n + b"1" + b")" * n + b"\n"
    for n in (200, 3000):
        s[f"depth-unclosed-parens-{n}"] = b"x = " + b"(" * n + b"\n"
        s[f"depth-unclosed-mixed-{n}"] = b"x = " + b"([{" * (n // 3) + b"\n" + LOOP
    s["depth-brackets-1000"] = b"x = " + b"[" * 1000 + b"]" * 1000 + b"\n"
    s["depth-braces-1000"] = b"x = " + b"{" * 1000 + b"}" * 1000 + b"\n"
    s["depth-calls-1000"] = b"x = " + b"f(" * 1000 + b")" * 1000 + b"\n"
    s["depth-subscripts-2000"] = b"x = a" + b"[0]" * 2000 + b"\n"
    s["depth-attrs-5000"] = b"x = a" + b".b" * 5000 + b"\n"
    s["depth-binop-5000"] = b"x = " + b"+".join([b"a"] * 5000) + b"\n"
    s["depth-binop-loss-1000"] = b"for x in loader:\n    loss = " + b" + ".join([b"model(x)"] * 1000) + b"\n    loss.backward()\n"
    s["depth-unary-5000"] = b"x = " + b"-" * 5000 + b"1\n"
    s["depth-not-3000"] = b"x = " + b"not " * 3000 + b"y\n"
    s["depth-unary-unclosed-3000"] = b"x = " + b"-" * 3000 + b"\n"
    s["depth-lambda-1500"] = b"x = " + b"lambda: " * 1500 + b"1\n"
    s["depth-ternary-1000"] = b"x = " + b"a if b else " * 1000 + b"c\n"
    s["depth-await-2000"] = b"async def f():\n    x = " + b"await " * 2000 + b"y\n"
    s["depth-compare-2000"] = b"x = " + b"a < " * 2000 + b"b\n"
    s["depth-boolop-2000"] = b"x = " + b"a and " * 2000 + b"b\n"
    s["depth-star-2000"] = b"x = " + b"*" * 2000 + b"a\n"
    s["depth-strings-concat-2000"] = b"x = (" + b'"a" ' * 2000 + b")\n"
    s["depth-comprehension-200"] = b"x = " + b"[" * 200 + b"i for i in y" + b"]" * 200 + b"\n"
    s["depth-fstring-50"] = b"x = " + b'f"{' * 50 + b"1" + b'}"' * 50 + b"\n"
    for kind, head in (("if", b"if x:"), ("for", b"for x in loader:"), ("while", b"while True:"),
                       ("def", b"def f(x):"), ("class", b"class C(nn.Module):"), ("with", b"with torch.no_grad():"),
                       ("try", b"try:")):
        for n in (50, 150):
            body = b""
            for i in range(n):
                body += b" " * i + head + b"\n"
            body += b" " * n + b"loss.backward()\n"
            s[f"depth-indent-{kind}-{n}"] = body
    s["depth-indent-tabs-150"] = b"".join(b"\t" * i + b"if x:\n" for i in range(150)) + b"\t" * 150 + b"pass\n"
    s["depth-dedent-storm"] = b"".join(b" " * (i % 40) + b"if x:\n" for i in range(400)) + b"pass\n"
    s["depth-else-chain-2000"] = b"if x:\n" + b"else:\n" * 2000
    s["depth-decorators-2000"] = b"@d\n" * 2000 + b"def f(): pass\n"
    s["depth-nested-funcs-loop"] = b"".join(b"    " * i + b"def f%d(model, loader):\n" % i for i in range(60)) + \
        b"    " * 60 + b"for x in loader:\n" + b"    " * 61 + b"total += model(x)\n"
    # --- pathological parse / error recovery
    s["parse-unterminated-string"] = b'x = "abc\n' + LOOP
    s["parse-unterminated-triple"] = b'x = """abc\n' + LOOP
    s["parse-unterminated-fstring"] = b'x = f"{abc\n' + LOOP
    s["parse-backslash-eof"] = b"x = 1 + \\"
    s["parse-backslash-lines"] = b"x = \\\n" * 500 + b"1\n"
    s["parse-many-errors"] = b"".join(b"x = )\n" for _ in range(500)) + LOOP
    s["parse-junk-bytes"] = bytes(range(1, 256)) + b"\n" + LOOP
    s["parse-junk-operators"] = b"@$?!`" * 300 + b"\n" + LOOP
    s["parse-mismatched"] = b"x = (]\ny = [)\nz = {)\n" + LOOP
    s["parse-closers-3000"] = b"x = " + b")" * 3000 + b"\n"
    s["parse-keywords-soup"] = b" ".join(b"if for while def class return yield lambda with as try except".split() * 100) + b"\n"
    s["parse-colons"] = b":" * 3000 + b"\n"
    s["parse-commas"] = b"x = " + b"," * 3000 + b"\n"
    s["parse-dots"] = b"x = a" + b"." * 3000 + b"\n"
    s["parse-indent-mismatch"] = b"def f():\n        x = 1\n    y = 2\n  z = 3\n" + LOOP
    s["parse-return-star-star"] = b"def f():\n    return a, b, *c, *d\n" + LOOP
    # --- bytes: invalid UTF-8 and other encodings
    s["utf8-invalid-comment"] = b"# caf\xff\xfe\n" + LOOP
    s["utf8-invalid-string"] = b's = "\xc3\x28"\n' + LOOP
    s["utf8-invalid-identifier"] = b"caf\xe9 = 1\n" + LOOP
    s["utf8-truncated-seq"] = LOOP + b"x = '\xe2\x82'\n"
    s["utf8-overlong"] = b"x = '\xc0\xaf\xe0\x80\xaf'\n" + LOOP
    s["utf8-surrogate"] = b"x = '\xed\xa0\x80'\n" + LOOP
    s["utf8-above-max"] = b"x = '\xf4\x90\x80\x80\xf8\x88\x80\x80\x80'\n" + LOOP
    s["utf8-lone-continuation"] = b"\x80\x80\x80 = 1\n" + LOOP
    s["utf8-multibyte-identifiers"] = "π = 3\nλ = lambda: π\nвыход = model(x)\n".encode() + LOOP
    s["utf8-wide-chars-before-finding"] = "import torch\nfor x in loader:\n    s = '日本語😀'; total += model(x)\n".encode()
    s["utf8-combining"] = "x = 'e\u0301\u0301\u0301'\n".encode() + LOOP
    s["utf8-rtl-override"] = "x = '\u202e'  # \u2066\n".encode() + LOOP
    s["latin1-cookie"] = b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n" + LOOP
    s["latin1-cookie-line2"] = b"#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-1 :\ns = '\xe9'\n" + LOOP
    s["cp1252-no-cookie"] = b"s = '\x93quoted\x94'\n" + LOOP
    s["utf16-le-bom"] = b"\xff\xfe" + "x = 1\n".encode("utf-16-le")
    s["utf16-be-bom"] = b"\xfe\xff" + "x = 1\n".encode("utf-16-be")
    s["utf32-bom"] = b"\xff\xfe\x00\x00" + "x = 1\n".encode("utf-32-le")
    # --- BOM
    s["bom-loop"] = b"\xef\xbb\xbf" + LOOP
    s["bom-shebang"] = b"\xef\xbb\xbf#!/usr/bin/env python3\n" + LOOP
    s["bom-only"] = b"\xef\xbb\xbf"
    s["bom-twice"] = b"\xef\xbb\xbf\xef\xbb\xbf" + LOOP
    s["bom-midfile"] = LOOP + b"\xef\xbb\xbfx = 1\n"
    s["bom-truncated"] = b"\xef\xbb" + LOOP
    s["bom-finding-line1"] = b"\xef\xbb\xbffrom torch.autograd import Variable; v = Variable(x, volatile=True)\n"
    # --- line ends
    s["eol-crlf"] = LOOP.replace(b"\n", b"\r\n")
    s["eol-cr"] = LOOP.replace(b"\n", b"\r")
    s["eol-mixed"] = b"".join(line + (b"\r\n", b"\r", b"\n")[i % 3] for i, line in enumerate(LOOP.split(b"\n")))
    s["eol-crlf-rnn"] = RNN.replace(b"\n", b"\r\n")
    s["eol-cr-in-string"] = b"x = 'a\rb'\n" + LOOP
    s["eol-crcrlf"] = LOOP.replace(b"\n", b"\r\r\n")
    s["eol-formfeed"] = b"\x0cimport torch\n\x0c\n" + LOOP.replace(b"    loss =", b"    \x0closs =")
    s["eol-vertical-tab"] = LOOP.replace(b"\n\n", b"\n\x0b\n")
    s["eol-none"] = LOOP.rstrip(b"\n")
    s["eol-none-after-colon"] = b"for x in loader:"
    s["eol-continuation-crlf"] = b"x = 1 + \\\r\n    2\r\n" + LOOP.replace(b"\n", b"\r\n")
    s["eol-tabs-spaces"] = LOOP.replace(b"        ", b"\t")
    # --- NUL bytes
    s["nul-start"] = b"\x00" + LOOP
    s["nul-line1"] = b"x = 1\x00\n" + LOOP
    s["nul-in-string"] = b"x = 'a\x00b'\n" + LOOP
    s["nul-in-comment"] = b"# \x00\n" + LOOP
    s["nul-end"] = LOOP + b"\x00"
    s["nul-binary"] = bytes(range(0, 64)) * 8
    s["nul-many"] = b"\x00" * 4096
    s["nul-between-tokens"] = LOOP.replace(b" += ", b" +\x00= ")
    # --- size: empty, tiny, long lines, many lines
    s["size-empty"] = b""
    s["size-newline"] = b"\n"
    s["size-space"] = b" "
    s["size-one-char"] = b"x"
    s["size-only-comments"] = b"# one\n# two  # noqa\n   # three\n"
    s["size-long-line-12k"] = b"x = '" + b"a" * 12000 + b"'\n"
    s["size-long-identifier"] = b"a" * 8000 + b" = 1\n" + LOOP
    s["size-many-lines"] = b"x = 1\n" * 2000
    s["size-many-loops"] = LOOP * 20
    s["size-many-funcs"] = b"".join(b"def f%d(m, l):\n    for x in l:\n        t += m(x)\n" % i for i in range(150))
    s["size-blank-lines"] = b"\n" * 8000 + LOOP
    s["size-whitespace-only"] = b" \t\n" * 2000
    # --- syntax errors around findings (lint around them)
    for i, bad in enumerate([b"if x\n    pass", b"def f(:\n    pass", b"x = = 1", b"class :\n    pass", b"x = )",
                             b"y = [1,, 2]", b"for in x:\n    pass", b"with as f:\n    pass", b"return return",
                             b"lambda: yield", b"import", b"from . import", b"@\ndef f(): pass", b"try:\nfinally",
                             b"async", b"print 'hello'", b"exec 'x'", b"x = 0777", b"`x`", b"x <> y"]):
        s[f"syntax-top-{i:02d}"] = bad + b"\n\n" + LOOP
        s[f"syntax-inside-loop-{i:02d}"] = LOOP.replace(b"        opt.step()\n", b"        " + bad.replace(b"\n", b"\n        ") + b"\n")
    # --- Python features the lowering has to handle
    s["py-match"] = b"match cmd:\n    case [x, y, *rest] if x:\n        pass\n    case {'a': 1, **kw}:\n        pass\n    case Point(x=0) | None:\n        pass\n    case _:\n        pass\n" + LOOP
    s["py-async"] = b"async def f(loader):\n    async for x in loader:\n        async with lock:\n            total += await model(x)\n"
    s["py-walrus"] = b"for x in loader:\n    if (loss := model(x).sum()) > 0:\n        losses.append(loss)\n"
    s["py-star-targets"] = b"for x, *y, (z, w) in loader:\n    a, *b = model(x)\n    total += b[0]\n"
    s["py-global-nonlocal"] = b"def f():\n    global T\n    def g():\n        nonlocal T\n        T += model(x)\n    for x in l:\n        g()\n"
    s["py-decorators"] = b"@torch.no_grad()\n@functools.wraps(f)\ndef ev(model, loader):\n    for x in loader:\n        out = model(x)\n"
    s["py-class-nesting"] = b"class A(nn.Module):\n    class B(nn.Module):\n        def forward(self, x):\n            self.h = self.rnn(x, self.h)\n            return self.h\n    def forward(self, x):\n        return self.B()(x)\n"
    s["py-comprehensions"] = b"xs = [model(x) for x in loader if x]\nd = {k: model(v) for k, v in items}\ng = (model(x) for x in loader)\ns = {model(x) for x in loader}\n"
    s["py-try-except-else-finally"] = b"for x in loader:\n    try:\n        loss = model(x)\n    except RuntimeError as e:\n        torch.cuda.empty_cache()\n    else:\n        loss.backward()\n    finally:\n        gc.collect()\n"
    s["py-while-else"] = b"while True:\n    out = model(x)\n    x = out\n    if done: break\nelse:\n    pass\n"
    s["py-type-hints"] = b"def f(x: torch.Tensor, *args: int, **kw: 'str') -> list[int]:\n    y: int = 1\n    return [y]\n" + LOOP
    s["py-fstrings"] = b"for x in loader:\n    loss = model(x)\n    print(f'{loss!r:>{width}} {loss=}')\n    total += loss\n"
    s["py-slices"] = b"x = a[1:2, ..., None, ::3]\ny = a[:, -1][0]\n" + LOOP
    s["py-del-assert-raise"] = b"for x in loader:\n    del x\n    assert y, z\n    raise E from F\n"
    s["py-lambda-default"] = b"f = lambda x=model(y), *a, k=1, **kw: x\n" + LOOP
    s["py-chained-assign"] = b"for x in loader:\n    a = b = c = model(x)\n    a += b; c.append(a)\n"
    s["py-augassign-all"] = b"for x in loader:\n" + b"".join(b"    t %s model(x)\n" % op for op in
                                                              b"+= -= *= /= //= %= **= @= &= |= ^= <<= >>=".split())
    s["py-print-exec-py2"] = b"print >>sys.stderr, 'x'\nexec code in ns\n" + LOOP
    s["py-type-alias"] = b"type X = list[int]\nclass C[T]: pass\ndef f[T](x: T) -> T: return x\n" + LOOP
    s["py-return-outside"] = b"return model(x)\nyield 1\nbreak\ncontinue\n" + LOOP
    s["py-empty-bodies"] = b"def f(): ...\nclass C: pass\nfor x in y: pass\nwhile 0: ...\nwith a: pass\n"
    s["py-semicolons"] = b"for x in loader: loss = model(x); loss.backward(); total += loss\n"
    # --- the rules' own patterns (positives and hard negatives)
    s["rule-gl101"] = b"for x in loader:\n    loss = model(x)\n    loss.backward()\n    total += loss\n"
    s["rule-gl101-neg-item"] = b"for x in loader:\n    loss = model(x)\n    loss.backward()\n    total += loss.item()\n"
    s["rule-gl102"] = b"for x in loader:\n    out = model(x)\n    losses.append(out)\n    self.last = out\n    hist[k] = out\n"
    s["rule-gl103"] = b"h = None\nfor x in loader:\n    out, h = model(x, h)\n    out.sum().backward(retain_graph=True)\n"
    s["rule-gl103-neg-detach"] = b"h = None\nfor x in loader:\n    out, h = model(x, h)\n    h = h.detach()\n    out.sum().backward()\n"
    s["rule-gl104"] = RNN
    s["rule-gl104-neg-nograd"] = b"with torch.no_grad():\n" + b"".join(b"    " + l + b"\n" for l in RNN.split(b"\n"))
    s["rule-gl105"] = b"for x in loader:\n    loss = model(x)\n    loss.backward(retain_graph=True)\n"
    s["rule-gl106"] = b"for x in loader:\n    loss = model(x)\n    loss.backward(create_graph=True)\n"
    s["rule-gl107"] = b"torch.no_grad()\ntorch.inference_mode()\ntorch.enable_grad()\n"
    s["rule-gl201"] = b"for x, y in loader:\n    x.cuda()\n    y.to(dev)\n    x.half()\n"
    s["rule-gl201-neg-module"] = b"model = nn.Linear(2, 2)\nmodel.cuda()\nmodel.to(dev)\n"
    s["rule-gl301-gl302"] = b"import gc\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    torch.cuda.empty_cache()\n    gc.collect()\n"
    s["rule-gl401"] = b"from torch.autograd import Variable\nv = Variable(x, volatile=True)\n"
    s["rule-gl402-gl403"] = b"for x in loader:\n    loss = model(x)\n    loss.backward(retain_variables=True)\n    print(loss.data[0], loss[0])\n"
    s["rule-module-class"] = b"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.rnn = nn.LSTM(2, 2)\n        self.hidden = None\n    def forward(self, x):\n        out, self.hidden = self.rnn(x, self.hidden)\n        return out\n" + LOOP
    s["rule-recursion"] = b"def f(model, x):\n    return f(model, g(model, x))\ndef g(model, x):\n    return f(model, x)\nfor x in loader:\n    t += f(model, x)\n"
    s["rule-deep-call-chain"] = b"".join(b"def f%d(m, x):\n    return f%d(m, x)\n" % (i, i + 1) for i in range(50)) + \
        b"def f50(m, x):\n    return m(x)\nfor x in loader:\n    t += f0(model, x)\n"
    # --- suppressions
    s["noqa-codes"] = LOOP.replace(b"total += loss\n", b"total += loss  # noqa: GL101, GL999,, ,GL\n")
    s["noqa-bare"] = LOOP.replace(b"total += loss\n", b"total += loss  # noqa\n")
    s["noqa-file"] = b"# gradleak: noqa\n" + LOOP
    s["noqa-file-codes"] = b"# gradleak: noqa: GL101,GL301\n" + LOOP
    s["noqa-junk"] = LOOP.replace(b"total += loss\n", b"total += loss  # noqa:" + b"GL1" * 2000 + b"\n")
    s["noqa-many-comments"] = b"".join(b"x = %d  # noqa: GL%d\n" % (i, 100 + i % 900) for i in range(500))
    s["noqa-in-string"] = LOOP.replace(b"total += loss\n", b"total += loss; s = '# noqa: GL101'\n")
    s["noqa-case"] = LOOP.replace(b"total += loss\n", b"total += loss  # NOQA:gl101\n")
    s["noqa-unicode"] = LOOP.replace(b"total += loss\n", "total += loss  # noqa：GL101 ＧＬ１０１\n".encode())
    s["expect-comments"] = b"# expect: GL101\n# expect@+2: GL999\n# ok: why\n" + LOOP
    return s


def toml_seeds():
    s = {}
    s["pyproject"] = b"""[project]
name = "x"
version = "1.0"

[tool.gradleak]
select = ["GL1", "GL201"]
ignore = ["GL107"]
exclude = ["build/", "*.ipynb"]
torch-version = "2.1"
max-file-size = 4194304

[tool.gradleak.per-file-ignores]
"tests/*.py" = ["GL101"]
"""
    s["gradleak-toml"] = b'select = ["ALL"]\nextend-select = []\n[per-file-ignores]\n"a.py" = ["GL1"]\n'
    s["empty"] = b""
    s["comment-only"] = b"# just a comment\n"
    s["crlf"] = s["pyproject"].replace(b"\n", b"\r\n")
    s["bare-cr"] = b"a = 1\rb = 2\r"
    s["bom"] = b"\xef\xbb\xbf" + s["gradleak-toml"]
    s["nul"] = b"a = \"x\x00y\"\n"
    s["nul-key"] = b'"a\\u0000b" = 1\n'
    s["bad-utf8"] = b'a = "\xff\xfe"\n'
    s["bad-utf8-comment"] = b"# \xc3\x28\na = 1\n"
    s["no-trailing-newline"] = b"a = 1"
    s["deep-arrays-100"] = b"a = " + b"[" * 100 + b"]" * 100 + b"\n"
    s["deep-arrays-200"] = b"a = " + b"[" * 200 + b"]" * 200 + b"\n"
    s["deep-arrays-unclosed"] = b"a = " + b"[" * 5000 + b"\n"
    s["deep-inline-tables-150"] = b"a = " + b"{b = " * 150 + b"1" + b"}" * 150 + b"\n"
    s["deep-dotted-keys"] = b".".join([b"k"] * 300) + b" = 1\n"
    s["deep-table-header"] = b"[" + b".".join([b"t"] * 300) + b"]\nx = 1\n"
    s["strings-all"] = b"""a = "basic \\t \\n \\" \\\\ \\u00e9 \\U0001F600"
b = 'literal \\no escapes'
c = \"\"\"
multi
line \\
  continued\"\"\"
d = '''
raw
'''
e = ""
f = ''
"""
    s["string-bad-escape"] = b'a = "\\q"\n'
    s["string-bad-unicode"] = b'a = "\\uD800"\nb = "\\U00110000"\nc = "\\u12"\n'
    s["string-unterminated"] = b'a = "abc\n'
    s["string-unterminated-multi"] = b'a = """abc\n'
    s["string-quotes-in-multi"] = b'a = """""x"""""\nb = \'\'\'\'\'x\'\'\'\'\'\n'
    s["numbers"] = b"""a = 1
b = -0
c = +99
d = 1_000
e = 0xDEAD_BEEF
f = 0o755
g = 0b1101
h = 3.14
i = -1e-10
j = 6.626e34
k = inf
l = -nan
m = +inf
n = 9223372036854775807
o = -9223372036854775808
"""
    s["int-overflow"] = b"a = 9223372036854775808\n"
    s["int-leading-zero"] = b"a = 0123\n"
    s["int-bad-underscore"] = b"a = 1__2\nb = _1\nc = 1_\n"
    s["float-bad"] = b"a = 1.\nb = .1\nc = 1e\nd = 1.e5\n"
    s["bools"] = b"a = true\nb = false\nc = True\n"
    s["dates"] = b"a = 1979-05-27T07:32:00Z\nb = 1979-05-27\nc = 07:32:00\n"
    s["arrays"] = b'a = [1, 2, 3]\nb = ["a", [1, 2], {x = 1}]\nc = [\n  1,\n  2, # comment\n]\nd = []\ne = [,]\n'
    s["array-trailing-commas"] = b"a = [1,,2]\n"
    s["inline-tables"] = b'a = {x = 1, y = "2", z = {w = []}}\nb = {}\n'
    s["inline-table-newline"] = b"a = {x = 1,\ny = 2}\n"
    s["inline-table-trailing-comma"] = b"a = {x = 1,}\n"
    s["tables"] = b"[a]\nx = 1\n[a.b]\ny = 2\n[c]\n[[d]]\nz = 1\n[[d]]\nz = 2\n[d.e]\n"
    s["table-twice"] = b"[a]\n[a]\n"
    s["table-after-dotted"] = b"a.b = 1\n[a]\nc = 2\n"
    s["array-of-tables-conflict"] = b"a = [1]\n[[a]]\n"
    s["duplicate-key"] = b"a = 1\na = 2\n"
    s["duplicate-quoted-key"] = b'a = 1\n"a" = 2\n'
    s["keys-odd"] = b'"" = 1\n\'lit\' = 2\n"\\u00e9" = 3\n1234 = 4\n-_- = 5\n"a.b" = 6\n'
    s["key-no-value"] = b"a =\n"
    s["key-no-equals"] = b"a 1\n"
    s["value-no-key"] = b"= 1\n"
    s["header-unterminated"] = b"[a\nb = 1\n"
    s["header-empty"] = b"[]\n"
    s["header-aot-unterminated"] = b"[[a]\n"
    s["control-chars"] = b'a = "\x01\x7f"\n# \x08\n'
    s["whitespace-odd"] = b"  \t a  \t=\t 1 \t # c\n\x0cb = 2\n"
    s["long-string-8k"] = b'a = "' + b"x" * 8000 + b'"\n'
    s["many-keys"] = b"".join(b"k%d = %d\n" % (i, i) for i in range(500))
    s["many-tables"] = b"".join(b"[t%d]\nx = 1\n" % i for i in range(200))
    s["junk"] = bytes(range(256))
    s["per-file-ignores-odd"] = b'[tool.gradleak.per-file-ignores]\n"**/*.py" = []\n"[" = ["GL1"]\n"\\\\" = ["x"]\n'
    s["select-types"] = b"[tool.gradleak]\nselect = 1\nignore = [1, true]\nexclude = \"x\"\n"
    s["unknown-keys"] = b"[tool.gradleak]\nbogus = 1\n[tool.gradleak.nested]\nx = 2\n"
    return s


def lsp_seeds():
    """Sessions for fuzz_lsp: framed JSON-RPC messages for the whole server; the reader-* copies start
    with byte 0x01 and a chunk-size byte (the reader alone, fed in chunks)."""
    import json

    def msg(obj, raw=None):
        body = raw if raw is not None else json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    uri = "file:///t/train.py"
    text = LOOP.decode()
    init = msg({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": "file:///t", "capabilities": {
                    "general": {"positionEncodings": ["utf-8", "utf-16"]}}}})
    inited = msg({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    opened = msg({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                  "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
    def change(v, changes):
        return msg({"jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {"textDocument": {"uri": uri, "version": v}, "contentChanges": changes}})
    rng = lambda a, b, c, d: {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}
    action = msg({"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction",
                  "params": {"textDocument": {"uri": uri}, "range": rng(10, 0, 10, 20),
                             "context": {"diagnostics": []}}})
    hover = msg({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
                 "params": {"textDocument": {"uri": uri}, "position": {"line": 10, "character": 9}}})
    shutdown = msg({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    exit_ = msg({"jsonrpc": "2.0", "method": "exit"})
    session = init + inited + opened
    s = {}
    s["session-basic"] = session + action + hover + shutdown + exit_
    s["session-incremental"] = session + change(2, [{"range": rng(10, 8, 10, 21), "text": "loss.item()"}]) + \
        change(3, [{"range": rng(0, 0, 0, 0), "text": "\ud83d\ude00 = 1\n"}, {"range": rng(11, 0, 12, 0), "text": ""}]) + \
        hover + shutdown + exit_
    s["session-full-change"] = session + change(2, [{"text": "x = 1\r\ny = \r"}]) + action + exit_
    s["session-ranges-out-of-bounds"] = session + change(2, [{"range": rng(999, 5, 1000, 0), "text": "x"}]) + \
        change(3, [{"range": rng(5, 99, 2, 0), "text": "y"}]) + exit_
    s["session-close-reopen"] = session + msg({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                                      "params": {"textDocument": {"uri": uri}}}) + opened + exit_
    s["session-unknown-methods"] = init + msg({"jsonrpc": "2.0", "id": 9, "method": "foo/bar"}) + \
        msg({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}) + exit_
    s["session-before-init"] = opened + hover + init + exit_
    s["rpc-bad-json"] = init + msg(None, b"{\"jsonrpc\": \"2.0\", \"id\": ") + msg(None, b"[]") + msg(None, b"null") + exit_
    s["rpc-wrong-types"] = init + msg({"jsonrpc": "2.0", "id": [1], "method": 5}) + \
        msg({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": 1, "text": None}}}) + exit_
    s["rpc-batch"] = msg(None, b"[" + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode() + b"]")
    s["frame-no-length"] = b"Content-Type: x\r\n\r\n{}" + init
    s["frame-bad-length"] = b"Content-Length: -5\r\n\r\n{}Content-Length: 99999999999999999999\r\n\r\n" + init
    s["frame-short-body"] = b"Content-Length: 500\r\n\r\n{\"a\":1}" + init + exit_
    s["frame-lf-only"] = b"Content-Length: 2\n\n{}" + init
    s["frame-huge-header"] = b"X-Junk: " + b"a" * 9000 + b"\r\n\r\n" + init
    s["frame-nul-body"] = msg(None, b"{\"jsonrpc\":\"2.0\",\0\"id\":1}") + init
    s["frame-invalid-utf8"] = init + msg(None, b'{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.py","languageId":"python","version":1,"text":"\xff\xfe"}}}')
    for k, v in list(s.items()):
        s["reader-" + k] = bytes([1, 1 + len(k) % 13]) + v
    return s


def write(folder, seeds):
    path = os.path.join(HERE, "corpus", folder)
    os.makedirs(path, exist_ok=True) # hand-written seeds may sit beside the generated ones
    for name, data in sorted(seeds.items()):
        assert len(data) <= 16384, (name, len(data))
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    return len(seeds)


if __name__ == "__main__":
    n1 = write("lint", lint_seeds())
    n2 = write("toml", toml_seeds())
    n3 = write("lsp", lsp_seeds())
    print(f"tests/fuzz/corpus: lint {n1} seeds (also fix's), toml {n2} seeds, lsp {n3} seeds")
