#!/usr/bin/env python3
"""`ninja wheel`: dist/gradleak-VERSION-py3-none-manylinux_2_31_x86_64.whl, written with zipfile per
the wheel specification (PEP 427 / 491; RECORD per PEP 376), from the tree tools/dist.sh staged:

  gradleak/__init__.py, gradleak/__main__.py    (python/gradleak: `python -m gradleak` execs the binary)
  gradleak-V.data/scripts/gradleak              (the release binary: pip puts it on PATH, bin/)
  gradleak-V.data/data/share/...                (harness, man page, completions: <prefix>/share/, so
                                                 the binary finds bin/../share/gradleak/harness)
  gradleak-V.dist-info/{METADATA,WHEEL,RECORD}
  gradleak-V.dist-info/{LICENSE,THIRD_PARTY_NOTICES}

The tag is py3-none-manylinux_2_31_x86_64: any Python 3 (the package is a launcher; `validate` runs
the user's own python and torch), glibc 2.31+ on x86-64 (tools/dist.sh checks the binary's symbol
versions). The archive is reproducible: sorted names, fixed times (SOURCE_DATE_EPOCH or the
commit's time).
"""

import base64
import hashlib
import os
import subprocess
import sys
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-manylinux_2_31_x86_64"
URL = "https://github.com/gradleak/gradleak"

CLASSIFIERS = [
    "Development Status :: 3 - Alpha",
    "Environment :: Console",
    "Environment :: GPU :: NVIDIA CUDA",
    "Intended Audience :: Developers",
    "Intended Audience :: Science/Research",
    "License :: OSI Approved :: MIT License",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: C",
    "Programming Language :: Python :: 3",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
    "Topic :: Software Development :: Quality Assurance",
]


def epoch() -> int:
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        out = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%ct"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return int(out.stdout.strip())
    except OSError:
        pass
    return int(time.time())


def metadata(version: str) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    head = [
        "Metadata-Version: 2.1",
        "Name: gradleak",
        "Version: " + version,
        "Summary: Find GPU-memory hazards in PyTorch training code (a native linter, like ruff)",
        "Home-page: " + URL,
        "License: MIT",
        "Keywords: pytorch,linter,static-analysis,gpu,memory,cuda,autograd",
        "Project-URL: Homepage, " + URL,
        "Project-URL: Documentation, " + URL + "#readme",
        "Project-URL: Rules, " + URL + "/tree/main/docs/rules",
        "Project-URL: Source, " + URL,
        "Project-URL: Issues, " + URL + "/issues",
    ]
    head += ["Classifier: " + c for c in CLASSIFIERS]
    head += ["Requires-Python: >=3.8", "Description-Content-Type: text/markdown"]
    return "\n".join(head) + "\n\n" + readme


def main() -> int:
    binary = os.path.join(ROOT, "build/dist/gradleak")
    out = subprocess.run([binary, "version"], capture_output=True, text=True, check=True).stdout
    version = out.splitlines()[0].split()[1]
    stage = os.path.join(ROOT, "build/dist/stage", "gradleak-%s-x86_64-linux" % version)
    if not os.path.isfile(os.path.join(stage, "bin/gradleak")):
        print("make-wheel: %s is missing (tools/dist.sh stages it)" % stage, file=sys.stderr)
        return 1
    data = "gradleak-%s.data" % version
    info = "gradleak-%s.dist-info" % version

    files = []  # (archive name, bytes, mode)
    for name in ("__init__.py", "__main__.py"):
        with open(os.path.join(ROOT, "python/gradleak", name), "rb") as f:
            files.append(("gradleak/" + name, f.read(), 0o644))
    with open(os.path.join(stage, "bin/gradleak"), "rb") as f:
        files.append((data + "/scripts/gradleak", f.read(), 0o755))
    for dirpath, dirnames, filenames in os.walk(os.path.join(stage, "share")):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".pyc"):
                continue
            p = os.path.join(dirpath, fn)
            rel = os.path.relpath(p, stage)
            with open(p, "rb") as f:
                files.append((data + "/data/" + rel, f.read(), 0o644))
    files.sort(key=lambda t: t[0])
    for name in ("LICENSE", "THIRD_PARTY_NOTICES"):
        with open(os.path.join(stage, name), "rb") as f:
            files.append((info + "/" + name, f.read(), 0o644))
    files.append((info + "/METADATA", metadata(version).encode("utf-8"), 0o644))
    wheel = "Wheel-Version: 1.0\nGenerator: gradleak tools/make-wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % TAG
    files.append((info + "/WHEEL", wheel.encode(), 0o644))

    record = []
    for name, blob, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(blob)))
    record.append(info + "/RECORD,,")
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))

    date = time.gmtime(max(epoch(), 315532800))[:6]  # zip times start in 1980
    os.makedirs(os.path.join(ROOT, "dist"), exist_ok=True)
    path = os.path.join(ROOT, "dist", "gradleak-%s-%s.whl" % (version, TAG))
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, blob, mode in files:
            zi = zipfile.ZipInfo(name, date_time=date)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, blob)
    os.replace(tmp, path)
    print("wheel: %s (%d bytes)" % (os.path.relpath(path, ROOT), os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
