"""ws-regalloc's knob persistent=1 (one program per SM walking the tiles), GPU-free: it compiles for sm_90 under
the installed Triton and the GPU machine's 3.6.0 with the registers split as at the default (the producer
24, both ping-pong consumers 240), and its bad settings are refused with the reason. Its numerics and speed
are GPU tests (tests/gpu/test_gpu_ws_persistent.py, reports/ws-regalloc-h100.md)."""

from __future__ import annotations

import pytest

import vgprscope
from vgprscope.core.errors import UsageError


@pytest.mark.parametrize(("causal", "spilled"), [(False, (67, 98)), (True, (35, 38))])
def test_persistent_compiles_for_sm_90_with_the_default_register_split(causal, spilled):
    """The persistent partitions take the same setmaxnreg counts as the per-tile kernel's; the consumers' K/V
    loop still carries the accumulator and softmax state. Under Triton 3.9 its split K/V loops (whole blocks,
    then the masked ones) spill (spill stores, reloads); under the GPU machine's 3.6 4 B outside the loop."""
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", knob="persistent=1", causal=causal,
                             jobs=1).explanations
    assert e.error is None and (e.allocation.spill_stores, e.allocation.spill_reloads) == spilled
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", 4, None, 240), ("partition0", 4, 240, 240), ("partition1", 1, 24, 24)]
    carried = {t.name for lp in e.loops for t in lp.tensors if t.role == "carried"}
    assert {"acc", "m_i", "l_i"} <= carried


def test_persistent_takes_the_192_row_tile_of_three_consumers_at_head_dim_64():
    """At D <= 64 the persistent kernel keeps the default 192-row tile: three consumer warp groups (the kernel's
    4 warps and two workers at 160, the producer at 24), as the per-tile kernel splits them, spill-free."""
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", knob="persistent=1", causal=True, head_dim=64,
                             jobs=1).explanations
    assert e.error is None and (e.allocation.spill_stores, e.allocation.spill_reloads) == (0, 0)
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", 4, None, 168), ("partition0", 4, 160, 160), ("partition1", 4, 160, 160),
        ("partition2", 1, 24, 24)]


def test_persistent_with_one_consumer_partition_compiles_for_sm_90():
    (row,) = vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob=["persistent=1", "pingpong=0"],
                               num_warps=8, num_stages=2, head_dim=64, block_m=128, block_n=128, jobs=1).records
    assert row.status == "ok" and row.usage.spills == 0


def test_persistent_compiles_under_the_gpu_machines_triton_3_6(release36):
    """Under 3.6 the persistent consumers spill a few bytes at D128 (4 + 4 B per thread, outside the K/V loop:
    per tile; measured on the GPU in reports/ws-regalloc-h200.md); D64 at its 128-row tile none."""
    rows = [*vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob="persistent=1", head_dim=64, block_m=128,
                               block_n=128, num_stages=2, causal=False, triton="3.6.0", jobs=1).records,
            *vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob="persistent=1", head_dim=128, causal=False,
                               triton="3.6.0", jobs=1).records]
    assert [(r.triton_version, r.status, r.usage.spills, r.usage.loop_spill_bytes) for r in rows] == [
        ("3.6.0", "ok", 0, 0), ("3.6.0", "ok", 8, 0)]
    (causal,) = vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob="persistent=1", causal=True,
                                  dtype="bf16", triton="3.6.0", jobs=1).records
    assert causal.status == "ok" and causal.usage.spills < 128


@pytest.mark.parametrize(("knob", "message"), [
    ("persistent=3", "persistent 3 is not allowed; allowed: 0 (one program per query block and head), 1 (one per "
                     "SM, each walking its share of the tiles) or 2 (one per SM, each taking the next tile from a "
                     "global counter)"),
    ("l2_mib=8", "l2_mib 8 is not allowed; allowed: with persistent=1 or 2, an integer from 1 to 1024"),
])
def test_bad_persistent_settings_are_refused_with_the_reason(knob, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob=knob, jobs=1)


def test_persistent_with_a_tma_store_or_an_empty_l2_share_is_a_row_saying_why():
    """Knobs given together make a grid: each refused combination is a refused record (a note under the table,
    not a failed row) whose status names the clash; the combination the kernel takes is a row.

    l2_mib 64 (32 heads a section at the default shape) rather than 8 (4 heads): a section count divisible by 16,
    as the default 32 MiB's 16 is, makes the row the very compile the default-split test above makes (the
    compile's facts count the swizzle's divisibility), so the session's cache answers it."""
    result = vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob=["persistent=1", "tma_store=0,1",
                                                                          "l2_mib=0,64"], jobs=1)
    assert [dict(r.config.extra)["tma_store"] for r in result.records] == [0] and len(result.refused) == 3
    status = {(dict(r.config.extra)["tma_store"], dict(r.config.extra)["l2_mib"]): r.status
              for r in (*result.records, *result.refused)}
    assert status[(1, 64)].startswith("persistent=1 needs overlap=1 and tma_store=0 (the next tile's Q is loaded")
    assert status[(0, 0)].startswith("l2_mib 0 is not allowed; allowed: with persistent=1 or 2, an integer from")
    assert status[(0, 64)] == "ok"


