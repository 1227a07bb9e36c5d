"""One backend per vendor (docs/design.md, "Layers"): AMD / HIP (``hip``) and NVIDIA / CUDA (``cuda``).

Everything vgprscope computes differently per vendor is a backend's answer (``base.Backend``): the compile
target and the launch options only that vendor reads, the raw compiler outputs and their parser, launch
limits, the occupancy rule and register ladder, the frontier's knob and levels, the gate's metrics, the
spill-site reader and a usage's figures. What the views call these is a vendor's row of
``vgprscope.report.vendor_words``, not a backend's answer. Callers ask the backend of an arch
(``backend_of``) or of a usage (``backend_of_usage``); outside this package and the arch table
(``vgprscope.core.archs``) no module tells the vendors apart (tests/project/test_layers.py checks it). The compile
worker (``runtime``) is the exception: it runs under other Python
environments with nothing but Triton and the standard library, so it keeps its own per-backend lines.

Adding an arch of a known vendor is a row in ``vgprscope.core.archs``; adding a vendor is a module here that
answers ``Backend``, a line in ``BACKENDS`` and a row of words (README.md, "Adding a vendor").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from .base import Backend, Calculation, Facts, KnobLevel, Metric, UsageFigures
from .cuda import CUDA
from .hip import HIP

if TYPE_CHECKING:
    from ..core.archs import Arch
    from ..core.occupancy.common import LadderStep
    from ..core.records import Occupancy, ResourceUsage

# every backend, in the order tables and metric lists show them
BACKENDS: tuple[Backend, ...] = (HIP, CUDA)
_BY_NAME: dict[str, Backend] = {b.name: b for b in BACKENDS}
# a usage's ``vendor`` (what its dict carries) is its backend's vendor
_BY_VENDOR: dict[str, Backend] = {b.vendor.value: b for b in BACKENDS}

__all__ = ["BACKENDS", "Backend", "Calculation", "Facts", "KnobLevel", "Metric", "UsageFigures", "all_options",
           "backend_named", "backend_of", "backend_of_usage", "foreign_options", "group_memory_limit", "ladder",
           "memory_metric", "occupancy_of", "registers_metric", "registers_metrics", "tensor_backend",
           "torch_backend"]


def backend_named(name: str) -> Backend:
    """The backend Triton calls ``name`` ("hip", "cuda": a Target's, a Triton cache entry's)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UsageError(f"no backend {name!r}; known: {', '.join(_BY_NAME)}") from None


def backend_of(arch: Arch) -> Backend:
    """The backend that compiles for ``arch`` (the arch table row names it)."""
    return backend_named(arch.backend)


def backend_of_usage(usage: ResourceUsage) -> Backend:
    """The backend whose parser produced ``usage``."""
    try:
        return _BY_VENDOR[getattr(usage, "vendor", None)]  # type: ignore[index]
    except KeyError:
        raise UsageError(f"no occupancy rule for {type(usage).__name__}") from None


def all_options() -> tuple[str, ...]:
    """Every backend's own launch options, each once."""
    return tuple(dict.fromkeys(o for b in BACKENDS for o in b.facts.options))


def foreign_options(arch: Arch) -> tuple[str, ...]:
    """The launch options other backends read and ``arch``'s does not: meaningless there."""
    own = backend_of(arch).facts.options
    return tuple(o for o in all_options() if o not in own)


def _metric_with_role(backend: Backend, role: str) -> Metric:
    return next(m for m in backend.metrics if m.role == role)


def registers_metric(backend: Backend) -> Metric:
    """The backend's register count occupancy sees, the one the neutral ``registers`` metric stands for."""
    return _metric_with_role(backend, "registers")


def memory_metric(backend: Backend) -> Metric:
    """The backend's LDS / shared memory per workgroup / block."""
    return _metric_with_role(backend, "memory")


def registers_metrics() -> tuple[str, ...]:
    """The metric each backend's neutral ``registers`` stands for (vgpr_total, regs)."""
    return tuple(registers_metric(b).name for b in BACKENDS)


def group_memory_limit(arch: Arch) -> int:
    """The LDS / shared memory one workgroup / block may use on ``arch`` (its memory metric's maximum)."""
    return int(getattr(arch, memory_metric(backend_of(arch)).arch_max))


def occupancy_of(usage: ResourceUsage, arch: Arch, num_warps: int, *, waves_per_eu: int | None = None) -> Occupancy:
    """Occupancy of a compiled kernel launched the way Triton launches it (``num_warps`` warps/waves),
    by the rule of the backend that compiled it; usage of one backend cannot run on another's arch."""
    backend = backend_of_usage(usage)
    if backend_of(arch) is not backend:
        raise UsageError(f"{backend.vendor.name} resource usage cannot run on {arch.name}")
    return backend.occupancy(usage, arch, num_warps, waves_per_eu=waves_per_eu)


def ladder(arch: Arch, workgroup_size: int | None = None, *, threads: int | None = None) -> list[LadderStep]:
    """Register count -> occupancy steps of ``arch``, registers alone, for a workgroup / block of
    ``threads`` (or ``workgroup_size``) threads (None: the backend's default: one wave on AMD, 128 threads
    on NVIDIA). AMD: VGPR+AGPR totals -> waves/SIMD; NVIDIA: registers per thread -> blocks/SM, warps/SM."""
    return backend_of(arch).ladder(arch, threads if threads is not None else workgroup_size)


def torch_backend(torch: Any) -> Backend:
    """The backend torch's GPU build runs on: ROCm builds say so in ``torch.version.hip``."""
    return HIP if torch.version.hip is not None else CUDA


def tensor_backend(tensor: Any) -> Backend:
    """The backend a torch tensor's device runs on; a CPU tensor (the Triton interpreter) takes CUDA's
    defaults, as it always has."""
    import torch

    return torch_backend(torch) if tensor.is_cuda else CUDA
