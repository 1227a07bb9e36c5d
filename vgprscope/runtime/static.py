"""A kernel read from its current file where its module cannot be imported (torch or a GPU missing, a package
not installed): the file's top-level statements run one by one, only those that bind what the kernel reaches.

What the gate compiles is the kernel as its file says now, wherever it runs. Where the module imports, it is
imported (``loader``); where it does not, this module builds the same objects from the same file without
running the module as a whole:

- each top-level statement of a file runs only when a name it binds is needed: the kernel's own definition
  (its decorators: ``@triton.autotune``, ``@triton.heuristics``, a library's own autotuner), then what those
  read, transitively (the ``@triton.jit`` helpers, module-level constexpr globals, config lists, the
  functions ``prune_configs_by`` and heuristics call), in the file's order;
- an import runs as it would, and where it fails a module of the kernel's own project (the same top-level
  package, or a file beside it outside installed packages) is read the same way, statically; any other
  (``torch``) stays missing;
- a statement that fails binds its names to a stand-in (``Missing``) saying why: an import that failed, a
  value computed by code that needs what is missing. A stand-in may be passed around (an annotation, a
  default nobody reads, an object a library's wrapper keeps); using its value raises ``Underivable``, and so
  does a ``@triton.jit`` function that reads one (``check``), the row saying what and why.

Each statement is compiled under its file's name at its own line, so the JIT functions' sources, line
numbers and line info are the file's own, exactly as imported. Standard library only at import time.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import contextlib
import importlib
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

from .loader import is_jit, source_of, unwrap

# Where installed packages live: a file there is a library's, never read statically as the kernel's project.
_INSTALLED = ("site-packages", "dist-packages")


class Underivable(Exception):
    """The current kernel cannot be derived from its file without running its module (what it needs does
    not import here). ``files``: the files read before it was found (what the verdict depends on)."""

    files: tuple[str, ...] = ()


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Missing:
    """What a name would be had its statement run: ``expr`` as the file writes it, and what it ``needs`` that
    is not here. Reading an attribute, calling it or indexing it gives another stand-in; using its value
    raises Underivable."""

    __slots__ = ("_expr", "_needs")

    def __init__(self, expr: str, needs: str) -> None:
        object.__setattr__(self, "_expr", expr)
        object.__setattr__(self, "_needs", needs)

    @property
    def reason(self) -> str:
        """'torch.version.hip needs torch (it does not import here: ModuleNotFoundError: ...)'."""
        return f"{self._expr} needs {self._needs}"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Missing(f"{self._expr}.{name}", self._needs)

    def __call__(self, *args: Any, **kwargs: Any) -> Missing:
        return Missing(f"{self._expr}(...)", self._needs)

    def __getitem__(self, key: Any) -> Missing:
        return Missing(f"{self._expr}[...]", self._needs)

    def __repr__(self) -> str:
        return f"<{self.reason}>"

    def _value(self, *args: Any) -> Any:
        raise Underivable(self.reason, self._needs)

    __bool__ = __iter__ = __len__ = __int__ = __float__ = __index__ = __str__ = __format__ = _value
    __contains__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __pos__ = __abs__ = __invert__ = _value
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _value
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _value
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = __lshift__ = __rlshift__ = _value
    __rshift__ = __rrshift__ = __setattr__ = __setitem__ = _value

    def __eq__(self, other: object) -> bool:
        return other is self

    def __hash__(self) -> int:
        return id(self)


def missing_in(value: Any) -> Missing | None:
    """The first stand-in in a value (itself, or inside a ``tl.constexpr``, a tuple, list or dict of values)."""
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):  # tl.constexpr(...) of a stand-in
        value = value.value
    if isinstance(value, Missing):
        return value
    if isinstance(value, (tuple, list)):
        return next((m for m in map(missing_in, value) if m is not None), None)
    if isinstance(value, dict):
        return next((m for m in map(missing_in, value.values()) if m is not None), None)
    return None


# ---- a file's statements: what each binds and reads ---------------------------------------------------------


def _bound(stmt: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds (inside an ``if``/``try``/``with``/``for`` too, not
    inside a function or class body)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= _bound(node)
            continue
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _read(node: ast.AST) -> set[str]:
    """The global names a top-level statement reads, in function bodies too (a function reads its globals
    when it runs): every name loaded, less a function's own parameters and local variables."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer: list[ast.AST] = [*getattr(node, "decorator_list", []), *node.args.defaults,
                                *(d for d in node.args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            every = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                     *(a for a in (node.args.vararg, node.args.kwarg) if a is not None)]
            outer += [a.annotation for a in every if a.annotation is not None]
            outer += [node.returns] if node.returns is not None else []
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        body = node.body if isinstance(node.body, list) else [node.body]
        declared = {n for s in body for g in ast.walk(s) if isinstance(g, ast.Global) for n in g.names}
        local = (params | {n.id for s in body for n in ast.walk(s)
                           if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}) - declared
        inner = set().union(*(_read(s) for s in body)) if body else set()
        return set().union(*(_read(x) for x in outer)) | (inner - local)
    if isinstance(node, ast.ClassDef):
        parts: list[ast.AST] = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords), *node.body]
        return set().union(*(_read(x) for x in parts)) if parts else set()
    out: set[str] = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Name):
            if isinstance(child.ctx, ast.Load):
                out.add(child.id)
        else:
            out |= _read(child)
    return out


