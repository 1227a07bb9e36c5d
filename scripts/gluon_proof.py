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

Triton's Gluon tutorials (``--triton-src TRITON``: a directory holding ``python/tutorials/gluon/NN-*.py`` at
the revisions ``TUTORIAL_COMMITS`` names) are launched through their own launchers: the script replaces each
``@gluon.jit`` kernel of the module with a recorder, calls the launcher with CPU tensors at the shapes of the
tutorial's tests, and hands each recorded ``kernel[grid](*args, **kwargs)`` to ``vgprscope.analyze``. A
tutorial written for an older Gluon API (03, 04, 08: ``async_copy_global_to_shared``) is compiled under the
installed release (its error, on both sides) and under the release it is written for, as a toolchain.

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


# The direct compile, in a process of its own (under the release's own Python): GluonASTSource with the
# signature written out, constexprs given as source text (a layout as its constructor); it prints the compiler
# outputs, parsed here (another release's Python has Triton and the standard library only).
DIRECT = r"""
import importlib, importlib.util, json, sys, types
load, specs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for name in ("pytest", "torch"):  # a release's toolchain has neither: the tutorials' tests and launchers use them
    try:
        importlib.import_module(name)
    except ImportError:
        stub = types.ModuleType(name)
        stub.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f),
                                          skipif=lambda *a, **k: (lambda f: f))
        sys.modules[name] = stub
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
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from vgprscope.runtime.stored import cuobjdump_resources
scope = {n: getattr(gl, n) for n in dir(gl) if n.endswith("Layout")}
for spec in specs:
    fn = getattr(module, spec["kernel"])
    while not hasattr(fn, "is_gluon"):
        fn = fn.fn
    names = [p.name for p in fn.params]
    arch = spec["arch"]
    hip = arch.startswith("gfx")
    target = GPUTarget("hip", arch, 64) if hip else GPUTarget("cuda", int(arch[3:]), 32)
    attrs = {(names.index(k),): [a for a in v if hip or a[0] != "tt.pointer_range"] for k, v in spec["attrs"].items()}
    constexprs = {(names.index(k),): eval(v, scope) for k, v in spec["constexprs"].items()}
    src = GluonASTSource(fn, spec["signature"], constexprs, attrs)
    try:
        k = triton.compile(src, target=target, options=spec["options"])
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}), flush=True)
        continue
    text = k.asm["amdgcn"] if hip else cuobjdump_resources(k.asm["cubin"])
    print(json.dumps({"text": text, "name": k.metadata.name, "shared": k.metadata.shared}), flush=True)
"""


def direct_compiles(load: dict, specs: list[dict], release: str | None = None) -> list[tuple[dict | None, str]]:
    """Each spec's direct compile counts, or None and the compiler's message (a release's own error); one
    process for them all."""
    from vgprscope.core.parse.amdgcn import parse_amdgcn
    from vgprscope.core.parse.nvidia import parse_cuobjdump_resources

    python = sys.executable
    if release:
        from vgprscope.compile import toolchains

        python = str(toolchains.release(release).python)
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1", "TRITON_DEFAULT_FP_FUSION": "1",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, "-c", DIRECT, json.dumps(load), json.dumps(specs)], capture_output=True,
                          text=True, env=env)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(answers) != len(specs):
        raise SystemExit(f"direct compile of {load}: {len(answers)} answers for {len(specs)} specs: "
                         + (done.stderr.strip().splitlines() or ["?"])[-1][:300])
    out: list[tuple[dict | None, str]] = []
    for spec, raw in zip(specs, answers):
        if "error" in raw:
            out.append((None, raw["error"][:160]))
        elif spec["arch"].startswith("gfx"):
            u = parse_amdgcn(raw["text"], raw["shared"])
            out.append(({"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes,
                         "scratch": u.scratch_bytes}, ""))
        else:
            r = parse_cuobjdump_resources(raw["text"], raw["name"])
            out.append(({"regs": r["REG"], "stack": r.get("STACK", 0),
                         "shared": r.get("SHARED", 0) + raw["shared"]}, ""))
    return out


