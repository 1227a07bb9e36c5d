"""Test-session setup.

- Kernels run on the CPU through Triton's interpreter: TRITON_INTERPRET must be set before triton is
  imported. Compiles are unaffected: the compile engine runs them in worker processes with it off.
- One compile cache per test session, so tests never read or write the user's cache.
- Tests marked ``gpu`` are skipped where no CUDA / ROCm device is visible.
- Tables are laid out for $COLUMNS, else 100 columns in a pipe; the tests read that 100-column layout, so a
  width exported in the shell (or the COLUMNS=80 pytest-xdist gives its workers) is dropped. A test that wants
  another width sets it.
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)


def _session_dir(variable: str, prefix: str) -> None:
    """A directory of this test session's own for ``variable``, removed when the process that made it exits (a
    pytest-xdist controller outlives its workers, which inherit the variable); one a developer exported is kept."""
    if variable in os.environ:
        return
    import atexit
    import shutil

    os.environ[variable] = path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)


_session_dir("VGPRSCOPE_CACHE_DIR", "vgprscope-test-cache-")
# Other Triton releases the toolchain tests install (about 250 MB each): once per session unless a developer
# points this at a directory kept between sessions.
_session_dir("VGPRSCOPE_TOOLCHAIN_DIR", "vgprscope-test-toolchains-")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# The property tests draw from small sampled sets and integers: the examples are fast, but CI's two workers share
# two cores with compile workers, so a draw can wait on the scheduler for seconds. That wait is the machine's, not
# the strategy's: neither the too-slow health check nor the per-example deadline says anything about the code under
# test there, and every example is still drawn and checked (max_examples is untouched).
settings.register_profile("vgprscope", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vgprscope")


def pytest_configure(config):
    """The guard against reading the files a committed fixture names (tests/fixture_paths.py): one audit hook
    per test process, watching from its first test on (a pytest-xdist controller runs none)."""
    import sys

    from fixture_paths import GUARD

    sys.addaudithook(GUARD)


@pytest.fixture(autouse=True)
def _reads_no_path_a_fixture_names():
    from fixture_paths import GUARD, watched_paths

    if not GUARD.started:
        GUARD.watched, GUARD.started = watched_paths(), True
    GUARD.take()
    yield
    opened = GUARD.take()
    assert not opened, (f"the test read {sorted(set(opened))}, named by a committed fixture: a file of the machine "
                        "that made it, gone on a fresh clone elsewhere (tests/fixture_paths.py)")


def _quiet_at_exit() -> None:
    descriptor = os.open(os.devnull, os.O_WRONLY)
    os.dup2(descriptor, 2)
    os.close(descriptor)


def pytest_unconfigure(config):
    # A process that ran Triton's code generator (the tests compile in-process) exits with libtriton's nanobind
    # listing Triton's own module-level objects as leaked, after the summary; Triton silences it in its workers.
    import atexit

    atexit.register(_quiet_at_exit)


def _has_gpu() -> bool:
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        # under the interpreter, GPU tests would not run on the GPU anyway
        return False
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any(item.get_closest_marker("gpu") for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="needs a CUDA or ROCm GPU (run with TRITON_INTERPRET=0 on a GPU machine)")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def release36():
    """Triton 3.6.0, the GPU machine's release, as a toolchain (installed once into $VGPRSCOPE_TOOLCHAIN_DIR);
    skipped where it cannot be had (no network)."""
    from vgprscope.compile import toolchains

    try:
        return toolchains.release("3.6.0")
    except toolchains.ToolchainError as exc:
        pytest.skip(f"Triton 3.6.0 cannot be installed as a toolchain here: {exc}")


class UserCapture:
    """A capture of one of the user scripts in tests/fixtures/user_kernels (``vgprscope capture -- python
    SCRIPT``), made once per test process for the tests that only read it: the capture file, and what the
    command printed. A test that changes it copies it first; the session's end checks nobody wrote it."""

    def __init__(self, path, stdout: str, stderr: str):
        self.path, self.stdout, self.stderr = path, stdout, stderr
        self.digest = self._digest()

    def _digest(self) -> str:
        import hashlib

        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def _user_capture(tmp_path_factory, script: str):
    import sys

    from capture_helpers import USER_KERNELS, cli

    out = tmp_path_factory.mktemp(f"capture-{script.removesuffix('.py')}") / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(USER_KERNELS / script),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    captured = UserCapture(out, done.stdout, done.stderr)
    yield captured
    assert captured._digest() == captured.digest, f"a test wrote the shared capture {out}: copy it first"


@pytest.fixture(scope="session")
def ops_capture(tmp_path_factory):
    """run_ops.py captured: ``add`` and the autotuned, @heuristics-decorated ``scale_rows``."""
    yield from _user_capture(tmp_path_factory, "run_ops.py")


@pytest.fixture(scope="session")
def matmul_capture(tmp_path_factory):
    """run_matmul.py captured: a user's GEMM with 64x64x32 tiles at 4 warps and 64x32x64 at 1 warp."""
    yield from _user_capture(tmp_path_factory, "run_matmul.py")
