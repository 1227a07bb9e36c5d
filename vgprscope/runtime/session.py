"""Where a capture's records go, and the state the hook's wrappers share: the recording session (a thread's
own, for a dry launch, else the process-wide one), and every patch made through ``set_attr`` so that a
reversible installation can undo it."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

lock = threading.RLock()
local = threading.local()
# This module's mark on what it wrapped: the CLI's copy (``_vgprscope_runtime``) and the library's
# (``vgprscope.runtime``) are two packages, and each wraps what the other wrapped
MARK = object()
MISSING = object()


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
        self.autotune_seen: set[tuple[Any, ...]] = set()
        self.snapshots: set[int] = set()

    def write(self, obj: dict) -> None:
        if self.directory is None:
            with lock:
                self.items.append(json.loads(json.dumps(obj, default=repr)))
            return
        line = json.dumps(obj, separators=(",", ":"), default=repr) + "\n"
        path = os.path.join(self.directory, f"launches-{os.getpid()}.jsonl")
        with lock, open(path, "a") as f:
            f.write(line)


class _Installed:
    """The process-wide session (the CLI's hook, or a ``vgprscope.capture()`` block: every thread records),
    and what each patch replaced while a reversible installation is active (None otherwise: the CLI's
    ``install`` is never undone)."""

    session: Session | None = None
    undo: list[tuple[Any, str, Any]] | None = None


STATE = _Installed()


def current() -> Session | None:
    """The session recording this thread's launches (a dry launch's own, else the process-wide one)."""
    return getattr(local, "session", None) or STATE.session


def write(obj: dict) -> None:
    s = current()
    if s is not None:
        s.write(obj)


def note(name: str) -> None:
    """Something the capture should tell the user about the command's failure (once per session)."""
    s = current()
    key = f"note:{name}"
    if s is not None and key not in s.seen:
        s.seen.add(key)
        s.write({"note": name})


class RecordError(Exception):
    """A strict session's launch that cannot be recorded (the library's caller gets it)."""


def failed(s: Session, kernel, exc: BaseException) -> None:
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


def set_attr(owner, name: str, value) -> None:
    """Every patch goes through here, so a reversible installation (``recording``) can undo it."""
    if STATE.undo is not None:
        STATE.undo.append((owner, name, owner.__dict__.get(name, MISSING)))
    setattr(owner, name, value)


def run_counted(counter: str, original, self, args, kwargs):
    """``original(self, *args, **kwargs)`` with ``local.<counter>`` raised while it runs: a launch inside it knows
    whose it is (the autotuner's configs, the JIT's own compile)."""
    setattr(local, counter, getattr(local, counter, 0) + 1)
    try:
        return original(self, *args, **kwargs)
    finally:
        setattr(local, counter, getattr(local, counter) - 1)


def install_run(cls, run) -> None:
    """``run`` as ``cls.run``, marked as vgprscope's (installed once)."""
    run._vgprscope = MARK
    set_attr(cls, "run", run)


