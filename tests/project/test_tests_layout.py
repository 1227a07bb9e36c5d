"""tests/ mirrors the package (docs/architecture.md, "Where tests go"): every test module sits in the folder of a
package of vgprscope (``tests/gate/`` for ``vgprscope/gate``, ``tests/analysis/explain/`` for
``vgprscope/analysis/explain``), or in ``tests/gpu/`` (tests that all need a GPU) or ``tests/project/`` (the
repository: docs, README, packaging, layers, tools/ and scripts/); none at the top of tests/. Each folder on the
way is a package (its ``__init__.py``), so a test module's name is its path and two folders may hold modules of
one name. ``python scripts/place_tests.py`` says where a module goes and moves it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("gpu", "project")


def module_files(tests: Path) -> list[Path]:
    return sorted(f for f in tests.rglob("test_*.py") if "__pycache__" not in f.parts)


def misplaced(tests: Path, pkg: Path) -> list[str]:
    """The test modules under ``tests`` in no folder of a package of ``pkg`` nor of an extra."""
    out = []
    for f in module_files(tests):
        parts = f.parent.relative_to(tests).parts
        is_extra = len(parts) == 1 and parts[0] in EXTRAS
        if not parts or not (is_extra or (pkg.joinpath(*parts) / "__init__.py").is_file()):
            out.append(f.relative_to(tests.parent).as_posix())
    return out


def without_init(tests: Path) -> list[str]:
    """The folders from ``tests`` down to each test module that are no package (no ``__init__.py``)."""
    folders = {d for f in module_files(tests) for d in (f.parent, *f.parent.parents) if d == tests or tests in d.parents}
    return sorted(d.relative_to(tests.parent).as_posix() for d in folders if not (d / "__init__.py").is_file())


def test_the_walk_finds_the_test_modules():
    names = {f.relative_to(ROOT).as_posix() for f in module_files(ROOT / "tests")}
    assert {"tests/gate/test_gate.py", "tests/analysis/explain/test_explain.py", "tests/gpu/test_gpu.py",
            "tests/project/test_tests_layout.py"} <= names


def test_every_test_module_sits_in_the_folder_of_a_package_or_an_extra():
    assert misplaced(ROOT / "tests", ROOT / "vgprscope") == [], (
        "move each into the folder of the package it tests: python scripts/place_tests.py")


def test_every_folder_of_the_tests_is_a_package():
    assert without_init(ROOT / "tests") == []


def test_a_test_in_the_gpu_folder_without_the_gpu_marker_runs_without_a_gpu():
    """The conftest skips by the ``gpu`` marker, not by a keyword: the folder's name (a keyword of every test in
    it) does not skip the CPU checks of tests/gpu/test_gpu_expectations.py."""
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                          "tests/gpu/test_gpu_expectations.py"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0 and " passed" in run.stdout and "skipped" not in run.stdout, run.stdout


def test_the_checks_see_what_they_are_for(tmp_path):
    """A module at the top of tests/, one in a folder no package has, one in a package's folder below the
    package's depth, and a folder without its __init__.py are each reported; the right places are not."""
    pkg, tests = tmp_path / "vgprscope", tmp_path / "tests"
    for d in ("gate", "analysis/explain"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "analysis" / "__init__.py").write_text("")
    for f in ("test_top.py", "nowhere/test_a.py", "gate/deeper/test_b.py", "gate/test_c.py",
              "analysis/explain/test_d.py", "project/test_e.py", "gpu/test_f.py", "project/x/test_g.py"):
        (tests / f).parent.mkdir(parents=True, exist_ok=True)
        (tests / f).write_text("")
    for d in ("", "nowhere", "gate", "analysis", "project", "gpu", "project/x"):
        (tests / d / "__init__.py").write_text("")
    assert misplaced(tests, pkg) == ["tests/gate/deeper/test_b.py", "tests/nowhere/test_a.py",
                                     "tests/project/x/test_g.py", "tests/test_top.py"]
    assert without_init(tests) == ["tests/analysis/explain", "tests/gate/deeper"]
