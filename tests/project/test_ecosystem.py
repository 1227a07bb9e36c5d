"""The ecosystem run's committed results (tests/fixtures/ecosystem: `.ci/gpu_ecosystem.sh` on an H200, then
`python -m tools.reports ecosystem tests/fixtures/ecosystem --collect OUTDIR`): the report regenerates from
them; FlagGems' host-TMA matmul and its generated pointwise kernels compile GPU-free from the committed capture
(under the GPU machine's Triton 3.6: equal to the JIT's cubins; under the installed release: on AMD archs);
FlagGems' LibTuner kept every config; each library's and model's capture compiles for AMD and NVIDIA archs."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import reports

import vgprscope

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "ecosystem"
REPORT = ROOT / "reports" / "ecosystem-h200.md"
WORKLOADS = ("liger-kernel", "flag-gems", "fla-core", "gemlite", "torchao", "llama-decoder", "mlp-max-autotune")


def load(name: str) -> dict[str, Any]:
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt") as f:
        return json.load(f)


# The GPU machine installed the libraries' wheels with `pip install --target /tmp/site` (its image has no
# network and the run's Python is the image's): a site-packages directory on a user's machine. The tests read
# the capture as made there, the libraries installed as pip installs them for users.
GPU_TARGET = "/tmp/site/"
SITE_PACKAGES = "/opt/gpu-machine/lib/python3.12/site-packages/"


def sub_capture(tmp_path: Path, data: dict[str, Any], keep) -> Path:
    """The workload's capture with only the launches ``keep(qualname, launch, nth)`` takes (nth: the launch's
    place among its kernel's), as a file; its libraries' files where pip installs them (``SITE_PACKAGES``)."""
    cap = json.loads(json.dumps(data["capture"]).replace(GPU_TARGET, SITE_PACKAGES))
    seen: Counter = Counter()
    launches = []
    for x in cap["launches"]:
        name = cap["kernels"][x["kernel"]]["qualname"]
        if keep(name, x, seen[name]):
            launches.append(x)
        seen[name] += 1
    cap["launches"] = launches
    path = tmp_path / f"{data['workload']}-part.json"
    path.write_text(json.dumps(cap))
    return path


HOST_TMA = "mm_kernel_general_host_tma"
GENERATED = ("gelu_none_kernel_rank_1", "gelu_backward_none_kernel_rank_1")


def flag_gems_part(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """FlagGems' host-TMA matmul at three configs of distinct tiles, and its generated gelu kernels."""
    data = load("flag-gems")
    blocks: set[str] = set()

    def keep(name: str, x: dict[str, Any], nth: int) -> bool:
        if name in GENERATED:
            return True
        if name != HOST_TMA or len(blocks) == 3:
            return False
        tile = json.dumps([a["descriptor"]["fields"]["block_shape"] for a in x["args"] if "descriptor" in a])
        if tile in blocks:
            return False
        blocks.add(tile)
        return True

    return data, sub_capture(tmp_path, data, keep)


