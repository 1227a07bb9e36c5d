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
from ...captures.model import Capture
from ...compile.cache import CompileCache
from ...compile.engine import compile_tasks, triton_version
from ...compile.task import Task
from ...core.errors import UsageError
from ...core.fsutil import resolve_input
from ...core.job import FunctionSource
from ...core.records import LaunchConfig, Record
from ...sources.cache_layout import find_caches
from ...sources.capture import capture_tasks
from ...sources.inductor import InductorCache, inductor_capture
from ...sources.triton_cache import CacheEntry, read_entry, retarget_task, stored_task

if TYPE_CHECKING:
    from ...compile.toolchains import Toolchain


@dataclass(frozen=True)
class CacheDir:
    """One cache found below the directory scanned, and what was read of it: a Triton cache's entries, or an
    Inductor cache's generated kernels."""

    path: Path
    kind: str  # "triton" | "inductor"
    entries: tuple[CacheEntry, ...] = ()
    generated: InductorCache | None = None

    def counts(self) -> str:
        """``7 entries, 2 read, 2 partial or corrupt, 3 of Triton's launcher and utility modules skipped``, or
        ``86 generated kernels, 120 configs, 0 unread``."""
        if self.generated is not None:
            g = self.generated
            return (f"Inductor's generated modules: {_count(len(g.kernels), 'kernel')}, "
                    f"{_count(len(g.capture.launches), 'config')}, {len(g.unread)} unread")
        entries = self.entries
        broken = sum(e.reason is not None for e in entries)
        modules = sum(e.helper for e in entries)
        timings = sum(e.autotune for e in entries)
        skipped = (f", {modules} of Triton's launcher and utility modules skipped" if modules else "") + \
            (f", {timings} autotuner timing file{'s' if timings > 1 else ''} skipped" if timings else "")
        return (f"{_count(len(entries), 'entry', 'entries')}, {len(entries) - broken - modules - timings} read, "
                f"{broken} partial or corrupt{skipped}")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


@dataclass(frozen=True)
class CacheScan:
    """A cache directory scanned (``scan``): its entries, their records and the caches found below it; what
    ``vgprscope.scan`` returns is ``analysis.scan.result.ScanResult``."""

    directory: Path
    entries: tuple[CacheEntry, ...]
    records: tuple[Record, ...]
    repeated: int = 0  # retargeted launches equal to another entry's (the other vendor's options dropped)
    caches: tuple[CacheDir, ...] = ()  # every cache found below the directory, in the order of the walk
    unknown: tuple[tuple[Path, str], ...] = ()  # directories in no layout scan knows, and why
    notes: tuple[str, ...] = ()  # what the summary says besides the counts (which Triton compiled what)

    def summary(self) -> str:
        """One line where the directory is one cache; else a line for the directory and one per cache found
        below it (and per directory in no layout scan knows)."""
        again = sum(dict(r.extras).get("cache") == "recompiled" for r in self.records)
        tail = f", {again} recompiled for other archs" if again else ""
        repeated = (f", {self.repeated} retargeted launch{'es' if self.repeated > 1 else ''} identical to another "
                    "entry's (other vendor's options dropped), shown once") if self.repeated else ""
        if not self.caches:
            found = "no Triton or Inductor cache below it (a Triton cache holds a directory per compile with " \
                    "__grp__NAME.json and the kernel's files; an Inductor cache, generated modules in XX/cXXXX.py)"
            return "\n".join([f"{self.directory}: {found}", *self._unknown_lines()])
        if len(self.caches) == 1 and self.caches[0].path == self.directory and not self.unknown:
            return "\n".join([f"{self.directory}: {self.caches[0].counts()}{tail}{repeated}", *self.notes])
        kinds = [sum(c.kind == k for c in self.caches) for k in ("inductor", "triton")]
        said = " and ".join(f"{n} {name} cache{'s' if n > 1 else ''}"
                            for n, name in zip(kinds, ("Inductor", "Triton")) if n)
        lines = [f"{self.directory}: {said}{tail}{repeated}"]
        for c in self.caches:
            where = self._relative(c.path)
            lines.append(f"  {where} ({'Inductor' if c.kind == 'inductor' else 'Triton'}): {c.counts()}")
        return "\n".join([*lines, *self._unknown_lines(), *self.notes])

    def _relative(self, path: Path) -> str:
        try:
            rel = path.relative_to(self.directory)
        except ValueError:
            return str(path)
        return "." if str(rel) == "." else f"{rel}/"

    def _unknown_lines(self) -> list[str]:
        return [f"  {self._relative(p)}: {why}" for p, why in self.unknown]


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
         triton: str | None = None, loops: bool | None = True) -> CacheScan:
    directory = Path(directory).expanduser()
    resolve_input(directory, "Triton cache directory")  # a symlink loop said as one, not "does not exist"
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a Triton cache directory; give the directory "
                         "(TRITON_CACHE_DIR, by default ~/.triton/cache)")
    if not directory.is_dir():
        raise UsageError(f"Triton cache directory {directory} does not exist")
    layout = find_caches(directory)
    cache = CompileCache(Path(cache_dir) if cache_dir else None, enabled=use_cache)
    caches = [CacheDir(c.path, "triton", entries=tuple(read_entry(e) for e in c.entries)) if c.kind == "triton"
              else CacheDir(c.path, "inductor", generated=inductor_capture(c.path, cache)) for c in layout.caches]
    entries = [e for c in caches for e in c.entries]
    releases = _Releases(triton)
    tasks: list[Task] = []
    unknown: list[Record] = []
    notes: list[str] = []
    for c in caches:
        if c.generated is None:
            continue
        generated = c.generated
        chosen, note = _generated_release(generated, entries, releases)
        notes += [note] if note and note not in notes else []
        tasks += _generated_tasks(generated, archs, chosen)
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
    records = [_unread_ttir(r, entries) for r in compile_tasks(tasks, jobs=jobs, cache=cache, on_progress=on_progress,
                                                           loops=loops)]
    return CacheScan(directory, tuple(entries), tuple(records) + tuple(unknown), repeated, tuple(caches),
                      layout.unknown, tuple(notes))


