"""The archs a selection names, and the bundled variants' tasks without a selection (a test's or a report's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.archs import DEFAULT_ARCHS, Arch, get_arch
from ..compile.engine import Engine
from ..compile.task import Task
from ..attention.config import ConfigRequest


def select_archs(names: Sequence[str] | None) -> list[Arch]:
    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    return [get_arch(n) for n in dict.fromkeys(flat or DEFAULT_ARCHS)]


def sweep_tasks(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None,
                engine: Engine | None = None) -> list[Task]:
    """The compile tasks of a selection: each variant request planned into its kernels' jobs."""
    from ..attention.source import VariantSource, variant_tasks

    source = VariantSource(tuple(variant_names or ()), Path(kernel_dir) if kernel_dir else None)
    return variant_tasks(source.items(select_archs(arch_names), requests), engine)
