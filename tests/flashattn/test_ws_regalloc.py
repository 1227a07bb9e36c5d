"""ws-regalloc (kernels/ws_regalloc.py), FA forward for Hopper in Gluon, GPU-free: it compiles for sm_90 under
the installed Triton and the GPU machine's 3.6.0, explain gives each warp_specialize partition the registers
its setmaxnreg sets, the producer's worker_num_regs moves them, every other arch's row says why, and compare
puts it beside the other strategies with its traffic. Its numerics are GPU tests (tests/gpu/test_gpu.py)."""

from __future__ import annotations

import pytest

import vgprscope
from vgprscope.core.errors import UsageError

CONSUMER_WARPS = 8
REGISTER_FILE = 65536  # per SM (sm_90)
PRODUCER_GROUP_WARPS = 4  # the producer's 1 warp padded to a warp group

SASS = """
        /*0090*/                   USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0 ;
        /*00a0*/              @!UP0 BRA `(.L_x_1) ;
        /*0410*/                   USETMAXREG.DEALLOC.CTAPOOL 0x18 ;
        /*0450*/                   USETMAXREG.DEALLOC.CTAPOOL 0xe0 ;
        /*0520*/                   USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0x38 ;
"""


def expected_split(producer_regs: int) -> tuple[int, int]:
    """(default, producer) registers inside the region by Triton's AllocateWarpGroups rule, worked by hand:
    maxnreg = the file over every warp's 32 lanes, rounded down to 8; the default partition gets maxnreg plus
    what the producer's warp group gives up, spread over its warps, rounded down to 8."""
    maxnreg = REGISTER_FILE // ((CONSUMER_WARPS + PRODUCER_GROUP_WARPS) * 32) // 8 * 8
    surplus = (maxnreg - producer_regs) * PRODUCER_GROUP_WARPS * 32
    return (maxnreg * CONSUMER_WARPS * 32 + surplus) // (CONSUMER_WARPS * 32) // 8 * 8, producer_regs


def test_setmaxnreg_counts_go_to_the_partitions_the_rule_gives_them():
    from vgprscope.core.parse.setmaxnreg import setmaxnreg_counts, with_given_registers
    from vgprscope.core.parse.ttgir import WarpPartition

    assert setmaxnreg_counts(SASS) == (24, 56, 224, 240)
    parts = (WarpPartition("default", 8, None), WarpPartition("partition0", 1, 52))
    # 52 is rounded up to 8 (56); the default gets 168 + (168 - 56) * 4 / 8 = 224, not the 240 it runs at
    # outside the region
    assert [p.given_registers for p in with_given_registers(parts, SASS, 168)] == [224, 56]
    assert with_given_registers(parts, "no setmaxnreg", 168) == parts
    # a count the machine code never sets is not reported
    assert [p.given_registers for p in with_given_registers(parts, SASS, 176)] == [None, 56]


@pytest.mark.parametrize("producer_regs", [24, 56])
def test_explain_gives_each_partition_its_setmaxnreg_registers(producer_regs):
    """One consumer partition of 8 warps: the producer's warp group drops to its worker_num_regs; the consumers
    (the default partition) rise above the count ptxas reports for the whole kernel (the cap every warp starts
    with)."""
    result = vgprscope.explain(variant="ws-regalloc", arch="sm_90", knob=[f"producer_regs={producer_regs}",
                               "pingpong=0"], num_warps=CONSUMER_WARPS, num_stages=2, jobs=1)
    (e,) = result.explanations
    assert e.error is None and e.allocation is not None and e.spills == ()
    default, producer = expected_split(producer_regs)
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", CONSUMER_WARPS, None, default), ("partition0", 1, producer_regs, producer)]
    assert (f"setmaxnreg in the machine code gives default {default}, partition0 {producer} registers per thread"
            in " ".join(result.table().split()))
    # the consumers' K/V loop carries the accumulator and the softmax state; Q, K and V stay in shared memory
    carried = {t.name for lp in e.loops for t in lp.tensors if t.role == "carried"}
    assert {"acc", "m_i", "l_i"} <= carried and "q" not in carried


def test_sm_90_default_is_two_ping_ponging_consumer_partitions_at_240():
    """sm_90's default (FA3's ping-pong, measured faster on the GPU: reports/ws-regalloc-h200.md): the kernel's
    4 warps are consumer 0, a worker of 4 warps asking for 240 registers consumer 1, the producer's warp 24
    registers; a 3-slot K/V ring up to D128, the dynamic persistent scheduler for causal attention up to D128;
    FA3's 192-row tile at D64 (three consumer warp groups at 160 registers, 64-key blocks, 8 slots); 2 slots
    beyond D128."""
    from vgprscope.core.archs import ARCHS
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.variants import get_variant, resolve_config

    v = get_variant("ws-regalloc")
    at = {(d, c): resolve_config(v, ARCHS["sm_90"], ConfigRequest(head_dim=d, causal=c))
          for d in (64, 128, 256) for c in (False, True)}
    assert [(c.block_m, c.num_warps, c.num_stages, c.block_n, dict(c.extra)) for c in at.values()] == [
        (192, 4, 8, 64, {"pingpong": 1}), (192, 4, 8, 64, {"persistent": 2, "pingpong": 1}),
        (128, 4, 3, 128, {"pingpong": 1}), (128, 4, 3, 128, {"persistent": 2, "pingpong": 1}),
        (128, 4, 2, 64, {"pingpong": 1}), (128, 4, 2, 64, {"pingpong": 1})]
    # the other archs keep the config every refusal row was saved with
    other = resolve_config(v, ARCHS["sm_80"], ConfigRequest())
    assert (other.num_warps, other.num_stages, other.extra) == (8, 2, ())
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", jobs=1).explanations
    assert e.error is None and e.spills == ()
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", 4, None, 240), ("partition0", 4, 240, 240), ("partition1", 1, 24, 24)]


