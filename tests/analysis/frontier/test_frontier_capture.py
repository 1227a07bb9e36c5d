"""frontier --capture: a user's own captured kernels (not written to vgprscope's protocol) across the
occupancy levels, the option set in each level's compile."""

from __future__ import annotations

import json

import pytest
from capture_helpers import cli


def test_captured_kernels_have_a_frontier(ops_capture):
    res = cli("frontier", "--capture", str(ops_capture.path), "--arch", "gfx942", "-f", "json")
    assert res.returncode == 0, res.stderr
    kernels = json.loads(res.stdout)["kernels"]
    assert kernels and all(k["knob"] == "waves_per_eu" for k in kernels)
    for k in kernels:
        assert [lv["level"] for lv in k["levels"]] == [1, 2, 3, 4, 5, 6, 7, 8]
        for lv in k["levels"]:
            assert lv["status"] == "ok", lv["status"]
            # the level's own compile: its config carries the option, its occupancy uses it
            assert dict(lv["record"]["config"]["options"])["waves_per_eu"] == lv["setting"]
        assert k["spill_free_occupancy"] is not None and k["summary"].startswith("spill-free to ")


# ---- the spill-free occupancy is the highest any compile reached, the uncapped one included ----

@pytest.fixture(scope="module")
def matmul_frontier(matmul_capture):
    """A user's GEMM (run_matmul.py: 64x64x32 tiles with 4 warps, 64x32x64 with 1 warp) captured and put
    through the frontier on gfx950 and sm_90, and the same capture through plain analyze."""
    cap = matmul_capture.path
    res = cli("frontier", "--capture", str(cap), "--arch", "gfx950", "--arch", "sm_90", "-f", "json")
    assert res.returncode == 0, res.stderr
    plain = cli("analyze", "--capture", str(cap), "--arch", "gfx950", "--arch", "sm_90", "-f", "json")
    assert plain.returncode == 0, plain.stderr
    kernels = {(k["arch"], dict(k["config"]["options"])["num_warps"]): k
               for k in json.loads(res.stdout)["kernels"]}
    rows = {(r["arch"], dict(r["config"]["options"])["num_warps"]): r for r in json.loads(plain.stdout)["rows"]}
    assert len(kernels) == len(rows) == 4
    return kernels, rows


# where the compilers, left alone, reach more without spilling than under the cap of that very level:
# ptxas takes 64 registers uncapped (8 blocks/SM of 128 threads) but spills under maxnreg 64; LLVM takes
# 94 VGPRs without waves_per_eu (5 waves/SIMD) but spills at waves_per_eu 5
REPRODUCED = {("sm_90", 4): ("blocks/SM", "maxnreg", "registers"),
              ("gfx950", 1): ("waves/SIMD", "waves_per_eu", "VGPRs")}


@pytest.mark.parametrize("arch, warps", sorted(REPRODUCED))
def test_uncapped_compile_that_reaches_more_is_the_spill_free_occupancy(matmul_frontier, arch, warps):
    kernels, _ = matmul_frontier
    k = kernels[(arch, warps)]
    unc = k["uncapped"]
    # the compiler's facts behind it: uncapped, spill-free at a level where the capped compile spills
    assert unc["spill_free"] and unc["setting"] is None
    [at] = [lv for lv in k["levels"] if lv["level"] == unc["occupancy"]]
    assert at["status"] == "ok" and not at["spill_free"], at
    assert all(lv["occupancy"] < unc["occupancy"] for lv in k["levels"] if lv["spill_free"])
    # so the uncapped compile is the spill-free occupancy, and nothing names a lower one
    unit, knob, regs = REPRODUCED[(arch, warps)]
    assert k["spill_free_occupancy"] == unc["occupancy"] and k["spill_free_uncapped"] is True
    assert k["summary"].startswith(f"spill-free to {unc['occupancy']} {unit} with no {knob} "
                                   f"({unc['allocation']} {regs})")
    assert k["next_level"]["level"] > unc["occupancy"] and k["min_spill_free_maxnreg"] is None


@pytest.mark.parametrize("arch, warps", [("gfx950", 1), ("gfx950", 4), ("sm_90", 1), ("sm_90", 4)])
def test_frontier_advice_never_lowers_occupancy_on_a_real_gemm(matmul_frontier, arch, warps):
    kernels, rows = matmul_frontier
    k, row = kernels[(arch, warps)], rows[(arch, warps)]
    # the uncapped compile is plain analyze's row of the same launch
    assert k["uncapped"]["record"]["usage"] == row["usage"]
    assert k["uncapped"]["record"]["occupancy"] == row["occupancy"]
    compiles = k["levels"] + k["bisection"] + [k["uncapped"]]
    free = [c["occupancy"] for c in compiles if c["spill_free"]]
    assert k["spill_free_occupancy"] == max(free)
    assert k["next_level"] is None or k["next_level"]["level"] > k["spill_free_occupancy"]
    if k["min_spill_free_maxnreg"] is not None:
        [at] = [c for c in k["levels"] + k["bisection"] if c["setting"] == k["min_spill_free_maxnreg"]]
        assert at["spill_free"] and at["occupancy"] == k["spill_free_occupancy"]


def test_frontier_of_a_capture_applies_a_what_if_launch_option(matmul_capture):
    """``frontier --capture X --num-warps 8`` searches the launches at 8 warps, as analyze and explain
    compile them, not as captured; an attention option with a capture alone is refused, not dropped."""
    cap = matmul_capture.path
    res = cli("frontier", "--capture", str(cap), "--arch", "gfx942", "--num-warps", "8", "--jobs", "1", "-f", "json")
    assert res.returncode == 0, res.stderr
    kernels = json.loads(res.stdout)["kernels"]
    assert len(kernels) == 2
    for k in kernels:
        assert k["config"]["options"]["num_warps"] == 8
        assert all(lv["record"]["config"]["options"]["num_warps"] == 8 for lv in k["levels"] if lv["record"])
    refused = cli("frontier", "--capture", str(cap), "--arch", "gfx942", "--block-m", "64", "--jobs", "1")
    assert refused.returncode == 2 and "--block-m applies to the bundled variants" in refused.stderr
