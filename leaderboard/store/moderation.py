"""Moderation: hide a system from the board, show it again, or delete it, each one transaction with its audit row.

* hidden: the system leaves every view the board computes (the table, its exports, plots, paired tests, rank
  intervals, the After-cutoff and Answers tables, archived-ranking readers) because the store's reads of the
  board (`Store.leaderboard_rows`, `Store.per_query_scores`) keep `LISTED` systems only; its row, scores and
  files stay, with the reason, who and when, and `unhide` restores it as it was.
* deleted: its results, jobs and the blobs only it needed (its archived ranking, its answers file) are removed
  in one transaction; the system's row stays as the tombstone (id, content hash, reason; description and link
  cleared). Its content hash stays unique, so the same file or model resubmitted is refused as deleted, naming the
  reason, and no race can store it again. A row is never removed: a database may reuse a removed row's id (SQLite
  does), and the audit trail names systems by id.

`Store.moderation` is this part of the store.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select, update

from freshstack_hf.errors import FreshStackError
from leaderboard.sanitize import sanitize_text
from leaderboard.store.audit import ADMIN, AuditLog, kind_of
from leaderboard.store.blob_store import BlobStore
from leaderboard.store.database import Database
from leaderboard.store.records import SystemRecord, system_record
from leaderboard.store.schema import DELETED, HIDDEN, jobs, results, systems

log = logging.getLogger(__name__)

MAX_REASON = 500


@dataclass(frozen=True, slots=True)
class Deleted:
    """A deleted system's tombstone, and the sha256 of each blob removed with it (those no other system needs)."""

    system: SystemRecord
    blobs: tuple[str, ...] = ()


def _system(conn: Connection, system_id: int) -> SystemRecord:
    """The system's row as the action left it (read in the action's own transaction)."""
    return system_record(conn.execute(select(systems).where(systems.c.id == system_id)).one())


def _reason(reason: str | None, action: str) -> str:
    text = sanitize_text(reason or "", MAX_REASON)
    if not text:
        raise FreshStackError(f"{action} needs a reason (--reason TEXT): it is kept with the system and in the log")
    return text


class Moderation:
    """The moderation of one store (`Store.moderation`): each action one transaction with its audit row."""

    def __init__(self, db: Database, audit: AuditLog, blobs: BlobStore) -> None:
        self.db, self.audit, self.blobs = db, audit, blobs

    def _locked_system(self, conn: Connection, system_id: int) -> Any:
        row = conn.execute(select(systems).where(systems.c.id == system_id).with_for_update()).first()
        if row is None:
            raise FreshStackError(f"no system #{system_id} in this store (the table's id column names them)")
        return row

    def hide_system(self, system_id: int, *, reason: str, by: str) -> SystemRecord:
        """Take a listed system off the board, keeping everything it has; refused when it is not listed."""
        text = _reason(reason, "hide")
        with self.db.write() as conn:
            row = self._locked_system(conn, system_id)
            if row.moderation is not None:
                since = row.moderated_at.strftime("%Y-%m-%d %H:%M") if row.moderated_at else "?"
                raise FreshStackError(
                    f"system #{system_id} is already {row.moderation} (by {row.moderated_by}, {since} UTC: "
                    f"{row.moderation_reason}); unhide it first to hide it with another reason"
                    if row.moderation == HIDDEN
                    else f"system #{system_id} is already {row.moderation} (by {row.moderated_by}, {since} UTC)"
                )
            now = self.db.now(conn)
            moderated = {"moderation": HIDDEN, "moderation_reason": text, "moderated_by": by, "moderated_at": now}
            conn.execute(update(systems).where(systems.c.id == system_id).values(**moderated))
            self.audit.append_in(
                conn, identity=by, kind=kind_of(ADMIN, "hide"), outcome=HIDDEN, system_id=system_id, detail=text
            )
            record = _system(conn, system_id)
        log.info("system #%d hidden by %s: %s", system_id, by, text)
        return record

    def unhide_system(self, system_id: int, *, by: str) -> SystemRecord:
        """Put a hidden system back on the board as it was; refused for a listed or a deleted system."""
        with self.db.write() as conn:
            row = self._locked_system(conn, system_id)
            if row.moderation != HIDDEN:
                state = "deleted: a deleted system cannot come back" if row.moderation == DELETED else "not hidden"
                raise FreshStackError(f"system #{system_id} is {state}")
            cleared = {"moderation": None, "moderation_reason": None, "moderated_by": None, "moderated_at": None}
            conn.execute(update(systems).where(systems.c.id == system_id).values(**cleared))
            detail = f"was hidden by {row.moderated_by}: {row.moderation_reason}"
            self.audit.append_in(
                conn, identity=by, kind=kind_of(ADMIN, "unhide"), outcome="unhidden", system_id=system_id, detail=detail
            )
            record = _system(conn, system_id)
        log.info("system #%d unhidden by %s", system_id, by)
        return record

    def delete_system(self, system_id: int, *, reason: str, by: str) -> Deleted:
        """Remove a system's results, jobs and blobs and keep its tombstone (see the module docstring)."""
        text = _reason(reason, "delete")
        with self.db.write() as conn:
            row = self._locked_system(conn, system_id)
            if row.moderation == DELETED:
                raise FreshStackError(f"system #{system_id} is already deleted ({row.moderation_reason})")
            conn.execute(delete(results).where(results.c.system_id == system_id))
            conn.execute(delete(jobs).where(jobs.c.system_id == system_id))
            removed = self.blobs.drop_in(conn, system_id)
            tombstone = {
                "moderation": DELETED,
                "moderation_reason": text,
                "moderated_by": by,
                "moderated_at": self.db.now(conn),
                "description": "",
                "link": None,
            }
            conn.execute(update(systems).where(systems.c.id == system_id).values(**tombstone))
            self.audit.append_in(
                conn, identity=by, kind=kind_of(ADMIN, "delete"), outcome=DELETED, system_id=system_id, detail=text
            )
            record = _system(conn, system_id)
        log.info("system #%d deleted by %s: %s", system_id, by, text)
        self.blobs.forget(removed)
        return Deleted(record, tuple(removed))

    def moderated_systems(self) -> list[SystemRecord]:
        """Every hidden or deleted system, most recently moderated first (the admin view)."""
        query = select(systems).where(systems.c.moderation.is_not(None)).order_by(systems.c.moderated_at.desc())
        with self.db.read() as conn:
            return [system_record(row) for row in conn.execute(query)]
