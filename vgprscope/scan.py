"""``vgprscope scan``: the kernels in a Triton cache, with their resources read from the stored artifacts
and occupancy on the arch each was built for; with archs, each one's TTIR recompiled there too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .compile.cache import CompileCache
from .compile.engine import Task, compile_tasks, triton_version
from .errors import UsageError
from .records import Record
from .sources.triton_cache import CacheEntry, read_cache, retarget_task, stored_task


@dataclass(frozen=True)
class ScanResult:
    directory: Path
    entries: tuple[CacheEntry, ...]
    records: tuple[Record, ...]

    def summary(self) -> str:
        broken = sum(e.reason is not None for e in self.entries)
        helpers = sum(e.helper for e in self.entries)
        stored = sum(dict(r.extras).get("cache") == "stored" for r in self.records)
        again = len(self.records) - stored
        tail = f", {again} recompiled for other archs" if again else ""
        skipped = f", {helpers} of Triton's launcher and utility modules skipped" if helpers else ""
        return (f"{self.directory}: {len(self.entries)} entries, {len(self.entries) - broken - helpers} read, "
                f"{broken} partial or corrupt{skipped}{tail}")


def scan(directory: Path, archs: Sequence = (), jobs: int | None = None, use_cache: bool = True,
         on_progress: Callable[[int, int], None] | None = None, cache_dir: Path | str | None = None) -> ScanResult:
    directory = Path(directory).expanduser()
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file, not a Triton cache directory; give the directory "
                         "(TRITON_CACHE_DIR, by default ~/.triton/cache)")
    if not directory.is_dir():
        raise UsageError(f"Triton cache directory {directory} does not exist")
    entries = read_cache(directory)
    tasks: list[Task] = []
    unknown: list[Record] = []
    for entry in entries:
        if entry.helper:  # Triton's own compiled C modules hold no kernel: counted in the summary, no row
            continue
        task, row, built = stored_task(entry)
        if task is None:  # an arch outside the table, or an entry too broken to tell: a row anyway
            target = f"{entry.target[0]} {entry.target[1]}" if entry.target else "?"
            unknown.append(Record(variant=row.label, kernel=entry.name, arch=built.name if built else target,
                                  config=row.config, status=entry.reason or "unknown arch", source=row.source,
                                  identity=row.identity, extras=row.extras, triton_version=triton_version()))
        else:
            tasks.append(task)
        if entry.reason is None:
            tasks += [retarget_task(entry, a) for a in archs]
    cache = CompileCache(Path(cache_dir) if cache_dir else None, enabled=use_cache)
    records = compile_tasks(tasks, jobs=jobs, cache=cache, on_progress=on_progress)
    return ScanResult(directory, tuple(entries), tuple(records) + tuple(unknown))


# vgprscope.scan(...) is the library's call (vgprscope.library.api.scan): this module is callable as it
from ._callable import callable_module  # noqa: E402

callable_module(__name__, "api:scan")
