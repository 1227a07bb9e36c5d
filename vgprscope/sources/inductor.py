"""PyTorch Inductor's kernels: their rows' slot, Inductor's spill threshold and its verdict on a row (its n_spills
against the row's ``inductor_spill_threshold`` extra, judged as the record is made and stored on it: the tables
and the CSV render it as any row's verdict, ``Record.verdict``), the crossings of the threshold between the two
sides of a diff, where a generated kernel's module is, and Inductor's cache directory as a source
(``vgprscope scan`` of ``TORCHINDUCTOR_CACHE_DIR``).

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
heuristic's (PyTorch's own function, run with ``return_configs=True`` where torch is installed here, in a child
process, its answers cached: ``inductor_configs``; a template
or a fixed config names its own), else the one config Inductor saved as the best (``.best_config`` beside the
module). Each kernel becomes a capture's launch (``captures.model.CapturedLaunch``) compiled from its snapshot,
as a captured Inductor kernel is.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends import BACKENDS, backend_named, backend_of_usage
from ..captures.model import Capture, CapturedKernel, CapturedLaunch
from ..core.archs import Arch
from ..core.records import Record, Verdict
from ..runtime.hashing import source_hash as file_source_hash
from .generated_text import snapshot_of_module
from .inductor_configs import Answer, HeuristicCall, SnapshotCall, resolve

if TYPE_CHECKING:
    from ..compile.cache import CompileCache

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
    """An Inductor row's n_spills against Inductor's threshold, as the row stored it (None: not Inductor's, or not
    compiled)."""
    if rec is None or rec.verdict is None or rec.verdict.column != VERDICT_HEADER:
        return None
    return SpillVerdict(int(dict(rec.verdict.fields)[N_SPILLS_FIELD]), int(dict(rec.extras)[THRESHOLD_EXTRA]))


# ---- the verdict a row stores (``Record.verdict``), which the tables, the CSV and the diff render

VERDICT_HEADER = "Inductor spill threshold"  # the column that shows the verdict
N_SPILLS_FIELD = "inductor_n_spills"
SKIP_NOTE = ("Inductor's autotuner skips this config: its n_spills (local memory per thread / 4) is {n}, over "
             "Inductor's spill_threshold {t}")


@dataclass(frozen=True)
class SpillThreshold:
    """The judge of an Inductor row (``RowInfo.judge``): its compiled counts against the threshold Inductor applies
    on its backend, a verdict whose cell reads ``skip: n_spills 34 > 16`` (or ``kept: ...``), whose note says why a
    skipped config is not run, and whose fields are its n_spills and whether the autotuner skips it."""

    threshold: int

    def __call__(self, usage: Any) -> Verdict:
        v = SpillVerdict(int(n_spills(usage) or 0), self.threshold)
        return Verdict(VERDICT_HEADER, v.text(), not v.skipped,
                       SKIP_NOTE.format(n=v.n_spills, t=v.threshold) if v.skipped else "",
                       ((N_SPILLS_FIELD, v.n_spills), ("inductor_skips", v.skipped)))


@dataclass(frozen=True)
class ThresholdCrossing:
    """An Inductor config the two sides of a diff put on opposite sides of Inductor's spill threshold: one side's
    autotuner benchmarks it, the other's skips it."""

    key: str
    before: SpillVerdict
    after: SpillVerdict

    def text(self) -> str:
        return f"{self.key}: {self.before.text()} -> {self.after.text()}"

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "before": _verdict_dict(self.before), "after": _verdict_dict(self.after)}


def _verdict_dict(v: SpillVerdict) -> dict[str, Any]:
    return {"n_spills": v.n_spills, "threshold": v.threshold, "skipped": v.skipped}


def threshold_crossings(before: dict[str, Record], after: dict[str, Record]) -> tuple[ThresholdCrossing, ...]:
    """The Inductor entries (by key) one side's autotuner would benchmark and the other's skip."""
    return tuple(ThresholdCrossing(key, va, vb) for key, ra in before.items() if key in after
                 and (va := spill_verdict(ra)) is not None and (vb := spill_verdict(after[key])) is not None
                 and va.skipped != vb.skipped)


