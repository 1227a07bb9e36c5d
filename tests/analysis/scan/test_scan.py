"""vgprscope scan on a Triton cache this test fills: resources read from the stored artifacts, equal to
the compile's own; partial and corrupt entries are rows with reasons; --arch recompiles the TTIR."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from capture_helpers import ROOT, USER_KERNELS, cli, usage_counts
from fixture_paths import unpack

from vgprscope.analysis.scan.core import scan
from vgprscope.compile.engine import triton_version

FIXTURES = ROOT / "tests" / "fixtures"

FILL = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from vgprscope.runtime.stored import cuobjdump_resources as _cuobjdump_resources
from vgprscope.core.parse.amdgcn import parse_amdgcn
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources
from my_ops import add

out = {}
for arch, target in (("gfx942", GPUTarget("hip", "gfx942", 64)), ("sm_90", GPUTarget("cuda", 90, 32))):
    d = [["tt.divisibility", 16]]
    src = ASTSource(fn=add, signature={"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                    constexprs={"BLOCK": 256}, attrs={(0,): d, (1,): d, (2,): d})
    k = triton.compile(src, target=target, options={"num_warps": 4})
    if arch == "gfx942":
        u = parse_amdgcn(k.asm["amdgcn"], k.metadata.shared)
        out[arch] = {"vgpr_total": u.vgpr_total, "sgpr": u.sgpr, "lds": u.lds_bytes, "scratch": u.scratch_bytes}
    else:
        r = parse_cuobjdump_resources(_cuobjdump_resources(k.asm["cubin"]), k.metadata.name)
        out[arch] = {"regs": r["REG"], "stack": r.get("STACK", 0), "shared": r.get("SHARED", 0) + k.metadata.shared}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> tuple[Path, dict]:
    directory = tmp_path_factory.mktemp("triton-cache")
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_CACHE_DIR": str(directory)}
    done = subprocess.run([sys.executable, "-c", FILL, str(USER_KERNELS)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    direct = json.loads(done.stdout.strip().splitlines()[-1])
    entries = sorted(p for p in directory.iterdir() if p.is_dir())
    assert len(entries) == 2
    # a compile that was interrupted (no __grp__ file yet) and one whose metadata is garbage
    partial = directory / "PARTIAL"
    shutil.copytree(entries[0], partial)
    for f in partial.glob("__grp__*"):
        f.unlink()
    corrupt = directory / "CORRUPT"
    shutil.copytree(entries[0], corrupt)
    (corrupt / "add.json").write_text('{"hash": "trunc')
    add_helper_modules(directory)
    return directory, direct


def add_helper_modules(directory: Path) -> None:
    """The entries Triton's runtime/build.py writes for the C modules it compiles, as a GPU run leaves them
    (listed from a cache an H100 run of Triton 3.6 wrote): the drivers' utilities and the per-signature
    launcher, each a shared object named NAME + EXT_SUFFIX alone in an entry keyed by its source's hash;
    one with its C source beside it, one still holding the temporary directory FileCacheManager.put
    writes through."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for key, files in (("XU5DT2AO5BD5AEHEYGLPP5LRDFHHCUEJT4LGDVLB4STXUGVGHFPA", [f"cuda_utils{suffix}"]),
                       ("HEUKIG4JTP2YEOVQFSWBTVS6LZOIS6UFCDGRSN4HPQYM3RTA6GRQ", [f"__triton_launcher{suffix}"]),
                       ("AMDUTILSAMDUTILSAMDUTILSAMDUTILSAMDUTILSAMDUTILSAMDU", [f"hip_utils{suffix}", "main.c"])):
        entry = directory / key
        entry.mkdir()
        for name in files:
            (entry / name).write_bytes(b"\x7fELF" if name.endswith(".so") else b"int main(void) { return 0; }\n")
    (directory / "HEUKIG4JTP2YEOVQFSWBTVS6LZOIS6UFCDGRSN4HPQYM3RTA6GRQ" / "tmp.pid_1234_0a1b").mkdir()


