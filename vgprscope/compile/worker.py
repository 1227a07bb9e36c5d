"""The compile worker: one CompileJob (as JSON) -> the compiler's raw outputs, GPU-free.

Standard library and Triton only (and ``kernel_load`` beside it): vgprscope's process pool runs it, so do
Dask workers, and so does another Python environment's interpreter for another Triton release, as
``python worker.py --serve`` reading one JSON request per line on stdin and answering on stdout. Nothing
here imports vgprscope; parsing, occupancy and everything after happen in vgprscope's own process.

Per-backend lines (``target["backend"] == "hip"``: which raw outputs to collect, the AMD linker, the
NVIDIA tools) stay here, not in ``vgprscope.backends``: this file runs where vgprscope cannot be imported
(another Triton's environment, a Dask worker), so it cannot ask a backend. What the main process makes of
those outputs (the parser, the spill sites, occupancy) is each backend's (``vgprscope.backends``); a new
backend adds its collection here too. tests/test_layers.py exempts this file and ``kernel_load`` alone.

Requests: ``{"op": "compile", "job": {...}}`` compiles (or, for a Triton cache entry's stored outputs,
reads) one kernel; ``{"op": "plan", ...}`` turns a kernel-directory variant and its config into its jobs
(the variant file's ``check_config`` and ``kernel_specs``). Every answer carries the worker's Triton version,
so a client never takes another release's numbers for its own.

A failure is an answer with ``error`` (one line) and ``error_kind``: ``compile`` for the compiler's own
verdict on this input (cacheable), ``environment`` for anything this machine caused (a file or module
missing, memory, a killed tool, an interrupted run): never cached, the next run looks again.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from typing import Any

try:
    from . import kernel_load
except ImportError:  # run from its own file (another environment's Python): load the sibling by path
    import importlib.util as _ilu

    _spec = _ilu.spec_from_file_location("_vgprscope_kernel_load",
                                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel_load.py"))
    if _spec is None or _spec.loader is None:
        raise ImportError("cannot load kernel_load.py beside the compile worker") from None
    kernel_load = _ilu.module_from_spec(_spec)
    sys.modules[_spec.name] = kernel_load
    _spec.loader.exec_module(kernel_load)

PROTOCOL = 1
COMPILE = "compile"
ENVIRONMENT = "environment"

# Set in every worker before Triton is imported.
_ENV = {
    # kernels decorated while TRITON_INTERPRET is set are interpreter objects and cannot be compiled
    "TRITON_INTERPRET": "0",
    # vgprscope's cache keys by the whole compile; Triton's would hide compile times and leave nothing to parse
    "TRITON_ALWAYS_COMPILE": "1",
    "TRITON_DUMP_PTXAS_LOG": "1",
}
_ENV_DEFAULTS = {"TRITON_DEFAULT_FP_FUSION": "1"}  # Triton 3.9 warns while it is unset; 1 is its default
FORCED_ENV = tuple(_ENV)  # the same in every compile: vgprscope's cache key leaves them out
ENV_DEFAULTS = dict(_ENV_DEFAULTS)
# Seconds a compile may run before it is stopped and made a row (VGPRSCOPE_COMPILE_TIMEOUT in the engine).
DEFAULT_TIMEOUT = 300.0


# Whether this process is a compile worker of its own (configure() ran), not a user's process compiling in place.
_OWN_PROCESS = False


def configure() -> None:
    """The environment of a compile worker, for good (call before triton is imported there)."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    os.environ.update(_ENV)
    for k, v in _ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    # Triton still writes its artifacts; keep them out of the user's ~/.triton
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(tempfile.gettempdir(), "vgprscope-triton"))


