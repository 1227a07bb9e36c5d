"""A capture file as a source: one task per launch the current source makes of each captured call, per arch.

Each call is derived again from the kernel's *current* source (``runtime.derive``, in a compile worker): its
autotune configs, heuristics and defaults now, with the recorded arguments; editing a kernel is exactly what
a register gate must see. Where the kernel's module does not import here (torch or a GPU missing), its file
is read statically (``runtime.static``): the same kernel, the same numbers. What cannot be derived says why
in its row ("capture again", or what the kernel needs that does not import here). A kernel whose file is
not at the recorded place is looked up by its module name on this Python's path, without importing
anything (a capture taken in another machine's environment); only where no file is left is the capture's
snapshot compiled.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..backends import BACKENDS, foreign_options
from ..backends.base import descriptor
from ..captures.model import Capture, CapturedKernel, CapturedLaunch
from ..compile.task import RowInfo, Task, target_of
from ..core.archs import Arch
from ..core.errors import UsageError
from ..core.job import Arg, CompileJob, FunctionSource, Target
from ..core.options import LAUNCH_OPTIONS, launch_option_names
from ..core.paths import shown_path
from ..core.records import SNAPSHOT_NOTE as SNAPSHOT
from ..core.records import ArgSpec, AutotunePick, KernelIdentity, LaunchConfig
from .base import Reading, Want
from .inductor import THRESHOLD_EXTRA, SpillThreshold, inductor_slot, launch_tile, spill_threshold

if TYPE_CHECKING:
    from ..compile.engine import Engine

__all__ = ["CaptureSource", "capture_tasks", "launch_config", "slot_of", "CaptureImportError"]

BACKENDS_BY_NAME = {b.name: b for b in BACKENDS}


def module_file(module: str, root: str | None) -> Path | None:
    """Where ``module`` would load from on this Python's path (the capture's root first), found without
    importing anything (importing would import triton into this process)."""
    rel = Path(*module.split("."))
    for entry in [root, *sys.path]:
        if not entry:
            continue
        for candidate in (Path(entry) / rel.with_suffix(".py"), Path(entry) / rel / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _installed(path: Path) -> bool:
    """Whether a recorded path was a file of an installed package (in a site-packages directory)."""
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def resolve_file(kernel: CapturedKernel) -> tuple[Path | None, str | None]:
    """The kernel's file on this machine, or why there is none."""
    path = Path(kernel.file)
    if path.is_file():
        return path, None
    if kernel.snapshot and not kernel.source_hash:
        # no file to read when it was captured (a notebook cell, code given to exec): its snapshot is its
        # source (the row says it was compiled from it)
        return path, None
    if kernel.module and kernel.module != "__main__":
        found = module_file(kernel.module, kernel.root)
        if found is not None:
            return found, None
        if kernel.snapshot:
            # the file is gone and its module is nowhere on this Python's path (a library not installed here, an
            # upstream checkout not fetched): the capture's snapshot is its source (the rows say so)
            return path, None
        return None, (f"{path} does not exist (moved or deleted since the capture) and {kernel.module} is not on "
                      "this Python's path: install it, or capture again")
    return None, f"{path} does not exist (moved or deleted since the capture): capture again"


def _arg_spec(a: dict) -> ArgSpec:
    """A fact as the config shows it (the descriptor each backend's JIT derives from it)."""
    if a["type"] == "constexpr" or a.get("one"):
        return ArgSpec(a["name"], "constexpr", tuple((b.name, None) for b in BACKENDS))
    return ArgSpec(a["name"], a["type"], tuple((b.name, descriptor(b, a)) for b in BACKENDS))


def launch_config(x: CapturedLaunch) -> LaunchConfig:
    at = x.autotune
    constexprs = {a["name"]: (1 if a.get("one") else a.get("value")) for a in x.args
                  if a["type"] == "constexpr" or a.get("one")}
    return LaunchConfig(
        args=tuple(_arg_spec(a) for a in x.args), constexprs=tuple(constexprs.items()),
        options=tuple(sorted((k, v) for k, v in x.options.items() if v is not None)),
        autotune=AutotunePick(at["index"], at["count"], at["declared"], tuple(at["key"])) if at else None,
        tile=launch_tile(x) if generated(x) else ())


def _types(args: tuple[dict, ...] | list[dict]) -> str:
    return ",".join(a["type"] for a in args if a["type"] != "constexpr")


