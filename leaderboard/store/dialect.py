"""The one place where the store's code differs by database: a `Dialect`, chosen once from the store's URL.

The same store runs on a SQLite file (one machine; WAL lets the page read while a worker writes) and on
PostgreSQL (several workers on several machines). What each does its own way is a method of its dialect, and
nowhere else:

* the engine: a SQLite file gets WAL, `synchronous=FULL` (a committed submission survives a power cut), foreign
  keys and a 30 s busy timeout, and every write transaction starts with BEGIN IMMEDIATE, which takes the single
  write lock up front, so a select and the update it decides cannot interleave with another writer's. PostgreSQL
  is reached through psycopg 3 whatever driver the URL names;
* insert-or-ignore (`ON CONFLICT DO NOTHING`, which each database spells through its own SQLAlchemy dialect);
* locks: PostgreSQL serialises transactions on a key with an advisory lock (row locks, `FOR UPDATE SKIP LOCKED`,
  are SQLAlchemy's to render, and SQLite leaves them out); on SQLite the write lock already serialises writers;
* the clock: on PostgreSQL the server's, shared by every worker whatever its own clock says;
* the append-only guard of the audit log: triggers that make the database refuse to update or delete its rows;
* widening an older store's CHECK on `systems.kind` (PostgreSQL alters it; SQLite rebuilds the table);
* a read that sees the whole store as of one moment, and id sequences moved past the ids a restore wrote;
* what the URL says about where the data lives: a file on this machine (SQLite), or a server every machine reaches.

`dialect_for(url)` picks the dialect `DIALECTS` registers for the URL's scheme; `register_dialect` adds one.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import JSON, Connection, Engine, Table, create_engine, event, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.schema import CreateTable
from sqlalchemy.sql.dml import Insert

from freshstack_hf.errors import FreshStackError

log = logging.getLogger(__name__)

WRITE = "freshstack_write"  # execution option: this transaction will write (SQLite: BEGIN IMMEDIATE)
# JSON columns: SQLAlchemy's generic JSON, stored as JSONB on PostgreSQL.
JSON_TYPE = JSON().with_variant(postgresql.JSONB(), "postgresql")


class KindsCheck(Protocol):
    """The CHECK `ck_kind` on `table.kind` as the store's migrations widen it (`migrations.SYSTEM_KINDS_CHECK`)."""

    table: Table
    kinds: tuple[str, ...]  # the kinds the current declaration allows

    def missing(self, declared: str) -> bool:
        """Whether a store declaring `declared` (its CHECK, or its whole table) refuses a current kind."""

    def allowed(self, held: Iterable[Any]) -> tuple[str, ...]:
        """What the widened CHECK allows, given the kinds the store's rows hold."""

    def condition(self, kinds: tuple[str, ...]) -> str:
        """The CHECK's SQL condition allowing `kinds`."""


class Dialect:
    """What one store's database does its own way (see the module docstring), for the store at `url`."""

    server = False  # whether the store lives on a server every machine reaches (else in a file on this one)

    def __init__(self, url: str) -> None:
        self.given, self.url = url, make_url(url)

    @property
    def file(self) -> Path | None:
        """The file the store lives in, when it is a file on this machine."""
        return None

    def engine(self) -> Engine:
        raise NotImplementedError

    def insert_or_ignore(self, table: Table, key: str, **values: Any) -> Insert:
        """An INSERT of `values` that does nothing when a row with the same `key` exists."""
        raise NotImplementedError

    def now(self, conn: Connection) -> datetime:
        """The store's clock, as naive UTC."""
        return datetime.now(UTC).replace(tzinfo=None)

    def lock(self, conn: Connection, key: str) -> None:
        """Serialise the transactions of `conn` that lock the same `key` until they end."""

    def snapshot(self, conn: Connection) -> None:
        """Make the transaction `conn` is about to begin see the whole store as of one moment."""

    def install_append_only_guard(self, conn: Connection, table: str, message: str) -> None:
        """Triggers that make the database refuse to update or delete rows of `table` (idempotent)."""
        raise NotImplementedError

    def widen_kinds(self, engine: Engine, check: KindsCheck) -> None:
        """Replace an older store's CHECK on `kind` by one allowing the current kinds and every kind its rows hold,
        rows and ids kept; a store that already allows every current kind is left as it is."""
        raise NotImplementedError

    def reset_sequences(self, conn: Connection, tables: Iterable[Table]) -> None:
        """Move each table's id sequence past the ids written with the rows (after a restore)."""


