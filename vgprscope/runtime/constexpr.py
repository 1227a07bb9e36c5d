"""The one constexpr codec: a constexpr value (or a launch option) as JSON, and back.

Plain values (None, bool, int, float, str) are themselves; a Triton dtype is ``{"dtype": "fp16"}``; a tuple is
``{"tuple": [...]}``; a ``@triton.jit`` function (an activation passed as a constexpr) is ``{"jit": {"file":
..., "qualname": ...}}``, identified as a kernel is (``compile.job.FunctionSource``): by its file and qualified
name, never by the module name it was imported under, so a capture and a kernel-directory variant of one
launch are one job. A Triton dataclass (a Gluon layout: ``gl.BlockedLayout(...)`` passed as a constexpr, or a
tensor descriptor's fields) is ``{"object": {"class": "module:qualname", "fields": {...}}}``, its list fields
``{"list": [...]}``. What cannot be named is ``{"unsupported": "<type> <repr>"}``, and a compile of it says so.

The hook (capture), planning (kernel-directory variants), derivation (the current source's defaults and
heuristics) and the compile worker all go through here.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import sys
from typing import Any

from .loader import LoadError, is_jit, unwrap


def is_dtype(v: Any) -> bool:
    """A ``triton.language.dtype`` (any release), told without importing Triton."""
    return type(v).__name__ == "dtype" and type(v).__module__.startswith("triton")


def is_constexpr(v: Any) -> bool:
    """A ``tl.constexpr`` wrapper around a value."""
    return type(v).__name__ == "constexpr" and hasattr(v, "value")


def jit_ref(fn: Any) -> dict[str, str]:
    """A JIT function as the codec names it: its file (real path) and qualified name."""
    py = fn.fn
    return {"file": os.path.realpath(inspect.getsourcefile(py) or py.__code__.co_filename),
            "qualname": py.__qualname__}


def encode(v: Any) -> Any:
    """A constexpr value as JSON (the inverse of ``decode``); what cannot be named is marked."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if is_constexpr(v):
        return encode(v.value)
    if is_dtype(v):
        return {"dtype": str(v)}
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if is_triton_object(v):
        return {"object": object_ref(v, encode_field)}
    fn = unwrap(v)
    if is_jit(fn):
        return {"jit": jit_ref(fn)}
    return {"unsupported": f"{type(v).__name__} {repr(v)[:80]}"}


def is_triton_object(v: Any) -> bool:
    """An instance of one of Triton's dataclasses (a Gluon layout, a tensor descriptor)."""
    return dataclasses.is_dataclass(v) and not isinstance(v, type) and type(v).__module__.startswith("triton")


def encode_field(v: Any) -> Any:
    """A field of a Triton dataclass: as ``encode``, and a list (a layout's shape, order or bases) too."""
    if isinstance(v, list):
        return {"list": [encode_field(x) for x in v]}
    return encode(v)


def object_ref(v: Any, field: Any) -> dict[str, Any]:
    """A dataclass instance as its class and its constructor's fields, each written by ``field``."""
    cls = type(v)
    return {"class": f"{cls.__module__}:{cls.__qualname__}",
            "fields": {f.name: field(getattr(v, f.name)) for f in dataclasses.fields(v) if f.init}}


def unsupported(value: Any) -> str | None:
    """What an encoded value could not name, at any depth (None: it names everything)."""
    if isinstance(value, dict):
        if "unsupported" in value:
            return str(value["unsupported"])
        return next((w for w in map(unsupported, value.values()) if w), None)
    if isinstance(value, list):
        return next((w for w in map(unsupported, value) if w), None)
    return None


def is_jit_value(value: Any) -> bool:
    """An encoded ``@triton.jit`` function."""
    return isinstance(value, dict) and "jit" in value


def decode(value: Any) -> Any:
    """A constexpr as JSON -> the value a launch passes (dtypes and JIT functions by name)."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, v), = value.items()
        if tag == "dtype":
            import triton.language as tl

            return tl.dtype(v)
        if tag == "jit":
            return _function(v)
        if tag == "tuple":
            return tuple(decode(x) for x in v)
        if tag == "list":
            return [decode(x) for x in v]
        if tag == "object":
            return object_of(v, decode)
        if tag == "unsupported":
            raise LoadError(f"a constexpr the launch could not record ({v})")
    return value


def object_of(ref: dict[str, Any], field: Any) -> Any:
    """The dataclass instance ``object_ref`` wrote, its class imported from Triton, each field read by
    ``field``."""
    module, _, qualname = str(ref["class"]).partition(":")
    if not module.startswith("triton"):
        raise LoadError(f"a constexpr names {ref['class']}, which is not Triton's")
    try:
        cls: Any = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except (ImportError, AttributeError):
        raise LoadError(f"this Triton has no {qualname} (the launch's {ref['class']})") from None
    try:
        return cls(**{k: field(x) for k, x in ref["fields"].items()})
    except TypeError as exc:  # another release's class with other fields
        raise LoadError(f"this Triton's {qualname} does not take the launch's fields ({exc})") from None


def _function(ref: Any) -> Any:
    """The JIT function an encoded ``jit`` names: a module already loaded from its file (the kernel's own, or
    one it imports: where a kernel's activation lives), else its file loaded. ``"module:qualname"`` and
    references with loading information are read too (capture files written before)."""
    if isinstance(ref, str):
        module, _, qualname = ref.partition(":")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    if ref.get("module") or ref.get("package_dir"):
        return _load(ref)
    file, qualname = str(ref["file"]), str(ref["qualname"])
    found = _loaded(file, qualname)
    if found is not None:
        return found
    for module in _module_names(file):  # importable here under a name: imported as its package would be
        found = _loaded(file, qualname) if _imports(module, file) else None
        if found is not None:
            return found
    return _load({"file": file, "qualname": qualname})  # a script: its definitions, nothing it runs


def _load(ref: dict[str, Any]) -> Any:
    """The JIT function ``ref`` names, its module imported or its file read statically (``current``)."""
    from .current import function

    return function(ref)[0]


def _module_names(file: str) -> list[str]:
    """The dotted names under which ``file`` would be imported here, in sys.path's order."""
    out = []
    for entry in sys.path:
        root = os.path.realpath(entry or os.curdir)
        if not file.startswith(root + os.sep):
            continue
        parts = os.path.splitext(file[len(root) + 1:])[0].split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            out.append(".".join(parts))
    return out


def _imports(module: str, file: str) -> bool:
    """Whether ``module`` imports here from ``file`` (an import that fails is no answer, not an error)."""
    try:
        mod = importlib.import_module(module)
    except Exception:
        return False
    path = getattr(mod, "__file__", None)
    return bool(path) and os.path.realpath(str(path)) == file


def _loaded(file: str, qualname: str) -> Any:
    """The JIT function ``qualname`` of a module already imported from ``file`` (None: no such module)."""
    base = os.path.basename(file)
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if not path or os.path.basename(path) != base or os.path.realpath(path) != file:
            continue
        obj: Any = mod
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
        fn = unwrap(obj)
        if is_jit(fn):
            return fn
    return None
