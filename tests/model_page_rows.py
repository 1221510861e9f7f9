"""Rows of a board as its worker leaves them, for the model-page tests: a Hub model or reranker submitted at a
pinned commit, its job claimed and finished through the store's own queue with per-topic scores (and a live
record in the results' parameters, as a worker that scored it live leaves one)."""

from __future__ import annotations

from typing import Any

from freshstack_hf.metrics import HEADLINE
from leaderboard.model_pages.verified import PROPOSE
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store

DATASET_ID = "org/freshstack"
SNAPSHOT = "2025-10-31"
DATASET_COMMIT = "d" * 40
TOPICS = ["alpha", "beta"]
A10, C20, R50 = (m.id for m in HEADLINE)
LIVE = {"status": "measured", "questions": 20, "measures": {A10: {"value": 0.98, "ci_low": 0.9, "ci_high": 1.0}}}


def topic_results(base: float) -> dict[str, dict[str, Any]]:
    """Scores of the two topics, with digits past the third decimal (the board stores them whole)."""
    results = {}
    for i, topic in enumerate(TOPICS):
        value = base + 0.0123456789 * (i + 1)
        metrics = {A10: value, C20: value / 2 + 0.00011, R50: value / 3 + 0.00007}
        results[topic] = {"metrics": metrics, "per_query": {f"{topic}-q{j}": metrics for j in range(3)}}
    return results


def measured(
    store: Store,
    model: str,
    commit: str | None,
    base: float,
    *,
    kind: str = "model",
    track: str | None = "full",
    dataset: str = DATASET_ID,
    dataset_revision: str = DATASET_COMMIT,
    requested: str = SNAPSHOT,
    propose: bool = False,
    scored: bool = True,
) -> int:
    """A row of `model` (a Hub id, or a folder's absolute path) at `commit` scored on the snapshot, as a worker
    leaves it (`scored` False: still queued; make those last, the next row's worker would claim its job); its id."""
    payload = {
        "model": model,
        "revision": commit,
        "dataset": dataset,
        "dataset_revision": dataset_revision,
        "requested_revision": requested,
        "topics": TOPICS,
        **({"track": track} if kind == "model" else {}),
        **({PROPOSE: True} if propose else {}),
    }
    system, _ = store.add_system(
        name=model.rsplit("/", 1)[-1],
        kind=kind,
        content_hash=f"{kind}:{track}:{model}@{commit}:{dataset_revision}",
        identity="user:alice",
        track=track if kind == "model" else None,
        job=(kind, payload),
    )
    if scored:
        job = store.queue.claim_job("worker-1")
        assert job is not None and job.system_id == system.id
        meta = ResultMeta(dataset_revision, parameters={"live": LIVE})
        assert store.queue.finish_job(job.id, "worker-1", topic_results(base), meta)
    return system.id


def stored_values(store: Store, system_id: int) -> dict[str, dict[str, float]]:
    """topic -> measure -> the stored value of one row's headline measures."""
    values: dict[str, dict[str, float]] = {}
    for row in store.results_for(system_id):
        if row["measure"] in (A10, C20, R50):
            values.setdefault(row["topic"], {})[row["measure"]] = row["value"]
    return values
