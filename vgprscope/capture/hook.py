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
"""

from __future__ import annotations

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
            "triton.language.extra.libdevice", "triton.runtime.driver")
# Targets whose JIT binders derive the specialisation: one per backend (descriptors do not depend on the
# arch within a backend).
_TARGETS = (("hip", "gfx942", 64), ("cuda", 90, 32))

_lock = threading.Lock()
_local = threading.local()
_seen: set[str] = set()
_autotune_seen: set[tuple[int, str]] = set()
_kernels: dict[int, dict] = {}  # id(python function) -> state
_file_hashes: dict[str, str] = {}
_backends: dict[str, object] | None = None
_patched: set[str] = set()


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _write(obj: dict) -> None:
    line = json.dumps(obj, separators=(",", ":"), default=repr) + "\n"
    path = os.path.join(os.environ[DIR_ENV], f"launches-{os.getpid()}.jsonl")
    with _lock, open(path, "a") as f:
        f.write(line)


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
    _write_snapshot(kernel, ident)
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


def _record(kernel, args, kwargs) -> None:
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
    launch = {"kernel": st["id"], "args": out_args, "options": opts, "autotune": getattr(_local, "pick", None),
              "reason": reason, "interpreted": _interpreting()}
    key = hashlib.sha256(json.dumps(launch, sort_keys=True, default=repr).encode()).hexdigest()
    if key in _seen:
        return
    _seen.add(key)
    _write({"launch": launch})


def _note(name: str) -> None:
    """Something the capture should tell the user about the command's failure (once per process)."""
    key = f"note:{name}"
    if key not in _seen:
        _seen.add(key)
        _write({"note": name})


def _driver_watch(module) -> None:
    """Note when Triton finds no GPU driver: ``_create_driver`` (triton/runtime/driver.py), which the JIT,
    the autotuner's benchmarker and ``driver.active`` all go through on first use, raises "0 active drivers
    ([]). There should only be one." on a machine without a GPU, where TRITON_INTERPRET=1 was meant."""
    original = getattr(module, "_create_driver", None)
    if original is None or getattr(original, "_vgprscope", False):
        return

    def _create_driver(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except RuntimeError as exc:
            if str(exc).startswith("0 active drivers"):
                _note("no-gpu-driver")
            raise

    _create_driver._vgprscope = True
    module._create_driver = _create_driver


def _failed(kernel, exc: BaseException) -> None:
    fn = getattr(kernel, "fn", kernel)
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    key = f"error:{name}:{type(exc).__name__}"
    if key not in _seen:
        _seen.add(key)
        _write({"error": f"{name}: cannot record the launch: {type(exc).__name__}: {str(exc)[:200]}"})


def _wrap_kernel_run(cls) -> None:
    original = cls.run
    if getattr(original, "_vgprscope", False):
        return

    def run(self, *args, **kwargs):
        dry = getattr(_local, "dry", False)
        if dry or not getattr(_local, "in_autotune", 0):  # the autotuner's own launches are its configs
            try:
                _record(self, args, {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")})
            except Exception as exc:
                _failed(self, exc)
        if dry:
            return None
        return original(self, *args, **kwargs)

    run._vgprscope = True
    cls.run = run


def _autotune_key(tuner, args, kwargs) -> tuple:
    """The key Autotuner.run caches its choice under (the same expression as Triton's)."""
    all_args = {**dict(zip(tuner.arg_names, args)), **kwargs}
    _args = {k: v for (k, v) in all_args.items() if k in tuner.arg_names}
    key = [_args[k] for k in tuner.keys if k in _args]
    for _, arg in _args.items():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def _record_autotune(tuner, args, kwargs) -> None:
    key = _autotune_key(tuner, args, kwargs)
    mark = (id(tuner), repr(key))
    if mark in _autotune_seen:
        return
    _autotune_seen.add(mark)
    meta = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    tuner.nargs = dict(zip(tuner.arg_names, args))
    pruned = list(tuner.prune_configs(meta)) if len(tuner.configs) > 1 else list(tuner.configs)
    for i, config in enumerate(pruned):
        _local.dry, _local.pick = True, {"index": i, "count": len(pruned), "declared": len(tuner.configs),
                                         "key": [str(k) for k in key]}
        try:
            if config.pre_hook is not None:
                config.pre_hook({**tuner.nargs, **kwargs, **config.all_kwargs()})
            tuner.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            _local.dry, _local.pick = False, None
    if _interpreting() and len(pruned) > 1 and key not in tuner.cache:
        tuner.cache[key] = pruned[0]  # the interpreter cannot benchmark: run the first config


def _wrap_tuner_run(cls) -> None:
    """Record every config of an autotuner's list when its ``run`` is called (the Autotuner's own, or an
    overriding ``run`` of a subclass: FlagGems' LibTuner, for one, never calls Autotuner.run)."""
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_vgprscope", False):
        return

    def run(self, *args, **kwargs):
        if getattr(_local, "dry", False):
            return original(self, *args, **kwargs)
        try:
            _record_autotune(self, args, kwargs)
        except Exception as exc:
            _failed(self, exc)
        _local.in_autotune = getattr(_local, "in_autotune", 0) + 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _local.in_autotune -= 1

    run._vgprscope = True
    cls.run = run


def _subclasses(cls) -> list:
    out, todo = [], list(cls.__subclasses__())
    while todo:
        sub = todo.pop()
        out.append(sub)
        todo += sub.__subclasses__()
    return out


def _wrap_autotuner(cls) -> None:
    if getattr(cls, "_vgprscope_hooked", False):
        return
    cls._vgprscope_hooked = True
    _wrap_tuner_run(cls)
    for sub in _subclasses(cls):  # defined before the hook was installed
        _wrap_tuner_run(sub)
    inherited = cls.__init_subclass__

    def __init_subclass__(sub, **kw):
        inherited.__func__(sub, **kw) if hasattr(inherited, "__func__") else inherited(**kw)
        _wrap_tuner_run(sub)

    cls.__init_subclass__ = classmethod(__init_subclass__)


def _float_args(interpreter) -> None:
    """Triton's interpreter (3.9 at least) passes a float kernel argument as a Python float, where the JIT
    passes an fp32 scalar: ``eps.to(tl.float32)`` then fails and the user's command with it. Give it the
    fp32 scalar the JIT would, and a None argument stays None (the JIT's constexpr None); every other
    argument is converted as before."""
    original = getattr(interpreter, "_implicit_cvt", None)
    if original is None or getattr(original, "_vgprscope", False):
        return

    def _implicit_cvt(arg):
        if arg is None:  # the JIT makes a None argument a constexpr None
            return None
        if isinstance(arg, float):
            import numpy as np
            import triton.language as tl

            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    _implicit_cvt._vgprscope = True
    interpreter._implicit_cvt = _implicit_cvt


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
            setattr(module, name, make(name, np_name))


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
        elif name == "triton.language.extra.libdevice":
            _libdevice(module)
        elif name == "triton.runtime.driver":
            _driver_watch(module)
    except Exception as exc:  # never break the user's import
        _write({"error": f"cannot hook {name}: {type(exc).__name__}: {exc}"})


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
    if not os.environ.get(DIR_ENV):
        return
    sys.meta_path.insert(0, _Finder())
    for name in _WATCHED:  # already imported (a sitecustomize of the user's imported triton first)
        if name in sys.modules:
            _patch(name, sys.modules[name])
