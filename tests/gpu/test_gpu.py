"""GPU tests (marker ``gpu``): skipped without a CUDA / ROCm device. Run them on a GPU machine with

    TRITON_INTERPRET=0 python -m pytest -m gpu tests/gpu/test_gpu.py
"""

from __future__ import annotations

import re

import pytest
from gpu_expectations import launched

pytestmark = pytest.mark.gpu

SHAPES = [  # (b, h, nq, nk, d, causal): ragged, nq != nk both ways, seqlen 1, non-power-of-two head dims
    (2, 3, 1, 129, 64, False),
    (2, 4, 257, 1031, 80, True),
    (1, 8, 1031, 257, 128, True),
    (2, 2, 777, 777, 40, True),
    (1, 4, 2048, 2048, 128, False),
    (1, 2, 300, 4100, 256, False),
]


GQA_SHAPES = [  # (b, h, nq, nk, d, causal, kv_heads): packed decode (Nq <= 16), ragged, causal, MQA, odd groups
    (2, 8, 1, 4099, 128, False, 2),
    (1, 32, 16, 8192, 128, True, 8),
    (2, 8, 257, 1031, 64, True, 4),
    (1, 4, 1, 300, 80, True, 1),
    (2, 6, 33, 77, 128, False, 3),
    (3, 12, 5, 2000, 64, True, 4),
]


def _variants():
    from vgprscope.flashattn.variants import load_variants

    return list(load_variants())


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("variant", _variants())
def test_variant_matches_float64_reference_on_gpu(variant, shape, dtype):
    from tests.flashattn.test_numerics import check_variant
    from vgprscope.flashattn.variants import get_variant

    b, h, nq, nk, d, causal = shape
    cfg = get_variant(variant)
    if variant == "qk-fp16-acc" and dtype == "bf16":
        pytest.skip("qk-fp16-acc takes fp16 only (its check_config says why)")
    # a default config that cannot launch here fails, unless gpu_expectations declares the case
    res = launched(lambda: check_variant(variant, b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape)),
                   ("numerics", variant, shape, dtype))
    assert res.ok, f"{cfg.name} {shape} {dtype}: {res.message}"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", GQA_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("variant", _variants())
def test_grouped_query_attention_matches_float64_reference_on_gpu(variant, shape, dtype):
    """K/V with fewer heads than Q, at each variant's defaults for the shape (decode tiles and packing at
    Nq <= 16, split counts from this GPU's SM count)."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    if variant == "qk-fp16-acc" and dtype == "bf16":
        pytest.skip("qk-fp16-acc takes fp16 only (its check_config says why)")
    res = launched(lambda: check_variant(variant, b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape),
                                         kv_heads=hkv), ("gqa", variant, shape, dtype))
    assert res.ok, f"{variant} {shape} {dtype}: {res.message}"


def _tma_variants():
    from vgprscope.flashattn.variants import load_variants

    return [name for name, v in load_variants().items() if "tma" in v.knobs]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", [s + (s[1],) for s in SHAPES if s[4] % 8 == 0] + GQA_SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("variant", _tma_variants())
def test_tma_matches_float64_reference_on_gpu(variant, shape, dtype):
    """Knob tma=1 (K/V through tensor descriptors: TMA on sm_90+) on the ragged, causal, padded-head-dim,
    GQA and packed-decode shapes, at each variant's defaults otherwise."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    if variant == "qk-fp16-acc" and dtype == "bf16":
        pytest.skip("qk-fp16-acc takes fp16 only (its check_config says why)")
    res = launched(lambda: check_variant(variant, b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape) + 1,
                                         kv_heads=hkv, tma=1), ("tma", variant, shape, dtype))
    assert res.ok, f"{variant} tma=1 {shape} {dtype}: {res.message}"


