"""What the speed scripts share: timing a fresh process, waiting for a quiet machine, and replacing one
marked section of reports/tool-speed.md (the other sections are other scripts' and stay as they are)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reports" / "tool-speed.md"

# Runs start once the 1-minute load average is below this share of the cores (at most QUIET_WAIT_S later):
# the figures are wall times, so other work on the machine would be in them.
QUIET_LOAD_PER_CORE = 0.25
QUIET_WAIT_S = 240


def wait_for_quiet(cores: int) -> float:
    deadline = time.monotonic() + QUIET_WAIT_S
    while os.getloadavg()[0] > QUIET_LOAD_PER_CORE * cores and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def load_note(load: float, cores: int) -> str:
    shared = load > QUIET_LOAD_PER_CORE * cores
    return (f"1-minute load average {load:.2f} when the runs began"
            + (" (**other work was running**: the times include it)" if shared else " (idle)"))


def timed(cmd: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,),
          cwd: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """The wall time of one fresh process (run outside any checkout unless ``cwd`` says, so that the
    interpreter imports its own installed vgprscope, not the current directory's)."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd or "/")
    dt = time.perf_counter() - t0
    if out.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return dt, out


def clean_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # PYTHONDONTWRITEBYTECODE (set on some CI and sandbox machines) would make every start compile vgprscope's
    # modules from source again (0.1 s); a user's installation has its bytecode cached
    for name in ("TRITON_INTERPRET", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    return env | extra


def write_section(name: str, section: str, out: Path = REPORT) -> None:
    """Put ``section`` between ``<!-- name -->`` and ``<!-- /name -->`` in ``out`` (appended the first time)."""
    sys.path.insert(0, str(ROOT))
    from vgprscope.core.fsutil import atomic_write

    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    section = f"{begin}\n{section.strip()}\n{end}"
    text = out.read_text() if out.exists() else ""
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    atomic_write(out, text)


# Run as ``python -c MEASURED CMD...``: the command as a child, every process it starts reaped here (a child
# subreaper: a worker its parent leaves behind is reparented to this process), so that RUSAGE_CHILDREN is the CPU
# time of the whole tree; printed last on stderr as JSON.
MEASURED = r"""
import ctypes, json, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=sys.stdout, stderr=sys.stderr)
rc = p.wait()
wall = time.perf_counter() - t0
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
r = resource.getrusage(resource.RUSAGE_CHILDREN)
# on a line of its own: a child's last words may lack their newline (nanobind's leak report at exit does)
print("\n" + json.dumps({"rc": rc, "wall": wall, "cpu": r.ru_utime + r.ru_stime}), file=sys.stderr)
"""


def measured(cmd: list[str], env: dict[str, str], cwd: str = "/",
              ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    """The wall and CPU time (user + sys of every process the command started) of one fresh run; its stdout."""
    out = subprocess.run([sys.executable, "-c", MEASURED, *cmd], capture_output=True, text=True, env=env, cwd=cwd)
    try:
        figures = json.loads(out.stderr.strip().splitlines()[-1])
    except (IndexError, ValueError):  # the measuring process itself did not finish: say what it printed
        raise SystemExit(f"{' '.join(cmd)[:300]} was not measured (exit {out.returncode}):\n"
                         f"{out.stderr[-3000:]}") from None
    if figures["rc"] not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({figures['rc']}):\n{out.stderr[-2000:]}")
    return figures["wall"], figures["cpu"], out.stdout
