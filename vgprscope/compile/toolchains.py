"""Toolchains: the Triton that compiles a job. The installed one, a release from PyPI in an environment of its
own, or an existing Python environment that has Triton (a source build, a fork, a nightly).

A release is installed once into this user's toolchain store (``$VGPRSCOPE_TOOLCHAIN_DIR``, else
``~/.cache/vgprscope-toolchains``: one per user, shared by every compile cache; ``triton-VERSION-pyXY``) as an
isolated environment holding Triton alone (with ``uv`` when it is on PATH, else ``venv`` + ``pip``), built in a
scratch directory and renamed into place only when it imports and reports the version asked for: a
half-made environment is never used, and an interrupted or failed install leaves nothing behind. A version
the package index does not offer is refused before any of that. Saves of one release wait for each other (a
lock file, removed by the last one). Compile workers then run under that environment's Python
(``python <runtime directory> --serve``: the runtime package, which needs only Triton and the standard library).

A toolchain's ``id`` is part of every job's key, and its version is checked on every answer, so compiles of
two releases never share a cache entry or a row.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import TritonUnavailableError, UsageError, VgprscopeError
from ..runtime import worker_command
from ..runtime.scratch import alive

MARKER = "vgprscope-toolchain.json"
# ASCII digits only: \d also takes full-width and other scripts' digits, which no release is spelled with
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$", re.ASCII)
_RANGE = re.compile(r"^(\d+\.\d+(?:\.\d+)?)\.\.(\d+\.\d+(?:\.\d+)?)$", re.ASCII)
PYPI_JSON = "https://pypi.org/pypi/triton/json"
# Releases older than this predate the launch facts the compile worker gives a release's own binder.
OLDEST = (3, 3, 0)


class ToolchainError(UsageError):
    """A toolchain that cannot be had: unknown release, no wheel here, no network, a path without Triton,
    a full disk (exit 2, one line)."""


def version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def normal_release(version: str) -> str:
    """``3.8`` -> ``3.8.0``: Triton's releases have three parts, and pip installs 3.8.0 for ``triton==3.8``."""
    return f"{version}.0" if _VERSION.match(version) and version.count(".") == 1 else version


@dataclass(frozen=True)
class Toolchain:
    """The Triton of one side of a run, and the compiler settings (environment variables) it compiles with."""

    kind: str  # "installed", "release" or "environment"
    version: str  # Triton's own version there
    python: str = ""  # the environment's interpreter ("" for the installed Triton: vgprscope's own workers)
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        """What a job carries (part of its key): "" for the installed Triton."""
        if self.kind == "installed":
            return ""
        if self.kind == "release":
            return f"triton=={self.version}"
        return f"env:{self.python}@{self.version}"

    @property
    def label(self) -> str:
        """The side's name in tables: the version, and its settings."""
        settings = " ".join(f"{k}={v}" for k, v in self.settings)
        return f"{self.version} {settings}".strip()

    def with_settings(self, settings: dict[str, str]) -> Toolchain:
        return Toolchain(self.kind, self.version, self.python, tuple(sorted(settings.items())))


# ------------------------------------------------------------------------------------------- registry

_KNOWN: dict[str, Toolchain] = {}


def register(tc: Toolchain) -> Toolchain:
    _KNOWN[tc.id] = tc
    return tc


def by_id(toolchain_id: str) -> Toolchain:
    """The toolchain a job names (resolved earlier in this process; "" is the installed Triton)."""
    if toolchain_id == "":
        return installed()
    try:
        return _KNOWN[toolchain_id]
    except KeyError:
        raise ToolchainError(f"unknown toolchain {toolchain_id!r}: resolve it first") from None


