"""One CompileJob (as JSON) -> the compiler's raw outputs, GPU-free: the kernel loaded (or built from a
capture's snapshot), its launch facts specialised by the installed release's own binder, compiled, and the
outputs each vendor's parser reads collected.

Per-backend lines (``target["backend"] == "hip"``: which raw outputs to collect, the AMD linker, the NVIDIA
tools) stay here, not in ``vgprscope.backends``: this runs where vgprscope cannot be imported (another
Triton's environment, a Dask worker), so it cannot ask a backend. What the main process makes of those
outputs (the parser, the spill sites, occupancy) is each backend's; a new backend adds its collection here.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from . import constexpr, current, hashing, loader, manifest, protocol, scratch, snapshot, static
from .facts import stand_in
from .guard import deadline, quiet, stdout_to_stderr
from .protocol import COMPILE, ENVIRONMENT, compile_env, one_line, timed_out, toolchain_fault, triton_version
from .stored import cuobjdump_resources, nvdisasm, ptxas_version, read_stored

# the row's note where a kernel was compiled from its module's text alone (``FunctionSource.from_snapshot``)
SOURCE_TEXT_NOTE = "compiled from its source text, its module read and never run"


def _function_source(fn: Any, job: dict[str, Any], backend: Any) -> Any:
    """ASTSource of the launch: the installed release's own binder specialises the facts, and the result is
    packed the way its JIT packs a launch (``JITFunction._pack_args``)."""
    from triton.compiler import ASTSource
    from triton.runtime.jit import create_function_from_signature

    by_name = {a["name"]: a for a in job["args"]}
    params = [p.name for p in fn.params]
    missing = [n for n in params if n not in by_name]
    extra = [n for n in by_name if n not in params]
    if missing or extra:
        raise loader.LoadError(
            "the kernel's parameters changed since the launch was recorded ("
            + "; ".join(x for x in (f"now also {', '.join(missing)}" if missing else "",
                                    f"no longer {', '.join(extra)}" if extra else "") if x)
            + "): capture again")
    for p in fn.params:
        recorded = by_name[p.name]["type"] == "constexpr"
        if p.is_constexpr and not recorded:
            raise loader.LoadError(f"parameter {p.name} became a constexpr since the launch was recorded: "
                                        "capture again")
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    with _torch_if_missing():
        bound, specialization, _ = binder(*[stand_in(by_name[n]) for n in params])
    signature = {n: s[0] for n, s in zip(params, specialization)}
    values = list(bound.values())
    constexprs = {(i,): values[i] for i, s in enumerate(specialization) if s[0] == "constexpr"}
    attrs = {}
    for i, s in enumerate(specialization):
        desc = "" if s[0] == "constexpr" else s[1]
        if isinstance(desc, str):
            attrs[(i,)] = backend.parse_attr(desc)
    source_class = _source_class(fn, ASTSource, backend.target)
    return source_class(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)


# Gluon ops (as its IR names them) whose instruction only some NVIDIA archs have, with those capabilities
# (PTX ISA: wgmma.mma_async needs sm_90a; tcgen05.mma sm_100a / sm_103a). Elsewhere Triton's NVIDIA backend
# aborts the whole process in LLVM ("Cannot select: intrinsic %llvm.nvvm.wgmma..."), so it is said first.
_ARCH_OPS = {"ttng.warp_group_dot": ("warpgroup_mma (wgmma)", (90,)),
             "ttng.tc_gen5_mma": ("tcgen05_mma", (100, 103))}


def _source_class(fn: Any, plain: Any, target: Any) -> Any:
    """The source class the kernel's own JIT compiles with: a ``@gluon.jit`` kernel (``is_gluon()``, Triton
    3.4 on) through Gluon's source, which keeps its explicit layouts, its IR checked for instructions the
    target lacks; any other through the plain AST source."""
    is_gluon = getattr(fn, "is_gluon", None)
    if not (callable(is_gluon) and is_gluon()):
        return plain
    from triton.experimental.gluon._runtime import GluonASTSource

    class Checked(GluonASTSource):  # type: ignore[misc]
        def make_ir(self, *args: Any, **kwargs: Any) -> Any:
            module = super().make_ir(*args, **kwargs)
            if getattr(target, "backend", "") == "cuda":
                text = str(module)
                for op, (name, archs) in _ARCH_OPS.items():
                    if op in text and int(target.arch) not in archs:
                        raise ValueError(f"the kernel uses {name}, an instruction of "
                                         f"{' / '.join(f'sm_{a}' for a in archs)} only: sm_{target.arch} lacks it")
            return module

    return Checked


@contextlib.contextmanager
def _torch_if_missing() -> Iterator[None]:
    """Triton's HIP binder imports torch to test a tensor's storage size (``is_within_2gb``), even for an
    argument that answers ``ptr_range()`` (ours do, and are no tensors): that import is 1.3 s of every cold
    compile worker, and a worker may have no torch at all. While the binder runs, a placeholder module stands
    in whose Tensor nothing is an instance of, so the pointer's own range decides, as it does with the real
    torch for an argument that is not a tensor. In a user's own process (an in-place compile) the real torch
    is left to be imported, unless there is none: another thread of theirs may import it meanwhile."""
    if sys.modules.get("torch") is not None or not (protocol.own_process() or not _torch_importable()):
        yield
        return
    import types

    placeholder = types.ModuleType("torch")
    placeholder.Tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
    missing = object()
    before = sys.modules.get("torch", missing)  # a ``None`` that blocks torch is put back as it was
    sys.modules["torch"] = placeholder
    try:
        yield
    finally:
        if sys.modules.get("torch") is placeholder:
            if before is missing:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = before  # type: ignore[assignment]


def _torch_importable() -> bool:
    """Whether ``import torch`` would find torch. An environment may refuse it rather than lack it: a
    ``sys.modules["torch"] = None`` or a meta-path finder that raises ModuleNotFoundError (as some CI setups
    and test harnesses do) makes ``find_spec`` return None or raise; both are no torch, never a failed row."""
    import importlib.util

    if "torch" in sys.modules:
        return sys.modules["torch"] is not None
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def option_names(backend: Any) -> list[str]:
    import dataclasses

    return sorted(f.name for f in dataclasses.fields(type(backend.parse_options({}))))


def _unknown_options(backend: Any, options: dict[str, Any]) -> list[str]:
    known = set(option_names(backend))
    return [k for k in options if k not in known]


_LLD_STAND_IN = """import shutil, sys
a = sys.argv[1:]
if "--version" in a:
    print("LLD stand-in (vgprscope): the linked kernel binary is not read")
