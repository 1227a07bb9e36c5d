"""The spill-free occupancy frontier: every kernel compiled at each occupancy level its arch has.

A register-reduction strategy is measured by the highest occupancy it reaches without spilling and by
what the next level costs, not by the registers the compiler fills at one occupancy target (at
``waves_per_eu`` 2 LLVM may use all 256 VGPRs whatever the kernel needs). The levels come from the arch's
register ladder (:func:`vgprscope.core.occupancy.ladder`, constants in :mod:`vgprscope.core.archs`):

* AMD: ``waves_per_eu`` N for every N the ladder has (1..8 on CDNA); LLVM then allocates within the
  budget that gives N waves/SIMD (the step's top VGPR count) and spills what does not fit.
* NVIDIA: ``maxnreg`` at the top register count of every blocks-per-SM step for the launch's block size,
  then the smallest spill-free ``maxnreg`` by bisection between the last spill-free level and the first
  spilling one (assuming, as ptxas behaves, that fewer registers never spill less).

Each level is an ordinary compile of the same spec with the knob set, so its numbers are the ones
``analyze --waves-per-eu N`` / ``--maxnreg N`` prints for that config. The spec is also compiled with the
knob unset (the "uncapped" compile, what plain ``analyze`` prints for it): a compiler left alone can reach
more than a level whose cap makes it spill (ptxas may spill under ``maxnreg`` 128 a kernel that takes 120
registers uncapped), and LLVM ignores a ``waves_per_eu`` minimum that one workgroup cannot meet.

The spill-free occupancy is the highest occupancy any spill-free compile reached, the uncapped one
included, and every price or knob the summary names is for a higher occupancy than that. The core takes
compile tasks and functions that read and vary them, not bundled-variant fields, so specs from any source
can use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from ...backends import backend_of, backend_of_usage
from ...core.archs import Arch
from ...core.errors import UsageError
from ...core.records import Record
from ...report.vendor_words import words_of
from ..order import sort_by, sort_given

T = TypeVar("T")
# the usage's gate-loop fields each level shows (records.AmdUsage.loop_*)
LOOP_FIELDS = ("loop_matrix_share", "loop_spill_bytes", "loop_scratch_insts", "loop_lines", "loop_spill_bytes_max",
               "loop_spill_bytes_sum")



@dataclass(frozen=True)
class LevelPlan:
    """One occupancy level: the occupancy the registers alone give at ``budget`` registers, and the
    compile option that asks the compiler for it."""

    target: int  # waves/SIMD (AMD) or blocks/SM (NVIDIA) that the budget allows, registers alone
    budget: int  # VGPR+AGPR total per wave (AMD) / registers per thread (NVIDIA) the level allows
    knob: str  # waves_per_eu or maxnreg
    setting: int | None  # the knob's value (the uncapped compile: the spec's own, None when unset)


def occupancy_levels(arch: Arch, num_warps: int) -> list[LevelPlan]:
    """Every occupancy level of ``arch`` for a launch of ``num_warps`` warps/waves, fewest first (the
    arch's backend's levels and knob)."""
    backend = backend_of(arch)
    return [LevelPlan(lv.target, lv.budget, backend.facts.knob, lv.setting) for lv in backend.levels(arch, num_warps)]


@dataclass(frozen=True)
class Level:
    """One compile of a kernel at a level (or, ``probe``, at a bisection step) and what it gave."""

    plan: LevelPlan
    record: Record
    probe: bool = False  # a bisection compile, not one of the arch's levels
    # the spec compiled as it is (no knob set by the frontier): its plan's target is the occupancy it
    # reached and its budget the registers it allocated
    uncapped: bool = False
    # a register-split frontier's compile (split.py): each warp_specialize partition with the registers its
    # setmaxnreg gives it
    partitions: tuple[Any, ...] = ()

    @property
    def ok(self) -> bool:
        return self.record.ok and self.record.usage is not None

    @property
    def spills(self) -> int | None:
        """AMD: VGPR + SGPR values spilled; NVIDIA: spill store + load bytes; None when it did not compile."""
        return self.record.usage.spills if self.ok else None

    @property
    def spill_free(self) -> bool:
        return self.ok and self.spills == 0

    @property
    def allocation(self) -> int | None:
        u = self.record.usage
        return backend_of_usage(u).figures(u).allocation if u is not None else None

    @property
    def reached(self) -> int | None:
        occ = self.record.occupancy
        return occ.value if occ is not None else None

    @property
    def limiters(self) -> tuple[str, ...]:
        occ = self.record.occupancy
        return occ.limiters if occ is not None else ()

    def figures(self) -> dict[str, Any]:
        u = self.record.usage
        d: dict[str, Any] = {"used": None, "vgpr_spill": None, "sgpr_spill": None, "spill_insts": None,
                             "spill_insts_in_loop": None, "scratch_bytes": None, "spill_store_bytes": None,
                             "spill_load_bytes": None}
        if u is not None:
            f = backend_of_usage(u).figures(u)
            d |= {"used": f.registers, **dict(f.spilled), "scratch_bytes": f.scratch_bytes}
            if f.spill_insts is not None:
                d |= {"spill_insts": f.spill_insts, "spill_insts_in_loop": f.spill_insts_in_loop}
        return d | self.loop_figures()

    def loop_figures(self) -> dict[str, Any]:
        """The gate loop's one trip at this level (``parse.loops.gate_loop``): None where not read."""
        u = self.record.usage
        return {k: getattr(u, k, None) for k in LOOP_FIELDS}

    def as_dict(self) -> dict[str, Any]:
        occ = self.record.occupancy
        return {
            "level": self.plan.target, "knob": self.plan.knob, "setting": self.plan.setting,
            "budget": self.plan.budget, "probe": self.probe, "uncapped": self.uncapped, "status": self.record.status,
            "allocation": self.allocation, **self.figures(), "spills": self.spills, "spill_free": self.spill_free,
            "occupancy": self.reached, "unit": occ.unit if occ else None, "limiters": list(self.limiters),
            "config_key": self.record.config.key(), "record": self.record.as_dict(),
        } | ({"partitions": [{"name": p.name, "num_warps": p.num_warps, "requested_registers": p.requested_registers,
                              "given_registers": p.given_registers} for p in self.partitions]}
             if self.partitions else {})


