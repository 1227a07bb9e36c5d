"""Gluon kernels (``@gluon.jit``, triton.experimental.gluon) take every path a ``@triton.jit`` kernel takes:
compiled through Gluon's own source with counts equal to a direct compile of that source, a layout written
for another warp size or an instruction the arch lacks as a row that says so, explain's partitions of a
warp-specialized kernel, and a capture that marks a Gluon launch (and says Gluon has no interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli, usage_counts

import vgprscope
from vgprscope.captures.model import load_capture
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources

GLUON = ROOT / "tests" / "fixtures" / "gluon_kernels"

# A direct compile through Triton's own Gluon source (GluonASTSource, what GluonJITFunction compiles with),
# the signature and constexprs written out by hand, printing the compiler outputs the counts are read from
# (parsed in the test's process: another release's Python has Triton and the standard library only).
DIRECT = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from vgprscope.runtime.stored import cuobjdump_resources as _cuobjdump_resources

spec = json.loads(sys.argv[2])
module, _, name = spec["kernel"].partition(":")
obj = importlib.import_module(module)
for part in name.split("."):
    obj = getattr(obj, part)
names = list(spec["signature"])
constexprs = {(names.index(k),): v for k, v in spec["constexprs"].items()}
out = {}
for arch in spec["archs"]:
    if arch.startswith("gfx"):
        target = GPUTarget("hip", arch, 64)
    else:
        target = GPUTarget("cuda", int(arch[3:]), 32)
    attrs = {(names.index(n),): a for n, a in spec["attrs"][target.backend].items()}
    src = GluonASTSource(obj, spec["signature"], constexprs, attrs)
    k = triton.compile(src, target=target, options=spec["options"])
    text = k.asm["amdgcn"] if target.backend == "hip" else _cuobjdump_resources(k.asm["cubin"])
    out[arch] = {"text": text, "name": k.metadata.name, "shared": k.metadata.shared}
print(json.dumps(out))
"""


def direct_gluon(module_dir: Path, spec: dict, python: str = sys.executable) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, "-c", DIRECT, str(module_dir), json.dumps(spec)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = {}
    for arch, raw in json.loads(done.stdout.strip().splitlines()[-1]).items():
        if arch.startswith("gfx"):
            u = parse_amdgcn(raw["text"], raw["shared"])
            out[arch] = {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
        else:
            r = parse_cuobjdump_resources(raw["text"], raw["name"])
            out[arch] = {"regs": r["REG"], "stack": r.get("STACK", 0), "shared": r.get("SHARED", 0) + raw["shared"]}
    return out


def _aligned(*names: str, ints: tuple[str, ...] = ()) -> dict:
    """Pointers 16-byte aligned within 2 GiB (AMD's pointer_range), integers divisible by 16."""
    return {"hip": {n: [["tt.divisibility", 16], ["tt.pointer_range", 32]] for n in names}
            | {n: [["tt.divisibility", 16]] for n in ints},
            "cuda": {n: [["tt.divisibility", 16]] for n in (*names, *ints)}}


@pytest.fixture(scope="module")
def gluon_ops():
    sys.path.insert(0, str(GLUON))
    try:
        import gluon_ops

        yield gluon_ops
    finally:
        sys.path.remove(str(GLUON))


def test_a_gluon_kernel_compiles_to_the_counts_of_a_direct_gluon_compile(gluon_ops):
    """Each arch with the layout written for its warp size: 32-thread warps on NVIDIA, 64 on CDNA."""
    p = vgprscope.pointer("fp32")
    rows = {}
    for tpw, archs in ((32, ["sm_90", "sm_100"]), (64, ["gfx942", "gfx950"])):
        result = vgprscope.analyze(gluon_ops.scale_copy, p, p, 4096, 0.5, BLOCK=1024, TPW=tpw, arch=archs, jobs=1)
        rows |= {r.arch: r for r in result.records}
        direct = direct_gluon(GLUON, {
            "kernel": "gluon_ops:scale_copy", "archs": archs,
            "signature": {"in_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32", "BLOCK": "constexpr",
                          "TPW": "constexpr"},
            "constexprs": {"BLOCK": 1024, "TPW": tpw}, "attrs": _aligned("in_ptr", "out_ptr", ints=("n",)),
            "options": {"num_warps": 4}})
        for arch in archs:
            assert rows[arch].status == "ok", rows[arch].status
            assert usage_counts(rows[arch]) == direct[arch], arch


def test_a_hopper_wgmma_kernel_equals_a_direct_compile_on_sm_90(gluon_ops):
    h, f = vgprscope.pointer("fp16"), vgprscope.pointer("fp32")
    (row,) = vgprscope.analyze(gluon_ops.wgmma_tile, h, h, f, M=64, N=64, K=64, arch="sm_90", jobs=1).records
    direct = direct_gluon(GLUON, {
        "kernel": "gluon_ops:wgmma_tile", "archs": ["sm_90"],
        "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "constexpr", "N": "constexpr",
                      "K": "constexpr"},
        "constexprs": {"M": 64, "N": 64, "K": 64}, "attrs": _aligned("a_ptr", "b_ptr", "c_ptr"),
        "options": {"num_warps": 4}})
    assert row.status == "ok" and usage_counts(row) == direct["sm_90"]


