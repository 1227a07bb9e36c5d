"""``vgprscope capture [-o FILE] -- COMMAND [ARGS...]``: record the Triton launches of the user's own command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app
from .common import err, handles_errors


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@handles_errors
def capture(
    command: Annotated[Optional[list[str]], typer.Argument(
        help="The command to run, after --: a test suite, a benchmark, a model script")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Capture file to write (atomically)")] = Path(
        "vgprscope-capture.json"),
) -> None:
    """Run COMMAND and record every distinct Triton launch specialisation it makes; exits with its code.

    Works through the GPU's JIT or under TRITON_INTERPRET=1 on a CPU; every config of an autotuned kernel
    is recorded.

    Analyse the file anywhere: vgprscope analyze --capture FILE --arch gfx942 --arch sm_90.
    """
    from ..capture.model import save_capture
    from ..capture.run import run_command
    from ..errors import UsageError

    if not command:
        raise UsageError("no command given; usage: vgprscope capture [-o FILE] -- COMMAND [ARGS...]")
    try:
        result = run_command(command)
    except KeyboardInterrupt:
        err(f"interrupted; {output} was left as it was")
        raise typer.Exit(130) from None
    save_capture(output, result)
    for line in result.errors:
        err(f"warning: {line}")
    err(f"wrote {output}: {result.summary()}")
    if not result.launches:
        err(f"the command launched no Triton kernel (exit code {result.exit_code}); nothing to analyse")
        raise typer.Exit(result.exit_code or 1)
    raise typer.Exit(result.exit_code)


CaptureOpt = Annotated[Optional[Path], typer.Option(
    "--capture", help="Compile the specialisations of this capture file (vgprscope capture) instead of the "
    "bundled variants (with them, when --variant is given)")]
