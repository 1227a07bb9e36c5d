"""The configs PyTorch's Inductor heuristic gives a generated kernel (``@triton_heuristics.pointwise(...)`` and
its kin, run with ``return_configs=True``), resolved for many kernels at once and kept in the compile cache.

PyTorch's heuristics are PyTorch's code: importing them imports torch, ``torch._dynamo`` and Triton (about 4 s
of CPU, as much as compiling a dozen small kernels). They run here in one child process for all the kernels a
scan reads, never in the scanning process: that process stays free of torch and Triton, so its compile workers
are forked from it rather than started afresh. What a heuristic answers for a kernel (its configs, or why it
fails) is kept in the compile cache under the heuristic's inputs (its name, the decorator's literal arguments,
the generated module's name, the vendor) and the PyTorch that answered (its version, where it is installed,
its heuristics' and config's files, the ``TORCHINDUCTOR_*`` settings), so a warm scan, or a scan for other
archs, imports no torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..compile.cache import CompileCache


@dataclass(frozen=True)
class HeuristicCall:
    """One kernel's heuristic, as its decorator calls it: ``heuristic(**decorator, filename=file)``, on a
    vendor whose PyTorch build is HIP's (``hip``) or CUDA's."""

    heuristic: str
    decorator: dict[str, Any]
    file: str
    hip: bool


@dataclass(frozen=True)
class SnapshotCall:
    """One kernel's snapshot, made from its module's text (``generated_text.snapshot_of_module``)."""

    file: str
    name: str
    module: str


@dataclass(frozen=True)
class Answer:
    """A heuristic's configs (``{"kwargs", "num_warps", "num_stages"}`` each) and where they come from; no
    configs: ``why`` says why (torch missing here, or the heuristic failing on the kernel)."""

    configs: tuple[dict[str, Any], ...] = ()
    origin: str = ""
    why: str = ""


NO_TORCH = "torch is not installed here"
# the files whose content decides an answer besides the package's version (a source checkout's edits)
_DECIDING = {"torch": ("_inductor/runtime/triton_heuristics.py", "_inductor/runtime/hints.py", "_inductor/config.py",
                       "_inductor/runtime/triton_helpers.py"),
             "triton": ("language/__init__.py",)}


def _identity(package: str) -> str | None:
    """Which installation of ``package`` an import would load, without importing it: where it is, its version
    (its ``version.py`` or ``__init__.py``), its deciding files' sizes and times; None where it does not import."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):  # a finder that refuses it, or sys.modules[package] set to None
        return None
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent
    version = None
    for name in ("version.py", "__init__.py"):
        try:
            found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", (root / name).read_text(), re.M)
        except OSError:
            continue
        if found:
            version = found[1]
            break
    files = []
    for rel in _DECIDING[package]:
        try:
            st = (root / rel).stat()
            files.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            files.append((rel, None, None))
    return repr((str(root), version, files))


def _settings() -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in os.environ.items() if k.startswith(("TORCHINDUCTOR_", "TRITON_")))


def _key(kind: str, *parts: Any) -> str:
    return f"inductor-{kind}-" + hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _file_hash(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _as_json(doc: dict[str, Any]) -> dict[str, Any] | None:
    """``doc`` as the cache keeps it; None where JSON would not give back the same values."""
    try:
        return doc if json.loads(json.dumps(doc)) == doc else None
    except (TypeError, ValueError):
        return None


def resolve(heuristics: list[HeuristicCall], snapshots: list[SnapshotCall],
            cache: CompileCache | None = None) -> tuple[list[Answer], list[tuple[str | None, str | None]]]:
    """(each heuristic's answer, each kernel's (snapshot JSON, why none)): from the cache where it holds them,
    else from one child process that imports torch and Triton and answers all the others (then kept)."""
    torch = _identity("torch")
    settings = _settings()
    h_keys = [_key("configs", torch, settings, c.heuristic, c.decorator, Path(c.file).name, c.hip)
              for c in heuristics]
    triton = _identity("triton")
    s_keys = [_key("snapshot", torch, triton, settings, str(Path(c.file).resolve()), _file_hash(c.file), c.name,
                   c.module) for c in snapshots]
    answers: list[Answer | None] = [None if torch is not None else Answer(why=NO_TORCH) for _ in heuristics]
    snaps: list[tuple[str | None, str | None] | None] = [None for _ in snapshots]
    for i, key in enumerate(h_keys):
        hit = cache.load_plan(key) if cache is not None and answers[i] is None else None
        if isinstance(hit, dict) and isinstance(hit.get("configs"), list):
            answers[i] = Answer(tuple(hit["configs"]), str(hit.get("origin", "")), str(hit.get("why", "")))
    for i, key in enumerate(s_keys):
        hit = cache.load_plan(key) if cache is not None else None
        if isinstance(hit, dict) and "snapshot" in hit:
            snaps[i] = (hit["snapshot"], hit.get("why"))
    h_todo = [i for i, a in enumerate(answers) if a is None]
    s_todo = [i for i, a in enumerate(snaps) if a is None]
    if h_todo or s_todo:
        got_h, got_s, kept = _run_child([heuristics[i] for i in h_todo], [snapshots[i] for i in s_todo],
                                        torch is not None)
        for i, answer in zip(h_todo, got_h):
            answers[i] = answer
            doc = _as_json({"configs": list(answer.configs), "origin": answer.origin, "why": answer.why})
            if kept and cache is not None and doc is not None:
                cache.store_plan(h_keys[i], doc)
        for i, (snap, why) in zip(s_todo, got_s):
            snaps[i] = (snap, why)
            if kept and cache is not None:
                cache.store_plan(s_keys[i], {"snapshot": snap, "why": why})
    return ([a if a is not None else Answer(why=NO_TORCH) for a in answers],
            [s if s is not None else (None, "no snapshot") for s in snaps])


# the child: this process's module path first (it imports the torch and the vgprscope this process would), then
# the calls; it writes its answers after a mark (what an import prints on stdout stays before it)
_CHILD = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
          "from vgprscope.sources.inductor_configs import _child; _child()")