@dataclass(frozen=True)
class KernelFrontier:
    """One kernel of one spec on one arch across its levels: numbers, names and the levels it picked (the
    sentence they make is the view's: ``summary.summary``)."""

    variant: str
    kernel: str
    arch: str
    config: Any  # the spec's config before the knob was set (AttentionConfig for the bundled variants)
    unit: str
    knob: str
    levels: tuple[Level, ...]
    probes: tuple[Level, ...] = ()
    uncapped: Level | None = None  # the spec compiled as it is, no knob set by the frontier
    # the spill-free compile that reaches the spill-free occupancy: the level with the smallest budget that
    # does, else the uncapped compile (see ``_best``)
    spill_free: Level | None = None
    next_level: Level | None = None  # the first level whose target is above the spill-free occupancy
    spill_free_occupancy: int | None = None  # the highest occupancy any spill-free compile reached
    min_spill_free_maxnreg: int | None = None  # NVIDIA: the bisection's answer, at the spill-free occupancy
    # True: the levels are the settings of the variant's register-split knob (``knob``), not occupancy levels
    split: bool = False
    spill_free_settings: tuple[int, ...] = ()  # split: the knob's settings that compiled without spilling

    def as_dict(self) -> dict[str, Any]:
        cfg = self.config.as_dict() if hasattr(self.config, "as_dict") else self.config
        return {
            "variant": self.variant, "kernel": self.kernel, "arch": self.arch, "config": cfg,
            "unit": self.unit, "knob": self.knob, "levels": [lv.as_dict() for lv in self.levels],
            "bisection": [lv.as_dict() for lv in self.probes],
            "uncapped": self.uncapped.as_dict() if self.uncapped else None,
            "spill_free_uncapped": self.spill_free.uncapped if self.spill_free else None,
            "spill_free_level": self.spill_free.plan.target if self.spill_free else None,
            "spill_free_budget": self.spill_free.plan.budget if self.spill_free else None,
            "spill_free_occupancy": self.spill_free_occupancy,
            "next_level": self.next_level.as_dict() if self.next_level else None,
            "min_spill_free_maxnreg": self.min_spill_free_maxnreg,
        } | ({"split": True, "spill_free_settings": list(self.spill_free_settings)} if self.split else {})


