"""The README's `$ vgprscope ...` examples run, as written, and succeed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

README = Path(__file__).resolve().parent.parent / "README.md"
EXAMPLES = re.findall(r"^\$ (vgprscope .+)$", README.read_text(), re.M)
_register()


def test_readme_has_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("line", EXAMPLES)
def test_readme_example_runs(line):
    argv = shlex.split(line)[1:]
    if argv and argv[0] == "bench":
        pytest.skip("needs a GPU")
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, f"{line}\n{res.output}"
    assert res.stdout.strip()
