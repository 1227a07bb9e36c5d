"""Bad input ends in one stderr line and a documented exit code, never a traceback.

The rule (vgprscope/cli/common.py, README "Exit codes"):
- 2: the command line is wrong in itself, found before anything compiles (nothing on stdout);
- 1: the command line is well-formed but no row compiled or can launch (rows printed, one stderr line).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.cli.app import _register, app

_register()
ROOT = Path(__file__).resolve().parents[2]
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
    from vgprscope.core.errors import UnknownNameError
    from vgprscope.flashattn.variants import select_variants

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
    from vgprscope.core.errors import OutputError
    from vgprscope.core.fsutil import atomic_write

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


# ---- exit 1: well-formed, but no row compiled; each refusal said (a note, JSON's ``refused``) ----

@pytest.mark.parametrize("cmd, args, reason", [
    ("analyze", ["--head-dim", "100000"], "head_dim 100000 is out of range; allowed: 16 to 256"),
    ("analyze", ["--block-m", "512"], "block_m 512 is not allowed; allowed: powers of two from 16 to 256"),
    ("compare", ["--block-n", "512"], "block_n 512 is not allowed"),
    ("analyze", ["--num-warps", "32"], "num_warps 32 is not allowed; allowed: 1, 2, 4, 8, 16"),
])
def test_nothing_compiled_is_exit_1_with_each_refusal(cmd, args, reason):
    flag = "--strategies" if cmd == "compare" else "--variant"
    res = run(cmd, flag, "baseline", "--arch", "gfx942", *args, "--format", "json")
    assert_one_line(res, 1, "no row compiled", reason)
    doc = json.loads(res.stdout)
    assert not (doc["rows"] if "rows" in doc else doc["archs"])
    assert doc["refused"] and all(reason in r["reason"] for r in doc["refused"])


# ---- values Triton never takes: usage errors before anything compiles ----

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


def test_an_explicit_block_m_a_variant_does_not_honour_is_refused_in_a_note():
    """small-tiles caps BLOCK_M at 64: its default is 64, but an explicit --block-m 128 (the design card's
    example) is never silently turned into 64: a note says why it is refused."""
    from vgprscope.core.archs import get_arch
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.variants import get_variant, resolve_config

    small, arch = get_variant("small-tiles"), get_arch("gfx942")
    assert resolve_config(small, arch, ConfigRequest()).block_m == 64
    asked = resolve_config(small, arch, ConfigRequest(block_m=128))
    assert asked.block_m == 128
    assert small.check(asked) == "block_m 128 is not a small tile; allowed: 16, 32 or 64 (larger is baseline)"
    assert resolve_config(small, arch, ConfigRequest(block_m=32)).block_m == 32
    res = run("analyze", "--variant", "small-tiles", "--arch", "gfx942", "--block-m", "128", "--format", "json")
    assert_one_line(res, 1, "no row compiled", "block_m 128 is not a small tile")
    (row,) = json.loads(res.stdout)["refused"]
    assert row["config"]["block_m"] == 128 and "not a small tile" in row["reason"]


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
    from vgprscope.captures.model import Capture, save_capture

    empty = tmp_path / "empty.json"
    save_capture(empty, Capture((), ("python", "-c", "pass"), "3.9.0", 0, ()))
    res = run("analyze", "--capture", str(empty), "--arch", "gfx942")
    assert_one_line(res, 2, "records no kernel launch", str(empty))
    assert res.stdout == ""


# ---- every value Triton or vgprscope would refuse later is one line and exit 2 up front ----

@pytest.mark.parametrize("args, needles", [
    (["--matrix-instr-nonkdim", "7"], ["--matrix-instr-nonkdim 7 is not allowed", "16 or 32"]),
    (["--kpack", "3"], ["--kpack 3 is not allowed", "1 or 2"]),
    (["--waves-per-eu", "99"], ["--waves-per-eu 99", "8 waves per SIMD on gfx942", "0 (no hint) to 8"]),
])
def test_amd_options_outside_what_triton_takes_are_refused_before_compiling(args, needles):
    """nonkdim 7 compiled a plain FMA loop (exit 0), kpack 3 failed Triton's pass manager on its row, and
    waves_per_eu 99 was refused only after a compile: each is now the command line's error."""
    res = run("analyze", "--variant", "split-k", "--arch", "gfx942", *args)
    assert_one_line(res, 2, *needles)
    assert res.stdout == ""


