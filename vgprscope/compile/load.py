"""A captured kernel back in a compile worker: import the user's function and rebuild the launch's source.

The signature, specialisation and constexprs are the ones Triton's own JIT binder derived at the launch
(``vgprscope.capture.hook``), per backend, so ``triton.compile`` here gets exactly what the JIT gave it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any


class LoadError(Exception):
    """The captured function cannot be loaded as it was captured (moved, changed, not importable)."""


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _module(p: dict[str, Any]):
    """The module the captured function lives in. An importable module is imported by name, so a capture
    taken on another machine (another venv path) still finds it; its source must hash as captured."""
    module, file = p["module"], Path(p["file"])
    if module and module != "__main__":
        root = p.get("root")
        if root and root not in sys.path:
            sys.path.append(root)
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            gone = "" if file.exists() else " (the file no longer exists: moved or deleted since the capture)"
            raise LoadError(f"cannot import {module} here{gone}: {exc}; install it, or capture again") from None
        where = Path(getattr(mod, "__file__", "") or file)
        now = file_hash(where) if where.is_file() else ""
        if now != p["source_hash"]:
            if where.resolve() == file.resolve():
                raise LoadError(f"{file.name} changed since the capture (source hash {now}, captured "
                                f"{p['source_hash']}): capture again")
            raise LoadError(f"module {module} loads from {where}, whose source differs from the captured {file} "
                            f"(hash {now}, captured {p['source_hash']}): capture again")
        return mod
    if not file.exists():
        raise LoadError(f"{file} no longer exists (moved or deleted since the capture): capture again")
    if file_hash(file) != p["source_hash"]:
        raise LoadError(f"{file.name} changed since the capture (source hash {file_hash(file)}, captured "
                        f"{p['source_hash']}): capture again")
    # a kernel defined in the user's script: load the file under its own name, so that code behind
    # `if __name__ == "__main__"` does not run
    name = "vgprscope_captured_" + hashlib.sha1(str(file).encode()).hexdigest()[:10]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {file} as a module")
    if str(file.parent) not in sys.path:
        sys.path.append(str(file.parent))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_function(p: dict[str, Any]):
    """The JITFunction a capture names (through any @autotune / @heuristics wrappers)."""
    from triton.runtime.jit import JITFunction

    if "<locals>" in p["qualname"]:
        raise LoadError(f"{p['qualname']} is defined inside a function: not importable by name; move it to "
                        "module level to analyse it")
    obj: Any = _module(p)
    for part in p["qualname"].split("."):
        if not hasattr(obj, part):
            raise LoadError(f"{p['module']} has no {p['qualname']} (renamed since the capture?)")
        obj = getattr(obj, part)
    seen = 0
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn") and seen < 16:
        obj, seen = obj.fn, seen + 1
    if not isinstance(obj, JITFunction):
        raise LoadError(f"{p['module']}.{p['qualname']} is a {type(obj).__name__}, not a Triton JIT function")
    return obj


def decode_constexpr(value: Any) -> Any:
    """A constexpr as the hook encoded it -> the value the JIT passed (dtypes and JIT functions by name)."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, v), = value.items()
        if tag == "dtype":
            import triton.language as tl

            return tl.dtype(v)
        if tag == "jit":
            module, _, qualname = v.partition(":")
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            return obj
        if tag == "unsupported":
            raise LoadError(f"a constexpr the capture could not record ({v})")
        if tag == "tuple":
            return tuple(decode_constexpr(x) for x in v)
    return value


def launch_source(fn, p: dict[str, Any], vendor: str, backend):
    """ASTSource of a captured launch for ``vendor`` ("hip" or "cuda"), as JITFunction._pack_args builds it."""
    from triton.compiler import ASTSource

    signature: dict[str, str] = {}
    constexprs: dict[tuple[int, ...], Any] = {}
    attrs: dict[tuple[int, ...], Any] = {}
    for i, a in enumerate(p["args"]):
        signature[a["name"]] = a["type"]
        if a["type"] == "constexpr":
            constexprs[(i,)] = decode_constexpr(p["constexprs"][a["name"]])
            attrs[(i,)] = backend.parse_attr("")  # _pack_args gives constexprs an empty descriptor too
        elif isinstance(a.get(vendor), str):
            attrs[(i,)] = backend.parse_attr(a[vendor])
    return ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