def inductor_slot(args: tuple[dict[str, Any], ...], options: dict[str, Any],
                  tile: tuple[tuple[str, int], ...] = ()) -> str:
    """Record.slot of an Inductor config: the config itself (a template's tile, its constexprs, num_warps,
    num_stages), so that the same config is compared across releases wherever the heuristic lists it, and a
    config a PyTorch release no longer generates is an entry gone, not another config compared with it."""
    parts = [f"{k}={v}" for k, v in tile]
    parts += [f"{a['name']}={1 if a.get('one') else a.get('value')}" for a in args
              if a["type"] == "constexpr"]
    parts += [f"{k}={options[k]}" for k in ("num_warps", "num_stages") if options.get(k) is not None]
    return "cfg " + ",".join(parts)


# A template's tile as its generated source fixes it (``BLOCK_M : tl.constexpr = 128``), in this order first
_TILE_ORDER = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def template_tile(source: str) -> tuple[tuple[str, int], ...]:
    """The tile an Inductor template's body fixes: its ``BLOCK_* : tl.constexpr = N`` lines, BLOCK_M, BLOCK_N,
    BLOCK_K first (a matmul's M x N x K); () for a kernel that takes its block sizes as arguments."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return ()
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    found: dict[str, int] = {}
    for node in fn.body if fn is not None else []:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                node.target.id.startswith("BLOCK") and isinstance(node.value, ast.Constant) and \
                type(node.value.value) is int:
            found[node.target.id] = node.value.value
    first = [(k, found[k]) for k in _TILE_ORDER if k in found]
    return (*first, *sorted((k, v) for k, v in found.items() if k not in _TILE_ORDER))


def launch_tile(x: Any) -> tuple[tuple[str, int], ...]:
    """The tile of a captured Inductor launch's kernel (``captures.model.CapturedLaunch``): the one scan read from
    the module, else read from the capture's snapshot of the kernel's source."""
    given = (x.producer or {}).get("tile")
    if isinstance(given, dict):
        return tuple((str(k), int(v)) for k, v in given.items())
    snap = x.kernel.snapshot
    try:
        snap = json.loads(snap) if isinstance(snap, str) else snap
        return template_tile(snap["functions"][snap["kernel"]]["source"])
    except (TypeError, KeyError, ValueError):
        return ()


# Inductor's graph module names each kernel's module and the operations it fuses in comments above its source
_KERNEL_PATH_RE = re.compile(r"^# kernel path: (?P<path>\S+)\n# [^\n]*Original ATen: \[(?P<aten>[^\]]*)\]", re.M)


def fused_ops(directory: Path) -> dict[str, str]:
    """What each generated module's kernel fuses, as the graph modules of an Inductor cache say it: module file
    name -> ``aten.mm, aten.t`` (a kernel no graph module names, an autotuning candidate, is not in it)."""
    out: dict[str, str] = {}
    for path in _module_files(directory):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for m in _KERNEL_PATH_RE.finditer(text):
            out.setdefault(Path(m["path"]).name, m["aten"].strip())
    return out


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

def _config(kwargs: dict[str, Any], num_warps: Any, num_stages: Any) -> dict[str, Any]:
    return {"kwargs": dict(kwargs), "num_warps": num_warps, "num_stages": num_stages}


def _own_configs(k: GeneratedKernel) -> tuple[list[dict[str, Any]], str] | None:
    """The configs a template or a fixed config names itself (no heuristic to run); None for the others."""
    d = k.decorator
    if k.heuristic == "template":
        return [_config({}, d.get("num_warps"), d.get("num_stages"))], "the template's own"
    if k.heuristic == "fixed_config" and isinstance(d.get("config"), dict):
        cfg = dict(d["config"])
        return [_config({n: v for n, v in cfg.items() if n not in _BEST_CONFIG_META}, cfg.get("num_warps"),
                        cfg.get("num_stages"))], "the fixed config"
    return None


def _heuristic_call(k: GeneratedKernel) -> HeuristicCall:
    return HeuristicCall(k.heuristic, k.decorator, str(k.file),
                         backend_named((k.target or {})["backend"]).facts.pytorch_hip)


def kernel_configs(k: GeneratedKernel, answer: Answer | None = None) -> tuple[list[dict[str, Any]], str]:
    """(the configs Inductor compiles for the kernel, where they come from); no configs: the second says why.
    ``answer``: its heuristic's, resolved already (``inductor_configs.resolve``, for many kernels at once)."""
    own = _own_configs(k)
    if own is not None:
        return own
    if answer is None:
        [answer] = resolve([_heuristic_call(k)], [])[0]
    if answer.configs:
        return [_config(c["kwargs"], c["num_warps"], c["num_stages"]) for c in answer.configs], answer.origin
    why = answer.why
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


