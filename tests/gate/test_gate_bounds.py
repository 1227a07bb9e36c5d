"""Numbers no compile writes are refused, before anything compiles: a baseline entry whose
count is larger than a compiler reports (``vgpr_total: 10**30``), more than its arch holds, or whose status
its usage does not explain (``status: "weird"`` on a kernel that launches) is exit 2 with one line, instead
of an entry that is "better" and lets the check pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture_helpers import cli

from vgprscope.core.errors import NotComparableError
from vgprscope.gate.baseline import load_baseline

FIXTURES = Path(__file__).parents[1] / "fixtures"
SLOT = "block_m=64 block_n=32 head_dim=64 num_warps=4 num_stages=1"
KEY = f"split-k/merge/gfx942/{SLOT}"  # an ok gfx942 entry
NV = f"baseline/attn_fwd/sm_80/{SLOT}"  # an ok sm_80 entry


def _edited(tmp_path: Path, edit) -> Path:
    doc = json.loads((FIXTURES / "gate_baseline.json").read_text())
    edit(doc["entries"])
    out = tmp_path / "b.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("edit, message", [
    (lambda e: e[KEY]["usage"].update(vgpr_total=10**30),
     "has usage.vgpr_total 1000000000000000000000000000000, more than any compiler reports (its counts are 32-bit)"),
    (lambda e: e[KEY]["occupancy"].update(value=2**40), "has occupancy.value 1099511627776, more than any compiler"),
    (lambda e: e[KEY].update(status="weird"),
     "has status 'weird' but its usage launches on gfx942: a status is \"ok\", a compile error (with no usage) "
     "or the launch limit its usage breaks"),
    (lambda e: e[KEY]["usage"].update(vgpr_total=600, arch_vgpr=600),
     "is \"ok\" with usage vgpr_total 600, more than gfx942's maximum of 512"),
    (lambda e: e[NV]["usage"].update(regs=300), "is \"ok\" with usage regs 300, more than sm_80's maximum of 255"),
    (lambda e: e[KEY]["usage"].update(lds_dynamic=70000), "is \"ok\" with usage lds_bytes 70000, more than gfx942's"),
    (lambda e: e[KEY].update(arch="gfx9999"), "has arch 'gfx9999', not one vgprscope knows"),
])
def test_counts_and_statuses_no_compile_writes_are_refused(tmp_path, edit, message):
    path = _edited(tmp_path, edit)
    with pytest.raises(NotComparableError) as info:
        load_baseline(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_status_its_usage_explains_is_read():
    """The launch limit a usage breaks is a status with a usage (the engine writes it so)."""
    def over(e):
        e[KEY]["usage"].update(lds_dynamic=70000)
        e[KEY].update(status="needs 70000 B of LDS; gfx942 has 65536 B per workgroup")

    load_baseline(_edited(Path(__import__("tempfile").mkdtemp()), over))
    assert load_baseline(FIXTURES / "gate_baseline.json").entries  # the committed fixtures stay readable


@pytest.mark.parametrize("edit", [lambda e: e[KEY]["usage"].update(vgpr_total=10**30),
                                  lambda e: e[KEY].update(status="weird")], ids=["huge", "weird"])
def test_check_refuses_them_with_exit_2_and_one_line(tmp_path, edit):
    done = cli("check", "--baseline", str(_edited(tmp_path, edit)), "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("vgprscope: error: baseline ") and "Traceback" not in done.stderr


# ---- --num-stages: bounded by what the arch can hold, refused before anything compiles -----------------------

@pytest.mark.parametrize("stages", ["1000000", "64", "16"])
def test_a_pipeline_the_arch_cannot_hold_is_refused_before_compiling(stages, tmp_path):
    """`--num-stages 1000000` compiled without bound (7 GB in 26 s, then a MemoryError traceback or a hang)."""
    done = cli("analyze", "--variant", "baseline", "--arch", "gfx942", "--num-stages", stages, "--jobs", "1",
               "--no-cache", cwd=tmp_path, env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"vgprscope: error: num_stages {stages} is more than gfx942 can hold: each stage after the first keeps at "
        "least a 64 x 128 key tile (16384 B) in flight and gfx942 has 65536 B of shared memory / LDS per "
        "workgroup, room for at most 5 stages at this tile"]
    assert not (tmp_path / "cache").exists()  # nothing compiled


def test_the_stages_bound_follows_the_tile_and_the_arch():
    import vgprscope
    from vgprscope.core.errors import UsageError
    from vgprscope.flashattn.tuning import stages_refusal

    assert stages_refusal(5, 64, 128, "gfx942") is None  # 4 x 16 KiB in flight fit 64 KiB
    assert stages_refusal(6, 64, 128, "gfx942") is not None  # Triton 3.9 wanted 163840 B there
    assert stages_refusal(8, 128, 128, "sm_90") is None and "at most 8 stages" in stages_refusal(9, 128, 128, "sm_90")
    assert stages_refusal(16, 32, 64, "sm_90") is None  # small tiles: 16 stages fit 227 KiB
    with pytest.raises(UsageError, match="num_stages 64 is more than sm_90 can hold"):
        vgprscope.analyze(variant="baseline", arch="sm_90", num_stages=64)