# ------------------------------------------------------------------------------------------------ core


@dataclass(frozen=True)
class SpecAccess(Generic[T]):
    """How the frontier reads and varies a compile task, whatever source it came from."""

    arch: Callable[[T], Arch]
    num_warps: Callable[[T], int]
    vary: Callable[[T, str, int | None], T]  # the same task with one backend option set (None: unset)
    key: Callable[[T], tuple]  # matches a task to its records
    record_key: Callable[[Record], tuple]
    label: Callable[[T], str]  # the variant / kernel-source name
    config: Callable[[T], Any]


def _num_warps(t: Any) -> int:
    n = t.config.num_warps
    return n() if callable(n) else n


def engine_tasks() -> SpecAccess:
    """Access to ``compile.task.Task`` (one kernel of any source on one arch); a level is the task with
    one launch option set (``Task.vary``), whatever source it came from."""
    return SpecAccess(
        arch=lambda t: t.arch, num_warps=_num_warps, vary=lambda t, knob, value: t.vary(**{knob: value}),
        key=lambda t: (t.label, t.row.kernel, t.arch.name, t.config.key(), t.row.slot),
        record_key=lambda r: (r.variant, r.kernel, r.arch, r.config.key(), r.slot),
        label=lambda t: t.label, config=lambda t: t.config,
    )


def compile_grouped(tasks: Sequence[T], compile_fn: Callable[[list[T]], list[Record]],
                    access: SpecAccess[T]) -> list[list[Record]]:
    """Each task's records (one per kernel), compiling every distinct task once in one batch."""
    unique = list(dict.fromkeys(tasks))
    by_key: dict[tuple, list[Record]] = {}
    for r in compile_fn(unique):
        by_key.setdefault(access.record_key(r), []).append(r)
    return [by_key.get(access.key(t), []) for t in tasks]


def level_count(tasks: Sequence[T], access: SpecAccess[T]) -> int:
    """Compiles the levels of ``tasks`` take, each task's uncapped compile included (the bisection's few on
    NVIDIA come on top)."""
    return sum(len(occupancy_levels(access.arch(t), access.num_warps(t))) + 1 for t in tasks)


def run_frontier(tasks: Sequence[T], compile_fn: Callable[[list[T]], list[Record]],
                 access: SpecAccess[T] | None = None, bisect: bool = True) -> list[KernelFrontier]:
    """The frontier of every kernel of every task: all levels and each task's uncapped compile in one batch,
    then (NVIDIA) the bisection rounds, each one batch. A level that fails to compile is a level with its
    error."""
    access = access or engine_tasks()
    tasks = list(dict.fromkeys(tasks))
    plans = [occupancy_levels(access.arch(t), access.num_warps(t)) for t in tasks]
    level_tasks = [access.vary(t, p.knob, p.setting) for t, ps in zip(tasks, plans) for p in ps]
    # the uncapped compile: the task with the knob unset (the task itself unless it sets the knob), as
    # analyze compiles it; one more task per spec, in the same batch
    plain = [t if getattr(access.config(t), _knob(access.arch(t)), None) is None else
             access.vary(t, _knob(access.arch(t)), None) for t in tasks]
    grouped = iter(compile_grouped(level_tasks + plain, compile_fn, access))

    # (task index, kernel) -> levels, kernels in the order the task's records give them
    per_kernel: dict[tuple[int, str], list[Level]] = {}
    for i, ps in enumerate(plans):
        for p in ps:
            for rec in next(grouped):
                per_kernel.setdefault((i, rec.kernel), []).append(Level(p, rec))
    uncapped: dict[tuple[int, str], Level] = {}
    for i, t in enumerate(tasks):
        for rec in next(grouped):
            uncapped[(i, rec.kernel)] = _uncapped_level(rec, _knob(access.arch(t)))

    frontiers = {k: _frontier(tasks[k[0]], k[1], levels, access, uncapped=uncapped.get(k))
                 for k, levels in per_kernel.items()}
    if bisect:
        frontiers = _bisect(tasks, frontiers, compile_fn, access)
    return [frontiers[k] for k in per_kernel]