@contextlib.contextmanager
def compile_env(settings: dict[str, str] | None = None) -> Iterator[None]:
    """The worker environment (and a job's compiler settings) for one in-process compile, restored after."""
    wanted = dict(_ENV) | {k: os.environ.get(k, v) for k, v in _ENV_DEFAULTS.items()} | dict(settings or {})
    saved = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """What a user's module prints while it is imported, and anything else written to fd 1, goes to stderr:
    a command's stdout holds its tables and JSON only."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def _quiet(diagnostics: list[str] | None = None, log: list[str] | None = None) -> Iterator[io.StringIO]:
    """Keep Triton's and LLVM's prints, warnings and dumps out of the user's output. Python-level prints
    (Triton's ptxas log among them) are returned; C-level output on fds 1 and 2 is discarded, except the
    MLIR ``error:`` diagnostics, kept in ``diagnostics`` (a Gluon layout the module rejects is said there
    only: the exception reads "error encountered during parsing"), and LLVM's and MLIR's diagnostic lines,
    kept in ``log`` (``_compiler_lines``)."""
    buf = io.StringIO()
    err = io.StringIO()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                yield buf
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            if diagnostics is not None or log is not None:
                sink.seek(0)
                text = sink.read().decode("utf-8", "replace") + "\n" + err.getvalue()
                if diagnostics is not None:
                    diagnostics += _mlir_errors(text)
                if log is not None:
                    log += _compiler_lines(text)


# What LLVM and MLIR print when they have something to say (vgprscope.parse.diagnostics reads these lines):
# ``LLVM ERROR: ...`` and ``[LOC: ]warning|remark|error|note: ...``; the IR dumps around them are left out.
_COMPILER_LINE = re.compile(r"^(?:LLVM ERROR: |(?:.*?: )?(?:warning|remark|error|note): )")
_COMPILER_LINES = 200


def _compiler_lines(text: str) -> list[str]:
    """The diagnostic lines of a compile's C-level output, each once, at most ``_COMPILER_LINES``."""
    kept = dict.fromkeys(ln.rstrip() for ln in text.splitlines() if _COMPILER_LINE.match(ln))
    return list(kept)[:_COMPILER_LINES]


_LLVM_VERSIONS: dict[str, str] = {}


def llvm_version() -> str:
    """The LLVM build of this worker's Triton, as its library names it (``24.0.0git (b010a18d...)``, the
    string ``llvm.add_version_info`` writes); "" where it cannot be read."""
    import glob
    import mmap

    root = _triton_root()
    if root is None:
        return ""
    if root not in _LLVM_VERSIONS:
        found = ""
        for path in sorted(glob.glob(os.path.join(root, "_C", "libtriton*"))):
            try:
                with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    m = re.search(rb"LLVM version (\S+ \([0-9a-f]{7,40}\))", data)
                    found = m[1].decode("ascii", "replace") if m else ""
            except (OSError, ValueError):
                continue
            if found:
                break
        _LLVM_VERSIONS[root] = found
    return _LLVM_VERSIONS[root]


def _mlir_errors(text: str) -> list[str]:
    """MLIR's ``FILE:LINE:COL: error: MESSAGE`` diagnostics of a compile's output, each as one line
    ``FILE:LINE: MESSAGE`` (the message's own continuation lines joined; the source excerpt and caret after
    it left out)."""
    found: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head, sep, message = line.partition(": error: ")
        if not sep:
            continue
        parts = head.rsplit(":", 2)
        where = f"{os.path.basename(parts[0])}:{parts[1]}" if len(parts) == 3 else os.path.basename(head)
        more = []
        for nxt in lines[i + 1:i + 4]:
            if not nxt.strip() or nxt.startswith(" ") or ": note: " in nxt or ": error: " in nxt:
                break
            more.append(nxt.strip())
        found.append(" ".join([f"{where}: {message.strip()}", *more]))
    return found


def triton_version() -> str:
    try:
        import triton

        return str(triton.__version__)
    except Exception:
        return ""


# ------------------------------------------------------------------------------------------- messages

def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and what it says, not the source excerpt around it.

    Triton's CompilationError puts the source excerpt and a caret first and the reason after the caret
    (a failed ``tl.static_assert``: its message); PTXASError wraps ptxas's own stderr between a headline
    and the repro command: that stderr is the reason."""
    text = str(exc).strip()
    lines = [ln.rstrip() for ln in text.splitlines()]
    msg = ""
    carets = [i for i, ln in enumerate(lines) if ln.strip() == "^"]
    if carets:
        msg = " ".join(ln.strip() for ln in lines[carets[-1] + 1:] if ln.strip())
    elif "`ptxas` stderr:" in text:
        after = text.split("`ptxas` stderr:", 1)[1].split("Repro command:", 1)[0]
        msg = " ".join(ln.strip() for ln in after.splitlines() if ln.strip())
    if not msg and exc.__cause__ is not None and exc.__cause__ is not exc:
        return f"{type(exc).__name__}: {one_line(exc.__cause__)}"
    if not msg:
        kept = [ln.strip() for ln in lines if ln.strip()]
        msg = next((ln for ln in kept if "error" in ln.lower() and len(ln) < 300), kept[-1] if kept else "")
    msg = " ".join(msg.split())[:300]
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _kind(exc: BaseException) -> str:
    """Whether a failure is the compiler's verdict on the input or the machine's doing."""
    if isinstance(exc, (OSError, MemoryError, ImportError, subprocess.SubprocessError, kernel_load.LoadError,
                        RecursionError)) or timed_out(exc) is not None or toolchain_fault(exc):
        return ENVIRONMENT
    return COMPILE


def timed_out(exc: BaseException) -> BaseException | None:
    """The CompileTimeout behind an exception (Triton's front end wraps what a kernel's code raises)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, CompileTimeout):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


