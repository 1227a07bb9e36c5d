"""The per-variant facts each bundled variant declares in its ``VARIANT`` (memory traffic, seed 001's live
state, tolerance), read through the attention package, checked on worked examples: each expected value is
derived by hand below from the formula the variant documents, not computed by the code under test. A new
variant needs no entry here; a fact of an existing variant that changes fails its example.
"""

from __future__ import annotations

import pytest

from vgprscope.core.archs import ARCHS
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.flashattn.correctness import tolerance
from vgprscope.flashattn.live import live_state
from vgprscope.flashattn.tolerances import Tolerance
from vgprscope.flashattn.traffic import traffic
from vgprscope.flashattn.variants import load_variants

VARIANTS = load_variants()

# ------------------------------------------------------------------------------------ memory traffic
# B=1, H=2, Nq=256, Nk=512, D=64, fp16 (e=2), BLOCK_M=128: Tq = 256/128 = 2 query blocks per head.
# Non-causal: P = Nq*Nk = 131072 pairs per head, rho = 1. Per head: Q or O = Nq*D*e = 32768 B,
# one pass over K or V = Nk*D*e = 65536 B, the two matmuls 4*P*D = 33554432 FLOPs. Totals are per head x B*H=2.
MHA = dict(block_m=128, block_n=64, head_dim=64, dtype="fp16", shape=(1, 2, 256, 512))


@pytest.mark.parametrize("variant, fields, read, written, flops", [
    # Q once + K and V once per query block: 32768 + 2 * 2 * 65536 = 294912 per head
    ("baseline", MHA, 2 * 294912, 2 * 32768, 2 * 33554432),
    # three splits (knob): each split reads Q (3 * 32768), K/V as the baseline (262144), and the merge reads
    # the partials (acc, m, l) in fp32: 3 * 256 * (64 + 2) * 4 = 202752, which pass 1 wrote beside O
    ("split-k", MHA | {"extra": (("num_splits", 3),)}, 2 * (98304 + 262144 + 202752), 2 * (202752 + 32768),
     2 * 33554432),
    # causal, bottom-right (Nk >= Nq): P = Nq*Nk - Nq^2/2 = 131072 - 32768 = 98304 pairs; every query row
    # streams K and V of each key it sees: 32768 + 2 * 98304 * 64 * 2 = 25198592 per head; 4*P*D = 25165824
    ("row-stream", MHA | {"causal": True}, 2 * 25198592, 2 * 32768, 2 * 25165824),
    # grouped-query decode: B=1, H=8, H_kv=2 (G=4), Nq=4, Nk=512, BLOCK_M=16: the 4 heads x 4 rows of a K/V
    # head pack into one block, so K and V are read once per K/V head, Tq = 2 blocks / 8 heads = 0.25.
    # Per head: Q 4*64*2 = 512 + 0.25 * 2 * 65536 = 33280; O 512; 4 * (4*512) * 64 = 524288 FLOPs
    ("baseline", dict(block_m=16, block_n=64, head_dim=64, dtype="fp16", shape=(1, 8, 4, 512, 2)),
     8 * 33280, 8 * 512, 8 * 524288),
])
def test_traffic_worked_examples(variant, fields, read, written, flops):
    t = traffic(VARIANTS[variant], AttentionConfig(**fields))
    assert (t.bytes_read, t.bytes_written, t.flops) == (read, written, flops)
    assert t.intensity == pytest.approx(flops / (read + written), rel=1e-12)


@pytest.mark.parametrize("variant", [n for n, v in VARIANTS.items() if v.traffic is not None], ids=str)
def test_every_variant_with_a_traffic_model_reads_its_inputs_and_writes_its_output_at_least_once(variant):
    """Non-causal, so every key is seen by some query row: Q, K, V (K/V per K/V head) are read at least once
    and O written at least once, and the two matmuls cost at least 4*Nq*Nk*D FLOPs per head."""
    fields = dict(block_m=64, block_n=64, head_dim=128, dtype="bf16", shape=(2, 8, 300, 1000, 2))
    t = traffic(VARIANTS[variant], AttentionConfig(**fields))
    b, h, nq, nk, hkv, d, e = 2, 8, 300, 1000, 2, 128, 2
    assert t.bytes_read >= b * h * nq * d * e + 2 * b * hkv * nk * d * e
    assert t.bytes_written >= b * h * nq * d * e
    assert t.flops >= 4 * b * h * nq * nk * d


