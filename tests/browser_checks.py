"""Debian's Chromium for Playwright, and what every page the browser tests look at must pass: it reads well (no
HTML entity, no 16-digit float, no table headed by nothing or by "1 2 3") and its screenshot is not blank."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

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
FONT_FILE = re.compile(r"\.(woff2?|ttf|otf|eot)$", re.IGNORECASE)

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


# A picture of the product is rewritten when more than this share of its pixels changed: a time, a count or a last
# digit that moved is not a change a reader would see, a tab, a column or a row added is.
PICTURE_CHANGED = 0.01


def product_picture(page: Any, target: Path, min_ink: float = 0.02) -> bool:
    """The docs' picture of the product (README, Get started): the browser's viewport, what a visitor sees first,
    written to `target` in the checkout unless the picture already there is the same size and differs from it in
    fewer than `PICTURE_CHANGED` of its pixels, so a run that changed nothing a reader would see leaves the checkout
    clean and one that changed the page rewrites the picture. Returns whether it wrote."""
    import io

    from PIL import Image, ImageChops

    page.wait_for_timeout(300)  # let the last event's paint settle
    shot = Image.open(io.BytesIO(page.screenshot(full_page=False))).convert("RGB")
    if target.is_file():
        before = Image.open(target).convert("RGB")
        if before.size == shot.size:
            moved = ImageChops.difference(before, shot).convert("L").point(lambda v: 255 if v > 24 else 0)
            if moved.histogram()[255] < PICTURE_CHANGED * shot.width * shot.height:
                return False
    fresh = target.with_name(f".{target.name}.new")
    shot.save(fresh, format="PNG", optimize=True)
    assert_not_blank(fresh, min_ink)
    fresh.replace(target)
    return True


# Gradio draws a table's body as rows of divs (`role=row` / `role=gridcell`), its header as a <table>.
# (text, pixels cut off) of every cell of the table under a selector whose content overflows its cell, and
# of the table's viewport when it must scroll sideways (columns cut off on the right).
CLIPPED_CELLS = """(selector) => [...document.querySelectorAll(
        [' [role=gridcell]', ' th', ' .virtual-table-viewport'].map(part => selector + part).join(', '))]
    .filter(c => c.getClientRects().length > 0)
    .map(c => [c.innerText.replace('⋮', '').trim().slice(0, 80), c.scrollWidth - c.clientWidth,
               (c.querySelector('span') || c).scrollWidth - (c.querySelector('span') || c).clientWidth])
    .filter(([text, cell, span]) => cell > 1 || span > 1)"""
# Rows of a Gradio table (header texts first), as drawn.
TABLE_TEXT = """(selector) => {
    const table = document.querySelector(selector);
    const headers = [...table.querySelectorAll('thead th')].map(th => th.innerText.replace('⋮', '').trim());
    const cells = row => [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.innerText.trim());
    const rows = [...table.querySelectorAll('.virtual-row[role=row]')].map(cells);
    return [headers, ...rows.filter(r => r.length === headers.length && r.some(cell => cell !== ''))];
}"""


def assert_stayed_local(requests: list[str]) -> None:
    """Every request went to the app on 127.0.0.1, and none fetched a font file (fonts are the system's)."""
    web = [u for u in requests if urlsplit(u).scheme in ("http", "https", "ws", "wss")]
    assert web, "no request recorded"
    assert [u for u in web if urlsplit(u).hostname != "127.0.0.1"] == []
    assert [u for u in web if FONT_FILE.search(urlsplit(u).path)] == []


def require_chromium() -> None:
    """Skip, saying why, where Debian's Chromium is not installed (CI installs it)."""
    if not CHROMIUM.is_file():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
