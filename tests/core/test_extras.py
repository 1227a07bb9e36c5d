"""An optional dependency that is missing is one line naming the extra and the pip command that adds it from
where this vgprscope was installed (issue 35 item 15): vgprscope is on no package index, so a clone's
directory, a wheel's path or a Git URL, never ``pip install 'vgprscope[bench]'`` unless it came from an index."""

from __future__ import annotations

from pathlib import Path

import pytest

from vgprscope.core import extras

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("record, cwd, expected", [
    ({"url": "file:///work/clone", "dir_info": {}}, "/work/clone", "pip install '.[bench]' torch==2.13.0"),
    ({"url": "file:///work/clone", "dir_info": {"editable": True}}, "/work/clone",
     "pip install -e '.[bench]' torch==2.13.0"),
    ({"url": "file:///work/clone", "dir_info": {}}, "/elsewhere", "pip install '/work/clone[bench]' torch==2.13.0"),
    ({"url": "file:///work/clone", "dir_info": {}}, "/work", "pip install './clone[bench]' torch==2.13.0"),
    ({"url": "file:///dl/vgprscope-0.1.0-py3-none-any.whl", "archive_info": {}}, "/elsewhere",
     "pip install '/dl/vgprscope-0.1.0-py3-none-any.whl[bench]' torch==2.13.0"),
    ({"url": "https://github.com/o/vgprscope.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}, "/x",
     "pip install 'vgprscope[bench] @ git+https://github.com/o/vgprscope.git@abc123' torch==2.13.0"),
])
def test_the_install_hint_names_where_vgprscope_came_from(monkeypatch, record, cwd, expected):
    monkeypatch.setattr(extras, "_direct_url", lambda: record)
    monkeypatch.setattr(Path, "cwd", classmethod(lambda cls: Path(cwd)))
    assert extras.install_command("bench", extras.TORCH_PIN) == expected


def test_a_checkout_on_the_path_is_named_by_its_directory(monkeypatch):
    monkeypatch.setattr(extras, "_direct_url", lambda: None)
    monkeypatch.chdir(ROOT)
    assert extras.install_command("plots") == "pip install '.[plots]'"


def test_a_missing_extra_is_one_line_naming_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    monkeypatch.setattr(extras, "_direct_url", lambda: {"url": f"file://{ROOT}", "dir_info": {}})
    monkeypatch.chdir(ROOT)
    with pytest.raises(extras.MissingExtraError) as err:
        extras.require_matplotlib("analyze --plot")
    assert str(err.value) == ("analyze --plot needs matplotlib, which is not installed; install the 'plots' extra: "
                              "pip install '.[plots]'")
