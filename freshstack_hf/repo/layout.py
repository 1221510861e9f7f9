"""Names and places of every config in a dataset repo, in one table that writer, reader, card and validator share.

Adding a per-topic config (say a new candidate list) is one `ConfigSpec` line: the card's `configs:` block,
the writer's file paths and the validator's checks all follow from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

DEFAULT_REPO_NAME = "freshstack"
MANIFEST = "manifest.json"
CARD = "README.md"
DATA_DIR = "data"

STR = pa.string()
STR_LIST = pa.list_(pa.string())

OFFICIAL_QUERY_SCHEMA = pa.schema(
    [
        ("query_id", STR),
        ("query_title", STR),
        ("query_text", STR),
        ("answer_id", STR),
        ("answer_text", STR),
        ("metadata", pa.struct([("date", STR), ("tags", STR_LIST)])),
        (
            "nuggets",
            pa.list_(
                pa.struct(
                    [
                        ("_id", STR),
                        ("text", STR),
                        ("relevant_corpus_ids", STR_LIST),
                        ("non_relevant_corpus_ids", STR_LIST),
                    ]
                )
            ),
        ),
    ]
)

CORPUS_SCHEMA = pa.schema(
    [
        ("_id", STR),
        ("text", STR),
        (
            "metadata",
            pa.struct(
                [
                    ("url", STR),
                    ("start_byte", pa.int64()),
                    ("end_byte", pa.int64()),
                    ("repo", STR),
                    ("path", STR),
                    ("commit", STR),
                ]
            ),
        ),
    ]
)

QUERIES_SCHEMA = pa.schema([("_id", STR), ("text", STR)])
NUGGETS_SCHEMA = pa.schema([("_id", STR), ("query-id", STR), ("text", STR)])
QRELS_SCHEMA = pa.schema([("query-id", STR), ("corpus-id", STR), ("score", pa.int64())])
NUGGET_QRELS_SCHEMA = pa.schema([("query-id", STR), ("nugget-id", STR), ("corpus-id", STR), ("score", pa.int64())])
CANDIDATES_SCHEMA = pa.schema([("query-id", STR), ("corpus-ids", STR_LIST)])


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    """One per-topic config: its name suffix, split, file stem and schema, and its cross-topic view name."""

    suffix: str  # config name = topic + suffix ("" for the official-schema config)
    split: str
    stem: str  # file = data/{topic}/{stem}.parquet
    schema: pa.Schema
    view: str | None  # cross-topic config with one split per topic, or None
    kind: str  # "core" (written by every build) or "candidates" (written by `candidates`)

    def config_name(self, topic: str) -> str:
        return f"{topic}{self.suffix}"


CONFIGS: tuple[ConfigSpec, ...] = (
    ConfigSpec("", "test", "queries_official", OFFICIAL_QUERY_SCHEMA, None, "core"),
    ConfigSpec("-corpus", "corpus", "corpus", CORPUS_SCHEMA, "corpus", "core"),
    ConfigSpec("-queries", "test", "queries", QUERIES_SCHEMA, "queries", "core"),
    ConfigSpec("-nuggets", "test", "nuggets", NUGGETS_SCHEMA, "nuggets", "core"),
    ConfigSpec("-qrels", "test", "qrels", QRELS_SCHEMA, "qrels", "core"),
    ConfigSpec("-nugget-qrels", "test", "nugget_qrels", NUGGET_QRELS_SCHEMA, "nugget_qrels", "core"),
    ConfigSpec("-bm25", "test", "bm25", CANDIDATES_SCHEMA, "bm25", "candidates"),
    ConfigSpec("-dense", "test", "dense", CANDIDATES_SCHEMA, "dense", "candidates"),
    ConfigSpec("-top_ranked", "test", "top_ranked", CANDIDATES_SCHEMA, "reranking_hybrid", "candidates"),
)
CONFIG_BY_STEM = {c.stem: c for c in CONFIGS}


def topic_dir(repo: Path, topic: str) -> Path:
    return repo / DATA_DIR / topic


def config_path(repo: Path, topic: str, stem: str) -> Path:
    return topic_dir(repo, topic) / f"{stem}.parquet"


def relative_path(topic: str, stem: str) -> str:
    """Path inside the repo, with forward slashes, as the card's `data_files` wants it."""
    return f"{DATA_DIR}/{topic}/{stem}.parquet"