class CompileTimeout(Exception):
    """A compile ran past its time limit (a row, never cached: a faster or idler machine may finish it)."""


def _triton_root() -> str | None:
    """Where this worker's Triton package is, found without importing it (its import may be what fails)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    return os.path.realpath(where[0]) + os.sep if where else None


def toolchain_fault(exc: BaseException) -> bool:
    """Whether a failure comes from the toolchain's own files rather than from the kernel: Triton's package
    failing to import (a SyntaxError in its ``__init__.py``, a library that does not load), a syntax error in
    one of its files, or a file of it named in the error that is not there (its libdevice, removed mid-run)."""
    root = _triton_root()
    if root is None:
        return isinstance(exc, ImportError) and getattr(exc, "name", None) == "triton"

    def real(path: str | None) -> str:
        return os.path.realpath(path) if path else ""

    if isinstance(exc, SyntaxError) and real(exc.filename).startswith(root):
        return True
    tb = exc.__traceback__
    while tb is not None:  # an import of Triton's own modules that failed part way
        code = tb.tb_frame.f_code
        if code.co_name == "<module>" and real(code.co_filename).startswith(root):
            return True
        tb = tb.tb_next
    import re

    for path in re.findall(r"(/[^\s'\"`:;,()\[\]]+)", str(exc)):
        path = path.rstrip(".")  # the end of a sentence
        if real(path).startswith(root) and not os.path.exists(path):
            return True
    return False


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Stop a compile that runs past ``seconds``: an alarm raises CompileTimeout in it (Python code: Triton's
    front end, a ptxas it waits on); in a worker process of vgprscope's own, a compile stuck where no signal
    reaches (LLVM) ends the process a little later, which its pool answers for as a dead worker."""
    import signal
    import threading

    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer") or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None) \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise CompileTimeout(f"the compile ran past {seconds:g} s and was stopped (VGPRSCOPE_COMPILE_TIMEOUT sets "
                             "the limit)")

    hard = None
    if _OWN_PROCESS:
        hard = threading.Timer(seconds + max(10.0, seconds / 2), os._exit, (TIMEOUT_EXIT,))
        hard.daemon = True
        hard.start()
    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        if hard is not None:
            hard.cancel()


TIMEOUT_EXIT = 124  # a worker that ended itself because a compile would not stop


# ------------------------------------------------------------------------------------- building sources

_TORCH_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i8": "int8",
                "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                "u64": "uint64", "i1": "bool", "u1": "bool", "fp8e5": "float8_e5m2", "fp8e4nv": "float8_e4m3fn",
                "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz"}


class _Dtype:
    """Reads as a torch dtype to Triton's binder (it maps the name), without torch."""

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"

    __repr__ = __str__


