"""Attention knowledge stays in ``vgprscope/attention`` (DESIGN.md, "Layers"; issue 19, item 2): no module of
the compile core, the parsers, the arch table and occupancy model, the gate, the report views or the other
kernel sources imports the attention package, nor mentions a head dim or a causal mask.

Read statically (ast), without importing anything: an import inside a function counts as much as one at the
top, and ``from .. import attention`` as much as ``import vgprscope.attention``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "vgprscope"
# the layers below the attention package: packages whole, and single modules
CORE = ("core", "compile", "gate", "report", "sources", "capture")
ATTENTION = "vgprscope.attention"
WORDS = re.compile(r"head_dim|causal", re.IGNORECASE)


def core_files() -> list[Path]:
    out: list[Path] = []
    for name in CORE:
        path = PKG / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def module_name(file: Path) -> str:
    rel = file.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(file: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; ``from X import y`` gives ``X.y`` as well as
    ``X`` (y may be a submodule: ``from .. import attention``)."""
    tree = ast.parse(file.read_text(), str(file))
    name = module_name(file)
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return out


def imports_attention(file: Path) -> list[str]:
    return [f"{file.relative_to(PKG.parent)}:{line} imports {mod}" for line, mod in imported_modules(file)
            if mod == ATTENTION or mod.startswith(ATTENTION + ".")]


def mentions(file: Path) -> list[str]:
    return [f"{file.relative_to(PKG.parent)}:{i} mentions {m.group(0)!r}"
            for i, line in enumerate(file.read_text().splitlines(), 1) for m in WORDS.finditer(line)]


def test_the_core_files_are_found():
    files = core_files()
    names = {module_name(f) for f in files}
    assert {"vgprscope.compile.engine", "vgprscope.compile.worker", "vgprscope.core.parse.amdgcn", "vgprscope.gate.baseline",
            "vgprscope.report.compare_view", "vgprscope.report.explain_view", "vgprscope.sources.capture",
            "vgprscope.sources.triton_cache", "vgprscope.core.archs", "vgprscope.core.occupancy"} <= names
    assert not any(".attention" in n for n in names)


@pytest.mark.parametrize("file", core_files(), ids=lambda f: str(f.relative_to(PKG)))
def test_no_core_module_imports_the_attention_package(file):
    assert imports_attention(file) == []


@pytest.mark.parametrize("file", core_files(), ids=lambda f: str(f.relative_to(PKG)))
def test_no_core_module_mentions_a_head_dim_or_a_causal_mask(file):
    assert mentions(file) == []


def test_the_walk_sees_every_form_of_import(tmp_path, monkeypatch):
    """The checks fail on what they are for: each way a core module could reach the package, and the words."""
    pkg = tmp_path / "vgprscope"
    (pkg / "report").mkdir(parents=True)
    monkeypatch.setitem(globals(), "PKG", pkg)
    forms = ["from ..attention import traffic", "from .. import attention", "from ..attention.live import estimate",
             "import vgprscope.attention.config", "from vgprscope.attention import gate",
             "def f():\n    from ..attention.traffic import line_traffic"]
    for i, text in enumerate(forms):
        f = pkg / "report" / f"view{i}.py"
        f.write_text(text + "\n")
        assert imports_attention(f), text
    clean = pkg / "report" / "clean.py"
    clean.write_text("from ..records import Record\nfrom . import formats\nimport json\n")
    assert imports_attention(clean) == []
    worded = pkg / "report" / "worded.py"
    worded.write_text("x = cfg.head_dim\n# a Causal mask\n")
    assert len(mentions(worded)) == 2 and mentions(clean) == []


# ---- the layers: imports point one way (DESIGN.md "Layers", docs/architecture.md; issue 19, item 8) ----------

