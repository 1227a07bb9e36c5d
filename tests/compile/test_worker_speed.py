"""What a re-run that the compile cache answers (a warm ``vgprscope analyze``) loads: the compile worker's
own modules (compiling, planning, reading a Triton cache entry's outputs, the dependency walk, snapshots,
the launch as facts) and the process pool are loaded where something compiles, never for a cache hit, so
a warm run pays for none of them; nor for Triton, torch or pandas."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COLD_ONLY = ("vgprscope.runtime.compile", "vgprscope.runtime.plan", "vgprscope.runtime.stored",
             "vgprscope.runtime.snapshot", "vgprscope.runtime.manifest", "vgprscope.runtime.constexpr",
             "vgprscope.runtime.facts", "vgprscope.runtime.loader", "multiprocessing",
             "concurrent.futures.process", "triton", "torch", "pandas")

ANALYZE = ["analyze", "--variant", "baseline", "--arch", "gfx942", "--block-m", "64", "--block-n", "32",
           "--head-dim", "64", "--num-warps", "4", "--num-stages", "1", "--format", "json"]

# the CLI as `python -m vgprscope` runs it, then the names of every module it loaded, into a file
_RUN = """import json, runpy, sys
out, sys.argv = sys.argv[1], ["vgprscope", *sys.argv[2:]]
try:
    runpy.run_module("vgprscope", run_name="__main__")
except SystemExit as exc:
    if exc.code not in (0, None):
        raise
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def _modules(tmp: Path, cache: Path, name: str) -> tuple[dict, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"VGPRSCOPE_CACHE_DIR": str(cache)}
    listed = tmp / f"{name}.json"
    done = subprocess.run([sys.executable, "-c", _RUN, str(listed), *ANALYZE], capture_output=True, text=True,
                          env=env, cwd=tmp)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), json.loads(listed.read_text())


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, list[str], list[str]]:
    tmp = tmp_path_factory.mktemp("warm")
    cache = tmp / "cache"
    cold_doc, cold_modules = _modules(tmp, cache, "cold")
    warm_doc, warm_modules = _modules(tmp, cache, "warm")
    return cold_doc, warm_doc, cold_modules, warm_modules


def test_a_warm_analyze_loads_no_compile_worker_module(warm):
    cold_doc, warm_doc, _, warm_modules = warm
    assert [r["status"] for r in cold_doc["rows"]] == ["ok"]
    # the same row, read from the cache
    assert [(r["status"], r["usage"]) for r in warm_doc["rows"]] == [(r["status"], r["usage"]) for r in cold_doc["rows"]]
    loaded = [m for m in COLD_ONLY if m in warm_modules or any(n.startswith(m + ".") for n in warm_modules)]
    assert loaded == []


# what a warm analyze of the bundled variants never reads, so never loads: another source's reader (captures,
# Inductor), the baseline file's reader (the project's configuration is read without it), the assembly's loop
# parser (a cached result's loop figures are checked by their names)
WARM_UNREAD = ("vgprscope.sources.capture", "vgprscope.captures", "vgprscope.sources.inductor",
               "vgprscope.gate.baseline", "vgprscope.core.parse.loops")


def test_a_warm_analyze_of_the_bundled_variants_loads_no_other_sources_reader(warm):
    _, _, _, warm_modules = warm
    assert [m for m in WARM_UNREAD if m in warm_modules] == []


def test_a_cold_analyze_loads_them_where_it_compiles(warm):
    # one compile runs in this process (no pool for one job): the worker's modules are loaded for it
    _, _, cold_modules, _ = warm
    assert {"vgprscope.runtime.compile", "triton"} <= set(cold_modules)


def test_loading_the_bundled_variants_parses_each_kernel_file_once():
    # a variant's declaration (VARIANT) and its source hash (the files it imports) come from one syntax tree
    code = """import collections, json
from vgprscope.flashattn import loader, variants
count = collections.Counter()
parse = loader.parse_file
def counted(file):
    count[file.name] += 1
    return parse(file)
loader.parse_file = counted
found = variants.load_variants(loader.BUNDLED_DIR)
print(json.dumps({"variants": len(found), "parses": count}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert out["variants"] >= 9
    assert "baseline.py" in out["parses"] and "_fa_common.py" in out["parses"]
    assert {name: n for name, n in out["parses"].items() if n != 1} == {}


def test_a_kernel_files_relative_imports_are_found_at_any_depth(tmp_path):
    # read from the statements alone: at the top, in a function, a class, a branch, a loop, a with block, a
    # try's handler, else and finally, a match case; an absolute import and a string are not relative imports
    from vgprscope.flashattn import loader

    (tmp_path / "k.py").write_text('''
from ._a import x
import os
from os import path
TEXT = "from .not_an_import import y"
def f():
    from ._b import y
    class C:
        from ._c import z
    if y:
        from . import _d, _e
    else:
        from ._f.sub import w
    for i in range(2):
        from ._g import v
    with open(path) as h:
        from ._h import u
    try:
        pass
    except OSError:
        from ._i import t
    else:
        from ._j import s
    finally:
        from ._k import r
    match y:
        case 1:
            from ._l import q
''')
    assert loader._relative_imports(tmp_path / "k.py") == {"_a", "_b", "_c", "_d", "_e", "_f", "_g", "_h", "_i",
                                                           "_j", "_k", "_l"}


def test_a_compiles_raw_outputs_are_written_with_gzips_fastest_setting(tmp_path):
    # written once per compile on the cold path (an NVIDIA entry holds its cubin and SASS: about 1 MB of
    # JSON), read back only by explain and a re-parse: level 1 writes it in under half the time of level 6
    from vgprscope.compile.cache import CompileCache

    cache = CompileCache(tmp_path)
    raw = {"sass": "\n".join(f"/*{i:04x}*/ HMMA.16816.F32 R{i % 200}, R4, R8, R{i % 100} ;" for i in range(5000))}
    assert cache.store("ab" * 16, {"result": {}}, raw)
    (written,) = tmp_path.rglob("*.raw.json.gz")
    data = written.read_bytes()
    assert data[8] == 4  # gzip's XFL byte: 4 = the fastest compression, 2 = the best (levels 2-9 write 0)
    assert cache.load_raw("ab" * 16) == raw | {"key": "ab" * 16}
