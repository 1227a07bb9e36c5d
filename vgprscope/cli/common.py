"""What the commands share: error handling, option validation, output writing (the options themselves:
``options``).

Exit codes (every command; also in README and each command's --help):
0  ok.
1  a regression or failed check, or nothing to show: the command line was well-formed but no row compiled
   or can launch (each selected variant refused the config, e.g. ``--head-dim 100000`` or
   ``--block-m 512``, the compiler failed, or the kernel needs more LDS than the arch has). The failed rows
   are still printed, each with its reason, and each refusal in a note; stderr says why in one line.
2  the command line itself is wrong, found before anything compiles: an unknown name, an empty value, a
   value outside the range its --help gives or that no kernel can take (``--head-dim 0``, ``--shape 1,2,3``,
   ``--arch ''``, ``--block-m 100`` or ``--num-warps 3``: Triton takes powers of two only), a missing,
   empty or broken ``--kernel-dir``, an ``--output`` that cannot be written,
   a missing optional dependency; or results that cannot be compared. One line on stderr, nothing on
   stdout.
The line between 1 and 2: what the tool knows for any kernel is checked here (2); what a variant's own
``check_config`` refuses is that variant's row (1 when every row is such a refusal or failure), since
another kernel directory may take it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from ..core import exit_codes
from ..core.errors import OutputError, VgprscopeError
from ..core.fsutil import atomic_write, check_writable


def err(message: str) -> None:
    """A diagnostic on stderr; tables and data go to stdout. On a terminal it is folded at spaces to the
    terminal's width (the terminal would cut words); in a pipe or a log it stays one line, for grep."""
    print(fold_for_terminal(f"vgprscope: {message}", sys.stderr), file=sys.stderr)


def fold_for_terminal(text: str, stream: Any) -> str:
    """``text`` folded at spaces, continuation lines indented, where ``stream`` is a terminal narrower than it."""
    import shutil
    import textwrap

    try:
        tty = stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or odd stream: as a pipe
        tty = False
    width = shutil.get_terminal_size().columns if tty else 0
    if not tty or len(text) <= width or width < 20:
        return text
    return "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False)) or text


@contextlib.contextmanager
def warnings_as_diagnostics() -> Iterator[None]:
    """The core's warnings (a compile cache that cannot be written, ...) as one stderr line each, once."""
    shown: set[str] = set()

    from ..compile.cache import CacheWarning

    original = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, CacheWarning):  # a library's own warning: Python's way, unchanged
            original(message, category, filename, lineno, file, line)
            return
        text = str(message)
        if text not in shown:
            shown.add(text)
            err(f"warning: {text}")

    with warnings.catch_warnings():
        warnings.simplefilter("always", CacheWarning)  # the core's own; others keep Python's defaults
        warnings.showwarning = show
        yield


def exit_code_of(exc: VgprscopeError) -> int:
    """The CLI's exit code of one of the core's errors (``exit_codes.of_error``)."""
    return exit_codes.of_error(exc)


def handles_errors(fn: Callable) -> Callable:
    """Turn the core's typed errors into one stderr line and their exit code, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from ..report.formats import rendering_to_file

        try:
            # a table written with --output is laid out like one in a pipe ($COLUMNS or 100), without colour
            with rendering_to_file(kwargs.get("output") is not None), warnings_as_diagnostics():
                result = fn(*args, **kwargs)
        except KeyboardInterrupt:
            # the compile workers are killed, not waited for (compile.executors): stopping takes well under a second
            raise interrupted() from None
        except VgprscopeError as exc:
            if CtrlC.seen:
                raise interrupted() from None
            err(f"error: {exc}")
            raise typer.Exit(exit_code_of(exc)) from None
        except typer.Exit:
            if CtrlC.seen:
                raise interrupted() from None
            raise
        if CtrlC.seen:  # a Ctrl-C that a finalizer or a library swallowed still stops the command
            raise interrupted()
        return result

    return wrapper


INTERRUPTED = "interrupted: stopped the running compiles; no output file was written"


class CtrlC:
    """Whether this command got a Ctrl-C (SIGINT): it raises KeyboardInterrupt, and is remembered, so that
    one lost where Python cannot raise it (a finalizer, a callback) still ends the command with exit 130."""

    seen = False
    said = False

    @classmethod
    def handler(cls, signum, frame):
        cls.seen = True
        raise KeyboardInterrupt


def interrupted() -> typer.Exit:
    """The one line of a Ctrl-C, whenever it came; exit 130 (128 + SIGINT) as a shell reports it."""
    if not CtrlC.said:
        CtrlC.said = True
        err(INTERRUPTED)
    return typer.Exit(exit_codes.INTERRUPTED)


def nothing_compiled(statuses: list[str], what: str = "compiled or can launch") -> str:
    """The one stderr line of exit 1 when no row succeeded: the reason, when every row shares it."""
    reasons = list(dict.fromkeys(statuses))
    if len(reasons) == 1:
        return f"error: no row {what}; every row ({len(statuses)}) says: {reasons[0]}"
    return (f"error: no row {what}: {len(statuses)} rows, {len(reasons)} reasons (each in its row's "
            f"status); the first: {reasons[0]}")


# click's exceptions as typer raises them (typer >= 0.29 vendors its own copy of click)
_click_exceptions = importlib.import_module(typer.BadParameter.__module__)


def reflow(text: str | None) -> str | None:
    """A docstring's paragraphs as single lines: typer >= 0.29 keeps a paragraph's line breaks and then wraps
    to the terminal, so a line of the source cut every line of the help in two. List items keep their lines."""
    if not text:
        return text
    import inspect

    paragraphs = []
    for para in inspect.cleandoc(text).split("\n\n"):
        lines: list[str] = []
        for line in para.splitlines():
            item = line.lstrip().startswith(("- ", "* ", "\b")) or line.startswith(" ")
            if lines and not item and not lines[-1].startswith("\b"):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.rstrip())
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


class ReflowedHelp(TyperGroup):
    """A group whose help, and each subcommand's, reads as paragraphs at any terminal width."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.help = reflow(self.help)

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            cmd.help = reflow(cmd.help)
        return cmd


