"""Finding a kernel's Python function where it compiles: a kernel directory registered as a package, an
importable module whose file is the recorded one, the file loaded by its path under its recorded module name
(a module that was generated, or loaded under another name than its file), or, for a kernel defined in a
script, the script without the code it runs (only its imports, definitions and the assignments those read),
so analysing it never runs it.

Standard library only at import time (Triton is imported by the functions that need it). A long-lived worker
forgets the modules a job loaded when one of their files changes (``loading``), so an edited helper is seen.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import textwrap
import types
from collections.abc import Iterator, Sequence
from typing import Any

from . import hashing


class LoadError(Exception):
    """The function cannot be loaded here (a file or module missing, a name gone, not a JIT function)."""


def not_utf8(path: str | None) -> str | None:
    """Why Triton cannot read a kernel file's source (it reads it as UTF-8, whatever encoding the file
    declares), or None: the first byte that is not UTF-8, with its line."""
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return (f"{os.path.basename(path)} is not UTF-8 text (byte {data[exc.start]:#04x} on line {line}): Triton "
                f"reads a kernel's source as UTF-8; save the file as UTF-8")
    return None


# Packages that hold no user kernel and are too large to reload: never forgotten.
_INFRA = {"triton", "torch", "numpy", "jax", "sympy", "networkx", "_pytest", "pytest", "typing_extensions",
          "filelock", "fsspec", "jinja2", "markupsafe", "mpmath", "nvidia", "vgprscope", "_vgprscope_runtime"}


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
        return _by_path(module if module not in sys.modules else "vgprscope_file_" + hashing.file_hash(file)[:12], file)
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


def function_ref(fn: Any) -> dict[str, Any]:
    """A JIT function as a FunctionSource dict (file, qualified name, module)."""
    py = fn.fn
    return {"file": os.path.realpath(inspect.getsourcefile(py) or py.__code__.co_filename),
            "qualname": py.__qualname__, "module": py.__module__ or ""}


