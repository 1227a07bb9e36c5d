"""The launch a captured call makes with the *current* source: run in a compile worker.

Standard library and Triton only (it runs where the compile worker runs). A capture records the user's own
call (which arguments it passed, their facts, scalar values and tensor shapes); everything else of a launch
comes from the source and is derived here again, so an edit made after the capture is what the gate sees:

- the kernel, looked up by its name in its module as imported now (gone: ``missing``; the module fails to
  import: ``import_error``, and the caller decides between the capture's snapshot and an error);
- an autotuned kernel's config list as the decorator declares it now, after ``prune_configs_by`` run on the
  recorded call (a pruning that reads what was not recorded cannot be derived);
- each ``@triton.heuristics`` value evaluated on the recorded call and what the wrappers above set;
- the defaults of the current signature for what nobody passed.

What cannot be derived (a heuristic reading a value the capture lacks, a parameter added without a default)
is a ``stale`` line ending in "capture again": never the recorded launch in its place.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

from . import constexpr, current, hashing, loader, manifest
from .facts import TORCH_NAMES, as_specialised, constexpr_fact, scalar_fact
from .static import Underivable, missing_in, underivable

STALE = "capture again"


class Stale(Exception):
    """The current launch cannot be derived from what the capture recorded."""


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Dtype:
    """A tensor's dtype as torch names it (``torch.float32``), compared by that name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))


_SIZES = {"fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "i1": 1,
          "u1": 1}


class _Tensor:
    """A tensor argument as the capture recorded it: dtype, shape and strides; anything else it is asked for
    was not recorded (and the derivation says so)."""

    def __init__(self, name: str, typ: str, reading: dict[str, Any] | None) -> None:
        self._name, self._typ = name, typ
        self.dtype = _Dtype(TORCH_NAMES.get(typ, typ))
        self._reading = reading

    def _need(self, what: str) -> Any:
        if not self._reading or what not in self._reading:
            raise Stale(f"tensor {self._name}'s {what} was not recorded")
        return self._reading[what]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._need("shape"))

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> Any:
        strides = tuple(self._need("stride"))
        return strides if dim is None else strides[dim]

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for x in self.shape:
            n *= x
        return n

    def element_size(self) -> int:
        if self._typ not in _SIZES:
            raise Stale(f"tensor {self._name}'s element size is unknown")
        return _SIZES[self._typ]

    def __getattr__(self, name: str) -> Any:
        raise Stale(f"tensor {self._name}.{name} was not recorded")


def _value_fact(name: str, value: Any) -> dict[str, Any]:
    """A non-constexpr parameter's value set by a wrapper or a default -> its facts (as the hook records)."""
    fact = scalar_fact(name, value)
    if fact is None:
        raise Stale(f"parameter {name} is given a {type(value).__name__}, which cannot be compiled from a "
                    "capture")
    return fact


def _classes() -> tuple[Any, Any]:
    from triton.runtime import autotuner

    return autotuner.Autotuner, getattr(autotuner, "Heuristics", None)


def _wrapped_elsewhere(module: Any, file: str, fn: Any) -> list[list[Any]]:
    """The wrapper chains the module builds around ``fn`` under other names than the kernel's own (a library's
    autotuner made by a call, ``tuned = LibTuner(kernel, ...)``, and what wraps that in turn): each top-level
    statement that reads the kernel's name, or a name already found wrapping it, the names it binds looked up
    in the module."""
    import ast

    try:
        with open(file, encoding="utf-8") as f:
            tree = ast.parse(f.read(), file)
    except (OSError, SyntaxError, ValueError):
        return []
    statements = [s for s in tree.body
                  if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))]
    wrapping, out = {fn.fn.__name__}, []
    for _ in range(8):  # a wrapper of a wrapper of ...
        found = False
        for stmt in statements:
            if not any(isinstance(n, ast.Name) and n.id in wrapping for n in ast.walk(stmt)):
                continue
            for target in (n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)):
                if target in wrapping:
                    continue
                chain, inner = _chain(getattr(module, target, None))
                if inner is fn and chain:
                    wrapping.add(target)
                    out.append(chain)
                    found = True
        if not found:
            break
    return out


