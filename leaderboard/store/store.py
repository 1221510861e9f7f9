"""The leaderboard's store: one `Store` holding a board's systems and their results, composed of the parts beside
them, each owning its state and sharing one `Database` (the engine, the dialect, the transactions, the clock):

* `store.queue` (`queue.JobQueue`): queueing, claiming under a lease, heartbeats, finishing exactly once;
* `store.blobs` (`blob_store.BlobStore`): what rows depend on beyond their scores, and its local cache;
* `store.audit` (`audit.AuditLog`): the append-only log of submissions, job outcomes and moderation;
* `store.moderation` (`moderation.Moderation`): hiding, unhiding and deleting systems;
* `store.rate_limit` (`rate_limit.RateLimit`): submissions per identity and hour.

Every method is one transaction, so callers never see half a submission or half a result set; the same code runs
on a SQLite file and on PostgreSQL (`dialect`). Dedupe: systems.content_hash is unique and inserts do nothing on a
conflict, so of N racing identical submissions exactly one is created and the others get the stored row back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Text, cast, delete, func, select, update

from freshstack_hf.errors import FreshStackError
from freshstack_hf.windows import parse_day
from leaderboard.defaults import default_store_url
from leaderboard.fault_points import POINTS
from leaderboard.live_scores import status
from leaderboard.sanitize import MAX_DESCRIPTION, MAX_NAME, sanitize_link, sanitize_text
from leaderboard.store.audit import AuditEntry, AuditLog
from leaderboard.store.blob_store import BlobStore, blob_refs
from leaderboard.store.blobs import Blob
from leaderboard.store.database import Database, SharedRead
from leaderboard.store.migrations import migrate
from leaderboard.store.moderation import Moderation
from leaderboard.store.queue import JobQueue
from leaderboard.store.rate_limit import RateLimit
from leaderboard.store.records import LeaderboardRow, ResultMeta, Score, SystemRecord, SystemState, system_record
from leaderboard.store.schema import (
    HIDDEN,
    LISTED,
    MEASURED_KINDS,
    NEVER_LIVE,
    SYSTEM_KINDS,
    insert_results,
    jobs,
    results,
    systems,
)


class Store:
    """See the module docstring; `cache_dir` (`--runs-dir`) is an optional local copy of blobs, never their record."""

    def __init__(self, url: str | None = None, *, cache_dir: str | Path | None = None) -> None:
        self.db = Database(url or default_store_url())
        self.url, self.engine = self.db.url, self.db.engine
        self.audit = AuditLog(self.db)
        self.blobs = BlobStore(self.db, cache_dir)
        self.queue = JobQueue(self.db, self.audit, self.blobs)
        self.moderation = Moderation(self.db, self.audit, self.blobs)
        self.rate_limit = RateLimit(self.db)
        self._marker: SharedRead[tuple[Any, ...]] = SharedRead(self._read_change_marker)

    def __repr__(self) -> str:
        return f"Store({self.db.shown()!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def create_all(self) -> None:
        """Migrate the store to this release's layout (`migrations`), safe from several processes; a store laid
        out by a newer release is refused before anything changes."""
        migrate(self.db, self)

    # ---- systems and results --------------------------------------------------------------------------------
    def add_system(
        self,
        *,
        name: str,
        kind: str,
        content_hash: str,
        description: str = "",
        link: str | None = None,
        size: int | None = None,
        identity: str = "",
        cutoff: str | None = None,
        track: str | None = None,
        job: tuple[str, Mapping[str, Any]] | None = None,
        results: Mapping[str, Any] | None = None,
        meta: ResultMeta | None = None,
        max_attempts: int = 3,
        blobs: Mapping[str, Blob] | None = None,
        audit: AuditEntry | Callable[[SystemRecord], AuditEntry | None] | None = None,
        failed: str | None = None,
    ) -> tuple[SystemRecord, bool]:
        """Store a system unless one with `content_hash` exists; returns (stored system, created).

        `job=(kind, payload)` queues its evaluation and `results` (with `meta`) stores its scores, in the same
        transaction as the insert and only when it is created, so a duplicate is never queued or scored twice.
        `cutoff` (YYYY-MM-DD) is stored as the day it names; `track`, what a model was submitted to be scored on,
        as the submission says it (the store only keeps it). `blobs` ({role: Blob}: the ranking behind the scores,
        the answers a judge reads) go in the same transaction: a row is never stored without them. So does `audit`,
        the audit row of a created system (an entry, or a function of the stored system giving it, for a message
        that names the new id): a kill never leaves a system without its row, nor a row without its system.
        `failed` (with `job`): why the job cannot run, stored as its failure and the system's (`remeasure`: a model
        whose folder is gone gets a row on the new revision that says so).
        """
        _check_kind_and_key(kind, content_hash)
        if results is not None and meta is None:
            raise ValueError("results need a ResultMeta (dataset revision, evaluator version)")
        status = SystemState.SCORED if results is not None else SystemState.QUEUED if job is not None else None
        text = {"name": name, "description": description, "link": link, "identity": identity}
        values = _system_values(kind, content_hash, text, size, cutoff, track, status or SystemState.PENDING)
        with self.db.write() as conn:
            now = self.db.now(conn)
            stmt = self.db.dialect.insert_or_ignore(systems, "content_hash", **values, created_at=now)
            new_id = conn.execute(stmt.returning(systems.c.id)).scalar_one_or_none()
            if new_id is not None:
                self.blobs.store_in(conn, new_id, blobs or {}, now)
                if results is not None:
                    assert meta is not None
                    insert_results(conn, new_id, results, meta, now)
                if job is not None:
                    self.queue.insert_in(conn, new_id, job[0], job[1], max_attempts, now, failed)
            row = conn.execute(select(systems).where(systems.c.content_hash == content_hash)).one()
            if new_id is not None:
                self._audit_created(conn, system_record(row), audit)
                POINTS.pause("add_system")
        return system_record(row), new_id is not None

    def _audit_created(
        self,
        conn: Connection,
        system: SystemRecord,
        audit: AuditEntry | Callable[[SystemRecord], AuditEntry | None] | None,
    ) -> None:
        """The audit row of a system just created, in its transaction (`audit` may name the new id)."""
        entry = audit(system) if callable(audit) else audit
        if entry is not None:
            self.audit.append_in(
                conn,
                identity=entry.identity,
                kind=entry.kind,
                outcome=entry.outcome,
                content_hash=system.content_hash,
                system_id=system.id,
                detail=entry.detail,
            )

    def get_system(self, system_id: int) -> SystemRecord | None:
        with self.db.read() as conn:
            row = conn.execute(select(systems).where(systems.c.id == system_id)).first()
        return system_record(row) if row else None

    def find_system(self, content_hash: str) -> SystemRecord | None:
        """The system already stored for this file hash or model revision, if any (check before scoring)."""
        with self.db.read() as conn:
            row = conn.execute(select(systems).where(systems.c.content_hash == content_hash)).first()
        return system_record(row) if row else None

    def save_results(
        self,
        system_id: int,
        topic_results: Mapping[str, Any],
        meta: ResultMeta,
        *,
        replace: bool = False,
        blobs: Mapping[str, Blob] | None = None,
    ) -> None:
        """Store a system's scores and their `blobs`, all or none; without `replace`, existing scores fail it."""
        with self.db.write() as conn:
            now = self.db.now(conn)
            marked = conn.execute(
                update(systems).where(systems.c.id == system_id).values(status=SystemState.SCORED, error=None)
            ).rowcount
            if not marked:
                raise FreshStackError(f"no system with id {system_id}")
            if replace:
                conn.execute(delete(results).where(results.c.system_id == system_id))
            self.blobs.store_in(conn, system_id, blobs or {}, now)
            insert_results(conn, system_id, topic_results, meta, now)

    def results_for(self, system_id: int) -> list[dict[str, Any]]:
        """Every stored row of one system, per-query scores and parameters included (detail views, exports)."""
        with self.db.read() as conn:
            rows = conn.execute(
                select(results).where(results.c.system_id == system_id).order_by(results.c.topic, results.c.measure)
            )
            return [dict(row._mapping) for row in rows]

    def leaderboard_rows(
        self,
        kinds: tuple[str, ...] | None = None,
        measures: tuple[str, ...] | None = None,
        *,
        include_hidden: bool = False,
        efficiency: bool = False,
    ) -> list[LeaderboardRow]:
        """Every listed system with its scores pivoted to topic -> measure, in two queries whatever the system count.

        `measures` keeps only those measure ids (a table showing three measures need not read ten). Systems a
        moderator hid or deleted are left out (`moderation`), so every view built from these rows
        leaves them out too; `include_hidden` adds the hidden ones (never the deleted: they have no scores). With
        `efficiency`, a third query reads what the worker measured (`LeaderboardRow.efficiency`).
        """
        query = select(systems).order_by(systems.c.id)
        query = query.where(LISTED | (systems.c.moderation == HIDDEN) if include_hidden else LISTED)
        if kinds:
            query = query.where(systems.c.kind.in_(kinds))
        cols = (results.c.system_id, results.c.topic, results.c.measure, results.c.value, results.c.ci_low)
        scores_query = select(*cols, results.c.ci_high, results.c.evaluator_version, results.c.dataset_revision)
        if measures:
            scores_query = scores_query.where(results.c.measure.in_(measures))
        with self.db.read() as conn:
            found = {row.id: row for row in conn.execute(query)}
            scored = conn.execute(scores_query).all()
            costs = _efficiency_by_system(conn) if efficiency else {}
        scores: dict[int, dict[str, dict[str, Score]]] = {sid: {} for sid in found}
        versions: dict[int, tuple[str, str]] = {}
        for sid, topic, measure, value, low, high, evaluator, revision in scored:
            if sid in scores:  # a system added between the two queries (PostgreSQL) waits for the next render
                scores[sid].setdefault(topic, {})[measure] = Score(value, low, high)
                versions.setdefault(sid, (evaluator, revision))
        return [
            LeaderboardRow(system_record(row), scores[sid], *versions.get(sid, (None, None)), costs.get(sid))
            for sid, row in found.items()
        ]

    def per_query_scores(
        self, measures: tuple[str, ...], *, include_hidden: bool = False
    ) -> list[tuple[int, str, str, str, float, Any]]:
        """(system id, topic, measure, dataset revision, value, per-query scores) of `measures` for every listed
        system (as `leaderboard_rows`): the After-cutoff view re-averages the stored per-query scores (the bulky
        column a table scan skips), the rank column resamples them."""
        cols = (results.c.system_id, results.c.topic, results.c.measure, results.c.dataset_revision)
        query = select(*cols, results.c.value, results.c.per_query).where(results.c.measure.in_(measures))
        if not include_hidden:
            query = query.where(results.c.system_id.in_(select(systems.c.id).where(LISTED)))
        with self.db.read() as conn:
            return [tuple(row) for row in conn.execute(query.order_by(results.c.system_id, results.c.topic))]

    def per_query_texts(self, measure: str) -> list[tuple[int, str, str, str]]:
        """(system id, topic, dataset revision, per-query scores as stored JSON text) of `measure` for every listed
        system (as `leaderboard_rows`): left undecoded, so a reader that keeps what it decoded before decodes only
        the rows whose text changed."""
        cols = (results.c.system_id, results.c.topic, results.c.dataset_revision, cast(results.c.per_query, Text))
        listed = results.c.system_id.in_(select(systems.c.id).where(LISTED))
        with self.db.read() as conn:
            return [tuple(r) for r in conn.execute(select(*cols).where(results.c.measure == measure, listed))]

    def live_scores(self, dataset_revision: str | None = None) -> dict[int, dict[str, Any]]:
        """{system id: its live record} of the listed systems scored on `dataset_revision` (default: any), the one
        entry point of the board's live columns (`leaderboard.live_scores` has the record's form): the aggregates
        a worker recorded on the embargoed questions, or why there are none ("not measured: no access to the
        private split", "too few questions ..."); for an uploaded run, that it cannot be scored live. A system with
        no record (a baseline, a row scored before live scoring) is left out.

        One query: the `live` key of each system's first result row (the same on every row of a result set), as
        `efficiency` is read."""
        first = select(func.min(results.c.id)).join(systems, systems.c.id == results.c.system_id).where(LISTED)
        if dataset_revision is not None:
            first = first.where(results.c.dataset_revision == dataset_revision)
        cols = (results.c.system_id, systems.c.kind, results.c.parameters["live"])
        query = select(*cols).join(systems, systems.c.id == results.c.system_id)
        query = query.where(results.c.id.in_(first.group_by(results.c.system_id)))
        with self.db.read() as conn:
            found = conn.execute(query).all()
        live: dict[int, dict[str, Any]] = {}
        for sid, kind, record in found:
            if kind in NEVER_LIVE:
                live[sid] = status(NEVER_LIVE[kind])
            elif isinstance(record, Mapping) and record:
                live[sid] = dict(record)
        return live

    # ---- what changed ---------------------------------------------------------------------------------------
    def change_marker(self) -> tuple[Any, ...]:
        """A value that changes whenever a system, a result set, a job or a blob reference is added or changes
        state, and whenever a moderator hides, unhides or deletes a system. Cheap (indexed aggregates), so a page
        can check it on every render and rebuild only when another process (a worker, a second app) wrote something.
        Renders asking at once share one read (`SharedRead`), which still sees every write made before they asked.
        """
        return self._marker()

    def _read_change_marker(self) -> tuple[Any, ...]:
        moderated = (func.count(systems.c.moderation), func.max(systems.c.moderated_at))
        with self.db.read() as conn:
            return (
                *conn.execute(select(func.count(), func.max(systems.c.id), *moderated)).one(),
                conn.execute(select(func.max(results.c.id))).scalar(),
                *conn.execute(select(func.count(), func.max(jobs.c.updated_at))).one(),
                conn.execute(select(func.count()).select_from(blob_refs)).scalar(),
            )


