"""ws-regalloc: FA3's answer on Hopper, in Gluon: a TMA producer warp and wgmma consumer warp groups that take
its registers (seed 002: the accumulator's registers moved to the warps that hold it).

One program per (query block, batch*head), heaviest causal blocks first as baseline. ``gl.warp_specialize``
splits it in two:
- the producer (a worker partition of 1 warp, ``worker_num_regs`` = knob ``producer_regs``, 24 by default):
  builds tensor descriptors over this head's Q and its K/V head (rows past the sequence read as zeros), loads
  Q once and K, V block by block into a ring of NUM_STAGES shared-memory slots with TMA, each slot guarded by
  a "full" and an "empty" mbarrier; it holds a few scalars, no tile.
- the consumers (the default partition: the kernel's num_warps, two warp groups at 8 warps, each owning 64
  query rows): S = Q K^T and O += P V with ``warpgroup_mma`` (wgmma: Q, K and V read from shared memory, P
  from registers), the online softmax in the log2 domain. Knob ``overlap`` (default 1): block i's S is issued
  before block i-1's P V and its softmax runs under it, the mask applied to the blocks that need it; 0: S,
  softmax and P V in turn, the K/V loop run twice (the blocks that need no mask, then the tail / diagonal).
  When a slot's P V is done its "empty" barrier frees it for the producer. Knob ``pingpong`` (1, at 4 warps;
  sm_90's default): the two consumer warp groups become two partitions (the second a worker asking for 240
  registers) that take turns issuing their matrix products through two mbarriers, so one's softmax runs under
  the other's wgmma. Knob ``tma_store`` (0 by default: measured no faster): O leaves through Q's shared memory
  by one TMA store per consumer. Knob ``persistent`` (sm_90's default: 2 for causal attention up to D128,
  0 otherwise, as measured): 1, one program per SM walks the (query block, head) tiles in sections of heads
  whose K/V fit ``l2_mib`` MiB, heaviest causal blocks first; descriptors over the flattened [B*H*N, D] views,
  built once; the ring's, the turns' and Q's barrier phases carried from tile to tile; the next tile's Q loaded
  as soon as each consumer's last S is done. ``persistent=2``: the same order, each program's next tile taken from a
  global int32 counter by the producer (FA3's dynamic scheduler) and handed to the consumers through a
  two-slot ring in shared memory guarded by two mbarriers.
Triton pads the producer to a whole warp group and, since every worker names its registers, emits
``setmaxnreg``: the producer's warp group drops to ``producer_regs`` and the consumers rise above the count
ptxas reports for the whole kernel (the cap every warp starts with: the 64K-register file over all 12 warps,
168): 240 at the defaults under Triton 3.6 and 3.9 (``vgprscope explain`` reads the counts from the SASS).

Gluon targets one arch: ``warpgroup_mma`` is sm_90's instruction; every other arch's row says so
(``kernel_specs`` reads the compile's target: ``target_refusal``), AMD's that TMA, mbarriers and wgmma are
NVIDIA's. TMA needs 16-byte rows: head dims that are multiples of 8. Gluon does not run in Triton's interpreter:
the numerics are ``gpu`` tests (tests/gpu/test_gpu.py) against the float64 reference.
"""

import functools

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from ._launch import (
    TMA_ALIGN_BYTES,
    check_common,
    device_compute_units,
    example_args,
    knob,
    launch_args,
    problem,
    query_blocks,
    run,
    spec,
    tensor_shape,
)

VARIANT = {
    "name": "ws-regalloc",
    "strategy": "Hopper warp specialisation (Gluon): a TMA producer warp, wgmma consumer warp groups that take its "
                "registers (setmaxnreg)",
    "seed": "002 (registers moved to the warps that hold the accumulator)",
    "trades": "a producer warp group's registers given to the consumers; K/V staged in a shared-memory ring",
    "kernels": ["attn_fwd_ws"],
    "order": 8,
    # the arch it is written for: `vgprscope check`'s default set compiles it there beside the gate's archs
    "archs": ["sm_90"],
    # producer_regs: the producer partition's worker_num_regs (24 to 256, a multiple of 8): the register split
    # between the partitions (`explain -k producer_regs=N` shows each partition's count, `analyze` the spills)
    # overlap: 1 (default) issues block i's S = Q K^T before block i-1's P V (FA3's intra-warp-group overlap),
    # 0 runs S, softmax and P V of each block in turn
    # pingpong: 1 makes the two consumer warp groups two partitions that take turns issuing their matrix
    # products (FA3's inter-warp-group ping-pong; num_warps 4 each, block_m 128); 0 (default): one partition
    # tma_store: 1 writes O through shared memory (Q's slots, free once the K/V loop is done) with one TMA store
    # per consumer (FA3's epilogue); 0 (default): each thread stores its accumulator rows to global memory
    # persistent: 1 launches one program per SM that walks the (query block, head) tiles, heads in sections
    # whose K/V fit L2, heaviest causal blocks first (LPT), the next tile's Q loaded under the current tile's
    # last P V and its K/V under the O store; 2 the same order taken dynamically: the producer takes each next
    # tile from a global atomic counter (zeroed by the launcher) and hands it to the consumers through shared
    # memory and an mbarrier, so the SM that frees up first takes the heaviest tile left; 0 (default): one
    # program per query block and head
    # l2_mib (with persistent=1 or 2): the MiB of K/V a section of heads keeps in L2 (32 by default)
    # unroll: the overlapped loop's unmasked key blocks per trip (2, default: P alternates between two sets of
    # registers, so the next P is written while the P V that reads the other runs; 1: one loop-carried P)
    "knobs": ["producer_regs", "overlap", "pingpong", "tma_store", "persistent", "l2_mib", "unroll"],
    # `vgprscope frontier` varies the register split (producer_regs) instead of the occupancy levels: every
    # legal setmaxnreg count, multiples of 8 from 24 to 256 (what check_config accepts; at 8 consumer warps
    # the consumers' share stays above setmaxnreg's 24 at every one; under sm_90's ping-pong the second consumer
    # keeps 240, so from 152 on the first has too few and the row says so); `-k producer_regs=...` picks others
    # the frontier compiles every 32 registers (8 splits); -k producer_regs=... takes any multiple of 8 in 24-256
    "frontier_knob": {"name": "producer_regs", "range": [24, 248, 32]},
    # 128 query rows over two consumer warp groups in one partition, 128-key blocks, a ring of 2 K/V slots (at
    # D128: 32 KiB of Q + 2 x 64 KiB of K/V): the config the other archs compile to say why they cannot.
    # sm_90 (measured on an H100, reports/ws-regalloc-h100.md): FA3's ping-pong, each consumer warp group its own
    # partition of 4 warps (+8 to +16 % over one partition of 8), and a 3-slot ring up to D128 (at D128: 32 KiB
    # of Q + 3 x 64 KiB of K/V of the 227 KiB a block may take; +1 to +12 % over 2 slots; D64: no gain).
    # Causal attention up to D128 takes the dynamic scheduler (measured on an H200, reports/ws-regalloc-h200.md
    # run 5, medians of 5 rounds interleaved with SDPA, fp16 / bf16: +4 to +8 % over the static persistent order
    # at causal D128 (timed twice a round), +5 / +6 % over one program per tile at D64, GQA -2 / 0 %);
    # non-causal D128 keeps one program per tile (the dynamic one: -0.8 / +1.5 %, within the rounds' spread)
    "defaults": {"block_m": 128, "block_n": 128, "num_warps": 8, "num_stages": 2},
    "defaults_for": [{"arch": ["sm_90"], "set": {"num_warps": 4, "pingpong": 1}},
                     {"arch": ["sm_90"], "head_dim": [65, 128], "set": {"num_stages": 3}},
                     {"arch": ["sm_90"], "head_dim": [1, 128], "causal": True, "set": {"persistent": 2}},
                     {"arch": ["sm_90"], "head_dim": [1, 64], "set": {"block_m": 192, "block_n": 64,
                                                                      "num_stages": 8}},
                     {"head_dim": [129, 256], "set": {"block_n": 64}}],
    # memory traffic per (batch, head) in the traffic model's notation (vgprscope/flashattn/traffic.py):
    # the same bytes as baseline (Q once, K and V once per query block through TMA), the same FLOPs
    "traffic": {
        "read": "Nq*D*e + Tq*2*(rho*Nk*D*e)",
        "written": "Nq*D*e",
        "flops": "2*(2*P*D)",
        "formula": "read = Nq*D*e + Tq * 2*rho*Nk*D*e (Q once, K and V once per query block, by TMA); "
                   "written = Nq*D*e; FLOPs = 4*P*D",
    },
    # seed 001's estimate of the state live across the K/V loop, in the consumers (explain): Q, K and V stay
    # in shared memory, so only acc, the score tile and the row statistics are registers
    "live_state": {"acc": ["BLOCK_M", "Dp", 4], "s": ["BLOCK_M", "BLOCK_N", 4], "m_l": [2, "BLOCK_M", 4]},
    # the tile is the consumer warp groups' (16 rows per warp): the variant's own defaults at every shape
    "tiling": "own",
    # Gluon does not run in Triton's interpreter: the CPU numerics skip it, tests/gpu/test_gpu.py checks it
    "interpreter": False,
}

