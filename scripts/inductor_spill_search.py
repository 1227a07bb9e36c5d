"""Search real Inductor kernels for a config whose ``n_spills`` crosses Inductor's spill threshold (16, 32 on
HIP), or that two Triton releases put on opposite sides of it: every launch of the given captures (or the
launches named) compiled GPU-free for each arch under each release. Writes a Markdown report.

    python scripts/inductor_spill_search.py --capture tests/fixtures/inductor_max_autotune_mm_capture.json.gz \\
        --arch gfx1201 --arch sm_80 --arch gfx942 --arch gfx950 --arch sm_90 \\
        --triton 3.9.0 --triton 3.8.0 --triton 3.7.1 --triton 3.6.0 --triton 3.4.0

A capture given as ``PATH:I,J,...`` keeps only those launches (their indices in the capture's ``launches``).
``n_spills`` and the threshold are vgprscope's (``sources/inductor.py``: the kernel's local memory per thread
/ 4, the kernel's own ``spill_threshold`` on the vendor it was generated for, PyTorch's default elsewhere).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


_TILE = re.compile(r"(BLOCK_[MNK])\s*:\s*tl\.constexpr\s*=\s*(\d+)")


def tiles(data: dict) -> dict[str, str]:
    """Each generated module's matmul tile (``BLOCK 128x128x64``: Inductor's templates write their tile
    into the kernel's source), by the generated module each row's kernel identity names."""
    out = {}
    for k in data["kernels"]:
        text = "".join(f.get("source", "") for f in ((k.get("snapshot") or {}).get("functions") or {}).values())
        found = dict(_TILE.findall(text))
        if len(found) == 3:
            out[k["module"]] = f"BLOCK {found['BLOCK_M']}x{found['BLOCK_N']}x{found['BLOCK_K']}"
    return out


def load(spec: str, tmp: Path) -> tuple[Path, str, dict[str, str]]:
    """The capture file to analyse (a subset written to ``tmp``), how the report names it, its tiles."""
    path, _, picks = spec.partition(":")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    if not picks and not path.endswith(".gz"):
        return Path(path), Path(path).name, tiles(data)
    if picks:
        data["launches"] = [data["launches"][int(i)] for i in picks.split(",")]
    out = tmp / (Path(path).name.removesuffix(".gz").removesuffix(".json") + "-subset.json")
    out.write_text(json.dumps(data))
    return out, Path(path).name + (f" launches {picks}" if picks else ""), tiles(data)


def _registers(rec) -> int | None:
    """The row's register count: VGPRs (AMD, the unified count) or registers per thread (NVIDIA)."""
    u = rec.usage
    if u is None:
        return None
    return getattr(u, "vgpr_total", None) or getattr(u, "regs", None)


