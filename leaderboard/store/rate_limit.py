"""The store's rate limit: how many submissions one identity made in the last hour, counted atomically.

Its table holds one row per accepted submission of an identity, and a check counts those over a sliding window,
then adds the new one, in one transaction: on PostgreSQL a lock per identity serialises concurrent checks of the
same identity, so two racing submissions cannot both take the last slot; on SQLite the write lock does the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import DateTime, Index, Integer, String, delete, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.store.database import Database
from leaderboard.store.schema import Base


class RateEvent(Base):
    """One accepted submission of an identity; the rate limit counts these over a sliding window."""

    __tablename__ = "rate_events"
    __table_args__ = (Index("ix_rate_identity_at", "identity", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    identity: Mapped[str] = mapped_column(String(200))
    at: Mapped[datetime] = mapped_column(DateTime)


rate_events = RateEvent.__table__


@dataclass(frozen=True, slots=True)
class RateDecision:
    """Outcome of a rate-limit check; truthy when the submission may go ahead (and was counted)."""

    allowed: bool
    used: int
    limit: int
    retry_after_seconds: float = 0.0

    def __bool__(self) -> bool:
        return self.allowed


class RateLimit:
    """The rate limit of one store (`Store.rate_limit`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def check(self, identity: str, max_per_hour: int, *, window_seconds: float = 3600.0) -> RateDecision:
        """Count this submission against `identity`, or refuse it when the window already holds the maximum."""
        with self.db.write() as conn:
            self.db.lock(conn, f"rate:{identity}")
            now = self.db.now(conn)
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
