"""The running leaderboard driven through its API with gradio_client, as the app tests drive it."""

from __future__ import annotations

import re
from pathlib import Path

from leaderboard.store.store import Store

ALL_TYPES = ["baseline", "run", "model"]
ALL_SIZES = ["< 100M", "100M–1B", "1B–10B", "≥ 10B", "unknown"]


def table(client, search: str = "") -> dict[str, list]:
    """The /table endpoint's rows keyed by id, each a {header: value} dict: every page of the board, in order."""
    rows: dict[str, dict] = {}
    page, pages = 1, 1
    while page <= pages:
        view = (search, ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc", page)
        value = client.predict(*view, api_name="/table")
        data = value.get("value", value)
        rows.update({row[0]: dict(zip(data["headers"], row, strict=True)) for row in data["data"]})
        found = re.search(r"page (\d+) of (\d+)", value.get("label") or "")  # "rows 51–100 of 120 · page 2 of 3"
        page, pages = (int(found[1]) + 1, int(found[2])) if found else (page + 1, 0)
    return rows


def submit(client, path: Path, name: str, scope: str = "auto") -> tuple[str, dict]:
    from gradio_client import handle_file

    return client.predict(handle_file(str(path)), scope, name, "a test run", "", api_name="/submit_run")


def system_count(store: Store) -> int:
    return len(store.leaderboard_rows())
