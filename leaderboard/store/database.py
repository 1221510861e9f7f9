"""The store's database, as every part of the store uses it: one engine, the dialect chosen from the URL
(`dialect`), and the transactions, the clock and the locks they share.

Every public method of the store runs in one transaction of its own (`write` or `read`), so a caller never sees
half a submission or half a result set; a part that writes inside another's transaction (an audit row beside
what it records, a blob beside its row) takes the caller's connection instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Generic, TypeVar

from sqlalchemy import Connection

from leaderboard.store.dialect import WRITE, dialect_for

T = TypeVar("T")
_AFTER_COMMIT = "freshstack_after_commit"  # the key under which a write transaction's connection keeps its callbacks


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
        """A transaction that writes (on SQLite it takes the write lock as it begins); what `after_commit` asked for
        runs once it is committed, never when it is rolled back."""
        with self.engine.connect() as conn:
            conn.execution_options(**{WRITE: True})
            conn.info[_AFTER_COMMIT] = committed = []
            try:
                with conn.begin():
                    yield conn
            finally:  # the pooled connection keeps its info: leave none of this transaction's in it
                del conn.info[_AFTER_COMMIT]
        for callback in committed:
            callback()

    @staticmethod
    def after_commit(conn: Connection, callback: Callable[[], None]) -> None:
        """Call `callback` when the `write` transaction of `conn` commits: a reader woken by it finds the rows the
        transaction wrote."""
        conn.info[_AFTER_COMMIT].append(callback)

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


class SharedRead(Generic[T]):
    """`read()` shared by the threads that ask at once: each caller gets the answer of a read that began after it
    asked (so it sees every write committed before it asked), and callers arriving while a read runs share the
    next one. Fifty page renders at once then cost the database two reads instead of fifty, and no more
    connections than one, whatever the app's read concurrency. A failed read raises in every caller sharing it.
    """

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._turn = threading.Condition()
        self._started = 0  # reads begun so far
        self._finished = 0  # the latest read done, counted as `_started` counted it
        self._running = False
        self._answer: tuple[T | None, Exception | None] = (None, None)

    def __call__(self) -> T:
        with self._turn:
            wanted = self._started + 1  # the first read to begin from now on
            while self._finished < wanted and self._running:
                self._turn.wait()
            if self._finished >= wanted:
                return _unpack(self._answer)
            self._running, self._started = True, self._started + 1  # nobody reads: this caller does, for all
            mine = self._started
        answer: tuple[T | None, Exception | None] = (None, RuntimeError("the shared store read was interrupted"))
        try:
            answer = (self._read(), None)
        except Exception as exc:
            answer = (None, exc)
        finally:
            with self._turn:
                self._running, self._finished, self._answer = False, mine, answer
                self._turn.notify_all()
        return _unpack(answer)


def _unpack(answer: tuple[T | None, Exception | None]) -> T:
    value, error = answer
    if error is not None:
        raise error
    return value  # type: ignore[return-value]
