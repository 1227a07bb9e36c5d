"""The README's `$ vgprscope ...` examples run, as written, and succeed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

README = Path(__file__).resolve().parents[2] / "README.md"
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


# ---- "From Python": every example of the section runs, as written, as a script of its own ----------------

SECTION = README.read_text().split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
PYTHON_EXAMPLES = re.findall(r"^```python\n(.*?)^```$", SECTION, re.M | re.S)


def test_from_python_has_examples():
    assert len(PYTHON_EXAMPLES) >= 3
    assert any("vgprscope.pointer(" in ex for ex in PYTHON_EXAMPLES)
    assert any("vgprscope.capture()" in ex for ex in PYTHON_EXAMPLES)


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda ex: ex.splitlines()[0][:40])
def test_from_python_example_runs(example, tmp_path):
    """GPU-free, in a user's environment: no TRITON_INTERPRET unless the example sets it, the repository
    only as the installed package."""
    import os
    import subprocess
    import sys

    script = tmp_path / "example.py"
    script.write_text(example)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "gfx942" in out and "sm_90" in out, out
    assert "error" not in out.lower(), out


# ---- "Gluon": its example runs as a script of its own ------------------------------------------------------

GLUON_SECTION = README.read_text().split("\n## Gluon\n", 1)[1].split("\n## ", 1)[0]
GLUON_EXAMPLES = re.findall(r"^```python\n(.*?)^```$", GLUON_SECTION, re.M | re.S)


def test_gluon_example_runs_and_names_the_warp_size(tmp_path):
    """A @gluon.jit kernel analysed GPU-free: its 32-thread-warp layout compiles on sm_90 and is a row naming
    the warp size on gfx942; laid out for 64-thread warps it compiles on gfx942."""
    import os
    import subprocess
    import sys

    (example,) = GLUON_EXAMPLES
    assert "@gluon.jit" in example and "vgprscope.analyze(scale" in example
    script = tmp_path / "example.py"
    script.write_text(example)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = " ".join(done.stdout.split())
    first, second = done.stdout.split("vgprscope analyze")[1:]
    # rows: the module and kernel (its first row only), the arch, the counts; a config all rows share is in the title
    assert re.search(r"^example\.py\s+scale\s+sm_90\s+\d+\s.* ok$", first, re.M), first
    assert re.search(r"^\s+gfx942\s+-\s.*✗ \[1\]$", first, re.M), first
    assert re.search(r"^example\.py\s+scale\s+gfx942\s+(fp32 BLOCK=1024 w4\s+)?\d+\s", second, re.M), second
    assert "[1]" not in second
    assert "[1] the kernel's layouts are written for 32-thread warps; gfx942 runs 64-thread warps" in out, out


# ---- "Budgets in your test suite": the example is a test file a user's pytest runs ------------------------

PLUGIN_SECTION = README.read_text().split("\n## Budgets in your test suite (pytest plugin)\n", 1)[1].split("\n## ", 1)[0]


def test_the_pytest_plugin_example_runs_as_a_users_test_file(tmp_path):
    import os
    import subprocess
    import sys

    (example,) = re.findall(r"^```python\n(.*?)^```$", PLUGIN_SECTION, re.M | re.S)
    (tmp_path / "test_example.py").write_text(example)
    report = tmp_path / "costs.json"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path),
                           f"--vgprscope-report={report}"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout
    import json

    rows = json.loads(report.read_text())["rows"]
    assert {(r["kernel"], r["arch"]) for r in rows} == {("scale_kernel", a) for a in ("gfx942", "sm_90", "gfx950")}
