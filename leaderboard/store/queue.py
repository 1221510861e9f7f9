"""The store's job queue: queueing, claiming under a lease, heartbeats, and finishing exactly once.

`Store.queue` is this part of the store; kept apart because the lease rules are the part of the store that needs
the most careful reading. What holds on each database:

* claiming: one UPDATE ... WHERE id = (SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING. On PostgreSQL
  concurrent claimers skip each other's locked rows; on SQLite every write transaction starts with BEGIN
  IMMEDIATE, which takes the single write lock up front, so the select and the update cannot interleave;
* leases: a claim sets lease_expires_at, heartbeats push it forward, and a running job whose lease has
  passed is claimable again (attempts counted; past max_attempts it fails). Times come from the database
  clock on PostgreSQL, so workers with skewed clocks still agree;
* finishing: results (and the blobs behind them) are inserted and the job marked done in one transaction, only
  while the caller still owns the lease, so a worker that lost its job (a "zombie") cannot add a second result set.
Every outcome (done, failed, released back to the queue, given up, or lost to another worker) appends a row to
the audit log (`audit`) in the transaction that records it, the worker as its identity.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, case, func, insert, or_, select, update

from leaderboard.fault_points import POINTS
from leaderboard.store.audit import JOB, AuditLog, kind_of
from leaderboard.store.blob_store import BlobStore
from leaderboard.store.database import Database
from leaderboard.store.records import (
    LIVE_JOB_STATES,
    JobRecord,
    JobState,
    ResultMeta,
    SystemRecord,
    SystemState,
    system_record,
)
from leaderboard.store.schema import LISTED, SIDE_JOB_KINDS, insert_results, jobs, systems

log = logging.getLogger(__name__)


_GAVE_UP = "gave up: the workers running this job stopped sending heartbeats (killed, out of memory or hung)"


def _job(row: Any) -> JobRecord:
    return JobRecord(**{k: row._mapping[k] for k in JobRecord.__slots__})


class JobQueue:
    """The job queue of one store (`Store.queue`); each outcome is written with its audit row and, for a job that
    finishes, with its results and the blobs behind them."""

    def __init__(self, db: Database, audit: AuditLog, blobs: BlobStore) -> None:
        self.db, self.audit, self.blobs = db, audit, blobs
        # Set when a job queued through this object is committed: a worker of the same process (the board's own)
        # waits on it between claims, so a submission starts at once rather than at the worker's next poll.
        self.queued = threading.Event()

    # ---- queueing -------------------------------------------------------------------------------------------
    def insert_in(
        self,
        conn: Connection,
        system_id: int,
        kind: str,
        payload: Mapping[str, Any],
        max_attempts: int,
        now: datetime,
        failed: str | None = None,
    ) -> int:
        """Queue a job for `system_id` in the caller's transaction (a new system's first job); returns its id.
        `failed`: why the job cannot run at all (a model that cannot be measured again): it is stored failed with
        that error, and its system too, so the views read why from where they read a worker's failure."""
        row = {"system_id": system_id, "kind": kind, "payload": dict(payload), "max_attempts": max_attempts}
        state = {"state": JobState.QUEUED} if failed is None else {"state": JobState.FAILED, "finished_at": now}
        stmt = insert(jobs).values(**row, **state, error=failed, attempts=0, created_at=now, updated_at=now)
        job_id = conn.execute(stmt.returning(jobs.c.id)).scalar_one()
        status = SystemState.QUEUED if failed is None else SystemState.FAILED
        self._set_system(conn, system_id, status, failed, kind=kind)
        if failed is None:
            self.db.after_commit(conn, self.queued.set)
        return job_id

    def enqueue(self, system_id: int, kind: str, payload: Mapping[str, Any], *, max_attempts: int = 3) -> JobRecord:
        with self.db.write() as conn:
            job_id = self.insert_in(conn, system_id, kind, payload, max_attempts, self.db.now(conn))
            return _job(conn.execute(select(jobs).where(jobs.c.id == job_id)).one())

    def list_jobs(self, state: str | None = None, system_id: int | None = None) -> list[JobRecord]:
        query = select(jobs).order_by(jobs.c.id)
        if state is not None:
            query = query.where(jobs.c.state == state)
        if system_id is not None:
            query = query.where(jobs.c.system_id == system_id)
        with self.db.read() as conn:
            return [_job(row) for row in conn.execute(query)]

    def first_payloads(self) -> dict[int, dict[str, Any]]:
        """Each system's first job payload, what it was queued with (a model's reference, a baseline's method), for
        the systems that have a job; one query whatever their number."""
        first = select(func.min(jobs.c.id)).group_by(jobs.c.system_id)
        with self.db.read() as conn:
            rows = conn.execute(select(jobs.c.system_id, jobs.c.payload).where(jobs.c.id.in_(first)))
            return {system_id: dict(payload or {}) for system_id, payload in rows}

    def enqueue_unless_pending(
        self, system_id: int, kind: str, payload: Mapping[str, Any], *, max_attempts: int = 3
    ) -> JobRecord | None:
        """Queue a job for `system_id` unless one of its jobs is still queued or running; returns the new job or
        None. Checked and inserted in one transaction (serialised per system), so two processes starting at once
        (e.g. two apps re-queueing a failed baseline) never queue it twice."""
        with self.db.write() as conn:
            self.db.lock(conn, f"enqueue:{system_id}")
            live = select(jobs.c.id).where(jobs.c.system_id == system_id, jobs.c.state.in_(LIVE_JOB_STATES))
            if conn.execute(live.limit(1)).first() is not None:
                return None
            job_id = self.insert_in(conn, system_id, kind, payload, max_attempts, self.db.now(conn))
            return _job(conn.execute(select(jobs).where(jobs.c.id == job_id)).one())

    def live_jobs(self, kinds: Iterable[str] | None = None) -> int:
        """How many jobs (of `kinds`, else of any kind) are queued or running: work some worker still has to do."""
        query = select(func.count()).select_from(jobs).where(jobs.c.state.in_(LIVE_JOB_STATES))
        if kinds is not None:
            query = query.where(jobs.c.kind.in_(tuple(kinds)))
        with self.db.read() as conn:
            return conn.execute(query).scalar_one()

    def systems_in_progress(self) -> list[SystemRecord]:
        """The systems a worker is still computing (queued or running), running first, then oldest first: what the
        page's "Computing" line names."""
        running_first = case((systems.c.status == SystemState.RUNNING, 0), else_=1)
        busy = systems.c.status.in_((SystemState.QUEUED, SystemState.RUNNING))
        query = select(systems).where(busy, LISTED).order_by(running_first, systems.c.id)
        with self.db.read() as conn:
            return [system_record(row) for row in conn.execute(query)]

    # ---- claiming, leases, outcomes ---------------------------------------------------------------------------
    def _set_system(
        self, conn: Connection, system_id: int, status: SystemState, error: str | None = None, *, kind: str = ""
    ) -> None:
        """A job's state shows on its system's row, except a side job's (`schema.SIDE_JOB_KINDS`, which the tracks
        declare: a hole fill of a scored system leaves files beside the dataset, never its row's state)."""
        if kind not in SIDE_JOB_KINDS:
            conn.execute(update(systems).where(systems.c.id == system_id).values(status=status, error=error))

    def claim_job(
        self, worker_id: str, lease_seconds: float = 300.0, kinds: Iterable[str] | None = None
    ) -> JobRecord | None:
        """Take the oldest claimable job (queued, or running with an expired lease) for `worker_id`, or None.

        `kinds` limits the claim to those job kinds (the app's baseline worker takes only baseline jobs)."""
        with self.db.write() as conn:
            now = self.db.now(conn)
            expired = and_(jobs.c.state == JobState.RUNNING, jobs.c.lease_expires_at < now)
            exhausted = conn.execute(
                update(jobs)
                .where(expired, jobs.c.attempts >= jobs.c.max_attempts)
                .values(state=JobState.FAILED, updated_at=now, finished_at=now, error=_GAVE_UP)
                .returning(jobs.c.system_id, jobs.c.kind, jobs.c.lease_owner)
            ).all()
            for system_id, kind, owner in exhausted:
                self._set_system(conn, system_id, SystemState.FAILED, _GAVE_UP, kind=kind)
                self._audit_job(conn, owner or worker_id, kind, system_id, "failed", _GAVE_UP)
            claimable = [or_(jobs.c.state == JobState.QUEUED, expired), jobs.c.attempts < jobs.c.max_attempts]
            if kinds is not None:
                claimable.append(jobs.c.kind.in_(tuple(kinds)))
            pick = (
                select(jobs.c.id)
                .where(*claimable)
                .order_by(jobs.c.id)
                .limit(1)
                .with_for_update(skip_locked=True)
                .scalar_subquery()
            )
            lease = {"lease_owner": worker_id, "lease_expires_at": now + timedelta(seconds=lease_seconds)}
            row = conn.execute(
                update(jobs)
                .where(jobs.c.id == pick)
                .values(state=JobState.RUNNING, attempts=jobs.c.attempts + 1, updated_at=now, error=None, **lease)
                .returning(*jobs.c)
            ).first()
            if row is None:
                return None
            self._set_system(conn, row.system_id, SystemState.RUNNING, kind=row.kind)
        log.info("worker %s claimed job %d (attempt %d of %d)", worker_id, row.id, row.attempts, row.max_attempts)
        return _job(row)

    def _audit_job(
        self, conn: Connection, worker_id: str, kind: str, system_id: int | None, outcome: str, detail: str = ""
    ) -> None:
        self.audit.append_in(
            conn, identity=worker_id, kind=kind_of(JOB, kind), outcome=outcome, system_id=system_id, detail=detail
        )

    def _lost(self, conn: Connection, job_id: int, worker_id: str, what: str) -> None:
        """A worker reported on a job it no longer owns (its lease lapsed, or the job was deleted): nothing is
        stored, and the log says so."""
        row = conn.execute(select(jobs.c.kind, jobs.c.system_id).where(jobs.c.id == job_id)).first()
        kind, system_id = (row.kind, row.system_id) if row is not None else ("unknown", None)
        self._audit_job(conn, worker_id, kind, system_id, "lost", f"job #{job_id}: {what} refused, not its lease")

    def _owned(self, job_id: int, worker_id: str) -> Any:
        return and_(jobs.c.id == job_id, jobs.c.state == JobState.RUNNING, jobs.c.lease_owner == worker_id)

    def heartbeat(self, job_id: int, worker_id: str, lease_seconds: float = 300.0) -> bool:
        """Extend the lease; False when the job is no longer this worker's (it should stop working on it)."""
        with self.db.write() as conn:
            now = self.db.now(conn)
            lease = now + timedelta(seconds=lease_seconds)
            stmt = update(jobs).where(self._owned(job_id, worker_id)).values(lease_expires_at=lease, updated_at=now)
            return conn.execute(stmt).rowcount == 1

    def finish_job(
        self,
        job_id: int,
        worker_id: str,
        topic_results: Mapping[str, Any],
        meta: ResultMeta,
        *,
        size: int | None = None,
        cutoff: str | None = None,
        follow_up: tuple[str, Mapping[str, Any]] | None = None,
        blobs: Mapping[str, Any] | None = None,
    ) -> bool:
        """Store the results and mark the job done, atomically and only while `worker_id` owns the job.

        `blobs` ({role: `blobs.Blob`}: the ranking behind the results, the answers a follow-up judges, a fill's
        judgments) are stored in the same transaction, so the results never show without them.

        `cutoff` (a date the job found, e.g. in a model card) is kept only where the submitter gave none.
        `follow_up` = (kind, payload) queues the system's next job in the same transaction (the answer baseline's
        judge: its citation scores are stored, its All/Vital wait for a worker holding the judge's key).

        Returns False (and stores nothing) when the lease was lost: another worker has the job, or it ended.
        """
        with self.db.write() as conn:
            now = self.db.now(conn)
            done = {"state": JobState.DONE, "lease_expires_at": None, "updated_at": now, "finished_at": now}
            stmt = update(jobs).where(self._owned(job_id, worker_id)).values(**done)
            row = conn.execute(stmt.returning(jobs.c.system_id, jobs.c.kind)).first()
            if row is None:
                self._lost(conn, job_id, worker_id, "result")
                return False
            system_id = row.system_id
            self._audit_job(conn, worker_id, row.kind, system_id, "done", f"job #{job_id}")
            self.blobs.store_in(conn, system_id, blobs or {}, now)
            if not topic_results:  # a side job (a hole fill) leaves files, not scores: the system stays as it is
                return True
            insert_results(conn, system_id, topic_results, meta, now)
            scored = {"status": SystemState.SCORED, "error": None, "size": func.coalesce(size, systems.c.size)}
            scored["cutoff"] = func.coalesce(systems.c.cutoff, cutoff)
            conn.execute(update(systems).where(systems.c.id == system_id).values(**scored))
            if follow_up is not None:
                self.insert_in(conn, system_id, follow_up[0], follow_up[1], 3, now)
            POINTS.pause("finish_job")
        return True

    def fail_job(self, job_id: int, worker_id: str, error: str) -> bool:
        """Mark the job failed for good (a bad model, a time cap): retrying would fail the same way."""
        with self.db.write() as conn:
            now = self.db.now(conn)
            failed = {"state": JobState.FAILED, "error": error[:4000], "updated_at": now, "finished_at": now}
            stmt = update(jobs).where(self._owned(job_id, worker_id)).values(**failed)
            row = conn.execute(stmt.returning(jobs.c.system_id, jobs.c.kind)).first()
            if row is not None:
                self._set_system(conn, row.system_id, SystemState.FAILED, error[:4000], kind=row.kind)
                self._audit_job(conn, worker_id, row.kind, row.system_id, "failed", f"job #{job_id}: {error}")
            else:
                self._lost(conn, job_id, worker_id, "failure")
        return row is not None

    def release_job(self, job_id: int, worker_id: str, error: str | None = None) -> bool:
        """Give a job back to the queue at once (worker stopping, process crash); failed past max_attempts."""
        with self.db.write() as conn:
            now = self.db.now(conn)
            state = case((jobs.c.attempts >= jobs.c.max_attempts, JobState.FAILED), else_=JobState.QUEUED)
            values = {"state": state, "lease_owner": None, "lease_expires_at": None, "error": error, "updated_at": now}
            stmt = update(jobs).where(self._owned(job_id, worker_id)).values(**values)
            row = conn.execute(stmt.returning(jobs.c.system_id, jobs.c.state, jobs.c.kind)).first()
            if row is not None:
                given_up = row.state == JobState.FAILED
                status = SystemState.FAILED if given_up else SystemState.QUEUED
                self._set_system(conn, row.system_id, status, error if given_up else None, kind=row.kind)
                outcome = "failed" if given_up else "released"
                detail = f"job #{job_id}: {error}" if error else f"job #{job_id}"
                self._audit_job(conn, worker_id, row.kind, row.system_id, outcome, detail)
            else:
                self._lost(conn, job_id, worker_id, "release")
        return row is not None
