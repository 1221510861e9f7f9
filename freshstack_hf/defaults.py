"""The project's defaults, in one place, so a change of policy is one edit and every stored number can name them.

Resamples and seed make every interval and paired test reproducible: the CLI, `Dataset.score`, the answers
scorer and the leaderboard all read them from here. The cache root is where embeddings and LLM replies are kept
between runs, shared by the build, the answers judge, the baselines and the CLI; the default dense retriever is
made here so every command that encodes a corpus reuses the same embedding cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from freshstack_hf.retrieval.dense import DenseRetriever
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

RESAMPLES = 10_000  # bootstrap and randomization-test samples
SEED = 0  # the bootstrap's and paired test's random seed
# The board's rank intervals (`metrics.rank_uncertainty`) are recomputed on every store change for up to 1,000
# systems, in the page's render: 1,000 replicates (25 in each 2.5% tail, the usual minimum for a percentile
# interval) take 0.13 s there, RESAMPLES 0.96 s (1,000 systems x 5 topics x 50 queries, 2 cores).
RANK_RESAMPLES = 1_000
CACHE_ENV = "FRESHSTACK_CACHE"


def cache_root() -> Path:
    """FRESHSTACK_CACHE, else ~/.cache/freshstack_hf: reused across runs and repos."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "freshstack_hf")


def default_cache_dir() -> Path:
    """The embedding cache (a folder under `cache_root`)."""
    return cache_root() / "embeddings"


def dense_retriever(
    model: str | os.PathLike[str] | None = None, *, cache_dir: str | os.PathLike[str] | None = None, **settings: Any
) -> DenseRetriever:
    """The dense retriever of `model` (default: the packaged MiniLM) with its embeddings cached in `cache_dir`
    (default: `default_cache_dir()`, the cache every command shares, so no chunk is encoded twice)."""
    cache = default_cache_dir() if cache_dir is None else cache_dir
    return DenseRetriever(str(model or DEFAULT_DENSE_MODEL), cache_dir=cache, **settings)