def _unset(fn: Any, recorded: dict[str, Any]) -> set[str]:
    """The parameters a recorded call leaves without a value: not passed by the call, without a default (a
    wrapper set them: one the kernel's own name may not hold)."""
    call = recorded.get("call")
    if call is None:
        return set()
    names = [p.name for p in fn.params]
    passed = set(names[: call["positional"]]) | set(call.get("keywords", []))
    return {n for n in names if n not in passed and fn.signature.parameters[n].default is inspect.Parameter.empty}


def _chain_for(chain: list[Any], others: list[list[Any]], fn: Any, recorded: dict[str, Any],
               qualname: str) -> list[Any]:
    """The wrappers a recorded call went through: the kernel's own (its decorators); for a call through
    wrappers the kernel's name does not hold (a library's autotuner made by a call, ``tuned = LibTuner(kernel,
    ...)``), the module's wrappers around it that set what the call left unset: for an autotuned call one
    with an autotuner, of the recorded number of configs where there is one. What the current source
    declares is what is compared with the recording."""
    autotuner_cls, _ = _classes()
    pick = recorded.get("autotune")
    unset = _unset(fn, recorded)
    if pick and not any(isinstance(w, autotuner_cls) for w in chain):
        tuned = [c for c in others if any(isinstance(w, autotuner_cls) for w in c)]
        if not tuned:
            raise Stale(f"{qualname} was launched through an autotuner ({pick.get('declared')} configs) that its "
                        "module no longer holds")
        return max(tuned, key=lambda c: (unset <= _set_by_wrappers(c),
                                         any(len(getattr(w, "configs", ())) == pick.get("declared") for w in c)))
    if not pick and not chain and unset:
        setting = [c for c in others if unset <= _set_by_wrappers(c)]
        return setting[0] if setting else chain
    return chain


def _chain(obj: Any) -> tuple[list[Any], Any]:
    """The wrappers above the JIT function (outermost first) and the JIT function."""
    chain = []
    for _ in range(16):
        if loader.is_jit(obj) or not hasattr(obj, "fn"):
            break
        chain.append(obj)
        obj = obj.fn
    return chain, obj


class _Launch:
    """One launch being derived: the values the kernel's parameters have so far, their facts, the options."""

    def __init__(self, values: dict[str, Any], facts: dict[str, dict[str, Any]], options: dict[str, Any],
                 pick: dict[str, Any] | None = None) -> None:
        self.values, self.facts, self.options, self.pick = values, facts, options, pick

    def copy(self) -> _Launch:
        return _Launch(dict(self.values), dict(self.facts), dict(self.options), self.pick)


def _expand(chain: list[Any], launch: _Launch, recorded: dict[str, Any], keywords: list[str],
            qualname: str) -> list[_Launch]:
    """The launches the wrappers make of one call, outermost first (an autotuner makes one per config)."""
    if not chain:
        return [launch]
    autotuner_cls, heuristics_cls = _classes()
    top, rest = chain[0], chain[1:]
    if isinstance(top, autotuner_cls):
        configs = list(top.configs)
        if len(configs) > 1 and (getattr(top, "early_config_prune", None) or getattr(top, "perf_model", None)):
            saved = getattr(top, "nargs", None)
            arg_names = list(getattr(top, "arg_names", []))
            positional = [n for n in arg_names if n in launch.values and n not in keywords]
            top.nargs = {n: launch.values[n] for n in positional}
            try:
                configs = list(top.prune_configs({k: launch.values[k] for k in keywords if k in launch.values}))
            except Underivable:
                raise
            except Exception as exc:
                raise Stale(f"prune_configs_by of {qualname} reads what the capture did not record "
                            f"({_line(exc)})") from None
            finally:
                top.nargs = saved
        out = []
        key = (recorded.get("autotune") or {}).get("key", [])
        for i, config in enumerate(configs):
            each = launch.copy()
            every = config.all_kwargs()
            for name, value in every.items():
                if name in config.kwargs:
                    each.values[name] = value
                    each.facts.pop(name, None)
                else:
                    each.options[name] = value
            each.pick = {"index": i, "count": len(configs), "declared": len(top.configs), "key": key}
            out += _expand(rest, each, recorded, keywords, qualname)
        return out
    if heuristics_cls is not None and isinstance(top, heuristics_cls):
        for name, heur in top.values.items():
            try:
                launch.values[name] = heur({**launch.options, **launch.values})  # as Heuristics.run passes them
            except Underivable:
                raise
            except Exception as exc:
                why = str(exc) if isinstance(exc, Stale) else _line(exc)
                raise Stale(f"@triton.heuristics value {name} of {qualname} reads what the capture did not "
                            f"record ({why})") from None
            launch.facts.pop(name, None)
        return _expand(rest, launch, recorded, keywords, qualname)
    # a wrapper vgprscope does not know: what it set is taken from the recorded launch
    for a in recorded["args"]:
        launch.facts.setdefault(a["name"], a)
    for k, v in (recorded.get("options") or {}).items():
        launch.options.setdefault(k, v)
    return _expand(rest, launch, recorded, keywords, qualname)