def direct_compile(load: dict, spec: dict, release: str | None = None) -> tuple[dict | None, str]:
    return direct_compiles(load, [spec], release)[0]


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


TUTORIAL_COMMITS = {  # the revision of each file this report read (the stored one; see the report's header)
    "01-intro.py": "3142bd1c90982049ca2acda66e9fbbe2367ecbe6",
    "02-layouts.py": "3142bd1c90982049ca2acda66e9fbbe2367ecbe6",
    "03-async-copy.py": "2618691b76cfb633e829acf1ca4d9cdcc33c783a",
    "04-tma.py": "752beb52775c790b5b7f53b8b844171c2f8df73c",
    "08-warp-specialization.py": "12d909bff965bccb355e41133615bf8331cf9475",  # its first kernel
}
EVERY_ARCH = ["sm_90", "sm_100", "gfx942", "gfx950"]
HOPPER_ON = ["sm_90", "sm_100"]  # cp.async, TMA and mbarriers: NVIDIA Hopper and Blackwell


def _cpu(*shape, transpose=False):
    import torch

    t = torch.randn(*shape)
    return t.T if transpose else t


def _launches_01(m):
    import torch

    x = torch.tensor([42.0])
    m.copy_scalar(x, torch.empty_like(x))
    for xnumel in (40, 500):  # test_memcpy
        x = _cpu(xnumel)
        m.memcpy(x, torch.empty_like(x), 64)
    x = _cpu(16)  # memcpy_autotune at __main__'s 2 << 30 elements (an i64 xnumel)
    return [("memcpy_kernel_autotune", (x, torch.empty_like(x), 2 << 30), {})]


def _launches_02(m):
    import torch
    from triton.experimental.gluon import language as gl

    for XBLOCK in (128, 256):  # test_memcpy_1d
        for xnumel in (200, 1000):
            x = _cpu(xnumel)
            m.memcpy_1d_impl(x, torch.empty_like(x), XBLOCK, gl.BlockedLayout([1], [32], [4], [0]), num_warps=4)
    for XBLOCK, YBLOCK in ((128, 256), (256, 128)):  # test_memcpy_2d
        for xnumel, ynumel in ((100, 2000), (1000, 200)):
            for transpose in (False, True):
                x = _cpu(xnumel, ynumel, transpose=transpose)
                m.memcpy_2d_impl(x, torch.empty_like(x), XBLOCK, YBLOCK,
                                 gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0]), num_warps=4)
    return []


def _launches_03(m):
    import torch
    from triton.experimental.gluon import language as gl

    for xnumel, XBLOCK in ((200, 128), (1000, 256)):  # test_memcpy_1d_cpasync
        x = _cpu(xnumel)
        m.memcpy_1d_cpasync(x, torch.empty_like(x), XBLOCK)
    for XBLOCK, YBLOCK in ((32, 32), (128, 128)):  # test_elementwise_add, test_elementwise_add_cpasync
        a, b = _cpu(1000, 2000), _cpu(1000, 2000)
        m.elementwise_add(a, b, torch.empty_like(a), XBLOCK, YBLOCK)
        layout = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])
        m.elementwise_add_cpasync(a, b, torch.empty_like(a), layout, XBLOCK, YBLOCK)
    for xnumel, ynumel in ((1000, 2000), (4000, 120)):  # test_elementwise_add_pipelined
        for num_buffers in (1, 2, 3):
            a, b = _cpu(xnumel, ynumel), _cpu(xnumel, ynumel)
            m.elementwise_add_pipelined(a, b, torch.empty_like(a), 32, 64, num_buffers)
    return []


