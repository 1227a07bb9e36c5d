"""The set a command works on: variants x archs x configs, and captured launches -> tasks -> records."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from . import loader
from .archs import DEFAULT_ARCHS, Arch, get_arch
from .compile.cache import CompileCache
from .compile.engine import Engine, Task
from .records import Record
from .variants import ConfigRequest, select_variants


def select_archs(names: Sequence[str] | None) -> list[Arch]:
    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    return [get_arch(n) for n in dict.fromkeys(flat or DEFAULT_ARCHS)]


def sweep_items(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None) -> list:
    """The (variant, config, arch, slot) items of a selection, without planning or compiling (a grid is
    counted before it runs)."""
    from .sources.variants import variant_task_items

    directory = Path(kernel_dir).resolve() if kernel_dir else loader.BUNDLED_DIR
    return variant_task_items(select_variants(list(variant_names or []), directory), select_archs(arch_names),
                              requests)


def sweep_tasks(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None,
                engine: Engine | None = None) -> list[Task]:
    """The compile tasks of a selection: each variant request planned into its kernels' jobs."""
    from .sources.variants import variant_tasks

    return variant_tasks(sweep_items(variant_names, arch_names, requests, kernel_dir), engine)


def capture_tasks(capture_file: Path, arch_names: Sequence[str] | None) -> list[Task]:
    """Every specialisation (and autotune config) of a capture file on every arch."""
    from .sources.capture import capture_file_tasks

    return capture_file_tasks(capture_file, select_archs(arch_names))


def run_tasks(tasks: Sequence[Task], jobs: int | None = None, use_cache: bool = True,
              on_progress: Callable[[int, int], None] | None = None) -> list[Record]:
    return Engine(jobs, CompileCache(enabled=use_cache), None, on_progress).compile(tasks)


def run_sweep(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
              requests: Sequence[ConfigRequest], jobs: int | None = None, use_cache: bool = True,
              kernel_dir: Path | None = None,
              on_progress: Callable[[int, int], None] | None = None, executor: Executor | None = None,
              capture: Path | None = None) -> list[Record]:
    """Records of the variants (bundled, or a kernel directory) x archs x requests; with ``capture``, of the
    capture file's specialisations on the archs instead (and of the variants too when some are named)."""
    engine = Engine(jobs, CompileCache(enabled=use_cache), executor, on_progress)
    tasks: list[Task] = []
    if capture is None or variant_names or kernel_dir:
        tasks = sweep_tasks(variant_names, arch_names, requests, kernel_dir, engine)
    if capture is not None:
        tasks += capture_tasks(capture, arch_names)
    return engine.compile(tasks)
