"""PyTorch Inductor's kernels: their rows' slot, Inductor's spill threshold, and Inductor's cache directory as a
source (``vgprscope scan`` of ``TORCHINDUCTOR_CACHE_DIR``).

Inductor's autotuner skips a config whose ``n_spills`` exceeds ``inductor_meta["spill_threshold"]`` (PyTorch's
``config.triton.spill_threshold``: 16, 32 on HIP; ``CachingAutotuner.bench`` in
``torch/_inductor/runtime/triton_heuristics.py``). ``n_spills`` is what Triton's driver gives: the function's
local memory per thread (``CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`` / ``HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES``) divided
by 4, with integer division (``load_binary`` in Triton's ``backends/*/driver.c``): a stack array counts as a
spill there. On an H100 (Triton 3.6.0, driver 580) a kernel's ``n_spills`` was its cubin's cuobjdump ``STACK`` / 4
in each of four compiles (0, 48, 384 and 3312 bytes). The skip applies only where Inductor benchmarks configs against each other (more than one).

Inductor's cache directory holds the generated modules (``XX/cXXXX.py``): each a ``@triton.jit`` kernel under
an Inductor heuristic decorator (``@triton_heuristics.pointwise(size_hints=..., triton_meta=...,
inductor_meta=...)``). The decorator's arguments are read as literals, never run; the configs are the
heuristic's (PyTorch's own function, run with ``return_configs=True`` where torch is installed here; a template
or a fixed config names its own), else the one config Inductor saved as the best (``.best_config`` beside the
module). Each kernel becomes a capture's launch (``capture.model.CapturedLaunch``) compiled from its snapshot,
as a captured Inductor kernel is.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.archs import Arch
from ..backends import BACKENDS, backend_named, backend_of_usage
from ..capture.model import Capture, CapturedKernel, CapturedLaunch
from ..core.records import Record
from ..runtime.loader import source_hash as file_source_hash

BACKEND_NAMES = {b.name for b in BACKENDS}
THRESHOLD_EXTRA = "inductor_spill_threshold"


# ------------------------------------------------------------------------------------------ the threshold

def spill_threshold(meta: dict[str, Any] | None, recorded_backend: str | None, backend: str) -> int | None:
    """The threshold Inductor applies on ``backend``: the kernel's ``inductor_meta["spill_threshold"]`` where it
    was generated for that backend (Inductor writes its config's value there), else PyTorch's default for it."""
    given = (meta or {}).get("spill_threshold")
    if isinstance(given, int) and recorded_backend == backend:
        return given
    return backend_named(backend).facts.inductor_spill_threshold if backend in BACKEND_NAMES else None


def n_spills(usage: Any) -> int | None:
    """Triton's ``n_spills`` of a compiled kernel: its local memory per thread // 4 (AMD: the private segment,
    scratch bytes per lane; NVIDIA: the stack frame per thread, what the driver reports for it)."""
    if usage is None:
        return None
    return int(backend_of_usage(usage).figures(usage).scratch_bytes) // 4


@dataclass(frozen=True)
class SpillVerdict:
    n_spills: int
    threshold: int

    @property
    def skipped(self) -> bool:
        """Whether Inductor's autotuner skips the config (strictly more than the threshold)."""
        return self.n_spills > self.threshold

    def text(self) -> str:
        return f"{'skip' if self.skipped else 'kept'}: n_spills {self.n_spills} {'>' if self.skipped else '<='} " \
               f"{self.threshold}"


def spill_verdict(rec: Record | None) -> SpillVerdict | None:
    """An Inductor row's n_spills against Inductor's threshold (None: not Inductor's, or not compiled)."""
    if rec is None or not rec.ok:
        return None
    threshold = dict(rec.extras).get(THRESHOLD_EXTRA)
    n = n_spills(rec.usage)
    if not isinstance(threshold, int) or n is None:
        return None
    return SpillVerdict(n, threshold)