# ------------------------------------------------------------------------- seed 001's live state
# Registers per lane of a tile = rows * columns * bytes / 4 / threads, rounded up. gfx942 runs 64-lane waves:
# 4 warps = 256 threads. BLOCK_M=128, BLOCK_N=64, head dim 128 (its power of two, Dp, is 128 too), fp16.
# baseline: acc 128x128 fp32 = 64, q 128x128 fp16 = 32, the score tile s 128x64 fp32 = 32, m and l 2x128 fp32 = 1.
SEED = dict(block_m=128, block_n=64, head_dim=128, dtype="fp16", num_warps=4)


@pytest.mark.parametrize("variant, arch, fields, state", [
    ("baseline", "gfx942", SEED, {"acc": 64, "q": 32, "s": 32, "m_l": 1, "total": 129, "threads": 256}),
    # the score tile in fp16: 128x64x2 / 4 / 256 = 16
    ("qk-fp16-acc", "gfx942", SEED, {"acc": 64, "q": 32, "s": 16, "m_l": 1, "total": 113, "threads": 256}),
    # Q re-loaded by 32-column slices (block_dk): 128x32x2 / 4 / 256 = 8
    ("remat-q", "gfx942", SEED | {"extra": (("block_dk", 32),)},
     {"acc": 64, "q": 8, "s": 32, "m_l": 1, "total": 105, "threads": 256}),
    # NVIDIA's 32-thread warps: 128 threads; head dim 40 pads to Dp = 64: acc 128x64x4 / 4 / 128 = 64,
    # q 128x64x2 / 4 / 128 = 32, s 128x64x4 / 4 / 128 = 64, m and l 2x128x4 / 4 / 128 = 2
    ("baseline", "sm_90", SEED | {"head_dim": 40},
     {"acc": 64, "q": 32, "s": 64, "m_l": 2, "total": 162, "threads": 128}),
    # one query row per program: acc and q 1x128 fp32 = 512 B, s 1x64 fp32, m and l 2 floats, over 128 threads
    ("row-stream", "sm_90", SEED, {"acc": 1, "q": 1, "s": 1, "m_l": 1, "total": 4, "threads": 128}),
])
def test_live_state_worked_examples(variant, arch, fields, state):
    assert live_state(AttentionConfig(**fields), arch, VARIANTS[variant]) == state
    assert ARCHS[arch].wave_size * fields["num_warps"] == state["threads"]


# ------------------------------------------------------------------------------------ tolerances
# The table's rows (vgprscope/flashattn/tolerances.py, derived by scripts/measure_tolerances.py): fp16 atol
# 1e-3, bf16 8.5e-3, rtol two units in the last place of each (2 * 2^-10, 2 * 2^-7); qk-fp16-acc, less
# accurate by design (QK^T summed in fp16), declares fp16 atol 5.8e-3.

@pytest.mark.parametrize("variant, dtype, atol, rtol", [
    ("baseline", "fp16", 1.0e-3, 2 * 2.0 ** -10),
    ("baseline", "bf16", 8.5e-3, 2 * 2.0 ** -7),
    ("split-k", "fp16", 1.0e-3, 2 * 2.0 ** -10),
    ("qk-fp16-acc", "fp16", 5.8e-3, 2 * 2.0 ** -10),
    ("qk-fp16-acc", "bf16", 8.5e-3, 2 * 2.0 ** -7),
])
def test_tolerance_worked_examples(variant, dtype, atol, rtol):
    assert tolerance(dtype, VARIANTS[variant]) == tolerance(dtype, variant) == Tolerance(atol=atol, rtol=rtol)


