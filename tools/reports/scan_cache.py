"""reports/scan-NAME.md: ``vgprscope scan`` of a Triton cache another machine wrote, under another Triton
release: the stored rows (registers and memory from each cubin, spill bytes with their source) and, with
archs, the TTIR retargeted by the release that wrote it.

    python -m tools.reports scan-cache DIR [--triton 3.6.0] [--arch gfx942] [--out reports]   # writes scan-DIR.md
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

COMMAND = "python -m tools.reports scan-cache"


def scan_cache_report(directory: Path, out: Path, *, triton: str | None = None, arch: Sequence[str] = (),
                      jobs: int | None = None, on_progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Scan ``directory`` (with ``arch``: retargeted, by ``triton`` where its entries were written by it) and
    write ``out/scan-NAME.md`` (NAME: the directory's name); the files written."""
    from vgprscope.core.fsutil import atomic_write
    from vgprscope.library.api import scan
    from vgprscope.report.formats import md_table
    from vgprscope.report.machine import compile_only
    from vgprscope.report.rows import fmt_lds, fmt_regs, fmt_scratch, fmt_spills_full, occupancy_label

    directory = Path(directory).expanduser()
    result = scan(directory, arch=list(arch) or None, jobs=jobs, triton=triton, on_progress=on_progress)
    records = result.records
    stored = [r for r in records if dict(r.extras).get("cache") == "stored"]
    again = [r for r in records if dict(r.extras).get("cache") == "recompiled"]
    written = Counter(dict(r.extras).get("written_by", "a release the entry does not name") for r in stored)
    built = Counter(r.arch for r in stored)
    spills = Counter(_spill_source(r) for r in stored if r.usage is not None)
    command = " ".join([COMMAND, directory.name, *([f"--triton {triton}"] if triton else []),
                        *(f"--arch {a}" for a in arch)])
    lines = [
        f"# `vgprscope scan` of a cache another machine wrote: {directory.name}",
        "",
        f"Machine: {compile_only().line()}",
        "",
        f"Reproduce: `{command}` (the cache directory given by its path; the report is named after it).",
        "",
        f"Cache: {result.summary.replace(str(directory), directory.name, 1)}. Written by {_counts(written)} (each "
        f"entry's metadata), for {_counts(built)}.",
        "",
        "Registers, stack and shared memory are each stored cubin's (`cuobjdump --dump-resource-usage`), never a "
        "re-run of a ptxas of this machine. Spill bytes, which only ptxas prints: "
        f"{_counts(spills) or 'no NVIDIA entry'}.",
        "",
    ]
    headers = ["kernel", "arch", "config", "VGPRs / regs", "spills", "scratch / stack (B)", "LDS / smem (B)",
               "occupancy", "status"]

    def table(rows: Sequence) -> str:
        return md_table(headers, [[r.kernel, r.arch, r.config.short(), fmt_regs(r), fmt_spills_full(r),
                                   fmt_scratch(r), fmt_lds(r), occupancy_label(r), r.status] for r in rows])

    lines += ["## Stored (read for the arch each entry was built for)", "", table(stored)]
    notes = sorted({str(n) for r in stored if (n := getattr(r.usage, "spills_from", None)) is not None})
    if notes:
        lines += ["Where each row's spill bytes come from (`spills_from` in the JSON and CSV):", ""]
        lines += [f"- {n}" for n in notes] + [""]
    if again:
        status = Counter("ok" if r.ok else r.status for r in again)
        by = sorted({r.toolchain or r.triton_version for r in again if r.ok})
        lines += [f"## Retargeted to {', '.join(arch)}", "",
                  f"{len(again)} rows: {status.pop('ok', 0)} compiled (by Triton {', '.join(by) or '-'}), "
                  f"{sum(status.values())} not.",
                  "", table(again)]
    path = out / f"scan-{directory.name}.md"
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(path, "\n".join(lines))
    return [path]


def _spill_source(rec) -> str:
    u = rec.usage
    why = getattr(u, "spills_from", None)
    if why is None:
        return "from the AMDGCN (AMD)" if u.spills_known else "unknown"
    if why.startswith("unknown"):
        return "unknown"
    return "0, the cubin has no stack frame" if why.startswith("the stored cubin") else "from the ptxas that built it"


def _counts(c: Counter) -> str:
    return ", ".join(f"{k} ({n})" for k, n in c.most_common())
