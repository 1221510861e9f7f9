"""The audit trail: one append-only row per submission (with its outcome and reason), per job outcome and per
moderation action, so an operator can read back who did what and when (`freshstack-hf admin log`).

`Store.audit` appends and reads them. Rows are only ever inserted, and the database itself refuses anything else:
opening a store puts the dialect's append-only guard on the table (SQLite: BEFORE UPDATE / BEFORE DELETE
triggers; PostgreSQL: BEFORE UPDATE OR DELETE OR TRUNCATE), so neither a bug of ours nor a hand-typed statement
can rewrite history without first dropping the trigger, which takes a schema change and shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, DateTime, Index, Integer, String, Text, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.store.database import Database
from leaderboard.store.schema import Base, systems

MAX_DETAIL = 2000  # characters of a reason or message kept per row
HASH_SHOWN = 24  # characters of a content hash where a table shows it (JSON has them whole)
APPEND_ONLY = "audit_log is append-only: its rows are never updated or deleted"

# What the kinds of rows mean (the About tab and docs/public.md say the same). `board:*` rows are what the board
# does by itself (a model measured again on a new snapshot, an archived ranking re-scored, a baseline row), with
# `BOARD` as the actor and the system's owner named in the detail: never a new `submit:*` by its first submitter.
SUBMISSION, JOB, ADMIN, BOARD_ACTS = "submit", "job", "admin", "board"
BOARD = "board"  # the identity of the board acting by itself; no submitter's identity has this form (user:, ip:)


def kind_of(group: str, what: str) -> str:
    """A row's kind: `submit:run`, `job:model`, `admin:hide`..."""
    return f"{group}:{what}"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row to append beside what it records (`Store.add_system(audit=...)`): who, what, the outcome and the
    detail; the store adds the time, the system and its content hash."""

    identity: str
    kind: str
    outcome: str
    detail: str = ""


def board_entry(act: str, outcome: str, detail: str, *, owner: str = BOARD) -> AuditEntry:
    """The row of something the board does by itself (`board:<act>`: a baseline row, an archived ranking re-scored),
    the board the actor and the system's owner named first (a baseline's owner is the board)."""
    return AuditEntry(BOARD, kind_of(BOARD_ACTS, act), outcome, f"for its owner {owner or 'unknown'}: {detail}")


class AuditEvent(Base):
    """One thing that happened, appended and never changed: a submission and its outcome, a job's outcome, a
    moderation action. `identity` says who: the submitter's rate-limit identity, the worker, the
    moderator."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_at", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime)
    identity: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(64))
    outcome: Mapped[str] = mapped_column(String(32))
    content_hash: Mapped[str | None] = mapped_column(String(128), nullable=True)
    system_id: Mapped[int | None] = mapped_column(Integer, nullable=True)  # no foreign key: the log outlives rows
    detail: Mapped[str] = mapped_column(Text, default="")


audit_log = AuditEvent.__table__


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One row of the audit log, as `AuditLog.rows` hands it out."""

    id: int
    at: datetime
    identity: str
    kind: str
    outcome: str
    content_hash: str | None
    system_id: int | None
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at.isoformat(timespec="seconds") + "Z",
            "identity": self.identity,
            "kind": self.kind,
            "outcome": self.outcome,
            "content_hash": self.content_hash,
            "system_id": self.system_id,
            "detail": self.detail,
        }


def short_hash(content_hash: str | None) -> str:
    """A content hash as a table shows it: its first characters, enough to tell rows apart."""
    if not content_hash:
        return "-"
    return content_hash if len(content_hash) <= HASH_SHOWN else content_hash[: HASH_SHOWN - 1] + "…"


def _record(row: Any) -> AuditRecord:
    return AuditRecord(**{k: row._mapping[k] for k in AuditRecord.__slots__})


class AuditLog:
    """The audit log of one store (`Store.audit`): rows appended in a caller's transaction (`append_in`, so the row
    and what it records commit together) or in one of their own (`append`), and read back (`rows`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append_in(
        self,
        conn: Connection,
        *,
        identity: str,
        kind: str,
        outcome: str,
        content_hash: str | None = None,
        system_id: int | None = None,
        detail: str = "",
    ) -> None:
        """Append one row in the caller's transaction, so the row and what it records commit together."""
        if content_hash is None and system_id is not None:
            content_hash = conn.execute(select(systems.c.content_hash).where(systems.c.id == system_id)).scalar()
        row = {
            "at": self.db.now(conn),
            "identity": (identity or "unknown")[:200],
            "kind": kind[:64],
            "outcome": outcome[:32],
            "content_hash": content_hash[:128] if content_hash else None,
            "system_id": system_id,
            "detail": (detail or "")[:MAX_DETAIL],
        }
        conn.execute(insert(audit_log).values(**row))

    def append(
        self,
        identity: str,
        kind: str,
        outcome: str,
        *,
        content_hash: str | None = None,
        system_id: int | None = None,
        detail: str = "",
    ) -> None:
        """Append one row in a transaction of its own (an outcome that stored nothing else: a refusal)."""
        with self.db.write() as conn:
            self.append_in(
                conn,
                identity=identity,
                kind=kind,
                outcome=outcome,
                content_hash=content_hash,
                system_id=system_id,
                detail=detail,
            )

    def rows(self, *, since: datetime | None = None, last: int | None = None) -> list[AuditRecord]:
        """The log in the order it was written; `since` (naive UTC) keeps rows at or after it, `last` the newest
        rows only."""
        query = select(audit_log)
        if since is not None:
            query = query.where(audit_log.c.at >= since)
        newest_first = last is not None
        query = query.order_by(audit_log.c.id.desc()).limit(last) if newest_first else query.order_by(audit_log.c.id)
        with self.db.read() as conn:
            found = [_record(row) for row in conn.execute(query)]
        return found[::-1] if newest_first else found
