"""A path as vgprscope shows it (messages, tables, annotations, SARIF): relative to the root where it lies inside
it, else as given (``relative_path``: None there)."""

from __future__ import annotations

from pathlib import Path

from vgprscope.core.paths import relative_path, shown_path


def test_a_path_inside_the_root_is_shown_relative_and_one_outside_as_given(tmp_path, monkeypatch):
    (tmp_path / "repo" / "kernels").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    inside = tmp_path / "repo" / "kernels" / "k.py"
    outside = tmp_path / "elsewhere" / "k.py"
    assert relative_path(inside) == "kernels/k.py" and shown_path(inside) == "kernels/k.py"
    assert relative_path(Path("kernels/k.py")) == "kernels/k.py"
    assert relative_path(outside) is None and shown_path(outside) == str(outside)
    assert relative_path(inside, tmp_path) == "repo/kernels/k.py"
    assert shown_path(tmp_path / "repo") == "."


def test_a_symlinked_root_and_path_meet_where_they_resolve(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path / "link")
    assert shown_path(tmp_path / "real" / "a.json") == "a.json"
