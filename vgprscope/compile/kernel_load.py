"""Finding a kernel's Python function in a compile worker, and the source files its compile reads.

Standard library only at import time (Triton is imported by the functions that need it); loaded by
``compile.worker`` beside it, in vgprscope's own worker processes and under another environment's Python.

Loading (``load_function``), in order: a kernel directory registered as a package; an importable module
whose file is the recorded one; the file loaded by its path under its recorded module name (a module that
was generated, or loaded under another name than its file); for a kernel defined in a script, the script
without the code it runs (only its imports, definitions and the assignments those read), so analysing it
never runs it.

The dependency manifest (``dependencies``): every file holding a ``@triton.jit`` function the kernel
reaches, transitively, and every file a global it reads comes from, each with its content hash. The cache
keeps it with each entry and checks it on every read, so a helper edited in another file is never served
stale.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import sysconfig
import textwrap
import types
from collections.abc import Iterator, Sequence
from typing import Any


class LoadError(Exception):
    """The function cannot be loaded here (a file or module missing, a name gone, not a JIT function)."""


def file_hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:32]


# ---------------------------------------------------------------------------------- stale modules

# Packages that hold no user kernel and are too large to reload: never forgotten.
_INFRA = {"triton", "torch", "numpy", "jax", "sympy", "networkx", "_pytest", "pytest", "typing_extensions",
          "filelock", "fsspec", "jinja2", "markupsafe", "mpmath", "nvidia", "vgprscope"}
_LOADED: dict[str, tuple[str, int, int]] = {}  # module -> (file, mtime_ns, size) when a job loaded it


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def track(before: set[str]) -> None:
    """Remember the modules a job's loading imported (users' and libraries' kernel modules), with the state
    of their files, so a later job in this long-lived worker sees an edited file anew."""
    for name in set(sys.modules) - before:
        mod = sys.modules.get(name)
        file = getattr(mod, "__file__", None)
        if not file or (name.split(".")[0] in _INFRA and not name.startswith("vgprscope.kernels")):
            continue
        stat = _stat(file)
        if stat is not None:
            _LOADED[name] = (file, *stat)


def refresh() -> None:
    """Forget every module a job loaded when any of their files changed since: a kernel that imports an
    edited helper must be loaded again with it (a worker, or a notebook's process, lives across edits)."""
    if any(_stat(file) != (mtime, size) for file, mtime, size in _LOADED.values()):
        for name in _LOADED:
            sys.modules.pop(name, None)
        _LOADED.clear()
        importlib.invalidate_caches()


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Around any loading of user code: stale modules forgotten first, new ones tracked after."""
    refresh()
    before = set(sys.modules)
    try:
        yield
    finally:
        track(before)


# ------------------------------------------------------------------------------------------- packages

def register_package(name: str, directory: str) -> None:
    """Make ``directory`` importable as the package ``name`` (a kernel directory: its files may import each
    other relatively), unless a package of that name already loads from there."""
    directory = os.path.realpath(directory)
    mod = sys.modules.get(name)
    if mod is not None and any(os.path.realpath(p) == directory for p in getattr(mod, "__path__", [])):
        return
    if mod is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and any(os.path.realpath(p) == directory
                                    for p in (spec.submodule_search_locations or [])):
            importlib.import_module(name)
            return
    init = os.path.join(directory, "__init__.py")
    spec = importlib.util.spec_from_file_location(name, init if os.path.exists(init) else None,
                                                  submodule_search_locations=[directory])
    if spec is None:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [directory]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)


# ------------------------------------------------------------------------------------------- functions

def _same_file(a: str | None, b: str) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


def _by_name(module: str, root: str, file: str) -> types.ModuleType | None:
    """The module imported by name, when that import yields the recorded file (None otherwise)."""
    if root and root not in sys.path:
        sys.path.insert(0, root)
    try:
        mod = importlib.import_module(module)
    except Exception:  # not importable here (missing, or its import fails: it may need a GPU)
        return None
    return mod if _same_file(getattr(mod, "__file__", None), file) else None


def _by_path(module: str, file: str) -> types.ModuleType:
    """The file executed as a module named ``module`` (its package context kept for relative imports)."""
    spec = importlib.util.spec_from_file_location(module, file)
    if spec is None or spec.loader is None:
        raise LoadError(f"cannot load {file} as a module")
    folder = os.path.dirname(file)
    if folder not in sys.path:
        sys.path.append(folder)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(module, None)
        raise
    return mod


def _names_read(nodes: Sequence[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def script_definitions(source: str, filename: str) -> ast.Module:
    """A script reduced to what defines its functions: imports, function and class definitions, and the
    top-level assignments their bodies, defaults and decorators read (transitively). Calls, loops and any
    other statement a script runs are dropped, so loading it runs nothing of the script's own work."""
    tree = ast.parse(source, filename)
    keep: list[ast.stmt] = []
    assigns: list[tuple[ast.stmt, set[str]]] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            assigns.append((node, names))
    needed = _names_read(keep)
    chosen: list[ast.stmt] = []
    changed = True
    while changed:  # an assignment read by a kept one is kept too
        changed = False
        for node, names in assigns:
            if node not in chosen and names & needed:
                chosen.append(node)
                needed |= _names_read([node])
                changed = True
    body = [n for n in tree.body if n in keep or n in chosen]  # in the script's order
    return ast.Module(body=body, type_ignores=[])


def _script(file: str) -> types.ModuleType:
    """A kernel defined in a script (module ``__main__`` at the launch), loaded without running the script."""
    name = "vgprscope_script_" + hashlib.sha1(os.path.realpath(file).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    with open(file, encoding="utf-8") as f:
        source = f.read()
    code = compile(script_definitions(source, file), file, "exec")
    mod = types.ModuleType(name)
    mod.__file__ = file
    folder = os.path.dirname(file)
    if folder not in sys.path:
        sys.path.append(folder)
    sys.modules[name] = mod
    # Triton reads a JIT function's source with inspect, through linecache: the file is still the file
    exec(code, mod.__dict__)
    return mod


def load_module(source: dict[str, Any]) -> types.ModuleType:
    file, module = source["file"], source.get("module") or ""
    if not os.path.isfile(file):
        raise LoadError(f"{file} does not exist (moved or deleted)")
    if source.get("package_dir"):
        register_package(source["package"], source["package_dir"])
        return importlib.import_module(module)
    if module and module != "__main__":
        mod = _by_name(module, source.get("root") or "", file)
        if mod is not None:
            return mod
        existing = sys.modules.get(module)
        if existing is not None and _same_file(getattr(existing, "__file__", None), file):
            return existing
        # generated, loaded under another name than its file, or not importable here: the file itself
        return _by_path(module if module not in sys.modules else "vgprscope_file_" + file_hash(file)[:12], file)
    return _script(file)


def is_jit(obj: Any) -> bool:
    """A Triton JIT function of any release, or the interpreter's stand-in for one: it holds the plain
    Python function itself (autotuner and heuristics wrappers hold another wrapper or a JIT function)."""
    return inspect.isfunction(getattr(obj, "fn", None)) and (hasattr(obj, "src") or hasattr(obj, "arg_names"))


def source_of(fn: Any) -> str:
    """A JIT function's source from its ``def`` line (what Triton parses), decorators left out."""
    src = getattr(fn, "src", None)
    if isinstance(src, str):
        return src
    text = textwrap.dedent(inspect.getsource(fn.fn))
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(("def ", "async def ")))
    return "".join(lines[start:])


def jit_options(fn: Any) -> dict[str, Any]:
    """The decorator's specialisation options of a JIT function (or of the interpreter's stand-in)."""
    kw = getattr(fn, "kwargs", None) or {}
    return {name: list(getattr(fn, name, None) or kw.get(name) or [])
            for name in ("do_not_specialize", "do_not_specialize_on_alignment")} | \
        {"noinline": getattr(fn, "noinline", None) or kw.get("noinline")}


def unwrap(obj: Any) -> Any:
    """The JIT function under @autotune / @heuristics wrappers (each holds the next in ``fn``)."""
    for _ in range(16):
        if is_jit(obj) or not hasattr(obj, "fn"):
            break
        obj = obj.fn
    return obj


def load_function(source: dict[str, Any]) -> Any:
    """The JIT function a FunctionSource (as a dict) names."""
    qualname = source["qualname"]
    if "<locals>" in qualname:
        raise LoadError(f"{qualname} is defined inside a function: not reachable by name; move it to module "
                        "level to analyse it")
    with loading():
        obj: Any = load_module(source)
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise LoadError(f"{os.path.basename(source['file'])} has no {qualname} (renamed?)")
        obj = getattr(obj, part)
    fn = unwrap(obj)
    if not is_jit(fn):
        raise LoadError(f"{qualname} is a {type(fn).__name__}, not a Triton JIT function")
    return fn


def decode_constexpr(value: Any) -> Any:
    """A constexpr as JSON -> the value a launch passes (dtypes and JIT functions by name)."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, v), = value.items()
        if tag == "dtype":
            import triton.language as tl

            return tl.dtype(v)
        if tag == "jit":
            if isinstance(v, str):  # "module:qualname" (capture files of schema 1)
                module, _, qualname = v.partition(":")
                obj: Any = importlib.import_module(module)
                for part in qualname.split("."):
                    obj = getattr(obj, part)
                return obj
            return load_function(v)
        if tag == "tuple":
            return tuple(decode_constexpr(x) for x in v)
        if tag == "unsupported":
            raise LoadError(f"a constexpr the launch could not record ({v})")
    return value


def encode_constexpr(v: Any) -> Any:
    """A constexpr value as JSON (the inverse of ``decode_constexpr``); what cannot be named is marked."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if type(v).__name__ == "constexpr" and hasattr(v, "value"):
        return encode_constexpr(v.value)
    if type(v).__name__ == "dtype" and type(v).__module__.startswith("triton"):
        return {"dtype": str(v)}
    if isinstance(v, tuple):
        return {"tuple": [encode_constexpr(x) for x in v]}
    fn = unwrap(v)
    if is_jit(fn):
        return {"jit": function_ref(fn)}
    return {"unsupported": f"{type(v).__name__} {repr(v)[:80]}"}


def function_ref(fn: Any) -> dict[str, Any]:
    """A JIT function as a FunctionSource dict (file, qualified name, module)."""
    py = fn.fn
    return {"file": os.path.realpath(inspect.getsourcefile(py) or py.__code__.co_filename),
            "qualname": py.__qualname__, "module": py.__module__ or ""}


# -------------------------------------------------------------------------------- dependency manifest

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
                          if _has_contents(c)})
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
            chain = _attribute_chain(node)
            if chain is not None:
                refs.append(tuple(chain))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs.append((node.id,))
    return tuple(refs)