def _check_kind_and_key(kind: str, content_hash: str) -> None:
    """Refuse a kind no track declares and an unusable content hash, before anything else is looked at."""
    if kind not in SYSTEM_KINDS:
        raise FreshStackError(f"system kind {kind!r} unknown: use one of {', '.join(SYSTEM_KINDS)}")
    if not content_hash or len(content_hash) > 128:
        raise FreshStackError("content_hash must be 1 to 128 characters (a file hash or model@revision)")


def _system_values(
    kind: str,
    content_hash: str,
    text: Mapping[str, Any],
    size: int | None,
    cutoff: str | None,
    track: str | None,
    status: SystemState,
) -> dict[str, Any]:
    """The columns of a new system, its submitter's `text` (name, description, link, identity) sanitized; a name
    left empty by the sanitizing is refused."""
    values = {
        "name": sanitize_text(text["name"], MAX_NAME),
        "kind": kind,
        "content_hash": content_hash,
        "description": sanitize_text(text["description"], MAX_DESCRIPTION, multiline=True),
        "link": sanitize_link(text["link"]),
        "size": size,
        "identity": sanitize_text(text["identity"], 200),
        "cutoff": parse_day(cutoff, "cutoff").isoformat() if cutoff and cutoff.strip() else None,
        "status": status,
        "track": track,
    }
    if not values["name"]:
        raise FreshStackError("system name is empty (after removing markup): give a plain-text name")
    return values


def _efficiency_by_system(conn: Connection) -> dict[int, dict[str, Any]]:
    """{system id: what the worker measured while scoring it (`tracks.retrieval.jobs.efficiency`)} for the systems of
    `MEASURED_KINDS` that record it.

    The figures live in the `parameters` JSON of a system's result rows, the same on every row of one result set,
    so one row per system is read (its first), and only the `efficiency` key of the JSON is fetched: the page's read
    stays small whatever else the parameters record. A run file's parameters never put figures on the board,
    whatever they say.
    """
    first = (
        select(func.min(results.c.id))
        .join(systems, systems.c.id == results.c.system_id)
        .where(systems.c.kind.in_(MEASURED_KINDS))
        .group_by(results.c.system_id)
    )
    query = select(results.c.system_id, results.c.parameters["efficiency"]).where(results.c.id.in_(first))
    return {sid: dict(cost) for sid, cost in conn.execute(query) if isinstance(cost, Mapping) and cost}
