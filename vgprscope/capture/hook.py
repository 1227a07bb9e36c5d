"""The capture hook, loaded into the user's own Python processes by ``boot/sitecustomize.py``.

Standard library only at import time (the user's environment may not have vgprscope installed): it
waits for Triton's runtime modules to be imported and then wraps ``JITFunction.run`` (GPU launches),
``InterpretedFunction.run`` (``TRITON_INTERPRET=1``) and ``Autotuner.run``. Each distinct specialisation
is appended, one JSON line, to ``$VGPRSCOPE_CAPTURE_DIR/launches-<pid>.jsonl`` as soon as it is seen, so
a crash or a forked worker loses nothing.

The specialisation is Triton's own: the JIT's binder (``create_function_from_signature`` with
``native_specialize_impl``), run on the launch's arguments once per backend (HIP and CUDA), so each target
gets the descriptors its own JIT would derive. Hooks are chosen by feature, not by Triton version.

An autotuned kernel records every config of its list after ``prune_configs_by`` (each one passed through
the wrapped kernel's ``run`` without launching, so ``@heuristics`` below it see each config); under the
interpreter, which cannot benchmark, the first config is then run, so the user's command completes.
Nothing here may break the user's command: a failure to record is itself recorded and the launch goes on.
What explains a command's failure is noted for capture to pass on as a hint: Triton finding no GPU driver
(a CPU run without TRITON_INTERPRET=1), the interpreter's import failing for want of numpy.

The same code records in vgprscope's own process, for the library (``vgprscope.library``): a *session*
says where the lines go (a directory, or a list) and whether the launch itself runs. ``recording``
installs the wrappers for a block and restores Triton's classes after (``vgprscope.capture()``: every
launch of the block, on every thread); ``dry_launch`` sends one launch through the kernel's own entry point
(``kernel[grid](*args, **kwargs)``: autotuner, heuristics, JIT) with nothing launched and every config
recorded (``vgprscope.analyze(kernel, *args, ...)``). The CLI's capture installs them for good
(``install``), writing to ``$VGPRSCOPE_CAPTURE_DIR``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import json
import os
import sys
import threading

DIR_ENV = "VGPRSCOPE_CAPTURE_DIR"
_WATCHED = ("triton.runtime.jit", "triton.runtime.interpreter", "triton.runtime.autotuner",
            "triton.language.extra.libdevice", "triton.runtime.driver", "triton.compiler.compiler")
# Targets whose JIT binders derive the specialisation: one per backend (descriptors do not depend on the
# arch within a backend).
_TARGETS = (("hip", "gfx942", 64), ("cuda", 90, 32))

_lock = threading.RLock()
_local = threading.local()
_kernels: dict[int, dict] = {}  # id(python function) -> state (the state keeps the function alive)
_file_hashes: dict[str, str] = {}
_backends: dict[str, object] | None = None
_patched: set[str] = set()
# This module's mark on what it wrapped: the CLI's copy (loaded by path) and the library's are two modules,
# and each wraps what the other wrapped
_MARK = object()
_MISSING = object()


class Session:
    """Where recorded lines go: appended to ``launches-<pid>.jsonl`` in ``directory``, or to ``items``. With
    ``launch`` False nothing the session sees is launched (a dry launch); ``strict``: a launch that cannot be
    recorded raises instead of being noted (the library's caller asked for exactly that launch)."""

    def __init__(self, directory: str | None = None, launch: bool = True, strict: bool = False) -> None:
        self.directory = directory
        self.items: list[dict] = []
        self.launch = launch
        self.strict = strict
        self.seen: set[str] = set()
        self.autotune_seen: set[tuple[int, str]] = set()
        self.snapshots: set[int] = set()

    def write(self, obj: dict) -> None:
        if self.directory is None:
            with _lock:
                self.items.append(json.loads(json.dumps(obj, default=repr)))
            return
        line = json.dumps(obj, separators=(",", ":"), default=repr) + "\n"
        path = os.path.join(self.directory, f"launches-{os.getpid()}.jsonl")
        with _lock, open(path, "a") as f:
            f.write(line)


_global: Session | None = None  # the CLI's hook, or a vgprscope.capture() block: every thread records


def _session() -> Session | None:
    """The session recording this thread's launches (a dry launch's own, else the process-wide one)."""
    return getattr(_local, "session", None) or _global


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _write(obj: dict) -> None:
    s = _session()
    if s is not None:
        s.write(obj)


def _source_hash(file: str) -> str:
    if file not in _file_hashes:
        try:
            with open(file, "rb") as f:
                _file_hashes[file] = hashlib.sha256(f.read()).hexdigest()[:16]
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


def _kernel_load():
    """vgprscope's kernel_load module, beside this file's package (standard library only), by path: the
    user's environment need not have vgprscope installed."""
    name = "_vgprscope_capture_kernel_load"
    if name not in sys.modules:
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(here), "compile", "kernel_load.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _write_snapshot(kernel, ident: dict) -> None:
    """The kernel's source and what it reads, once per kernel: what a machine that cannot import its module
    (it needs a GPU to import, or it is a script) compiles instead."""
    try:
        snap = _kernel_load().snapshot(kernel)
    except Exception as exc:  # never break the user's command
        snap = {"kernel": "", "functions": {}, "problems": [f"{type(exc).__name__}: {exc}"]}
    _write({"snapshot": {"kernel": ident, "data": snap}})


def _encode(v):
    """A constexpr value as JSON: dtypes and JIT functions by name; what cannot be named is marked."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    cls = type(v).__name__
    if cls == "constexpr" and hasattr(v, "value"):
        return _encode(v.value)
    try:
        import triton.language as tl

        if isinstance(v, tl.dtype):
            return {"dtype": str(v)}
    except Exception:
        pass
    if isinstance(v, tuple):
        return {"tuple": [_encode(x) for x in v]}
    fn = getattr(v, "fn", None)
    if fn is not None and hasattr(fn, "__qualname__") and hasattr(v, "run"):
        return {"jit": f"{fn.__module__}:{fn.__qualname__}"}
    return {"unsupported": f"{cls} {repr(v)[:80]}"}


_MAX_INT32 = 2**31 - 1


def _within_2gb(value) -> bool:
    """Whether a pointer argument addresses at most 2 GiB (what AMD's buffer operations need), as Triton's
    HIP backend decides it: the object's ``ptr_range()``, or a torch tensor's storage size."""
    try:
        if hasattr(value, "ptr_range"):
            return value.ptr_range() <= _MAX_INT32
        storage = getattr(value, "untyped_storage", None)
        if storage is not None:
            return storage().size() <= _MAX_INT32
    except Exception:
        pass
    return False


def _fact(name: str, param, value, typ) -> tuple[dict, str | None]:
    """One argument as facts of the launch (type, alignment or divisibility by 16, equal to 1, within 2 GiB,
    a constexpr's value); the compile worker lets each release's own binder specialise them."""
    if getattr(param, "is_constexpr", False):
        enc = _encode(value)
        why = None
        if isinstance(enc, dict) and "unsupported" in enc:
            why = f"constexpr {name} is a {enc['unsupported']}, which a capture cannot name"
        return {"name": name, "type": "constexpr", "value": enc}, why
    if value is None:
        return {"name": name, "type": "constexpr", "value": None}, None
    if hasattr(value, "data_ptr"):
        fact = {"name": name, "type": typ if isinstance(typ, str) and typ.startswith("*") else f"*{typ}"}
        if value.data_ptr() % 16 == 0:
            fact["aligned"] = True
        if _within_2gb(value):
            fact["small"] = True
        return fact, None
    if isinstance(value, bool):
        return {"name": name, "type": "u1"}, None
    if isinstance(value, int):
        kind = "i32" if -(2**31) <= value < 2**31 else ("i64" if -(2**63) <= value < 2**63 else "u64")
        fact = {"name": name, "type": kind}
        if value % 16 == 0:
            fact["aligned"] = True
        if value == 1:
            fact["one"] = True
        return fact, None
    if isinstance(value, float):
        return {"name": name, "type": "fp32"}, None
    return {"name": name, "type": str(typ)}, f"argument {name} is a {type(value).__name__}, which a capture cannot record yet"


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
        fact, why = _fact(name, param, bound[name], spec[i][0])
        reason = reason or why
        out_args.append(fact)
    opts = {k: _encode(v) for k, v in sorted(options.items()) if k not in ("grid", "warmup")}
    gluon = _is_gluon(kernel)  # compiled through Gluon's own source (explicit layouts), never interpreted
    out = {"kernel": st["id"], "args": out_args, "options": opts, "autotune": pick, "reason": reason,
           "interpreted": _interpreting() and not gluon,
           **(_readings(st["names"], st["params"], bound) if getattr(_local, "reads", 0) else {}),
           "call": getattr(_local, "call", None) or _call(args, kwargs)}
    if gluon:
        out["gluon"] = True
    return out


def _is_gluon(kernel) -> bool:
    """A ``@gluon.jit`` kernel: its JIT class (a JITFunction subclass) says so (Triton 3.4 on)."""
    is_gluon = getattr(kernel, "is_gluon", None)
    return bool(callable(is_gluon) and is_gluon())


def _call(args, kwargs) -> dict:
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
    launch = launch_facts(kernel, args, kwargs, getattr(_local, "pick", None))
    fn = _kernels[id(kernel.fn)]["fn"]
    if id(fn) not in s.snapshots:  # once per kernel and session: what compiles where its module cannot load
        s.snapshots.add(id(fn))
        _write_snapshot(kernel, launch["kernel"])
    key = hashlib.sha256(json.dumps(launch, sort_keys=True, default=repr).encode()).hexdigest()
    if key in s.seen:
        return
    s.seen.add(key)
    s.write({"launch": launch})


def _note(name: str) -> None:
    """Something the capture should tell the user about the command's failure (once per session)."""
    s = _session()
    key = f"note:{name}"
    if s is not None and key not in s.seen:
        s.seen.add(key)
        s.write({"note": name})


def _driver_watch(module) -> None:
    """Note when Triton finds no GPU driver: ``_create_driver`` (triton/runtime/driver.py), which the JIT,
    the autotuner's benchmarker and ``driver.active`` all go through on first use, raises "0 active drivers
    ([]). There should only be one." on a machine without a GPU, where TRITON_INTERPRET=1 was meant."""
    original = getattr(module, "_create_driver", None)
    if original is None or getattr(original, "_vgprscope", None) is _MARK:
        return

    def _create_driver(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except RuntimeError as exc:
            if str(exc).startswith("0 active drivers"):
                _note("no-gpu-driver")
            raise

    _create_driver._vgprscope = _MARK
    _set(module, "_create_driver", _create_driver)


class RecordError(Exception):
    """A strict session's launch that cannot be recorded (the library's caller gets it)."""


def _failed(s: Session, kernel, exc: BaseException) -> None:
    fn = getattr(kernel, "fn", kernel)
    while hasattr(fn, "fn") and not hasattr(fn, "__code__"):  # an autotuner's or heuristics' function
        fn = fn.fn
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    message = f"{name}: cannot record the launch: {type(exc).__name__}: {str(exc)[:200]}"
    if s.strict:
        raise RecordError(message) from exc
    key = f"error:{name}:{type(exc).__name__}"
    if key not in s.seen:
        s.seen.add(key)
        s.write({"error": message})


def _set(owner, name: str, value) -> None:
    """Every patch goes through here, so a reversible installation (``recording``) can undo it."""
    if _undo is not None:
        _undo.append((owner, name, owner.__dict__.get(name, _MISSING)))
    setattr(owner, name, value)


def _wrap_kernel_run(cls) -> None:
    original = cls.run
    if getattr(original, "_vgprscope", None) is _MARK:
        return

    def run(self, *args, **kwargs):
        s = _session()
        if s is None:  # not recording (a recording block ended on another thread, or none began)
            return original(self, *args, **kwargs)
        dry = getattr(_local, "dry", False)
        if not dry and s.launch and _interpreting() and _is_gluon(self):
            _note("gluon-interpreted")  # Gluon has no interpreter: the launch fails for want of a GPU driver
        if dry or not getattr(_local, "in_autotune", 0):  # the autotuner's own launches are its configs
            try:
                _record(s, self, args, {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")})
            except RecordError:
                raise
            except Exception as exc:
                _failed(s, self, exc)
        if dry or not s.launch:
            return None
        _local.in_jit = getattr(_local, "in_jit", 0) + 1  # its compile is this launch: recorded above
        try:
            return original(self, *args, **kwargs)
        finally:
            _local.in_jit -= 1

    run._vgprscope = _MARK
    _set(cls, "run", run)


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
            enc = _encode(value)
            if isinstance(enc, dict) and "unsupported" in enc:
                reason = reason or f"constexpr {name} is a {enc['unsupported']}, which a capture cannot name"
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
    opts = {k: _encode(v) for k, v in sorted(dict(options or {}).items())}
    where = {"backend": getattr(target, "backend", None), "arch": _encode(getattr(target, "arch", None)),
             "warp_size": getattr(target, "warp_size", None)} if target is not None else None
    return {"kernel": st["id"], "args": out_args, "options": opts, "autotune": None, "reason": reason,
            "interpreted": False, "target": where, "origin": "triton.compile"}


def _inductor_caller() -> tuple[dict | None, dict | None]:
    """(autotune pick, producer) when the compile comes from Inductor's autotuner (``CachingAutotuner.
    _precompile_config(cfg)``, PyTorch 2.4 and later): the config's place in the kernel's config list, the
    kernel's name, its heuristic (pointwise, reduction, persistent_reduction, template) and Inductor's meta."""
    frame = sys._getframe(2)
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
                        "config": _encode(repr(cfg))[:300] if cfg is not None else None,
                        "meta": {k: _encode(v) for k, v in sorted(meta.items())
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


def _wrap_compile(module) -> None:
    """Record what reaches ``triton.compile`` from outside Triton's JIT: PyTorch Inductor's kernels (compiled by
    its own autotuner, launched by its own launchers, never through ``JITFunction.run``) and any library that
    compiles an ``ASTSource`` itself. The JIT's own compiles are its launches, recorded there."""
    original = getattr(module, "compile", None)
    if original is None or getattr(original, "_vgprscope", None) is _MARK:
        return

    def compile(src, *args, **kwargs):
        s = _session()
        fn = getattr(src, "fn", None)
        if (s is not None and not getattr(_local, "in_jit", 0) and not getattr(_local, "dry", False)
                and hasattr(getattr(fn, "fn", None), "__code__") and hasattr(src, "signature")):
            target = kwargs.get("target", args[0] if args else None)
            options = kwargs.get("options", args[1] if len(args) > 1 else None)
            try:
                _record_compile(s, src, target, options)
            except RecordError:
                raise
            except Exception as exc:
                _failed(s, fn, exc)
        return original(src, *args, **kwargs)

    compile._vgprscope = _MARK
    _set(module, "compile", compile)
    for name in ("triton.compiler", "triton"):  # their re-exports, bound when Triton was imported first
        parent = sys.modules.get(name)
        if parent is not None and parent.__dict__.get("compile") is original:
            _set(parent, "compile", compile)


def _autotune_key(tuner, args, kwargs) -> tuple:
    """The key Autotuner.run caches its choice under (the same expression as Triton's)."""
    all_args = {**dict(zip(tuner.arg_names, args)), **kwargs}
    _args = {k: v for (k, v) in all_args.items() if k in tuner.arg_names}
    key = [_args[k] for k in tuner.keys if k in _args]
    for _, arg in _args.items():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def autotune_configs(tuner, args, kwargs) -> tuple[tuple, list, int]:
    """(the autotuner's cache key for this launch, its configs after ``prune_configs_by``, how many it
    declares): the configs Triton would benchmark for this launch."""
    key = _autotune_key(tuner, args, kwargs)
    meta = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    try:
        pruned = list(tuner.prune_configs(meta)) if len(tuner.configs) > 1 else list(tuner.configs)
    finally:
        tuner.nargs = saved
    return key, pruned, len(tuner.configs)


def _specialisation_mark(args, kwargs) -> tuple:
    """What of a launch's arguments the JIT specialises on beyond the autotuner's key: which arguments are
    None, tensors' dtype and 16-byte alignment, integers' divisibility by 16 and equality to 1. The key
    Triton's autotuner caches under lists tensor dtypes without their names, so two launches with ``g`` and
    ``g_gamma`` swapping None and a tensor share one key, one tuned config and two JIT compiles."""
    def one(v):
        if v is None or isinstance(v, (bool, float, str)):
            return type(v).__name__
        if isinstance(v, int):
            return ("int", v % 16 == 0, v == 1, -(2**31) <= v < 2**31)
        if hasattr(v, "data_ptr"):
            try:
                return ("ptr", str(getattr(v, "dtype", "")), v.data_ptr() % 16 == 0)
            except Exception:
                return ("ptr", str(getattr(v, "dtype", "")))
        return type(v).__name__
    return tuple(one(v) for v in args) + tuple((k, one(v)) for k, v in sorted(kwargs.items()))


def _record_autotune(s: Session, tuner, args, kwargs) -> None:
    """Each config of the launch's pruned list passed through the wrapped kernel's ``run`` without launching,
    so that the ``@heuristics`` (and anything else) between the autotuner and the JIT function see it.

    As the autotuner does: a key it has not tuned yet benchmarks (so compiles) every config; a key it has
    tuned launches its chosen config alone, so a launch specialised differently under a tuned key (another
    argument None, another alignment) adds that one config, as the JIT compiles that one kernel."""
    key, pruned, declared = autotune_configs(tuner, args, kwargs)
    mark = (id(tuner), repr(key), _specialisation_mark(args, kwargs))
    if mark in s.autotune_seen:
        return
    s.autotune_seen.add(mark)
    chosen = tuner.cache.get(key) if isinstance(getattr(tuner, "cache", None), dict) else None
    picks = [(i, c) for i, c in enumerate(pruned) if chosen is None or c is chosen or c == chosen]
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    prunes = bool(getattr(tuner, "early_config_prune", None) or getattr(tuner, "perf_model", None))
    _local.reads = getattr(_local, "reads", 0) + prunes
    try:
        for i, config in picks or list(enumerate(pruned)):
            _local.dry, _local.pick = True, {"index": i, "count": len(pruned), "declared": declared,
                                             "key": [str(k) for k in key]}
            try:
                if config.pre_hook is not None:
                    config.pre_hook({**tuner.nargs, **kwargs, **config.all_kwargs()})
                tuner.fn.run(*args, **kwargs, **config.all_kwargs())
            finally:
                _local.dry, _local.pick = False, None
    finally:
        tuner.nargs = saved
        _local.reads -= prunes
    if s.launch and _interpreting() and len(pruned) > 1 and key not in tuner.cache:
        tuner.cache[key] = pruned[0]  # the interpreter cannot benchmark: run the first config


def _wrap_tuner_run(cls) -> None:
    """Record every config of an autotuner's list when its ``run`` is called (the Autotuner's own, or an
    overriding ``run`` of a subclass: FlagGems' LibTuner, for one, never calls Autotuner.run)."""
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_vgprscope", None) is _MARK:
        return

    def run(self, *args, **kwargs):
        s = _session()
        if s is None or getattr(_local, "dry", False):
            return original(self, *args, **kwargs)
        outer = getattr(_local, "call", None) is None
        if outer:
            _local.call = _call(args, kwargs)
        try:
            _record_autotune(s, self, args, kwargs)
        except RecordError:
            raise
        except Exception as exc:
            _failed(s, self, exc)
        finally:
            if outer:
                _local.call = None
        if not s.launch:
            return None
        _local.in_autotune = getattr(_local, "in_autotune", 0) + 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _local.in_autotune -= 1

    run._vgprscope = _MARK
    _set(cls, "run", run)


def _wrap_heuristics_run(cls) -> None:
    """Remember the user's own call when it enters through ``@triton.heuristics`` (the JIT function below
    sees the heuristics' values as keyword arguments, as if the user had passed them)."""
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_vgprscope", None) is _MARK:
        return

    def run(self, *args, **kwargs):
        outer = _session() is not None and getattr(_local, "call", None) is None
        if outer:
            _local.call = _call(args, kwargs)
        _local.reads = getattr(_local, "reads", 0) + 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _local.reads -= 1
            if outer:
                _local.call = None

    run._vgprscope = _MARK
    _set(cls, "run", run)


def _subclasses(cls) -> list:
    out, todo = [], list(cls.__subclasses__())
    while todo:
        sub = todo.pop()
        out.append(sub)
        todo += sub.__subclasses__()
    return out


def _wrap_autotuner(cls) -> None:
    if cls.__dict__.get("_vgprscope_hooked") is _MARK:
        return
    _set(cls, "_vgprscope_hooked", _MARK)
    _wrap_tuner_run(cls)
    for sub in _subclasses(cls):  # defined before the hook was installed
        _wrap_tuner_run(sub)
    inherited = cls.__init_subclass__

    def __init_subclass__(sub, **kw):
        inherited.__func__(sub, **kw) if hasattr(inherited, "__func__") else inherited(**kw)
        _wrap_tuner_run(sub)

    _set(cls, "__init_subclass__", classmethod(__init_subclass__))


def _float_args(interpreter) -> None:
    """Triton's interpreter (3.9 at least) passes a float kernel argument as a Python float, where the JIT
    passes an fp32 scalar: ``eps.to(tl.float32)`` then fails and the user's command with it. Give it the
    fp32 scalar the JIT would, and a None argument stays None (the JIT's constexpr None); every other
    argument is converted as before."""
    original = getattr(interpreter, "_implicit_cvt", None)
    if original is None or getattr(original, "_vgprscope", None) is _MARK:
        return

    def _implicit_cvt(arg):
        if arg is None:  # the JIT makes a None argument a constexpr None
            return None
        if isinstance(arg, float):
            import numpy as np
            import triton.language as tl

            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    _implicit_cvt._vgprscope = _MARK
    _set(interpreter, "_implicit_cvt", _implicit_cvt)


# libdevice functions Triton's interpreter leaves as stubs that return None, with their numpy form.
_LIBDEVICE = {
    "tanh": "tanh", "rsqrt": None, "sqrt": "sqrt", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2",
    "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil", "abs": "abs", "erf": None,
}


def _libdevice(module) -> None:
    """Under TRITON_INTERPRET=1 give the interpreter the libdevice functions it lacks (elementwise, in the
    operand's own dtype), so kernels that import them (liger's rsqrt, tanh) run and the command completes.
    Patched when the module is imported, before a kernel file binds the names."""
    if not _interpreting():
        return
    import math

    import numpy as np

    def make(name, np_name):
        if np_name is not None:
            op = getattr(np, np_name)
        elif name == "rsqrt":
            def op(x):
                return 1.0 / np.sqrt(x)
        else:
            op = np.vectorize(math.erf)

        def fn(arg0, *rest, **kwargs):
            import triton.language as tl
            from triton.runtime.interpreter import TensorHandle

            h = arg0.handle
            return tl.tensor(TensorHandle(op(h.data).astype(h.data.dtype), h.dtype.scalar), arg0.type)

        fn.__name__ = name
        return fn

    for name, np_name in _LIBDEVICE.items():
        if hasattr(module, name):
            _set(module, name, make(name, np_name))


def _patch(name: str, module) -> None:
    if name in _patched:
        return
    _patched.add(name)
    try:
        if name == "triton.runtime.jit" and hasattr(module, "JITFunction"):
            _wrap_kernel_run(module.JITFunction)
        elif name == "triton.runtime.interpreter" and hasattr(module, "InterpretedFunction"):
            _wrap_kernel_run(module.InterpretedFunction)
            _float_args(module)
        elif name == "triton.runtime.autotuner" and hasattr(module, "Autotuner"):
            _wrap_autotuner(module.Autotuner)
            if hasattr(module, "Heuristics"):
                _wrap_heuristics_run(module.Heuristics)
        elif name == "triton.language.extra.libdevice":
            _libdevice(module)
        elif name == "triton.runtime.driver":
            _driver_watch(module)
        elif name == "triton.compiler.compiler":
            _wrap_compile(module)
    except Exception as exc:  # never break the user's import
        _write({"error": f"cannot hook {name}: {type(exc).__name__}: {exc}"})


_finder: _Finder | None = None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, name):
        self.inner, self.name = inner, name

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        try:
            self.inner.exec_module(module)
        except ModuleNotFoundError as exc:
            if self.name == "triton.runtime.interpreter" and exc.name == "numpy":
                _note("interpreter-needs-numpy")
            raise
        _patch(self.name, module)


class _Finder(importlib.abc.MetaPathFinder):
    """Patches Triton's runtime classes right after their modules are imported."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _WATCHED or fullname in _patched:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, fullname)
        return spec


def install() -> None:
    """The CLI's hook, for the life of the user's process: every launch recorded to $VGPRSCOPE_CAPTURE_DIR."""
    global _global, _finder
    if not os.environ.get(DIR_ENV):
        return
    _global = Session(os.environ[DIR_ENV])
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    for name in _WATCHED:  # already imported (a sitecustomize of the user's imported triton first)
        if name in sys.modules:
            _patch(name, sys.modules[name])


# A reversible installation (``recording``): what each patch replaced, restored when the last block ends.
# None while no such installation is active (the CLI's ``install`` is never undone).
_undo: list | None = None
_depth = 0


def _begin() -> None:
    global _undo, _depth, _finder
    with _lock:
        _depth += 1
        if _depth > 1 or _finder is not None:  # already installed (by an outer block, or for good)
            return
        _undo = []
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
        for name in _WATCHED:
            if name in sys.modules:
                _patch(name, sys.modules[name])
        _inductor_compiles_again()


def _inductor_compiles_again() -> None:
    """Inductor serves a model compiled before from its caches without calling triton.compile: inside a
    recording block it compiles again (its ``force_disable_caches``, restored when the block ends), as the
    CLI's capture sets TORCHINDUCTOR_FORCE_DISABLE_CACHES for the command it runs."""
    for name in ("torch.compiler.config", "torch._inductor.config"):  # the first holds it from PyTorch 2.6 on
        config = sys.modules.get(name)
        try:
            old = config.force_disable_caches
        except Exception:  # not imported, or a release without the setting
            continue
        # a config module's settings are not in its __dict__, and deleting one hides it: restored by value
        if _undo is not None:
            _undo.append((config, "force_disable_caches", old))
        config.force_disable_caches = True
        return


def _end() -> None:
    global _undo, _depth, _finder
    with _lock:
        _depth -= 1
        if _depth > 0 or _undo is None:
            return
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for owner, name, old in reversed(_undo):
            if old is _MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, old)
        _undo, _finder = None, None
        _patched.clear()


@contextlib.contextmanager
def recording(directory: str | None = None, launch: bool = True):
    """Record every launch of the block, on every thread, into a new session (to ``directory``, else to the
    session's ``items``); Triton's classes are restored when the block ends, however it ends."""
    global _global
    session = Session(directory, launch=launch)
    _begin()
    previous, _global = _global, session
    try:
        yield session
    finally:
        _global = previous
        _end()


def dry_launch(kernel, args, kwargs, grid=(1,)) -> Session:
    """``kernel[grid](*args, **kwargs)`` recorded and not launched, on this thread only: an autotuner's every
    config (after ``prune_configs_by``), each through the heuristics below it, as the CLI's capture records
    them. A launch that cannot be recorded raises RecordError (or the binder's own error)."""
    session = Session(launch=False, strict=True)
    _begin()
    previous = getattr(_local, "session", None)
    _local.session = session
    try:
        kernel[grid](*args, **kwargs)
    finally:
        _local.session = previous
        _end()
    return session
