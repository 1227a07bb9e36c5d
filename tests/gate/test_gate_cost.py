"""The default rules judge cost: spills, scratch, stack, spill instructions and occupancy
may not get worse; registers, SGPRs and LDS / shared memory fail only when they cross an occupancy step or
the arch's maximum, and a growth within the step is ``changed`` (passes, shown with its signed delta and the
headroom before the next step). ``--strict`` / ``strict = true`` / ``strict=True`` restore tolerance 0.

Entries are built here with the occupancy the engine would record (``occupancy_of``), so the cases are
the arch's real steps: gfx942 holds 4 waves/SIMD up to 128 VGPRs, 3 from 129 to 168; 2 up to 256."""

from __future__ import annotations

import dataclasses
import json

import pytest

from vgprscope.backends import occupancy_of
from vgprscope.core.archs import get_arch
from vgprscope.core.errors import UsageError
from vgprscope.core.records import AmdUsage, NvidiaUsage
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.gate.baseline import Baseline, Entry
from vgprscope.gate.config import load_gate_config
from vgprscope.gate.diff import Change
from vgprscope.gate.diff import judge as judge_entries
from vgprscope.gate.report import details, summary, to_json, to_table
from vgprscope.gate.rules import Mode, Rule, RuleSet, parse_rule

CFG = AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=4)


def amd(vgpr: int, sgpr: int = 60, lds: int = 0, spill: int = 0, loop: int = 0, insts: int = 0) -> AmdUsage:
    return AmdUsage(arch_vgpr=vgpr, agpr=0, vgpr_total=vgpr, sgpr=sgpr, vgpr_spill=spill, sgpr_spill=0,
                    scratch_bytes=4 * spill, lds_static=0, lds_dynamic=lds, spill_stores=insts, spill_loads=0,
                    spill_insts_in_loop=loop, llvm_occupancy=None, max_flat_workgroup_size=256, code_bytes=None)


def nv(regs: int, shared: int = 0, stack: int = 0) -> NvidiaUsage:
    return NvidiaUsage(regs=regs, stack_bytes=stack, spill_store_bytes=stack, spill_load_bytes=stack,
                       shared_static=0, shared_dynamic=shared, local_bytes=stack)


def entry(usage, arch: str = "gfx942") -> Entry:
    occ = occupancy_of(usage, get_arch(arch), CFG.num_warps)
    return Entry("v", "k", arch, "defaults", CFG, CFG.key(), "ok", usage, occ.as_dict())


def judge(before, after, arch: str = "gfx942", rules: RuleSet = RuleSet()):
    (d,) = judge_entries(Baseline.of([entry(before, arch)], "3.9.0"), [entry(after, arch)], rules).entries
    return d


def metric(d, name):
    return next(m for m in d.metrics if m.metric == name)


def test_a_register_growth_within_its_occupancy_step_is_changed_and_passes_with_its_headroom():
    """Primus-Turbo's fix, 244 -> 248 VGPRs at 2 waves/SIMD and no spills, was "worse"."""
    d = judge(amd(244), amd(248))
    assert (d.change, d.fails) == (Change.CHANGED, False)
    vgpr = metric(d, "vgpr_total")
    assert (vgpr.change, vgpr.delta, vgpr.fails) == (Change.CHANGED, 4, False)
    assert (vgpr.cliff.headroom, vgpr.cliff.after) == (8, "1 wave/SIMD")  # 256 keeps 2 waves/SIMD, 257 does not
    assert "vgpr_total 244 -> 248 (+4, same occupancy, 8 VGPRs of headroom before 1 wave/SIMD)" in details(d)
    result = judge_entries(Baseline.of([entry(amd(244))], "3.9.0"), [entry(amd(248))])
    assert result.passed and summary(result).startswith("vgprscope check passed: 0 worse, 1 changed, 0 better")
    row = json.loads(to_json(result, {}, "b.json"))["rows"][0]
    assert row["result"] == "changed" and not row["fails"]
    assert next(m for m in row["metrics"] if m["metric"] == "vgpr_total")["cliff"] == {
        "crossed": None, "headroom": 8, "before": "1 wave/SIMD"}


def test_an_sgpr_growth_beside_fewer_vgprs_and_no_spills_passes():
    """vllm's fused MoE 3.4.0 -> 3.6.0: SGPRs 32 -> 37, VGPRs down by 87, every spill gone: exit 1 before."""
    d = judge(amd(256, sgpr=32, spill=12, insts=24), amd(169, sgpr=37))
    assert not d.fails and d.change is Change.CHANGED
    assert metric(d, "sgpr").change is Change.CHANGED and metric(d, "vgpr_spill").change is Change.BETTER


def test_a_register_growth_that_crosses_a_step_fails_and_says_so():
    d = judge(amd(128), amd(132))  # 4 -> 3 waves/SIMD on gfx942
    assert d.fails and d.change is Change.WORSE
    assert (metric(d, "vgpr_total").change, metric(d, "vgpr_total").fails) == (Change.WORSE, True)
    assert metric(d, "occupancy").fails
    assert "vgpr_total 128 -> 132 (+4 ✗, crosses an occupancy step: 4 -> 3 waves/SIMD)" in details(d)


def test_a_register_growth_that_crosses_its_own_step_where_lds_binds_costs_nothing():
    # 48 KiB of LDS holds 256-thread workgroups to 1 per CU (1 wave/SIMD): 128 -> 132 VGPRs changes nothing
    d = judge(amd(128, lds=49152), amd(132, lds=49152))
    assert not d.fails and d.change is Change.CHANGED


