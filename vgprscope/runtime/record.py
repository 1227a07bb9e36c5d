"""What the capture hook records of a launch: the kernel's identity, the launch as facts (``facts``) bound by
Triton's own JIT binder, and the kernel's snapshot once per session; at ``JITFunction.run`` (and the
interpreter's ``run``) and at ``triton.compile`` for what reaches it from outside the JIT (Inductor's kernels,
a library's own launcher).

The specialisation is Triton's own: the JIT's binder (``create_function_from_signature`` with
``native_specialize_impl``), run on the launch's arguments once per backend (HIP and CUDA), so each target
gets the descriptors its own JIT would derive. Hooks are chosen by feature, not by Triton version.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
from typing import Any

from . import constexpr, snapshot
from .facts import as_specialised, launch_fact
from .hashing import source_hash
from .interp import interpreting
from .session import (
    MARK,
    RecordError,
    Session,
    current,
    failed,
    install_run,
    local,
    note,
    run_counted,
    set_attr,
    write,
)

# Targets whose JIT binders derive the specialisation: one per backend (descriptors do not depend on the
# arch within a backend).
_TARGETS = (("hip", "gfx942", 64), ("cuda", 90, 32))


_kernels: dict[int, dict] = {}  # id(python function) -> state (the state keeps the function alive)


_file_hashes: dict[str, str] = {}


_backends: dict[str, object] | None = None


def _source_hash(file: str) -> str:
    if file not in _file_hashes:
        try:
            _file_hashes[file] = source_hash(file)
        except OSError:
            _file_hashes[file] = ""
    return _file_hashes[file]


def _root(module: str, file: str) -> str | None:
    """The sys.path entry the module was imported from (a compile worker adds it to find the module)."""
    if not module or module == "__main__":
        return None
    parts = module.split(".")
    path = os.path.abspath(file)
    base, _ = os.path.splitext(path)
    if os.path.basename(base) == "__init__":
        base = os.path.dirname(base)
    for _ in parts:
        base = os.path.dirname(base)
    return base


def _get_backends() -> dict[str, object]:
    global _backends
    if _backends is None:
        _backends = {}
        try:
            from triton.backends.compiler import GPUTarget
            from triton.compiler.compiler import make_backend
        except Exception:
            return _backends
        for name, arch, width in _TARGETS:
            try:
                _backends[name] = make_backend(GPUTarget(name, arch, width))
            except Exception:  # a Triton without this backend: that vendor's descriptors are unknown
                pass
    return _backends


_options: set[str] | None = None


def _option_names() -> set[str]:
    """The compile options of each backend (num_warps, num_stages, maxnreg, ...). Triton's JIT parses every
    launch keyword as an option (``JITFunction._pack_args``), so a keyword that names a kernel parameter as
    well (a kernel taking ``num_warps`` as a constexpr) is both; its binder hands it to the parameter only."""
    global _options
    if _options is None:
        _options = set()
        for be in _get_backends().values():
            try:
                _options |= set(vars(be.parse_options({})))  # type: ignore[attr-defined]
            except Exception:  # a backend whose options need more than nothing: its names stay unknown
                pass
    return _options


def _params(kernel):
    """(python function, inspect.Signature, KernelParams) of a JITFunction or an InterpretedFunction."""
    from triton.runtime.jit import KernelParam

    fn = kernel.fn
    sig = getattr(kernel, "signature", None) or inspect.signature(fn)
    params = getattr(kernel, "params", None)
    if params is None:  # InterpretedFunction keeps only the decorator's keyword arguments
        kw = getattr(kernel, "kwargs", {}) or {}
        dns = kw.get("do_not_specialize") or ()
        dnsa = kw.get("do_not_specialize_on_alignment") or ()
        params = [KernelParam(i, p, i in dns or p.name in dns, i in dnsa or p.name in dnsa)
                  for i, p in enumerate(sig.parameters.values())]
    return fn, sig, params


def _state(kernel) -> dict:
    fn = kernel.fn
    st = _kernels.get(id(fn))
    if st is not None:
        return st
    from triton.runtime.jit import create_function_from_signature

    fn, sig, params = _params(kernel)
    file = os.path.realpath(inspect.getsourcefile(fn) or fn.__code__.co_filename)
    module = getattr(fn, "__module__", "") or ""
    ident = {"module": module, "qualname": fn.__qualname__, "file": file, "source_hash": _source_hash(file),
             "root": _root(module, file)}
    binders = {name: create_function_from_signature(sig, params, be) for name, be in _get_backends().items()}
    st = {"id": ident, "names": [p.name for p in params], "params": list(params), "binders": binders, "fn": fn}
    _kernels[id(fn)] = st
    return st


def _write_snapshot(kernel, ident: dict) -> None:
    """The kernel's source and what it reads, once per kernel: what a machine that cannot import its module
    (it needs a GPU to import, or it is a script) compiles instead."""
    try:
        snap = snapshot.snapshot(kernel)
    except Exception as exc:  # never break the user's command
        snap = {"kernel": "", "functions": {}, "problems": [f"{type(exc).__name__}: {exc}"]}
    write({"snapshot": {"kernel": ident, "data": snap}})


def launch_facts(kernel, args, kwargs, pick: dict | None = None) -> dict:
    """One launch of a JIT (or interpreted) function as facts: the kernel's identity, each argument's facts,
    the launch options, the autotune config it is (``pick``) and why it cannot be compiled, if it cannot.
    The binding is Triton's own (its JIT's binder), so defaults, keyword arguments and ``do_not_specialize``
    resolve as the launch itself resolves them."""
    st = _state(kernel)
    binder = next(iter(st["binders"].values()), None)
    if binder is None:
        raise RuntimeError("no Triton backend could bind the launch")
    bound, spec, options = binder(*args, **kwargs)
    out_args, reason = [], None
    for i, (name, param) in enumerate(zip(st["names"], st["params"])):
        fact, why = launch_fact(name, getattr(param, "is_constexpr", False), bound[name], spec[i][0])
        reason = reason or why
        out_args.append(as_specialised(fact, param))
    options = dict(options) | {k: v for k, v in kwargs.items() if k in st["names"] and k in _option_names()}
    opts = {k: constexpr.encode(v) for k, v in sorted(options.items()) if k not in ("grid", "warmup")}
    gluon = _is_gluon(kernel)  # compiled through Gluon's own source (explicit layouts), never interpreted
    out = {"kernel": st["id"], "args": out_args, "options": opts, "autotune": pick, "reason": reason,
           "interpreted": interpreting() and not gluon,
           **(_readings(st["names"], st["params"], bound) if getattr(local, "reads", 0) else {}),
           "call": getattr(local, "call", None) or call_of(args, kwargs)}
    if gluon:
        out["gluon"] = True
    return out


def _is_gluon(kernel) -> bool:
    """A ``@gluon.jit`` kernel: its JIT class (a JITFunction subclass) says so (Triton 3.4 on)."""
    is_gluon = getattr(kernel, "is_gluon", None)
    return bool(callable(is_gluon) and is_gluon())


def call_of(args, kwargs) -> dict:
    """What the user's own call passed (positional count, keyword names): the rest came from an autotune
    config, a heuristic or a default, which the gate derives again from the current source."""
    return {"positional": len(args), "keywords": sorted(k for k in kwargs if k not in ("grid", "warmup"))}


def _readings(names, params, bound) -> dict:
    """What ``@triton.heuristics`` and ``prune_configs_by`` may read of the launch besides its facts: each
    scalar argument's value and each tensor's shape and strides (the gate evaluates them on these).
    Recorded only for a launch that goes through one of them: a plain launch at many problem sizes stays one
    entry of the capture (a heuristic added later says "capture again")."""
    values, tensors = {}, {}
    for name, param in zip(names, params):
        v = bound.get(name)
        if getattr(param, "is_constexpr", False) or v is None:
            continue
        if isinstance(v, (bool, int, float)):
            values[name] = v
        elif hasattr(v, "data_ptr"):
            try:
                tensors[name] = {"shape": [int(x) for x in v.shape], "stride": [int(x) for x in v.stride()]}
            except Exception:  # an object with a pointer but no shape: nothing more is known of it
                pass
    return {"values": values, "tensors": tensors}


def _record(s: Session, kernel, args, kwargs) -> None:
    launch = launch_facts(kernel, args, kwargs, getattr(local, "pick", None))
    fn = _kernels[id(kernel.fn)]["fn"]
    if id(fn) not in s.snapshots:  # once per kernel and session: what compiles where its module cannot load
        s.snapshots.add(id(fn))
        _write_snapshot(kernel, launch["kernel"])
    key = hashlib.sha256(json.dumps(launch, sort_keys=True, default=repr).encode()).hexdigest()
    if key in s.seen:
        return
    s.seen.add(key)
    s.write({"launch": launch})


def driver_watch(module) -> None:
    """Note when Triton finds no GPU driver: ``_create_driver`` (triton/runtime/driver.py), which the JIT,
    the autotuner's benchmarker and ``driver.active`` all go through on first use, raises "0 active drivers
    ([]). There should only be one." on a machine without a GPU, where TRITON_INTERPRET=1 was meant."""
    original = getattr(module, "_create_driver", None)
    if original is None or getattr(original, "_vgprscope", None) is MARK:
        return

    def _create_driver(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except RuntimeError as exc:
            if str(exc).startswith("0 active drivers"):
                note("no-gpu-driver")
            raise

    _create_driver._vgprscope = MARK  # type: ignore[attr-defined]
    set_attr(module, "_create_driver", _create_driver)


def wrap_kernel_run(cls) -> None:
    original = cls.run
    if getattr(original, "_vgprscope", None) is MARK:
        return

    def run(self, *args, **kwargs):
        s = current()
        if s is None:  # not recording (a recording block ended on another thread, or none began)
            return original(self, *args, **kwargs)
        dry = getattr(local, "dry", False)
        if not dry and s.launch and interpreting() and _is_gluon(self):
            note("gluon-interpreted")  # Gluon has no interpreter: the launch fails for want of a GPU driver
        if dry or not getattr(local, "in_autotune", 0):  # the autotuner's own launches are its configs
            try:
                _record(s, self, args, {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")})
            except RecordError:
                raise
            except Exception as exc:
                failed(s, self, exc)
        if dry or not s.launch:
            return None
        return run_counted("in_jit", original, self, args, kwargs)  # its compile is this launch: recorded above

    install_run(cls, run)


def _keyed(source_map, names: list) -> dict:
    """An ASTSource's constants or attrs keyed by argument index (Triton keys them by index path, older
    releases' callers by name)."""
    out = {}
    for k, v in (source_map or {}).items():
        if isinstance(k, str):
            k = (names.index(k),)
        out[tuple(k)] = v
    return out


def compile_facts(src, target, options) -> dict:
    """A direct ``triton.compile(ASTSource(fn, signature, constexprs, attrs), target, options)`` as the facts
    of a launch, the form a JIT launch is recorded in: the signature's types, ``tt.divisibility`` 16 as
    aligned, ``tt.pointer_range`` 32 as within 2 GiB, constexprs by value (an integer 1 the caller specialised,
    for an argument not declared constexpr, as the JIT's equal-to-1)."""
    kernel = src.fn
    st = _state(kernel)
    names = st["names"]
    constants, attrs = _keyed(getattr(src, "constants", None), names), _keyed(getattr(src, "attrs", None), names)
    signature = dict(getattr(src, "signature", None) or {})
    out_args, reason = [], None
    for i, (name, param) in enumerate(zip(names, st["params"])):
        typ = signature.get(name, "constexpr")
        declared = getattr(param, "is_constexpr", False)
        if typ == "constexpr" or (i,) in constants:
            value = constants.get((i,))
            if not declared and type(value) is int and value == 1 and typ != "constexpr":
                out_args.append({"name": name, "type": typ, "one": True})
                continue
            enc = constexpr.encode(value)
            if constexpr.unsupported(enc):
                reason = reason or f"constexpr {name} is a {constexpr.unsupported(enc)}, which a capture cannot name"
            out_args.append({"name": name, "type": "constexpr", "value": enc})
            continue
        fact = {"name": name, "type": str(typ)}
        for spec in attrs.get((i,), []):
            key, value = (spec[0], spec[1]) if isinstance(spec, (list, tuple)) and len(spec) == 2 else (None, None)
            if key == "tt.divisibility" and value == 16:
                fact["aligned"] = True
            elif key == "tt.pointer_range" and value == 32:
                fact["small"] = True
        out_args.append(fact)
    opts = {k: constexpr.encode(v) for k, v in sorted(dict(options or {}).items())}
    where = {"backend": getattr(target, "backend", None), "arch": constexpr.encode(getattr(target, "arch", None)),
             "warp_size": getattr(target, "warp_size", None)} if target is not None else None
    return {"kernel": st["id"], "args": out_args, "options": opts, "autotune": None, "reason": reason,
            "interpreted": False, "target": where, "origin": "triton.compile"}


def _inductor_caller() -> tuple[dict | None, dict | None]:
    """(autotune pick, producer) when the compile comes from Inductor's autotuner (``CachingAutotuner.
    _precompile_config(cfg)``, PyTorch 2.4 and later): the config's place in the kernel's config list, the
    kernel's name, its heuristic (pointwise, reduction, persistent_reduction, template) and Inductor's meta."""
    frame: Any = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return None, None
        if frame.f_code.co_name == "_precompile_config" and "self" in frame.f_locals:
            tuner, cfg = frame.f_locals["self"], frame.f_locals.get("cfg")
            configs = list(getattr(tuner, "configs", None) or [])
            meta = dict(getattr(tuner, "inductor_meta", None) or {})
            index = next((i for i, c in enumerate(configs) if c is cfg), None)
            pick = ({"index": index, "count": len(configs), "declared": len(configs), "key": []}
                    if index is not None and len(configs) > 1 else None)
            producer = {"by": "inductor", "kernel_name": meta.get("kernel_name"),
                        "heuristic": getattr(tuner, "heuristic_type", None) and str(tuner.heuristic_type),
                        "config": constexpr.encode(repr(cfg))[:300] if cfg is not None else None,
                        "meta": {k: constexpr.encode(v) for k, v in sorted(meta.items())
                                 if isinstance(v, (bool, int, float, str)) or v is None}}
            return pick, producer
        frame = frame.f_back
    return None, None


def _record_compile(s: Session, src, target, options) -> None:
    launch = compile_facts(src, target, options)
    launch["autotune"], producer = _inductor_caller()
    if producer is not None:
        launch["producer"] = producer
    fn = _kernels[id(src.fn.fn)]["fn"]
    if id(fn) not in s.snapshots:
        s.snapshots.add(id(fn))
        _write_snapshot(src.fn, launch["kernel"])
    key = hashlib.sha256(json.dumps(launch, sort_keys=True, default=repr).encode()).hexdigest()
    if key in s.seen:
        return
    s.seen.add(key)
    s.write({"launch": launch})


def wrap_compile(module) -> None:
    """Record what reaches ``triton.compile`` from outside Triton's JIT: PyTorch Inductor's kernels (compiled by
    its own autotuner, launched by its own launchers, never through ``JITFunction.run``) and any library that
    compiles an ``ASTSource`` itself. The JIT's own compiles are its launches, recorded there."""
    original = getattr(module, "compile", None)
    if original is None or getattr(original, "_vgprscope", None) is MARK:
        return

    def compile(src, *args, **kwargs):
        s = current()
        fn = getattr(src, "fn", None)
        if (s is not None and not getattr(local, "in_jit", 0) and not getattr(local, "dry", False)
                and hasattr(getattr(fn, "fn", None), "__code__") and hasattr(src, "signature")):
            target = kwargs.get("target", args[0] if args else None)
            options = kwargs.get("options", args[1] if len(args) > 1 else None)
            try:
                _record_compile(s, src, target, options)
            except RecordError:
                raise
            except Exception as exc:
                failed(s, fn, exc)
        return original(src, *args, **kwargs)

    compile._vgprscope = MARK  # type: ignore[attr-defined]
    set_attr(module, "compile", compile)
    for name in ("triton.compiler", "triton"):  # their re-exports, bound when Triton was imported first
        parent = sys.modules.get(name)
        if parent is not None and parent.__dict__.get("compile") is original:
            set_attr(parent, "compile", compile)


