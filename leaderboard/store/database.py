"""The store's database, as every part of the store uses it: one engine, the dialect chosen from the URL
(`dialect`), and the transactions, the clock and the locks they share.

Every public method of the store runs in one transaction of its own (`write` or `read`), so a caller never sees
half a submission or half a result set; a part that writes inside another's transaction (an audit row beside
what it records, a blob beside its row) takes the caller's connection instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import Connection

from leaderboard.store.dialect import WRITE, dialect_for


class Database:
    """The database of the store at `url` (see the module docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.dialect = dialect_for(url)
        self.engine = self.dialect.engine()

    def shown(self) -> str:
        """The URL with its password hidden, for messages and logs."""
        return self.engine.url.render_as_string(hide_password=True)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A transaction that writes (on SQLite it takes the write lock as it begins)."""
        with self.engine.connect() as conn:
            conn.execution_options(**{WRITE: True})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One read transaction that sees the whole store as of one moment however many queries it makes
        (PostgreSQL: REPEATABLE READ; SQLite: one read transaction under WAL), for a reader whose tables must agree
        with each other while workers keep writing: a backup never holds results of a system it lacks."""
        with self.engine.connect() as conn:
            self.dialect.snapshot(conn)
            with conn.begin():
                yield conn

    def now(self, conn: Connection) -> datetime:
        """Naive UTC; on PostgreSQL the server's clock, shared by every worker whatever its own clock says."""
        return self.dialect.now(conn)

    def lock(self, conn: Connection, key: str) -> None:
        """Serialise the transactions that lock `key` (PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises
        writers)."""
        self.dialect.lock(conn, key)

    def close(self) -> None:
        self.engine.dispose()
