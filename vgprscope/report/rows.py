"""Records flattened to ordered columns: the one place that names the columns of every export.

Two views of one record: the compact cells of the default table (``264 (256v+8a)``, ``2 w/SIMD 25%``,
``vgpr: -8 -> 2``), and every field in full (--wide, markdown, CSV). Cells read only the generic parts of
a record (usage, occupancy, ``config.short()``), so captured and user kernels render like bundled ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import Any

from ..backends import BACKENDS, UsageFigures, backend_of_usage, memory_metric
from ..core.records import Occupancy, Record
from . import usage_text
from .formats import Column, Footnotes
from .vendor_words import VENDOR_WORDS

# short names of the occupancy units, for the compact occupancy cell
_UNIT_SHORT = {w.unit: w.unit_short for w in VENDOR_WORDS.values()}


# A generated module's name is a 52-character hash: this many of its characters name it (a shell's glob finds it)
_MODULE_SHOWN = 12


def generated_where(rec: Any) -> str:
    """Where a generated kernel's source is, for a person to open it: its module's file (the hash shortened,
    ``cqgq6yiwqwtq….py``) and the kernel's ``def`` line where known (``:18``); "" for a kernel that is not
    Inductor's. The full path is the row's ``module`` extra (scan) or its identity's file."""
    extras = dict(rec.extras)
    module = extras.get("module")
    if not module and getattr(rec, "variant", "") == "inductor" and rec.identity is not None:
        module = rec.identity.file
    if not module:
        return ""
    name = PurePath(str(module)).name
    stem = name.removesuffix(".py")
    shown = f"{stem[:_MODULE_SHOWN]}…py" if len(stem) > _MODULE_SHOWN + 1 else name
    line = extras.get("line")
    return f"{shown}:{line}" if isinstance(line, int) else shown


def occupancy_label(rec: Record) -> str:
    occ = rec.occupancy
    if occ is None:
        return "-"
    return f"{occ.value} {occ.unit}"


def config_columns(config: Any) -> dict[str, Any]:
    """A config as the columns every kind of config fills (a bundled variant's, a captured or cached
    launch's), so that frames of several sources concatenate without columns empty for one kind:
    ``cfg_kind``; ``cfg_short`` (the tables' label); ``cfg_params``, the compile-time parameters as
    ``name=value;...`` (a launch's constexprs; a variant's tiles, dtype, mask and knobs); ``cfg_args``, what the
    arguments specialise on (a launch's signature, a variant's problem shape); ``cfg_options``, the launch
    options as ``name=value;...``, and each one the CLI sets (``--num-warps`` ...) as a number of its own (empty
    where a config leaves it to Triton's default); ``cfg_autotune``, the autotune pick (``2/18``; empty where
    the kernel is not autotuned). Every field is in the JSON."""
    fields = dict(config.flat())
    kind = fields.pop("kind", None) or getattr(config, "kind", "") or ""
    names = ("num_warps", "num_stages", *dict.fromkeys(o for b in BACKENDS for o in b.facts.options))
    given = {n: fields.pop(n) for n in names if n in fields}  # a config whose options are fields of its own
    options = fields.pop("options", None)
    if options is None:
        options = ";".join(f"{n}={v}" for n, v in given.items() if v is not None)
    autotune = fields.pop("autotune", None) or ""
    args = fields.pop("signature", None)
    if args is None:
        shape = fields.pop("shape", None)
        args = f"shape={shape}" if shape not in (None, "") else ""
    # a field already written as ``name=value;...`` (constexprs, a variant's knobs) joins as it is
    params = ";".join(v if isinstance(v, str) and "=" in v else f"{k}={v}" for k, v in fields.items()
                      if v not in (None, ""))
    return {"cfg_kind": kind, "cfg_short": config.short(), "cfg_params": params, "cfg_args": args,
            "cfg_options": options, **{f"cfg_{n}": config.option(n) for n in names}, "cfg_autotune": autotune}