# Lowest first. A module may import its own layer and the layers below it, never one above (an import inside
# a function counts, as does one only for type checking). The package root (``vgprscope``, its
# ``__version__``) is the facade every module may reach. A module belongs to the longest prefix listed.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("core", "core.errors", "core.fsutil", "core.extras", "interpreter", "_callable")),
    ("arch table", ("core.archs",)),
    ("records", ("core.records", "core.job")),  # what a row and a compile job are: pure data
    ("occupancy and parsers", ("core.occupancy", "core.parse")),
    ("backends", ("backends",)),
    ("compile", ("compile",)),
    ("sources", ("capture", "sources", "scan")),
    ("analysis", ("compare", "explain", "frontier", "history")),
    ("report", ("report", "history_view")),
    ("gate", ("gate",)),
    ("diff", ("diff", "diff_view")),
    ("attention", ("attention", "kernels")),  # the bundled variants: nothing below imports them
    ("orchestration", ("bench", "grid", "sweep")),
    ("library", ("library",)),
    ("cli", ("cli", "__main__")),
)
ROOT_MODULES = {"vgprscope", "vgprscope.__version__"}
# The compile worker runs in other Pythons where vgprscope is not installed, and the capture hook in the user's
# own process: they import nothing of vgprscope (the worker loads kernel_load, its own sibling, by path there).
WORKER = ("compile/worker.py", "compile/kernel_load.py", "compile/derive.py", "capture/hook.py")
WORKER_SIBLINGS = {"kernel_load", "worker", "derive"}


def layer_of(module: str) -> int | None:
    """The index of a vgprscope module's layer (None: not vgprscope's, or the root)."""
    if not module.startswith("vgprscope.") or module in ROOT_MODULES:
        return None
    rest = module.removeprefix("vgprscope.")
    best: tuple[int, int] | None = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (rest == p or rest.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS (tests/test_layers.py)")
    return best[0]


def upward_imports(file: Path) -> list[str]:
    """Each import of a higher layer in ``file``."""
    own = layer_of(module_name(file))
    if own is None:
        return []
    out: dict[int, str] = {}  # one finding per import statement (``from X import y`` names X and X.y)
    for line, mod in imported_modules(file):
        # `from .x import Name`: the module is the part a layer is known for (a name in it is no module)
        try:
            theirs = layer_of(mod)
        except AssertionError:
            theirs = layer_of(mod.rpartition(".")[0])
        if theirs is not None and theirs > own:
            out.setdefault(line, f"{file.relative_to(PKG.parent)}:{line} ({LAYERS[own][0]}) imports {mod} "
                                 f"({LAYERS[theirs][0]})")
    return list(out.values())


def package_files() -> list[Path]:
    return sorted(f for f in PKG.rglob("*.py") if f.name != "__init__.py" or f.parent != PKG)


def test_every_module_has_a_layer():
    for f in package_files():
        layer_of(module_name(f))  # raises for one that has none


@pytest.mark.parametrize("file", package_files(), ids=lambda f: str(f.relative_to(PKG)))
def test_no_module_imports_a_higher_layer(file):
    assert upward_imports(file) == []


def worker_imports(file: Path) -> list[str]:
    """Each import of vgprscope in a worker file but ``from . import <worker sibling>``."""
    tree = ast.parse(file.read_text(), str(file))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level and node.module is None and {a.name for a in node.names} <= WORKER_SIBLINGS:
                continue
            if node.level or (node.module or "").split(".")[0] == "vgprscope":
                out.append(f"{file.name}:{node.lineno} from {'.' * node.level}{node.module or ''} import ...")
        elif isinstance(node, ast.Import):
            out += [f"{file.name}:{node.lineno} import {a.name}" for a in node.names if a.name.split(".")[0] == "vgprscope"]
    return out


@pytest.mark.parametrize("name", WORKER)
def test_the_worker_and_the_capture_hook_import_nothing_of_vgprscope(name):
    assert worker_imports(PKG / name) == []


def test_the_layer_walks_see_what_they_are_for(tmp_path, monkeypatch):
    """Each check fails on what it is for: a lower layer importing a higher one (at the top, in a function,
    relatively or absolutely), the core importing the attention package, the worker importing vgprscope."""
    pkg = tmp_path / "vgprscope"
    for d in ("compile", "core/parse", "cli", "gate"):
        (pkg / d).mkdir(parents=True)
    monkeypatch.setitem(globals(), "PKG", pkg)
    cases = {
        "core/parse/low.py": ("from ...compile.engine import Engine\n", "imports vgprscope.compile.engine (compile)"),
        "gate/inner.py": ("def f():\n    from ..library import api\n", "(library)"),
        "compile/up.py": ("import vgprscope.attention.config\n", "(attention)"),
        "core/parse/typed.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ...report import rows\n",
                           "(report)"),
    }
    for rel, (text, needle) in cases.items():
        (pkg / rel).write_text(text)
        (found,) = upward_imports(pkg / rel)
        assert needle in found, found
    fine = pkg / "cli" / "top.py"
    fine.write_text("from ..library import api\nfrom ..compile.job import CompileJob\nfrom .. import __version__\n")
    assert upward_imports(fine) == []
    job = pkg / "core" / "job.py"
    job.write_text("from .records import Record\n")  # the job is data: below the engine, beside the records
    assert upward_imports(job) == []
    worker = pkg / "compile" / "worker.py"
    worker.write_text("try:\n    from . import kernel_load\nexcept ImportError:\n    pass\n")
    assert worker_imports(worker) == []
    for text in ("from ..errors import UsageError\n", "import vgprscope.core.records\n", "from . import cache\n",
                 "def f():\n    from vgprscope.compile import engine\n"):
        worker.write_text(text)
        assert len(worker_imports(worker)) == 1, text


