"""The machine line every output starts with: GPU or compile-only, Triton, torch, driver, date, the repository
the command ran in (the user's project) and vgprscope's version; and under it, the header's notes on what was
compiled (the bundled variants because nothing is configured, rows compiled from a capture's snapshot), each
said once for the whole output rather than on every row."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import subprocess
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..core.records import SNAPSHOT_NOTE


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _repo(cwd: Path) -> tuple[str, str] | None:
    """(top-level directory, 12-digit commit) of the git work tree ``cwd`` is in; None outside one."""
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel", "--short=12", "HEAD"], capture_output=True,
                             text=True, cwd=cwd, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2:
        return None
    return lines[0], lines[1]


def git_sha(cwd: Path | None = None) -> str:
    """vgprscope's own commit, where it runs from a checkout ("unknown" where not); VGPRSCOPE_GIT_SHA where
    the tree travelled without its .git (a GPU machine)."""
    import os

    if os.environ.get("VGPRSCOPE_GIT_SHA"):
        return os.environ["VGPRSCOPE_GIT_SHA"]
    repo = _repo(cwd or Path(__file__).resolve().parent)
    return repo[1] if repo else "unknown"


def project_repo(cwd: Path | None = None) -> str:
    """The repository the command runs in, the user's project (``NAME COMMIT``, NAME its directory's
    name), or "" outside a git work tree."""
    repo = _repo(cwd or Path.cwd())
    return f"{Path(repo[0]).name} {repo[1]}" if repo else ""


COMPILE_ONLY = "compile-only"
# what "compile-only" means, said once on the machine line of every output it heads
COMPILE_ONLY_MEANS = "compiled here, no GPU: numbers from the compiler's output and the occupancy rules"


@dataclass(frozen=True)
class Machine:
    gpu: str  # "compile-only" when no GPU took part
    triton: str
    torch: str
    driver: str
    date: str
    git_sha: str  # vgprscope's own commit ("unknown": not run from a checkout)
    host: str
    vgprscope: str  # vgprscope's version
    project: str = ""  # the repository the command ran in ("NAME COMMIT"; "" outside one)
    notes: tuple[str, ...] = ()  # the header's lines under the machine line (what was compiled, said once)

    def line(self) -> str:
        return " | ".join(self.fields())

    def md(self) -> str:
        """The machine line and the header's notes, as markdown lines."""
        return "  \n".join([f"Machine: {self.line()}", *self.notes])

    def with_notes(self, *notes: str | None) -> Machine:
        """The same machine with these notes under its line (each once, in order; None and "" left out)."""
        return replace(self, notes=tuple(dict.fromkeys([*self.notes, *(n for n in notes if n)])))

    def fields(self) -> list[str]:
        """The machine line's fields: the GPU (or compile-only, and what that means), the software, the date,
        the repository the command ran in, and vgprscope's version (with its own commit where it runs
        from a checkout that is not that repository). A compile-only run has no driver to name."""
        gpu = f"{self.gpu} ({COMPILE_ONLY_MEANS})" if self.gpu == COMPILE_ONLY else self.gpu
        driver = [] if self.driver == "none" else [f"driver {self.driver}"]
        project = [f"repo {self.project}"] if self.project else []
        own = self.git_sha not in ("", "unknown") and not self.project.endswith(f" {self.git_sha}")
        tool = f"vgprscope {self.vgprscope}" + (f" (git {self.git_sha})" if own else "")
        return [gpu, f"Triton {self.triton}", f"torch {self.torch}", *driver, self.date, *project, tool]

    def text(self, width: int | None = None) -> str:
        """The machine line for a terminal table: broken at its separators to fit ``width`` (default: the
        output's width, as the table under it)."""
        from .formats import alone, output_width, wrap, wrap_fields

        width = width or output_width()
        notes = [wrap(n, width, "  ") for n in self.notes]
        if alone():  # a result's table wanted alone (a notebook): no machine line; what the header says stays
            return "\n".join(notes)
        return "\n".join([wrap_fields(self.fields(), width), *notes])

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def for_rows(self, versions: Iterable[str]) -> Machine:
        """The machine line of a table whose rows another Triton compiled (``--triton 3.6.0``): it names the
        rows' release, and the installed one beside it."""
        found = sorted({v for v in versions if v})
        if not found or found == [self.triton]:
            return self
        return replace(self, triton=f"{', '.join(found)} (the rows'; {self.triton} installed)")


def compile_only() -> Machine:
    """The machine line of a compile-only run (imports neither torch nor triton)."""
    from .. import __version__

    return Machine(gpu=COMPILE_ONLY, triton=_version("triton"), torch=_version("torch"), driver="none",
                   date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), git_sha=git_sha(),
                   host=platform.node(), vgprscope=__version__, project=project_repo())


def snapshot_note(notes: Iterable[str], total: int) -> str | None:
    """One header line for the rows compiled from a capture's snapshot (each row's note says why: its file is
    not on this machine, Inductor's generated kernel): how many, and the reasons, each once."""
    prefix = SNAPSHOT_NOTE + " ("
    reasons = [n[len(prefix):-1] if n.startswith(prefix) and n.endswith(")") else n for n in notes if n]
    if not reasons:
        return None
    distinct = list(dict.fromkeys(reasons))
    shown = "; ".join(distinct[:3]) + (f"; and {len(distinct) - 3} more" if len(distinct) > 3 else "")
    rows = f"{len(reasons)} of {total} rows" if len(reasons) < total else f"every row ({total})"
    return f"{rows} {SNAPSHOT_NOTE.replace('its source', 'their source')}: {shown}"