def test_amd_option_values_are_checked_by_the_core_for_the_library_too():
    from vgprscope.core.archs import get_arch
    from vgprscope.core.errors import UsageError
    from vgprscope.flashattn.config import ConfigRequest, check_backend_options
    from vgprscope.library import selection

    with pytest.raises(UsageError, match="matrix_instr_nonkdim=4 is not allowed"):
        selection.requests({"matrix_instr_nonkdim": 4})
    with pytest.raises(UsageError, match="kpack=0 is below"):
        selection.requests({"kpack": 0})
    assert len(selection.requests({"matrix_instr_nonkdim": [0, 16, 32], "kpack": [1, 2]})) == 6
    with pytest.raises(UsageError, match="over the maximum of 16 waves per SIMD on gfx1100"):
        check_backend_options(ConfigRequest(waves_per_eu=17), [get_arch("gfx1100")])
    check_backend_options(ConfigRequest(waves_per_eu=16), [get_arch("gfx1100")])  # gfx1100's own maximum


@pytest.mark.parametrize("variant, knob, needle", [
    ("split-k", "num_splits=0", "num_splits 0 is not allowed"),
    ("split-k", "num_splits=-1", "num_splits -1 is not allowed"),
    ("remat-q", "block_dk=abc", "block_dk 'abc' is not allowed"),
])
def test_a_knob_value_every_variant_taking_it_refuses_is_a_usage_error(variant, knob, needle):
    res = run("analyze", "--variant", variant, "--arch", "gfx942", "--knob", knob)
    assert_one_line(res, 2, f"knob {knob}", needle)
    assert res.stdout == ""


def test_a_knob_value_refused_at_some_configs_only_stays_on_its_rows():
    """num_splits=16 needs 16 key blocks: at Nk 4096 / BLOCK_N 64 it fits, at Nk 512 it does not; the rows that
    cannot take it say so and the others compile."""
    from vgprscope.core.archs import get_arch
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.source import _refused_knob
    from vgprscope.flashattn.variants import get_variant, resolve_config

    v, a = get_variant("split-k"), get_arch("gfx942")
    cfg = resolve_config(v, a, ConfigRequest(extra=(("num_splits", 16),)))
    items = [(v, cfg, a, ("num_splits=16",)), (v, cfg, a, ("head_dim=64 num_splits=16",))]
    assert _refused_knob(items, ["num_splits 16 is not allowed", None]) is None
    assert "num_splits=16" in (_refused_knob(items, ["num_splits 16 is not allowed"] * 2) or "")
    # refused for what the shape makes of it, not as a value: the rows say so (exit 1 if nothing compiles)
    assert _refused_knob(items, ["num_splits 16 is more than the 8 key blocks of seqlen_k 512"] * 2) is None
    # a default the user did not set is never blamed on --knob
    assert _refused_knob([(v, cfg, a, "defaults")], ["num_splits 16 is not allowed"]) is None


@pytest.mark.parametrize("args, needle", [
    (["analyze", *ONE, "--sort", ""], "--sort"),
    (["compare", "--strategies", "baseline", "--sort", " "], "--sort"),
    (["analyze", *ONE, "--scheduler", ""], "--scheduler"),
    (["analyze", *ONE, "--plot", "p.png"], "--plot draws each kernel release by release"),
    (["analyze", *ONE, "--triton", "3.9.0", "--plot", "p.png"], "--plot"),
    (["analyze", "--variant", "all,baseline"], "'all' selects every variant"),
    (["analyze", "--variant", "baseline", "--variant", "all"], "give 'all' alone"),
])
def test_empty_or_meaningless_values_are_refused_not_ignored(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run(*args)
    assert_one_line(res, 2, needle)
    assert res.stdout == "" and not (tmp_path / "p.png").exists()


def test_an_empty_sort_or_scheduler_through_the_library():
    from vgprscope.analysis.compare.core import sort_lines
    from vgprscope.analysis.frontier.core import sort_frontiers
    from vgprscope.analysis.order import sort_records
    from vgprscope.core.errors import UsageError
    from vgprscope.library.tasks import executor_for

    for call in (lambda: sort_records([], ""), lambda: sort_lines({}, " "), lambda: sort_frontiers([], "")):
        with pytest.raises(UsageError, match="is empty"):
            call()
    with pytest.raises(UsageError, match="scheduler '' is empty"):
        with executor_for(""):
            pass
    assert sort_records([], None) == []


@pytest.mark.parametrize("spec", ["３.８.０", "3.８.0", "٣.٨.٠"])
def test_a_release_spelled_in_other_digits_never_reaches_pip(spec, tmp_path, monkeypatch):
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "tc"))
    res = run("analyze", *ONE, "--triton", spec)
    assert_one_line(res, 2, "is not a Triton release number")
    assert not (tmp_path / "tc").exists() or not any((tmp_path / "tc").iterdir())


