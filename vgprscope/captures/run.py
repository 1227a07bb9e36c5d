"""Run the user's command with the capture hook and gather what its processes recorded.

Signals: the command runs in capture's own process group, so a Ctrl-C at the terminal reaches both (and the
command keeps the terminal: a debugger's prompt works). The command's processes are every process that
carries this capture's directory in its environment (``DIR_ENV``, which each inherits), whatever group or
session it moved to. SIGINT, SIGTERM and SIGHUP sent to capture alone (``kill PID``, a CI runner's
timeout, a closed terminal's session leader) are passed on to all of them. Either way capture waits for
them to end (killing those left after INTERRUPT_GRACE_S), removes its temporary directory and raises
``CaptureInterrupted``: nothing is gathered and no file is written; the CLI exits 128+N. SIGKILL, which
cannot be passed on, is met by a watchdog (Linux): a process of its own session that capture starts, which
sees capture die and kills the command's processes and removes the temporary directory; the next capture
removes a directory left anyway.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import runtime
from ..core.errors import UsageError
from ..runtime import hook
from .model import Capture, CapturedKernel, CapturedLaunch

BOOT_DIR = Path(runtime.BOOT_DIR)
# How long an interrupted command gets to exit on its own before it is killed.
INTERRUPT_GRACE_S = 10
# The signals that stop a capture, passed on to the command when they were sent to capture alone.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CaptureInterrupted(Exception):
    """Capture itself got ``signum``: the command was stopped, its temporary directory removed, nothing
    gathered."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"interrupted by {signal_name(signum)}")


@dataclass(frozen=True)
class CommandRun:
    """What ``run_command`` found: the capture, and what the hook saw go wrong in the command (``notes``:
    ``no-gpu-driver``, Triton's JIT found no GPU driver; ``interpreter-needs-numpy``)."""

    capture: Capture
    notes: frozenset[str] = frozenset()


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _resolve(command: Sequence[str]) -> str:
    if not command:
        raise UsageError("no command given; usage: vgprscope capture [-o FILE] -- COMMAND [ARGS...]")
    exe = command[0]
    found = shutil.which(exe)
    if found is None:
        raise UsageError(f"command not found: {exe}")
    return found


INDUCTOR_NO_CACHE = "TORCHINDUCTOR_FORCE_DISABLE_CACHES"
INDUCTOR_DIR = "TORCHINDUCTOR_CACHE_DIR"
INDUCTOR_SUBDIR = "inductor"  # in capture's temporary directory: the recompiles it forces


def capture_env(directory: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT_DIR), *filter(None, [env.get("PYTHONPATH")])])
    env[hook.DIR_ENV] = str(directory)
    # PyTorch Inductor serves a model compiled before from its own caches (FX graph, autotune, the cubins it
    # bundles) without calling triton.compile, so a capture of a warm run would hold none of its kernels: the
    # captured command compiles them again (Triton's own cache still spares the compiler's work)
    if INDUCTOR_NO_CACHE not in env:
        env[INDUCTOR_NO_CACHE] = "1"
        # each compile forced so makes a temporary Inductor cache (with its Triton cache) inside Inductor's
        # directory and leaves it there (torch._inductor.utils.fresh_cache, delete=False): those go to a
        # directory of capture's own, removed with it, and the user's TORCHINDUCTOR_CACHE_DIR stays as it was
        env[INDUCTOR_DIR] = str(directory / INDUCTOR_SUBDIR)
    return env


TEMP_PREFIX = "vgprscope-capture-"


def _temp_dir() -> tempfile.TemporaryDirectory[str]:
    """This capture's directory, named by its process id; those of captures that are gone are removed."""
    _remove_stale_dirs()
    return tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-")


def _remove_stale_dirs() -> None:
    """Directories a killed capture left (SIGKILL ends it before it can clean up): this user's, whose
    capture process no longer runs."""
    for path in Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*-*"):
        pid = path.name[len(TEMP_PREFIX):].split("-", 1)[0]
        try:
            if not pid.isdigit() or path.is_symlink() or path.stat().st_uid != os.geteuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:  # alive under another user (EPERM), or the directory went meanwhile
            continue


