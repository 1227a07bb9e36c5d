"""``vgprscope scan DIR`` finds every Inductor and Triton cache below DIR, whatever the layout torch or Triton
left them in, reads each stored cubin as stored and says per directory what it found; a directory in no layout
it knows is one line naming it, never a ``?`` row.

The layouts are laid out GPU-free from what an H100 run wrote (tests/fixtures/inductor_block_h100_cache.tar.xz:
Inductor's generated modules and the Triton cache it compiled them into, torch 2.11 and Triton 3.6.0), as torch
leaves them: ``capture``'s ``force_disable_caches`` makes a temporary Inductor cache per compile,
``TORCHINDUCTOR_CACHE_DIR/tmpXXXXXXXX/`` with its Triton cache at ``tmpXXXXXXXX/triton/<HASH>/``
(``torch._inductor.utils.fresh_cache``); without it Inductor compiles into ``triton/<device>/<HASH>/`` of its
directory; TRITON_CACHE_DIR set puts the Triton cache outside, beside it.
"""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT, cli
from fixture_paths import unpack

from vgprscope.analysis.scan.core import scan
from vgprscope.sources.cache_layout import find_caches
from vgprscope.sources.inductor import read_inductor_cache
from vgprscope.sources.triton_cache import read_entry

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def h100(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("inductor-block")
    with tarfile.open(FIXTURES / "inductor_block_h100_cache.tar.xz") as tar:
        unpack(tar, directory)
    return directory


def _split(h100: Path) -> list[tuple[list[Path], list[Path]]]:
    """The fixture's generated modules in three groups, each with the Triton cache entries of its kernels (the
    launcher module's entry with the last group)."""
    modules = sorted((h100 / "inductor").glob("*/*.py"))
    names = {m: {k.name for k in read_inductor_cache(h100 / "inductor") if k.file.name == m.name} for m in modules}
    entries = sorted(p for p in (h100 / "tc-inductor").iterdir())
    groups = [modules[:4], modules[4:6], modules[6:]]
    out = []
    for i, group in enumerate(groups):
        kernels = set().union(*(names[m] for m in group))
        mine = [e for e in entries if read_entry(e).name in kernels or (i == 2 and read_entry(e).helper)]
        out.append((group, mine))
    return out


def _put(modules: list[Path], entries: list[Path], inductor: Path, triton: Path) -> None:
    for m in modules:
        (inductor / m.parent.name).mkdir(parents=True, exist_ok=True)
        for f in m.parent.iterdir():
            shutil.copy(f, inductor / m.parent.name / f.name)
    triton.mkdir(parents=True, exist_ok=True)
    for e in entries:
        shutil.copytree(e, triton / e.name)


@pytest.fixture(scope="module")
def torch_left(h100, tmp_path_factory) -> Path:
    """A directory holding what torch and Triton leave: TORCHINDUCTOR_CACHE_DIR (``inductor-cache``) with two
    temporary Inductor caches (``tmp*/triton/<HASH>/``), its own generated modules compiled into
    ``triton/0/<HASH>/``, Inductor's other caches (fx graphs, locks: no kernel in them); and the Triton cache
    ``TRITON_CACHE_DIR`` pointed at beside it (``triton-cache``) with the kernels a third compile put there."""
    root = tmp_path_factory.mktemp("torch-left")
    a, b, c = _split(h100)
    inductor = root / "inductor-cache"
    _put(*a, inductor / "tmpx1y2z3a4", inductor / "tmpx1y2z3a4" / "triton")
    _put(*b, inductor / "tmpq5w6e7r8", inductor / "tmpq5w6e7r8" / "triton")
    _put(a[0][:1], a[1][:1], inductor, inductor / "triton" / "0")
    _put(c[0], [], root / "inductor-c", root / "unused")
    shutil.rmtree(root / "unused")
    _put([], c[1], root, root / "triton-cache")
    for where, name in (("fxgraph/ab/fxhash", "entry"), ("aotautograd/ahash", "entry"), ("locks", "x.lock")):
        (inductor / where).mkdir(parents=True)
        (inductor / where / name).write_bytes(b"\x00\x01")
    return root


def _cubins(root: Path) -> list[Path]:
    return sorted(root.rglob("*.cubin"))


def test_every_cache_below_the_directory_is_found_in_each_layout(torch_left):
    layout = find_caches(torch_left)
    found = {(str(c.path.relative_to(torch_left)), c.kind, len(c.entries)) for c in layout.caches}
    a, b, c = [len(list((torch_left / d).rglob("__grp__*.json"))) for d in
               ("inductor-cache/tmpx1y2z3a4/triton", "inductor-cache/tmpq5w6e7r8/triton", "triton-cache")]
    assert found == {
        ("inductor-cache", "inductor", 0), ("inductor-cache/triton/0", "triton", 1),
        ("inductor-cache/tmpx1y2z3a4", "inductor", 0), ("inductor-cache/tmpx1y2z3a4/triton", "triton", a),
        ("inductor-cache/tmpq5w6e7r8", "inductor", 0), ("inductor-cache/tmpq5w6e7r8/triton", "triton", b),
        ("inductor-c", "inductor", 0), ("triton-cache", "triton", c + 1),  # + the launcher module's entry
    }
    assert layout.unknown == ()
    # a cache's parent directory alone, a temporary cache alone, and one entry alone are each found as well
    assert [(c.kind, len(c.entries)) for c in find_caches(torch_left / "inductor-cache" / "triton").caches] == \
        [("triton", 1)]
    one = next((torch_left / "triton-cache").iterdir())
    assert [(c.path, c.entries) for c in find_caches(one).caches] == [(one.parent, (one,))]


@pytest.fixture(scope="module")
def scanned(torch_left):
    return scan(torch_left, jobs=2)


def test_scan_reads_every_stored_cubin_as_stored_with_cuobjdumps_counts(scanned, torch_left):
    """Every cubin in the tree is a row read from the stored file: registers, stack and shared memory equal to
    cuobjdump's of that cubin; no entry is read as anything else, no row is a ``?``."""
    from vgprscope.core.parse.nvidia import parse_cuobjdump_resources
    from vgprscope.runtime.stored import cuobjdump_resources

    stored = {dict(r.extras)["entry_dir"]: r for r in scanned.records if dict(r.extras).get("cache") == "stored"}
    cubins = _cubins(torch_left)
    assert len(stored) == len(cubins) == 12 + 1  # the fixture's 12 and the copy under triton/0/
    for cubin in cubins:
        r = stored[str(cubin.parent)]
        assert r.ok, r.status
        res = parse_cuobjdump_resources(cuobjdump_resources(cubin.read_bytes()), r.kernel)
        assert (r.usage.regs, r.usage.stack_bytes, r.usage.shared_static) == \
               (res["REG"], res.get("STACK", 0), res.get("SHARED", 0)), cubin
    assert not any(r.kernel == "?" or r.arch == "?" for r in scanned.records)
    assert all(r.ok for r in scanned.records), sorted({r.status for r in scanned.records if not r.ok})
    generated = [r for r in scanned.records if r.source == "inductor-cache"]
    assert len(generated) == 12 + 1  # every config of every generated kernel; the module copied to the top


def test_scan_says_per_directory_what_it_found(scanned, torch_left):
    lines = scanned.summary().splitlines()
    assert lines[0] == f"{torch_left}: 4 Inductor caches and 4 Triton caches"
    said = {ln.split(" (")[0].strip(): ln.split("): ", 1)[1] for ln in lines[1:] if ln.startswith("  ")}
    assert said["inductor-cache/"] == "Inductor's generated modules: 1 kernel, 1 config, 0 unread"
    assert said["inductor-cache/triton/0/"] == "1 entry, 1 read, 0 partial or corrupt"
    assert said["triton-cache/"].endswith("read, 0 partial or corrupt, 1 of Triton's launcher and utility modules "
                                          "skipped")
    assert set(said) == {"inductor-cache/", "inductor-cache/triton/0/", "inductor-cache/tmpx1y2z3a4/",
                         "inductor-cache/tmpx1y2z3a4/triton/", "inductor-cache/tmpq5w6e7r8/",
                         "inductor-cache/tmpq5w6e7r8/triton/", "inductor-c/", "triton-cache/"}


def test_a_directory_with_no_cache_is_one_line_and_no_rows(tmp_path):
    (tmp_path / "fxgraph" / "ab").mkdir(parents=True)
    (tmp_path / "fxgraph" / "ab" / "entry").write_bytes(b"\x00")
    result = scan(tmp_path)
    assert result.records == () and result.caches == ()
    assert result.summary().splitlines() == [
        f"{tmp_path}: no Triton or Inductor cache below it (a Triton cache holds a directory per compile with "
        "__grp__NAME.json and the kernel's files; an Inductor cache, generated modules in XX/cXXXX.py)"]
    done = cli("scan", str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"vgprscope: scanned {result.summary()}"]


def test_kernel_files_in_no_layout_scan_knows_are_named_not_read(h100, tmp_path):
    """A kernel's files beside directories (no entry holds directories) are one line naming the directory; the
    caches beside it are read as ever."""
    entry = next(p for p in (h100 / "tc-inductor").iterdir() if read_entry(p).name.endswith("add_6"))
    shutil.copytree(entry, tmp_path / "cache" / entry.name)
    odd = tmp_path / "dumped"
    (odd / "sub").mkdir(parents=True)
    for f in entry.glob("*.cubin"):
        shutil.copy(f, odd / f.name)
    result = scan(tmp_path, jobs=1)
    assert [r.kernel for r in result.records] == ["triton_poi_fused__unsafe_view_add_6"]
    assert result.summary().splitlines()[1:] == [
        "  cache/ (Triton): 1 entry, 1 read, 0 partial or corrupt",
        "  dumped/: 1 kernel file (triton_poi_fused__unsafe_view_add_6.cubin) outside a Triton cache entry: not read"]


def test_scan_cli_of_what_torch_left(scanned, torch_left):
    """The command prints the per-directory lines and the rows; nothing is a ``?`` row; exit 0."""
    done = cli("scan", str(torch_left), "--jobs", "2", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert f"vgprscope: scanned {scanned.summary()}" in done.stderr
    assert len(done.stdout.strip().splitlines()) == 1 + len(scanned.records)
    assert ",?," not in done.stdout
