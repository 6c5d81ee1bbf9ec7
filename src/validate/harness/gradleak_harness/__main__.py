"""`python -m gradleak_harness SCRIPT [ARGS]` or `python -m gradleak_harness -m MODULE [ARGS]`:
runs the program as `python SCRIPT` / `python -m MODULE` would, with the flagged files served
instrumented (the script itself included)."""
import os
import runpy
import sys
import traceback
import types

import gradleak_harness

if not gradleak_harness.install():
    sys.stderr.write("gradleak_harness: GRADLEAK_SPEC is not set (this module is started by `gradleak validate`)\n")
    sys.exit(2)

args = sys.argv[1:]
if not args:
    sys.stderr.write("usage: python -m gradleak_harness SCRIPT|-m MODULE [ARGS]\n")
    sys.exit(2)

if args[0] == "-m" and len(args) > 1:
    sys.argv = [args[1]] + args[2:]
    sys.path[0] = os.getcwd()
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    script = args[0]
    sys.argv = args
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    source = gradleak_harness.served_source(script)
    if source is None:
        with open(script, "rb") as f:
            source = f.read()
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__builtins__ = __builtins__
    main.__spec__ = None
    sys.modules["__main__"] = main
    try:
        code = compile(source, script, "exec", dont_inherit=True)
    except SyntaxError:
        traceback.print_exc()
        sys.exit(1)
    exec(code, main.__dict__)
