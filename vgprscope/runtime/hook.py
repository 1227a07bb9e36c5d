"""The capture hook: in the user's own Python processes (``boot/sitecustomize.py`` installs it there) and in
vgprscope's own process for the library.

Standard library only at import time (the user's environment may not have vgprscope installed): it waits
for Triton's runtime modules to be imported (``imports``) and then wraps ``JITFunction.run`` (GPU launches),
``InterpretedFunction.run`` (``TRITON_INTERPRET=1``), ``Autotuner.run`` and ``triton.compile``
(``record``, ``autotune``), and applies the interpreter's fixes (``interp``). Each distinct specialisation is
appended, one JSON line, to ``$VGPRSCOPE_CAPTURE_DIR/launches-<pid>.jsonl`` as soon as it is seen, so a crash
or a forked worker loses nothing. Nothing here may break the user's command: a failure to record is itself
recorded and the launch goes on. What explains a command's failure is noted for capture to pass on as a
hint: Triton finding no GPU driver (a CPU run without TRITON_INTERPRET=1), the interpreter's import failing
for want of numpy.

For the library (``vgprscope.library``) a *session* says where the lines go (a directory, or a list) and
whether the launch itself runs. ``recording`` installs the wrappers for a block and restores Triton's classes
after (``vgprscope.capture()``: every launch of the block, on every thread); ``dry_launch`` sends one launch
through the kernel's own entry point (``kernel[grid](*args, **kwargs)``: autotuner, heuristics, JIT) with
nothing launched and every config recorded (``vgprscope.analyze(kernel, *args, ...)``). The CLI's capture
installs them for good (``install``), writing to ``$VGPRSCOPE_CAPTURE_DIR``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from . import interp
from .autotune import wrap_autotuner, wrap_heuristics_run
from .imports import PATCHED, WATCHED, Finder
from .record import driver_watch, wrap_compile, wrap_kernel_run
from .session import MISSING, STATE, RecordError, Session, local, lock, set_attr, write

__all__ = ["DIR_ENV", "RecordError", "Session", "dry_launch", "install", "recording"]

DIR_ENV = "VGPRSCOPE_CAPTURE_DIR"

_finder: Finder | None = None
_depth = 0  # nested reversible installations (``recording``, ``dry_launch``)


def _patch(name: str, module) -> None:
    if name in PATCHED:
        return
    PATCHED.add(name)
    try:
        if name == "triton.runtime.jit" and hasattr(module, "JITFunction"):
            wrap_kernel_run(module.JITFunction)
        elif name == "triton.runtime.interpreter" and hasattr(module, "InterpretedFunction"):
            wrap_kernel_run(module.InterpretedFunction)
        elif name == "triton.runtime.autotuner" and hasattr(module, "Autotuner"):
            wrap_autotuner(module.Autotuner)
            if hasattr(module, "Heuristics"):
                wrap_heuristics_run(module.Heuristics)
        elif name == "triton.runtime.driver":
            driver_watch(module)
        elif name == "triton.compiler.compiler":
            wrap_compile(module)
        interp.fix(name, module, set_attr)
    except Exception as exc:  # never break the user's import
        write({"error": f"cannot hook {name}: {type(exc).__name__}: {exc}"})


def _hook_imports() -> None:
    global _finder
    _finder = Finder(_patch)
    sys.meta_path.insert(0, _finder)
    for name in WATCHED:  # already imported (a sitecustomize of the user's imported triton first)
        if name in sys.modules:
            _patch(name, sys.modules[name])


def install() -> None:
    """The CLI's hook, for the life of the user's process: every launch recorded to $VGPRSCOPE_CAPTURE_DIR."""
    if not os.environ.get(DIR_ENV):
        return
    STATE.session = Session(os.environ[DIR_ENV])
    _hook_imports()


def _begin() -> None:
    global _depth
    with lock:
        _depth += 1
        if _depth > 1 or _finder is not None:  # already installed (by an outer block, or for good)
            return
        STATE.undo = []
        _hook_imports()
        _inductor_compiles_again()


def _inductor_compiles_again() -> None:
    """Inductor serves a model compiled before from its caches without calling triton.compile: inside a
    recording block it compiles again (its ``force_disable_caches``, restored when the block ends), as the
    CLI's capture sets TORCHINDUCTOR_FORCE_DISABLE_CACHES for the command it runs."""
    for name in ("torch.compiler.config", "torch._inductor.config"):  # the first holds it from PyTorch 2.6 on
        config: Any = sys.modules.get(name)
        try:
            old = config.force_disable_caches
        except Exception:  # not imported, or a release without the setting
            continue
        # a config module's settings are not in its __dict__, and deleting one hides it: restored by value
        if STATE.undo is not None:
            STATE.undo.append((config, "force_disable_caches", old))
        config.force_disable_caches = True
        if not old:
            _inductor_dir_of_its_own()
        return


class _Environ:
    """os.environ as an owner of attributes, for the undo list: a variable set, or deleted where it was unset."""

    def __setattr__(self, name: str, value: str) -> None:
        os.environ[name] = value

    def __delattr__(self, name: str) -> None:
        os.environ.pop(name, None)


_INDUCTOR_DIR = "TORCHINDUCTOR_CACHE_DIR"
_OWN_DIRS: list[str] = []


def _inductor_dir_of_its_own() -> None:
    """Each compile forced inside the block makes a temporary Inductor cache inside Inductor's directory and
    leaves it there (``torch._inductor.utils.fresh_cache``, delete=False): for the block, Inductor's directory is
    one of this process's own, removed when the process ends (a kernel compiled in the block may still read its
    files after it), so the user's TORCHINDUCTOR_CACHE_DIR stays as it was. Named as capture's temporary
    directories are, a directory a killed process left is removed by the next capture."""
    import tempfile

    directory = tempfile.mkdtemp(prefix=f"vgprscope-capture-{os.getpid()}-inductor-")
    if not _OWN_DIRS:
        import atexit
        import shutil

        def remove() -> None:
            for d in _OWN_DIRS:
                shutil.rmtree(d, ignore_errors=True)

        atexit.register(remove)
    _OWN_DIRS.append(directory)
    if STATE.undo is not None:
        STATE.undo.append((_Environ(), _INDUCTOR_DIR, os.environ.get(_INDUCTOR_DIR, MISSING)))
    os.environ[_INDUCTOR_DIR] = directory


def _end() -> None:
    global _depth, _finder
    with lock:
        _depth -= 1
        if _depth > 0 or STATE.undo is None:
            return
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        for owner, name, old in reversed(STATE.undo):
            if old is MISSING:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, old)
        STATE.undo, _finder = None, None
        PATCHED.clear()


@contextlib.contextmanager
def recording(directory: str | None = None, launch: bool = True):
    """Record every launch of the block, on every thread, into a new session (to ``directory``, else to the
    session's ``items``); Triton's classes are restored when the block ends, however it ends."""
    session = Session(directory, launch=launch)
    _begin()
    previous, STATE.session = STATE.session, session
    try:
        yield session
    finally:
        STATE.session = previous
        _end()


def dry_launch(kernel, args, kwargs, grid=(1,)) -> Session:
    """``kernel[grid](*args, **kwargs)`` recorded and not launched, on this thread only: an autotuner's every
    config (after ``prune_configs_by``), each through the heuristics below it, as the CLI's capture records
    them. A launch that cannot be recorded raises RecordError (or the binder's own error)."""
    session = Session(launch=False, strict=True)
    _begin()
    previous = getattr(local, "session", None)
    local.session = session
    try:
        kernel[grid](*args, **kwargs)
    finally:
        local.session = previous
        _end()
    return session


