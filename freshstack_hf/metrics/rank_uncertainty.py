"""Rank uncertainty: a 95% interval of each system's rank by a paired bootstrap over queries.

A leaderboard's rank hides how much of the gap to the next row is noise: with 50-200 queries per topic, systems
a few thousandths apart swap places on another sample of questions. Ranks are therefore resampled the way the
project resamples means (`uncertainty`): queries, never documents, with a seeded generator.

*Paired*: each bootstrap replicate draws one set of query indices per topic (with replacement, as many as the
topic has) and every system is scored on that same set, so a system that beats another on every query beats it
in every replicate. Each topic's draws come from their own generator, seeded by (seed, topic name), so a topic's
replicates are the same whether its own ranking or the average's is asked for.

*Scopes*: one topic ranks systems by their mean over the replicate's queries; several topics rank them by the
plain mean over topics of those per-topic means (the board's average; each topic weighs 1/T whatever its size,
queries resampled within their own topic, i.e. a stratified bootstrap).

*Rank*: competition ranking ("1224"): 1 + the number of systems strictly better. Systems with equal means share
the better rank, so identical systems both rank 1 rather than one of them arbitrarily 2.

*Interval*: the 2.5th and 97.5th percentiles of the replicates' ranks, read from the discrete distribution
(the smallest rank whose cumulative share reaches 2.5%, resp. 97.5%), so the bounds are ranks that occurred.

*Tied with the leader*: a system whose interval reaches rank 1 -- equivalently, one that ranks first (ties
included) in at least 2.5% of the replicates -- when at least two systems do. It is the rank-level reading of
"not significantly worse than the best at the 5% level (two-sided)", and it marks every system of such a group,
the observed leader included, with the same marker; a leader alone in reaching rank 1 is the clear leader and
is not marked. A system ahead of every other on every query ranks 1 in every replicate: its interval is [1, 1].

Everything is vectorised: a systems x queries matrix per topic, replicates drawn in chunks as per-query counts
(so a replicate's means are one matrix product), ranks by one sort per chunk, and each system's rank
distribution kept as counts, so memory does not grow with the number of replicates.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from freshstack_hf.defaults import RESAMPLES, SEED

CHUNK = 500  # replicates per chunk; fixed, so the draws never depend on the number of systems
_TOLERANCE = 1e-12  # means closer than this (relative) are equal: float noise must not break a tie


@dataclass(frozen=True, slots=True)
class RankInterval:
    """One system's observed rank, its bootstrap interval and the share of replicates it ranks first in."""

    rank: int
    low: int
    high: int
    first_share: float
    tied: bool  # statistically tied with the leader (module docstring)
    confidence: float = 0.95

    def text(self) -> str:
        """'3 (2–5)', with '≈1' after it when tied with the leader: the board's cell."""
        cell = f"{self.rank} ({self.low}–{self.high})"
        return f"{cell} ≈1" if self.tied else cell


def topic_generator(topic: str, seed: int = SEED) -> np.random.Generator:
    """The generator of one topic's query draws: the same for a topic's own ranking and for the average."""
    return np.random.default_rng([seed, zlib.crc32(topic.encode("utf-8"))])


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, higher is better: 1 + the number of strictly better entries (ties share)."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(-values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    position = np.broadcast_to(np.arange(1, values.shape[-1] + 1), values.shape)
    tolerance = _TOLERANCE * np.maximum(1.0, np.abs(ordered[..., :-1]))
    worse = ordered[..., 1:] < ordered[..., :-1] - tolerance  # a new tie group starts here
    starts = np.concatenate([np.ones((*values.shape[:-1], 1), bool), worse], axis=-1)
    sorted_ranks = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    ranks = np.empty_like(sorted_ranks)
    np.put_along_axis(ranks, order, sorted_ranks, axis=-1)
    return ranks


