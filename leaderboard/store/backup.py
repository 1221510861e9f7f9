"""The store as a whole, for backups (`leaderboard.export`): one read that sees every table at the same moment,
and a backup's rows restored, ids included, into an empty store in one transaction.

A mixin of `Store`, like `leaderboard.store.queue`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Table, func, insert, inspect, select

from freshstack_hf.errors import FreshStackError
from leaderboard.store.audit import ADMIN, audit_log, kind_of
from leaderboard.store.schema import Base, jobs, rate_events, results, systems


class StoreBackup:
    """Methods that need `engine`, `is_postgres`, `_write`, `_read`, `_pg_lock` and `_audit` from the class they are
    mixed into (`Store`)."""

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One read transaction that sees the whole store as of one moment however many queries it makes
        (PostgreSQL: REPEATABLE READ; SQLite: one read transaction under WAL), for a reader whose tables must agree
        with each other while workers keep writing: a backup never holds results of a system it lacks."""
        with self.engine.connect() as conn:
            if self.is_postgres:
                conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            with conn.begin():
                yield conn

    def _row_counts(self, conn: Connection) -> dict[str, int]:
        present = set(inspect(conn).get_table_names())
        tables = [t for t in Base.metadata.sorted_tables if t.name in present and t.name != "store_meta"]
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in tables}

    def row_counts(self) -> dict[str, int]:
        """Rows of each of the store's tables that exist (`store_meta`, facts about the store itself, aside): all
        zero, or no table at all, is an empty store, the only kind `restore` writes into."""
        with self._read() as conn:
            return self._row_counts(conn)

    def _refuse_unless_empty(self, conn: Connection) -> None:
        held = {name: n for name, n in self._row_counts(conn).items() if n}
        if held:
            rows = ", ".join(f"{name}: {n:,} rows" for name, n in held.items())
            raise FreshStackError(
                f"the store {self.engine.url.render_as_string(hide_password=True)} is not empty ({rows}): import "
                "restores a board into an empty store only; give a new database, or a SQLite file that does not "
                "exist yet. Nothing was changed"
            )

    def require_empty(self) -> None:
        """Refuse a store holding any row (see `row_counts`), before anything is created or migrated in it."""
        with self._read() as conn:
            self._refuse_unless_empty(conn)

    def restore(
        self, tables: Sequence[tuple[Table, Iterable[Sequence[Mapping[str, Any]]]]], *, by: str, detail: str
    ) -> None:
        """Insert a backup's rows, ids included, into this empty store and append one `admin:import` audit row, all
        in one transaction: a failure anywhere leaves the store as empty as it was.

        `tables` are (table, batches of rows) in an order that satisfies the foreign keys (systems and blobs before
        what points at them); the batches are read inside the transaction, so a large table streams. On PostgreSQL
        each id sequence is then moved past the restored ids, so the next row a worker adds gets a new id."""
        with self._write() as conn:
            self._pg_lock(conn, "create_all")  # no app can be creating tables or rows of its own meanwhile
            self._refuse_unless_empty(conn)
            for table, batches in tables:
                for batch in batches:
                    if batch:
                        conn.execute(insert(table), list(batch))
            if self.is_postgres:
                for table in (systems, results, jobs, audit_log, rate_events):
                    conn.execute(
                        select(
                            func.setval(
                                func.pg_get_serial_sequence(table.name, "id"),
                                select(func.coalesce(func.max(table.c.id), 0) + 1).scalar_subquery(),
                                False,
                            )
                        )
                    )
            self._audit(conn, identity=by, kind=kind_of(ADMIN, "import"), outcome="imported", detail=detail)