# TMA's global-to-shared copy: ``tma.async_load`` from Triton 3.7 on, ``async_copy_global_to_shared`` before
# (3.6, the GPU machine's release; 3.9 refuses the old name)
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
LOG2E = gl.constexpr(1.4426950408889634)
PRODUCER_REGS = 24  # FA3's producer warp group on an H100 (24 to 32 registers)
CONSUMER_REGS = gl.constexpr(240)  # FA3's consumer warp groups; under ping-pong, what the second consumer (a worker) asks for
# three consumer warp groups (192-row tiles): FA3's 160 each, what the 64K-register file leaves beside the producer
CONSUMER_REGS_3 = gl.constexpr(160)
PRODUCER_REGS_RANGE = (24, 256)
TMA_HEAD_DIM_MULTIPLE = 8  # 16-byte rows of fp16 / bf16
CONSUMER_WARPS = (4, 8)  # one or two warp groups
ROWS_PER_WARP = 16  # the M of one wgmma instruction, per warp
PINGPONG_ROWS = 64  # under ping-pong, each consumer warp group's query rows (4 warps)
# ping-pong's query tiles: two consumer warp groups, or FA3's three for small head dims (192 rows: not a power
# of two, so only a default sets it; the grid's --block-m takes powers of two), with the head dims they take
PINGPONG_TILES = {128: 256, 192: 64}
KNOBS = ("producer_regs", "overlap", "pingpong", "tma_store", "persistent", "l2_mib", "unroll")
UNROLL = 2  # the overlapped loop's blocks per trip over the unmasked blocks (two sets of P registers)
# persistent=1 or 2: the MiB of K/V of the heads one section of tiles walks together (knob l2_mib; FA3's tile
# scheduler sizes its head swizzle to L2 the same way; an H100's L2 is 50 MiB)
L2_SECTION_MIB = 32
# knob persistent: 0 one program per tile, 1 static (program p takes tiles p, p + programs, ...), 2 dynamic (each
# program's next tile from a global int32 counter, zeroed by the launcher)
PERSISTENT_MODES = (0, 1, 2)
L2_MIB_RANGE = (1, 1024)


@gluon.constexpr_function
def _mma_layout(num_warps, n):
    """The wgmma accumulator layout: warps stacked along M, instructions [16, n, 16]."""
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, n, 16])


