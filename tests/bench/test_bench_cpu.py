"""The bench's GPU-free parts: cases and presets, timing statistics, outputs, and the no-GPU exit."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vgprscope.bench.cases import DECODE, GQA, PREFILL, Case, build_cases, parse_shape
from vgprscope.bench.timing import summarize
from vgprscope.cli.app import _register, app
from vgprscope.core.errors import UsageError

_register()


def test_presets_are_the_issue_grid():
    assert len(PREFILL) == 12 and len(DECODE) == 11 and len(GQA) == 4
    assert {(n, d) for _, _, n, _, d, _, _ in PREFILL} == {(n, d) for n in (1024, 4096, 16384) for d in (64, 128)}
    # the decode preset: Nq 1 and 16, Nk 8k to 128k, grouped-query (8 K/V heads), MHA and one MQA case
    assert {nq for _, _, nq, _, _, _, _ in DECODE} == {1, 16}
    assert {nk for _, _, _, nk, _, _, _ in DECODE} == {8192, 32768, 65536, 131072}
    assert {hkv for _, _, _, _, _, _, hkv in DECODE} == {32, 8, 1}
    # the three target cases are in it
    assert {(1, 32, 1, 65536, 128, False, 32), (1, 32, 1, 65536, 128, False, 8),
            (8, 32, 16, 8192, 128, False, 8)} <= set(DECODE)


def test_grouped_query_cases_from_shape_and_kv_heads():
    assert parse_shape("1,32,1,65536,8") == (1, 32, 1, 65536, 8)
    with pytest.raises(UsageError, match="Hkv 5 does not divide H 32"):
        parse_shape("1,32,1,64,5")
    a = build_cases(["1,32,1,65536,8"], None, None, "fp16", None)
    b = build_cases(["1,32,1,65536"], None, None, "fp16", None, kv_heads=8)
    assert a == b == [Case(1, 32, 1, 65536, 128, False, "fp16", 8)]
    assert a[0].shape == (1, 32, 1, 65536, 8) and a[0].label() == "B1 H32 Hkv8 Nq1 Nk65536 D128 fp16"
    # Q and O of 32 heads, K and V of 8, 2 bytes an element: what a launch must move at least
    assert a[0].input_bytes() == 2 * 128 * (2 * 32 * 1 + 2 * 8 * 65536) == 268_451_840
    # --kv-heads equal to H is plain multi-head; one that does not divide H is refused
    assert build_cases(["1,4,8,8"], None, 64, "fp16", None, kv_heads=4)[0].shape == (1, 4, 8, 8)
    with pytest.raises(UsageError, match="--kv-heads 3 does not divide H 4"):
        build_cases(["1,4,8,8"], None, 64, "fp16", None, kv_heads=3)


def test_flops_halve_only_for_square_causal():
    assert Case(4, 32, 4096, 4096, 128, False, "fp16").flops == 4 * 4 * 32 * 4096 * 4096 * 128
    assert Case(4, 32, 4096, 4096, 128, True, "fp16").flops == 2 * 4 * 32 * 4096 * 4096 * 128
    assert Case(1, 32, 64, 8192, 128, True, "fp16").flops == 4 * 32 * 64 * 8192 * 128


def test_build_cases_filters_and_shapes():
    cases = build_cases(None, "prefill", 64, "bf16", True)
    assert len(cases) == 3 and all(c.head_dim == 64 and c.causal and c.dtype == "bf16" for c in cases)
    assert build_cases(["2,8,100,300"], None, None, "fp16", None) == [Case(2, 8, 100, 300, 128, False, "fp16")]
    with pytest.raises(UsageError, match="shape '1,2,3' is not allowed"):
        parse_shape("1,2,3")  # a missing length is refused, not read as Nq = Nk
    with pytest.raises(UsageError, match="give B,H,Nq,Nk"):
        parse_shape("1,x")
    with pytest.raises(UsageError, match="unknown preset 'train'; valid: prefill, decode"):
        build_cases(None, "train", None, "fp16", None)


def test_summarize_median_and_quartiles():
    t = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median_ms, t.q1_ms, t.q3_ms, t.min_ms, t.max_ms, t.runs) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert t.label() == "3.000 ± 1.000"


def test_bench_without_a_gpu_is_one_line_and_exit_2():
    res = CliRunner().invoke(app, ["bench", "--preset", "decode"])
    assert res.exit_code == 2
    assert "needs a CUDA or ROCm GPU" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_compare_bench_without_a_gpu_falls_back_with_a_warning():
    res = CliRunner().invoke(app, ["compare", "--strategies", "baseline", "--arch", "sm_80", "--head-dim", "64",
                                   "--block-m", "64", "--block-n", "32", "--bench", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "showing compile-only columns" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["archs"]["sm_80"][0]["variant"] == "baseline"


def test_outputs_render_rows_with_and_without_time():
    from vgprscope.bench.output import RENDERERS
    from vgprscope.bench.runner import BenchRow
    from vgprscope.report.machine import compile_only

    case = Case(1, 2, 64, 64, 64, False, "fp16")
    rows = [BenchRow(case=case, name="baseline", kind="variant", status="ok", timing=summarize([1.0, 2.0, 3.0]),
                     tflops=1.5),
            BenchRow(case=case, name="split-k", kind="variant", status="failed the correctness gate: x")]
    m = compile_only()
    md = RENDERERS["md"](rows, m)
    assert "| B1 H2 Nq64 Nk64 D64 fp16 | baseline |" in md and "2.000 ± 1.000" in md
    doc = json.loads(RENDERERS["json"](rows, m))
    assert doc["rows"][0]["median_ms"] == 2.0 and doc["rows"][1]["median_ms"] is None
    csv = RENDERERS["csv"](rows, m)
    assert csv.splitlines()[0].startswith("gpu,driver,torch,triton,date,git_sha,case")


def test_bandwidth_columns_say_what_they_count_and_mark_l2_served_figures():
    from vgprscope.bench.output import RENDERERS
    from vgprscope.bench.runner import BenchRow, with_bandwidth
    from vgprscope.report.machine import compile_only

    case = Case(1, 32, 1, 65536, 128, False, "fp16", 8)  # 268,451,840 bytes at least
    row = BenchRow(case=case, name="split-k", kind="variant", status="ok", timing=summarize([0.1, 0.1, 0.1]),
                   gbps=5000.0)
    row = with_bandwidth(row, copy_gbps=3000.0)
    assert row.gbps_min == pytest.approx(268_451_840 / 1e-4 / 1e9)  # 2684.5 GB/s, under the copy rate
    md = RENDERERS["md"]([row], compile_only())
    assert "GB/s (Q,K,V,O once)" in md and "GB/s (model)" in md
    assert "| 2685 | 5000* |" in md  # the model's figure is above the 3000 GB/s copy rate: marked
    assert "above this GPU's device-to-device copy bandwidth measured in this run (3000 GB/s" in md
    plain = RENDERERS["md"]([with_bandwidth(row, copy_gbps=9000.0)], compile_only())
    assert "| 2685 | 5000 |" in plain and "served by the L2" not in plain


def test_cuda_graph_times_are_labelled_in_every_format():
    from vgprscope.bench.output import RENDERERS, timing_note
    from vgprscope.bench.runner import BenchRow
    from vgprscope.report.machine import compile_only

    case = Case(1, 32, 1, 8192, 128, False, "fp16", 8)
    graph = BenchRow(case=case, name="split-k", kind="variant", status="ok", timing=summarize([0.03] * 4, "graph"))
    eager = BenchRow(case=case, name="sdpa-cudnn", kind="anchor", status="ok", timing=summarize([0.03] * 4))
    m = compile_only()
    assert timing_note([eager]) == ""
    assert timing_note([graph]).startswith("Times are CUDA graph replays (--cuda-graph)")
    assert "compare like with like" in timing_note([graph, eager])
    assert "Times are CUDA graph replays" in RENDERERS["md"]([graph], m)
    assert "Times are CUDA graph replays" in RENDERERS["table"]([graph], m)
    doc = json.loads(RENDERERS["json"]([graph, eager], m))
    assert [r["timing_mode"] for r in doc["rows"]] == ["graph", "eager"]


def test_bench_offers_cuda_graph_timing():
    res = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "160"})
    assert "--cuda-graph" in res.stdout and "launch cost" in res.stdout