@pytest.mark.parametrize("first", ["import vgprscope", "import vgprscope.attention.live as live",
                                   "from vgprscope.attention import traffic"])
def test_vgprscope_attention_is_the_package_and_the_function_in_any_import_order(first):
    """``vgprscope.attention(q, k, v)`` is what users call, and ``vgprscope.attention`` is the package: the
    name stays callable whichever submodule was imported first, and every import form reaches the modules."""
    import subprocess
    import sys

    code = (f"{first}\nimport inspect, vgprscope\nimport vgprscope.attention.traffic as t\n"
            "from vgprscope import attention\n"
            "print(callable(vgprscope.attention), attention is vgprscope.attention, t.__name__,\n"
            "      list(inspect.signature(vgprscope.attention).parameters)[:4])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "vgprscope.attention.traffic", "['q',", "'k',", "'v',", "'causal']"]


# ---- vendors: only the backends and the arch table tell them apart (issue 19, item 4) -----------------

# Where a vendor may be named in code: its backend, the arch table, and the compile worker, which runs
# where vgprscope cannot be imported (another Triton's environment) and so keeps its own per-backend lines.
VENDOR_HOMES = ("backends", "core/archs.py", "compile/worker.py", "compile/kernel_load.py")
VENDOR_CLASSES = {"AmdArch", "NvidiaArch", "AmdUsage", "NvidiaUsage"}
VENDOR_WORDS = {"hip", "cuda", "amd", "nvidia"}  # Triton's backend names and vgprscope's vendor values
ARCH_PREFIXES = ("gfx", "sm")


def vendor_files() -> list[Path]:
    """Every module of the package outside the vendors' homes."""
    homes = [PKG / h for h in VENDOR_HOMES]
    return [f for f in sorted(PKG.rglob("*.py"))
            if not any(f == h or h in f.parents for h in homes)]


def _names(node: ast.AST) -> set[str]:
    """The class names an isinstance's second argument (or a comparison's side) names: ``A``, ``m.A``,
    ``(A, B)``, ``A | B``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) | _names(node.right)
    return set()


def _vendor_word(node: ast.AST) -> bool:
    """A vendor or backend named as a value: ``"hip"``, ``Vendor.AMD``, or a collection holding one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lower() in VENDOR_WORDS
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Vendor":
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_vendor_word(e) for e in node.elts)
    return False