def test_a_warp32_gluon_kernel_on_gfx942_is_a_row_naming_the_warp_size(gluon_ops):
    p = vgprscope.pointer("fp32")
    (row,) = vgprscope.analyze(gluon_ops.scale_copy, p, p, 4096, 0.5, BLOCK=1024, TPW=32, arch="gfx942",
                               jobs=1).records
    assert row.status.startswith("the kernel's layouts are written for 32-thread warps; gfx942 runs 64-thread "
                                 "warps: RuntimeError: gluon_ops.py:13: Result has an invalid layout")
    assert "\n" not in row.status


def test_wgmma_off_hopper_is_a_row_and_the_other_archs_still_compile(gluon_ops):
    """Triton's NVIDIA backend aborts the process in LLVM on wgmma for sm_100: said before it gets there,
    so the worker lives and the sm_90 row of the same run compiles."""
    h, f = vgprscope.pointer("fp16"), vgprscope.pointer("fp32")
    rows = {r.arch: r for r in vgprscope.analyze(gluon_ops.wgmma_tile, h, h, f, M=64, N=64, K=64,
                                                 arch=["sm_100", "sm_90", "sm_80"], jobs=1).records}
    for arch in ("sm_100", "sm_80"):
        assert rows[arch].status == (f"ValueError: the kernel uses warpgroup_mma (wgmma), an instruction of sm_90 "
                                     f"only: {arch} lacks it")
    assert rows["sm_90"].status == "ok"


def test_explain_names_each_warp_specialize_partition_and_its_registers(gluon_ops):
    p = vgprscope.pointer("fp32")
    result = vgprscope.explain(gluon_ops.warp_specialized, p, p, 4096, BLOCK=1024, arch="sm_100", jobs=1)
    (e,) = result.explanations
    assert [(x.name, x.num_warps, x.requested_registers) for x in e.partitions] == [
        ("default", 4, None), ("partition0", 4, 48)]
    text = result.table()
    assert ("warp_specialize: default 4 warps; partition0 4 warps, 48 registers (worker_num_regs); the compiler "
            "reports registers for the whole kernel") in " ".join(text.split())


def test_a_gluon_launch_under_the_interpreter_is_captured_marked_and_the_cpu_run_told_in_one_line(tmp_path):
    out = tmp_path / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(GLUON / "run_gluon.py"),
               env={"TRITON_INTERPRET": "1"})
    hints = [ln for ln in done.stderr.splitlines() if "hint:" in ln]
    assert hints == ["vgprscope: hint: Gluon kernels do not run in Triton's interpreter (TRITON_INTERPRET=1): "
                     "capture them on a GPU, or analyse one here with vgprscope.analyze(kernel, *args, arch=...)"]
    (launch,) = load_capture(out).launches
    assert launch.gluon and not launch.interpreted and launch.kernel.qualname == "scale_copy"
    rows = vgprscope.analyze(capture=str(out), arch=["sm_90", "gfx942"], jobs=1).records
    assert {r.arch: r.status for r in rows}["sm_90"] == "ok"
    assert "written for 32-thread warps; gfx942 runs 64-thread warps" in {r.arch: r.status for r in rows}["gfx942"]


# ---- Gluon of the Triton repository: its translator's output, built on the Gluon helpers its wheel ships