def _limit(arch: str) -> int:
    """The most registers a thread (NVIDIA) or a lane (AMD: VGPRs and AGPRs together) can have on ``arch``."""
    from vgprscope.core.archs import get_arch

    a = get_arch(arch)
    return int(getattr(a, "max_regs_per_thread", 0) or a.max_vgprs_total)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--capture", action="append", required=True, help="a capture file, or PATH:I,J,... (repeatable)")
    ap.add_argument("--arch", action="append", required=True)
    ap.add_argument("--triton", action="append", default=[], help="a release (repeatable; default: the installed)")
    ap.add_argument("--about", action="append", default=[], help="a paragraph on where the captures come from")
    ap.add_argument("--out", default=str(ROOT / "reports" / "inductor-spill-threshold.md"))
    args = ap.parse_args()
    import triton

    import vgprscope
    from vgprscope.sources.inductor import spill_verdict

    releases = args.triton or [triton.__version__]
    rows = []  # (capture, kernel, config, arch, release, n_spills | None, threshold | None, status, registers)
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.capture:
            path, shown, tile = load(spec, Path(tmp))
            for release in releases:
                extra = {} if release == triton.__version__ else {"triton": release}
                result = vgprscope.analyze(capture=str(path), arch=args.arch, jobs=1, **extra)
                for r in result.records:
                    v = spill_verdict(r)
                    module = r.identity.module if r.identity else ""
                    cfg = " ".join(x for x in (tile.get(module, ""), r.config.short()) if x)
                    rows.append((shown, r.kernel, cfg, r.arch, release,
                                 v.n_spills if v else None, v.threshold if v else None,
                                 "ok" if r.ok else r.status, _registers(r)))
                    print(*rows[-1], file=sys.stderr)
    compiled = [r for r in rows if r[5] is not None]
    crossing = [r for r in compiled if r[5] > r[6]]
    sides: dict[tuple, dict[str, bool]] = defaultdict(dict)
    for r in compiled:
        sides[(r[0], r[1], r[2], r[3])][r[4]] = r[5] > r[6]
    opposite = [k for k, v in sides.items() if len(set(v.values())) > 1]
    top = sorted(compiled, key=lambda r: (-r[5], -(r[8] or 0)))[:12]
    given = " ".join([*(f"--capture {c}" for c in args.capture), *("--about ..." for _ in args.about[:1]), *(f"--arch {a}" for a in args.arch),
                      *(f"--triton {t}" for t in args.triton)])
    lines = ["# Inductor's spill threshold: real Inductor kernels searched for a crossing", "",
             f"Reproduce: `python scripts/inductor_spill_search.py {given}`. GPU-free; vgprscope "
             f"{vgprscope.__version__}, installed Triton {triton.__version__}, the others as toolchains.", "",
             *(x for a in args.about for x in (a, "")),
             f"Searched: {len({(r[0], r[1], r[2]) for r in rows})} kernel configs x {len(args.arch)} archs "
             f"({', '.join(args.arch)}) x {len(releases)} releases ({', '.join(releases)}) = {len(rows)} rows, "
             f"{len(compiled)} compiled ({len(rows) - len(compiled)} rows a compile error or resource refusal).", "",
             f"**Configs over the threshold: {len(crossing)}. Configs two releases put on opposite sides: "
             f"{len(opposite)}. Largest n_spills: {top[0][5] if top else '-'}.**", ""]
    if crossing:
        lines += ["## Over the threshold (Inductor's autotuner skips these)", "",
                  "| capture | kernel | config | arch | Triton | n_spills | threshold |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {c} | `{k}` | {cfg} | {a} | {t} | {n} | {th} |" for c, k, cfg, a, t, n, th, _, _ in crossing]
        lines.append("")
    if opposite:
        lines += ["## Opposite sides across releases", "", "| capture | kernel | config | arch | " +
                  " | ".join(releases) + " |", "|---|---|---|---|" + "---|" * len(releases)]
        by = {(r[0], r[1], r[2], r[3], r[4]): r for r in compiled}
        for key in opposite:
            cells = [f"{by[(*key, t)][5]} ({'skip' if by[(*key, t)][5] > by[(*key, t)][6] else 'kept'})"
                     if (*key, t) in by else "-" for t in releases]
            lines.append(f"| {key[0]} | `{key[1]}` | {key[2]} | {key[3]} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## The largest n_spills seen (then the most registers)", "",
              "Registers: VGPRs (AMD, the unified count) or registers per thread (NVIDIA), of the arch's most "
              "(`vgprscope/core/archs.py`).", "",
              "| capture | kernel | config | arch | Triton | registers | n_spills | threshold |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {c} | `{k}` | {cfg} | {a} | {t} | {reg} of {_limit(a)} | {n} | {th} |"
              for c, k, cfg, a, t, n, th, _, reg in top]
    refused = [r for r in rows if r[5] is None]
    if refused:
        lines += ["", "## Rows not compiled", "", "| capture | kernel | config | arch | Triton | why |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {c} | `{k}` | {cfg} | {a} | {t} | {s[:120]} |" for c, k, cfg, a, t, _, _, s, _ in refused]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(crossing)} over, {len(opposite)} opposite, largest "
          f"{top[0][5] if top else '-'}", file=sys.stderr)


if __name__ == "__main__":
    main()
