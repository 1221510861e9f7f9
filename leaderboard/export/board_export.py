"""Backups and a public results dataset: a board's whole store written as a Hugging Face dataset folder.

`export_board` writes one parquet file per config (`leaderboard.export.board_format`: systems, results, per_query, jobs,
audit, blobs, blob_refs), `board.json` (format, store schema, whether it is public, the row count of every file:
`freshstack_hf.repo.board_folder`) and a dataset card (`leaderboard.export.board_card`) whose `configs:` let
`load_dataset(DIR, "results")` read it. The files hold no date of their own and their rows come in a fixed order
through explicit schemas, so one store always gives byte-identical data files: an export, imported
(`leaderboard.export.board_import`) and exported again, differs only by the import's own audit row. The store is read in
one snapshot (`Database.snapshot`), so workers writing meanwhile never make one file disagree with another, and the
folder is built beside DIR and renamed into place only once complete.

`public=True` makes the public results dataset: identities that are IP addresses (`ip:...`) are redacted, blobs are
hashes only, jobs lose their payloads and lease owners, and a deleted system is its bare tombstone. It is no backup,
and the import refuses it.
"""

from __future__ import annotations

import json
import logging
import shutil
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import Connection, Table, select

from freshstack_hf._version import __version__
from freshstack_hf.atomic import swap_folder
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo.board_folder import BOARD_FILE, FORMAT, FORMAT_VERSION, data_path, is_board_folder
from leaderboard.export.board_card import render_card
from leaderboard.export.board_format import CONFIGS, REDACTED, Config
from leaderboard.store.audit import audit_log
from leaderboard.store.blob_store import blob_refs, blobs
from leaderboard.store.blobs import Blob
from leaderboard.store.schema import DELETED, STORE_SCHEMA, jobs, results, systems
from leaderboard.store.store import Store

log = logging.getLogger(__name__)

TOMBSTONE = ("id", "kind", "content_hash", "moderation", "moderation_reason", "moderated_by", "moderated_at")


def redact(identity: str | None) -> str | None:
    """An identity as a public export shows it: an IP address (`ip:...`) is never published."""
    return REDACTED if identity and identity.startswith("ip:") else identity


def _json_text(value: Any) -> str | None:
    """A JSON column as text with sorted keys: the same value always gives the same bytes, on either database."""
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


# ---- reading the store ------------------------------------------------------------------------------------------
def _system_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    for row in conn.execute(select(systems).order_by(systems.c.id)):
        record = dict(row._mapping)
        if public:
            record["identity"], record["moderated_by"] = redact(record["identity"]), redact(record["moderated_by"])
            if record["moderation"] == DELETED:
                record = {k: (v if k in TOMBSTONE else None) for k, v in record.items()}
        yield record


def _by_result(table: Table) -> tuple[Any, ...]:
    return (table.c.system_id, table.c.topic, table.c.measure)


def _result_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    columns = [c for c in results.c if c.name != "per_query"]
    for row in conn.execute(select(*columns).order_by(*_by_result(results))):
        yield dict(row._mapping) | {"parameters": _json_text(row.parameters)}


def _per_query_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    query = select(*_by_result(results), results.c.per_query).order_by(*_by_result(results))
    for sid, topic, measure, by_query in conn.execute(query.execution_options(yield_per=500)):
        for query_id in sorted(by_query or {}):
            value = by_query[query_id]
            yield {"system_id": sid, "topic": topic, "measure": measure, "query_id": query_id, "value": float(value)}


def _job_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    """A public export keeps each job's kind, state and times, not its payload (the operator's judge endpoint, local
    paths) nor which machine held it."""
    for row in conn.execute(select(jobs).order_by(jobs.c.id)):
        private = {"payload": None, "lease_owner": None} if public else {"payload": _json_text(row.payload)}
        yield dict(row._mapping) | private


def _audit_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    for row in conn.execute(select(audit_log).order_by(audit_log.c.id)):
        record = dict(row._mapping)
        yield record | {"identity": redact(record["identity"])} if public else record