@pytest.mark.parametrize("before, after, failing", [
    (amd(100, spill=4, insts=8), amd(100, spill=64, insts=8), {"vgpr_spill", "scratch_bytes"}),
    (amd(100, insts=8, loop=0), amd(100, insts=8, loop=2), {"spill_insts_in_loop"}),  # moved into a loop
    (amd(100, insts=8), amd(100, insts=9), {"spill_insts"}),
])
def test_every_growth_of_what_costs_time_fails(before, after, failing):
    d = judge(before, after)
    assert d.fails and {m.metric for m in d.metrics if m.fails} == failing


def test_lds_fails_when_it_lowers_occupancy_or_passes_the_arch_limit_and_is_changed_otherwise():
    # 16 -> 10 workgroups of 4 waves fit the LDS: the wave slots still hold 8: a change, no cost
    assert judge(amd(64, lds=4096), amd(64, lds=6144)).change is Change.CHANGED
    assert judge(amd(64, lds=8192), amd(64, lds=12288)).fails  # 8 -> 5 workgroups: 8 -> 5 waves/SIMD
    # aiter's paged attention on gfx950: 65536 -> 133088 B of LDS, 2 -> 1 wave/SIMD
    d = judge(amd(128, lds=65536), amd(128, lds=133088), arch="gfx950")
    assert d.fails and metric(d, "lds_bytes").fails and metric(d, "occupancy").fails
    over = judge(amd(64, lds=32768), amd(64, lds=70000))  # gfx942 allows 65536 B per workgroup
    assert metric(over, "lds_bytes").fails and "over gfx942's maximum of 65536 bytes" in details(over)


def test_nvidia_registers_and_shared_memory_follow_the_same_rule():
    d = judge(nv(120), nv(126), arch="sm_80")  # 128 registers keep 4 blocks of 128 threads per SM
    assert (d.change, d.fails) == (Change.CHANGED, False)
    assert metric(d, "regs").cliff.headroom == 2
    assert judge(nv(126), nv(130), arch="sm_80").fails  # 4 -> 3 blocks/SM
    assert judge(nv(120, stack=0), nv(120, stack=8), arch="sm_80").fails  # a spill costs time


def test_strict_restores_tolerance_zero_and_explicit_rules_work_as_before():
    strict = judge(amd(244), amd(248), rules=RuleSet(strict=True))
    assert (strict.change, strict.fails) == (Change.WORSE, True)
    assert metric(strict, "vgpr_total").rule == Rule("vgpr_total", Mode.LIMIT, 0)
    assert not judge(amd(244), amd(248), rules=RuleSet((parse_rule("registers:+4"),), strict=True)).fails
    assert judge(amd(244), amd(249), rules=RuleSet((parse_rule("registers:+4"),))).fails
    assert judge(amd(100, sgpr=30), amd(100, sgpr=40), rules=RuleSet((parse_rule("sgpr:+0"),))).fails
    assert parse_rule("vgpr_total:cliff") == Rule("vgpr_total", Mode.CLIFF)
    with pytest.raises(UsageError, match="tolerance cliff is for counts that cost through occupancy"):
        parse_rule("vgpr_spill:cliff")


def test_strict_in_the_configuration_and_on_the_command_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.vgprscope]\nstrict = true\n")
    assert load_gate_config(cwd=tmp_path).rules.strict
    (tmp_path / "pyproject.toml").write_text("[tool.vgprscope]\n")
    cfg = load_gate_config(cwd=tmp_path)
    assert not cfg.rules.strict and cfg.with_overrides(strict=True).rules.strict
    (tmp_path / "pyproject.toml").write_text("[tool.vgprscope]\nstrict = 1\n")
    with pytest.raises(UsageError, match=r"strict must be true or false; got 1"):
        load_gate_config(cwd=tmp_path)


def test_the_librarys_rows_carry_the_change_and_its_headroom():
    from vgprscope.library.results import CheckResult

    result = judge_entries(Baseline.of([entry(amd(244))], "3.9.0"), [entry(amd(248))])
    (row,) = [r for r in CheckResult(result, (), "b.json").rows() if r["metric"] == "vgpr_total"]
    assert (row["result"], row["metric_change"], row["delta"], row["headroom"]) == ("changed", "~", 4, 8)


def test_check_and_diff_take_strict_and_the_library_too():
    import inspect

    from typer.testing import CliRunner

    import vgprscope
    from vgprscope.cli.app import _register, app

    _register()
    for command in ("check", "diff"):
        out = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "--strict" in out, command
    assert "strict" in inspect.signature(vgprscope.check).parameters
    assert "strict" in inspect.signature(vgprscope.diff).parameters


def test_the_table_shows_a_changed_row_with_its_delta_at_100_columns():
    result = judge_entries(Baseline.of([entry(amd(244))], "3.9.0"), [entry(amd(248))])
    text = to_table(result, "machine", "b.json", width=100)
    row = next(line for line in text.splitlines() if line.lstrip().startswith("changed"))
    assert "244 -> 248 (+4)" in row or "248 (+4)" in row
    assert "8 VGPRs left" in row  # the headroom in the row; the footnote says before what
    assert "8 VGPRs of headroom before 1 wave/SIMD" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 100


def test_a_metric_the_model_cannot_place_fails_closed():
    # no occupancy on the baseline side: a cliff rule cannot tell whether the growth crossed a step
    b = dataclasses.replace(entry(amd(100)), occupancy=None)
    (d,) = judge_entries(Baseline.of([b], "3.9.0"), [entry(amd(104))]).entries
    assert metric(d, "vgpr_total").fails
