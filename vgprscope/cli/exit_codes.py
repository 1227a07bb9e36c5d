"""Every exit code of the command line, in one module (pip keeps its own so); the commands, the error handler
and the entry point take them from here, and the README and ``vgprscope --help`` say the same.

- ``SUCCESS`` 0: the command did what was asked.
- ``FAILURE`` 1: a regression, a failed check, a kernel that cannot launch, or no row that compiled (the rows
  are still printed, and stderr says why in one line).
- ``USAGE`` 2: bad input found before anything compiles (one line on stderr), an extra that is not installed,
  or results that cannot be compared (a gate's verdict that cannot be given).
- ``INTERRUPTED`` 130: a Ctrl-C (128 + SIGINT, as a shell reports it); a command ``capture`` ran that a signal
  N ended exits 128 + N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.errors import VgprscopeError

SUCCESS = 0
FAILURE = 1
USAGE = 2
INTERRUPTED = 130  # 128 + SIGINT (2)


def of_verdict(passed: bool) -> int:
    return SUCCESS if passed else FAILURE


def of_signal(signum: int) -> int:
    """A process ended by signal ``signum``, as a shell reports it."""
    return 128 + signum


def of_error(exc: VgprscopeError) -> int:
    """The exit code of one of the core's errors (the core's exceptions carry none): each is the input or the
    environment, found before a result."""
    return USAGE
