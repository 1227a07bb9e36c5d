"""The maintainer documents name only files and folders that exist: every path in backticks in
docs/architecture.md and in the READMEs of the extension points (``vgprscope/backends``, ``vgprscope/sources``,
``kernels``) is found in the repository, so a file that moves or goes takes its stale mentions with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "docs/architecture.md", ROOT / "vgprscope/backends/README.md", ROOT / "vgprscope/sources/README.md",
        ROOT / "kernels/README.md")

TICKED = re.compile(r"`([^`\s]+)`")
EXTENSIONS = (".py", ".md", ".json", ".toml", ".sh", ".txt", ".yml", ".yaml", ".cfg")


def named_paths(text: str) -> list[str]:
    """The backticked words that are paths: with a slash, or a file name with one of EXTENSIONS; a template
    (``kernels/<name>.py``), a glob, a home or environment path, a URL or a dotted module name is not one."""
    out = []
    for word in TICKED.findall(text):
        if any(c in word for c in "<>{}*$~:()") or word.startswith(("-", "@")):
            continue
        if "/" in word or word.endswith(EXTENSIONS):
            out.append(word)
    return out


def missing(doc: Path, text: str) -> list[str]:
    """The paths ``text`` names that exist neither from the repository root, nor from ``vgprscope/`` (the
    package's folders are named as ``core/archs.py``), nor from the document's own folder."""
    bases = (ROOT, ROOT / "vgprscope", doc.parent)
    return [p for p in named_paths(text) if not any((base / p.rstrip("/")).exists() for base in bases)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_path_a_document_names_exists(doc):
    assert doc.is_file(), f"{doc.relative_to(ROOT)} is missing"
    text = doc.read_text()
    assert named_paths(text), "the document names no path: the check would pass on anything"
    assert missing(doc, text) == []


def test_a_made_up_path_is_reported():
    doc = ROOT / "docs/architecture.md"
    text = ("`compile/engine.py` and `core/` exist; `compile/worker.py`, `library/reports/` and `made_up.py` "
            "do not; `kernels/<name>.py`, `core.job.CompileJob` and `python -m tools.reports` are no paths")
    assert named_paths(text) == ["compile/engine.py", "core/", "compile/worker.py", "library/reports/",
                                 "made_up.py"]
    assert missing(doc, text) == ["compile/worker.py", "library/reports/", "made_up.py"]
