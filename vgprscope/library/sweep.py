"""The set a command works on: variants x archs x configs, and captured launches -> tasks -> records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..attention import loader
from ..core.archs import DEFAULT_ARCHS, Arch, get_arch
from ..backends import all_options
from ..compile.engine import Engine
from ..compile.task import Task
from ..attention.config import ConfigRequest
from ..attention.variants import select_variants

if TYPE_CHECKING:
    from ..capture.model import Capture


def select_archs(names: Sequence[str] | None) -> list[Arch]:
    flat = [n.strip() for item in (names or []) for n in item.split(",") if n.strip()]
    return [get_arch(n) for n in dict.fromkeys(flat or DEFAULT_ARCHS)]


def sweep_items(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None) -> list:
    """The (variant, config, arch, slot) items of a selection, without planning or compiling (a grid is
    counted before it runs)."""
    from ..attention.source import variant_task_items

    directory = Path(kernel_dir).resolve() if kernel_dir else loader.BUNDLED_DIR
    return variant_task_items(select_variants(list(variant_names or []), directory), select_archs(arch_names),
                              requests)


def sweep_tasks(variant_names: Sequence[str] | None, arch_names: Sequence[str] | None,
                requests: Sequence[ConfigRequest], kernel_dir: Path | None = None,
                engine: Engine | None = None) -> list[Task]:
    """The compile tasks of a selection: each variant request planned into its kernels' jobs."""
    from ..attention.source import variant_tasks

    return variant_tasks(sweep_items(variant_names, arch_names, requests, kernel_dir), engine)


# The fields of a request that are launch options: they apply to a captured launch too ("what if it ran
# with 8 warps"); the others are the bundled variants' attention config.
LAUNCH_FIELDS = ("num_warps", "num_stages", *all_options())


def launch_overrides(requests: Sequence[ConfigRequest], alone: bool) -> list[dict[str, int]]:
    """The launch options a grid sets, one dict per distinct point ([{}] when it sets none). With a capture
    alone, a request that sets anything else is a usage error (it would be silently ignored)."""
    from dataclasses import fields

    from ..core.errors import UsageError

    default = ConfigRequest()
    out: list[dict[str, int]] = []
    for req in requests or [default]:
        if alone:
            others = [f.name for f in fields(ConfigRequest) if f.name not in LAUNCH_FIELDS
                      and getattr(req, f.name) != getattr(default, f.name)]
            if others:
                flag = "--knob" if others[0] == "extra" else "--" + others[0].replace("_", "-")
                raise UsageError(f"{flag} applies to the bundled variants, not to captured launches; with --capture "
                                 "alone give launch options (--num-warps, --num-stages, --waves-per-eu, "
                                 "--matrix-instr-nonkdim, --kpack, --maxnreg), or name variants too")
        point = {f: getattr(req, f) for f in LAUNCH_FIELDS if getattr(req, f) is not None}
        if point not in out:
            out.append(point)
    return out or [{}]


def capture_tasks(capture: Path | Capture, arch_names: Sequence[str] | None,
                  overrides: Sequence[Mapping[str, int]] = ({},), engine: Engine | None = None) -> list[Task]:
    """Every specialisation (and autotune config) of a capture (its file, or one recorded in this process)
    on every arch; with ``overrides``, each also at those launch options (an arch's vendor's own options
    only)."""
    from ..backends import foreign_options
    from ..capture.model import Capture, load_capture
    from ..sources.capture import capture_tasks as tasks_of

    base = tasks_of(capture if isinstance(capture, Capture) else load_capture(capture), select_archs(arch_names),
                    engine)
    out = []
    for opts in overrides:
        for t in base:
            foreign = foreign_options(t.arch)
            own = {k: v for k, v in opts.items() if k not in foreign}
            out.append(t.vary(**own) if own else t)
    return out