def triton_version() -> str:
    """The version of the Triton installed beside vgprscope (read from its metadata: nothing is imported)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        raise TritonUnavailableError("triton is not installed; pip install triton (3.6 or newer)") from None


def installed() -> Toolchain:
    return Toolchain("installed", triton_version())


# ------------------------------------------------------------------------------------------- the store

STORE_NAME = "vgprscope-toolchains"


def store() -> Path:
    """Where releases are installed: $VGPRSCOPE_TOOLCHAIN_DIR, else ``vgprscope-toolchains`` in the user's
    cache directory ($XDG_CACHE_HOME, else ~/.cache): one store per user, whatever compile cache a run uses
    ($VGPRSCOPE_CACHE_DIR), so another cache never downloads a release again."""
    env = os.environ.get("VGPRSCOPE_TOOLCHAIN_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / STORE_NAME


def _env_name(version: str) -> str:
    return f"triton-{version}-py{sys.version_info.major}{sys.version_info.minor}"


def _python_of(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held by one process at a time; the lock file is removed by its holder when done (a process that waited
    on the removed file takes a new one: the file it locked must still be the one at ``path``)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        f = open(path, "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
            same = False
            with contextlib.suppress(FileNotFoundError):  # removed meanwhile: not the file at ``path``
                same = os.path.samestat(os.fstat(f.fileno()), os.stat(path))
        except BaseException:
            f.close()
            raise
        if same:
            break
        f.close()  # removed (or replaced) by the holder before us: lock the file there now
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        fcntl.flock(f, fcntl.LOCK_UN)
        f.close()


# interpreter -> the directory of the Triton package it imports, as its probe said: where it is not in the
# environment's site-packages (an editable install), the probe runs on every resolve, so this is always known
TRITON_DIRS: dict[str, str] = {}


def probe(python: str) -> str:
    """The Triton version an interpreter imports, asked through the compile worker (the runtime package)."""
    try:
        done = subprocess.run(worker_command(python, "--version"), capture_output=True, text=True, timeout=120,
                              env={**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": ""})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"cannot run {python}: {exc}") from None
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        version = str(answer["triton_version"] or "")
        if answer.get("triton_dir"):
            TRITON_DIRS[python] = str(answer["triton_dir"])
    except (ValueError, IndexError, KeyError, TypeError, AttributeError):
        version = ""
    if not version:
        why = (done.stderr.strip().splitlines() or ["no answer"])[-1][:200]
        raise ToolchainError(f"{python} has no usable Triton ({why}); give an environment where "
                             "`import triton` works, or a release number such as 3.8.0")
    return version


def _versions_line(offered: str) -> str:
    """pip's "from versions" list, shortened to its ends when long (PyPI offers Triton from 0.x on)."""
    versions = [v.strip() for v in offered.split(",") if v.strip()]
    # the releases vgprscope refuses are not offered (pip lists Triton from 0.x on)
    versions = [v for v in versions if not _VERSION.match(v) or version_tuple(v) >= OLDEST] or versions
    return ", ".join(versions) if len(versions) <= 6 else f"{versions[0]} to {versions[-1]} ({len(versions)} releases)"


def _pip_failure(version: str, text: str) -> str:
    low = text.lower()
    here = f"Python {sys.version_info.major}.{sys.version_info.minor} on {sys.platform}-{platform.machine()}"
    # the network first: an unreachable index also ends in pip's "no matching distribution"
    if any(w in low for w in ("connection", "network", "resolve host", "timed out", "offline", "dns")):
        return (f"cannot install Triton {version}: PyPI cannot be reached (no network); installed toolchains: "
                f"{', '.join(t.version for t, _ in list_installed()) or 'none'}")
    if "no space left" in low:
        return f"cannot install Triton {version}: the disk is full ({store()})"
    offered = re.search(r"\(from versions: ([^)]*)\)", text)
    if offered and offered.group(1).strip() == "none":
        return (f"cannot install Triton {version}: the package index offers no Triton wheel at all for {here} "
                f"(PyPI unreachable, or no wheels for this platform; `pip download triton=={version}` shows why)")
    if offered or any(w in low for w in ("no matching distribution", "no solution found",
                                         "not found in the package registry", "because there is no version")):
        listed = _versions_line(offered.group(1)) if offered else "a released version, e.g. 3.4.0 to 3.9.0"
        return (f"cannot install Triton {version}: not a release with a wheel for {here}; allowed: {listed} "
                "(`pip index versions triton` lists them)")
    last = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or ["failed"]
    return f"cannot install Triton {version}: {last[0][:200]}"


