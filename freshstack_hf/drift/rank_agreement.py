"""Rank agreement of systems between two snapshots: Kendall's tau-b, ranks and a paired bootstrap interval.

"Still Fresh?" asks whether a benchmark's conclusions survive a new snapshot: do systems keep their order? Kendall's
tau-b over the systems' mean scores on the old and the new snapshot answers it, with ties handled as
`scipy.stats.kendalltau` handles them (its default, tau-b): pairs tied on both sides count nowhere, pairs tied on
one side count in that side's normaliser only. It is computed here as a sign-product sum so that ten thousand
bootstrap resamples are one numpy expression rather than ten thousand scipy calls, and a test pins it to scipy.

The interval resamples queries, as every interval of the project does (`metrics.uncertainty`): the queries both
snapshots judge are drawn with replacement, the *same* draw for the old and the new scores of every system (a paired
bootstrap: a query that is hard on both stays hard on both), seeded, and tau is recomputed on each resample's means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from freshstack_hf.defaults import RESAMPLES, SEED

_CHUNK = 2_000_000  # resample-matrix entries drawn at once (as metrics.uncertainty), to bound memory


@dataclass(frozen=True, slots=True)
class Agreement:
    """Tau of two orderings of the same systems, its interval and each system's ranks (1 = best)."""

    tau: float | None
    low: float | None
    high: float | None
    tau_common: float | None
    systems: list[str]
    rank_old: dict[str, int]
    rank_new: dict[str, int]
    common_queries: int

    @property
    def rank_change(self) -> dict[str, int]:
        """Old rank minus new rank: positive means the system climbed on the new snapshot."""
        return {s: self.rank_old[s] - self.rank_new[s] for s in self.systems}

    def as_json(self) -> dict:
        return {
            "kendall_tau": self.tau,
            "ci95": [self.low, self.high],
            "kendall_tau_common_queries": self.tau_common,
            "common_queries": self.common_queries,
            "ranks": {
                s: {"old": self.rank_old[s], "new": self.rank_new[s], "change": self.rank_change[s]}
                for s in self.systems
            },
        }


def _pair_signs(values: np.ndarray) -> np.ndarray:
    """sign(x_i - x_j) for every pair i < j, along the last axis (systems)."""
    i, j = np.triu_indices(values.shape[-1], k=1)
    return np.sign(values[..., i] - values[..., j])


def kendall_tau_b(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> np.ndarray | float | None:
    """Kendall's tau-b of a and b (the last axis holds the systems; leading axes are independent resamples).

    tau-b = sum(s_a * s_b) / sqrt(sum(s_a^2) * sum(s_b^2)) over pairs, s = sign of the pair's difference. For one
    pair of vectors it returns a float, or None where scipy returns NaN (fewer than two systems, or all tied).
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"tau needs two orderings of the same systems (shapes {x.shape} and {y.shape})")
    if x.shape[-1] < 2:
        return None if x.ndim == 1 else np.full(x.shape[:-1], np.nan)
    sx, sy = _pair_signs(x), _pair_signs(y)
    denominator = np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=-1) / denominator
    if x.ndim == 1:
        return None if not np.isfinite(tau) else float(tau)
    return tau


def ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """1 = best; tied systems share the better rank (competition ranking: 1, 2, 2, 4)."""
    return {s: 1 + sum(1 for other in scores.values() if other > v) for s, v in scores.items()}


def agreement(
    old: Mapping[str, float],
    new: Mapping[str, float],
    old_per_query: Mapping[str, Mapping[str, float]],
    new_per_query: Mapping[str, Mapping[str, float]],
    *,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Agreement:
    """Tau between the systems' old and new scores, ranks, and the paired bootstrap interval.

    `old`/`new` are each system's reported mean on its snapshot; `*_per_query` are system -> query -> score, from
    which the queries both snapshots judge (and every system has on both) are resampled.
    """
    systems = sorted(set(old) & set(new))
    tau = kendall_tau_b([old[s] for s in systems], [new[s] for s in systems])
    shared = [set(old_per_query[s]) & set(new_per_query[s]) for s in systems]
    common = sorted(set.intersection(*shared)) if shared else []
    if systems and common:
        x = np.array([[old_per_query[s][q] for q in common] for s in systems])  # systems x queries
        y = np.array([[new_per_query[s][q] for q in common] for s in systems])
        tau_common = kendall_tau_b(x.mean(axis=1), y.mean(axis=1))
        low, high = _bootstrap(x, y, confidence, resamples, seed)
    else:
        tau_common, low, high = None, None, None
    return Agreement(
        tau=tau,
        low=low,
        high=high,
        tau_common=tau_common,
        systems=systems,
        rank_old=ranks({s: old[s] for s in systems}),
        rank_new=ranks({s: new[s] for s in systems}),
        common_queries=len(common),
    )


def _bootstrap(
    x: np.ndarray, y: np.ndarray, confidence: float, resamples: int, seed: int
) -> tuple[float | None, float | None]:
    """Percentile interval of tau over paired query resamples (resamples where tau is undefined are dropped)."""
    if resamples <= 0 or x.shape[0] < 2:
        return None, None
    rng = np.random.default_rng(seed)
    n = x.shape[1]
    taus = np.empty(resamples)
    step = max(1, _CHUNK // max(1, n * x.shape[0]))
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n))
        old_means = x[:, idx].mean(axis=2).T  # resamples x systems
        new_means = y[:, idx].mean(axis=2).T
        taus[start:stop] = kendall_tau_b(old_means, new_means)
    finite = taus[np.isfinite(taus)]
    if finite.size == 0:
        return None, None
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)
