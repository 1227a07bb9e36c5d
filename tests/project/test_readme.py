"""The README's `$ vgprscope ...` examples and its Python example run, as written, and succeed; and the site's
pages whose examples say more than "it ran" (docs/reference/python.md, docs/tasks/gluon.md,
docs/tasks/pytest-plugin.md: tests/project/test_docs_site.py runs every other example) are checked here for what
they print."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
EXAMPLES = re.findall(r"^\$ (vgprscope .+)$", README.read_text(), re.M)
_register()


def test_readme_has_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("line", EXAMPLES)
def test_readme_example_runs(line, tmp_path, monkeypatch):
    argv = shlex.split(line)[1:]
    if argv and argv[0] == "bench":
        pytest.skip("needs a GPU")
    monkeypatch.chdir(tmp_path)  # a file an example writes (-o report.html) lands here
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, f"{line}\n{res.output}"
    written = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-o", "--output")]
    if written:  # the example writes a file (an HTML report): it is there, and stdout stays empty
        assert all((tmp_path / w).stat().st_size > 0 for w in written), written
    else:
        assert res.stdout.strip()


# ---- the Python API page: every example runs, as written, as a script of its own ---------------------------

SECTION = (DOCS / "reference" / "python.md").read_text().split("\n## The calls\n", 1)[0]
PYTHON_EXAMPLES = re.findall(r"^```python\n(.*?)^```$", SECTION, re.M | re.S)
README_PYTHON = re.findall(r"^```python\n(.*?)^```$", README.read_text(), re.M | re.S)


def test_from_python_has_examples():
    assert len(PYTHON_EXAMPLES) >= 3
    assert any("vgprscope.pointer(" in ex for ex in PYTHON_EXAMPLES)
    assert any("vgprscope.capture()" in ex for ex in PYTHON_EXAMPLES)


@pytest.mark.parametrize("example", list(dict.fromkeys(PYTHON_EXAMPLES + README_PYTHON)),
                         ids=lambda ex: ex.splitlines()[0][:40])
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


# ---- the Gluon page: its example runs as a script of its own -----------------------------------------------

GLUON_SECTION = (DOCS / "tasks" / "gluon.md").read_text()
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


# ---- the pytest plugin page: the example is a test file a user's pytest runs -------------------------------

PLUGIN_SECTION = (DOCS / "tasks" / "pytest-plugin.md").read_text()


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
