"""Gluon kernels nobody here wrote, compiled through vgprscope and directly through Triton's own Gluon source
(``GluonASTSource``, what ``GluonJITFunction`` compiles with), on the arch each is written for: the counts must
be equal. Writes ``reports/gluon.md``.

    pip download --no-deps amd-aiter==0.1.7.post2.dev18 -d /tmp/aiter
    pip install --no-deps --target /tmp/aiter/site /tmp/aiter/amd_aiter-*.whl
    python scripts/gluon_proof.py --aiter /tmp/aiter/site

aiter (AMD, MIT license): ``aiter/ops/triton/gluon/gemm_a8w8_blockscale.py``, the fp8 block-scale GEMM written
in Gluon for CDNA4 (MFMA v4, ``V_MFMA_F32_16X16X32_FP8_FP8``: gfx950), at each M bucket of aiter's own MI350X
config file (``configs/gemm/gluon/MI350X-GEMM-A8W8_BLOCKSCALE.json``) for N = K = 7168. aiter's package
``__init__`` reads the ROCm version and fails on a machine without ROCm: its Gluon module is imported with
that ``__init__`` skipped (the kernel's own file and the helpers it imports are aiter's, unchanged). The
launch arguments are the ones aiter's ``gemm_a8w8_blockscale`` passes for tensors of those shapes.

The direct compile's signature is written from the launch values by Triton's specialisation rules (an int
equal to 1 is a constexpr, one divisible by 16 carries ``tt.divisibility``; a pointer is 16-byte aligned and,
on AMD, within 2 GiB), independently of vgprscope's capture and worker.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AITER_MODULE = "aiter.ops.triton.gluon.gemm_a8w8_blockscale"
AITER_KERNEL = "_gemm_a8w8_blockscale_kernel"
AITER_CONFIGS = "aiter/ops/triton/configs/gemm/gluon/MI350X-GEMM-A8W8_BLOCKSCALE.json"


def skip_package_init(name: str) -> None:
    """``name`` as a bare package over its directory: its submodules import, its ``__init__`` does not run."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed on the path given")
    pkg = types.ModuleType(name)
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules[name] = pkg


# The direct compile, in a process of its own: GluonASTSource with the signature written out.
DIRECT = r"""
import importlib, json, sys, types, importlib.util
site, spec = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, site)
s = importlib.util.find_spec("aiter")
pkg = types.ModuleType("aiter"); pkg.__path__ = list(s.submodule_search_locations); sys.modules["aiter"] = pkg
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from vgprscope.parse.amdgcn import parse_amdgcn
fn = getattr(importlib.import_module(spec["module"]), spec["kernel"])
while not hasattr(fn, "is_gluon"):
    fn = fn.fn
names = [p.name for p in fn.params]
src = GluonASTSource(fn, spec["signature"], {(names.index(k),): v for k, v in spec["constexprs"].items()},
                     {(names.index(k),): v for k, v in spec["attrs"].items()})
k = triton.compile(src, target=GPUTarget("hip", spec["arch"], 64), options=spec["options"])
u = parse_amdgcn(k.asm["amdgcn"], k.metadata.shared)
print(json.dumps({"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}))
"""

POINTER_ATTRS = [["tt.divisibility", 16], ["tt.pointer_range", 32]]