def flat(rec: Record) -> dict[str, Any]:
    """Every field of a record as one flat dict (CSV, dataframes); usage and occupancy fields prefixed, the
    config as the columns every kind fills (``config_columns``)."""
    d: dict[str, Any] = {"variant": rec.variant, "kernel": rec.kernel, "arch": rec.arch, "status": rec.status}
    d |= config_columns(rec.config)
    d["config_key"] = rec.config.key()
    if rec.identity is not None:
        d |= {f"kernel_{k}": v for k, v in rec.identity.as_dict().items()}
    d["source"] = rec.source
    if rec.usage is not None:
        u = rec.usage
        b = backend_of_usage(u)
        d |= {f"usage_{k}": v for k, v in vars(u).items()}
        d[f"usage_{memory_metric(b).name}"] = b.figures(u).memory_bytes
    if rec.occupancy is not None:
        o = rec.occupancy
        d |= {"occ_value": o.value, "occ_unit": o.unit, "occ_max": o.max_value, "occ_percent": o.percent,
              "occ_limiters": ",".join(o.limiters), "occ_next_step": o.next_step, "occ_headroom": o.headroom,
              "occ_warps_per_sm": o.warps_per_sm, "occ_note": o.note}
    d |= {f"x_{k}": v for k, v in rec.extras}
    d |= dict(rec.verdict.fields) if rec.verdict else {}  # its producer's (Inductor's n_spills, whether it skips)
    d |= {"compile_seconds": round(rec.compile_seconds, 3), "cached": rec.cached,
          "triton_version": rec.triton_version, "source_hash": rec.source_hash}
    # the compiler's own words: its codes (what the gate compares) and each one in full, and the LLVM it ran
    d |= {"llvm_version": rec.llvm_version, "diagnostics": ",".join(x.code for x in rec.diagnostics),
          "diagnostic_messages": " | ".join(x.text() for x in rec.diagnostics)}
    return d


# ---- compact cells (the default view) -------------------------------------------------------------
# A usage's cells: its backend's figures in its vendor's words (report.usage_text); a record without one
# shows "-".


def _text(rec: Record, cell: Callable[[Any], str]) -> str:
    return "-" if rec.usage is None else cell(rec.usage)


def _cell(rec: Record, figure: Callable[[UsageFigures], Any]) -> str:
    u = rec.usage
    if u is None:
        return "-"
    value = figure(backend_of_usage(u).figures(u))
    return "-" if value is None else str(value)


def fmt_regs(rec: Record) -> str:
    """``264 (256v+8a)``: the unified total occupancy sees, and its arch VGPR and AGPR parts (AMD)."""
    return _text(rec, usage_text.registers_text)


def fmt_spills(rec: Record) -> str:
    """``0``, or ``1 (0 in loop)``: registers spilled (AMD: VGPRs + SGPRs) and spill instructions inside a
    loop; NVIDIA: spill store + load bytes."""
    return _text(rec, usage_text.spills_text)


def pct(p: float) -> str:
    """25.0 -> ``25%``, 12.5 -> ``12.5%``, 18.75 -> ``18.8%``."""
    return f"{p:.1f}".removesuffix(".0") + "%"


def fmt_occupancy(occ: Occupancy | None) -> str:
    """``2 w/SIMD 25%``, ``1 blk/SM 12.5%``."""
    if occ is None:
        return "-"
    return f"{occ.value} {_UNIT_SHORT.get(occ.unit, occ.unit)} {pct(occ.percent)}"


