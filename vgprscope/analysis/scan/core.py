"""``vgprscope scan``: the kernels in a Triton cache, with their resources read from the stored artifacts
and occupancy on the arch each was built for; with archs, each one's TTIR recompiled there too.

A cache another Triton release wrote is read with that release where it is at hand (the installed Triton,
``--triton``, or a toolchain installed before: ``vgprscope toolchains``): its TTIR compiles only there, and
its ptxas gives the spill figures of a stored cubin. Where it is not, a retargeted row says which release
wrote the entry and how to get it, and a stored cubin's spill bytes are unknown unless its stack frame is empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...backends import backend_of
from ...compile.cache import CompileCache
from ...compile.engine import compile_tasks, triton_version
from ...compile.task import Task
from ...core.errors import UsageError
from ...core.fsutil import resolve_input
from ...capture.model import Capture
from ...core.records import LaunchConfig, Record
from ...sources.capture import capture_tasks
from ...sources.inductor import InductorCache, inductor_capture, is_inductor_cache
from ...sources.triton_cache import CacheEntry, read_cache, retarget_task, stored_task

if TYPE_CHECKING:
    from ...compile.toolchains import Toolchain


@dataclass(frozen=True)
class ScanResult:
    directory: Path
    entries: tuple[CacheEntry, ...]
    records: tuple[Record, ...]
    repeated: int = 0  # retargeted launches equal to another entry's (the other vendor's options dropped)
    generated: str = ""  # an Inductor cache's generated modules, counted for the summary

    def summary(self) -> str:
        broken = sum(e.reason is not None for e in self.entries)
        helpers = sum(e.helper or e.autotune for e in self.entries)
        again = sum(dict(r.extras).get("cache") == "recompiled" for r in self.records)
        tail = f", {again} recompiled for other archs" if again else ""
        modules = sum(e.helper for e in self.entries)
        timings = helpers - modules
        skipped = (f", {modules} of Triton's launcher and utility modules skipped" if modules else "") + \
            (f", {timings} autotuner timing file{'s' if timings > 1 else ''} skipped" if timings else "")
        repeated = (f", {self.repeated} retargeted launch{'es' if self.repeated > 1 else ''} identical to another "
                    "entry's (other vendor's options dropped), shown once") if self.repeated else ""
        return (f"{self.directory}: {len(self.entries)} entries, {len(self.entries) - broken - helpers} read, "
                f"{broken} partial or corrupt{skipped}{tail}{repeated}{self.generated}")


class _Releases:
    """Which Triton reads an entry written by a given release: the installed one for its own release, ``--triton``'s
    for its (and for an entry that does not say), else a toolchain of that release already installed; None
    where none is at hand."""

    def __init__(self, triton: str | None):
        from ...compile import toolchains

        self.installed = toolchains.installed()
        self.here = self.installed.version
        self.chosen = toolchains.resolve(triton) if triton else None
        self.found: dict[str, Toolchain | None] = {}

    def for_release(self, release: str | None) -> Toolchain | None:
        if release is None:
            return self.chosen or self.installed
        if release == self.here:
            return self.installed
        if self.chosen is not None and self.chosen.version == release:
            return self.chosen
        if release not in self.found:
            from ...compile import toolchains

            self.found[release] = toolchains.installed_release(release)
        return self.found[release]


def scan(directory: Path, archs: Sequence = (), jobs: int | None = None, use_cache: bool = True,
         on_progress: Callable[[int, int], None] | None = None, cache_dir: Path | str | None = None,
         triton: str | None = None) -> ScanResult:
    directory = Path(directory).expanduser()
    resolve_input(directory, "Triton cache directory")  # a symlink loop said as one, not "does not exist"
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a Triton cache directory; give the directory "
                         "(TRITON_CACHE_DIR, by default ~/.triton/cache)")
    if not directory.is_dir():
        raise UsageError(f"Triton cache directory {directory} does not exist")
    generated = None
    if is_inductor_cache(directory):  # TORCHINDUCTOR_CACHE_DIR: its generated modules, and its Triton cache
        generated = inductor_capture(directory)
        entries = [e for d in _inductor_triton_dirs(directory) for e in read_cache(d)]
    else:
        entries = read_cache(directory)
    releases = _Releases(triton)
    tasks: list[Task] = []
    unknown: list[Record] = []
    if generated is not None:
        tasks += _generated_tasks(generated, archs, releases.chosen)
        unknown += [Record(variant="inductor", kernel=k.name, arch=a.name if (a := k.arch()) else "?",
                           config=LaunchConfig(args=(), constexprs=(), options=()), status=why,
                           source=INDUCTOR_SOURCE, triton_version=triton_version(),
                           extras=(("module", str(k.file)),)) for k, why in generated.unread]
    seen: set[tuple[str, str]] = set()
    repeated = 0
    for entry in entries:
        if entry.helper or entry.autotune:  # no kernel in them: counted in the summary, no row
            continue
        reader = releases.for_release(entry.release)
        task, row, built = stored_task(entry)
        if task is None:  # an arch outside the table, or an entry too broken to tell: a row anyway
            target = f"{entry.target[0]} {entry.target[1]}" if entry.target else "?"
            unknown.append(Record(variant=row.label, kernel=entry.name, arch=built.name if built else target,
                                  config=row.config, status=entry.reason or "unknown arch", source=row.source,
                                  identity=row.identity, extras=row.extras, triton_version=triton_version()))
        else:
            # a stored cubin's spill figures come from the ptxas that built it: the writing release's
            needs = backend_of(task.arch).facts.stored_read_needs_release
            tasks.append(task.under(reader) if needs and reader and reader.kind != "installed" else task)
        if entry.reason is not None:
            continue
        for arch in archs:
            again = retarget_task(entry, arch)
            if again.job is not None:
                key = (again.job.key(), arch.name)
                if key in seen:  # the same TTIR and options as another entry's: one row
                    repeated += 1
                    continue
                seen.add(key)
            if again.reason is None and reader is None:
                again = replace(again, reason=f"TTIR written by Triton {entry.release}: Triton {releases.here} "
                                              f"cannot read it; add --triton {entry.release} to compile it with "
                                              "that release")
            elif reader is not None and reader.kind != "installed":
                again = again.under(reader)
            tasks.append(again)
    cache = CompileCache(Path(cache_dir) if cache_dir else None, enabled=use_cache)
    records = [_unread_ttir(r, entries) for r in compile_tasks(tasks, jobs=jobs, cache=cache, on_progress=on_progress)]
    note = ""
    if generated is not None:
        configs = len(generated.capture.launches)
        note = (f"; Inductor's generated modules: {len(generated.kernels)} kernels, {configs} configs, "
                f"{len(generated.unread)} unread")
    return ScanResult(directory, tuple(entries), tuple(records) + tuple(unknown), repeated, note)


INDUCTOR_SOURCE = "inductor-cache"


def _inductor_triton_dirs(directory: Path) -> list[Path]:
    """The Triton cache Inductor keeps inside its own directory when TRITON_CACHE_DIR is not set
    (``triton/<device index>/``)."""
    root = directory / "triton"
    return sorted(d for d in root.iterdir() if d.is_dir()) if root.is_dir() else []


def _generated_tasks(cache: InductorCache, archs: Sequence, chosen: Toolchain | None) -> list[Task]:
    """Each generated kernel's configs on the arch it was generated for and on ``archs``, compiled from its
    source by the installed Triton, or by ``--triton``'s release."""
    out: list[Task] = []
    for launch in cache.capture.launches:
        built = next((k.arch() for k in cache.kernels if k.name == launch.kernel.qualname
                      and str(k.file) == launch.kernel.file), None)
        on = list(dict.fromkeys([*([built] if built else []), *archs]))
        for task in capture_tasks(Capture((launch,)), on):
            extras = (*task.row.extras, ("cache", "generated"), ("configs", (launch.producer or {}).get("configs_from")))
            task = replace(task, row=replace(task.row, source=INDUCTOR_SOURCE, extras=extras))
            out.append(task.under(chosen) if chosen is not None and task.job is not None else task)
    return out


def _unread_ttir(rec: Record, entries: Sequence[CacheEntry]) -> Record:
    """A retarget whose TTIR the compiling Triton could not parse, from an entry that does not say which release
    wrote it: the row says that TTIR is read only by the release that wrote it."""
    extras = dict(rec.extras)
    if extras.get("cache") != "recompiled" or "Parse MLIR file failed" not in rec.status:
        return rec
    entry = next((e for e in entries if e.hash == extras.get("entry")), None)
    if entry is None or entry.release is not None:
        return rec
    return replace(rec, status=f"{rec.status}; the entry does not say which Triton wrote it, and TTIR is read only "
                               "by the release that wrote it: give it with --triton X")
