"""The spill-free occupancy frontier: levels from the ladder, the summary and the bisection on synthetic
compiles (exact), then fresh compiles whose every level equals `analyze --waves-per-eu N` / `--maxnreg N`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from vgprscope.analysis.frontier.core import SpecAccess, by_variant, occupancy_levels, run_frontier
from vgprscope.analysis.frontier.summary import summary
from vgprscope.backends import occupancy_of
from vgprscope.core.archs import get_arch
from vgprscope.core.records import AmdUsage, NvidiaUsage, Record
from vgprscope.flashattn.config import AttentionConfig


def test_levels_follow_the_register_ladder():
    cdna = [(p.target, p.budget, p.knob, p.setting) for p in occupancy_levels(get_arch("gfx942"), 4)]
    assert cdna == [(1, 512, "waves_per_eu", 1), (2, 256, "waves_per_eu", 2), (3, 168, "waves_per_eu", 3),
                    (4, 128, "waves_per_eu", 4), (5, 96, "waves_per_eu", 5), (6, 80, "waves_per_eu", 6),
                    (7, 72, "waves_per_eu", 7), (8, 64, "waves_per_eu", 8)]
    # RDNA3 wave32: 256 VGPRs still give 5 waves, so the levels start there
    assert [p.target for p in occupancy_levels(get_arch("gfx1100"), 4)] == [5, 6, 7, 8, 9, 10, 12, 16]
    hopper = [(p.target, p.budget) for p in occupancy_levels(get_arch("sm_90"), 8)]
    assert hopper == [(1, 255), (2, 128), (3, 80), (4, 64), (5, 48), (6, 40), (8, 32)]
    assert all(p.knob == "maxnreg" and p.setting == p.budget for p in occupancy_levels(get_arch("sm_90"), 8))


# ---- synthetic compiles: a task is (name, arch name, AttentionConfig); the kernel needs NEED registers ----

def _access() -> SpecAccess:
    return SpecAccess(
        arch=lambda t: get_arch(t[1]), num_warps=lambda t: t[2].num_warps,
        vary=lambda t, knob, v: (t[0], t[1], replace(t[2], **{knob: v})),
        key=lambda t: (t[0], t[1], t[2].key()), record_key=lambda r: (r.variant, r.arch, r.config.key()),
        label=lambda t: t[0], config=lambda t: t[2],
    )


def _amd_record(task, need: int, lds: int, fail_at: int | None = None, uncapped_need: int | None = None) -> Record:
    """A synthetic compile: the kernel takes ``need`` VGPRs (``uncapped_need`` with no waves_per_eu) and
    spills what its level's budget cannot hold; uncapped, the budget is the arch's whole file."""
    name, arch_name, cfg = task
    arch = get_arch(arch_name)
    wpe = cfg.waves_per_eu
    if fail_at is not None and wpe == fail_at:
        return Record(name, "k", arch_name, cfg, status="LLVM ERROR: synthetic failure")
    if wpe is None:
        budget, need = arch.max_vgprs_total, need if uncapped_need is None else uncapped_need
    else:
        budget = {p.setting: p.budget for p in occupancy_levels(arch, cfg.num_warps)}[wpe]
    spill = max(0, need - budget)
    used = min(need, budget)
    u = AmdUsage(arch_vgpr=used, agpr=0, vgpr_total=used, sgpr=40, vgpr_spill=spill, sgpr_spill=0,
                 scratch_bytes=4 * spill, lds_static=0, lds_dynamic=lds, spill_stores=spill // 2,
                 spill_loads=spill // 2, spill_insts_in_loop=spill // 4, llvm_occupancy=None,
                 max_flat_workgroup_size=None, code_bytes=None,
                 vgpr_alloc=used if wpe is None else max(used, min(budget, 256)))
    occ = occupancy_of(u, arch, cfg.num_warps, waves_per_eu=wpe)
    return Record(name, "k", arch_name, cfg, status="ok", usage=u, occupancy=occ)


def _nv_record(task, need: int, uncapped_need: int | None = None) -> Record:
    """A synthetic ptxas: ``need`` registers under any maxnreg (``uncapped_need`` without one), spilling 8 B
    a register over the cap."""
    name, arch_name, cfg = task
    arch = get_arch(arch_name)
    cap = cfg.maxnreg or arch.max_regs_per_thread
    if cfg.maxnreg is None and uncapped_need is not None:
        need = uncapped_need
    spill = max(0, need - cap) * 8
    u = NvidiaUsage(regs=min(need, cap), stack_bytes=spill, spill_store_bytes=spill, spill_load_bytes=spill,
                    shared_static=0, shared_dynamic=16384, local_bytes=spill)
    return Record(name, "k", arch_name, cfg, status="ok", usage=u,
                  occupancy=occupancy_of(u, arch, cfg.num_warps))


CFG = AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=4)


def test_amd_summary_names_the_spill_free_level_the_next_price_and_the_lds_cap():
    calls = []

    def compile_fn(tasks):
        calls.append(len(tasks))
        return [_amd_record(t, need=200, lds=32768) for t in tasks]

    [kf] = run_frontier([("base", "gfx942", CFG)], compile_fn, _access())
    assert calls == [9]  # every level and the uncapped compile in one batch, no bisection on AMD
    assert [lv.plan.target for lv in kf.levels] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert [lv.spills for lv in kf.levels] == [0, 0, 32, 72, 104, 120, 128, 136]
    assert kf.spill_free.plan.target == 2 and kf.next_level.plan.target == 3
    assert kf.spill_free_occupancy == 2
    # 32 KB of LDS and 4-wave workgroups: two workgroups per CU, 2 waves/SIMD, whatever the budget
    assert kf.next_level.reached == 2 and kf.next_level.limiters == ("lds",)
    assert summary(kf) == ("spill-free to 2 waves/SIMD (256 VGPRs); 3 waves/SIMD: 32 spills, 32 spill "
                          "instructions, 8 in the loop; LDS caps it at 2 anyway")
    doc = kf.as_dict()
    assert doc["spill_free_occupancy"] == 2 and len(doc["levels"]) == 8
    assert doc["levels"][2] | {"record": None} == doc["levels"][2] | {
        "level": 3, "knob": "waves_per_eu", "setting": 3, "budget": 168, "spills": 32, "vgpr_spill": 32,
        "sgpr_spill": 0, "spill_insts": 32, "spill_insts_in_loop": 8, "scratch_bytes": 128, "occupancy": 2,
        "limiters": ["lds"], "status": "ok", "record": None}


def test_a_level_that_fails_is_a_level_with_its_error():
    [kf] = run_frontier([("base", "gfx942", CFG)],
                        lambda ts: [_amd_record(t, need=100, lds=0, fail_at=4, uncapped_need=130) for t in ts],
                        _access())
    failed = [lv for lv in kf.levels if not lv.ok]
    assert [lv.plan.target for lv in failed] == [4]
    assert failed[0].record.status == "LLVM ERROR: synthetic failure" and failed[0].spills is None
    # 100 VGPRs fit the 128 budget of level 4, which failed, and uncapped (130 VGPRs) reaches 3 too, so the
    # highest spill-free occupancy is 3, named by its level
    assert kf.spill_free.plan.target == 3 and kf.next_level.plan.target == 4
    assert summary(kf) == ("spill-free to 3 waves/SIMD (168 VGPRs); 4 waves/SIMD: does not compile "
                          "(LLVM ERROR: synthetic failure)")
    from vgprscope.analysis.frontier.view import tables_text
    from vgprscope.report.machine import compile_only

    text = tables_text([kf], compile_only(), width=100)
    assert "✗ [1]" in text and "[1] LLVM ERROR: synthetic failure" in text


def test_nvidia_bisection_finds_the_smallest_spill_free_maxnreg():
    nv = replace(CFG, num_warps=8)
    batches = []

    def compile_fn(tasks):
        batches.append(sorted(t[2].maxnreg or 0 for t in tasks))
        return [_nv_record(t, need=100) for t in tasks]

    [kf] = run_frontier([("base", "sm_90", nv)], compile_fn, _access())
    assert batches[0] == [0, 32, 40, 48, 64, 80, 128, 255]  # 0: the uncapped compile
    # between level 2 (128, spill-free) and level 3 (80, spills): one probe a round
    assert batches[1:] == [[104], [92], [98], [101], [99], [100]]
    assert kf.min_spill_free_maxnreg == 100
    assert [p.plan.setting for p in kf.probes] == [92, 98, 99, 100, 101, 104]
    assert kf.spill_free.plan.budget == 128 and kf.spill_free_occupancy == 2
    assert summary(kf) == ("spill-free to 2 blocks/SM (128 registers); 3 blocks/SM: 160 B of spill stores, "
                          "160 B of spill loads; smallest spill-free maxnreg 100")


def test_spill_free_everywhere_and_spilling_everywhere():
    [free] = run_frontier([("a", "gfx942", CFG)], lambda ts: [_amd_record(t, 60, 0) for t in ts], _access())
    assert free.spill_free.plan.target == 8 and free.next_level is None and free.spill_free_occupancy == 8
    assert summary(free) == "spill-free to 8 waves/SIMD (64 VGPRs); that is the arch's top level"
    [spills] = run_frontier([("b", "gfx942", CFG)], lambda ts: [_amd_record(t, 600, 0) for t in ts], _access())
    assert spills.spill_free is None and spills.spill_free_occupancy is None
    # uncapped, 600 VGPRs spill as much as at level 1 (the same 512 budget): the level is named
    assert summary(spills).startswith("spills at every level and uncapped; fewest at 1 wave/SIMD: 88 spills")
    variants = by_variant([free, spills])
    assert variants[("a", "gfx942", CFG.key())].spill_free_occupancy == 8
    assert variants[("b", "gfx942", CFG.key())].spill_free_occupancy is None


def test_spilling_everywhere_names_the_compile_that_reaches_most_among_the_fewest_spills():
    """The uncapped compile reached 2 waves/SIMD with the 77 spills the 1 wave/SIMD level has too: the summary
    names it (it said 'fewest at 1 wave/SIMD: 77 spills', a lower occupancy for nothing)."""
    arch = get_arch("gfx942")

    def compile_fn(tasks):
        out = []
        for name, arch_name, cfg in tasks:
            wpe = cfg.waves_per_eu
            used, spill = (256, 77) if wpe is None else (512 if wpe == 1 else 128, 77 if wpe == 1 else 77 + 40 * wpe)
            u = AmdUsage(arch_vgpr=min(used, 256), agpr=max(0, used - 256), vgpr_total=used, sgpr=40,
                         vgpr_spill=spill, sgpr_spill=0, scratch_bytes=4 * spill, lds_static=0, lds_dynamic=0,
                         spill_stores=spill, spill_loads=spill, spill_insts_in_loop=0, llvm_occupancy=None,
                         max_flat_workgroup_size=None, code_bytes=None, vgpr_alloc=used)
            out.append(Record(name, "k", arch_name, cfg, status="ok", usage=u,
                              occupancy=occupancy_of(u, arch, cfg.num_warps, waves_per_eu=wpe)))
        return out

    [kf] = run_frontier([("a", "gfx942", CFG)], compile_fn, _access())
    assert kf.spill_free is None and kf.uncapped is not None and kf.uncapped.reached == 2
    assert summary(kf).startswith("spills at every level and uncapped; fewest with no waves_per_eu, at 2 "
                                  "waves/SIMD: 77 spills"), summary(kf)


def test_nvidia_uncapped_compile_that_reaches_more_is_the_spill_free_occupancy():
    # ptxas takes 120 registers uncapped (4 blocks/SM of 128 threads, no spills) but spills under a 128 cap:
    # the spill-free occupancy is the uncapped compile's 4 blocks/SM, not the capped ladder's 3 (advice from
    # the capped compiles alone would lower occupancy from 4 to 3)
    batches = []

    def compile_fn(tasks):
        batches.append(len(tasks))
        return [_nv_record(t, need=142, uncapped_need=120) for t in tasks]

    [kf] = run_frontier([("gemm", "sm_90", CFG)], compile_fn, _access())
    assert kf.uncapped.record.usage.regs == 120 and kf.uncapped.spill_free and kf.uncapped.reached == 4
    assert [(lv.plan.budget, lv.spill_free) for lv in kf.levels if lv.plan.target in (3, 4)] == \
        [(168, True), (128, False)]
    assert kf.spill_free is kf.uncapped and kf.spill_free_occupancy == 4
    # the next level aims above 4, and no bisection: every cap of the 4-block step spills (128 does)
    assert kf.next_level.plan.target == 5 and kf.min_spill_free_maxnreg is None and len(batches) == 1
    assert summary(kf) == ("spill-free to 4 blocks/SM with no maxnreg (120 registers); 5 blocks/SM: 368 B of "
                          "spill stores, 368 B of spill loads")
    doc = kf.as_dict()
    assert doc["spill_free_uncapped"] is True and doc["uncapped"]["setting"] is None
    assert doc["uncapped"]["uncapped"] is True and doc["spill_free_occupancy"] == 4


def test_amd_uncapped_compile_that_reaches_more_is_the_spill_free_occupancy():
    # LLVM with "N,N" takes 130 VGPRs at every level; without the hint 120 (4 waves/SIMD)
    [kf] = run_frontier([("k", "gfx942", CFG)],
                        lambda ts: [_amd_record(t, need=130, lds=0, uncapped_need=120) for t in ts], _access())
    assert [lv.spills for lv in kf.levels][2:4] == [0, 2]  # 168 holds 130, 128 does not
    assert kf.spill_free.uncapped and kf.spill_free_occupancy == 4 and kf.next_level.plan.target == 5
    assert summary(kf) == ("spill-free to 4 waves/SIMD with no waves_per_eu (120 VGPRs); 5 waves/SIMD: 34 spills, "
                          "34 spill instructions, 8 in the loop")


def test_a_level_equal_to_the_uncapped_compile_is_named_by_its_level():
    # uncapped and level 3 both reach 3 without spills: the level (a budget to keep) is named, as before
    [kf] = run_frontier([("k", "sm_90", CFG)], lambda ts: [_nv_record(t, need=150) for t in ts], _access())
    assert not kf.spill_free.uncapped and kf.spill_free.plan.budget == 168 and kf.spill_free_occupancy == 3
    assert kf.min_spill_free_maxnreg == 150 and summary(kf).endswith("; smallest spill-free maxnreg 150")


@settings(max_examples=150, deadline=None)
@given(arch=st.sampled_from(["gfx942", "gfx1100", "sm_80", "sm_90"]), warps=st.sampled_from([1, 2, 4, 8]),
       need=st.integers(16, 600), uncapped=st.one_of(st.none(), st.integers(16, 600)),
       lds=st.sampled_from([0, 16384, 40000]))
def test_frontier_never_advises_a_lower_occupancy(arch, warps, need, uncapped, lds):
    cfg = replace(CFG, num_warps=warps)
    amd = arch.startswith("gfx")

    def compile_fn(tasks):
        return [_amd_record(t, need, lds, uncapped_need=uncapped) if amd else _nv_record(t, need, uncapped)
                for t in tasks]

    [kf] = run_frontier([("k", arch, cfg)], compile_fn, _access())
    compiles = [*kf.levels, *kf.probes, kf.uncapped]
    free = [lv.reached for lv in compiles if lv.spill_free]
    # the highest occupancy any spill-free compile reached, the uncapped one included
    assert kf.spill_free_occupancy == (max(free) if free else None)
    if kf.spill_free is None:
        assert kf.next_level is None and kf.min_spill_free_maxnreg is None
        return
    assert kf.spill_free.spill_free and kf.spill_free.reached == kf.spill_free_occupancy
    # every price and every knob named points above it
    assert kf.next_level is None or kf.next_level.plan.target > kf.spill_free_occupancy
    if kf.min_spill_free_maxnreg is not None:
        [at] = [lv for lv in (*kf.levels, *kf.probes) if lv.plan.setting == kf.min_spill_free_maxnreg]
        assert at.spill_free and at.reached == kf.spill_free_occupancy
    head = summary(kf).split(";")[0]
    assert head.startswith(f"spill-free to {kf.spill_free.plan.target} ")
    if kf.spill_free.uncapped or kf.spill_free.reached >= kf.spill_free.plan.target:
        assert kf.spill_free.plan.target == kf.spill_free_occupancy


def test_frontier_table_reads_at_100_and_160_columns():
    from vgprscope.analysis.frontier.view import tables_text
    from vgprscope.report.machine import compile_only

    kfs = run_frontier([("split-k-two-phase", "gfx942", CFG)],
                       lambda ts: [_amd_record(t, need=200, lds=32768) for t in ts], _access())
    kfs += run_frontier([("split-k-two-phase", "sm_90", replace(CFG, num_warps=8))],
                        lambda ts: [_nv_record(t, 100) for t in ts], _access())
    for width in (100, 160):
        text = tables_text(kfs, compile_only(), width=width)
        assert max(len(ln) for ln in text.splitlines()) <= width
        # one line a compile: 8 AMD levels and 7 NVIDIA levels + 6 bisection probes, and each uncapped one
        assert sum(1 for ln in text.splitlines() if ln.strip().split(" ")[-1] == "ok") == 8 + 7 + 6 + 2


# ---- fresh compiles: the frontier's numbers are analyze's ----------------------------------------------

SMALL = ["--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4", "--num-stages", "1"]


def _run(*args):
    from vgprscope.cli.app import _register, app

    _register()
    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize("arch, knob", [("gfx942", "--waves-per-eu"), ("sm_90", "--maxnreg")])
def test_every_level_equals_analyze_with_that_knob(arch, knob):
    res = _run("frontier", "--variant", "baseline", "--arch", arch, *SMALL, "-f", "json")
    assert res.exit_code == 0, res.output
    [kf] = json.loads(res.stdout)["kernels"]
    # ptxas refuses the smallest maxnreg caps of this kernel: those levels are rows with the error
    assert kf["levels"] and kf["levels"][0]["status"] == "ok"
    checked = kf["levels"] + kf["bisection"]
    for lv in checked:
        a = _run("analyze", "--variant", "baseline", "--arch", arch, *SMALL, knob, str(lv["setting"]), "-f", "json")
        assert a.exit_code == (0 if lv["status"] == "ok" else 1), a.output  # 1: its one row did not compile
        [row] = json.loads(a.stdout)["rows"]
        assert row["config_key"] == lv["config_key"] and row["status"] == lv["status"]
        assert row["usage"] == lv["record"]["usage"]
        assert row["occupancy"] == lv["record"]["occupancy"]
        assert lv["occupancy"] == (row["occupancy"] or {}).get("value")
    # the uncapped compile is plain analyze's row of the same config
    a = _run("analyze", "--variant", "baseline", "--arch", arch, *SMALL, "-f", "json")
    [row] = json.loads(a.stdout)["rows"]
    assert kf["uncapped"]["setting"] is None and row["config_key"] == kf["uncapped"]["config_key"]
    assert row["usage"] == kf["uncapped"]["record"]["usage"]
    assert row["occupancy"] == kf["uncapped"]["record"]["occupancy"]
    free = [lv for lv in kf["levels"] + kf["bisection"] + [kf["uncapped"]] if lv["spill_free"]]
    assert kf["spill_free_occupancy"] == max(lv["occupancy"] for lv in free)
    if arch == "sm_90" and kf["next_level"] is not None:
        assert kf["min_spill_free_maxnreg"] is not None
        assert kf["next_level"]["budget"] < kf["min_spill_free_maxnreg"] <= kf["spill_free_budget"]


def test_frontier_refuses_a_grid_over_the_limit_with_an_estimate():
    res = _run("frontier", "--variant", "baseline", "--arch", "gfx942", *SMALL, "--max-compiles", "3")
    assert res.exit_code == 2
    line = res.stderr.strip()
    # 8 levels and the uncapped compile
    assert "\n" not in line and "the grid is 9 compiles, over the limit of 3" in line
    assert "it would take about" in line and "pass --yes" in line


def test_compare_frontier_carries_each_strategys_spill_free_occupancy():
    fr = _run("frontier", "--variant", "baseline", "--arch", "gfx942", *SMALL, "-f", "json")
    [kf] = json.loads(fr.stdout)["kernels"]
    res = _run("compare", "--strategies", "baseline", "--arch", "gfx942", *SMALL, "--frontier", "-f", "json")
    assert res.exit_code == 0, res.output
    [line] = json.loads(res.stdout)["archs"]["gfx942"]
    assert line["frontier"]["spill_free_occupancy"] == kf["spill_free_occupancy"]
    strip = lambda levels: [{k: v for k, v in lv.items() if k != "record"} for lv in levels]  # noqa: E731
    assert strip(line["frontier"]["kernels"][0]["levels"]) == strip(kf["levels"])  # "cached" differs
    table = _run("compare", "--strategies", "baseline", "--arch", "gfx942", *SMALL, "--frontier")
    assert "spill-free" in table.stdout and f"{kf['spill_free_occupancy']} w/SIMD" in table.stdout
