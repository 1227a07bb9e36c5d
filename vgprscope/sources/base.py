"""What a source is: something the user names with one keyword (``capture=``, ``kernel_dir=``; the CLI's
``--capture``, ``--kernel-dir``; the gate configuration's ``capture = ...``) that turns into compile tasks.

A source type is read from its keyword's value (``read``) with what the rest of the selection says
(``Reading``); the source it gives answers ``tasks`` for the selection's archs and config requests
(``Want``), the names its rows carry first (``names``, before compiling: a gate rule may name one), its
kernels' files (``files``: annotations and SARIF at a kernel's line) and whether it holds nothing to compile
at all (``empty``). Which types a selection uses, and the keyword each
is read from, is the library's registry (``vgprscope/library/registry.py``): the only place that sees every
source, the bundled variants' included (``flashattn/source.py``, a layer above this one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..compile.engine import Engine
    from ..compile.task import Task
    from ..core.archs import Arch

# the grid guard: (compiles, the items they come from, compile a sample of them) -> refuses or returns
Guard = Callable[[int, Sequence[Any], Callable[[list[Any]], Any]], None]


@dataclass(frozen=True)
class Reading:
    """What a keyword's value is read with: the rest of the selection."""

    variants: tuple[str, ...] = ()  # the variants named (the bundled ones, or a kernel directory's)
    requests: tuple[Any, ...] = ()  # the config grid's requests (flashattn.config.ConfigRequest)
    # whether variants compile beside this source: without them a config option only variants take would be
    # ignored, and a source may refuse it
    with_variants: bool = False
    # whether a grid's launch options apply to the source's launches too (the gate's set: no, its configs are
    # the variants')
    launch_grid: bool = True


@dataclass(frozen=True)
class Want:
    """What a selection asks each of its sources for: its archs x config requests."""

    archs: tuple[Arch, ...]
    requests: tuple[Any, ...]
    guard: Guard | None = None  # a source that plans a grid counts it first (None: no guard)
    # the archs were not named: a kernel written for other archs (a variant's VARIANT['archs']) is also
    # compiled on those, and so are the kernels named in ``companions`` (compare's reference variant)
    own_archs: bool = False
    companions: tuple[str, ...] = ()


@runtime_checkable
class Source(Protocol):
    """One source of compile tasks, read from its keyword's value."""

    @property
    def label(self) -> str:
        """How messages name it ("variants", "capture"); a row's ``source`` field says the same."""
        ...

    def tasks(self, want: Want, engine: Engine) -> list[Task]:
        """Its tasks on ``want.archs`` for ``want.requests``, in a stable order; an entry that cannot be read is
        a task without a job and with its reason (a row), never the end of the run."""
        ...

    def names(self) -> list[str]:
        """The labels its rows carry first, known without compiling (a gate rule ``NAME:metric`` names one)."""
        ...

    def files(self) -> dict[tuple[str, str], str]:
        """(label, kernel) -> the file that defines the kernel, where known (annotations at its line)."""
        ...

    def empty(self) -> str | None:
        """Why it holds nothing to compile at all, known before compiling (None: it may hold something)."""
        ...


class SourceType(Protocol):
    """A source's class: reads its keyword's value into the source."""

    def read(self, value: Any, reading: Reading) -> Source: ...
