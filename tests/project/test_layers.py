"""The folders are the layers (docs/design.md, "Layers"; docs/architecture.md): a module imports its own folder's
layer and the layers below, never one above; no module reaches itself through its imports (no cycle);
attention knowledge stays in ``vgprscope/flashattn``; only the backends tell the vendors apart.

Read statically (ast), without importing anything: an import inside a function or only for type checking
counts as much as one at the top, and ``from .. import flashattn`` as much as ``import vgprscope.flashattn``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "vgprscope"
KERNELS = PKG.parent / "kernels"  # the bundled variants, installed as vgprscope.kernels

# Lowest first: the folders of vgprscope/ (a module still at its top is named as a folder would be). A module
# may import its own layer and the layers below it, never one above. The package root (``vgprscope``, its
# ``__version__``) is the facade every module may reach.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("runtime", ("runtime",)),  # runs where vgprscope is not installed: imports nothing of it
    ("core", ("core",)),  # errors, files, the arch table, records, the compile job, occupancy, the parsers
    ("backends", ("backends",)),  # one per vendor
    ("compile", ("compile",)),  # the engine, the cache, clusters, toolchains
    ("sources", ("captures", "sources")),  # where compile jobs come from besides the bundled variants
    ("report", ("report",)),  # what every view shares: tables, exports, cells, the machine line
    ("gate", ("gate",)),  # metrics, rules, the baseline file, the judge, the configuration
    ("analysis", ("analysis",)),  # one package per question: its computation and its view
    ("attention", ("flashattn", "kernels")),  # the bundled variants: nothing below imports them
    ("bench", ("bench",)),  # GPU only: the correctness gate, timings
    ("library", ("library",)),  # the calls, their selections and results
    ("cli", ("cli", "__main__")),  # the commands
)
ROOT_MODULES = {"vgprscope", "vgprscope.__version__"}
# The folders below the attention package: none imports it, nor says head dim or causal mask.
CORE = tuple(f for _, folders in LAYERS[:[n for n, _ in LAYERS].index("attention")] for f in folders)
ATTENTION = "vgprscope.flashattn"
WORDS = re.compile(r"head_dim|causal", re.IGNORECASE)


def module_name(file: Path) -> str:
    if file.parent == KERNELS:
        return "vgprscope.kernels" + ("" if file.stem == "__init__" else f".{file.stem}")
    rel = file.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_files() -> list[Path]:
    """Every module of the package (the bundled kernels included) but its root."""
    kernels = sorted(KERNELS.glob("*.py")) if KERNELS.is_dir() else []
    return sorted(f for f in PKG.rglob("*.py") if f.name != "__init__.py" or f.parent != PKG) + kernels


def core_files() -> list[Path]:
    return [f for f in package_files() if module_name(f).split(".")[1] in CORE]


def imported_modules(file: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; ``from X import y`` gives ``X.y`` as well as
    ``X`` (y may be a submodule: ``from .. import flashattn``)."""
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


# ---- attention knowledge stays in vgprscope/flashattn (issue 19, item 2) ---------------------------------


def imports_attention(file: Path) -> list[str]:
    return [f"{file.relative_to(PKG.parent)}:{line} imports {mod}" for line, mod in imported_modules(file)
            if mod == ATTENTION or mod.startswith(ATTENTION + ".")]


def mentions(file: Path) -> list[str]:
    return [f"{file.relative_to(PKG.parent)}:{i} mentions {m.group(0)!r}"
            for i, line in enumerate(file.read_text().splitlines(), 1) for m in WORDS.finditer(line)]


def test_the_core_files_are_found():
    files = core_files()
    names = {module_name(f) for f in files}
    assert {"vgprscope.compile.engine", "vgprscope.runtime.worker", "vgprscope.core.parse.amdgcn",
            "vgprscope.gate.baseline", "vgprscope.analysis.compare.view", "vgprscope.analysis.explain.view",
            "vgprscope.sources.capture", "vgprscope.sources.triton_cache", "vgprscope.core.archs",
            "vgprscope.core.occupancy", "vgprscope.report.rows"} <= names
    assert not any(".flashattn" in n or ".kernels" in n for n in names)


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
    forms = ["from ..flashattn import traffic", "from .. import flashattn", "from ..flashattn.live import estimate",
             "import vgprscope.flashattn.config", "from vgprscope.flashattn import defaults",
             "def f():\n    from ..flashattn.traffic import line_traffic"]
    for i, text in enumerate(forms):
        f = pkg / "report" / f"view{i}.py"
        f.write_text(text + "\n")
        assert imports_attention(f), text
    clean = pkg / "report" / "clean.py"
    clean.write_text("from ..core.records import Record\nfrom . import formats\nimport json\n")
    assert imports_attention(clean) == []
    worded = pkg / "report" / "worded.py"
    worded.write_text("x = cfg.head_dim\n# a Causal mask\n")
    assert len(mentions(worded)) == 2 and mentions(clean) == []


