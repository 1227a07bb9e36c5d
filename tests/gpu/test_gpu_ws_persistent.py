"""GPU tests (marker ``gpu``) of ws-regalloc's persistent schedulers: one program per SM walking the (query
block, head) tiles, in a static share (persistent=1) or taking each next tile from a global atomic counter,
handed from the producer to the consumers through shared memory (persistent=2); the ring's and barriers'
phases carried from tile to tile, the descriptors over the flattened [B*H*N, D] views (rows past a head's end
belong to the next head, masked or never stored). Every case of tests/gpu/test_gpu.py against the float64
reference under each, at the sm_90 defaults (ping-pong) and with one consumer partition of 8 warps; a copy
without the rescale of acc must fail under each too."""

from __future__ import annotations

import re

import pytest

from tests.gpu.test_gpu import GQA_SHAPES, SHAPES  # type: ignore[import-not-found]

pytestmark = pytest.mark.gpu
MODES = [1, 2]  # knob persistent: static, dynamic
# many tiles per SM under the dynamic scheduler's heaviest-first order: B2 H16 Hkv4 causal, 512 tiles of D128
MANY_TILES = (2, 16, 2048, 2048, 128, True, 4)


def _tile(d):
    """The persistent kernel's tile at head dim d: 128 query rows (two consumer warp groups); at D <= 64, where
    the default is the 192-row tile, the 128x128 tile with 2 K/V slots."""
    return {"block_m": 128, "block_n": 128, "num_stages": 2} if d <= 64 else {}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", [s + (s[1],) for s in SHAPES] + GQA_SHAPES + [MANY_TILES],
                         ids=lambda s: "x".join(map(str, s)))
def test_ws_regalloc_persistent_matches_float64_reference_on_gpu(shape, dtype, mode):
    """Ragged, Nq 1, Nq > Nk and Nq < Nk causal, head dims 40 to 256, MQA and odd groups: more tiles than SMs
    (a program takes several, its ring and turns carried; 512 tiles of B2 H16 Hkv4) and fewer (B2 H3 Nq1: 6
    programs, each past the last tile at its first counter read)."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape) + 5, kv_heads=hkv,
                        persistent=mode, **_tile(d))
    assert res.ok, f"ws-regalloc persistent={mode} {shape} {dtype}: {res.message}"


THREE_CONSUMER_SHAPES = [s + (s[1],) for s in SHAPES if s[4] <= 64] + [s for s in GQA_SHAPES if s[4] <= 64] + [
    (2, 3, 1031, 257, 64, True, 3), (1, 5, 3000, 3000, 64, True, 5), (4, 16, 1024, 1024, 64, False, 4)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", THREE_CONSUMER_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_ws_regalloc_persistent_three_consumers_match_float64_reference_on_gpu(shape, dtype, mode):
    """persistent=1 at the D <= 64 default: 192-row tiles over three consumer warp groups, each with its own
    [64, D] buffer of Q freed on its own; every tile's turns carried round the three (Nq 1, Nq > Nk causal,
    more tiles than SMs and fewer)."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape) + 7, kv_heads=hkv,
                        persistent=mode)
    assert res.ok, f"ws-regalloc persistent={mode} (192-row tile) {shape} {dtype}: {res.message}"


@pytest.mark.parametrize("shape", [(2, 4, 257, 1031, 128, True, 4), (2, 6, 777, 777, 80, False, 3),
                                   (4, 32, 1024, 1024, 64, True, 32)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("mode", MODES)
def test_ws_regalloc_persistent_one_partition_matches_float64_reference_on_gpu(shape, mode):
    """persistent=1 or 2 with one consumer partition of 8 warps (pingpong=0): Q loaded whole, one q_empty
    arrival, one reader of each tile number."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, "fp16", "cuda", seed=sum(shape), kv_heads=hkv,
                        num_warps=8, pingpong=0, persistent=mode, **(_tile(d) | {"num_stages": 2}))
    assert res.ok, f"ws-regalloc persistent={mode} pingpong=0 {shape}: {res.message}"


@pytest.mark.parametrize("shape", [(2, 6, 777, 777, 80, False, 3), (2, 4, 257, 1031, 128, True, 4),
                                   (3, 5, 300, 1500, 64, True, 5), (1, 32, 16, 8192, 128, True, 8)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("mode", MODES)
def test_ws_regalloc_persistent_head_sections_match_float64_reference_on_gpu(shape, mode):
    """l2_mib=1: the heads in sections of a few (12 heads in sections of 8 and 4; 8 of 1; 15 of 2, the last
    of 1; 32 of 4), so a program's tiles cross sections, the last one short."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, "bf16", "cuda", seed=sum(shape) + 1, kv_heads=hkv,
                        persistent=mode, l2_mib=1, **_tile(d))
    assert res.ok, f"ws-regalloc persistent={mode} l2_mib=1 {shape}: {res.message}"


@pytest.mark.parametrize("mode", MODES)
def test_broken_ws_regalloc_copy_fails_persistent(tmp_path, mode):
    """The copy without the rescale of acc fails the gate under persistent=1 and 2, which the bundled file
    passes."""
    from pathlib import Path

    from tests.flashattn.test_numerics import check_variant

    src = (Path(__file__).resolve().parents[2] / "kernels" / "ws_regalloc.py").read_text()
    rescale = re.compile(r"^ *acc = acc \* gl\.expand_dims\(alpha_o, 1\)\n", re.M)
    assert len(rescale.findall(src)) == 2  # the overlapped loop's step and the plain loop
    broken = (rescale.sub("", src).replace("from ._launch import", "from vgprscope.kernels._launch import")
              .replace('"name": "ws-regalloc"', '"name": "ws-no-rescale"'))
    (tmp_path / "ws_no_rescale.py").write_text(broken)
    shape = (2, 4, 300, 1031, 128, True)
    assert check_variant("ws-regalloc", *shape, "fp16", "cuda", seed=3, persistent=mode).ok
    assert not check_variant("ws-no-rescale", *shape, "fp16", "cuda", seed=3, kernel_dir=tmp_path,
                             persistent=mode).ok
