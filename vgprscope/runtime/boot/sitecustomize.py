"""Loaded by every Python process that ``vgprscope capture`` starts (this directory leads PYTHONPATH).

Installs the capture hook of the runtime package this directory belongs to, loaded as a package
(``_vgprscope_boot``), so the user's environment need not have vgprscope; then runs the ``sitecustomize``
this one shadows, if there is one.
"""

import importlib.util
import os
import sys


def _install():
    from _vgprscope_boot import load

    load(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook").install()


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
