"""Modules whose name is also one of the library's calls (``vgprscope/explain.py`` and ``vgprscope.explain(...)``,
the ``capture`` package and ``vgprscope.capture()``, ...): the module is made callable as the call, so the
name is both, whatever was imported first and however (``import vgprscope.explain as m`` reaches the module,
``vgprscope.explain(variant=...)`` runs the call, ``inspect.signature`` gives the call's), as
``vgprscope.attention`` is. Standard library only; the call's module is imported on first use."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


def callable_module(module_name: str, call: str) -> None:
    """Make ``sys.modules[module_name]`` callable as ``vgprscope.library.<module>.<name>`` (``call`` is
    ``"module:name"``)."""
    where, _, name = call.partition(":")

    def target() -> Any:
        return getattr(importlib.import_module(f"vgprscope.library.{where}"), name)

    class CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return target()(*args, **kwargs)

        @property
        def __signature__(self) -> Any:
            import inspect

            return inspect.signature(target())

    sys.modules[module_name].__class__ = CallableModule
