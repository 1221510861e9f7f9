"""The runs behind stored rows: top `ARCHIVE_DEPTH` per query, one gzipped JSON file per row's content hash.

Scores alone cannot say which nugget a system missed; the archived ranking can, so the detail view lists
"nuggets never covered" and runs paired analyses for every row kind (submitted runs, baselines and models
alike). Files are written atomically: a reader never sees half a file.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from freshstack_hf.atomic import atomic_path
from freshstack_hf.runs import Run

ARCHIVE_DEPTH = 100


class RunArchive:
    """Top-k runs of stored rows ({topic: {query: {doc: score}}}), one file per content hash."""

    def __init__(self, root: str | Path, depth: int = ARCHIVE_DEPTH) -> None:
        self.root, self.depth = Path(root).expanduser(), depth

    def path(self, content_hash: str) -> Path:
        return self.root / f"{hashlib.sha256(content_hash.encode()).hexdigest()[:32]}.json.gz"

    def save(self, content_hash: str, runs: Mapping[str, Run]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.path(content_hash)
        with atomic_path(target) as tmp, gzip.open(tmp, "wb") as fh:
            fh.write(json.dumps(runs, separators=(",", ":")).encode())
        return target

    def load(self, content_hash: str) -> dict[str, dict[str, dict[str, float]]] | None:
        path = self.path(content_hash)
        if not path.is_file():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
