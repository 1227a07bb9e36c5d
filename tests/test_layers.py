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
CORE = ("compile", "parse", "gate", "report", "sources", "capture", "archs.py", "occupancy.py", "records.py",
        "errors.py", "fsutil.py")
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
    assert {"vgprscope.compile.engine", "vgprscope.compile.worker", "vgprscope.parse.amdgcn", "vgprscope.gate.baseline",
            "vgprscope.report.compare_view", "vgprscope.report.explain_view", "vgprscope.sources.capture",
            "vgprscope.sources.triton_cache", "vgprscope.archs", "vgprscope.occupancy"} <= names
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
