"""Every bundled variant against the float64 reference, on the CPU through Triton's interpreter.

The cases are chosen, not crossed: each covers several of seqlen 1, lengths that are no multiple of any
block, Nq > Nk and Nq < Nk under the bottom-right causal mask, the head dims 16, 40, 64, 80, 96, 128, 256
(padded ones included), fp16 and bf16, batch and head offsets; every variant runs every case with small blocks
so the interpreter stays fast. Tolerances are vgprscope's one table (nothing is loosened here), and a
deliberately wrong variant must fail the same gate.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

import vgprscope
from vgprscope.core.errors import ConfigError
from vgprscope.flashattn import loader
from vgprscope.flashattn.correctness import NumericsVerdict, check_output, run_variant, tolerance
from vgprscope.flashattn.variants import get_variant, load_variants

BROKEN = Path(__file__).parents[1] / "fixtures" / "broken_kernels"
# Gluon variants (ws-regalloc) do not run in the interpreter: their numerics are GPU tests (tests/gpu/test_gpu.py)
VARIANTS = [name for name, v in load_variants().items() if v.interpreter]

# (b, h, seqlen_q, seqlen_k, head_dim, causal, dtype)
CASES = [
    pytest.param(1, 1, 1, 1, 16, False, "fp16", id="n1-d16-fp16"),
    pytest.param(1, 2, 1, 45, 64, True, "bf16", id="q1-k45-causal-d64-bf16"),
    pytest.param(1, 2, 37, 53, 40, True, "fp16", id="q37<k53-causal-d40-fp16"),
    pytest.param(2, 1, 53, 37, 80, True, "bf16", id="q53>k37-causal-d80-bf16"),
    pytest.param(2, 1, 45, 1, 40, False, "fp16", id="k1-d40-fp16"),
    pytest.param(1, 2, 70, 50, 128, False, "bf16", id="q70-k50-d128-bf16"),
    pytest.param(2, 2, 33, 33, 64, True, "fp16", id="q33=k33-causal-d64-fp16"),
    pytest.param(1, 1, 23, 90, 128, True, "fp16", id="q23<k90-causal-d128-fp16"),
    pytest.param(1, 1, 29, 21, 96, False, "fp16", id="q29-k21-d96-fp16"),
    pytest.param(1, 1, 19, 34, 256, True, "bf16", id="q19<k34-causal-d256-bf16"),
]

# Small tiles keep the interpreter fast and give every case several query and key blocks.
SMALL = {"block_m": 16, "block_n": 16}
KNOBS = {"remat-q": {"block_dk": 16}}  # several Q slices even at head_dim 40


def check_variant(name: str, b: int, h: int, nq: int, nk: int, d: int, causal: bool, dtype: str = "fp16",
                  device: str = "cpu", seed: int = 0, kernel_dir=None, **config: Any) -> NumericsVerdict:
    """Run variant ``name`` on fresh random inputs of that shape and check it against float64.

    ``config``: AttentionConfig fields and the variant's knobs (block_m=16, num_splits=2, ...).
    On the CPU the kernels run through Triton's interpreter: TRITON_INTERPRET=1 must be set before
    triton is first imported.
    """
    variant = get_variant(name, Path(kernel_dir) if kernel_dir else loader.BUNDLED_DIR)
    out, ref = run_variant(name, b, h, nq, nk, d, causal, dtype, device, seed, kernel_dir, **config)
    return check_output(out, ref, dtype, variant)


def small_config(variant: str) -> dict:
    return SMALL | KNOBS.get(variant, {})


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("b", "h", "nq", "nk", "d", "causal", "dtype"), CASES)
def test_variant_matches_float64_reference(variant, b, h, nq, nk, d, causal, dtype):
    if variant == "qk-fp16-acc" and dtype == "bf16":
        with pytest.raises(ConfigError, match="only for fp16 inputs"):
            check_variant(variant, b, h, nq, nk, d, causal, dtype, seed=nq * nk + d, **small_config(variant))
        return
    result = check_variant(variant, b, h, nq, nk, d, causal, dtype, seed=nq * nk + d, **small_config(variant))
    assert result.ok, result.message
    assert result.nan_count == 0


@pytest.mark.parametrize("splits", [1, 2, 4])
def test_split_k_explicit_split_counts(splits):
    result = check_variant("split-k", 1, 2, 40, 61, 40, True, "bf16", seed=splits, num_splits=splits, **SMALL)
    assert result.ok, result.message


def test_more_splits_than_key_blocks_is_refused():
    q = torch.zeros(1, 1, 8, 16, dtype=torch.float16)
    k = torch.zeros(1, 1, 33, 16, dtype=torch.float16)
    with pytest.raises(ConfigError, match=r"num_splits 4 is more than the 3 key blocks"):
        vgprscope.attention(q, k, k, variant="split-k", num_splits=4, **SMALL)


def test_unknown_knob_is_refused():
    q = torch.zeros(1, 1, 8, 16, dtype=torch.float16)
    with pytest.raises(ConfigError, match="unknown knob 'num_split'"):
        vgprscope.attention(q, q, q, variant="split-k", num_split=2, **SMALL)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rows_that_see_no_key_are_exact_zeros(variant):
    """Causal with Nq > Nk: query rows 0..Nq-Nk-1 see no key. Split variants get splits that saw nothing."""
    nq, nk = 72, 40  # rows 0..31 see no key; with 3 splits the first query blocks' splits are all empty
    knobs = {"num_splits": 3} if "split" in variant else {}
    out, ref = run_variant(variant, 1, 1, nq, nk, 16, True, "fp16", seed=7, **small_config(variant), **knobs)
    assert not torch.isnan(out).any()
    assert torch.equal(out[:, :, : nq - nk], torch.zeros_like(out[:, :, : nq - nk]))
    assert check_output(out, ref, "fp16", variant).ok


def _merge(acc, m, l, weighted):
    """Run the merge kernel on hand-made partials (B*H = 1, splits, Nq, D)."""
    from vgprscope.kernels import _multipass as mp

    s, nq, d = acc.shape[1:]
    o = torch.empty(1, 1, nq, d, dtype=torch.float16)
    args = {"Acc": acc, "M": m, "L": l, "O": o, "stride_ob": o.stride(0), "stride_oh": o.stride(1),
            "stride_om": o.stride(2), "num_heads": 1, "seqlen_q": nq, "num_splits": s}
    mp.run(mp.attn_merge, (math.ceil(nq / mp.MERGE_BLOCK_M), 1), args, mp.merge_constexprs(d, weighted),
           {"num_warps": 4, "num_stages": 1})
    return o


def test_split_merge_weighs_empty_splits_to_zero_and_never_nans():
    """Rows 0-1: no split saw a key (m = -inf, l = 0 everywhere) -> zeros. Row 2: split 0 empty, split 1 not.
    Row 3: both splits, the merge rule by hand."""
    from vgprscope.runtime.interp import fix_interpreter

    fix_interpreter()
    inf = float("inf")
    d = 16
    acc = torch.zeros(1, 2, 4, d)
    m = torch.tensor([[[-inf, -inf, -inf, 1.0], [-inf, -inf, 2.0, 3.0]]])
    l = torch.tensor([[[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 4.0, 1.0]]])
    acc[0, 1, 2] = 8.0
    acc[0, 0, 3], acc[0, 1, 3] = 1.0, 5.0
    o = _merge(acc, m, l, weighted=True)
    assert not torch.isnan(o).any()
    assert torch.equal(o[0, 0, :2], torch.zeros(2, d, dtype=torch.float16))
    assert torch.allclose(o[0, 0, 2].float(), torch.full((d,), 2.0))  # 8 / 4
    w0, w1 = 2.0 ** (1.0 - 3.0), 1.0  # exp2(m_s - M), M = 3
    want = (w0 * 1.0 + w1 * 5.0) / (w0 * 2.0 + w1 * 1.0)
    assert torch.allclose(o[0, 0, 3].float(), torch.full((d,), want), rtol=1e-3)


def test_unweighted_merge_is_a_plain_sum():
    acc = torch.arange(3 * 5 * 16, dtype=torch.float32).reshape(1, 3, 5, 16) / 64
    nan = torch.full((1, 3, 5), float("nan"))  # never read without weights
    o = _merge(acc, nan, nan, weighted=False)
    assert torch.allclose(o[0, 0].float(), acc[0].sum(0), rtol=1e-3)


def test_qk_fp16_acc_has_its_own_documented_tolerance():
    assert tolerance("fp16", "qk-fp16-acc") != tolerance("fp16", "baseline")
    assert tolerance("bf16", "qk-fp16-acc") == tolerance("bf16", "baseline")


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_a_broken_variant_fails_the_gate(dtype):
    """FA2 without the rescale of acc: the same gate, the same tolerances, must say no."""
    result = check_variant("no-rescale", 1, 2, 40, 70, 64, False, dtype, seed=3, kernel_dir=BROKEN)
    assert not result.ok
    assert result.message.startswith(f"FAIL (no-rescale, {dtype})")
    assert result.max_abs_err > 10 * (result.atol + result.rtol)


def test_check_output_reports_where_and_by_how_much():
    ref = torch.zeros(1, 2, 3, 4, dtype=torch.float64)
    out = ref.clone().to(torch.float16)
    out[0, 1, 2, 3] = 0.5
    r = check_output(out, ref, "fp16", "baseline")
    assert not r.ok and r.mismatched == 1 and r.worst_index == (0, 1, 2, 3)
    assert r.worst_got == 0.5 and r.worst_want == 0.0 and r.max_abs_err == 0.5
    assert "at (0,1,2,3) got 0.5 want 0" in r.message and "1 / 24 elements" in r.message


def test_check_output_fails_on_nan_even_where_reference_is_nan_free():
    ref = torch.ones(1, 1, 2, 2, dtype=torch.float64)
    out = ref.to(torch.bfloat16)
    out[0, 0, 1, 0] = float("nan")
    r = check_output(out, ref, torch.bfloat16, "split-k")
    assert not r.ok and r.nan_count == 1 and r.worst_index == (0, 0, 1, 0)
    assert "1 NaN/inf" in r.message


# Grouped-query attention: K/V of kv_heads heads, query head h reading K/V head h // (h_q / kv_heads).
# (b, h, kv_heads, seqlen_q, seqlen_k, head_dim, causal, dtype): decode packing (Nq <= 16 with a group > 1: a
# program holds the rows of every query head of a K/V head, more than one program per group here), ragged
# lengths under the causal mask (Nq > Nk too), MQA (one K/V head), an odd group of 3, fp16 and bf16.
GQA_CASES = [
    pytest.param(2, 4, 2, 1, 45, 64, True, "fp16", id="packed-q1-k45-causal-g2-fp16"),
    pytest.param(1, 8, 2, 5, 37, 40, True, "bf16", id="packed-q5-k37-causal-g4-d40-bf16"),
    pytest.param(1, 4, 1, 16, 33, 16, False, "fp16", id="packed-mqa-q16-k33-fp16"),
    pytest.param(1, 6, 2, 37, 53, 64, True, "bf16", id="q37<k53-causal-g3-bf16"),
    pytest.param(2, 4, 2, 53, 37, 80, True, "fp16", id="q53>k37-causal-g2-d80-fp16"),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("b", "h", "hkv", "nq", "nk", "d", "causal", "dtype"), GQA_CASES)
def test_grouped_query_attention_matches_float64_reference(variant, b, h, hkv, nq, nk, d, causal, dtype):
    assert_matches_reference(variant, b, h, hkv, nq, nk, d, causal, dtype, seed=nq * nk + d + hkv)


def assert_matches_reference(variant, b, h, hkv, nq, nk, d, causal, dtype, seed, **knobs):
    """One case at the small test tiles (and ``knobs``) against float64, no NaN; qk-fp16-acc skips bf16."""
    if variant == "qk-fp16-acc" and dtype == "bf16":
        pytest.skip("qk-fp16-acc takes fp16 only (test_variant_matches_float64_reference checks the refusal)")
    result = check_variant(variant, b, h, nq, nk, d, causal, dtype, seed=seed, kv_heads=hkv,
                           **small_config(variant), **knobs)
    assert result.ok, result.message
    assert result.nan_count == 0


def test_grouped_query_reference_is_multi_head_on_repeated_kv():
    from vgprscope.kernels.reference import attention_reference

    g = torch.Generator().manual_seed(5)
    q, k, v = torch.randn(2, 6, 7, 16, generator=g), torch.randn(2, 2, 9, 16, generator=g), torch.randn(
        2, 2, 9, 16, generator=g)
    want = attention_reference(q, k.repeat_interleave(3, 1), v.repeat_interleave(3, 1), causal=True)
    assert torch.equal(attention_reference(q, k, v, causal=True), want)
    # query head 4 reads K/V head 4 // 3 = 1, not head 4 % 2 = 0
    alone = attention_reference(q[:, 4:5], k[:, 1:2], v[:, 1:2], causal=True)
    assert torch.allclose(attention_reference(q, k, v, causal=True)[:, 4:5], alone)


def test_kv_heads_that_do_not_divide_the_query_heads_are_refused():
    from vgprscope.core.errors import UsageError

    q = torch.zeros(1, 6, 8, 16, dtype=torch.float16)
    k = torch.zeros(1, 4, 8, 16, dtype=torch.float16)
    with pytest.raises(UsageError, match="H_kv dividing H"):
        vgprscope.attention(q, k, k, **SMALL)


def test_decode_packing_grid_and_split_count_rules():
    """The launch shapes the numerics above run through, exactly: packed grids hold a K/V head's group, and
    the split count fills one wave of one program per SM / CU, evened over the key blocks."""
    from vgprscope.kernels._launch import attention_grid, num_splits, packs

    assert packs(1, 4) and packs(16, 4) and not packs(17, 4) and not packs(1, 1)
    assert attention_grid(8, 32, 16, 8, 64) == (1, 64)  # 4 heads x 16 rows = one 64-row block per K/V head
    assert attention_grid(1, 32, 1, 8, 16) == (1, 8)
    assert attention_grid(1, 32, 1, 8, 16, can_pack=False) == (1, 32)  # row-stream never packs
    assert attention_grid(1, 32, 100, 8, 64) == (2, 32)  # prefill: one program per query block and head
    mha = {"shape": [1, 32, 1, 65536], "block_m": 16, "block_n": 128, "extra": {}}
    gqa = mha | {"shape": [1, 32, 1, 65536, 8]}
    # 32 programs on 132 SMs: 132 // 32 = 4 splits (one wave); 512 key blocks: 128 a split
    assert num_splits(mha, 132) == 4
    # 8 packed programs: 132 // 8 = 16 splits, 32 key blocks each; on an MI300X's 304 CUs 304 // 8 = 38
    # wanted, 14 blocks a split -> 37 splits, none empty
    assert num_splits(gqa, 132) == 16 and num_splits(gqa, 304) == 37
    assert num_splits(gqa | {"extra": {"num_splits": 4}}, 132) == 4  # the knob wins
    assert num_splits({"shape": [4, 32, 4096, 4096], "block_m": 128, "block_n": 64, "extra": {}}, 132) == 1


# Knob tma: K/V through tensor descriptors (TMA on sm_90+; the interpreter emulates the descriptor's bounds).
# The descriptor zero-fills the tail block and the padded head-dim columns in place of the masks, so the
# cases are the ragged, causal, padded (d40, d80) and packed-decode ones.
TMA_VARIANTS = [name for name, v in load_variants().items() if "tma" in v.knobs and v.interpreter]
TMA_CASES = [
    pytest.param(2, 2, 2, 37, 53, 40, True, "fp16", id="q37<k53-causal-d40-fp16"),
    pytest.param(2, 1, 1, 53, 37, 80, True, "bf16", id="q53>k37-causal-d80-bf16"),
    pytest.param(1, 2, 2, 70, 50, 128, False, "bf16", id="q70-k50-d128-bf16"),
    pytest.param(1, 8, 2, 5, 37, 64, True, "fp16", id="packed-q5-k37-causal-g4-fp16"),
    pytest.param(2, 4, 2, 53, 37, 80, True, "fp16", id="q53>k37-causal-g2-d80-fp16"),
]


def test_tma_is_offered_by_every_whole_tile_fa2_variant():
    assert set(TMA_VARIANTS) == {"baseline", "small-tiles", "qk-fp16-acc", "split-k"}


@pytest.mark.parametrize("variant", TMA_VARIANTS)
@pytest.mark.parametrize(("b", "h", "hkv", "nq", "nk", "d", "causal", "dtype"), TMA_CASES)
def test_tma_matches_float64_reference(variant, b, h, hkv, nq, nk, d, causal, dtype):
    assert_matches_reference(variant, b, h, hkv, nq, nk, d, causal, dtype, seed=nq * nk + d + 7, tma=1)


@pytest.mark.parametrize(("knob", "head_dim", "why"), [
    (2, 64, "tma 2 is not allowed; allowed: 0 (pointer loads) or 1 (tensor descriptors)"),
    (1, 100, "tma=1 needs 16-byte rows: a head dim that is a multiple of 8; head_dim 100 is not (use tma=0)"),
])
def test_tma_knob_is_checked(knob, head_dim, why):
    with pytest.raises(ConfigError, match=why.replace("(", r"\(").replace(")", r"\)")):
        check_variant("baseline", 1, 1, 8, 8, head_dim, False, "fp16", **SMALL, tma=knob)
