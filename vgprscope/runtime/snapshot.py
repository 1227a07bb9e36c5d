"""A kernel's snapshot: the kernel and every JIT function it reaches as source text, each with what the names
it reads are, recorded where it was launched; and the kernel built again from it where its module cannot be
imported (it needs a GPU to import, or it was a script), with line info naming the user's own file.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import inspect
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

from .constexpr import is_constexpr, is_dtype
from .loader import LoadError, is_jit, jit_options, not_utf8, source_of, unwrap
from .manifest import attribute_chain, has_contents

# Modules a snapshot may name and a compile worker imports as they are (Triton ships them; math is stdlib).
_IMPORTABLE = ("triton", "math")


def _importable(name: str) -> bool:
    return name.split(".")[0] in _IMPORTABLE


def _fkey(fn: Any) -> str:
    py = fn.fn
    return f"{getattr(py, '__module__', '') or ''}:{py.__qualname__}"


class _Snapshot:
    """The kernel and every JIT function it reaches as source text, each with what the names it reads are:
    numbers, constexprs, dtypes, Triton's own modules and functions, other JIT functions, and user modules
    as namespaces of the attributes read. Enough to compile it where its module cannot be imported."""

    def __init__(self) -> None:
        self.functions: dict[str, dict[str, Any]] = {}
        self.problems: list[str] = []

    def encode(self, v: Any, attrs: dict[str, Any] | None = None, depth: int = 0) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return {"value": v}
        if is_constexpr(v):
            return {"constexpr": self.encode(v.value)}
        if is_dtype(v):
            return {"dtype": str(v)}
        if isinstance(v, tuple):
            return {"tuple": [self.encode(x) for x in v]}
        if isinstance(v, types.ModuleType):
            if _importable(v.__name__):
                return {"module": v.__name__}
            if depth > 4:
                self.problems.append(f"module {v.__name__} is read too deep")
                return {"value": None}
            return {"namespace": {a: self.encode(getattr(v, a, None), sub, depth + 1)
                                  for a, sub in (attrs or {}).items()}}
        fn = unwrap(v)
        if is_jit(fn):
            self.add(fn)
            return {"jit": _fkey(fn)}
        module = getattr(v, "__module__", "") or ""
        if callable(v) and _importable(module) and hasattr(v, "__qualname__"):
            return {"import": [module, v.__qualname__]}
        if attrs and not callable(v) and depth <= 4:
            # an object the kernel reads attributes of (torch.finfo(dtype).max in a default): those attributes
            return {"namespace": {a: self.encode(getattr(v, a, None), sub, depth + 1) for a, sub in attrs.items()}}
        self.problems.append(f"{type(v).__name__} {repr(v)[:60]}")
        return {"value": None}

    def add(self, fn: Any) -> None:
        key = _fkey(fn)
        if key in self.functions:
            return
        py = fn.fn
        try:
            source = source_of(fn)
        except (OSError, TypeError, StopIteration) as exc:
            why = not_utf8(getattr(getattr(py, "__code__", None), "co_filename", None)) or exc
            self.problems.append(f"{key}: its source cannot be read ({why})")
            return
        entry: dict[str, Any] = {"module": py.__module__ or "", "name": py.__name__, "source": source,
                                 "jit": jit_options(fn), "names": {}}
        entry |= _origin(py)
        is_gluon = getattr(fn, "is_gluon", None)
        if callable(is_gluon) and is_gluon():  # redefined with @gluon.jit, compiled through Gluon's source
            entry["gluon"] = True
        scope: dict[str, Any] = dict(py.__globals__)
        if py.__closure__:
            scope.update({n: c.cell_contents for n, c in zip(py.__code__.co_freevars, py.__closure__)
                          if has_contents(c)})
        self.add_source(key, entry, scope)

    def add_source(self, key: str, entry: dict[str, Any], scope: dict[str, Any]) -> None:
        """A function given as its entry (its ``source`` text, module, name, JIT options, where it is) and what
        the names it reads are (``scope``): those it reads are encoded into the entry's ``names``."""
        source = entry["source"]
        self.functions[key] = entry
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            self.problems.append(f"{key}: {exc}")
            return
        # the attributes read of each name (for user modules kept as namespaces): a.b.c -> {a: {b: {c: {}}}}
        reads: dict[str, dict[str, Any]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain = attribute_chain(node)
                if chain and chain[0] in scope:
                    level = reads.setdefault(chain[0], {})
                    for part in chain[1:]:
                        level = level.setdefault(part, {})
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scope:
                reads.setdefault(node.id, {})
        bound = _bound_names(tree)
        for name, attrs in reads.items():
            known = len(self.problems)
            value = self.encode(scope[name], attrs)
            if name in bound and len(self.problems) > known:
                # the function's own variable of a module global's name (FlagGems' `sum = tl.zeros(...)` beside
                # its `sum` op): the kernel reads its own, never the global, which a snapshot need not hold
                del self.problems[known:]
                continue
            entry["names"][name] = value


def _bound_names(tree: ast.Module) -> set[str]:
    """The names a function's source binds itself (its parameters and what it assigns, loops over or imports),
    less those it declares global."""
    bound: set[str] = set()
    declared: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            bound |= {a.arg for a in (*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg) if a}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
    return bound - declared


def _origin(py: Any) -> dict[str, Any]:
    """Where a function's ``def`` line is in its file: a snapshot compiled elsewhere keeps the user's file and
    line numbers in its line info (spill sites), not those of the module it is written to."""
    try:
        file = inspect.getsourcefile(py) or py.__code__.co_filename
        lines, start = inspect.getsourcelines(py)
    except (OSError, TypeError):
        return {}
    idx = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(("def ", "async def "))), None)
    if idx is None or not file:
        return {}
    return {"file": os.path.realpath(file), "line": start + idx}


