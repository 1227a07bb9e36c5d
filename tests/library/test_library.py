"""vgprscope as a library: the calls, their results' DataFrames and JSON, a user's own
kernel analysed from its launch without a GPU or torch, and the in-process capture.

Compiles are few and small (the session's compile cache keeps them): the DataFrame and JSON checks run on
committed records and compiler outputs; the user-kernel and capture checks compile one autotuned kernel.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from capture_helpers import ROOT, USER_KERNELS, cli, direct_compile

FIXTURES = ROOT / "tests" / "fixtures"

# A finder that refuses torch (an environment installed without it). Triton's native binder reads
# sys.modules["torch"] itself, so torch is hidden from the import system rather than set to None there.
NO_TORCH = textwrap.dedent('''
    import sys

    class _NoTorch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _NoTorch())
''')


def _python(code: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _fixture_records():
    from vgprscope.core.records import Record

    with gzip.open(FIXTURES / "bundled_gfx942_sm_90_analyze.json.gz", "rt") as f:
        return [Record.from_dict(r) for r in json.load(f)["rows"]]


# ---- import cost -------------------------------------------------------------------------------------

def test_import_and_help_import_no_pandas_triton_or_torch():
    code = textwrap.dedent('''
        import sys
        import vgprscope
        vgprscope.analyze, vgprscope.check, vgprscope.pointer, vgprscope.capture  # the library's names resolve
        from vgprscope.cli.app import main
        sys.argv = ["vgprscope", "--help"]
        try:
            main()
        except SystemExit:
            pass
        heavy = sorted({m.split(".")[0] for m in sys.modules} & {"pandas", "triton", "torch", "numpy"})
        print("HEAVY", heavy, file=sys.stderr)
    ''')
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr


# ---- results: DataFrames are the CSV export, JSON is the JSON export -----------------------------------

def test_analyze_result_dataframe_is_the_csv_export_and_json_the_json_export():
    from vgprscope.analysis.analyze import view
    from vgprscope.analysis.analyze.result import AnalyzeResult

    records = _fixture_records()
    result = AnalyzeResult(tuple(records))
    df = result.to_pandas()
    assert len(df) == len(records) and list(df.columns) == view.to_csv(records).splitlines()[0].split(",")
    # every value as the CSV writes it, integers kept integers where the other vendor's rows leave a gap
    assert df.to_csv(index=False) == view.to_csv(records)
    assert str(df["usage_vgpr_total"].dtype) == "Int64" and str(df["usage_regs"].dtype) == "Int64"
    assert result.to_json() == view.to_json(records, result.machine, "analyze")
    assert json.loads(result.to_json())["rows"] == [r.as_dict() for r in records]


def test_frames_of_variants_and_of_a_capture_share_one_set_of_config_columns():
    """analyze's frame (its CSV) of bundled variants and of a capture have the same config columns, each
    filled for both kinds (the kind, the label, the compile-time parameters, what the arguments specialise
    on, the launch options): concatenating the two gives no column empty for one kind."""
    import pandas as pd

    import vgprscope.flashattn.config  # noqa: F401  (reads the variants' configs back as a run makes them)
    from vgprscope.analysis.analyze.result import AnalyzeResult
    from vgprscope.core.records import Record

    with gzip.open(FIXTURES / "fla_core_analyze.json.gz", "rt") as f:
        captured_records = [Record.from_dict(r) for r in json.load(f)["rows"]]
    variant_records = _fixture_records()
    variants = AnalyzeResult(tuple(variant_records)).to_pandas()
    captured = AnalyzeResult(tuple(captured_records)).to_pandas()
    config_columns = [c for c in variants.columns if c.startswith("cfg_")]
    assert config_columns == [c for c in captured.columns if c.startswith("cfg_")]
    both = pd.concat([variants, captured], ignore_index=True)
    assert list(both.columns[: len(variants.columns)]) == list(variants.columns)
    every = ("cfg_kind", "cfg_short", "cfg_params", "cfg_args", "cfg_options", "cfg_num_warps")
    assert set(every) <= set(config_columns)
    for column in every:
        assert variants[column].notna().all() and captured[column].notna().all(), column
    # the values: each kind's own fields, as its config gives them
    v, c = variant_records[0], captured_records[0]
    assert variants.loc[0, "cfg_short"] == v.config.short() and variants.loc[0, "cfg_kind"] == "attention"
    assert f"block_m={v.config.block_m};" in variants.loc[0, "cfg_params"]
    assert variants.loc[0, "cfg_num_warps"] == v.config.num_warps and variants.loc[0, "cfg_autotune"] == ""
    assert captured.loc[0, "cfg_params"] == c.config.flat()["constexprs"]
    assert captured.loc[0, "cfg_args"] == c.config.flat()["signature"]
    assert captured.loc[0, "cfg_options"] == c.config.flat()["options"] and captured.loc[0, "cfg_num_warps"] == 2
    assert captured.loc[0, "cfg_autotune"] == "1/6"


def test_compare_result_rows_are_its_csv_export():
    from vgprscope.analysis.compare import view as compare_view
    from vgprscope.analysis.compare.core import compare
    from vgprscope.analysis.compare.result import CompareResult

    per_arch = compare(_fixture_records())
    result = CompareResult({k: tuple(v) for k, v in per_arch.items()}, tuple(_fixture_records()))
    assert result.to_pandas().to_csv(index=False) == compare_view.to_csv(per_arch)
    assert result.to_json() == compare_view.to_json(per_arch, result.machine)


def test_compare_csv_and_dataframe_keep_the_deltas_against_baseline_and_the_traffic_model():
    """``compare --format csv`` and ``CompareResult.to_pandas()`` carry what the table and the JSON show
    beside each kernel: its line's figures, their change against the baseline variant's line (with the
    verdict) and the line's modelled traffic, one value per JSON field."""
    import io

    import pandas as pd

    from vgprscope.analysis.compare import view as compare_view
    from vgprscope.analysis.compare.core import compare
    from vgprscope.analysis.compare.result import CompareResult
    from vgprscope.flashattn.traffic import line_traffic

    records = _fixture_records()
    per_arch = compare(records, line_traffic())
    result = CompareResult({k: tuple(v) for k, v in per_arch.items()}, tuple(records))
    df = result.to_pandas()
    assert df.to_csv(index=False) == result.to_csv() == compare_view.to_csv(per_arch)
    read = pd.read_csv(io.StringIO(result.to_csv()))
    doc = json.loads(result.to_json())
    def same(cell, value):  # an empty cell is the JSON's null
        return pd.isna(cell) if value is None else cell == value

    checked = 0
    for table, lines in doc["archs"].items():
        for line in lines:
            rows = df[(df["line_table"] == table) & (df["variant"] == line["variant"])
                      & (df["line_config"] == line["config"])]
            assert len(rows) == len(line["kernels"]) > 0
            for _, row in rows.iterrows():
                for key in ("regs", "sgprs", "spills", "scratch", "lds", "occupancy", "limiter", "status"):
                    assert same(row[f"line_{key}"], line[key]), (table, line["variant"], key)
                for metric, d in line["deltas"].items():
                    assert same(row[f"delta_{metric}"], d["change"]) and row[f"delta_{metric}_verdict"] == d["verdict"]
                    checked += 1
                if line["variant"] == "baseline":  # the reference has no change against itself
                    assert all(pd.isna(row[f"delta_{m}"]) for m in ("regs", "spills", "occupancy"))
                for key, value in line["traffic"].items():
                    assert same(row[f"traffic_{key}"], value), (table, line["variant"], key)
    assert checked and {"delta_regs", "delta_occupancy_verdict", "traffic_bytes_read", "traffic_formula"} <= set(read)


