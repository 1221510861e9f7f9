"""The address of one row's Detail view: `BOARD/?system=ID` (with `&snapshot=D` when the row's snapshot has a
name), which opens the page on the Detail tab of stored system ID. It is what an entry the board proposes to a
model's page links as its source (`leaderboard.model_pages`), so it names the row by its store id, which never
changes, and the snapshot for the table beside it (the Leaderboard tab's own `?snapshot=`)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

SYSTEM = "system"  # the address's key naming the row whose Detail view opens


def detail_link(board_url: str, system_id: int, snapshot: str | None = None) -> str:
    """The Detail view of `system_id` on the board served at `board_url` (its public address)."""
    query = {"snapshot": snapshot} if snapshot else {}
    return f"{board_url.rstrip('/')}/?{urlencode({**query, SYSTEM: system_id})}"


def asked_system(params: Mapping[str, str]) -> str | None:
    """The stored system an address names (`?system=ID`), as the Detail tab's picker holds it; None when it names
    none or no id (an address is typed by anyone: anything but digits is ignored)."""
    raw = (params.get(SYSTEM) or "").strip()
    return str(int(raw)) if raw.isdigit() and len(raw) < 12 else None