def test_scan_reads_stored_artifacts_with_the_compile_counts(cache):
    directory, direct = cache
    result = scan(directory, jobs=2)
    ok = {r.arch: r for r in result.records if r.ok}
    assert set(ok) == {"gfx942", "sm_90"}
    assert {a: usage_counts(r) for a, r in ok.items()} == direct
    assert all(r.kernel == "add" and r.variant == "my_ops.py" and dict(r.extras)["cache"] == "stored"
               for r in ok.values())
    assert ok["gfx942"].occupancy is not None and ok["sm_90"].occupancy is not None
    # no stack frame and no local memory in the cubin: nothing spilled, and no ptxas is run to say so
    nv = ok["sm_90"].usage
    assert (nv.stack_bytes, nv.local_bytes, nv.spill_store_bytes, nv.spill_load_bytes) == (0, 0, 0, 0)
    assert nv.spills_known and nv.ptxas_version is None
    assert nv.spills_from == "the stored cubin: no stack frame, so nothing spilled"
    reasons = sorted(r.status for r in result.records if not r.ok)
    assert reasons == ["corrupt entry: JSONDecodeError: Unterminated string starting at: line 1 column 10 (char 9)",
                       "partial entry: no __grp__ file (the compile was interrupted, or it is not a kernel entry)"]
    # Triton's launcher and utility modules are neither rows nor "partial or corrupt": counted apart
    assert result.summary().endswith("7 entries, 2 read, 2 partial or corrupt, 3 of Triton's launcher and "
                                     "utility modules skipped")
    assert {e.name for e in result.entries if e.helper} == {"cuda_utils", "__triton_launcher", "hip_utils"}
    assert not any(r.kernel in ("cuda_utils", "__triton_launcher", "hip_utils") for r in result.records)


def test_scan_retargets_the_ttir_to_other_archs(cache):
    from vgprscope.core.archs import get_arch

    directory, direct = cache
    result = scan(directory, [get_arch("gfx942"), get_arch("sm_90"), get_arch("gfx950")], jobs=2)
    again = [r for r in result.records if dict(r.extras)["cache"] == "recompiled"]
    # each of the two entries on three archs; the broken entries are not recompiled
    assert len(again) == 6 and all(r.ok for r in again), [r.status for r in again]
    # recompiling an entry's TTIR for the arch it was built for gives the stored counts back
    for arch in ("gfx942", "sm_90"):
        same = [r for r in again if r.arch == arch]
        assert any(usage_counts(r) == direct[arch] for r in same), arch


def test_scan_cli_and_bad_directory(cache, tmp_path):
    directory, _ = cache
    done = cli("scan", str(directory), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == 4 and {r["source"] for r in rows} == {"triton-cache"}
    assert "3 of Triton's launcher and utility modules skipped" in done.stderr
    done = cli("scan", str(tmp_path / "nope"))
    assert done.returncode == 2 and done.stderr.strip().endswith("does not exist")


def test_scan_of_a_file_says_it_is_a_file(tmp_path):
    f = tmp_path / "kernel.py"
    f.write_text("")
    done = cli("scan", str(f))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"vgprscope: error: {f} is a file, not a Triton cache directory; "
                                                "give the directory (TRITON_CACHE_DIR, by default ~/.triton/cache)"]