@gluon.jit
def _producer(Q, K, V, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, q_row0, q_base, k_base, v_base,
              stride_qm, stride_kn, stride_vn, seqlen_q, seqlen_k, n_end,
              BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_D: gl.constexpr, HEAD_DIM: gl.constexpr,
              NUM_STAGES: gl.constexpr, Q_PARTS: gl.constexpr):
    """TMA loads: Q once (in Q_PARTS parts, one per consumer warp group under ping-pong), then K and V of key
    blocks 0 .. n_end-1 into the ring (slot i % NUM_STAGES)."""
    Q_ROWS: gl.constexpr = BLOCK_M // Q_PARTS
    q_desc = tma.make_tensor_descriptor(Q + q_base, [seqlen_q, HEAD_DIM], [stride_qm, 1], [Q_ROWS, BLOCK_D],
                                        q_smem.type.layout)
    k_desc = tma.make_tensor_descriptor(K + k_base, [seqlen_k, HEAD_DIM], [stride_kn, 1], [BLOCK_N, BLOCK_D],
                                        k_smem.type.layout)
    v_desc = tma.make_tensor_descriptor(V + v_base, [seqlen_k, HEAD_DIM], [stride_vn, 1], [BLOCK_N, BLOCK_D],
                                        v_smem.type.layout)
    elem: gl.constexpr = Q.dtype.element_ty.primitive_bitwidth // 8
    mbarrier.expect(q_bar, BLOCK_M * BLOCK_D * elem)
    if Q_PARTS > 1:
        for p in gl.static_range(Q_PARTS):
            _tma_load(q_desc, [q_row0 + p * Q_ROWS, 0], q_bar, q_smem.index(p))
    else:
        _tma_load(q_desc, [q_row0, 0], q_bar, q_smem)
    for i in range(n_end):
        s = i % NUM_STAGES
        # a slot's first use waits on the phase before the barrier's first: it passes at once
        mbarrier.wait(kv_empty.index(s), ((i // NUM_STAGES) & 1) ^ 1)
        mbarrier.expect(k_full.index(s), BLOCK_N * BLOCK_D * elem)
        _tma_load(k_desc, [i * BLOCK_N, 0], k_full.index(s), k_smem.index(s))
        mbarrier.expect(v_full.index(s), BLOCK_N * BLOCK_D * elem)
        _tma_load(v_desc, [i * BLOCK_N, 0], v_full.index(s), v_smem.index(s))


@gluon.jit
def _attend(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, acc, m_i, l_i, offs_m, lo, hi, seqlen_q, seqlen_k,
            qk_scale, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr,
            CAUSAL: gl.constexpr, MASKED: gl.constexpr, num_warps: gl.constexpr):
    """Key blocks lo .. hi-1: S = Q K^T (wgmma), online softmax, O += P V (wgmma, P from registers)."""
    s_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_N)
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc.type.layout, k_width=2)
    for i in range(lo, hi):
        s = i % NUM_STAGES
        phase = (i // NUM_STAGES) & 1
        mbarrier.wait(k_full.index(s), phase)
        zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
        qk = warpgroup_mma(q_smem, k_smem.index(s).permute((1, 0)), zero, use_acc=False, is_async=True)
        qk = warpgroup_mma_wait(num_outstanding=0, deps=(qk,))
        m_i, alpha, p, l_i = _softmax_step(qk, m_i, l_i, offs_m, i, seqlen_q, seqlen_k, qk_scale, BLOCK_N, CAUSAL,
                                           MASKED)
        alpha_o = gl.convert_layout(alpha, gl.SliceLayout(1, acc.type.layout))
        acc = acc * gl.expand_dims(alpha_o, 1)
        p_op = gl.convert_layout(p.to(k_smem.dtype), p_layout)
        mbarrier.wait(v_full.index(s), phase)
        acc = warpgroup_mma(p_op, v_smem.index(s), acc, is_async=True)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
        mbarrier.arrive(kv_empty.index(s), count=1)
    return acc, m_i, l_i


@gluon.jit
def _softmax_step(qk, m_i, l_i, offs_m, i, seqlen_q, seqlen_k, qk_scale, BLOCK_N: gl.constexpr,
                  CAUSAL: gl.constexpr, MASKED: gl.constexpr, n_full=0):
    """The online-softmax update of key block i: (m, alpha, p, l), m the row max of the scaled scores (log2
    domain). FA3's instruction count: the row max is taken over the raw scores and scaled once per row, so
    the scale folds into the exponent's FFMA (qk * scale - m); the mask, and the guard for a row that has
    seen no key yet, only in MASKED blocks (those from n_full on: every earlier block is whole, so each row's
    max is finite there). MASKED == 2: block i decides at run time (masked from n_full on), for a loop that
    takes both kinds (one consumer partition of 8 warps: two loops there cost spills)."""
    s_layout: gl.constexpr = qk.type.layout
    if MASKED == 2:
        if i >= n_full:
            offs_n = i * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
            keep = gl.expand_dims(offs_n, 0) < seqlen_k
            if CAUSAL:
                keep = keep & (gl.expand_dims(offs_n, 0) <= gl.expand_dims(offs_m, 1) + (seqlen_k - seqlen_q))
            qk = gl.where(keep, qk, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(qk, 1) * qk_scale)
        m_use = gl.where(m_new == float("-inf"), 0.0, m_new)
    elif MASKED:
        offs_n = i * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
        keep = gl.expand_dims(offs_n, 0) < seqlen_k
        if CAUSAL:
            keep = keep & (gl.expand_dims(offs_n, 0) <= gl.expand_dims(offs_m, 1) + (seqlen_k - seqlen_q))
        qk = gl.where(keep, qk, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(qk, 1) * qk_scale)
        m_use = gl.where(m_new == float("-inf"), 0.0, m_new)  # a row that has seen no key yet: never NaN
    else:
        m_new = gl.maximum(m_i, gl.max(qk, 1) * qk_scale)
        m_use = m_new
    alpha = gl.exp2(m_i - m_use)
    p = gl.exp2(qk * qk_scale - gl.expand_dims(m_use, 1))
    return m_new, alpha, p, l_i * alpha + gl.sum(p, 1)


@gluon.jit
def _turn(turn, k, WG: gl.constexpr, PINGPONG: gl.constexpr):
    """Ping-pong (PINGPONG consumer warp groups, round robin): consumer WG waits for its k-th turn to issue
    matrix products: WG's barrier completes a phase when the one before it has issued (WG 0's first is free)."""
    if PINGPONG:
        mbarrier.wait(turn.index(WG), (k & 1) ^ (1 if WG == 0 else 0))


@gluon.jit
def _pass_turn(turn, WG: gl.constexpr, PINGPONG: gl.constexpr):
    """Ping-pong: the next consumer warp group may issue its matrix products now."""
    if PINGPONG:
        mbarrier.arrive(turn.index((WG + 1) % PINGPONG), count=1)


@gluon.jit
def _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i, l_i, p, offs_m, i,
                     seqlen_q, seqlen_k, qk_scale, ring0, turn0, BLOCK_N: gl.constexpr,
                     NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr, MASKED: gl.constexpr, WG: gl.constexpr,
                     PINGPONG: gl.constexpr, n_full=0):
    """Key block i >= 1 of the overlapped loop: S_i = Q K_i^T and O += P_{i-1} V_{i-1} issued together, block
    i's softmax while the P V runs; returns P_i (fp16 / bf16, the A operand of the next step's P V)."""
    s_layout: gl.constexpr = _mma_layout(gl.num_warps(), BLOCK_N)
    p_layout: gl.constexpr = p.type.layout
    zero = gl.zeros([acc.shape[0], BLOCK_N], gl.float32, s_layout)
    s = (ring0 + i) % NUM_STAGES
    prev = (ring0 + i - 1) % NUM_STAGES
    mbarrier.wait(k_full.index(s), ((ring0 + i) // NUM_STAGES) & 1)
    mbarrier.wait(v_full.index(prev), ((ring0 + i - 1) // NUM_STAGES) & 1)
    _turn(turn, turn0 + i, WG, PINGPONG)
    qk = warpgroup_mma(q_smem, k_smem.index(s).permute((1, 0)), zero, use_acc=False, is_async=True)
    acc = warpgroup_mma(p, v_smem.index(prev), acc, is_async=True)
    _pass_turn(turn, WG, PINGPONG)
    qk = warpgroup_mma_wait(num_outstanding=1, deps=(qk,))  # S of block i done; P V of i-1 may run on
    m_i, alpha, p_new, l_i = _softmax_step(qk, m_i, l_i, offs_m, i, seqlen_q, seqlen_k, qk_scale, BLOCK_N,
                                           CAUSAL, MASKED, n_full)
    p_new = gl.convert_layout(p_new.to(k_smem.dtype), p_layout)
    acc, p = warpgroup_mma_wait(num_outstanding=0, deps=(acc, p))
    mbarrier.arrive(kv_empty.index(prev), count=1)
    alpha_o = gl.convert_layout(alpha, gl.SliceLayout(1, acc.type.layout))
    acc = acc * gl.expand_dims(alpha_o, 1)
    return acc, m_i, l_i, p_new


@gluon.jit
def _attend_overlapped(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i, l_i, offs_m, n_full,
                       n_iter, seqlen_q, seqlen_k, qk_scale, ring0, turn0, q_empty, BLOCK_M: gl.constexpr,
                       BLOCK_N: gl.constexpr, NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                       num_warps: gl.constexpr, WG: gl.constexpr, PINGPONG: gl.constexpr,
                       RELEASE_Q: gl.constexpr, UNROLL: gl.constexpr):
    """FA3's intra-warp-group overlap: block i's S = Q K^T is issued before block i-1's P V, and its softmax runs
    while that P V is in flight (two score tiles live: the registers the producer gave up). n_iter >= 1.
    PINGPONG (FA3's inter-warp-group schedule): two consumer warp groups take turns issuing their matrix
    products, so one's softmax runs while the other's products use the tensor cores.
    FA3's split of the K/V loop: the blocks before n_full in a loop without any mask code, the rest (the
    causal diagonal, a ragged last block) in a second loop. UNROLL (2): the unmasked loop takes two blocks a
    trip, P alternating between two sets of registers, so the next P is written while the P V that reads the
    other is in flight (one loop-carried P would have to wait for that P V before its first write: ptxas then
    waits for the P V before the exponentials).
    ring0 / turn0: the K/V blocks and turns this consumer has taken before (the persistent kernel's earlier
    tiles; 0 otherwise): the ring slot and barrier phase of block i follow from ring0 + i. RELEASE_Q: arrive on
    q_empty once the last S is done, so the producer may load the next tile's Q under the last P V."""
    s_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_N)
    p_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc.type.layout, k_width=2)
    zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, s_layout)
    mbarrier.wait(k_full.index(ring0 % NUM_STAGES), (ring0 // NUM_STAGES) & 1)
    _turn(turn, turn0, WG, PINGPONG)
    qk = warpgroup_mma(q_smem, k_smem.index(ring0 % NUM_STAGES).permute((1, 0)), zero, use_acc=False,
                       is_async=True)
    _pass_turn(turn, WG, PINGPONG)
    qk = warpgroup_mma_wait(num_outstanding=0, deps=(qk,))
    if not PINGPONG:  # block 0, its mask decided at run time
        m_i, alpha, p, l_i = _softmax_step(qk, m_i, l_i, offs_m, 0, seqlen_q, seqlen_k, qk_scale, BLOCK_N, CAUSAL,
                                           2, n_full)
    elif n_full > 0:
        m_i, alpha, p, l_i = _softmax_step(qk, m_i, l_i, offs_m, 0, seqlen_q, seqlen_k, qk_scale, BLOCK_N, CAUSAL,
                                           False)
    else:
        m_i, alpha, p, l_i = _softmax_step(qk, m_i, l_i, offs_m, 0, seqlen_q, seqlen_k, qk_scale, BLOCK_N, CAUSAL,
                                           True)
    p = gl.convert_layout(p.to(k_smem.dtype), p_layout)
    n_whole = gl.minimum(n_full, n_iter)
    if not PINGPONG:  # one partition of 8 warps: one loop, the mask decided per block
        for i in range(1, n_iter):
            acc, m_i, l_i, p = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i,
                                                l_i, p, offs_m, i, seqlen_q, seqlen_k, qk_scale, ring0, turn0,
                                                BLOCK_N, NUM_STAGES, CAUSAL, 2, WG, PINGPONG, n_full)
    elif UNROLL == 2:
        for i in range(1, n_whole - 1, 2):
            acc, m_i, l_i, p_odd = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc,
                                                    m_i, l_i, p, offs_m, i, seqlen_q, seqlen_k, qk_scale, ring0,
                                                    turn0, BLOCK_N, NUM_STAGES, CAUSAL, False, WG, PINGPONG)
            acc, m_i, l_i, p = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i,
                                                l_i, p_odd, offs_m, i + 1, seqlen_q, seqlen_k, qk_scale, ring0,
                                                turn0, BLOCK_N, NUM_STAGES, CAUSAL, False, WG, PINGPONG)
        if n_whole > 1 and (n_whole - 1) % 2 == 1:
            acc, m_i, l_i, p = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i,
                                                l_i, p, offs_m, n_whole - 1, seqlen_q, seqlen_k, qk_scale, ring0,
                                                turn0, BLOCK_N, NUM_STAGES, CAUSAL, False, WG, PINGPONG)
    else:
        for i in range(1, n_whole):
            acc, m_i, l_i, p = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i,
                                                l_i, p, offs_m, i, seqlen_q, seqlen_k, qk_scale, ring0, turn0,
                                                BLOCK_N, NUM_STAGES, CAUSAL, False, WG, PINGPONG)
    if PINGPONG:
        for i in range(gl.maximum(n_whole, 1), n_iter):
            acc, m_i, l_i, p = _overlapped_step(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i,
                                                l_i, p, offs_m, i, seqlen_q, seqlen_k, qk_scale, ring0, turn0,
                                                BLOCK_N, NUM_STAGES, CAUSAL, True, WG, PINGPONG)
    if RELEASE_Q:  # every S of the tile is done: Q's rows are read by no wgmma any more
        mbarrier.arrive(q_empty, count=1)
    last = (ring0 + n_iter - 1) % NUM_STAGES
    mbarrier.wait(v_full.index(last), ((ring0 + n_iter - 1) // NUM_STAGES) & 1)
    _turn(turn, turn0 + n_iter, WG, PINGPONG)
    acc = warpgroup_mma(p, v_smem.index(last), acc, is_async=True)
    _pass_turn(turn, WG, PINGPONG)
    acc, p = warpgroup_mma_wait(num_outstanding=0, deps=(acc, p))
    mbarrier.arrive(kv_empty.index(last), count=1)
    return acc, m_i, l_i


@gluon.jit
def _consumer(O, q_all, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_first, o_base, stride_om,
              seqlen_q, seqlen_k, qk_scale, n_full, n_end, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
              BLOCK_D: gl.constexpr, HEAD_DIM: gl.constexpr, NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr,
              OVERLAP: gl.constexpr, WG: gl.constexpr, PINGPONG: gl.constexpr, TMA_STORE: gl.constexpr,
              UNROLL: gl.constexpr):
    """The query rows of one consumer: all BLOCK_M of the program's, or under PINGPONG half of them
    (warp group WG's), Q's rows of them in shared memory."""
    num_warps: gl.constexpr = gl.num_warps()
    q_row0 = q_first + WG * BLOCK_M
    q_smem = q_all.index(WG) if PINGPONG else q_all
    o_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_D)
    s_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_N)
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    offs_m = q_row0 + gl.arange(0, BLOCK_M, layout=row_layout)
    acc = gl.zeros([BLOCK_M, BLOCK_D], gl.float32, o_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_layout)
    l_i = gl.zeros([BLOCK_M], gl.float32, row_layout)
    if PINGPONG and CAUSAL:  # this warp group's own rows need no mask on more key blocks than the tile's
        n_full = gl.minimum(gl.maximum(n_full, _key_blocks(q_row0, seqlen_q, seqlen_k, BLOCK_M, BLOCK_N, CAUSAL)[0]),
                            n_end)
    mbarrier.wait(q_bar, 0)
    if OVERLAP:
        acc, m_i, l_i = _attend_overlapped(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i, l_i,
                                           offs_m, n_full, n_end, seqlen_q, seqlen_k, qk_scale, 0, 0, q_bar,
                                           BLOCK_M, BLOCK_N, NUM_STAGES, CAUSAL, num_warps, WG, PINGPONG, False,
                                           UNROLL)
    else:
        acc, m_i, l_i = _attend(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, acc, m_i, l_i, offs_m, 0,
                                n_full, seqlen_q, seqlen_k, qk_scale, BLOCK_M, BLOCK_N, NUM_STAGES, CAUSAL, False,
                                num_warps)
        acc, m_i, l_i = _attend(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, acc, m_i, l_i, offs_m, n_full,
                                n_end, seqlen_q, seqlen_k, qk_scale, BLOCK_M, BLOCK_N, NUM_STAGES, CAUSAL, True,
                                num_warps)
    l_safe = gl.where(l_i == 0.0, 1.0, l_i)  # a row that saw no key is written as zeros
    l_o = gl.convert_layout(l_safe, gl.SliceLayout(1, o_layout))
    o = (acc / gl.expand_dims(l_o, 1)).to(O.dtype.element_ty)
    if TMA_STORE:  # Q's rows are read by no wgmma any more: O goes out through them, rows and columns past the
        # tensor's edge dropped by the copy engine
        o_desc = tma.make_tensor_descriptor(O + o_base, [seqlen_q, HEAD_DIM], [stride_om, 1], [BLOCK_M, BLOCK_D],
                                            q_smem.type.layout)
        q_smem.store(o)
        fence_async_shared()
        _tma_store(o_desc, [q_row0, 0], q_smem)
        tma.store_wait(0)
    else:
        rows = q_row0 + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, o_layout))
        cols = gl.arange(0, BLOCK_D, layout=gl.SliceLayout(0, o_layout))
        ptrs = O + o_base + gl.expand_dims(rows, 1) * stride_om + gl.expand_dims(cols, 0)
        ok = (gl.expand_dims(rows, 1) < seqlen_q) & (gl.expand_dims(cols, 0) < HEAD_DIM)
        gl.store(ptrs, o, mask=ok)


