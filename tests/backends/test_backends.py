"""One backend per vendor: every arch has one, each answers for its own archs and usages
only, the options split between them, and a new arch is a row of the table and nothing else.

Pure: no compile (the backends' answers on real compiles are the rest of the suite's: analyze, frontier,
explain, the gate and the LLVM cross-check all go through them)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vgprscope.analysis.frontier.core import occupancy_levels
from vgprscope.backends import (
    BACKENDS,
    all_options,
    backend_named,
    backend_of,
    backend_of_usage,
    foreign_options,
    ladder,
    occupancy_of,
    registers_metric,
)
from vgprscope.compile.results import launch_limit_reason, parse_output
from vgprscope.compile.task import target_of
from vgprscope.core.archs import ARCHS, DEFAULT_ARCHS, get_arch
from vgprscope.core.errors import UsageError
from vgprscope.core.job import Target
from vgprscope.core.records import AmdUsage, NvidiaUsage
from vgprscope.gate.metrics import METRICS, REGISTERS, entry_metrics

AMD = AmdUsage(arch_vgpr=130, agpr=4, vgpr_total=136, sgpr=52, vgpr_spill=3, sgpr_spill=1, scratch_bytes=16,
               lds_static=0, lds_dynamic=8192, spill_stores=5, spill_loads=7, spill_insts_in_loop=4,
               llvm_occupancy=3, max_flat_workgroup_size=256, code_bytes=None, vgpr_alloc=169)
NV = NvidiaUsage(regs=168, stack_bytes=24, spill_store_bytes=8, spill_load_bytes=12, shared_static=0,
                 shared_dynamic=40000, local_bytes=24)


def test_every_arch_has_its_backend_and_target():
    assert {b.name for b in BACKENDS} == {"hip", "cuda"}
    for a in ARCHS.values():
        b = backend_of(a)
        assert b is backend_named(a.backend) and b.vendor is a.vendor
        t = target_of(a)
        assert t == Target(b.name, a.gfx if b.name == "hip" else a.capability, a.wave_size)
        # the table's arch of a Triton target is the row itself (gfx1100-wave64 is gfx1100's calculator twin)
        found = b.arch_for_target(t.arch)
        assert found is not None and (found is a or a.name == "gfx1100-wave64")
    assert target_of(get_arch("gfx942")) == Target("hip", "gfx942", 64)
    assert target_of(get_arch("sm_90")) == Target("cuda", 90, 32)
    with pytest.raises(UsageError):
        backend_named("metal")


def test_usages_belong_to_their_backend():
    assert backend_of_usage(AMD).name == "hip" and backend_of_usage(NV).name == "cuda"
    with pytest.raises(UsageError, match="cannot run on sm_90"):
        occupancy_of(AMD, get_arch("sm_90"), 4)
    with pytest.raises(UsageError, match="cannot run on gfx942"):
        occupancy_of(NV, get_arch("gfx942"), 4)
    with pytest.raises(UsageError, match="no occupancy rule for dict"):
        backend_of_usage({"regs": 1})


def test_options_split_between_the_backends():
    assert all_options() == ("waves_per_eu", "matrix_instr_nonkdim", "kpack", "maxnreg")
    assert foreign_options(get_arch("gfx942")) == ("maxnreg",)
    assert foreign_options(get_arch("sm_90")) == ("waves_per_eu", "matrix_instr_nonkdim", "kpack")
    assert [b.facts.knob for b in BACKENDS] == ["waves_per_eu", "maxnreg"]
    assert all(b.facts.knob in b.facts.options for b in BACKENDS)
    calc = [set(b.facts.calculator_options) for b in BACKENDS]
    assert not calc[0] & calc[1]


def test_the_gate_metrics_are_the_backends():
    assert REGISTERS == ("vgpr_total", "regs")
    for u in (AMD, NV):
        b = backend_of_usage(u)
        values = b.metric_values(u)
        # the loop metrics are there only where the assembly was read (these usages were built by hand)
        known = [m.name for m in b.metrics if not m.name.startswith("loop_")]
        assert list(values) == known and all(m.name in METRICS for m in b.metrics)
        assert b.metric_values(replace(u, loop_matrix_share=7, loop_spill_bytes=0)) == values | {
            "loop_matrix_share": 7, "loop_spill_bytes": 0}
        reg = registers_metric(b).name
        assert reg in values and values[reg] == b.figures(u).registers
        assert entry_metrics(u, {"value": 2}) == values | {"occupancy": 2}
    assert backend_of_usage(AMD).metric_values(AMD)["spill_insts"] == 12
    assert backend_of_usage(NV).metric_values(NV)["shared_bytes"] == 40000


def test_the_views_cells_per_vendor():
    """A usage's cells: its backend's figures in its vendor's words (report.usage_text)."""
    from vgprscope.report.usage_text import registers_text, spill_price, spills_full_text, spills_text

    hip, cuda = backend_of_usage(AMD).figures(AMD), backend_of_usage(NV).figures(NV)
    assert (registers_text(AMD), registers_text(NV)) == ("136 (130v+4a)", "168")
    assert (spills_text(AMD), spills_text(NV)) == ("4 (4 in loop)", "8+12 B")
    assert (spills_full_text(AMD), spills_full_text(NV)) == ("v3 s1 (5st/7ld, 4 in loop)", "8B st / 12B ld")
    assert spill_price(AMD) == "4 spills (3 VGPR + 1 SGPR), 12 spill instructions, 4 in the loop"
    assert spill_price(NV) == "8 B of spill stores, 12 B of spill loads"
    assert (hip.allocation, cuda.allocation) == (169, 168)  # what the hardware allocates
    assert (hip.memory_bytes, cuda.memory_bytes) == (8192, 40000)
    assert (hip.scalar_registers, cuda.scalar_registers) == (52, None)
    assert (hip.spill_insts, cuda.spill_insts) == (12, None)
    assert (hip.compiler_occupancy, cuda.compiler_occupancy) == (3, None)


