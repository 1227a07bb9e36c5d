"""The set a command works on: variants x archs x configs -> compile tasks -> records."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from . import loader
from .archs import DEFAULT_ARCHS, Arch, get_arch
from .compile.cache import CompileCache
from .compile.engine import Task, compile_tasks
from .records import Record
from .variants import ConfigRequest, Variant, select_variants


def select_archs(names: Sequence[str] | None) -> list[Arch]:
    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    return [get_arch(n) for n in dict.fromkeys(flat or DEFAULT_ARCHS)]


def build_tasks(variants: Sequence[Variant], archs: Sequence[Arch], requests: Sequence[ConfigRequest]) -> list[Task]:
    """The bundled-variants source's specs as tasks (the same specialisation asked twice: once)."""
    from .sources.variants import variant_specs

    return [Task(spec, arch) for spec, arch in variant_specs(variants, archs, requests)]


def capture_tasks(capture_file: Path, arch_names: Sequence[str] | None) -> list[Task]:
    """Every specialisation (and autotune config) of a capture file on every arch."""
    from .sources.capture import capture_specs, load_capture

    archs = select_archs(arch_names)
    return [Task(spec, a) for spec in capture_specs(load_capture(capture_file)) for a in archs]


def run_tasks(tasks: Sequence[Task], jobs: int | None = None, use_cache: bool = True,
              on_progress: Callable[[int, int], None] | None = None) -> list[Record]:
    return compile_tasks(list(tasks), jobs=jobs, cache=CompileCache(enabled=use_cache), on_progress=on_progress)


def sweep_tasks(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None) -> list[Task]:
    """The compile tasks of a selection, without compiling (a grid is counted before it runs)."""
    directory = Path(kernel_dir).resolve() if kernel_dir else loader.BUNDLED_DIR
    variants = select_variants(list(variant_names or []), directory)
    archs = select_archs(arch_names)
    return build_tasks(variants, archs, requests)


def run_sweep(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
              requests: Sequence[ConfigRequest], jobs: int | None = None, use_cache: bool = True,
              kernel_dir: Path | None = None,
              on_progress: Callable[[int, int], None] | None = None, executor: Executor | None = None,
              capture: Path | None = None) -> list[Record]:
    """Records of the variants (bundled, or a kernel directory) x archs x requests; with ``capture``, of the
    capture file's specialisations on the archs instead (and of the variants too when some are named)."""
    tasks: list[Task] = []
    if capture is None or variant_names or kernel_dir:
        tasks = sweep_tasks(variant_names, arch_names, requests, kernel_dir)
    if capture is not None:
        tasks += capture_tasks(capture, arch_names)
    return compile_tasks(tasks, jobs=jobs, cache=CompileCache(enabled=use_cache), on_progress=on_progress,
                         executor=executor)