# next_step as core/occupancy/advice.py writes it: "shed 8 VGPRs/AGPRs (-> 256) and 2432 bytes of LDS (-> 21504) for
# 3 waves/SIMD[, 24 warps/SM]"; the labels map back to the limiter names.
_SHED = re.compile(r"shed (?P<cuts>.+?) for (?P<value>\d+) [^,]+(, .*)?")
_CUT = re.compile(r"(?P<n>\d+) (?P<label>[A-Za-z/ ]+?) \(-> \d+\)")
_LABEL_KEY = {"VGPRs/AGPRs": "vgpr", "VGPRs": "vgpr", "SGPRs": "sgpr", "bytes of LDS": "lds",
              "registers": "regs", "bytes of shared memory": "shared"}


# the short cells' names of a limiter where the model's is long (NVIDIA's memory header says smem too)
_SHORT_NAME = {"shared": "smem"}


def short_next_step(occ: Occupancy) -> str | None:
    """``vgpr: -8 -> 2`` (shed 8 VGPRs for 2 waves/SIMD), ``max``; None when the next step is a sentence no
    short form says, as two resources to shed are (it then becomes a footnote: ``vgpr,lds [1]``)."""
    text = occ.next_step
    if text.startswith("at the maximum"):
        return "max"
    m = _SHED.fullmatch(text)
    if m is None:
        return None
    cuts = [(_LABEL_KEY.get(c["label"]), int(c["n"])) for c in _CUT.finditer(m["cuts"])]
    if not cuts or any(k is None for k, _ in cuts):
        return None
    target = m["value"]
    if len(cuts) == 1 and (cuts[0][0],) == tuple(occ.limiters):
        return f"{_SHORT_NAME.get(cuts[0][0], cuts[0][0])}: -{cuts[0][1]} -> {target}"
    if len(cuts) > 1:  # two resources to shed is a sentence (a footnote), not a cell that folds
        return None
    return ", ".join(f"{k} -{n}" for k, n in cuts) + f" -> {target}"


def fmt_next_short(rec: Record, notes: Footnotes) -> str:
    """The limiter and the next occupancy step in a short form; anything longer is a footnote."""
    occ = rec.occupancy
    if occ is None:
        return "-"
    short = short_next_step(occ)
    if short is not None:
        return short
    head = ",".join(_SHORT_NAME.get(lim, lim) for lim in occ.limiters) or "-"
    return f"{head} {notes.ref(occ.next_step)}"


def fmt_occupancy_noted(rec: Record, notes: Footnotes) -> str:
    occ = rec.occupancy
    cell = fmt_occupancy(occ)
    # a row that failed says why in its status; the same words again on its occupancy would be a second note
    return f"{cell} {notes.ref(occ.note)}" if occ is not None and occ.note and rec.ok else cell


def fmt_spills_noted(rec: Record, notes: Footnotes) -> str:
    """The spills cell; where the spill figures are unknown (a stored cubin no ptxas here rebuilds), ``?`` and a
    footnote saying why and how to know them."""
    u = rec.usage
    why = getattr(u, "spills_from", None) if u is not None and not u.spills_known else None
    cell = f"{fmt_spills(rec)} {notes.ref(why)}" if why else fmt_spills(rec)
    skipped = rec.verdict.note if rec.verdict and not rec.verdict.kept else ""  # a config its producer does not run
    return f"{cell} skip {notes.ref(skipped)}" if skipped else cell


def verdict_cell(header: str) -> Callable[[Record], str]:
    """The cell of the verdict column ``header``: a row's verdict of that producer (``Record.verdict``: Inductor's
    ``skip: n_spills 34 > 16``), "-" for a row without one."""
    return lambda rec: rec.verdict.cell if rec.verdict and rec.verdict.column == header else "-"


def verdict_headers(records: Sequence[Record]) -> list[str]:
    """The verdict columns the rows need (one per producer that judged some of them), in the rows' order."""
    return list(dict.fromkeys(r.verdict.column for r in records if r.verdict))


def fmt_status(rec: Record, notes: Footnotes) -> str:
    return "ok" if rec.ok else f"✗ {notes.ref(rec.status)}"


# ---- full cells (--wide, markdown) -----------------------------------------------------------------


