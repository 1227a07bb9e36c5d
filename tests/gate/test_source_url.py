"""``source_url`` in ``[tool.vgprscope]``: the repository URL template the HTML reports link kernels' files
through; a template that names anything but {path}, {line} and {commit}, or no {path}, is one line (exit 2)."""

from __future__ import annotations

import pytest

from vgprscope.core.errors import UsageError
from vgprscope.gate.config import load_gate_config, source_url_of


def _project(tmp_path, value: str):
    (tmp_path / "pyproject.toml").write_text(f"[tool.vgprscope]\nsource_url = {value}\narchs = [\"gfx942\"]\n")
    return tmp_path


def test_the_template_is_read_by_the_gate_and_by_every_report(tmp_path):
    url = "https://github.com/org/repo/blob/{commit}/{path}#L{line}"
    root = _project(tmp_path, f'"{url}"')
    assert load_gate_config(cwd=root).source_url == url
    assert source_url_of(cwd=root) == url
    assert source_url_of(cwd=tmp_path.parent) in ("", url)  # outside the project: the nearest pyproject's, if any


@pytest.mark.parametrize("value, words", [('"https://x/{file}"', "must name {path}"),
                                          ('"https://x/{path}/{branch}"', "must name {path}"),
                                          ('"https://x/{path"', "is not a template"), ("3", "must be a string")])
def test_a_bad_template_is_one_line_naming_what_is_allowed(tmp_path, value, words):
    root = _project(tmp_path, value)
    with pytest.raises(UsageError, match="source_url") as err:
        load_gate_config(cwd=root)
    assert words in str(err.value) and "\n" not in str(err.value)
