"""Scores for the store: every row kind (submitted run, baseline, model) is scored here, through the library.

The numbers come from `Dataset.score`, the entry point the CLI and the MTEB task use too; this module only
shapes them for `Store.add_system` / `JobQueue.finish_job`, records how they were made (the measures with their
parameters, resamples, seed) and cuts the run to what the archive keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.metrics import HEADLINE, MEASURES, RunScores
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, cut
from leaderboard.store.blobs import Blob
from leaderboard.store.ranking_blob import MEDIA as RANKING

ARCHIVE_DEPTH = 100  # the top of each query's ranking the store keeps behind a row


@dataclass(frozen=True, slots=True)
class Scored:
    """What storing a scored system needs: per-topic results, the runs to archive, and the scores themselves."""

    results: dict[str, dict[str, Any]]  # topic -> {"metrics", "per_query", "ci"}
    archived: dict[str, dict[str, dict[str, float]]]  # topic -> top ARCHIVE_DEPTH of the run, own queries only
    scores: RunScores
    parameters: dict[str, Any]  # how the numbers were made (`scoring_parameters`), recorded with the row
    encoded: dict[str, Blob] | None = field(default=None, repr=False, compare=False)  # `blobs()`, when made

    def blobs(self) -> dict[str, Blob]:
        return self.encoded if self.encoded is not None else ranking_blobs(self.archived)


def ranking_blobs(archived: Mapping[str, Any] | None) -> dict[str, Blob]:
    """What the store keeps behind a row ({role: blob}): the archived ranking, stored with the scores."""
    return {RANKING: Blob.ranking(archived)} if archived else {}


def score_for_store(
    dataset: Dataset,
    run: Run | Mapping[str, Run],
    topics: Iterable[str],
    *,
    by_topic: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Scored:
    """Score `run` (one run, or with `by_topic` topic -> run) on `topics`; see the module docstring.

    A run may hold other topics' queries too (a whole-dataset file): the evaluator ignores them, and the
    archived copy keeps only each topic's own queries.
    """
    names = list(topics)
    runs = {t: run[t] for t in names} if by_topic else {t: run for t in names}
    archived = {t: cut(runs[t], ARCHIVE_DEPTH, dataset.query_ids([t])) for t in names}
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The archive's blob is encoded, hashed and compressed (zstd and sha256 without the GIL) while it scores.
        blobs = pool.submit(ranking_blobs, archived)
        scores = dataset.score(
            runs, by_topic=True, measures=MEASURES, interval_measures=HEADLINE, resamples=resamples, seed=seed
        )
    return Scored(scores.stored(), archived, scores, scoring_parameters(resamples, seed), blobs.result())


def scoring_parameters(resamples: int, seed: int) -> dict[str, Any]:
    """How stored numbers were made: each measure with all its parameters (alpha included), the bootstrap."""
    return {"measures": [m.spec for m in MEASURES], "interval_measures": [m.spec for m in HEADLINE],
            "resamples": resamples, "seed": seed}  # fmt: skip
