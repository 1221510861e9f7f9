"""The on-disk embedding cache: vectors keyed by everything that determines them, so reruns encode nothing new.

Keys: a folder per (model id, revision, window, prompt, dtype), then the sha1 of each text inside it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from freshstack_hf.atomic import atomic_path

log = logging.getLogger(__name__)

CACHE_FORMAT = 2  # 2: keys are hex digests (raw digests lost trailing NUL bytes in numpy's S20)


class EmbeddingCache:
    """Vectors on disk, keyed by what determines them: model id and revision, window, prompt, dtype, text.

    Each write is one shard: a vectors file and a keys file (sha1 of each text), both written to a temporary
    name and renamed, keys last. A shard without its keys file is invisible, so an interrupted run leaves
    only whole shards, and two runs writing at once never clobber each other.
    """

    def __init__(self, root: str | os.PathLike[str], **key: Any) -> None:
        spec = {"format": CACHE_FORMAT, **key}
        digest = hashlib.sha1(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()[:20]
        self.dir = Path(root) / digest
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "meta.json"
        if not meta.exists():
            _atomic_write(meta, lambda f: f.write(json.dumps(spec, indent=2, default=str).encode()))
        self._index: dict[str, tuple[Path, int]] = {}
        for keys_file in sorted(self.dir.glob("*.keys.npy")):
            vectors = keys_file.with_name(keys_file.name.replace(".keys.npy", ".vec.npy"))
            try:
                keys = np.load(keys_file).tolist()
                rows = np.load(vectors, mmap_mode="r").shape[0]
            except (OSError, ValueError) as exc:  # a shard damaged by hand: skip it, its texts get re-encoded
                log.warning("skipping unreadable embedding cache shard %s: %s", keys_file, exc)
                continue
            if rows != len(keys):
                log.warning("skipping embedding cache shard %s: %d keys for %d vectors", keys_file, len(keys), rows)
                continue
            for row, k in enumerate(keys):
                self._index.setdefault(k, (vectors, row))

    def __len__(self) -> int:
        return len(self._index)

    @staticmethod
    def text_key(text: str) -> str:
        """Hex, not raw bytes: numpy's fixed-width bytes type drops trailing NULs, which broke 1 key in 256."""
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among `keys`, read shard by shard through memory maps."""
        by_shard: dict[Path, list[tuple[str, int]]] = {}
        for k in keys:
            if k in self._index:
                shard, row = self._index[k]
                by_shard.setdefault(shard, []).append((k, row))
        found: dict[str, np.ndarray] = {}
        for shard, items in by_shard.items():
            vectors = np.load(shard, mmap_mode="r")
            rows = vectors[[row for _, row in items]]
            found.update((k, np.array(v, dtype=np.float32)) for (k, _), v in zip(items, rows, strict=True))
        return found

    def add(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        stem = self.dir / f"{time.time_ns()}-{uuid.uuid4().hex[:8]}"
        vec_path, keys_path = Path(f"{stem}.vec.npy"), Path(f"{stem}.keys.npy")
        _atomic_write(vec_path, lambda f: np.save(f, np.ascontiguousarray(vectors, dtype=np.float32)))
        _atomic_write(keys_path, lambda f: np.save(f, np.array(list(keys), dtype="U40")))
        for row, k in enumerate(keys):
            self._index.setdefault(k, (vec_path, row))


def _atomic_write(path: Path, write: Any) -> None:
    with atomic_path(path, durable=True) as tmp, open(tmp, "wb") as f:
        write(f)