def test_split_count_follows_this_gpus_sm_count():
    import torch
    from vgprscope.kernels._launch import device_compute_units, num_splits

    q = torch.empty(1, device="cuda")
    units = torch.cuda.get_device_properties(0).multi_processor_count
    assert device_compute_units(q) == units
    cfg = {"shape": [1, 32, 1, 65536, 8], "block_m": 16, "block_n": 128, "extra": {}}
    # 8 packed programs (one per K/V head): units // 8 splits (one wave), evened over the 512 key blocks
    want = units // 8
    assert num_splits(cfg, units) == -(-512 // -(-512 // want))


@pytest.mark.parametrize("variant", _variants())
def test_loaded_registers_equal_the_parsed_compile(variant):
    """n_regs the driver reports for the launched kernels == what vgprscope parsed from its own compile."""
    from dataclasses import replace

    import torch

    from vgprscope.bench.device import current_gpu
    from vgprscope.bench.runner import _clear_jit_caches, _loaded_regs
    from vgprscope.compile.engine import Engine
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.source import variant_tasks
    from vgprscope.flashattn.variants import get_variant, resolve_config

    gpu = current_gpu()
    v = get_variant(variant)
    cfg = resolve_config(v, gpu.arch, ConfigRequest(head_dim=128, shape=(2, 8, 1024, 1024)))
    if v.check(cfg):
        pytest.skip(v.check(cfg))
    q, k, vv = (torch.randn(2, 8, 1024, 128, device="cuda", dtype=torch.float16) for _ in range(3))
    _clear_jit_caches(v, cfg)
    import vgprscope

    knobs = {n: getattr(cfg, n) for n in ("block_m", "block_n", "num_warps", "num_stages") } | dict(cfg.extra)
    vgprscope.attention(q, k, vv, variant=variant, **knobs)
    torch.cuda.synchronize()
    loaded = _loaded_regs(v, cfg)
    engine = Engine(1)
    rows = engine.compile(variant_tasks([(v, replace(cfg), gpu.arch, "")], engine))
    parsed = max(r.usage.regs for r in rows if r.usage is not None)
    assert loaded == parsed


def test_bench_smoke_gates_then_times():
    from vgprscope.bench.cases import Case
    from vgprscope.bench.device import current_gpu
    from vgprscope.bench.runner import BenchOptions, run_bench
    from vgprscope.flashattn.config import ConfigRequest

    gpu = current_gpu()
    rows = run_bench(gpu, [Case(1, 8, 1024, 1024, 64, True, "fp16")],
                     BenchOptions(variants=("baseline", "split-k"), request=ConfigRequest(), rep_ms=20))
    by = {r.name: r for r in rows}
    assert by["baseline"].ok and by["baseline"].timing.median_ms > 0 and by["baseline"].tflops > 0
    assert by["baseline"].max_abs_err is not None and by["baseline"].regs
    assert {"sdpa-flash", "sdpa-cudnn", "sdpa-efficient"} <= set(by)


def test_bench_cuda_graph_replay_gates_then_times():
    """--cuda-graph: variants (two kernels, workspaces allocated in the call) and SDPA are captured and
    replayed; the replay of a short decode launch is no slower than its eager call, which carries the host."""
    from vgprscope.bench.cases import Case
    from vgprscope.bench.device import current_gpu
    from vgprscope.bench.runner import BenchOptions, run_bench
    from vgprscope.flashattn.config import ConfigRequest

    gpu = current_gpu()
    case = Case(1, 32, 1, 8192, 128, False, "fp16", 8)
    timed = {}
    for graph in (False, True):
        rows = run_bench(gpu, [case], BenchOptions(variants=("split-k",), request=ConfigRequest(), rep_ms=20,
                                                   cuda_graph=graph))
        by = {r.name: r for r in rows}
        assert by["split-k"].ok, by["split-k"].status
        assert by["split-k"].timing.mode == ("graph" if graph else "eager")
        assert by["sdpa-cudnn"].ok or by["sdpa-flash"].ok
        timed[graph] = by["split-k"].timing.median_ms
    assert timed[True] <= timed[False] * 1.05


def test_broken_variant_gets_no_time(tmp_path):
    """A deliberately wrong kernel must fail the gate on the GPU too, and get no time."""
    from pathlib import Path

    from tests.flashattn.test_numerics import check_variant

    broken = Path(__file__).parents[1] / "fixtures" / "broken_kernels"
    if not broken.exists():
        pytest.skip("no broken-kernel fixture")
    from vgprscope.flashattn import variants

    names = list(variants.load_variants(broken))
    res = check_variant(names[0], 1, 4, 300, 300, 64, False, "fp16", "cuda", seed=1, kernel_dir=broken)
    assert not res.ok


def test_compare_bench_times_every_grid_point():
    """compare --bench over a grid: each point's table gets its own timings, not the first point's."""
    import json

    from typer.testing import CliRunner

    from vgprscope.bench.device import current_gpu
    from vgprscope.cli.app import _register, app

    _register()  # the commands are registered when the CLI starts, not when the module is imported
    arch = current_gpu().arch.name
    res = CliRunner().invoke(app, ["compare", "--strategies", "baseline,split-k", "--arch", arch, "--head-dim", "64",
                                   "--block-m", "64,128", "--block-n", "64", "--shape", "1,8,1024,1024", "--bench",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    tables = json.loads(res.stdout)["archs"]
    assert sorted(tables) == [f"{arch} [block_m=128]", f"{arch} [block_m=64]"]
    times = {key: {ln["variant"]: ln["bench"]["time (ms)"] for ln in lines} for key, lines in tables.items()}
    assert all("±" in t for per in times.values() for t in per.values()), times
    assert times[f"{arch} [block_m=64]"] != times[f"{arch} [block_m=128]"]


def test_broken_ws_regalloc_copy_fails(tmp_path):
    """ws-regalloc (Gluon: no interpreter, so its numerics are only checked here) with the rescale of acc
    taken out of its K/V loops (both: overlapped or not) must fail the gate that the bundled file passes on
    the same shape."""
    from pathlib import Path

    from tests.flashattn.test_numerics import check_variant

    src = (Path(__file__).parents[2] / "kernels" / "ws_regalloc.py").read_text()
    rescale = re.compile(r"^ *acc = acc \* gl\.expand_dims\(alpha_o, 1\)\n", re.M)
    assert len(rescale.findall(src)) == 2  # the overlapped loop's step and the plain loop
    broken = (rescale.sub("", src).replace("from ._launch import", "from vgprscope.kernels._launch import")
              .replace('"name": "ws-regalloc"', '"name": "ws-no-rescale"'))
    (tmp_path / "ws_no_rescale.py").write_text(broken)
    shape = (1, 4, 300, 1031, 128, False)
    assert check_variant("ws-regalloc", *shape, "fp16", "cuda", seed=3).ok
    assert not check_variant("ws-no-rescale", *shape, "fp16", "cuda", seed=3, kernel_dir=tmp_path).ok


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", [(2, 4, 257, 1031, 128, True, 4), (1, 8, 1031, 257, 64, True, 8),
                                   (2, 6, 777, 777, 80, False, 3)], ids=lambda s: "x".join(map(str, s)))
def test_ws_regalloc_pingpong_matches_float64_reference_on_gpu(shape, dtype):
    """ws-regalloc's two consumer warp groups as two partitions taking turns (knob pingpong, 4 warps each):
    ragged, causal both ways, GQA."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape), kv_heads=hkv,
                        num_warps=4, pingpong=1)
    assert res.ok, f"ws-regalloc pingpong=1 {shape} {dtype}: {res.message}"


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", [s + (s[1],) for s in SHAPES] + GQA_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_ws_regalloc_tma_store_matches_float64_reference_on_gpu(shape, dtype):
    """ws-regalloc's knob tma_store=1 (O written through Q's shared memory by TMA, rows and columns past the
    tensor's edge dropped) on every case of this file, at its defaults otherwise (one tile per program: the
    persistent scheduler, a causal default, loads the next tile's Q where O would leave)."""
    from tests.flashattn.test_numerics import check_variant

    b, h, nq, nk, d, causal, hkv = shape
    res = check_variant("ws-regalloc", b, h, nq, nk, d, causal, dtype, "cuda", seed=sum(shape) + 2, kv_heads=hkv,
                        tma_store=1, persistent=0)
    assert res.ok, f"ws-regalloc tma_store=1 {shape} {dtype}: {res.message}"
