"""A progress bar on stderr while compiles run (only on a terminal; silent in pipes and CI logs)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def compile_progress(label: str = "compiling") -> Iterator[Callable[[int, int], None]]:
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(file=sys.stderr), transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if total == 0:
            return
        if task is None:
            task = progress.add_task(label, total=total)
        progress.update(task, completed=done)

    with progress:
        yield update


@contextlib.contextmanager
def bench_progress() -> Iterator[Callable[[int, int, str], None]]:
    """Progress over bench cases; on a pipe, one line per finished measurement on stderr."""
    if not sys.stderr.isatty():
        def line(done: int, total: int, what: str) -> None:
            print(f"[{done}/{total}] {what}", file=sys.stderr, flush=True)

        yield line
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(file=sys.stderr), transient=True)
    task = progress.add_task("bench", total=None)

    def update(done: int, total: int, what: str) -> None:
        progress.update(task, completed=done, total=total, description=what)

    with progress:
        yield update