def test_scan_names_rows_by_kernel_and_takes_wide(cache):
    """The rows name the kernel, its file beside it; --wide (which the legend offers) is taken."""
    directory, _ = cache
    done = cli("scan", str(directory), env={"COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(lines[i - 1] for i, ln in enumerate(lines) if ln and set(ln) == {"─"})
    assert header.split()[:3] == ["kernel", "arch", "file"]
    assert any(ln.split()[:3] == ["add", "gfx942", "my_ops.py"] for ln in lines)
    assert "--wide: every field" in done.stdout and all(len(ln) <= 100 for ln in lines)
    wide = cli("scan", str(directory), "--wide", env={"COLUMNS": "100"})
    assert wide.returncode == 0, wide.stderr
    head = next(ln for ln in wide.stdout.splitlines() if ln.startswith("kernel "))
    assert head.split()[:3] == ["kernel", "file", "arch"] and "SGPRs" in head and "next step" in head


# ---- a cache another Triton release wrote ----------------------------------------------------------------
# tests/fixtures/triton36_cache.tar.xz: what Triton 3.6.0 left in its cache compiling a few kernels for sm_90 and
# gfx942 (scripts/make_scan_fixture.py); triton36_cache.json: what that release's own cuobjdump and ptxas say of
# each NVIDIA entry. Read here under another Triton, with and without a 3.6.0 toolchain.

OLD = "3.6.0"


@pytest.fixture(scope="module")
def old_cache(tmp_path_factory) -> tuple[Path, dict]:
    import tarfile

    directory = tmp_path_factory.mktemp("triton36-cache")
    with tarfile.open(FIXTURES / "triton36_cache.tar.xz") as tar:
        unpack(tar, directory)
    truth = json.loads((FIXTURES / "triton36_cache.json").read_text())
    assert truth["triton_version"] == OLD
    return directory, truth["entries"]


@pytest.fixture
def no_toolchains(tmp_path, monkeypatch):
    """An empty toolchain store: no release but the installed one can compile or read."""
    monkeypatch.setenv("VGPRSCOPE_TOOLCHAIN_DIR", str(tmp_path / "no-toolchains"))


@pytest.fixture(scope="module")
def release36():
    """Triton 3.6.0 as a toolchain (installed once per session into $VGPRSCOPE_TOOLCHAIN_DIR); skipped where it
    cannot be had (no network)."""
    from vgprscope.compile import toolchains

    if triton_version() == OLD:
        pytest.skip(f"the installed Triton is {OLD}: the fixture is not another release's cache here")
    try:
        return toolchains.release(OLD)
    except toolchains.ToolchainError as exc:
        pytest.skip(f"Triton {OLD} cannot be installed as a toolchain here: {exc}")


def _stored(result) -> dict[str, object]:
    return {dict(r.extras)["entry"]: r for r in result.records if dict(r.extras)["cache"] == "stored"}


def test_another_releases_cache_reads_registers_and_memory_from_the_stored_cubin(old_cache, no_toolchains):
    """Registers, stack and shared memory are the stored cubin's (not a re-run of this machine's ptxas, which
    is not the one that built it); spill bytes are zero where the cubin has no stack frame to spill to, and
    unknown elsewhere, the row naming the release that wrote the entry and how to get its ptxas."""
    directory, truth = old_cache
    if triton_version() == OLD:
        pytest.skip(f"the installed Triton is {OLD}")
    rows = _stored(scan(directory, jobs=1))
    assert set(truth) <= set(rows)
    for entry, t in truth.items():
        r = rows[entry]
        u = r.usage
        assert r.ok, r.status
        assert (u.regs, u.stack_bytes, u.shared_static, u.shared_dynamic) == \
               (t["regs"], t["stack"], t["shared_static"], t["shared_dynamic"]), t["kernel"]
        assert dict(r.extras)["written_by"] == f"Triton {OLD}"
        assert u.counts_from == "the stored cubin (cuobjdump --dump-resource-usage)"
        assert u.ptxas_version is None  # no ptxas of this machine produced a number of this row
        if t["stack"] == 0:
            assert (u.spill_store_bytes, u.spill_load_bytes) == (0, 0) and u.spills_known
            assert u.spills_from == "the stored cubin: no stack frame, so nothing spilled"
        else:
            assert (u.spill_store_bytes, u.spill_load_bytes) == (None, None) and not u.spills_known
            assert u.spills_from.startswith(f"unknown: the cubin was built by Triton {OLD}'s ptxas; this ptxas ")
            assert u.spills_from.endswith(f"; add --triton {OLD} for its ptxas")
            assert r.occupancy is not None  # registers and shared memory are known: occupancy is
    matmul = next(r for e, r in rows.items() if e in truth and truth[e]["kernel"] == "matmul")
    from vgprscope.report.rows import fmt_spills

    assert fmt_spills(matmul) == "?"
    # the table's spills cell: "?" and a footnote that says why
    done = cli("scan", str(directory), env={"COLUMNS": "100", "VGPRSCOPE_TOOLCHAIN_DIR": os.environ[
        "VGPRSCOPE_TOOLCHAIN_DIR"]})
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("matmul "))
    ref = line.split("? ", 1)[1].split()[0]
    assert ref.startswith("[") and any(ln.startswith(f"{ref} unknown: the cubin was built by Triton {OLD}'s")
                                       for ln in done.stdout.splitlines())
    assert all(len(ln) <= 100 for ln in done.stdout.splitlines())


def test_another_releases_cache_takes_spills_from_the_ptxas_that_built_it(old_cache, release36):
    """With the writing release installed as a toolchain, its ptxas rebuilds each stored cubin with a stack frame
    (every section but the line table, which stamps the source file's mtime where the fixture was made and zero
    here, where that file does not exist), so its spill figures are the cubin's: equal to that release's own
    ptxas -v. A cubin without one spilled nothing: no ptxas runs for it."""
    directory, truth = old_cache
    rows = _stored(scan(directory, jobs=1))
    assert any(t["stack"] for t in truth.values()) and not all(t["stack"] for t in truth.values())
    for entry, t in truth.items():
        u = rows[entry].usage
        assert rows[entry].ok, rows[entry].status
        assert (u.regs, u.stack_bytes, u.spill_store_bytes, u.spill_load_bytes) == \
               (t["regs"], t["stack"], t["spill_store_bytes"], t["spill_load_bytes"]), t["kernel"]
        if not t["stack"]:
            assert u.ptxas_version is None and u.spills_from == "the stored cubin: no stack frame, so nothing spilled"
            continue
        assert f"release {t['ptxas_version']}," in u.ptxas_version  # "Cuda compilation tools, release 12.8, V12.8.93"
        assert u.spills_from == f"ptxas {t['ptxas_version']} (Triton {OLD}'s), which rebuilds the stored cubin"
    # named on the command line, the same release gives the same rows
    done = cli("scan", str(directory), "--triton", OLD, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["extras"]["entry"]: r["usage"] for r in json.loads(done.stdout)["rows"]}
    assert {e: (rows[e]["spill_store_bytes"], rows[e]["spill_load_bytes"]) for e in truth} == \
           {e: (t["spill_store_bytes"], t["spill_load_bytes"]) for e, t in truth.items()}


def _recompiled(result) -> list:
    return [r for r in result.records if dict(r.extras)["cache"] == "recompiled"]


def test_retargeting_another_releases_ttir_says_which_release_wrote_it(old_cache, no_toolchains):
    """TTIR is read only by the release that wrote it: without it, each retargeted row says which release
    wrote the entry and how to compile with it, in one line; nothing is compiled by another Triton."""
    directory, truth = old_cache
    if triton_version() == OLD:
        pytest.skip(f"the installed Triton is {OLD}")
    from vgprscope.core.archs import get_arch

    again = _recompiled(scan(directory, [get_arch("gfx942"), get_arch("sm_90")], jobs=1))
    assert again and not any(r.ok for r in again)
    for r in again:
        assert "\n" not in r.status and r.usage is None
        if r.kernel == "gelu_tanh" and r.arch == "gfx942":
            continue
        assert r.status == (f"TTIR written by Triton {OLD}: Triton {triton_version()} cannot read it; add "
                            f"--triton {OLD} to compile it with that release"), r.status


def test_retargeting_across_vendors_drops_the_other_vendors_options_and_repeats(old_cache, no_toolchains):
    """An NVIDIA row retargeted from AMD entries carries no AMD option, and two entries that differ only in
    one make one row; an AMD row from an NVIDIA entry carries no maxnreg; a kernel calling NVIDIA's libdevice
    says in one line that an AMD target cannot take it."""
    directory, _ = old_cache
    from vgprscope.core.archs import get_arch

    result = scan(directory, [get_arch("gfx942"), get_arch("sm_90")], jobs=1)
    again = _recompiled(result)
    add_sm90 = [r for r in again if r.kernel == "scale_add" and r.arch == "sm_90"]
    # three scale_add entries (sm_90; gfx942 plain and with waves_per_eu=3): the two gfx942 ones are one launch
    assert len(add_sm90) == 2, [r.config.short() for r in add_sm90]
    amd_only = {"waves_per_eu", "matrix_instr_nonkdim", "kpack"}
    for r in again:
        opts = dict(r.config.options)
        assert not (amd_only & set(opts)) if r.arch == "sm_90" else "maxnreg" not in opts, (r.arch, opts)
    gelu = [r for r in again if r.kernel == "gelu_tanh" and r.arch == "gfx942"]
    assert len(gelu) == 1
    assert gelu[0].status == ("calls NVIDIA's libdevice (__nv_tanhf), which an AMD target cannot link: its TTIR "
                              "does not cross vendors; compile the kernel's source for gfx942 instead")
    assert "1 retargeted launch identical to another entry's (other vendor's options dropped), shown once" \
        in result.summary()


def test_retargeting_with_the_release_that_wrote_the_ttir(old_cache, release36):
    """With the writing release as a toolchain the TTIR compiles there: rows are that release's, and the entry
    recompiled for the arch it was built for gives the stored counts back."""
    directory, truth = old_cache
    from vgprscope.core.archs import get_arch

    again = _recompiled(scan(directory, [get_arch("sm_90"), get_arch("gfx942")], jobs=1))
    for r in again:
        if r.kernel == "gelu_tanh" and r.arch == "gfx942":
            assert not r.ok
            continue
        assert r.ok, (r.kernel, r.arch, r.status)
        assert r.triton_version == OLD
    for entry, t in truth.items():
        same = next(r for r in again if dict(r.extras)["entry"] == entry and r.arch == "sm_90")
        u = same.usage
        assert (u.regs, u.stack_bytes, u.spill_store_bytes, u.spill_load_bytes) == \
               (t["regs"], t["stack"], t["spill_store_bytes"], t["spill_load_bytes"]), t["kernel"]


def test_scan_takes_one_triton(old_cache, no_toolchains):
    directory, _ = old_cache
    done = cli("scan", str(directory), "--triton", "3.6.0", "--triton", "3.8.0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "vgprscope: error: scan takes one --triton (the release that wrote the cache, or the one to compile its "
        "TTIR with); given: 3.6.0, 3.8.0"]


def test_unparsed_ttir_of_an_entry_that_does_not_say_its_release(old_cache, tmp_path, no_toolchains):
    """An entry whose metadata names no Triton release is recompiled by the Triton at hand; where that one
    cannot parse its TTIR, the row says that TTIR is read only by the release that wrote it."""
    directory, truth = old_cache
    entry = next(e for e, t in truth.items() if t["kernel"] == "scale_add")
    copy = tmp_path / "cache" / entry
    shutil.copytree(directory / entry, copy)
    meta = json.loads((copy / "scale_add.json").read_text())
    del meta["triton_version"]
    (copy / "scale_add.json").write_text(json.dumps(meta))
    ttir = (copy / "scale_add.ttir").read_text()
    (copy / "scale_add.ttir").write_text(ttir.replace("tt.get_program_id", "tt.a_later_releases_op", 1))
    from vgprscope.core.archs import get_arch

    result = scan(tmp_path / "cache", [get_arch("sm_90")], jobs=1)
    again = _recompiled(result)
    assert len(again) == 1 and not again[0].ok
    assert again[0].status.endswith("Parse MLIR file failed.; the entry does not say which Triton wrote it, and "
                                    "TTIR is read only by the release that wrote it: give it with --triton X")
    assert "written_by" not in dict(again[0].extras)


def test_an_entry_copied_without_its_intermediates_is_read(old_cache, tmp_path, no_toolchains):
    """A cache copied without *.ptx / *.llir (Triton wrote them, then they were left out) is read from its cubin:
    registers and memory as stored, spill bytes unknown where a stack frame is, for want of the PTX; without
    the cubin itself the entry is partial."""
    directory, truth = old_cache
    entry = next(e for e, t in truth.items() if t["kernel"] == "matmul")
    trimmed, gone = tmp_path / "cache" / "TRIMMED", tmp_path / "cache" / "NOCUBIN"
    shutil.copytree(directory / entry, trimmed)
    shutil.copytree(directory / entry, gone)
    for f in (*trimmed.glob("*.ptx"), *trimmed.glob("*.llir"), *gone.glob("*.cubin")):
        f.unlink()
    rows = {dict(r.extras)["entry"]: r for r in scan(tmp_path / "cache", jobs=1).records}
    r = rows["TRIMMED"]
    assert r.ok, r.status
    assert (r.usage.regs, r.usage.stack_bytes) == (truth[entry]["regs"], truth[entry]["stack"])
    assert not r.usage.spills_known and r.usage.spills_from == "unknown: no .ptx in the entry to run ptxas on"
    assert rows["NOCUBIN"].status == "partial entry: matmul.cubin missing"


def test_the_autotuners_saved_timings_are_not_a_partial_entry(old_cache, tmp_path, no_toolchains):
    """``@triton.autotune(cache_results=True)`` saves its timings in an entry of their own (as fla-core's kernels
    left them in an H100 run's cache): no kernel in it, so no row, counted apart in the summary."""
    directory, truth = old_cache
    entry = next(e for e, t in truth.items() if t["kernel"] == "scale_add")
    shutil.copytree(directory / entry, tmp_path / "cache" / entry)
    timings = tmp_path / "cache" / "AUTOTUNEDTIMINGS"
    timings.mkdir()
    (timings / "chunk_fwd_kernel_h.autotune.json").write_text(json.dumps(
        {"key": [4, 64], "configs_timings": [[{"kwargs": {"BV": 32}, "num_warps": 2}, [0.0098]]]}))
    result = scan(tmp_path / "cache", jobs=1)
    assert [r.kernel for r in result.records] == ["scale_add"] and result.records[0].ok
    assert result.summary().endswith("2 entries, 1 read, 0 partial or corrupt, 1 autotuner timing file skipped")


def test_a_rebuild_is_the_stored_cubin_when_only_the_line_tables_file_stamp_differs(old_cache):
    """ptxas writes the source file's mtime and size into .debug_line when the file exists where it runs: a
    rebuild on another machine differs there alone and is still the stored code. A changed instruction is not."""
    from vgprscope.runtime.stored import elf_sections, same_machine_code

    directory, truth = old_cache
    entry = next(e for e, t in truth.items() if t["kernel"] == "matmul")
    stored = next((directory / entry).glob("*.cubin")).read_bytes()
    sections = elf_sections(stored)
    assert {".text.matmul", ".debug_line", ".nv.info.matmul"} <= set(sections)

    def patched(name: str) -> bytes:
        kind, flags, size, body = sections[name]
        at = stored.index(body)
        return stored[:at + 40] + bytes([stored[at + 40] ^ 0xFF]) + stored[at + 41:]

    assert same_machine_code(patched(".debug_line"), stored)
    assert not same_machine_code(patched(".text.matmul"), stored)
    assert not same_machine_code(b"not an elf", stored)


def test_a_stored_read_is_cached_by_the_files_it_reads(old_cache, tmp_path, no_toolchains):
    """A stored entry's read is cached by its files' contents: the same cubins in a copy of the cache (another
    machine's, another directory) are not read again; an entry whose cubin changed is."""
    directory, truth = old_cache
    first = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "vc"))
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    again = _stored(scan(copy, jobs=1, cache_dir=tmp_path / "vc"))
    assert set(again) == set(first) and all(r.cached for r in again.values())
    assert {e: r.usage for e, r in again.items()} == {e: r.usage for e, r in first.items()}
    changed = next(e for e, t in truth.items() if t["kernel"] == "scale_add")
    other = next(e for e, t in truth.items() if t["kernel"] == "matmul")
    shutil.copy(next((copy / other).glob("*.cubin")), next((copy / changed).glob("*.cubin")))
    after = _stored(scan(copy, jobs=1, cache_dir=tmp_path / "vc"))
    assert not after[changed].cached and all(r.cached for e, r in after.items() if e != changed)


