"""The machine line every output starts with: GPU or compile-only, Triton, torch, driver, date, git sha."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def git_sha(cwd: Path | None = None) -> str:
    """The checkout's commit; VGPRSCOPE_GIT_SHA where the tree travelled without its .git (a GPU machine)."""
    import os

    if os.environ.get("VGPRSCOPE_GIT_SHA"):
        return os.environ["VGPRSCOPE_GIT_SHA"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                             cwd=cwd or Path(__file__).resolve().parent, timeout=5)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@dataclass(frozen=True)
class Machine:
    gpu: str  # "compile-only" when no GPU took part
    triton: str
    torch: str
    driver: str
    date: str
    git_sha: str
    host: str
    vgprscope: str

    def line(self) -> str:
        return (f"{self.gpu} | Triton {self.triton} | torch {self.torch} | driver {self.driver} | "
                f"{self.date} | git {self.git_sha} | vgprscope {self.vgprscope}")

    def fields(self) -> list[str]:
        """The machine line's fields; a compile-only run has no driver to name."""
        driver = [] if self.driver == "none" else [f"driver {self.driver}"]
        return [self.gpu, f"Triton {self.triton}", f"torch {self.torch}", *driver, self.date,
                f"git {self.git_sha}", f"vgprscope {self.vgprscope}"]

    def text(self, width: int | None = None) -> str:
        """The machine line for a terminal table: broken at its separators to fit ``width`` (default: the
        output's width, as the table under it)."""
        from .formats import output_width, wrap_fields

        return wrap_fields(self.fields(), width or output_width())

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def compile_only() -> Machine:
    """The machine line of a compile-only run (imports neither torch nor triton)."""
    from .. import __version__

    return Machine(gpu="compile-only", triton=_version("triton"), torch=_version("torch"), driver="none",
                   date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), git_sha=git_sha(),
                   host=platform.node(), vgprscope=__version__)