class SQLite(Dialect):
    """A SQLite file: one machine, writers serialised by the database's single write lock."""

    @property
    def file(self) -> Path | None:
        return Path(self.url.database).expanduser() if self.url.database else None

    def engine_url(self) -> URL:
        """The URL SQLAlchemy connects with (a dialect registered under another scheme rewrites it)."""
        return self.url

    def engine(self) -> Engine:
        database = self.url.database
        if not database or database == ":memory:" or database.startswith("file:"):
            raise FreshStackError(f"store {self.given!r}: give a SQLite file (sqlite:///path/to/leaderboard.db)")
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(self.engine_url(), connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
        return engine

    def insert_or_ignore(self, table: Table, key: str, **values: Any) -> Insert:
        return sqlite.insert(table).values(**values).on_conflict_do_nothing(index_elements=[key])

    def install_append_only_guard(self, conn: Connection, table: str, message: str) -> None:
        for event_name in ("UPDATE", "DELETE"):
            conn.exec_driver_sql(
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{event_name.lower()} BEFORE {event_name} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            )

    def widen_kinds(self, engine: Engine, check: KindsCheck) -> None:
        """SQLite cannot alter a CHECK: the table is rebuilt under the current declaration with the widened CHECK,
        by SQLite's documented procedure (foreign keys off; create the new table, copy, drop the old, rename the
        new) in one transaction, so the rows pointing at it keep their ids; a crash leaves the old table as it was.
        """
        table = check.table
        raw = engine.raw_connection()  # autocommit DBAPI connection: PRAGMA foreign_keys only works outside BEGIN
        try:
            cursor = raw.cursor()
            query = f"SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '{table.name}'"
            found = cursor.execute(query).fetchone()
            if found is None or not check.missing(found[0]):
                return
            allowed = check.allowed(row[0] for row in cursor.execute(f"SELECT DISTINCT kind FROM {table.name}"))
            columns = ", ".join(c.name for c in table.columns)
            cursor.execute("PRAGMA foreign_keys = OFF")
            try:
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    create = str(CreateTable(table).compile(dialect=engine.dialect)).strip()
                    create = create.replace(check.condition(check.kinds), check.condition(allowed), 1)
                    widened = f"{table.name}_widened"
                    cursor.execute(create.replace(f"CREATE TABLE {table.name}", f"CREATE TABLE {widened}", 1))
                    cursor.execute(f"INSERT INTO {widened} ({columns}) SELECT {columns} FROM {table.name}")
                    cursor.execute(f"DROP TABLE {table.name}")  # with foreign keys off, what points at it is untouched
                    cursor.execute(f"ALTER TABLE {widened} RENAME TO {table.name}")
                    cursor.execute("COMMIT")
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
            finally:
                cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            raw.close()
        log.warning("store: rebuilt the %s table to allow the kinds %s", table.name, ", ".join(allowed))


class PostgreSQL(Dialect):
    """A PostgreSQL server: any number of machines, concurrent transactions serialised where they must be."""

    server = True
    LOCK_SPACE = 0x46534846  # first key of our advisory locks ("FSHF"), apart from other applications'

    def engine(self) -> Engine:
        return create_engine(self.url.set(drivername="postgresql+psycopg"), pool_pre_ping=True)

    def insert_or_ignore(self, table: Table, key: str, **values: Any) -> Insert:
        return postgresql.insert(table).values(**values).on_conflict_do_nothing(index_elements=[key])

    def now(self, conn: Connection) -> datetime:
        """The server's clock, shared by every worker whatever its own clock says."""
        return conn.execute(select(func.timezone("UTC", func.now()))).scalar_one()

    def lock(self, conn: Connection, key: str) -> None:
        conn.execute(select(func.pg_advisory_xact_lock(self.LOCK_SPACE, zlib.crc32(key.encode()) - 2**31)))

    def snapshot(self, conn: Connection) -> None:
        conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)

    def install_append_only_guard(self, conn: Connection, table: str, message: str) -> None:
        trigger = f"{table}_append_only"
        conn.exec_driver_sql(
            f"CREATE OR REPLACE FUNCTION {trigger}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN RAISE EXCEPTION '{message}'; END $$"
        )
        found = conn.exec_driver_sql(
            f"SELECT 1 FROM pg_trigger WHERE tgname = '{trigger}' AND tgrelid = '{table}'::regclass"
        ).first()
        if found is None:
            conn.exec_driver_sql(
                f"CREATE TRIGGER {trigger} BEFORE UPDATE OR DELETE OR TRUNCATE ON {table} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {trigger}()"
            )

    def widen_kinds(self, engine: Engine, check: KindsCheck) -> None:
        """The CHECK is dropped and added again, widened, in one transaction, serialised with every other
        opening of the store."""
        table = check.table.name
        with engine.begin() as conn:
            self.lock(conn, "create_all")
            found = conn.exec_driver_sql(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'ck_kind' "
                f"AND conrelid = '{table}'::regclass"
            ).scalar()
            if found is None or not check.missing(found):
                return
            allowed = check.allowed(conn.exec_driver_sql(f"SELECT DISTINCT kind FROM {table}").scalars().all())
            conn.exec_driver_sql(f"ALTER TABLE {table} DROP CONSTRAINT ck_kind")
            conn.exec_driver_sql(f"ALTER TABLE {table} ADD CONSTRAINT ck_kind CHECK ({check.condition(allowed)})")
        log.warning("store: widened %s.kind to %s", table, ", ".join(allowed))

    def reset_sequences(self, conn: Connection, tables: Iterable[Table]) -> None:
        for table in tables:
            conn.execute(
                select(
                    func.setval(
                        func.pg_get_serial_sequence(table.name, "id"),
                        select(func.coalesce(func.max(table.c.id), 0) + 1).scalar_subquery(),
                        False,
                    )
                )
            )


