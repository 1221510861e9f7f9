"""Backups and a public results dataset: a board's whole store written as a Hugging Face dataset folder.

`export_board` writes one parquet file per config (`leaderboard.export.board_format`: systems, results, per_query,
runs, jobs, audit, blobs, blob_refs), `board.json` (format, store schema, whether it is public, how many systems it
left out, the row count of every file: `freshstack_hf.repo.board_folder`) and a dataset card
(`leaderboard.export.board_card`) whose `configs:` let `load_dataset(DIR, "results")` read it. The files hold no
date of their own and their rows come in a fixed order through explicit schemas, so one store always gives
byte-identical data files: an export, imported (`leaderboard.export.board_import`) and exported again, differs only
by the import's own audit row. The store is read in one snapshot (`Database.snapshot`), so workers writing meanwhile
never make one file disagree with another, and the folder is built beside DIR and renamed into place only once
complete: an export that fails (a damaged blob, named with its system) leaves nothing behind.

`runs` is every archived ranking decoded into rows (system, revision, topic, query, doc, rank, score), so the
board's rankings can be studied, fused or re-judged with any tool, without this package's blob decoder; `blobs`
keeps them as stored, for restoring.

`public=True` makes the public results dataset, which holds only what the board shows: systems a moderator hid or
deleted are left out whole (their rows, results, per-query scores, runs, jobs, blobs and the audit rows that name
them; the card says how many, never which), identities that are IP addresses (`ip:...`) are redacted, blobs are
hashes only, and jobs lose their payloads and lease owners. It is no backup, and the import refuses it.
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
from sqlalchemy import Connection, Table, func, select

from freshstack_hf._version import __version__
from freshstack_hf.atomic import swap_folder
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo.board_folder import BOARD_FILE, FORMAT, FORMAT_VERSION, data_path, is_board_folder
from leaderboard.export.board_card import render_card
from leaderboard.export.board_format import BY_NAME, CONFIGS, REDACTED, Config
from leaderboard.store.audit import audit_log
from leaderboard.store.blob_store import blob_refs, blobs
from leaderboard.store.blobs import Blob
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.ranking_blob import decode_ranking
from leaderboard.store.schema import LISTED, STORE_SCHEMA, jobs, results, systems
from leaderboard.store.store import Store

log = logging.getLogger(__name__)


def redact(identity: str | None) -> str | None:
    """An identity as a public export shows it: an IP address (`ip:...`) is never published."""
    return REDACTED if identity and identity.startswith("ip:") else identity


def _json_text(value: Any) -> str | None:
    """A JSON column as text with sorted keys: the same value always gives the same bytes, on either database."""
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


# ---- reading the store ------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Scope:
    """What an export keeps: everything (a backup), or with `public` only what the board shows: the systems a
    moderator hid or deleted (`left_out`, their content hashes `left_out_hashes`) are left out of every config."""

    public: bool
    left_out: frozenset[int] = frozenset()
    left_out_hashes: frozenset[str] = frozenset()

    @classmethod
    def of(cls, conn: Connection, public: bool) -> Scope:
        if not public:
            return cls(False)
        moderated = conn.execute(select(systems.c.id, systems.c.content_hash).where(~LISTED)).all()
        return cls(True, frozenset(sid for sid, _ in moderated), frozenset(h for _, h in moderated))

    def keeps(self, system_id: int | None) -> bool:
        return system_id not in self.left_out


def _system_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    for row in conn.execute(select(systems).order_by(systems.c.id)):
        record = dict(row._mapping)
        if scope.public:
            if not scope.keeps(record["id"]):
                continue
            record["identity"], record["moderated_by"] = redact(record["identity"]), redact(record["moderated_by"])
        yield record


def _by_result(table: Table) -> tuple[Any, ...]:
    return (table.c.system_id, table.c.topic, table.c.measure)


def _result_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    columns = [c for c in results.c if c.name != "per_query"]
    for row in conn.execute(select(*columns).order_by(*_by_result(results))):
        if scope.keeps(row.system_id):
            yield dict(row._mapping) | {"parameters": _json_text(row.parameters)}


def _per_query_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    query = select(*_by_result(results), results.c.per_query).order_by(*_by_result(results))
    for sid, topic, measure, by_query in conn.execute(query.execution_options(yield_per=500)):
        if not scope.keeps(sid):
            continue
        for query_id in sorted(by_query or {}):
            value = by_query[query_id]
            yield {"system_id": sid, "topic": topic, "measure": measure, "query_id": query_id, "value": float(value)}


def _damaged(conn: Connection, sha256: str, error: FreshStackError) -> FreshStackError:
    """`error` (a blob that fails its hash) naming the systems that keep the blob, so the operator knows which to
    restore or delete."""
    query = select(systems.c.id, systems.c.name, blob_refs.c.role)
    query = query.join(blob_refs, blob_refs.c.system_id == systems.c.id)
    holders = conn.execute(query.where(blob_refs.c.sha256 == sha256).order_by(systems.c.id)).all()
    named = ", ".join(f"system #{sid} '{name}' ({role})" for sid, name, role in holders) or "no system"
    return FreshStackError(f"{named}: {error}; nothing was exported")


def _run_tables(conn: Connection, scope: Scope) -> Iterator[pa.Table]:
    """Every archived ranking (`ranking` blob) as rows, one table per system, verified against its sha256 first: a
    damaged one names its system and stops the export. The revision is the one the system's results on that topic
    were measured on. Built column by column: a release-size ranking is 67,200 rows, too many for one dict each."""
    revision = select(results.c.system_id, results.c.topic, func.min(results.c.dataset_revision))
    revisions = {(sid, topic): rev for sid, topic, rev in conn.execute(revision.group_by(*_by_result(results)[:2]))}
    query = (
        select(blob_refs.c.system_id, blobs.c.sha256, blobs.c.media, blobs.c.size, blobs.c.data, blobs.c.codec)
        .join(blobs, blobs.c.sha256 == blob_refs.c.sha256)
        .where(blob_refs.c.role == RANKING)
        .order_by(blob_refs.c.system_id)
    )
    schema = BY_NAME["runs"].schema
    for sid, sha, media, size, data, codec in conn.execute(query.execution_options(yield_per=8)):
        if not scope.keeps(sid):
            continue
        try:
            rankings = decode_ranking(Blob(sha, media, size, bytes(data), codec).raw())
        except FreshStackError as exc:
            raise _damaged(conn, sha, exc) from None
        topics, revs, queries, docs, ranks, scores = [], [], [], [], [], []
        for topic, by_query in rankings.items():
            for query_id, ranked in by_query.items():
                n = len(ranked)
                topics += [topic] * n
                revs += [revisions.get((sid, topic))] * n
                queries += [query_id] * n
                docs += ranked.keys()
                ranks += range(1, n + 1)
                scores += ranked.values()
        columns = [[sid] * len(docs), revs, topics, queries, docs, ranks, scores]
        yield pa.Table.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
        )


def _job_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    """A public export keeps each job's kind, state and times, not its payload (the operator's judge endpoint, local
    paths) nor which machine held it."""
    for row in conn.execute(select(jobs).order_by(jobs.c.id)):
        if not scope.keeps(row.system_id):
            continue
        private = {"payload": None, "lease_owner": None} if scope.public else {"payload": _json_text(row.payload)}
        yield dict(row._mapping) | private


def _audit_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    """A public export leaves out every row that names a system left out, by its id or its content hash (a
    submission refused as a duplicate of it, say)."""
    for row in conn.execute(select(audit_log).order_by(audit_log.c.id)):
        record = dict(row._mapping)
        if not scope.public:
            yield record
        elif scope.keeps(record["system_id"]) and record["content_hash"] not in scope.left_out_hashes:
            yield record | {"identity": redact(record["identity"])}


def _blob_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    """Every blob, verified against its sha256 first (a damaged one is named with the systems that keep it), so a
    backup never carries damage it would only reveal on the day it is restored; a public export keeps the hashes
    of the blobs its systems keep, only."""
    kept = None
    if scope.public:
        refs = conn.execute(select(blob_refs.c.system_id, blob_refs.c.sha256)).all()
        kept = {sha for sid, sha in refs if scope.keeps(sid)}
    for row in conn.execute(select(blobs).order_by(blobs.c.sha256).execution_options(yield_per=64)):
        if kept is not None and row.sha256 not in kept:
            continue
        record = dict(row._mapping) | {"data": bytes(row.data)}
        try:
            Blob(record["sha256"], record["media"], record["size"], record["data"], record["codec"]).raw()
        except FreshStackError as exc:
            raise _damaged(conn, record["sha256"], exc) from None
        yield record | {"data": None} if scope.public else record


def _blob_ref_rows(conn: Connection, scope: Scope) -> Iterator[dict[str, Any]]:
    query = select(blob_refs).order_by(blob_refs.c.system_id, "role")
    yield from (dict(r._mapping) for r in conn.execute(query) if scope.keeps(r.system_id))


# How each config is read from the store: rows as dicts, or (`TABLE_READERS`) whole arrow tables, for the big ones.
READERS: dict[str, Callable[[Connection, Scope], Iterator[dict[str, Any]]]] = {
    "systems": _system_rows,
    "results": _result_rows,
    "per_query": _per_query_rows,
    "jobs": _job_rows,
    "audit": _audit_rows,
    "blobs": _blob_rows,
    "blob_refs": _blob_ref_rows,
}


TABLE_READERS: dict[str, Callable[[Connection, Scope], Iterator[pa.Table]]] = {"runs": _run_tables}


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
    """Rows into `path` through the config's schema (only its columns, in its order); see `_write_tables`."""
    names = config.schema.names

    def tables() -> Iterator[pa.Table]:
        for chunk in _chunks(rows, config.batch):
            columns = {name: [row[name] for row in chunk] for name in names}
            yield pa.Table.from_pydict(columns, schema=config.schema)

    return _write_tables(path, config, tables())


