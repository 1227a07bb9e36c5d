"""A page as a person sees it: Debian's Chromium renders an HTML file headless, served from a loopback HTTP
server, takes a screenshot and its rendered DOM, and logs every request (a net log): what the page itself asked
for is every request whose initiator is the page's origin (Chromium's own background requests have none), and
the server says which files it served; the HTML validates with html5lib. The tests that
use it skip, with the reason, where Chromium is not installed (`.ci/run` installs it: apt-get install chromium)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (apt-get install chromium; .ci/run "
                                                             "installs it)")

# Headless, and quiet on a closed network: no background connections (updates, sync, safe browsing).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1")


@dataclass(frozen=True)
class Rendered:
    png: Path
    dom: str  # the DOM after rendering (what the page shows, as markup)
    requests: tuple[str, ...]  # every URL the page itself asked for (its initiator: the page), favicon aside
    served: tuple[str, ...]  # the paths the loopback server served (the page, and a favicon the browser asks for)


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=120)
    return done


def _requested(net_log: Path, origin: str) -> tuple[str, ...]:
    """The URLs a Chromium net log's requests asked for on behalf of ``origin`` (their ``params.initiator``)."""
    text = net_log.read_text(errors="replace").rstrip().rstrip(",")
    if not text.endswith("}"):
        text += "]}"  # a log cut at exit: close its event list
    events = json.loads(text).get("events", [])
    urls = [e["params"]["url"] for e in events
            if isinstance(e.get("params"), dict) and e["params"].get("initiator") == origin and e["params"].get("url")]
    return tuple(dict.fromkeys(u for u in urls if not u.endswith("/favicon.ico")))


@contextlib.contextmanager
def _serve(directory: Path) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server of ``directory``: (its origin, the paths it served so far)."""
    import functools
    import http.server
    import threading

    served: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            served.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def render(page: Path, tmp_path: Path, width: int = 1280, height: int = 1600) -> Rendered:
    """``page`` rendered at ``width`` x ``height``: its screenshot, its DOM and what it requested."""
    png, net = tmp_path / f"{page.stem}.png", tmp_path / f"{page.stem}-net.json"
    with _serve(page.parent) as (origin, served):
        url = f"{origin}/{page.name}"
        shot = _chromium([f"--window-size={width},{height}", f"--screenshot={png}", f"--log-net-log={net}",
                          "--net-log-capture-mode=Everything", url], tmp_path / "profile-shot")
        assert png.is_file(), shot.stderr[-3000:]
        dom = _chromium(["--dump-dom", url], tmp_path / "profile-dom")
        assert dom.returncode == 0, dom.stderr[-3000:]
        paths = tuple(p for p in dict.fromkeys(served) if p != "/favicon.ico")
    return Rendered(png, dom.stdout, _requested(net, origin), paths)


def validate_html(text: str) -> None:
    """The page parses as HTML5 without a single parse error (html5lib, strict)."""
    import html5lib

    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(text)


def non_blank_bands(png: Path, bands: int = 8) -> list[float]:
    """The share of pixels that are not the page's white, in ``bands`` horizontal bands top to bottom."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    w, h = img.size
    out = []
    for i in range(bands):
        box = img.crop((0, i * h // bands, w, (i + 1) * h // bands)).resize((w // 4, max(h // bands // 4, 1)))
        px = list(box.get_flattened_data() if hasattr(box, "get_flattened_data") else box.getdata())
        out.append(sum(1 for p in px if sum(p) < 740) / len(px))
    return out


def has_colour(png: Path, rgb: tuple[int, int, int], top: int, tolerance: int = 12) -> bool:
    """Whether pixels of ``rgb`` (within ``tolerance`` per channel) lie in the screenshot's top ``top`` pixels."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    region = img.crop((0, 0, img.size[0], min(top, img.size[1])))
    pixels = region.get_flattened_data() if hasattr(region, "get_flattened_data") else region.getdata()
    return any(all(abs(a - b) <= tolerance for a, b in zip(p, rgb)) for p in pixels)


def remote_references(text: str) -> list[str]:
    """What in the page would load from elsewhere: an element's src / a stylesheet's href / CSS url() or
    @import / a script from a URL (a link a person clicks, <a href>, loads nothing)."""
    import re

    import html5lib

    doc = html5lib.parse(text, namespaceHTMLElements=False)
    out = []
    for el in doc.iter():
        tag = el.tag if isinstance(el.tag, str) else ""
        for attr in ("src", "srcset", "data", "poster", "action", "formaction"):
            if el.get(attr):
                out.append(f"<{tag} {attr}={el.get(attr)}>")
        if tag in ("link", "base", "iframe", "embed", "object") or (tag == "script" and el.get("src")):
            out.append(f"<{tag}>")
        if el.get("href") and tag not in ("a",):
            out.append(f"<{tag} href={el.get('href')}>")
        if tag == "image" or el.get("{http://www.w3.org/1999/xlink}href"):
            out.append(f"<{tag} xlink>")
    out += re.findall(r"url\([^)]*\)|@import[^;]*", text)
    return out
