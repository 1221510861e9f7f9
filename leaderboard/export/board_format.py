"""What a board export holds (`freshstack-hf admin export`): its configs, each with an explicit parquet schema and
a line saying what it holds, the order they are written and read in, and the names both sides share.

The folder's layout itself (`board.json`, the card's `configs:`, the row counts) is the library's
(`freshstack_hf.repo.board_folder`), so `freshstack-hf publish` can check an export without the leaderboard.
`board_export` writes these configs from a store, `board_import` reads them back into one.
Bump `board_folder.FORMAT_VERSION` with any change to a config, a column or its meaning, and name a column added
in `ADDED_IN`, so that the import still reads an export made before it (`schema_in`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

REDACTED = "ip:redacted"  # what a public export shows for an identity that is an IP address
AGAIN = "export the board again from its store (freshstack-hf admin export DIR --force --store URL)"

_INT, _FLOAT, _STR, _TIME = pa.int64(), pa.float64(), pa.string(), pa.timestamp("us")


def _schema(required: str, **columns: pa.DataType) -> pa.Schema:
    """The columns in the order given; those named in `required` (space-separated) are never null."""
    never_null = set(required.split())
    return pa.schema([pa.field(name, kind, nullable=name not in never_null) for name, kind in columns.items()])


@dataclass(frozen=True, slots=True)
class Config:
    """One config of the export: its name, explicit schema, what the card says it holds, rows per row group."""

    name: str
    schema: pa.Schema
    holds: str
    batch: int = 50_000  # fixed, so the same rows always fall into the same row groups
    restored: bool = True  # False: derived from other configs for readers (`runs`), never read back by the import


CONFIGS: tuple[Config, ...] = (
    Config(
        "systems",
        _schema(
            "id kind content_hash",
            id=_INT,
            name=_STR,
            kind=_STR,
            description=_STR,
            link=_STR,
            size=_INT,
            created_at=_TIME,
            identity=_STR,
            content_hash=_STR,
            status=_STR,
            error=_STR,
            cutoff=_STR,
            moderation=_STR,
            moderation_reason=_STR,
            moderated_by=_STR,
            moderated_at=_TIME,
            track=_STR,
        ),
        "every system, one row each: name, kind, link, size (parameters), who submitted it, its content hash (the "
        "dedupe key), state and cutoff; `moderation` is null (listed), `hidden` (with reason, who, when) or "
        "`deleted` (a tombstone: its results, jobs and blobs are gone); a public export holds listed systems only",
    ),
    Config(
        "results",
        _schema(
            "id system_id topic measure value",
            id=_INT,
            system_id=_INT,
            topic=_STR,
            measure=_STR,
            value=_FLOAT,
            ci_low=_FLOAT,
            ci_high=_FLOAT,
            schema_version=_INT,
            evaluator_version=_STR,
            dataset_revision=_STR,
            created_at=_TIME,
            parameters=_STR,
        ),
        "one row per system, topic and measure: the value, its 95% bootstrap interval where one was computed, and "
        "what made it (result schema and evaluator versions, dataset revision, `parameters` as JSON text)",
    ),
    Config(
        "per_query",
        _schema(
            "system_id topic measure query_id value",
            system_id=_INT,
            topic=_STR,
            measure=_STR,
            query_id=_STR,
            value=_FLOAT,
        ),
        "the per-query scores behind `results`, long format: one row per system, topic, measure and query",
        batch=200_000,
    ),
    Config(
        "runs",
        _schema(
            "system_id topic query_id doc_id rank score",
            system_id=_INT,
            dataset_revision=_STR,
            topic=_STR,
            query_id=_STR,
            doc_id=_STR,
            rank=_INT,
            score=_FLOAT,
        ),
        "every archived ranking as rows (each query's top 100 behind a system's scores, decoded from its `ranking` "
        "blob): one row per system, topic, query and ranked document, rank 1 first, on the `dataset_revision` its "
        "`results` were measured on; ranx, ir_measures or pandas read it as it is. Derived from `blobs`, which the "
        "import restores from",
        batch=200_000,
        restored=False,
    ),
    Config(
        "jobs",
        _schema(
            "id system_id kind state",
            id=_INT,
            system_id=_INT,
            kind=_STR,
            payload=_STR,
            state=_STR,
            attempts=_INT,
            max_attempts=_INT,
            lease_owner=_STR,
            lease_expires_at=_TIME,
            error=_STR,
            created_at=_TIME,
            updated_at=_TIME,
            finished_at=_TIME,
        ),
        "the evaluation queue, so a restored board keeps its queued work: each job's kind, state, attempts, lease "
        "and `payload` (JSON text)",
    ),
    Config(
        "audit",
        _schema(
            "id at identity kind outcome",
            id=_INT,
            at=_TIME,
            identity=_STR,
            kind=_STR,
            outcome=_STR,
            content_hash=_STR,
            system_id=_INT,
            detail=_STR,
        ),
        "the append-only audit log: every submission (accepted, duplicate or refused), job outcome, moderation "
        "action and import, oldest first",
    ),
    Config(
        "blobs",
        _schema(
            "sha256 media codec size stored_size created_at",
            sha256=_STR,
            media=_STR,
            codec=_STR,
            size=_INT,
            stored_size=_INT,
            created_at=_TIME,
            data=pa.binary(),
        ),
        "what rows depend on beyond their scores (archived rankings, answers files, hole fills), keyed by the "
        "sha256 of the uncompressed bytes: `data` is compressed with `codec` as stored, `size` is the uncompressed "
        "length",
        batch=64,
    ),
    Config(
        "blob_refs",
        _schema("system_id role sha256 created_at", system_id=_INT, role=_STR, sha256=_STR, created_at=_TIME),
        "which system keeps which blob, under which role (`ranking`, `answers`, `fill:<revision>`)",
    ),
)
BY_NAME = {c.name: c for c in CONFIGS}
# The columns each export format added to a config, {format version: {config: columns}}: an export made before a
# column lacks it (format 2: `systems.track`, store schema 3).
ADDED_IN: dict[int, dict[str, tuple[str, ...]]] = {2: {"systems": ("track",)}}
# The configs each export format added, {format version: configs}: an export made before one lacks its file (format
# 3: `runs`).
CONFIGS_ADDED_IN: dict[int, tuple[str, ...]] = {3: ("runs",)}


def configs_in(version: int) -> list[Config]:
    """The configs an export of format `version` holds: this release's, less those added since."""
    later = {name for v, names in CONFIGS_ADDED_IN.items() if v > version for name in names}
    return [c for c in CONFIGS if c.name not in later]


def added_since(version: int) -> set[tuple[str, str]]:
    """(config, column) of every column added after export format `version`."""
    return {(name, c) for v, added in ADDED_IN.items() if v > version for name, cs in added.items() for c in cs}


def schema_in(config: Config, version: int) -> pa.Schema:
    """The schema `config` has in an export of format `version`: this release's, less the columns added since."""
    later = {c for name, c in added_since(version) if name == config.name}
    return pa.schema([f for f in config.schema if f.name not in later])
