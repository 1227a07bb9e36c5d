"""A Triton cache directory as a source: the kernels a GPU run compiled.

Each complete entry (a directory with Triton's ``__grp__NAME.json`` beside ``NAME.json`` and the
artifacts) yields two kinds of spec: one that reads the stored artifacts for the arch it was built for
(AMDGCN text; NVIDIA: the cubin and a ``ptxas -v`` of the stored PTX for the spill figures), and, per
``--arch``, one that recompiles its TTIR there with its stored options. Reading the directory imports
nothing: only JSON files are opened; a partial or corrupt entry is a spec with its reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends import BACKENDS, backend_named, backend_of
from ..compile.task import RowInfo, Task, target_of
from ..core.archs import Arch
from ..core.job import CompileJob, IRSource, StoredOutputs
from ..core.records import KernelIdentity, LaunchConfig

# Options a TTIR keeps its meaning with on any target, and those only its own backend reads (each backend's
# ``cache_options``).
COMMON_OPTIONS = ("num_warps", "num_stages", "num_ctas", "enable_fp_fusion")
VENDOR_OPTIONS = {b.name: b.facts.cache_options for b in BACKENDS}
_LOC_RE = re.compile(r'^#loc\d* = loc\("([^"]+)":\d+:\d+\)', re.M)


def default_dir() -> Path:
    """Triton's cache directory as Triton resolves it: $TRITON_CACHE_DIR, else $TRITON_HOME (or ~)/.triton/cache."""
    env = os.environ.get("TRITON_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("TRITON_HOME") or Path.home()) / ".triton" / "cache"


@dataclass(frozen=True)
class CacheEntry:
    directory: Path
    name: str  # the kernel's name ("?" when the entry is too broken to tell)
    target: tuple[str, Any] | None = None  # ("hip", "gfx942") / ("cuda", 90)
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)
    files: tuple[str, ...] = ()
    reason: str | None = None
    # Triton's own compiled C module (its launcher, cuda_utils, hip_utils): no kernel, nothing to read
    helper: bool = False
    # the autotuner's saved timings (``NAME.autotune.json``, ``@triton.autotune(cache_results=True)``): no kernel
    autotune: bool = False

    @property
    def hash(self) -> str:
        return self.directory.name

    def arch(self) -> Arch | None:
        """The vgprscope arch it was built for (None: not in the table)."""
        if self.target is None:
            return None
        backend, arch = self.target
        if backend not in VENDOR_OPTIONS:  # a backend vgprscope does not know
            return None
        return backend_named(backend).arch_for_target(arch)

    @property
    def release(self) -> str | None:
        """The Triton release that wrote the entry, as its metadata says (``triton_version``; None: not said)."""
        v = self.metadata.get("triton_version")
        return v if isinstance(v, str) and v else None

    def file(self, suffix: str) -> Path | None:
        name = f"{self.name}.{suffix}"
        return self.directory / name if name in self.files else None

    def source_file(self) -> str:
        """The Python file the kernel came from, read from the TTIR's first location (or "")."""
        path = self.file("ttir") or self.file("source")
        if path is None:
            return ""
        try:
            with open(path) as f:
                head = f.read(4096)
        except OSError:
            return ""
        m = _LOC_RE.search(head)
        return m.group(1) if m else ""


# What Triton's runtime/build.py puts in the cache for a C module it compiles (the per-signature
# ``__triton_launcher`` of Triton <= 3.6, ``cuda_utils`` / ``hip_utils`` of the drivers): the shared object,
# named ``NAME`` + the interpreter's EXT_SUFFIX (``cuda_utils.cpython-312-x86_64-linux-gnu.so``), in an
# entry of its own keyed by the source's hash; other releases keep the C source beside it.
_MODULE_FILE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*\.(so|pyd|dylib|c|cc|cpp|h)$")
# FileCacheManager.put writes through a temporary directory inside the entry (removed once the file is in)
_TMP_PREFIX = "tmp.pid_"
_AUTOTUNE_SUFFIX = ".autotune.json"  # what the autotuner's cache_results writes: its timings per key


def _helper_module(files: tuple[str, ...]) -> str | None:
    """The module's name when an entry holds nothing but a compiled C module (and its source), else None."""
    names = [f for f in files if not f.startswith(_TMP_PREFIX)]
    if not names or not all(_MODULE_FILE_RE.match(f) for f in names):
        return None
    return names[0].split(".", 1)[0]


