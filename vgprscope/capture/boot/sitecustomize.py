"""Loaded by every Python process that ``vgprscope capture`` starts (this directory leads PYTHONPATH).

Installs the capture hook from the file ``$VGPRSCOPE_CAPTURE_HOOK`` names (so the user's environment
need not have vgprscope), then runs the ``sitecustomize`` this one shadows, if there is one.
"""

import importlib.util
import os
import sys


def _install():
    path = os.environ.get("VGPRSCOPE_CAPTURE_HOOK")
    if not path:
        return
    spec = importlib.util.spec_from_file_location("_vgprscope_capture_hook", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["_vgprscope_capture_hook"] = module
    spec.loader.exec_module(module)
    module.install()


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_vgprscope_shadowed_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


try:
    _install()
except Exception as exc:  # a capture that cannot hook must not stop the user's command
    print(f"vgprscope capture: cannot install the hook: {type(exc).__name__}: {exc}", file=sys.stderr)
_chain()