class OneLineErrors(ReflowedHelp):
    """Typer's own parse errors (a value that is not a number, below an option's minimum, not one of its
    choices) as one stderr line like the core's errors, instead of a usage block and a framed panel."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _hold_closed_stderr()
        _hold_closed_stdout()
        real_stdout = sys.stdout
        if real_stdout is not None:
            sys.stdout = _GuardedStdout(real_stdout)
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False,
                              **extra)
            if sys.stdout is not None:  # what print() left in the buffer fails here, not at exit
                sys.stdout.flush()
        except StdoutError as exc:  # outside a command's handles_errors: --version, the final flush
            err(f"error: {exc}")
            sys.exit(exit_code_of(exc))
        except _click_exceptions.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # typer printed the help while raising it
                sys.exit(exc.exit_code)  # click's own code
            ctx = getattr(exc, "ctx", None)
            where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            err(f"error: {exc.format_message()}{where}")
            sys.exit(exc.exit_code)
        except (typer.Abort, getattr(_click_exceptions, "Abort", typer.Abort)) as exc:
            if CtrlC.seen or isinstance(exc.__context__, KeyboardInterrupt):  # click's word for a Ctrl-C
                interrupted()
                sys.exit(exit_codes.INTERRUPTED)
            err("aborted")
            sys.exit(exit_codes.FAILURE)
        finally:
            if isinstance(sys.stdout, _GuardedStdout):
                sys.stdout = real_stdout
        if CtrlC.seen:  # typer turns a Ctrl-C outside a command (the options' callbacks) into a silent 130
            rv = interrupted().exit_code
        # standalone_mode=False returns an explicit typer.Exit's code, else the command's return value
        code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


def _hold_closed_stderr() -> None:
    """Started with stderr closed (``2>&-``): diagnostics go to /dev/null, and the command writes its output
    and exits by its verdict as with stderr open (Python leaves sys.stderr None, and every diagnostic, the
    progress bar included, failed on it)."""
    if sys.stderr is not None or not _devnull_on(2):
        return
    sys.stderr = open(2, "w", closefd=False, buffering=1, errors="backslashreplace")


def _devnull_on(fd: int) -> bool:
    """/dev/null on descriptor ``fd`` when it is closed; whether ``fd`` is open now."""
    try:
        os.fstat(fd)
        return True
    except OSError:
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != fd:
            os.dup2(devnull, fd)
            os.close(devnull)
        return True
    except OSError:
        return False


def _hold_closed_stdout() -> None:
    """Started with stdout closed (``>&-``): put /dev/null on descriptor 1, so that no file this process
    opens (a cache entry) and no child it starts (a compile worker) takes it as its stdout. sys.stdout stays
    None, and writing a table says stdout is closed."""
    _devnull_on(1)


class StdoutError(OutputError):
    """stdout cannot be written: closed, a full device, a pipe whose reader left (exit 2, one line)."""


class _GuardedStdout:
    """sys.stdout while a command runs: a write or flush that fails is a StdoutError, one line like every
    other error (an OSError would be a traceback, and click turns EPIPE into a silent exit 1)."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, text):
        try:
            try:
                return self._inner.write(text)
            except UnicodeEncodeError:  # a latin-1 or ascii stdout: the marks in ASCII, never a traceback
                return self._inner.write(ascii_marks(text, getattr(self._inner, "encoding", None) or "ascii"))
        except OSError as exc:
            raise stdout_error(exc) from None

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        try:
            self._inner.flush()
        except OSError as exc:
            raise stdout_error(exc) from None

    def __getattr__(self, name):
        return getattr(self._inner, name)


