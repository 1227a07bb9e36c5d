"""Typed exceptions of the core. Only the CLI turns them into exit codes (cli/common.py's
``handles_errors``); nothing here knows one."""

from __future__ import annotations


class VgprscopeError(Exception):
    """Base of every error vgprscope raises on purpose; its message is one line for the user."""


class UsageError(VgprscopeError):
    """The input cannot be used."""


class UnknownNameError(UsageError):
    def __init__(self, what: str, name: str, valid: list[str] | tuple[str, ...]):
        self.what, self.name, self.valid = what, name, tuple(valid)
        super().__init__(f"unknown {what} {name!r}; valid: {', '.join(self.valid)}")


class OutputError(UsageError):
    """An output file that cannot be written (a file where a directory must be, no permission)."""


class ConfigError(UsageError):
    """A kernel config that a variant or an arch cannot take."""


class NotComparableError(VgprscopeError):
    """Results that cannot be compared (missing or corrupt baseline, schema or version mismatch)."""


class TritonUnavailableError(VgprscopeError):
    """The installed Triton cannot do what was asked (missing, or no such target)."""


class NoGpuError(VgprscopeError):
    """A command that needs a GPU ran on a machine without one."""


class NoGpuDriverError(NoGpuError, RuntimeError):
    """Triton found no GPU driver ("0 active drivers") where a kernel ran: a machine without a GPU where
    Triton's interpreter was not on when the kernels were imported. A RuntimeError still, as Triton's was."""


class MissingExtraError(VgprscopeError):
    """A command needs an optional dependency (an extra) that is not installed."""

    def __init__(self, what: str, module: str, extra: str, install: str):
        self.module, self.extra = module, extra
        super().__init__(f"{what} needs {module}, which is not installed; install the {extra!r} extra: {install}")
