"""The board's defaults, each named once: where its store lives, and the upload cap and rate limit a board starts
with (`freshstack-hf leaderboard --max-file-mb / --rate-limit`, `build_app`, `launch_app` and the submitters all
read them from here).
"""

from __future__ import annotations

import os
from pathlib import Path

STORE_ENV = "FRESHSTACK_STORE"
DATA_DIR_ENV = "FRESHSTACK_DATA_DIR"
MAX_UPLOAD_MB = 20.0  # the cap: an answers file as uploaded; a run's part the board keeps (its top 100 per query)
RATE_LIMIT_PER_HOUR = 10  # accepted submissions per identity in any hour; 0 or None turns it off
GZIP_RATIO = 25  # an upload may hold this many times the cap as text (a run read to its kept depth; gzip bombs)


def upload_bytes(max_file_mb: float) -> int:
    """The cap in bytes, as the submitters apply it."""
    return int(max_file_mb * 2**20)


def transfer_bytes(max_file_mb: float) -> int:
    """The largest file Gradio's server accepts at all: `GZIP_RATIO` times the cap, so that a release-size run
    (1,000 docs per query, 70 MB as TREC text) reaches the submitter, which keeps only the depth it scores."""
    return upload_bytes(max_file_mb) * GZIP_RATIO


def default_data_dir() -> Path:
    """$FRESHSTACK_DATA_DIR, else the user's data folder: a leaderboard's store must outlive caches."""
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV]).expanduser()
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "freshstack-hf"


def default_store_url() -> str:
    return os.environ.get(STORE_ENV) or f"sqlite:///{default_data_dir() / 'leaderboard.db'}"
