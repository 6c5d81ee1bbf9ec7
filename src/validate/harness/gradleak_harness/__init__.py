"""gradleak's validation harness: runs a program with its flagged loops instrumented and records,
per loop iteration, the memory the loop keeps.

`gradleak validate` starts the program as `python -m gradleak_harness <script|-m module> [args]`
with this folder first on PYTHONPATH and GRADLEAK_SPEC naming a JSON spec:

    {"results": "/tmp/.../results.jsonl",   # one JSON object per line is appended here
     "iterations": 30,                       # samples per loop, then the loop is left
     "budget_s": 20.0,                       # stop the whole program after this long
     "max_growth": 2147483648,               # stop when memory grew by more than this many bytes
     "files": {"/abs/file.py": "/abs/instrumented.py"}}   # sources to serve instead

The instrumented sources call builtins this module installs: `__gradleak_iter__(k, iterable)`
wraps a `for` loop's iterable and `__gradleak_while__(k)` is and-ed in front of a `while` loop's
condition; both take one sample at the top of every iteration and end the loop after `iterations`
samples, so the program moves on to its next flagged loop (or exits when every loop is sampled).
`__gradleak_iter__(k, iterable, 1)` also runs the loop's body with grad off, as `with
torch.no_grad():` around the loop would (the fix gradleak applies where a finding has no mechanical
one). `__gradleak_call__(k)` is put in front of the first statement of a function that no loop
visibly drives (a framework calls it): one sample per call, and the program goes on.
The sources keep their line numbers: only the loop header line changes.

A sample is {"k", "i", "t", "alloc", "reserved", "rss", "heap", "saved", "peak"}: CUDA
memory_allocated and memory_reserved (0 when CUDA is not in use), the peak since the previous sample
(CUDA max_memory_allocated, else the most bytes saved for backward at once), the process's resident set and C-heap bytes in use
(glibc mallinfo2: where CPU tensors live), and the bytes of tensors
currently saved for backward (counted with torch.autograd.graph.saved_tensors_hooks: a graph that
outlives its iteration keeps its saved tensors, so this is the growth gradleak predicts).
"""
import builtins
import ctypes
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time

_state = None


class _State:
    def __init__(self, spec):
        self.n = int(spec.get("iterations", 30))
        self.budget = float(spec.get("budget_s", 60.0))
        self.max_growth = int(spec.get("max_growth", 0))
        self.files = {os.path.realpath(k): v for k, v in spec.get("files", {}).items()}
        self.loops = set(int(k) for k in spec.get("loops", []))
        self.fd = os.open(spec["results"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.t0 = time.monotonic()
        self.counts = {}
        self.base = None
        self.torch = None
        self.saved = 0
        self.peak_saved = 0
        self.storages = {}  # storage data_ptr -> [saved references, bytes]
        self.hooks = None
        self.page = os.sysconf("SC_PAGE_SIZE")

    def write(self, obj):
        obj["pid"] = os.getpid()
        # one write per record: O_APPEND keeps records whole even with worker processes
        os.write(self.fd, (json.dumps(obj) + "\n").encode())


class _Saved:
    """What the pack hook stores instead of the tensor: counts its bytes while autograd holds it.

    It keeps t.detach() (same storage and version counter, no grad_fn), never t itself: an op's
    saved OUTPUT would otherwise point back at its own grad_fn, a reference cycle through C++
    that nothing collects (measured with torch 1.13: a flat loop then grows by every activation)."""
    __slots__ = ("t", "key")

    def __init__(self, t):
        self.t = t.detach()
        # Bytes are counted per storage, once however many graphs save it: a parameter saved by
        # every step's Linear is one block of memory, not one per step.
        try:
            st = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            key, n = st.data_ptr(), st.nbytes()
        except Exception:  # sparse or exotic tensors: not counted
            key, n = 0, 0
        self.key = key
        if key:
            refs = _state.storages.get(key)
            if refs is None:
                _state.storages[key] = [1, n]
                _state.saved += n
                if _state.saved > _state.peak_saved:
                    _state.peak_saved = _state.saved
            else:
                refs[0] += 1

    def __del__(self):
        s = _state
        if s is None or not self.key:
            return
        refs = s.storages.get(self.key)
        if refs is not None:
            refs[0] -= 1
            if refs[0] == 0:
                del s.storages[self.key]
                s.saved -= refs[1]


def _unpack(h):
    return h.t


def _torch():
    """torch once the program has imported it (the probe never imports it first: that would change
    what the program does), with the saved-tensor hooks installed on first use."""
    s = _state
    if s.torch is None:
        t = sys.modules.get("torch")
        if t is None or not hasattr(t, "autograd"):
            return None
        s.torch = t
        try:
            s.hooks = t.autograd.graph.saved_tensors_hooks(_Saved, _unpack)
            s.hooks.__enter__()
        except Exception as e:  # torch < 1.10 has no saved_tensors_hooks
            s.write({"event": "note", "msg": "saved_tensors_hooks unavailable: %s" % e})
            s.hooks = None
        cuda = False
        name = "cpu"
        try:
            cuda = bool(t.cuda.is_available())
            if cuda:
                name = t.cuda.get_device_name()
        except Exception:
            pass
        s.write({"event": "torch", "version": str(t.__version__), "cuda": cuda, "device": name})
    return s.torch


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                 "fsmblks", "uordblks", "fordblks", "keepcost")]


