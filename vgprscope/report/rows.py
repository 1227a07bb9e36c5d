"""Records flattened to ordered columns: the one place that names the columns of every export."""

from __future__ import annotations

from typing import Any

from ..records import AmdUsage, NvidiaUsage, Record


def occupancy_label(rec: Record) -> str:
    occ = rec.occupancy
    if occ is None:
        return "-"
    return f"{occ.value} {occ.unit}"


def flat(rec: Record) -> dict[str, Any]:
    """Every field of a record as one flat dict (CSV, dataframes); usage and occupancy fields prefixed."""
    d: dict[str, Any] = {"variant": rec.variant, "kernel": rec.kernel, "arch": rec.arch, "status": rec.status}
    d |= {f"cfg_{k}": v for k, v in rec.config.as_dict().items() if k not in ("extra", "shape")}
    d["cfg_extra"] = ";".join(f"{k}={v}" for k, v in rec.config.extra)
    d["cfg_shape"] = "x".join(map(str, rec.config.shape))
    d["config_key"] = rec.config.key()
    if rec.usage is not None:
        u = rec.usage
        d |= {f"usage_{k}": v for k, v in vars(u).items()}
        d["usage_lds_bytes" if isinstance(u, AmdUsage) else "usage_shared_bytes"] = (
            u.lds_bytes if isinstance(u, AmdUsage) else u.shared_bytes)
    if rec.occupancy is not None:
        o = rec.occupancy
        d |= {"occ_value": o.value, "occ_unit": o.unit, "occ_max": o.max_value, "occ_percent": o.percent,
              "occ_limiters": ",".join(o.limiters), "occ_next_step": o.next_step, "occ_headroom": o.headroom,
              "occ_warps_per_sm": o.warps_per_sm, "occ_note": o.note}
    d |= {f"x_{k}": v for k, v in rec.extras}
    d |= {"compile_seconds": round(rec.compile_seconds, 3), "cached": rec.cached,
          "triton_version": rec.triton_version, "source_hash": rec.source_hash}
    return d


def fmt_regs(rec: Record) -> str:
    u = rec.usage
    if isinstance(u, AmdUsage):
        return f"{u.vgpr_total} ({u.arch_vgpr}+{u.agpr}a)" if u.agpr else str(u.vgpr_total)
    if isinstance(u, NvidiaUsage):
        return str(u.regs)
    return "-"


def fmt_spills(rec: Record) -> str:
    u = rec.usage
    if isinstance(u, AmdUsage):
        if not (u.vgpr_spill or u.sgpr_spill):
            return "0"
        loop = f", {u.spill_insts_in_loop} in loop" if u.spill_insts_in_loop else ""
        return f"v{u.vgpr_spill} s{u.sgpr_spill} ({u.spill_stores}st/{u.spill_loads}ld{loop})"
    if isinstance(u, NvidiaUsage):
        return "0" if not u.spills else f"{u.spill_store_bytes}B st / {u.spill_load_bytes}B ld"
    return "-"


def fmt_scratch(rec: Record) -> str:
    u = rec.usage
    if isinstance(u, AmdUsage):
        return str(u.scratch_bytes)
    if isinstance(u, NvidiaUsage):
        return str(u.stack_bytes)
    return "-"


def fmt_lds(rec: Record) -> str:
    u = rec.usage
    if isinstance(u, AmdUsage):
        return str(u.lds_bytes)
    if isinstance(u, NvidiaUsage):
        return str(u.shared_bytes)
    return "-"


def fmt_sgpr(rec: Record) -> str:
    return str(rec.usage.sgpr) if isinstance(rec.usage, AmdUsage) else "-"


def fmt_llvm(rec: Record) -> str:
    u = rec.usage
    if isinstance(u, AmdUsage) and u.llvm_occupancy is not None:
        return str(u.llvm_occupancy)
    return "-"


def fmt_pct(rec: Record) -> str:
    return f"{rec.occupancy.percent:.1f}" if rec.occupancy else "-"


def fmt_limiter(rec: Record) -> str:
    return ",".join(rec.occupancy.limiters) if rec.occupancy else "-"


def fmt_next(rec: Record) -> str:
    return rec.occupancy.next_step if rec.occupancy else "-"


# (header with units, cell function): the table, markdown and the summary views of a record
COLUMNS: list[tuple[str, Any]] = [
    ("variant", lambda r: r.variant),
    ("kernel", lambda r: r.kernel),
    ("arch", lambda r: r.arch),
    ("config", lambda r: r.config.short()),
    ("VGPRs / regs", fmt_regs),
    ("SGPRs", fmt_sgpr),
    ("spills", fmt_spills),
    ("scratch / stack (B/lane)", fmt_scratch),
    ("LDS / smem (B)", fmt_lds),
    ("occupancy", occupancy_label),
    ("occ %", fmt_pct),
    ("limiter", fmt_limiter),
    ("next step", fmt_next),
    ("LLVM occ", fmt_llvm),
    ("compile (s)", lambda r: "cached" if r.cached else f"{r.compile_seconds:.2f}"),
    ("status", lambda r: r.status),
]


def cells(rec: Record, columns: list[tuple[str, Any]] = COLUMNS) -> list[str]:
    return [fn(rec) for _, fn in columns]