def test_sm_90_d64_default_is_three_consumer_warp_groups_at_160():
    """192 query rows: consumer 0 (the kernel's 4 warps) takes what the others leave (168), two workers of 4
    warps 160 each, the producer 24: the 64K-register file over 16 warps; spill-free at 64-key blocks."""
    (e,) = vgprscope.explain(variant="ws-regalloc", arch="sm_90", head_dim=64, causal=True, jobs=1).explanations
    assert e.error is None and e.spills == () and e.config.startswith("192x64 d64")
    assert [(p.name, p.num_warps, p.requested_registers, p.given_registers) for p in e.partitions] == [
        ("default", 4, None, 168), ("partition0", 4, 160, 160), ("partition1", 4, 160, 160),
        ("partition2", 1, 24, 24)]


def test_every_arch_but_sm_90_says_why():
    result = vgprscope.analyze(variant="ws-regalloc", arch=["sm_80", "sm_100", "gfx942"], jobs=1)
    assert result.records == ()  # refused, not failed: each a note under the table, with its reason
    rows = {r.arch: r.status for r in result.refused}
    assert {r.refused for r in result.refused} == {"written for sm_90"}
    assert rows["sm_80"] == ("ValueError: ws-regalloc is written for Hopper (sm_90) in Gluon: warpgroup_mma (wgmma) "
                             "is sm_90's instruction; sm_80 lacks it")
    assert rows["sm_100"].endswith("sm_100 lacks it")
    assert rows["gfx942"].endswith("TMA, mbarriers, wgmma and setmaxnreg are NVIDIA's; gfx942 is AMD's")


def test_head_dims_tma_cannot_read_and_bad_splits_are_refused():
    result = vgprscope.analyze(variant="ws-regalloc", arch="sm_90", head_dim=36, jobs=1)
    assert result.records == ()
    (row,) = result.refused
    assert row.status.startswith("head_dim 36 is not supported: TMA reads 16-byte rows; allowed: multiples of 8")
    with pytest.raises(UsageError, match="producer_regs 20 is not allowed; allowed: multiples of 8 from 24 to 256"):
        vgprscope.analyze(variant="ws-regalloc", arch="sm_90", knob="producer_regs=20", jobs=1)


def test_compare_puts_it_beside_the_other_strategies_with_its_traffic():
    lines = {ln.variant: ln for ln in vgprscope.compare(strategies="baseline,ws-regalloc", arch="sm_90", jobs=1).lines}
    ws, base = lines["ws-regalloc"], lines["baseline"]
    assert ws.ok and ws.spills == 0
    # Q once, K and V once per query block, as baseline at the same 128-row tile: the same bytes and FLOPs
    assert ws.traffic.bytes_total == base.traffic.bytes_total and ws.traffic.flops == base.traffic.flops


def test_compiles_under_the_gpu_machines_triton_3_6(release36):
    """3.6 names TMA's load async_copy_global_to_shared, 3.9 async_load: the kernel takes either. Causal D128's
    default (the dynamic persistent scheduler) spills 4 B per thread outside the K/V loop under 3.6 (per tile);
    non-causal and D64 none."""
    rows = [r for causal in (False, True)
            for r in vgprscope.analyze(variant="ws-regalloc", arch="sm_90", causal=causal, head_dim=[64, 128],
                                       dtype="bf16", triton="3.6.0", jobs=1).records]
    spills = {(r.config.head_dim, r.config.causal): (r.usage.spill_store_bytes, r.usage.spill_load_bytes,
                                                     r.usage.loop_spill_bytes) for r in rows}
    assert {(r.triton_version, r.status) for r in rows} == {("3.6.0", "ok")}
    assert spills == {(64, False): (0, 0, 0), (64, True): (0, 0, 0), (128, False): (0, 0, 0), (128, True): (4, 4, 0)}


def test_under_the_interpreter_it_says_gluon_needs_a_gpu():
    import torch

    from vgprscope.core.errors import ConfigError

    q = torch.zeros(1, 1, 8, 64, dtype=torch.float16)
    with pytest.raises(ConfigError, match="ws-regalloc is written in Gluon, which does not run in Triton's "
                                          "interpreter"):
        vgprscope.attention(q, q, q, variant="ws-regalloc")
