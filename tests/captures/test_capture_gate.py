"""The gate on captured kernels: `[tool.vgprscope] capture = FILE` for baseline save and check.

Entries of a capture are keyed by slot: an autotune config by the call's argument types and its index in
the config list, any other launch by its argument types and ordinal (never by the problem size). So a grown autotune config is compared
with the config it replaced, and a kernel no longer launched is a missing entry that fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from capture_helpers import USER_KERNELS, cli


def _gemm(tiles: list[tuple[int, int, int]]) -> str:
    """The user's autotuned GEMM with one autotune config per (BLOCK_M, BLOCK_N, BLOCK_K) of ``tiles``."""
    text, configs = (USER_KERNELS / "autotuned_gemm.py").read_text(), "CONFIGS = [(64, 64, 32), (32, 32, 32)]"
    assert configs in text
    return text.replace(configs, f"CONFIGS = {tiles}", 1)


RUN_GEMM = '''import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).parent))
from gemm import matmul  # noqa: E402

a, b = torch.randn(64, 64), torch.randn(64, 64)
c = torch.empty(64, 64)
grid = lambda meta: (triton.cdiv(64, meta["BLOCK_M"]), triton.cdiv(64, meta["BLOCK_N"]))
matmul[grid](a, b, c, 64, 64, 64, a.stride(0), b.stride(0), c.stride(0))
torch.testing.assert_close(c, a @ b, atol=1e-2, rtol=1e-2)
print("ok")
'''

INTERPRET = {"TRITON_INTERPRET": "1"}


def _capture(project: Path, script: Path) -> None:
    done = cli("capture", "-o", str(project / "cap.json"), "--", sys.executable, str(script), env=INTERPRET)
    assert done.returncode == 0, done.stderr[-2000:]


def _project(root: Path, archs: str) -> Path:
    (root / "pyproject.toml").write_text(f'[tool.vgprscope]\ncapture = "cap.json"\narchs = [{archs}]\n')
    return root