def snapshot(fn: Any) -> dict[str, Any]:
    """A kernel's snapshot (see ``_Snapshot``); ``problems`` lists what it could not record."""
    snap = _Snapshot()
    snap.add(unwrap(fn))
    return {"kernel": _fkey(unwrap(fn)), "functions": snap.functions, "problems": snap.problems}


def snapshot_of_source(entry: dict[str, Any], scope: dict[str, Any]) -> dict[str, Any]:
    """The snapshot of a kernel given as its source text rather than as a function (``add_source``): what
    ``vgprscope scan`` makes of a generated module it reads but never runs, ``scope`` holding only what it
    resolved of the names the kernel reads."""
    snap = _Snapshot()
    key = f"{entry['module']}:{entry['name']}"
    snap.add_source(key, entry, scope)
    return {"kernel": key, "functions": snap.functions, "problems": snap.problems}


def _decode(enc: Any, built: dict[str, Any]) -> Any:
    (tag, v), = enc.items()
    if tag == "value":
        return v
    if tag == "constexpr":
        import triton.language as tl

        return tl.constexpr(_decode(v, built))
    if tag == "dtype":
        import triton.language as tl

        return tl.dtype(v)
    if tag == "tuple":
        return tuple(_decode(x, built) for x in v)
    if tag == "module":
        return importlib.import_module(v)
    if tag == "namespace":
        # a module, as the kernel read it (``tle.program_id``): Triton reads a module global's attributes as it
        # does a module's, where it would copy another object's (and a JIT function in it cannot be copied)
        namespace = types.ModuleType("vgprscope_snapshot_namespace")
        namespace.__dict__.update({a: _decode(x, built) for a, x in v.items()})
        return namespace
    if tag == "jit":
        return built[v]
    if tag == "import":
        obj: Any = importlib.import_module(v[0])
        for part in v[1].split("."):
            obj = getattr(obj, part)
        return obj
    raise LoadError(f"a snapshot value of unknown kind {tag!r}")


# Source lines a snapshot's functions were compiled under their original file's name, by that name, while a
# compile from the snapshot runs (``snapshot_lines``): Triton reads a function's lines back through linecache.
_SNAPSHOT_LINES: dict[str, Any] = {}


def _at_original_lines(fns: list[tuple[str, dict[str, Any]]]) -> tuple[str, list[str]] | None:
    """One original module's functions laid out as they are in the user's file: each ``def`` on its own line
    number, its decorator the line above, blank lines between (the file's name and its text), or None where
    the snapshot did not record where they are, or they are not one file's in order."""
    files = {f.get("file") for _, f in fns}
    if len(files) != 1 or None in files or not all(isinstance(f.get("line"), int) for _, f in fns):
        return None
    lines = [_snapshot_head(fns)]
    for _, f in sorted(fns, key=lambda kf: kf[1]["line"]):
        body = f["source"].rstrip().splitlines()
        decorator = f["line"] - 2  # the index of the decorator's line: the def is the line after it
        if decorator < len(lines):
            return None
        lines += [""] * (decorator - len(lines)) + [_decorator(f), *body]
    return str(next(iter(files))), lines


def _snapshot_head(fns: list[tuple[str, dict[str, Any]]]) -> str:
    """A snapshot module's first line (one line, so that the functions keep their original line numbers):
    Gluon is imported only for a Gluon kernel (releases before 3.4 have none)."""
    if any(f.get("gluon") for _, f in fns):
        return "import triton; from triton.experimental import gluon as _vgprscope_gluon"
    return "import triton"


def _decorator(f: dict[str, Any]) -> str:
    """The JIT decorator a snapshot function is defined with again: ``@gluon.jit`` for a Gluon kernel (compiled
    through Gluon's own source), else ``@triton.jit``, with the options it was declared with."""
    opts = {k: v for k, v in f["jit"].items() if v}
    return f"@{'_vgprscope_gluon.jit' if f.get('gluon') else 'triton.jit'}(**{opts!r})"