def test_the_report_regenerates_from_the_committed_results(tmp_path):
    done = reports("ecosystem", str(FIXTURES), "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / REPORT.name).read_text() == REPORT.read_text()


def test_flag_gems_host_tma_and_generated_kernels_equal_the_jits_cubins_under_3_6(tmp_path, release36):
    """Compiled here from the capture's snapshot (FlagGems needs a GPU to import), for sm_90 under the GPU
    machine's Triton: each row equals the GPU machine's row for the same launch, which equals a cubin of the
    JIT's cache (cuobjdump)."""
    data, part = flag_gems_part(tmp_path)
    records = vgprscope.analyze(capture=str(part), arch="sm_90", triton="3.6.0", jobs=2).records
    assert len(records) >= 5 and {r.kernel for r in records} == {HOST_TMA, *GENERATED}
    on_gpu = {(r["kernel"], r["slot"]): (r["regs"], r["shared"]) for r in data["sm_90"] if "regs" in r}
    jit = Counter((c["name"], c["regs"], c["shared"]) for c in data["cubins"])
    for r in records:
        assert r.ok, (r.kernel, r.status)
        got = (r.usage.regs, r.usage.shared_static + r.usage.shared_dynamic)
        assert got == on_gpu[(r.kernel, r.slot)], r.kernel
        assert jit[(r.kernel, *got)] > 0, r.kernel


def test_flag_gems_host_tma_compiles_for_amd_and_its_generated_kernels_say_why_not(tmp_path, release36):
    """On AMD (under the GPU machine's Triton) the host-TMA matmul compiles; the generated gelu kernels read the
    libdevice FlagGems bound on the NVIDIA machine (CUDA's __nv_erff), which AMD's backend refuses, with that
    reason. (Triton 3.9 refuses them on every arch: they use block pointers, which it removed.)"""
    _, part = flag_gems_part(tmp_path)
    records = vgprscope.analyze(capture=str(part), arch=["gfx942", "gfx950"], triton="3.6.0", jobs=2).records
    tma = [r for r in records if r.kernel == HOST_TMA]
    assert len(tma) == 6 and all(r.ok for r in tma), [r.status for r in tma]
    generated = [r for r in records if r.kernel in GENERATED]
    assert generated and all("__nv_" in r.status for r in generated), [r.status for r in generated]


def test_flag_gems_libtuner_kept_every_config():
    """Issue 34's GPU check: a capture through FlagGems' real LibTuner (mm, addmm, bmm) holds, for each tuned
    key, every config its list declares, and the GPU machine's analysis compiled each of them."""
    data = load("flag-gems")
    cap = data["capture"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for x in cap["launches"]:
        name = cap["kernels"][x["kernel"]]["qualname"]
        if name in (HOST_TMA, "addmm_kernel", "bmm_kernel") and x.get("autotune"):
            groups.setdefault(json.dumps([name, x["autotune"]["key"]]), []).append(x)
    assert groups
    for launches in groups.values():
        counts = {(x["autotune"]["count"], x["autotune"]["declared"]) for x in launches}
        assert len(counts) == 1
        count, declared = counts.pop()
        assert count == declared and sorted(x["autotune"]["index"] for x in launches) == list(range(count))
    rows = [r for r in data["sm_90"] if r["kernel"] == HOST_TMA]
    assert len(rows) == sum(map(len, (g for k, g in groups.items() if HOST_TMA in k)))
    assert all(r["status"] == "ok" for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("name", WORKLOADS)
def test_each_capture_compiles_for_amd_and_nvidia(tmp_path, name):
    """One launch of each of (up to eight of) the workload's kernels, compiled here for gfx942 and sm_90 from
    the committed capture (where the library is not installed: from its snapshot)."""
    data = load(name)
    kernels: set[str] = set()

    def keep(qualname: str, x: dict[str, Any], nth: int) -> bool:
        if qualname in kernels or len(kernels) == 8 or nth:
            return False
        kernels.add(qualname)
        return True

    part = sub_capture(tmp_path, data, keep)
    records = vgprscope.analyze(capture=str(part), arch=["gfx942", "sm_90"], jobs=2).records
    assert {r.kernel for r in records} == kernels
    assert Counter(r.arch for r in records) == {"gfx942": len(kernels), "sm_90": len(kernels)}
    for r in records:
        # compiled, or refused by the arch's rules or its compiler: never a kernel that could not be loaded
        assert r.ok or not any(w in r.status for w in ("capture again", "does not exist", "cannot import")), r.status


def test_ecosystem_cpu_analyses_a_committed_capture_into_an_archive_collect_reads(tmp_path):
    """`ecosystem-cpu` (the AMD rows a GPU call had no time for, made on a CPU): one launch of the Llama decoder's
    committed capture for gfx942, archived as llama-decoder-cpu.tar.xz with its step, under the name the collect
    step reads over the GPU run's archives; an unknown workload is one line and a non-zero exit."""
    import tarfile

    data = load("llama-decoder")
    data["capture"]["launches"] = data["capture"]["launches"][:1]
    results = tmp_path / "results"
    results.mkdir()
    with gzip.open(results / "llama-decoder.json.gz", "wt") as f:
        json.dump(data, f)
    done = reports("ecosystem-cpu", str(results), "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"),
                   "--arch", "gfx942", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / "out" / "llama-decoder-cpu.tar.xz") as tar:
        assert sorted(tar.getnames()) == ["llama-decoder/analyze-gfx942.json", "llama-decoder/status-cpu.json"]
        rows = json.load(tar.extractfile("llama-decoder/analyze-gfx942.json"))["rows"]
        status = json.load(tar.extractfile("llama-decoder/status-cpu.json"))
    assert [r["arch"] for r in rows] == ["gfx942"] and rows[0]["status"] == "ok", rows[0]["status"]
    assert status["steps"]["analyze-gfx942"]["rc"] == 0 and "--triton 3.6.0" in status["steps"]["analyze-gfx942"]["cmd"]
    bad = reports("ecosystem-cpu", str(results), "--only", "nope")
    assert bad.returncode != 0 and "allowed: liger-kernel" in bad.stderr and "Traceback" not in bad.stderr
