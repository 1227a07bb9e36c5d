"""Write tests/fixtures/triton36_cache.tar.xz: a Triton cache as a GPU run under another Triton release leaves
it, made GPU-free (``triton.compile`` writes TRITON_CACHE_DIR without a device), and beside it
``triton36_cache.json``: what that release's own ptxas and cuobjdump say of each NVIDIA entry (the truth
``tests/analysis/scan/test_scan.py`` holds ``vgprscope scan`` to).

Run it with the interpreter of a Triton 3.6.0 toolchain (``vgprscope`` installs one with ``--triton 3.6.0``;
``vgprscope toolchains`` lists them), from the repository root:

    ~/.cache/vgprscope/toolchains/triton-3.6.0-py311/bin/python scripts/make_scan_fixture.py

Entries: ``scale_add`` for sm_90 and for gfx942 twice (plain, and ``waves_per_eu=3``: the two differ only in an
AMD option), ``gelu_tanh`` for sm_90 (it calls NVIDIA's libdevice), ``matmul`` for sm_90 under ``maxnreg=168``
(it spills). Only Triton and the standard library are imported.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import triton
import triton.language as tl
from triton.language.extra import libdevice

from vgprscope.runtime.stored import same_machine_code

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


@triton.jit
def scale_add(X, Y, Z, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(Z + offs, x * alpha + y, mask=mask)


@triton.jit
def gelu_tanh(X, Z, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    tl.store(Z + offs, 0.5 * x * (1.0 + libdevice.tanh(inner)), mask=mask)


@triton.jit
def matmul(A, B, C, M, N, K, sam, sbk, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + rm[:, None] * sam + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * sbk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(C + rm[:, None] * scm + rn[None, :], acc.to(tl.float16))


def _compile_all() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    d = [["tt.divisibility", 16]]
    cuda, hip = GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)
    add_sig = {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "n": "i32", "alpha": "fp32", "BLOCK": "constexpr"}
    mm_sig = {"A": "*fp16", "B": "*fp16", "C": "*fp16", "M": "i32", "N": "i32", "K": "i32", "sam": "i32",
              "sbk": "i32", "scm": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    launches = [
        (scale_add, add_sig, {"BLOCK": 1024}, 3, cuda, {"num_warps": 4}),
        (scale_add, add_sig, {"BLOCK": 1024}, 3, hip, {"num_warps": 4}),
        (scale_add, add_sig, {"BLOCK": 1024}, 3, hip, {"num_warps": 4, "waves_per_eu": 3}),
        (gelu_tanh, {"X": "*fp32", "Z": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}, 2, cuda,
         {"num_warps": 4}),
        (matmul, mm_sig, {"BM": 128, "BN": 256, "BK": 64}, 3, cuda, {"num_warps": 4, "num_stages": 3, "maxnreg": 168}),
    ]
    for fn, sig, constexprs, pointers, target, options in launches:
        src = ASTSource(fn=fn, signature=sig, constexprs=constexprs, attrs={(i,): d for i in range(pointers)})
        triton.compile(src, target=target, options=options)


def _truth(entry: Path) -> dict[str, object] | None:
    """An NVIDIA entry as this release's own binaries see it: cuobjdump of the stored cubin, and ptxas -v of the
    stored PTX with the flags this release's make_cubin gives it (and whether that rebuilds the cubin)."""
    from triton.backends.nvidia.compiler import get_ptxas

    meta = json.loads(next(p for p in entry.glob("*.json") if not p.name.startswith("__grp__")).read_text())
    if meta["target"]["backend"] != "cuda":
        return None
    name = meta["name"]
    bin_dir = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    usage = subprocess.run([str(bin_dir / "cuobjdump"), "--dump-resource-usage", str(entry / f"{name}.cubin")],
                           capture_output=True, text=True, check=True).stdout
    res = {k: int(v) for k, v in re.findall(r"([A-Z_]+):(\d+)", usage.split(f"Function {name}:", 1)[1])}
    ptxas = get_ptxas(meta["target"]["arch"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.cubin")
        log = subprocess.run([ptxas.path, "-lineinfo", "-v", "--gpu-name=sm_90a", str(entry / f"{name}.ptx"), "-o",
                              out], capture_output=True, text=True, check=True).stderr
        rebuilt = same_machine_code(Path(out).read_bytes(), (entry / f"{name}.cubin").read_bytes())
    frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert frame is not None, log
    return {"kernel": name, "arch": "sm_90", "num_warps": meta["num_warps"], "regs": res["REG"],
            "stack": res["STACK"], "shared_static": res["SHARED"], "shared_dynamic": meta["shared"],
            "spill_store_bytes": int(frame[2]), "spill_load_bytes": int(frame[3]),
            "ptxas_stack": int(frame[1]), "ptxas_version": ptxas.version, "rebuilds_the_cubin": rebuilt}


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), 0, 0o644
    tar.addfile(info, io.BytesIO(data))


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        from triton import knobs

        knobs.cache.dir = cache
        _compile_all()
        entries = sorted(p for p in Path(cache).iterdir() if p.is_dir())
        truth = {"triton_version": triton.__version__, "entries": {}}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:xz") as tar:
            for entry in entries:
                t = _truth(entry)
                if t is not None:
                    truth["entries"][entry.name] = t
                for f in sorted(entry.iterdir()):
                    _add(tar, f"{entry.name}/{f.name}", f.read_bytes())
    (FIXTURES / "triton36_cache.tar.xz").write_bytes(buf.getvalue())
    (FIXTURES / "triton36_cache.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    print(f"{len(entries)} entries, {len(buf.getvalue())} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