# ---- the layers: imports point one way ---------------------------------------------------------------------


def layer_of(module: str) -> int | None:
    """The index of a vgprscope module's layer, the one naming its folder (None: not vgprscope's, or the root)."""
    if not module.startswith("vgprscope.") or module in ROOT_MODULES:
        return None
    folder = module.split(".")[1]
    for i, (_, folders) in enumerate(LAYERS):
        if folder in folders:
            return i
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS (tests/project/test_layers.py)")


def upward_imports(file: Path) -> list[str]:
    """Each import of a higher layer in ``file``."""
    own = layer_of(module_name(file))
    if own is None:
        return []
    out: dict[int, str] = {}  # one finding per import statement (``from X import y`` names X and X.y)
    for line, mod in imported_modules(file):
        theirs = layer_of(mod)
        if theirs is not None and theirs > own:
            out.setdefault(line, f"{file.relative_to(PKG.parent)}:{line} ({LAYERS[own][0]}) imports {mod} "
                                 f"({LAYERS[theirs][0]})")
    return list(out.values())


def test_every_module_has_a_layer():
    for f in package_files():
        layer_of(module_name(f))  # raises for one that has none


def test_no_module_but_the_facade_sits_at_the_top_of_the_package():
    """A module's folder says its layer: at the top of vgprscope/ only the facade and ``python -m``'s entry."""
    assert sorted(f.name for f in PKG.glob("*.py")) == ["__init__.py", "__main__.py"]


def test_the_facade_imports_no_layer_when_imported():
    """Every module reaches the facade (``vgprscope/__init__.py``) first: at its top it imports the standard
    library only, so importing the lowest layer never runs a higher one (its calls resolve on first use)."""
    tree = ast.parse((PKG / "__init__.py").read_text())
    own = [ast.unparse(n) for n in tree.body
           if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("vgprscope"))]
    assert own == []


@pytest.mark.parametrize("file", package_files(), ids=lambda f: str(f.relative_to(PKG.parent)))
def test_no_module_imports_a_higher_layer(file):
    assert upward_imports(file) == []


# ---- no module over 600 lines --------------------------------------------------------------------------------

LONGEST = 600
# Modules still longer, each to be split; the test fails when a new one grows past the limit, and when one of
# these is back under it (then delete its line).
KNOWN_LONG: set[str] = set()


def test_no_module_is_longer_than_600_lines():
    long = {str(f.relative_to(PKG)) for f in PKG.rglob("*.py") if len(f.read_text().splitlines()) > LONGEST}
    assert sorted(long - KNOWN_LONG) == []
    assert sorted(KNOWN_LONG - long) == []  # split: delete it from KNOWN_LONG


# ---- no cycles: no module reaches itself through its imports ------------------------------------------------

# Cycles the code still has, each a set of modules importing each other (directly or through the others).
# The test fails when a new one appears, and when one of these is gone (then delete its line).
KNOWN_CYCLES: tuple[frozenset[str], ...] = tuple(frozenset(f"vgprscope.{m}" for m in c.split()) for c in (
))


