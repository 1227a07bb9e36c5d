"""explain on fresh compiles: register counts against Triton's own layout view, and the command itself.

The oracle: Triton parses the TTGIR (``ir.parse_mlir_module``), gives each tensor's layout as a gluon layout
object (``GluonOpBuilder.get_gluon_layout_from_tensor``) and converts it to its linear layout
(``to_linear_layout``); a lane holds 2^rank(register bases) distinct elements. vgprscope's count
(``parse.layouts``) is its own and must agree for every tensor of every compiled kernel.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vgprscope.core.archs import get_arch
from vgprscope.core.parse.layouts import elements_per_lane, parse_layout
from vgprscope.core.parse.ttgir import parse_tensor_type

FIX = Path(__file__).parents[2] / "fixtures" / "explain"
# every arch the installed Triton targets; the bundled variants' kernels on each
ORACLE_ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "sm_80", "sm_90", "sm_100")


def _gf2_rank(vectors) -> int:
    basis: list[int] = []
    for v in vectors:
        x = 0
        for c in v:
            x = (x << 16) | c
        for b in basis:
            x = min(x, x ^ b)
        if x:
            basis.append(x)
    return len(basis)


def triton_elements_per_lane(ttgir: str) -> dict[str, int]:
    """Triton's view: tensor type (as printed) -> distinct elements a lane holds."""
    from triton._C.libtriton import amd, gluon_ir, ir, nvidia

    ctx = ir.context()
    ir.load_dialects(ctx)
    amd.load_dialects(ctx)
    nvidia.load_dialects(ctx)
    with tempfile.NamedTemporaryFile("w", suffix=".ttgir") as f:
        f.write(ttgir)
        f.flush()
        module = ir.parse_mlir_module(f.name, ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    out: dict[str, int] = {}

    def visit(op):
        for i in range(op.get_num_results()):
            value = op.get_result(i)
            text = str(value.get_type())
            if not text.startswith("tensor<") or text in out:
                continue
            layout = builder.get_gluon_layout_from_tensor(value)
            linear = builder.to_linear_layout(layout._to_ir(builder), list(value.get_shape()))
            out[text] = 2 ** _gf2_rank(linear.reg_bases)

    module.walk(visit)
    return out


def check_against_triton(ttgir: str) -> set[str]:
    """Assert every tensor's count equals Triton's; return the layout kinds seen."""
    kinds = set()
    oracle = triton_elements_per_lane(ttgir)
    assert oracle, "no tensors in the TTGIR"
    for text, expected in oracle.items():
        t = parse_tensor_type(text)
        layout = parse_layout(t.encoding)
        parent = getattr(layout, "parent", None)
        kinds.add(f"{layout.kind}({parent.kind})" if parent is not None else layout.kind)
        assert elements_per_lane(layout, t.shape) == expected, text
    return kinds


@pytest.mark.parametrize("name", ["baseline-gfx942.ttgir.gz", "baseline-gfx942-wpe3.ttgir.gz",
                                  "baseline-sm_90.ttgir.gz"])
def test_fixture_counts_equal_triton_layout_view(name):
    check_against_triton(gzip.open(FIX / name, "rt").read())


@pytest.fixture(scope="module")
def compiled():
    """Raw outputs of the bundled kernels at their defaults on every arch Triton targets."""
    from vgprscope.compile.engine import Engine
    from vgprscope.flashattn.config import ConfigRequest
    from vgprscope.flashattn.source import VariantSource, variant_tasks

    archs = [a for a in ORACLE_ARCHS if getattr(get_arch(a), "triton_target", True)]
    # baseline alone produces every layout kind the bundled variants produce on each arch (checked with
    # all eight: 3142 tensor types, no difference); VGPRSCOPE_EXPLAIN_ALL_VARIANTS=1 checks all of them
    variants = ["all"] if os.environ.get("VGPRSCOPE_EXPLAIN_ALL_VARIANTS") == "1" else ["baseline"]
    engine = Engine()
    source = VariantSource(tuple(variants))
    tasks = variant_tasks(source.items([get_arch(a) for a in archs], [ConfigRequest()]), engine)
    engine.compile(tasks)
    out = {}
    for t in tasks:
        raw = engine.raw_outputs(t)
        if raw is not None:
            out[(t.label, t.row.kernel, t.arch.name)] = raw
    return out


@pytest.mark.parametrize("arch", ORACLE_ARCHS)
def test_fresh_counts_equal_triton_layout_view_on_every_arch(compiled, arch):
    kernels = {key: raw for key, raw in compiled.items() if key[2] == arch and "ttgir" in raw}
    if not kernels and not getattr(get_arch(arch), "triton_target", True):
        pytest.skip(f"the installed Triton cannot target {arch}")
    assert kernels, f"nothing compiled for {arch}"
    kinds = set()
    for raw in kernels.values():
        kinds |= check_against_triton(raw["ttgir"])
    # the matrix-core layouts each vendor's kernels use must have been among those checked
    if arch.startswith("gfx"):
        assert {"wmma", "dot_op(wmma)"} <= kinds if arch == "gfx1100" else {"mfma", "dot_op(mfma)"} <= kinds
        assert "slice(blocked)" in kinds and "blocked" in kinds
    elif arch in ("sm_80", "sm_90"):
        assert {"nvidia_mma", "slice(nvidia_mma)", "dot_op(nvidia_mma)"} <= kinds
    else:  # sm_100: the accumulator lives in tensor memory; registers see it through linear layouts
        assert {"linear", "slice(linear)", "blocked"} <= kinds


# ---- the command ----

def run(*args: str):
    from vgprscope.cli.app import _register, app

    _register()
    return CliRunner().invoke(app, list(args))


def test_explain_baseline_gfx942_lists_acc_m_l_q_against_the_allocation(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    r = run("explain", "--variant", "baseline", "--arch", "gfx942")
    assert r.exit_code == 0, r.output
    out = r.stdout
    # 128x128 fp32 acc on 4 wave64 warps: 64 registers per lane, as seed 001's table has it
    assert re.search(r"^acc\s+carried\s+128x128\s+f32\s+mfma 32x32 T\s+64\s+64\s+64$", out, re.M)
    assert re.search(r"^m_i\s+carried\s+128\s+f32\s+slice\(1, mfma 32x32 T\)\s+1\s+1\s+1 \(m_l\)$", out, re.M)
    assert re.search(r"^l_i\s+carried\s+128\s+f32", out, re.M)
    assert re.search(r"^q\s+live-in\s+128x128\s+f16\s+dot_op\(A, mfma 32x32 T, k4\)\s+64\s+32\s+32$", out, re.M)
    assert re.search(r"carried 66 \+ live-in 32 = 98 of \d+ allocated; remainder", out)
    assert "counted from their shapes (256 threads share each tile): acc 64 + q 32 + s 32 + m_l 1 = 129" in \
        " ".join(out.split())
    assert max(len(ln) for ln in out.splitlines()[1:]) <= 100


def test_explain_waves_per_eu_3_lists_spill_sites_in_and_out_of_the_loop():
    r = run("explain", "--variant", "baseline", "--arch", "gfx942", "--waves-per-eu", "3", "--format", "json")
    assert r.exit_code == 0, r.output
    kernel = json.loads(r.stdout)["kernels"][0]
    sites = kernel["spill_sites"]
    assert sites and {s["in_loop"] for s in sites} == {True, False}
    assert sum(s["stores"] for s in sites) == kernel["allocation"]["spill_stores"] > 0
    assert sum(s["reloads"] for s in sites) == kernel["allocation"]["spill_reloads"] > 0
    assert all(s["location"][-1].startswith(("baseline.py:", "<no line>")) for s in sites)


def test_explain_bad_format_is_a_usage_error():
    r = run("explain", "--format", "csv")
    assert r.exit_code == 2


def test_explain_a_captured_user_kernel(tmp_path):
    """A kernel nobody here wrote, captured from its own script: its loop, live tensors and allocation."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    cap = tmp_path / "cap.json"
    done = subprocess.run([sys.executable, "-m", "vgprscope", "capture", "-o", str(cap), "--", sys.executable,
                           str(root / "tests" / "fixtures" / "user_kernels" / "run_ops.py")],
                          capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr
    r = run("explain", "--capture", str(cap), "--arch", "gfx942", "--format", "json")
    assert r.exit_code == 0, r.output
    kernels = json.loads(r.stdout)["kernels"]
    rows = [k for k in kernels if k["kernel"] == "scale_rows"]
    assert len(rows) == 2 and all(k["error"] is None for k in rows)  # the two pruned autotune configs
    for k in rows:
        (loop,) = k["loops"]
        assert loop["location"] == ["my_ops.py:19"]  # `for start in range(0, n_cols, BLOCK)`
        assert k["allocation"]["registers"] > 0 and k["estimate"] is None


# ---- a capture's what-if: explain applies a launch option as analyze does -----------------------------

@pytest.fixture(scope="module")
def matmul_cap(matmul_capture):
    """A user's GEMM (run_matmul.py: 64x64x32 tiles with 4 warps, 64x32x64 with 1 warp), captured
    (tests/conftest.py: once per test process)."""
    return matmul_capture.path


def _by_config(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["kernel"], tuple(sorted(r["config"]["constexprs"].items()))): r for r in rows}


@pytest.mark.parametrize("flag, option, value", [("--waves-per-eu", "waves_per_eu", 8),
                                                 ("--num-warps", "num_warps", 8)])
def test_explain_of_a_capture_applies_a_what_if_launch_option_as_analyze_does(matmul_cap, flag, option,
                                                                                value):
    """``explain --capture X --waves-per-eu 8`` explains the launch at waves_per_eu 8: the allocation and
    spills it shows are analyze's for the same arguments (at waves_per_eu 8 the 1-warp GEMM spills), the
    option is in each kernel's config, and the library's ``explain(capture=..., waves_per_eu=8)`` agrees."""
    import vgprscope

    args = ("--capture", str(matmul_cap), "--arch", "gfx942", flag, str(value), "--jobs", "1", "-f", "json")
    ex = run("explain", *args)
    assert ex.exit_code == 0, ex.output
    an = run("analyze", *args)
    assert an.exit_code == 0, an.output
    rows = _by_config(json.loads(an.stdout)["rows"])
    assert len(rows) == 2 and all(r["config"]["options"][option] == value for r in rows.values())
    kernels = json.loads(ex.stdout)["kernels"]
    lib = vgprscope.explain(capture=matmul_cap, arch="gfx942", jobs=1, **{option: value}).explanations
    assert [k.as_dict() for k in lib] == kernels and len(kernels) == 2
    spilled = 0
    for k in kernels:  # each explained kernel is analyze's row of the same tile (BN: 64 with 4 warps, 32 with 1)
        [row] = [r for (_, consts), r in rows.items() if f"BN={dict(consts)['BN']} " in k["config"]]
        u = row["usage"]
        assert k["allocation"]["registers"] == u["vgpr_total"]
        assert (k["allocation"]["spill_stores"], k["allocation"]["spill_reloads"]) == (u["spill_stores"],
                                                                                       u["spill_loads"])
        assert k["num_warps"] == row["config"]["options"]["num_warps"]
        spilled += u["spill_stores"]
        if option == "waves_per_eu":
            assert f"waves_per_eu={value}" in k["config"]
        else:
            assert k["num_warps"] == value
    if option == "waves_per_eu":
        assert spilled > 0  # the what-if makes the 1-warp GEMM spill: a dropped option would show none


def test_explain_of_a_capture_alone_refuses_a_variant_option_as_analyze_does(matmul_cap):
    """A grid option that applies to the bundled variants only (``--block-m``) is refused with one line for
    a capture alone, by explain as by analyze, never silently dropped."""
    for command in ("analyze", "explain"):
        r = run(command, "--capture", str(matmul_cap), "--arch", "gfx942", "--block-m", "64", "--jobs", "1")
        assert r.exit_code == 2, (command, r.output)
        assert "--block-m applies to the bundled variants, not to captured launches" in r.output


_EXPLAIN = ["-m", "vgprscope", "explain", "--variant", "baseline", "--arch", "gfx942", "--jobs", "1"]


@pytest.fixture(scope="module")
def explained_cold(tmp_path_factory):
    """A cache holding one whole entry, from ``explain`` on a cold cache, and what that run printed: each
    case below corrupts a copy of it (the cold compile is made once, not once per case)."""
    import subprocess
    import sys

    cache = tmp_path_factory.mktemp("explained") / "cache"
    first = subprocess.run([sys.executable, *_EXPLAIN], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "VGPRSCOPE_CACHE_DIR": str(cache)})
    assert first.returncode == 0, first.stderr
    return cache, first.stdout


@pytest.mark.parametrize("no_cache", [False, True], ids=["cached", "no-cache"])
def test_explain_heals_an_unreadable_raw_entry(tmp_path, no_cache, explained_cold):
    """A garbage ``.raw.json.gz`` beside a whole entry made explain say "no compiler outputs", and --no-cache
    did not replace it: it is a miss, compiled again, and the entry is whole afterwards."""
    import shutil
    import subprocess
    import sys

    cold, first_stdout = explained_cold
    shutil.copytree(cold, tmp_path / "cache")
    env = {**os.environ, "VGPRSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    (raw,) = (tmp_path / "cache").rglob("*.raw.json.gz")
    raw.write_bytes(b"not gzip at all")
    again = subprocess.run([sys.executable, *_EXPLAIN] + (["--no-cache"] if no_cache else []), capture_output=True,
                           text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "no compiler outputs" not in again.stdout + again.stderr
    strip = lambda text: [ln for ln in text.splitlines() if " UTC " not in ln]  # noqa: E731 (the date line)
    assert strip(again.stdout) == strip(first_stdout)
    with gzip.open(raw, "rt") as f:
        assert "ttgir" in json.load(f)
