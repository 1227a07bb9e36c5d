"""The gate compiles what the current source would launch, not what the capture recorded.

A user's project (another path, no PYTHONPATH) with an autotuned GEMM, a ``@triton.heuristics`` kernel and
its helper in another file, captured on the CPU and baselined; then edited without capturing again. Each
edit must show in `check`: a grown autotune config and a changed heuristic fail with the new config; a
renamed kernel is missing; a module that no longer imports is read from its file; a kernel reading what does
not import here, a module that cannot be read, or a heuristic reading what the capture lacks, cannot be
compared (exit 2). A capture of other problem sizes with the same configs is all `same`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from capture_helpers import USER_KERNELS, cli

GEMM = (USER_KERNELS / "autotuned_gemm.py").read_text()

HELPERS = '''import triton
import triton.language as tl


@triton.jit
def gelu(x):
    return x * tl.sigmoid(1.702 * x)
'''

ACT = '''import triton
import triton.language as tl

from helpers import gelu

BLOCK_OF = {"BLOCK": lambda a: triton.next_power_of_2(a["N"])}


@triton.heuristics(BLOCK_OF)
@triton.jit
def act_kernel(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(X + offs, mask=mask, other=0.0)
    tl.store(Y + offs, gelu(x), mask=mask)
'''

RUN = '''import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).parent))
from act import act_kernel  # noqa: E402
from gemm import matmul  # noqa: E402

m, n = int(sys.argv[1]), int(sys.argv[2])
a, b = torch.randn(m, 64), torch.randn(64, 64)
c = torch.empty(m, 64)
grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(64, meta["BLOCK_N"]))
matmul[grid](a, b, c, m, 64, 64, a.stride(0), b.stride(0), c.stride(0))
torch.testing.assert_close(c, a @ b, atol=1e-2, rtol=1e-2)
x = torch.randn(n)
y = torch.empty_like(x)
act_kernel[(1,)](x, y, n, num_warps=1)
torch.testing.assert_close(y, x * torch.sigmoid(1.702 * x), atol=1e-4, rtol=1e-4)
print("ok")
'''


def _capture(project: Path, m: int, n: int) -> None:
    done = cli("capture", "-o", str(project / "cap.json"), "--", sys.executable, str(project / "run.py"), str(m),
               str(n), env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr[-2000:]


def _check(project: Path, *args: str):
    return cli("check", "--jobs", "1", *args, cwd=project)


def _rows(done) -> list[dict]:
    return json.loads(done.stdout)["rows"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("userproject")
    (root / "pyproject.toml").write_text('[tool.vgprscope]\ncapture = "cap.json"\narchs = ["gfx942"]\n')
    for name, text in (("gemm.py", GEMM), ("helpers.py", HELPERS), ("act.py", ACT), ("run.py", RUN)):
        (root / name).write_text(text)
    _capture(root, 128, 100)
    done = cli("baseline", "save", "--jobs", "1", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def edit(project):
    """Edit a file of the project for one test; the original comes back after it."""
    saved = {p: p.read_text() for p in project.glob("*.py")}
    yield lambda name, old, new: (project / name).write_text((project / name).read_text().replace(old, new))
    for p, text in saved.items():
        p.write_text(text)


def test_an_unedited_project_passes(project):
    # the capture keeps the user's call; the values only where a heuristic or a pruning reads them
    launches = json.loads((project / "cap.json").read_text())["launches"]
    act = next(x for x in launches if not x["autotune"])
    assert act["call"] == {"positional": 3, "keywords": ["num_warps"]} and act["values"] == {"N": 100}
    assert act["tensors"] == {"X": {"shape": [100], "stride": [1]}, "Y": {"shape": [100], "stride": [1]}}
    assert {json.dumps(x["values"]) for x in launches if x["autotune"]} == {"null"}
    done = _check(project, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(done)
    # two GEMM configs and the heuristics kernel's one launch
    assert len(rows) == 3 and {r["result"] for r in rows} == {"same"}
    assert {r["slot"] for r in rows} == {"autotune (*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32) cfg 1",
                                         "autotune (*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32) cfg 2",
                                         "(*fp32,*fp32,i32) #1"}


def test_a_grown_autotune_config_fails_without_capturing_again(project, edit):
    edit("gemm.py", "CONFIGS = [(64, 64, 32),", "CONFIGS = [(128, 128, 64),")
    done = _check(project, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    grown = next(r for r in _rows(done) if r["slot"].endswith(" cfg 1"))
    assert grown["config"]["constexprs"] == {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    assert grown["baseline_config"]["constexprs"] == {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    vgpr = next(m for m in grown["metrics"] if m["metric"] == "vgpr_total")
    assert grown["result"] == "worse" and grown["fails"] and vgpr["current"] > vgpr["baseline"]
    assert "BLOCK_M=128 BLOCK_N=128 BLOCK_K=64" in " ".join(_check(project).stdout.split())


def test_a_changed_heuristic_is_seen_without_capturing_again(project, edit):
    """The launch the heuristic now makes is compiled and compared: its VGPR growth within the occupancy step is
    a passing change by default (shown, never "same"), and fails with --strict."""
    edit("act.py", 'lambda a: triton.next_power_of_2(a["N"])', 'lambda a: 4 * triton.next_power_of_2(a["N"])')
    done = _check(project, "--format", "json")
    act = next(r for r in _rows(done) if r["kernel"] == "act_kernel")
    assert act["baseline_config"]["constexprs"] == {"BLOCK": 128} and act["config"]["constexprs"] == {"BLOCK": 512}
    vgpr = next(m for m in act["metrics"] if m["metric"] == "vgpr_total")
    assert vgpr["current"] > vgpr["baseline"] and act["result"] in ("changed", "worse")
    assert done.returncode == (1 if act["result"] == "worse" else 0), done.stdout + done.stderr
    strict = _check(project, "--format", "json", "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert next(r for r in _rows(strict) if r["kernel"] == "act_kernel")["result"] == "worse"


def test_a_heuristic_reading_what_was_not_recorded_says_capture_again(project, edit):
    edit("act.py", 'lambda a: triton.next_power_of_2(a["N"])',
         'lambda a: 128 if a["X"].device.type == "cpu" else 256')
    done = _check(project, "--format", "json")
    assert done.returncode == 2, done.stdout + done.stderr
    act = next(r for r in _rows(done) if r["kernel"] == "act_kernel")
    assert act["result"] != "same" and act["status"]["current"].endswith("capture again")
    assert "device" in act["status"]["current"]
    assert "capture again" in " ".join(_check(project).stdout.split())


def test_a_renamed_kernel_is_missing(project, edit):
    edit("act.py", "def act_kernel(", "def gelu_kernel(")
    edit("run.py", "act_kernel", "gelu_kernel")  # the callers follow; the capture is not taken again
    done = _check(project, "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    missing = [r for r in _rows(done) if r["state"] == "missing"]
    assert [(r["kernel"], r["fails"]) for r in missing] == [("act_kernel", True)]
    assert not [r for r in _rows(done) if r["kernel"] == "act_kernel" and r["state"] != "missing"]


def test_a_module_that_no_longer_imports_is_read_from_its_file(project, edit):
    """A package missing where the gate runs (as torch is in CI): the kernel's file is read statically, and
    the gate compiles the same kernel."""
    edit("act.py", "from helpers import gelu", "from helpers import gelu\nimport a_module_nobody_installed")
    done = _check(project, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["result"] for r in _rows(done)} == {"same"} and len(_rows(done)) == 3


def test_a_kernel_reading_what_does_not_import_is_a_row_saying_what(project, edit):
    """A constexpr computed at import by a package missing here: the current kernel cannot be derived without
    running its module; its row says which name needs what, and the gate cannot compare (exit 2)."""
    edit("act.py", "from helpers import gelu", "from helpers import gelu\nimport a_module_nobody_installed\n\n"
         "SCALE = tl.constexpr(a_module_nobody_installed.scale())")
    edit("act.py", "tl.store(Y + offs, gelu(x), mask=mask)", "tl.store(Y + offs, gelu(x) * SCALE, mask=mask)")
    done = _check(project, "--format", "json")
    assert done.returncode == 2, done.stdout + done.stderr
    act = next(r for r in _rows(done) if r["kernel"] == "act_kernel")
    assert act["status"]["current"] == (
        "act_kernel reads SCALE = a_module_nobody_installed.scale(...), which needs a_module_nobody_installed (it "
        "does not import here: "
        "ModuleNotFoundError: No module named 'a_module_nobody_installed'): the current kernel cannot be derived "
        "without running act")
    assert {r["result"] for r in _rows(done) if r["kernel"] == "matmul"} == {"same"}
    assert "cannot be derived without running act" in " ".join(_check(project).stdout.split())


def test_a_module_that_can_be_neither_imported_nor_read_is_not_comparable(project, edit):
    edit("act.py", "from helpers import gelu", "from helpers import gelu\nthis is no Python")
    done = _check(project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "SyntaxError" in done.stderr and "act" in done.stderr


def test_a_capture_of_other_problem_sizes_is_the_same(project, tmp_path):
    saved = (project / "cap.json").read_text()
    try:
        _capture(project, 256, 120)  # other matrix rows and vector length; the same configs and blocks
        done = _check(project, "--format", "json")
        assert done.returncode == 0, done.stdout + done.stderr
        rows = _rows(done)
        assert len(rows) == 3 and {(r["state"], r["result"]) for r in rows} == {("compared", "same")}
    finally:
        (project / "cap.json").write_text(saved)


def test_every_view_says_once_which_rows_came_from_the_snapshot(tmp_path, monkeypatch):
    """A library installed where the capture ran and gone from this machine compiles from the capture's snapshot:
    the check table (and --wide, markdown) say so once, in the header, never on each row; the JSON and the
    library's rows keep each row's note."""
    from capture_helpers import gone_library

    cap_file, _ = gone_library(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.vgprscope]\ncapture = "{cap_file.name}"\narchs = ["gfx942"]\n')
    assert cli("baseline", "save", "--jobs", "1", cwd=tmp_path).returncode == 0
    line = "every row (1) compiled from the capture's snapshot of their source"
    for args in ((), ("--wide",), ("--format", "md")):
        done = _check(tmp_path, *args)
        assert done.returncode == 0, done.stdout + done.stderr
        text = " ".join(done.stdout.split())
        assert text.count("compiled from the capture's snapshot") == 1 and line in text, args
        assert text.index(line) < text.index("gpu_only_ops"), args  # at the top, above the rows
    done = _check(tmp_path, "--format", "json")
    (row,) = _rows(done)
    assert row["result"] == "same" and row["note"].startswith("compiled from the capture's snapshot")
    import vgprscope

    monkeypatch.chdir(tmp_path)
    frame = vgprscope.check(jobs=1).to_pandas()
    assert frame["note"].str.startswith("compiled from the capture's snapshot").all()


def test_a_capture_without_recorded_values_derives_what_it_can(project, tmp_path):
    """A schema-2 capture (no call, values or shapes recorded) is still read: the autotuned GEMM's configs
    come from the current source; the heuristic reads N, which that capture lacks: "capture again", exit 2."""
    doc = json.loads((project / "cap.json").read_text())
    for x in doc["launches"]:
        for name in ("values", "tensors", "call"):
            x.pop(name, None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc | {"schema_version": 2}).replace(str(project), str(tmp_path)))
    for name in ("gemm.py", "act.py", "helpers.py", "run.py", "pyproject.toml", "vgprscope-baseline.json"):
        (tmp_path / name).write_text((project / name).read_text())
    done = _check(tmp_path, "--capture", "old.json", "--format", "json")
    assert done.returncode == 2, done.stdout + done.stderr
    by_kernel = {r["kernel"]: r for r in _rows(done)}
    assert {r["result"] for r in _rows(done) if r["kernel"] == "matmul"} == {"same"}
    assert by_kernel["act_kernel"]["status"]["current"].endswith(
        "@triton.heuristics value BLOCK of act_kernel reads what the capture did not record (KeyError: 'N'): "
        "capture again")


PRUNED = '''import triton
import triton.language as tl


def small_enough(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (32, 64, 128, 256)], key=["n"],
                 prune_configs_by={"early_config_prune": small_enough})
@triton.jit
def copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)
'''


def test_autotune_configs_are_pruned_again_on_the_recorded_call(tmp_path):
    """prune_configs_by runs on the current config list with the recorded arguments: a config added to the
    list that the pruning keeps is a new slot; one it drops for this call's size is not compiled."""
    from vgprscope.captures.model import load_capture
    from vgprscope.core.archs import get_arch
    from vgprscope.sources.capture import capture_tasks

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pruned.py").write_text(PRUNED)
    (tmp_path / "run.py").write_text('import sys, torch\nsys.path.insert(0, sys.path[0])\nfrom pruned import copy\n'
                                     'x = torch.randn(100)\ny = torch.empty_like(x)\n'
                                     'copy[(4,)](x, y, 100)\nassert torch.equal(x, y)\n')
    done = cli("capture", "-o", str(tmp_path / "cap.json"), "--", sys.executable, str(tmp_path / "run.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    gfx = [get_arch("gfx942")]

    def blocks() -> list[int]:
        tasks = capture_tasks(load_capture(tmp_path / "cap.json"), gfx)
        return [dict(t.row.config.constexprs)["BLOCK"] for t in tasks]

    assert blocks() == [32, 64]  # 128 and 256 are larger than n = 100
    (tmp_path / "pruned.py").write_text(PRUNED.replace("for b in (32, 64, 128, 256)", "for b in (16, 32, 64, 128)"))
    assert blocks() == [16, 32, 64]
    (tmp_path / "pruned.py").write_text(PRUNED.replace('named_args["n"]', 'named_args["X"].device.index'))
    tasks = capture_tasks(load_capture(tmp_path / "cap.json"), gfx)  # the recorded configs' rows, each saying why
    assert len(tasks) == 2 and all(t.job is None and t.reason.endswith("capture again") for t in tasks)
    assert "prune_configs_by of copy reads what the capture did not record" in tasks[0].reason


def test_the_current_defaults_fill_what_the_call_did_not_pass(tmp_path):
    """A constexpr the call left to its default takes the default the source has now; one it passed keeps
    the recorded value."""
    from vgprscope.captures.model import load_capture
    from vgprscope.core.archs import get_arch
    from vgprscope.sources.capture import capture_tasks

    kernel = ('import triton\nimport triton.language as tl\n\n\n@triton.jit\n'
              'def fill(Y, n, BLOCK: tl.constexpr = 64, WIDTH: tl.constexpr = 2):\n'
              '    offs = tl.arange(0, BLOCK)\n    tl.store(Y + offs, offs.to(tl.float32) * WIDTH, mask=offs < n)\n')
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "fills.py").write_text(kernel)
    (tmp_path / "run.py").write_text('import sys, torch\nsys.path.insert(0, sys.path[0])\nfrom fills import fill\n'
                                     'y = torch.empty(100)\nfill[(1,)](y, 50, WIDTH=3)\n')
    done = cli("capture", "-o", str(tmp_path / "cap.json"), "--", sys.executable, str(tmp_path / "run.py"),
               env={"TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    (tmp_path / "fills.py").write_text(kernel.replace("BLOCK: tl.constexpr = 64, WIDTH: tl.constexpr = 2",
                                                      "BLOCK: tl.constexpr = 128, WIDTH: tl.constexpr = 5"))
    (task,) = capture_tasks(load_capture(tmp_path / "cap.json"), [get_arch("gfx942")])
    assert dict(task.row.config.constexprs) == {"BLOCK": 128, "WIDTH": 3}


def test_a_warm_run_derives_nothing_again_until_a_file_changes(project, edit, monkeypatch):
    """Derivations are kept in the compile cache with the files they read: a warm run starts no worker for
    them; an edit of the kernel's file (or a file it imports) derives again."""
    from vgprscope.captures.model import load_capture
    from vgprscope.compile.engine import Engine
    from vgprscope.core.archs import get_arch
    from vgprscope.sources.capture import capture_tasks

    asked: list[int] = []
    ask = Engine.ask
    monkeypatch.setattr(Engine, "ask", lambda self, requests: asked.append(len(requests)) or ask(self, requests))
    cap = load_capture(project / "cap.json")
    capture_tasks(cap, [get_arch("gfx942")], Engine(jobs=1))  # derived (again, if another test's edit was last)
    first = capture_tasks(cap, [get_arch("gfx942")], Engine(jobs=1))
    assert asked[1:] == [0]
    edit("helpers.py", "return x * tl.sigmoid(1.702 * x)", "return x * tl.sigmoid(1.702 * x)  # the same")
    again = capture_tasks(cap, [get_arch("gfx942")], Engine(jobs=1))
    assert asked[1:] == [0, 1] and [t.row.config for t in again] == [t.row.config for t in first]
