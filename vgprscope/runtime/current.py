"""A kernel's current source where the gate runs: its module imported (``loader``), or, where the module does not
import here (torch or a GPU missing, a package not installed), its file read statically (``static``). The
capture's snapshot is none of these: it compiles only where the file itself is gone (``compile``).

Standard library only at import time (Triton is imported by what the functions load).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from . import loader, static


class Gone(loader.LoadError):
    """The file no longer defines the kernel (renamed or removed), or defines something else under its name."""


@dataclass(frozen=True)
class Loaded:
    """What a kernel's qualified name names now (the JIT function under its wrappers) and how it was read."""

    obj: Any
    module: Any  # the module it was found in (imported, or read statically: another name read runs its statements)
    import_error: str = ""  # why its module did not import here ("" where it did): then read statically
    files: tuple[str, ...] = field(default=())  # the files read statically

    @property
    def static(self) -> bool:
        return bool(self.files)


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _named(module: Any, source: dict[str, Any]) -> Any:
    obj = module
    for part in source["qualname"].split("."):
        if not hasattr(obj, part):
            raise Gone(f"{os.path.basename(source['file'])} no longer defines {source['qualname']}")
        obj = getattr(obj, part)
    return obj


def load(source: dict[str, Any], *, static_only: bool = False) -> Loaded:
    """The object ``source`` (a FunctionSource as a dict) names in its file as it is now: its module imported,
    else (or with ``static_only``) the file read statically. Raises Gone (the name is not there), LoadError
    (the file is gone, or neither works: both reasons said), static.Underivable (what the kernel reaches
    needs what does not import here)."""
    qualname = source["qualname"]
    if "<locals>" in qualname:
        raise loader.LoadError(f"{qualname} is defined inside a function: not reachable by name; move it to "
                               "module level to analyse it")
    if not os.path.isfile(source["file"]):
        raise loader.LoadError(f"{source['file']} does not exist (moved or deleted)")
    if (utf8 := loader.not_utf8(source["file"])) is not None:  # Triton reads a kernel's source as UTF-8
        raise loader.LoadError(utf8)
    why = "read statically"
    if not static_only:
        try:
            with loader.loading():
                module = loader.load_module(source)
        except Exception as exc:  # not importable here (torch or a GPU missing): its file read statically
            why = str(exc) if isinstance(exc, loader.LoadError) else _line(exc)
        else:
            return Loaded(_named(module, source), module)
    try:
        with loader.loading():
            obj, module, files = static.kernel(source)
    except (static.Underivable, Gone):
        raise
    except LookupError as exc:
        raise Gone(str(exc)) from None
    except SyntaxError as exc:
        raise loader.LoadError(f"{os.path.basename(source['file'])} is not valid Python here ({_line(exc)})") \
            from None
    except Exception as exc:
        name = source.get("module") or os.path.basename(source["file"])
        raise loader.LoadError(f"{name} does not import here ({why}) and its file cannot be read without "
                               f"running it ({_line(exc)})") from None
    return Loaded(obj, module, why, tuple(files))


def function(source: dict[str, Any], *, static_only: bool = False) -> tuple[Any, Loaded]:
    """The JIT function ``source`` names (under its wrappers), and how it was read (``load``)."""
    loaded = load(source, static_only=static_only)
    fn = loader.unwrap(loaded.obj)
    if not loader.is_jit(fn):
        raise Gone(f"{source['qualname']} is a {type(fn).__name__}, not a Triton JIT function")
    return fn, loaded