def _launches_04(m):
    import torch

    for xnumel in (40, 500):  # test_memcpy_1d_tma
        x = _cpu(xnumel)
        m.memcpy_1d_tma(x, torch.empty_like(x), 64)
    for xnumel, ynumel in ((1000, 2000), (4000, 120)):  # test_elementwise_add_pipelined
        for num_buffers in (1, 2, 3):
            a, b = _cpu(xnumel, ynumel), _cpu(xnumel, ynumel)
            m.elementwise_add_tma(a, b, torch.empty_like(a), 32, 64, num_buffers)
    return []


def _launches_08(m):
    import torch

    for xnumel, ynumel in ((1000, 2000), (4000, 120)):  # test_elementwise_add_warp_specialized
        for num_load_buffers, num_store_buffers in ((1, 1), (2, 2)):
            for num_warps in (4, 8):
                a, b = _cpu(xnumel, ynumel), _cpu(xnumel, ynumel)
                m.elementwise_add_warp_specialized(a, b, torch.empty_like(a), 32, 64, num_load_buffers,
                                                   num_store_buffers, num_warps)
    return []


# (file, the archs its kernels are written for, the launches of its tests and launchers, the release it is
# written for where the installed one removed an op it calls: compiled under both)
TUTORIALS = [("01-intro.py", EVERY_ARCH, _launches_01, None), ("02-layouts.py", EVERY_ARCH, _launches_02, None),
             ("03-async-copy.py", HOPPER_ON, _launches_03, "3.7.1"), ("04-tma.py", HOPPER_ON, _launches_04, "3.7.1"),
             ("08-warp-specialization.py", HOPPER_ON, _launches_08, "3.7.1")]


class Recorder:
    """Stands where the tutorial's launcher reads its kernel: ``kernel[grid](*args, **kwargs)`` is recorded,
    nothing is launched."""

    def __init__(self, kernel, name: str, out: list):
        self.kernel, self.name, self.out = kernel, name, out

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.out.append((self.name, args, kwargs))
        return launch


def load_tutorial(triton_src: str, file: str):
    path = Path(triton_src) / "python" / "tutorials" / "gluon" / file
    name = "triton_gluon_tutorial_" + file.removesuffix(".py").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, {"file": str(path), "module": name}


def recorded_launches(module, launches) -> list[tuple]:
    """Each launch the tutorial's own launchers make, as (kernel name, args, kwargs)."""
    out: list = []
    kernels = {n: k for n, k in vars(module).items() if hasattr(k, "__getitem__") and _is_gluon_kernel(k)}
    for n, k in kernels.items():
        setattr(module, n, Recorder(k, n, out))
    try:
        extra = launches(module)
    finally:
        for n, k in kernels.items():
            setattr(module, n, k)
    return [(n, a, kw) for n, a, kw in out + extra if a or kw]


def jit_of(kernel):
    while not hasattr(kernel, "is_gluon"):
        kernel = kernel.fn
    return kernel


def _is_gluon_kernel(k) -> bool:
    try:
        return bool(jit_of(k))
    except AttributeError:
        return False


TORCH_TRITON = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "i32", "int64": "i64",
                "float8_e4m3fn": "fp8e4nv"}


def direct_values(kernel, args, kwargs, config) -> tuple[dict, dict, dict, dict]:
    """signature, constexprs (as source text), attrs and options of one launch (one autotune config), by
    Triton's specialisation rules: a tensor is a pointer (16-byte aligned, within 2 GiB), a descriptor its
    mangled type, an int 1 a constexpr, an int divisible by 16 carries tt.divisibility."""
    fn = jit_of(kernel)
    names = [p.name for p in fn.params]
    declared = {p.name for p in fn.params if p.is_constexpr}
    options = {k: v for k, v in kwargs.items() if k in ("num_warps", "num_stages", "num_ctas", "maxnreg")}
    values = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k not in options}
    if config is not None:
        values |= config.kwargs
        options |= {k: getattr(config, k) for k in ("num_warps", "num_stages") if getattr(config, k, None)}
    signature, constexprs, attrs = {}, {}, {}
    for name in names:
        v = values[name] if name in values else options.get(name, fn.params[names.index(name)].default)
        if hasattr(v, "data_ptr"):
            signature[name] = "*" + TORCH_TRITON[str(v.dtype).removeprefix("torch.")]
            attrs[name] = POINTER_ATTRS
        elif hasattr(v, "__mangle__"):
            signature[name] = v.__mangle__()
        elif name in declared or isinstance(v, bool) or not isinstance(v, int) or v == 1:
            signature[name], constexprs[name] = "constexpr", repr(v)
        else:
            signature[name] = "i32" if -(2**31) <= v < 2**31 else ("i64" if v < 2**63 else "u64")
            if v % 16 == 0:
                attrs[name] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs, options