def test_explain_result_rows_per_kernel_tensor_and_spill_site():
    from vgprscope.analysis.explain.core import explain_raw
    from vgprscope.analysis.explain.result import ExplainResult
    from vgprscope.core.archs import get_arch

    def read(name):
        return gzip.open(FIXTURES / "explain" / name, "rt").read()

    raw = {"kernel": "attn_fwd", "name": "attn_fwd", "shared": 0, "amdgcn": read("baseline-gfx942-wpe3.amdgcn.gz"),
           "ttgir": read("baseline-gfx942-wpe3.ttgir.gz")}
    e = explain_raw(get_arch("gfx942"), raw, "baseline", config="128x64 d128 fp16 w4 s1 wpe3")
    result = ExplainResult((e,))
    kernels = result.to_pandas()
    assert kernels.loc[0, "allocation_registers"] == e.allocation.registers
    assert [kernels.loc[0, f"loop{lp.index}_total_registers"] for lp in e.loops] == [lp.total for lp in e.loops]
    tensors = result.to_pandas("tensors")
    assert len(tensors) == sum(len(lp.tensors) for lp in e.loops)
    summed = tensors[tensors["counted"] & tensors["role"].isin(["carried", "live-in"])]
    assert summed.groupby("loop")["registers_per_lane"].sum().tolist() == [lp.total for lp in e.loops]
    spills = result.to_pandas("spills")
    assert spills["stores"].sum() == sum(s.stores for s in e.spills) == 116
    assert json.loads(result.to_json())["kernels"] == [e.as_dict()]


def test_explain_frames_without_rows_still_have_their_columns():
    """A kernel that does not spill: its ``to_pandas("spills")`` is empty with the spill sites' columns (a
    notebook can filter or concatenate it as any other), and each kind of rows keeps its columns when none
    has a row (a kernel that failed to compile: no live tensor, no allocation)."""
    from vgprscope.analysis.explain.core import KernelExplanation, explain_raw
    from vgprscope.analysis.explain.result import ExplainResult
    from vgprscope.core.archs import get_arch

    def read(name):
        return gzip.open(FIXTURES / "explain" / name, "rt").read()

    gemm = explain_raw(get_arch("gfx942"), {"kernel": "matmul", "name": "matmul", "shared": 0,
                                            "amdgcn": read("gemm-gfx942.amdgcn.gz"), "ttgir": read("gemm-gfx942.ttgir.gz")},
                       "gemm")
    assert gemm.ok and not gemm.spills
    spills = ExplainResult((gemm,)).to_pandas("spills")
    assert len(spills) == 0
    assert list(spills.columns) == ["label", "kernel", "arch", "config", "location", "stores", "reloads", "in_loop"]
    failed = ExplainResult((KernelExplanation(label="x", kernel="k", arch="gfx942", config="", num_warps=0, lanes=64,
                                              allocation=None, error="compile failed"),))
    tensors = failed.to_pandas("tensors")
    assert len(tensors) == 0 and {"loop", "name", "role", "registers_per_lane", "counted"} <= set(tensors.columns)
    assert list(ExplainResult((gemm,)).to_pandas("tensors").columns) == list(tensors.columns)
    kernels = failed.to_pandas()
    assert kernels.loc[0, "error"] == "compile failed" and "allocation_registers" in kernels.columns


