"""The options of a compile a user sets, each declared once, as Triton declares its backends' options
(``HIPOptions``, ``CUDAOptions``): a row names the option, its type and range, the vendor whose backend alone
reads it (None: every backend's) and its help. ``LAUNCH_OPTIONS`` holds Triton's launch options; the bundled
variants add their tile fields (``vgprscope.flashattn.tiles``). Derived from the rows, never written again:
each backend's options (``Facts.options``), the config request's and the attention config's fields, the
grid's parser and its messages, the CLI's options and the library's keywords (docs/architecture.md, "Adding a
launch option": one row here). ``COMPILER_WARNINGS`` holds the compilers' own warnings a run may ask for
beyond their defaults (ptxas's ``--warn-on-spills``, LLVM's ``warn-stack-size``), each a row as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .archs import Vendor
from .limits import COUNT_LIMIT

# No tile or warp count is anywhere near this: a suggestion above it would be a number nobody means.
_LARGEST_SUGGESTION = 1 << 16


@dataclass(frozen=True)
class Option:
    """One option: its keyword (the library's, a config's field, Triton's option name), type and range."""

    name: str
    help: str  # what it is, for --help (the vendor's name goes before it)
    vendor: Vendor | None = None  # the vendor whose backend alone reads it; None: every backend's
    type: type = int
    minimum: int = 1
    choices: tuple[Any, ...] = ()  # the only values taken (Triton takes no other); (): any from ``minimum``
    choices_words: str = ""  # how a message names the choices
    power_of_two: str = ""  # why only powers of two are taken ("": any value)
    arch_max: str = ""  # the arch's attribute bounding it (the largest value LLVM takes there)
    arch_max_unit: str = ""  # what that maximum counts, for the message
    minimum_words: str = ""  # how a message names the smallest value
    default_help: str = ""  # what leaving it out means, for --help
    short: str = ""  # the CLI's one-letter flag
    label: str = ""  # its mark in a config's short label (``wpe2``); "": not shown there
    label_hides: Any = None  # a value the short label leaves out (Triton's default)
    occupancy_knob: bool = False  # the knob the frontier turns for its vendor (the frontier sets it itself)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def cli_help(self) -> str:
        vendor = f"{self.vendor.name}: " if self.vendor is not None else ""
        default = f" \\[default: {self.default_help}]" if self.default_help else ""
        return f"{vendor}{self.help}{default}"

    def value_error(self, value: Any, spelled: str) -> str | None:
        """Why ``value`` cannot be this option's, or None. ``spelled``: how the message names the value (the
        CLI's ``--block-m 100``, the library's ``block_m=100``)."""
        if self.type is not int:
            if self.choices and value not in self.choices:
                return f"{spelled} is not allowed; allowed: {self.choices_words or ', '.join(map(str, self.choices))}"
            return None
        if value < self.minimum:
            return f"{spelled} is below the smallest allowed value, {self.minimum}"
        if self.choices and value not in self.choices:
            return f"{spelled} is not allowed; allowed: {self.choices_words}"
        if self.power_of_two and value >= 1 and value & (value - 1):
            lower = 1 << (value.bit_length() - 1)
            if lower >= _LARGEST_SUGGESTION:
                return f"{spelled} is not allowed; allowed: powers of two ({self.power_of_two}), such as 64 or 128"
            return (f"{spelled} is not allowed; allowed: powers of two ({self.power_of_two}), such as {lower} or "
                    f"{lower * 2}")
        return None

    def arch_error(self, value: Any, arch: Any) -> str | None:
        """Why ``value`` is over what ``arch`` takes (``arch_max``), or None."""
        most = getattr(arch, self.arch_max, None) if self.arch_max else None
        if value is None or most is None or value <= most:
            return None
        unit = f" {self.arch_max_unit}" if self.arch_max_unit else ""
        return (f"{self.flag} {value} is over the maximum of {most}{unit} on {arch.name}; allowed: "
                f"{self.minimum_words or self.minimum} to {most}")


# Triton's launch options vgprscope sets, in the order configs, tables and help list them.
LAUNCH_OPTIONS: tuple[Option, ...] = (
    Option("num_warps", "num_warps, a power of two", power_of_two="Triton's rule for num_warps",
           default_help="the variant's"),
    Option("num_stages", "num_stages", default_help="the variant's"),
    # LLVM's amdgpu-waves-per-eu: a hint over the arch's wave slots is refused by LLVM
    Option("waves_per_eu", "waves_per_eu hint, 0 for none", Vendor.AMD, minimum=0, arch_max="max_waves_per_simd",
           arch_max_unit="waves per SIMD", minimum_words="0 (no hint)", label="wpe", occupancy_knob=True),
    # another size finds no MFMA instruction and compiles a plain FMA loop without a word
    Option("matrix_instr_nonkdim", "MFMA size (16 or 32; 0: Triton picks)", Vendor.AMD, minimum=0,
           choices=(0, 16, 32), choices_words="0 (Triton picks), 16 or 32 (the MFMA size)", label="nonk"),
    # another value fails the matmul pass
    Option("kpack", "kpack (1 or 2)", Vendor.AMD, choices=(1, 2), choices_words="1 or 2", label="kpack",
           label_hides=1),
    Option("maxnreg", "maxnreg register cap", Vendor.NVIDIA, label="maxnreg", occupancy_knob=True),
)


@dataclass(frozen=True)
class CompilerWarning(Option):
    """A compiler's warning a run may ask for beyond its defaults, on every compile of its vendor: the launch
    option of Triton's that asks for it (``joins``), where its text (``{}``: the value) is joined to the job's
    own value by ``separator``. It adds diagnostics; the code the compiler writes is the same."""

    joins: str = ""
    text: str = ""
    separator: str = " "
    maximum: int = COUNT_LIMIT
    metavar: str = ""
    value_words: str = ""  # what a value is, for a message ("a number of bytes")

    @property
    def default(self) -> Any:
        """Not asked for: False for a switch, None for a value."""
        return False if self.type is bool else None

    def library_error(self, value: Any) -> str | None:
        """Why ``value`` (a library caller's; the CLI's are typed) cannot be this warning's, or None."""
        if self.type is bool:
            return None if isinstance(value, bool) else f"{self.name}={value!r} is not allowed; allowed: True or False"
        if value is None or (not isinstance(value, bool) and isinstance(value, int)
                             and self.minimum <= value <= self.maximum):
            return None
        return (f"{self.name}={value!r} is not allowed; allowed: {self.value_words}, {self.minimum} to "
                f"{self.maximum}")

    def ask(self, value: Any, own: str) -> str | None:
        """The value of ``joins`` that asks for this warning at ``value``, the job's own ``own`` kept (an earlier
        value of this warning replaced); None where ``value`` asks for nothing."""
        if value is None or value is False:
            return None
        ask = self.text.format(value)
        key = ask.split("=")[0]
        kept = [part for part in own.split(self.separator) if part.strip() and part.strip().split("=")[0] != key]
        return self.separator.join([*kept, ask])


# The compilers' warnings a run may ask for (``vgprscope analyze --warn-on-spills``, the library's
# ``warn_on_spills=True``): derived from the rows, the CLI's options, the library's keywords and their messages,
# and the launch options each vendor's compiles get (``backends.base.warning_options``).
COMPILER_WARNINGS: tuple[CompilerWarning, ...] = (
    CompilerWarning("warn_on_spills", "ptxas's --warn-on-spills on every compile (its warnings are each row's "
                    "diagnostics)", Vendor.NVIDIA, type=bool, joins="ptx_options", text="--warn-on-spills"),
    CompilerWarning("warn_stack_size", "LLVM's warn-stack-size on every compile: a warning where a kernel's stack "
                    "frame is over BYTES", Vendor.AMD, minimum=0, joins="llvm_fn_attrs", text="warn-stack-size={}",
                    separator=",", metavar="BYTES", value_words="a number of bytes"),
)


def compiler_warnings(vendor: Vendor | None = None) -> tuple[CompilerWarning, ...]:
    """Every compiler warning; with ``vendor``, those of that vendor's compiler."""
    return tuple(w for w in COMPILER_WARNINGS if vendor is None or w.vendor is vendor)


def launch_options(vendor: Vendor | None = None) -> tuple[Option, ...]:
    """Every launch option; with ``vendor``, the options only that vendor's backend reads."""
    if vendor is None:
        return LAUNCH_OPTIONS
    return tuple(o for o in LAUNCH_OPTIONS if o.vendor is vendor)


def launch_option_names(vendor: Vendor | None = None) -> tuple[str, ...]:
    return tuple(o.name for o in launch_options(vendor))


def occupancy_knob(vendor: Vendor) -> str:
    """The option the frontier turns on ``vendor``'s archs."""
    return next(o.name for o in launch_options(vendor) if o.occupancy_knob)


C = TypeVar("C", bound=type)


def with_launch_fields(after: str, defaults: Mapping[str, Any] | None = None) -> Callable[[C], C]:
    """A class decorator, under ``@dataclass``: a field per launch option (``int | None``, default None or
    ``defaults``'), placed after the field ``after`` (the rows' order)."""

    def add(cls: C) -> C:
        own = dict(cls.__dict__.get("__annotations__", {}))
        annotations: dict[str, Any] = {}
        for name, annotation in own.items():
            annotations[name] = annotation
            if name == after:
                for option in LAUNCH_OPTIONS:
                    annotations[option.name] = "int | None"
                    setattr(cls, option.name, (defaults or {}).get(option.name))
        cls.__annotations__ = annotations
        return cls

    return add
