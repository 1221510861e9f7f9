"""The project's defaults, in one place, so a change of policy is one edit and every stored number can name them.

Resamples and seed make every interval and paired test reproducible: the CLI, `Dataset.score`, the answers
scorer and the leaderboard all read them from here. The cache root is where embeddings and LLM replies are kept
between runs, shared by the build, the answers judge, the baselines and the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from freshstack_hf.retrieval.dense import DenseRetriever

RESAMPLES = 10_000  # bootstrap and randomization-test samples
SEED = 0  # the bootstrap's and paired test's random seed
CACHE_ENV = "FRESHSTACK_CACHE"


def cache_root() -> Path:
    """FRESHSTACK_CACHE, else ~/.cache/freshstack_hf: reused across runs and repos."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "freshstack_hf")


def default_cache_dir() -> Path:
    """The embedding cache (a folder under `cache_root`)."""
    return cache_root() / "embeddings"


def dense_retriever(model: str | None = None, **settings: Any) -> DenseRetriever:
    """The default dense retriever: the packaged MiniLM (or `model`), embeddings cached under `cache_root`."""
    from freshstack_hf.retrieval.dense import DEFAULT_DENSE_MODEL, DenseRetriever

    settings.setdefault("cache_dir", default_cache_dir())
    return DenseRetriever(model or DEFAULT_DENSE_MODEL, **settings)