def read_entry(directory: Path) -> CacheEntry:
    """One cache entry; a partial or corrupt one carries its reason (never raises on bad content). An
    entry of Triton's own compiled modules (launcher, driver utilities) is marked ``helper``."""
    try:
        files = tuple(sorted(os.listdir(directory)))
    except OSError as exc:
        return CacheEntry(directory, "?", reason=f"cannot list the entry: {exc.strerror}")
    module = _helper_module(files)
    if module is not None:
        return CacheEntry(directory, module, files=files, helper=True)
    if files and all(f.endswith(_AUTOTUNE_SUFFIX) for f in files):
        return CacheEntry(directory, files[0][:-len(_AUTOTUNE_SUFFIX)], files=files, autotune=True)
    groups = [f for f in files if f.startswith("__grp__") and f.endswith(".json")]
    metas = [f for f in files if f.endswith(".json") and not f.startswith("__grp__")]
    name = groups[0][len("__grp__"):-len(".json")] if groups else (metas[0][:-len(".json")] if metas else "?")
    if not groups:
        return CacheEntry(directory, name, files=files,
                          reason="partial entry: no __grp__ file (the compile was interrupted, or it is not a "
                                 "kernel entry)")
    try:
        with open(directory / groups[0]) as f:
            children = json.load(f)["child_paths"]
        with open(directory / f"{name}.json") as f:
            meta = json.load(f)
        target = meta["target"]
        key = (target["backend"], target["arch"])
    except FileNotFoundError as exc:
        return CacheEntry(directory, name, files=files, reason=f"partial entry: {Path(exc.filename).name} is missing")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return CacheEntry(directory, name, files=files,
                          reason=f"corrupt entry: {type(exc).__name__}: {str(exc)[:120]}")
    missing = [Path(p).name for p in children.values() if Path(p).name not in files]
    entry = CacheEntry(directory, name, key, meta, files)
    # Triton writes the __grp__ file last: files missing beside it were removed later (a cache copied without
    # its intermediates, *.llir / *.ptx). Without the artifact the entry is partial; without an intermediate
    # it is read, and what needs that file says so (no .ptx: no ptxas figures; no .ttir: no retarget).
    known = key[0] in VENDOR_OPTIONS
    if missing and (not known or f"{name}.{backend_named(key[0]).facts.cache_artifact}" in missing):
        return CacheEntry(directory, name, key, meta, files, f"partial entry: {', '.join(missing)} missing")
    if entry.arch() is None:
        return CacheEntry(directory, name, key, meta, files,
                          f"built for {key[0]} {key[1]}, an arch vgprscope's table does not have")
    artifact = backend_named(key[0]).facts.cache_artifact
    if entry.file(artifact) is None:
        return CacheEntry(directory, name, key, meta, files, f"no .{artifact} in the entry to read resources from")
    return entry


def _options(entry: CacheEntry, vendor: str | None) -> dict[str, Any]:
    names = COMMON_OPTIONS + (VENDOR_OPTIONS.get(vendor, ()) if vendor else ())
    return {k: entry.metadata[k] for k in names if entry.metadata.get(k) is not None}


def _config(entry: CacheEntry, vendor: str | None) -> LaunchConfig:
    """The row's config: the common options and those of ``vendor`` (the backend the row is for)."""
    return LaunchConfig(args=(), constexprs=(), options=tuple(sorted(_options(entry, vendor).items())),
                        origin=entry.hash)


def _row(entry: CacheEntry, how: str, vendor: str | None) -> RowInfo:
    src = entry.source_file()
    label = Path(src).name if src else "(triton cache)"
    written = (("written_by", f"Triton {entry.release}"),) if entry.release else ()
    return RowInfo(label=label, kernel=entry.name, config=_config(entry, vendor),
                   identity=KernelIdentity("", entry.name, src, entry.hash[:16]), source="triton-cache",
                   source_hash=entry.hash[:16],
                   extras=(("cache", how), ("entry", entry.hash), ("entry_dir", str(entry.directory)), *written))


def stored_task(entry: CacheEntry) -> tuple[Task | None, RowInfo, Arch | None]:
    """The entry's resources as stored, read for the arch it was built for (None: no such arch here, or
    the entry is too broken to read; the row then says why)."""
    row = _row(entry, "stored", entry.target[0] if entry.target else None)
    built = entry.arch()
    if built is None or entry.reason:
        return None, row, built
    files = tuple((s, str(p)) for s in ("amdgcn", "cubin", "ptx") if (p := entry.file(s)) is not None)
    try:
        contents = tuple(hashlib.sha256(Path(p).read_bytes()).hexdigest() for _, p in files)
    except OSError as exc:
        return Task(None, built, row, f"cannot read the entry's files: {exc.strerror or exc}"), row, built
    source = StoredOutputs(files=files, name=entry.name, shared=int(entry.metadata.get("shared") or 0),
                           num_warps=entry.metadata.get("num_warps"),
                           enable_fp_fusion=bool(entry.metadata.get("enable_fp_fusion", True)),
                           ptx_options=entry.metadata.get("ptx_options"), written_by=entry.release,
                           contents=contents)
    return Task(CompileJob.of(source, target_of(built)), built, row), row, built


def vendor_library_reason(text: str, arch: Arch) -> str | None:
    """Why a TTIR cannot compile for ``arch``: it calls another backend's device library (its
    ``tt.extern_elementwise`` symbols; None: it does not)."""
    own = backend_of(arch).name
    for b in BACKENDS:
        library, symbol = b.facts.device_library
        found = list(dict.fromkeys(re.findall(symbol, text))) if b.name != own else []
        if found:
            more = f", +{len(found) - 3} more" if len(found) > 3 else ""
            return (f"calls {library} ({', '.join(found[:3])}{more}), which an {backend_of(arch).vendor.name} target "
                    f"cannot link: its TTIR does not cross vendors; compile the kernel's source for {arch.name} "
                    "instead")
    return None


def retarget_task(entry: CacheEntry, arch: Arch) -> Task:
    """The entry's TTIR compiled for ``arch`` with the options it was built with (another backend's options
    dropped, in the job and the row: they mean nothing there), by the installed Triton (``scan`` puts it under
    the release that wrote the entry); a TTIR calling another vendor's device library is a row saying so."""
    own = backend_of(arch).name
    built = entry.target[0] if entry.target else None
    vendor = own if own == built else None
    row = _row(entry, "recompiled", vendor)
    ttir = entry.file("ttir")
    if entry.reason or ttir is None:
        return Task(None, arch, row, entry.reason or "no .ttir in the entry to recompile")
    try:
        text = ttir.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return Task(None, arch, row, f"cannot read {ttir.name}: {exc}")
    job = CompileJob.of(IRSource(text=text, suffix="ttir", name=entry.name), target_of(arch),
                        options=_options(entry, vendor))
    # the job stays with a reason (which wins: nothing compiles) so that equal retargets are told apart by it
    return Task(job, arch, row, vendor_library_reason(text, arch))
