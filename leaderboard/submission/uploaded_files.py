"""The hygiene of an uploaded file, whatever its kind: its hash, its size (refused when no file came) and a gzip
bomb refused before any parser reads it."""

from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from leaderboard.defaults import GZIP_RATIO
from leaderboard.submission.outcome import SubmitOutcome, refused


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def uploaded_size(path: str | Path | None, what: str, formats: str) -> int:
    """The size of the uploaded file (an `OSError` when it is not there); refused when no file came."""
    if path is None:
        raise FreshStackError(f"no {what} file: upload {formats}")
    return os.path.getsize(path)


def gzip_bomb(path: str | Path, what: str, max_file_bytes: int) -> SubmitOutcome | None:
    """Refuse a gzipped upload (`what`: answers) that expands past the cap times `GZIP_RATIO`, reading at most that
    much; None for a file that is not gzipped or stays within it."""
    if not str(path).endswith(".gz"):
        return None
    limit, total = max_file_bytes * GZIP_RATIO, 0
    try:
        with gzip.open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                total += len(block)
                if total > limit:
                    return refused(f"{what} file expands past {limit:,} bytes once decompressed")
    except (OSError, EOFError) as exc:
        return refused(f"{what} file is not a readable gzip file ({exc})")
    return None