def import_graph(files: list[Path]) -> dict[str, set[str]]:
    """module -> the vgprscope modules it imports (anywhere in the file); an imported name is the module that
    defines it (``from .formats import Column`` imports ``report.formats``)."""
    modules = {module_name(f): f for f in files}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, f in modules.items():
        package = mod if f.name == "__init__.py" else mod.rpartition(".")[0]
        named: list[str] = []
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                named += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                parts = package.split(".")
                base = (".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                        if node.level else node.module or "")
                named += [f"{base}.{a.name}" for a in node.names]  # a submodule, or a name of ``base``
        targets = {resolve(m) for m in named if m.split(".")[0] == "vgprscope"}
        graph[mod] = {t for t in targets if t is not None and t != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(frozenset(comp))
    return found


def test_no_import_cycle_between_modules():
    files = package_files() + [PKG / "__init__.py"]
    found = set(cycles(import_graph(files)))
    assert sorted(map(sorted, found - set(KNOWN_CYCLES))) == []
    assert sorted(map(sorted, set(KNOWN_CYCLES) - found)) == []  # fixed: delete it from KNOWN_CYCLES


def test_the_cycle_walk_sees_every_form_of_import(tmp_path, monkeypatch):
    """A cycle is found through a function-local import, a type-checking one and a third module; modules
    that only import downwards make none."""
    pkg = tmp_path / "vgprscope"
    (pkg / "report").mkdir(parents=True)
    monkeypatch.setitem(globals(), "PKG", pkg)
    files = {
        "report/a.py": "from .b import x\n",
        "report/b.py": "def f():\n    from . import a\n",
        "report/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import Y\n",
        "report/d.py": "from .e import z\n",
        "report/e.py": "import vgprscope.report.c\n",
        "report/f.py": "from .a import x\nfrom ..core import records\nfrom . import g\n",
        "report/g.py": "",
        "report/__init__.py": "from .g import y\n",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    found = cycles(import_graph(sorted(pkg.rglob("*.py"))))
    assert sorted(map(sorted, found)) == [["vgprscope.report.a", "vgprscope.report.b"],
                                          ["vgprscope.report.c", "vgprscope.report.d", "vgprscope.report.e"]]


def test_the_layer_walks_see_what_they_are_for(tmp_path, monkeypatch):
    """Each check fails on what it is for: a lower layer importing a higher one (at the top, in a function,
    relatively or absolutely), the core importing the attention package."""
    pkg = tmp_path / "vgprscope"
    for d in ("compile", "core/parse", "cli", "gate", "analysis/explain"):
        (pkg / d).mkdir(parents=True)
    monkeypatch.setitem(globals(), "PKG", pkg)
    cases = {
        "core/parse/low.py": ("from ...compile.engine import Engine\n", "imports vgprscope.compile.engine (compile)"),
        "gate/inner.py": ("def f():\n    from ..library import api\n", "(library)"),
        "compile/up.py": ("import vgprscope.flashattn.config\n", "(attention)"),
        "core/parse/typed.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ...report import rows\n",
                                "(report)"),
        "analysis/explain/core.py": ("from ...bench import runner\n", "(bench)"),
    }
    for rel, (text, needle) in cases.items():
        (pkg / rel).write_text(text)
        (found,) = upward_imports(pkg / rel)
        assert needle in found, found
    fine = pkg / "cli" / "top.py"
    fine.write_text("from ..library import api\nfrom ..core.job import CompileJob\nfrom .. import __version__\n")
    assert upward_imports(fine) == []
    job = pkg / "core" / "job.py"
    job.write_text("from .records import Record\n")  # the job is data: in the core, beside the records
    assert upward_imports(job) == []
    stray = pkg / "stray.py"
    stray.write_text("")
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of(module_name(stray))


@pytest.mark.parametrize("first", ["import vgprscope", "import vgprscope.flashattn.live as live",
                                   "from vgprscope.flashattn import traffic", "import vgprscope.captures.model"])
def test_vgprscope_attention_and_capture_are_plain_functions_in_any_import_order(first):
    """``vgprscope.attention(q, k, v)`` and ``vgprscope.capture(...)`` are what users call: plain functions whichever
    submodule was imported first (the packages are ``vgprscope.flashattn`` and ``vgprscope.captures``), and the
    package's module is a plain module (no class swapped in at import)."""
    import subprocess
    import sys

    code = (f"{first}\nimport inspect, types, vgprscope\nimport vgprscope.flashattn.traffic as t\n"
            "import vgprscope.captures.model\nfrom vgprscope import attention, capture\n"
            "print(inspect.isfunction(vgprscope.attention), inspect.isfunction(vgprscope.capture),\n"
            "      attention is vgprscope.attention, type(vgprscope) is types.ModuleType, t.__name__,\n"
            "      list(inspect.signature(vgprscope.attention).parameters)[:4])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True", "vgprscope.flashattn.traffic", "['q',", "'k',", "'v',",
                                  "'causal']"]


# ---- vendors: only the backends and the arch table tell them apart -------------------------------------

# Where a vendor may be named in code: its backend, the arch table, and the runtime's compile and
# stored-output reading, which run
# where vgprscope cannot be imported (another Triton's environment) and so keeps its own per-backend lines.
VENDOR_HOMES = ("backends", "core/archs.py", "runtime/compile.py", "runtime/stored.py")
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
    assert {"vgprscope.analysis.frontier.core", "vgprscope.analysis.explain.core", "vgprscope.core.occupancy", "vgprscope.compile.engine",
            "vgprscope.report.rows", "vgprscope.cli.occupancy_cmd", "vgprscope.flashattn.variants"} <= names
    assert not any(n.startswith("vgprscope.backends") or n in ("vgprscope.core.archs", "vgprscope.runtime.compile")
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