def direct_spec(values: dict, pointers: dict[str, str], declared: set[str]) -> tuple[dict, dict, dict]:
    """signature, constexprs, attrs of a launch by Triton's specialisation rules (``declared``: the
    parameters annotated constexpr)."""
    signature, constexprs, attrs = {}, {}, {}
    for name, v in values.items():
        if name in pointers:
            signature[name], attrs[name] = f"*{pointers[name]}", POINTER_ATTRS
        elif name in declared or isinstance(v, bool) or not isinstance(v, int) or v == 1:
            signature[name], constexprs[name] = "constexpr", v
        else:
            signature[name] = "i32"
            if v % 16 == 0:
                attrs[name] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def aiter_launches(site: str) -> list[tuple[str, dict, dict]]:
    """(bucket, launch values in the kernel's order, launch options) per M bucket of aiter's config file,
    as aiter's ``gemm_a8w8_blockscale`` (and its ``_get_config``) build them for x (M, 7168) fp8, w (7168,
    7168) fp8 with 128 x 128 scale blocks, y bf16."""
    configs = json.loads((Path(site) / AITER_CONFIGS).read_text())
    n = k = 7168
    scale_k, scale_n = cdiv(k, 128), cdiv(n, 128)
    out = []
    for bucket, cfg in configs.items():
        m = int(bucket.removeprefix("M_LEQ_")) if bucket.startswith("M_LEQ_") else 1024
        cfg = dict(cfg)
        cfg["SPLITK_BLOCK_SIZE"] = cdiv(k, cfg["NUM_KSPLIT"])
        if cfg["BLOCK_SIZE_K"] > cfg["SPLITK_BLOCK_SIZE"]:
            cfg["BLOCK_SIZE_K"] = next_pow2(cfg["SPLITK_BLOCK_SIZE"])
            if cfg["BLOCK_SIZE_K"] > cfg["SPLITK_BLOCK_SIZE"]:
                cfg["BLOCK_SIZE_K"] //= 4
        cfg["BLOCK_SIZE_K"] = max(cfg["BLOCK_SIZE_K"], 16)
        cfg["GROUP_K"] = next_pow2(cdiv(k, scale_k))
        cfg["GROUP_N"] = next_pow2(cdiv(n, scale_n))
        split = cfg["NUM_KSPLIT"] > 1
        values = {"a_ptr": 0, "b_ptr": 0, "c_ptr": 0, "a_scale_ptr": 0, "b_scale_ptr": 0, "M": m, "N": n, "K": k,
                  "stride_am": k, "stride_ak": 1, "stride_bk": 1, "stride_bn": k,  # w.T of a contiguous (N, K)
                  "stride_ck": m * n if split else 0, "stride_cm": n, "stride_cn": 1,
                  "stride_ascale_m": scale_k, "stride_ascale_k": 1, "stride_bscale_k": 1, "stride_bscale_n": scale_n}
        options = {o: cfg.pop(o) for o in ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim")}
        values |= {key: cfg[key] for key in ("GROUP_K", "GROUP_N", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                               "GROUP_SIZE_M", "NUM_KSPLIT", "SPLITK_BLOCK_SIZE")}
        # the kernel's @triton.heuristics, as aiter writes them
        values["EVEN_K"] = k % cfg["BLOCK_SIZE_K"] == 0
        values["GRID_MN"] = cdiv(m, cfg["BLOCK_SIZE_M"]) * cdiv(n, cfg["BLOCK_SIZE_N"])
        values["NUM_WARPS"] = options["num_warps"]
        values["cache_modifier"] = cfg["cache_modifier"]
        out.append((f"{bucket} (M={m}, N=K={n})", values, options))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aiter", required=True, help="a directory amd-aiter is installed in (pip --target)")
    ap.add_argument("--out", default=str(ROOT / "reports" / "gluon.md"))
    args = ap.parse_args()
    sys.path.insert(0, args.aiter)
    skip_package_init("aiter")
    import triton

    import vgprscope

    module = importlib.import_module(AITER_MODULE)
    kernel = getattr(module, AITER_KERNEL)
    version = getattr(sys.modules.get("aiter.ops.triton.gluon"), "__version__", None)
    rows = []
    arch = "gfx950"
    pointers = {"a_ptr": "fp8e4nv", "b_ptr": "fp8e4nv", "a_scale_ptr": "fp32", "b_scale_ptr": "fp32"}
    for bucket, values, options in aiter_launches(args.aiter):
        ptrs = pointers | {"c_ptr": "fp32" if values["NUM_KSPLIT"] > 1 else "bf16"}
        heuristic = ("EVEN_K", "GRID_MN")
        call_args = [vgprscope.pointer(ptrs[n]) if n in ptrs else v for n, v in values.items()
                     if n not in heuristic and n not in ("GROUP_K", "GROUP_N", "BLOCK_SIZE_M", "BLOCK_SIZE_N",
                                                         "BLOCK_SIZE_K", "GROUP_SIZE_M", "NUM_KSPLIT",
                                                         "SPLITK_BLOCK_SIZE", "NUM_WARPS", "cache_modifier")]
        kwargs = {n: values[n] for n in ("GROUP_K", "GROUP_N", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K",
                                         "GROUP_SIZE_M", "NUM_KSPLIT", "SPLITK_BLOCK_SIZE", "NUM_WARPS",
                                         "cache_modifier")} | options
        t0 = time.perf_counter()
        (row,) = vgprscope.analyze(kernel, *call_args, arch=arch, jobs=1, **kwargs).records
        ours = None
        if row.status == "ok":
            u = row.usage
            ours = {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
        jit = kernel
        while not hasattr(jit, "is_gluon"):
            jit = jit.fn
        signature, constexprs, attrs = direct_spec(values, ptrs, {p.name for p in jit.params if p.is_constexpr})
        spec = {"module": AITER_MODULE, "kernel": AITER_KERNEL, "arch": arch, "signature": signature,
                "constexprs": constexprs, "attrs": attrs, "options": options}
        env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1",
               "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", DIRECT, args.aiter, json.dumps(spec)], capture_output=True,
                              text=True, env=env)
        direct = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
        why = "" if done.returncode == 0 else done.stderr.strip().splitlines()[-1][:120]
        rows.append((bucket, options, row.status, ours, direct, why, time.perf_counter() - t0))
        print(bucket, row.status, ours, direct, why, file=sys.stderr)
    equal = sum(1 for r in rows if r[3] is not None and r[3] == r[4])
    lines = [
        "# Gluon kernels nobody here wrote: vgprscope against a direct Gluon compile", "",
        f"Reproduce: `python scripts/gluon_proof.py --aiter DIR` (the script's docstring installs amd-aiter into "
        f"DIR). Triton {triton.__version__}, GPU-free.", "",
        f"aiter {version or '0.1.7.post2.dev18'} (AMD, MIT license) `{AITER_MODULE}.{AITER_KERNEL}`: fp8 "
        "block-scale GEMM written in Gluon for CDNA4 (MFMA v4 layouts), compiled for gfx950 at each M bucket of "
        "aiter's own MI350X config file, N = K = 7168. vgprscope: `vgprscope.analyze(kernel, *args, arch=\"gfx950\", "
        "**config)`; direct: `triton.compile(GluonASTSource(...), target=GPUTarget(\"hip\", \"gfx950\", 64))` "
        "with the signature written from the launch values.", "",
        f"**{equal} of {len(rows)} equal.**", "",
        "Where the counts say more: a bucket whose VGPR count is 256 with scratch bytes spills on gfx950 (the "
        "compiler's own allocation, both ways the same).", "",
        "| config | options | vgprscope (VGPRs / SGPRs / LDS B / scratch) | direct | equal |",
        "|---|---|---|---|---|",
    ]

    def cell(c: dict | None, fallback: str) -> str:
        return f"{c['vgpr_total']} / {c['sgpr']} / {c['lds']} / {c['scratch']}" if c else fallback

    for bucket, options, status, ours, direct, why, _ in rows:
        opts = ", ".join(f"{k}={v}" for k, v in options.items())
        lines.append(f"| {bucket} | {opts} | {cell(ours, status)} | {cell(direct, why)} | "
                     f"{'yes' if ours is not None and ours == direct else 'NO'} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {equal} of {len(rows)} equal", file=sys.stderr)


if __name__ == "__main__":
    main()
