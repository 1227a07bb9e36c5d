"""The occupancy model: occupancy.md's worked examples exactly, properties, next step / headroom exactness,
bad input, the LLVM-difference notes, and the `occupancy`, `archs` and `variants` commands."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.core.test_llvm_crosscheck import llvm_rule_occupancy  # type: ignore[import-not-found]
from vgprscope.backends import ladder, occupancy_of
from vgprscope.core.archs import ARCHS, AmdArch, NvidiaArch, get_arch
from vgprscope.core.errors import UsageError
from vgprscope.core.occupancy.amd import (
    amd_occupancy,
    llvm_min_num_vgprs,
    llvm_vgpr_allocation,
    llvm_waves_per_eu,
    total_vgprs,
)
from vgprscope.core.occupancy.common import LadderStep
from vgprscope.core.occupancy.nvidia import nvidia_occupancy
from vgprscope.core.records import AmdUsage, NvidiaUsage

AMD = [a for a in ARCHS.values() if isinstance(a, AmdArch)]
NV = [a for a in ARCHS.values() if isinstance(a, NvidiaArch)]
KIB = 1024


# ------------------------------------------------------------------------------ worked examples (exact)

@pytest.mark.parametrize("arch, kwargs, expected", [
    ("gfx90a", dict(vgpr_total=128), 4),
    ("gfx90a", dict(vgpr_total=0, arch_vgpr=128, agpr=128), 2),
    ("gfx90a", dict(vgpr_total=0, arch_vgpr=130, agpr=4), 3),  # 132 + 4 = 136
    ("gfx90a", dict(vgpr_total=65), 7),
    ("gfx90a", dict(vgpr_total=0, arch_vgpr=256, agpr=256), 1),
    ("gfx90a", dict(vgpr_total=32, sgpr=106), 7),
    ("gfx942", dict(vgpr_total=32, lds_bytes=64 * KIB, workgroup_size=256), 1),
    ("gfx950", dict(vgpr_total=32, lds_bytes=64 * KIB, workgroup_size=256), 2),
    ("gfx942", dict(vgpr_total=32, lds_bytes=16 * KIB, workgroup_size=256), 4),
    ("gfx1100", dict(vgpr_total=128), 10),
    ("gfx1100-wave64", dict(vgpr_total=128), 5),
    # RDNA4 wave32 (1536 VGPRs, granule 24): each equals LLVM's `; Occupancy:` on a Triton 3.9 compile of
    # tests/fixtures/user_kernels/matmul.py (219 VGPRs, 1 warp: 6) or the bundled baseline (121 -> 10, 144 -> 10)
    ("gfx1201", dict(vgpr_total=219), 6),
    ("gfx1201", dict(vgpr_total=121), 10),
    ("gfx1201", dict(vgpr_total=144), 10),
    ("gfx1201", dict(vgpr_total=145), 9),
    ("gfx1201", dict(vgpr_total=96), 16),
    ("gfx1201", dict(vgpr_total=256), 5),
    # 128 KiB of LDS per WGP holds 2 of these 8-wave workgroups: 16 waves over 4 SIMDs
    ("gfx1201", dict(vgpr_total=32, lds_bytes=64 * KIB, workgroup_size=256), 4),
])
def test_amd_worked_examples(arch, kwargs, expected):
    o = amd_occupancy(get_arch(arch), **kwargs)
    assert o.value == expected
    assert o.unit == "waves/SIMD"
    assert o.percent == pytest.approx(100 * expected / get_arch(arch).max_waves_per_simd, abs=0.01)


def test_amd_worked_examples_limiters():
    assert amd_occupancy(get_arch("gfx90a"), 32, 106).limiters == ("sgpr",)
    assert amd_occupancy(get_arch("gfx942"), 32, None, 64 * KIB, 256).limiters == ("lds",)
    assert amd_occupancy(get_arch("gfx90a"), 128).limiters == ("vgpr",)
    assert total_vgprs(get_arch("gfx90a"), 130, 4) == 136


@pytest.mark.parametrize("arch, blocks, limiters", [
    ("sm_80", 2, ("regs", "shared")), ("sm_86", 1, ("shared",)), ("sm_89", 1, ("shared",)),
    ("sm_90", 2, ("regs",)), ("sm_120", 1, ("shared",)),
])
def test_nvidia_255_regs_64k_shared(arch, blocks, limiters):
    o = nvidia_occupancy(get_arch(arch), 255, 64 * KIB, 128)
    assert (o.value, o.warps_per_sm, o.limiters) == (blocks, blocks * 4, limiters)
    if arch == "sm_80":
        assert o.percent == 12.5


def test_nvidia_32_regs_256_threads():
    sm80 = nvidia_occupancy(get_arch("sm_80"), 32, 0, 256)
    assert (sm80.value, sm80.percent, sm80.warps_per_sm) == (8, 100.0, 64)
    assert sm80.next_step == "at the maximum (8 blocks/SM, 64 warps/SM)" and sm80.limiters == ()
    assert nvidia_occupancy(get_arch("sm_86"), 32, 0, 256).value == 6


# sm_120: (regs, threads, shared bytes) -> blocks/SM (and the limits that bind at that value) as NVIDIA's cuda_occupancy.h (nvidia-cuda-runtime-cu12
# 12.9.79) computes it for compute capability 12.0 with the programming guide's device properties (1536 threads
# and 100 KiB of shared memory per SM, 99 KiB opt-in per block, 1 KiB reserved), the function opted in to the
# large dynamic shared memory as Triton's launcher does. The same harness agreed with this model on all 2,340
# launches of a grid (regs 1..255, 32..1024 threads, 0..101377 B), for sm_89 as well.
@pytest.mark.parametrize("regs, threads, shared, blocks, limiters", [
    (255, 128, 65536, 1, ("shared",)),
    (32, 256, 0, 6, ()),  # 48 warps: the maximum
    (64, 256, 0, 4, ("regs",)),
    (32, 64, 0, 24, ()),  # the 24-block limit and 48 warps at once
    (1, 32, 0, 24, ("blocks",)),
    (128, 128, 0, 4, ("regs",)),
    (40, 1024, 0, 1, ("regs", "warps")),
    (48, 1024, 0, 1, ("regs", "warps")),
    (255, 128, 101376, 1, ("shared",)),
    (255, 128, 101377, 0, ("shared",)),  # over the opt-in limit: does not launch
    (96, 384, 49152, 1, ("regs",)),
    (168, 160, 16384, 2, ("regs",)),
])
def test_sm_120_equals_cuda_occupancy_h(regs, threads, shared, blocks, limiters):
    o = nvidia_occupancy(get_arch("sm_120"), regs, shared, threads)
    assert o.value == blocks
    assert o.warps_per_sm == blocks * -(-threads // 32)
    assert o.percent == round(100 * o.warps_per_sm / 48, 2)
    assert o.limiters == limiters


@pytest.mark.parametrize("arch", [a.name for a in NV])
def test_nvidia_64_regs_256_threads_everywhere(arch):
    assert nvidia_occupancy(get_arch(arch), 64, 0, 256).value == 4


def test_cdna_ladder_exact():
    steps = [(s.lo, s.hi, s.value) for s in ladder(get_arch("gfx942"))]
    assert steps == [(1, 64, 8), (65, 72, 7), (73, 80, 6), (81, 96, 5), (97, 128, 4), (129, 168, 3),
                     (169, 256, 2), (257, 512, 1)]
    assert ladder(get_arch("gfx90a")) == ladder(get_arch("gfx950"))
    assert all(isinstance(s, LadderStep) for s in steps for s in ladder(get_arch("sm_80")))


def test_nvidia_ladder_steps_and_threads_alias():
    steps = ladder(get_arch("sm_80"), threads=256)
    assert (steps[0].lo, steps[0].value, steps[0].warps_per_sm) == (1, 8, 64)
    assert steps[-1].hi == 255
    assert ladder(get_arch("sm_80"), 256) == steps


# ------------------------------------------------------------------------------------------- properties

amd_archs = st.sampled_from(AMD)
nv_archs = st.sampled_from(NV)
warps = st.sampled_from([1, 2, 3, 4, 5, 8, 12, 16])


@st.composite
def amd_inputs(draw):
    a = draw(amd_archs)
    wg = draw(warps) * a.wave_size if draw(st.booleans()) else None
    if wg is not None and wg > a.max_threads_per_workgroup:
        wg = a.max_threads_per_workgroup
    vg = draw(st.integers(0, a.max_vgprs_total))
    sg = draw(st.one_of(st.none(), st.integers(0, a.max_sgprs)))
    lds = draw(st.one_of(st.just(0), st.integers(0, a.lds_per_workgroup + 2048)))
    return a, vg, sg, lds, wg


@st.composite
def nv_inputs(draw):
    a = draw(nv_archs)
    return (a, draw(st.integers(0, a.max_regs_per_thread)),
            draw(st.one_of(st.just(0), st.integers(0, a.max_shared_per_block + 4096))),
            draw(st.integers(1, a.max_threads_per_block)))


@settings(max_examples=300, deadline=None)
@given(amd_inputs(), st.integers(0, 64), st.integers(0, 8192))
def test_amd_more_registers_or_lds_never_raise_occupancy(inp, more_vgpr, more_lds):
    a, vg, sg, lds, wg = inp
    o = amd_occupancy(a, vg, sg, lds, wg)
    assert amd_occupancy(a, min(vg + more_vgpr, a.max_vgprs_total), sg, lds, wg).value <= o.value
    assert amd_occupancy(a, vg, sg, lds + more_lds, wg).value <= o.value
    if sg is not None:
        assert amd_occupancy(a, vg, min(sg + more_vgpr, a.max_sgprs), lds, wg).value <= o.value


@settings(max_examples=300, deadline=None)
@given(amd_inputs())
def test_amd_value_in_range(inp):
    a, vg, sg, lds, wg = inp
    o = amd_occupancy(a, vg, sg, lds, wg)
    assert 0 <= o.value <= o.max_value <= a.max_waves_per_simd
    assert o.value == min(dict(o.limits).values())
    assert (o.value == 0) == o.note.startswith("does not launch"), o.note
    if o.value:
        assert set(o.limiters) <= set(dict(o.limits)) and (o.limiters or o.value == a.max_waves_per_simd)
        assert o.percent == pytest.approx(100 * o.value / a.max_waves_per_simd, abs=0.01)
        wpw = -(-(wg or a.wave_size) // a.wave_size)
        assert o.waves_per_cu % wpw == 0 and -(-o.waves_per_cu // a.simds_per_cu) == o.value


@settings(max_examples=300, deadline=None)
@given(nv_inputs(), st.integers(0, 64), st.integers(0, 16384))
def test_nvidia_more_registers_or_shared_never_raise_occupancy(inp, more_regs, more_shared):
    a, r, sh, t = inp
    o = nvidia_occupancy(a, r, sh, t)
    assert nvidia_occupancy(a, min(r + more_regs, a.max_regs_per_thread), sh, t).value <= o.value or r == 0
    assert nvidia_occupancy(a, r, sh + more_shared, t).value <= o.value
    assert 0 <= o.value <= min(a.max_blocks_per_sm, a.max_warps_per_sm // -(-t // 32))
    assert o.warps_per_sm == o.value * -(-t // 32) <= a.max_warps_per_sm
    assert (o.value == 0) == o.note.startswith("does not launch")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(AMD + NV), st.sampled_from([1, 2, 4, 8, 16]), st.data())
def test_ladder_steps_are_exactly_where_the_function_changes(a, w, data):
    size = w * a.wave_size
    steps = ladder(a, size)
    assert steps[0].lo == 1 and all(x.hi + 1 == y.lo and x.value != y.value for x, y in zip(steps, steps[1:]))
    top = a.max_vgprs_total if isinstance(a, AmdArch) else a.max_regs_per_thread
    assert steps[-1].hi == top
    n = data.draw(st.integers(1, top))
    step = next(s for s in steps if s.lo <= n <= s.hi)
    o = amd_occupancy(a, n, None, 0, size) if isinstance(a, AmdArch) else nvidia_occupancy(a, n, 0, size)
    assert step.value == o.value and step.percent == o.percent


# --------------------------------------------------------------------- next step and headroom, exactly

_AMD_KEYS = {"VGPRs": "vgpr", "VGPRs/AGPRs": "vgpr", "SGPRs": "sgpr", "bytes of LDS": "lds"}
_NV_KEYS = {"registers": "regs", "bytes of shared memory": "shared"}
_SHED = re.compile(r"(\d+) (VGPRs/AGPRs|VGPRs|SGPRs|bytes of LDS|registers|bytes of shared memory) \(-> (\d+)\)")
_FOR = re.compile(r" for (\d+) (?:wave|block)")
_HEAD = re.compile(r"(\d+) (VGPRs/AGPRs|VGPRs|SGPRs|bytes of LDS|registers|bytes of shared memory) of headroom"
                   r"?(?: before (?:(\d+) (?:wave|block)|(it no longer launches))|: even the maximum, (\d+), keeps)")


def _amd(a, amounts, wg):
    return amd_occupancy(a, amounts["vgpr"], amounts["sgpr"], amounts["lds"], wg)


def _nv(a, amounts, t):
    return nvidia_occupancy(a, amounts["regs"], amounts["shared"], t)


def _check_plan(o, amounts, keys, occ):
    """Applying the suggested cuts gives exactly the promised step; one unit less of any cut gains nothing;
    headroom: that much more keeps the value, one more drops to the promised value."""
    if o.next_step.startswith("shed"):
        cuts = {keys[label]: (int(n), int(to)) for n, label, to in _SHED.findall(o.next_step)}
        promised = int(_FOR.search(o.next_step).group(1))
        assert cuts and promised > o.value
        for key, (n, to) in cuts.items():
            assert amounts[key] - n == to and 0 <= to < amounts[key]
        after = amounts | {k: to for k, (_, to) in cuts.items()}
        assert occ(after).value == promised
        for key, (_, to) in cuts.items():
            assert occ(after | {key: to + 1}).value <= o.value, (key, o.next_step)
    else:
        assert o.next_step.startswith(("at the maximum", "no register")), o.next_step
    if o.value == 0:
        assert o.headroom == "none: it does not launch"
        return
    found = _HEAD.findall(o.headroom)
    assert found and found[0][1] in ("VGPRs", "VGPRs/AGPRs", "registers")
    for n, label, drop, gone, maximum in found:
        key, extra = keys[label], int(n)
        assert occ(amounts | {key: amounts[key] + extra}).value == o.value
        if maximum:
            assert amounts[key] + extra == int(maximum)
        else:
            assert occ(amounts | {key: amounts[key] + extra + 1}).value == (0 if gone else int(drop))


@settings(max_examples=300, deadline=None)
@given(amd_inputs())
def test_amd_next_step_and_headroom_are_exact(inp):
    a, vg, sg, lds, wg = inp
    o = amd_occupancy(a, vg, sg, lds, wg)
    _check_plan(o, {"vgpr": vg, "sgpr": sg, "lds": lds}, _AMD_KEYS, lambda m: _amd(a, m, wg))


@settings(max_examples=300, deadline=None)
@given(nv_inputs())
def test_nvidia_next_step_and_headroom_are_exact(inp):
    a, r, sh, t = inp
    o = nvidia_occupancy(a, r, sh, t)
    _check_plan(o, {"regs": r, "shared": sh}, _NV_KEYS, lambda m: _nv(a, m, t))


def test_next_step_examples():
    g942 = get_arch("gfx942")
    assert amd_occupancy(g942, 256).next_step == "shed 88 VGPRs (-> 168) for 3 waves/SIMD"
    assert amd_occupancy(g942, 244).headroom == "12 VGPRs of headroom before 1 wave/SIMD"
    assert amd_occupancy(g942, 40).next_step == "at the maximum (8 waves/SIMD)"
    o = amd_occupancy(g942, 32, None, 64 * KIB, 256)
    assert o.next_step == "shed 32768 bytes of LDS (-> 32768) for 2 waves/SIMD"
    both = amd_occupancy(g942, 0, None, 32 * KIB, 256, arch_vgpr=128, agpr=64)
    assert both.limiters == ("vgpr", "lds")
    assert both.next_step == "shed 24 VGPRs/AGPRs (-> 168) and 11264 bytes of LDS (-> 21504) for 3 waves/SIMD"
    sm80 = nvidia_occupancy(get_arch("sm_80"), 255, 64 * KIB, 128)
    assert sm80.next_step.startswith("shed 87 registers (-> 168) and 10624 bytes of shared memory (-> 54912)")


def test_structural_limits_explain_themselves():
    small = nvidia_occupancy(get_arch("sm_80"), 32, 0, 32)
    assert small.value == 32 and small.limiters == ("blocks",) and "32-block/SM limit" in small.next_step
    odd = nvidia_occupancy(get_arch("sm_86"), 32, 0, 160)
    assert (odd.value, odd.limiters) == (9, ("warps",)) and "45 of the 48 warp slots" in odd.next_step
    wg768 = amd_occupancy(get_arch("gfx942"), 32, None, 0, 768)
    assert (wg768.value, wg768.limiters) == (6, ("workgroup",)) and "another workgroup size" in wg768.next_step


# ------------------------------------------------------------------------------- launches that cannot fit

def test_nvidia_shared_over_the_block_limit_is_zero_not_an_error():
    o = nvidia_occupancy(get_arch("sm_90"), 64, 240000, 128)
    assert o.value == 0 and o.limiters == ("shared",)
    assert o.note.startswith("does not launch") and "232448 B opt-in limit" in o.note
    assert o.next_step == "shed 7552 bytes of shared memory (-> 232448) for 1 block/SM, 4 warps/SM"


def test_amd_lds_over_the_workgroup_limit_is_zero():
    o = amd_occupancy(get_arch("gfx942"), 64, None, 70000, 256)
    assert o.value == 0 and o.limiters == ("lds",) and "65536 B a workgroup may have" in o.note


def test_amd_workgroup_that_registers_cannot_hold_is_zero():
    o = amd_occupancy(get_arch("gfx942"), 256, None, 0, 1024)  # 16 waves need 4 per SIMD, 256 VGPRs allow 2
    assert o.value == 0 and o.limiters == ("vgpr",)
    assert o.next_step == "shed 128 VGPRs (-> 128) for 4 waves/SIMD"


def test_whole_workgroups():
    # 8-wave workgroups with room for 3 waves/SIMD: only one workgroup (8 waves, 2/SIMD) is resident.
    o = amd_occupancy(get_arch("gfx942"), 146, None, 0, 512)
    assert (o.value, o.waves_per_cu) == (2, 8)
    assert "resident whole" in o.note and llvm_rule_occupancy(get_arch("gfx942"), 146, None, 0, (512, 512)) == 3
    assert amd_occupancy(get_arch("gfx942"), 146, None, 0, 256).value == 3


def test_lds_granule_rounding():
    g942 = get_arch("gfx942")
    # 13107 B: 5 workgroups unrounded (LLVM), 13312 B rounded to 512 -> 4
    o = amd_occupancy(g942, 32, None, 13107, 64)
    assert o.value == 1 and dict(o.limits)["lds"] == 1
    o = amd_occupancy(g942, 32, None, 13107, 256)
    assert o.value == 4 and "granule" in o.note and llvm_rule_occupancy(g942, 32, None, 13107, (256, 256)) == 5


def test_waves_per_eu_pads_the_allocation():
    g942, g1100 = get_arch("gfx942"), get_arch("gfx1100")
    assert amd_occupancy(g942, 108, 52, 8192, 256, waves_per_eu=2).value == 2
    assert amd_occupancy(g942, 108, 52, 8192, 256).value == 4
    assert amd_occupancy(g1100, 235, 54, 8192, 128, waves_per_eu=2).value == 5  # cannot go below 5 on RDNA3
    o = amd_occupancy(g942, 108, 52, 8192, 256, waves_per_eu=2)
    assert o.next_step.startswith("no register cut helps: waves_per_eu=2")


# The descriptor's `.amdhsa_next_free_vgpr` (NumVGPRsForWavesPerEU) of a 5..38-VGPR kernel compiled by Triton
# 3.9 with waves_per_eu = N (num_warps 1, so LLVM keeps every N): LLVM's getMinNumVGPRs(N), 0 = not padded.
MIN_VGPRS = {
    "gfx942": [257, 169, 129, 97, 81, 73, 65, 0],
    "gfx1100": [241, 241, 241, 241, 241, 217, 193, 169, 145, 121, 97, 97, 0, 0, 0, 0],
}


@pytest.mark.parametrize("arch", sorted(MIN_VGPRS))
def test_llvm_min_num_vgprs_equals_the_compiled_padding(arch):
    a = get_arch(arch)
    assert [llvm_min_num_vgprs(a, n) for n in range(1, a.max_waves_per_simd + 1)] == MIN_VGPRS[arch]
    assert [llvm_vgpr_allocation(a, 38, n) for n in (1, 8)] == ([257, 38] if arch == "gfx942" else [241, 169])


def test_llvm_drops_a_waves_per_eu_minimum_the_workgroup_makes_impossible():
    g942, g1100 = get_arch("gfx942"), get_arch("gfx1100")
    # getEffectiveWavesPerEU: one 512-thread workgroup (8 waves) needs 2 waves/SIMD, so "1,1" is dropped for
    # the default (2, 8); "2,2" is kept; no attribute reads as (1, 8) and gives the default too
    assert llvm_waves_per_eu(g942, 1, 512) == (2, 8)
    assert llvm_waves_per_eu(g942, 2, 512) == (2, 2)
    assert llvm_waves_per_eu(g942, None, 512) == (2, 8)
    assert llvm_waves_per_eu(g942, 1, 256) == (1, 1)
    assert [llvm_waves_per_eu(g942, n, 1024)[0] == n for n in range(1, 9)] == [False] * 3 + [True] * 5
    # wave32: 16 warps are 16 waves, 4 per SIMD of the WGP
    assert llvm_waves_per_eu(g1100, 3, 512) == (4, 16) and llvm_waves_per_eu(g1100, 4, 512) == (4, 4)
    # static LDS that holds the range to 1 wave/SIMD: a larger minimum is above the default range
    assert llvm_waves_per_eu(g942, 2, 256, lds_static=40 * KIB) == (1, 1)


def test_a_dropped_hint_pads_nothing_and_equals_llvm():
    g942 = get_arch("gfx942")
    # analyze --variant row-stream --arch gfx942 --num-warps 8 --waves-per-eu 1: 62 VGPRs, LLVM says 8
    o = amd_occupancy(g942, 62, 40, 2048, 512, waves_per_eu=1, llvm_occupancy=8, llvm_max_workgroup=512)
    assert o.value == 8 and "cannot name" not in o.note and "does not launch" not in o.note
    assert o.note.startswith("waves_per_eu=1 has no effect: LLVM drops a hint below the 2 waves/SIMD one "
                             "512-thread workgroup needs")
    assert llvm_rule_occupancy(g942, 62, 40, 0, (1, 512), 1) == 8
    # kept at 2 with the same workgroup: padded to 169 VGPRs, 2 waves/SIMD, no "no effect"
    kept = amd_occupancy(g942, 62, 40, 2048, 512, waves_per_eu=2, llvm_occupancy=2, llvm_max_workgroup=512)
    assert (kept.value, kept.note) == (2, "")
    assert kept.next_step.startswith("no register cut helps: waves_per_eu=2 pads the VGPR allocation")


def test_a_hint_with_no_exact_register_step_gives_the_next_step_up():
    g1100 = get_arch("gfx1100")
    # wave32: no VGPR count gives exactly 11 waves (97 VGPRs give 12), and 13..15 need no padding at all
    assert [amd_occupancy(g1100, 20, None, 0, 128, waves_per_eu=n).value for n in (10, 11, 12, 13, 15)] == \
        [10, 12, 12, 16, 16]
    assert [llvm_rule_occupancy(g1100, 20, None, 0, (1, 128), n) for n in (10, 11, 12, 13, 15)] == \
        [10, 12, 12, 16, 16]


# ---------------------------------------------------------------------------------- LLVM-difference notes

def test_note_names_lds_llvm_cannot_see():
    o = amd_occupancy(get_arch("gfx1100"), 256, 54, 8192, 32, llvm_occupancy=5, lds_static=0, llvm_max_workgroup=32)
    assert o.value == 4 and "dynamic LDS" in o.note and "LLVM's `; Occupancy: 5`" in o.note


def test_note_names_the_workgroup_range():
    # LLVM's range 1..1024 lets 1-wave workgroups fill the slots that 768-thread workgroups cannot.
    o = amd_occupancy(get_arch("gfx942"), 32, None, 0, 768, llvm_occupancy=8, llvm_max_workgroup=1024)
    assert o.value == 6 and "1..1024 threads" in o.note


def test_note_says_when_the_reason_is_unknown():
    o = amd_occupancy(get_arch("gfx942"), 32, None, 0, 256, llvm_occupancy=5)
    assert "cannot name" in o.note and "gives 8" in o.note
    hint = amd_occupancy(get_arch("gfx942"), 108, None, 0, 256, llvm_occupancy=2)
    assert "waves_per_eu" in hint.note


def test_note_empty_when_llvm_agrees():
    assert amd_occupancy(get_arch("gfx942"), 128, 60, 8192, 256, llvm_occupancy=4).note == ""


# ----------------------------------------------------------------------------------- dispatch, bad input

def _amd_usage(**kw):
    base = dict(arch_vgpr=128, agpr=0, vgpr_total=128, sgpr=60, vgpr_spill=0, sgpr_spill=0, scratch_bytes=0,
                lds_static=0, lds_dynamic=16384, spill_stores=0, spill_loads=0, spill_insts_in_loop=0,
                llvm_occupancy=4, max_flat_workgroup_size=256, code_bytes=None)
    return AmdUsage(**(base | kw))


def test_occupancy_of_dispatches_by_usage_type():
    o = occupancy_of(_amd_usage(), get_arch("gfx942"), 4)
    assert (o.value, o.note) == (4, "")
    nv = NvidiaUsage(regs=255, stack_bytes=0, spill_store_bytes=0, spill_load_bytes=0, shared_static=0,
                     shared_dynamic=64 * KIB, local_bytes=0)
    assert occupancy_of(nv, get_arch("sm_90"), 4).value == 2
    with pytest.raises(UsageError):
        occupancy_of(nv, get_arch("gfx942"), 4)
    with pytest.raises(UsageError):
        occupancy_of(_amd_usage(), get_arch("sm_80"), 4)
    with pytest.raises(UsageError):
        occupancy_of({"regs": 1}, get_arch("sm_80"), 4)
    with pytest.raises(UsageError):
        occupancy_of(_amd_usage(), get_arch("gfx942"), 0)


@pytest.mark.parametrize("call", [
    lambda: amd_occupancy(get_arch("gfx942"), -1),
    lambda: amd_occupancy(get_arch("gfx942"), 513),
    lambda: amd_occupancy(get_arch("gfx942"), 0, arch_vgpr=257, agpr=0),
    lambda: amd_occupancy(get_arch("gfx942"), 0, arch_vgpr=128, agpr=257),
    lambda: amd_occupancy(get_arch("gfx942"), 200, arch_vgpr=128, agpr=64),  # total is 192
    lambda: amd_occupancy(get_arch("gfx1100"), 257),
    lambda: amd_occupancy(get_arch("gfx1100"), 0, arch_vgpr=64, agpr=8),  # no AGPRs on RDNA
    lambda: amd_occupancy(get_arch("gfx942"), 64, -1),
    lambda: amd_occupancy(get_arch("gfx942"), 64, 109),
    lambda: amd_occupancy(get_arch("gfx942"), 64, None, -5),
    lambda: amd_occupancy(get_arch("gfx942"), 64, None, 0, 0),
    lambda: amd_occupancy(get_arch("gfx942"), 64, None, 0, 1025),
    lambda: amd_occupancy(get_arch("gfx942"), 64.5),
    lambda: amd_occupancy(get_arch("sm_80"), 64),
    lambda: nvidia_occupancy(get_arch("sm_80"), 256),
    lambda: nvidia_occupancy(get_arch("sm_80"), -1),
    lambda: nvidia_occupancy(get_arch("sm_80"), 32, -1),
    lambda: nvidia_occupancy(get_arch("sm_80"), 32, 0, 0),
    lambda: nvidia_occupancy(get_arch("sm_80"), 32, 0, 1025),
    lambda: nvidia_occupancy(get_arch("gfx942"), 32),
    lambda: ladder(get_arch("gfx942"), 2048),
])
def test_bad_input_is_a_usage_error(call):
    with pytest.raises(UsageError) as info:
        call()
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------------ CLI

@pytest.fixture(scope="module")
def cli():
    from vgprscope.cli import app as app_module

    app_module._register()
    runner = CliRunner()
    return lambda *args: runner.invoke(app_module.app, list(args))


def test_cli_occupancy_amd_json(cli):
    r = cli("occupancy", "--arch", "gfx942", "--vgprs", "128", "--agprs", "64", "--lds", "32768",
            "--workgroup", "256", "--format", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["waves_per_simd"] == 2 and d["occupancy_pct"] == 25.0 and d["limiters"] == ["vgpr", "lds"]
    assert d["limits"] == {"vgpr": 2, "lds": 2, "workgroup": 8} and d["inputs"]["vgpr_total"] == 192
    assert {"next_step", "headroom", "note", "waves_per_cu"} <= set(d)


def test_cli_occupancy_nvidia_json(cli):
    r = cli("occupancy", "--arch", "sm_80", "--regs", "255", "--shared", "65536", "--threads", "128", "-f", "json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert (d["blocks_per_sm"], d["warps_per_sm"], d["occupancy_pct"]) == (2, 8, 12.5)
    assert d["limiters"] == ["regs", "shared"] and d["limits"]["warps"] == 16


def test_cli_occupancy_table_and_ladder(cli):
    r = cli("occupancy", "--arch", "gfx90a", "--vgprs", "100", "--ladder")
    assert r.exit_code == 0, r.output
    assert "4 / 8 waves/SIMD" in r.stdout and "97-128" in r.stdout and "<- here" in r.stdout
    r = cli("occupancy", "--arch", "sm_90", "--ladder", "--threads", "256", "-f", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["ladder"][0] == {"lo": 1, "hi": 32, "value": 8,
                                                                      "percent": 100.0, "warps_per_sm": 64}


@pytest.mark.parametrize("args, message", [
    (("--arch", "sm_80", "--vgprs", "64"), "--vgprs applies to AMD archs only"),
    (("--arch", "gfx942", "--regs", "64", "--shared", "0"), "--regs, --shared apply to NVIDIA archs only"),
    (("--arch", "gfx942"), "--vgprs is required"),
    (("--arch", "sm_90"), "--regs is required"),
    (("--arch", "gfx942", "--vgprs", "600"), "over the maximum of 256"),
    (("--arch", "gfx942", "--vgprs", "300"), "arch VGPRs 300 is over the maximum of 256 for a wave on gfx942"),
    (("--arch", "gfx942", "--vgprs", "-1"), "negative"),
    (("--arch", "sm_80", "--regs", "300"), "over the maximum of 255"),
    (("--arch", "sm_80", "--regs", "32", "--threads", "2048"), "between 1 and 1024"),
    (("--arch", "gfx999", "--vgprs", "1"), "unknown arch"),
])
def test_cli_occupancy_usage_errors_exit_2(cli, args, message):
    r = cli("occupancy", *args)
    assert r.exit_code == 2
    assert message in r.stderr and r.stderr.count("\n") == 1 and r.stdout == ""


@pytest.mark.parametrize("fmt", ["table", "json", "md"])
def test_cli_archs(cli, fmt):
    r = cli("archs", "--format", fmt)
    assert r.exit_code == 0, r.output
    if fmt == "json":
        names = [a["name"] for a in json.loads(r.stdout)]
        assert names == list(ARCHS)
    else:
        assert all(name in r.stdout for name in ARCHS)


@pytest.mark.parametrize("fmt", ["table", "json", "md"])
def test_cli_variants(cli, fmt):
    from vgprscope.flashattn.variants import load_variants

    r = cli("variants", "-f", fmt)
    assert r.exit_code == 0, r.output
    names = list(load_variants())
    if fmt == "json":
        d = json.loads(r.stdout)
        assert [v["name"] for v in d] == names and d[0]["kernels"] and d[0]["strategy"]
    else:
        assert all(n in r.stdout for n in names) and "baseline" in r.stdout
