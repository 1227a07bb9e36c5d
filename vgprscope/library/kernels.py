"""A user's own kernel, analysed from a launch written as in their code: ``vgprscope.analyze(my_kernel, x, y,
n, BLOCK=128, num_warps=4, arch=[...])``.

The launch goes through the kernel's own entry point (``kernel[grid](*args, **kwargs)``: the autotuner, its
``prune_configs_by``, the heuristics, the JIT's binder) with the capture hook recording it and nothing
launched (``runtime.hook.dry_launch``): the same facts and the same autotune configs the CLI's capture
records from a real launch, so each becomes the same compile job. No GPU is needed; tensors may live on any
device, and ``pointer("fp16")`` stands for one where torch is not installed.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import UnknownNameError, UsageError
from ..core.options import launch_option_names

# Triton's names of the element types a pointer may point to, and torch's (what a tensor's dtype says)
_TRITON_NAMES = ("fp16", "bf16", "fp32", "fp64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "i1",
                 "fp8e5", "fp8e4nv", "fp8e4b8", "fp8e5b16")


def _torch_names() -> dict[str, str]:
    from ..runtime import facts

    return dict(facts.TORCH_NAMES)


def _dtype_name(dtype: Any) -> str:
    """A Triton or torch dtype (or its name: ``fp16``, ``float16``, ``torch.float16``, ``tl.float16``) ->
    Triton's name of it."""
    text = str(dtype).removeprefix("torch.").removeprefix("triton.language.")
    torch_names = _torch_names()
    if text in torch_names and text in _TRITON_NAMES:
        return text
    by_torch = {v: k for k, v in torch_names.items() if k in _TRITON_NAMES}
    if text in by_torch:
        return by_torch[text]
    if text in _TRITON_NAMES:
        return text
    raise UnknownNameError("pointer dtype", str(dtype), [*_TRITON_NAMES, *by_torch])


class Pointer:
    """A tensor argument without a tensor: its element type, whether its address is 16-byte aligned and
    whether it addresses at most 2 GiB (AMD buffer operations), which is all a compile specialises on.
    Triton's binder and the capture read it as they read a tensor."""

    __slots__ = ("dtype", "aligned", "within_2gb", "_name")

    def __init__(self, dtype: Any, aligned: bool = True, within_2gb: bool = True) -> None:
        from ..runtime import facts

        self._name = _dtype_name(dtype)
        # one dtype object per name for the life of the process: Triton's binder caches by the object
        self.dtype = facts.dtype(self._name)
        self.aligned, self.within_2gb = bool(aligned), bool(within_2gb)

    def data_ptr(self) -> int:
        return 1 << 20 if self.aligned else (1 << 20) + 2

    def ptr_range(self) -> int:
        return 1 << 20 if self.within_2gb else 1 << 33

    def __repr__(self) -> str:
        flags = "".join(f", {k}=False" for k in ("aligned", "within_2gb") if not getattr(self, k))
        return f"vgprscope.pointer({self._name!r}{flags})"


def pointer(dtype: Any, *, aligned: bool = True, within_2gb: bool = True) -> Pointer:
    """A placeholder for a tensor argument: ``pointer("fp16")`` is a 16-byte aligned fp16 tensor of at most
    2 GiB, as a freshly allocated one is. ``dtype``: Triton's name (fp16, bf16, fp32, i32, ...), torch's
    (float16, torch.bfloat16) or either library's dtype object."""
    return Pointer(dtype, aligned, within_2gb)


def is_kernel(obj: Any) -> bool:
    """A Triton kernel a launch can go through: a JIT function, or an autotuner / heuristics over one."""
    from ..runtime import loader

    return callable(getattr(obj, "__getitem__", None)) and loader.is_jit(loader.unwrap(obj))


def kernel_name(kernel: Any) -> str:
    from ..runtime import loader

    fn = getattr(loader.unwrap(kernel), "fn", None)
    return getattr(fn, "__qualname__", None) or type(kernel).__name__