def _die_with_capture() -> None:
    """In the command's process before it starts (Linux): the kernel kills it when capture dies, even by
    SIGKILL, which capture cannot pass on."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def run_command(command: Sequence[str], keep_sources: Path | None = None) -> CommandRun:
    """Run ``command`` to its end with the hook in every Python process it starts; the launches it made.
    ``keep_sources``: a directory the generated modules of the captured kernels are written to (``kept``).

    Raises CaptureInterrupted when capture got a stop signal (see the module's docstring)."""
    exe = _resolve(command)
    if not hasattr(signal, "sigtimedwait"):  # macOS: no way to tell a terminal's signal from kill's
        return _run_with_handlers(exe, command, keep_sources)
    watched = {*STOP_SIGNALS, signal.SIGCHLD}
    # Blocked, the stop signals wait for sigtimedwait below, which says who sent them; the command gets
    # the mask capture started with.
    before = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    try:
        with _temp_dir() as tmp, _watchdog(tmp):
            capture_pid = os.getpid()

            def start() -> None:
                signal.pthread_sigmask(signal.SIG_SETMASK, before)
                _die_with_capture()
                if os.getppid() != capture_pid:  # capture died before the request took effect
                    os._exit(1)

            proc = subprocess.Popen([exe, *command[1:]], env=capture_env(Path(tmp)), preexec_fn=start)
            code, stopped = _wait(proc, watched, tmp)
            if stopped is None:
                launches, errors, notes = gather(Path(tmp))
                launches = kept(launches, keep_sources) if keep_sources is not None else launches
        # the temporary directory is gone; a stop signal that came meanwhile still counts
        if stopped is None and (pending := signal.sigpending() & set(STOP_SIGNALS)):
            stopped = signal.sigtimedwait(pending, 0).si_signo
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    if stopped is not None:
        raise CaptureInterrupted(stopped)
    return CommandRun(_capture(command, code, launches, errors), frozenset(notes))


def _wait(proc: subprocess.Popen, watched: set[int], directory: str) -> tuple[int, int | None]:
    """Wait for the command, passing on the stop signals sent to capture alone to every one of its processes;
    (its exit code, the stop signal capture got or None). Once stopped, capture waits for all of them (the
    command's children too, which its end would leave running), and kills those that outlive
    INTERRUPT_GRACE_S."""
    stopped: int | None = None
    deadline = 0.0
    killed = False
    while True:
        code = proc.poll()
        left = command_processes(directory) if stopped is not None else []
        if code is not None and not left:
            return code, stopped
        if stopped is not None and time.monotonic() >= deadline:
            if killed and time.monotonic() >= deadline + INTERRUPT_GRACE_S:  # unkillable: not waited for
                return proc.wait(), stopped
            if not killed:
                _signal_all(proc, left, signal.SIGKILL)
                killed = True
        timeout = 1.0 if stopped is None else max(0.01, min(0.2, deadline - time.monotonic()))
        info = signal.sigtimedwait(watched, timeout)
        if info is None or info.si_signo == signal.SIGCHLD:
            continue
        if stopped is None:
            stopped, deadline = info.si_signo, time.monotonic() + INTERRUPT_GRACE_S
        # si_code > 0: the kernel sent it (a terminal's Ctrl-C or hangup, to the whole foreground group, the
        # command included); <= 0: a process sent it to capture with kill(): pass it on, to every process
        if info.si_code <= 0:
            _signal_all(proc, command_processes(directory), info.si_signo)


def _signal_all(proc: subprocess.Popen, pids: Sequence[int], signum: int) -> None:
    """``signum`` to the command and each of ``pids`` (gone ones skipped)."""
    for pid in dict.fromkeys([proc.pid, *pids]):
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def command_processes(directory: str) -> list[int]:
    """The running processes of this user whose environment names this capture's directory: the command and
    every process it started, in whichever process group or session (Linux's /proc; elsewhere none)."""
    needle = f"\0{hook.DIR_ENV}={directory}\0".encode()
    me = os.getpid()
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return []
    out = []
    for name in entries:
        pid = int(name)
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = b"\0" + f.read()
        except OSError:  # gone, or another user's
            continue
        if needle in env or env.endswith(needle[:-1]):
            out.append(pid)
    return out


@contextlib.contextmanager
def _watchdog(directory: str) -> Iterator[None]:
    """While the command runs (Linux): a process in a session of its own that waits for capture to end. When
    capture ends without saying so (SIGKILL, which no handler sees), it kills the command's processes
    (``command_processes``) and removes the temporary directory."""
    if not sys.platform.startswith("linux"):
        yield
        return
    read_end, write_end = os.pipe()  # not inherited by the command (close-on-exec)
    pid = os.fork()
    if pid == 0:  # the watchdog
        try:
            os.close(write_end)
            os.setsid()  # a terminal's signals and its hangup are not its own
            for s in STOP_SIGNALS:
                signal.signal(s, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)  # holds no pipe of capture's open (a `| tee` would wait for it)
            os.closerange(3, read_end)
            os.closerange(read_end + 1, 1 << 16)
            if not os.read(read_end, 1):  # capture died: it said nothing
                for signum in (signal.SIGTERM, signal.SIGKILL):
                    for p in command_processes(directory):
                        with contextlib.suppress(OSError):
                            os.kill(p, signum)
                    time.sleep(0.5)
                shutil.rmtree(directory, ignore_errors=True)
        finally:
            os._exit(0)
    os.close(read_end)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.write(write_end, b"x")  # capture ends as it should: nothing to do
        os.close(write_end)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)