DIALECTS: dict[str, type[Dialect]] = {"sqlite": SQLite, "postgresql": PostgreSQL}  # by the URL's scheme


def register_dialect(scheme: str, dialect: type[Dialect]) -> None:
    """Serve store URLs of `scheme` (`scheme:///...`, `scheme+driver://...`) with `dialect`."""
    DIALECTS[scheme] = dialect


def shown_url(url: str) -> str:
    """`url` as messages and logs show it: its password hidden, even where the URL does not parse (a typo must not
    print the password it carries)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return re.sub(r"(://[^/@]*?:)[^/@]*@", r"\1***@", url)


def dialect_for(url: str) -> Dialect:
    """The dialect of the store at `url`; a URL no dialect serves is refused."""
    try:
        found = DIALECTS.get(make_url(url).get_backend_name())
    except ArgumentError:
        raise FreshStackError(
            f"store {shown_url(url)!r} is not a URL: give sqlite:///path/to/leaderboard.db or "
            "postgresql://user:password@host/database"
        ) from None
    if found is None:
        raise FreshStackError(f"store {shown_url(url)!r}: only sqlite:///FILE and postgresql://... URLs are supported")
    return found(url)


def known_dialect(url: str) -> Dialect | None:
    """The dialect of the store at `url`, or None when it is no URL, or no dialect serves its scheme."""
    try:
        return dialect_for(url)
    except (ArgumentError, FreshStackError):
        return None


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (see _sqlite_begin)
    cursor = dbapi_connection.cursor()
    for pragma in ("busy_timeout = 30000", "journal_mode = WAL", "synchronous = FULL", "foreign_keys = ON"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")