MATMUL_ARGS = ("A", "B", "C", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")


@pytest.mark.parametrize(("target", "arch"), [("sm90", "sm_90"), ("sm100", "sm_100")])
def test_triton_translator_gluon_matmul_equals_a_direct_gluon_compile(tmp_path, target, arch):
    """Triton's own triton_to_gluon_translator (installed with the release) turns a @triton.jit matmul into a
    Gluon kernel over the release's hopper / blackwell helpers (tl_dot: wgmma on sm_90, tcgen05 on sm_100);
    vgprscope compiles that kernel for the arch it was translated for to the counts of a direct compile."""
    pytest.importorskip("triton.tools.triton_to_gluon_translator")
    name = f"translated_matmul_{target}"
    # the translator's own command line, outside the interpreter (it translates @triton.jit functions only)
    done = subprocess.run([sys.executable, "-m", "triton.tools.triton_to_gluon_translator.translator", "matmul:matmul",
                           "--output-path", str(tmp_path / f"{name}.py"), "--target", target], capture_output=True,
                          text=True, env={**os.environ, "TRITON_INTERPRET": "0",
                                          "PYTHONPATH": str(ROOT / "tests" / "fixtures" / "user_kernels")})
    assert done.returncode == 0, done.stderr[-2000:]
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(name)
        h, f = vgprscope.pointer("fp16"), vgprscope.pointer("fp32")
        (row,) = vgprscope.analyze(module.matmul, h, h, f, 512, 512, 512, 512, 512, 512, BLOCK_M=64, BLOCK_N=64,
                                   BLOCK_K=32, arch=arch, jobs=1).records
    finally:
        sys.path.remove(str(tmp_path))
    direct = direct_gluon(tmp_path, {
        "kernel": f"{name}:matmul", "archs": [arch],
        "signature": {**{n: "i32" for n in MATMUL_ARGS}, "A": "*fp16", "B": "*fp16", "C": "*fp32",
                      "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
        "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
        "attrs": _aligned("A", "B", "C", ints=MATMUL_ARGS[3:]), "options": {"num_warps": 4}})
    assert row.status == "ok", row.status
    assert usage_counts(row) == direct[arch]


@pytest.mark.gpu
def test_a_gluon_launch_captured_on_a_gpu_compiles_to_the_registers_the_driver_loaded(tmp_path):
    """On an NVIDIA GPU the Gluon launch runs (no interpreter), is captured and marked; its compile GPU-free
    gives the register count of the kernel Gluon's JIT loaded."""
    out = tmp_path / "cap.json"
    done = cli("capture", "-o", str(out), "--", sys.executable, str(GLUON / "run_gluon.py"),
               env={"TRITON_INTERPRET": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    (launch,) = load_capture(out).launches
    assert launch.gluon and not launch.interpreted
    (row,) = vgprscope.analyze(capture=str(out), arch=loaded["arch"], jobs=1).records
    assert row.status == "ok" and row.usage.regs == loaded["n_regs"], (row.status, loaded)


# ---- Triton 3.6.0, the GPU machine's release: Gluon through that release's own worker ---------------------

def test_gluon_under_triton_3_6_equals_its_direct_compile_and_says_what_it_rejects(gluon_ops, release36):
    p, h = vgprscope.pointer("fp32"), vgprscope.pointer("fp16")
    rows = {r.arch: r for r in vgprscope.analyze(gluon_ops.scale_copy, p, p, 4096, 0.5, BLOCK=1024, TPW=32,
                                                 arch=["sm_90", "gfx942"], triton="3.6.0", jobs=1).records}
    assert {r.triton_version for r in rows.values()} == {"3.6.0"}
    assert rows["gfx942"].status.startswith("the kernel's layouts are written for 32-thread warps; gfx942 runs "
                                            "64-thread warps")
    direct = direct_gluon(GLUON, {
        "kernel": "gluon_ops:scale_copy", "archs": ["sm_90"],
        "signature": {"in_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32", "BLOCK": "constexpr",
                      "TPW": "constexpr"},
        "constexprs": {"BLOCK": 1024, "TPW": 32}, "attrs": _aligned("in_ptr", "out_ptr", ints=("n",)),
        "options": {"num_warps": 4}}, python=release36.python)
    assert rows["sm_90"].status == "ok" and usage_counts(rows["sm_90"]) == direct["sm_90"]
    (wgmma,) = vgprscope.analyze(gluon_ops.wgmma_tile, h, h, p, M=64, N=64, K=64, arch="sm_100", triton="3.6.0",
                                 jobs=1).records
    assert wgmma.status == "ValueError: the kernel uses warpgroup_mma (wgmma), an instruction of sm_90 only: " \
                           "sm_100 lacks it"
