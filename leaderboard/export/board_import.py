"""Restoring a board from its export (`freshstack-hf admin import`): a full export, checked whole, read back into an
empty store.

`read_export` checks the folder before anything is written anywhere: its files and row counts
(`freshstack_hf.repo.board_folder`), that it is a backup (a public export is not) of a store this release can
hold, every file's schema (`leaderboard.export.board_format`; an export of an older format has the columns of its
format), every blob's data against its sha256, and that every per-query score belongs to a result row.
`import_board` then restores every row with its id into an empty store in one transaction (`restore`, which also
gives the rows of an older export the columns added since, as the store's migrations give an older store's, and
appends the one `admin:import` audit row): all of it, or nothing. `runs` is not read back: it is the blobs' rankings
as rows, for readers, and the restored store keeps the blobs themselves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from sqlalchemy import Connection, Table, func, insert, inspect, select
from sqlalchemy.exc import DataError, IntegrityError

from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.repo.board_folder import BOARD_FILE, data_path, read_board_folder
from leaderboard.export.board_format import AGAIN, BY_NAME, added_since, configs_in, schema_in
from leaderboard.store.audit import ADMIN, audit_log, kind_of
from leaderboard.store.blob_store import blob_refs, blobs
from leaderboard.store.blobs import CODEC, Blob
from leaderboard.store.dialect import dialect_for
from leaderboard.store.migrations import ADDED_COLUMNS
from leaderboard.store.rate_limit import rate_events
from leaderboard.store.schema import STORE_SCHEMA, Base, jobs, results, systems
from leaderboard.store.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BoardExport:
    """A full export, checked (`read_export`): its folder, `board.json`, and the per-query scores by result."""

    folder: Path
    board: dict[str, Any]
    per_query: dict[tuple[int, str, str], dict[str, float]] = field(repr=False)

    def rows(self, name: str) -> int:
        return int(self.board["configs"][name]["rows"])

    def batches(self, name: str) -> Iterator[list[dict[str, Any]]]:
        config = BY_NAME[name]
        with pq.ParquetFile(self.folder / data_path(name)) as file:
            for batch in file.iter_batches(batch_size=min(config.batch, 10_000)):
                yield batch.to_pylist()

    def _decoded(self, name: str, column: str) -> Iterator[list[dict[str, Any]]]:
        """Batches of `name` with the JSON text of `column` decoded back to the value the store holds."""
        row = 0
        for batch in self.batches(name):
            for record in batch:
                row += 1
                try:
                    record[column] = None if record[column] is None else json.loads(record[column])
                except ValueError as exc:
                    raise FreshStackError(
                        f"{data_path(name)} row {row}: {column} is not JSON text ({exc}); nothing was imported: {AGAIN}"
                    ) from None
            yield batch

    def _results(self) -> Iterator[list[dict[str, Any]]]:
        for batch in self._decoded("results", "parameters"):
            for record in batch:
                record["per_query"] = self.per_query.get((record["system_id"], record["topic"], record["measure"]))
            yield batch

    def tables(self) -> list[tuple[Table, Iterable[list[dict[str, Any]]]]]:
        """(store table, batches of rows) in the order the foreign keys need, for `restore`."""
        return [
            (systems, self.batches("systems")),
            (blobs, self.batches("blobs")),
            (blob_refs, self.batches("blob_refs")),
            (results, self._results()),
            (jobs, self._decoded("jobs", "payload")),
            (audit_log, self.batches("audit")),
        ]

    def fills(self) -> list[Callable[[Connection], int]]:
        """The fills of the store columns this export predates (`migrations.ADDED_COLUMNS`), for `restore`."""
        missing = added_since(int(self.board["format_version"]))
        return [fill for table, name, fill in ADDED_COLUMNS if fill is not None and (table.name, name) in missing]

    def counts(self) -> dict[str, int]:
        """{config: rows} of every config the export holds, in the order they are written."""
        return {c.name: self.rows(c.name) for c in configs_in(int(self.board["format_version"]))}

    def description(self) -> str:
        """What the import's audit row says: the folder and how many rows came from it."""
        counts = ", ".join(f"{name}: {n:,}" for name, n in self.counts().items())
        return f"restored from {self.folder.resolve()} (rows: {counts})"


