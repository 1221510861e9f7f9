"""Leaderboard rows made by hand for the table tests: systems with scores on two topics, as the store returns them."""

from __future__ import annotations

from datetime import datetime

from freshstack_hf.metrics import HEADLINE
from leaderboard.store.records import LeaderboardRow, Score, SystemRecord

TOPICS = ["alpha", "beta"]
A10, C20, R50 = (m.id for m in HEADLINE)


def system(sid: int, name: str, kind: str = "run", *, size: int | None = None, status: str = "scored", **kw):
    fields = {"description": "", "link": None, "identity": "ip:1.2.3.4", "content_hash": f"h{sid}", "error": None}
    fields.update(kw)
    return SystemRecord(sid, name, kind, created_at=datetime(2025, 3, sid % 28 + 1), size=size, status=status, **fields)


def row(sid: int, name: str, values: dict[str, float], kind: str = "run", revision: str = "rev1", **kw):
    scores = {t: {A10: Score(v), C20: Score(v / 2), R50: Score(v / 3)} for t, v in values.items()}
    return LeaderboardRow(system(sid, name, kind, **kw), scores, "0.1.0", revision if values else None)
