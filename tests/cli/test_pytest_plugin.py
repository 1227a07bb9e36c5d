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


# whether this pytest's in-process runs can keep every module but the suite's (``_suite_modules_alone``)
_IN_PROCESS = [True]


@pytest.fixture(scope="module")
def _suite_modules_alone(tmp_path_factory):
    """pytester's in-process run removes from sys.modules every module imported during it, to import the
    suite afresh next time: torch's extension cannot be imported a second time in one process, and a second
    copy of a module of vgprscope's, Triton's or the standard library's is a second copy of its classes (the
    compile pool's workers, the compiler output's parser, an error another test catches). Here only the
    suites' own modules (files under pytest's temporary directory) are removed."""
    from _pytest import pytester as pytester_module

    if not isinstance(getattr(pytester_module, "SysModulesSnapshot", None), type):  # pytest's own, private
        _IN_PROCESS[0] = False  # another pytest: each suite in a process of its own, as users run it
        yield
        return
    base = str(tmp_path_factory.getbasetemp())

    def the_suites(name: str) -> bool:
        return (getattr(sys.modules.get(name), "__file__", None) or "").startswith(base)

    class Snapshot(pytester_module.SysModulesSnapshot):
        def __init__(self, preserve=None) -> None:
            super().__init__(preserve=lambda name: not the_suites(name))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pytester_module, "SysModulesSnapshot", Snapshot)
        yield


