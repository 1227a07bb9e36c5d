"""The frontier's records hold data (numbers, names, levels); its sentences are written by the view from them
(``analysis.frontier.summary``), and the JSON / CSV exports still carry the summary where they did."""

from __future__ import annotations

import json
from dataclasses import fields, replace

from vgprscope.analysis.frontier import core
from vgprscope.analysis.frontier.core import SpecAccess, by_variant, run_frontier
from vgprscope.analysis.frontier.result import FrontierResult
from vgprscope.analysis.frontier.summary import summary
from vgprscope.analysis.frontier.view import csv_rows, variant_json
from vgprscope.backends import occupancy_of
from vgprscope.core.archs import get_arch
from vgprscope.core.records import NvidiaUsage, Record
from vgprscope.flashattn.config import AttentionConfig

# the str fields a frontier record may hold: names of things and of the occupancy unit, never a sentence
NAMES = {"variant", "kernel", "arch", "unit", "knob"}
CFG = AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=8)


def _access() -> SpecAccess:
    return SpecAccess(
        arch=lambda t: get_arch(t[1]), num_warps=lambda t: t[2].num_warps,
        vary=lambda t, knob, v: (t[0], t[1], replace(t[2], **{knob: v})),
        key=lambda t: (t[0], t[1], t[2].key()), record_key=lambda r: (r.variant, r.arch, r.config.key()),
        label=lambda t: t[0], config=lambda t: t[2],
    )


def _nv_record(task, need: int = 100) -> Record:
    """A synthetic ptxas: ``need`` registers under any maxnreg, 8 B of spill stores and loads a register over."""
    name, arch_name, cfg = task
    arch = get_arch(arch_name)
    cap = cfg.maxnreg or arch.max_regs_per_thread
    spill = max(0, need - cap) * 8
    u = NvidiaUsage(regs=min(need, cap), stack_bytes=spill, spill_store_bytes=spill, spill_load_bytes=spill,
                    shared_static=0, shared_dynamic=16384, local_bytes=spill)
    return Record(name, "k", arch_name, cfg, status="ok", usage=u, occupancy=occupancy_of(u, arch, cfg.num_warps))


def _frontier():
    [kf] = run_frontier([("base", "sm_90", CFG)], lambda ts: [_nv_record(t) for t in ts], _access())
    return kf


def test_frontier_records_hold_no_free_text():
    for cls in (core.LevelPlan, core.Level, core.KernelFrontier, core.VariantFrontier):
        text = {f.name for f in fields(cls) if "str" in str(f.type) and "tuple" not in str(f.type)}
        assert text <= NAMES, (cls.__name__, text - NAMES)
    kf = _frontier()
    assert "summary" not in kf.as_dict()
    assert not any(isinstance(v, str) and " " in v for v in kf.as_dict().values())


def test_the_exports_keep_the_summary_the_view_writes():
    kf = _frontier()
    text = summary(kf)
    assert text == ("spill-free to 2 blocks/SM (128 registers); 3 blocks/SM: 160 B of spill stores, 160 B of spill "
                    "loads; smallest spill-free maxnreg 100")
    doc = json.loads(FrontierResult((kf,)).to_json())["kernels"][0]
    keys = list(doc)
    # where it always was: after the bisection's answer, before the register split's fields
    assert doc["summary"] == text and keys[keys.index("min_spill_free_maxnreg") + 1] == "summary"
    assert {r["summary"] for r in csv_rows([kf])} == {text}
    [vf] = by_variant([kf]).values()
    assert variant_json(vf)["kernels"][0]["summary"] == text
    assert list(variant_json(vf)) == list(vf.as_dict())
