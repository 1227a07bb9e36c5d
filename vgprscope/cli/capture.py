"""``vgprscope capture [-o FILE] -- COMMAND [ARGS...]``: record the Triton launches of the user's own command."""

from __future__ import annotations

from pathlib import Path

import typer

from ..core.exit_codes import FAILURE, of_signal
from .common import err, handles_errors
from .options import CaptureOutputOpt, CommandArg, KeepSourcesOpt


@handles_errors
def capture(command: CommandArg = None, output: CaptureOutputOpt = Path("vgprscope-capture.json"),
            keep_sources: KeepSourcesOpt = None) -> None:
    """Run COMMAND and record every distinct Triton launch specialisation it makes; exits with its code.

    Works through the GPU's JIT or under TRITON_INTERPRET=1 on a CPU; every config of an autotuned kernel
    is recorded.

    Analyse the file anywhere: vgprscope analyze --capture FILE --arch gfx942 --arch sm_90.
    """
    import signal

    from ..captures.model import save_capture
    from ..captures.run import CaptureInterrupted, run_command, signal_name
    from ..core.errors import UsageError
    from ..core.fsutil import check_writable

    if not command:
        raise UsageError("no command given; usage: vgprscope capture [-o FILE] -- COMMAND [ARGS...]")
    if str(output) == "-":
        raise UsageError("capture -o -: the capture is a file (the command's own output goes to stdout); "
                         "give a file name")
    check_writable(output)  # before the command runs, not after it
    if keep_sources is not None:
        if keep_sources.exists() and not keep_sources.is_dir():
            raise UsageError(f"--keep-sources {keep_sources}: a file, not a directory; give a directory (made if "
                             "absent)")
        check_writable(keep_sources / "x.py" if keep_sources.is_dir() else keep_sources)  # made after the command
    try:
        run = run_command(command, keep_sources)
    except (KeyboardInterrupt, CaptureInterrupted) as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        how = "interrupted" if signum == signal.SIGINT else f"stopped by {signal_name(signum)}"
        err(f"{how}; {output} was left as it was")
        raise typer.Exit(of_signal(signum)) from None
    result = run.capture
    save_capture(output, result)
    for line in result.errors:
        err(f"warning: {line}")
    err(f"wrote {output}: {result.summary()}")
    for note in sorted(run.notes - ({"no-gpu-driver"} if "gluon-interpreted" in run.notes else set())):
        err(f"hint: {HINTS[note]}")
    # a command killed by signal N (returncode -N) exits 128+N, as a shell reports it
    rc = result.exit_code or 0  # the command ran here: it has its exit code
    code = 128 - rc if rc < 0 else rc
    died = f"killed by {signal_name(-rc)}" if rc < 0 else f"exit code {code}"
    if not result.launches:
        err(f"the command launched no Triton kernel ({died}); nothing to analyse")
        raise typer.Exit(code or FAILURE)
    if rc < 0:
        err(f"the command was {died}")
    raise typer.Exit(code)


# What the hook saw go wrong in the command, and what to do about it (one line each).
HINTS = {
    "no-gpu-driver": "Triton found no GPU driver (\"0 active drivers\"); on a machine without a GPU, run the "
                     "command under Triton's interpreter: TRITON_INTERPRET=1 vgprscope capture -- ...",
    "interpreter-needs-numpy": "Triton's interpreter (TRITON_INTERPRET=1) needs numpy, which the command's "
                               "Python lacks: pip install numpy (vgprscope's bench extra has it)",
    "gluon-interpreted": "Gluon kernels do not run in Triton's interpreter (TRITON_INTERPRET=1): capture them on "
                         "a GPU, or analyse one here with vgprscope.analyze(kernel, *args, arch=...)",
}


def register(app: typer.Typer) -> None:
    """Adds this module's commands to ``app``, in the order --help lists them."""
    app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(capture)
