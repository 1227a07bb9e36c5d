"""The one description of a launch as facts, and back to values a release's binder specialises.

A fact is what Triton's JIT specialises an argument on, not one release's encoding of it: a pointer's element
type, whether its address is a multiple of 16 (``aligned``) and whether it addresses at most 2 GiB
(``small``, AMD's buffer operations); an integer's type by its range, whether it is divisible by 16
(``aligned``) or equal to 1 (``one``); a float is fp32, a bool u1; None and constexprs are ``constexpr``
with their value (``constexpr.encode``); a tensor descriptor (Triton's or Gluon's TMA ``TensorDescriptor``) is the type
the binder gives it (``tensordesc<fp16[64,64],NVMMASharedLayout(...)>``) with its class and fields, its base
tensor as a pointer's facts. The capture hook (a real launch), planning (a variant's example
values) and derivation (a default or a heuristic's value) all write facts here; the compile worker turns
them back into stand-in values (``stand_in``) for the installed release's own binder.
"""

from __future__ import annotations

import re
from typing import Any

from . import constexpr

# Integer argument types by the value's range, as Triton's binder classifies them.
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1
# The largest byte range AMD's buffer operations address (Triton's HIP backend: ``is_within_2gb``).
MAX_INT32 = I32_MAX


def int_type(value: int) -> str:
    """``i32``, ``i64`` or ``u64``: the type Triton gives an integer argument of this value."""
    if I32_MIN <= value <= I32_MAX:
        return "i32"
    if I64_MIN <= value <= I64_MAX:
        return "i64"
    return "u64"


def scalar_fact(name: str, value: Any) -> dict[str, Any] | None:
    """A non-constexpr scalar value (None, bool, int, float) -> its facts; None for anything else."""
    if value is None:  # the JIT folds a None argument into a constexpr None
        return {"name": name, "type": "constexpr", "value": None}
    if isinstance(value, bool):
        return {"name": name, "type": "u1"}
    if isinstance(value, int):
        fact: dict[str, Any] = {"name": name, "type": int_type(value)}
        if value % 16 == 0:
            fact["aligned"] = True
        if value == 1:
            fact["one"] = True
        return fact
    if isinstance(value, float):
        return {"name": name, "type": "fp32"}
    return None


def pointer_fact(name: str, typ: str, aligned: bool, small: bool) -> dict[str, Any]:
    """A tensor argument: its Triton type (``*fp16``) and what the JIT specialises on of its address."""
    fact: dict[str, Any] = {"name": name, "type": typ if typ.startswith("*") else f"*{typ}"}
    if aligned:
        fact["aligned"] = True
    if small:
        fact["small"] = True
    return fact


def constexpr_fact(name: str, value: Any) -> dict[str, Any]:
    return {"name": name, "type": "constexpr", "value": constexpr.encode(value)}


def within_2gb(value: Any) -> bool:
    """Whether a pointer argument addresses at most 2 GiB (what AMD's buffer operations need), as Triton's
    HIP backend decides it: the object's ``ptr_range()``, or a torch tensor's storage size."""
    try:
        if hasattr(value, "ptr_range"):
            return bool(value.ptr_range() <= MAX_INT32)
        storage = getattr(value, "untyped_storage", None)
        if storage is not None:
            return bool(storage().size() <= MAX_INT32)
    except Exception:
        pass
    return False


def launch_fact(name: str, is_constexpr: bool, value: Any, typ: Any) -> tuple[dict[str, Any], str | None]:
    """One argument of a real launch as facts (``typ``: the binder's type for it), and why a capture cannot
    record it, if it cannot."""
    if is_constexpr:
        fact = constexpr_fact(name, value)
        what = constexpr.unsupported(fact["value"])
        return fact, (f"constexpr {name} is a {what}, which a capture cannot name" if what else None)
    if hasattr(value, "data_ptr"):
        return pointer_fact(name, str(typ), value.data_ptr() % 16 == 0, within_2gb(value)), None
    if is_descriptor(value):
        fact = descriptor_fact(name, str(typ), value)
        what = constexpr.unsupported(fact["descriptor"])
        return fact, (f"argument {name}: a tensor descriptor with a {what}, which a capture cannot name" if what
                      else None)
    scalar = scalar_fact(name, value)
    if scalar is not None:
        return scalar, None
    return {"name": name, "type": str(typ)}, \
        f"argument {name} is a {type(value).__name__}, which a capture cannot record yet"


def as_specialised(fact: dict[str, Any], param: Any) -> dict[str, Any]:
    """An argument's facts less what the JIT does not specialise its parameter on (``param``: Triton's
    ``KernelParam``): a ``do_not_specialize`` one on nothing (its divisibility by 16, its value 1, its pointer's
    alignment and range), a ``do_not_specialize_on_alignment`` one not on its divisibility or alignment. Two
    launches that differ only there are one compile, so they are one job and one cache entry."""
    if getattr(param, "do_not_specialize", False):
        drop = {"aligned", "one", "small"}
    elif getattr(param, "do_not_specialize_on_alignment", False):
        drop = {"aligned"}
    else:
        return fact
    return {k: v for k, v in fact.items() if k not in drop}


def is_descriptor(value: Any) -> bool:
    """A tensor descriptor of Triton's (``triton.tools.tensor_descriptor``) or Gluon's (a vendor's TMA
    descriptor): a Triton dataclass over a base tensor with a block shape."""
    return constexpr.is_triton_object(value) and hasattr(value, "base") and hasattr(value, "block_shape")


