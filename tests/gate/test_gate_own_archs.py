"""The gate's default set compiles a variant on the archs it declares it is written for (VARIANT['archs']:
ws-regalloc on sm_90) beside the set's archs, GPU-free; naming --arch keeps to the archs named; the committed
baseline holds those entries compiled, every other variant's entries as before."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from vgprscope.core.errors import UsageError
from vgprscope.gate.config import GateConfig, GateSet
from vgprscope.library.gate import GateRun

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "vgprscope-baseline.json"


def own_archs(gate_set: GateSet) -> list[tuple[str, list[str]]]:
    """(variant, archs): what the gate's one sweep compiles each variant on beside the set's archs."""
    run = GateRun.from_config(GateConfig(set=gate_set))
    want = run.selection().want()
    out: dict[str, list[str]] = {}
    items = run.selection().variant_source().items(want.archs, want.requests, want.own_archs) if run.variants() else []
    for v, _, a, _ in items:
        if a.name not in gate_set.archs and a.name not in out.setdefault(v.name, []):
            out[v.name].append(a.name)
    return [(name, archs) for name, archs in out.items() if archs]


def test_a_variant_joins_the_set_on_the_archs_it_declares():
    assert GateSet().archs == ("gfx90a", "gfx942", "sm_80")
    assert own_archs(GateSet()) == [("ws-regalloc", ["sm_90"])]
    assert own_archs(GateSet(variants=("baseline",))) == []
    # an arch the set has already is not compiled twice
    assert own_archs(GateSet(archs=("gfx942", "sm_90"))) == []


def test_archs_named_on_the_command_line_are_the_only_ones():
    named = GateConfig().with_overrides(archs=["sm_80"])
    assert named.set.archs == ("sm_80",) and own_archs(named.set) == []
    assert own_archs(GateConfig().with_overrides(variants=["ws-regalloc"]).set) == [("ws-regalloc", ["sm_90"])]


def test_a_bad_archs_declaration_is_one_line(tmp_path):
    from vgprscope.attention.variants import load_variants

    src = (ROOT / "kernels" / "ws_regalloc.py").read_text()
    assert '"archs": ["sm_90"]' in src
    (tmp_path / "ws_regalloc.py").write_text(src.replace('"archs": ["sm_90"]', '"archs": ["sm_91"]'))
    with pytest.raises(UsageError, match=r"VARIANT\['archs'\] must be a list of arch names .* got \['sm_91'\]"):
        load_variants(tmp_path)


def test_the_committed_baseline_has_ws_regalloc_compiled_on_sm_90():
    entries = json.loads(BASELINE.read_text())["entries"]
    sm90 = {k: e for k, e in entries.items() if e["arch"] == "sm_90"}
    assert sorted(sm90) == ["ws-regalloc/attn_fwd_ws/sm_90/defaults",
                            "ws-regalloc/attn_fwd_ws/sm_90/shape=1x32x1x8192x8"]
    for e in sm90.values():
        # sm_90's default: two ping-ponging consumer warp groups of 4 warps, 168 registers as ptxas reports
        # for the whole kernel, no spills
        assert e["status"] == "ok" and e["config"]["num_warps"] == 4
        assert e["config"]["extra"] == {"pingpong": 1} and e["usage"]["regs"] == 168
        assert e["usage"]["spill_store_bytes"] == e["usage"]["spill_load_bytes"] == 0
    # the gate's own archs: every variant on each, ws-regalloc's there say why it cannot target them
    others = [e for e in entries.values() if e["arch"] != "sm_90"]
    assert len(others) == 78 and {e["arch"] for e in others} == {"gfx90a", "gfx942", "sm_80"}


@pytest.mark.slow
def test_compile_set_compiles_the_declared_arch_too():
    """GPU-free: the set of ws-regalloc on sm_80 compiles its sm_80 refusals and its sm_90 kernels."""
    from vgprscope.library.gate import compile_set

    cfg = GateConfig()
    cfg = replace(cfg, set=replace(cfg.set, variants=("ws-regalloc",), archs=("sm_80",),
                                   configs=({},)))
    entries = compile_set(GateRun.from_config(cfg, jobs=1))
    assert sorted((e.arch, e.status == "ok") for e in entries) == [("sm_80", False), ("sm_90", True)]