def _blob_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    """Every blob, verified against its sha256 first (`BlobCorrupt` names a damaged one), so a backup never carries
    damage it would only reveal on the day it is restored; a public export keeps the hashes only."""
    for row in conn.execute(select(blobs).order_by(blobs.c.sha256).execution_options(yield_per=64)):
        record = dict(row._mapping) | {"data": bytes(row.data)}
        Blob(record["sha256"], record["media"], record["size"], record["data"], record["codec"]).raw()
        yield record | {"data": None} if public else record


def _blob_ref_rows(conn: Connection, public: bool) -> Iterator[dict[str, Any]]:
    yield from (dict(r._mapping) for r in conn.execute(select(blob_refs).order_by(blob_refs.c.system_id, "role")))


READERS: dict[str, Callable[[Connection, bool], Iterator[dict[str, Any]]]] = {
    "systems": _system_rows,
    "results": _result_rows,
    "per_query": _per_query_rows,
    "jobs": _job_rows,
    "audit": _audit_rows,
    "blobs": _blob_rows,
    "blob_refs": _blob_ref_rows,
}


def _chunks(rows: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_parquet(path: Path, config: Config, rows: Iterable[dict[str, Any]]) -> int:
    """Rows into `path` through the config's schema (only its columns, in its order): pyarrow directly, no pandas
    metadata, zstd, fixed row groups. Returns the row count."""
    names = config.schema.names
    count = 0
    with pq.ParquetWriter(path, config.schema, compression="zstd") as writer:
        for chunk in _chunks(rows, config.batch):
            columns = {name: [row[name] for row in chunk] for name in names}
            writer.write_table(pa.Table.from_pydict(columns, schema=config.schema))
            count += len(chunk)
    return count


@dataclass(frozen=True, slots=True)
class ExportSummary:
    folder: Path
    public: bool
    counts: dict[str, int]

    def as_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "public": self.public, "rows": self.counts}


def check_target(folder: str | Path, force: bool) -> Path:
    """The folder an export may be written to: new, or with `force` a previous export or an empty folder (never an
    arbitrary folder, which `--force` would otherwise delete whole)."""
    target = Path(folder).expanduser()
    if not (target.exists() or target.is_symlink()):
        return target
    if not force:
        raise FreshStackError(f"{target} already exists; pass --force to replace it whole, or give a new folder")
    if not target.is_dir() or target.is_symlink():
        raise FreshStackError(f"{target} is not a folder: remove it or give another path (--force replaces a folder)")
    if not is_board_folder(target) and any(target.iterdir()):
        raise FreshStackError(
            f"{target} is a folder but no board export (no {BOARD_FILE}): --force replaces only an earlier export "
            "or an empty folder; give another path"
        )
    return target


def export_board(
    store: Store, folder: str | Path, *, public: bool = False, force: bool = False, now: datetime | None = None
) -> ExportSummary:
    """Write the board in `store` to `folder` as a dataset folder (see the module docstring); `now` (naive UTC) is
    the export time the card shows, the one thing two exports of the same store differ by."""
    target = check_target(folder, force)
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.export-{uuid.uuid4().hex[:8]}")
    try:
        (staged / layout.DATA_DIR).mkdir(parents=True)
        counts: dict[str, int] = {}
        measures: Counter[str] = Counter()

        def tallied(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            for row in rows:
                measures[row["measure"]] += 1
                yield row

        with store.db.snapshot() as conn:
            for config in CONFIGS:
                rows = READERS[config.name](conn, public)
                rows = tallied(rows) if config.name == "results" else rows
                counts[config.name] = _write_parquet(staged / data_path(config.name), config, rows)
        board = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "store_schema": STORE_SCHEMA,
            "public": public,
            "written_by": __version__,
            "configs": {name: {"path": data_path(name), "rows": n} for name, n in counts.items()},
            "measures": sorted(measures),
        }
        (staged / BOARD_FILE).write_text(json.dumps(board, indent=2) + "\n", encoding="utf-8")
        sizes = {c.name: (staged / data_path(c.name)).stat().st_size for c in CONFIGS}
        when = now or datetime.now(UTC).replace(tzinfo=None)
        (staged / layout.CARD).write_text(render_card(board, sizes, measures, when), encoding="utf-8")
        swap_folder(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    log.info("exported the board of %s to %s (%s)", store, target, "public" if public else "backup")
    return ExportSummary(target, public, counts)