def _future_flags(tree: ast.Module) -> int:
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _installed(path: str) -> bool:
    return any(part in _INSTALLED for part in os.path.normpath(path).split(os.sep))


class _File:
    """One file read as a module: its statements run on demand into ``module``."""

    def __init__(self, session: StaticLoad, name: str, path: str) -> None:
        self.session, self.name, self.path = session, name, path
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.tree = ast.parse(text, path)
        self.flags = _future_flags(self.tree)
        self.binds = [_bound(s) for s in self.tree.body]
        self.reads = [_read(s) for s in self.tree.body]
        self.ran: set[int] = set()
        package = os.path.basename(path) == "__init__.py"
        mod = types.ModuleType(name)
        mod.__file__ = path
        mod.__package__ = name if package else name.rpartition(".")[0]
        if package:
            mod.__path__ = [os.path.dirname(path)]
        mod.__dict__["__builtins__"] = session.builtins
        mod.__dict__["__getattr__"] = self.attribute  # PEP 562: a name read later runs its statements then
        self.module = mod

    def need(self, names: set[str]) -> None:
        """Run the statements binding ``names`` and, transitively, those binding what they read, in the
        file's order (each once)."""
        todo, chosen = set(names), set()
        while todo:
            name = todo.pop()
            for i, bound in enumerate(self.binds):
                if name in bound and i not in chosen and i not in self.ran:
                    chosen.add(i)
                    todo |= self.reads[i]
        for i in sorted(chosen):
            self._run(i)

    def _run(self, i: int) -> None:
        """One statement, run into the module; where it fails, each name it binds is a stand-in saying why."""
        self.ran.add(i)
        stmt = self.tree.body[i]
        code = compile(ast.Module(body=[stmt], type_ignores=[]), self.path, "exec", flags=self.flags,
                       dont_inherit=True)
        try:
            exec(code, self.module.__dict__)
        except Exception as exc:
            needs = self._needs(stmt, exc)
            imports = isinstance(stmt, (ast.Import, ast.ImportFrom))  # the name says it: no line needed
            for name in self.binds[i]:  # whatever it set before it failed: not what the module would hold
                where = "" if imports else f" ({os.path.basename(self.path)}:{stmt.lineno})"
                self.module.__dict__[name] = Missing(f"{name}{where}", needs)

    @staticmethod
    def _needs(stmt: ast.stmt, exc: Exception) -> str:
        """What a failed statement's names need: what its own value needed, the module that did not import, or
        the code that failed here."""
        if isinstance(exc, Underivable) and len(exc.args) > 1:
            return str(exc.args[1])
        if isinstance(exc, ImportError):
            module = getattr(exc, "name", None) or (stmt.module if isinstance(stmt, ast.ImportFrom) else None) \
                or next((a.name for a in getattr(stmt, "names", [])), "a module")
            return f"{module} (it does not import here: {_line(exc)})"
        return f"code that fails here ({_line(exc)})"

    def attribute(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if any(name in b for b in self.binds):
            self.need({name})
            if name in self.module.__dict__:
                return self.module.__dict__[name]
        if hasattr(self.module, "__path__"):  # a submodule of a package read statically
            sub = self.session.load(f"{self.name}.{name}")
            if sub is not None:
                return sub
        raise AttributeError(f"module {self.name!r} has no attribute {name!r}")


class StaticLoad:
    """One static load: the files read, the modules they became (registered while it lasts, so that imports
    among them resolve), and what failed to import."""

    def __init__(self, kernel_module: str, root: str) -> None:
        self.top = kernel_module.split(".")[0] if kernel_module else ""
        self.root = os.path.realpath(root) if root else ""
        if root and root not in sys.path:  # as an import of the module would find its project (loader)
            sys.path.insert(0, root)
        self.files: dict[str, _File] = {}  # module name -> file
        self.failed: dict[str, BaseException] = {}  # module name -> why its real import failed
        self.saved: dict[str, Any] = {}
        self.closed = False  # after the load: a name read later still runs its statements, unregistered
        self.builtins = dict(vars(builtins))
        self.builtins["__import__"] = self._import

    # -- which modules are read statically
    def _find(self, name: str) -> str | None:
        """The file a module of the kernel's project would load from (found without importing it)."""
        parts = name.split(".")
        for entry in [self.root, *sys.path]:
            if not entry or not os.path.isdir(entry):
                continue
            base = os.path.join(entry, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate) and self._ours(name, candidate):
                    return os.path.realpath(candidate)
        return None

    def _ours(self, name: str, path: str) -> bool:
        """A module of the kernel's own project: its top-level package, or a file under the root it was
        imported from that is no installed package's."""
        if self.top and name.split(".")[0] == self.top:
            return True
        real = os.path.realpath(path)
        return bool(self.root) and real.startswith(self.root + os.sep) and not _installed(real)

    def file(self, name: str, path: str) -> _File:
        if name not in self.files:
            f = _File(self, name, path)
            self.files[name] = f
            if not self.closed:
                self.saved.setdefault(name, sys.modules.get(name))
                sys.modules[name] = f.module
            parent, _, leaf = name.rpartition(".")
            owner = self.load(parent) if parent else None
            if parent in self.files:  # its package read statically too: the submodule as its attribute
                owner.__dict__.setdefault(leaf, f.module)
            elif isinstance(owner, types.ModuleType):
                # a package that imports (its __init__ does) whose submodule does not: ``package.sub`` as an
                # import would bind it, kept there (a JIT function reads it through the package when it compiles)
                setattr(owner, leaf, f.module)
        return self.files[name]

    def load(self, name: str) -> Any:
        """The module ``name``: imported where it imports; read statically where it does not and it is the
        project's; else None (its import error kept in ``failed``)."""
        if name in self.files:
            return self.files[name].module
        real = sys.modules.get(name)
        if real is not None and name not in self.failed:
            return real
        if name not in self.failed and not any(name.startswith(f + ".") for f in self.failed):
            try:
                return importlib.import_module(name)
            except Exception as exc:
                self.failed[name] = exc
        path = self._find(name)
        if path is None:
            return None
        return self.file(name, path).module

    def _import(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                level: int = 0) -> Any:
        """``__import__`` of the statements read statically: the import as it would run, a module of the
        project read statically where its import fails."""
        package = (globals or {}).get("__package__") or ""
        absolute = importlib.util.resolve_name("." * level + name, package) if level else name
        found = self.load(absolute)
        if found is None:
            exc = self.failed.get(absolute) or next((e for n, e in self.failed.items()
                                                     if absolute.startswith(n + ".")), None)
            raise exc if isinstance(exc, ImportError) else ImportError(
                f"No module named {absolute!r}" if exc is None else _line(exc), name=absolute)
        if fromlist:
            for item in fromlist:
                if item != "*" and not hasattr(found, item):
                    self.load(f"{absolute}.{item}")
            return found
        if level:
            return found
        return self.load(absolute.split(".")[0])

    def close(self) -> None:
        self.closed = True
        for name, saved in self.saved.items():
            if sys.modules.get(name) is self.files[name].module:
                if saved is None:
                    del sys.modules[name]
                else:
                    sys.modules[name] = saved
        self.saved.clear()

    def paths(self) -> list[str]:
        return sorted(f.path for f in self.files.values())


@contextlib.contextmanager
def session(kernel_module: str, root: str) -> Iterator[StaticLoad]:
    s = StaticLoad(kernel_module, root)
    try:
        yield s
    finally:
        s.close()


def _name_for(module: str, path: str) -> str:
    if module and module != "__main__":
        return module
    import hashlib

    return "vgprscope_script_" + hashlib.sha1(os.path.realpath(path).encode()).hexdigest()[:12]


UNDERIVABLE = "the current kernel cannot be derived without running"


def underivable(what: str, module: str) -> str:
    """A row's reason: what needs what does not import here, and that the gate cannot derive it."""
    return f"{what}: {UNDERIVABLE} {module}"


def kernel(source: dict[str, Any]) -> tuple[Any, types.ModuleType, list[str]]:
    """(the object ``source["qualname"]`` names in its file read statically, with its wrappers; the module it
    is read into, whose other names run their statements when read; the files read). Every JIT function it reaches is checked (``check``): one that reads what is missing, or a
    definition that needs it, raises Underivable naming it."""
    path, module = os.path.realpath(source["file"]), source.get("module") or ""
    name = _name_for(module, path)
    script = module in ("", "__main__")  # a script's project is its directory (its imports resolve from there)
    with session("" if script else module, source.get("root") or (os.path.dirname(path) if script else "")) as s:
        f = s.file(name, path)
        parts = source["qualname"].split(".")
        f.need({parts[0]})
        if parts[0] not in f.module.__dict__:
            raise LookupError(f"{os.path.basename(path)} no longer defines {source['qualname']}")
        try:
            obj: Any = f.module.__dict__[parts[0]]
            for part in parts[1:]:
                obj = getattr(obj, part)
            if isinstance(obj, Missing):
                raise Underivable(obj.reason)
            check(unwrap(obj))
        except Underivable as exc:
            found = Underivable(underivable(str(exc.args[0]), name))
            found.files = tuple(s.paths())
            raise found from None
        return obj, f.module, s.paths()


def check(fn: Any) -> None:
    """Every global a JIT function and the JIT functions it calls read, resolved now (a name read through a
    module read statically runs its statements); one that is missing raises Underivable."""
    from .manifest import _references

    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen or not is_jit(f):
            continue
        seen.add(id(f))
        scope = f.fn.__globals__
        try:
            refs = _references(source_of(f))
        except (SyntaxError, OSError, TypeError, ValueError):
            continue
        for chain in refs:
            if chain[0] not in scope:
                continue
            obj = scope[chain[0]]
            for i in range(len(chain)):
                gap = missing_in(obj)
                if gap is not None:
                    read = ".".join(chain[:i + 1])
                    what = gap._expr if gap._expr.startswith(read) else f"{read} = {gap._expr}"
                    raise Underivable(f"{f.fn.__qualname__} reads {what}, which needs {gap._needs}")
                if is_jit(unwrap(obj)):
                    todo.append(unwrap(obj))
                if i + 1 == len(chain) or not isinstance(obj, types.ModuleType):
                    break
                obj = getattr(obj, chain[i + 1], None)
