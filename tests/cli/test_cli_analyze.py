"""`vgprscope analyze` through typer's runner: rows, formats, bad input, exit codes."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

_register()
SMALL = ["--block-m", "64", "--block-n", "32", "--head-dim", "64", "--num-warps", "4", "--num-stages", "1"]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def analyzed_json():
    res = run("analyze", "--variant", "baseline", *SMALL, "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_json_has_schema_version_triton_and_full_configs(analyzed_json):
    doc = analyzed_json
    assert doc["schema_version"] == 1
    assert doc["triton_version"] == doc["machine"]["triton"]
    assert doc["machine"]["gpu"] == "compile-only"
    assert [r["arch"] for r in doc["rows"]] == ["gfx90a", "gfx942", "sm_80"]
    for row in doc["rows"]:
        assert row["status"] == "ok"
        cfg = row["config"]
        assert (cfg["block_m"], cfg["block_n"], cfg["head_dim"], cfg["num_warps"], cfg["num_stages"]) == (64, 32, 64, 4, 1)
        assert row["config_key"] and row["triton_version"] == doc["triton_version"]
        assert row["occupancy"]["value"] >= 1 and row["occupancy"]["limiters"]
    amd = doc["rows"][1]["usage"]
    assert amd["vendor"] == "amd" and amd["vgpr_total"] > 0 and amd["llvm_occupancy"] >= 1
    assert doc["rows"][2]["usage"]["regs"] > 0


def test_table_csv_md_from_the_same_rows(analyzed_json):
    table = run("analyze", "--variant", "baseline", *SMALL)
    assert table.exit_code == 0
    assert "compile-only (compiled here, no GPU: " in table.stdout and "gfx942" in table.stdout
    md = run("analyze", "--variant", "baseline", *SMALL, "--format", "md")
    assert md.stdout.count("| baseline |") == 3
    rows = list(csv.DictReader(io.StringIO(run("analyze", "--variant", "baseline", *SMALL, "-f", "csv").stdout)))
    assert [r["arch"] for r in rows] == ["gfx90a", "gfx942", "sm_80"]
    assert rows[1]["usage_vgpr_total"] == str(analyzed_json["rows"][1]["usage"]["vgpr_total"])


def test_output_file_is_written_whole(tmp_path):
    out = tmp_path / "sub" / "rows.json"
    out.parent.mkdir()  # a directory that does not exist is refused (tests/cli/test_output_files.py)
    res = run("analyze", "--variant", "baseline", *SMALL, "-f", "json", "-o", str(out))
    assert res.exit_code == 0 and res.stdout == ""
    assert json.loads(out.read_text())["rows"]
    assert [p.name for p in out.parent.iterdir()] == ["rows.json"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--arch", "gfx999"], "unknown arch 'gfx999'; valid: gfx90a, gfx942, gfx950, gfx1100, gfx1100-wave64, gfx1201, sm_80"),
        (["--variant", "nope"], "unknown variant 'nope'; valid: baseline"),
        (["--arch", "sm_80", "--waves-per-eu", "2"], "--waves-per-eu applies to AMD archs only"),
        (["--arch", "gfx942", "--maxnreg", "128"], "--maxnreg applies to NVIDIA archs only"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    res = run("analyze", *args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_bad_dtype_is_a_usage_error():
    res = run("analyze", "--dtype", "fp8")
    assert res.exit_code == 2 and "fp16" in res.output and "bf16" in res.output


def test_help_is_fast_to_import():
    # the CLI module must not import torch or triton before a command needs them
    code = ("import sys; import vgprscope.cli.app as a; a._register(); "
            "print(any(m in sys.modules for m in ('torch', 'triton', 'pandas')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_help_loads_no_record_model():
    """The launch options' declarations the help is built from need a bound, not the records they end up in: the
    record model (dataclasses of every usage, a hasher) is loaded by the commands that make records."""
    code = ("import sys; import vgprscope.cli.app as a; a._register(); "
            "print(sorted(m for m in ('vgprscope.core.records', 'hashlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_gluon_compile_in_the_commands_own_process_ends_without_tritons_teardown_report(tmp_path):
    """One compile runs in the command's process (no pool); after a Gluon kernel's, libtriton's nanobind lists
    Triton's own objects as leaked at exit: a dozen lines under the table that are not the user's. The entry
    point closes stderr for the interpreter's teardown once its output is written."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {
        "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "vgprscope", "analyze", "--variant", "ws-regalloc", "--arch", "sm_90",
                           "--jobs", "1"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ws-regalloc" in done.stdout and "nanobind" not in done.stderr, done.stderr[-2000:]


def test_python_dash_m_works():
    out = subprocess.run([sys.executable, "-m", "vgprscope", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("vgprscope ")


def test_a_knob_goes_to_the_variants_that_take_it_and_a_refusal_is_a_note():
    """A value outside a variant's range is said once, under the table (JSON: ``refused``), not a failed line."""
    res = run("compare", "--strategies", "baseline,split-k", "--arch", "sm_80", *SMALL, "--knob", "num_splits=1000",
              "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    lines = {ln["variant"]: ln for ln in doc["archs"]["sm_80"]}
    assert list(lines) == ["baseline"] and lines["baseline"]["status"] == "ok"
    assert {r["variant"] for r in doc["refused"]} == {"split-k"}
    assert all("num_splits 1000" in r["reason"] for r in doc["refused"])


def test_a_knob_no_variant_takes_is_a_usage_error():
    res = run("analyze", "--variant", "baseline", "--knob", "num_splits=2")
    assert res.exit_code == 2
    assert "no selected variant takes the knob 'num_splits'" in res.stderr
    bad = run("analyze", "--knob", "num_splits")
    assert bad.exit_code == 2 and "is not NAME=VALUE" in bad.stderr


@pytest.mark.parametrize("args, warnings, loops", [
    ([], {"warn_on_spills": False, "warn_stack_size": None}, False),
    (["--warn-on-spills", "--warn-stack-size", "512"], {"warn_on_spills": True, "warn_stack_size": 512}, False),
    (["--wide"], {"warn_on_spills": False, "warn_stack_size": None}, True),
    (["--format", "json"], {"warn_on_spills": False, "warn_stack_size": None}, True),
    (["--format", "csv"], {"warn_on_spills": False, "warn_stack_size": None}, True),
    (["--sort", "usage_loop_matrix_share"], {"warn_on_spills": False, "warn_stack_size": None}, True),
])
def test_the_compilers_warnings_and_the_loop_figures_a_view_reads_reach_the_library(monkeypatch, args, warnings,
                                                                                    loops):
    """--warn-on-spills (ptxas) and --warn-stack-size (LLVM) are the library's warn_on_spills / warn_stack_size;
    the table's default view shows no hot-loop share or lines, so it asks for none (loops=False): every other
    view, and a sort by a loop field, reads them."""
    from vgprscope.analysis.analyze.result import AnalyzeResult
    from vgprscope.library import api

    seen: dict = {}

    def analyze(**kwargs):
        seen.update(kwargs)
        return AnalyzeResult(())

    monkeypatch.setattr(api, "analyze", analyze)
    run("analyze", "--variant", "baseline", *args)
    assert {k: seen[k] for k in warnings} == warnings and seen["loops"] is loops


def test_a_negative_stack_size_to_warn_at_is_refused():
    res = run("analyze", "--warn-stack-size", "-1")
    assert res.exit_code == 2 and "--warn-stack-size" in res.output and "Traceback" not in res.output