_mallinfo2 = None


def _heap():
    """Bytes the C heap has handed out (glibc mallinfo2: in-use chunks plus mmapped blocks): where
    CPU tensors live, without RSS's page-level noise. 0 where mallinfo2 is missing (not glibc)."""
    global _mallinfo2
    if _mallinfo2 is None:
        try:
            libc = ctypes.CDLL(None)
            f = libc.mallinfo2
            f.restype = _MallInfo2
            _mallinfo2 = f
        except (OSError, AttributeError):
            _mallinfo2 = False
    if not _mallinfo2:
        return 0
    m = _mallinfo2()
    return m.uordblks + m.hblkhd


def _rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _state.page
    except OSError:
        return 0


def _sample(k):
    s = _state
    t = _torch()
    alloc = reserved = 0
    peak = s.peak_saved
    if t is not None:
        try:
            if t.cuda.is_available() and t.cuda.is_initialized():
                t.cuda.synchronize()
                alloc = int(t.cuda.memory_allocated())
                reserved = int(t.cuda.memory_reserved())
                peak = int(t.cuda.max_memory_allocated())
                t.cuda.reset_peak_memory_stats()
        except Exception:
            pass
    s.peak_saved = s.saved
    i = s.counts.get(k, 0)
    rec = {"k": k, "i": i, "t": round(time.monotonic() - s.t0, 6), "alloc": alloc, "reserved": reserved,
           "rss": _rss(), "heap": _heap(), "saved": s.saved, "peak": peak}
    s.write(rec)
    s.counts[k] = i + 1
    if s.base is None:
        s.base = rec
    return rec


def _finish(why):
    s = _state
    s.write({"event": "exit", "why": why, "t": round(time.monotonic() - s.t0, 6)})
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os._exit(0)


def _tick(k):
    """One sample for loop k; False when the loop has all its samples (the loop then ends)."""
    s = _state
    if s is None:
        return True
    if s.counts.get(k, 0) >= s.n:
        return False
    rec = _sample(k)
    if s.loops and all(s.counts.get(j, 0) >= s.n for j in s.loops):
        _finish("sampled")
    if time.monotonic() - s.t0 > s.budget:
        _finish("budget")
    if s.max_growth and s.base is not None:
        grown = max(rec["alloc"] - s.base["alloc"], rec["saved"] - s.base["saved"], rec["rss"] - s.base["rss"])
        if grown > s.max_growth:
            _finish("memory cap")
    return s.counts[k] < s.n


def _iter(k, iterable, no_grad=0):
    t = _torch() if no_grad else None
    prev = None
    if t is not None:
        prev = t.is_grad_enabled()
    try:
        for item in iterable:
            if not _tick(k):
                return
            if t is not None:
                # the loop's body runs between two yields: grad off there, as under torch.no_grad()
                t.set_grad_enabled(False)
            yield item
    finally:
        if t is not None:
            t.set_grad_enabled(prev)


def _while(k):
    return _tick(k)


def _call(k):
    """One sample per call of a function that no loop visibly drives; never ends anything but the
    whole run (when every probe has its samples)."""
    if _state is not None and _state.counts.get(k, 0) < _state.n:
        _tick(k)


class _Loader(importlib.machinery.SourceFileLoader):
    """Loads a flagged file from its instrumented copy; never from or to the bytecode cache."""

    def __init__(self, fullname, path, served):
        super().__init__(fullname, path)
        self.served = served

    def get_data(self, path):
        if os.path.realpath(path) == os.path.realpath(self.path):
            with open(self.served, "rb") as f:
                return f.read()
        return super().get_data(path)

    def get_code(self, fullname):
        return compile(self.get_data(self.path), self.path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        served = _state.files.get(os.path.realpath(spec.origin))
        if served is None:
            return None
        loader = _Loader(fullname, spec.origin, served)
        return importlib.util.spec_from_file_location(
            fullname, spec.origin, loader=loader,
            submodule_search_locations=spec.submodule_search_locations)


def served_source(path):
    """The instrumented source for path, or None when path is not a flagged file."""
    served = _state.files.get(os.path.realpath(path)) if _state else None
    if served is None:
        return None
    with open(served, "rb") as f:
        return f.read()


def install():
    """Reads GRADLEAK_SPEC and installs the probes and the import hook (once per process)."""
    global _state
    if _state is not None:
        return True
    path = os.environ.get("GRADLEAK_SPEC")
    if not path:
        return False
    with open(path) as f:
        spec = json.load(f)
    _state = _State(spec)
    builtins.__gradleak_iter__ = _iter
    builtins.__gradleak_while__ = _while
    builtins.__gradleak_call__ = _call
    sys.meta_path.insert(0, _Finder())
    _state.write({"event": "start", "python": sys.version.split()[0], "argv": sys.argv[1:], "wall": time.time()})
    import atexit
    atexit.register(lambda: _state.write({"event": "exit", "why": "program ended",
                                          "t": round(time.monotonic() - _state.t0, 6)}))
    return True