def slot_of(types: str, config_index: int | None, ordinal: int) -> str:
    """Record.slot of a captured launch: what the user wrote, never the problem size. A launch by its argument
    types and its ordinal among the kernel's distinct launches of those types; an autotune config by its
    index in the config list (so a config edited in the list is compared with the one it replaced), within
    the ordinal's call when a kernel makes more than one distinct autotuned call of those types."""
    if config_index is None:
        return f"({types}) #{ordinal + 1}"
    return f"autotune ({types}){f' #{ordinal + 1}' if ordinal else ''} cfg {config_index + 1}"




def options_for(x: CapturedLaunch, target: Target) -> dict:
    """The launch's options for ``target``: a compile recorded for another vendor's backend (Inductor passes
    its whole option set to triton.compile) loses the options only that backend reads (``launch_pdl`` on
    CUDA, ``waves_per_eu`` on HIP: each backend's ``cache_options``)."""
    recorded = (x.target or {}).get("backend")
    if not recorded or recorded == target.backend:
        return x.options
    foreign = set(BACKENDS_BY_NAME[recorded].facts.cache_options) if recorded in BACKENDS_BY_NAME else set()
    return {k: v for k, v in x.options.items() if k not in foreign}


def generated(x: CapturedLaunch) -> bool:
    """Whether a launch's kernel was generated by a compiler (PyTorch Inductor) rather than written in a file of
    the user's: its source exists only in the capture's snapshot once the compiler's cache is gone."""
    return bool(x.producer) and (x.producer or {}).get("by") == "inductor"


_DERIVE_FORMAT = 2


class CaptureImportError(UsageError):
    """A module of the user's own project that can be neither imported nor read where the gate runs (exit 2)."""


def _calls(launches: list[CapturedLaunch]) -> list[list[CapturedLaunch]]:
    """The recorded launches as the user's calls: an autotuned call's configs together, each other launch
    alone, in the order first seen."""
    out: dict[Any, list[CapturedLaunch]] = {}
    for i, x in enumerate(launches):
        at = x.autotune
        # an autotuned call: its key and which arguments are tensors (a tuned key launched again with another
        # argument None compiles the chosen config under another specialisation: its own call)
        spec = tuple(a["name"] for a in x.args if a["type"] != "constexpr")
        group: Any = (json.dumps(at["key"]), at["count"], at["declared"], spec) if at else i
        out.setdefault(group, []).append(x)
    return list(out.values())


def _config_of(args: Any, options: dict[str, Any]) -> str:
    """A launch's config as the autotuner sets it: its constexpr values and its options."""
    values = {a["name"]: a.get("value") for a in args if a["type"] == "constexpr"}
    return json.dumps([values, options], sort_keys=True, default=str)


def _recorded_descriptors(args: list[dict[str, Any]], options: dict[str, Any],
                          group: list[CapturedLaunch]) -> tuple[dict[str, Any], ...]:
    """A derived launch's arguments, its tensor descriptors as the launch of the same config recorded them: a
    config's ``pre_hook`` sets its descriptors' block shape before that config's launch (FlagGems' Hopper
    matmul builds them with a dummy block and sets it per config), so the call's first launch holds the first
    config's blocks, and each other config's own launch holds its own."""
    if not any("descriptor" in a for a in args):
        return tuple(args)
    same = next((x for x in group if _config_of(x.args, x.options) == _config_of(args, options)), None)
    if same is None:
        return tuple(args)
    recorded = {a["name"]: a for a in same.args if "descriptor" in a}
    return tuple(recorded.get(a["name"], a) if "descriptor" in a else a for a in args)


def _recorded(x: CapturedLaunch) -> dict[str, Any]:
    return {"args": list(x.args), "options": x.options, "autotune": x.autotune, "values": x.values,
            "tensors": x.tensors, "call": x.call}


def _fresh(deps: Any) -> bool:
    from ..runtime.hashing import file_hash

    if not isinstance(deps, dict):
        return False
    try:
        return all(file_hash(f) == h for f, h in deps.items())
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def _deriving_code() -> str:
    """The runtime modules a derivation runs, hashed: a derivation made by other code is made again."""
    from .. import runtime

    return runtime.code_hash(("derive.py", "current.py", "static.py", "loader.py", "manifest.py", "facts.py",
                              "constexpr.py"))


