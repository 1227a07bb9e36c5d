"""The per-variant facts each bundled variant now declares in its own ``VARIANT`` (traffic model, seed 001's
live state, tiling, tolerance) give exactly what the tables keyed by variant name gave before they moved into
the kernel files (issue 19, item 2): every traffic figure bit for bit, every estimate, default and tolerance
equal, over a grid of shapes, tiles, head dims, dtypes, causal masks, knobs and compute-unit counts.

The old tables and formulas are kept below verbatim (vgprscope/model.py, tuning.py and tolerances.py at
9fec9dc) as the reference.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from vgprscope.core.archs import ARCHS, Vendor
from vgprscope.attention.config import DEFAULT_SHAPE, AttentionConfig
from vgprscope.attention.live import live_state
from vgprscope.attention.correctness import tolerance
from vgprscope.attention.tolerances import Tolerance
from vgprscope.attention.traffic import traffic
from vgprscope.attention.tuning import DECODE, DECODE_MAX_BLOCK_M, DECODE_MAX_NQ, DECODE_MIN_BLOCK_M, PREFILL
from vgprscope.attention.tuning import DECODE_WIDE_N_MAX_BLOCK_M, _fit_shared, _pow2_at_least, shape_defaults
from vgprscope.attention.variants import load_variants

# ------------------------------------------------------------------------ the old tables, verbatim

OLD_FP32 = 4
OLD_ELEMENT_BYTES = {"fp16": 2, "bf16": 2}


@dataclass(frozen=True)
class OldProblem:
    bh: int
    group: int
    nq: int
    nk: int
    d: int
    e: int
    tq: float
    kb: int
    pairs: float
    rho: float
    splits: int

    @classmethod
    def of(cls, config, compute_units=None, can_pack=True):
        from vgprscope.kernels._launch import attention_grid, num_splits, problem

        b, h, nq, nk, hkv = problem(config.as_dict())
        blocks, columns = attention_grid(b, h, nq, hkv, config.block_m, can_pack)
        if not config.causal:
            pairs = float(nq * nk)
        elif nk >= nq:
            pairs = nq * nk - nq * nq / 2
        else:
            pairs = nk * nk / 2
        return cls(bh=b * h, group=h // hkv, nq=nq, nk=nk, d=config.head_dim, e=OLD_ELEMENT_BYTES[config.dtype],
                   tq=blocks * columns / (b * h), kb=math.ceil(nk / config.block_n), pairs=pairs,
                   rho=pairs / (nq * nk), splits=num_splits(config.as_dict(), compute_units))

    @property
    def q_bytes(self):
        return self.nq * self.d * self.e

    @property
    def kv_pass(self):
        return self.rho * self.nk * self.d * self.e

    @property
    def mm_flops(self):
        return 2 * self.pairs * self.d


def _baseline(p):
    """read = Nq*D*e + Tq * 2*rho*Nk*D*e (Q once, K and V once per query block); written = Nq*D*e;
    FLOPs = 4*P*D"""
    return p.q_bytes + p.tq * 2 * p.kv_pass, p.q_bytes, 2 * p.mm_flops


def _remat_q(p):
    """read = Nq*D*e * rho*Kb (Q re-read for every key block) + Tq * 2*rho*Nk*D*e; written = Nq*D*e;
    FLOPs = 4*P*D"""
    return p.q_bytes * p.rho * p.kb + p.tq * 2 * p.kv_pass, p.q_bytes, 2 * p.mm_flops


def _split_k(p):
    """read = S*Nq*D*e (each split loads Q) + Tq * 2*rho*Nk*D*e + S*Nq*(D+2)*4 (merge reads the
    partials A_s, m_s, l_s); written = S*Nq*(D+2)*4 (partials) + Nq*D*e; FLOPs = 4*P*D"""
    partials = p.splits * p.nq * (p.d + 2) * OLD_FP32
    return p.splits * p.q_bytes + p.tq * 2 * p.kv_pass + partials, partials + p.q_bytes, 2 * p.mm_flops


def _two_phase(p):
    """pass 1: read Nq*D*e + Tq*rho*Nk*D*e (Q, K), write 2*Nq*4 (m, l); pass 2: read Nq*D*e + 2*Nq*4 +
    Tq * 2*rho*Nk*D*e, write Nq*D*e. FLOPs = 2*P*D (pass 1 Q K^T) + 4*P*D (pass 2) = 6*P*D"""
    stats = 2 * p.nq * OLD_FP32
    read = (p.q_bytes + p.tq * p.kv_pass) + (p.q_bytes + stats + p.tq * 2 * p.kv_pass)
    return read, stats + p.q_bytes, 3 * p.mm_flops


def _split_k_two_phase(p):
    """pass 1: read S*Nq*D*e + Tq*rho*Nk*D*e, write S*2*Nq*4; pass 2: read S*Nq*D*e + S*S*2*Nq*4 (every
    split combines all splits' m, l) + Tq * 2*rho*Nk*D*e, write S*Nq*D*4; merge: read S*Nq*D*4, write
    Nq*D*e. FLOPs = 6*P*D"""
    s = p.splits
    stats = s * 2 * p.nq * OLD_FP32
    partials = s * p.nq * p.d * OLD_FP32
    read = (s * p.q_bytes + p.tq * p.kv_pass) + (s * p.q_bytes + s * stats + p.tq * 2 * p.kv_pass) + partials
    return read, stats + partials + p.q_bytes, 3 * p.mm_flops


def _row_stream(p):
    """read = Nq*D*e + 2*P*D*e (every query row streams K and V of each key it sees: no reuse across
    rows, nor across a K/V head's group); written = Nq*D*e; FLOPs = 4*P*D"""
    return p.q_bytes + 2 * p.pairs * p.d * p.e, p.q_bytes, 2 * p.mm_flops


OLD_MODELS: dict[str, Callable] = {
    "baseline": _baseline, "small-tiles": _baseline, "qk-fp16-acc": _baseline, "remat-q": _remat_q,
    "split-k": _split_k, "two-phase": _two_phase, "split-k-two-phase": _split_k_two_phase, "row-stream": _row_stream,
}
OLD_NO_PACK = ("row-stream",)


def old_traffic(variant, config, compute_units=None):
    model = OLD_MODELS[variant]
    p = OldProblem.of(config, compute_units, can_pack=variant not in OLD_NO_PACK)
    read, written, flops = (x * p.bh for x in model(p))
    formula = " ".join((model.__doc__ or "").split()) + " (per batch*head; times B*H)"
    return read, written, flops, flops / (read + written), formula


def _tile_regs(rows, cols, bytes_per, threads):
    return math.ceil(rows * cols * bytes_per / 4 / threads)


OLD_LIVE_ADJUST = {
    "qk-fp16-acc": lambda s, c, t, dp: s | {"s": _tile_regs(c.block_m, c.block_n, 2, t)},
    "remat-q": lambda s, c, t, dp: s | {"q": _tile_regs(c.block_m, min(c.get("block_dk", 32), dp),
                                                        OLD_ELEMENT_BYTES[c.dtype], t)},
    "row-stream": lambda s, c, t, dp: {"acc": _tile_regs(1, dp, OLD_FP32, t), "q": _tile_regs(1, dp, OLD_FP32, t),
                                       "s": _tile_regs(1, c.block_n, OLD_FP32, t), "m_l": _tile_regs(1, 2, OLD_FP32, t)},
}


def old_live_state(config, arch, variant="baseline"):
    from vgprscope.kernels._launch import next_pow2_dim

    threads = config.num_warps * arch.wave_size
    dp = next_pow2_dim(config.head_dim)
    e = OLD_ELEMENT_BYTES[config.dtype]
    m, n = config.block_m, config.block_n
    state = {"acc": _tile_regs(m, dp, OLD_FP32, threads), "q": _tile_regs(m, dp, e, threads),
             "s": _tile_regs(m, n, OLD_FP32, threads), "m_l": _tile_regs(2, m, OLD_FP32, threads)}
    state = OLD_LIVE_ADJUST.get(variant, lambda s, c, t, dp: s)(state, config, threads, dp)
    return state | {"total": sum(state.values()), "threads": threads}


OLD_FA2_LOOP = ("baseline", "qk-fp16-acc", "split-k")
OLD_NOT_TILED = ("row-stream",)


def old_shape_defaults(variant, vendor, arch, shape, head_dim):
    if variant in OLD_NOT_TILED:
        return {}
    _, h, nq, _, *rest = shape
    group = h // rest[0] if rest else 1
    if nq <= DECODE_MAX_NQ:
        rows = group * nq if group > 1 else nq
        block_m = min(DECODE_MAX_BLOCK_M, max(DECODE_MIN_BLOCK_M, _pow2_at_least(rows)))
        cfg = {"block_m": block_m} | DECODE[vendor]
        if block_m > DECODE_WIDE_N_MAX_BLOCK_M:
            cfg["block_n"] = min(cfg["block_n"], 64)
        return _fit_shared(cfg, arch, head_dim) if vendor is Vendor.NVIDIA else cfg
    if variant in OLD_FA2_LOOP and arch in PREFILL:
        for up_to, cfg in PREFILL[arch]:
            if head_dim <= up_to:
                return dict(cfg)
    return {}


OLD_FP16_EPS = 2.0 ** -10
OLD_BF16_EPS = 2.0 ** -7
OLD_TOLERANCES = {"fp16": (1.0e-3, 2 * OLD_FP16_EPS), "bf16": (8.5e-3, 2 * OLD_BF16_EPS)}
OLD_VARIANT_TOLERANCES = {"qk-fp16-acc": {"fp16": (5.8e-3, 2 * OLD_FP16_EPS)}}

# ------------------------------------------------------------------------------------------ the grid

SHAPES = [DEFAULT_SHAPE, (1, 2, 256, 512), (1, 8, 4, 512, 2), (1, 32, 1, 8192, 8), (2, 4, 300, 1000),
          (1, 3, 1000, 77), (1, 2, 256, 512, 1), (3, 12, 17, 4099, 4)]
KNOBS = {"split-k": [{}, {"num_splits": 3}], "split-k-two-phase": [{}, {"num_splits": 2}],
         "remat-q": [{"block_dk": 32}, {"block_dk": 16}, {"block_dk": 64}]}


def configs(name: str):
    for shape, causal, d, dtype, (bm, bn), knobs in itertools.product(
            SHAPES, (False, True), (40, 64, 128, 256), ("fp16", "bf16"), ((16, 64), (64, 32), (128, 64), (128, 128)),
            KNOBS.get(name, [{}])):
        yield AttentionConfig(block_m=bm, block_n=bn, head_dim=d, dtype=dtype, causal=causal, shape=shape,
                              extra=tuple(sorted(knobs.items())))


VARIANTS = list(load_variants().values())


def test_every_bundled_variant_had_an_entry_in_the_old_tables():
    assert {v.name for v in VARIANTS} == set(OLD_MODELS)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_traffic_is_bit_for_bit_the_old_models(variant):
    n = 0
    for cfg in configs(variant.name):
        for units in (None, 4, 80, 132, 304):
            t = traffic(variant, cfg, units)
            old = old_traffic(variant.name, cfg, units)
            assert (t.bytes_read, t.bytes_written, t.flops, t.intensity, t.formula) == old, (cfg, units)
            # the same bits, not only equal values (== would let -0.0 or an int pass for a float)
            assert [x.hex() for x in map(float, (t.bytes_read, t.bytes_written, t.flops, t.intensity))] == \
                [x.hex() for x in map(float, old[:4])]
            n += 1
    assert n >= 5 * 8 * 2 * 4 * 2 * 4


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_live_state_is_the_old_estimate(variant):
    for cfg in configs(variant.name):
        for arch in ("gfx942", "sm_90", "gfx1100"):
            for warps in (1, 4, 8):
                c = cfg.with_options(num_warps=warps)
                assert live_state(c, arch, variant) == old_live_state(c, ARCHS[arch], variant.name), (c, arch)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_shape_defaults_are_the_old_ones(variant):
    for shape, arch, d in itertools.product(SHAPES, ARCHS.values(), range(16, 257, 8)):
        assert shape_defaults(variant, arch.vendor, arch.name, shape, d) == \
            old_shape_defaults(variant.name, arch.vendor, arch.name, shape, d), (shape, arch.name, d)
    for vendor in Vendor:  # a device the arch table lacks: no arch name
        assert shape_defaults(variant, vendor, None, (1, 32, 1, 8192, 8), 128) == \
            old_shape_defaults(variant.name, vendor, None, (1, 32, 1, 8192, 8), 128)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_tolerances_are_the_old_table(variant):
    for dtype in ("fp16", "bf16"):
        atol, rtol = OLD_VARIANT_TOLERANCES.get(variant.name, {}).get(dtype, OLD_TOLERANCES[dtype])
        assert tolerance(dtype, variant) == tolerance(dtype, variant.name) == Tolerance(atol=atol, rtol=rtol)


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

    from vgprscope.attention.live import estimate
    from vgprscope.attention.traffic import line_traffic
    from vgprscope.attention.variants import load_variants
    from vgprscope.core.errors import UnknownNameError
    from vgprscope.core.records import Record

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
