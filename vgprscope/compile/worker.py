"""One compile, GPU-free: (spec's job, arch) -> compiler outputs. Runs in worker processes.

A job is a bundled variant's file and config, a captured launch (function, signature, specialisation,
constexprs, options: ``compile.load``) or a Triton IR file (a cache entry's TTIR).

This is the only module that drives ``triton.compile``. It returns plain dicts (picklable, cacheable);
parsing into ResourceUsage happens in ``compile.engine`` through ``vgprscope.parse``.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..archs import AmdArch, Arch, NvidiaArch, get_arch


@dataclass(frozen=True)
class CompileJob:
    variant: str
    directory: str
    file_name: str
    arch: str
    config: dict[str, Any]
    kernels: tuple[str, ...]
    kind: str = "variant"  # "variant", "launch" (a captured launch) or "ir" (an IR file)
    payload: str = ""  # the spec's job, JSON (CompileSpec.job)


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the most telling line of its message."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # Triton's CompilationError puts the source excerpt first and the reason last.
    msg = lines[-1] if lines else ""
    for ln in lines:
        if "error" in ln.lower() and len(ln) < 300:
            msg = ln
            break
    msg = msg[:300]
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


@contextlib.contextmanager
def _quiet():
    """Keep Triton's and LLVM's prints, warnings and dumps out of the user's output.

    Python-level prints (Triton's ptxas log among them) are captured and returned; C++-level output on
    fds 1 and 2 goes to a temporary file that is discarded.
    """
    buf = io.StringIO()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                yield buf
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


_COMPILE_ENV = {
    # Kernels decorated while TRITON_INTERPRET is set are interpreter objects and cannot be compiled.
    "TRITON_INTERPRET": "0",
    # Our own cache keys by the full specialisation; Triton's cache would hide compile times and leave
    # nothing to parse on a hit, so every compile here is a real one.
    "TRITON_ALWAYS_COMPILE": "1",
    "TRITON_DUMP_PTXAS_LOG": "1",
    "TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),  # 3.9 warns while unset
}


def configure_triton_env() -> None:
    """The environment of a compile worker, for good (call before triton is imported there)."""
    os.environ.update(_COMPILE_ENV)
    # Triton still writes its artifacts; keep them out of the user's ~/.triton
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(tempfile.gettempdir(), "vgprscope-triton"))


@contextlib.contextmanager
def compile_env():
    """The same environment for an in-process compile, restored afterwards (a later JIT launch in this
    process must not inherit "always compile")."""
    saved = {k: os.environ.get(k) for k in _COMPILE_ENV}
    os.environ.update(_COMPILE_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _arg_types(fn, args: dict[str, Any], constexprs: dict[str, Any], backend, hip: bool):
    """Signature and specialisation attrs exactly as Triton's JIT would derive them for these values."""
    no_spec = set()
    for p in getattr(fn, "params", []):
        if getattr(p, "do_not_specialize", False):
            no_spec.add(p.name)
    signature: dict[str, str] = {}
    attrs: dict[tuple[int, ...], list] = {}
    consts = dict(constexprs)
    for i, name in enumerate(fn.arg_names):
        if name in constexprs:
            signature[name] = "constexpr"
            continue
        if name not in args:
            raise KeyError(f"kernel argument {name!r} has no example value")
        value = args[name]
        if isinstance(value, str) and value.startswith("*"):
            signature[name] = value
            desc = "D" + ("S" if hip else "")  # 16-byte aligned; on AMD within 2 GB (buffer ops)
        elif isinstance(value, bool):
            signature[name] = "i1"
            desc = ""
        elif isinstance(value, int):
            if value == 1 and name not in no_spec:
                signature[name] = "constexpr"
                consts[name] = 1
                continue
            signature[name] = "i32" if -(2**31) <= value < 2**31 else "i64"
            desc = "D" if value % 16 == 0 and name not in no_spec else ""
        elif isinstance(value, float):
            signature[name] = "fp32"
            desc = ""
        else:
            raise TypeError(f"kernel argument {name!r}: unsupported example value {value!r}")
        parsed = backend.parse_attr(desc) if desc else []
        if parsed:
            attrs[(i,)] = parsed
    return signature, consts, attrs


def _options(arch: Arch, cfg: dict[str, Any]) -> dict[str, Any]:
    opts: dict[str, Any] = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"]}
    names = ("waves_per_eu", "matrix_instr_nonkdim", "kpack") if isinstance(arch, AmdArch) else ("maxnreg",)
    for n in names:
        if cfg.get(n) is not None:
            opts[n] = cfg[n]
    return opts


def _target(arch: Arch):
    from triton.backends.compiler import GPUTarget

    if isinstance(arch, AmdArch):
        return GPUTarget("hip", arch.gfx, arch.wave_size)
    return GPUTarget("cuda", arch.capability, 32)


def _cuobjdump_resources(cubin: bytes) -> str:
    from triton import knobs

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([knobs.nvidia.cuobjdump.path, "--dump-resource-usage", f.name], check=True,
                              capture_output=True, text=True).stdout


def _ptxas_version(arch: NvidiaArch) -> str:
    from triton.backends.nvidia import compiler as nv

    text = nv.get_ptxas_version(arch.capability)
    text = text.decode() if isinstance(text, bytes) else str(text)
    lines = [ln for ln in text.splitlines() if "release" in ln]
    return lines[0].strip() if lines else text.strip()[:80]


def compile_kernels(job: CompileJob) -> list[dict[str, Any]]:
    """Compile every kernel of the job's variant. One dict per kernel; a failure is a dict with ``error``."""
    with compile_env():
        if job.kind == "launch":
            return [_compile_launch(job)]
        if job.kind == "ir":
            return [_compile_ir(job)]
        if job.kind == "artifact":
            return [_read_artifacts(job)]
        return _compile_job(job)


def _compile_job(job: CompileJob) -> list[dict[str, Any]]:
    arch = get_arch(job.arch)
    base = {"variant": job.variant, "arch": job.arch}
    try:
        from .. import loader

        module = loader.load_file(Path(job.directory), job.file_name)
        reason = module.check_config(job.config)
        if reason:
            return [base | {"kernel": k, "error": reason, "seconds": 0.0} for k in job.kernels]
        # the arch's SM / CU count sizes split-k's grid (num_splits), as the device's does at launch
        specs = module.kernel_specs(job.config | {"compute_units": arch.compute_units})
    except Exception as exc:  # a broken kernel file is a row, not the end of the run
        return [base | {"kernel": k, "error": one_line(exc), "seconds": 0.0} for k in job.kernels]
    return [_compile_spec(arch, job, spec, base) for spec in specs]


def _untargetable(arch: Arch) -> str | None:
    if getattr(arch, "triton_target", True):
        return None
    import importlib.metadata

    return (f"the installed Triton ({importlib.metadata.version('triton')}) cannot target {arch.name}: "
            f"{arch.description}; it is in the table for the occupancy calculator")


def _compile_spec(arch: Arch, job: CompileJob, spec: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    def source(backend):
        from triton.compiler import ASTSource

        fn = spec["fn"]
        signature, consts, attrs = _arg_types(fn, spec["args"], spec["constexprs"], backend,
                                              isinstance(arch, AmdArch))
        return ASTSource(fn=fn, signature=signature, constexprs=consts, attrs=attrs)

    return _compile(arch, base | {"kernel": spec["name"]}, source, _options(arch, job.config))


def _compile_launch(job: CompileJob) -> dict[str, Any]:
    """A captured launch: the user's own function, compiled with the launch's signature, specialisation
    (the target backend's descriptors, as its JIT derived them), constexprs and options."""
    import json

    from .load import LoadError, launch_source, load_function

    arch = get_arch(job.arch)
    out = {"variant": job.variant, "arch": job.arch, "kernel": job.kernels[0]}
    p = json.loads(job.payload)
    if reason := _untargetable(arch):
        return out | {"seconds": 0.0, "error": reason}
    # whether the function loads depends on this machine's files and packages, not on the compile: such a
    # row is never cached ("transient"), the next run looks again
    try:
        fn = load_function(p)
    except LoadError as exc:
        return out | {"seconds": 0.0, "error": str(exc), "transient": True}
    except Exception as exc:  # the user's module failed to import: a row, not the end of the run
        return out | {"seconds": 0.0, "error": f"cannot import {p['module']}: {one_line(exc)}", "transient": True}
    vendor = "hip" if isinstance(arch, AmdArch) else "cuda"
    out = _compile(arch, out, lambda backend: launch_source(fn, p, vendor, backend), dict(p["options"]))
    if "error" in out and "inline_asm" in (getattr(fn, "src", "") or ""):
        # the usual reason a kernel compiles for one vendor only: assembly written for the other one
        out["error"] += (f"; the kernel uses inline assembly (tl.inline_asm_elementwise), which {arch.name}'s "
                         "backend cannot take if it was written for another")
    return out


def _compile_ir(job: CompileJob) -> dict[str, Any]:
    """A Triton IR file (a cache entry's TTIR) for another arch, with the options it was built with."""
    import json

    arch = get_arch(job.arch)
    out = {"variant": job.variant, "arch": job.arch, "kernel": job.kernels[0]}
    p = json.loads(job.payload)
    if reason := _untargetable(arch):
        return out | {"seconds": 0.0, "error": reason}
    if not os.path.exists(p["path"]):
        return out | {"seconds": 0.0, "error": f"{p['path']} no longer exists"}
    return _compile(arch, out, lambda backend: p["path"], dict(p["options"]))


def _read_artifacts(job: CompileJob) -> dict[str, Any]:
    """A Triton cache entry's stored outputs, as a compile would have returned them: the AMDGCN text; on
    NVIDIA the cubin's resource usage and, for the spill figures ptxas prints only, ``ptxas -v`` run on the
    stored PTX with Triton's flags (its register count must equal the cubin's: the parser checks)."""
    import json

    arch = get_arch(job.arch)
    p = json.loads(job.payload)
    files = p["files"]
    out = {"variant": job.variant, "arch": job.arch, "kernel": job.kernels[0], "seconds": 0.0, "name": p["name"],
           "shared": int(p["shared"] or 0)}
    if p.get("num_warps"):
        out["num_warps"] = int(p["num_warps"])
    t0 = time.perf_counter()
    try:
        if isinstance(arch, AmdArch):
            out["amdgcn"] = Path(files["amdgcn"]).read_text()
        else:
            out["cuobjdump"] = _cuobjdump_resources(Path(files["cubin"]).read_bytes())
            if "ptx" not in files:
                raise FileNotFoundError("no .ptx in the entry: ptxas cannot give the spill figures")
            out["ptxas_log"] = _ptxas_log(arch, Path(files["ptx"]), p.get("enable_fp_fusion", True),
                                          p.get("ptx_options"))
            out["ptxas_version"] = _ptxas_version(arch)
    except Exception as exc:
        out["error"] = one_line(exc)
    out["seconds"] = time.perf_counter() - t0
    return out


def _ptxas_log(arch: NvidiaArch, ptx: Path, fp_fusion: bool, ptx_options: str | None) -> str:
    """``ptxas -v`` of a stored PTX, with the flags Triton's NVIDIA backend gives it (make_cubin)."""
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [get_ptxas(arch.capability).path, "-lineinfo",
               *([] if fp_fusion else ["--fmad=false"]), "-v", "--regAllocOptLevel=2",
               *(ptx_options.split(" ") if ptx_options else []),
               f"--gpu-name={sm_arch_from_capability(arch.capability)}", str(ptx), "-o", os.path.join(tmp, "k.cubin")]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ptxas failed on {ptx.name}: {done.stderr.strip()[-200:]}")
    return done.stderr + done.stdout


def _compile(arch: Arch, out: dict[str, Any], make_source, options: dict[str, Any]) -> dict[str, Any]:
    """Compile what ``make_source(backend)`` gives for ``arch`` and collect the raw outputs the parsers read."""
    if reason := _untargetable(arch):
        return out | {"seconds": 0.0, "error": reason}
    t0 = time.perf_counter()
    try:
        import triton
        from triton.compiler.compiler import make_backend

        target = _target(arch)
        backend = make_backend(target)
        src = make_source(backend)
        with _quiet() as captured:
            kernel = triton.compile(src, target=target, options=options)
        out["seconds"] = time.perf_counter() - t0
        out["num_warps"] = int(kernel.metadata.num_warps)
        out["name"] = kernel.metadata.name
        out["shared"] = int(kernel.metadata.shared)
        out["ttgir"] = kernel.asm["ttgir"]  # `explain`: the tensors live across each loop, with layouts
        if isinstance(arch, AmdArch):
            out["amdgcn"] = kernel.asm["amdgcn"]
        else:
            # `explain`: nvdisasm -gi reads spill sites from the cubin's line info (JSON holds text)
            out["cubin_b64"] = base64.b64encode(kernel.asm["cubin"]).decode("ascii")
            out["ptxas_log"] = captured.getvalue()
            out["cuobjdump"] = _cuobjdump_resources(kernel.asm["cubin"])
            out["ptxas_version"] = _ptxas_version(arch)
    except Exception as exc:
        out["seconds"] = time.perf_counter() - t0
        out["error"] = one_line(exc)
    return out