def inductor_slot(args: tuple[dict[str, Any], ...], options: dict[str, Any]) -> str:
    """Record.slot of an Inductor config: the config itself (its constexprs, num_warps, num_stages), so that the
    same config is compared across releases wherever the heuristic lists it, and a config a PyTorch release
    no longer generates is an entry gone, not another config compared with it."""
    parts = [f"{a['name']}={1 if a.get('one') else a.get('value')}" for a in args
             if a["type"] == "constexpr"]
    parts += [f"{k}={options[k]}" for k in ("num_warps", "num_stages") if options.get(k) is not None]
    return "cfg " + ",".join(parts)


# ------------------------------------------------------------------------------------------ the cache

MODULE_PREFIX = "torch._inductor.runtime.compile_tasks."  # the name Inductor loads a generated module under
_HEURISTIC_MODULE = "triton_heuristics"
# best_config fields that are not the config's kwargs (torch/_inductor/runtime/autotune_cache.py)
_BEST_CONFIG_META = {"num_warps", "num_stages", "configs_hash", "found_by_coordesc", "time_taken_ms",
                     "triton_cache_hash", "num_ctas", "maxnreg", "num_consumer_groups", "num_buffers_warp_spec"}


class _NotLiteral(Exception):
    pass


def _literal(node: ast.AST) -> Any:
    """A decorator argument as data, never run: literals, ``set()``, ``DeviceProperties(...)`` as a dict of its
    fields, ``ReductionHint.INNER`` as ``{"enum": ["ReductionHint", "INNER"]}``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral("**")
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Set)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        if node.func.id == "set" and not node.keywords:
            return []
        if node.func.id == "DeviceProperties":
            return {k.arg: _literal(k.value) for k in node.keywords if k.arg}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return {"enum": [node.value.id, node.attr]}
    raise _NotLiteral(ast.dump(node)[:80])


@dataclass(frozen=True)
class GeneratedKernel:
    """One kernel of a generated module, as its decorator describes it (``reason``: why it cannot be read)."""

    file: Path
    name: str
    heuristic: str = ""
    decorator: dict[str, Any] = field(default_factory=dict, compare=False)
    best_config: dict[str, Any] | None = field(default=None, compare=False)
    reason: str | None = None

    @property
    def triton_meta(self) -> dict[str, Any]:
        meta = self.decorator.get("triton_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def inductor_meta(self) -> dict[str, Any]:
        meta = self.decorator.get("inductor_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def target(self) -> dict[str, Any] | None:
        """Where it was generated for, as a capture records a target ({"backend", "arch", "warp_size"})."""
        device = self.triton_meta.get("device")
        if not isinstance(device, dict) or device.get("type") not in BACKEND_NAMES:
            return None
        return {"backend": device["type"], "arch": device.get("cc"), "warp_size": device.get("warp_size")}

    def arch(self) -> Arch | None:
        t = self.target
        return backend_named(t["backend"]).arch_for_target(t["arch"]) if t else None


def _is_jit(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "jit" and \
        isinstance(target.value, ast.Name) and target.value.id == "triton"


def _heuristic(node: ast.expr) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == _HEURISTIC_MODULE:
        return node
    return None


def read_module(path: Path, text: str, tree: ast.Module) -> list[GeneratedKernel]:
    """The Inductor kernels of one generated module (none: it is not one, e.g. a graph's output code)."""
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not any(_is_jit(d) for d in node.decorator_list):
            continue
        call = next((c for d in node.decorator_list if (c := _heuristic(d)) is not None), None)
        if call is None:
            continue
        heuristic = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        decorator, computed = {}, []
        for k in call.keywords:
            if not k.arg or k.arg == "filename":
                continue
            try:
                decorator[k.arg] = _literal(k.value)
            except (_NotLiteral, TypeError):
                computed.append(k.arg)
        reason = (f"its @{_HEURISTIC_MODULE}.{heuristic} arguments are not literals ({', '.join(computed)}: "
                  "computed when the module runs, which scan never does)") if computed else None
        out.append(GeneratedKernel(path, node.name, heuristic, decorator, reason=reason))
    return out


def is_inductor_cache(directory: Path) -> bool:
    """Whether ``directory`` holds Inductor's generated modules (``XX/cXXXX.py`` under a heuristic decorator)."""
    for path in _module_files(directory):
        try:
            head = path.read_text(errors="replace")[:8192]
        except OSError:
            continue
        if f"@{_HEURISTIC_MODULE}." in head and "@triton.jit" in head:
            return True
    return False


def _module_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for sub in directory.iterdir() if sub.is_dir() and len(sub.name) == 2
                      for p in sub.glob("*.py"))
    except OSError:
        return []


