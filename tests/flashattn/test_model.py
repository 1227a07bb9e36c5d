"""The traffic / work model and the live-state estimate, against values worked out by hand.

Reference problem for the traffic cases: B=1, H=2, Nq=256, Nk=512, D=64, fp16 (e=2), BLOCK 64 x 64.
Per (batch, head): Q = O = 256*64*2 = 32768 B; K = V = 512*64*2 = 65536 B; Tq = 4; Kb = 8;
P = 256*512 = 131072 pairs (non-causal); 4*P*D = 33554432 FLOPs. Every total is then x2 (B*H).
"""

from __future__ import annotations

import pytest

from vgprscope.core.errors import UnknownNameError
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.flashattn.live import live_state
from vgprscope.flashattn.traffic import traffic
from vgprscope.flashattn.variants import load_variants


def cfg(**kw) -> AttentionConfig:
    base = dict(block_m=64, block_n=64, head_dim=64, dtype="fp16", causal=False, num_warps=4, num_stages=1,
                shape=(1, 2, 256, 512))
    return AttentionConfig(**(base | kw))


def test_every_bundled_variant_declares_its_model():
    assert all(v.traffic is not None and v.live_state is not None for v in load_variants().values())


def test_baseline_reads_q_once_and_kv_once_per_query_block():
    t = traffic("baseline", cfg())
    assert t.bytes_read == 2 * (32768 + 4 * 2 * 65536) == 1_114_112
    assert t.bytes_written == 2 * 32768 == 65_536
    assert t.flops == 2 * 4 * 256 * 512 * 64 == 67_108_864
    assert t.intensity == pytest.approx(67_108_864 / 1_179_648) == pytest.approx(512 / 9)
    assert "Tq * 2*rho*Nk*D*e" in t.formula


def test_causal_counts_the_area_under_the_bottom_right_diagonal():
    # Nk >= Nq: P = 256*512 - 256^2/2 = 98304, rho = 0.75
    t = traffic("baseline", cfg(causal=True))
    assert t.flops == 2 * 4 * 98304 * 64 == 50_331_648
    assert t.bytes_read == 2 * (32768 + 4 * 2 * 0.75 * 65536) == 851_968
    # Nq = Nk: exactly half of the non-causal FLOPs
    square = (1, 2, 512, 512)
    assert traffic("baseline", cfg(shape=square)).flops == 2 * traffic("baseline", cfg(shape=square, causal=True)).flops
    # Nk < Nq: P = Nk^2 / 2
    assert traffic("baseline", cfg(causal=True, shape=(1, 1, 512, 256))).flops == 4 * (256 * 256 / 2) * 64


def test_small_tiles_pay_kv_per_query_block():
    big = traffic("baseline", cfg(block_m=128))  # Tq = 2
    small = traffic("small-tiles", cfg(block_m=64))  # Tq = 4
    assert big.bytes_read == 2 * (32768 + 2 * 2 * 65536) == 589_824
    assert small.bytes_read == 1_114_112
    assert small.flops == big.flops


def test_remat_q_rereads_q_once_per_key_block():
    t = traffic("remat-q", cfg(extra=(("block_dk", 32),)))
    assert t.bytes_read == 2 * (32768 * 8 + 4 * 2 * 65536) == 1_572_864
    assert t.bytes_written == 65_536


def test_split_k_writes_and_reads_back_fp32_partials():
    # S from the shape: 1*2*4 = 8 programs -> ceil(264 / 8) = 33 splits, capped at Kb = 8
    t = traffic("split-k", cfg())
    partials = 8 * 256 * (64 + 2) * 4
    assert partials == 540_672
    assert t.bytes_read == 2 * (8 * 32768 + 4 * 2 * 65536 + partials) == 2_654_208
    assert t.bytes_written == 2 * (partials + 32768) == 1_146_880
    assert t.flops == 67_108_864
    two = traffic("split-k", cfg(extra=(("num_splits", 2),)))
    assert two.bytes_read == 2 * (2 * 32768 + 524288 + 2 * 256 * 66 * 4) == 1_449_984
    assert two.bytes_written == 2 * (2 * 256 * 66 * 4 + 32768) == 335_872


def test_two_phase_reads_k_twice_and_recomputes_qk():
    t = traffic("two-phase", cfg())
    stats = 2 * 256 * 4
    assert t.bytes_read == 2 * ((32768 + 4 * 65536) + (32768 + stats + 4 * 2 * 65536)) == 1_708_032
    assert t.bytes_written == 2 * (stats + 32768) == 69_632
    assert t.flops == 2 * 6 * 131072 * 64 == 100_663_296  # 1.5x baseline


