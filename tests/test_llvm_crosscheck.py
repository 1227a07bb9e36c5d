"""Our AMD occupancy against LLVM's own `; Occupancy:` line on fresh compiles of the bundled baseline.

For every compile: LLVM's line equals our model of LLVM's rule (rule 5: registers, SGPRs, and the
workgroup rule over Triton's `amdgpu-flat-work-group-size` range 1..num_warps*wave_size with the static LDS
LLVM sees); and our occupancy for the real launch equals LLVM's line except where the note names why
(Triton's dynamic LDS LLVM cannot see, or workgroups resident whole), never "cannot name".

The configs are chosen to compile in about 20 s on 2 cores and to cover: plain 4-warp kernels, AGPR
kernels, 8-warp workgroups whose register waves are odd (whole workgroups), 1-warp kernels where the LDS
binds, and Triton's `waves_per_eu` (which pads LLVM's VGPR allocation).
"""

from __future__ import annotations

import pytest

from vgprscope.archs import get_arch
from vgprscope.compile.engine import Engine
from vgprscope.occupancy import llvm_rule_occupancy, occupancy_of
from vgprscope.parse.amdgcn import parse_amdgcn
from vgprscope.attention.config import AttentionConfig
from vgprscope.attention.source import variant_tasks
from vgprscope.attention.variants import get_variant

pytestmark = pytest.mark.slow

# (block_m, block_n, head_dim, num_warps, waves_per_eu)
CONFIGS = {
    "gfx90a": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (16, 128, 32, 1, None),
               (64, 32, 64, 4, 2)],
    "gfx942": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (16, 128, 64, 1, None),
               (64, 32, 64, 4, 2)],
    "gfx950": [(64, 32, 64, 4, None), (128, 64, 128, 4, None), (64, 64, 64, 8, None), (256, 64, 64, 8, None),
               (64, 32, 64, 4, 2)],
    "gfx1100": [(64, 32, 64, 4, None), (16, 64, 64, 1, None), (64, 64, 64, 8, None), (64, 32, 64, 4, 2)],
}
CASES = [(arch, c) for arch, cs in CONFIGS.items() for c in cs]


def _item(arch: str, c: tuple):
    bm, bn, d, w, wpe = c
    cfg = AttentionConfig(block_m=bm, block_n=bn, head_dim=d, num_warps=w, num_stages=1, waves_per_eu=wpe)
    return (get_variant("baseline"), cfg, get_arch(arch), "")


@pytest.fixture(scope="module")
def compiled():
    """Each case's raw compiler outputs (the compile workers run without the interpreter)."""
    engine = Engine(2)
    tasks = variant_tasks([_item(a, c) for a, c in CASES], engine)
    rows = engine.compile(tasks)
    out = {}
    for case, task, row in zip(CASES, tasks, rows):
        out[case] = engine.raw_outputs(task) or {"error": row.status}
    return out


@pytest.mark.parametrize("arch, config", CASES, ids=[f"{a}-{'x'.join(map(str, c))}" for a, c in CASES])
def test_ours_equals_llvm_or_the_note_says_why(compiled, arch, config):
    out = compiled[(arch, config)]
    assert "error" not in out, out.get("error")
    a = get_arch(arch)
    num_warps, wpe = config[3], config[4]
    u = parse_amdgcn(out["amdgcn"], out["shared"])
    assert u.llvm_occupancy is not None
    # what LLVM saw: Triton's flat workgroup range is 1..num_warps*wave_size (wave32 on gfx1100), no static LDS
    assert u.max_flat_workgroup_size == num_warps * a.wave_size
    assert u.lds_static == 0 and u.lds_dynamic == out["shared"] > 0

    # 1. our model of LLVM's rule reproduces LLVM's line exactly
    assert llvm_rule_occupancy(a, u.vgpr_total, u.sgpr, u.lds_static, (1, u.max_flat_workgroup_size), wpe) \
        == u.llvm_occupancy

    # 2. ours for the real launch equals LLVM's, or the note names each reason
    occ = occupancy_of(u, a, num_warps, waves_per_eu=wpe)
    wpw = num_warps  # waves per workgroup: Triton's warps are the arch's waves
    lds_binds = "lds" in occ.limiters
    if occ.value == u.llvm_occupancy:
        assert occ.note == ""
    else:
        assert "cannot name" not in occ.note, occ.note
        assert occ.note.startswith(f"LLVM's `; Occupancy: {u.llvm_occupancy}` differs from ours ({occ.value})")
        assert lds_binds or wpw > a.simds_per_cu
        if lds_binds:
            assert "dynamic LDS" in occ.note
        else:
            assert "resident whole" in occ.note
    if not lds_binds and wpw <= a.simds_per_cu:
        assert occ.value == u.llvm_occupancy


def test_the_set_covers_each_kind_of_difference(compiled):
    kinds = set()
    for (arch, config), out in compiled.items():
        u = parse_amdgcn(out["amdgcn"], out["shared"])
        occ = occupancy_of(u, get_arch(arch), config[3], waves_per_eu=config[4])
        kinds.add("equal" if occ.value == u.llvm_occupancy else
                  "lds" if "dynamic LDS" in occ.note else "whole" if "resident whole" in occ.note else "other")
        if config[4]:
            kinds.add("waves_per_eu")
    assert kinds == {"equal", "lds", "whole", "waves_per_eu"}
