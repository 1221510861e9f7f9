"""Opening a store made by another release: `systems.kind` is guarded by a CHECK listing the kinds the tracks
declare (`schema.SYSTEM_KINDS`). A store made before a kind existed (e.g. `answers`) refuses it, so its CHECK is
widened in place, rows and ids kept. The new CHECK allows the current kinds *and* every kind the store's rows
already hold, so a kind no track declares any more never makes an existing store fail to open; a store that
already accepts every current kind is left as it is (it may accept more, e.g. `reported` of older releases).
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.schema import CreateTable

from leaderboard.store.schema import SYSTEM_KINDS, kind_check, systems

log = logging.getLogger(__name__)


def _missing(declared: str) -> bool:
    return not all(f"'{kind}'" in declared for kind in SYSTEM_KINDS)


def _allowed(held: list[Any]) -> tuple[str, ...]:
    """The current kinds, then the other kinds the rows hold (sorted), so no stored row breaks the CHECK."""
    return (*SYSTEM_KINDS, *sorted({str(k) for k in held} - set(SYSTEM_KINDS)))


def widen_kinds_postgres(conn: Connection) -> None:
    """Replace an older CHECK on systems.kind (in the caller's transaction)."""
    found = conn.exec_driver_sql(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'ck_kind' "
        "AND conrelid = 'systems'::regclass"
    ).scalar()
    if found is None or not _missing(found):
        return
    allowed = _allowed(conn.exec_driver_sql("SELECT DISTINCT kind FROM systems").scalars().all())
    conn.exec_driver_sql("ALTER TABLE systems DROP CONSTRAINT ck_kind")
    conn.exec_driver_sql(f"ALTER TABLE systems ADD CONSTRAINT ck_kind CHECK ({kind_check(allowed)})")
    log.warning("store: widened systems.kind to %s", ", ".join(allowed))


def widen_kinds_sqlite(engine: Engine) -> None:
    """SQLite cannot alter a CHECK: rebuild `systems` under the current declaration, rows and ids kept.

    SQLite's documented procedure (foreign keys off; create the new table, copy, drop the old, rename the
    new) in one transaction, so results and jobs keep pointing at the same system ids; a crash leaves the
    old table as it was.
    """
    raw = engine.raw_connection()  # autocommit DBAPI connection: PRAGMA foreign_keys only works outside BEGIN
    try:
        cursor = raw.cursor()
        found = cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'systems'").fetchone()
        if found is None or not _missing(found[0]):
            return
        allowed = _allowed([row[0] for row in cursor.execute("SELECT DISTINCT kind FROM systems")])
        columns = ", ".join(c.name for c in systems.columns)
        cursor.execute("PRAGMA foreign_keys = OFF")
        try:
            cursor.execute("BEGIN IMMEDIATE")
            try:
                create = str(CreateTable(systems).compile(dialect=engine.dialect)).strip()
                create = create.replace(kind_check(SYSTEM_KINDS), kind_check(allowed), 1)
                cursor.execute(create.replace("CREATE TABLE systems", "CREATE TABLE systems_widened", 1))
                cursor.execute(f"INSERT INTO systems_widened ({columns}) SELECT {columns} FROM systems")
                cursor.execute("DROP TABLE systems")  # with foreign keys off, results and jobs are untouched
                cursor.execute("ALTER TABLE systems_widened RENAME TO systems")
                cursor.execute("COMMIT")
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
        finally:
            cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        raw.close()
    log.warning("store: rebuilt the systems table to allow the kinds %s", ", ".join(allowed))
