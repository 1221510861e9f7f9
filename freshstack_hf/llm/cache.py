"""A persistent response cache for every paid LLM and embeddings call.

A build of one topic makes thousands of calls; a crash, a Ctrl-C or a changed later stage must never pay for the
same call twice. Entries are keyed by the sha256 of the canonical JSON of the *whole* request (endpoint kind,
model, messages, every parameter), so changing a prompt, the model or the temperature is a miss while
re-running the same build is all hits. Each `put` commits on its own in a WAL-mode SQLite file: a process killed
with SIGKILL loses only the call that was in flight.

The cache holds every prompt (with an embargo, the embargoed questions' texts and answers) and every paid answer,
so it is made readable by its owner alone (`owner_only`), its folder too when this makes it; SQLite gives its
`-wal` and `-shm` files the database file's mode.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.owner_only import OWNER_ONLY_DIR, private_file

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
)
"""


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, unicode kept, so equal requests hash equally."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(request: dict[str, Any]) -> str:
    """The cache key of a request: sha256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite (WAL) store of request -> response JSON, shared by the threads of one client.

    One connection guarded by a lock: writes are tiny and SQLite serialises writers anyway, and a single
    connection keeps the file handle count and the WAL checkpointing simple.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=OWNER_ONLY_DIR, parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            private_file(self.path)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")  # durable against a killed process, fast enough
            self._conn.execute(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise FreshStackError(
                f"{self.path}: not a usable LLM response cache ({exc}); move it aside to start a fresh cache"
            ) from exc

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response JSON for `key`, or None."""
        with self._lock:
            row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Store one response and commit at once (autocommit mode), so it survives a kill right after."""
        usage = response.get("usage") or {}
        row = (
            key,
            str(request.get("endpoint", "")),
            canonical_json(request),
            canonical_json(response),
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            time.time(),
        )
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)", row)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
