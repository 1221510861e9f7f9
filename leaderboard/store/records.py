"""The plain records the leaderboard store hands out (its tables are `leaderboard.store.schema`).

Callers get frozen dataclasses rather than ORM objects, so nothing they hold can lazy-load or write back outside
the store's transactions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from freshstack_hf._version import __version__

# Bump when the meaning or layout of stored results changes; every result row records the version it was written with.
SCHEMA_VERSION = 1


class SystemState(StrEnum):
    """Where a system stands (`systems.status`). The values are what the store holds: renaming one would make every
    older store read differently, so a new state is only ever added (and to the table's CHECK)."""

    PENDING = "pending"  # stored with neither scores nor a job
    QUEUED = "queued"  # a job of it waits for a worker
    RUNNING = "running"  # a worker holds that job's lease
    SCORED = "scored"  # its results are stored
    FAILED = "failed"  # its job failed for good (the error is kept)


class JobState(StrEnum):
    """Where a job stands in the queue (`jobs.state`); the values are what the store holds, as `SystemState`'s."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


LIVE_JOB_STATES = (JobState.QUEUED, JobState.RUNNING)  # a job some worker still has to finish


@dataclass(frozen=True, slots=True)
class SystemRecord:
    id: int
    name: str
    kind: str
    description: str
    link: str | None
    size: int | None
    created_at: datetime
    identity: str
    content_hash: str
    status: str  # a `SystemState` value
    error: str | None
    cutoff: str | None = None
    moderation: str | None = None  # None (listed), "hidden" or "deleted"
    moderation_reason: str | None = None
    moderated_by: str | None = None
    moderated_at: datetime | None = None
    track: str | None = None  # what a model was submitted to be scored on (full corpora, nano pools), as it said

    @property
    def listed(self) -> bool:
        """Whether the board shows this system: neither hidden nor deleted by a moderator."""
        return self.moderation is None


def system_record(row: Any) -> SystemRecord:
    """The record of a `systems` row."""
    return SystemRecord(**{k: row._mapping[k] for k in SystemRecord.__slots__})


@dataclass(frozen=True, slots=True)
class JobRecord:
    id: int
    system_id: int
    kind: str
    payload: dict[str, Any]
    state: str
    attempts: int
    max_attempts: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class Score:
    value: float
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """A system and its scores, `scores[topic][measure]`; empty until the system is scored.

    `efficiency` is what the worker measured while scoring it (`tracks.retrieval.jobs.efficiency`: documents/s,
    query latency, dimension, index bytes, hardware), read only when asked for and only where recorded.
    """

    system: SystemRecord
    scores: dict[str, dict[str, Score]]
    evaluator_version: str | None = None
    dataset_revision: str | None = None
    efficiency: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ResultMeta:
    """What every stored result carries so a number can be traced to the data and code that produced it."""

    dataset_revision: str
    evaluator_version: str = __version__
    parameters: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
