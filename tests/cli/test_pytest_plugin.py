"""The pytest plugin: a test's budget (``@pytest.mark.vgprscope(...)`` or the ``vgprscope`` fixture) holds every
Triton kernel the test launches, compiled for the budget's archs GPU-free; ``--vgprscope-report`` writes
what each test's kernels cost. Each case runs a user's test suite in a pytest of its own (``pytester``),
the kernels under Triton's interpreter as a CPU run needs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]

KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out
'''


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    pytester.makepyfile(my_ops=KERNEL)
    return pytester


def run(pytester, *args):
    # a process of its own: TRITON_INTERPRET must be set before Triton is imported
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def test_a_kernel_over_its_budget_fails_the_test_naming_kernel_arch_number_and_budget(suite):
    suite.makepyfile(test_ops='''
import pytest, torch
from my_ops import add

@pytest.mark.vgprscope(arch=["gfx942", "sm_90"], max_registers=1)
def test_add():
    x = torch.ones(1000)
    assert add(x, x).sum() == 2000
''')
    result = run(suite)
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "vgprscope budget exceeded:" in text
    over = [line for line in text.splitlines() if "max registers" in line and ", budget 1" in line]
    assert {("gfx942" in line, "sm_90" in line) for line in over} == {(True, False), (False, True)}
    assert all("add_kernel" in line and "BLOCK=256" in line for line in over)
    assert "Traceback" not in text


def test_kernels_within_their_budget_pass(suite):
    suite.makepyfile(test_ops='''
import pytest, torch
from my_ops import add

@pytest.mark.vgprscope(arch=["gfx942", "sm_90"], spills=0, max_registers=128, occupancy_at_least=2)
def test_add():
    x = torch.ones(1000)
    assert add(x, x).sum() == 2000

def test_add_with_the_fixture(vgprscope):
    vgprscope.budget(arch="gfx950", spills=0, max_lds=0)
    x = torch.ones(10)
    assert add(x, x).sum() == 20
''')
    run(suite).assert_outcomes(passed=2)


def test_the_fixture_budget_is_held_too(suite):
    suite.makepyfile(test_ops='''
import torch
from my_ops import add

def test_add(vgprscope):
    vgprscope.budget(arch=["sm_90"], max_registers=1)
    add(torch.ones(10), torch.ones(10))
''')
    result = run(suite)
    result.assert_outcomes(failed=1)
    assert "sm_90" in result.stdout.str() and ", budget 1" in result.stdout.str()


def test_a_budgeted_test_that_launches_no_kernel_fails_and_a_typo_is_refused(suite):
    suite.makepyfile(test_ops='''
import pytest

@pytest.mark.vgprscope(arch=["gfx942"], spills=0)
def test_nothing():
    pass

@pytest.mark.vgprscope(arch=["gfx942"], max_regs=3)
def test_typo():
    pass
''')
    result = run(suite)
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "launched no Triton kernel" in text
    assert "vgprscope budget 'max_regs' is not allowed; allowed: spills, max_registers" in text


def test_the_report_writes_what_every_tests_kernels_cost(suite):
    suite.makepyfile(test_ops='''
import torch
from my_ops import add

def test_add():
    add(torch.ones(10), torch.ones(10))

def test_plain():
    pass
''')
    out = suite.path / "costs.json"
    run(suite, f"--vgprscope-report={out}", "--vgprscope-arch=gfx942").assert_outcomes(passed=2)
    rows = json.loads(out.read_text())["rows"]
    assert [(r["test"], r["kernel"], r["arch"], r["status"]) for r in rows] == [
        ("test_ops.py::test_add", "add_kernel", "gfx942", "ok")]
    assert rows[0]["max_registers"] > 0 and rows[0]["spills"] == 0 and rows[0]["occupancy_at_least"] >= 1


def test_a_suite_that_uses_no_budget_imports_nothing_of_vgprscope_beyond_the_plugin(tmp_path):
    """The plugin is loaded by every pytest run in an environment with vgprscope installed: without a
    budget or a report it must add no import (what a run that does not use it pays)."""
    (tmp_path / "test_plain.py").write_text("import sys\n\ndef test_plain():\n"
                                            "    mods = sorted(m for m in sys.modules if m.startswith(('vgprscope', "
                                            "'triton', 'torch', 'pandas')))\n"
                                            "    print('MODULES', mods)\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES"))
    loaded = eval(line.removeprefix("MODULES "))
    assert "vgprscope.cli.pytest_plugin" in loaded  # the plugin is registered...
    assert not [m for m in loaded if m.startswith(("triton", "torch", "pandas", "vgprscope.library",
                                                   "vgprscope.compile", "vgprscope.capture"))]  # ...and alone
