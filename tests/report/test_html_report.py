"""The HTML report (``--format html``) of each command, as a person opens it: rendered by a real headless
Chromium, its screenshot has the page's size and content down the page (charts, not a blank sheet), a failing
verdict shows first in its colour with its words, and the page asks for nothing but itself (its net log); the
HTML validates (html5lib, strict) and references nothing outside itself. On a user's project: one captured
kernel, its baseline saved, then made heavier (the gate fails)."""

from __future__ import annotations

import re
import sys

import pytest
from browser_helpers import has_colour, needs_chromium, non_blank_bands, remote_references, render, validate_html
from capture_helpers import cli

from tests.report.test_sarif import HEAVY, KERNEL, baselined_project

# each command's report on the project (its pyproject names the capture and the archs)
COMMANDS = {
    "analyze": ["analyze", "--capture", "cap.json"],
    "compare": ["compare", "--capture", "cap.json"],
    "frontier": ["frontier", "--capture", "cap.json", "--arch", "gfx942"],
    "explain": ["explain", "--capture", "cap.json"],
    "check": ["check"],
    "diff": ["diff", "--capture", "cap.json", "--set", "AMDGCN_USE_BUFFER_OPS=0"],  # moves gfx942
}
BAD_BG = (0xFF, 0xEB, 0xE9)  # page.py's --bad-bg: a failing verdict's banner


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = baselined_project(tmp_path_factory.mktemp("html"), '"gfx942", "sm_90"')
    (root / "ops.py").write_text(KERNEL.format(body=HEAVY))
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text()
                                         + 'source_url = "https://example.org/repo/blob/{commit}/{path}#L{line}"\n')
    return root


@pytest.fixture(scope="module")
def reports(project):
    """Each command's report, written with --format html -o (the exit codes: 1 for the failing gate)."""
    out = {}
    for name, argv in COMMANDS.items():
        page = project / f"{name}.html"
        done = cli(*argv, "--format", "html", "-o", str(page), cwd=project)
        out[name] = (page, done)
    return out


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_report_is_one_valid_page_that_references_nothing_outside_itself(reports, name):
    page, done = reports[name]
    assert done.returncode in ((1,) if name == "check" else (0,)), done.stderr[-3000:]
    text = page.read_text()
    validate_html(text)
    assert remote_references(text) == []
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text, name
    # the machine line, the compilers' versions and the command that made it
    assert 'id="machine"' in text and "compile-only" in text
    assert re.search(r'id="versions">compiled by Triton \d', text), name
    assert f"made by <code>vgprscope {name}" in text


def test_the_check_report_shows_the_failing_verdict_first_links_the_kernel_and_says_what_grew(reports):
    text = reports["check"][0].read_text()
    head = text.split("<main>")[0]
    assert 'class="verdict fail"' in head and "vgprscope check FAILED" in head
    assert '<tr class="worse">' in text
    # the kernel's file and line, through [tool.vgprscope] source_url (the def line: 6)
    assert re.search(r'<a href="https://example\.org/repo/blob/(HEAD|[0-9a-f]+)/ops\.py#L6">scale</a>', text), text[:3000]
    assert "vgpr_total" in text or "regs" in text
    assert "Where the changed entries stand" in text  # each changed entry on its staircases


def test_the_staircase_point_is_the_records_own_occupancy(reports, project):
    """The analyze report's charts draw the records the table shows: each point's label is the record's
    registers and the occupancy its registers give (the JSON export's numbers)."""
    import json

    text = reports["analyze"][0].read_text()
    doc = json.loads(cli("analyze", "--capture", "cap.json", "--format", "json", cwd=project).stdout)
    for row in doc["rows"]:
        occ = row["occupancy"]
        regs = row["usage"].get("vgpr_total", row["usage"].get("regs"))
        limit = occ["limits"].get("vgpr", occ["limits"].get("regs"))
        assert f"{regs} → {limit}" in text, (row["arch"], regs, limit)


@needs_chromium
@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_report_renders_in_chromium_with_content_and_loads_nothing(reports, name, tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="Pillow (matplotlib's, the plots extra) reads the screenshot")
    page, _ = reports[name]
    shot = render(page, tmp_path)

    assert Image.open(shot.png).size == (1280, 1600)
    bands = non_blank_bands(shot.png)
    assert all(b > 0.01 for b in bands[:3]), bands  # the header and the first chart or table, not a blank sheet
    assert sum(b > 0.01 for b in bands) >= 4, bands
    assert shot.requests == (), shot.requests  # nothing but itself: no script, style, font or image fetched
    assert shot.served == (f"/{page.name}",), shot.served
    assert "<svg" in shot.dom and "vgprscope" in shot.dom


@needs_chromium
def test_the_network_check_sees_a_page_that_loads_from_elsewhere(tmp_path):
    """The check above can fail: a page with a remote stylesheet and image is caught by it, and by the static
    check."""
    page = tmp_path / "bad.html"
    text = ('<!DOCTYPE html><html lang="en"><head><title>x</title><link rel="stylesheet" '
            'href="https://cdn.example.com/x.css"></head><body><img src="https://example.org/x.png" alt="x"></body></html>')
    page.write_text(text)
    shot = render(page, tmp_path)
    assert set(shot.requests) == {"https://cdn.example.com/x.css", "https://example.org/x.png"}
    assert "<img src=https://example.org/x.png>" in remote_references(text)
    assert "<link href=https://cdn.example.com/x.css>" in remote_references(text)


@needs_chromium
def test_a_failing_check_shows_its_verdict_at_the_top_in_red(reports, tmp_path):
    pytest.importorskip("PIL.Image", reason="Pillow (matplotlib's, the plots extra) reads the screenshot")
    shot = render(reports["check"][0], tmp_path)
    assert has_colour(shot.png, BAD_BG, top=260)
    verdict = re.search(r'<div class="verdict fail" id="verdict">(.*?)</div>', shot.dom, re.S)
    assert verdict and "vgprscope check FAILED" in verdict[1]


def test_the_library_writes_the_same_report(project, reports, tmp_path):
    """``.to_html(path)`` on a result writes the page the CLI writes (but for the command line it names). The
    library takes its archs as arguments (the CLI's come from the project's [tool.vgprscope]): the same two."""
    import subprocess

    script = tmp_path / "lib.py"
    out = tmp_path / "lib.html"
    script.write_text(f"import vgprscope\nr = vgprscope.analyze(capture={str(project / 'cap.json')!r}, arch=['gfx942', 'sm_90'])\n"
                      f"text = r.to_html({str(out)!r})\nprint(len(text))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=project, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    validate_html(text)
    assert "made by <code>vgprscope.analyze(...) from Python</code>" in text
    assert int(done.stdout.strip()) == len(text)
    assert text.count('class="card"') == reports["analyze"][0].read_text().count('class="card"')