def _best_configs(directory: Path) -> dict[str, Any] | None:
    """The one ``.best_config`` of a module's directory (Inductor writes it beside the module it tuned; a
    directory holds one module unless two hash alike), or None."""
    found = sorted(directory.glob("*.best_config"))
    if len(found) != 1:
        return None
    try:
        best = json.loads(found[0].read_text())
    except (OSError, ValueError):
        return None
    return best if isinstance(best, dict) else None


def read_inductor_cache(directory: Path) -> list[GeneratedKernel]:
    """Every kernel of every generated module in an Inductor cache directory (in file order)."""
    out: list[GeneratedKernel] = []
    for path in _module_files(directory):
        try:
            text = path.read_text()
            tree = ast.parse(text)
        except (OSError, UnicodeDecodeError, SyntaxError) as exc:
            out.append(GeneratedKernel(path, path.stem, reason=f"cannot read the module: {exc}"))
            continue
        kernels = read_module(path, text, tree)
        best = _best_configs(path.parent) if len(kernels) == 1 else None
        out += [GeneratedKernel(k.file, k.name, k.heuristic, k.decorator, best, k.reason) for k in kernels]
    return out


# ---- configs

def _torch_value(v: Any) -> Any:
    """A decorator literal as the object PyTorch's heuristic takes (DeviceProperties, ReductionHint...)."""
    from torch._inductor.runtime import hints

    if isinstance(v, dict) and set(v) == {"enum"}:
        cls, name = v["enum"]
        return getattr(getattr(hints, cls), name)
    if isinstance(v, dict) and "multi_processor_count" in v:
        return hints.DeviceProperties(**v)
    if isinstance(v, dict):
        return {k: _torch_value(x) for k, x in v.items()}
    return v


def _config(kwargs: dict[str, Any], num_warps: Any, num_stages: Any) -> dict[str, Any]:
    return {"kwargs": dict(kwargs), "num_warps": num_warps, "num_stages": num_stages}


@contextlib.contextmanager
def _as_on_device(torch: Any, backend: str) -> Iterator[None]:
    """PyTorch's heuristics ask the process they run in for its GPU (``torch.cuda.is_available()``: a process
    without one gets other configs) and its vendor (``torch.version.hip``): while one runs here, both answer
    as on the machine the kernel was generated for."""
    saved = torch.cuda.is_available, torch.version.hip
    torch.cuda.is_available = lambda: True
    torch.version.hip = "vgprscope" if backend_named(backend).facts.pytorch_hip else None
    try:
        yield
    finally:
        torch.cuda.is_available, torch.version.hip = saved


def kernel_configs(k: GeneratedKernel) -> tuple[list[dict[str, Any]], str]:
    """(the configs Inductor compiles for the kernel, where they come from); no configs: the second says why."""
    d = k.decorator
    if k.heuristic == "template":
        return [_config({}, d.get("num_warps"), d.get("num_stages"))], "the template's own"
    if k.heuristic == "fixed_config" and isinstance(d.get("config"), dict):
        cfg = dict(d["config"])
        return [_config({n: v for n, v in cfg.items() if n not in _BEST_CONFIG_META}, cfg.get("num_warps"),
                        cfg.get("num_stages"))], "the fixed config"
    why = ""
    try:
        import torch
        from torch._inductor.runtime import triton_heuristics

        fn = getattr(triton_heuristics, k.heuristic)
        given = {n: _torch_value(v) for n, v in d.items()}
        with _as_on_device(torch, (k.target or {})["backend"]):
            configs = fn(**given, filename=str(k.file), return_configs=True)
        return ([_config(c.kwargs, c.num_warps, c.num_stages) for c in configs],
                f"PyTorch {torch.__version__.split('+')[0]}'s {k.heuristic} heuristic")
    except ImportError:
        why = "torch is not installed here"
    except Exception as exc:  # a heuristic of another PyTorch release that takes other arguments
        why = f"this PyTorch's {k.heuristic} heuristic fails on it: {type(exc).__name__}: {str(exc)[:80]}"
    best = k.best_config
    if best:
        kwargs = {n: v for n, v in best.items() if n not in _BEST_CONFIG_META}
        return [_config(kwargs, best.get("num_warps"), best.get("num_stages"))], \
            f"the config Inductor saved as the best ({why}: the heuristic's others are not listed)"
    return [], (f"its configs come from PyTorch's {k.heuristic} heuristic, and {why}; no .best_config beside "
                "it: install torch to list them")


