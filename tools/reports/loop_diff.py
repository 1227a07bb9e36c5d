"""reports/loop-diff-gfx942.md: what Triton 3.7.1 -> 3.8.0 does to the hot loop of two kernels on gfx942,
through `vgprscope diff` (the gate's loop_spill_bytes and the hot loop it names): the bundled baseline at
the seeds' 128x128 tile with 8 waves (remat-q beside it) and Primus-Turbo's grouped GEMM from the committed
capture of reports/upstream-regressions/.

    python -m tools.reports loop-diff [--out reports]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

COMMAND = "python -m tools.reports loop-diff"
ARCH = "gfx942"
BEFORE, AFTER = "3.7.1", "3.8.0"
CAPTURE = "reports/upstream-regressions/primus-turbo-grouped-gemm.capture.json"

# (title, the library's keywords besides the sides and the arch, the same as diff options)
CASES: tuple[tuple[str, dict[str, Any], str], ...] = (
    ("the bundled baseline and remat-q at the seeds' tile (128x128, d128, 8 waves)",
     dict(variant=["baseline", "remat-q"], block_m=[128], block_n=[128], num_warps=[8]),
     "--variant baseline --variant remat-q --block-m 128 --block-n 128 --num-warps 8"),
    ("Primus-Turbo's variable-K grouped GEMM, the tile of AMD-AGI/Primus-Turbo#471 (256x256x64, 8 warps)",
     dict(capture=CAPTURE), f"--capture {CAPTURE}"),
)


def _loops_table(result: Any) -> list[str]:
    """Each compared entry's hot loop on both sides: where it is, its scratch traffic and matrix share."""
    from vgprscope.report.formats import md_table

    rows = []
    for d in result.gate.entries:
        if d.baseline is None or d.current is None or d.baseline.usage is None or d.current.usage is None:
            continue
        b, a = d.baseline.usage, d.current.usage
        rows.append([f"{d.entry.variant} / {d.entry.kernel}", f"`{a.loop_lines or b.loop_lines or '?'}`",
                     *(str(x) if x is not None else "?" for x in (
                         b.loop_spill_bytes, a.loop_spill_bytes, b.loop_scratch_insts, a.loop_scratch_insts,
                         b.loop_matrix_share, a.loop_matrix_share, b.spill_insts_in_loop, a.spill_insts_in_loop))])
    headers = ["kernel", "hot loop (source lines)", f"scratch B/trip {BEFORE}", AFTER, f"scratch insts/trip {BEFORE}",
               AFTER, f"matrix % {BEFORE}", AFTER, f"spill_insts_in_loop {BEFORE}", AFTER]
    return md_table(headers, rows).splitlines()


def report(jobs: int | None = None, on_progress: Any = None) -> str:
    from vgprscope.library.api import diff

    from .upstream_regressions import _diff_markdown

    parts: list[str] = []
    machine = None
    for title, fields, opts in CASES:
        result = diff(triton=[BEFORE, AFTER], arch=[ARCH], jobs=jobs, on_progress=on_progress, **fields)
        machine = result.machine
        body = _diff_markdown(result.markdown())
        grown = [f"- {c.text()}" for c in result.loops] or ["- no hot loop's scratch traffic changed"]
        parts += [f"## {title}", "",
                  f"Reproduce: `vgprscope diff --triton {BEFORE} --triton {AFTER} --arch {ARCH} {opts} --format md`"
                  f" (exit {0 if result.passed else 1}).", "",
                  "What the diff names per loop:", "", *grown, "",
                  "The hot loop of each kernel, one trip, per lane (bytes loaded and stored to scratch; "
                  "`spill_insts_in_loop`: the spill instructions the AMDGCN parser places in a loop, beside):", "",
                  *_loops_table(result), "",
                  "The diff as `--format md` prints it:", "", *body, ""]
    head = [f"# What Triton {BEFORE} -> {AFTER} does to the hot loop on {ARCH}", "",
            f"Machine: {machine.line() if machine else ''}", "",
            f"Produced by `{COMMAND}`; each section names the `vgprscope diff` command that prints it alone. "
            "The hot loop is the loop whose own body holds the most matrix instructions (the deeper one between "
            "equals); `loop_spill_bytes` (its scratch bytes per trip, per lane) may not grow under the gate's "
            "default rules, `loop_matrix_share` is shown and gated only by a rule (`loop_matrix_share:-N`).", ""]
    return "\n".join(head + parts).rstrip("\n") + "\n"


def loop_diff_report(out: Path, *, jobs: int | None = None, on_progress: Any = None) -> list[Path]:
    """Write ``out/loop-diff-gfx942.md``; the files written."""
    from vgprscope.core.fsutil import atomic_write

    path = out / f"loop-diff-{ARCH}.md"
    atomic_write(path, report(jobs, on_progress))
    return [path]