def test_check_result_rows_are_the_json_rows_flattened():
    from vgprscope.gate.baseline import load_baseline
    from vgprscope.gate.diff import judge
    from vgprscope.library.results import CheckResult

    base = load_baseline(ROOT / "vgprscope-baseline.json")
    entries = list(base.entries.values())
    result = CheckResult(judge(base, entries), tuple(entries), "vgprscope-baseline.json")
    df = result.to_pandas()
    doc = json.loads(result.to_json())
    assert result.passed and result.exit_code == 0 and doc["passed"] is True
    # one row per entry and metric, in the JSON's order
    # (an entry with no metric, a refusal, is one row of its own)
    assert df["key"].tolist() == [r["key"] for r in doc["rows"] for _ in (r["metrics"] or [None])]
    first = doc["rows"][0]
    rows = df[df["key"] == first["key"]]
    assert rows["metric"].tolist() == [m["metric"] for m in first["metrics"]]
    for (_, row), m in zip(rows.iterrows(), first["metrics"]):
        assert (row["value_before"], row["value_after"], row["delta"]) == (m["baseline"], m["current"], 0)
        assert (row["rule"], row["rule_text"], row["metric_change"]) == (m["rule"], m["rule_text"], m["change"])
        assert (row["config_key"], row["state"], row["status_current"]) == (first["config_key"], first["state"],
                                                                            first["status"]["current"])


def _gate_of_an_edited_run():
    """The committed baseline against a run where one entry grew 8 VGPRs and one went missing, judged with
    ``strict`` rules (by default 8 VGPRs within an occupancy step is a passing change)."""
    from dataclasses import replace

    from vgprscope.gate.baseline import Baseline, load_baseline
    from vgprscope.gate.diff import judge
    from vgprscope.gate.rules import RuleSet

    committed = load_baseline(ROOT / "vgprscope-baseline.json")  # its compiled entries (not ws-regalloc's refusals)
    base = Baseline.of([e for e in committed.entries.values() if e.usage is not None], committed.triton_version,
                       committed.set)
    entries = list(base.entries.values())
    grown = next(i for i, e in enumerate(entries) if e.arch.startswith("gfx") and e.status == "ok")
    u = entries[grown].usage
    entries[grown] = replace(entries[grown], usage=replace(u, arch_vgpr=u.arch_vgpr + 8, vgpr_total=u.vgpr_total + 8))
    missing = entries.pop()
    return base, judge(base, entries, RuleSet(strict=True)), entries, missing