def _rows(done) -> list[dict]:
    return json.loads(done.stdout)["rows"]


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    """A project with a committed capture of my_ops (an autotuned row scale and a plain add) and its baseline."""
    root = _project(tmp_path_factory.mktemp("ops"), '"gfx942", "sm_90"')
    _capture(root, USER_KERNELS / "run_ops.py")
    done = cli("baseline", "save", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def test_gate_saves_and_checks_a_capture(ops, tmp_path):
    base = json.loads((ops / "vgprscope-baseline.json").read_text())
    # 3 specialisations (two autotune configs and a plain launch) on 2 archs, none of the bundled variants
    assert len(base["entries"]) == 6 and {e["variant"] for e in base["entries"].values()} == {"my_ops"}
    assert base["set"] == {"variants": [], "archs": ["gfx942", "sm_90"], "configs": [], "capture": "cap.json"}
    assert {e["slot"] for e in base["entries"].values()} == {
        "autotune (*fp32,*fp32,i32,i32,fp32) cfg 1", "autotune (*fp32,*fp32,i32,i32,fp32) cfg 2",
        "(*fp32,*fp32,*fp32,i32) #1"}
    done = cli("check", cwd=ops)
    assert done.returncode == 0, done.stdout + done.stderr
    # a baseline that had one VGPR fewer for one kernel: within its occupancy step, a change that passes
    # by default; --strict fails on it
    edited = tmp_path / "edited.json"
    key = next(k for k, e in base["entries"].items() if e["arch"] == "gfx942" and e["kernel"] == "add")
    base["entries"][key]["usage"]["vgpr_total"] -= 1
    edited.write_text(json.dumps(base))
    changed = cli("check", "--format", "json", "-b", str(edited), cwd=ops)
    assert changed.returncode == 0, changed.stderr
    assert [r["result"] for r in _rows(changed) if r["key"] == key] == ["changed"]
    done = cli("check", "--strict", "--format", "json", "-b", str(edited), cwd=ops)
    assert done.returncode == 1, done.stderr
    # a rule on the captured kernel's label
    assert cli("check", "--strict", "-b", str(edited), "--rule", "my_ops:vgpr_total:+1", cwd=ops).returncode == 0


def test_a_kernel_no_longer_launched_fails_the_gate(ops, tmp_path):
    project = _project(tmp_path, '"gfx942", "sm_90"')
    (project / "vgprscope-baseline.json").write_text((ops / "vgprscope-baseline.json").read_text())
    script = tmp_path / "run_less.py"  # the user's script stopped launching `add`
    script.write_text((USER_KERNELS / "run_ops.py").read_text().replace(
        "    add[(triton_cdiv(1000, 256),)](a, b, z, 1000, BLOCK=256, num_warps=4)\n    torch.testing.assert_close(z, a + b)\n",
        "").replace("sys.path.insert(0, str(Path(__file__).parent))", f"sys.path.insert(0, {str(USER_KERNELS)!r})"))
    _capture(project, script)
    done = cli("check", "--format", "json", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    missing = [(r["kernel"], r["arch"], r["fails"]) for r in _rows(done) if r["state"] == "missing"]
    assert sorted(missing) == [("add", "gfx942", True), ("add", "sm_90", True)]
    table = cli("check", cwd=project)
    assert table.returncode == 1 and "missing" in table.stdout and "add" in table.stdout
    assert cli("check", "--allow-missing", cwd=project).returncode == 0


def test_a_capture_with_no_launch_is_not_comparable(ops, tmp_path):
    project = _project(tmp_path, '"gfx942"')
    (project / "vgprscope-baseline.json").write_text((ops / "vgprscope-baseline.json").read_text())
    doc = json.loads((ops / "cap.json").read_text())
    (project / "cap.json").write_text(json.dumps(doc | {"launches": [], "kernels": []}))
    for args in (["check"], ["baseline", "save"]):
        done = cli(*args, cwd=project)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "the run produced no entry to compare" in cli("check", cwd=project).stderr


def test_a_grown_autotune_config_is_compared_with_the_config_it_replaced(tmp_path):
    """Growing one config of an autotuned GEMM from 64x64x32 to 128x128x64 and capturing again compares the
    new config with the one it replaced in the same slot (a changed config, not "new" beside "missing")."""
    project = _project(tmp_path, '"gfx942"')
    (project / "gemm.py").write_text(_gemm([(64, 64, 32), (32, 32, 32)]))
    (project / "run_gemm.py").write_text(RUN_GEMM)
    _capture(project, project / "run_gemm.py")
    assert cli("baseline", "save", cwd=project).returncode == 0
    (project / "gemm.py").write_text(_gemm([(128, 128, 64), (32, 32, 32)]))
    _capture(project, project / "run_gemm.py")
    done = cli("check", "--format", "json", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = _rows(done)
    assert {r["state"] for r in rows} == {"compared"} and len(rows) == 2
    grown = next(r for r in rows if r["config_changed"])
    assert grown["baseline_config"]["constexprs"] == {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    assert grown["config"]["constexprs"] == {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
    assert grown["fails"] and grown["result"] == "worse" and grown["slot"].endswith(" cfg 1")
    vgpr = next(m for m in grown["metrics"] if m["metric"] == "vgpr_total")
    assert vgpr["current"] > vgpr["baseline"] and vgpr["fails"]
    table = " ".join(cli("check", cwd=project).stdout.split())
    assert "1 changed configs" in table and "BLOCK_M=64 BLOCK_N=64 BLOCK_K=32" in table


def test_a_schema_1_baseline_of_a_capture_is_refused_with_one_line(ops, tmp_path):
    """A baseline saved before slots (keyed by config hash) is not read: `check` exits 2 with one line that
    says how to write the current schema."""
    v2 = json.loads((ops / "vgprscope-baseline.json").read_text())
    entries = {f"{e['variant']}/{e['kernel']}/{e['arch']}/{e['config_key']}": {k: v for k, v in e.items() if k != "slot"}
               for e in v2["entries"].values()}
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps(v2 | {"schema_version": 1, "entries": entries}))
    done = cli("check", "--format", "json", "-b", str(v1), cwd=ops)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "schema version 1" in line and "re-save with `vgprscope baseline save`" in line