def test_split_k_two_phase_combines_every_splits_stats_in_pass_two():
    t = traffic("split-k-two-phase", cfg(extra=(("num_splits", 2),)))
    stats, partials = 2 * 2 * 256 * 4, 2 * 256 * 64 * 4
    read = (2 * 32768 + 4 * 65536) + (2 * 32768 + 2 * stats + 4 * 2 * 65536) + partials
    assert read == 1_056_768
    assert t.bytes_read == 2 * read == 2_113_536
    assert t.bytes_written == 2 * (stats + partials + 32768) == 335_872
    assert t.flops == 100_663_296


def test_row_stream_reads_kv_once_per_query_row():
    t = traffic("row-stream", cfg(block_m=16))
    assert t.bytes_read == 2 * (32768 + 2 * 131072 * 64 * 2) == 67_174_400
    assert t.bytes_read / traffic("baseline", cfg(block_m=16)).bytes_read > 7  # vs Tq = 16 block reads
    assert t.flops == 67_108_864


def test_qk_fp16_acc_moves_what_baseline_moves():
    assert traffic("qk-fp16-acc", cfg()) == traffic("baseline", cfg())


def test_unknown_variant_is_a_typed_error():
    with pytest.raises(UnknownNameError):
        traffic("my-own-kernel", cfg())


def test_live_state_follows_seed_001():
    c = AttentionConfig(block_m=128, block_n=128, head_dim=128, num_warps=8)
    # 512 threads on gfx942: acc 128*128 fp32 / 512 = 32; q fp16 packed = 16; s = 32; m, l: 0.5 -> 1
    assert live_state(c, "gfx942") == {"acc": 32, "q": 16, "s": 32, "m_l": 1, "total": 81, "threads": 512}
    # warp 32 on sm_90: 256 threads, twice per thread
    assert live_state(c, "sm_90") == {"acc": 64, "q": 32, "s": 64, "m_l": 1, "total": 161, "threads": 256}


def test_live_state_of_the_strategies():
    c = AttentionConfig(block_m=128, block_n=64, head_dim=128, num_warps=8, extra=(("block_dk", 32),))
    assert live_state(c, "gfx942")["s"] == 16
    assert live_state(c, "gfx942", "qk-fp16-acc")["s"] == 8
    assert live_state(c, "gfx942", "remat-q")["q"] == 4  # 128 x 32 fp16 over 512 threads
    assert live_state(c, "gfx942", "small-tiles") == live_state(c, "gfx942")
    rows = live_state(AttentionConfig(block_m=16, block_n=64, head_dim=40, num_warps=4), "gfx942", "row-stream")
    assert rows == {"acc": 1, "q": 1, "s": 1, "m_l": 1, "total": 4, "threads": 256}


def test_grouped_query_prefill_reads_each_kv_head_once_per_query_head_block():
    """Unpacked (Nq > 16): every query head's blocks read its K/V head, as with multi-head."""
    gqa = cfg(shape=(1, 2, 256, 512, 1))
    assert traffic("baseline", gqa) == traffic("baseline", cfg())


def test_packed_decode_reads_each_kv_head_once_per_group():
    """B1 H8 over 2 K/V heads, Nq 4, Nk 512, D64, BLOCK_M 16: a group's 4 x 4 = 16 rows are one packed block,
    so each K/V head is read once (2 * 65536 B) for its 4 query heads: Tq = 1/4 per query head.
    read = 8 * (512 + 1/4 * 2 * 65536) = 266240 (Q 4*64*2 = 512 B a head); written = 8 * 512 = 4096."""
    t = traffic("baseline", cfg(shape=(1, 8, 4, 512, 2), block_m=16))
    assert (t.bytes_read, t.bytes_written) == (266_240, 4_096)
    # unpacked, every query head's block reads its K/V head: four times the K/V bytes
    assert traffic("row-stream", cfg(shape=(1, 8, 4, 512, 2), block_m=16)).bytes_read == 8 * (512 + 2 * 4 * 512 * 64 * 2)


def test_split_count_in_the_model_follows_the_compute_units():
    c = cfg(shape=(1, 2, 256, 512))  # 4 query blocks x 2 heads = 8 programs, 8 key blocks
    # 132 SMs: 132 // 8 = 16 wanted, capped at the 8 key blocks; 4 units: 4 // 8 = 0, at least 1
    two = traffic("split-k", c, compute_units=4)
    eight = traffic("split-k", c, compute_units=132)
    assert eight.bytes_written - two.bytes_written == (8 - 1) * 256 * (64 + 2) * 4 * 2
