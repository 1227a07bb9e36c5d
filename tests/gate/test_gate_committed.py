"""The committed register baseline (vgprscope-baseline.json) that CI's `vgprscope check` compares against."""

from __future__ import annotations

import re
from pathlib import Path

from vgprscope.flashattn.variants import select_variants
from vgprscope.gate.baseline import SCHEMA_VERSION, load_baseline
from vgprscope.gate.config import load_gate_config


def test_the_committed_baseline_is_readable_pinned_and_has_no_stale_entries():
    """What CI's `vgprscope check` reads: the current schema, the Triton that constraints.txt pins, and only
    entries of bundled variants on the configured archs or the archs a variant declares it is written for
    (VARIANT['archs']: ws-regalloc on sm_90); new variants are the gate's to report, not this test's."""
    root = Path(__file__).resolve().parents[2]
    committed = load_baseline(root / "vgprscope-baseline.json")
    assert committed.schema_version == SCHEMA_VERSION
    pin = re.search(r"^triton==(\S+)$", (root / "constraints.txt").read_text(), re.M)
    assert pin and committed.triton_version == pin[1]
    cfg = load_gate_config(cwd=root)
    variants = select_variants(list(cfg.set.variants))
    kernels = {v.name: v.kernels for v in variants}
    archs = {v.name: {*cfg.set.archs, *v.archs} for v in variants}
    stale = [k for k, e in committed.entries.items()
             if e.kernel not in kernels.get(e.variant, ()) or e.arch not in archs.get(e.variant, ())]
    assert stale == [] and committed.entries
