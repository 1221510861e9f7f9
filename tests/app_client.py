"""The running leaderboard driven through its API with gradio_client, as the app tests drive it."""

from __future__ import annotations

from pathlib import Path

from leaderboard.store import Store

ALL_TYPES = ["baseline", "run", "model"]
ALL_SIZES = ["< 100M", "100M–1B", "1B–10B", "≥ 10B", "unknown"]


def table(client, search: str = "") -> dict[str, list]:
    """The /table endpoint's rows keyed by id, each a {header: value} dict."""
    value = client.predict(search, ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc", api_name="/table")
    data = value.get("value", value)
    return {row[0]: dict(zip(data["headers"], row, strict=True)) for row in data["data"]}


def submit(client, path: Path, name: str, scope: str = "auto") -> tuple[str, dict]:
    from gradio_client import handle_file

    return client.predict(handle_file(str(path)), scope, name, "a test run", "", api_name="/submit_run")


def system_count(store: Store) -> int:
    return len(store.leaderboard_rows())
