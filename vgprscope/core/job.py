"""CompileJob: what one compile is, as pure data, whichever source yielded it (docs/design.md, "Layers").

A job names what to compile (a Python function by file and qualified name, Triton IR text, or a Triton cache
entry's stored outputs to read), the launch as facts (each argument's type and what the JIT specialises on:
16-byte alignment or divisibility by 16, an integer equal to 1, an AMD pointer within a 2 GiB buffer range,
constexpr values), the launch options, the target and the toolchain. Nothing here imports Triton: the
compile worker (``runtime.worker``, standard library and Triton only) turns the facts into the signature
and specialisation with the installed release's own binder, so one job compiles under any release.

A bundled variant and the same kernel captured from a launch with the same arguments are equal jobs, so
they share one cache entry: a function is identified by its file and qualified name; how to import it
(module, sys.path root, kernel-directory package) is loading information that does not enter equality.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

# An argument of a launch as facts (``Arg.type``): a pointer is ``*<dtype>``, a scalar its Triton type, or:
CONSTEXPR = "constexpr"  # a constexpr parameter, or a value the JIT always folds (None)


@dataclass(frozen=True)
class Arg:
    """One kernel argument as a fact of the launch, not as one release's encoding of it.

    ``aligned``: a pointer whose address is a multiple of 16, an integer divisible by 16. ``one``: an
    integer equal to 1 (Triton folds it into a constant unless the parameter is ``do_not_specialize``).
    ``small``: a pointer into at most 2 GiB (AMD buffer operations). ``value``: a constexpr's value as JSON
    (numbers, strings, None, ``{"dtype": "fp16"}``, ``{"jit": {...}}``, ``{"tuple": [...]}``), or a tensor
    descriptor's class and fields (``descriptor`` in the facts), kept as its canonical JSON text so that a job
    stays hashable.
    """

    name: str
    type: str
    aligned: bool = False
    one: bool = False
    small: bool = False
    value_json: str = "null"

    @property
    def value(self) -> Any:
        return json.loads(self.value_json)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.type}
        for k in ("aligned", "one", "small"):
            if getattr(self, k):
                d[k] = True
        if self.type == CONSTEXPR:
            d["value"] = self.value
        elif self.type.startswith("tensordesc") and self.value is not None:
            d["descriptor"] = self.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Arg:
        return cls(name=str(d["name"]), type=str(d["type"]), aligned=bool(d.get("aligned", False)),
                   one=bool(d.get("one", False)), small=bool(d.get("small", False)),
                   value_json=json.dumps(d.get("value", d.get("descriptor")), sort_keys=True, separators=(",", ":")))


@dataclass(frozen=True)
class Target:
    """What ``triton.compile`` targets: Triton's backend name, its arch (``gfx942`` / 90) and warp size."""

    backend: str  # "hip" or "cuda"
    arch: str | int
    warp_size: int


@dataclass(frozen=True)
class FunctionSource:
    """A ``@triton.jit`` function in a Python file, identified by the file and its qualified name.

    How to load it (not part of equality nor of the key): ``module`` (an importable name) with ``root`` (the
    sys.path entry it imports from), or ``package_dir`` loaded as the package ``package`` (a kernel
    directory); with neither, the file is loaded by its path without running the code of a script. Where the
    module does not import (torch or a GPU missing where it compiles), the file is read statically
    (``runtime.static``); ``load="static"`` reads it so from the start, and is part of the key: it is what the
    derivation of a captured call found in this environment. A capture's ``snapshot`` of the source is
    compiled only where the file is gone, and the row says so."""

    file: str
    qualname: str
    module: str = field(default="", compare=False)
    root: str = field(default="", compare=False)
    package_dir: str = field(default="", compare=False)
    package: str = field(default="", compare=False)
    snapshot: str = field(default="", compare=False, repr=False)  # a capture's snapshot (JSON), if the file is gone
    # compile the snapshot alone, never loading the file: a module read but never run (scan's generated modules)
    from_snapshot: bool = field(default=False, compare=False)
    # how it was found where it was derived: "" its module imported, "static" its file read statically (its
    # module does not import there), "snapshot" the capture's snapshot (its file is gone there), "generated"
    # imported else the snapshot (Inductor's generated module)
    load: str = ""
    # whether a compile's raw outputs are kept in vgprscope's cache (a Triton cache entry's stay in that cache)
    keeps_outputs: ClassVar[bool] = True

    def identity(self) -> dict[str, Any]:
        return {"function": [self.file, self.qualname]} | ({"load": self.load} if self.load else {})

    def as_dict(self) -> dict[str, Any]:
        return {"function": asdict(self)}


