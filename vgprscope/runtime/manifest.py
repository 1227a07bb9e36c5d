"""The dependency manifest: every file holding a ``@triton.jit`` function a kernel reaches, transitively, and
every file a global it reads comes from, each with its content hash. The cache keeps it with each entry and
checks it on every read, so a helper edited in another file is never served stale.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import sysconfig
import textwrap
import types
from collections.abc import Sequence
from typing import Any

from .hashing import file_hash
from .loader import is_jit, source_of, unwrap


def _excluded_roots() -> tuple[str, ...]:
    """Files whose content the toolchain's identity already covers (Triton itself) or that never hold a
    user's kernel (the standard library)."""
    roots = []
    try:
        import triton

        roots.append(os.path.dirname(os.path.realpath(triton.__file__)))
    except ImportError:
        pass
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(os.path.realpath(path))
    return tuple(r + os.sep for r in roots)


def _module_imports(module: types.ModuleType) -> dict[str, tuple[str, str]]:
    """name -> (absolute module, its name there) for each ``from X import name`` at a module's top level."""
    file = getattr(module, "__file__", None)
    try:
        st = os.stat(file) if file else None
    except OSError:
        st = None
    if st is None or not os.path.isfile(file or ""):
        return {}
    return _imports_in(file or "", st.st_mtime_ns, st.st_size, module.__package__ or "")


# A worker compiles many kernels of the same modules: each file is parsed once per state (the walk of every
# job parsed the same helpers again, a third of a cold compile's time outside Triton).
@functools.lru_cache(maxsize=1024)
def _imports_in(file: str, mtime_ns: int, size: int, package: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    try:
        with open(file, encoding="utf-8") as f:
            tree = ast.parse(f.read(), file)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return out
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - node.level + 1] if node.level > 1 else parts
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                out[alias.asname or alias.name] = (base, alias.name)
    return out


@functools.lru_cache(maxsize=8192)
def _real_file(path: str) -> str | None:
    """A path's real file, or None (a walk asks again for the same few files thousands of times)."""
    real = os.path.realpath(path)
    return real if os.path.isfile(real) else None


class _Walker:
    """Collects the files a kernel's compile depends on: the JIT functions it reaches and the modules the
    globals it reads come from (re-exports followed), Triton and the standard library left out."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.seen: set[int] = set()
        self.skip = _excluded_roots()
        self.imports: dict[str, dict[str, tuple[str, str]]] = {}

    def add_file(self, path: str | None) -> None:
        if not path:
            return
        real = _real_file(path)
        if real is not None and not real.startswith(self.skip):
            self.files.add(real)

    def add_module(self, module: types.ModuleType | None) -> None:
        if module is not None:
            self.add_file(getattr(module, "__file__", None))

    def origin(self, module: types.ModuleType | None, name: str, depth: int = 0) -> None:
        """The module a global ``name`` of ``module`` was imported from, and its own origin, recorded."""
        if module is None or depth > 8:
            return
        self.add_module(module)
        key = module.__name__
        if key not in self.imports:
            self.imports[key] = _module_imports(module)
        src = self.imports[key].get(name)
        if src is not None:
            self.origin(sys.modules.get(src[0]), src[1], depth + 1)

    def value(self, obj: Any, module: types.ModuleType | None, name: str | None) -> None:
        if isinstance(obj, types.ModuleType):
            self.add_module(obj)
            return
        fn = unwrap(obj)
        if is_jit(fn):
            self.function(fn)
            return
        if isinstance(obj, (types.FunctionType, type)):  # e.g. a constexpr_function evaluated at compile time
            try:
                self.add_file(inspect.getsourcefile(obj))
            except TypeError:
                pass
        if name is not None:
            self.origin(module, name)

    def function(self, fn: Any) -> None:
        if id(fn) in self.seen:
            return
        self.seen.add(id(fn))
        py = fn.fn
        try:
            self.add_file(inspect.getsourcefile(py) or py.__code__.co_filename)
        except TypeError:
            pass
        module = sys.modules.get(getattr(py, "__module__", "") or "")
        self.add_module(module)
        try:
            refs = _references(textwrap.dedent(source_of(fn)))
        except (SyntaxError, TypeError, ValueError, OSError, StopIteration):
            return
        scope: dict[str, Any] = dict(py.__globals__)
        if py.__closure__:
            scope.update({n: c.cell_contents for n, c in zip(py.__code__.co_freevars, py.__closure__)
                          if has_contents(c)})
        for chain in refs:
            if chain[0] not in scope:
                continue
            obj = scope[chain[0]]
            self.value(obj, module, chain[0])
            for part in chain[1:]:
                owner = obj
                obj = getattr(obj, part, None)
                if obj is None:
                    break
                self.value(obj, owner if isinstance(owner, types.ModuleType) else None,
                           part if isinstance(owner, types.ModuleType) else None)


@functools.lru_cache(maxsize=4096)
def _references(source: str) -> tuple[tuple[str, ...], ...]:
    """The names a function's source reads, in the order of its syntax tree: each attribute chain
    (``tl.math.exp`` as its parts) and each loaded name alone. Parsed once per source in a process: every job
    of a worker walks the same helpers."""
    refs: list[tuple[str, ...]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            chain = attribute_chain(node)
            if chain is not None:
                refs.append(tuple(chain))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs.append((node.id,))
    return tuple(refs)


def has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading it is the test: an empty cell raises)
    except ValueError:
        return False
    return True


def attribute_chain(node: ast.Attribute) -> list[str] | None:
    parts = []
    cur: ast.AST = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        cur = cur.value
    if not isinstance(cur, ast.Name):
        return None
    return [cur.id, *reversed(parts)]


def dependencies(fn: Any, extra: Sequence[Any] = ()) -> dict[str, str]:
    """{path: content hash} of every file the compile of ``fn`` reads (``extra``: JIT functions passed
    as constexprs), Triton and the standard library excluded."""
    walker = _Walker()
    walker.function(fn)
    for other in extra:
        other = unwrap(other)
        if is_jit(other):
            walker.function(other)
    out = {}
    for path in sorted(walker.files):
        try:
            out[path] = file_hash(path)
        except OSError:
            continue
    return out


