"""The committed captures compile on any machine: a capture names its kernels' files, and the tests that
compile one must not depend on the files of the machine that made it (an upstream checkout in a directory
of its own, a library's site-packages). Each capture the repository commits is read here with every file
it names made absent, and each kernel must still resolve (its module found by name, else the capture's
snapshot); a path inside the repository is written relative to the capture, as `vgprscope capture -o`
writes it."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest
from fixture_paths import GUARD, committed_fixtures, named_paths, watched_paths

from vgprscope.captures.model import READABLE_VERSIONS, SCHEMA, load_capture
from vgprscope.sources.capture import resolve_file

ROOT = Path(__file__).resolve().parents[2]


def _read(path: Path) -> object:
    text = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    return json.loads(text)


def committed_captures() -> list[Path]:
    """Every capture file under tests/fixtures/ and reports/ that this vgprscope reads."""
    found = []
    for path in sorted([*ROOT.glob("tests/fixtures/**/*.json*"), *ROOT.glob("reports/**/*.json")]):
        doc = _read(path)
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA and doc.get("schema_version") in READABLE_VERSIONS:
            found.append(path)
    return found


CAPTURES = committed_captures()


def test_the_captures_are_found():
    names = {p.name for p in CAPTURES}
    assert {"aiter-pa-decode.capture.json", "fla_gpu_h100_capture.json.gz"} <= names and len(names) >= 10


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_committed_capture_names_no_file_that_must_exist(path, tmp_path):
    doc = _read(path)
    assert isinstance(doc, dict)
    for k in doc["kernels"]:
        for key in ("file", "root"):
            where = k.get(key)
            if where and Path(where).is_absolute():
                # an absolute path is a library's (installed, or a checkout outside the project): never inside
                # the repository that made it (the capture would name that machine's checkout)
                assert not Path(where).resolve().is_relative_to(ROOT), (k["qualname"], where)
    if path.suffix == ".gz":
        plain = tmp_path / path.stem
        plain.write_text(json.dumps(doc))
        path = plain
    absent = tmp_path / "absent"
    for x in load_capture(path).launches:
        k = x.kernel
        moved = replace(k, file=str(absent / Path(k.file).relative_to(Path(k.file).anchor)),
                        root=str(absent / Path(k.root).relative_to(Path(k.root).anchor)) if k.root else k.root)
        _, why = resolve_file(moved)
        assert why is None, (path.name, k.qualname, why)


def test_every_committed_fixture_is_read_for_the_paths_it_names():
    """The guard's list: every committed file under tests/fixtures and reports, compressed ones uncompressed
    (a ``.loc`` line of a compiled kernel, a capture's kernel file, a report's log)."""
    files = committed_fixtures()
    assert ROOT / "tests" / "fixtures" / "explain" / "baseline-gfx942.ttgir.gz" in files
    assert {p.relative_to(ROOT).parts[0] for p in files} == {"tests", "reports"} and len(files) > 100
    named = named_paths(files)
    assert any(p.endswith("/kernels/_fa_common.py") for p in named)  # in the compiled fixtures' debug lines
    assert any(p.endswith("/liger_kernel/ops/rms_norm.py") for p in named)  # a capture's library file
    # only what exists here, outside this checkout and its Python, is watched
    assert all(not p.startswith(str(ROOT) + "/") for p in watched_paths())


def test_a_test_that_opens_a_path_a_fixture_names_is_caught(tmp_path, monkeypatch):
    made_elsewhere = tmp_path / "elsewhere" / "kernels" / "_fa_common.py"
    made_elsewhere.parent.mkdir(parents=True)
    made_elsewhere.write_text("# the file of the machine that made a fixture\n")
    monkeypatch.setattr(GUARD, "watched", frozenset({str(made_elsewhere)}))
    made_elsewhere.read_text()
    (tmp_path / "mine.txt").write_text("")  # a test's own file is none of the guard's business
    assert GUARD.take() == [str(made_elsewhere)]
