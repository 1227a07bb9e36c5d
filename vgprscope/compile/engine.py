"""(CompileSpec x arch) -> Records: parallel across cores, cached by the full specialisation.

Specs come from any source (``vgprscope.sources``: bundled variants, a capture, a Triton cache); nothing
here knows which.

The calling process never imports triton or torch: worker processes compile, this process reads the
cache, parses compiler outputs into ResourceUsage, applies the occupancy rules and builds the rows.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ..archs import AmdArch, Arch, NvidiaArch
from ..errors import TritonUnavailableError
from ..records import Config, Record, ResourceUsage, usage_from_dict, usage_to_dict
from ..sources.spec import CompileSpec
from .cache import CompileCache, entry_key
from ..interpreter import interpreting
from .worker import CompileJob, compile_kernels, configure_triton_env, one_line

PARSER_VERSION = 2


@dataclass(frozen=True, init=False)
class Task:
    """One spec on one arch. ``Task(variant, arch, config)`` is a bundled variant's spec (the older form)."""

    spec: CompileSpec
    arch: Arch

    def __init__(self, spec: Any, arch: Arch, config: Config | None = None):
        if not isinstance(spec, CompileSpec):
            from ..sources.variants import variant_spec

            spec = variant_spec(spec, config)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "arch", arch)

    @property
    def variant(self) -> Any:
        """The bundled Variant of a variant spec (None for other sources)."""
        return self.spec.variant

    @property
    def config(self) -> Config:
        return self.spec.config


def triton_version() -> str:
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        raise TritonUnavailableError("triton is not installed; pip install triton (3.6 or newer)") from None


def parse_output(arch: Arch, out: dict[str, Any]) -> ResourceUsage:
    """One kernel's raw compiler outputs -> ResourceUsage, through the backend's own parser."""
    if isinstance(arch, AmdArch):
        from ..parse.amdgcn import parse_amdgcn

        return parse_amdgcn(out["amdgcn"], out["shared"], kernel=out.get("name"))
    from ..parse.nvidia import nvidia_usage

    return nvidia_usage(out["ptxas_log"], out["cuobjdump"], out["shared"], kernel=out.get("name"),
                        ptxas_version=out.get("ptxas_version"))


def launch_limit_reason(arch: Arch, usage: ResourceUsage, num_warps: int | None = None) -> str | None:
    """Why a compiled kernel could not be launched on ``arch`` (Triton only finds out at load time)."""
    if num_warps is not None:
        limit = arch.max_threads_per_workgroup if isinstance(arch, AmdArch) else arch.max_threads_per_block
        if num_warps * arch.wave_size > limit:
            unit = "waves" if isinstance(arch, AmdArch) else "warps"
            return (f"num_warps {num_warps} is {num_warps * arch.wave_size} threads ({num_warps} {unit} of "
                    f"{arch.wave_size}); {arch.name} allows {limit} per workgroup")
    if isinstance(arch, AmdArch) and usage.lds_bytes > arch.lds_per_workgroup:
        return f"needs {usage.lds_bytes} B of LDS; {arch.name} has {arch.lds_per_workgroup} B per workgroup"
    if isinstance(arch, NvidiaArch) and usage.shared_bytes > arch.max_shared_per_block:
        return (f"needs {usage.shared_bytes} B of shared memory; {arch.name} allows "
                f"{arch.max_shared_per_block} B per block")
    return None


def _parsed_entry(arch: Arch, raw: list[dict[str, Any]]) -> dict[str, Any]:
    kernels = []
    for out in raw:
        row = {"kernel": out["kernel"], "seconds": out.get("seconds", 0.0)}
        if out.get("num_warps") is not None:  # what the compiler launched with (the occupancy's warps)
            row["num_warps"] = out["num_warps"]
        if "error" in out:
            row["error"] = out["error"]
        else:
            try:
                row["usage"] = usage_to_dict(parse_output(arch, out))
            except Exception as exc:  # a parser failure is a row, never the end of the run
                row["error"] = f"cannot parse the compiler output: {one_line(exc)}"
        kernels.append(row)
    return {"parser": PARSER_VERSION, "kernels": kernels}


def _records(task: Task, entry: dict[str, Any], tv: str, cached: bool) -> list[Record]:
    from ..occupancy import occupancy_of

    from dataclasses import replace

    spec = task.spec
    rows = []
    for k in entry["kernels"]:
        usage = usage_from_dict(k.get("usage"))
        status = k.get("error") or "ok"
        occ = None
        if usage is not None:
            warps = k.get("num_warps") or task.config.num_warps
            status = launch_limit_reason(task.arch, usage, warps) or status
            if launch_limit_reason(task.arch, usage, warps) == launch_limit_reason(task.arch, usage):
                # occupancy 0 for a kernel over the LDS / shared limit; none for a workgroup the arch refuses
                occ = occupancy_of(usage, task.arch, warps, waves_per_eu=task.config.waves_per_eu)
        rows.append(Record(
            variant=spec.label, kernel=k["kernel"], arch=task.arch.name, config=task.config,
            status=status, usage=usage, occupancy=occ, compile_seconds=k.get("seconds", 0.0),
            triton_version=tv, source_hash=spec.source_hash, cached=cached,
            identity=replace(spec.identity, qualname=k["kernel"]), source=spec.source, extras=spec.extras,
            slot=spec.slot,
        ))
    return rows