def test_head_sections_hold_the_l2_share_of_kv_heads_in_whole_groups():
    """The tile order's sections: as many query heads as share the K/V heads that fit l2_mib MiB, whole GQA
    groups, at least one group, at most every head."""
    from vgprscope.kernels.ws_regalloc import l2_heads

    # B4 H32 N4096 D128 fp16: 2 MiB of K and V per head -> 16 heads in 32 MiB, 4 in 8
    assert l2_heads(128, 4096, 128, 2, 1) == 16 and l2_heads(128, 4096, 128, 2, 1, mib=8) == 4
    # B2 H32 Hkv8 N8192 D128: 4 MiB per K/V head, 4 query heads each -> 8 K/V heads, 32 query heads
    assert l2_heads(64, 8192, 128, 2, 4) == 32
    # one K/V head over the share: still one group; a small problem: every head
    assert l2_heads(64, 8192, 128, 2, 4, mib=1) == 4 and l2_heads(6, 129, 64, 2, 1) == 6


@pytest.mark.parametrize(("causal", "spilled"), [(False, (64, 93)), (True, (25, 27))])
def test_dynamic_scheduler_compiles_for_sm_90_with_the_default_register_split(causal, spilled):
    """persistent=2 (the producer takes each next tile from a global counter and hands it to the consumers
    through shared memory) keeps the partitions' setmaxnreg counts: the producer 24, both consumers 240. Under
    Triton 3.9 its split K/V loops spill as persistent=1's do (spill stores, reloads)."""
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", knob="persistent=2", causal=causal,
                             jobs=1).explanations
    assert e.error is None and (e.allocation.spill_stores, e.allocation.spill_reloads) == spilled
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", 4, None, 240), ("partition0", 4, 240, 240), ("partition1", 1, 24, 24)]


def test_dynamic_scheduler_takes_the_192_row_tile_of_three_consumers_at_head_dim_64():
    """Three consumers read each tile number (the hand-over's empty barrier counts three arrivals), spill-free."""
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", knob="persistent=2", causal=True, head_dim=64,
                             jobs=1).explanations
    assert e.error is None and (e.allocation.spill_stores, e.allocation.spill_reloads) == (0, 0)
    assert [(p.name, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", None, 168), ("partition0", 160, 160), ("partition1", 160, 160), ("partition2", 24, 24)]
    (row,) = vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob=["persistent=2", "pingpong=0"],
                               num_warps=8, num_stages=2, head_dim=64, block_m=128, block_n=128, jobs=1).records
    assert row.status == "ok" and row.usage.spills == 0


def test_dynamic_scheduler_compiles_under_the_gpu_machines_triton_3_6(release36):
    """Under 3.6 (the GPU machine's) persistent=2 spills what persistent=1 does: 4 + 4 B per thread at D128,
    outside the K/V loop; none at the D64 tile. fp16 non-causal; the causal rows in bf16, the very compiles of
    causal's default (persistent=2) that test_ws_regalloc's 3.6 test makes, so the session's cache holds them."""
    rows = []
    for d, causal, dtype in ((128, False, "fp16"), (128, True, "bf16"), (64, True, "bf16")):
        rows += vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob="persistent=2", head_dim=d,
                                  causal=causal, dtype=dtype, triton="3.6.0", jobs=1).records
    assert [(r.triton_version, r.status, r.usage.spills, r.usage.loop_spill_bytes) for r in rows] == [
        ("3.6.0", "ok", 8, 0), ("3.6.0", "ok", 8, 0), ("3.6.0", "ok", 0, 0)]


def test_dynamic_scheduler_compile_spec_names_its_counter_an_int32_pointer():
    """The kernel's TileCounter argument is an int32 pointer in the compile spec (the launcher passes a zeroed
    tensor per persistent=2 launch: tests/gpu/test_gpu_ws_persistent.py runs it), and the mode reaches the
    kernel as the constexpr PERSISTENT."""
    from vgprscope.kernels import ws_regalloc as W

    cfg = {"block_m": 128, "block_n": 128, "num_warps": 4, "num_stages": 3, "head_dim": 128, "causal": True,
           "dtype": "fp16", "shape": (2, 4, 256, 256), "extra": {"pingpong": 1, "persistent": 2}}
    (spec,) = W.kernel_specs(cfg)
    assert spec["args"]["TileCounter"] == "*i32" and spec["constexprs"]["PERSISTENT"] == 2
    assert W.PERSISTENT_MODES == (0, 1, 2)
