"""A small persistent memo (SQLite, key -> JSON) that a topic's dated snapshots share.

A second snapshot of a topic differs from the first by a few changed files and a few new questions; the
rest must cost nothing. The LLM cache already answers a request seen before, but a re-pooled question sends a
different request (other documents in each block) for pairs it has judged; so the judgments stage keeps each
(question, nugget, document text) verdict here, and the corpus stage each file's chunks by content hash.
Keys are content hashes, so a value can never be served for other content; writes are committed in batches
and a killed build keeps every batch it finished.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def content_key(*parts: str | bytes) -> str:
    """A sha256 over the parts, separated so that ("ab", "c") and ("a", "bc") differ."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


class Memo:
    """`get_many(keys)` -> the known values; `put_many({key: value})` stores new ones (JSON-encodable)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        for start in range(0, len(wanted), 500):  # SQLite's bound-parameter limit
            block = wanted[start : start + 500]
            marks = ",".join("?" * len(block))
            for key, value in self._db.execute(f"SELECT key, value FROM memo WHERE key IN ({marks})", block):
                found[key] = json.loads(value)
        return found

    def get(self, key: str) -> Any:
        return self.get_many([key]).get(key)

    def put_many(self, items: Mapping[str, Any]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO memo (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM memo").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Memo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
