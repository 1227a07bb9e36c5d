"""``with vgprscope.capture() as cap: run_my_model()``: the CLI's capture, in this process, for a block.

The block runs with the capture hook installed (``runtime.hook.recording``): every launch through Triton's
JIT (on a GPU) or its interpreter (``TRITON_INTERPRET=1`` on a CPU, as ``vgprscope capture`` runs a CPU
command), on every thread, and every config of an autotuned kernel, is recorded as the CLI records it;
Triton's classes are restored when the block ends, however it ends. ``cap.capture`` is then the same
``Capture`` the CLI writes: ``cap.save(path)`` writes the file the gate and ``--capture`` read,
``cap.analyze(arch=...)`` (``frontier``, ``explain``) compiles its launches.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError

if TYPE_CHECKING:
    from ..analysis.analyze.result import AnalyzeResult
    from ..analysis.explain.result import ExplainResult
    from ..analysis.frontier.result import FrontierResult
    from ..captures.model import Capture, CapturedLaunch


class CaptureSession:
    """What a ``vgprscope.capture()`` block recorded (readable once the block has ended)."""

    def __init__(self) -> None:
        self._capture: Capture | None = None
        self._recording: Any = None
        self._dir: str | None = None
        self.notes: frozenset[str] = frozenset()  # what the hook saw go wrong (no GPU driver, no numpy)

    def __enter__(self) -> CaptureSession:
        from ..runtime import hook

        if self._recording is not None or self._capture is not None:
            raise UsageError("a vgprscope.capture() records one block; start another for the next")
        # the lines go to a directory, as the CLI's do: a process forked in the block records there too
        self._dir = tempfile.mkdtemp(prefix="vgprscope-capture-")
        self._recording = hook.recording(self._dir)
        self._recording.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        import importlib.metadata

        from ..captures.model import Capture
        from ..captures.run import gather

        try:
            self._recording.__exit__(kind, exc, tb)
        finally:
            directory = Path(self._dir or "")
            launches, errors, notes = gather(directory)
            shutil.rmtree(directory, ignore_errors=True)
            try:
                version = importlib.metadata.version("triton")
            except importlib.metadata.PackageNotFoundError:
                version = ""
            # the block's own exception goes on; what was recorded before it is kept
            self._capture = Capture(tuple(launches), tuple(sys.argv), version, None if kind else 0, tuple(errors))
            self.notes = frozenset(notes)
        from ..core.errors import NoGpuDriverError
        from ..runtime.interp import no_driver_hint

        if (hint := no_driver_hint(exc)) is not None:  # the block's own error, with what to do about it
            raise NoGpuDriverError(hint) from exc

    @property
    def capture(self) -> Capture:
        """The capture (``captures.model.Capture``), as ``vgprscope capture`` writes it."""
        if self._capture is None:
            raise UsageError("the capture is read after its with-block has ended")
        return self._capture

    @property
    def launches(self) -> tuple[CapturedLaunch, ...]:
        """Each distinct specialisation (each config of an autotuned kernel), in the order first seen."""
        return self.capture.launches

    @property
    def errors(self) -> tuple[str, ...]:
        """Launches the hook could not record, one line each."""
        return self.capture.errors

    def summary(self) -> str:
        return self.capture.summary()

    def __repr__(self) -> str:
        state = self.summary() if self._capture is not None else "recording" if self._recording else "not started"
        return f"CaptureSession({state})"

    def save(self, path: str | Path) -> Path:
        """Write the capture file (what ``vgprscope capture -o PATH`` writes; paths inside the project are
        relative to the file)."""
        from ..captures.model import save_capture
        from ..core.fsutil import check_writable

        path = Path(path)
        check_writable(path)
        save_capture(path, self.capture)
        return path

    def analyze(self, **selections: Any) -> AnalyzeResult:
        """``vgprscope.analyze(capture=self, **selections)``: each recorded launch compiled for each arch."""
        from .api import analyze

        return analyze(capture=self, **selections)

    def frontier(self, **selections: Any) -> FrontierResult:
        from .api import frontier

        return frontier(capture=self, **selections)

    def explain(self, **selections: Any) -> ExplainResult:
        from .api import explain

        return explain(capture=self, **selections)


def capture() -> CaptureSession:
    """Record every Triton launch of a with-block in this process:

    ``with vgprscope.capture() as cap: run_my_model()`` then ``cap.analyze(arch=["gfx942", "sm_90"])``,
    ``cap.save("cap.json")``, ``cap.launches``. On a CPU, set TRITON_INTERPRET=1 before the kernels are
    imported (as for ``vgprscope capture``)."""
    return CaptureSession()
