"""Opening a store made before a column existed: `create_all` creates missing tables but never alters existing
ones, so a nullable column added since (`systems.cutoff`, the moderation columns) is added here in place, rows
and ids kept. Only nullable columns with no default are ever added this way, so old rows simply read NULL ("not
given", "listed").
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, inspect

from leaderboard.store.schema import systems

log = logging.getLogger(__name__)

# (table, column) pairs added after the first release, in the order they were added.
ADDED = (
    (systems, "cutoff"),
    (systems, "moderation"),
    (systems, "moderation_reason"),
    (systems, "moderated_by"),
    (systems, "moderated_at"),
)


def add_missing_columns(conn: Connection) -> None:
    """`ALTER TABLE ... ADD COLUMN` for every column of `ADDED` the store lacks (SQLite and PostgreSQL alike, in
    the caller's transaction); before `kinds_migration`, whose SQLite rebuild copies every current column."""
    inspector = inspect(conn)
    for table, name in ADDED:
        present = {c["name"] for c in inspector.get_columns(table.name)}
        if name in present:
            continue
        column = table.c[name]
        kind = column.type.compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {name} {kind}")
        log.warning("store: added the column %s.%s", table.name, name)