def _set_by_wrappers(chain: list[Any]) -> set[str]:
    """The names the wrappers set: every config's keywords and options, every heuristic's value."""
    autotuner_cls, heuristics_cls = _classes()
    names: set[str] = set()
    for w in chain:
        if isinstance(w, autotuner_cls):
            for c in w.configs:
                names |= set(c.all_kwargs())
        elif heuristics_cls is not None and isinstance(w, heuristics_cls):
            names |= set(w.values)
    return names


def _changed(new: list[str], gone: list[str]) -> str:
    """The compile worker's line for parameters that no longer fit the recorded call."""
    return ("the kernel's parameters changed since the launch was recorded ("
            + "; ".join(x for x in (f"now also {', '.join(new)}" if new else "",
                                    f"no longer {', '.join(gone)}" if gone else "") if x) + ")")


def derive_launch(chain: list[Any], fn: Any, recorded: dict[str, Any], qualname: str) -> list[dict[str, Any]]:
    """The launches the current source makes of one recorded call (several for an autotuned kernel)."""
    params = list(fn.params)
    names = [p.name for p in params]
    by_name = {a["name"]: a for a in recorded["args"]}
    call = recorded.get("call")
    if call is not None:
        keywords = list(call.get("keywords", []))
        passed = set(names[: call["positional"]]) | set(keywords)
    else:  # a capture before calls were recorded: everything recorded that no wrapper sets was passed
        keywords = []
        derived = _set_by_wrappers(chain)
        passed = {a["name"] for a in recorded["args"] if a["type"] != "constexpr" or a["name"] not in derived}
        passed |= {k for k in (recorded.get("options") or {}) if k not in derived}
    gone = [a["name"] for a in recorded["args"] if a["name"] in passed and a["name"] not in names]
    if gone:
        raise Stale(_changed([n for n in names if n not in by_name], gone))
    values: dict[str, Any] = {}
    facts: dict[str, dict[str, Any]] = {}
    readings = recorded.get("values") or {}
    tensors = recorded.get("tensors") or {}
    for name in names:
        a = by_name.get(name)
        if a is None or name not in passed:
            continue
        facts[name] = a
        if a["type"] == "constexpr":
            values[name] = constexpr.decode(a.get("value"))
        elif a["type"].startswith("*"):
            values[name] = _Tensor(name, a["type"][1:], tensors.get(name))
        elif name in readings:
            values[name] = readings[name]
    options = {k: v for k, v in (recorded.get("options") or {}).items() if k in passed}
    out = []
    for launch in _expand(chain, _Launch(values, facts, options), recorded, keywords, qualname):
        args = []
        for p in params:
            if p.name in launch.facts:  # what the current source specialises of it, whatever the capture's did
                args.append(as_specialised(launch.facts[p.name], p))
                continue
            if p.name in launch.values:
                value = launch.values[p.name]
            else:
                default = fn.signature.parameters[p.name].default
                if default is inspect.Parameter.empty:
                    raise Stale(_changed([p.name], []))
                value = default
            if p.is_constexpr:
                args.append(constexpr_fact(p.name, value))
            else:
                args.append(as_specialised(_value_fact(p.name, value), p))
        gap = missing_in([launch.values, launch.options])
        if gap is not None:
            raise Underivable(f"{qualname}'s launch reads {gap.reason}")
        for a in args:
            what = constexpr.unsupported(a.get("value")) if a["type"] == "constexpr" else None
            if what:
                raise Stale(f"constexpr {a['name']} of {qualname} is a {what}")
        options = {k: constexpr.encode(v) for k, v in sorted(launch.options.items())}
        out.append({"args": args, "options": options, "autotune": launch.pick})
    return out


