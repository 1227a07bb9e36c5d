"""Entry point: ``vgprscope`` and ``python -m vgprscope``.

Subcommands live in their own modules, each adding its commands to ``app`` with ``register(app)``; each
module imports torch / triton only inside its command function, so ``vgprscope --help`` stays fast.

``app`` is made on first use (``from .app import app``), not when this module is imported: the entry point
imports ``main`` first, so that a Ctrl-C while typer and the commands load is already its one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    app: typer.Typer


def _make_app() -> Any:
    import typer

    from .common import OneLineErrors
    from .options import VersionOpt

    made = typer.Typer(
        name="vgprscope",
        cls=OneLineErrors,  # typer's own parse errors as one stderr line, like every other error
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    def root(version: bool = False) -> None:
        """Registers, spills, LDS and occupancy of Triton kernels on AMD and NVIDIA GPUs, compiled here without
        the GPUs.

        Exit codes: 0 ok; 1 a regression, a failed check, or no row compiled (rows still printed, stderr says
        why); 2 a usage error found before anything compiles (one line on stderr), or results that cannot be
        compared.
        """

    root.__annotations__ = {"version": VersionOpt, "return": None}  # typer reads the option from it
    made.callback()(root)
    return made


def __getattr__(name: str) -> Any:
    if name == "app":
        globals()["app"] = made = _make_app()
        return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_registered = False


def _register() -> None:
    """Adds every command to ``app`` (once), in the order --help lists them."""
    global _registered
    if _registered:
        return
    _registered = True
    from . import (
        analyze,
        bench,
        capture,
        check,
        compare,
        diff,
        explain,
        frontier,
        info,
        occupancy_cmd,
        scan,
        toolchains,
    )

    made = globals()["app"] if "app" in globals() else __getattr__("app")
    for module in (analyze, bench, capture, compare, diff, toolchains, explain, frontier, check, info, occupancy_cmd):
        module.register(made)
    scan.register(made)


def main(argv: list[str] | None = None) -> None:
    import signal
    import sys

    try:  # a Ctrl-C while typer and the commands load: Python's own KeyboardInterrupt, caught below
        from .common import CtrlC

        CtrlC.seen = CtrlC.said = False  # this command's Ctrl-C, not an earlier one's in the same process
        # from here on a Ctrl-C is also remembered (CtrlC), wherever it lands
        previous = signal.signal(signal.SIGINT, CtrlC.handler)
        try:
            _register()
            from . import help_layout
            from .app import app

            if help_layout.wanted(sys.argv[1:] if argv is None else argv):
                help_layout.apply()
            app(args=argv, prog_name="vgprscope")
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN if CtrlC.seen else previous)
            if argv is None:
                _quiet_teardown_after_an_in_process_compile()
    except KeyboardInterrupt:
        from .common import interrupted

        interrupted()
        _exit_interrupted(argv)
    except SystemExit:
        ctrl_c = getattr(sys.modules.get(f"{__package__}.common"), "CtrlC", None)
        if ctrl_c is not None and ctrl_c.seen:
            _exit_interrupted(argv)
        raise


def _quiet_teardown_after_an_in_process_compile() -> None:
    """The program (the entry point, not a caller of ``main(argv)``) that compiled in this process (one job: no
    pool) ran Triton's code generator; libtriton's nanobind then lists Triton's own objects as leaked while the
    interpreter ends (after a Gluon compile: a dozen lines under the command's output, nothing of the user's
    kernels). The command's output is written by then; stderr is closed for the teardown, as Triton closes it in
    its own compile workers. A run that compiled nothing here (a warm one, a pool's) keeps it."""
    import atexit
    import sys

    if "triton._C.libtriton" not in sys.modules:
        return

    def quiet() -> None:
        import os

        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, 2)
        os.close(descriptor)

    atexit.register(quiet)


def _exit_interrupted(argv: list[str] | None) -> None:
    """Exit 130 after a Ctrl-C's one line. The program itself (no ``argv``: the entry point) ends here, its
    output flushed, without the interpreter's own exit, which ended one run in 50 by SIGINT (exit -2) after
    that line; the compile workers are killed already and every file is written whole or not at all."""
    import os
    import signal
    import sys

    from ..core.exit_codes import INTERRUPTED

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if argv is not None:  # a caller's process (a test): a plain exit
        sys.exit(INTERRUPTED)
    # the pools the interrupted compile did not kill (the installed Triton's while another one compiled, an idle
    # one), with their scratch directories: this exit runs no atexit handler
    executors = sys.modules.get("vgprscope.compile.executors")
    if executors is not None:
        executors.kill_pools()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(INTERRUPTED)