def tutorial_rows(triton_src: str, only: list[str]) -> list[tuple]:
    import triton

    rows = []
    for file, archs, launches, written_for in TUTORIALS:
        if only and file not in only:
            continue
        for release in (None, written_for) if written_for else (None, ):
            rows += [(*r, release or triton.__version__)
                     for r in _tutorial_rows(triton_src, file, archs, launches, release)]
    return rows


def _tutorial_rows(triton_src: str, file: str, archs: list[str], launches, release: str | None) -> list[tuple]:
    """One row per distinct compile (kernel, arch, signature, constexprs, attributes, options) of the launches."""
    import vgprscope

    module, load = load_tutorial(triton_src, file)
    pending, seen = [], set()
    for kname, args, kwargs in recorded_launches(module, launches):
        kernel = getattr(module, kname)
        configs = getattr(kernel, "configs", None) or [None]
        extra = {"triton": release} if release else {}
        for arch in archs:
            records = vgprscope.analyze(kernel, *args, arch=arch, jobs=1, **kwargs, **extra).records
            if len(records) != len(configs):
                raise SystemExit(f"{kname}: {len(records)} rows for {len(configs)} configs")
            for cfg, row in zip(configs, records):
                signature, constexprs, attrs, options = direct_values(kernel, args, kwargs, cfg)
                spec = {"kernel": kname, "arch": arch, "signature": signature, "constexprs": constexprs,
                        "attrs": attrs, "options": options}
                key = json.dumps(spec, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    pending.append((kname, spec, row))
        print(f"{file} {release or 'installed'}: {kname} recorded", file=sys.stderr, flush=True)
    directs = direct_compiles(load, [spec for _, spec, _ in pending], release)
    rows = []
    for (kname, spec, row), (direct, why) in zip(pending, directs):
        shown = {k: v for k, v in spec["signature"].items() if v != "constexpr" and not v.startswith("*")}
        launch = ", ".join([f"{k}={v}" for k, v in spec["constexprs"].items()]
                           + [f"{k}: {v.split(',')[0]}...>" if v.startswith("tensordesc") else f"{k}: {v}"
                              for k, v in shown.items()]
                           + [f"{k}={v}" for k, v in spec["options"].items()])
        rows.append((f"tutorial {file.removesuffix('.py')}", kname, _short(launch), spec["arch"], row.status,
                     counts(row), direct, why))
    return rows


def ws_explain(triton_src: str, release: str = "3.7.1") -> list[str]:
    """``vgprscope.explain`` of 08's warp-specialised kernel at the tutorial's launcher defaults on sm_90: the
    lines of its warp_specialize block (each partition's warps and registers)."""
    import vgprscope

    module, _ = load_tutorial(triton_src, "08-warp-specialization.py")

    def launch(m):
        a = _cpu(1000, 2000)
        m.elementwise_add_warp_specialized(a, _cpu(1000, 2000), _cpu(1000, 2000))
        return []

    ((name, args, kwargs), ) = recorded_launches(module, launch)
    text = vgprscope.explain(getattr(module, name), *args, arch="sm_90", triton=release, jobs=1,
                             **kwargs).table()
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "warp_specialize:" in line)
    block = [lines[start].strip()]
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        block.append(line.strip())
    return [" ".join(block)]


