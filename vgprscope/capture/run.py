"""Run the user's command with the capture hook and gather what its processes recorded."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import UsageError
from . import hook
from .model import Capture, CapturedKernel, CapturedLaunch

BOOT_DIR = Path(__file__).resolve().parent / "boot"
# How long an interrupted command gets to exit on its own before it is killed.
INTERRUPT_GRACE_S = 10


def _resolve(command: Sequence[str]) -> str:
    if not command:
        raise UsageError("no command given; usage: vgprscope capture [-o FILE] -- COMMAND [ARGS...]")
    exe = command[0]
    found = shutil.which(exe)
    if found is None:
        raise UsageError(f"command not found: {exe}")
    return found


def capture_env(directory: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT_DIR), *filter(None, [env.get("PYTHONPATH")])])
    env[hook.DIR_ENV] = str(directory)
    env["VGPRSCOPE_CAPTURE_HOOK"] = hook.__file__
    return env


def run_command(command: Sequence[str]) -> Capture:
    """Run ``command`` to its end with the hook in every Python process it starts; the launches it made.

    Ctrl-C is passed on to the command (it gets the signal from the terminal too), and then re-raised:
    nothing is gathered and no file is written.
    """
    exe = _resolve(command)
    with tempfile.TemporaryDirectory(prefix="vgprscope-capture-") as tmp:
        proc = subprocess.Popen([exe, *command[1:]], env=capture_env(Path(tmp)))
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            try:
                proc.wait(timeout=INTERRUPT_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        launches, errors = gather(Path(tmp))
    try:
        tv = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        tv = ""
    return Capture(tuple(launches), tuple(command), tv, code, tuple(errors))


def gather(directory: Path) -> tuple[list[CapturedLaunch], list[str]]:
    """Every process's lines, each distinct launch once, in the order first seen; each kernel with the
    snapshot of its source the hook took (what compiles where its module cannot be imported)."""
    items: list[dict] = []
    snapshots: dict[tuple, str] = {}
    errors: list[str] = []
    for path in sorted(directory.glob("launches-*.jsonl"), key=lambda p: p.stat().st_mtime):
        for line in path.read_text().splitlines():
            try:
                item = json.loads(line)
            except ValueError:  # a process killed mid-line: the lines before are whole
                continue
            if "error" in item:
                errors.append(item["error"])
            elif "snapshot" in item:
                k = item["snapshot"]["kernel"]
                snapshots.setdefault((k["module"], k["qualname"], k["file"]), json.dumps(item["snapshot"]["data"]))
            else:
                items.append(item["launch"])
    launches: dict[str, CapturedLaunch] = {}
    for x in items:
        k = x["kernel"]
        kernel = CapturedKernel(k["module"], k["qualname"], k["file"], k["source_hash"], k.get("root"),
                                snapshots.get((k["module"], k["qualname"], k["file"])))
        launch = CapturedLaunch(kernel, tuple(x["args"]), x["options"], x.get("autotune"), x.get("reason"),
                                bool(x.get("interpreted")))
        launches.setdefault(json.dumps(x, sort_keys=True), launch)
    return list(launches.values()), list(dict.fromkeys(errors))