@gluon.jit
def _key_blocks(q_first, seqlen_q, seqlen_k, TILE_M: gl.constexpr, BLOCK_N: gl.constexpr, CAUSAL: gl.constexpr):
    """(n_full, n_end) of the query tile at rows [q_first, q_first + TILE_M): key blocks [0, n_full) need no
    mask, [n_full, n_end) do (kernels/_fa_common.key_block_bounds); at least one block (n_end >= 1)."""
    if CAUSAL:
        diag = seqlen_k - seqlen_q
        lo = gl.minimum(gl.maximum(q_first + diag + 1, 0), seqlen_k)
        hi = gl.minimum(gl.maximum(q_first + TILE_M + diag, 0), seqlen_k)
        n_full = lo // BLOCK_N
        n_end = gl.cdiv(hi, BLOCK_N)
    else:
        n_full = seqlen_k // BLOCK_N
        n_end = gl.cdiv(seqlen_k, BLOCK_N)
    return n_full, gl.maximum(n_end, 1)


@gluon.jit
def _tile_coords(tile, n_qb, n_bh, swizzle, CAUSAL: gl.constexpr):
    """(query block, batch*head) of tile number ``tile`` in the persistent kernel's order: the heads in sections
    of ``swizzle`` (as many as keep their K/V in L2), each section query block by query block over its heads,
    the heaviest causal blocks first (LPT: the programs that take the last tiles take the lightest)."""
    per_section = swizzle * n_qb
    section = tile // per_section
    within = tile - section * per_section
    heads = gl.minimum(swizzle, n_bh - section * swizzle)
    r = within // heads
    bh = section * swizzle + within - r * heads
    if CAUSAL:
        blk = n_qb - 1 - r
    else:
        blk = r
    return blk, bh