def derive(requests: list[dict[str, Any]], engine: Engine) -> list[dict[str, Any]]:
    """The compile workers' derivations (``runtime.derive``), each kept in the cache with the files it read
    (checked on every read: any edit derives again) and keyed by what decides whether a module imports
    here (``compile.identity.import_environment``): where the kernel's module imports, the derivation is
    the import's; where it does not, the file's read statically. A cache shared by two environments never
    gives one the other's."""
    from ..compile.engine import triton_version
    from ..compile.identity import import_environment

    tv, env = triton_version(), import_environment()
    keys = [hashlib.sha256(json.dumps([_DERIVE_FORMAT, _deriving_code(), tv, env, r], sort_keys=True,
                                      default=str).encode())
            .hexdigest()[:32] for r in requests]
    out: list[dict[str, Any] | None] = []
    for key in keys:
        hit = engine.cache.load_plan("derive-" + key)
        out.append(hit["answer"] if hit and isinstance(hit.get("answer"), dict) and _fresh(hit.get("deps")) else None)
    todo = [i for i, a in enumerate(out) if a is None]
    for i, answer in zip(todo, engine.ask([requests[i] for i in todo])):
        out[i] = answer
        if "launches" in answer or ("underivable" in answer and answer.get("deps")):
            engine.cache.store_plan("derive-" + keys[i], {"answer": answer, "deps": answer.get("deps") or {}})
    return [a or {} for a in out]


def _own(capture: Capture, path: Path) -> bool:
    """Whether a kernel's file is of the user's own project (the capture file's), not an installed library."""
    if capture.project is None or _installed(path):
        return False
    try:
        path.resolve().relative_to(Path(capture.project).resolve())
    except ValueError:
        return False
    return True


def _row(k: CapturedKernel, path: Path | None, x: CapturedLaunch, slot: str, snapshot: str | None) -> RowInfo:
    extras = (("note", f"{SNAPSHOT} ({snapshot})"),) if snapshot else ()
    return RowInfo(label="inductor" if generated(x) else k.label, kernel=k.qualname, config=launch_config(x),
                   identity=KernelIdentity(k.module, k.qualname, str(path or k.file), k.source_hash),
                   source="capture", source_hash=k.source_hash, slot=slot, extras=extras)


def _load_mode(generated_kernel: bool, snapshot: str | None, answer: dict[str, Any]) -> str:
    """How a compile worker reads the kernel (``FunctionSource.load``, part of the compile's key): as its
    derivation did here (its module imported, or its file read statically); from the capture's snapshot where
    the file is gone here (never an entry of the file's compile elsewhere, nor the reverse); a generated kernel
    (Inductor's) imported, else its snapshot (the generated module is the compiler's, never edited)."""
    if generated_kernel:
        return "generated"
    if snapshot:
        return "snapshot"
    return "static" if "static" in answer else ""


