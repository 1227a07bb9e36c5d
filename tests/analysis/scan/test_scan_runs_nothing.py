"""``vgprscope scan`` runs nothing it reads: a line of Python planted at the top of every kind of file it reads (a
generated module, Inductor's graph module, ``.best_config``, every file of a Triton cache entry, a launcher
module's C source, an autotuner's timings), in the kernel's ``def`` line, or reached from the kernel's body
through a module, never runs, on a cold cache, in this process or a compile worker's. A generated kernel is
compiled from its text with the facts read statically; what it reads that would need the module to run is a
row saying so."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli
from fixture_paths import unpack

from vgprscope.sources.inductor import inductor_capture
from vgprscope.sources.triton_cache import read_entry

FIXTURES = ROOT / "tests" / "fixtures"


def _line(mark: Path) -> str:
    return f"open({str(mark)!r}, 'w').write('ran')"


def _plant(path: Path, mark: Path) -> None:
    """The line at the top of the file, text or binary."""
    path.write_bytes(_line(mark).encode() + b"\n" + path.read_bytes())


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Path, Path]:
    """An Inductor cache and a Triton cache (NVIDIA and AMD entries, Triton 3.6.0's: the fixtures an H100 run and
    scripts/make_scan_fixture.py wrote) with the line planted everywhere scan reads; the file it would create."""
    tmp = tmp_path_factory.mktemp("planted")
    mark = tmp / "PWNED"
    h100 = tmp / "h100"
    with tarfile.open(FIXTURES / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, h100)
    old = tmp / "old"
    with tarfile.open(FIXTURES / "triton36_cache.tar.xz") as tar:
        unpack(tar, old)
    root = tmp / "cache"
    inductor = root / "inductor"
    for module in ("qg", "vt", "q6"):  # two kernels' modules and the graph's output code
        shutil.copytree(h100 / "inductor" / module, inductor / module)
    line = _line(mark)
    for module in inductor.glob("*/*.py"):  # the generated modules, and the graph's output code
        _plant(module, mark)
    for best in inductor.glob("*/*.best_config"):
        _plant(best, mark)
    # a kernel whose def line would run it, and one whose body reaches it through a module it imports
    add6 = next(inductor.glob("qg/*.py"))
    text = add6.read_text()
    (inductor / "d1").mkdir()
    (inductor / "d1" / "cd1defaultline.py").write_text(text.replace(
        "XBLOCK : tl.constexpr):", f"XBLOCK : tl.constexpr, FLAG : tl.constexpr = {line}):"))
    (inductor / "d2").mkdir()
    (inductor / "d2" / "cd2bodycall.py").write_text("import os\n" + text.replace(
        "    xnumel = 1048576\n", f"    xnumel = 1048576\n    os.system('touch {mark}')\n"))
    triton = root / "triton"
    nvidia, amd = (next(p for p in old.iterdir() if read_entry(p).name == "scale_add" and read_entry(p).target[0] == b)
                   for b in ("cuda", "hip"))
    for entry in (nvidia, amd):  # each file of the entry planted in a copy of its own
        shutil.copytree(entry, triton / entry.name)
        for i, f in enumerate(sorted(entry.iterdir())):
            copy = triton / f"{entry.name[:40]}PLANTED{i:04d}"
            shutil.copytree(entry, copy)
            _plant(copy / f.name, mark)
    helper = triton / "HELPERMODULEHELPERMODULEHELPERMODULEHELPERMODULEHELP"
    helper.mkdir()
    (helper / "main.c").write_text(line + "\n")
    (helper / "cuda_utils.cpython-311-x86_64-linux-gnu.so").write_text(line + "\n")
    timings = triton / "AUTOTUNETIMINGSAUTOTUNETIMINGSAUTOTUNETIMINGSAUTOTUN"
    timings.mkdir()
    (timings / "k.autotune.json").write_text(line + "\n")
    return root, mark


def test_scan_runs_nothing_it_reads(planted, tmp_path):
    root, mark = planted
    done = cli("scan", str(root), "--jobs", "2", "--arch", "gfx942", "--format", "csv",
               env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cold")})
    assert not mark.exists(), "scan ran a line of a file it read"
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout.splitlines()) > 10  # the clean entries and the planted modules' kernels are rows
    # in this process too (the library call), and a worker in it
    from vgprscope.analysis.scan.core import scan

    result = scan(root, jobs=1, use_cache=False)
    assert not mark.exists()
    rows = {(r.kernel, r.source, str(dict(r.extras).get("module", ""))): r for r in result.records}
    assert any(r.ok and r.source == "inductor-cache" for r in rows.values())


def test_a_generated_kernel_is_compiled_from_its_text_and_what_would_run_is_a_reason(planted):
    """The planted line at a module's top is never run and the kernel below compiles from its text; a kernel
    whose def line computes something, or whose body calls what a module it imports holds, is a row saying why."""
    root, mark = planted
    cache = inductor_capture(root / "inductor")
    why = {k.file.parent.name: reason for k, reason in cache.unread}
    assert why["d1"].startswith("scan compiles a generated kernel from its text without running its module: its "
                                "def line computes open(")
    assert why["d2"] == ("scan compiles a generated kernel from its text without running its module: os comes from "
                         "os, which scan does not import (it imports only triton, math, torch._inductor.runtime)")
    assert {x.kernel.qualname for x in cache.capture.launches} >= {"triton_poi_fused__unsafe_view_add_6"}
    assert not mark.exists()


def test_a_planted_entrys_json_is_corrupt_and_its_other_files_are_read_as_data(planted):
    """Its metadata is JSON: with the line it is a corrupt entry; the artifacts are read by the tools that read
    them (cuobjdump, the AMDGCN parser) or compiled as IR, never run."""
    from vgprscope.analysis.scan.core import scan

    root, mark = planted
    result = scan(root / "triton", jobs=1, use_cache=False)
    by_entry = {dict(r.extras)["entry"]: r for r in result.records}
    corrupt = {e: r.status for e, r in by_entry.items() if "PLANTED" in e and r.status.startswith("corrupt entry")}
    assert len(corrupt) == 4  # __grp__ and the metadata, of each entry
    assert not mark.exists()