# One object per dtype for the life of the process: Triton's native binder caches what a dtype object maps
# to by the object's identity, so a dtype stand-in that is freed and another allocated at its address would
# be read as the first one (a pointer to fp16 specialised as fp32).
_DTYPES: dict[str, _Dtype] = {}


def _dtype(name: str) -> _Dtype:
    if name not in _DTYPES:
        _DTYPES[name] = _Dtype(_TORCH_NAMES.get(name, name))
    return _DTYPES[name]


class _Pointer:
    """Stands in for a tensor argument with the launch's facts: what the binder reads of one."""

    def __init__(self, dtype: str, aligned: bool, small: bool):
        self.dtype = _dtype(dtype)
        self._aligned, self._small = aligned, small

    def data_ptr(self) -> int:
        return 1 << 20 if self._aligned else (1 << 20) + 2

    def ptr_range(self) -> int:
        return 1 << 20 if self._small else 1 << 33


_INT_BASE = {"i32": 0, "i64": 1 << 32, "u64": 1 << 63}


def stand_in(arg: dict[str, Any]) -> Any:
    """A value with exactly the argument's facts, for the installed release's binder to specialise."""
    typ = arg["type"]
    if typ.startswith("*"):
        return _Pointer(typ[1:], bool(arg.get("aligned")), bool(arg.get("small")))
    if typ in _INT_BASE:
        if arg.get("one"):
            return 1
        return _INT_BASE[typ] + (16 if arg.get("aligned") else 17)
    if typ in ("fp32", "fp64", "fp16", "bf16"):
        return 1.5
    if typ in ("u1", "i1"):
        return True
    if typ == "constexpr":
        return kernel_load.decode_constexpr(arg.get("value"))
    raise ValueError(f"argument {arg['name']}: type {typ!r} has no stand-in (tuples and descriptors are not "
                     "supported yet)")


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
        raise kernel_load.LoadError(
            "the kernel's parameters changed since the launch was recorded ("
            + "; ".join(x for x in (f"now also {', '.join(missing)}" if missing else "",
                                    f"no longer {', '.join(extra)}" if extra else "") if x)
            + "): capture again")
    for p in fn.params:
        recorded = by_name[p.name]["type"] == "constexpr"
        if p.is_constexpr and not recorded:
            raise kernel_load.LoadError(f"parameter {p.name} became a constexpr since the launch was recorded: "
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
    import importlib.util

    if "torch" in sys.modules or not (_OWN_PROCESS or importlib.util.find_spec("torch") is None):
        yield
        return
    import types

    placeholder = types.ModuleType("torch")
    placeholder.Tensor = type("Tensor", (), {})  # type: ignore[attr-defined]
    sys.modules["torch"] = placeholder
    try:
        yield
    finally:
        if sys.modules.get("torch") is placeholder:
            del sys.modules["torch"]


def _option_names(backend: Any) -> list[str]:
    import dataclasses

    return sorted(f.name for f in dataclasses.fields(type(backend.parse_options({}))))


def _unknown_options(backend: Any, options: dict[str, Any]) -> list[str]:
    known = set(_option_names(backend))
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
    path = os.path.join(_scratch_dir(), "ld.lld")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f"#!{sys.executable}\n{_LLD_STAND_IN}")
        os.chmod(path, 0o755)
    os.environ["TRITON_HIP_LLD_PATH"] = path


# ---------------------------------------------------------------------------------------------- compile

def _nvidia_tool(name: str) -> str:
    """A CUDA tool shipped in the Triton wheel, where this release keeps it (knobs from 3.4 on)."""
    try:
        from triton import knobs

        return str(getattr(knobs.nvidia, name).path)
    except (ImportError, AttributeError):
        from triton.backends.nvidia import compiler as nv

        return str(nv._path_to_binary(name)[0])