def _arch_prefix(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lower().startswith(ARCH_PREFIXES)
    if isinstance(node, ast.Tuple):
        return any(_arch_prefix(e) for e in node.elts)
    return False


def vendor_checks(file: Path) -> list[str]:
    """Each place a module tells the vendors apart itself instead of asking a backend: an isinstance /
    issubclass / ``type(x) is`` check on a vendor's arch or usage class, a comparison with a vendor or
    backend name (``== "hip"``, ``is Vendor.AMD``, ``in ("cuda", ...)``), an arch name's prefix
    (``startswith("gfx")``), a dict literal indexed by vendor names, a singledispatch on a vendor class."""
    tree = ast.parse(file.read_text(), str(file))
    where = str(file.relative_to(PKG.parent))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in ("isinstance", "issubclass") and len(node.args) == 2 and _names(node.args[1]) & VENDOR_CLASSES:
                out.append(f"{where}:{node.lineno} {name} on {sorted(_names(node.args[1]) & VENDOR_CLASSES)}")
            if name == "register" and any(_names(a) & VENDOR_CLASSES for a in node.args):
                out.append(f"{where}:{node.lineno} dispatches on a vendor class")
            if name in ("startswith", "endswith") and node.args and _arch_prefix(node.args[0]):
                out.append(f"{where}:{node.lineno} tells an arch by its name's prefix")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_vendor_word(s) for s in sides):
                out.append(f"{where}:{node.lineno} compares with a vendor or backend name")
            elif any(_names(s) & VENDOR_CLASSES for s in sides):
                out.append(f"{where}:{node.lineno} compares a type with a vendor class")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Dict):
            if any(k is not None and _vendor_word(k) for k in node.value.keys):
                out.append(f"{where}:{node.lineno} picks from a dict by vendor name")
    return out


def test_the_vendor_files_are_found():
    names = {module_name(f) for f in vendor_files()}
    assert {"vgprscope.frontier", "vgprscope.explain", "vgprscope.core.occupancy", "vgprscope.compile.engine",
            "vgprscope.report.rows", "vgprscope.cli.occupancy_cmd", "vgprscope.attention.variants"} <= names
    assert not any(n.startswith("vgprscope.backends") or n in ("vgprscope.core.archs", "vgprscope.compile.worker")
                   for n in names)


@pytest.mark.parametrize("file", vendor_files(), ids=lambda f: str(f.relative_to(PKG)))
def test_no_module_outside_the_backends_tells_the_vendors_apart(file):
    assert vendor_checks(file) == []


def test_the_vendor_walk_sees_every_form_of_check(tmp_path, monkeypatch):
    """The check fails on what it is for, and leaves data and backend calls alone."""
    pkg = tmp_path / "vgprscope"
    pkg.mkdir()
    monkeypatch.setitem(globals(), "PKG", pkg)
    checks = ["isinstance(arch, AmdArch)", "isinstance(u, (AmdUsage, NvidiaUsage))", "isinstance(a, archs.NvidiaArch)",
              "not isinstance(a, AmdArch | NvidiaArch)", "issubclass(cls, NvidiaUsage)", "type(u) is AmdUsage",
              "arch.vendor is Vendor.AMD", "a.vendor == Vendor.NVIDIA", 't["backend"] == "hip"',
              'backend != "cuda"', 'vendor in ("amd", "nvidia")', 'gpu.vendor == "AMD"', 'name.startswith("gfx")',
              'arch.name.startswith(("sm_", "gfx"))', 'folder = {"hip": "amd", "cuda": "nvidia"}[backend]',
              "@occupancy_of.register(AmdUsage)\ndef f(u): pass"]
    for i, text in enumerate(checks):
        f = pkg / f"mod{i}.py"
        f.write_text(text + "\n")
        assert vendor_checks(f), text
    clean = pkg / "clean.py"
    clean.write_text("from .backends import backend_of\nknob = backend_of(arch).knob\n"
                     "grid = GRID[gpu.vendor]\nok = arch.vendor.value not in rule.archs\n"
                     "same = own == built\nx: AmdArch = arch\nlimit = occ.limits.get('vgpr')\n")
    assert vendor_checks(clean) == []
