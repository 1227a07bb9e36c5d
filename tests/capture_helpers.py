"""Shared by the capture and scan tests: run the CLI, and compile a launch directly with triton.compile
(in a process without the interpreter) for the exact-counts checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_KERNELS = ROOT / "tests" / "fixtures" / "user_kernels"


def gone_library(tmp_path: Path) -> tuple[Path, Path]:
    """A capture of a library that was installed on the capturing machine only (``gpu_only_ops``, in a
    site-packages of its own, imported where the "GPU" is), its files then gone from this machine: (the
    capture file, where its files went: the capture's snapshot is all that is left of them here)."""
    import shutil

    site = tmp_path / "capturing-machine" / "site-packages"
    site.mkdir(parents=True)
    for name in ("gpu_only_ops.py", "helpers_for_gpu_only.py"):
        shutil.copy(USER_KERNELS / name, site / name)
    (tmp_path / "run.py").write_text((USER_KERNELS / "run_gpu_only.py").read_text())
    cap = tmp_path / "cap.json"
    done = cli("capture", "-o", str(cap), "--", sys.executable, str(tmp_path / "run.py"),
               env={"TRITON_INTERPRET": "1", "FAKE_GPU": "1", "PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr[-2000:]
    away = tmp_path / "elsewhere"
    site.parent.rename(away)
    return cap, away / "site-packages"


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vgprscope", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def reports(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The repository's report builders (tools/reports/, outside the wheel), run from the repository root."""
    return subprocess.run([sys.executable, "-m", "tools.reports", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=ROOT)


# A direct triton.compile of one launch, written out by hand from the launch's own arguments (what the
# JIT derives, independently of the capture code), printing the counts the parsers read.
DIRECT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from vgprscope.runtime.stored import cuobjdump_resources as _cuobjdump_resources
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources

spec = json.loads(sys.argv[2])
obj = importlib.import_module(spec["module"])
fn = getattr(obj, spec["name"])
while not isinstance(fn, triton.runtime.jit.JITFunction):
    fn = fn.fn
out = {}
for arch, target in (("gfx942", GPUTarget("hip", "gfx942", 64)), ("sm_90", GPUTarget("cuda", 90, 32))):
    vendor = "hip" if arch.startswith("gfx") else "cuda"
    attrs = {(fn.arg_names.index(n),): a for n, a in spec["attrs"][vendor].items()}
    src = ASTSource(fn=fn, signature=spec["signature"], constexprs=spec["constexprs"], attrs=attrs)
    k = triton.compile(src, target=target, options=spec["options"])
    if vendor == "hip":
        u = parse_amdgcn(k.asm["amdgcn"], k.metadata.shared)
        out[arch] = {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    else:
        r = parse_cuobjdump_resources(_cuobjdump_resources(k.asm["cubin"]), k.metadata.name)
        out[arch] = {"regs": r["REG"], "stack": r.get("STACK", 0), "shared": r.get("SHARED", 0) + k.metadata.shared}
print(json.dumps(out))
"""


def direct_compile(module_dir: Path, spec: dict) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_ALWAYS_COMPILE": "1"}
    done = subprocess.run([sys.executable, "-c", DIRECT, str(module_dir), json.dumps(spec)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def usage_counts(rec) -> dict:
    u = rec.usage
    if rec.arch.startswith("gfx"):
        return {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    return {"regs": u.regs, "stack": u.stack_bytes, "shared": u.shared_bytes}


def _jit_key_entry(key_repr: str) -> tuple:
    """A JIT kernel-cache key (``repr`` of Triton's ``compute_cache_key``: the binder's specialisation then the
    options) as (per argument: its type and specialisation, num_warps, num_stages)."""
    import ast

    spec_text, _, options_text = key_repr.strip('"').partition("]")
    spec = ast.literal_eval(spec_text + "]")
    options = ast.literal_eval(options_text)
    args = tuple((t, v) if t == "constexpr" else (t, v or "" if t.startswith("*") else "") for t, v in spec)
    return args, options.get("num_warps"), options.get("num_stages")


def _capture_entry(launch: dict) -> tuple:
    """A captured launch in the terms of a CUDA JIT key: constexprs (and integers equal to 1, which the JIT
    folds) by value, pointers with ``D`` when 16-byte aligned; integers by type alone (whether the JIT
    specialises one on divisibility by 16 depends on the kernel's ``do_not_specialize``, which the capture
    leaves to the compiling release's binder)."""
    args = []
    for a in launch["args"]:
        if a["type"] == "constexpr":
            v = a.get("value")
            args.append(("constexpr", v))
        elif a.get("one"):
            args.append(("constexpr", 1))
        else:
            pointer = a["type"].startswith("*")
            args.append((a["type"], "D" if pointer and a.get("aligned") else ""))
    return tuple(args), launch["options"].get("num_warps"), launch["options"].get("num_stages")


def capture_vs_jit(capture: dict, jit_keys: list[dict]) -> dict[str, tuple[list, list]]:
    """Per kernel (module.qualname), the JIT's compiles the capture lacks and the captured launches the JIT
    never compiled; empty when the capture's set of specialisations equals the JIT's."""
    from collections import Counter

    kernels = capture["kernels"]
    jit: dict[str, Counter] = {}
    for k in jit_keys:
        jit.setdefault(f"{k['module']}.{k['qualname']}", Counter())[_jit_key_entry(k["key"])] += 1
    cap: dict[str, Counter] = {}
    for launch in capture["launches"]:
        k = kernels[launch["kernel"]]
        cap.setdefault(f"{k['module']}.{k['qualname']}", Counter())[_capture_entry(launch)] += 1
    out = {}
    for name in sorted(set(jit) | set(cap)):
        j, c = jit.get(name, Counter()), cap.get(name, Counter())
        if j != c:
            out[name] = (sorted((j - c).elements(), key=repr), sorted((c - j).elements(), key=repr))
    return out