# ---- launches

def launch_args(k: GeneratedKernel, kwargs: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The launch's facts from the triton_meta (signature, constants, the first specialisation's attrs) and the
    config's constexprs, as Inductor passes them to ``triton.compile`` (its ``_create_compile_meta``)."""
    meta = k.triton_meta
    signature = meta.get("signature") or {}
    names = list(signature)
    constants = {(names.index(n) if isinstance(n, str) and n in names else n): v
                 for n, v in dict(meta.get("constants") or {}).items()}
    for n, v in kwargs.items():
        if n in names:
            constants[names.index(n)] = v
    specs = (meta.get("configs") or [{}])[0]
    attrs = {i[0] if isinstance(i, tuple) else i: v for i, v in dict(specs or {}).items()}
    out: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        typ = str(signature[name])
        if typ == "constexpr" or i in constants:
            value = constants.get(i)
            if typ != "constexpr" and type(value) is int and value == 1:
                out.append({"name": name, "type": typ, "one": True})
            else:
                out.append({"name": name, "type": "constexpr", "value": value})
            continue
        fact: dict[str, Any] = {"name": name, "type": typ}
        for spec in attrs.get(i, []):
            if list(spec) == ["tt.divisibility", 16]:
                fact["aligned"] = True
            elif list(spec) == ["tt.pointer_range", 32]:
                fact["small"] = True
        out.append(fact)
    return tuple(out)


def launch_options(k: GeneratedKernel, cfg: dict[str, Any]) -> dict[str, Any]:
    """The options Inductor passes (its ``_create_compile_options``): num_warps, num_stages, debug, fp fusion,
    CUDA's launch_pdl, HIP's backend options (config kwargs that are no argument)."""
    meta, imeta = k.triton_meta, k.inductor_meta
    opts: dict[str, Any] = {"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"],
                            "debug": bool(imeta.get("assert_indirect_indexing", True)) and not imeta.get("is_hip"),
                            "sanitize_overflow": False}
    if "enable_fp_fusion" in meta:
        opts["enable_fp_fusion"] = meta["enable_fp_fusion"]
    if "launch_pdl" in meta:  # Inductor's CUDA options (its triton_meta holds launch_pdl only there)
        opts["launch_cooperative_grid"] = bool(meta.get("launch_cooperative_grid", False))
        opts["launch_pdl"] = bool(meta["launch_pdl"])
    names = set(meta.get("signature") or {})  # HIP's backend options: config kwargs that are no argument
    opts |= {n: v for n, v in cfg["kwargs"].items() if n not in names}
    return {n: v for n, v in opts.items() if v is not None}


# Where the names a generated kernel reads may come from: the installed Triton's and PyTorch Inductor's runtime
# modules, and the standard library's math, imported here as installed, by name; never the generated module.
TRUSTED_MODULES = ("triton", "math", "torch._inductor.runtime")
# what torch's helpers re-export, for a scan without torch
_WITHOUT_TORCH = {"libdevice": "triton.language.extra.libdevice", "tl_math": "triton.language.math",
                  "math": "triton.language.math"}


class _NotStatic(Exception):
    """What a generated kernel reads that scan does not take: it would have to run the module's code."""