def _cuobjdump_resources(cubin: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return subprocess.run([_nvidia_tool("cuobjdump"), "--dump-resource-usage", f.name], check=True,
                              capture_output=True, text=True).stdout


def _ptxas_version(capability: int) -> str:
    from triton.backends.nvidia import compiler as nv

    try:
        text = nv.get_ptxas_version(capability)
    except TypeError:  # releases whose ptxas does not depend on the arch
        text = nv.get_ptxas_version()
    text = text.decode() if isinstance(text, bytes) else str(text)
    lines = [ln for ln in text.splitlines() if "release" in ln]
    return lines[0].strip() if lines else text.strip()[:80]


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


def _collect(kernel: Any, target: dict[str, Any], captured: io.StringIO, out: dict[str, Any],
             ptxas_logs: list[str] | None = None) -> None:
    """The raw outputs the parsers read, per vendor: AMDGCN text; or ptxas's log, cuobjdump's resource
    usage and the cubin (for explain's spill sites), all with the TTGIR (explain's live tensors)."""
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
        out["cuobjdump"] = _cuobjdump_resources(kernel.asm["cubin"])
        out["ptxas_version"] = _ptxas_version(int(target["arch"]))


def _compile(job: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
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
                               f"(it would be ignored); options it takes: {', '.join(_option_names(backend))}",
                      "error_kind": COMPILE}
    if t["backend"] == "hip":
        _lld_for(backend)
    fn = None
    if kind == "function":
        try:
            fn = kernel_load.load_function(source)
        except Exception as exc:  # not here, or its module failed to import (it may need a GPU to import)
            why = str(exc) if isinstance(exc, kernel_load.LoadError) else \
                f"cannot import {source.get('module') or os.path.basename(source['file'])}: {one_line(exc)}"
            if not source.get("snapshot"):
                return out | {"error": why, "error_kind": ENVIRONMENT}
            try:
                snap = json.loads(source["snapshot"])
                fn = kernel_load.load_snapshot(snap, _scratch_dir())
            except Exception as snap_exc:
                return out | {"error": f"{why}; the capture's snapshot does not load either: {one_line(snap_exc)}",
                              "error_kind": ENVIRONMENT}
            # compiled from what the capture recorded, not from a file here, and the row says so; cached by the
            # snapshot (the engine checks it) and the user's files it was captured from, as they are now
            out["note"] = f"compiled from the capture's snapshot of its source ({why})"
            out["deps"] = {p: kernel_load.file_hash(p) for p in {source["file"], *kernel_load.snapshot_files(snap)}
                           if os.path.isfile(p)}
        jits = [kernel_load.decode_constexpr(a.get("value")) for a in job["args"]
                if a["type"] == "constexpr" and isinstance(a.get("value"), dict) and "jit" in a["value"]]
        if "note" not in out:
            out["deps"] = kernel_load.dependencies(fn, jits)
        src = _function_source(fn, job, backend)
    else:  # Triton IR: compiled from a file, as Triton reads IR
        tmp = tempfile.NamedTemporaryFile("w", suffix="." + source["suffix"], delete=False)
        with tmp:
            tmp.write(source["text"])
        src = tmp.name
    t0 = time.perf_counter()
    diagnostics: list[str] = []
    log: list[str] = []
    out["llvm_version"] = llvm_version()
    try:
        with _quiet(diagnostics, log) as captured, _ptxas_tap() as ptxas_logs:
            kernel = triton.compile(src, target=target, options=options)
        out["seconds"] = time.perf_counter() - t0
        _collect(kernel, t, captured, out, ptxas_logs)
    except Exception as exc:
        if _kind(exc) == ENVIRONMENT:
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
        if log:  # LLVM's and MLIR's own lines, on a failure too: vgprscope.parse.diagnostics reads them
            out["compile_log"] = "\n".join(log)
        if kind != "function":
            os.unlink(src)
    return out


def _gluon_reason(error: str, target: dict[str, Any]) -> str:
    """A Gluon layout written for another warp size than the target's, said in one line with both sizes
    (MLIR's verifier: "Layout has 32 threads per warp, but the module specifies 64 threads per warp")."""
    import re

    m = re.search(r"Layout has (\d+) threads per warp, but the module specifies (\d+)", error)
    if not m:
        return error
    return (f"the kernel's layouts are written for {m[1]}-thread warps; {_arch_name(target)} runs {m[2]}-thread "
            f"warps: {error}")


_SCRATCH: list[str] = []


def _scratch_dir() -> str:
    """A directory of this worker's own for files it writes (snapshots' modules), removed at exit."""
    if not _SCRATCH:
        import atexit
        import shutil

        _SCRATCH.append(tempfile.mkdtemp(prefix="vgprscope-worker-"))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return _SCRATCH[0]


def _arch_name(target: dict[str, Any]) -> str:
    return str(target["arch"]) if target["backend"] == "hip" else f"sm_{target['arch']}"


def _release_ptxas_flags() -> list[str]:
    """The flags this release's make_cubin gives ptxas beyond line info, ``-v``, fmad and ``ptx_options``, read
    from its own source (3.9 adds ``--regAllocOptLevel=2``, 3.6 none). A wrong guess costs nothing but the
    spill figures: they are taken only where the re-run rebuilds the stored cubin's code."""
    import inspect

    from triton.backends.nvidia.compiler import CUDABackend

    try:
        src = inspect.getsource(CUDABackend.make_cubin)
    except (OSError, TypeError):
        return []
    return ["--regAllocOptLevel=2"] if "--regAllocOptLevel=2" in src else []


def _ptxas_log(capability: int, ptx: str, fp_fusion: bool, ptx_options: str | None) -> tuple[str, bytes]:
    """``ptxas -v`` of a stored PTX, with the flags this release's NVIDIA backend gives it (make_cubin): its
    log and the cubin it writes."""
    from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [get_ptxas(capability).path, "-lineinfo", *([] if fp_fusion else ["--fmad=false"]), "-v",
               *_release_ptxas_flags(), *(ptx_options.split(" ") if ptx_options else []),
               f"--gpu-name={sm_arch_from_capability(capability)}", ptx, "-o", os.path.join(tmp, "k.cubin")]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"ptxas failed on {os.path.basename(ptx)}: {done.stderr.strip()[-200:]}")
        with open(os.path.join(tmp, "k.cubin"), "rb") as f:
            return done.stderr + done.stdout, f.read()


