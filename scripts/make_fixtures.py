"""Regenerate the committed compiler-output fixtures of tests/fixtures (GPU-free).

    python scripts/make_fixtures.py

Each fixture is the raw output of one compile of the bundled baseline; tests/core/test_parsers.py holds the
values expected from them, checked by hand against the files (grep the metadata and comment lines).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from vgprscope.compile.cache import CompileCache
from vgprscope.compile.engine import Engine
from vgprscope.core.archs import get_arch
from vgprscope.flashattn.config import AttentionConfig
from vgprscope.flashattn.source import variant_tasks
from vgprscope.flashattn.variants import get_variant

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

# name: (arch, block_m, block_n, head_dim, num_warps, num_stages) -- chosen for what each exercises
FIXTURES = {
    "gfx942_agpr": ("gfx942", 128, 64, 128, 4, 1),  # AGPRs in the unified file, no spills
    "gfx90a_spills": ("gfx90a", 128, 128, 256, 4, 1),  # VGPR and SGPR spills, 512 registers
    "gfx950_plain": ("gfx950", 128, 64, 128, 4, 1),  # no AGPRs, no spills, 160 KiB LDS arch
    "gfx1100_wave32": ("gfx1100", 128, 64, 128, 4, 1),  # RDNA3: scratch_* spills inside the loops
    "sm80_spills": ("sm_80", 128, 64, 128, 4, 2),  # ptxas stack frame and spill bytes
    "sm90_plain": ("sm_90", 128, 64, 64, 4, 2),  # Hopper, static shared from the cubin
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    engine = Engine(cache=CompileCache(enabled=False))  # fresh compiles, kept in memory for raw_outputs
    for name, (arch, bm, bn, d, w, s) in FIXTURES.items():
        cfg = AttentionConfig(block_m=bm, block_n=bn, head_dim=d, num_warps=w, num_stages=s)
        (task,) = variant_tasks([(get_variant("baseline"), cfg, get_arch(arch), "")], engine)
        (row,) = engine.compile([task])
        out = engine.raw_outputs(task)
        if out is None:
            raise SystemExit(f"{name}: {row.status}")
        meta = {"arch": arch, "config": cfg.as_dict(), "shared": out["shared"], "name": out["name"]}
        if "amdgcn" in out:
            (OUT / f"{name}.amdgcn.gz").write_bytes(gzip.compress(out["amdgcn"].encode(), 9, mtime=0))
        else:
            (OUT / f"{name}.ptxas.log").write_text(out["ptxas_log"])
            (OUT / f"{name}.cuobjdump.txt").write_text(out["cuobjdump"])
            meta["ptxas_version"] = out["ptxas_version"]
        (OUT / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(name, "ok")


if __name__ == "__main__":
    main()