@gluon.jit
def _producer_persistent(Q, K, V, q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, stride_qm,
                         stride_kn, stride_vn, kv_group, n_bh, swizzle, seqlen_q, seqlen_k, TileCounter, tile_smem,
                         tile_full, tile_empty, TILE_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_D: gl.constexpr,
                         HEAD_DIM: gl.constexpr, NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                         Q_PARTS: gl.constexpr, DYNAMIC: gl.constexpr):
    """The persistent producer: the tiles pid, pid + programs, ... in turn (DYNAMIC: the program's own, then
    each next one taken from the global counter TileCounter and handed to the consumers through tile_smem);
    each tile's Q (one TMA load per consumer, as soon as that consumer has done its last S of the tile
    before), then its K and V blocks into the ring, the ring's slot and phase counted over every tile. The
    descriptors are built once, over the flattened [B*H*N, D] views (contiguous heads: launch checks it): a
    tile is a row offset, so no descriptor is rewritten while a TMA load may still read it; rows past a head's
    end read the next head's rows (or zeros past the tensor), which the consumers mask (keys) or never store
    (query rows)."""
    Q_ROWS: gl.constexpr = TILE_M // Q_PARTS
    if Q_PARTS == 3:  # 192 rows: three [64, D] buffers (no power of two for one)
        q_part = q_all.index(0)
    else:
        q_part = q_all.slice(0, Q_ROWS)
    q_desc = tma.make_tensor_descriptor(Q, [n_bh * seqlen_q, HEAD_DIM], [stride_qm, 1], [Q_ROWS, BLOCK_D],
                                        q_part.type.layout)
    n_kv_rows = (n_bh // kv_group) * seqlen_k
    k_desc = tma.make_tensor_descriptor(K, [n_kv_rows, HEAD_DIM], [stride_kn, 1], [BLOCK_N, BLOCK_D],
                                        k_smem.type.layout)
    v_desc = tma.make_tensor_descriptor(V, [n_kv_rows, HEAD_DIM], [stride_vn, 1], [BLOCK_N, BLOCK_D],
                                        v_smem.type.layout)
    elem: gl.constexpr = Q.dtype.element_ty.primitive_bitwidth // 8
    n_qb = gl.cdiv(seqlen_q, TILE_M)
    n_tiles = n_qb * n_bh
    it = 0
    tc = 0
    if DYNAMIC:  # the first tile is the program's own; each next one the counter's, handed to the consumers
        tile = gl.program_id(0)
        while tile < n_tiles:
            _publish_tile(tile_smem, tile_full, tile_empty, tile, tc)
            it = _produce_tile(q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, q_desc, k_desc,
                               v_desc, tile, tc, it, kv_group, n_qb, n_bh, swizzle, seqlen_q, seqlen_k, TILE_M,
                               BLOCK_N, BLOCK_D, NUM_STAGES, CAUSAL, Q_PARTS, elem)
            tc += 1
            # claimed once this tile's last K/V load is issued: about NUM_STAGES key blocks before the
            # consumers finish it, so the SM that frees up first takes the heaviest tile left
            tile = gl.atomic_add(TileCounter, 1, sem="relaxed") + gl.num_programs(0)
        _publish_tile(tile_smem, tile_full, tile_empty, tile, tc)  # past the last tile: the consumers stop
    else:
        for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
            it = _produce_tile(q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, q_desc, k_desc,
                               v_desc, tile, tc, it, kv_group, n_qb, n_bh, swizzle, seqlen_q, seqlen_k, TILE_M,
                               BLOCK_N, BLOCK_D, NUM_STAGES, CAUSAL, Q_PARTS, elem)
            tc += 1


@gluon.jit
def _produce_tile(q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, q_desc, k_desc, v_desc, tile,
                  tc, it, kv_group, n_qb, n_bh, swizzle, seqlen_q, seqlen_k, TILE_M: gl.constexpr,
                  BLOCK_N: gl.constexpr, BLOCK_D: gl.constexpr, NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr,
                  Q_PARTS: gl.constexpr, elem: gl.constexpr):
    """The persistent producer's loads of tile number ``tile``, its tc-th: Q by parts, as soon as each
    consumer has done its last S of the tile before, then its K and V blocks into the ring from the ring's
    it-th block on; returns the ring's count after them."""
    Q_ROWS: gl.constexpr = TILE_M // Q_PARTS
    blk, bh = _tile_coords(tile, n_qb, n_bh, swizzle, CAUSAL)
    n_full, n_end = _key_blocks(blk * TILE_M, seqlen_q, seqlen_k, TILE_M, BLOCK_N, CAUSAL)
    q_row = bh * seqlen_q + blk * TILE_M
    kv_row = (bh // kv_group) * seqlen_k  # b * H + h over the group is b * H_kv + h // group
    for p in gl.static_range(Q_PARTS):
        # the first tile's wait passes at once (the phase before the barrier's first)
        mbarrier.wait(q_empty.index(p), (tc & 1) ^ 1)
        mbarrier.expect(q_full.index(p), Q_ROWS * BLOCK_D * elem)
        if Q_PARTS == 3:
            _tma_load(q_desc, [q_row + p * Q_ROWS, 0], q_full.index(p), q_all.index(p))
        else:
            _tma_load(q_desc, [q_row + p * Q_ROWS, 0], q_full.index(p), q_all.slice(p * Q_ROWS, Q_ROWS))
    for i in range(n_end):
        s = it % NUM_STAGES
        mbarrier.wait(kv_empty.index(s), ((it // NUM_STAGES) & 1) ^ 1)
        mbarrier.expect(k_full.index(s), BLOCK_N * BLOCK_D * elem)
        _tma_load(k_desc, [kv_row + i * BLOCK_N, 0], k_full.index(s), k_smem.index(s))
        mbarrier.expect(v_full.index(s), BLOCK_N * BLOCK_D * elem)
        _tma_load(v_desc, [kv_row + i * BLOCK_N, 0], v_full.index(s), v_smem.index(s))
        it += 1
    return it


@gluon.jit
def _publish_tile(tile_smem, tile_full, tile_empty, tile, tc):
    """The dynamic scheduler's hand-over (producer side): tile number ``tile``, the tc-th, into slot tc % 2 of
    the two-slot ring in shared memory, once every consumer has read what the slot held two tiles before."""
    s = tc % 2
    mbarrier.wait(tile_empty.index(s), ((tc // 2) & 1) ^ 1)
    one: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    tile_smem.index(s).store(gl.full([1], tile, gl.int32, one))
    mbarrier.arrive(tile_full.index(s), count=1)  # release: the store above is seen by whoever waits on it


@gluon.jit
def _take_tile(tile_smem, tile_full, tile_empty, tc):
    """The dynamic scheduler's hand-over (consumer side): the tc-th tile number (past the last tile: stop).
    The slot is rewritten two tiles later, which the producer reaches only after this consumer's warps have
    done the next tile's S (the Q barriers), long after every warp's read here."""
    s = tc % 2
    mbarrier.wait(tile_full.index(s), (tc // 2) & 1)
    one: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    tile = gl.max(tile_smem.index(s).load(one), axis=0)
    mbarrier.arrive(tile_empty.index(s), count=1)
    return tile


@gluon.jit
def _consumer_persistent(O, q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn, stride_ob,
                         stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q, seqlen_k, qk_scale, tile_smem,
                         tile_full, tile_empty, TILE_M: gl.constexpr, BLOCK_M: gl.constexpr,
                         BLOCK_N: gl.constexpr, BLOCK_D: gl.constexpr, HEAD_DIM: gl.constexpr,
                         NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr, WG: gl.constexpr, PINGPONG: gl.constexpr,
                         UNROLL: gl.constexpr, DYNAMIC: gl.constexpr):
    """The persistent consumer: the producer's tiles in the same order (DYNAMIC: as the producer hands them
    over), BLOCK_M rows of each (all TILE_M, or under PINGPONG warp group WG's share); the ring's and the
    turns' counts carried from tile to tile. Its O store is issued while the producer's loads of the next tile
    are already in flight."""
    n_qb = gl.cdiv(seqlen_q, TILE_M)
    n_tiles = n_qb * n_bh
    it = 0  # K/V blocks taken so far; tc the tiles taken so far, the turns taken it + tc
    if DYNAMIC:
        tc = 0
        tile = _take_tile(tile_smem, tile_full, tile_empty, tc)
        while tile < n_tiles:
            it = _consume_tile(O, q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                               stride_ob, stride_oh, stride_om, num_heads, n_qb, n_bh, swizzle, seqlen_q, seqlen_k,
                               qk_scale, tile, tc, it, TILE_M, BLOCK_M, BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES,
                               CAUSAL, WG, PINGPONG, UNROLL)
            tc += 1
            tile = _take_tile(tile_smem, tile_full, tile_empty, tc)
    else:
        for tile in range(gl.program_id(0), n_tiles, gl.num_programs(0)):
            tc = (tile - gl.program_id(0)) // gl.num_programs(0)
            it = _consume_tile(O, q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                               stride_ob, stride_oh, stride_om, num_heads, n_qb, n_bh, swizzle, seqlen_q, seqlen_k,
                               qk_scale, tile, tc, it, TILE_M, BLOCK_M, BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES,
                               CAUSAL, WG, PINGPONG, UNROLL)


@gluon.jit
def _consume_tile(O, q_all, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn, stride_ob, stride_oh,
                  stride_om, num_heads, n_qb, n_bh, swizzle, seqlen_q, seqlen_k, qk_scale, tile, tc, it,
                  TILE_M: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_D: gl.constexpr,
                  HEAD_DIM: gl.constexpr, NUM_STAGES: gl.constexpr, CAUSAL: gl.constexpr, WG: gl.constexpr,
                  PINGPONG: gl.constexpr, UNROLL: gl.constexpr):
    """One persistent consumer's rows of tile number ``tile``, its tc-th, whose key blocks follow the ring's
    it-th; returns the ring's count after them."""
    num_warps: gl.constexpr = gl.num_warps()
    if PINGPONG == 3:
        q_smem = q_all.index(WG)
    elif PINGPONG:
        q_smem = q_all.slice(WG * BLOCK_M, BLOCK_M)
    else:
        q_smem = q_all
    o_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_D)
    s_layout: gl.constexpr = _mma_layout(num_warps, BLOCK_N)
    row_layout: gl.constexpr = gl.SliceLayout(1, s_layout)
    blk, bh = _tile_coords(tile, n_qb, n_bh, swizzle, CAUSAL)
    n_full, n_end = _key_blocks(blk * TILE_M, seqlen_q, seqlen_k, TILE_M, BLOCK_N, CAUSAL)
    q_row0 = blk * TILE_M + WG * BLOCK_M
    if PINGPONG == 3 and CAUSAL:  # this warp group's 64 rows need no mask on more key blocks than the tile's
        n_full = gl.minimum(gl.maximum(n_full, _key_blocks(q_row0, seqlen_q, seqlen_k, BLOCK_M, BLOCK_N,
                                                           CAUSAL)[0]), n_end)
    offs_m = q_row0 + gl.arange(0, BLOCK_M, layout=row_layout)
    acc = gl.zeros([BLOCK_M, BLOCK_D], gl.float32, o_layout)
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, row_layout)
    l_i = gl.zeros([BLOCK_M], gl.float32, row_layout)
    mbarrier.wait(q_full.index(WG), tc & 1)
    acc, m_i, l_i = _attend_overlapped(q_smem, k_smem, v_smem, k_full, v_full, kv_empty, turn, acc, m_i, l_i,
                                       offs_m, n_full, n_end, seqlen_q, seqlen_k, qk_scale, it, it + tc,
                                       q_empty.index(WG), BLOCK_M, BLOCK_N, NUM_STAGES, CAUSAL, num_warps, WG,
                                       PINGPONG, True, UNROLL)
    l_safe = gl.where(l_i == 0.0, 1.0, l_i)  # a row that saw no key is written as zeros
    l_o = gl.convert_layout(l_safe, gl.SliceLayout(1, o_layout))
    o = (acc / gl.expand_dims(l_o, 1)).to(O.dtype.element_ty)
    o_base = (bh // num_heads) * stride_ob + (bh % num_heads) * stride_oh
    rows = q_row0 + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, o_layout))
    cols = gl.arange(0, BLOCK_D, layout=gl.SliceLayout(0, o_layout))
    ptrs = O + o_base + gl.expand_dims(rows, 1) * stride_om + gl.expand_dims(cols, 0)
    ok = (gl.expand_dims(rows, 1) < seqlen_q) & (gl.expand_dims(cols, 0) < HEAD_DIM)
    gl.store(ptrs, o, mask=ok)
    return it + n_end


@gluon.jit(do_not_specialize=["seqlen_q", "seqlen_k", "n_bh", "swizzle"])
def attn_fwd_ws(Q, K, V, O, sm_scale, stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om, num_heads, kv_group, seqlen_q,
                seqlen_k, n_bh, swizzle, TileCounter, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                BLOCK_D: gl.constexpr, HEAD_DIM: gl.constexpr, CAUSAL: gl.constexpr, NUM_STAGES: gl.constexpr,
                PRODUCER_REGS: gl.constexpr, OVERLAP: gl.constexpr, PINGPONG: gl.constexpr,
                TMA_STORE: gl.constexpr, PERSISTENT: gl.constexpr, UNROLL: gl.constexpr):
    bh = gl.program_id(1)
    if CAUSAL:  # heaviest query blocks first (kernels/_fa_common.program_rows)
        blk = gl.num_programs(0) - 1 - gl.program_id(0)
    else:
        blk = gl.program_id(0)
    batch = bh // num_heads
    head = bh % num_heads
    kv_head = head // kv_group
    q_row0 = blk * BLOCK_M
    if CAUSAL:  # the key-block range of rows [q_row0, q_row0 + BLOCK_M) (kernels/_fa_common.key_block_bounds)
        diag = seqlen_k - seqlen_q
        lo = gl.minimum(gl.maximum(q_row0 + diag + 1, 0), seqlen_k)
        hi = gl.minimum(gl.maximum(q_row0 + BLOCK_M + diag, 0), seqlen_k)
        n_full = lo // BLOCK_N
        n_end = gl.cdiv(hi, BLOCK_N)
    else:
        n_full = seqlen_k // BLOCK_N
        n_end = gl.cdiv(seqlen_k, BLOCK_N)
    # every program takes key block 0 at least: wholly masked where no row of the block sees a key (Nq > Nk
    # under the causal mask), so the overlapped loop needs no empty case
    n_end = gl.maximum(n_end, 1)

    dtype: gl.constexpr = Q.dtype.element_ty
    q_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_D], dtype)
    kv_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_N, BLOCK_D], dtype)
    if PINGPONG and (not PERSISTENT or PINGPONG == 3):  # one [64, D] part per consumer warp group (192 rows: no
        # power of two)
        Q_SPLIT: gl.constexpr = PINGPONG
        q_layout_p: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M // PINGPONG, BLOCK_D], dtype)
        q_smem = gl.allocate_shared_memory(dtype, [PINGPONG, BLOCK_M // PINGPONG, BLOCK_D], q_layout_p)
    else:
        Q_SPLIT: gl.constexpr = 1
        q_smem = gl.allocate_shared_memory(dtype, [BLOCK_M, BLOCK_D], q_layout)
    k_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, BLOCK_D], kv_layout)
    v_smem = gl.allocate_shared_memory(dtype, [NUM_STAGES, BLOCK_N, BLOCK_D], kv_layout)
    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    k_full = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    v_full = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    kv_empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    N_TURNS: gl.constexpr = PINGPONG if PINGPONG else 2
    turn = gl.allocate_shared_memory(gl.int64, [N_TURNS, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    for s in gl.static_range(NUM_STAGES):
        mbarrier.init(k_full.index(s), count=1)
        mbarrier.init(v_full.index(s), count=1)
        mbarrier.init(kv_empty.index(s), count=PINGPONG if PINGPONG else 1)  # every consumer frees the slot
    for t in gl.static_range(N_TURNS):
        mbarrier.init(turn.index(t), count=1)
    if PERSISTENT:  # Q by parts, one per consumer: each frees its rows for the next tile's Q on its own
        Q_PARTS: gl.constexpr = PINGPONG if PINGPONG else 1
        q_full = gl.allocate_shared_memory(gl.int64, [Q_PARTS, 1], mbarrier.MBarrierLayout())
        q_empty = gl.allocate_shared_memory(gl.int64, [Q_PARTS, 1], mbarrier.MBarrierLayout())
        for p in gl.static_range(Q_PARTS):
            mbarrier.init(q_full.index(p), count=1)
            mbarrier.init(q_empty.index(p), count=1)
        # persistent=2 (dynamic): the producer hands each tile number to the consumers through a two-slot ring
        DYNAMIC: gl.constexpr = PERSISTENT == 2
        if DYNAMIC:
            tile_smem = gl.allocate_shared_memory(gl.int32, [2, 1], gl.SwizzledSharedLayout(1, 1, 1, [0]))
            tile_full = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
            tile_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
            for t in gl.static_range(2):
                mbarrier.init(tile_full.index(t), count=1)
                mbarrier.init(tile_empty.index(t), count=Q_PARTS)  # every consumer reads it
        else:  # not read: the static order follows from the program id
            tile_smem = q_full
            tile_full = q_full
            tile_empty = q_full
    fence_async_shared()

    q_base = batch * stride_qb + head * stride_qh
    o_base = batch * stride_ob + head * stride_oh
    k_base = batch * stride_kb + kv_head * stride_kh
    v_base = batch * stride_vb + kv_head * stride_vh
    if PERSISTENT:  # one program per SM, walking the tiles (grid: the SM count; launch)
        if PINGPONG == 3:
            THIRD_P: gl.constexpr = BLOCK_M // 3
            gl.warp_specialize([
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, THIRD_P,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 0, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, THIRD_P,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 1, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, THIRD_P,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 2, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_producer_persistent, (Q, K, V, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty,
                                        stride_qm, stride_kn, stride_vn, kv_group, n_bh, swizzle, seqlen_q,
                                        seqlen_k, TileCounter, tile_smem, tile_full, tile_empty, BLOCK_M, BLOCK_N,
                                        BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, Q_PARTS, DYNAMIC)),
            ], [gl.num_warps(), gl.num_warps(), 1], [CONSUMER_REGS_3, CONSUMER_REGS_3, PRODUCER_REGS])
        elif PINGPONG:
            HALF_P: gl.constexpr = BLOCK_M // 2
            gl.warp_specialize([
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, HALF_P,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 0, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, HALF_P,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 1, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_producer_persistent, (Q, K, V, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty,
                                        stride_qm, stride_kn, stride_vn, kv_group, n_bh, swizzle, seqlen_q,
                                        seqlen_k, TileCounter, tile_smem, tile_full, tile_empty, BLOCK_M, BLOCK_N,
                                        BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, Q_PARTS, DYNAMIC)),
            ], [gl.num_warps(), 1], [CONSUMER_REGS, PRODUCER_REGS])
        else:
            gl.warp_specialize([
                (_consumer_persistent, (O, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty, turn,
                                        stride_ob, stride_oh, stride_om, num_heads, n_bh, swizzle, seqlen_q,
                                        seqlen_k, sm_scale * LOG2E, tile_smem, tile_full, tile_empty, BLOCK_M, BLOCK_M,
                                        BLOCK_N, BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, 0, PINGPONG, UNROLL,
                                        DYNAMIC)),
                (_producer_persistent, (Q, K, V, q_smem, k_smem, v_smem, q_full, q_empty, k_full, v_full, kv_empty,
                                        stride_qm, stride_kn, stride_vn, kv_group, n_bh, swizzle, seqlen_q,
                                        seqlen_k, TileCounter, tile_smem, tile_full, tile_empty, BLOCK_M, BLOCK_N,
                                        BLOCK_D, HEAD_DIM, NUM_STAGES, CAUSAL, Q_PARTS, DYNAMIC)),
            ], [1], [PRODUCER_REGS])
    elif PINGPONG == 2:  # the kernel's warps are consumer 0; consumer 1 is a worker of as many warps
        HALF: gl.constexpr = BLOCK_M // 2
        gl.warp_specialize([
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, HALF, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 0, PINGPONG, TMA_STORE, UNROLL)),
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, HALF, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 1, PINGPONG, TMA_STORE, UNROLL)),
            (_producer, (Q, K, V, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, q_row0, q_base, k_base,
                         v_base, stride_qm, stride_kn, stride_vn, seqlen_q, seqlen_k, n_end, BLOCK_M, BLOCK_N,
                         BLOCK_D, HEAD_DIM, NUM_STAGES, Q_SPLIT)),
        ], [gl.num_warps(), 1], [CONSUMER_REGS, PRODUCER_REGS])
    elif PINGPONG == 3:  # FA3's small-head-dim tile: 192 query rows, three consumer warp groups taking turns
        THIRD: gl.constexpr = BLOCK_M // 3
        gl.warp_specialize([
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, THIRD, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 0, PINGPONG, TMA_STORE, UNROLL)),
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, THIRD, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 1, PINGPONG, TMA_STORE, UNROLL)),
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, THIRD, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 2, PINGPONG, TMA_STORE, UNROLL)),
            (_producer, (Q, K, V, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, q_row0, q_base, k_base,
                         v_base, stride_qm, stride_kn, stride_vn, seqlen_q, seqlen_k, n_end, BLOCK_M, BLOCK_N,
                         BLOCK_D, HEAD_DIM, NUM_STAGES, Q_SPLIT)),
        ], [gl.num_warps(), gl.num_warps(), 1], [CONSUMER_REGS_3, CONSUMER_REGS_3, PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_consumer, (O, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, turn, q_row0, o_base,
                         stride_om, seqlen_q, seqlen_k, sm_scale * LOG2E, n_full, n_end, BLOCK_M, BLOCK_N, BLOCK_D,
                         HEAD_DIM, NUM_STAGES, CAUSAL, OVERLAP, 0, PINGPONG, TMA_STORE, UNROLL)),
            (_producer, (Q, K, V, q_smem, k_smem, v_smem, q_bar, k_full, v_full, kv_empty, q_row0, q_base, k_base,
                         v_base, stride_qm, stride_kn, stride_vn, seqlen_q, seqlen_k, n_end, BLOCK_M, BLOCK_N,
                         BLOCK_D, HEAD_DIM, NUM_STAGES, Q_SPLIT)),
        ], [1], [PRODUCER_REGS])