def test_scans_table_disassembles_no_stored_cubin_and_a_later_reader_gets_every_loop_figure(
        old_cache, tmp_path, no_toolchains, monkeypatch):
    """scan's table (loops=None: it shows no loop figure, and a stored read compiles nothing, so that nvdisasm
    would be most of its cost) disassembles no stored cubin, a stack frame or not: a kernel without one has its
    loops' spill figures 0, one with one every loop figure unknown, each cached as unread; the CLI's table asks
    for that. A later scan that reads every figure gets what a cold one gets."""
    import vgprscope.runtime.stored as stored
    runs: list[int] = []
    real = stored.nvdisasm
    monkeypatch.setattr(stored, "nvdisasm", lambda cubin: runs.append(len(cubin)) or real(cubin))
    directory, truth = old_cache
    table = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "vc", loops=None))
    assert runs == [] and any(t["stack"] for t in truth.values())
    for e, t in truth.items():
        u = table[e].usage
        assert u.loop_matrix_share is None and u.loop_lines is None, t["kernel"]
        spills = (u.loop_spill_bytes, u.loop_spill_bytes_max, u.loop_spill_bytes_sum)
        assert spills == ((None,) * 3 if t["stack"] else (0, 0, 0)), t["kernel"]
    unread = [json.loads(p.read_text())["result"].get("loops_unread") for p in (tmp_path / "vc").glob("*/*.json")]
    assert len(unread) >= len(truth) and all(unread)
    every = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "vc", loops=True))
    fresh = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "fresh", loops=True))
    assert {e: r.usage for e, r in every.items()} == {e: r.usage for e, r in fresh.items()}
    assert all(r.usage.loop_spill_bytes is not None for r in every.values())
    done = cli("scan", str(directory), env={"VGPRSCOPE_CACHE_DIR": str(tmp_path / "cli")})
    assert done.returncode == 0, done.stderr
    results = [json.loads(p.read_text())["result"] for p in (tmp_path / "cli").glob("*/*.json")]
    framed = [r for r in results if any(r["usage"].get(f) for f in ("stack_bytes", "local_bytes", "scratch_bytes"))]
    assert framed and all(r.get("loops_unread") and r["usage"].get("loop_spill_bytes") is None for r in framed)