_MARK = b"\n--vgprscope-inductor-configs--\n"


def _run_child(heuristics: list[HeuristicCall], snapshots: list[SnapshotCall], torch: bool
               ) -> tuple[list[Answer], list[tuple[str | None, str | None]], bool]:
    """(the heuristics' answers and the snapshots of one child process, whether they are to keep); ``torch``:
    whether torch imports here (where it does not, the child does not import it either)."""
    import pickle
    import subprocess

    request = pickle.dumps(list(sys.path)) + pickle.dumps((heuristics, snapshots, torch))
    why = "no answer"
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], input=request, capture_output=True, timeout=600)
        if _MARK in done.stdout:
            got_h, got_s = pickle.loads(done.stdout.rsplit(_MARK, 1)[1])
            if len(got_h) == len(heuristics) and len(got_s) == len(snapshots):
                return got_h, got_s, True
        why = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
    except (OSError, subprocess.SubprocessError, pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    why = f"the process reading the generated modules failed ({why[:120]})"
    return [Answer(why=why) for _ in heuristics], [(None, why) for _ in snapshots], False


class _NoTorch:
    """A finder that refuses torch: the child of a process where torch does not import."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def _child() -> None:
    import pickle

    heuristics, snapshots, torch = pickle.load(sys.stdin.buffer)
    if not torch:
        sys.meta_path.insert(0, _NoTorch())
    from .generated_text import snapshot_of_module

    got_h = _heuristic_answers(heuristics)
    got_s = [snapshot_of_module(Path(c.file), c.name, c.module) for c in snapshots]
    sys.stdout.flush()
    sys.stdout.buffer.write(_MARK + pickle.dumps((got_h, got_s)))
    sys.stdout.buffer.flush()


def _heuristic_answers(calls: list[HeuristicCall]) -> list[Answer]:
    """Run PyTorch's heuristic of each call in this process, the child (it imports torch)."""
    if not calls:
        return []
    try:
        import torch
    except ImportError:
        return [Answer(why=NO_TORCH) for _ in calls]
    triton_heuristics = _heuristics_module()
    version = torch.__version__.split("+")[0]
    out = []
    for call in calls:
        try:
            fn = getattr(triton_heuristics, call.heuristic)
            given = {n: _torch_value(v) for n, v in call.decorator.items()}
            with _as_on_device(torch, call.hip):
                configs = fn(**given, filename=call.file, return_configs=True)
            out.append(Answer(tuple({"kwargs": dict(c.kwargs), "num_warps": c.num_warps, "num_stages": c.num_stages}
                                    for c in configs), f"PyTorch {version}'s {call.heuristic} heuristic"))
        except Exception as exc:  # a heuristic of another PyTorch release that takes other arguments
            out.append(Answer(why=f"this PyTorch's {call.heuristic} heuristic fails on it: {type(exc).__name__}: "
                                  f"{str(exc)[:80]}"))
    return out


# packages whose __init__ imports far more than the heuristics read (torch.compile's front end: half of the
# heuristics' import time); the child, which imports nothing else of torch, loads their modules without it
_BARE_PACKAGES = ("torch._inductor", "torch._dynamo")


def _heuristics_module() -> Any:
    """``torch._inductor.runtime.triton_heuristics``, in this process that runs only the heuristics: loaded
    with ``_BARE_PACKAGES`` as bare packages (their modules without their ``__init__``), else (a PyTorch
    whose heuristics need what an ``__init__`` sets up) imported as any import does."""
    import importlib
    import importlib.util
    import types

    try:
        for name in _BARE_PACKAGES:
            spec = importlib.util.find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                raise ImportError(name)
            bare = types.ModuleType(name)
            bare.__spec__, bare.__file__ = spec, spec.origin
            bare.__path__ = list(spec.submodule_search_locations)
            sys.modules[name] = bare
            parent, _, child = name.rpartition(".")
            setattr(sys.modules[parent], child, bare)
        return importlib.import_module("torch._inductor.runtime.triton_heuristics")
    except Exception:
        for name in [n for n in sys.modules if n.startswith(_BARE_PACKAGES)]:
            del sys.modules[name]
        return importlib.import_module("torch._inductor.runtime.triton_heuristics")


def _torch_value(v: Any) -> Any:
    """A decorator literal as the object PyTorch's heuristic takes (DeviceProperties, ReductionHint...)."""
    from torch._inductor.runtime import hints

    if isinstance(v, dict) and set(v) == {"enum"}:
        cls, name = v["enum"]
        return getattr(getattr(hints, cls), name)
    if isinstance(v, dict) and "multi_processor_count" in v:
        return hints.DeviceProperties(**v)
    if isinstance(v, dict):
        return {k: _torch_value(x) for k, x in v.items()}
    return v


@contextlib.contextmanager
def _as_on_device(torch: Any, hip: bool) -> Iterator[None]:
    """PyTorch's heuristics ask the process they run in for its GPU (``torch.cuda.is_available()``: a process
    without one gets other configs) and its vendor (``torch.version.hip``): while one runs here, both answer
    as on the machine the kernel was generated for."""
    saved = torch.cuda.is_available, torch.version.hip
    torch.cuda.is_available = lambda: True
    torch.version.hip = "vgprscope" if hip else None
    try:
        yield
    finally:
        torch.cuda.is_available, torch.version.hip = saved