def test_a_two_part_release_is_the_three_part_one():
    """`--triton 3.8` installed 3.8.0 and then refused it ("gave Triton 3.8.0"): it means 3.8.0 throughout,
    so the installed release named in two parts is the installed toolchain, nothing installed."""
    from vgprscope.compile.toolchains import installed, normal_release, resolve

    assert normal_release("3.8") == "3.8.0" and normal_release("3.8.1") == "3.8.1"
    assert normal_release("3.4.0..3.9.0") == "3.4.0..3.9.0"
    here = installed()
    major, minor, patch = here.version.split(".")
    if patch == "0":
        assert resolve(f"{major}.{minor}") is here or resolve(f"{major}.{minor}").kind == "installed"


def test_the_allowed_release_list_names_only_releases_vgprscope_takes():
    from vgprscope.compile.toolchains import _pip_failure

    text = ("ERROR: Could not find a version that satisfies the requirement triton==3.2.9 (from versions: 2.0.0, "
            "2.1.0, 2.2.0, 2.3.0, 3.0.0, 3.1.0, 3.2.0, 3.3.0, 3.3.1, 3.4.0)")
    line = _pip_failure("3.2.9", text)
    assert "allowed: 3.3.0, 3.3.1, 3.4.0 " in line and "2.0.0" not in line and "3.2.0" not in line


def test_a_huge_tile_suggests_no_huge_values():
    line = assert_one_line(run("analyze", "--block-m", "9" * 23), 2, "--block-m", "powers of two")
    assert max(len(n) for n in re.findall(r"\d+", line.split("powers of two", 1)[1])) <= 5, line
    line = assert_one_line(run("analyze", "--block-m", "100"), 2, "such as 64 or 128")


# ---- the library: a typed error naming the parameter, before Triton is imported where it can be ----

def test_library_selections_that_are_mistakes():
    import vgprscope
    from vgprscope.core.errors import UsageError

    for call, message in ((lambda: vgprscope.scan(5), "scan(5): the directory is not a path"),
                          (lambda: vgprscope.analyze(arch=[]), "arch=[] names nothing"),
                          (lambda: vgprscope.compare(arch=()), "arch=() names nothing"),
                          (lambda: vgprscope.analyze(variant=[]), "variant=[] names nothing")):
        with pytest.raises(UsageError, match=re.escape(message)):
            call()


_LAUNCH = """
import sys
sys.path.insert(0, {kernels!r})
from my_ops import add
import vgprscope
from vgprscope.core.errors import UsageError
p = vgprscope.pointer("fp32")
for kw in ({{"FOO": 3}}, {{"BLOK": 64}}, {{"num_stages": "x"}}, {{"num_warps": [4, 8.0]}}):
    try:
        vgprscope.analyze(add, p, p, p, 128, BLOCK=64, arch="gfx942", jobs=1, **kw)
        print("no error", kw)
    except UsageError as exc:
        print(exc)
"""


def test_a_typo_or_a_wrong_type_in_a_launch_is_a_usage_error_naming_it():
    """A keyword that is neither a parameter nor a launch option was a failed row listing every option
    (600 characters); num_stages="x" was a pybind message from Triton's pass manager."""
    from capture_helpers import USER_KERNELS

    out = subprocess.run([sys.executable, "-c", _LAUNCH.format(kernels=str(USER_KERNELS))], capture_output=True,
                         text=True, cwd=ROOT, timeout=600)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 4, out.stdout + out.stderr
    assert lines[0].startswith("add: FOO= is neither a parameter of add") and len(lines[0]) < 200
    assert "did you mean BLOCK?" in lines[1]
    assert lines[2] == "add: num_stages='x' is not a whole number; num_stages takes one (or a list of them for a grid)"
    assert "num_warps=8.0 is not a whole number" in lines[3]


def test_an_unknown_arch_is_refused_before_triton_is_imported():
    code = ("import sys, vgprscope\nfrom vgprscope.core.errors import UsageError\n"
            "try:\n    vgprscope.analyze(lambda: 0, arch='gfx9999')\nexcept UsageError as e:\n    print(e)\n"
            "print('triton' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.splitlines() == [
        "unknown arch 'gfx9999'; valid: " + ", ".join(__import__("vgprscope.core.archs").core.archs.ARCHS), "False"], out.stderr


_NO_DRIVER = """
import os, sys
sys.path.insert(0, {kernels!r})
import torch, vgprscope
q = torch.zeros(1, 1, 16, 16, dtype=torch.float16)
try:
    vgprscope.attention(q, q, q)
except RuntimeError as exc:
    print(type(exc).__name__, exc)
from my_ops import add
os.environ["TRITON_INTERPRET"] = "1"  # a notebook's cell after the kernels were imported
x = torch.zeros(64)
try:
    with vgprscope.capture():
        add[(1,)](x, x, x, 64, BLOCK=64)
except RuntimeError as exc:
    print(type(exc).__name__, exc)
"""


