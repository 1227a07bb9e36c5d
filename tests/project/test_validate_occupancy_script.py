"""The parts of scripts/validate_occupancy_gpu.py that need no GPU: the grid, the comparison logic against a
fake driver, the reports and the exit status."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import sys
from pathlib import Path

import pytest

from vgprscope.core.archs import get_arch
from vgprscope.core.occupancy.nvidia import nvidia_occupancy

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "validate_occupancy_gpu.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("validate_occupancy_gpu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_importing_the_script_does_not_import_torch_or_triton(script):
    import subprocess

    code = (f"import importlib.util, sys; s = importlib.util.spec_from_file_location('v', {str(SCRIPT)!r}); "
            "m = importlib.util.module_from_spec(s); sys.modules['v'] = m; s.loader.exec_module(m); "
            "print('torch' in sys.modules, 'triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_grid_is_complete_distinct_and_interleaved(script):
    grid = script.config_grid()
    assert len(grid) == len(script.HEAD_DIMS) * len(script.TILES) * len(script.WARPS_STAGES)
    assert len({tuple(sorted(c.items())) for c in grid}) == len(grid)
    first = grid[: len(script.WARPS_STAGES) * 2]  # the head of the list already spans every dimension
    assert {(c["num_warps"], c["num_stages"]) for c in first} == set(script.WARPS_STAGES)
    assert {c["head_dim"] for c in first} == set(script.HEAD_DIMS)
    pairs = script.plan(["a", "b"], grid)
    assert len(pairs) == 2 * len(grid) and [v for v, _ in pairs[:2]] == ["a", "b"]


def test_enough_configs_for_the_bundled_variants(script):
    from vgprscope.flashattn.variants import load_variants

    assert len(script.plan(list(load_variants()), script.config_grid())) >= 100


class FakeDriver:
    """Answers like the CUDA driver would if it agreed with vgprscope, except where told otherwise."""

    binding = "fake"

    def __init__(self, arch, wrong_at=None):
        self.arch, self.wrong_at = arch, wrong_at
        self.facts = None

    def max_active_blocks(self, handle, threads, dynamic):
        f = self.facts
        value = nvidia_occupancy(self.arch, f.regs, f.static_shared + dynamic, threads).value
        return value + 1 if (threads, dynamic) == self.wrong_at else value

    def attribute(self, handle, name):
        return {"NUM_REGS": 128, "SHARED_SIZE_BYTES": 0, "MAX_THREADS_PER_BLOCK": 256,
                "MAX_DYNAMIC_SHARED_SIZE_BYTES": 232448 - 0, "PREFERRED_SHARED_MEMORY_CARVEOUT": -1,
                "LOCAL_SIZE_BYTES": 0}[name]


def _facts(script, **kw):
    base = dict(name="attn_fwd", handle=1, regs=128, static_shared=0, dynamic_shared=65536, num_warps=4,
                max_threads=256, max_dynamic_shared=232448, carveout_pct=None, local_bytes=0)
    return script.KernelFacts(**(base | kw))


def test_compare_kernel_launch_and_sweep(script):
    arch = get_arch("sm_90")
    facts = _facts(script)
    drv = FakeDriver(arch)
    drv.facts = facts
    rows = script.compare_kernel(arch, facts, drv, "baseline", "128x64 d128 w4 s2", sweep=True)
    launch, sweep = rows[0], rows[1:]
    assert launch.kind == "launch" and launch.threads == 128 and launch.dynamic_shared == 65536
    assert launch.ours == launch.driver == nvidia_occupancy(arch, 128, 65536, 128).value and launch.match
    assert {r.threads for r in sweep} == set(range(32, 257, 32))
    assert {r.dynamic_shared for r in sweep} == {0, 1024, 8192, 49152, 65536, 232448}
    assert all(r.match for r in sweep)
    assert script.sweep_points(_facts(script, max_dynamic_shared=49152 - 1024)) == [
        (t, d) for t in range(32, 257, 32) for d in (0, 1024, 8192, 48128)]


def test_kernel_facts_from_a_loaded_kernel(script):
    class Meta:
        name, shared, num_warps = "attn_fwd", 49152, 8

    class Kernel:
        function, metadata = 1234, Meta()

    f = script.kernel_facts("attn_fwd", Kernel(), FakeDriver(get_arch("sm_90")))
    assert (f.handle, f.regs, f.dynamic_shared, f.num_warps, f.carveout_pct) == (1234, 128, 49152, 8, None)


def test_mismatches_reports_and_exit_status(script, tmp_path):
    arch = get_arch("sm_80")
    facts = _facts(script, max_dynamic_shared=1024)
    drv = FakeDriver(arch, wrong_at=(64, 1024))
    drv.facts = facts
    run = script.Run(machine="GPU: fake, driver 0.0, torch x, Triton y, 2026-01-01, git abc", command="python x")
    run.comparisons = script.compare_kernel(arch, facts, drv, "baseline", "64x64 d64 w4 s1", sweep=True)
    run.configs_tried, run.skipped, run.failed = 3, [("small-tiles", "128x64", "block_m 128 too big")], \
        [("remat-q", "128x128", "OutOfResources: shared memory")]
    # the launch's 64 KiB is over the function's max dynamic size: said in the row
    assert "MAX_DYNAMIC_SHARED_SIZE_BYTES" in run.comparisons[0].detail
    bad = run.mismatches
    assert [(c.kind, c.threads, c.dynamic_shared) for c in bad] == [("sweep", 64, 1024)]
    assert script.exit_status(run) == 1
    md_path, main_csv, sweep_csv = script.write_reports(run, tmp_path / "reports")
    md = md_path.read_text()
    assert md.startswith("_GPU: fake") and "Command: `python x`" in md
    assert "1 mismatches" in md and "## Mismatches" in md and "OutOfResources" in md and "block_m 128 too big" in md
    rows = list(csv.DictReader(main_csv.open()))
    assert [r["kind"] for r in rows] == ["launch", "sweep"] and rows[1]["match"] == "False"
    with gzip.open(sweep_csv, "rt") as f:
        assert len(list(csv.DictReader(f))) == len(run.comparisons) - 1
    run.comparisons = [c for c in run.comparisons if c.match]
    assert script.exit_status(run) == 0
    run.comparisons = []
    assert script.exit_status(run) == 2


def test_without_a_gpu_it_exits_2(script, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    assert script.main(["--out", str(tmp_path)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "occupancy-validation.md").exists()