def _write_tables(path: Path, config: Config, tables: Iterable[pa.Table]) -> int:
    """Tables of the config's schema into `path`: pyarrow directly, no pandas metadata, zstd, row groups of exactly
    `config.batch` rows (the last one fewer) however the tables came, so the same rows always give the same bytes.
    Returns the row count."""
    count = 0
    pending: list[pa.Table] = []
    held = 0
    with pq.ParquetWriter(path, config.schema, compression="zstd") as writer:
        for table in tables:
            pending.append(table)
            held += table.num_rows
            while held >= config.batch:
                whole = pa.concat_tables(pending)
                writer.write_table(whole.slice(0, config.batch), row_group_size=config.batch)
                pending, held = [whole.slice(config.batch)], held - config.batch
                count += config.batch
        if held:
            writer.write_table(pa.concat_tables(pending), row_group_size=config.batch)
            count += held
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
            scope = Scope.of(conn, public)
            for config in CONFIGS:
                path = staged / data_path(config.name)
                if config.name in TABLE_READERS:
                    counts[config.name] = _write_tables(path, config, TABLE_READERS[config.name](conn, scope))
                    continue
                rows = READERS[config.name](conn, scope)
                rows = tallied(rows) if config.name == "results" else rows
                counts[config.name] = _write_parquet(path, config, rows)
        board = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "store_schema": STORE_SCHEMA,
            "public": public,
            "left_out": len(scope.left_out),
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