def test_no_gpu_driver_says_what_to_do_in_the_library():
    """Triton's raw "0 active drivers ([]). There should only be one." becomes the CLI's hint: a RuntimeError
    still (as Triton's was), saying to set TRITON_INTERPRET=1 before the kernels are imported."""
    pytest.importorskip("torch")
    from capture_helpers import USER_KERNELS

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", _NO_DRIVER.format(kernels=str(USER_KERNELS))], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=600)
    if "GPU" not in out.stdout and "0 active drivers" not in out.stdout + out.stderr:
        pytest.skip("a GPU driver is present")
    first, second = out.stdout.strip().splitlines()
    assert first.startswith("NoGpuDriverError Triton found no GPU driver") and "set TRITON_INTERPRET=1 before" in first
    assert second.startswith("NoGpuDriverError") and "after these kernels were imported" in second


def test_a_diagnostic_folds_at_spaces_on_a_terminal_and_stays_one_line_in_a_pipe(monkeypatch):
    """A terminal cut `is False` into `is F` / `alse`: on one, the line folds at spaces to its width."""
    import io

    from vgprscope.cli.common import fold_for_terminal

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("COLUMNS", "40")
    text = "vgprscope: error: the option --fail-on-change is False here, and that is not what was asked"
    folded = fold_for_terminal(text, Terminal())
    assert all(len(ln) <= 40 for ln in folded.splitlines()) and len(folded.splitlines()) > 1
    assert folded.split() == text.split()  # no word cut in two
    assert fold_for_terminal(text, io.StringIO()) == text  # a pipe: one line


# ---- a symlink loop, as an output or an input: one line before any work, the link left as it was ----

@pytest.mark.parametrize("args", [
    ["analyze", "--variant", "baseline", "--arch", "gfx942", "-o", "{loop}"],
    ["archs", "-o", "{loop}"],
    ["analyze", "--variant", "baseline", "--arch", "gfx942", "--triton", "3.9.0", "--triton", "3.8.0",
     "--plot", "{loop}"],
    ["capture", "-o", "{loop}", "--", sys.executable, "-c", "open({ran!r}, 'w').close()"],
    ["analyze", "--kernel-dir", "{loop}"],
    ["variants", "--kernel-dir", "{loop}"],
    ["analyze", "--capture", "{loop}", "--arch", "gfx942"],
    ["check", "--baseline", "{loop}"],
    ["scan", "{loop}"],
])
def test_a_symlink_loop_is_one_line_before_any_work(tmp_path, args):
    loop, other, ran = tmp_path / "l1", tmp_path / "l2", tmp_path / "RAN"
    loop.symlink_to(other)
    other.symlink_to(loop)
    argv = [a.format(loop=loop, ran=str(ran)) for a in args]
    done = subprocess.run([sys.executable, "-m", "vgprscope", *argv], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "symlink loop" in lines[0] and str(loop.name) in lines[0], done.stderr
    assert "Traceback" not in done.stderr and "Errno" not in done.stderr
    assert loop.is_symlink() and not ran.exists()  # not replaced by a file; the command never ran


# ---- a document nested 100,000 deep (a capture, a baseline, a pyproject.toml): one line, exit 2 ----

DEEP = 100_000


@pytest.mark.parametrize("kind", ["capture", "baseline", "pyproject", "config", "tool-not-a-table"])
def test_a_deeply_nested_or_misshapen_input_is_one_line(tmp_path, kind):
    deep = "[" * DEEP + "]" * DEEP
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    if kind == "capture":
        (tmp_path / "deep.json").write_text('{"schema": "vgprscope-capture", "schema_version": 3, "kernels": '
                                            f'[{{"snapshot": {deep}}}], "launches": []}}')
        args, needle = ["analyze", "--capture", "deep.json", "--arch", "gfx942"], "nested too deeply"
    elif kind == "baseline":
        (tmp_path / "deep.json").write_text(deep)
        args, needle = ["check", "--baseline", "deep.json"], "nested too deeply"
    elif kind == "pyproject":
        (tmp_path / "pyproject.toml").write_text(f"[tool.vgprscope]\nrules = {deep}\n")
        args, needle = ["check"], "nested too deeply"
    elif kind == "config":
        (tmp_path / "gate.toml").write_text(f"rules = {deep}\n")
        args, needle = ["baseline", "save", "--config", "gate.toml"], "nested too deeply"
    else:
        (tmp_path / "pyproject.toml").write_text("tool = 5\n")
        args, needle = ["check"], "tool must be a table"
    done = subprocess.run([sys.executable, "-m", "vgprscope", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in done.stderr, done.stderr[-2000:]
