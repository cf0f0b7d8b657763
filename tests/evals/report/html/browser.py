"""Headless Chromium for the report.html tests, and for looking at a report.

:func:`headless` runs chromium on a page; :func:`measure` lays a copy of a
report out at a window width and returns what a script read from the layout
(report.html itself runs no script: its Content-Security-Policy forbids one, so
the copy drops that policy and appends the script); :func:`screenshot` saves a
PNG of a page. As a command, it takes screenshots to look at::

    .venv/bin/python -m tests.evals.report.html.browser report.html 1280 1920

writes ``report-1280.png`` and ``report-1920.png`` beside ``report.html``
(``--out DIR`` elsewhere, ``--height`` to change the 4000-pixel page height).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

# Reads the layout with every <details> open (the scenario drill-down): every
# table wider than the box it sits in (and whether that box scrolls sideways),
# every cell whose content overflows it, and the page's width against the
# window's. Written into the page, since --dump-dom prints the DOM once the page
# has loaded.
MEASURE = """
<script>
(function () {
  for (const details of document.querySelectorAll("details")) details.open = true;
  const name = (el) => (el.closest("section") || {}).id + " " + el.tagName.toLowerCase()
    + " " + el.textContent.trim().slice(0, 60);
  const tables = [];
  for (const table of document.querySelectorAll("table")) {
    const box = table.parentElement;
    const scrolls = ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
    tables.push({name: name(table), width: table.offsetWidth, room: box.clientWidth, scrolls});
  }
  const cells = [];
  for (const cell of document.querySelectorAll("td, th")) {
    if (cell.scrollWidth > cell.clientWidth + 1) {
      cells.push({name: name(cell), width: cell.scrollWidth, room: cell.clientWidth});
    }
  }
  const out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify({
    window: window.innerWidth,
    page: document.documentElement.scrollWidth,
    tables: tables,
    cells: cells,
  });
  document.body.appendChild(out);
})();
</script>
"""
_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n?')


def chromium() -> str:
    """The chromium binary; skips the test when there is none."""
    found = "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None
    found = found or shutil.which("chromium")
    if not found:
        pytest.skip("chromium not installed: apt-get install chromium (the CI script installs it)")
    return found


def headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """chromium ``args`` with a fresh profile, nothing fetched, within 120 s."""
    profile.mkdir(parents=True, exist_ok=True)
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    env = {**os.environ, "HOME": str(profile)}
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium did not finish within 120 s: {' '.join(cmd)}")


def measure(page: Path, width: int, work: Path) -> dict[str, Any]:
    """``page`` laid out in a window ``width`` pixels wide: what :data:`MEASURE` read."""
    browser = chromium()
    copy = work / f"measure-{width}.html"
    text = _CSP.sub("", page.read_text("utf-8"), count=1)
    copy.write_text(text.replace("</body>", MEASURE + "</body>", 1), "utf-8")
    out = headless(
        browser,
        work / f"profile-{width}",
        f"--window-size={width},1200",
        "--dump-dom",
        copy.resolve().as_uri(),
    )
    found = re.search(r'<pre id="measured">(.*?)</pre>', out.stdout, re.S)
    assert out.returncode == 0 and found, out.stderr[-2000:]
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


def screenshot(page: Path, width: int, height: int, out: Path, work: Path) -> Path:
    """A PNG of ``page`` in a window ``width`` x ``height`` pixels."""
    done = headless(
        chromium(),
        work / f"profile-shot-{width}",
        f"--screenshot={out}",
        f"--window-size={width},{height}",
        page.resolve().as_uri(),
    )
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Screenshots of a report.html.")
    parser.add_argument("page", type=Path)
    parser.add_argument("widths", type=int, nargs="+")
    parser.add_argument("--height", type=int, default=4000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or args.page.parent
    with tempfile.TemporaryDirectory() as work:
        for width in args.widths:
            shot = out / f"{args.page.stem}-{width}.png"
            print(screenshot(args.page, width, args.height, shot, Path(work)))


if __name__ == "__main__":
    main()
