"""The import hook: Triton's runtime modules patched right after they are imported (the capture's wrappers,
the interpreter's fixes), whenever the user's command imports them."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
from collections.abc import Callable
from typing import Any

from .session import note

WATCHED = ("triton.runtime.jit", "triton.runtime.interpreter", "triton.runtime.autotuner",
           "triton.language.extra.libdevice", "triton.runtime.driver", "triton.compiler.compiler")
# The watched modules patched so far (cleared when a reversible installation ends).
PATCHED: set[str] = set()


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any, name: str, patch: Callable[[str, Any], None]) -> None:
        self.inner, self.name, self.patch = inner, name, patch

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        try:
            self.inner.exec_module(module)
        except ModuleNotFoundError as exc:
            if self.name == "triton.runtime.interpreter" and exc.name == "numpy":
                note("interpreter-needs-numpy")
            raise
        self.patch(self.name, module)


class Finder(importlib.abc.MetaPathFinder):
    """Calls ``patch(name, module)`` right after a watched module is imported."""

    def __init__(self, patch: Callable[[str, Any], None]) -> None:
        self.patch = patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in WATCHED or fullname in PATCHED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, fullname, self.patch)
        return spec