# Sections a rebuild may change without changing what ptxas built: the DWARF line table names each source file
# with the mtime and size ptxas found on disk (zero where the file is gone), and its relocations point into it.
_BUILD_PLACE_SECTIONS = frozenset({".debug_line", ".rel.debug_line", ".rela.debug_line"})


def elf_sections(data: bytes) -> dict[str, tuple[int, int, int, bytes]]:
    """A 64-bit little-endian ELF's sections: name -> (type, flags, size, contents); a section without file
    contents (SHT_NOBITS) has empty contents. ValueError for anything else."""
    import struct

    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx]
    strtab = data[names[4]:names[4] + names[5]]
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for name, kind, flags, _addr, offset, size, *_ in headers:
        label = strtab[name:strtab.index(b"\0", name)].decode()
        out[label] = (kind, flags, size, b"" if kind == 8 else data[offset:offset + size])
    return out


def same_machine_code(rebuilt: bytes, stored: bytes) -> bool:
    """Whether a re-run of ptxas built what the stored cubin holds: every section equal but the line table's
    record of where the build ran (_BUILD_PLACE_SECTIONS); byte for byte where either is not an ELF file."""
    if rebuilt == stored:
        return True
    try:
        a, b = elf_sections(rebuilt), elf_sections(stored)
    except (ValueError, IndexError):
        return False
    keep = (set(a) | set(b)) - _BUILD_PLACE_SECTIONS
    return all(a.get(name) == b.get(name) for name in keep)