def launch_points(kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The launches of keyword arguments where a list gives several values (a grid, as a comma list is on
    the command line): their cartesian product, in the order given."""
    names = [k for k, v in kwargs.items() if isinstance(v, list)]
    for k in names:
        if not kwargs[k]:
            raise UsageError(f"{k}=[] gives no value; give one or more, or leave it out")
    fixed = {k: v for k, v in kwargs.items() if k not in names}
    return [fixed | dict(zip(names, combo)) for combo in itertools.product(*(kwargs[k] for k in names))]


def launch_capture(kernel: Any, args: Sequence[Any], kwargs: Mapping[str, Any]):
    """The launches ``kernel[grid](*args, **kwargs)`` makes (each config of an autotuned kernel, at each grid
    point of list-valued keywords), recorded as the CLI's capture records them, nothing launched."""
    import importlib.metadata

    from ..captures.model import Capture
    from ..captures.run import gather_items
    from ..runtime import hook

    if not is_kernel(kernel):
        raise UsageError(f"{kernel!r} is not a Triton kernel; allowed: a @triton.jit function, or one under "
                         "@triton.autotune / @triton.heuristics (for a function that launches kernels, record it: "
                         "with vgprscope.capture() as cap: fn(...))")
    name = kernel_name(kernel)
    if "grid" in kwargs or "warmup" in kwargs:
        raise UsageError(f"{name}: grid= and warmup= are not launch arguments here: the grid does not change the "
                         "compile; pass the kernel's arguments only")
    check_launch_keywords(kernel, name, kwargs)
    items: list[dict] = []
    for point in launch_points(kwargs):
        try:
            items += hook.dry_launch(kernel, tuple(args), point).items
        except hook.RecordError as exc:
            raise UsageError(f"{_cause(exc)}") from None
        except Exception as exc:  # the launch itself fails: Triton's binder, a heuristic, prune_configs_by
            raise UsageError(f"{name}: the launch fails before compiling: {type(exc).__name__}: "
                             f"{' '.join(str(exc).split())[:300]}") from None
    launches, errors, _ = gather_items(items)
    if errors:
        raise UsageError(errors[0])
    if not launches:
        raise UsageError(f"{name}: the launch reached no JIT function (an autotuner whose prune_configs_by "
                         "kept no config?)")
    try:
        version = importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    return Capture(tuple(launches), ("vgprscope.analyze", name), version)


# launch options that take a whole number: another value fails deep in Triton's pass manager
_INT_OPTIONS = (*launch_option_names(), "num_ctas")


def _launch_option_names() -> set[str]:
    """The launch options the installed Triton's backends take (HIP's and CUDA's option fields)."""
    import warnings

    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    from ..runtime.compile import option_names

    names: set[str] = set()
    for target in (GPUTarget("hip", "gfx942", 64), GPUTarget("cuda", 90, 32)):
        try:
            with warnings.catch_warnings():  # parsing the defaults warns of Triton's own default changes
                warnings.simplefilter("ignore")
                names |= set(option_names(make_backend(target)))
        except Exception:  # a Triton built without this backend
            continue
    return names


def check_launch_keywords(kernel: Any, name: str, kwargs: Mapping[str, Any]) -> None:
    """Each keyword is a parameter of the kernel or a launch option, and an integer option is given integers:
    a typo (``FOO=3``) or ``num_stages="x"`` is a UsageError naming it, before anything is recorded."""
    import difflib

    from ..runtime import loader

    params = list(getattr(loader.unwrap(kernel), "arg_names", None) or [])
    options = _launch_option_names()
    for key, value in kwargs.items():
        if key in params:
            continue
        if options and key not in options:
            near = difflib.get_close_matches(key, [*params, *options], n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise UsageError(f"{name}: {key}= is neither a parameter of {name} ({', '.join(params)}) nor a launch "
                             f"option (num_warps, num_stages, waves_per_eu, maxnreg, ...){hint}")
        if key in _INT_OPTIONS:
            bad = [v for v in (value if isinstance(value, list) else [value])
                   if v is not None and (isinstance(v, bool) or not isinstance(v, int))]
            if bad:
                raise UsageError(f"{name}: {key}={bad[0]!r} is not a whole number; {key} takes one (or a list of "
                                 "them for a grid)")


def _cause(exc: BaseException) -> str:
    """A RecordError's message, the binder's own reason in one line."""
    return " ".join(str(exc).split())[:400]
