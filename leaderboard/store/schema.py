"""Tables of the leaderboard store (the plain records it hands out live in `records`; the audit log, the rate
limit and the blobs declare their own tables beside the code that owns them).

Portable on purpose: the same declarations run on a local SQLite file and on a PostgreSQL server shared by
several workers, so states are strings guarded by CHECK constraints (no PostgreSQL ENUM types to migrate),
JSON is SQLAlchemy's generic type (JSONB on PostgreSQL) and every time is naive UTC. Callers get frozen
dataclasses rather than ORM objects, so nothing they hold can lazy-load or write back outside the store's
transactions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    insert,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from leaderboard.live_scores import UPLOADED_RUN
from leaderboard.store.dialect import JSON_TYPE
from leaderboard.store.records import JobState, ResultMeta, SystemState
from leaderboard.tracks import answers, reranking, retrieval

# The kinds of systems the store accepts: each track declares its own (figures published elsewhere are never stored).
SYSTEM_KINDS = (*retrieval.SYSTEM_KINDS, *reranking.SYSTEM_KINDS, *answers.SYSTEM_KINDS)
# Scored from a file as uploaded (`Store.live_scores`).
UPLOADED_KINDS = (*retrieval.UPLOADED_KINDS, *reranking.UPLOADED_KINDS)
# What the store asks of a system's kind: whether its results record the efficiency a worker measured
# (`Store.leaderboard_rows(efficiency=True)`), and whether its live column says why it is never scored live, whatever
# its results hold (`Store.live_scores`): a ranking scored from an uploaded file, whose queries stay private.
MEASURED_KINDS = (*retrieval.MEASURED_KINDS, *reranking.MEASURED_KINDS, *answers.MEASURED_KINDS)
NEVER_LIVE = {kind: UPLOADED_RUN for kind in UPLOADED_KINDS}
# The blobs a track keeps behind its rows beside the archived ranking (`ranking_blob`): an answers file, which an
# older release kept in its runs archive's folder (`archive`).
ANSWERS_BLOB = answers.ANSWERS_BLOB
# The job kinds that leave files, not scores (a hole fill): each track declares its own; the queue never shows their
# state on their system's row (`queue.JobQueue`).
SIDE_JOB_KINDS = (*retrieval.SIDE_JOB_KINDS, *reranking.SIDE_JOB_KINDS, *answers.SIDE_JOB_KINDS)
# The systems a Hub model was measured as (a retriever, a reranker), and what of them ranks candidates rather than a
# corpus (`leaderboard.model_pages`: what the board may propose to a model's page, under which tasks).
HUB_MODEL_KINDS = (*retrieval.HUB_MODEL_KINDS, *reranking.HUB_MODEL_KINDS)
CANDIDATE_KINDS, CANDIDATE_TRACKS = reranking.SYSTEM_KINDS, retrieval.CANDIDATE_TRACKS
SYSTEM_STATES = tuple(SystemState)
JOB_STATES = tuple(JobState)


def one_of(column: str, values: tuple[str, ...]) -> str:
    """The SQL condition of a string column holding one of `values`."""
    allowed = ", ".join(f"'{v}'" for v in values)
    return f"{column} IN ({allowed})"


def kind_check(kinds: tuple[str, ...]) -> str:
    """The condition of the CHECK on systems.kind (`migrations` widens an older store's)."""
    return one_of("kind", kinds)


def _one_of(column: str, values: tuple[str, ...]) -> CheckConstraint:
    return CheckConstraint(one_of(column, values), name=f"ck_{column}")


class Base(DeclarativeBase):
    pass


class System(Base):
    """One leaderboard entry: a baseline, a submitted run or model (retrieval), an answers system (answers)."""

    __tablename__ = "systems"
    __table_args__ = (_one_of("kind", SYSTEM_KINDS), _one_of("status", SYSTEM_STATES))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    description: Mapped[str] = mapped_column(Text, default="")
    link: Mapped[str | None] = mapped_column(String(500), nullable=True)
    size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # parameters, where known
    created_at: Mapped[datetime] = mapped_column(DateTime)
    identity: Mapped[str] = mapped_column(String(200), default="")
    # The dedupe key: a run file's hash, or a model's name and revision. Unique, so racing inserts cannot both win.
    content_hash: Mapped[str] = mapped_column(String(128), unique=True)
    status: Mapped[str] = mapped_column(String(16), default=SystemState.PENDING.value)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # A model's release or training cutoff (ISO day), where the submitter or the model card gave one: the
    # After-cutoff view scores the system only on questions asked after it. Added after release 1: an older
    # store gets the column from `migrations`.
    cutoff: Mapped[str | None] = mapped_column(String(10), nullable=True)
    # `moderation`: NULL (listed), "hidden" (off every view, restorable) or "deleted" (the row is the tombstone
    # refusing the same content). Added after release 1: an older store gets them from `migrations`.
    moderation: Mapped[str | None] = mapped_column(String(16), nullable=True)
    moderation_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    moderated_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    moderated_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # What a model was submitted to be scored on (its track's own word, e.g. full corpora or nano pools), as the
    # submission says it; NULL for a row that chooses none. Added in store schema 3: `migrations` adds it to an
    # older store and fills it there once (`migrations.fill_tracks`).
    track: Mapped[str | None] = mapped_column(String(16), nullable=True)


class Result(Base):
    """One measure of one system on one topic, with everything needed to reproduce or invalidate it."""

    __tablename__ = "results"
    __table_args__ = (UniqueConstraint("system_id", "topic", "measure", name="uq_result"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"))
    topic: Mapped[str] = mapped_column(String(100))
    measure: Mapped[str] = mapped_column(String(64))
    value: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    schema_version: Mapped[int] = mapped_column(Integer)
    evaluator_version: Mapped[str] = mapped_column(String(64))
    dataset_revision: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    # Bulky columns last: SQLite reads a row's columns in order, so the leaderboard's scan never touches these.
    per_query: Mapped[dict[str, float] | None] = mapped_column(JSON_TYPE, nullable=True)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON_TYPE, default=dict)


class Job(Base):
    """A queued evaluation. A running job belongs to `lease_owner` until `lease_expires_at`, then to anyone."""

    __tablename__ = "jobs"
    __table_args__ = (_one_of("state", JOB_STATES), Index("ix_jobs_state_lease", "state", "lease_expires_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("systems.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON_TYPE, default=dict)
    state: Mapped[str] = mapped_column(String(16), default=JobState.QUEUED.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class StoreMeta(Base):
    """Facts about the store itself, one row each: `schema` is the `STORE_SCHEMA` that last opened it."""

    __tablename__ = "store_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


systems = System.__table__
# `moderation`: a system neither hidden nor deleted is listed, the one rule of what the board shows (every board
# read applies it).
HIDDEN, DELETED = "hidden", "deleted"
LISTED = systems.c.moderation.is_(None)
results = Result.__table__
jobs = Job.__table__
store_meta = StoreMeta.__table__

# The layout of the store's tables: 1 = before blobs (rankings and answers in a folder), 2 = blobs, blob_refs and
# store_meta, 3 = systems.track. A release opens stores of its own layout or older (`migrations` migrates them) and
# refuses newer ones.
STORE_SCHEMA = 3


def _parts(result: Any) -> tuple[Mapping[str, float], Mapping[str, Mapping[str, float]], Mapping[str, Any]]:
    if isinstance(result, Mapping):
        return result["metrics"], result.get("per_query") or {}, result.get("ci") or {}
    return result.metrics, getattr(result, "per_query", None) or {}, getattr(result, "ci", None) or {}


def result_rows(system_id: int, topic: str, result: Any, meta: ResultMeta, now: datetime) -> list[dict[str, Any]]:
    """Rows of `results` for one topic's scores (a `TopicResult`, or a dict with `metrics`, `per_query`, `ci`).

    Non-finite values are refused: SQLite would store NaN as NULL and the leaderboard would show a blank
    where an evaluator bug should have been reported.
    """
    metrics, per_query, ci = _parts(result)
    rows = []
    for measure, value in metrics.items():
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"topic {topic!r}: {measure} is {value}; only finite scores can be stored")
        low, high = ci.get(measure) or (None, None)
        by_query = {qid: float(s[measure]) for qid, s in per_query.items() if measure in s}
        rows.append(
            {
                "system_id": system_id,
                "topic": topic,
                "measure": measure,
                "value": value,
                "ci_low": None if low is None else float(low),
                "ci_high": None if high is None else float(high),
                "per_query": by_query or None,
                "parameters": meta.parameters,
                "schema_version": meta.schema_version,
                "evaluator_version": meta.evaluator_version,
                "dataset_revision": meta.dataset_revision,
                "created_at": now,
            }
        )
    return rows


def insert_results(
    conn: Connection, system_id: int, topic_results: Mapping[str, Any], meta: ResultMeta, now: datetime
) -> None:
    """Insert a system's scores (topic -> result) in the caller's transaction; none at all is refused."""
    if not topic_results:
        raise ValueError("no topic results to save")
    for topic, result in topic_results.items():  # one topic at a time: a failure mid-way rolls back the rest
        conn.execute(insert(results), result_rows(system_id, topic, result, meta, now))