def capture_tasks(capture: Capture, archs: list[Arch], engine: Engine | None = None) -> list[Task]:
    """Every launch the current source makes of the captured calls, on every arch (``runtime.derive``): the
    kernel by its name in its file as it is now (its module imported, or, where it does not import here, the
    file read statically), an autotuned kernel's configs now, its heuristics and defaults evaluated again.
    A kernel its file no longer defines has no rows (the gate's entry is missing). What cannot be derived
    keeps its rows, each saying why: "capture again" (the call reads what was not recorded), or what the
    kernel needs that does not import here. A module of the user's own project that can be neither imported
    nor read is a CaptureImportError. Only where the file itself is gone (a library not installed here,
    Inductor's generated module) is the capture's snapshot compiled, and its rows say so."""
    from ..compile.engine import Engine
    from ..runtime.static import UNDERIVABLE

    engine = engine or Engine(jobs=1)
    files: dict[CapturedKernel, tuple[Path | None, str | None]] = {}
    by_kernel: dict[CapturedKernel, list[CapturedLaunch]] = {}
    for x in capture.launches:
        by_kernel.setdefault(x.kernel, []).append(x)
        if x.kernel not in files:
            files[x.kernel] = resolve_file(x.kernel)
            if files[x.kernel][1] and x.kernel.snapshot and generated(x):
                # Inductor's generated module lived in its cache directory, which is temporary: its snapshot is
                # the kernel (the rows say they were compiled from it)
                files[x.kernel] = (Path(x.kernel.file), None)
    calls = {k: _calls(xs) for k, xs in by_kernel.items()}
    # a kernel recorded at triton.compile (Inductor's, a library's own launcher) has no call to derive again: its
    # compile is the launch, of the current source (or, for a generated kernel whose module is gone, the snapshot);
    # it is asked too, with no call, for how its file reads here
    compiled = {k for k, xs in by_kernel.items() if all(x.origin != "jit" for x in xs)}
    made = {k for k, xs in by_kernel.items() if any(generated(x) for x in xs)}  # Inductor's: its module, as made
    asked = [k for k, (path, missing) in files.items() if k not in made
             and not missing and path is not None and path.is_file() and (k.source_hash or not k.snapshot)]
    requests = [{"op": "derive", "kernel": {"module": k.module, "qualname": k.qualname, "file": str(files[k][0]),
                                            "root": k.root or ""},
                 "launches": [] if k in compiled else [_recorded(group[0]) for group in calls[k]]} for k in asked]
    answers = dict(zip(asked, derive(requests, engine)))
    out: list[Task] = []
    for k, groups in calls.items():
        path, missing = files[k]
        answer = answers.get(k, {})
        snapshot: str | None = None
        broken: str | None = None  # why none of the kernel's launches can be derived here
        shown = shown_path(path or Path(k.file))
        if missing:
            pass
        elif k in made:
            if path is None or not path.is_file():
                snapshot = "Inductor's generated kernel"
        elif k not in answers:  # its file is gone: a library not installed here, a notebook cell
            snapshot = f"{shown} is not on this machine"
        elif "error" in answer:  # the worker itself failed (this machine's doing): nothing to compare
            raise CaptureImportError(f"cannot derive the launches of {k.qualname} ({shown}) from its current source: "
                                     f"{answer['error']}")
        elif "missing" in answer:
            continue  # the kernel is gone (renamed): its entries are missing
        elif "underivable" in answer:
            broken = answer["underivable"]
        elif "import_error" in answer:
            if _own(capture, path or Path(k.file)):
                raise CaptureImportError(f"{k.module or k.file} ({shown}) can be neither imported nor read here: "
                                         f"{answer['import_error']}")
            else:
                broken = f"{answer['import_error']}: {UNDERIVABLE} {k.module or shown}"
        load = _load_mode(k in made, snapshot, answer)
        seen: dict[str, set[str]] = {}
        derived_all = answer.get("launches") or [None] * len(groups)
        for group, derived in zip(groups, derived_all):
            if k in compiled or missing or broken or group[0].reason or snapshot or derived is None \
                    or "stale" in derived or "underivable" in derived:
                reason = missing or broken or group[0].reason or (derived or {}).get("stale") \
                    or (derived or {}).get("underivable")
                launches = group
            else:
                reason = None
                launches = [replace(group[0], args=_recorded_descriptors(d["args"], d["options"], group),
                                    options=dict(d["options"]), autotune=d["autotune"]) for d in derived["derived"]]
            identity = json.dumps([[list(x.args), x.options, x.autotune and x.autotune["index"]] for x in launches],
                                  sort_keys=True, default=str)
            kind = (_types(launches[0].args) if launches else "", bool(launches and launches[0].autotune))
            taken = seen.setdefault(repr(kind), set())
            if identity in taken:
                continue  # the same launches as another call's (another problem size): compiled once
            ordinal = len(taken)
            taken.add(identity)
            for x in launches:
                slot = (inductor_slot(x.args, x.options, launch_tile(x)) if generated(x)
                        else slot_of(kind[0], x.autotune["index"] if x.autotune else None, ordinal))
                row = _row(k, path, x, slot, snapshot)
                for arch in archs:
                    target = target_of(arch)
                    rowed = row
                    if generated(x):  # the spill threshold Inductor's autotuner applies there
                        threshold = spill_threshold((x.producer or {}).get("meta"), (x.target or {}).get("backend"),
                                                    target.backend)
                        rowed = replace(row, extras=(*row.extras, (THRESHOLD_EXTRA, threshold)),
                                        judge=SpillThreshold(threshold) if threshold is not None else None)
                    if reason:
                        out.append(Task(None, arch, rowed, reason))
                        continue
                    source = FunctionSource(file=str(path), qualname=k.qualname, module=k.module or "",
                                            root=k.root or "", snapshot=k.snapshot or "", load=load)
                    job = CompileJob.of(source, target, tuple(Arg.from_dict(a) for a in x.args), options_for(x, target))
                    out.append(Task(job, arch, rowed))
    return out


