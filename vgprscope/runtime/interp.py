"""The one set of fixes for running kernels under ``TRITON_INTERPRET=1`` (Triton's CPU interpreter), applied
wherever kernels run there: ``vgprscope.attention`` on the CPU, and the capture hook in a user's command
(``fix``, called as Triton's interpreter and libdevice modules are imported).

- bf16 ``tl.dot``: the interpreter (3.6 through 3.9 at least) stores bfloat16 as raw uint16 bits and its dot
  multiplies those integers, so every bf16 dot is garbage. bf16 operands are widened to the float32 values
  they encode before the product (exact: every bf16 value is a float32 value); fp32 accumulation is what
  the GPU does too.
- float arguments: the interpreter (3.9 at least) passes a float kernel argument as a Python float where the
  JIT passes an fp32 scalar (``eps.to(tl.float32)`` fails); it gets the fp32 scalar.
- libdevice: functions the interpreter leaves as stubs returning None get their numpy form.
- device calls: the interpreter (3.6 through 3.9) patches ``triton.language`` for each @jit function a kernel
  calls and restores only the kernel's own patches, so a helper whose module sees ``triton.language.core``
  (``tl.cdiv``, ``tl.zeros``, ``tl.max``: ``triton/language/standard.py``) leaves ``core``'s builtins replaced
  by the interpreter's for the life of the process. Each device call restores what it patched. And the
  interpreter patches the language again on every device call (a scan of the module's members, about 7 ms), the
  most of a kernel's CPU time where it calls helpers in a loop (row-stream: half): a call whose language
  modules an enclosing launch or call has patched, and not yet restored, patches nothing.
- Gluon's language imported first: Triton imports it on a kernel's first launch (``mangle_type`` reads Gluon's
  layouts), inside the launch, while ``triton.language``'s builtins are the interpreter's: Gluon's module keeps
  those for the life of the process and every later Gluon compile in it fails (``'value' object has no
  attribute 'dtype'``). It is imported before the first launch.

Each fix marks what it replaced, so applying it twice (two copies of the runtime in one process) is once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

Setter = Callable[[Any, str, Any], None]


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def no_driver_hint(exc: BaseException | None) -> str | None:
    """What to do when Triton found no GPU driver (``exc`` is its "0 active drivers" RuntimeError), or None
    for any other error. @triton.jit reads TRITON_INTERPRET when a kernel is defined, so the variable set
    later (a notebook's cell after the imports) does not reach the kernels already imported."""
    if not isinstance(exc, RuntimeError) or not str(exc).startswith("0 active drivers"):
        return None
    if interpreting():
        return ("Triton found no GPU driver (\"0 active drivers\"): TRITON_INTERPRET=1 is set, but after these "
                "kernels were imported (@triton.jit reads it when a kernel is defined); set it before importing "
                "them (in a notebook: restart, set os.environ['TRITON_INTERPRET'] = '1' first)")
    return ("Triton found no GPU driver (\"0 active drivers\"); on a machine without a GPU, run under Triton's "
            "interpreter: set TRITON_INTERPRET=1 before the kernels are imported")


def _fixed(obj: Any) -> bool:
    return bool(getattr(obj, "_vgprscope_fix", False))


def patch_bf16_dot(interpreter: Any = None, set_attr: Setter = setattr) -> None:
    """bf16 operands of the interpreter's dot widened to float32 (``interpreter``: Triton's
    ``triton.runtime.interpreter`` module, imported when not given)."""
    if interpreter is None:
        from triton.runtime import interpreter as installed

        interpreter = installed
    builder = getattr(interpreter, "InterpreterBuilder", None)
    if builder is None or not hasattr(builder, "create_dot") or _fixed(builder.create_dot):
        return  # a release whose interpreter is built otherwise: nothing to fix here
    original = builder.create_dot

    def widen(handle: Any) -> Any:
        import numpy as np
        import triton.language as tl

        if handle.dtype.scalar == tl.bfloat16 if hasattr(handle.dtype, "scalar") else handle.dtype == tl.bfloat16:
            bits = handle.data.astype(np.uint32) << 16
            return interpreter.TensorHandle(bits.view(np.float32), tl.float32)
        return handle

    def create_dot(self: Any, a: Any, b: Any, d: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        return original(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    create_dot._vgprscope_fix = True  # type: ignore[attr-defined]
    set_attr(builder, "create_dot", create_dot)


def fix_float_args(interpreter: Any, set_attr: Setter = setattr) -> None:
    """A float kernel argument becomes the fp32 scalar the JIT passes, and a None argument stays None (the
    JIT's constexpr None); every other argument is converted as before."""
    original = getattr(interpreter, "_implicit_cvt", None)
    if original is None or _fixed(original):
        return

    def _implicit_cvt(arg: Any) -> Any:
        if arg is None:  # the JIT makes a None argument a constexpr None
            return None
        if isinstance(arg, float):
            import numpy as np
            import triton.language as tl

            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    _implicit_cvt._vgprscope_fix = True  # type: ignore[attr-defined]
    set_attr(interpreter, "_implicit_cvt", _implicit_cvt)


def fix_device_calls(interpreter: Any = None, set_attr: Setter = setattr) -> None:
    """A @jit function called from a kernel under the interpreter restores the language patches it made when
    it returns (the kernel's own launch already does); and patches nothing where an enclosing launch or call has
    patched the language and not yet restored it: the launch patches ``triton.language`` and ``core`` both."""
    if interpreter is None:
        from triton.runtime import interpreter as installed

        interpreter = installed
    cls = getattr(interpreter, "InterpretedFunction", None)
    if cls is None or not hasattr(interpreter, "_patch_lang") or not hasattr(interpreter, "_LangPatchScope") \
            or _fixed(cls.__call__):
        return  # a release whose interpreter patches otherwise: nothing to fix here
    original = cls.__call__
    original_patch = interpreter._patch_lang
    open_scopes = [0]  # scopes that patched both language modules, not yet restored

    class Patched:
        """Nothing to restore: an enclosing scope patched the language."""

        def restore(self) -> None:
            pass

    class Both:
        """What a function that sees both language modules looks like to ``_patch_lang``: its scope patches
        ``core`` (a helper's: ``triton/language/standard.py``) as well as ``triton.language``."""

        def __init__(self, tl: Any):
            self.__globals__ = {"tl": tl, "core": tl.core}

    def _patch_lang(fn: Any) -> Any:
        import triton.language as tl

        if not any(v is tl or v is tl.core for v in getattr(fn, "__globals__", {}).values()):
            return original_patch(fn)  # its own error: the language must be visible from the function
        if open_scopes[0]:
            return Patched()
        scope = original_patch(Both(tl))
        open_scopes[0] += 1
        restore, restored = scope.restore, [False]

        def restore_and_close() -> None:
            restore()
            if not restored[0]:
                restored[0] = True
                open_scopes[0] -= 1

        scope.restore = restore_and_close
        return scope

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        # patched here first, so the original call's own patching finds nothing left to replace and this
        # scope holds every original
        scope = interpreter._patch_lang(self.fn)
        try:
            return original(self, *args, **kwargs)
        finally:
            scope.restore()

    __call__._vgprscope_fix = True  # type: ignore[attr-defined]
    _patch_lang._vgprscope_fix = True  # type: ignore[attr-defined]
    if not _fixed(original_patch):
        set_attr(interpreter, "_patch_lang", _patch_lang)
    set_attr(cls, "__call__", __call__)


def _import_gluon() -> None:
    import importlib

    try:
        importlib.import_module("triton.experimental.gluon.language")
    except Exception:  # a release without Gluon: nothing binds
        pass


def import_gluon_first(interpreter: Any = None, set_attr: Setter = setattr) -> None:
    """Gluon's language is imported before a kernel's first launch under the interpreter, never inside one."""
    if interpreter is None:
        from triton.runtime import interpreter as installed

        interpreter = installed
    cls = getattr(interpreter, "InterpretedFunction", None)
    if cls is None or not hasattr(cls, "run") or _fixed(cls.run):
        return
    original = cls.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        _import_gluon()
        return original(self, *args, **kwargs)

    run._vgprscope_fix = True  # type: ignore[attr-defined]
    set_attr(cls, "run", run)


def fix_interpreter() -> None:
    """The fixes of the installed Triton's interpreter that running a kernel in this process needs."""
    patch_bf16_dot()
    fix_device_calls()
    import_gluon_first()


# libdevice functions Triton's interpreter leaves as stubs that return None, with their numpy form.
_LIBDEVICE = {
    "tanh": "tanh", "rsqrt": None, "sqrt": "sqrt", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2",
    "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil", "abs": "abs", "erf": None, "pow": "power",
}


def fix_libdevice(module: Any, set_attr: Setter = setattr) -> None:
    """The libdevice functions the interpreter lacks (elementwise, in the operand's own dtype), so kernels
    that import them (liger's rsqrt, tanh) run. Patched when the module is imported, before a kernel file
    binds the names."""
    import math

    import numpy as np

    def make(name: str, np_name: str | None) -> Any:
        if np_name is not None:
            op = getattr(np, np_name)
        elif name == "rsqrt":
            def op(x: Any) -> Any:
                return 1.0 / np.sqrt(x)
        else:
            op = np.vectorize(math.erf)

        def fn(arg0: Any, *rest: Any, **kwargs: Any) -> Any:
            import triton.language as tl
            from triton.runtime.interpreter import TensorHandle

            h = arg0.handle
            # a binary function (pow) takes a tensor or a number second
            more = [getattr(getattr(r, "handle", None), "data", getattr(r, "value", r)) for r in rest]
            return tl.tensor(TensorHandle(op(h.data, *more).astype(h.data.dtype), h.dtype.scalar), arg0.type)

        # named as the function it stands for, so that a capture's snapshot of a kernel that reads it records
        # libdevice's own function (compiled where the kernel is compiled), not this stand-in
        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = module.__name__
        fn._vgprscope_fix = True  # type: ignore[attr-defined]
        return fn

    for name, np_name in _LIBDEVICE.items():
        if hasattr(module, name) and not _fixed(getattr(module, name)):
            set_attr(module, name, make(name, np_name))


def fix(name: str, module: Any, set_attr: Setter = setattr) -> None:
    """Every fix that applies to Triton's module ``name`` as it is imported, under TRITON_INTERPRET=1 (the
    interpreter's own classes otherwise stay as they are)."""
    if name == "triton.runtime.interpreter":
        fix_float_args(module, set_attr)
        if interpreting():
            patch_bf16_dot(module, set_attr)
            fix_device_calls(module, set_attr)
            import_gluon_first(module, set_attr)
    elif name == "triton.language.extra.libdevice" and interpreting():
        fix_libdevice(module, set_attr)