def _knob(arch: Arch) -> str:
    return backend_of(arch).facts.knob


def _uncapped_level(rec: Record, knob: str) -> Level:
    """The uncapped compile as a Level: its target is the occupancy it reached, its budget what it
    allocated."""
    lv = Level(LevelPlan(0, 0, knob, None), rec, uncapped=True)
    return replace(lv, plan=LevelPlan(lv.reached or 0, lv.allocation or 0, knob, None))


def _best(free: Sequence[Level], occupancy: int) -> Level:
    """The spill-free compile to name for ``occupancy``: a level that reaches it under its own cap (the
    smallest budget first: the furthest the registers were cut), else the uncapped compile, else a level
    whose hint the compiler ignored (LLVM drops a waves_per_eu minimum one workgroup cannot meet), else a
    bisection probe."""
    at = [lv for lv in free if lv.reached == occupancy]

    def rank(lv: Level) -> tuple[int, int]:
        if lv.probe:
            return (3, lv.plan.budget)
        if lv.uncapped:
            return (1, 0)
        return (0 if lv.reached <= lv.plan.target else 2, -lv.plan.target)

    return min(at, key=rank)


def _frontier(task: Any, kernel: str, levels: list[Level], access: SpecAccess,
              probes: Sequence[Level] = (), minimum: int | None = None,
              uncapped: Level | None = None) -> KernelFrontier:
    arch = access.arch(task)
    levels = sorted(levels, key=lambda lv: lv.plan.target)
    # every compile it made is a candidate: the levels, the uncapped compile, the bisection's probes
    free = [lv for lv in (*levels, *((uncapped,) if uncapped else ()), *probes)
            if lv.spill_free and lv.reached is not None]
    reached = max((lv.reached for lv in free), default=None)
    sf = _best(free, reached) if reached is not None else None
    # the next level must aim higher than what is already reached without spills
    nxt = next((lv for lv in levels if reached is not None and lv.plan.target > max(reached, sf.plan.target)),
               None)
    return KernelFrontier(
        variant=access.label(task), kernel=kernel, arch=arch.name, config=access.config(task),
        unit=words_of(arch.vendor).unit, knob=_knob(arch), levels=tuple(levels),
        probes=tuple(probes), uncapped=uncapped, spill_free=sf, next_level=nxt, spill_free_occupancy=reached,
        min_spill_free_maxnreg=minimum,
    )


@dataclass
class _Search:
    lo: int  # spills (or does not compile) at this maxnreg
    hi: int  # spill-free at this maxnreg
    probes: list[Level] = field(default_factory=list)