def _short(text: str) -> str:
    return (text.replace("BlockedLayout(", "Blocked(").replace("SwizzledSharedLayout(", "Swizzled(")
            .replace("size_per_thread=", "spt=").replace("threads_per_warp=", "tpw=")
            .replace("warps_per_cta=", "wpc=").replace(", cga_layout=[]", ""))


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
            "kernel": AITER_KERNEL, "arch": "gfx950", "signature": signature,
            "constexprs": {k: repr(v) for k, v in constexprs.items()},
            "attrs": attrs, "options": options})
        rows.append(("aiter", AITER_KERNEL, f"{bucket}; {_opts(options)}", "gfx950", row.status, counts(row),
                     direct, why))
    return rows


def _opts(d: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in d.items() if k not in ("in_ptr", "out_ptr"))


def _cell(c: dict | None, fallback: str) -> str:
    if c is None:
        return fallback
    if "vgpr_total" in c:
        return f"{c['vgpr_total']} VGPR / {c['sgpr']} SGPR / {c['lds']} B LDS / {c['scratch']} B scratch"
    return f"{c['regs']} regs / {c['stack']} B stack / {c['shared']} B shared"


def _agree(ours: dict | None, direct: dict | None) -> str:
    if ours is not None and ours == direct:
        return "yes"
    if ours is None and direct is None:
        return "both refuse"
    return "NO"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aiter", help="a directory amd-aiter is installed in (pip --target)")
    ap.add_argument("--triton-src", help="a directory holding Triton's python/tutorials/gluon/ files named in the "
                                         "report (TUTORIAL_COMMITS)")
    ap.add_argument("--only", action="append", default=[], help="only this tutorial file (repeatable; a trial run)")
    ap.add_argument("--out", default=str(ROOT / "reports" / "gluon.md"))
    args = ap.parse_args()
    if not (args.aiter or args.triton_src):
        raise SystemExit("give --aiter DIR, --triton-src DIR or both")
    import triton

    rows = []
    if args.triton_src:
        rows += tutorial_rows(args.triton_src, args.only)
    if args.aiter:
        rows += [(*r, triton.__version__) for r in aiter_rows(args.aiter)]
    for r in rows:
        print(*r, file=sys.stderr)
    agree = [_agree(r[5], r[6]) for r in rows]
    equal, refused = agree.count("yes"), agree.count("both refuse")
    given = " ".join(x for x in ("--triton-src TRITON" if args.triton_src else "",
                                 "--aiter AITER" if args.aiter else "") if x)
    lines = [
        "# Gluon kernels nobody here wrote: vgprscope against a direct Gluon compile", "",
        f"Reproduce: `python scripts/gluon_proof.py {given}` (TRITON: a directory with Triton's Gluon tutorial "
        "files at the revisions below; AMD's aiter installed as the script's docstring says). GPU-free. "
        f"Installed Triton {triton.__version__}; 03, 04 and 08 also under Triton 3.7.1 as a toolchain (below). "
        "vgprscope: "
        "`vgprscope.analyze(kernel, *args, arch=ARCH, **launch)` with the arguments the tutorial's own launcher "
        "builds (its `kernel[grid](...)` recorded, nothing launched; CPU tensors, `TensorDescriptor`s and layouts "
        "as the launcher makes them, at its tests' shapes); direct: `triton.compile(GluonASTSource(...), "
        "target=GPUTarget(...))` in a process of its own under that release's Python, with the signature written "
        "from the launch values by Triton's specialisation rules.", "",
        f"**{equal} of {len(rows) - refused} compiled rows equal; {refused} rows refused by both sides** (a "
        "release's own error is a row: vgprscope's row carries it, the direct compile raises it).", "",
    ]
    if args.triton_src:
        lines += ["Triton's Gluon tutorials (MIT license), `python/tutorials/gluon/`, each at the revision named "
                  "(the stored revision found here; the repository's snapshot is over what can be fetched, so "
                  "the v" + triton.__version__ + " tag's own files could not be read): "
                  + ", ".join(f"`{f}` {c[:12]}" for f, c in TUTORIAL_COMMITS.items()) + ". Code as written, "
                  "docstrings, comments and `__main__` benchmarks left out (08: its first kernel, the warp-specialized "
                  "elementwise add, with its launcher and test values). Archs: 01 and 02 use no arch-specific op "
                  "(every arch: sm_90, sm_100, gfx942, gfx950); 03 (cp.async), 04 (TMA, mbarrier) and 08 (TMA, "
                  "`gl.warp_specialize`) are NVIDIA Hopper-and-newer (sm_90, sm_100). Rows: one per distinct "
                  "compile of the tests' launches (launches that specialise alike are one row).", "",
                  "- 02's layouts name 32 threads per warp (NVIDIA's warp): on gfx942 / gfx950 (64-thread "
                  "wavefronts) vgprscope's row names the warp size and Triton's own compile rejects the layout.",
                  "- 03, 04 and 08 at these revisions call `async_copy_global_to_shared` / "
                  "`async_copy_shared_to_global`, which Triton 3.8 renamed and " + triton.__version__ + " "
                  "removes (\"call async_load instead\"): under " + triton.__version__ + " each is that "
                  "release's own error on both sides; under 3.7.1, the release they are written for, they "
                  "compile, with the counts compared.",
                  "- What this proof fixed in vgprscope: a layout passed as a constexpr argument (02, 03) and a "
                  "TMA `TensorDescriptor` argument (04, 08) could not be recorded (\"a capture cannot record "
                  "yet\"); 08's launcher passes `num_warps=8` to a kernel that also takes `num_warps` as a "
                  "parameter, which vgprscope gave to the parameter only (its compile ran 4 warps and Triton "
                  "refused the 8-warp layout) where Triton's JIT gives it to both "
                  "(`tests/runtime/test_gluon_launch_values.py`).",
                  "- Not here: 05-wgmma at its stored revision (0c8ca22f3ce3) calls `gl.constexpr_function`, "
                  "which no release from 3.4.0 to " + triton.__version__ + " has (they have "
                  "`gluon.constexpr_function`): it imports under none. 06, 07, 08's matmul kernels, 09 on and "
                  "the examples (attention forward) are not covered yet.", ""]
    if args.aiter:
        lines += [f"- aiter 0.1.7.post2.dev18 (AMD, MIT license) `{AITER_MODULE}.{AITER_KERNEL}`: fp8 block-scale "
                  "GEMM written in Gluon for CDNA4 (MFMA v4 layouts), on gfx950 at each M bucket of aiter's own "
                  "MI350X config file, N = K = 7168. Two buckets allocate 256 VGPRs and spill 68 B of scratch: "
                  "the compiler's own allocation, the same both ways.", ""]
    if args.triton_src and (not args.only or "08-warp-specialization.py" in args.only):
        lines += ["`vgprscope.explain` of 08's `elementwise_add_warp_specialized_kernel` (the launcher's defaults: "
                  "XBLOCK=32, YBLOCK=64, two load and two store buffers, num_warps=4, maxnreg=128) on sm_90 under "
                  "3.7.1, its partitions:", "", *(f"> {line}" for line in ws_explain(args.triton_src)), ""]
    lines += ["| source | kernel | launch | arch | Triton | vgprscope | direct | equal |",
              "|---|---|---|---|---|---|---|---|"]
    for (source, kernel, launch, arch, status, ours, direct, why, release), eq in zip(rows, agree):
        lines.append(f"| {source} | `{kernel}` | {launch} | {arch} | {release} | {_cell(ours, status)} | "
                     f"{_cell(direct, why)} | {eq} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {equal} of {len(rows) - refused} equal, {refused} refused by both", file=sys.stderr)


if __name__ == "__main__":
    main()
