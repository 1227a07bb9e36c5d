"""Load a directory of kernel files by path: the bundled ``kernels/`` and a user's own, the same way.

A directory becomes a package (so its files may import shared helpers relatively, ``from ._common import
...``); every file not starting with ``_`` that defines ``VARIANT`` is a variant. Nothing here imports
triton until a directory is actually loaded.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.errors import UsageError


def _bundled_dir() -> Path:
    """Where the bundled kernels are: the top-level ``kernels/`` of a checkout, installed as the
    ``vgprscope.kernels`` package (pyproject's package-dir). Found without importing it (no triton)."""
    try:
        spec = importlib.util.find_spec("vgprscope.kernels")
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0]).resolve()
    return (Path(__file__).resolve().parents[2] / "kernels").resolve()  # a checkout on sys.path, not installed


BUNDLED_DIR = _bundled_dir()


def _package_name(directory: Path) -> str:
    if directory == BUNDLED_DIR:
        return "vgprscope.kernels"
    digest = hashlib.sha1(str(directory).encode()).hexdigest()[:10]
    return f"vgprscope_user_kernels_{digest}"


def check_directory(directory: Path) -> None:
    """A kernel directory must exist and be a directory (UsageError, one line, otherwise)."""
    if not directory.exists():
        raise UsageError(f"kernel directory {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise UsageError(f"kernel directory {str(directory)!r} is not a directory; give the directory that "
                         "holds your kernel files")


def variant_files(directory: Path) -> list[Path]:
    """Variant files of a directory, without importing them."""
    check_directory(directory)
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))


def parse_file(file: Path) -> ast.Module:
    """A kernel file's syntax tree; a syntax error or an unreadable file is a UsageError naming the file
    and the line (it would otherwise surface as a traceback, or as every row of a sweep failing)."""
    try:
        return ast.parse(file.read_bytes(), str(file))
    except SyntaxError as exc:
        raise UsageError(f"{file}, line {exc.lineno}: syntax error: {exc.msg}") from None
    except (OSError, ValueError) as exc:  # unreadable, or NUL bytes
        raise UsageError(f"cannot read kernel file {file}: {getattr(exc, 'strerror', None) or exc}") from None


def parsed(file: Path) -> ast.Module:
    """``parse_file``, once per file and state while a directory is read: a variant file's declaration and
    its relative imports come from one tree (parsing the kernel files is most of a warm ``analyze``'s own
    work); ``forget_trees`` lets them go once read (about 4 MB for the bundled kernels)."""
    st = file.stat()
    return _parsed(file, st.st_mtime_ns, st.st_size)


def forget_trees() -> None:
    _parsed.cache_clear()


@cache
def _parsed(file: Path, mtime_ns: int, size: int) -> ast.Module:
    return parse_file(file)


def _relative_imports(file: Path) -> frozenset[str]:
    """Module names a file imports relatively from its own directory (``from .x import ...``)."""
    st = file.stat()
    return _imports_of(file, st.st_mtime_ns, st.st_size)


@cache
def _imports_of(file: Path, mtime_ns: int, size: int) -> frozenset[str]:
    # one walk per file and state in a process: every variant walks the shared helpers again (30 parses of
    # 10 files were a third of a warm `analyze`)
    tree = _parsed(file, mtime_ns, size)
    out: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:  # from . import x, y
                out.update(a.name for a in node.names)
    return frozenset(out)


def _statements(body: list[Any]) -> Iterator[Any]:
    """Every statement of a body, nested ones too (a function's, a branch's, a handler's): an import is a
    statement, so the expressions, most of a tree's nodes, need no visit."""
    for node in body:
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def source_hash(directory: Path, file: Path) -> str:
    """Hash of what a variant's kernels are built from: its file, every sibling module it imports
    relatively (transitively: small-tiles imports baseline, which imports the helpers), and the shared
    helpers (``_*.py``) beside it."""
    seen: dict[str, Path] = {}
    todo = [file]
    while todo:
        f = todo.pop()
        if f.name in seen or not f.exists():
            continue
        seen[f.name] = f
        todo += [directory / f"{m}.py" for m in _relative_imports(f)]
    for p in directory.glob("_*.py"):
        seen.setdefault(p.name, p)
    h = hashlib.sha256()
    for name in sorted(seen):
        h.update(name.encode())
        h.update(seen[name].read_bytes())
    return h.hexdigest()[:16]


@cache
def load_package(directory: Path) -> str:
    """Register ``directory`` as a package; returns its module name."""
    directory = directory.resolve()
    check_directory(directory)
    name = _package_name(directory)
    if name in sys.modules:
        return name
    init = directory / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, init if init.exists() else None, submodule_search_locations=[str(directory)]
    )
    if spec is None:  # a directory without __init__.py: a namespace-like package
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)
    return name


@cache
def load_file(directory: Path, file_name: str) -> ModuleType:
    """Import one kernel file of ``directory`` (registered as a package first)."""
    directory = directory.resolve()
    package = load_package(directory)
    return importlib.import_module(f"{package}.{Path(file_name).stem}")