def _bisect(tasks: Sequence[Any], frontiers: dict[tuple[int, str], KernelFrontier],
            compile_fn: Callable[[list[Any]], list[Record]], access: SpecAccess) -> dict[tuple[int, str], KernelFrontier]:
    """Where the knob is a register budget (NVIDIA's maxnreg): the smallest spill-free setting between a
    spill-free level and the spilling one above it."""
    searches: dict[tuple[int, str], _Search] = {}
    for k, kf in frontiers.items():
        arch = access.arch(tasks[k[0]])
        # only below a level that reaches the spill-free occupancy under its own cap: every maxnreg between
        # it and the spilling level above gives that same occupancy, so the answer never lowers it (with
        # the uncapped compile ahead of every spill-free level, no spill-free cap is known at that occupancy)
        if backend_of(arch).facts.bisects and kf.spill_free is not None and not kf.spill_free.uncapped \
                and kf.next_level is not None and kf.next_level.ok and not kf.next_level.spill_free \
                and kf.next_level.plan.budget < kf.spill_free.plan.budget:
            searches[k] = _Search(lo=kf.next_level.plan.budget, hi=kf.spill_free.plan.budget)
    while True:
        pending = {k: s for k, s in searches.items() if s.hi - s.lo > 1}
        if not pending:
            break
        mids = {k: (s.lo + s.hi) // 2 for k, s in pending.items()}
        probe_tasks = [access.vary(tasks[k[0]], _knob(access.arch(tasks[k[0]])), m) for k, m in mids.items()]
        results = compile_grouped(probe_tasks, compile_fn, access)
        for (k, mid), recs in zip(mids.items(), results):
            rec = next((r for r in recs if r.kernel == k[1]), None)
            s = searches[k]
            if rec is None:  # the kernel vanished from its task's records: stop searching it
                s.lo = s.hi - 1
                continue
            occ = rec.occupancy
            lv = Level(LevelPlan(occ.value if occ else 0, mid, _knob(access.arch(tasks[k[0]])), mid), rec, probe=True)
            s.probes.append(lv)
            if lv.spill_free:
                s.hi = mid
            else:
                s.lo = mid
    out = dict(frontiers)
    for k, s in searches.items():
        kf = frontiers[k]
        out[k] = _frontier(tasks[k[0]], k[1], list(kf.levels), access, probes=sorted(
            s.probes, key=lambda lv: lv.plan.budget), minimum=s.hi, uncapped=kf.uncapped)
    return out


# --------------------------------------------------------------------------------- per variant (compare)


@dataclass(frozen=True)
class VariantFrontier:
    """A variant's frontier on one arch and config: its most limited kernel decides."""

    variant: str
    arch: str
    kernels: tuple[KernelFrontier, ...]
    spill_free_occupancy: int | None  # the lowest of its kernels' (None: a kernel spills at every level)
    limiting: KernelFrontier | None  # the kernel that sets it

    @property
    def next_spills(self) -> int | None:
        k = self.limiting
        return k.next_level.spills if k is not None and k.next_level is not None else None

    @property
    def next_target(self) -> int | None:
        k = self.limiting
        return k.next_level.plan.target if k is not None and k.next_level is not None else None

    def as_dict(self) -> dict[str, Any]:
        return {"spill_free_occupancy": self.spill_free_occupancy,
                "limiting_kernel": self.limiting.kernel if self.limiting else None,
                "next_level": self.next_target, "next_level_spills": self.next_spills,
                "kernels": [k.as_dict() for k in self.kernels]}


def by_variant(frontiers: Sequence[KernelFrontier]) -> dict[tuple[str, str, str], VariantFrontier]:
    """(variant, arch, config key) -> the variant's frontier."""
    groups: dict[tuple[str, str, str], list[KernelFrontier]] = {}
    for kf in frontiers:
        ck = kf.config.key() if hasattr(kf.config, "key") else str(kf.config)
        groups.setdefault((kf.variant, kf.arch, ck), []).append(kf)
    out = {}
    for key, kfs in groups.items():
        if any(k.spill_free_occupancy is None for k in kfs):
            limiting = next(k for k in kfs if k.spill_free_occupancy is None)
            value = None
        else:
            limiting = min(kfs, key=lambda k: (k.spill_free_occupancy, k.spill_free.plan.target))
            value = limiting.spill_free_occupancy
        out[key] = VariantFrontier(key[0], key[1], tuple(kfs), value, limiting)
    return out


# frontier sort names -> how a KernelFrontier gives the value
_FRONTIER_SORTS: dict[str, Callable[[Any], Any]] = {
    "spill_free_occupancy": lambda kf: kf.spill_free_occupancy,
    "occupancy": lambda kf: kf.spill_free_occupancy,
    "next_spills": lambda kf: kf.next_level.spills if kf.next_level else None,
    "spills": lambda kf: kf.next_level.spills if kf.next_level else None,
    "min_maxnreg": lambda kf: kf.min_spill_free_maxnreg,
}


def sort_frontiers(frontiers: Sequence[KernelFrontier], metric: str | None) -> list[KernelFrontier]:
    """The kernels of each arch best first by ``metric`` (spill_free_occupancy, next_spills, min_maxnreg)."""
    if (metric := sort_given(metric)) is None:
        return list(frontiers)
    key = metric.strip().lower().replace("-", "_")
    if key not in _FRONTIER_SORTS:
        raise UsageError(f"cannot sort the frontier by {metric!r}; sort by one of: {', '.join(_FRONTIER_SORTS)}")
    field = "spill_free_occupancy" if key in ("occupancy", "spill_free_occupancy") else key
    groups: dict[str, list[KernelFrontier]] = {}
    for kf in frontiers:
        groups.setdefault(kf.arch, []).append(kf)
    return [kf for kfs in groups.values() for kf in sort_by(kfs, field, lambda k, _: _FRONTIER_SORTS[key](k))]