def _run_with_handlers(exe: str, command: Sequence[str], keep_sources: Path | None = None) -> CommandRun:
    """Where signals cannot be waited for (no sigtimedwait): handlers that pass every stop signal on."""
    got: list[int] = []
    with _temp_dir() as tmp:
        proc = subprocess.Popen([exe, *command[1:]], env=capture_env(Path(tmp)))

        def forward(signum, _frame):
            got.append(signum)
            try:
                proc.send_signal(signum)
            except ProcessLookupError:
                pass

        previous = {s: signal.signal(s, forward) for s in STOP_SIGNALS}
        try:
            deadline = None
            while True:
                try:
                    code = proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    deadline = deadline or (time.monotonic() + INTERRUPT_GRACE_S if got else None)
                    if deadline is not None and time.monotonic() >= deadline:
                        proc.kill()
            if not got:
                launches, errors, notes = gather(Path(tmp))
                launches = kept(launches, keep_sources) if keep_sources is not None else launches
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    if got:
        raise CaptureInterrupted(got[0])
    return CommandRun(_capture(command, code, launches, errors), frozenset(notes))


def kept(launches: list[CapturedLaunch], directory: Path) -> list[CapturedLaunch]:
    """The launches with the generated modules of their kernels (Inductor's, which live in a temporary cache)
    written into ``directory`` as Inductor laid them out (``XX/cXXXX.py``), each kernel pointing at its copy and
    its snapshot laid out at the copy's lines: the rows' spill sites name a file and line a person can open."""
    import ast
    import json
    from dataclasses import replace

    copies: dict[str, CapturedKernel] = {}
    out = []
    for x in launches:
        k = x.kernel
        if (x.producer or {}).get("by") != "inductor" or not k.snapshot or not Path(k.file).is_file():
            out.append(x)
            continue
        if k.file not in copies:
            src = Path(k.file)
            dest = directory / src.parent.name / src.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            text = src.read_text()
            dest.write_text(text)
            snap = json.loads(k.snapshot)
            line = next((n.lineno for n in ast.parse(text).body
                         if isinstance(n, ast.FunctionDef) and n.name == k.qualname), None)
            for f in snap.get("functions", {}).values():
                if f.get("file") in (str(src), os.path.realpath(src)) or \
                        (f.get("name") == k.qualname and not f.get("file") and line is not None):
                    f["file"], f["line"] = str(dest.resolve()), f.get("line") or line
            copies[k.file] = replace(k, file=str(dest.resolve()), snapshot=json.dumps(snap))
        out.append(replace(x, kernel=copies[k.file]))
    return out


def _capture(command: Sequence[str], code: int, launches: list[CapturedLaunch], errors: list[str]) -> Capture:
    try:
        tv = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        tv = ""
    return Capture(tuple(launches), tuple(command), tv, code, tuple(errors))


def gather(directory: Path) -> tuple[list[CapturedLaunch], list[str], set[str]]:
    """Every process's lines, each distinct launch once, in the order first seen (``gather_items``)."""
    items: list[dict] = []
    for path in sorted(directory.glob("launches-*.jsonl"), key=lambda p: p.stat().st_mtime):
        for line in path.read_text().splitlines():
            try:
                items.append(json.loads(line))
            except ValueError:  # a process killed mid-line: the lines before are whole
                continue
    return gather_items(items)


def gather_items(lines: list[dict]) -> tuple[list[CapturedLaunch], list[str], set[str]]:
    """The hook's lines -> each distinct launch once, in the order first seen; each kernel with the
    snapshot of its source the hook took (what compiles where its module cannot be imported); the hook's
    errors and notes."""
    items: list[dict] = []
    snapshots: dict[tuple, str] = {}
    errors: list[str] = []
    notes: set[str] = set()
    for item in lines:
        if "note" in item:
            notes.add(str(item["note"]))
        elif "error" in item:
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
        launch = CapturedLaunch.from_json(kernel, x, tuple(x["args"]))
        launches.setdefault(json.dumps(x, sort_keys=True), launch)
    return list(launches.values()), list(dict.fromkeys(errors)), notes