def fmt_spills_full(rec: Record) -> str:
    return _text(rec, usage_text.spills_full_text)


def fmt_scratch(rec: Record) -> str:
    """Scratch bytes per lane (AMD) or the stack frame per thread (NVIDIA)."""
    return _cell(rec, lambda f: f.scratch_bytes)


def fmt_loop_share(rec: Record) -> str:
    """The hot loop's matrix instructions, percent of its instructions per trip (``-``: no loop or none read)."""
    share = getattr(rec.usage, "loop_matrix_share", None)
    return "-" if share is None else f"{share}%"


def fmt_loop_spills(rec: Record) -> str:
    """Scratch / local bytes per trip: the worst loop's, and every loop's together where they differ
    (``64 / 96``); ``?`` where the assembly was not read."""
    if rec.usage is None:
        return "-"
    worst, every = (getattr(rec.usage, f, None) for f in ("loop_spill_bytes", "loop_spill_bytes_sum"))
    if worst is None:
        return "?"
    return str(worst) if every in (None, worst) else f"{worst} / {every}"


def fmt_loop_lines(rec: Record) -> str:
    return getattr(rec.usage, "loop_lines", None) or "-"


def fmt_lds(rec: Record) -> str:
    """LDS (AMD) or shared memory (NVIDIA) per workgroup / block, static and Triton's dynamic."""
    return _cell(rec, lambda f: f.memory_bytes)


def fmt_sgpr(rec: Record) -> str:
    """Scalar registers, where the backend has them (AMD)."""
    return _cell(rec, lambda f: f.scalar_registers)


def fmt_llvm(rec: Record) -> str:
    """The compiler's own occupancy line, where it prints one (LLVM's ``; Occupancy:``)."""
    return _cell(rec, lambda f: f.compiler_occupancy)


def fmt_pct(rec: Record) -> str:
    return f"{rec.occupancy.percent:.1f}" if rec.occupancy else "-"


def fmt_limiter(rec: Record) -> str:
    return ",".join(rec.occupancy.limiters) if rec.occupancy else "-"


def fmt_next(rec: Record) -> str:
    return rec.occupancy.next_step if rec.occupancy else "-"


def fmt_note(rec: Record) -> str:
    return rec.occupancy.note if rec.occupancy and rec.occupancy.note else "-"


def fmt_diagnostics(rec: Record) -> str:
    """The codes of what the compiler said (``C7512``, ``too-many-maxnreg-specified``), "-" where it said nothing;
    explain and the JSON give each message in full."""
    return ", ".join(d.code for d in rec.diagnostics) or "-"


def fmt_compile(rec: Record) -> str:
    return "cached" if rec.cached else f"{rec.compile_seconds:.2f}"


# (header with units, cell function): every field of a record, in the order of markdown and --wide
# the loops' spill traffic per trip: the worst loop's, then every loop's together
LOOP_SPILLS_HEADER = "loop spills (B/trip)"

COLUMNS: list[tuple[str, Any]] = [
    ("variant", lambda r: r.variant),
    ("kernel", lambda r: r.kernel),
    ("arch", lambda r: r.arch),
    ("config", lambda r: r.config.short()),
    ("VGPRs / regs", fmt_regs),
    ("SGPRs", fmt_sgpr),
    ("spills", fmt_spills_full),
    ("scratch / stack (B/lane)", fmt_scratch),
    (LOOP_SPILLS_HEADER, fmt_loop_spills),
    ("hot loop matrix", fmt_loop_share),
    ("hot loop lines", fmt_loop_lines),
    ("LDS / smem (B)", fmt_lds),
    ("occupancy", occupancy_label),
    ("occ %", fmt_pct),
    ("limiter", fmt_limiter),
    ("next step", fmt_next),
    ("LLVM occ", fmt_llvm),
    ("note", fmt_note),
    ("compiler said", fmt_diagnostics),
    ("compile (s)", fmt_compile),
    ("status", lambda r: r.status),
]