def _deps(fn: Any, chain: list[Any], root: str, read: tuple[str, ...]) -> dict[str, str]:
    """{file: hash} of what the derivation read: ``read`` (the kernel's file, the files read statically), every file
    of the user's project loaded with it (under ``root``, outside installed packages), the wrappers'
    functions and the files the kernel's compile reads."""
    files: set[str | None] = set(read)
    root = os.path.realpath(root) + os.sep if root else ""
    if root:
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if f and os.path.realpath(f).startswith(root) and "site-packages" not in f and "dist-packages" not in f:
                files.add(f)
    for w in chain:
        for f in [*(getattr(w, "values", None) or {}).values(), getattr(w, "early_config_prune", None),
                  getattr(w, "perf_model", None)]:
            code = getattr(f, "__code__", None)
            if code is not None:
                files.add(code.co_filename)
    out = _hashes(x for x in files if x)
    for f, h in manifest.dependencies(fn).items():
        out.setdefault(f, h)
    return out


def _hashes(files: Any) -> dict[str, str]:
    out = {}
    for f in sorted(set(files)):
        try:
            out[os.path.realpath(f)] = hashing.file_hash(f)
        except OSError:
            continue
    return out


def derive(request: dict[str, Any]) -> dict[str, Any]:
    """``{"kernel": {module, qualname, file, root}, "launches": [recorded launch, ...]}`` -> ``import_error``
    (one line: neither its import nor a static reading of its file works), ``missing`` (the file no longer
    defines the kernel), ``underivable`` (the kernel, read statically, reaches what does not import here), or
    ``launches`` (per recorded launch, ``derived``: the launches the current source makes, ``stale``: why not
    from what the capture recorded, or ``underivable``) with ``deps``, and ``static`` (why the module did not
    import here) where the file was read statically."""
    k = request["kernel"]
    source = {"file": k["file"], "module": k.get("module") or "", "root": k.get("root") or "",
              "qualname": k["qualname"]}
    qualname = k["qualname"]
    try:
        loaded = current.load(source)
    except current.Gone as exc:
        return {"missing": str(exc)}
    except Underivable as exc:  # kept with the files read: an edit of any derives again
        return {"underivable": str(exc), "deps": _hashes((source["file"], *exc.files))}
    except Exception as exc:
        return {"import_error": str(exc) if isinstance(exc, loader.LoadError) else _line(exc)}
    chain, fn = _chain(loaded.obj)
    if not loader.is_jit(fn):
        return {"missing": f"{qualname} is now a {type(fn).__name__}, not a Triton JIT function"}
    module = source["module"] or os.path.basename(source["file"])
    others: list[list[Any]] | None = None
    answers: list[dict[str, Any]] = []
    for recorded in request["launches"]:
        try:
            if others is None and (recorded.get("autotune") or (not chain and _unset(fn, recorded))):
                others = _wrapped_elsewhere(loaded.module, source["file"], fn)
            answers.append({"derived": derive_launch(_chain_for(chain, others or [], fn, recorded, qualname), fn,
                                                     recorded, qualname)})
        except Stale as exc:
            answers.append({"stale": f"{exc}: {STALE}"})
        except Underivable as exc:
            answers.append({"underivable": underivable(str(exc.args[0]), module)})
        except Exception as exc:  # a recorded value that does not load here (its row says why, if the hook did)
            answers.append({"stale": f"the launch of {qualname} cannot be derived ({_line(exc)}): {STALE}"})
    out: dict[str, Any] = {"launches": answers,
                           "deps": _deps(fn, chain, source["root"], (source["file"], *loaded.files))}
    if loaded.static:
        out["static"] = loaded.import_error
    return out
