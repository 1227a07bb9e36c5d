"""The bench's GPU-free parts: cases and presets, timing statistics, outputs, and the no-GPU exit."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vgprscope.bench.cases import DECODE, PREFILL, Case, build_cases, parse_shape
from vgprscope.bench.timing import summarize
from vgprscope.cli.app import _register, app
from vgprscope.errors import UsageError

_register()


def test_presets_are_the_issue_grid():
    assert len(PREFILL) == 12 and len(DECODE) == 9
    assert {(n, d) for _, _, n, _, d, _ in PREFILL} == {(n, d) for n in (1024, 4096, 16384) for d in (64, 128)}
    assert {(nq, nk) for _, _, nq, nk, _, _ in DECODE} == {(q, k) for q in (1, 16, 64) for k in (8192, 32768, 131072)}


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
