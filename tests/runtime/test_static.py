"""A kernel read from its current file where its module does not import (``runtime/static.py``, ``current.py``).

Each project here imports a package that is not installed (``not_installed_pkg``), as a kernel module imports
torch where the gate runs without it. What the kernel reaches is built from the file as it is: its
decorators (an autotuner's configs, heuristics), its ``@triton.jit`` helpers in other files of the package,
its module-level constexpr globals; the JIT functions' sources and line numbers are the file's own. What
needs the missing package is said, by name and line: never a stand-in value compiled in its place. Nothing
compiles here (``tests/captures/test_capture_without_torch.py`` compiles and compares).
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from vgprscope.runtime import current, static, worker
from vgprscope.runtime.loader import source_of

MISSING = "not_installed_pkg (it does not import here: ModuleNotFoundError: No module named 'not_installed_pkg')"

OPS = '''
import not_installed_pkg
import triton
import triton.language as tl

from .helpers import scale
from . import consts

EPS = tl.constexpr(1e-6)


def _configs():
    return [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((64, 2), (128, 4))]


@triton.autotune(configs=_configs(), key=["n"])
@triton.heuristics({"EVEN": lambda a: a["n"] % 128 == 0})
@triton.jit
def kernel(X, Y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)
    tl.store(Y + offs, scale(x) + EPS + consts.SHIFT, mask=offs < n)


def launch(x: not_installed_pkg.Tensor) -> not_installed_pkg.Tensor:
    y = not_installed_pkg.empty_like(x)
    kernel[(1,)](x, y, x.numel())
    return y
'''

HELPERS = '''
import not_installed_pkg
import triton
import triton.language as tl

DEVICE = not_installed_pkg.device("cuda")  # never read by a kernel: never needed


@triton.jit
def scale(x):
    return x * 2.0
'''

CONSTS = '''
import triton.language as tl

SHIFT = tl.constexpr(3.0)
'''


def _package(tmp_path: Path, ops: str = OPS, helpers: str = HELPERS) -> dict[str, str]:
    pkg = tmp_path / "proj" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import not_installed_pkg\n")  # the package itself does not import either
    (pkg / "ops.py").write_text(textwrap.dedent(ops))
    (pkg / "helpers.py").write_text(textwrap.dedent(helpers))
    (pkg / "consts.py").write_text(CONSTS)
    return {"file": str(pkg / "ops.py"), "module": "mypkg.ops", "root": str(tmp_path / "proj"), "qualname": "kernel"}


def derive(request: dict) -> dict:
    """A compile worker's answer (in this process, in the worker's environment: no interpreter)."""
    answer = worker.run({"op": "derive", **request})
    return {k: v for k, v in answer.items() if k not in ("triton_version", "protocol")}


@pytest.fixture
def clean_modules():
    """The test leaves sys.modules and sys.path as it found them (as a compile worker would need)."""
    modules, path = set(sys.modules), list(sys.path)
    yield
    for name in set(sys.modules) - modules:
        if name.startswith("mypkg"):
            del sys.modules[name]
    sys.path[:] = path


def test_the_kernel_its_wrappers_and_helpers_come_from_the_files(tmp_path, clean_modules):
    source = _package(tmp_path)
    before = set(sys.modules)
    loaded = current.load(source)
    assert loaded.static and "not_installed_pkg" in loaded.import_error
    assert sorted(Path(f).name for f in loaded.files) == ["__init__.py", "consts.py", "helpers.py", "ops.py"]
    tuner = loaded.obj
    assert [c.kwargs for c in tuner.configs] == [{"BLOCK": 64}, {"BLOCK": 128}] and tuner.keys == ["n"]
    fn = tuner.fn.fn
    assert source_of(fn).startswith("def kernel(X, Y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):")
    # at its line of the file: Triton's line info names the user's file and lines
    assert fn.fn.__code__.co_firstlineno == OPS.splitlines().index('@triton.autotune(configs=_configs(), key=["n"])') + 1
    assert fn.fn.__code__.co_filename == source["file"]
    scope = fn.fn.__globals__
    assert scope["scale"].fn.__module__ == "mypkg.helpers" and scope["EPS"].value == 1e-6
    assert scope["consts"].SHIFT.value == 3.0
    assert "launch" not in scope and "DEVICE" not in scope["scale"].fn.__globals__  # what nothing reads never ran
    # the modules read statically are not left registered: a later import in the same worker imports anew
    assert not {n for n in set(sys.modules) - before if n.startswith("mypkg")}


def test_the_derivation_of_a_call_is_the_same_as_the_imports(tmp_path, clean_modules):
    source = _package(tmp_path)
    recorded = {"args": [{"name": "X", "type": "*fp32", "aligned": True}, {"name": "Y", "type": "*fp32", "aligned": True},
                         {"name": "n", "type": "i32"}, {"name": "BLOCK", "type": "constexpr", "value": 64},
                         {"name": "EVEN", "type": "constexpr", "value": False}],
                "options": {"num_warps": 2}, "autotune": {"index": 0, "count": 2, "declared": 2, "key": ["1000"]},
                "values": {"n": 1000}, "tensors": {}, "call": {"positional": 3, "keywords": []}}
    answer = derive({"kernel": source, "launches": [recorded]})
    assert "not_installed_pkg" in answer["static"]
    (launch,) = answer["launches"]
    assert "derived" in launch, launch
    constexprs = [{a["name"]: a["value"] for a in d["args"] if a["type"] == "constexpr"} for d in launch["derived"]]
    assert constexprs == [{"BLOCK": 64, "EVEN": False}, {"BLOCK": 128, "EVEN": False}]
    assert [d["options"]["num_warps"] for d in launch["derived"]] == [2, 4]
    assert {Path(f).name for f in answer["deps"]} >= {"ops.py", "helpers.py", "consts.py"}


@pytest.mark.parametrize(("edit", "expected"), [
    # a constexpr computed at import by the missing package
    (("EPS = tl.constexpr(1e-6)", "EPS = tl.constexpr(not_installed_pkg.finfo().eps)"),
     f"kernel reads EPS = not_installed_pkg.finfo(...).eps, which needs {MISSING}"),
    # a value set under a condition the missing package decides
    (("EPS = tl.constexpr(1e-6)", "if not_installed_pkg.version.hip:\n    EPS = tl.constexpr(1e-5)\n"
                                  "else:\n    EPS = tl.constexpr(1e-6)"),
     f"kernel reads EPS (ops.py:9), which needs {MISSING}"),
    # a config list built by a function that reads the device
    (("return [triton.Config", "return [] if not_installed_pkg.cuda.is_available() else [triton.Config"),
     f"kernel (ops.py:19) needs {MISSING}"),
])
def test_what_needs_the_missing_package_is_said_by_name_and_line(tmp_path, clean_modules, edit, expected):
    source = _package(tmp_path, OPS.replace(*edit))
    with pytest.raises(static.Underivable) as raised:
        current.load(source)
    assert str(raised.value) == f"{expected}: {static.UNDERIVABLE} mypkg.ops"
    answer = derive({"kernel": source, "launches": []})
    assert answer["underivable"] == str(raised.value) and Path(source["file"]) in map(Path, answer["deps"])


def test_a_helper_reading_what_is_missing_is_named(tmp_path, clean_modules):
    source = _package(tmp_path, helpers=HELPERS.replace("return x * 2.0", "return x * FACTOR") +
                      "\nFACTOR = tl.constexpr(not_installed_pkg.factor)\n")
    with pytest.raises(static.Underivable, match=r"^scale reads FACTOR = not_installed_pkg.factor, which needs "):
        current.load(source)


def test_what_python_runs_as_it_would_runs(tmp_path, clean_modules):
    """Postponed annotations naming the missing package, a fallback where an import fails, a relative import
    of a module that imports, and a decorator argument computed by plain Python: all as an import gives."""
    ops = OPS.replace("import not_installed_pkg\n", "from __future__ import annotations\n\ntry:\n"
                      "    import not_installed_pkg\nexcept ImportError:\n    not_installed_pkg = None\n"
                      "    FALLBACK = 2\n", 1)
    ops = ops.replace('key=["n"]', 'key=["n"] * FALLBACK')
    loaded = current.load(_package(tmp_path, ops))
    assert loaded.obj.keys == ["n", "n"]


def test_a_kernel_gone_from_its_file_is_gone(tmp_path, clean_modules):
    source = _package(tmp_path, OPS.replace("def kernel(", "def renamed_kernel("))
    with pytest.raises(current.Gone, match="ops.py no longer defines kernel"):
        current.load(source)
    assert derive({"kernel": source, "launches": []}) == {"missing": "ops.py no longer defines kernel"}


def test_a_file_that_is_not_python_says_so(tmp_path, clean_modules):
    source = _package(tmp_path, OPS + "\nthis is no Python\n")
    answer = derive({"kernel": source, "launches": []})
    assert answer["import_error"].startswith("ops.py is not valid Python here (SyntaxError: ")


BY_CALL = '''
import not_installed_pkg
import triton
import triton.language as tl


@triton.jit
def kernel(X, Y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


tuned = triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64, 128)], key=["n"])(kernel)
even = triton.heuristics({"EVEN": lambda a: a["n"] % 128 == 0})(tuned)
'''


def test_wrappers_made_by_a_call_under_other_names_are_the_current_sources(tmp_path, clean_modules):
    """A library's tuner made by a call around the kernel (the kernel's own name holds the bare JIT function):
    the recorded call is derived through the wrappers the module builds around it now (every config, the
    heuristic evaluated again), never "the kernel's parameters changed"."""
    source = _package(tmp_path, BY_CALL)
    args = [{"name": "X", "type": "*fp32"}, {"name": "Y", "type": "*fp32"}, {"name": "n", "type": "i32"},
            {"name": "BLOCK", "type": "constexpr", "value": 32}, {"name": "EVEN", "type": "constexpr", "value": False}]
    recorded = {"args": args, "options": {}, "autotune": {"index": 0, "count": 3, "declared": 3, "key": ["256"]},
                "values": {"n": 256}, "tensors": {}, "call": {"positional": 3, "keywords": []}}
    (launch,) = derive({"kernel": source, "launches": [recorded]})["launches"]
    assert "derived" in launch, launch
    assert [{a["name"]: a["value"] for a in d["args"] if a["type"] == "constexpr"} for d in launch["derived"]] == [
        {"BLOCK": 32, "EVEN": True}, {"BLOCK": 64, "EVEN": True}, {"BLOCK": 128, "EVEN": True}]
    untuned = BY_CALL.replace('tuned = triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (32, 64, 128)], '
                              'key=["n"])(kernel)\n', "").replace("(tuned)", "(kernel)")
    source = _package(tmp_path / "untuned", untuned)
    (launch,) = derive({"kernel": source, "launches": [recorded]})["launches"]
    assert launch["stale"] == "kernel was launched through an autotuner (3 configs) that its module no longer holds: " \
                              "capture again"


def test_a_scripts_kernel_and_the_helpers_beside_it_are_read(tmp_path, clean_modules):
    """A kernel defined in a script (module ``__main__`` at the launch) whose helper file beside it imports the
    missing package too: both read from their files, the script's own work never run."""
    (tmp_path / "helpers.py").write_text(textwrap.dedent(HELPERS))
    (tmp_path / "train.py").write_text("import not_installed_pkg\nimport triton\nimport triton.language as tl\n"
                                       "from helpers import scale\n\n\n@triton.jit\ndef kernel(X, n):\n"
                                       "    tl.store(X, scale(tl.load(X)))\n\n\nraise SystemExit('the script ran')\n")
    loaded = current.load({"file": str(tmp_path / "train.py"), "module": "__main__", "root": "", "qualname": "kernel"})
    assert loaded.static and loaded.obj.fn.__globals__["scale"].fn.__module__ == "helpers"
