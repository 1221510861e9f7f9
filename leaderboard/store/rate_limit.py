"""The rate-limit half of the store: how many submissions one identity made in the last hour, counted atomically.

A mixin of `Store` (which owns the engine and transactions). On PostgreSQL an advisory lock per identity
serialises concurrent checks of the same identity, so two racing submissions cannot both take the last slot; on
SQLite the write transaction's lock does the same.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, insert, select

from leaderboard.store.records import RateDecision
from leaderboard.store.schema import rate_events


class RateLimit:
    """Methods that need `_write`, `_now` and `_pg_lock` from the class they are mixed into."""

    def check_rate_limit(self, identity: str, max_per_hour: int, *, window_seconds: float = 3600.0) -> RateDecision:
        """Count this submission against `identity`, or refuse it when the window already holds the maximum."""
        with self._write() as conn:
            self._pg_lock(conn, f"rate:{identity}")
            now = self._now(conn)
            start = now - timedelta(seconds=window_seconds)
            conn.execute(delete(rate_events).where(rate_events.c.identity == identity, rate_events.c.at < start))
            times = conn.execute(
                select(rate_events.c.at).where(rate_events.c.identity == identity).order_by(rate_events.c.at)
            ).scalars()
            times = times.all()
            if len(times) >= max_per_hour:
                wait = (
                    (times[len(times) - max_per_hour] - start).total_seconds() if max_per_hour > 0 else window_seconds
                )
                return RateDecision(False, len(times), max_per_hour, max(wait, 0.0))
            conn.execute(insert(rate_events).values(identity=identity, at=now))
        return RateDecision(True, len(times) + 1, max_per_hour)
