"""The retrieval track's re-scoring job: a submitted run file measured on a dataset revision it was not submitted on.

A run file cannot be re-run on a new snapshot, but the ranking the store archived behind its row (each query's top
`ARCHIVE_DEPTH`) can be scored as it is on the new revision's judgments: documents that did not change keep their
ids and keep their judgments, documents that changed (or vanished) read as unjudged, and the queries the new
snapshot added score 0, as in any run that ranks none of them. This is how `drift-board` scores the stored runs,
and the row says so: its parameters name the row it was re-scored from and the rule, and its name is marked.

The ranking is the source row's blob, read by the worker (`JobKind.inputs`, from the system the payload's
`inputs_from` names) and handed over in the payload, so the job runs on any machine that can reach the store.
Payload (JSON, written by `tracks.retrieval.jobs.remeasure`): {"inputs_from": source system id, "source": its
content hash, "ranking_sha256", "scope", "topics", "dataset", "dataset_revision", "requested_revision"}.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from leaderboard.scoring import score_for_store
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.ranking_blob import decode_ranking
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval import RESCORE_JOB_KIND
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput, job_inputs, open_job_dataset

RULE = "the archived top 100 of each query scored as it is: documents changed since read as unjudged"


def rescore_run(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """The source row's archived ranking scored on the revision the payload names, its own topics only."""
    rankings = decode_ranking(job_inputs(payload, RANKING, "archived ranking"))
    data = open_job_dataset(payload, options.dataset)
    topics = [t for t in data.topics if t in rankings and t in (payload.get("topics") or data.topics)]
    if not topics:
        raise FreshStackError(
            f"the archived ranking covers topics {sorted(rankings)}, none of which dataset revision {data.revision} "
            "has: there is nothing to re-score"
        )
    resamples = int(payload.get("resamples", RESAMPLES))
    scored = score_for_store(data, {t: rankings[t] for t in topics}, topics, by_topic=True, resamples=resamples)
    meta = {
        "job": RESCORE_JOB_KIND,
        "rescored_from": payload.get("inputs_from"),
        "source": payload.get("source"),
        "rule": RULE,
        "ranking_sha256": payload.get("ranking_sha256"),
        "scope": payload.get("scope"),
        "topics": topics,
        "dataset": data.source,
        **scored.parameters,
    }
    return JobOutput(scored.results, ResultMeta(data.revision, __version__, meta), runs=scored.archived)


JOB_KINDS = {RESCORE_JOB_KIND: JobKind(rescore_run, inputs=(RANKING,))}
