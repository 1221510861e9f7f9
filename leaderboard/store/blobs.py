"""What a blob is: content the store keeps behind a row (a ranking, an answers file, a fill), hashed and compressed
before any transaction opens, and verified whenever it is read back (`leaderboard.store.blob_store` says where and how
the store keeps them).

A blob is filed under the sha256 of its uncompressed canonical bytes (`ranking_blob` for rankings; the raw bytes
of any other content, under the media its owner declares: an answers file's text, a fill's judgments), so the same
content is one blob whoever stored it, and a changed byte is noticed on reading: an error naming the blob and the
fix, never a silently wrong ranking. `BlobCache` is the optional local copy of verified blobs (`--runs-dir`):
deleting it loses nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.ranking_blob import encode_ranking

log = logging.getLogger(__name__)

CODEC = "zstd"
ZSTD_LEVEL = 9  # a release-size ranking: about 0.7 MB in 40 ms (level 19: 0.67 MB in 1.2 s)


def _codec() -> Any:
    import pyarrow as pa  # a dependency of `datasets`, so always here; its zstd is fast at small levels

    return pa.Codec(CODEC, compression_level=ZSTD_LEVEL)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Blob:
    """Content ready for the store: hashed and compressed before any transaction opens, so none is held long."""

    sha256: str
    media: str
    size: int
    data: bytes  # compressed with `codec`
    codec: str = CODEC

    @classmethod
    def of(cls, raw: bytes, media: str) -> Blob:
        return cls(sha256_of(raw), media, len(raw), _codec().compress(raw, asbytes=True))

    @classmethod
    def ranking(cls, runs: Mapping[str, Mapping[str, Mapping[str, float]]]) -> Blob:
        """The blob of an archived ranking ({topic: {query: {doc: score}}}), in its canonical form."""
        return cls.of(encode_ranking(runs), RANKING)

    def raw(self) -> bytes:
        """The uncompressed bytes, refused unless they still have the hash the blob is filed under."""
        if self.codec != CODEC:
            raise FreshStackError(f"blob {self.sha256}: unknown codec {self.codec!r}; upgrade freshstack-hf")
        try:
            data = _codec().decompress(self.data, decompressed_size=self.size, asbytes=True)
        except Exception as exc:  # pyarrow raises OSError, ValueError, ... on damaged input
            raise BlobCorrupt(self.sha256, f"it does not decompress ({exc})") from None
        if sha256_of(data) != self.sha256:
            raise BlobCorrupt(self.sha256, "its content does not match its hash")
        return data


class BlobCorrupt(FreshStackError):
    """A stored blob whose bytes changed since it was written."""

    def __init__(self, sha256: str, why: str) -> None:
        super().__init__(
            f"stored blob {sha256} is damaged: {why}. Restore the store from a backup "
            "(freshstack-hf admin import DIR), or delete the system that refers to it (freshstack-hf admin delete ID)"
        )
        self.sha256 = sha256


class BlobCache:
    """An optional local copy of verified blobs (`--runs-dir`), one file per sha256; never the place of record."""

    def __init__(self, folder: str | Path) -> None:
        self.root = Path(folder).expanduser() / "blobs"

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def get(self, sha256: str) -> bytes | None:
        try:
            data = self.path(sha256).read_bytes()
        except OSError:
            return None
        return data if sha256_of(data) == sha256 else None  # a damaged copy is ignored: the store has the blob

    def put(self, sha256: str, data: bytes) -> None:
        target = self.path(sha256)
        if target.is_file():
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(target) as tmp:
                Path(tmp).write_bytes(data)
        except OSError as exc:  # a full or read-only cache costs speed, never a result
            log.warning("blob cache %s not written: %s", target, exc)

    def drop(self, sha256: str) -> None:
        self.path(sha256).unlink(missing_ok=True)
