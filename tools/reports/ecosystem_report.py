"""reports/ecosystem-<gpu>.md: the ecosystem run's fidelity table (tools/reports/ecosystem.py runs it on a GPU).

``collect_results`` reads the run's archives on any machine: each cubin the JIT compiled through cuobjdump (the
cuobjdump Triton ships), the capture's sm_90 and AMD rows, and ``vgprscope scan`` of each cache, into one JSON
per workload (tests/fixtures/ecosystem/NAME.json.gz, which the CPU tests read); for a model, also its Inductor
cache directory as torch left it (NAME-inductor-cache.tar.xz). ``ecosystem_report`` writes the table from them.

    python -m tools.reports ecosystem tests/fixtures/ecosystem --collect GPU_OUT   # read the archives, then write
    python -m tools.reports ecosystem tests/fixtures/ecosystem                     # the report from the results
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .ecosystem import AMD_ARCHS, NVIDIA_ARCH, WORKLOADS, Workload

COMMAND = "python -m tools.reports ecosystem"
SCAN_TIMEOUT_S = 900  # per directory; python -m tools.reports ecosystem --scan-timeout S
# a model's Inductor directory is committed for scan's tests only while it stays this small
INDUCTOR_FIXTURE_LIMIT = 4 * 2**20


def _cuobjdump() -> str:
    import triton

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump")


def cubins(root: Path) -> list[dict[str, Any]]:
    """Every cubin below ``root``, each entry of a Triton cache once, with cuobjdump's registers and stack, its
    shared memory (cuobjdump's static plus Triton's dynamic, from the entry's metadata) and where it lies.
    ``repeat``: the same compile stored again (identical bytes, warps and stages: Inductor compiles a
    template's kernel in its benchmark module and its output code under two keys); two configs that differ
    in stages only and give identical bytes are two compiles, as the JIT made them."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, Any, Any]] = set()
    for path in sorted(root.rglob("*.cubin")):
        meta = json.loads(path.with_suffix(".json").read_text())
        key = (hashlib.sha256(path.read_bytes()).hexdigest(), meta.get("num_warps"), meta.get("num_stages"))
        text = subprocess.run([_cuobjdump(), "-res-usage", str(path)], capture_output=True, text=True,
                              check=True).stdout
        m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+)", text)
        if m is None:
            raise RuntimeError(f"{path}: no resource line in cuobjdump's output")
        out.append({"name": meta["name"], "regs": int(m[1]), "stack": int(m[2]),
                    "shared": int(m[3]) + int(meta.get("shared", 0)), "num_warps": meta.get("num_warps"),
                    "num_stages": meta.get("num_stages"), "path": str(path.relative_to(root)),
                    **({"repeat": True} if key in seen else {})})
        seen.add(key)
    return out


def compiles(cubin_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct compiles among a cache's cubins (a repeated one counted once)."""
    return [c for c in cubin_list if not c.get("repeat")]


def _rows(path: Path) -> list[dict[str, Any]]:
    """An analyze/scan JSON's rows, reduced to what the table compares."""
    if not path.is_file():
        return []
    out = []
    for r in json.loads(path.read_text())["rows"]:
        u = r.get("usage") or {}
        row: dict[str, Any] = {"kernel": r["kernel"], "arch": r["arch"], "status": r["status"],
                               "slot": r.get("slot", "")}
        if u.get("vendor") == "nvidia":
            row |= {"regs": u["regs"], "shared": u["shared_static"] + u["shared_dynamic"],
                    "stack": u.get("stack_bytes", 0)}
        elif u:
            row |= {"vgprs": u.get("vgpr_total"), "lds": u.get("lds_bytes"), "scratch": u.get("scratch_bytes")}
        extras = r.get("extras") or {}
        for key in ("note", "cache"):  # cache: scan's "stored" (read from the stored cubin) or "recompiled"
            if extras.get(key):
                row[key] = extras[key]
        out.append(row)
    return out


# ``vgprscope scan`` as its table reads it (``loops=None``: the default view shows no loop figure, so none is
# read), in a process of its own under a compile cache of its own (a cold scan), its rows as the JSON output
# writes them
_SCAN = """
import json, sys, time
import vgprscope
t0 = time.perf_counter()
result = vgprscope.scan(sys.argv[1], cache=sys.argv[3], loops=None)
json.dump({"rows": [r.as_dict() for r in result.records], "summary": result.summary,
           "seconds": round(time.perf_counter() - t0, 1)}, open(sys.argv[2], "w"))
"""


def _scan(directory: Path, out: Path, timeout_s: float = SCAN_TIMEOUT_S) -> dict[str, Any]:
    """``vgprscope scan`` of one directory, cold (its stored rows: what each stored cubin says), with its summary
    and the seconds it took."""
    if not directory.is_dir():
        return {"directory": directory.name, "error": "not in the archive"}
    try:
        done = subprocess.run([sys.executable, "-c", _SCAN, str(directory), str(out), str(out.with_suffix(".vc"))],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"directory": directory.name, "error": f"did not finish in {timeout_s:.0f} s on the collecting "
                                                      "machine"}
    if done.returncode != 0 or not out.is_file():
        return {"directory": directory.name, "error": f"scan failed: {done.stderr.strip()[-300:]}"}
    doc = json.loads(out.read_text())
    said = [f"scanned {ln}" for ln in doc["summary"].splitlines()[:1]]
    return {"directory": directory.name, "rc": 0 if any(r["status"] == "ok" for r in doc["rows"]) else 1,
            "said": said, "rows": _rows(out), "seconds": doc["seconds"]}


def _ops(log: Path) -> list[str]:
    if not log.is_file():
        return []
    # each op's ok / FAIL line, or a workload's one line for all its ops ("liger ops ran on cuda: ...")
    return [ln.strip() for ln in log.read_text(errors="replace").splitlines()
            if ln.startswith(("ok ", "FAIL ")) or re.search(r" ran on (cuda|cpu)\b", ln)]


def _captured(log: Path) -> str:
    if not log.is_file():
        return ""
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("vgprscope: wrote")]
    return lines[-1].split(": ", 2)[-1] if lines else ""


def collect_results(archives: Path | Sequence[Path], results: Path, only: Sequence[str] = (),
                    scan_timeout_s: float = SCAN_TIMEOUT_S) -> list[Path]:
    """Each workload's archives -> ``results/NAME.json.gz`` (and a model's Inductor directory); ``archives``: the
    directories holding them, in order (the GPU run's first, each later one's files over the earlier's: a second
    device call's ``NAME-analyze.tar.xz``, a CPU machine's ``NAME-cpu.tar.xz``); ``only``: these workloads."""
    dirs = [Path(archives)] if isinstance(archives, (str, Path)) else [Path(a) for a in archives]
    results.mkdir(parents=True, exist_ok=True)
    summary_path = next((d / "summary.json" for d in dirs if (d / "summary.json").is_file()), None)
    machine = json.loads(summary_path.read_text())["machine"] if summary_path is not None else {}
    written: list[Path] = []
    for w in WORKLOADS:
        tar = next((d / f"{w.name}.tar.xz" for d in dirs if (d / f"{w.name}.tar.xz").is_file()), None)
        if tar is None or (only and w.name not in only):
            continue
        with tempfile.TemporaryDirectory(prefix="vgprscope-ecosystem-") as tmp:
            # the run's archive, then the later ones over it (NAME-analyze.tar.xz: ecosystem-run --analyze-only;
            # NAME-cpu.tar.xz: analyses made GPU-free elsewhere, ecosystem-cpu), each analysis file named with
            # where it came from
            origin: dict[str, str] = {}
            later = [a for d in dirs for a in sorted(d.glob(f"{w.name}-*.tar.xz"))]
            for archive in [tar, *later]:
                with tarfile.open(archive) as t:
                    members = [m for m in t.getmembers() if m.isfile()]
                    # the "data" filter where tarfile has it (3.10.12+ / 3.11.4+); members are plain files either way
                    if hasattr(tarfile, "data_filter"):
                        t.extractall(tmp, members=members, filter="data")
                    else:
                        t.extractall(tmp, members=members)
                for m in members:
                    if Path(m.name).name.startswith("analyze-") and m.name.endswith(".json"):
                        origin[Path(m.name).name] = archive.name
            written += _collect_one(w, Path(tmp) / w.name, results, machine, origin, scan_timeout_s)
    return written


def _collect_one(w: Workload, wdir: Path, results: Path, machine: dict[str, Any],
                 origin: dict[str, str], scan_timeout_s: float) -> list[Path]:
    status = json.loads((wdir / "status.json").read_text()) if (wdir / "status.json").is_file() else {}
    cpu = json.loads((wdir / "status-cpu.json").read_text()) if (wdir / "status-cpu.json").is_file() else {}
    cache = wdir / ("inductor" if w.inductor else "jit")
    data: dict[str, Any] = {
        "workload": w.name, "package": w.package, "machine": machine, "steps": status.get("steps", {}),
        **({"cpu_steps": cpu["steps"], "cpu_machine": cpu.get("machine", {})} if cpu else {}),
        "ops": _ops(wdir / "capture.log"), "captured": _captured(wdir / "capture.log"),
        "capture": json.loads((wdir / "capture.json").read_text()) if (wdir / "capture.json").is_file() else None,
        "cubins": cubins(cache) if cache.is_dir() else [],
        "sm_90": _rows(wdir / f"analyze-{NVIDIA_ARCH}.json"),
        "amd": [r for a in AMD_ARCHS for r in _rows(wdir / f"analyze-{a}.json")], "analyses_from": origin,
    }
    with tempfile.TemporaryDirectory() as tmp:
        data["scan"] = [_scan(cache, Path(tmp) / "scan.json", scan_timeout_s)]
        if w.inductor:
            plain = wdir / "inductor-plain"
            data["scan"].append(_scan(plain, Path(tmp) / "scan-plain.json", scan_timeout_s))
            data["plain_cubins"] = cubins(plain) if plain.is_dir() else []
    if w.inductor and cache.is_dir():
        data["inductor_dir"] = inductor_layout(cache)
    path = results / f"{w.name}.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(data, f, sort_keys=True)
    written = [path]
    if w.inductor and cache.is_dir():
        fixture = results / f"{w.name}-inductor-cache.tar.xz"
        part = fixture.with_suffix(".part")
        with tarfile.open(part, "w:xz", preset=9) as t:
            t.add(cache, arcname="inductor")
        if fixture.is_file() and _contents(fixture) == _contents(part):
            part.unlink()  # the same files: the committed archive stays as it is (xz's bytes would differ)
        else:
            part.replace(fixture)
            written.append(fixture)
        if fixture.stat().st_size > INDUCTOR_FIXTURE_LIMIT:
            print(f"warning: {fixture} is {fixture.stat().st_size} B", file=sys.stderr)
    return written


def _contents(archive: Path) -> str:
    """A hash of an archive's files (names and bytes), whatever its compression wrote."""
    digest = hashlib.sha256()
    with tarfile.open(archive) as t:
        for m in sorted((m for m in t.getmembers() if m.isfile()), key=lambda m: m.name):
            digest.update(m.name.encode() + b"\0" + hashlib.sha256(t.extractfile(m).read()).digest())  # type: ignore[union-attr]
    return digest.hexdigest()


def inductor_layout(directory: Path) -> dict[str, int]:
    """What an Inductor cache directory holds: its temporary caches (``tmp*/``), the generated modules that
    define Triton kernels (and how many kernels), the Triton cache entries and cubins below it."""
    modules = kernels = 0
    for py in directory.rglob("*.py"):
        n = py.read_text(errors="replace").count("@triton.jit")
        modules += bool(n)
        kernels += n
    return {"temporary_caches": sum(1 for p in directory.glob("tmp*") if p.is_dir()), "kernel_modules": modules,
            "jit_functions": kernels, "triton_entries": sum(1 for _ in directory.rglob("__grp__*.json")),
            "cubins": sum(1 for _ in directory.rglob("*.cubin"))}


def load_results(results: Path) -> list[dict[str, Any]]:
    out = []
    for w in WORKLOADS:
        path = results / f"{w.name}.json.gz"
        if path.is_file():
            with gzip.open(path, "rt") as f:
                out.append(json.load(f))
    return out


# ------------------------------------------------------------------------------------------- comparisons


def compare(cubin_list: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JIT's cubins against a list of rows (the capture's sm_90 rows, or scan's stored rows), kernel by
    kernel, as multisets of (registers, shared memory): how many cubins have an equal row, which kernels
    differ and how."""
    by_cubin: dict[str, Counter] = defaultdict(Counter)
    by_row: dict[str, Counter] = defaultdict(Counter)
    for c in cubin_list:
        by_cubin[c["name"]][(c["regs"], c["shared"])] += 1
    for r in rows:
        if "regs" in r:
            by_row[r["kernel"]][(r["regs"], r["shared"])] += 1
    equal = sum(sum((by_cubin[n] & by_row.get(n, Counter())).values()) for n in by_cubin)
    differ = {}
    for name in sorted(set(by_cubin) | set(by_row)):
        a, b = by_cubin.get(name, Counter()), by_row.get(name, Counter())
        if a != b:
            differ[name] = {"cubins_only": sorted((a - b).elements()), "rows_only": sorted((b - a).elements())}
    return {"cubins": len(cubin_list), "equal": equal, "rows": sum(map(len, (list(c.elements()) for c in
                                                                          by_row.values()))), "differ": differ}


def refusals(rows: list[dict[str, Any]], arch: str) -> tuple[int, int, Counter]:
    """Rows of ``arch``: how many compiled, how many not, and each reason with its count (a memory limit's
    rows as one reason, with the range of what they need)."""
    mine = [r for r in rows if r["arch"] == arch]
    bad = [" ".join(r["status"].split()) for r in mine if r["status"] != "ok"]
    out: Counter = Counter()
    needs: dict[str, list[int]] = defaultdict(list)
    for status in bad:
        m = _NEEDS.fullmatch(status)
        if m:
            needs[f"needs more {m['what']} than {m['arch']}'s {m['limit']} B per {m['unit']}"].append(int(m["need"]))
        else:
            out[status[:240]] += 1
    for reason, values in needs.items():
        lo, hi = min(values), max(values)
        out[f"{reason} ({lo} B)" if lo == hi else f"{reason} ({lo} to {hi} B)"] += len(values)
    return len(mine) - len(bad), len(bad), out


_NEEDS = re.compile(r"needs (?P<need>\d+) B of (?P<what>LDS|shared memory); (?P<arch>\S+) (?:has|allows) "
                    r"(?P<limit>\d+) B per (?P<unit>workgroup|block)")
_STEPS = ("capture", "analyze-sm_90", "analyze-gfx942", "analyze-gfx950", "plain")


def capture_counts(capture: dict[str, Any] | None) -> tuple[int, int]:
    """Kernels and launches (specialisations x autotune configs) in a capture file."""
    if not capture:
        return 0, 0
    return len(capture.get("kernels") or {}), len(capture.get("launches") or [])


# ------------------------------------------------------------------------------------------------ the report

# Why a difference the table shows is what it is, found by reading the run's files (per workload, per kernel
# or per kind of difference); the report prints each next to the difference it explains, and says so where a
# difference has no explanation here.
EXPLAINED: dict[tuple[str, str], str] = {
    ("flag-gems", "zeros_kernel"): (
        "the JIT's third zeros_kernel compile writes an int32 output (its TTIR: `!tt.ptr<i32>`); the capture holds "
        "the float32 and bf16 launches only. FlagGems' libentry launches a compiled kernel itself once its own "
        "cache holds it, and compiles through the JIT on a miss; why this compile left no launch in the capture "
        "is not established (no capture error was recorded)"),
    ("torchao", "triton_fp8_gemm_1x128_128x128_kernel"): (
        "torchao passes the GEMM's output dtype as a constexpr holding a torch dtype (`out_dtype=torch.bfloat16`), "
        "which a capture cannot name yet: its 6 launches are rows saying so (\"constexpr out_dtype is a dtype "
        "torch.bfloat16, which a capture cannot name\"), and the JIT's 6 cubins of the kernel have no row"),
    ("mlp-max-autotune", "triton_tem_fused_addmm_t_0"): (
        "Inductor generates this template kernel twice, in its benchmark module and in the output code, with the "
        "same source: Triton compiles it once (one cubin), the capture holds a launch of each module (two equal "
        "rows)"),
    ("mlp-max-autotune", "triton_"): (
        "Inductor's benchmark modules name their kernel `triton_`: of its matmul-template candidates with 255 "
        "registers and 99328 B of shared memory (heavy spills: 144, 968 and 1000 B of stack), the JIT's cache holds "
        "4 compiles and the capture 2 launches (one per benchmark module: the forward's and the backward's); the "
        "other 2 were compiled again under other cache keys (other stack sizes, so other code) without a launch "
        "the capture saw: not established further"),
}

# What the run found about a workload, said at the top of its section.
NOTES: dict[str, str] = {
    "flag-gems": (
        "Found and fixed by this run (issue 38, item 6): at 1813242 the capture's analysis on the GPU machine failed "
        "432 rows of `mm_kernel_general_host_tma` with \"accumulator shape is incompatible\" (each config's "
        "LibTuner pre_hook sets the host-side TMA descriptors' block shape, and the launches derived from the "
        "current source took every config's descriptors from the call's first launch) and "
        "`gelu_backward_none_kernel_rank_1` with \"NameError('pow is not defined')\" (pointwise_dynamic binds "
        "`pow = tl_extra_shim.pow` into its generated module after loading it; `pow` also names a Python builtin). "
        "Before, `'_Dtype' object has no attribute 'itemsize'` (the descriptor's base tensor stand-in) and "
        "`NameError('erf is not defined')` (the same binding, for `erf`). The sm_90 rows below are the analysis "
        "again after the fixes (`ecosystem-run --analyze-only`). The gfx942 and gfx950 rows are a GPU-free analysis "
        "of the committed capture under Triton 3.6 (the GPU machine's release) after the fixes, on this session's "
        "CPU machine (`ecosystem-cpu`), where FlagGems cannot import (no GPU): every kernel compiled from the "
        "capture's snapshot, the library's recorded paths read as a site-packages directory that is not on this "
        "machine (the GPU machine had installed the wheels with `pip install --target /tmp/site`; "
        "tests/project/test_ecosystem.py reads the capture the same way). Its refusals, each looked at: "
        "`addmm_kernel`'s 98304 B of LDS is over gfx942's 64 KiB (a config tuned for Hopper: the arch's limit); "
        "the 4 `sum_dim_kernel_*` rows were a vgprscope defect, fixed since (the snapshot took the kernel's own "
        "running total, a variable named `sum`, for FlagGems' `sum` op, a plain Python function no snapshot can "
        "hold, and refused the kernel as incomplete; tests/runtime/test_snapshot_names.py): the committed capture "
        "was recorded before the fix, and a capture made after it holds these kernels whole; "
        "`reduce_then_scan_root_scan_kernel_row` calls `get_scan_accum_type`, a plain Python function FlagGems wraps "
        "in `tl.constexpr` and Triton runs while compiling: a snapshot holds JIT functions, numbers, dtypes and "
        "modules, not Python code run at compile time (a vgprscope limit, not fixed: the kernel compiles where "
        "FlagGems imports); the 3 `__nv_` rows are kernels generated by `pointwise_dynamic`, whose math "
        "(`tl_extra_shim`) FlagGems binds to the libdevice of the machine's vendor when it imports: the capture "
        "holds the H200's CUDA functions, which Triton's AMD backend refuses (not a limit of the arch: on an AMD "
        "machine FlagGems binds AMD's). "
        "LibTuner kept "
        "every config: each tuned key holds its whole list (mm_kernel_general_host_tma: 162 configs at each of "
        "its 3 keys, addmm_kernel 8, bmm_kernel 12 at each of 3), issue 34's GPU check. `sum_mean_amax` fails in "
        "FlagGems itself (its amax backward returns a gradient of the reduced shape); its forward kernels ran "
        "and were captured."),
    "fla-core": (
        "fla-core refuses `chunk_gated_delta_rule`'s backward under Triton 3.6 on Hopper (its own check, fla "
        "issue 640); the forward kernels ran and were captured. The capture's sm_90 analysis is the second device "
        "call's (`ecosystem-run --analyze-only`: the first call's deadline came during it). The second call's deadline "
        "came during gfx942: the gfx942 and gfx950 rows are a GPU-free analysis of the committed capture under Triton "
        "3.6 on this session's CPU machine (`ecosystem-cpu`), each kernel compiled from the capture's snapshot "
        "(fla-core is not installed there). Their refusals, each looked at: the LDS ones are the archs' limits "
        "(configs fla tuned for Hopper's 227 KiB of shared memory: `chunk_fwd_kernel_h` and "
        "`chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64` at BV 32-64 and 3-4 stages); "
        "`chunk_gated_delta_rule_fwd_kernel_h_blockdim64`'s \"LLVM ERROR: operation destroyed but still has uses "
        "(in pass TritonAMDGPUPipeline)\" is Triton 3.6's AMD software pipeliner failing on its 4-stage configs, "
        "not vgprscope: the installed Triton 3.9 compiles the same 4 launches for gfx942 (`vgprscope analyze "
        "--capture` of those launches: ok; with `--triton 3.6.0`: the same LLVM error); gfx950's 6 "
        "`chunk_gated_delta_rule_fwd_kkt_solve_kernel` rows (\"input_precision must be one of ('ieee', 'bf16x3', "
        "'bf16x6'). Got tf32\") read `SOLVE_TRIL_DOT_PRECISION`, which fla sets when it imports, from the device: "
        "'tf32' where TF32 is supported, which fla/utils/hardware.py says only of NVIDIA GPUs, else 'ieee'. The "
        "capture holds the H200's 'tf32': Triton 3.6 refuses it on gfx950 and takes it on gfx942, so that kernel's "
        "gfx942 rows are the H200's build of it, not the 'ieee' one fla compiles on an MI300 (a capture records a "
        "library's import-time choices as the capturing machine made them; not a limit of the arch)."),
}


def _machine_line(machine: dict[str, Any]) -> str:
    gpu = machine.get("gpu") or "?"
    return (f"{gpu} | torch {machine.get('torch', '?')} | Triton {machine.get('triton', '?')} | "
            f"{machine.get('date', '?')}")


def _gpu_slug(machine: dict[str, Any]) -> str:
    name = (machine.get("gpu") or "gpu").split(",")[0].strip().lower()
    return re.sub(r"[^a-z0-9]+", "-", name.replace("nvidia", "")).strip("-") or "gpu"


def _cell(ok: int, bad: int) -> str:
    return f"{ok} ok" + (f", {bad} refused" if bad else "") if ok + bad else "-"


def ecosystem_report(results: Path, out: Path) -> list[Path]:
    """reports/ecosystem-<gpu>.md from the collected results; the files written."""
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.report.formats import md_table

    data = load_results(results)
    if not data:
        from vgprscope.core.errors import UsageError

        raise UsageError(f"no ecosystem results in {results}: collect them first (--collect GPU_OUT)")
    machine = data[0]["machine"]
    rows, sections = [], []
    totals: Counter[str] = Counter()
    for d in data:
        w = next(x for x in WORKLOADS if x.name == d["workload"])
        kernels, launches = capture_counts(d["capture"])
        sm90 = compare(compiles(d["cubins"]), [r for r in d["sm_90"] if "regs" in r])
        stored = [r for s in d["scan"][:1] for r in s.get("rows", []) if r.get("cache", "stored") == "stored"]
        scanned_not = any("error" in s for s in d["scan"][:1])
        scan = compare(d["cubins"], stored)
        amd = {a: refusals(d["amd"], a) for a in AMD_ARCHS}
        ok_ops = sum(not o.startswith("FAIL ") for o in d["ops"])
        names = len({c["name"] for c in d["cubins"]})
        rows.append([w.name, w.package, f"{ok_ops} of {len(d['ops'])}", f"{names} / {len(compiles(d['cubins']))}",
                     f"{kernels} / {launches}", f"{sm90['equal']} of {sm90['cubins']} ({len(d['sm_90'])} rows)",
                     *(_cell(*amd[a][:2]) for a in AMD_ARCHS),
                     "did not finish" if scanned_not else f"{scan['equal']} of {scan['cubins']}"])
        sections += _section(w, d, sm90, scan, amd)
        totals.update({"equal": sm90["equal"], "cubins": sm90["cubins"], "workloads": 1})
        if scanned_not:
            totals.update({"scan_unfinished": 1})
        else:
            totals.update({"scan_equal": scan["equal"], "scan_cubins": scan["cubins"], "scanned": 1})
    header = ["workload", "package", "ops ran", "JIT kernels / cubins", "captured kernels / launches",
              f"{NVIDIA_ARCH} rows = cubins", *AMD_ARCHS, "scan = cuobjdump"]
    lines = [
        f"# The ecosystem's Triton kernels on an {machine.get('gpu', 'a GPU').split(',')[0]}: the JIT's cubins "
        "against vgprscope without a GPU",
        "",
        f"Machine: {_machine_line(machine)} | vgprscope (the commit adding this file)",
        "",
        f"Reproduce: `bash .ci/gpu_ecosystem.sh OUTDIR` on the GPU machine (one device call, the libraries' wheels "
        f"carried), then anywhere `{COMMAND} tests/fixtures/ecosystem --collect OUTDIR` (cuobjdump of each cubin, "
        f"scan of each cache: the committed results; the AMD analyses the GPU call had no time for, made on a CPU "
        f"by `{COMMAND}-cpu tests/fixtures/ecosystem --out CPU_OUT`, are read with a second `--collect CPU_OUT`); "
        f"this report: `{COMMAND} tests/fixtures/ecosystem`.",
        "",
        "Each workload ran once under `vgprscope capture` through Triton's JIT, with a Triton cache of its own "
        "(a model: an Inductor cache directory of its own, Triton's cache inside it as torch puts it). JIT "
        "kernels / cubins: the distinct kernel names and the distinct cubins in that cache (each one compile the "
        "library made); registers and shared memory read with `cuobjdump -res-usage` (shared: cuobjdump's static "
        "plus Triton's dynamic, from the entry's metadata). Captured: the capture's kernels and launches (one "
        "per specialisation and autotune config). sm_90 rows = cubins: the capture analysed GPU-free on the GPU "
        "machine (Triton 3.6, no launch), cubins with an equal row (registers, shared memory), kernel by kernel. "
        "gfx942 / gfx950: the same capture's rows. scan = cuobjdump: `vgprscope scan` of the JIT's cache, each "
        "stored cubin's row against cuobjdump.",
        "",
        md_table(header, rows),
        "",
        f"Over the {totals['workloads']} workloads: {totals['equal']} of the JIT's {totals['cubins']} compiles have an "
        f"equal {NVIDIA_ARCH} row computed without a GPU. In the {totals['scanned']} caches whose scan finished, "
        f"scan read {totals['scan_equal']} of {totals['scan_cubins']} stored cubins equal to cuobjdump"
        + (f"; {totals['scan_unfinished']} {'scan' if totals['scan_unfinished'] == 1 else 'scans'} did not finish "
           "in the time the collecting machine gave (a "
           "2-core machine shared by nine engineers; scan's speed on large caches is issue 37's and 38's)"
           if totals["scan_unfinished"] else "") + ". Each kernel where the JIT and a row differ is listed in its "
        "workload's section with why.",
        "",
    ]
    lines += sections
    path = out / f"ecosystem-{_gpu_slug(machine)}.md"
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "\n".join(lines))
    return [path]


def _section(w: Workload, d: dict[str, Any], sm90: dict[str, Any], scan: dict[str, Any],
             amd: dict[str, tuple[int, int, Counter]]) -> list[str]:
    out = [f"## {w.name} ({w.package})", "", f"What ran: {w.what}.", ""]
    if w.name in NOTES:
        out += [NOTES[w.name], ""]
    if d.get("analyses_from"):
        out += ["Analyses from: " + ", ".join(f"{k.removeprefix('analyze-').removesuffix('.json')} {v}"
                                               for k, v in sorted(d["analyses_from"].items())) + ".", ""]
    steps = d.get("steps") or {}
    timed = [f"{k} {v.get('seconds', 0)} s" + (" (stopped at the run's deadline)" if v.get("timed_out") else "")
             + (f" (exit {v['rc']})" if v.get("rc") not in (0, None) and not v.get("timed_out") else "")
             for k in _STEPS if (v := steps.get(k))]
    if timed:
        out += [f"Steps on the GPU machine: {', '.join(timed)}.", ""]
    cpu, where = d.get("cpu_steps") or {}, d.get("cpu_machine") or {}
    if cpu:
        done = [f"{k} {v.get('seconds', 0)} s" + (f" (exit {v['rc']})" if v.get("rc") not in (0, 1) else "")
                for k, v in cpu.items()]
        out += [f"Steps on a CPU machine ({where.get('cores', '?')} cores, 1-minute load {where.get('load', '?')} at "
                f"the end, {where.get('date', '?')}, under Triton {where.get('triton', '?')}, `{COMMAND}-cpu`): "
                f"{', '.join(done)}.", ""]
    if d["ops"]:
        out += ["Ops: " + "; ".join(d["ops"]), ""]
    if d["captured"]:
        out += [f"Capture: {d['captured']}.", ""]
    out += [f"{NVIDIA_ARCH}: {sm90['equal']} of {sm90['cubins']} cubins have an equal row ({sm90['rows']} rows "
            "with counts)."]
    out += _differences(w, sm90["differ"], "row")
    for a in AMD_ARCHS:
        ok, bad, why = amd[a]
        out.append(f"{a}: {_cell(ok, bad)}.")
        out += [f"- {n} x {reason}" for reason, n in why.most_common()]
    for s in d["scan"]:
        if "error" in s:
            out.append(f"scan {s['directory']}: {s['error']}.")
            continue
        read = [r for r in s.get("rows", [])]
        said = "; ".join(re.sub(r"/tmp/\S+?/" + re.escape(w.name) + "/", "", x.removeprefix("vgprscope: "))
                         for x in s.get("said", []) if not x.startswith("vgprscope: wrote"))
        took = f", {s['seconds']} s cold on the collecting machine" if s.get("seconds") is not None else ""
        out.append(f"scan {s['directory']}: {len(read)} rows (exit {s.get('rc')}{took}){': ' + said if said else ''}.")
    if not any("error" in s for s in d["scan"][:1]):
        out.append(f"scan of the JIT's cache against cuobjdump: {scan['equal']} of {scan['cubins']} cubins equal.")
        out += _differences(w, scan["differ"], "scan row")
    lay = d.get("inductor_dir")
    if lay:
        out += ["", f"Its Inductor cache directory as torch left it under the capture (committed as "
                f"`tests/fixtures/ecosystem/{w.name}-inductor-cache.tar.xz`): {lay['temporary_caches']} temporary "
                f"caches (`tmp*/`, each with its Triton cache in `triton/<HASH>/`), {lay['kernel_modules']} generated "
                f"modules defining {lay['jit_functions']} `@triton.jit` functions, {lay['triton_entries']} Triton "
                f"cache entries, {lay['cubins']} cubins."]
    return out + [""]


def _differences(w: Workload, differ: dict[str, Any], what: str) -> list[str]:
    out = []
    for name, d in differ.items():
        text = (f"- `{name}`: cubins without an equal {what} {d['cubins_only'] or 'none'}, {what}s without a "
                f"cubin {d['rows_only'] or 'none'}")
        why = EXPLAINED.get((w.name, name)) or EXPLAINED.get((w.name, "*"))
        out.append(text + (f": {why}" if why else ": not explained yet"))
    return out