def snapshot_files(snap: dict[str, Any]) -> list[str]:
    """The user's files a snapshot's functions were captured from (where the snapshot recorded them)."""
    return sorted({f["file"] for f in snap.get("functions", {}).values() if isinstance(f.get("file"), str)})


@contextlib.contextmanager
def snapshot_lines() -> Iterator[None]:
    """Around a load and compile from a snapshot: its text is what linecache gives for the original files'
    names, then the real files again."""
    import linecache

    try:
        yield
    finally:
        for path, saved in _SNAPSHOT_LINES.items():
            if saved is None:
                linecache.cache.pop(path, None)
            else:
                linecache.cache[path] = saved
        _SNAPSHOT_LINES.clear()


def load_snapshot(snap: dict[str, Any], directory: str) -> Any:
    """The kernel of a snapshot, its functions written out as modules in ``directory`` (one per original
    module, so each keeps its own names) and bound to what they read. Where the snapshot recorded each
    function's file and ``def`` line, a module is compiled under its original file's name with every
    function at its original line (call within ``snapshot_lines``), so line info names the user's file."""
    import linecache

    if snap.get("problems"):
        raise LoadError(f"the capture's snapshot of this kernel is incomplete: {'; '.join(snap['problems'][:3])}")
    digest = hashlib.sha256(repr(sorted(snap["functions"])).encode()).hexdigest()[:12]
    by_module: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for key, f in snap["functions"].items():
        by_module.setdefault(f["module"], []).append((key, f))
    built: dict[str, Any] = {}
    modules: dict[str, types.ModuleType] = {}
    for i, (module, fns) in enumerate(sorted(by_module.items())):
        name = f"vgprscope_snapshot_{digest}_{i}"
        path = os.path.join(directory, f"{name}.py")
        laid_out = _at_original_lines(fns)
        if laid_out is not None:
            origin, lines = laid_out
        else:
            origin, lines = path, [_snapshot_head(fns), ""]
            for _, f in fns:
                lines += [_decorator(f), f["source"].rstrip(), "", ""]
        with open(path, "w", encoding="utf-8") as out:
            out.write("\n".join(lines))
        if origin != path:
            text = "\n".join(lines) + "\n"
            _SNAPSHOT_LINES.setdefault(origin, linecache.cache.get(origin))
            linecache.cache[origin] = (len(text), None, text.splitlines(keepends=True), origin)
        mod = types.ModuleType(name)
        mod.__file__ = path
        # what the definitions read when they run (annotations, defaults: tl.constexpr), JIT functions after
        for _, f in fns:
            for var, enc in f["names"].items():
                if not _reaches_jit(enc):
                    mod.__dict__[var] = _decode(enc, built)
        sys.modules[name] = mod
        with open(path, encoding="utf-8") as src:
            exec(compile(src.read(), origin, "exec"), mod.__dict__)
        modules[module] = mod
        for key, f in fns:
            built[key] = getattr(mod, f["name"])
    for module, fns in by_module.items():
        scope = modules[module].__dict__
        for _, f in fns:
            for var, enc in f["names"].items():
                if _reaches_jit(enc):  # a JIT function, or a namespace holding one (``tle.program_id``)
                    scope[var] = _decode(enc, built)
    return built[snap["kernel"]]


def _reaches_jit(enc: Any) -> bool:
    """Whether a snapshot value is, or holds at any depth, a JIT function of the snapshot (bound once every
    function is built)."""
    if isinstance(enc, dict):
        return "jit" in enc or any(_reaches_jit(v) for v in enc.values())
    if isinstance(enc, list):
        return any(_reaches_jit(v) for v in enc)
    return False




def bind_recorded_names(fn: Any, snap: dict[str, Any]) -> list[str]:
    """Bind, in the modules of a kernel loaded from its file, the names its JIT functions read that the file
    does not define but the launch's module held: what a code generator put there after loading the file
    (FlagGems' ``pointwise_dynamic`` copies the scalar function's globals, ``erf`` among them, into the module
    it generated), taken from the capture's snapshot of the kernel. Only values a snapshot decodes by itself
    (numbers, constexprs, dtypes, Triton's modules and functions, namespaces); the names bound, sorted."""
    functions = snap.get("functions") or {}
    bound: list[str] = []
    seen: set[str] = set()

    def walk(jit: Any, key: str) -> None:
        if key in seen or key not in functions:
            return
        seen.add(key)
        scope = jit.fn.__globals__
        for var, enc in functions[key].get("names", {}).items():
            if var in scope:
                callee = unwrap(scope[var])
                if "jit" in enc and is_jit(callee):
                    walk(callee, enc["jit"])
                continue
            if _reaches_jit(enc):
                continue
            try:
                scope[var] = _decode(enc, {})
            except Exception:  # not decodable here (a module this machine lacks): the compile says what is missing
                continue
            bound.append(var)

    walk(unwrap(fn), str(snap.get("kernel", "")))
    return sorted(bound)
