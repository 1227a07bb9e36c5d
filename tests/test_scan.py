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

from capture_helpers import USER_KERNELS, cli, usage_counts
from vgprscope.scan import scan

FILL = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from vgprscope.compile.worker import _cuobjdump_resources
from vgprscope.parse.amdgcn import parse_amdgcn
from vgprscope.parse.nvidia import parse_cuobjdump_resources
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
    reasons = sorted(r.status for r in result.records if not r.ok)
    assert reasons == ["corrupt entry: JSONDecodeError: Unterminated string starting at: line 1 column 10 (char 9)",
                       "partial entry: no __grp__ file (the compile was interrupted, or it is not a kernel entry)"]
    # Triton's launcher and utility modules are neither rows nor "partial or corrupt": counted apart
    assert result.summary().endswith("7 entries, 2 read, 2 partial or corrupt, 3 of Triton's launcher and "
                                     "utility modules skipped")
    assert {e.name for e in result.entries if e.helper} == {"cuda_utils", "__triton_launcher", "hip_utils"}
    assert not any(r.kernel in ("cuda_utils", "__triton_launcher", "hip_utils") for r in result.records)


def test_scan_retargets_the_ttir_to_other_archs(cache):
    from vgprscope.archs import get_arch

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
