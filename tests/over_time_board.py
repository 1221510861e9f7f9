"""A board over three real snapshots of one topic (`drift_repos`' two, and a third judged differently), with two
uploaded runs, each re-scored by a real worker on the snapshots it was not submitted on
(`tracks.retrieval.jobs.remeasure`); shared by the Over time view's tests and its browser test."""

from __future__ import annotations

import functools
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from drift_repos import QUERIES, _topic, new_docs, new_topic, old_topic, write_snapshot

from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from freshstack_hf.topic import Topic
from leaderboard.tracks.retrieval.jobs.remeasure import remeasure
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

DATES = ["2024-10-31", "2025-04-30", "2025-10-31"]
QUALITY = {"bm25": 1.0, "dense": 0.0, "top_ranked": 0.5}


def dated(topic: Topic) -> Topic:
    """`topic` with its questions asked on both sides of the runs' cutoff (2024-06-30): q1 and q2 before it."""
    queries = [replace(q, date="2024-01-10" if q.query_id in ("q1", "q2") else "2024-09-01") for q in topic.queries]
    return Topic(topic.name, queries=queries, nuggets=topic.nuggets, docs=topic.docs, judgments=topic.judgments)


def third_topic():
    """The second snapshot's topic without its newest question's support: data of its own, judged differently."""
    later = new_topic()
    support = {n.nugget_id: sorted({j.doc_id for j in later.judgments if j.nugget_id == n.nugget_id and j.relevance})
               for n in later.nuggets if not n.nugget_id.startswith("q1")}  # fmt: skip
    return _topic([*QUERIES, "q5"], support, new_docs(), {"q4": ["lib/e.py_50_100"]})


def three_snapshot_board(store: Any, tmp_path: Path) -> dict[str, Any]:
    base = tmp_path / "freshstack"
    for date, topic in zip(DATES, (old_topic(), new_topic(), third_topic()), strict=True):
        write_snapshot(tmp_path / f"freshstack@{date}", dated(topic), QUALITY)
    datasets = [Dataset(base, date) for date in DATES]
    assert len({d.revision for d in datasets}) == 3
    runs = {}
    for name, dataset, seed in (("early run", datasets[0], 1), ("later run", datasets[1], 2)):
        topic, rng = dataset.topic("drifty"), random.Random(seed)
        docs = sorted(d.doc_id for d in topic.docs)
        path = runs[name] = tmp_path / f"{name.replace(' ', '-')}.trec"
        write_run({q: {d: float(rng.randrange(1, 10**6)) for d in docs} for q in topic.query_ids}, path, tag="run")
        submitted = RunSubmitter(store, dataset, rate_limit=None).submit(runs[name], name=name, cutoff="2024-06-30")
        assert submitted.status == "scored"
    for dataset in datasets:
        remeasure(store, dataset)
    evaluate = functools.partial(evaluate_job, dataset=str(datasets[-1].folder))
    assert run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05).done == 4
    return {"base": base, "datasets": datasets, "runs": runs, "store": store, "tmp": tmp_path}