# The element type in the binder's type of a descriptor (``tensordesc<fp16[64,64]...>``, ``tensordesc_im2col<``).
_DESC_DTYPE = re.compile(r"tensordesc(?:_im2col)?<([^\[>]*)\[")


def descriptor_fact(name: str, typ: str, value: Any) -> dict[str, Any]:
    """A tensor descriptor argument: the binder's type for it, and its class and fields to build one like it
    (its base tensor as a pointer: element type, alignment, range)."""
    m = _DESC_DTYPE.match(typ)
    base = value.base
    pointer = pointer_fact("base", f"*{m.group(1) if m else '?'}", base.data_ptr() % 16 == 0, within_2gb(base))

    def field(v: Any) -> Any:
        return {"pointer": pointer} if v is base else constexpr.encode_field(v)

    return {"name": name, "type": typ, "descriptor": constexpr.object_ref(value, field)}


def example_fact(name: str, value: Any) -> dict[str, Any]:
    """A variant's example launch value -> the argument's facts: a pointer is given as its Triton type and
    stands for a 16-byte aligned tensor within 2 GiB, as a freshly allocated one is."""
    if isinstance(value, str) and value.startswith("*"):
        return pointer_fact(name, value, True, True)
    fact = scalar_fact(name, value)
    if fact is None:
        raise TypeError(f"kernel argument {name!r}: unsupported example value {value!r}")
    return fact


# ------------------------------------------------------------------------------------------ stand-ins

TORCH_NAMES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i8": "int8",
               "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
               "u64": "uint64", "i1": "bool", "u1": "bool", "fp8e5": "float8_e5m2", "fp8e4nv": "float8_e4m3fn",
               "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz"}


# Bytes per element and whether the type is a floating-point one, by torch's name of the dtype: what a host-side
# tensor descriptor (``triton.tools.tensor_descriptor.TensorDescriptor``) checks of its base tensor's dtype.
_ELEMENT = {"float16": (2, True), "bfloat16": (2, True), "float32": (4, True), "float64": (8, True),
            "int8": (1, False), "int16": (2, False), "int32": (4, False), "int64": (8, False), "uint8": (1, False),
            "uint16": (2, False), "uint32": (4, False), "uint64": (8, False), "bool": (1, False),
            "float8_e5m2": (1, True), "float8_e4m3fn": (1, True), "float8_e4m3fnuz": (1, True),
            "float8_e5m2fnuz": (1, True)}


class _Dtype:
    """Reads as a torch dtype to Triton's binder (it maps the name) and to a host-side tensor descriptor (its
    element size and kind), without torch."""

    def __init__(self, name: str):
        self.name = name

    @property
    def itemsize(self) -> int:
        return self._element()[0]

    @property
    def is_floating_point(self) -> bool:
        return self._element()[1]

    def _element(self) -> tuple[int, bool]:
        if self.name not in _ELEMENT:
            raise ValueError(f"a tensor of {self.name}: its element size is not known here")
        return _ELEMENT[self.name]

    def __str__(self) -> str:
        return f"torch.{self.name}"

    __repr__ = __str__


# One object per dtype for the life of the process: Triton's native binder caches what a dtype object maps
# to by the object's identity, so a dtype stand-in that is freed and another allocated at its address would
# be read as the first one (a pointer to fp16 specialised as fp32).
_DTYPES: dict[str, _Dtype] = {}


def dtype(name: str) -> _Dtype:
    if name not in _DTYPES:
        _DTYPES[name] = _Dtype(TORCH_NAMES.get(name, name))
    return _DTYPES[name]


class _Pointer:
    """Stands in for a tensor argument with the launch's facts: what the binder reads of one."""

    def __init__(self, dtype_name: str, aligned: bool, small: bool):
        self.dtype = dtype(dtype_name)
        self._aligned, self._small = aligned, small

    def data_ptr(self) -> int:
        return 1 << 20 if self._aligned else (1 << 20) + 2

    def ptr_range(self) -> int:
        return 1 << 20 if self._small else 1 << 33


def _descriptor_field(value: Any) -> Any:
    if isinstance(value, dict) and "pointer" in value:
        return stand_in(value["pointer"])
    return constexpr.decode(value)


# The smallest value of each integer type, so that the binder classifies a stand-in as the fact says.
_INT_BASE = {"i32": 0, "i64": 1 << 32, "u64": 1 << 63}


def stand_in(arg: dict[str, Any]) -> Any:
    """A value with exactly the argument's facts, for the installed release's binder to specialise."""
    typ = arg["type"]
    if typ.startswith("*"):
        return _Pointer(typ[1:], bool(arg.get("aligned")), bool(arg.get("small")))
    if typ in _INT_BASE:
        if arg.get("one"):
            return 1
        return _INT_BASE[typ] + (16 if arg.get("aligned") else 17)
    if typ in ("fp32", "fp64", "fp16", "bf16"):
        return 1.5
    if typ in ("u1", "i1"):
        return True
    if typ == "constexpr":
        return constexpr.decode(arg.get("value"))
    if "descriptor" in arg:
        return constexpr.object_of(arg["descriptor"], _descriptor_field)
    raise ValueError(f"argument {arg['name']}: type {typ!r} has no stand-in (tuples are not supported yet)")