# ---- the source: capture= (a file, a Capture, vgprscope.capture()'s session, a kernel's launches) ----------


@dataclass(frozen=True)
class CaptureSource:
    """Captured launches (capture files read, in-process captures, a user's kernel's launches): every
    launch on every arch, each also at every launch-option point of ``overrides``."""

    captures: tuple[Capture, ...] = ()
    overrides: tuple[Mapping[str, int], ...] = ({},)
    given: str = ""  # the file named, as messages show it ("" when given as an object)
    label: ClassVar[str] = "capture"

    @classmethod
    def read(cls, value: Any, reading: Reading) -> CaptureSource:
        """A capture file's path, a Capture, anything holding one (``vgprscope.capture()``'s session), or a
        list of them; with ``reading.launch_grid``, a grid's launch options apply to the launches too (without
        variants beside, the variants' own options are refused: they would be ignored)."""
        items = list(value) if isinstance(value, (list, tuple)) else [] if value is None else [value]
        captures = tuple(read_capture(c) for c in items)
        points: tuple[Mapping[str, int], ...] = ({},)
        if reading.launch_grid:
            points = tuple(launch_overrides(reading.requests, not reading.with_variants))
        return cls(captures, points, str(value) if isinstance(value, (str, os.PathLike)) else "")

    def tasks(self, want: Want, engine: Engine) -> list[Task]:
        """Every specialisation (and autotune config) of each capture on every arch, at each launch-option
        point (an arch's vendor's own options only)."""
        out = []
        for capture in self.captures:
            base = capture_tasks(capture, list(want.archs), engine)
            for opts in self.overrides:
                for t in base:
                    foreign = foreign_options(t.arch)
                    own = {k: v for k, v in opts.items() if k not in foreign}
                    out.append(t.vary(**own) if own else t)
        return out

    def names(self) -> list[str]:
        return list(dict.fromkeys(k.label for c in self.captures for k in c.kernels))

    def files(self) -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        for kernel in (k for c in self.captures for k in c.kernels):
            out.setdefault((kernel.label, kernel.qualname), kernel.file)
            out.setdefault(("inductor", kernel.qualname), kernel.file)  # an Inductor kernel's rows
        return out

    def empty(self) -> str | None:
        if any(c.launches for c in self.captures):
            return None
        named = f" {self.given}" if self.given else ""
        return (f"the capture{named} records no kernel launch: nothing to analyse (capture a command that "
                "launches a Triton kernel)")


def read_capture(capture: Any) -> Capture:
    """A capture file's path, a Capture, or anything holding one (``vgprscope.capture()``'s result)."""
    from ..captures.model import load_capture

    if isinstance(capture, Capture):
        return capture
    inner = getattr(capture, "capture", None)
    if isinstance(inner, Capture):
        return inner
    if isinstance(capture, (str, os.PathLike)):
        return load_capture(Path(capture))
    raise UsageError(f"capture={capture!r} is not a capture; allowed: a capture file's path, or what "
                     "vgprscope.capture() recorded")


def launch_fields() -> tuple[str, ...]:
    """The fields of a config request that are launch options: they apply to a captured launch too ("what if
    it ran with 8 warps"); the others are the bundled variants' own."""
    return launch_option_names()


def launch_overrides(requests: Sequence[Any], alone: bool) -> list[dict[str, int]]:
    """The launch options a grid sets, one dict per distinct point ([{}] when it sets none). With a capture
    alone, a request that sets anything else is a usage error (it would be silently ignored)."""
    launch = launch_fields()
    out: list[dict[str, int]] = []
    for req in requests:
        if alone:
            default = type(req)()
            others = [f.name for f in fields(req) if f.name not in launch
                      and getattr(req, f.name) != getattr(default, f.name)]
            if others:
                flag = "--knob" if others[0] == "extra" else "--" + others[0].replace("_", "-")
                raise UsageError(f"{flag} applies to the bundled variants, not to captured launches; with --capture "
                                 f"alone give launch options ({', '.join(o.flag for o in LAUNCH_OPTIONS)}), or "
                                 "name variants too")
        point = {f: getattr(req, f) for f in launch if getattr(req, f) is not None}
        if point not in out:
            out.append(point)
    return out or [{}]
