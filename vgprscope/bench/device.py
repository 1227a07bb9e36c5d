"""The GPU in use: its arch in vgprscope's table and the machine line of every bench output."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
from dataclasses import dataclass

from ..archs import Arch, arch_for_device
from ..errors import NoGpuError
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
    def is_amd(self) -> bool:
        return self.vendor == "amd"


def _driver_version(is_amd: bool) -> str:
    cmd = (["rocm-smi", "--showdriverversion"] if is_amd
           else ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        return out.splitlines()[-1].strip() if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def current_gpu() -> Gpu:
    """The visible GPU, or NoGpuError (exit 2) with one line saying so."""
    try:
        import torch
    except ImportError:
        raise NoGpuError("bench needs torch with a CUDA or ROCm GPU; torch is not installed") from None
    if not torch.cuda.is_available():
        raise NoGpuError("bench needs a CUDA or ROCm GPU and none is visible (torch.cuda.is_available() is False)")
    props = torch.cuda.get_device_properties(0)
    is_amd = torch.version.hip is not None
    if is_amd:
        arch = arch_for_device("hip", getattr(props, "gcnArchName", "unknown"))
    else:
        arch = arch_for_device("cuda", props.major * 10 + props.minor)
    return Gpu(name=props.name, vendor="amd" if is_amd else "nvidia", arch=arch,
               sm_count=props.multi_processor_count, l2_bytes=int(getattr(props, "L2_cache_size", 0) or 0),
               total_memory=int(props.total_memory), driver=_driver_version(is_amd))


def machine(gpu: Gpu) -> Machine:
    from .. import __version__

    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    label = f"{gpu.name} ({gpu.arch.name}{', AMD: unverified until run on AMD hardware' if gpu.is_amd else ''})"
    return Machine(gpu=label, triton=version("triton"), torch=version("torch"), driver=gpu.driver,
                   date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), git_sha=git_sha(),
                   host=platform.node(), vgprscope=__version__)
