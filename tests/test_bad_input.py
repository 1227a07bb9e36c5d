"""Bad input ends in one stderr line and a documented exit code, never a traceback (issue 9, item 3).

The rule (vgprscope/cli/common.py, README "Exit codes"):
- 2: the command line is wrong in itself, found before anything compiles (nothing on stdout);
- 1: the command line is well-formed but no row compiled or can launch (rows printed, one stderr line).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

_register()
ROOT = Path(__file__).resolve().parent.parent
ONE = ["--variant", "baseline", "--arch", "gfx942"]


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def assert_one_line(res, code: int, *needles: str) -> str:
    """Exit ``code``, exactly one stderr line holding every needle, no traceback anywhere."""
    out = res.output + (res.stderr or "")
    assert "Traceback" not in out, out
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == code, out
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture()
def file_in_the_way(tmp_path) -> Path:
    f = tmp_path / "afile"
    f.write_text("not a directory\n")
    return f


# ---- --kernel-dir ----

def test_kernel_dir_that_does_not_exist(tmp_path):
    missing = tmp_path / "nope"
    for cmd in (["analyze"], ["variants"], ["compare"]):
        res = run(*cmd, "--kernel-dir", str(missing))
        assert_one_line(res, 2, "kernel directory", str(missing), "does not exist")
        assert res.stdout == ""


def test_kernel_dir_that_is_a_file(file_in_the_way):
    assert_one_line(run("analyze", "--kernel-dir", str(file_in_the_way)), 2, "is not a directory")


def test_kernel_dir_without_a_variant(tmp_path):
    (tmp_path / "_helpers.py").write_text("X = 1\n")  # helpers alone are no variant
    (tmp_path / "notes.py").write_text("Y = 2\n")  # nor a file without VARIANT
    for cmd in ("analyze", "variants"):
        assert_one_line(run(cmd, "--kernel-dir", str(tmp_path)), 2, "has no variant", "defines VARIANT")


def test_kernel_file_with_a_syntax_error_names_file_and_line(tmp_path):
    (tmp_path / "good.py").write_text('VARIANT = {"name": "g"}\n')
    bad = tmp_path / "broken.py"
    bad.write_text('"""A kernel."""\n\nVARIANT = {\n    "name": "b",\n    "seed": (\n')
    for cmd in ("analyze", "variants"):
        line = assert_one_line(run(cmd, "--kernel-dir", str(tmp_path)), 2, f"{bad}, line 5", "syntax error")
        assert "never closed" in line


def test_syntax_error_in_a_helper_the_variant_imports(tmp_path):
    (tmp_path / "_common.py").write_text("def f(:\n")
    (tmp_path / "v.py").write_text('from ._common import f\nVARIANT = {"name": "v", "strategy": "s", "seed": "0", '
                                   '"trades": "t", "defaults": {}, "kernels": ["k"]}\n')
    assert_one_line(run("variants", "--kernel-dir", str(tmp_path)), 2, "_common.py, line 1", "syntax error")


def test_variant_that_is_not_a_literal(tmp_path):
    (tmp_path / "v.py").write_text('NAME = "v"\n\nVARIANT = {"name": NAME}\n')
    assert_one_line(run("variants", "--kernel-dir", str(tmp_path)), 2, "v.py, line 3", "VARIANT must be a dict")


def test_bad_defaults_for_entry(tmp_path):
    (tmp_path / "v.py").write_text(
        'VARIANT = {"name": "v", "strategy": "s", "seed": "0", "trades": "t", "kernels": ["k"], '
        '"defaults": {"block_m": 64}, "defaults_for": [{"arch": ["sm_99"], "set": {"block_m": 32}}]}\n')
    assert_one_line(run("variants", "--kernel-dir", str(tmp_path)), 2, "defaults_for'][0]['arch']", "sm_90")


# ---- names: --arch, --variant, --strategies ----

@pytest.mark.parametrize("cmd", [["analyze"], ["compare"], ["check"], ["baseline", "save"]])
@pytest.mark.parametrize("value", ["", ",", "gfx942,,sm_80"])
def test_empty_arch_name(cmd, value):
    res = run(*cmd, "--arch", value)
    assert_one_line(res, 2, "--arch", "empty name")
    assert res.stdout == ""


@pytest.mark.parametrize("cmd", [["compare", "--strategies"], ["bench", "--strategies"], ["analyze", "--variant"]])
def test_empty_variant_name(cmd):
    assert_one_line(run(*cmd, ""), 2, "empty name")


def test_empty_variant_name_through_the_api_is_unknown():
    from vgprscope.errors import UnknownNameError
    from vgprscope.attention.variants import select_variants

    with pytest.raises(UnknownNameError, match="unknown variant ''; valid: baseline, .*, all"):
        select_variants([""])
    assert len(select_variants(None)) == len(select_variants(["all"])) >= 8


# ---- --shape ----

@pytest.mark.parametrize("shape", ["1,2,3", "a,b,c,d", "0,0,0,0", "4,32,0,4096", "-1,2,3,4", "1,2,3,4,5,6", ""])
@pytest.mark.parametrize("cmd", ["compare", "bench"])
def test_malformed_shape(cmd, shape):
    res = run(cmd, "--shape", shape, "--strategies", "baseline")
    assert_one_line(res, 2, f"shape {shape!r} is not allowed", "B,H,Nq,Nk")
    assert res.stdout == ""


# ---- occupancy ----

@pytest.mark.parametrize("args, needle", [
    (["--arch", "sm_80", "--regs", "128", "--threads", "0"], "threads per block must be between 1 and 1024"),
    (["--arch", "gfx942", "--vgprs", "128", "--workgroup", "0"], "workgroup size must be between 1 and 1024"),
    (["--arch", "sm_80", "--ladder", "--threads", "0"], "threads per block must be between 1 and 1024"),
    (["--arch", "", "--vgprs", "1"], "unknown arch ''"),
    (["--arch", "gfx942", "--vgprs", "abc"], "'--vgprs'"),
])
def test_occupancy_bad_counts(args, needle):
    assert_one_line(run("occupancy", *args), 2, needle)


def test_occupancy_that_cannot_launch_prints_the_answer_and_exits_1():
    res = run("occupancy", "--arch", "gfx942", "--vgprs", "128", "--lds", "70000", "--format", "json")
    assert_one_line(res, 1, "does not launch", "70000 B of LDS", "65536 B")
    assert json.loads(res.stdout)["waves_per_simd"] == 0


# ---- --output ----

@pytest.mark.parametrize("cmd", [["archs"], ["variants"], ["analyze", *ONE], ["check"], ["compare"]])
def test_output_under_a_file(cmd, file_in_the_way):
    target = file_in_the_way / "sub" / "out.txt"
    res = run(*cmd, "--output", str(target))
    assert_one_line(res, 2, "--output", f"{file_in_the_way} is a file, not a directory")
    assert res.stdout == "" and file_in_the_way.read_text() == "not a directory\n"


def test_output_that_is_a_directory(tmp_path):
    assert_one_line(run("archs", "--output", str(tmp_path)), 2, "it is a directory")


def test_baseline_save_under_a_file_fails_before_compiling(file_in_the_way):
    res = run("baseline", "save", "--baseline", str(file_in_the_way / "b.json"), "--variant", "baseline")
    assert_one_line(res, 2, "is a file, not a directory")


def test_atomic_write_raises_a_typed_error(file_in_the_way):
    from vgprscope.errors import OutputError
    from vgprscope.fsutil import atomic_write

    with pytest.raises(OutputError, match="is a file, not a directory"):
        atomic_write(file_in_the_way / "x" / "y.json", "{}")


# ---- typer's own parse errors are one line too ----

@pytest.mark.parametrize("args, needle", [
    (["analyze", "--head-dim", "0"], "--head-dim"),
    (["compare", "--head-dim", "0"], "--head-dim"),
    (["analyze", "--head-dim", "abc"], "--head-dim"),
    (["analyze", "--dtype", "fp8"], "fp16"),
    (["analyze", "--format", "xml"], "--format"),
    (["compare", "--jobs", "0"], "--jobs"),
    (["occupancy", "--arch", "gfx942", "--vgprs", "1.5"], "--vgprs"),
    (["analyze", "--no-such-option"], "--no-such-option"),
    (["no-such-command"], "no-such-command"),
])
def test_parse_errors_are_one_line(args, needle):
    res = run(*args)
    assert_one_line(res, 2, needle)
    assert res.stdout == ""


# ---- exit 1: well-formed, but no row compiled; the rows are still printed ----

@pytest.mark.parametrize("cmd, args, reason", [
    ("analyze", ["--head-dim", "100000"], "head_dim 100000 is out of range; allowed: 16 to 256"),
    ("analyze", ["--block-m", "512"], "block_m 512 is not allowed; allowed: powers of two from 16 to 256"),
    ("compare", ["--block-n", "512"], "block_n 512 is not allowed"),
    ("analyze", ["--num-warps", "32"], "num_warps 32 is not allowed; allowed: 1, 2, 4, 8, 16"),
])
def test_nothing_compiled_is_exit_1_with_the_rows(cmd, args, reason):
    flag = "--strategies" if cmd == "compare" else "--variant"
    res = run(cmd, flag, "baseline", "--arch", "gfx942", *args, "--format", "json")
    assert_one_line(res, 1, "no row compiled", reason)
    doc = json.loads(res.stdout)
    rows = doc["rows"] if "rows" in doc else doc["archs"]["gfx942"]
    assert rows and all(reason in r["status"] for r in rows)


# ---- values Triton never takes: usage errors before anything compiles (issue 18) ----

@pytest.mark.parametrize("cmd", ["analyze", "compare", "frontier", "explain"])
@pytest.mark.parametrize("args, needle", [
    (["--num-warps", "3"], "--num-warps"),
    (["--block-m", "100"], "--block-m"),
    (["--block-n", "100"], "--block-n"),
    (["--block-m", "64,100"], "--block-m"),
])
def test_values_triton_never_takes_are_usage_errors(cmd, args, needle):
    line = assert_one_line(run(cmd, *args), 2, needle, "powers of two")
    assert str(int(args[1].split(",")[-1])) in line


@pytest.mark.parametrize("cmd", ["analyze", "compare", "frontier"])
@pytest.mark.parametrize("args, needle", [
    (["--dtype", ""], "--dtype ''"),
    (["--dtype", "fp16,"], "--dtype 'fp16,'"),
    (["--block-m", ""], "--block-m ''"),
    (["--num-warps", "4,,8"], "--num-warps '4,,8'"),
])
def test_an_empty_value_is_a_usage_error_not_the_default(cmd, args, needle):
    res = run(cmd, *args)
    assert_one_line(res, 2, needle, "empty value")
    assert res.stdout == ""


def test_an_explicit_block_m_a_variant_does_not_honour_is_refused_on_its_row():
    """small-tiles caps BLOCK_M at 64: its default is 64, but an explicit --block-m 128 (the design card's
    example) is never silently turned into 64: the row says why it is refused."""
    from vgprscope.archs import get_arch
    from vgprscope.attention.config import ConfigRequest
    from vgprscope.attention.variants import get_variant, resolve_config

    small, arch = get_variant("small-tiles"), get_arch("gfx942")
    assert resolve_config(small, arch, ConfigRequest()).block_m == 64
    asked = resolve_config(small, arch, ConfigRequest(block_m=128))
    assert asked.block_m == 128
    assert small.check(asked) == "block_m 128 is not a small tile; allowed: 16, 32 or 64 (larger is baseline)"
    assert resolve_config(small, arch, ConfigRequest(block_m=32)).block_m == 32
    res = run("analyze", "--variant", "small-tiles", "--arch", "gfx942", "--block-m", "128", "--format", "json")
    assert_one_line(res, 1, "no row compiled", "block_m 128 is not a small tile")
    (row,) = json.loads(res.stdout)["rows"]
    assert row["config"]["block_m"] == 128 and "not a small tile" in row["status"]


def test_real_entry_point_prints_one_line(tmp_path, file_in_the_way):
    """The installed script (not typer's test runner): parse errors and core errors alike."""
    env = dict(os.environ)
    for args, code in ((["analyze", "--head-dim", "0"], 2), (["archs", "-o", str(file_in_the_way / "x")], 2),
                       (["analyze", "--kernel-dir", str(tmp_path / "none")], 2)):
        out = subprocess.run([sys.executable, "-m", "vgprscope", *args], capture_output=True, text=True, env=env,
                             cwd=ROOT)
        assert out.returncode == code, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr, out.stderr
        assert out.stdout == ""


def test_analyze_of_an_empty_capture_is_one_line_and_non_zero(tmp_path):
    """A capture of a command that launched nothing printed an empty table and exited 0 (`baseline save`
    refuses the same capture)."""
    from vgprscope.capture.model import Capture, save_capture

    empty = tmp_path / "empty.json"
    save_capture(empty, Capture((), ("python", "-c", "pass"), "3.9.0", 0, ()))
    res = run("analyze", "--capture", str(empty), "--arch", "gfx942")
    assert_one_line(res, 2, "records no kernel launch", str(empty))
    assert res.stdout == ""