def test_launch_limits_and_missing_outputs_are_the_backends():
    assert launch_limit_reason(get_arch("gfx942"), AMD, 16) is None
    assert launch_limit_reason(get_arch("gfx942"), AMD, 32) == ("num_warps 32 is 2048 threads (32 waves of 64); "
                                                                "gfx942 allows 1024 per workgroup")
    assert launch_limit_reason(get_arch("sm_86"), replace(NV, shared_dynamic=101377)) == (
        "needs 101377 B of shared memory; sm_86 allows 101376 B per block")
    assert launch_limit_reason(get_arch("gfx942"), AMD) is None
    with pytest.raises(ValueError, match="hold no ptxas_log, cuobjdump"):
        parse_output(get_arch("sm_90"), {"shared": 0})
    with pytest.raises(ValueError, match="hold no amdgcn"):
        parse_output(get_arch("gfx942"), {"shared": 0})


def test_a_new_row_is_all_an_arch_needs(monkeypatch):
    """Rows made like gfx1201's and sm_120's under new names: target, dispatch, occupancy, ladder, frontier
    levels, the archs table and the CLI's arch list follow from the row alone."""
    amd = replace(ARCHS["gfx1201"], name="gfx1200", gfx="gfx1200", description="AMD RX 9060 (RDNA4)")
    nv = replace(ARCHS["sm_120"], name="sm_121", capability=121, description="NVIDIA DGX Spark (GB10)")
    for a in (amd, nv):
        monkeypatch.setitem(ARCHS, a.name, a)
    assert get_arch("gfx1200") is amd and get_arch("sm_121") is nv
    assert target_of(amd) == Target("hip", "gfx1200", 32) and target_of(nv) == Target("cuda", 121, 32)
    assert backend_named("cuda").arch_for_target(121) is nv
    # 136 VGPRs (no AGPRs on RDNA) in granules of 24 (144) of a 1536-VGPR file: 10 waves/SIMD, as on gfx1201
    rdna = replace(AMD, arch_vgpr=136, agpr=0, max_flat_workgroup_size=128)
    assert occupancy_of(rdna, amd, 4).value == occupancy_of(rdna, ARCHS["gfx1201"], 4).value == 10
    assert occupancy_of(NV, nv, 8).unit == "blocks/SM"
    assert [s.value for s in ladder(amd)][:2] == [16, 12]
    assert [p.knob for p in occupancy_levels(nv, 4)] == ["maxnreg"] * len(occupancy_levels(nv, 4))
    from vgprscope.library.info import archs

    assert {"gfx1200", "sm_121"} <= {r["arch"] for r in archs().rows()}
    assert set(DEFAULT_ARCHS) <= set(ARCHS)


def test_each_backend_writes_its_own_descriptor_letters(monkeypatch):
    """An argument's specialisation descriptor per backend comes from the backend's row (``descriptor_letters``):
    a captured launch's config shows each backend's letters under its Triton name, the JSON (and the config's
    key) as before; a backend with one more letter shows it with no other module edited."""
    from dataclasses import replace
    from types import SimpleNamespace

    from vgprscope.backends import BACKENDS, HIP
    from vgprscope.core.records import ArgSpec, LaunchConfig
    from vgprscope.sources.capture import _arg_spec

    facts = [{"name": "x", "type": "*fp16", "aligned": True, "small": True}, {"name": "n", "type": "i32", "aligned": True,
             "small": True}, {"name": "B", "type": "constexpr", "value": 4}, {"name": "y", "type": "*fp32"}]
    specs = [_arg_spec(f) for f in facts]
    assert [s.as_dict() for s in specs] == [
        {"name": "x", "type": "*fp16", "hip": "DS", "cuda": "D"}, {"name": "n", "type": "i32", "hip": "D", "cuda": "D"},
        {"name": "B", "type": "constexpr", "hip": None, "cuda": None}, {"name": "y", "type": "*fp32", "hip": "", "cuda": ""}]
    config = LaunchConfig(args=tuple(specs), constexprs=(("B", 4),), options=(("num_warps", 4),))
    assert LaunchConfig.from_dict(config.as_dict()) == config and config.key() == "1703fa46f8819e82"  # the key main gave before the letters moved
    letters = (*HIP.facts.descriptor_letters, ("small", "X", False))  # a letter for any type's small range
    toy = SimpleNamespace(name=HIP.name, facts=replace(HIP.facts, descriptor_letters=letters))
    monkeypatch.setattr("vgprscope.sources.capture.BACKENDS", (toy, *BACKENDS[1:]))
    assert _arg_spec({"name": "x", "type": "i32", "small": True, "aligned": True}) == ArgSpec(
        "x", "i32", (("hip", "DX"), ("cuda", "D")))
