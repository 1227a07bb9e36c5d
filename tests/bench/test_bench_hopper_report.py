"""`python -m tools.reports bench --preset hopper-prefill`: issue 28's four prefill cases in fp16 and bf16, and the
report's table of every timed variant against SDPA's best backend of the same run (GPU-free: rows made here)."""

from __future__ import annotations

from tools.reports.bench import hopper_prefill_cases, hopper_table
from vgprscope.bench.runner import BenchRow
from vgprscope.bench.timing import summarize


def test_the_preset_is_issue_28s_four_cases_in_both_dtypes():
    assert [c.label() for c in hopper_prefill_cases()] == [
        f"{case} {dtype}{causal}" for dtype in ("fp16", "bf16") for case, causal in (
            ("B4 H32 Nq4096 Nk4096 D128", ""), ("B4 H32 Nq4096 Nk4096 D128", " causal"),
            ("B2 H16 Nq8192 Nk8192 D64", " causal"), ("B2 H32 Hkv8 Nq8192 Nk8192 D128", " causal"))]


def test_each_variant_gets_its_ratio_to_the_fastest_sdpa_backend():
    case = hopper_prefill_cases()[0]

    def row(name, kind, ms, spread=0.0):
        t = summarize([ms - spread, ms - spread, ms, ms + spread, ms + spread])
        return BenchRow(case=case, name=name, kind=kind, status="ok", config="cfg" if kind == "variant" else "",
                        timing=t, tflops=case.flops / (ms * 1e-3) / 1e12)

    rows = [row("baseline", "variant", 2.5), row("ws-regalloc", "variant", 2.0, 0.1), row("sdpa-cudnn", "anchor", 1.9),
            row("sdpa-flash", "anchor", 3.0),
            BenchRow(case=case, name="row-stream", kind="variant", status="failed the correctness gate: x")]
    table = hopper_table(rows)
    # fastest first; a row without a time is not in the table; 1.9 / 2.0 = 0.95x meets the target
    assert [r[1] for r in table] == ["ws-regalloc (cfg)", "baseline (cfg)"]
    assert table[0][3].startswith("sdpa-cudnn ") and table[0][4:] == ["0.95x", "met"]
    assert table[1][4:] == ["0.76x", "missed by 20 %"]
    # TFLOP/s +- the time's IQR/2 carried over to the rate
    tflops = case.flops / 2e-3 / 1e12
    assert table[0][2] == f"{tflops:.1f} ± {tflops * 0.05:.1f}"


def test_a_ratio_just_under_the_target_says_by_how_much():
    case = hopper_prefill_cases()[0]
    rows = [BenchRow(case=case, name=n, kind=k, status="ok", config="c", timing=summarize([ms] * 4),
                     tflops=case.flops / (ms * 1e-3) / 1e12)
            for n, k, ms in (("ws-regalloc", "variant", 2.0), ("sdpa-cudnn", "anchor", 1.898))]
    (line,) = hopper_table(rows)
    assert line[4:] == ["0.95x", "missed by 0.1 %"]
