"""The exit codes live in one module (``core/exit_codes.py``): the commands, the error handler and the gate's
results (``CheckResult.exit_code``, ``DiffResult.exit_code``, their reports' ``exit_code``) take them from there,
and no command writes a number of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from vgprscope.core import exit_codes

CLI = Path(exit_codes.__file__).resolve().parent.parent / "cli"


@pytest.mark.parametrize("judged, passed, code", [(True, True, 0), (True, False, 1), (False, True, 2),
                                                  (False, False, 2)])
def test_the_gate_exits_by_its_verdict_only_where_it_judged(judged, passed, code):
    assert exit_codes.of_gate(judged, passed) == code


def test_a_signal_exits_as_a_shell_reports_it():
    assert exit_codes.INTERRUPTED == exit_codes.of_signal(2) == 130


def test_no_command_exits_with_a_number_of_its_own():
    """``typer.Exit(N)``, ``sys.exit(N)`` and ``exit_code = N`` with a literal N are codes written outside the one
    module."""
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, int) \
                    and ast.unparse(node.func) in ("typer.Exit", "sys.exit", "Exit", "exit", "SystemExit"):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []
