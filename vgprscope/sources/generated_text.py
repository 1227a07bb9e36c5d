"""A generated module (Inductor's ``XX/cXXXX.py``) read as text, never run: its kernel's snapshot (what a compile
worker builds the kernel from) made from the kernel's source and the names it reads, each resolved from the
module's import statements against installed modules (Triton, PyTorch Inductor's runtime, math) and checked to
be a value a Triton kernel may read. Nothing of the module runs, here or in the worker: a line at its top, in the
kernel's def line, or reached from the kernel's body through a module it imports, runs nowhere.
"""

from __future__ import annotations

import ast
import builtins
import json
import types
from pathlib import Path
from typing import Any

# Where the names a generated kernel reads may come from: the installed Triton's and PyTorch Inductor's runtime
# modules, and the standard library's math, imported here as installed, by name; never the generated module.
TRUSTED_MODULES = ("triton", "math", "torch._inductor.runtime")
# what torch's helpers re-export, for a scan without torch
_WITHOUT_TORCH = {"libdevice": "triton.language.extra.libdevice", "tl_math": "triton.language.math",
                  "math": "triton.language.math"}


class _NotStatic(Exception):
    """What a generated kernel reads that scan does not take: it would have to run the module's code."""


def _imports(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """The module's imports as data: local name -> (module, attribute imported from it, or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def _trusted(module: str) -> bool:
    return any(module == t or module.startswith(t + ".") for t in TRUSTED_MODULES)


def _resolve(name: str, imports: dict[str, tuple[str, str | None]]) -> Any:
    """What a module-level name the kernel reads is, imported from an installed module by name (nothing of the
    generated module runs); _NotStatic where it is not imported from one scan trusts."""
    import importlib

    if name not in imports:
        raise _NotStatic(f"{name} is defined by the module's own code, which scan never runs")
    module, attr = imports[name]
    if not _trusted(module):
        raise _NotStatic(f"{name} comes from {module}, which scan does not import (it imports only "
                         f"{', '.join(TRUSTED_MODULES)})")
    try:
        mod = importlib.import_module(module)
        if attr is None:
            return mod
        if hasattr(mod, attr):
            return getattr(mod, attr)
        return importlib.import_module(f"{module}.{attr}")
    except ImportError:
        if module.startswith("torch") and name in _WITHOUT_TORCH:
            return importlib.import_module(_WITHOUT_TORCH[name])
        why = "torch is not installed here" if module.startswith("torch") else f"{module} does not import here"
        raise _NotStatic(f"{name} comes from {module} and {why}: install torch here to scan it") from None


def _kernel_value(obj: Any) -> bool:
    """Whether a kernel may read ``obj``: Triton's language (its builtins, dtypes, constexprs, the device
    libraries), a JIT function, a number, a string, math's functions; never a module as such (a kernel calls
    what it reads of one at compile time: a module would reach anything) nor another Python callable."""
    import triton
    import triton.language as tl

    from ..runtime.loader import is_jit, unwrap

    if obj is None or isinstance(obj, (bool, int, float, str, tl.dtype, tl.constexpr)):
        return True
    if isinstance(obj, types.ModuleType):
        return False
    if is_jit(unwrap(obj)) or getattr(obj, "__triton_builtin__", False) or getattr(obj, "__triton_aggregate__",
                                                                                      False):
        return True
    module = getattr(obj, "__module__", None) or ""
    return module.startswith("triton.language") or module == "math" or obj in (triton.cdiv, triton.next_power_of_2)


def _chains(fn: ast.FunctionDef) -> list[list[str]]:
    """Every name or attribute chain the kernel reads (``tl.full``, ``triton_helpers.maximum``, ``xnumel``): in
    its arguments' annotations and defaults and its body (its decorators are Inductor's, never compiled)."""
    out, inner = [], set()
    for node in (n for part in (fn.args, *([fn.returns] if fn.returns else []), *fn.body) for n in ast.walk(part)):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = manifest_chain(node)
            if chain:
                out.append(chain)
            cur: ast.AST = node.value
            while isinstance(cur, ast.Attribute):  # a.b.c: a.b is part of it, not a read of its own
                inner.add(id(cur))
                cur = cur.value
            if isinstance(cur, ast.Name):
                inner.add(id(cur))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in inner:
            out.append([node.id])
    return out


def manifest_chain(node: ast.Attribute) -> list[str] | None:
    from ..runtime.manifest import attribute_chain

    return attribute_chain(node)


def _static_def(fn: ast.FunctionDef) -> None:
    """The ``def`` statement evaluates its defaults and annotations when it runs (a compile worker runs it to
    make the JIT function): only constants and names or attribute chains may stand there."""
    args = fn.args
    parts = [*args.defaults, *[d for d in args.kw_defaults if d is not None],
             *[a.annotation for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.annotation],
             *([fn.returns] if fn.returns else [])]
    for part in parts:
        node = part.operand if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub) else part
        if isinstance(node, ast.Constant) or (isinstance(node, ast.Attribute) and manifest_chain(node)) or \
                isinstance(node, ast.Name):
            continue
        raise _NotStatic(f"its def line computes {ast.unparse(part)[:60]} when it runs")
    if args.vararg or args.kwarg:
        raise _NotStatic("it takes *args or **kwargs, which a Triton kernel does not")


def snapshot_of_module(file: Path, name: str, module: str) -> tuple[str | None, str | None]:
    """(the kernel's snapshot as JSON, as a capture keeps it; why there is none), made from the generated
    module's text without running any of it: its source, the names it reads resolved from the module's import
    statements against installed modules (Triton, PyTorch Inductor's runtime), each a value a kernel may read;
    laid out at the module's own file and lines (its spill sites are there). Without torch, the module's
    re-exports of Triton's modules (libdevice, math) are Triton's own."""
    from ..runtime.snapshot import snapshot_of_source

    try:
        text = file.read_text()
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return None, f"cannot read {file.name}: {exc}"
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return None, f"{file.name} has no function {name}"
    imports = _imports(tree)
    local = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)} | \
        {t.id for n in fn.body for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    scope: dict[str, Any] = {}
    try:
        _static_def(fn)
        for chain in _chains(fn):
            head = chain[0]
            if head in local or (head not in imports and hasattr(builtins, head)):
                continue  # the kernel's own variables; Triton's code generator answers for builtins
            if head not in scope:
                scope[head] = _resolve(head, imports)
            obj = scope[head]
            for part in chain[1:]:
                obj = getattr(obj, part, None)
            if not _kernel_value(obj):
                raise _NotStatic(f"it reads {'.'.join(chain)}, which is no value of Triton's language a kernel may "
                                 "read")
    except _NotStatic as exc:
        return None, f"scan compiles a generated kernel from its text without running its module: {exc}"
    lines = text.splitlines(keepends=True)
    source = "".join(lines[fn.lineno - 1:fn.end_lineno])
    entry = {"module": module, "name": name, "source": source,
             "jit": {"do_not_specialize": [], "do_not_specialize_on_alignment": [], "noinline": None},
             "names": {}, "file": str(file.resolve()), "line": fn.lineno}
    snap = snapshot_of_source(entry, scope)
    if snap["problems"]:
        return None, f"its source does not load as a Triton kernel here: {'; '.join(snap['problems'][:2])}"
    return json.dumps(snap), None