def test_a_table_scan_disassembles_only_what_may_spill_and_a_later_reader_gets_every_loop_figure(
        old_cache, tmp_path, no_toolchains):
    """A scan for a table (loops=False) disassembles no stored cubin without a stack frame or local memory: its
    loops' spill figures are 0, its share and lines unread (the cached result says so); a cubin with one is
    disassembled in the worker, every figure read. A later scan that reads every figure (JSON, CSV) reads those
    entries again and gets what a cold scan that read everything gets."""
    directory, truth = old_cache
    table = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "vc", loops=False))
    for e, t in truth.items():
        u = table[e].usage
        assert (u.loop_matrix_share is None) == (not t["stack"]), t["kernel"]
        if not t["stack"]:
            assert (u.loop_spill_bytes, u.loop_spill_bytes_sum) == (0, 0)
    unread = [json.loads(p.read_text())["result"].get("loops_unread") for p in (tmp_path / "vc").glob("*/*.json")]
    assert sum(bool(u) for u in unread) == sum(r.usage.loop_matrix_share is None for r in table.values()) > 2
    every = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "vc", loops=True))
    assert not any(r.cached for e, r in every.items() if not truth.get(e, {"stack": 1})["stack"])
    fresh = _stored(scan(directory, jobs=1, cache_dir=tmp_path / "fresh", loops=True))
    assert {e: r.usage for e, r in every.items()} == {e: r.usage for e, r in fresh.items()}
    assert all(r.usage.loop_spill_bytes is not None for r in every.values())