def _replicate_counts(rng: np.random.Generator, replicates: int, queries: int) -> np.ndarray:
    """How often each query is drawn in each replicate: (replicates, queries), each row summing to `queries`."""
    draws = rng.integers(0, queries, size=(replicates, queries))
    flat = (draws + np.arange(replicates)[:, None] * queries).ravel()
    return np.bincount(flat, minlength=replicates * queries).reshape(replicates, queries).astype(np.float64)


@functools.lru_cache(maxsize=16)
def replicate_draws(sizes: tuple[tuple[str, int], ...], resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """The bootstrap's query counts for topics of these (name, query count) `sizes`, chunk by chunk: each
    (replicates, all topics' queries), read-only. They depend on the topics, the seed and the resamples alone, not
    on the systems or their scores, so a board computes them once and every recomputation after a new submission,
    and every column, reuses them (they were half the time of a rank column)."""
    generators = {t: topic_generator(t, seed) for t, _ in sizes}
    chunks = []
    for start in range(0, resamples, CHUNK):
        size = min(CHUNK, resamples - start)
        counts = np.hstack([_replicate_counts(generators[t], size, queries) for t, queries in sizes])
        counts.setflags(write=False)
        chunks.append(counts)
    return tuple(chunks)


def rank_distribution(scores: Mapping[str, np.ndarray], *, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """(systems, systems + 1) counts: how many replicates put system i at rank r (column 0 unused).

    `scores` maps each topic to a (systems, queries) matrix, rows in the same system order for every topic;
    one topic ranks on its means, several on the plain mean of their means.
    """
    matrices = {t: np.asarray(m, dtype=np.float64) for t, m in scores.items()}
    systems = _check(matrices)
    # One weight matrix over every topic's queries: a replicate's means are then one product of its counts with
    # it (each query weighs 1 / (its topic's size x the number of topics)), far faster than one per topic.
    weights = np.hstack([m / (m.shape[1] * len(matrices)) for m in matrices.values()]).T
    histogram = np.zeros(systems * (systems + 1), dtype=np.int64)
    offsets = np.arange(systems) * (systems + 1)
    sizes = tuple((t, m.shape[1]) for t, m in matrices.items())
    for counts in replicate_draws(sizes, resamples, seed):
        ranks = competition_ranks(counts @ weights)
        histogram += np.bincount((ranks + offsets).ravel(), minlength=histogram.size)
    return histogram.reshape(systems, systems + 1)


def rank_intervals(
    scores: Mapping[str, np.ndarray],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[RankInterval]:
    """Each system's observed rank, percentile interval of its bootstrap rank and tie with the leader, in the
    row order of `scores`' matrices (module docstring for every rule)."""
    matrices = {t: np.asarray(m, dtype=np.float64) for t, m in scores.items()}
    if _check(matrices) == 0:
        return []
    observed = competition_ranks(np.mean([m.mean(axis=1) for m in matrices.values()], axis=0))
    histogram = rank_distribution(matrices, resamples=resamples, seed=seed)
    share = np.cumsum(histogram, axis=1) / resamples
    tail = (1.0 - confidence) / 2
    low = np.argmax(share >= tail - 1e-12, axis=1)
    high = np.argmax(share >= 1.0 - tail - 1e-12, axis=1)
    first = histogram[:, 1] / resamples
    contenders = int(np.count_nonzero(low == 1))
    return [
        RankInterval(int(r), int(lo), int(hi), float(f), bool(lo == 1 and contenders > 1), confidence)
        for r, lo, hi, f in zip(observed, low, high, first, strict=True)
    ]


def _check(matrices: Mapping[str, np.ndarray]) -> int:
    """The number of systems; every topic must give a (systems, queries >= 1) matrix with the same systems."""
    if not matrices:
        raise ValueError("rank intervals need at least one topic")
    shapes = {t: m.shape for t, m in matrices.items()}
    if any(len(s) != 2 or s[1] == 0 for s in shapes.values()) or len({s[0] for s in shapes.values()}) != 1:
        raise ValueError(f"every topic needs a systems x queries matrix with the same systems: {shapes}")
    return next(iter(shapes.values()))[0]