def _has_contents(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (reading it is the test: an empty cell raises)
    except ValueError:
        return False
    return True


def _attribute_chain(node: ast.Attribute) -> list[str] | None:
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


# ----------------------------------------------------------------------------------------- snapshots

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
        if type(v).__name__ == "constexpr" and hasattr(v, "value"):
            return {"constexpr": self.encode(v.value)}
        if type(v).__name__ == "dtype" and type(v).__module__.startswith("triton"):
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
            self.problems.append(f"{key}: its source cannot be read ({exc})")
            return
        entry: dict[str, Any] = {"module": py.__module__ or "", "name": py.__name__, "source": source,
                                 "jit": jit_options(fn), "names": {}}
        entry |= _origin(py)
        is_gluon = getattr(fn, "is_gluon", None)
        if callable(is_gluon) and is_gluon():  # redefined with @gluon.jit, compiled through Gluon's source
            entry["gluon"] = True
        self.functions[key] = entry
        scope: dict[str, Any] = dict(py.__globals__)
        if py.__closure__:
            scope.update({n: c.cell_contents for n, c in zip(py.__code__.co_freevars, py.__closure__)
                          if _has_contents(c)})
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            self.problems.append(f"{key}: {exc}")
            return
        # the attributes read of each name (for user modules kept as namespaces): a.b.c -> {a: {b: {c: {}}}}
        reads: dict[str, dict[str, Any]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                chain = _attribute_chain(node)
                if chain and chain[0] in scope:
                    level = reads.setdefault(chain[0], {})
                    for part in chain[1:]:
                        level = level.setdefault(part, {})
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scope:
                reads.setdefault(node.id, {})
        for name, attrs in reads.items():
            entry["names"][name] = self.encode(scope[name], attrs)


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
        return types.SimpleNamespace(**{a: _decode(x, built) for a, x in v.items()})
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
                if "jit" not in enc:
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
                if "jit" in enc:
                    scope[var] = built[enc["jit"]]
    return built[snap["kernel"]]