@dataclass(frozen=True)
class IRSource:
    """Triton IR text (a cache entry's TTIR) compiled for another target with its stored options."""

    text: str
    suffix: str  # "ttir" or "ttgir": what Triton's compile reads the file as
    name: str  # the kernel's name
    keeps_outputs: ClassVar[bool] = True

    def identity(self) -> dict[str, Any]:
        return {"ir": [self.suffix, hashlib.sha256(self.text.encode()).hexdigest()]}

    def as_dict(self) -> dict[str, Any]:
        return {"ir": asdict(self)}


@dataclass(frozen=True)
class StoredOutputs:
    """A Triton cache entry's compiled outputs, read for the arch they were built for (nothing compiles):
    AMDGCN text, or a cubin plus a ``ptxas -v`` of the stored PTX for the spill figures (taken only where that
    ptxas rebuilds the stored cubin)."""

    files: tuple[tuple[str, str], ...]  # (suffix, path): amdgcn / cubin / ptx
    name: str
    shared: int
    num_warps: int | None = None
    enable_fp_fusion: bool = True
    ptx_options: str | None = None
    written_by: str | None = None  # the Triton release that wrote the entry (its metadata), if it says
    # the files' contents (sha256 of each, in ``files``' order): a read is cached by what it reads, so the same
    # cubin in another entry or another copy of the cache is read once ("" for a source that did not hash them)
    contents: tuple[str, ...] = ()
    keeps_outputs: ClassVar[bool] = False  # they are the entry's files: only what was parsed from them is kept

    def identity(self) -> dict[str, Any]:
        if not self.contents:
            return {"stored": [list(f) for f in self.files]}
        facts = {k: v for k, v in asdict(self).items() if k not in ("files", "contents")}
        return {"stored": {"files": [[s, h] for (s, _), h in zip(self.files, self.contents)], **facts}}

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["files"] = [list(f) for f in self.files]
        return {"stored": d}


Source = FunctionSource | IRSource | StoredOutputs


def source_from_dict(d: dict[str, Any]) -> Source:
    (kind, body), = d.items()
    if kind == "function":
        return FunctionSource(**body)
    if kind == "ir":
        return IRSource(**body)
    if kind == "stored":
        return StoredOutputs(**{**body, "files": tuple(tuple(f) for f in body["files"]),
                                "contents": tuple(body.get("contents") or ())})
    raise ValueError(f"unknown compile source {kind!r}")


def _options(options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Launch options as given, unset ones (None) dropped, sorted: two spellings of one launch are equal
    (lists become tuples, so a job stays hashable)."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items() if v is not None))


@dataclass(frozen=True)
class CompileJob:
    """One compile (or read) for one target. ``toolchain``: which Triton compiles it ("" is the installed
    one); ``settings``: compiler settings of the side that compiles it (environment variables), part of
    the key like everything else."""

    source: Source
    target: Target
    args: tuple[Arg, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    toolchain: str = ""
    settings: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, source: Source, target: Target, args: tuple[Arg, ...] = (), options: dict[str, Any] | None = None,
           toolchain: str = "", settings: dict[str, str] | None = None) -> CompileJob:
        return cls(source, target, tuple(args), _options(options or {}), toolchain,
                   tuple(sorted((settings or {}).items())))

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)

    def with_options(self, **options: Any) -> CompileJob:
        """The same job with these launch options set (None unsets one): how grids and the frontier vary a
        job, whatever source it came from."""
        return replace(self, options=_options(dict(self.options) | options))

    def with_toolchain(self, toolchain: str, settings: dict[str, str] | None = None) -> CompileJob:
        return replace(self, toolchain=toolchain, settings=tuple(sorted((settings or {}).items())))

    def as_dict(self) -> dict[str, Any]:
        """JSON for the worker: every field, loading information included."""
        return {"source": self.source.as_dict(), "target": asdict(self.target),
                "args": [a.as_dict() for a in self.args], "options": dict(self.options),
                "toolchain": self.toolchain, "settings": dict(self.settings)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompileJob:
        return cls.of(source_from_dict(d["source"]), Target(**d["target"]),
                      tuple(Arg.from_dict(a) for a in d.get("args", ())), d.get("options") or {},
                      d.get("toolchain", ""), d.get("settings") or {})

    def key(self) -> str:
        """A stable hash of what decides the compile's output (loading information excluded). The source
        files' contents are not in it: each cache entry records the files the compile read, with their
        hashes, and is checked against them on every read (``compile.cache``)."""
        blob = json.dumps({"source": self.source.identity(), "target": asdict(self.target),
                           "args": [a.as_dict() for a in self.args], "options": dict(self.options),
                           "toolchain": self.toolchain, "settings": dict(self.settings)},
                          sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]