# the marks of tables and legends, each one ASCII character (columns keep their widths)
_ASCII = {"✓": "v", "✗": "X", "±": "~", "Δ": "d", "…": ".", "→": ">", "×": "x", "≤": "<", "≥": ">"}


def ascii_marks(text: str, encoding: str) -> str:
    """``text`` with every character ``encoding`` lacks replaced by one ASCII character: the marks by their
    look-alikes (✓ v, ✗ X, ± ~, Δ d), box-drawing lines by - | +, anything else by ?."""
    import unicodedata

    def one(ch: str) -> str:
        try:
            ch.encode(encoding)
            return ch
        except (UnicodeEncodeError, LookupError):
            pass
        if ch in _ASCII:
            return _ASCII[ch]
        name = unicodedata.name(ch, "")
        if name.startswith("BOX DRAWINGS"):
            return "-" if "HORIZONTAL" in name and "VERTICAL" not in name else "|" if "VERTICAL" in name and \
                "HORIZONTAL" not in name and "AND" not in name else "+"
        return "?"

    return "".join(ch if ch.isascii() else one(ch) for ch in text)


# Option validation: small functions, each a typer callback raising typer.BadParameter (one line through
# OneLineErrors). Config options may later take grids (several values); these check one value each.

def command_line() -> str:
    """The command as the user typed it (for a report's "Reproduce" line), quoted for a POSIX shell."""
    import shlex

    return shlex.join(["vgprscope", *sys.argv[1:]])


def nonempty_names(values: list[str] | None) -> list[str] | None:
    """Repeatable, comma-separated names (--arch, --variant, --strategies): no empty name among them."""
    for item in values or []:
        if any(not piece.strip() for piece in item.split(",")):
            raise typer.BadParameter(f"{item!r} has an empty name; give names such as gfx942 or baseline, "
                                     "repeated or comma-separated")
    return values


STDOUT = "-"


def writable_output(value: Path | None) -> Path | None:
    """--output: refused before anything compiles when the file could not be written (a FIFO or a device
    is no file to write: give a file name, or ``-`` for stdout, which is the same as no --output)."""
    if value is not None and str(value) == STDOUT:
        return None
    if value is not None:
        try:
            check_writable(value)
        except OutputError as exc:
            hint = f", or {STDOUT} for stdout" if "not a regular file" in str(exc) else ""
            raise typer.BadParameter(f"{exc}{hint}") from None
    return value


def emit(text: str, output: Path | None) -> None:
    if output is None:
        write_stdout(text if text.endswith("\n") else text + "\n")
    else:
        atomic_write(output, text)
        err(f"wrote {output}")


def stdout_error(exc: OSError) -> StdoutError:
    """A write to stdout that failed (a full device, a reader that went away): one line, and stdout pointed
    at /dev/null so that the interpreter's own flush at exit does not fail again with a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
        os.close(devnull)
    except (OSError, ValueError):
        pass
    why = "the reader closed the pipe" if isinstance(exc, BrokenPipeError) else (exc.strerror or str(exc))
    return StdoutError(f"cannot write to stdout: {why}; nothing more was written (--output FILE writes a file)")


def write_stdout(text: str) -> None:
    """Tables and data to stdout, flushed, so a full device or a closed pipe is one error line here."""
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise StdoutError("cannot write to stdout: it is closed; give --output FILE, or leave stdout open")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        raise stdout_error(exc) from None


def in_project(given: dict[str, Any], config: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The kernels a command compiles in the user's project: the command line's, and for what it leaves out
    the project's ``[tool.vgprscope]`` (capture, kernel_dir, variants, archs), as ``check`` reads it
    (``library.gate.project_kernels``); and the header's line where that leaves the bundled variants."""
    from ..library.gate import project_kernels

    return project_kernels(given, config)


def headed(result: Any, note: str | None) -> Any:
    """A result whose header (under its machine line) says ``note``."""
    if not note:
        return result
    import dataclasses

    return dataclasses.replace(result, machine=result.machine.with_notes(note))
