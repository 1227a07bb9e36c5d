"""``vgprscope scan`` of the Inductor directories torch.compile'd models left on an H200 (torch 2.11, Triton 3.6.0)
under ``vgprscope capture`` (tests/fixtures/ecosystem/*-inductor-cache.tar.xz, reports/ecosystem-h200.md): a
Llama-style decoder forward and backward, and a max-autotune MLP. Every generated kernel is found, in every
temporary Inductor cache; every stored cubin is read as stored, its registers, stack and shared memory equal to
cuobjdump's of that cubin.

Per directory, as scan reads it: the generated modules are read (``inductor_capture``: their kernels and configs,
not compiled here, which is the Inductor tests' part) and each Triton cache is scanned."""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest
from capture_helpers import ROOT
from fixture_paths import unpack

from vgprscope.analysis.scan.core import scan
from vgprscope.core.parse.nvidia import parse_cuobjdump_resources
from vgprscope.runtime.stored import cuobjdump_resources
from vgprscope.sources.cache_layout import find_caches
from vgprscope.sources.inductor import inductor_capture

ECOSYSTEM = ROOT / "tests" / "fixtures" / "ecosystem"
# an Inductor kernel in a generated module: its heuristic decorator, then @triton.jit on the def's own line above
_KERNEL_RE = re.compile(r"^@triton_heuristics\.\w+\((?:.|\n)*?^\)\n@triton\.jit\ndef (\w+)\(", re.M)


@pytest.fixture(scope="module", params=["llama-decoder", "mlp-max-autotune"])
def left(request, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp(request.param)
    with tarfile.open(ECOSYSTEM / f"{request.param}-inductor-cache.tar.xz") as tar:
        unpack(tar, directory)
    return directory


def test_every_generated_kernel_is_found(left):
    """The kernels of every generated module (counted here by their decorators in the text) are found in the
    temporary Inductor caches and Inductor's own directory, each read without running its module."""
    texts = [p.read_text() for p in left.rglob("*.py")]
    # a graph's output code holds its kernels' sources too, as strings: only the kernels' own modules count
    written = sorted(name for t in texts if "async_compile.triton(" not in t for name in _KERNEL_RE.findall(t))
    layout = find_caches(left)
    caches = [inductor_capture(c.path) for c in layout.inductor]
    found = sorted(k.name for c in caches for k in c.kernels)
    assert found == written and len(found) > 10
    unread = [(k.name, why) for c in caches for k, why in c.unread]
    assert not unread, unread[:3]
    assert layout.unknown == ()


def test_every_stored_cubin_is_read_as_stored_with_cuobjdumps_counts(left):
    layout = find_caches(left)
    cubins = sorted(left.rglob("*.cubin"))
    stored = {}
    for c in layout.triton:
        for r in scan(c.path, jobs=2, loops=False).records:
            # read, whatever its status: an autotuning candidate over the arch's shared memory is a row saying so
            assert r.usage is not None, (r.kernel, r.status)
            stored[dict(r.extras)["entry_dir"]] = r
    assert len(stored) == len(cubins) > 10
    for cubin in cubins:
        r = stored[str(cubin.parent)]
        res = parse_cuobjdump_resources(cuobjdump_resources(cubin.read_bytes()), r.kernel)
        assert (r.usage.regs, r.usage.stack_bytes, r.usage.shared_static) == \
               (res["REG"], res.get("STACK", 0), res.get("SHARED", 0)), cubin
        assert dict(r.extras)["written_by"] == "Triton 3.6.0"