def producer_regs(cfg):
    return knob(cfg, "producer_regs", PRODUCER_REGS)


def check_config(cfg):
    """Why this variant cannot take ``cfg``, or None."""
    three = cfg["block_m"] == 3 * PINGPONG_ROWS and knob(cfg, "pingpong", 0) == 1
    # the 192-row tile is checked as its 64-row share per consumer (check_common takes powers of two)
    why = check_common(cfg | {"block_m": PINGPONG_ROWS} if three else cfg, knobs=KNOBS)
    if why:
        return why
    if cfg["head_dim"] % TMA_HEAD_DIM_MULTIPLE:
        return (f"head_dim {cfg['head_dim']} is not supported: TMA reads 16-byte rows; allowed: multiples of "
                f"{TMA_HEAD_DIM_MULTIPLE} from 16 to 256 (64 and 128 are the tested ones)")
    if cfg["num_warps"] not in CONSUMER_WARPS:
        return (f"num_warps {cfg['num_warps']} is not allowed; allowed: 4 or 8 (one or two consumer warp groups "
                f"for wgmma)")
    rows = ROWS_PER_WARP * cfg["num_warps"]
    if cfg["block_m"] % rows:
        return (f"block_m {cfg['block_m']} is not allowed at num_warps {cfg['num_warps']}: wgmma gives each warp "
                f"16 rows; allowed: multiples of {rows}")
    r = producer_regs(cfg)
    lo, hi = PRODUCER_REGS_RANGE
    if not isinstance(r, int) or isinstance(r, bool) or not lo <= r <= hi or r % 8:
        return f"producer_regs {r!r} is not allowed; allowed: multiples of 8 from {lo} to {hi} (setmaxnreg)"
    o = knob(cfg, "overlap", 1)
    if o not in (0, 1) or isinstance(o, bool):
        return f"overlap {o!r} is not allowed; allowed: 0 (S, softmax, P V in turn) or 1 (S of the next block first)"
    pp = knob(cfg, "pingpong", 0)
    if pp not in (0, 1) or isinstance(pp, bool):
        return f"pingpong {pp!r} is not allowed; allowed: 0 (one consumer partition) or 1 (two, taking turns)"
    if pp and not (o and cfg["num_warps"] == 4 and cfg["block_m"] in PINGPONG_TILES):
        return (f"pingpong=1 needs overlap=1, num_warps 4 (each consumer warp group one partition) and block_m 128 "
                f"or 192 (two or three consumer warp groups of 64 rows); got overlap={o}, num_warps "
                f"{cfg['num_warps']}, block_m {cfg['block_m']}")
    if pp and cfg["head_dim"] > PINGPONG_TILES[cfg["block_m"]]:
        return (f"block_m {cfg['block_m']} (three consumer warp groups at {CONSUMER_REGS_3.value} registers) takes "
                f"head dims up to {PINGPONG_TILES[cfg['block_m']]}; got {cfg['head_dim']}")
    ts = knob(cfg, "tma_store", 0)
    if ts not in (0, 1) or isinstance(ts, bool):
        return f"tma_store {ts!r} is not allowed; allowed: 0 (each thread stores its rows) or 1 (O through TMA)"
    ps = knob(cfg, "persistent", 0)
    if ps not in PERSISTENT_MODES or isinstance(ps, bool):
        return (f"persistent {ps!r} is not allowed; allowed: 0 (one program per query block and head), 1 (one "
                f"per SM, each walking its share of the tiles) or 2 (one per SM, each taking the next tile from a "
                f"global counter)")
    if ps and not (o and not ts):
        return (f"persistent={ps} needs overlap=1 and tma_store=0 (the next tile's Q is loaded into the rows O "
                f"would leave through); got overlap={o}, tma_store={ts}")
    u = knob(cfg, "unroll", UNROLL)
    if u not in (1, 2) or isinstance(u, bool):
        return f"unroll {u!r} is not allowed; allowed: 1 or 2 (unmasked key blocks per trip of the overlapped loop)"
    mib = knob(cfg, "l2_mib")
    lo, hi = L2_MIB_RANGE
    if mib is not None and (not ps or not isinstance(mib, int) or isinstance(mib, bool) or not lo <= mib <= hi):
        return (f"l2_mib {mib!r} is not allowed; allowed: with persistent=1 or 2, an integer from {lo} to {hi} (MiB of "
                f"K/V per section of heads; default {L2_SECTION_MIB})")
    return None


