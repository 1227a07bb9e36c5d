"""An autotuned kernel's launch: every config of its list after ``prune_configs_by`` recorded (each passed
through the wrapped kernel's ``run`` without launching, so ``@heuristics`` below it see each config), as the
autotuner would benchmark them; under the interpreter, which cannot benchmark, the first config is then run,
so the user's command completes. ``@triton.heuristics`` wrappers remember the user's own call."""

from __future__ import annotations

from .facts import int_type
from .interp import interpreting
from .record import call_of
from .session import MARK, RecordError, Session, current, failed, install_run, local, run_counted, set_attr


def _autotune_key(tuner, args, kwargs) -> tuple:
    """The key Autotuner.run caches its choice under (the same expression as Triton's)."""
    all_args = {**dict(zip(tuner.arg_names, args)), **kwargs}
    _args = {k: v for (k, v) in all_args.items() if k in tuner.arg_names}
    key = [_args[k] for k in tuner.keys if k in _args]
    for _, arg in _args.items():
        if hasattr(arg, "dtype"):
            key.append(str(arg.dtype))
    return tuple(key)


def autotune_configs(tuner, args, kwargs) -> tuple[tuple, list, int]:
    """(the autotuner's cache key for this launch, its configs after ``prune_configs_by``, how many it
    declares): the configs Triton would benchmark for this launch."""
    key = _autotune_key(tuner, args, kwargs)
    meta = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    try:
        pruned = list(tuner.prune_configs(meta)) if len(tuner.configs) > 1 else list(tuner.configs)
    finally:
        tuner.nargs = saved
    return key, pruned, len(tuner.configs)


def _specialisation_mark(args, kwargs) -> tuple:
    """What of a launch's arguments the JIT specialises on beyond the autotuner's key: which arguments are
    None, tensors' dtype and 16-byte alignment, integers' divisibility by 16 and equality to 1. The key
    Triton's autotuner caches under lists tensor dtypes without their names, so two launches with ``g`` and
    ``g_gamma`` swapping None and a tensor share one key, one tuned config and two JIT compiles."""
    def one(v):
        if v is None or isinstance(v, (bool, float, str)):
            return type(v).__name__
        if isinstance(v, int):
            return ("int", v % 16 == 0, v == 1, int_type(v))
        if hasattr(v, "data_ptr"):
            try:
                return ("ptr", str(getattr(v, "dtype", "")), v.data_ptr() % 16 == 0)
            except Exception:
                return ("ptr", str(getattr(v, "dtype", "")))
        return type(v).__name__
    return tuple(one(v) for v in args) + tuple((k, one(v)) for k, v in sorted(kwargs.items()))


def _record_autotune(s: Session, tuner, args, kwargs) -> None:
    """Each config of the launch's pruned list passed through the wrapped kernel's ``run`` without launching,
    so that the ``@heuristics`` (and anything else) between the autotuner and the JIT function see it.

    As the autotuner does: a key it has not tuned yet benchmarks (so compiles) every config; a key it has
    tuned launches its chosen config alone, so a launch specialised differently under a tuned key (another
    argument None, another alignment) adds that one config, as the JIT compiles that one kernel."""
    key, pruned, declared = autotune_configs(tuner, args, kwargs)
    mark = (id(tuner), repr(key), _specialisation_mark(args, kwargs))
    if mark in s.autotune_seen:
        return
    s.autotune_seen.add(mark)
    chosen = tuner.cache.get(key) if isinstance(getattr(tuner, "cache", None), dict) else None
    picks = [(i, c) for i, c in enumerate(pruned) if chosen is None or c is chosen or c == chosen]
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = dict(zip(tuner.arg_names, args))
    prunes = bool(getattr(tuner, "early_config_prune", None) or getattr(tuner, "perf_model", None))
    local.reads = getattr(local, "reads", 0) + prunes
    try:
        for i, config in picks or list(enumerate(pruned)):
            local.dry, local.pick = True, {"index": i, "count": len(pruned), "declared": declared,
                                             "key": [str(k) for k in key]}
            try:
                if config.pre_hook is not None:
                    config.pre_hook({**tuner.nargs, **kwargs, **config.all_kwargs()})
                tuner.fn.run(*args, **kwargs, **config.all_kwargs())
            finally:
                local.dry, local.pick = False, None
    finally:
        tuner.nargs = saved
        local.reads -= prunes
    if s.launch and interpreting() and len(pruned) > 1 and key not in tuner.cache:
        tuner.cache[key] = pruned[0]  # the interpreter cannot benchmark: run the first config


def _wrap_tuner_run(cls) -> None:
    """Record every config of an autotuner's list when its ``run`` is called (the Autotuner's own, or an
    overriding ``run`` of a subclass: FlagGems' LibTuner, for one, never calls Autotuner.run)."""
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_vgprscope", None) is MARK:
        return

    def run(self, *args, **kwargs):
        s = current()
        if s is None or getattr(local, "dry", False):
            return original(self, *args, **kwargs)
        outer = getattr(local, "call", None) is None
        if outer:
            local.call = call_of(args, kwargs)
        try:
            _record_autotune(s, self, args, kwargs)
        except RecordError:
            raise
        except Exception as exc:
            failed(s, self, exc)
        finally:
            if outer:
                local.call = None
        if not s.launch:
            return None
        return run_counted("in_autotune", original, self, args, kwargs)

    install_run(cls, run)


def wrap_heuristics_run(cls) -> None:
    """Remember the user's own call when it enters through ``@triton.heuristics`` (the JIT function below
    sees the heuristics' values as keyword arguments, as if the user had passed them)."""
    original = cls.__dict__.get("run")
    if original is None or getattr(original, "_vgprscope", None) is MARK:
        return

    def run(self, *args, **kwargs):
        outer = current() is not None and getattr(local, "call", None) is None
        if outer:
            local.call = call_of(args, kwargs)
        local.reads = getattr(local, "reads", 0) + 1
        try:
            return original(self, *args, **kwargs)
        finally:
            local.reads -= 1
            if outer:
                local.call = None

    run._vgprscope = MARK  # type: ignore[attr-defined]
    set_attr(cls, "run", run)


def _subclasses(cls) -> list:
    out, todo = [], list(cls.__subclasses__())
    while todo:
        sub = todo.pop()
        out.append(sub)
        todo += sub.__subclasses__()
    return out


def wrap_autotuner(cls) -> None:
    if cls.__dict__.get("_vgprscope_hooked") is MARK:
        return
    set_attr(cls, "_vgprscope_hooked", MARK)
    _wrap_tuner_run(cls)
    for sub in _subclasses(cls):  # defined before the hook was installed
        _wrap_tuner_run(sub)
    inherited = cls.__init_subclass__

    def __init_subclass__(sub, **kw):
        inherited.__func__(sub, **kw) if hasattr(inherited, "__func__") else inherited(**kw)
        _wrap_tuner_run(sub)

    set_attr(cls, "__init_subclass__", classmethod(__init_subclass__))


