"""Entry point: ``vgprscope`` and ``python -m vgprscope``.

Subcommands live in their own modules and register themselves on ``app``; each module imports torch /
triton only inside its command function, so ``vgprscope --help`` stays fast.
"""

from __future__ import annotations

import typer

from .common import OneLineErrors
from .options import VersionOpt

app = typer.Typer(
    name="vgprscope",
    cls=OneLineErrors,  # typer's own parse errors as one stderr line, like every other error
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(version: VersionOpt = False) -> None:
    """Registers, spills, LDS and occupancy of Triton kernels on AMD and NVIDIA GPUs, compiled here without
    the GPUs.

    Exit codes: 0 ok; 1 a regression, a failed check, or no row compiled (rows still printed, stderr says
    why); 2 a usage error found before anything compiles (one line on stderr), or results that cannot be
    compared.
    """


def _register() -> None:
    # each module registers its commands on app, in the order --help lists them
    from . import (  # noqa: F401
        analyze, bench, capture, compare, diff, explain, frontier, gate, info, occupancy_cmd, report, scan,
    )


def main(argv: list[str] | None = None) -> None:
    import sys

    from . import help_layout

    _register()
    if help_layout.wanted(sys.argv[1:] if argv is None else argv):
        help_layout.apply()
    app(args=argv, prog_name="vgprscope")