def test_check_and_diff_frames_have_one_shape_one_row_per_entry_and_metric():
    """``CheckResult.to_pandas()`` and ``DiffResult.to_pandas()`` of the same verdicts: one row per entry and
    metric with the same column names (diff's CSV columns; check adds the JSON's entry and rule fields after
    them), so they concatenate without empty columns; an entry with one side keeps its numbers."""
    import pandas as pd

    from vgprscope.analysis.diff.core import SidesDiff as CoreDiff
    from vgprscope.analysis.diff.result import DiffResult
    from vgprscope.analysis.diff.view import CSV_FIELDS
    from vgprscope.compile.toolchains import Toolchain
    from vgprscope.library.results import CheckResult

    base, gate, entries, missing = _gate_of_an_edited_run()
    check = CheckResult(gate, tuple(entries), "vgprscope-baseline.json").to_pandas()
    sides = Toolchain("installed", gate.baseline_triton), Toolchain("installed", gate.current_triton)
    diff = DiffResult.of(CoreDiff(*sides, ("gfx942",), gate, (), (), ())).to_pandas()
    assert list(diff.columns) == list(CSV_FIELDS)
    assert list(check.columns[: len(CSV_FIELDS)]) == list(CSV_FIELDS)
    both = [d for d in gate.entries if d.baseline is not None and d.current is not None]
    assert len(check) == sum(len(d.metrics) for d in both) + len(missing.metrics)
    # the entries both sides have: the same rows, cell for cell
    shared = check[check["key"].isin({d.key for d in both})][list(CSV_FIELDS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(shared, diff[diff["key"].isin({d.key for d in both})].reset_index(drop=True),
                                  check_dtype=False)
    worse = check[check["result"] == "worse"]
    assert worse["metric"].tolist()[:1] == ["vgpr_total"] and worse["delta"].tolist()[:1] == [8]
    # the missing entry: its baseline numbers, nothing current
    gone = check[check["key"] == missing.key]
    assert dict(zip(gone["metric"], gone["value_before"])) == missing.metrics
    assert gone["value_after"].isna().all() and set(gone["result"]) == {"missing"}
    assert set(pd.concat([check, diff]).columns) == set(check.columns)


def test_results_render_their_table_in_a_notebook_without_pandas():
    """In a notebook a result shows its table (``_repr_markdown_``: the markdown ``--format md`` writes),
    not ``AnalyzeResult(6 records ...)``; rendering it imports no pandas."""
    code = textwrap.dedent('''
        import gzip, json, sys
        from vgprscope.gate.baseline import load_baseline
        from vgprscope.analysis.compare.core import compare
        from vgprscope.gate.diff import judge
        from vgprscope.library import results
        from vgprscope.analysis.analyze.result import AnalyzeResult
        from vgprscope.analysis.compare.result import CompareResult
        from vgprscope.analysis.explain.result import ExplainResult
        from vgprscope.analysis.frontier.result import FrontierResult
        from vgprscope.core.records import Record
        from vgprscope.analysis.analyze import view as records_view

        with gzip.open("tests/fixtures/bundled_gfx942_sm_90_analyze.json.gz", "rt") as f:
            records = tuple(Record.from_dict(r) for r in json.load(f)["rows"])
        base = load_baseline("vgprscope-baseline.json")
        entries = tuple(base.entries.values())
        shown = {
            "analyze": AnalyzeResult(records)._repr_markdown_(),
            "compare": CompareResult({k: tuple(v) for k, v in compare(records).items()},
                                             records)._repr_markdown_(),
            "check": results.CheckResult(judge(base, list(entries)), entries, "b.json")._repr_markdown_(),
            "save": results.BaselineSaveResult(entries, base, "b.json", "3.9.0")._repr_markdown_(),
            "explain": ExplainResult(())._repr_markdown_(),
            "frontier": FrontierResult(())._repr_markdown_(),
        }
        from vgprscope.compile.toolchains import Toolchain
        from vgprscope.analysis.diff.core import SidesDiff as CoreDiff
        from vgprscope.analysis.diff.result import DiffResult

        gate = judge(base, list(entries))
        diff = DiffResult.of(CoreDiff(Toolchain("installed", gate.baseline_triton),
                                      Toolchain("installed", gate.current_triton), ("gfx942",), gate, (), (), ()))
        shown["diff"] = diff._repr_markdown_()
        assert shown["diff"] == diff.markdown()
        md = records_view.to_markdown(records, AnalyzeResult(records).machine, title="vgprscope analyze")
        print(json.dumps({"shown": shown, "md": md, "pandas": "pandas" in sys.modules}))
    ''')
    done = _python(code)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["pandas"] is False
    shown = out["shown"]
    assert shown["analyze"] == out["md"]
    for name in ("analyze", "compare", "check", "save", "diff"):
        lines = shown[name].splitlines()
        assert any(line.startswith("|---") for line in lines), name  # a markdown table
    assert "| baseline |" in shown["compare"] and "baseline/attn_fwd/gfx942" in shown["save"]
    assert shown["check"].startswith("## ") and shown["explain"] and shown["frontier"]


# ---- the calls: selections by the CLI's names, typed errors ----------------------------------------------

SMALL = dict(block_m=64, block_n=32, head_dim=64, num_warps=4, num_stages=1)


def test_analyze_variants_gives_the_cli_rows(tmp_path):
    """The done-when line: ``vgprscope.analyze(variant=..., arch=[...]).to_pandas()``, with the same rows as
    ``vgprscope analyze --format csv`` of the same selection."""
    import vgprscope

    result = vgprscope.analyze(variant="baseline", arch=["gfx942", "sm_90"], jobs=2, **SMALL)
    df = result.to_pandas()
    assert [(r.variant, r.arch, r.status) for r in result] == [("baseline", "gfx942", "ok"),
                                                                ("baseline", "sm_90", "ok")]
    done = cli("analyze", "--variant", "baseline", "--arch", "gfx942,sm_90", "--block-m", "64", "--block-n", "32",
               "--head-dim", "64", "--num-warps", "4", "--num-stages", "1", "--format", "csv", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    import pandas as pd

    # the same table, every column, but whether the row came from the cache (the CLI's did: ours compiled)
    from_cli = pd.read_csv(io.StringIO(done.stdout)).drop(columns="cached")
    ours = pd.read_csv(io.StringIO(df.to_csv(index=False))).drop(columns="cached")
    pd.testing.assert_frame_equal(from_cli, ours)
    assert df.loc[0, "usage_vgpr_total"] == result.records[0].usage.vgpr_total


def test_a_list_makes_a_grid_as_a_comma_list_does():
    from vgprscope.library.grid import config_requests
    from vgprscope.library.selection import requests

    grid = requests({"block_m": [64, 128], "num_warps": 4}, dtype=["fp16", "bf16"], knob={"num_splits": [2, 4]})
    assert len(grid) == 8
    assert {(r.block_m, r.dtype, dict(r.extra)["num_splits"]) for r in grid} == {
        (b, d, n) for b in (64, 128) for d in ("fp16", "bf16") for n in (2, 4)}
    assert requests({}, knob="num_splits=2,4") == config_requests({}, {"num_splits": [2, 4]})


@pytest.mark.parametrize("call, message", [
    (lambda v: v.analyze(block_m=100), "block_m=100 is not allowed; allowed: powers of two"),
    (lambda v: v.analyze(num_warps=[4, 0]), "num_warps=0 is below the smallest allowed value, 1"),
    (lambda v: v.analyze(head_dim="64"), "head_dim='64' is not a whole number"),
    (lambda v: v.analyze(dtype="fp8"), "dtype='fp8' is not allowed; allowed: fp16, bf16"),
    (lambda v: v.analyze(arch="gfx9999"), "unknown arch 'gfx9999'"),
    (lambda v: v.analyze(variant="nope"), "unknown variant 'nope'"),
    (lambda v: v.analyze(arch="gfx942,"), "arch='gfx942,' has an empty name"),
    (lambda v: v.analyze(1, 2), "1 is not a Triton kernel; allowed: a @triton.jit function"),
    (lambda v: v.explain(None, 2), "positional arguments are a kernel's launch arguments"),
    (lambda v: v.analyze(block_mm=64), "analyze() got an unknown keyword 'block_mm'"),
    (lambda v: v.analyze(lambda x: x, 1), "is not a Triton kernel"),
    (lambda v: v.analyze(capture="/nonexistent/cap.json"), "/nonexistent/cap.json"),
    (lambda v: v.analyze(jobs=0), "jobs=0 is not allowed"),
    (lambda v: v.frontier(sort="nope", variant="baseline", arch="gfx942", block_m=100), "block_m=100"),
    (lambda v: v.scan("/nonexistent/triton-cache"), "does not exist"),
    (lambda v: v.pointer("fp7"), "unknown pointer dtype 'fp7'"),
])
def test_bad_selections_are_typed_errors_before_anything_compiles(call, message):
    import vgprscope
    from vgprscope.core.errors import UsageError

    with pytest.raises(UsageError) as info:
        call(vgprscope)
    assert message in str(info.value) and "\n" not in str(info.value)


# ---- a user's own kernel, without a GPU and without torch ---------------------------------------------

# my_ops.scale_rows: @autotune (4 configs, pruned to the two with BLOCK 128) over @heuristics (EVEN) over
# @jit, launched as run_ops.py launches it (x: 4 x 200 fp32, stride 200, 200 columns, alpha 0.5)
USER_KERNEL = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {kernels!r})
    from my_ops import scale_rows
    import vgprscope

    x = vgprscope.pointer("fp32")
    result = vgprscope.analyze(scale_rows, x, vgprscope.pointer("float32"), 200, 200, 0.5,
                               arch=["gfx942", "sm_90"], jobs=2)
    df = result.to_pandas()
    from vgprscope.core.records import usage_to_dict
    rows = [{{"arch": r.arch, "status": r.status, "num_warps": r.config.num_warps, "config": r.config.short(),
              "constexprs": dict(r.config.constexprs), "usage": usage_to_dict(r.usage)}} for r in result]
    print(json.dumps({{"rows": rows, "frame": [len(df), list(df["arch"])], "torch": "torch" in sys.modules}},
                     default=str))
''')


@pytest.mark.parametrize("interpret", ["0", "1"])
def test_autotuned_user_kernel_without_torch_gives_the_direct_compile_counts(interpret):
    """Done when: an autotuned @triton.jit kernel of the user's, without a GPU and without torch, with counts
    equal to a direct triton.compile of the same launch. One row per pruned config and arch; the heuristics
    applied (EVEN false: 200 is no multiple of 128). With TRITON_INTERPRET=1 the kernel is the interpreter's
    object, which is analysed the same way."""
    from capture_helpers import usage_counts

    from vgprscope.core.records import usage_from_dict

    done = _python(NO_TORCH + USER_KERNEL.format(kernels=str(USER_KERNELS)), env={"TRITON_INTERPRET": interpret})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["torch"] is False
    rows = out["rows"]
    assert [(r["arch"], r["status"], r["config"]) for r in rows] == [
        ("gfx942", "ok", "fp32 BLOCK=128 w2 s1 cfg 1/2"), ("sm_90", "ok", "fp32 BLOCK=128 w2 s1 cfg 1/2"),
        ("gfx942", "ok", "fp32 BLOCK=128 w4 s1 cfg 2/2"), ("sm_90", "ok", "fp32 BLOCK=128 w4 s1 cfg 2/2")]
    assert all(r["constexprs"] == {"BLOCK": 128, "EVEN": False} for r in rows)  # the heuristic applied
    assert out["frame"] == [4, ["gfx942", "sm_90", "gfx942", "sm_90"]]
    direct = direct_compile(USER_KERNELS, {
        "module": "my_ops", "name": "scale_rows",
        "signature": {"X": "*fp32", "Y": "*fp32", "stride": "i32", "n_cols": "i32", "alpha": "fp32",
                      "BLOCK": "constexpr", "EVEN": "constexpr"},
        "constexprs": {"BLOCK": 128, "EVEN": False},
        "attrs": {"hip": {"X": [["tt.divisibility", 16], ["tt.pointer_range", 32]],
                          "Y": [["tt.divisibility", 16], ["tt.pointer_range", 32]]},
                  "cuda": {"X": [["tt.divisibility", 16]], "Y": [["tt.divisibility", 16]]}},
        "options": {"num_warps": 4, "num_stages": 1, "num_ctas": 1}})

    class _Rec:  # usage_counts reads a record's arch and usage
        def __init__(self, r):
            self.arch, self.usage = r["arch"], usage_from_dict(r["usage"])

    for r in rows:
        if r["num_warps"] == 4:
            assert usage_counts(_Rec(r)) == direct[r["arch"]], r["arch"]


# ---- the in-process capture ----------------------------------------------------------------------------

IN_PROCESS = textwrap.dedent('''
    import json, sys, threading
    sys.path.insert(0, {kernels!r})
    import torch
    import triton.runtime.interpreter as interpreter
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    import run_ops
    import vgprscope
    from my_ops import add

    def classes():
        return (JITFunction.run, interpreter.InterpretedFunction.run, Autotuner.run,
                Autotuner.__dict__.get("__init_subclass__"), interpreter._implicit_cvt)

    before = classes()
    a = torch.randn(64)
    with vgprscope.capture() as cap:
        run_ops.main()  # the user's own script: real launches under the interpreter, its checks included
        other = threading.Thread(target=lambda: add[(1,)](a, a, torch.empty_like(a), 64, BLOCK=64))
        other.start(); other.join()
    restored = classes() == before
    add[(1,)](a, a, torch.empty_like(a), 64, BLOCK=32)  # after the block: not recorded
    cap.save({out!r})
    result = cap.analyze(arch="gfx942", jobs=2)
    print(json.dumps({{"restored": restored, "count": len(cap.launches), "summary": cap.summary(),
                       "rows": [(r.kernel, r.config.short(), r.status) for r in result]}}))
''')


def test_in_process_capture_records_what_the_cli_capture_records(tmp_path, ops_capture):
    """``with vgprscope.capture() as cap``: the same launches (facts, options, every pruned autotune config) as
    ``vgprscope capture -- python run_ops.py`` records, a launch from another thread too, none after the
    block; Triton's classes restored; ``cap.save`` writes the CLI's file; ``cap.analyze`` compiles them."""
    from vgprscope.captures.model import load_capture

    cli_file, ours = ops_capture.path, tmp_path / "ours.json"
    run = _python(IN_PROCESS.format(kernels=str(USER_KERNELS), out=str(ours)), env={"TRITON_INTERPRET": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["restored"] is True

    def facts(path):
        return [(x.kernel.qualname, x.kernel.file, x.args, x.options, x.autotune, x.interpreted)
                for x in load_capture(path).launches]

    theirs, mine = facts(cli_file), facts(ours)
    assert mine[:len(theirs)] == theirs  # run_ops.main()'s launches, as the CLI recorded them
    assert [(q, a[-1]["value"]) for q, _, a, *_ in mine[len(theirs):]] == [("add", 64)]  # the thread's; not BLOCK=32
    assert out["summary"] == "2 kernels, 2 specialisations, 2 autotune configs (of 1 autotuned launch)"
    assert out["rows"] == [["scale_rows", "fp32 BLOCK=128 w2 s1 cfg 1/2", "ok"],
                           ["scale_rows", "fp32 BLOCK=128 w4 s1 cfg 2/2", "ok"],
                           ["add", "fp32 BLOCK=256 w4", "ok"], ["add", "fp32 BLOCK=64 w4", "ok"]]


@pytest.mark.parametrize("first", ["import vgprscope", "import vgprscope.analysis.explain.core as m",
                                   "from vgprscope.captures import run", "import vgprscope.captures.model",
                                   "from vgprscope import scan"])
def test_library_calls_are_the_library_functions_in_any_import_order(first):
    """``vgprscope.explain``, ``frontier``, ``compare``, ``diff``, ``scan`` and ``capture`` are the library's
    functions (``vgprscope.library.api``, ``vgprscope.library.session``), whichever module was imported first:
    importing the ``captures`` package or an analysis module does not replace the call, and nothing heavy is
    imported until a call runs."""
    code = textwrap.dedent(f'''
        {first}
        import inspect, sys, vgprscope
        import vgprscope.analysis.explain.core as m
        from vgprscope.captures import run
        import vgprscope.captures.model
        from vgprscope import capture, frontier
        from vgprscope.library import api, session
        assert callable(m.explain_tasks) and callable(run.run_command)
        assert capture is vgprscope.capture is session.capture and frontier is vgprscope.frontier is api.frontier
        for name in ("explain", "compare", "diff", "scan"):
            assert getattr(vgprscope, name) is getattr(api, name), name
        assert list(inspect.signature(vgprscope.explain).parameters)[:3] == ["kernel", "args", "variant"]
        assert "strategies" in inspect.signature(vgprscope.compare).parameters
        assert inspect.signature(vgprscope.scan) == inspect.signature(api.scan)
        with vgprscope.capture() as cap:
            pass
        print(cap.launches, vgprscope.scan("/nonexistent") if False else "ok")
        heavy = sorted({{n.split(".")[0] for n in sys.modules}} & {{"triton", "torch", "pandas"}})
        print(heavy)
    ''')
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["() ok", "[]"]


def test_the_hook_loads_as_the_runtime_package_with_the_standard_library_only(tmp_path):
    """The capture hook the CLI puts in a user's processes (and the library records with) imports nothing
    but the standard library: the runtime package loaded by the boot's loader in an interpreter where
    vgprscope is not importable."""
    runtime = ROOT / "vgprscope" / "runtime"
    code = textwrap.dedent(f'''
        import sys

        class _Not:  # vgprscope is not installed where the user's command runs
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "vgprscope":
                    raise ModuleNotFoundError(name, name=name)

        sys.meta_path.insert(0, _Not())
        sys.path.insert(0, {str(runtime / "boot")!r})
        from _vgprscope_boot import load
        m = load({str(runtime)!r}, "hook")
        assert m.__name__ == "_vgprscope_runtime.hook" and callable(m.dry_launch) and callable(m.recording)
        assert callable(load({str(runtime)!r}, "record").launch_facts)
        assert callable(load({str(runtime)!r}, "autotune").autotune_configs)
        print(sorted({{n.split(".")[0] for n in sys.modules}} & {{"vgprscope", "triton", "torch"}}))
    ''')
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ---- check and scan -------------------------------------------------------------------------------------

def test_check_returns_the_gates_verdict_and_raises_when_nothing_compares(tmp_path):
    import vgprscope
    from vgprscope.core.errors import NotComparableError

    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.vgprscope]\nbaseline = "b.json"\nvariants = ["baseline"]\narchs = ["gfx942"]\n'
                      'configs = [{head_dim = 64, block_m = 64, block_n = 32, num_warps = 4, num_stages = 1}]\n')
    with pytest.raises(NotComparableError, match="b.json"):
        vgprscope.check(config=config)
    save = cli("baseline", "save", "--config", str(config), "--jobs", "1")
    assert save.returncode == 0, save.stderr
    ok = vgprscope.check(config=config, jobs=1)
    assert ok.passed and ok.exit_code == 0 and ok.to_pandas()["key"].nunique() == 1  # one entry, a row per metric
    assert len(ok.to_pandas()) == len(ok.result.entries[0].metrics)
    # a baseline with 8 fewer VGPRs than compiled: the current compile is a regression
    doc = json.loads((tmp_path / "b.json").read_text())
    (entry,) = doc["entries"].values()
    entry["usage"]["vgpr_total"] -= 8
    entry["usage"]["arch_vgpr"] -= 8
    (tmp_path / "b.json").write_text(json.dumps(doc))
    # by default a growth within the occupancy step is "changed" and passes; strict=True fails any growth
    default = vgprscope.check(config=config, jobs=1)
    (d,) = default.result.entries
    occ = next(m for m in d.metrics if m.metric == "occupancy")
    assert default.passed == (occ.delta == 0) and d.change.name == ("CHANGED" if occ.delta == 0 else "WORSE")
    bad = vgprscope.check(config=config, jobs=1, strict=True)
    frame = bad.to_pandas()
    (row,) = frame[frame["metric"] == "vgpr_total"].to_dict("records")
    assert not bad.passed and bad.exit_code == 1 and row["fails"] and row["delta"] == 8
    assert json.loads(bad.to_json())["exit_code"] == 1


def test_scan_of_an_empty_cache_is_an_empty_result(tmp_path):
    import vgprscope

    result = vgprscope.scan(tmp_path)
    assert result.records == () and result.entries == () and len(result.to_pandas()) == 0
    # an empty directory is said as such, with what a cache looks like (not "0 entries", which reads as a cache)
    assert result.summary.startswith(f"{tmp_path}: no Triton or Inductor cache below it")


@pytest.fixture
def user_ops(monkeypatch):
    """tests/fixtures/user_kernels/my_ops.py imported as ``my_ops``, and gone from sys.modules after: a module
    of that name left behind is what a later test's own ``my_ops`` (the pytest plugin's suites) imports."""
    import importlib

    monkeypatch.syspath_prepend(str(USER_KERNELS))
    monkeypatch.delitem(sys.modules, "my_ops", raising=False)
    module = importlib.import_module("my_ops")
    yield module
    sys.modules.pop("my_ops", None)


def test_a_launch_that_cannot_bind_is_one_usage_error_naming_the_kernel(user_ops):
    import vgprscope
    from vgprscope.core.errors import UsageError

    my_ops = user_ops

    p = vgprscope.pointer("fp32")
    with pytest.raises(UsageError, match=r"^my_ops\.add: cannot record the launch: TypeError: .*'n'") as info:
        vgprscope.analyze(my_ops.add, p, p, p, BLOCK=64)  # n is missing
    assert "\n" not in str(info.value)
    with pytest.raises(UsageError, match="scale_rows: .*grid= and warmup= are not launch arguments"):
        vgprscope.analyze(my_ops.scale_rows, p, p, 200, 200, 0.5, grid=(4,))
    from triton.runtime.jit import JITFunction

    assert getattr(JITFunction.run, "_vgprscope", None) is None  # the dry launch restored Triton's classes


def test_frontier_of_a_user_kernel_and_its_rows_are_the_csv_export(user_ops):
    """``vgprscope.frontier(kernel, *args)``: every waves_per_eu level of gfx942 compiled for the launch; the
    DataFrame is ``frontier --format csv``'s table, the JSON its JSON."""
    import vgprscope
    from vgprscope.analysis.frontier import view as frontier_view

    my_ops = user_ops

    p = vgprscope.pointer("fp32")
    result = vgprscope.frontier(my_ops.add, p, p, p, 1000, BLOCK=256, arch="gfx942", jobs=2)
    (kf,) = result.frontiers
    assert (kf.kernel, kf.arch, kf.knob) == ("add", "gfx942", "waves_per_eu")
    assert all(lv.ok for lv in kf.levels) and kf.spill_free_occupancy == 8
    assert result.to_pandas().to_csv(index=False) == frontier_view.to_csv(result.frontiers)
    assert result.to_json() == frontier_view.to_json(result.frontiers, result.machine)


def test_a_kernel_defined_where_there_is_no_file_compiles_from_its_snapshot():
    """A notebook cell's kernel (its code registered with linecache under a name that is no file, as IPython
    does): the row compiles the snapshot the hook took of its source, and says so, rather than "moved or
    deleted since the capture"."""
    import linecache

    import vgprscope

    cell = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def cell_double(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)
    ''')
    name = "/nonexistent/ipykernel_0/1234.py"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    scope = {"__name__": "__main__"}
    exec(compile(cell, name, "exec"), scope)
    p = vgprscope.pointer("fp32")
    (rec,) = vgprscope.analyze(scope["cell_double"], p, p, 100, BLOCK=128, arch="gfx942", jobs=1)
    assert rec.ok and rec.usage.vgpr_total > 0, rec.status
    assert "compiled from the capture's snapshot" in dict(rec.extras)["note"]


def test_results_render_as_html_where_a_notebook_takes_html():
    """``_repr_html_`` is the markdown table as HTML: one table row per record under the markdown's headers,
    tags balanced, text escaped (a ``<`` in a cell and a literal ``|`` stay text)."""
    import gzip
    from html.parser import HTMLParser

    from vgprscope.analysis.analyze.result import AnalyzeResult
    from vgprscope.core.records import Record
    from vgprscope.report.html import markdown_to_html

    with gzip.open(Path(__file__).parents[1] / "fixtures" / "bundled_gfx942_sm_90_analyze.json.gz", "rt") as f:
        records = tuple(Record.from_dict(r) for r in json.load(f)["rows"])
    result = AnalyzeResult(records)

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.open: list[str] = []
            self.rows: list[list[str]] = []
            self.headers: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag != "br":
                self.open.append(tag)
            if tag == "tr":
                self.rows.append([])

        def handle_endtag(self, tag):
            assert self.open.pop() == tag

        def handle_data(self, data):
            if self.open[-1:] == ["th"]:
                self.headers.append(data)
            elif self.open[-1:] == ["td"]:
                self.rows[-1].append(data)

    reader = Reader()
    reader.feed(result._repr_html_())
    assert reader.open == []
    header_line = next(ln for ln in result.markdown().splitlines() if ln.startswith("| "))
    assert reader.headers == [c.strip() for c in header_line.strip("|").split("|")]
    body = [r for r in reader.rows if r]
    assert len(body) == len(records) and body[0][:3] == [records[0].variant, records[0].kernel, records[0].arch]
    assert markdown_to_html("| a | b |\n|---|---|\n| x \\| y | <i> & `z` |") == (
        "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>x | y</td>"
        "<td>&lt;i&gt; &amp; <code>z</code></td></tr></tbody></table>")


def test_a_results_table_alone_leaves_out_the_machine_line_and_the_legends():
    """A notebook shows the table alone: ``table(alone=True)`` has no machine line and no legend; its footnotes
    and what was not compiled stay (issue 35 item 16)."""
    import vgprscope

    res = vgprscope.analyze(variant=["baseline", "ws-regalloc"], arch=["gfx942"], **SMALL)
    full, bare = res.table(), res.table(alone=True)
    assert "compile-only" in full and "VGPRs / regs: 264 (256v+8a) = " in full
    assert "compile-only" not in bare and "VGPRs / regs: 264" not in bare and "limiter: next =" not in bare
    assert bare.startswith("vgprscope analyze") and "baseline  gfx942" in bare
    assert "not compiled: ws-regalloc on gfx942: written for sm_90" in bare
    cmp = vgprscope.compare(strategies=["baseline", "two-phase"], arch=["gfx942"], **SMALL)
    assert "compile-only" in cmp.table() and "is the change of the value itself" in cmp.table()
    alone = cmp.table(alone=True)
    assert alone.startswith("vgprscope compare: gfx942") and "is the change of the value itself" not in alone
    assert "compile-only" in res.table()  # alone for that call only