@pytest.fixture
def suite(_suite_modules_alone, pytester, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    pytester.makepyfile(my_ops=KERNEL)
    return pytester


def run(pytester, *args):
    # this process, a pytest session of its own (pytester's in-process run: its own config, collection and
    # plugins, the suite's modules imported afresh and removed after): a pytest of its own process pays an
    # interpreter and torch's import for each case. Triton reads TRITON_INTERPRET as a kernel is decorated, at
    # the suite's import, after the fixture set it. The plugin in a pytest started as users start it (its
    # entry point, pytest-xdist's workers, a process without TRITON_INTERPRET) is run_subprocess's.
    if not _IN_PROCESS[0]:
        return run_subprocess(pytester, *args)
    with pytest.MonkeyPatch.context() as mp:
        # a module of this process named as one of the suite's (tests/fixtures/user_kernels' my_ops, which
        # another test imported) would be what the suite imports: out of sys.modules for the run, back after
        for path in pytester.path.glob("*.py"):
            mp.delitem(sys.modules, path.stem, raising=False)
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def run_subprocess(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def test_the_suite_imports_its_own_modules_whatever_this_process_imported_before(suite, monkeypatch):
    """A module named as one of the suite's, already in this process's sys.modules (another test's ``my_ops``),
    is not what the suite's ``from my_ops import add`` gets, and is back after the run."""
    import types

    other = types.ModuleType("my_ops")
    other.add = None
    monkeypatch.setitem(sys.modules, "my_ops", other)
    suite.makepyfile(test_ops='''
import torch
from my_ops import add

def test_add():
    x = torch.ones(10)
    assert add(x, x).sum() == 20
''')
    run(suite).assert_outcomes(passed=1)
    assert sys.modules["my_ops"] is other


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
    result.assert_outcomes(failed=1, errors=1)
    text = result.stdout.str()
    assert "launched no Triton kernel" in text
    assert "vgprscope: budget 'max_regs' is not allowed; allowed: spills, max_registers" in text


MALFORMED = '''
import pytest

@pytest.mark.vgprscope(spills=-1)
def test_negative(): pass

@pytest.mark.vgprscope("x")
def test_positional(): pass

@pytest.mark.vgprscope(max_vgprs=3)
def test_unknown(): pass

@pytest.mark.vgprscope(arch=5)
def test_arch_number(): pass

@pytest.mark.vgprscope(arch="gfx9999")
def test_arch_unknown(): pass

def test_fixture(vgprscope):
    vgprscope.budget(spills="x")
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_malformed_budget_is_one_line_each_not_a_traceback(suite, workers):
    """Checked as the tests are collected (under pytest-xdist too, whose workers collect): each malformed
    marker is that test's error at setup in one line naming what is allowed; the fixture's, its failure."""
    suite.makepyfile(test_bad=MALFORMED)
    result = (run_subprocess if workers else run)(suite, *workers)
    result.assert_outcomes(errors=5, failed=1)
    text = result.stdout.str()
    assert "Traceback" not in text and "pytest_plugin.py" not in text and "INTERNALERROR" not in text, text
    for needle in ("budget spills=-1 is not allowed; allowed: a whole number >= 0",
                   "@pytest.mark.vgprscope('x',) is not allowed; it takes keywords only",
                   "budget 'max_vgprs' is not allowed; allowed: spills",
                   "budget arch=5 is not allowed; allowed: an arch name or a list of them",
                   "budget arch='gfx9999': not an arch Triton compiles for; allowed: gfx90a",
                   "budget spills='x' is not allowed"):
        assert sum(needle in line for line in text.splitlines()) >= 1, (needle, text)


@pytest.mark.parametrize("option, needle", [
    ("--vgprscope-arch=gfx9999", "--vgprscope-arch 'gfx9999': not an arch Triton compiles for; allowed:"),
    ("--vgprscope-report=adir", "cannot write adir: it is a directory"),
    ("--vgprscope-report=nodir/r.json", "the directory nodir does not exist"),
])
def test_a_wrong_option_is_one_line_before_any_test_runs(suite, option, needle):
    suite.mkdir("adir")
    suite.makepyfile(test_ops="def test_plain():\n    open('RAN', 'w').close()\n")
    result = run(suite, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and needle in errors[0] and errors[0].startswith("ERROR: vgprscope: "), errors
    assert not (suite.path / "RAN").exists()
    assert not [p.name for p in (suite.path / "adir").iterdir()]


def test_no_interpreter_on_a_cpu_is_one_line_saying_what_to_do(pytester, monkeypatch):
    """Without a GPU and without TRITON_INTERPRET the kernel launch fails: the test's failure says to set it,
    in one line, not a traceback through the plugin."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    pytester.makepyfile(my_ops=KERNEL)
    pytester.makepyfile(test_ops='''
import pytest, torch
from my_ops import add

@pytest.mark.vgprscope(arch="gfx942", spills=0)
def test_add():
    add(torch.ones(10), torch.ones(10))
''')
    result = run_subprocess(pytester)  # Triton's driver found afresh, without the interpreter
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "set TRITON_INTERPRET=1 before the kernels are imported" in text
    assert "Traceback" not in text and "pytest_plugin.py" not in text and "session.py" not in text, text


def test_an_occupancy_budget_reads_value_then_budget(suite):
    suite.makepyfile(test_ops='''
import pytest, torch
from my_ops import add

@pytest.mark.vgprscope(arch="gfx942", occupancy_at_least=9)
def test_add():
    add(torch.ones(10), torch.ones(10))
''')
    result = run(suite)
    result.assert_outcomes(failed=1)
    # the failure's own section: pytest repeats the whole message in its short summary where CI is set
    failures = result.stdout.str().split("short test summary info")[0]
    over = [line for line in failures.splitlines() if "budget at least 9" in line]
    assert len(over) == 1 and ": occupancy 8, budget at least 9" in over[0], result.stdout.str()


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


def test_the_report_under_pytest_xdist_holds_every_workers_rows(suite):
    """Each worker sends its rows to the controller, which writes the file once, in the tests' order (as a
    serial run writes it); the project's own CI runs two workers."""
    suite.makepyfile(test_ops='''
import torch
from my_ops import add

def test_a():
    add(torch.ones(10), torch.ones(10))

def test_b():
    add(torch.ones(300), torch.ones(300))

def test_c():
    pass

def test_d():
    add(torch.ones(3), torch.ones(3))
''')
    out = suite.path / "costs.json"
    # in file order (pytest-randomly, where installed, shuffles the collection: the rows would follow it)
    run_subprocess(suite, "-n", "2", "-p", "no:randomly", f"--vgprscope-report={out}",
        "--vgprscope-arch=gfx942").assert_outcomes(passed=4)
    rows = json.loads(out.read_text())["rows"]
    assert [r["test"] for r in rows] == ["test_ops.py::test_a", "test_ops.py::test_b", "test_ops.py::test_d"]
    assert all(r["status"] == "ok" and r["arch"] == "gfx942" for r in rows)
    assert sorted(p.name for p in suite.path.iterdir() if p.name.startswith(".")) == []


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
                                                   "vgprscope.compile", "vgprscope.captures"))]  # ...and alone
