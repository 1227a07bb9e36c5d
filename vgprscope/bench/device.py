"""The GPU in use: its arch in vgprscope's table and the machine line of every bench output."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
from dataclasses import dataclass

from ..backends import Backend, backend_of, torch_backend
from ..backends.base import last_output_line
from ..core.archs import Arch
from ..core.errors import NoGpuError
from ..report.machine import Machine, git_sha


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str  # "nvidia" or "amd"
    arch: Arch
    sm_count: int
    l2_bytes: int
    total_memory: int
    driver: str

    @property
    def backend(self) -> Backend:
        return backend_of(self.arch)

    @property
    def verified(self) -> bool:
        """Whether bench results on this vendor's GPUs have been checked on its hardware by a person."""
        return self.backend.facts.hardware_verified


def current_gpu() -> Gpu:
    """The visible GPU, or NoGpuError (exit 2) with one line saying so."""
    try:
        import torch
    except ImportError:
        raise NoGpuError("bench needs torch with a CUDA or ROCm GPU; torch is not installed") from None
    if not torch.cuda.is_available():
        raise NoGpuError("bench needs a CUDA or ROCm GPU and none is visible (torch.cuda.is_available() is False)")
    props = torch.cuda.get_device_properties(0)
    backend = torch_backend(torch)
    arch = backend.device_arch(props)
    return Gpu(name=props.name, vendor=backend.vendor.value, arch=arch,
               sm_count=props.multi_processor_count, l2_bytes=int(getattr(props, "L2_cache_size", 0) or 0),
               total_memory=int(props.total_memory), driver=last_output_line(backend.facts.driver_command))


def machine(gpu: Gpu) -> Machine:
    from .. import __version__

    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    vendor = gpu.backend.vendor.name
    unverified = f", {vendor}: unverified until run on {vendor} hardware"
    label = f"{gpu.name} ({gpu.arch.name}{'' if gpu.verified else unverified})"
    return Machine(gpu=label, triton=version("triton"), torch=version("torch"), driver=gpu.driver,
                   date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), git_sha=git_sha(),
                   host=platform.node(), vgprscope=__version__)
