"""gradleak: find GPU-memory hazards in PyTorch training code.

The wheel carries gradleak's native binary (installed as the ``gradleak`` script) and the harness
``gradleak validate`` runs your code under (``<prefix>/share/gradleak/harness``). This package only
finds the binary: ``python -m gradleak ...`` runs it.
"""

import os
import sysconfig

__all__ = ["find_gradleak_bin"]


def find_gradleak_bin() -> str:
    """The path of the gradleak binary installed with this package."""
    exe = "gradleak"
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    # pip install --user puts scripts in the user scheme's folder
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # pip install --target DIR: DIR/bin
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin", exe))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError("the gradleak binary is not installed beside this package (looked in: "
                            + ", ".join(candidates) + ")")