def cells(rec: Record, columns: list[tuple[str, Any]] = COLUMNS) -> list[str]:
    return [fn(rec) for _, fn in columns]


RECORD_LEGEND = ("VGPRs / regs: 264 (256v+8a) = the unified count occupancy sees, of arch VGPRs (v) and AGPRs (a) "
                 "(AMD), or registers per thread (NVIDIA); LDS B: LDS (AMD) or shared memory (NVIDIA) bytes per "
                 "workgroup / block{spills}; --wide: every field")
SPILLS_LEGEND = ("; spills: AMD: spilled VGPRs (N in loop: spill instructions inside a loop), NVIDIA: ptxas's "
                 "spill stores+loads in bytes per thread")
# the spills in every field (--wide, markdown): what each number counts, in its unit
SPILLS_FULL_LEGEND = ("spills: AMD: vN sM = VGPRs and SGPRs spilled (registers per lane), (Xst/Yld, Z in loop) = spill "
                      "store / reload instructions (Z of them inside a loop); NVIDIA: ptxas's spill stores / loads in "
                      "bytes per thread; scratch / stack: AMD scratch bytes per lane, NVIDIA stack frame bytes per "
                      "thread")
NEXT_LEGEND = ("limiter: next = the resource that limits occupancy, how much of it to shed, and the occupancy "
               "that gives (vgpr: -8 -> 2 = 8 fewer VGPRs for 2 waves/SIMD; smem: shared memory); max = at the arch's "
               "maximum")


def record_columns(notes: Footnotes, with_status: bool = True) -> list[Column]:
    """The analyze table: compact columns by default, every field with --wide. ``notes`` collects the
    footnotes the compact cells refer to (long next steps, occupancy notes, errors); ``with_status``
    False leaves the default view's status column out (every row ok). The default view names variant
    and kernel in a label column of its own (records_view)."""
    status = [Column("status", lambda r: fmt_status(r, notes), default_only=True)] if with_status else []
    return [
        Column("variant", lambda r: r.variant, wide_only=True),
        Column("kernel", lambda r: r.kernel, wide_only=True),
        Column("arch", lambda r: r.arch),
        Column("config", lambda r: r.config.short(), wrap=True),
        Column("VGPRs / regs", fmt_regs, wrap=True, min_width=7),  # header on two lines at most
        Column("SGPRs", fmt_sgpr, wide_only=True),
        Column("spills", lambda r: fmt_spills_noted(r, notes), wrap=True, default_only=True),
        Column("spills", fmt_spills_full, wide_only=True),
        Column("scratch / stack (B/lane)", fmt_scratch, wide_only=True),
        Column(LOOP_SPILLS_HEADER, fmt_loop_spills, wide_only=True),
        Column("hot loop matrix", fmt_loop_share, wide_only=True),
        Column("hot loop lines", fmt_loop_lines, wide_only=True),
        Column("LDS B", fmt_lds, justify="right", default_only=True, drop=2),
        Column("LDS / smem (B)", fmt_lds, wide_only=True),
        Column("occupancy", lambda r: fmt_occupancy_noted(r, notes), wrap=True, default_only=True),
        Column("occupancy", occupancy_label, wide_only=True),
        Column("occ %", fmt_pct, wide_only=True),
        Column("limiter: next", lambda r: fmt_next_short(r, notes), wrap=True, default_only=True, drop=1),
        Column("limiter", fmt_limiter, wide_only=True),
        Column("next step", fmt_next, wide_only=True),
        Column("LLVM occ", fmt_llvm, wide_only=True),
        Column("note", fmt_note, wide_only=True),
        Column("compiler said", fmt_diagnostics, wide_only=True),
        Column("compile (s)", fmt_compile, wide_only=True),
        *status,
        Column("status", lambda r: r.status, wide_only=True),
    ]