def _job(task: Task) -> CompileJob:
    spec = task.spec
    p = spec.payload()
    return CompileJob(variant=spec.label, directory=p.get("directory", ""), file_name=p.get("file_name", ""),
                      arch=task.arch.name, config=task.config.as_dict(), kernels=spec.kernels, kind=spec.kind,
                      payload=spec.job)


def _refused(task: Task) -> dict[str, Any]:
    """The entry of a spec that cannot compile (its reason on every kernel row); never cached."""
    return {"parser": PARSER_VERSION, "kernels": [{"kernel": k, "seconds": 0.0, "error": task.spec.reason}
                                                  for k in task.spec.kernels]}


def _worker_init() -> None:
    configure_triton_env()
    # Import triton while the first job is being pickled; errors surface in the job itself.
    try:
        import triton  # noqa: F401
    except Exception:
        pass


def _in_process_ok() -> bool:
    """Whether this process may compile: not when kernels would be (or were) loaded for the interpreter."""
    return not interpreting()


def _executor(workers: int) -> ProcessPoolExecutor:
    # fork is cheap and safe while this process has not imported triton (no LLVM threads, no kernels
    # decorated for the interpreter); otherwise, and off Linux, a fresh interpreter per worker.
    fork_ok = sys.platform.startswith("linux") and "triton" not in sys.modules
    method = "fork" if fork_ok else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=_worker_init)


def compile_tasks(tasks: Iterable[Task], jobs: int | None = None, cache: CompileCache | None = None,
                  on_progress: Callable[[int, int], None] | None = None,
                  executor: Executor | None = None) -> list[Record]:
    """Records of every task in order (kernels of a multi-kernel variant in their declared order).

    Cached entries are read, the rest compiled on ``jobs`` processes (default: all cores), or on
    ``executor`` when one is given (any ``concurrent.futures.Executor``: a Dask cluster's, for one; it is
    not shut down here). Results come back to this process, which parses them and writes the cache, so a
    re-run is warm wherever the compiles ran. A compile that fails is a row with its one-line error; the
    sweep goes on.
    """
    tasks = list(tasks)
    cache = cache or CompileCache()
    tv = triton_version()
    keys = [entry_key(t.spec.label, t.spec.source_hash, t.arch.name, t.spec.key, tv) for t in tasks]
    entries: dict[int, tuple[dict[str, Any], bool]] = {}
    misses: list[int] = []
    for i, key in enumerate(keys):
        if tasks[i].spec.reason:
            entries[i] = (_refused(tasks[i]), False)
            continue
        parsed = cache.load_parsed(key)
        if parsed is not None and parsed.get("parser") == PARSER_VERSION:
            entries[i] = (parsed, True)
            continue
        raw = cache.load_raw(key) if parsed is not None else None
        if raw is not None:  # compiled before, parsed by an older parser: re-parse, do not recompile
            entry = _parsed_entry(tasks[i].arch, raw)
            cache.store(key, raw, entry)
            entries[i] = (entry, True)
            continue
        misses.append(i)

    done = 0
    if on_progress:
        on_progress(0, len(misses))

    def finish(i: int, raw: list[dict[str, Any]]) -> None:
        nonlocal done
        entry = _parsed_entry(tasks[i].arch, raw)
        if not any(o.get("transient") for o in raw):
            # a Triton cache entry's outputs stay in that cache: keep only what was parsed from them
            cache.store(keys[i], None if tasks[i].spec.kind == "artifact" else raw, entry)
        entries[i] = (entry, False)
        done += 1
        if on_progress:
            on_progress(done, len(misses))

    workers = min(jobs or os.cpu_count() or 1, len(misses))
    if executor is None and workers <= 1 and _in_process_ok():
        for i in misses:
            finish(i, compile_kernels(_job(tasks[i])))
    elif misses:
        with contextlib.nullcontext(executor) if executor is not None else _executor(max(workers, 1)) as pool:
            futures: dict[Future, int] = {pool.submit(compile_kernels, _job(tasks[i])): i for i in misses}
            try:
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        i = futures[fut]
                        try:
                            raw = fut.result()
                        except Exception as exc:  # a crashed worker: rows with the reason, not cached
                            raw = [{"kernel": k, "error": f"compile worker failed: {one_line(exc)}",
                                    "transient": True} for k in tasks[i].spec.kernels]
                        finish(i, raw)
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise

    rows: list[Record] = []
    for i, task in enumerate(tasks):
        entry, cached = entries[i]
        rows.extend(_records(task, entry, tv, cached))
    return rows