def _imports(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """The module's imports as data: local name -> (module, attribute imported from it, or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def _trusted(module: str) -> bool:
    return any(module == t or module.startswith(t + ".") for t in TRUSTED_MODULES)


def _resolve(name: str, imports: dict[str, tuple[str, str | None]]) -> Any:
    """What a module-level name the kernel reads is, imported from an installed module by name (nothing of the
    generated module runs); _NotStatic where it is not imported from one scan trusts."""
    import importlib

    if name not in imports:
        raise _NotStatic(f"{name} is defined by the module's own code, which scan never runs")
    module, attr = imports[name]
    if not _trusted(module):
        raise _NotStatic(f"{name} comes from {module}, which scan does not import (it imports only "
                         f"{', '.join(TRUSTED_MODULES)})")
    try:
        mod = importlib.import_module(module)
        if attr is None:
            return mod
        if hasattr(mod, attr):
            return getattr(mod, attr)
        return importlib.import_module(f"{module}.{attr}")
    except ImportError:
        if module.startswith("torch") and name in _WITHOUT_TORCH:
            return importlib.import_module(_WITHOUT_TORCH[name])
        why = "torch is not installed here" if module.startswith("torch") else f"{module} does not import here"
        raise _NotStatic(f"{name} comes from {module} and {why}: install torch here to scan it") from None


def _kernel_value(obj: Any) -> bool:
    """Whether a kernel may read ``obj``: Triton's language (its builtins, dtypes, constexprs, the device
    libraries), a JIT function, a number, a string, math's functions; never a module as such (a kernel calls
    what it reads of one at compile time: a module would reach anything) nor another Python callable."""
    import triton
    import triton.language as tl

    from ..runtime.loader import is_jit, unwrap

    if obj is None or isinstance(obj, (bool, int, float, str, tl.dtype, tl.constexpr)):
        return True
    if isinstance(obj, types.ModuleType):
        return False
    if is_jit(unwrap(obj)) or getattr(obj, "__triton_builtin__", False) or getattr(obj, "__triton_aggregate__",
                                                                                      False):
        return True
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("triton.language") or module == "math" or obj in (triton.cdiv, triton.next_power_of_2)


def _chains(fn: ast.FunctionDef) -> list[list[str]]:
    """Every name or attribute chain the kernel reads (``tl.full``, ``triton_helpers.maximum``, ``xnumel``): in
    its arguments' annotations and defaults and its body (its decorators are Inductor's, never compiled)."""
    out, inner = [], set()
    for node in (n for part in (fn.args, *([fn.returns] if fn.returns else []), *fn.body) for n in ast.walk(part)):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = manifest_chain(node)
            if chain:
                out.append(chain)
            cur: ast.AST = node.value
            while isinstance(cur, ast.Attribute):  # a.b.c: a.b is part of it, not a read of its own
                inner.add(id(cur))
                cur = cur.value
            if isinstance(cur, ast.Name):
                inner.add(id(cur))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            out.append([node.id])
    return out


def manifest_chain(node: ast.Attribute) -> list[str] | None:
    from ..runtime.manifest import attribute_chain

    return attribute_chain(node)


def _static_def(fn: ast.FunctionDef) -> None:
    """The ``def`` statement evaluates its defaults and annotations when it runs (a compile worker runs it to
    make the JIT function): only constants and names or attribute chains may stand there."""
    args = fn.args
    parts = [*args.defaults, *[d for d in args.kw_defaults if d is not None],
             *[a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation],
             *([fn.returns] if fn.returns else [])]
    for part in parts:
        node = part.operand if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub) else part
        if isinstance(node, ast.Constant) or (isinstance(node, ast.Attribute) and manifest_chain(node)) or \
                isinstance(node, ast.Name):
            continue
        raise _NotStatic(f"its def line computes {ast.unparse(part)[:60]} when it runs")
    if args.vararg or args.kwarg:
        raise _NotStatic("it takes *args or **kwargs, which a Triton kernel does not")


def snapshot(k: GeneratedKernel) -> tuple[str | None, str | None]:
    """(the kernel's snapshot as JSON, as a capture keeps it; why there is none), made from the generated
    module's text without running any of it: its source, the names it reads resolved from the module's import
    statements against installed modules (Triton, PyTorch Inductor's runtime), each a value a kernel may read;
    laid out at the module's own file and lines (its spill sites are there). Without torch, the module's
    re-exports of Triton's modules (libdevice, math) are Triton's own."""
    from ..runtime.snapshot import snapshot_of_source

    try:
        text = k.file.read_text()
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return None, f"cannot read {k.file.name}: {exc}"
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == k.name), None)
    if fn is None:
        return None, f"{k.file.name} has no function {k.name}"
    imports = _imports(tree)
    local = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} | \
        {t.id for n in fn.body for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    scope: dict[str, Any] = {}
    try:
        _static_def(fn)
        for chain in _chains(fn):
            head = chain[0]
            if head in local or (head not in imports and hasattr(builtins, head)):
                continue  # the kernel's own variables; Triton's code generator answers for builtins
            if head not in scope:
                scope[head] = _resolve(head, imports)
            obj = scope[head]
            for part in chain[1:]:
                obj = getattr(obj, part, None)
            if not _kernel_value(obj):
                raise _NotStatic(f"it reads {'.'.join(chain)}, which is no value of Triton's language a kernel may "
                                 "read")
    except _NotStatic as exc:
        return None, f"scan compiles a generated kernel from its text without running its module: {exc}"
    lines = text.splitlines(keepends=True)
    source = "".join(lines[fn.lineno - 1:fn.end_lineno])
    entry = {"module": MODULE_PREFIX + k.file.stem, "name": k.name, "source": source,
             "jit": {"do_not_specialize": [], "do_not_specialize_on_alignment": [], "noinline": None},
             "names": {}, "file": str(k.file.resolve()), "line": fn.lineno}
    snap = snapshot_of_source(entry, scope)
    if snap["problems"]:
        return None, f"its source does not load as a Triton kernel here: {'; '.join(snap['problems'][:2])}"
    return json.dumps(snap), None


@dataclass(frozen=True)
class InductorCache:
    kernels: tuple[GeneratedKernel, ...]
    capture: Capture  # their configs as launches (compiled as a capture's generated kernels are)
    unread: tuple[tuple[GeneratedKernel, str], ...]  # kernels with no launch, and why


def inductor_capture(directory: Path) -> InductorCache:
    """An Inductor cache's kernels as a capture: one launch per (kernel, config), from the module's snapshot."""
    kernels = read_inductor_cache(directory)
    launches: list[CapturedLaunch] = []
    unread: list[tuple[GeneratedKernel, str]] = []
    for k in kernels:
        if k.reason:
            unread.append((k, k.reason))
            continue
        if k.target is None:
            unread.append((k, "its triton_meta names no CUDA or HIP device"))
            continue
        configs, origin = kernel_configs(k)
        if not configs:
            unread.append((k, origin))
            continue
        snap, why = snapshot(k)
        if snap is None:
            unread.append((k, why or "no snapshot"))
            continue
        source_hash = file_source_hash(str(k.file))
        kernel = CapturedKernel(MODULE_PREFIX + k.file.stem, k.name, str(k.file), source_hash, None, snap)
        for i, cfg in enumerate(configs):
            pick = {"index": i, "count": len(configs), "declared": len(configs), "key": []} \
                if len(configs) > 1 else None
            producer = {"by": "inductor", "kernel_name": k.name, "heuristic": k.heuristic, "configs_from": origin,
                        "config": json.dumps(cfg, sort_keys=True, default=str),
                        "meta": {n: v for n, v in k.inductor_meta.items()
                                 if isinstance(v, (bool, int, float, str)) or v is None}}
            launches.append(CapturedLaunch(kernel, launch_args(k, cfg["kwargs"]), launch_options(k, cfg), pick,
                                           origin="triton.compile", target=k.target, producer=producer))
    return InductorCache(tuple(kernels), Capture(tuple(launches)), tuple(unread))