def _verify_blobs(folder: Path) -> list[Problem]:
    """Every blob's data decompressed and hashed: a blob that does not match its sha256 is named by its row."""
    where, problems, row = data_path("blobs"), [], 0
    with pq.ParquetFile(folder / where) as file:
        for batch in file.iter_batches(batch_size=BY_NAME["blobs"].batch):
            for record in batch.to_pylist():
                row += 1
                sha, data = record["sha256"], record["data"]
                if data is None:
                    problems.append(Problem(where, f"blob {sha} has no data", row, AGAIN))
                    continue
                if record["codec"] != CODEC:
                    known = f"codec {record['codec']!r} is unknown to this release (it writes {CODEC!r})"
                    problems.append(Problem(where, f"blob {sha}: {known}", row, "upgrade freshstack-hf"))
                    continue
                try:
                    Blob(sha, record["media"], record["size"], data, record["codec"]).raw()
                except FreshStackError:
                    why = "does not match its sha256 (the file was damaged or edited after the export)"
                    problems.append(Problem(where, f"the data of blob {sha} {why}", row, AGAIN))
                    continue
                if record["stored_size"] != len(data):
                    problems.append(Problem(where, f"blob {sha}: stored_size is not the length of data", row, AGAIN))
    return problems


def _per_query(folder: Path, keys: set[tuple[int, str, str]]) -> tuple[dict, list[Problem]]:
    """{(system id, topic, measure): {query id: value}} from `per_query`, and its rows no result row owns."""
    where, found, orphans, row = data_path("per_query"), {}, [], 0
    with pq.ParquetFile(folder / where) as file:
        for batch in file.iter_batches(batch_size=50_000):
            for record in batch.to_pylist():
                row += 1
                key = (record["system_id"], record["topic"], record["measure"])
                if key not in keys:
                    orphans.append(Problem(where, f"a score of {key} has no row in results", row, AGAIN))
                    continue
                found.setdefault(key, {})[record["query_id"]] = record["value"]
    return found, orphans


def read_export(folder: str | Path) -> BoardExport:
    """The full export at `folder`, checked before anything is written anywhere: its files and counts
    (`read_board_folder`), that it is a backup of a store this release can hold, every file's schema, every
    blob's data against its sha256, and that every per-query score belongs to a result row."""
    root = Path(folder).expanduser()
    board = read_board_folder(root)
    if board["public"]:
        raise FreshStackError(
            f"{folder} is a public export, not a backup: its blobs are hashes only and IP identities are redacted, so "
            "it cannot restore a board. Import a full export (freshstack-hf admin export DIR, without --public)"
        )
    schema = board.get("store_schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise FreshStackError(f"{root / BOARD_FILE}: store_schema {schema!r} is not an integer: {AGAIN}")
    if schema > STORE_SCHEMA:
        raise FreshStackError(
            f"{root / BOARD_FILE}: exported from a store of a newer freshstack-hf (store schema {schema}; this release "
            f"knows up to {STORE_SCHEMA}). Upgrade freshstack-hf (pip install -U 'freshstack-hf[leaderboard]') to "
            "import it; nothing was changed"
        )
    version = board["format_version"]
    problems = [
        Problem(BOARD_FILE, f"config {c.name!r} is missing", fix=AGAIN)
        for c in configs_in(version)
        if c.name not in board["configs"]
    ]
    problems += [
        Problem(BOARD_FILE, f"config {name!r} is not one this release knows", fix=AGAIN)
        for name in board["configs"]
        if name not in BY_NAME
    ]
    for config in configs_in(version):
        if config.name not in board["configs"]:
            continue
        found = pq.read_schema(root / data_path(config.name)).remove_metadata()
        if not found.equals(schema_in(config, version)):
            problems.append(
                Problem(data_path(config.name), f"its columns are not those of export format {version}", fix=AGAIN)
            )
    if problems:
        raise ValidationError(problems, f"refusing to import {folder}")
    problems = _verify_blobs(root)
    keys: set[tuple[int, str, str]] = set()
    with pq.ParquetFile(root / data_path("results")) as file:
        for batch in file.iter_batches(columns=["system_id", "topic", "measure"]):
            keys.update(zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True))
    per_query, orphans = _per_query(root, keys)
    if problems or orphans:
        raise ValidationError(problems + orphans, f"refusing to import {folder}: nothing was written")
    return BoardExport(root, board, per_query)


