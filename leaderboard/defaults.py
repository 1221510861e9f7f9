"""The board's defaults, each named once: where its store lives, the upload cap, rate limit, live-scoring quota and
live release rule a board starts with (`freshstack-hf leaderboard --max-file-mb / --rate-limit / --live-per-week /
--live-release`, `build_app`, `launch_app` and the submitters all read them from here), who scores what is queued
(`scoring_plan`: a worker in the board's process unless `--no-worker`), how many of its events run at once
(`leaderboard.page.page.READ` / `WRITE`), how many rendered views it keeps, and how often it looks for newly published
snapshots (`$FRESHSTACK_READ_CONCURRENCY`, `$FRESHSTACK_VIEW_CACHE` and `$FRESHSTACK_SNAPSHOT_RELIST` tune the last
three).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

STORE_ENV = "FRESHSTACK_STORE"
DATA_DIR_ENV = "FRESHSTACK_DATA_DIR"
MAX_UPLOAD_MB = 20.0  # the cap: an answers file as uploaded; a run's part the board keeps (its top 100 per query)
RATE_LIMIT_PER_HOUR = 10  # accepted submissions per identity in any hour; 0 or None turns it off
# Live scorings (a model's or reranker's scores on the embargoed questions, `leaderboard.live_scores`) per identity
# in any 7 days: what one identity may cost the workers on the private split. It does not stop probing by itself
# (identities are free: `python -m benchmarks probe`); the release rule below does. A submission past it is still
# accepted and scored on the public questions; its live columns say the quota was used up. 0: nothing is scored
# live. The board's re-measuring of a stored model on a new snapshot (`remeasure`) counts against its owner's quota
# too: each new embargo would otherwise be probed for free by every stored model.
LIVE_SCORES_PER_WEEK = 3
LIVE_WINDOW_SECONDS = 7 * 24 * 3600.0
# When a live value is shown (`leaderboard.live_release`): "hold" (once the embargo of its questions has ended: no
# feedback on a private question reaches anyone), or "open" (at once: a prober with many identities reads the
# judgments back).
LIVE_RELEASES = ("hold", "open")
LIVE_RELEASE = LIVE_RELEASES[0]
GZIP_RATIO = 25  # an upload may hold this many times the cap as text (a run read to its kept depth; gzip bombs)
READ_CONCURRENCY_ENV = "FRESHSTACK_READ_CONCURRENCY"
VIEW_CACHE_ENV = "FRESHSTACK_VIEW_CACHE"
SNAPSHOT_RELIST_ENV = "FRESHSTACK_SNAPSHOT_RELIST"


def _count_from_env(name: str, default: int, least: int) -> int:
    """An operator's whole number >= `least` from `name`, else `default`; a bad value is said and ignored (a typo
    in a tuning knob must not stop the board)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.isdigit() and int(raw) >= least:
        return int(raw)
    logging.getLogger(__name__).warning("%s=%r is not a whole number >= %d: %d is used", name, raw, least, default)
    return default


# Events at once. Reads (every table, export, Detail and nugget view, plot, the load chain) share one group: they
# change nothing, and a visitor's table must not wait in line behind 49 others' (queued 8 at a time, 50 visitors
# saw `/table` take 3.8 s at p95: `benchmarks/bench_visitors.py`). Writes (a submission form, a moderation action)
# stay few at once each: a submission scores its run in this process, and the store serialises writers anyway.
READ_CONCURRENCY = _count_from_env(READ_CONCURRENCY_ENV, 64, least=1)
WRITE_CONCURRENCY = 4
EVENT_THREADS = READ_CONCURRENCY + 4 * WRITE_CONCURRENCY  # Gradio's event threads: every read, and a few write forms
# Rendered views a board keeps per store state (`StoreFrame.view`, and the page's HTML in `first_paint`): the
# pages, first paints and exports visitors ask for, so fifty identical requests cost one render; a search typed
# letter by letter makes a view per letter. 0 renders every request again.
VIEW_CACHE_ENTRIES = _count_from_env(VIEW_CACHE_ENV, 128, least=0)
# Seconds between two listings of the published snapshots (`retrieval_page.SnapshotList`): a board that is up when
# `refresh` publishes the next one (a `REPO@DATE` folder, a Hub tag) shows it within this long of a visit, without a
# restart. A listing is a directory read or one Hub request, made on a visitor's read at most this often; 0 lists
# on every read.
SNAPSHOT_RELIST_SECONDS = _count_from_env(SNAPSHOT_RELIST_ENV, 60, least=0)


def scoring_plan(worker_here: bool) -> str:
    """Who scores what the board queues (submitted models and rerankers, its baseline rows, re-scored runs), as its
    start and its About tab say it: a worker in this process (the default), or, with `--no-worker`, the workers
    that share the store. Uploaded runs and answers are scored when they are submitted, either way."""
    if worker_here:
        return "models, rerankers and baselines are scored by a worker in this process"
    return (
        "models, rerankers and baselines are scored by the workers sharing the store (start them with "
        "`freshstack-hf worker --store URL`); none runs in this process"
    )


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


# Help of every command's --runs-dir; here, not beside the archive, so `--help` and argument parsing import no
# database driver.
RUNS_DIR_HELP = (
    "optional local cache of the rankings and files the store keeps (an older release's runs archive found there, "
    "or in <data dir>/runs, is imported into the store)"
)