def _constexprs(cfg, head_dim, causal):
    return {"BLOCK_M": cfg["block_m"], "BLOCK_N": cfg["block_n"], "BLOCK_D": max(16, 1 << (head_dim - 1).bit_length()),
            "HEAD_DIM": head_dim, "CAUSAL": bool(causal), "NUM_STAGES": cfg["num_stages"],
            "PRODUCER_REGS": producer_regs(cfg), "OVERLAP": bool(knob(cfg, "overlap", 1)),
            "PINGPONG": cfg["block_m"] // PINGPONG_ROWS if knob(cfg, "pingpong", 0) else 0,
            "TMA_STORE": bool(knob(cfg, "tma_store", 0)),
            "PERSISTENT": knob(cfg, "persistent", 0), "UNROLL": knob(cfg, "unroll", UNROLL)}


def l2_heads(n_bh, seqlen_k, head_dim, elem_bytes, kv_group, mib=L2_SECTION_MIB):
    """The persistent kernel's section of heads (``_tile_coords``' swizzle): as many query heads as share K/V
    heads whose K and V together fit ``mib`` MiB, at least one K/V head's group, at most every head."""
    kv_head_bytes = 2 * seqlen_k * head_dim * elem_bytes
    return max(1, min(n_bh, max(1, mib * 2**20 // kv_head_bytes) * kv_group))


def _tile_args(cfg, b, h, nk, d, hkv, elem_bytes):
    mib = knob(cfg, "l2_mib", L2_SECTION_MIB)
    return {"n_bh": b * h, "swizzle": l2_heads(b * h, nk, d, elem_bytes, h // hkv, mib)}


def target_refusal(target):
    """Why the kernel cannot be built for ``target`` (the compile's backend, arch and warp size), or None."""
    if target is None or (target.get("backend") == "cuda" and int(target.get("arch", 0)) == 90):
        return None
    if target.get("backend") != "cuda":
        return (f"ws-regalloc is written for Hopper (sm_90) in Gluon: TMA, mbarriers, wgmma and setmaxnreg are "
                f"NVIDIA's; {target.get('arch')} is AMD's")
    return (f"ws-regalloc is written for Hopper (sm_90) in Gluon: warpgroup_mma (wgmma) is sm_90's instruction; "
            f"sm_{target.get('arch')} lacks it")


def kernel_specs(cfg):
    """What to compile for ``cfg``: the one Gluon kernel, args given as example launch values. On a target
    other than sm_90 (``cfg['target']``, given by the compile worker), why not, raised."""
    if (why := target_refusal(cfg.get("target"))) is not None:
        raise ValueError(why)
    b, h, _, nk, hkv = problem(cfg)
    args = example_args(cfg) | _tile_args(cfg, b, h, nk, cfg["head_dim"], hkv, 2) | {"TileCounter": "*i32"}
    return [spec("attn_fwd_ws", attn_fwd_ws, args, _constexprs(cfg, cfg["head_dim"], cfg["causal"]))]


@functools.cache
def _unread_counter(device):
    """The TileCounter argument of the modes that never read it (one per device, made on first use)."""
    import torch

    return torch.zeros(1, dtype=torch.int32, device=device)


def launch(q, k, v, causal, sm_scale, cfg):
    """Run on real tensors (q (B, H, Nq, D), k and v (B, H_kv, Nk, D), contiguous); returns o like q."""
    import torch

    from ._launch import ensure_allocator

    o = torch.empty_like(q)
    cfg = cfg | {"shape": tensor_shape(q, k)}
    b, h, nq, _, _ = problem(cfg)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.data_ptr() % TMA_ALIGN_BYTES or any(s * t.element_size() % TMA_ALIGN_BYTES for s in t.stride()[:3]):
            raise ValueError(f"ws-regalloc reads {name} with TMA: every head's base and row must be 16-byte "
                             f"aligned; got strides {tuple(t.stride())} at address {t.data_ptr():#x} (a contiguous "
                             f"tensor with a head dim that is a multiple of {TMA_HEAD_DIM_MULTIPLE})")
    ensure_allocator()  # the descriptors are built in the kernel: a little global scratch per program
    args = launch_args(q, k, v, sm_scale, O=o) | _tile_args(cfg, b, h, k.shape[2], q.shape[3], k.shape[1],
                                                             q.element_size())
    grid = (query_blocks(nq, cfg["block_m"]), b * h)
    mode = knob(cfg, "persistent", 0)
    if mode:
        # the descriptors span every head as one [B*H*N, D] matrix: each tensor's heads must follow each other
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.stride()[:3] != (t.shape[1] * t.shape[2] * t.stride(2), t.shape[2] * t.stride(2), t.stride(2)):
                raise ValueError(f"ws-regalloc persistent={mode} reads {name} as one [B*H*N, D] matrix: its batches "
                                 f"and heads must follow each other (contiguous); got strides {tuple(t.stride())}")
        grid = (min(device_compute_units(q), grid[0] * grid[1]),)
    # persistent=2's tile counter starts at 0 on every launch; the other modes never read it
    args["TileCounter"] = (torch.zeros(1, dtype=torch.int32, device=q.device) if mode == 2
                           else _unread_counter(q.device))
    run(attn_fwd_ws, grid, args, _constexprs(cfg, q.shape[3], causal), cfg)
    return o