def _snapshot_call(k: GeneratedKernel) -> SnapshotCall:
    return SnapshotCall(str(k.file), k.name, MODULE_PREFIX + k.file.stem)


def snapshot(k: GeneratedKernel) -> tuple[str | None, str | None]:
    """(the kernel's snapshot as JSON, as a capture keeps it; why there is none), read from its module's text
    without running any of it (``generated_text``)."""
    return snapshot_of_module(k.file, k.name, MODULE_PREFIX + k.file.stem)


@dataclass(frozen=True)
class InductorCache:
    kernels: tuple[GeneratedKernel, ...]
    capture: Capture  # their configs as launches (compiled as a capture's generated kernels are)
    unread: tuple[tuple[GeneratedKernel, str], ...]  # kernels with no launch, and why


def inductor_capture(directory: Path, cache: CompileCache | None = None) -> InductorCache:
    """An Inductor cache's kernels as a capture: one launch per (kernel, config), from the module's snapshot.
    ``cache``: where PyTorch's heuristics' answers are kept (``inductor_configs``); None: asked afresh."""
    kernels = read_inductor_cache(directory)
    fuses = fused_ops(directory)
    # what needs the installed torch and Triton (PyTorch's heuristics, the names a kernel reads), in one child
    # process for all the kernels, or from the cache
    readable = [k for k in kernels if not k.reason and k.target is not None]
    asked = [k for k in readable if _own_configs(k) is None]
    answers, snaps = resolve([_heuristic_call(k) for k in asked], [_snapshot_call(k) for k in readable], cache) \
        if readable else ([], [])
    answer_of, snapshot_of = dict(zip(asked, answers)), dict(zip(readable, snaps))
    launches: list[CapturedLaunch] = []
    unread: list[tuple[GeneratedKernel, str]] = []
    for k in kernels:
        if k.reason:
            unread.append((k, k.reason))
            continue
        if k.target is None:
            unread.append((k, "its triton_meta names no CUDA or HIP device"))
            continue
        configs, origin = kernel_configs(k, answer_of.get(k))
        if not configs:
            unread.append((k, origin))
            continue
        snap, why = snapshot_of[k]
        if snap is None:
            unread.append((k, why or "no snapshot"))
            continue
        source_hash = file_source_hash(str(k.file))
        kernel = CapturedKernel(MODULE_PREFIX + k.file.stem, k.name, str(k.file), source_hash, None, snap)
        fn = json.loads(snap)["functions"]
        fn = next(iter(f for f in fn.values() if f["name"] == k.name and f.get("file")), {})
        # what names it where a person looks: the template's tile, the module's line, what the graph fuses in it
        named = {"tile": dict(template_tile(fn.get("source", ""))), "line": fn.get("line"),
                 "fuses": fuses.get(k.file.name)}
        for i, cfg in enumerate(configs):
            pick = {"index": i, "count": len(configs), "declared": len(configs), "key": []} \
                if len(configs) > 1 else None
            producer = {"by": "inductor", "kernel_name": k.name, "heuristic": k.heuristic, "configs_from": origin,
                        "config": json.dumps(cfg, sort_keys=True, default=str),
                        "meta": {n: v for n, v in k.inductor_meta.items()
                                 if isinstance(v, (bool, int, float, str)) or v is None},
                        **{n: v for n, v in named.items() if v}}
            launches.append(CapturedLaunch(kernel, launch_args(k, cfg["kwargs"]), launch_options(k, cfg), pick,
                                           origin="triton.compile", target=k.target, producer=producer))
    return InductorCache(tuple(kernels), Capture(tuple(launches)), tuple(unread))