else:
    out = a[a.index("-o") + 1]
    src = [x for i, x in enumerate(a) if not x.startswith("-") and a[i - 1] != "-o"][-1]
    shutil.copyfile(src, out)
"""


def _lld_for(backend: Any) -> None:
    """Triton 3.4 and older link AMD kernels with ROCm's ld.lld, which a GPU-free machine does not have:
    give them a stand-in that copies the object. The AMDGCN text and metadata every number comes from are
    made before the link; the linked binary is never read."""
    find = getattr(type(backend), "path_to_rocm_lld", None)
    if find is None or os.environ.get("TRITON_HIP_LLD_PATH"):
        return
    try:
        find()
        return
    except Exception:
        pass
    path = os.path.join(scratch.worker_dir(), "ld.lld")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f"#!{sys.executable}\n{_LLD_STAND_IN}")
        os.chmod(path, 0o755)
    os.environ["TRITON_HIP_LLD_PATH"] = path


@contextlib.contextmanager
def _ptxas_tap() -> Iterator[list[str]]:
    """Keep what ptxas printed when Triton's NVIDIA backend ran it: releases before 3.5 run ``ptxas -v`` but
    print its log only on failure (later ones print it with TRITON_DUMP_PTXAS_LOG). The log is read from the
    file Triton itself gives ptxas as stderr, right after the command Triton built ran."""
    logs: list[str] = []
    try:
        from triton.backends.nvidia import compiler as nv
    except ImportError:
        yield logs
        return
    module = getattr(nv, "subprocess", None)
    original = getattr(module, "run", None)
    if module is None or original is None:
        yield logs
        return

    def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
        done = original(cmd, *args, **kwargs)
        err: Any = kwargs.get("stderr")
        if isinstance(cmd, (list, tuple)) and cmd and "ptxas" in os.path.basename(str(cmd[0])) \
                and hasattr(err, "name") and os.path.exists(err.name):
            with open(err.name) as f:
                logs.append(f.read())
        return done

    module.run = run
    try:
        yield logs
    finally:
        module.run = original


# cuobjdump's resource usage of a kernel with a stack frame or local memory (its spills live there)
_LOCAL_RE = re.compile(r"\b(?:STACK|LOCAL):\s*[1-9]")


def _collect(kernel: Any, target: dict[str, Any], captured: io.StringIO, out: dict[str, Any],
             ptxas_logs: list[str] | None = None, disassemble: str = "always") -> None:
    """The raw outputs the parsers read, per vendor: AMDGCN text; or ptxas's log, cuobjdump's resource
    usage and the cubin (for explain's spill sites), all with the TTGIR (explain's live tensors). The cubin's
    SASS (``nvdisasm``, the loop figures' text: a fixed start-up of about 0.3 s of CPU per cubin) is read here,
    beside the compile, ``always``, or with ``local`` only for a kernel with local memory, whose loops may
    spill, or ``never``; the parent reads any other one from the cubin where a view asks for its loops."""
    out["num_warps"] = int(kernel.metadata.num_warps)
    out["name"] = kernel.metadata.name
    out["shared"] = int(kernel.metadata.shared)
    out["ttgir"] = kernel.asm["ttgir"]
    if target["backend"] == "hip":
        out["amdgcn"] = kernel.asm["amdgcn"]
    else:
        out["cubin_b64"] = base64.b64encode(kernel.asm["cubin"]).decode("ascii")
        log = captured.getvalue()
        out["ptxas_log"] = log if "Used" in log or not ptxas_logs else "\n".join(ptxas_logs)
        out["cuobjdump"] = cuobjdump_resources(kernel.asm["cubin"])
        out["ptxas_version"] = ptxas_version(int(target["arch"]))
        if disassemble == "always" or (disassemble == "local" and _LOCAL_RE.search(out["cuobjdump"])):
            sass = nvdisasm(kernel.asm["cubin"])
            out |= {"sass": sass} if sass else {}


def _compile(job: dict[str, Any], out: dict[str, Any], disassemble: str = "always") -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    (kind, source), = job["source"].items()
    t = job["target"]
    target = GPUTarget(t["backend"], t["arch"], t["warp_size"])
    backend = make_backend(target)
    options = dict(job.get("options") or {})
    unknown = _unknown_options(backend, options)
    if unknown:
        # a release silently drops options it does not know: that would be another compile, not this one
        return out | {"error": f"Triton {triton_version()} has no launch option {unknown[0]!r} for {t['backend']} "
                               f"(it would be ignored); options it takes: {', '.join(option_names(backend))}",
                      "error_kind": COMPILE}
    if t["backend"] == "hip":
        _lld_for(backend)
    fn = None
    if kind == "function":
        read: tuple[str, ...] = ()
        why = _snapshot_reason(source)
        if why is None:
            try:  # the current file: its module imported, or read statically where it does not import here
                fn, loaded = current.function(source, static_only=source.get("load") == "static")
                if source.get("snapshot"):
                    # names a code generator bound in the module after loading its file, as the launch saw them
                    snapshot.bind_recorded_names(fn, json.loads(source["snapshot"]))
            except Exception as exc:  # gone, or what the kernel reaches needs what does not import here
                # a file Triton cannot read as UTF-8 is named so, not as "could not get source code"
                why = loader.not_utf8(source.get("file")) or (
                    str(exc) if isinstance(exc, (loader.LoadError, static.Underivable)) else one_line(exc))
                return out | {"error": why, "error_kind": ENVIRONMENT}
            read = loaded.files
        else:
            try:
                snap = json.loads(source["snapshot"])
                fn = snapshot.load_snapshot(snap, scratch.worker_dir())
            except Exception as snap_exc:
                also = one_line(snap_exc)
                if (utf8 := loader.not_utf8(source.get("file"))) is not None and utf8 in also:
                    return out | {"error": why, "error_kind": ENVIRONMENT}  # the same cause: said once
                return out | {"error": f"{why}; the capture's snapshot does not load either: {also}",
                              "error_kind": ENVIRONMENT}
            # cached by the snapshot (the engine checks it) and the user's files it was captured from, as they are
            out["note"] = SOURCE_TEXT_NOTE if source.get("from_snapshot") else \
                f"compiled from the capture's snapshot of its source ({why})"
            out["deps"] = {p: hashing.file_hash(p) for p in {source["file"], *snapshot.snapshot_files(snap)}
                           if os.path.isfile(p)}
        jits = [constexpr.decode(a.get("value")) for a in job["args"]
                if a["type"] == "constexpr" and constexpr.is_jit_value(a.get("value"))]
        if "note" not in out:
            out["deps"] = manifest.dependencies(fn, jits) | {p: hashing.file_hash(p) for p in read}
        src = _function_source(fn, job, backend)
    else:  # Triton IR: compiled from a file, as Triton reads IR
        tmp = tempfile.NamedTemporaryFile("w", suffix="." + source["suffix"], delete=False)
        with tmp:
            tmp.write(source["text"])
        src = tmp.name
    t0 = time.perf_counter()
    diagnostics: list[str] = []
    log: list[str] = []
    out["llvm_version"] = protocol.llvm_version()
    try:
        with quiet(diagnostics, log) as captured, _ptxas_tap() as ptxas_logs:
            kernel = triton.compile(src, target=target, options=options)
        out["seconds"] = time.perf_counter() - t0
        _collect(kernel, t, captured, out, ptxas_logs, disassemble)
    except Exception as exc:
        if protocol.kind(exc) == ENVIRONMENT:
            raise
        out |= {"seconds": time.perf_counter() - t0, "error": one_line(exc), "error_kind": COMPILE}
        if diagnostics and "error encountered during parsing" in out["error"]:
            # the IR the kernel's source built failed verification (a Gluon layout): MLIR said why, not the exception
            out["error"] = _gluon_reason(f"{type(exc).__name__}: {diagnostics[0]}", t)
        if fn is not None and "inline_asm" in (getattr(fn, "src", "") or ""):
            # the usual reason a kernel compiles for one vendor only: assembly written for the other one
            out["error"] += (f"; the kernel uses inline assembly (tl.inline_asm_elementwise), which "
                             f"{_arch_name(t)}'s backend cannot take if it was written for another")
    finally:
        if log:  # LLVM's and MLIR's own lines, on a failure too: vgprscope's diagnostics parser reads them
            out["compile_log"] = "\n".join(log)
        if kind != "function":
            os.unlink(src)
    return out


def _snapshot_reason(source: dict[str, Any]) -> str | None:
    """Why a function compiles from the capture's snapshot (None: from its file): its file is gone (a library
    not installed here, a notebook cell); or, for a generated kernel (Inductor's, ``load="generated"``), its
    module does not import here (the generated module is the compiler's, never edited: the snapshot is it)."""
    if not source.get("snapshot"):
        return None
    if source.get("from_snapshot"):  # a module read but never run (scan's generated modules)
        return "its module is never run"
    if source.get("load") == "snapshot" or not os.path.isfile(source["file"]):
        return f"{source['file']} is not on this machine"
    if source.get("load") != "generated":
        return None
    try:
        with loader.loading():
            loader.load_module(source)
    except Exception as exc:
        return f"cannot import {source.get('module') or os.path.basename(source['file'])}: {one_line(exc)}"
    return None


def _gluon_reason(error: str, target: dict[str, Any]) -> str:
    """A Gluon layout written for another warp size than the target's, said in one line with both sizes
    (MLIR's verifier: "Layout has 32 threads per warp, but the module specifies 64 threads per warp")."""
    import re

    m = re.search(r"Layout has (\d+) threads per warp, but the module specifies (\d+)", error)
    if not m:
        return error
    return (f"the kernel's layouts are written for {m[1]}-thread warps; {_arch_name(target)} runs {m[2]}-thread "
            f"warps: {error}")


def _arch_name(target: dict[str, Any]) -> str:
    return str(target["arch"]) if target["backend"] == "hip" else f"sm_{target['arch']}"


def compile_job(job: dict[str, Any], timeout: float | None = None, disassemble: str = "always") -> dict[str, Any]:
    """One job -> its raw outputs, or ``error`` with its ``error_kind`` (``toolchain``: the failure came from
    the toolchain's own files). Never raises for a bad kernel; one that runs past ``timeout`` seconds is an
    error too."""
    out: dict[str, Any] = {"seconds": 0.0}
    t0 = time.perf_counter()
    try:
        with compile_env(job.get("settings")), stdout_to_stderr(), snapshot.snapshot_lines(), deadline(timeout), \
                scratch.temporary_files():
            if "stored" in job["source"]:
                return read_stored(job, out, disassemble)
            return _compile(job, out, disassemble)
    except Exception as exc:
        late = timed_out(exc)
        message = str(late) if late is not None else str(exc) if isinstance(exc, loader.LoadError) \
            else one_line(exc)
        out |= {"seconds": time.perf_counter() - t0, "error": message, "error_kind": protocol.kind(exc)}
        if toolchain_fault(exc):
            out["toolchain"] = True
        return out