def _run(cmd: list[str], version: str) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise ToolchainError(f"cannot install Triton {version}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise ToolchainError(_pip_failure(version, done.stderr + done.stdout))


# How often a toolchain install says it is still going (pip is silent for minutes on a busy machine)
TICK_S = 15.0


def _megabytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total // 10**6


@contextlib.contextmanager
def _ticking(version: str, scratch: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Every TICK_S seconds while the block runs: the time it has taken and the size installed so far."""
    import threading

    done = threading.Event()
    t0 = time.monotonic()

    def tick() -> None:
        while not done.wait(TICK_S):
            # worded as the first line ("installing Triton X"): what reads the install's lines knows them
            say(f"installing Triton {version}: {time.monotonic() - t0:.0f} s, {_megabytes(scratch)} MB so far")

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _create(version: str, env: Path, say: Callable[[str], None]) -> None:
    """An environment holding Triton ``version`` alone, built in scratch and renamed into place whole."""
    scratch = env.with_name(f".{env.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    t0 = time.monotonic()
    # setuptools: Triton before 3.3 imports it at startup without declaring it
    wanted = [f"triton=={version}", "setuptools"]
    try:
        uv = shutil.which("uv")
        # a release's environment takes 700 MB to 1 GB (Triton's wheel bundles LLVM and the CUDA tools)
        say(f"installing Triton {version} into {env} ({'uv' if uv else 'venv + pip'}; once; 700 MB to 1 GB, "
            "a minute or more)")
        with _ticking(version, scratch, say):
            if uv:
                _run([uv, "venv", "-q", "--python", sys.executable, str(scratch)], version)
                # byte-compiled as pip does: a worker's start imports Triton, from its sources every time where
                # Python writes no bytecode (PYTHONDONTWRITEBYTECODE, a read-only store)
                _run([uv, "pip", "install", "-q", "--compile-bytecode", "--python", str(_python_of(scratch)),
                      *wanted], version)
            else:
                _run([sys.executable, "-m", "venv", str(scratch)], version)
                _run([str(_python_of(scratch)), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                      *wanted], version)
        found = probe(str(_python_of(scratch)))
        if found != version:
            raise ToolchainError(f"installing Triton {version} gave Triton {found}")
        (scratch / MARKER).write_text(json.dumps({"version": version, "python": sys.executable,
                                                  "seconds": round(time.monotonic() - t0, 1)}) + "\n")
        scratch.rename(env)
    except BaseException as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        if isinstance(exc, OSError):
            why = "the disk is full" if exc.errno == 28 else (exc.strerror or str(exc))
            raise ToolchainError(f"cannot install Triton {version}: {why} ({store()})") from None
        raise
    say(f"installed Triton {version} in {time.monotonic() - t0:.0f} s ({_megabytes(env)} MB)")


def release(version: str, say: Callable[[str], None] = lambda s: None) -> Toolchain:
    """Triton ``version`` from PyPI, installed into the store on first use."""
    version = normal_release(version)
    if not _VERSION.match(version):
        raise ToolchainError(f"{version!r} is not a Triton release number; allowed: a version such as 3.8.0, a "
                             "range such as 3.4.0..3.9.0, or the path of a Python environment that has Triton")
    if version_tuple(version) < OLDEST:
        raise ToolchainError(f"Triton {version} is older than {'.'.join(map(str, OLDEST))}, the oldest release "
                             "vgprscope compiles with; allowed: 3.3.0 and newer")
    env = store() / _env_name(version)
    if (env.is_symlink() or env.exists()) and not (env / MARKER).is_file():  # not installed over, not used
        what = _not_a_toolchain(env) if env.is_symlink() or not env.is_dir() else f"it has no {MARKER}"
        raise ToolchainError(f"the Triton {version} toolchain in {env} is broken ({what}): `vgprscope toolchains "
                             f"remove {version}` deletes it, and the next run installs it again")
    if not (env / MARKER).is_file():
        check_offered(version)  # before a venv, pip or a lock file: a release the index does not have
        try:
            with _locked(store() / f".{env.name}.lock"):
                if not (env / MARKER).is_file():
                    clean_stale()
                    _create(version, env, say)
        except OSError as exc:  # the store itself: a file in its place, a read-only mount
            raise ToolchainError(f"cannot install Triton {version} into the toolchain store {store()}: "
                                 f"{_why(exc)}; set VGPRSCOPE_TOOLCHAIN_DIR to a writable directory") from None
    problem = _problem(env, version)
    if problem is not None:
        raise ToolchainError(f"the Triton {version} toolchain in {env} is broken ({problem}): "
                             f"`vgprscope toolchains remove {version}` deletes it, and the next run installs it again")
    return register(Toolchain("release", version, str(_python_of(env))))


def offered_releases() -> list[str] | None:
    """The Triton releases pip's index offers for this Python and platform (``pip index versions triton``),
    newest first; None where that cannot be told (no pip, no network): the install then says why itself."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", "triton", "--disable-pip-version-check"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env={**os.environ, "PIP_NO_INPUT": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"^Available versions:\s*(.+)$", done.stdout, re.M) if done.returncode == 0 else None
    return [v.strip() for v in found.group(1).split(",") if _VERSION.match(v.strip())] or None if found else None


def check_offered(version: str) -> None:
    """A ToolchainError naming the releases there are where pip's index does not offer ``version`` here."""
    offered = offered_releases()
    if offered is None or version in offered:
        return
    here = f"Python {sys.version_info.major}.{sys.version_info.minor} on {sys.platform}-{platform.machine()}"
    listed = _versions_line(", ".join(reversed(offered)))
    raise ToolchainError(f"cannot install Triton {version}: not a release with a wheel for {here}; allowed: "
                         f"{listed} (`pip index versions triton` lists them)")


def installed_release(version: str) -> Toolchain | None:
    """Triton ``version`` if it is already installed in the store, else None (nothing is installed)."""
    if not _VERSION.match(version) or not (store() / _env_name(version) / MARKER).is_file():
        return None
    return release(version)


def _why(exc: OSError) -> str:
    """An OSError's reason in words, a read-only file system named as such (not as a permission)."""
    import errno

    if exc.errno == errno.EROFS:
        return "it is on a read-only file system"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a file is in the way where a directory must be"
    return exc.strerror or str(exc)


def _problem(env: Path, version: str) -> str | None:
    """Why an installed toolchain cannot compile (its marker unreadable, its interpreter gone), else None."""
    try:
        marker = json.loads((env / MARKER).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        marker = None
    if not isinstance(marker, dict) or marker.get("version") != version:
        return f"its {MARKER} is unreadable or names another release"
    if not _python_of(env).exists():
        return f"its interpreter {_python_of(env)} is missing"
    return None


def _stamp(python: Path) -> str | None:
    """What changes when an environment's Triton does: its triton/__init__.py's path, size and mtime."""
    root = python.parent.parent
    found = sorted(root.glob("lib/python*/site-packages/triton/__init__.py"))
    if not found:
        return None
    st = found[0].stat()
    return f"{found[0]}:{st.st_size}:{st.st_mtime_ns}"


def environment(path: str) -> Toolchain:
    """An existing Python environment (its directory, or its interpreter) that has Triton. Its version is
    asked once per state of its Triton (remembered in the store), so a warm run starts no interpreter."""
    p = Path(path).expanduser()
    python = _python_of(p) if p.is_dir() else p
    if not python.exists():
        raise ToolchainError(f"{path} is neither a Python environment nor an interpreter; allowed: a release "
                             "number (3.8.0), a range (3.4.0..3.9.0), or an environment's directory")
    py = str(python.absolute())
    memo_file = store() / "environments.json"
    stamp = _stamp(python.absolute())
    try:
        memo = json.loads(memo_file.read_text())
    except (OSError, ValueError):
        memo = {}
    if stamp is not None and isinstance(memo, dict) and memo.get(py, {}).get("stamp") == stamp:
        version = memo[py]["version"]
    else:
        version = probe(py)
        if stamp is not None:
            memo = memo if isinstance(memo, dict) else {}
            memo[py] = {"stamp": stamp, "version": version}
            with contextlib.suppress(OSError, VgprscopeError):  # a memo: a store that cannot keep it costs a probe
                from ..core.fsutil import atomic_write

                atomic_write(memo_file, json.dumps(memo, indent=1) + "\n")
    return register(Toolchain("environment", version, py))


def resolve(spec: str, say: Callable[[str], None] = lambda s: None) -> Toolchain:
    """``3.8.0`` (a release), a path (an environment), or ``installed`` / "" (the Triton beside vgprscope)."""
    spec = spec.strip()
    if spec in ("", "installed"):
        return installed()
    if "/" in spec or spec.startswith(".") or spec.startswith("~"):
        return environment(spec)
    try:
        here = installed()
    except VgprscopeError:  # no Triton beside vgprscope: every release is a toolchain of its own
        here = None
    spec = normal_release(spec)
    if here is not None and spec == here.version:  # the release beside vgprscope: nothing to install
        return here
    return release(spec, say)


def releases_on_pypi() -> list[str]:
    """Every final Triton release on PyPI with a wheel for this Python and platform, oldest first."""
    import platform
    import urllib.request

    try:
        with urllib.request.urlopen(PYPI_JSON, timeout=20) as r:
            doc = json.load(r)
    except (OSError, ValueError) as exc:
        raise ToolchainError(f"cannot list Triton's releases: PyPI cannot be reached ({exc}); give versions one "
                             "by one") from None
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    machine = platform.machine()
    out = []
    for v, files in doc.get("releases", {}).items():
        if not _VERSION.match(v):
            continue
        if any(tag in f.get("filename", "") and machine in f.get("filename", "") for f in files):
            out.append(v)
    return sorted(out, key=version_tuple)


def is_range(spec: str) -> bool:
    """Whether ``spec`` names several releases (``3.4.0..3.9.0``)."""
    return _RANGE.match(spec.strip()) is not None


def expand(specs: list[str]) -> list[str]:
    """Toolchain specs with ``A..B`` ranges replaced by every release in them (inclusive) on PyPI."""
    out: list[str] = []
    for spec in specs:
        m = _RANGE.match(spec.strip())
        if m is None:
            out.append(spec.strip())
            continue
        lo, hi = version_tuple(m[1]), version_tuple(m[2])
        if lo > hi:
            raise ToolchainError(f"range {spec} runs backwards; allowed: OLDER..NEWER, e.g. 3.4.0..3.9.0")
        found = [v for v in releases_on_pypi() if lo <= version_tuple(v) <= hi and version_tuple(v) >= OLDEST]
        if not found:
            raise ToolchainError(f"no Triton release in {spec} has a wheel for this Python and platform")
        out += found
    return list(dict.fromkeys(out))


_ENV = re.compile(r"^triton-(\d+\.\d+(?:\.\d+)?)-py\d+$")
# an install under way or interrupted (partial), a removal under way or interrupted, by that process's id
_SCRATCH = re.compile(r"^\.(triton-(\d+\.\d+(?:\.\d+)?)-py\d+)\.(partial|removing)-(\d+)$")


@dataclass(frozen=True)
class StoreEntry:
    """A directory of the store: a whole toolchain (``problem`` None), a broken one (why), or the scratch of
    an install or removal (``pid``: the process doing it; ``alive``: whether it still runs)."""

    path: Path
    version: str
    size: int
    problem: str | None = None
    pid: int | None = None
    alive: bool = False

    @property
    def note(self) -> str:
        if self.pid is not None:
            return f"being installed by process {self.pid}" if self.alive else "left by an interrupted install"
        return f"broken: {self.problem}" if self.problem else ""


def _size(path: Path) -> int:
    total = 0
    for f in path.rglob("*"):
        with contextlib.suppress(OSError):
            if f.is_file() and not f.is_symlink():
                total += f.stat().st_size
    return total


def list_store() -> list[StoreEntry]:
    """Every directory of the store: whole toolchains, broken ones, and installs under way or interrupted."""
    root = store()
    if not root.is_dir():
        return []
    out: list[StoreEntry] = []
    for path in sorted(root.iterdir()):
        if (m := _ENV.match(path.name)) and (path.is_symlink() or not path.is_dir()):  # broken: removable
            out.append(StoreEntry(path, m[1], 0, _not_a_toolchain(path)))
            continue
        if not path.is_dir() or path.is_symlink():
            continue
        if m:
            out.append(StoreEntry(path, m[1], _size(path), _problem(path, m[1])))
        elif m := _SCRATCH.match(path.name):
            pid = int(m[4])
            out.append(StoreEntry(path, m[2], _size(path), pid=pid, alive=alive(pid)))
    return sorted(out, key=lambda e: (version_tuple(e.version), e.path.name))


def _not_a_toolchain(path: Path) -> str:
    """What stands where a toolchain's directory must be."""
    if not path.is_symlink():
        return "a file, not a toolchain's directory"
    return f"a symlink to {os.readlink(path)}, {'a directory' if path.is_dir() else 'which does not exist'}, not a toolchain"


def clean_stale() -> list[StoreEntry]:
    """Remove the scratch directories whose process is gone (an install killed by SIGTERM / SIGKILL leaves
    about 1 GB); the ones removed."""
    gone = [e for e in list_store() if e.pid is not None and not e.alive]
    for e in gone:
        shutil.rmtree(e.path, ignore_errors=True)
    return gone


def list_installed() -> list[tuple[Toolchain, int]]:
    """Every whole release in the store, with its size in bytes."""
    return [(Toolchain("release", e.version, str(_python_of(e.path))), e.size) for e in list_store()
            if e.pid is None and e.problem is None]


def remove(version: str) -> Path:
    """Delete a release's toolchain, whole or broken, and what an interrupted install of it left."""
    env = store() / _env_name(version)
    leftovers = [e for e in list_store() if e.version == version and e.pid is not None and not e.alive]
    there = env.is_symlink() or env.exists()
    if not there and not leftovers:
        have = ", ".join(dict.fromkeys(e.version for e in list_store() if e.pid is None or not e.alive)) or "none"
        raise ToolchainError(f"Triton {version} is not installed as a toolchain; installed: {have}")
    try:
        with _locked(store() / f".{env.name}.lock"):
            if env.is_symlink() or (env.exists() and not env.is_dir()):  # a link or a file in its place
                env.unlink()
            elif env.is_dir():
                doomed = env.with_name(f".{env.name}.removing-{os.getpid()}")
                env.rename(doomed)  # gone from view at once; then deleted
                shutil.rmtree(doomed, ignore_errors=True)
            for e in leftovers:
                shutil.rmtree(e.path, ignore_errors=True)
    except OSError as exc:
        raise ToolchainError(f"cannot remove Triton {version} from {store()}: {_why(exc)}") from None
    return env
