"""Per-loop static instruction counts (vgprscope.core.parse.loops on the cubin's SASS) against Nsight Compute's
executed-instruction counts per SASS address, on a GPU: for a loop without divergence every instruction of
its body runs once per trip and warp, so the instructions ncu counts in the loop's address range, divided by
the count of its first instruction (trips x warps), are the loop's static instruction count, and so for each
class (matrix instructions: HGMMA / HMMA). Run by .ci/gpu_loop_counts.sh under ncu; this script has two
modes: `run` launches the kernels (the profiled process), `compare REPORT_CSV CACHE_DIR` compares."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path


def run() -> None:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def loop_gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
            y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    M = N = K = 1024
    a, b = torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    loop_gemm[(M // 128, N // 128)](a, b, c, M, N, K, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    torch.cuda.synchronize()
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), atol=2e-1, rtol=2e-2)

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import vgprscope

    # causal and ragged (1000 rows): the full-block loop and the masked diagonal / tail loop both run
    q = torch.randn(1, 8, 1000, 128, device="cuda", dtype=torch.float16)
    vgprscope.attention(q, q, q, causal=True, variant="baseline")
    torch.cuda.synchronize()
    print("ok")


def compare(report: Path, cache: Path) -> int:
    """Each loop of each profiled kernel: static counts (vgprscope) against ncu's executed counts over the
    loop's address range divided by the executions of its first instruction. Exit 1 when any differ."""
    from vgprscope.backends.cuda import nvdisasm
    from vgprscope.core.parse.loops import sass_class, sass_loops

    # one section per kernel ("Kernel Name","loop_gemm", then a header and a row per SASS instruction); the
    # addresses are where the code was loaded: offsets from the kernel's first instruction are the cubin's
    sections: dict[str, list[str]] = {}
    current = None
    for line in report.read_text().splitlines():
        if line.startswith('"Kernel Name"'):
            current = line.split(",")[1].strip('"')
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    counts: dict[str, tuple[dict[int, int], dict[int, str]]] = {}
    for kernel, lines in sections.items():
        rows = list(csv.DictReader(lines))
        key = next(k for k in rows[0] if k == "Instructions Executed")
        by_address = {int(r["Address"], 16): r for r in rows if (r.get("Address") or "").startswith("0x")}
        base = min(by_address)
        executed = {a - base: int(float((r.get(key) or "0").replace(",", ""))) for a, r in by_address.items()}
        ops = {a - base: next((t for t in (r.get("Source") or "").split() if not t.startswith("@")), "")
               for a, r in by_address.items()}
        counts[kernel] = (executed, ops)
    ok = True
    for cubin in sorted(cache.rglob("*.cubin")):
        name = json.loads(cubin.with_suffix(".json").read_text())["name"]
        if name not in counts:
            continue
        executed, ops = counts[name]
        sass = nvdisasm(cubin.read_bytes())
        for m in sass_loops(sass, name):
            assert m.span is not None
            lo, hi = m.span
            inside = [a for a in executed if lo <= a <= hi]
            if not inside or executed.get(lo, 0) == 0:
                print(f"- {name} {m.name} [{lo:#x}-{hi:#x}]: never executed in this run")
                continue
            trips = executed[lo]
            dyn_total = sum(executed[a] for a in inside) / trips
            dyn_matrix = sum(executed[a] for a in inside if sass_class(ops[a]) == "matrix") / trips
            dyn_spill = sum(executed[a] for a in inside if sass_class(ops[a]) in ("scratch_load", "scratch_store")) / trips
            same = (round(dyn_total, 3), round(dyn_matrix, 3)) == (m.instructions, m.count("matrix"))
            ok &= same
            print(f"{'=' if same else 'x'} {name} {m.name} [{lo:#x}-{hi:#x}]: static {m.instructions} instructions, "
                  f"{m.count('matrix')} matrix, {m.count('scratch_load') + m.count('scratch_store')} spill; "
                  f"ncu executed / first instruction's count ({trips}): {dyn_total:.3f}, {dyn_matrix:.3f}, {dyn_spill:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run()
    else:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
