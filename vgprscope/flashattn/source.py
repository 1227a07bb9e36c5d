"""The bundled variants (or a user's kernel directory in the same protocol) as a source of compile tasks
(``VariantSource``, read from ``kernel_dir=``, or used by default: ``library/registry.py``).

A variant and an AttentionConfig become a plan request; the compile workers run the variant file's
``check_config`` and ``kernel_specs`` and answer with one CompileJob per kernel (the same jobs a captured
launch of those kernels with the same arguments gives), cached by the directory's content. Attention
knowledge stays in this package.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from ..backends import backend_of
from ..compile.engine import Engine
from ..compile.plan import Plan, PlanRequest
from ..compile.task import RowInfo, Task
from ..core.archs import Arch, get_arch
from ..core.errors import UsageError
from ..core.fsutil import resolve_input
from ..core.records import KernelIdentity
from ..sources.base import Reading, Want
from . import loader
from .config import AttentionConfig, ConfigRequest, check_backend_options, request_label
from .variants import Variant, check_knobs, resolve_config, select_variants


@cache
def _tree_hash_at(directory: Path, stamp: tuple) -> str:
    h = hashlib.sha256()
    for path in sorted(directory.rglob("*.py")):
        h.update(str(path.relative_to(directory)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:32]


def tree_hash(directory: Path) -> str:
    """Hash of every Python file under a kernel directory, subpackages included (memoised by mtimes)."""
    files = sorted(directory.rglob("*.py"))
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _tree_hash_at(directory, stamp)


def launch_options(config: AttentionConfig, arch: Arch) -> dict[str, object]:
    """The launch options of a config on an arch: warps, stages and the arch's backend's own options."""
    opts: dict[str, object] = {"num_warps": config.num_warps, "num_stages": config.num_stages}
    for name in backend_of(arch).facts.options:
        if getattr(config, name) is not None:
            opts[name] = getattr(config, name)
    return opts


def plan_request(variant: Variant, config: AttentionConfig, arch: Arch) -> PlanRequest:
    return PlanRequest(directory=variant.directory, package=loader._package_name(variant.directory),
                       file_name=variant.file.name, config=config.as_dict(), arch=arch,
                       options=launch_options(config, arch), tree_hash=tree_hash(variant.directory))


def _row(variant: Variant, config: AttentionConfig, kernel: str, slots: tuple[str, ...]) -> RowInfo:
    module = f"{loader._package_name(variant.directory)}.{variant.file.stem}"
    identity = KernelIdentity(module=module, qualname=kernel, file=str(variant.file), source_hash=variant.source_hash)
    return RowInfo(label=variant.name, kernel=kernel, config=config, identity=identity, source="variants",
                   source_hash=variant.source_hash, slot=slots[0], points=slots, variant=variant)


def variant_tasks(items: Sequence[tuple[Variant, AttentionConfig, Arch, str | tuple[str, ...]]],
                  engine: Engine | None = None) -> list[Task]:
    """Tasks of (variant, config, arch, slots) items: each planned into its kernels' jobs (a refused config,
    or a file that fails to load, is a row per declared kernel with the reason). Slots: the labels of the grid
    points the item answers (``variant_task_items``), or one label (a str: a single config, as bench's)."""
    engine = engine or Engine()
    items = list(dict.fromkeys((v, c, a, (s,) if isinstance(s, str) else s) for v, c, a, s in items))
    plans = engine.plan([plan_request(v, c, a) for v, c, a, _ in items])
    if (why := _refused_knob(items, [p.reason for p in plans])) is not None:
        raise UsageError(why)
    out: list[Task] = []
    for (v, c, a, slots), plan in zip(items, plans):
        refused = refusal(v, a, plan)
        if plan.reason is not None or not plan.jobs:
            reason = plan.reason or "the variant's kernel_specs listed no kernel"
            out += [Task(None, a, _row(v, c, k, slots), reason, refused) for k in v.kernels]
            continue
        out += [Task(job, a, _row(v, c, name, slots), refused=refused) for name, job in plan.jobs]
    return out


def refusal(variant: Variant, arch: Arch, plan: Plan) -> str:
    """Why ``variant`` does not take its row on ``arch`` ("" where it does): written for other archs (its
    VARIANT['archs']), or its ``check_config`` refused the config (a value outside its range). The row keeps the
    plan's own words as its status (the gate compares them); a table says this in a note instead."""
    if variant.archs and arch.name not in variant.archs:
        return f"written for {', '.join(variant.archs)}"
    return str(plan.reason or "") if plan.refused else ""


def _refused_knob(items: Sequence[tuple[Variant, AttentionConfig, Arch, tuple[str, ...]]],
                  reasons: Sequence[str | None]) -> str | None:
    """A knob value the user set (it is in the row's slot, ``num_splits=0``) that every row given it
    refuses as a value ("num_splits 0 is not allowed; allowed: ..."): the value itself is wrong, a usage
    error before anything compiles, not a table of refused rows. A value refused at some configs only, or
    for what the config makes of it ("num_splits 1000 is more than the 64 key blocks ..."), stays a row's
    status."""
    seen: dict[tuple[str, str], list[str | None]] = {}
    for (variant, config, _, slots), reason in zip(items, reasons):
        asked = set(slots[0].split())
        for name, value in config.extra:
            if name in variant.knobs and f"{name}={value}" in asked:
                seen.setdefault((name, str(value)), []).append(reason)
    for (name, value), why in seen.items():
        if all(r is not None and r.startswith(f"{name} ") and " is not allowed" in r for r in why):
            return f"knob {name}={value} is refused by every variant that takes it: {why[0]}"
    return None


def variant_task_items(variants: Sequence[Variant], archs: Sequence[Arch], requests: Sequence[ConfigRequest],
                       own_archs: bool = False, companions: Sequence[str] = ()
                       ) -> list[tuple[Variant, AttentionConfig, Arch, tuple[str, ...]]]:
    """Every (variant, config, arch, slots) of variants x archs x requests, each specialisation once, in
    request order; its slots: the label of every request it answers (``request_label``), the first its row's
    slot. ``own_archs``: each variant also on the archs it is written for (VARIANT['archs']), and the
    variants named in ``companions`` on every such arch."""
    per_variant = {v: list(archs) for v in variants}
    if own_archs:
        extra = [get_arch(a) for a in dict.fromkeys(a for v in variants for a in v.archs)]
        for v in variants:
            adds = extra if v.name in companions else [get_arch(a) for a in v.archs]
            per_variant[v] += [a for a in adds if a not in per_variant[v]]
    every = list(dict.fromkeys(a for arch_list in per_variant.values() for a in arch_list))
    for req in requests:
        check_backend_options(req, every)
        check_knobs(req, list(variants))
    out: dict[tuple[Variant, AttentionConfig, Arch], list[str]] = {}
    for req in requests:
        label = request_label(req)
        for v in variants:
            for a in per_variant[v]:
                slots = out.setdefault((v, resolve_config(v, a, req), a), [])
                if label not in slots:
                    slots.append(label)
    return [(v, c, a, tuple(slots)) for (v, c, a), slots in out.items()]


@dataclass(frozen=True)
class VariantSource:
    """The bundled variants, or a kernel directory's (``kernel_dir``): the variants named (all when none is)
    x archs x config requests, each planned into its kernels' jobs by a worker."""

    variants: tuple[str, ...] = ()
    kernel_dir: Path | None = None
    label: ClassVar[str] = "variants"

    @classmethod
    def read(cls, value: Any, reading: Reading) -> VariantSource:
        """``kernel_dir``'s value (None: the bundled variants), with the variants the selection names."""
        return cls(tuple(reading.variants), Path(value) if value else None)

    @property
    def directory(self) -> Path:
        return resolve_input(self.kernel_dir, "kernel directory") if self.kernel_dir else loader.BUNDLED_DIR

    def selected(self) -> list[Variant]:
        return select_variants(list(self.variants), self.directory)

    def items(self, archs: Sequence[Arch], requests: Sequence[ConfigRequest], own_archs: bool = False,
              companions: Sequence[str] = ()) -> list[tuple[Variant, AttentionConfig, Arch, tuple[str, ...]]]:
        """The (variant, config, arch, slots) items, without planning or compiling (a grid is counted first)."""
        return variant_task_items(self.selected(), archs, requests, own_archs, companions)

    def tasks(self, want: Want, engine: Engine) -> list[Task]:
        items = self.items(want.archs, want.requests, want.own_archs, want.companions)
        if want.guard is not None:
            want.guard(sum(len(v.kernels) for v, *_ in items), items,
                       lambda sample: engine.compile(variant_tasks(sample, engine)))
        return variant_tasks(items, engine)

    def names(self) -> list[str]:
        return [v.name for v in self.selected()]

    def files(self) -> dict[tuple[str, str], str]:
        return {(v.name, kernel): str(v.file) for v in self.selected() for kernel in v.kernels}

    def empty(self) -> str | None:
        return None
