"""Debian's Chromium for Playwright, and what every page the browser tests look at must pass: it reads well (no
HTML entity, no 16-digit float, no table headed by nothing or by "1 2 3") and its screenshot is not blank."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ENTITY = re.compile(r"&#x?[0-9a-fA-F]+;|&(amp|lt|gt|quot);")
LONG_FLOAT = re.compile(r"\d\.\d{7,}")

# Header texts of every table on screen (Gradio's cell-menu glyph dropped); hidden tabs and tables are skipped.
VISIBLE_HEADERS = """() => [...document.querySelectorAll('table')]
    .filter(t => t.getClientRects().length > 0 && getComputedStyle(t).visibility !== 'hidden')
    .map(t => [...t.querySelectorAll('thead th')].map(th => th.innerText.replace('⋮', '').trim()))
    .filter(headers => headers.length > 0)"""


def assert_reads_well(page: Any, where: str) -> str:
    """The page's visible text: no HTML entity, no 16-digit float, no table headed by nothing or by "1 2 3"."""
    text = page.locator("body").inner_text()
    entity, long_float = ENTITY.search(text), LONG_FLOAT.search(text)
    assert entity is None, f"{where}: the HTML entity {entity.group()!r} is on screen"
    assert long_float is None, f"{where}: the full-precision float {long_float.group()!r} is on screen"
    for headers in page.evaluate(VISIBLE_HEADERS):
        assert any(headers), f"{where}: a table with blank headers"
        assert headers != [str(i) for i in range(1, len(headers) + 1)], f"{where}: a table headed {headers}"
    return text


def assert_not_blank(shot: Path, min_ink: float = 0.02) -> None:
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    width, height = image.size
    assert width >= 1000 and height >= 600
    small = image.resize((width // 4, height // 4))
    colours = small.getcolors(maxcolors=1 << 20)
    non_white = sum(count for count, rgb in colours if sum(rgb) < 720)
    assert len(colours) > 50 and non_white > min_ink * small.width * small.height  # text, table, controls drawn


def screenshot(page: Any, path: Path, min_ink: float = 0.02) -> Path:
    page.wait_for_timeout(300)  # let the last event's paint settle
    page.screenshot(path=str(path), full_page=True)
    assert_not_blank(path, min_ink)
    return path
