"""Rows the store tests write and count: one result's scores, the metadata every result carries, a table's size,
one job and the queue's states (read through the queue's own `list_jobs`)."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import func, select

from leaderboard.store.records import JobRecord, ResultMeta
from leaderboard.store.store import Store

META = ResultMeta("rev-1", parameters={"k": 10})


def topic_scores(value: float = 0.5, queries: int = 3) -> dict[str, dict]:
    per_query = {f"q{i}": {"alpha_ndcg@10": value, "coverage@20": value / 2} for i in range(queries)}
    return {"metrics": {"alpha_ndcg@10": value, "coverage@20": value / 2}, "per_query": per_query}


def count(store: Store, table) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def stored_job(store: Store, job_id: int) -> JobRecord:
    """The job `job_id` as the queue holds it now."""
    return next(j for j in store.queue.list_jobs() if j.id == job_id)


def queue_counts(store: Store) -> dict[str, int]:
    """How many jobs the queue holds in each state."""
    return dict(Counter(j.state for j in store.queue.list_jobs()))