# ------------------------------------------------ a declaration that cannot be read: one line, exit 2

HEAD = '"name": "v", "strategy": "s", "seed": "0", "trades": "t", "kernels": ["k"], "defaults": {"block_m": 64}'
GOOD_TRAFFIC = '{"read": "Nq*D*e", "written": "Nq*D*e", "flops": "4*P*D", "formula": "f"}'


@pytest.mark.parametrize("extra, needles", [
    ('"traffc": {}', ("unknown key 'traffc'", "allowed:", "traffic")),
    ('"traffic": {"read": "Nq*D*e"}', ("VARIANT['traffic'] must be a dict of exactly read, written, flops, formula",)),
    ('"traffic": ' + GOOD_TRAFFIC.replace('"Nq*D*e"', '"Nq*X*e"', 1), ("reads 'X'", "names: D, G, Kb")),
    ('"traffic": ' + GOOD_TRAFFIC.replace('"Nq*D*e"', '"__import__(\'os\').getcwd()"', 1), ("is not allowed",
                                                                                          "allowed: numbers")),
    ('"traffic": ' + GOOD_TRAFFIC.replace('"Nq*D*e"', '"Nq**2"', 1), ("'Nq**2' is not allowed",)),
    ('"traffic": ' + GOOD_TRAFFIC.replace('"Nq*D*e"', '"Nq*("', 1), ("is not a formula",)),
    ('"live_state": {"acc": ["BLOCK_M", "Dp"]}', ("live_state']['acc'] must be [rows, columns, bytes",)),
    ('"live_state": {"q": ["BLOCK_M", "min(block_dk, Dp)", "e"]}', ("reads 'block_dk'",)),
    ('"tiling": "tiles"', ("VARIANT['tiling'] 'tiles' is not allowed", "fa2, query-tile, rows")),
    ('"tolerance": {"fp8": {"atol": 1, "rtol": 0}}', ("dtype 'fp8'", "allowed: fp16, bf16")),
    ('"tolerance": {"fp16": {"atol": 1e-3}}', ("tolerance']['fp16'] must be {'atol': ..., 'rtol': ...}",)),
    ('"tolerance": {"fp16": {"atol": -1, "rtol": "2*eps"}}', ("must not be negative",)),
])
def test_a_bad_declaration_is_one_line_naming_the_file_and_the_key(tmp_path, extra, needles):
    from typer.testing import CliRunner

    from vgprscope.cli.app import _register, app

    _register()
    (tmp_path / "v.py").write_text(f"VARIANT = {{{HEAD}, {extra}}}\n")
    res = CliRunner().invoke(app, ["variants", "--kernel-dir", str(tmp_path)])
    assert res.exit_code == 2 and "Traceback" not in res.output + res.stderr, res.output + res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert str(tmp_path / "v.py") in line
    for n in needles:
        assert n in line, line


def test_a_variant_that_declares_no_model_has_no_traffic_and_no_estimate(tmp_path):
    from types import SimpleNamespace

    from vgprscope.core.errors import UnknownNameError
    from vgprscope.core.records import Record
    from vgprscope.flashattn.live import estimate
    from vgprscope.flashattn.traffic import line_traffic
    from vgprscope.flashattn.variants import load_variants

    (tmp_path / "v.py").write_text(f"VARIANT = {{{HEAD}}}\n")
    (v,) = load_variants(tmp_path).values()
    assert (v.traffic, v.live_state, v.tiling, v.tolerances) == (None, None, "query-tile", ())
    cfg = AttentionConfig(block_m=64, block_n=64, head_dim=64)
    with pytest.raises(UnknownNameError, match="variant of the traffic model 'v'"):
        traffic(v, cfg)
    rec = Record(variant="v", kernel="k", arch="gfx942", config=cfg, status="ok")
    assert line_traffic([v])([rec]) is None and line_traffic()([rec]) is None
    assert estimate(SimpleNamespace(variant=v, config=cfg, arch=ARCHS["gfx942"])) is None
    assert tolerance("fp16", v) == tolerance("fp16")