def _new_files(url: str) -> list[Path]:
    """The file the store at `url` lives in (SQLite) and its folders, those that do not exist yet, deepest first:
    what the import creates, and removes again if it fails (empty for a file that exists, or a PostgreSQL URL)."""
    file = dialect_for(url).file
    if file is None:
        return []
    path = file.absolute()
    return [p for p in (path, *path.parents) if not p.exists()]


def _row_counts(conn: Connection) -> dict[str, int]:
    present = set(inspect(conn).get_table_names())
    tables = [t for t in Base.metadata.sorted_tables if t.name in present and t.name != "store_meta"]
    return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in tables}


def row_counts(store: Store) -> dict[str, int]:
    """Rows of each of the store's tables that exist (`store_meta`, facts about the store itself, aside): all zero,
    or no table at all, is an empty store, the only kind `restore` writes into."""
    with store.db.read() as conn:
        return _row_counts(conn)


def _refuse_unless_empty(store: Store, conn: Connection) -> None:
    held = {name: n for name, n in _row_counts(conn).items() if n}
    if held:
        rows = ", ".join(f"{name}: {n:,} rows" for name, n in held.items())
        raise FreshStackError(
            f"the store {store.db.shown()} is not empty ({rows}): import restores a board into an empty store only; "
            "give a new database, or a SQLite file that does not exist yet. Nothing was changed"
        )


def require_empty(store: Store) -> None:
    """Refuse a store holding any row (see `row_counts`), before anything is created or migrated in it."""
    with store.db.read() as conn:
        _refuse_unless_empty(store, conn)


def restore(
    store: Store,
    tables: Sequence[tuple[Table, Iterable[Sequence[Mapping[str, Any]]]]],
    *,
    by: str,
    detail: str,
    fills: Sequence[Callable[[Connection], int]] = (),
) -> None:
    """Insert a backup's rows, ids included, into the empty `store` and append one `admin:import` audit row, all in
    one transaction: a failure anywhere leaves the store as empty as it was.

    `tables` are (table, batches of rows) in an order that satisfies the foreign keys (systems and blobs before what
    points at them); the batches are read inside the transaction, so a large table streams. `fills` then give the
    rows of an export older than a column its value (`BoardExport.fills`). Each id sequence is then moved past the
    restored ids (PostgreSQL), so the next row a worker adds gets a new id."""
    with store.db.write() as conn:
        store.db.lock(conn, "create_all")  # no app can be creating tables or rows of its own meanwhile
        _refuse_unless_empty(store, conn)
        for table, batches in tables:
            for batch in batches:
                if batch:
                    conn.execute(insert(table), list(batch))
        for fill in fills:
            fill(conn)
        store.db.dialect.reset_sequences(conn, (systems, results, jobs, audit_log, rate_events))
        store.audit.append_in(conn, identity=by, kind=kind_of(ADMIN, "import"), outcome="imported", detail=detail)


def import_board(url: str, folder: str | Path, *, by: str) -> BoardExport:
    """Restore the full export at `folder` into the empty store at `url` (tables created where the database has
    none; a SQLite file is created, and removed again if the import fails); see the module docstring.

    The store is opened without `archive.open_store`'s import of an older runs folder, so nothing but the export
    goes into it."""
    export = read_export(folder)
    created = _new_files(url)
    store = Store(url)
    try:
        require_empty(store)  # before `create_all`, which would migrate an older store that is not ours to change
        store.create_all()
        restore(store, export.tables(), by=by, detail=export.description(), fills=export.fills())
    except (IntegrityError, DataError) as exc:
        _discard(store, created)
        raise FreshStackError(
            f"{folder}: its rows do not fit the store ({exc.orig}); nothing was imported: {AGAIN}"
        ) from None
    except BaseException:
        _discard(store, created)
        raise
    store.close()
    log.info("imported %s into %s", export.folder, store)
    return export


def _discard(store: Store, created: list[Path]) -> None:
    store.close()
    if not created:
        return
    file, *folders = created
    for suffix in ("", "-wal", "-shm", "-journal"):
        file.with_name(file.name + suffix).unlink(missing_ok=True)
    for folder in folders:
        try:
            folder.rmdir()  # only while empty: nothing but the import put anything there
        except OSError:
            break
