"""The bundled variants' config: the attention problem (head dim, dtype, causal mask, shape), the tiles, the
variant's knobs and the launch options; and ``ConfigRequest``, what a user asks for before defaults.

``AttentionConfig`` is one of the core's config kinds (``records.Config``): its dicts carry no ``kind`` (they
predate kinds; adding one would change every cache and baseline key), and importing this module registers it
as the reader of such dicts. Without it, the core reads them as ``records.DataConfig``, which keys the same.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.options import LAUNCH_OPTIONS, launch_option_names, with_launch_fields
from ..core.records import LAUNCH_DEFAULTS, config_key, register_config_kind
from .tiles import DTYPES

__all__ = ["DTYPES", "DEFAULT_SHAPE", "LAUNCH_FIELDS", "AttentionConfig", "ConfigRequest", "request_label",
           "check_backend_options"]

# The reference problem shape (B, H, Nq, Nk) whose contiguous strides specialise a compile, and on which
# the traffic model is evaluated. Seqlens are never specialised by the kernels (do_not_specialize).
DEFAULT_SHAPE = (4, 32, 4096, 4096)

# The fields of the config that are launch options (the rest are constexprs and the shape): each of
# vgprscope.core.options' rows is a field, after ``causal``.
LAUNCH_FIELDS = launch_option_names()


@dataclass(frozen=True)
@with_launch_fields(after="causal", defaults={"num_warps": 4, "num_stages": 1})
class AttentionConfig:
    """The whole specialisation of one compile of a bundled variant: constexprs, launch knobs and backend
    options.

    Backend options that do not apply to an arch are None; two configs that compile differently never
    compare equal nor share a ``key()``.
    """

    block_m: int
    block_n: int
    head_dim: int
    dtype: str = "fp16"
    causal: bool = False
    # (the launch options' fields: num_warps 4, num_stages 1, a backend's own None where it does not apply)
    extra: tuple[tuple[str, Any], ...] = ()  # variant-specific knobs, sorted by name
    shape: tuple[int, ...] = DEFAULT_SHAPE  # (B, H, Nq, Nk) or (B, H, Nq, Nk, H_kv)

    kind = "attention"

    if TYPE_CHECKING:  # the launch options' fields, added from their rows
        def __getattr__(self, name: str) -> Any: ...

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["extra"] = dict(self.extra)
        d["shape"] = list(self.shape)
        return d

    def launch_dict(self) -> dict[str, Any]:
        """``as_dict()`` with the launch's keyword arguments (``launch_options``: each launch option set; a
        backend's own is None on another's archs): what a variant's ``launch`` passes to ``kernel[grid]``."""
        set_ = {name: getattr(self, name) for name in LAUNCH_FIELDS if getattr(self, name) is not None}
        return self.as_dict() | {"launch_options": set_}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AttentionConfig:
        d = dict(d)
        d["extra"] = tuple(sorted((d.get("extra") or {}).items()))
        d["shape"] = tuple(d.get("shape") or DEFAULT_SHAPE)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def key(self) -> str:
        """A stable hash of the full specialisation (part of every cache and baseline key)."""
        return config_key(self.as_dict())

    def get(self, name: str, default: Any = None) -> Any:
        """A variant knob's value (``extra``)."""
        return dict(self.extra).get(name, default)

    def option(self, name: str) -> Any:
        """A launch option's value (None where unset or not one of this config's)."""
        return getattr(self, name) if name in LAUNCH_FIELDS else LAUNCH_DEFAULTS.get(name)

    def with_options(self, **options: Any) -> AttentionConfig:
        """The config with these launch options set (a frontier level, a grid point)."""
        unknown = [k for k in options if k not in LAUNCH_FIELDS]
        if unknown:
            raise ValueError(f"{unknown[0]} is not a launch option of a bundled variant's config")
        return replace(self, **options)

    def flat(self) -> dict[str, Any]:
        """The config as flat columns (CSV, dataframes)."""
        d = {k: v for k, v in self.as_dict().items() if k not in ("extra", "shape")}
        d["extra"] = ";".join(f"{k}={v}" for k, v in self.extra)
        d["shape"] = "x".join(map(str, self.shape))
        return d

    def short(self) -> str:
        """A compact human label: 128x64 d128 fp16 w4 s1 [causal] [wpe2] [k=v ...]."""
        parts = [f"{self.block_m}x{self.block_n}", f"d{self.head_dim}", self.dtype, f"w{self.num_warps}",
                 f"s{self.num_stages}"]
        if self.causal:
            parts.append("causal")
        for option in LAUNCH_OPTIONS:
            value = getattr(self, option.name)
            if option.label and value and value != option.label_hides:
                parts.append(f"{option.label}{value}")
        parts += [f"{k}={v}" for k, v in self.extra]
        return " ".join(parts)


register_config_kind(None, AttentionConfig.from_dict)


@dataclass(frozen=True)
@with_launch_fields(after="causal")
class ConfigRequest:
    """What the user asked for; None means "the variant's default"."""

    block_m: int | None = None
    block_n: int | None = None
    head_dim: int = 128
    dtype: str = "fp16"
    causal: bool = False
    # (the launch options' fields, None each)
    extra: tuple[tuple[str, Any], ...] = ()
    shape: tuple[int, ...] = DEFAULT_SHAPE  # (B, H, Nq, Nk) or (B, H, Nq, Nk, H_kv)

    if TYPE_CHECKING:  # the launch options' fields, added from their rows
        def __getattr__(self, name: str) -> Any: ...


def request_label(req: ConfigRequest) -> str:
    """What a request asks for beyond the defaults, as a stable one-line label: ``defaults``,
    ``head_dim=64``, ``shape=1x32x1x8192x8``, ``block_m=64 num_splits=4`` (Record.slot of its rows)."""
    default = ConfigRequest()
    parts = []
    for f in fields(ConfigRequest):
        value = getattr(req, f.name)
        if f.name == "extra" or value == getattr(default, f.name):
            continue
        parts.append(f"{f.name}={'x'.join(map(str, value)) if f.name == 'shape' else value}")
    parts += [f"{k}={v}" for k, v in req.extra]
    return " ".join(parts) or "defaults"


def check_backend_options(req: ConfigRequest, archs: list[Any]) -> None:
    """A backend's own options when none of the selected archs compiles with that backend (AMD options for
    NVIDIA-only arch lists, and the reverse) are a usage error, not silently dropped."""
    from ..backends import BACKENDS, backend_of

    selected = [backend_of(a) for a in archs]
    for backend in BACKENDS:
        given = [n for n in backend.facts.options if getattr(req, n) is not None]
        if given and backend not in selected:
            opts = ", ".join("--" + n.replace("_", "-") for n in given)
            raise UsageError(f"{opts} applies to {backend.vendor.name} archs only, and none was selected")
    # a value over what an arch takes (LLVM refuses it) is refused here before anything compiles
    for arch in archs:
        for option in LAUNCH_OPTIONS:
            if (why := option.arch_error(getattr(req, option.name), arch)) is not None:
                raise UsageError(why)