def _read_stored(job: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """A Triton cache entry's stored outputs, as a compile would have returned them: the AMDGCN text; on
    NVIDIA the stored cubin's resource usage (its registers, stack and shared memory are the truth) and, for
    the spill figures only ptxas prints, ``ptxas -v`` of the stored PTX with this release's flags, kept only
    where the cubin that re-run writes holds the stored one's code and data (that ptxas built it). ``stored`` says
    who wrote the entry, who read it and what the re-run gave, for the row to name its sources."""
    (_, p), = job["source"].items()
    files = dict(p["files"])
    t = job["target"]
    out |= {"name": p["name"], "shared": int(p["shared"] or 0), "deps": {}}
    if p.get("num_warps"):
        out["num_warps"] = int(p["num_warps"])
    for path in files.values():
        out["deps"][path] = kernel_load.file_hash(path)
    if t["backend"] == "hip":
        with open(files["amdgcn"]) as f:
            out["amdgcn"] = f.read()
        return out
    from triton.backends.nvidia.compiler import get_ptxas

    capability = int(t["arch"])
    with open(files["cubin"], "rb") as f:
        cubin = f.read()
    out["cuobjdump"] = _cuobjdump_resources(cubin)
    try:
        short = str(get_ptxas(capability).version)
    except (AttributeError, TypeError):  # releases whose tool lookup differs: the version line says it too
        short = _ptxas_version(capability)
    stored: dict[str, Any] = {"written_by": p.get("written_by"), "read_by": triton_version(), "ptxas": short}
    if "ptx" not in files:
        stored["ptxas_result"] = "no .ptx in the entry to run ptxas on"
    else:
        try:
            log, rebuilt = _ptxas_log(capability, files["ptx"], p.get("enable_fp_fusion", True),
                                      p.get("ptx_options"))
        except RuntimeError as exc:
            stored["ptxas_result"] = f"this ptxas cannot assemble the stored PTX ({one_line(exc)[-120:]})"
        else:
            if same_machine_code(rebuilt, cubin):
                out["ptxas_log"] = log
                out["ptxas_version"] = _ptxas_version(capability)
                stored["ptxas_result"] = "rebuilds the stored cubin"
            else:
                stored["ptxas_result"] = "does not rebuild the stored cubin"
    out["stored"] = stored
    return out


def compile_job(job: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """One job -> its raw outputs, or ``error`` with its ``error_kind`` (``toolchain``: the failure came from
    the toolchain's own files). Never raises for a bad kernel; one that runs past ``timeout`` seconds is an
    error too."""
    out: dict[str, Any] = {"seconds": 0.0}
    t0 = time.perf_counter()
    try:
        with compile_env(job.get("settings")), stdout_to_stderr(), kernel_load.snapshot_lines(), _deadline(timeout):
            if "stored" in job["source"]:
                return _read_stored(job, out)
            return _compile(job, out)
    except Exception as exc:
        late = timed_out(exc)
        message = str(late) if late is not None else str(exc) if isinstance(exc, kernel_load.LoadError) \
            else one_line(exc)
        out |= {"seconds": time.perf_counter() - t0, "error": message, "error_kind": _kind(exc)}
        if toolchain_fault(exc):
            out["toolchain"] = True
        return out


# ------------------------------------------------------------------------------------------------- plan

def _facts(name: str, value: Any) -> dict[str, Any]:
    """An example launch value of a variant's kernel spec -> the argument's facts (pointers are given as
    their Triton type and stand for 16-byte aligned tensors within 2 GiB, as a freshly allocated one is)."""
    if isinstance(value, str) and value.startswith("*"):
        return {"name": name, "type": value, "aligned": True, "small": True}
    if isinstance(value, bool):
        return {"name": name, "type": "u1"}
    if isinstance(value, int):
        typ = "i32" if -(2**31) <= value < 2**31 else ("i64" if value < 2**63 else "u64")
        return {"name": name, "type": typ, "aligned": value % 16 == 0, "one": value == 1}
    if isinstance(value, float):
        return {"name": name, "type": "fp32"}
    if value is None:
        return {"name": name, "type": "constexpr", "value": None}
    raise TypeError(f"kernel argument {name!r}: unsupported example value {value!r}")


def plan(request: dict[str, Any]) -> dict[str, Any]:
    """A kernel-directory variant at one config -> its jobs, one per kernel (or the variant's refusal).

    ``request``: directory, package, file_name, config (a dict), target, options; the variant file's
    ``check_config`` may refuse the config (a reason), its ``kernel_specs`` lists each kernel's function,
    example launch values and constexprs."""
    try:
        with compile_env(), stdout_to_stderr():
            import importlib

            stem = os.path.splitext(request["file_name"])[0]
            with kernel_load.loading():
                kernel_load.register_package(request["package"], request["directory"])
                module = importlib.import_module(f"{request['package']}.{stem}")
            config = request["config"]
            reason = module.check_config(config)
            if reason:
                return {"reason": str(reason)}
            specs = module.kernel_specs(config | {"compute_units": request.get("compute_units", 0)})
            jobs = []
            for spec in specs:
                fn = kernel_load.unwrap(spec["fn"])
                ref = kernel_load.function_ref(fn)
                ref |= {"package": request["package"], "package_dir": request["directory"]}
                args = []
                for name in fn.arg_names:
                    if name in spec["constexprs"]:
                        args.append({"name": name, "type": "constexpr",
                                     "value": kernel_load.encode_constexpr(spec["constexprs"][name])})
                    elif name in spec["args"]:
                        args.append(_facts(name, spec["args"][name]))
                    else:
                        raise KeyError(f"kernel argument {name!r} of {spec['name']} has no example value")
                jobs.append({"name": spec["name"], "job": {
                    "source": {"function": ref}, "target": request["target"], "args": args,
                    "options": request.get("options") or {}}})
            return {"jobs": jobs}
    except Exception as exc:  # a broken kernel file is its rows' reason, not the end of the run
        return {"error": one_line(exc), "error_kind": _kind(exc)}


def _derive(request: dict[str, Any]) -> dict[str, Any]:
    """The launches a captured kernel's current source makes of its recorded calls (``derive.py``)."""
    try:
        from . import derive
    except ImportError:  # run from its own file: the sibling by path
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "_vgprscope_derive", os.path.join(os.path.dirname(os.path.abspath(__file__)), "derive.py"))
        if spec is None or spec.loader is None:
            raise ImportError("cannot load derive.py beside the compile worker") from None
        derive = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(derive)
    try:
        with compile_env(), stdout_to_stderr():
            return dict(derive.derive(request))
    except Exception as exc:
        return {"error": one_line(exc), "error_kind": ENVIRONMENT}


# --------------------------------------------------------------------------------------------- protocol

def run(request: dict[str, Any]) -> dict[str, Any]:
    """Answer one request (what the process pool and Dask call); every answer names this Triton."""
    op = request.get("op")
    if op == "compile":
        answer = compile_job(request["job"], request.get("timeout", DEFAULT_TIMEOUT))
    elif op == "plan":
        answer = plan(request)
    elif op == "derive":
        answer = _derive(request)
    else:
        answer = {"error": f"unknown request {op!r}", "error_kind": ENVIRONMENT}
    return answer | {"triton_version": triton_version(), "protocol": PROTOCOL}


def serve() -> None:
    """JSON lines: a request per line on stdin, its answer on the real stdout; anything else (a user
    module's prints, Triton's) goes to stderr."""
    configure()
    # Ctrl-C reaches the whole process group: the parent handles it, and ends this worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        request = None
        try:
            request = json.loads(line)
            answer = run(request)
        except Exception as exc:
            answer = {"error": one_line(exc), "error_kind": ENVIRONMENT, "triton_version": triton_version()}
        answer["id"] = request.get("id") if isinstance(request, dict) else None
        try:
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
        except (BrokenPipeError, ValueError):  # the parent is gone (killed): nobody to answer, nothing to say
            os._exit(0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    elif sys.argv[1:] == ["--version"]:
        configure()
        try:
            import triton  # noqa: F401
        except Exception as exc:  # the probe's one line says why
            print(f"cannot import triton: {one_line(exc)}", file=sys.stderr)
        print(json.dumps({"triton_version": triton_version(), "protocol": PROTOCOL,
                          "triton_dir": (_triton_root() or "").rstrip(os.sep)}))
    else:
        print("usage: python worker.py --serve | --version", file=sys.stderr)
        sys.exit(2)