INDUCTOR_SOURCE = "inductor-cache"


def _generated_release(cache: InductorCache, entries: Sequence[CacheEntry],
                       releases: _Releases) -> tuple[Toolchain | None, str]:
    """Which Triton compiles an Inductor cache's generated kernels: ``--triton``'s; else the release that wrote
    the stored compiles of those kernels (the Triton caches found beside them) where it is at hand, the
    installed one where it is not (and a note saying how to get it). (None: the installed Triton; the note.)"""
    if releases.chosen is not None:
        return releases.chosen, ""
    names = {k.name for k in cache.kernels}
    wrote = sorted({e.release for e in entries if e.name in names and e.release})
    if len(wrote) != 1 or wrote[0] == releases.here:
        return None, ""
    reader = releases.for_release(wrote[0])
    if reader is None:
        return None, (f"Inductor's generated kernels compiled by the installed Triton {releases.here}; Triton "
                      f"{wrote[0]} wrote their stored compiles: add --triton {wrote[0]} to compile them with that "
                      "release")
    return reader, ""


def _generated_tasks(cache: InductorCache, archs: Sequence, chosen: Toolchain | None) -> list[Task]:
    """Each generated kernel's configs on the arch it was generated for and on ``archs``, compiled from its
    source by the installed Triton, or by ``--triton``'s release."""
    out: list[Task] = []
    for launch in cache.capture.launches:
        built = next((k.arch() for k in cache.kernels if k.name == launch.kernel.qualname
                      and str(k.file) == launch.kernel.file), None)
        on = list(dict.fromkeys([*([built] if built else []), *archs]))
        for task in capture_tasks(Capture((launch,)), on):
            producer = launch.producer or {}
            named = tuple((n, producer[n]) for n in ("line", "fuses") if producer.get(n))
            extras = (*task.row.extras, ("cache", "generated"), ("configs", producer.get("configs_from")),
                      ("module", launch.kernel.file), *named)
            # compiled from the module's text alone: the worker never imports the module (its code never runs)
            job = task.job
            if job is not None and isinstance(job.source, FunctionSource):
                job = replace(job, source=replace(job.source, from_snapshot=True))
            task = replace(task, job=job, row=replace(task.row, source=INDUCTOR_SOURCE, extras=extras))
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
