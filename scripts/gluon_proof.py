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
import importlib, importlib.util, json, sys, types
load, spec = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if "aiter" in load:
    sys.path.insert(0, load["aiter"])
    s = importlib.util.find_spec("aiter")
    pkg = types.ModuleType("aiter"); pkg.__path__ = list(s.submodule_search_locations); sys.modules["aiter"] = pkg
    module = importlib.import_module(load["module"])
else:
    s = importlib.util.spec_from_file_location(load["module"], load["file"])
    module = importlib.util.module_from_spec(s); sys.modules[load["module"]] = module; s.loader.exec_module(module)
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from vgprscope.runtime.stored import cuobjdump_resources as _cuobjdump_resources
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources
fn = getattr(module, spec["kernel"])
while not hasattr(fn, "is_gluon"):
    fn = fn.fn
names = [p.name for p in fn.params]
arch = spec["arch"]
hip = arch.startswith("gfx")
target = GPUTarget("hip", arch, 64) if hip else GPUTarget("cuda", int(arch[3:]), 32)
attrs = {(names.index(k),): [a for a in v if hip or a[0] != "tt.pointer_range"] for k, v in spec["attrs"].items()}
src = GluonASTSource(fn, spec["signature"], {(names.index(k),): v for k, v in spec["constexprs"].items()}, attrs)
k = triton.compile(src, target=target, options=spec["options"])
if hip:
    u = parse_amdgcn(k.asm["amdgcn"], k.metadata.shared)
    print(json.dumps({"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}))
else:
    r = parse_cuobjdump_resources(_cuobjdump_resources(k.asm["cubin"]), k.metadata.name)
    print(json.dumps({"regs": r["REG"], "stack": r.get("STACK", 0), "shared": r.get("SHARED", 0) + k.metadata.shared}))
"""


def direct_compile(load: dict, spec: dict) -> tuple[dict | None, str]:
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", DIRECT, json.dumps(load), json.dumps(spec)], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["?"])[-1][:120]
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def counts(row) -> dict | None:
    if row.status != "ok":
        return None
    u = row.usage
    if row.arch.startswith("gfx"):
        return {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    return {"regs": u.regs, "stack": u.stack_bytes, "shared": u.shared_bytes}


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
            signature[name] = "i32" if -(2**31) <= v < 2**31 else ("i64" if v < 2**63 else "u64")
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


TUTORIAL = "python/tutorials/gluon/01-intro.py"
TUTORIAL_COMMIT = "3142bd1c90982049ca2acda66e9fbbe2367ecbe6"  # the revision of it this report was made from
TUTORIAL_ARCHS = ["sm_90", "sm_100", "gfx942", "gfx950"]  # no layout, no arch-specific op: every arch


def jit_of(kernel):
    while not hasattr(kernel, "is_gluon"):
        kernel = kernel.fn
    return kernel


def aiter_rows(site: str) -> list[tuple]:
    import vgprscope

    sys.path.insert(0, site)
    skip_package_init("aiter")
    kernel = getattr(importlib.import_module(AITER_MODULE), AITER_KERNEL)
    declared = {p.name for p in jit_of(kernel).params if p.is_constexpr}
    meta = ("GROUP_K", "GROUP_N", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "NUM_KSPLIT",
            "SPLITK_BLOCK_SIZE", "NUM_WARPS", "cache_modifier")
    pointers = {"a_ptr": "fp8e4nv", "b_ptr": "fp8e4nv", "a_scale_ptr": "fp32", "b_scale_ptr": "fp32"}
    rows = []
    for bucket, values, options in aiter_launches(site):
        ptrs = pointers | {"c_ptr": "fp32" if values["NUM_KSPLIT"] > 1 else "bf16"}
        call_args = [vgprscope.pointer(ptrs[n]) if n in ptrs else v for n, v in values.items()
                     if n not in ("EVEN_K", "GRID_MN", *meta)]  # the heuristics' own two are derived
        kwargs = {n: values[n] for n in meta} | options
        (row,) = vgprscope.analyze(kernel, *call_args, arch="gfx950", jobs=1, **kwargs).records
        signature, constexprs, attrs = direct_spec(values, ptrs, declared)
        direct, why = direct_compile({"aiter": site, "module": AITER_MODULE}, {
            "kernel": AITER_KERNEL, "arch": "gfx950", "signature": signature, "constexprs": constexprs,
            "attrs": attrs, "options": options})
        rows.append(("aiter", AITER_KERNEL, f"{bucket}; {_opts(options)}", "gfx950", row.status, counts(row),
                     direct, why))
    return rows


def tutorial_rows(triton_src: str) -> list[tuple]:
    import vgprscope

    file = str(Path(triton_src) / TUTORIAL)
    name = "triton_gluon_tutorial_01_intro"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{file}: not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    load = {"file": file, "module": name}
    f32 = vgprscope.pointer("fp32")
    ptr = {"in_ptr": "fp32", "out_ptr": "fp32"}
    # (kernel, launch values as the tutorial's launchers pass them, launch options)
    launches = [("copy_scalar_kernel", {"in_ptr": 0, "out_ptr": 0}, {"num_warps": 1}),
                ("memcpy_kernel", {"in_ptr": 0, "out_ptr": 0, "xnumel": 500, "XBLOCK": 64}, {"num_warps": 1})]
    rows = []
    for arch in TUTORIAL_ARCHS:
        for kname, values, options in launches:
            kernel = getattr(module, kname)
            args = [f32 if n in ptr else v for n, v in values.items()]
            (row,) = vgprscope.analyze(kernel, *args, arch=arch, jobs=1, **options).records
            signature, constexprs, attrs = direct_spec(values, ptr, {p.name for p in jit_of(kernel).params
                                                                     if p.is_constexpr})
            direct, why = direct_compile(load, {"kernel": kname, "arch": arch, "signature": signature,
                                                "constexprs": constexprs, "attrs": attrs, "options": options})
            rows.append(("Triton tutorial", kname, _opts(values | options), arch, row.status, counts(row), direct,
                         why))
        # the autotuned memcpy at the tutorial's own size (2 << 30 elements: an i64): each config its own row
        tuned = module.memcpy_kernel_autotune
        records = vgprscope.analyze(tuned, f32, f32, 2 << 30, arch=arch, jobs=1).records
        for cfg, row in zip(tuned.configs, records):
            xblock = cfg.kwargs["XBLOCK"]
            if f"XBLOCK={xblock}" not in row.config.short():
                raise SystemExit(f"autotune rows out of order: {row.config.short()} for XBLOCK={xblock}")
            values = {"in_ptr": 0, "out_ptr": 0, "xnumel": 2 << 30, "XBLOCK": xblock}
            options = {"num_warps": cfg.num_warps}
            signature, constexprs, attrs = direct_spec(values, ptr, {"XBLOCK"})
            direct, why = direct_compile(load, {"kernel": "memcpy_kernel_autotune", "arch": arch,
                                                "signature": signature, "constexprs": constexprs, "attrs": attrs,
                                                "options": options})
            rows.append(("Triton tutorial", "memcpy_kernel_autotune", _opts(values | options), arch, row.status,
                         counts(row), direct, why))
    return rows


def _opts(d: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items() if k not in ("in_ptr", "out_ptr"))


def _cell(c: dict | None, fallback: str) -> str:
    if c is None:
        return fallback
    if "vgpr_total" in c:
        return f"{c['vgpr_total']} VGPR / {c['sgpr']} SGPR / {c['lds']} B LDS / {c['scratch']} B scratch"
    return f"{c['regs']} regs / {c['stack']} B stack / {c['shared']} B shared"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aiter", help="a directory amd-aiter is installed in (pip --target)")
    ap.add_argument("--triton-src", help="a checkout of triton-lang/triton at the installed release's tag")
    ap.add_argument("--out", default=str(ROOT / "reports" / "gluon.md"))
    args = ap.parse_args()
    if not (args.aiter or args.triton_src):
        raise SystemExit("give --aiter DIR, --triton-src DIR or both")
    import triton

    rows = (tutorial_rows(args.triton_src) if args.triton_src else []) + (aiter_rows(args.aiter) if args.aiter else [])
    for r in rows:
        print(*r, file=sys.stderr)
    equal = sum(1 for r in rows if r[5] is not None and r[5] == r[6])
    given = " ".join(x for x in (f"--triton-src {args.triton_src and 'TRITON'}" if args.triton_src else "",
                                 "--aiter AITER" if args.aiter else "") if x)
    lines = [
        "# Gluon kernels nobody here wrote: vgprscope against a direct Gluon compile", "",
        f"Reproduce: `python scripts/gluon_proof.py {given}` (TRITON: a checkout of triton-lang/triton; this "
        f"report read the tutorial's code at commit {TUTORIAL_COMMIT[:12]}, its docstring and comments left out; "
        f"AMD's aiter installed as the script's docstring says). Triton {triton.__version__}, "
        "GPU-free. vgprscope: `vgprscope.analyze(kernel, *args, arch=ARCH, **launch)`; direct: "
        "`triton.compile(GluonASTSource(...), target=GPUTarget(...))` in a process of its own, with the signature "
        "written from the launch values by Triton's specialisation rules.", "",
        f"**{equal} of {len(rows)} equal.**", "",
    ]
    if args.triton_src:
        lines += [f"- Triton's Gluon tutorial `{TUTORIAL}` (MIT license): its three kernels (`copy_scalar_kernel`, "
                  "`memcpy_kernel`, the autotuned `memcpy_kernel_autotune` with each of its six configs), with "
                  "the launch values of its launchers and tests, on every arch (they use no layout and no "
                  "arch-specific op)."]
    if args.aiter:
        lines += [f"- aiter 0.1.7.post2.dev18 (AMD, MIT license) `{AITER_MODULE}.{AITER_KERNEL}`: fp8 block-scale "
                  "GEMM written in Gluon for CDNA4 (MFMA v4 layouts), on gfx950 at each M bucket of aiter's own "
                  "MI350X config file, N = K = 7168. Two buckets allocate 256 VGPRs and spill 68 B of scratch: the "
                  "compiler's own allocation, the same both ways."]
    lines += ["", "| source | kernel | launch | arch | vgprscope | direct | equal |", "|---|---|---|---|---|---|---|"]
    for source, kernel, launch, arch, status, ours, direct, why in rows:
        lines.append(f"| {source} | `{kernel}` | {launch} | {arch} | {_cell(ours, status)} | {_cell(direct, why)} | "
                     f"{'yes' if ours is not None and ours == direct else 'NO'} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {equal} of {len(rows)} equal", file=sys.stderr)


if __name__ == "__main__":
    main()
