"""The worker's `fill` job: a stored system's unjudged top-k documents judged at the board's judge endpoint.

Queued by `freshstack-hf fill-board` (an operator's command: judging costs the operator's tokens, so no page
button queues it). The worker reads the system's archived ranking from the store and hands it to the job process
(`JobKind.inputs`), which judges the holes with `FRESHSTACK_JUDGE_BASE_URL` / `FRESHSTACK_JUDGE_MODEL` (the offline
judge when none is named; the key, `FRESHSTACK_JUDGE_API_KEY`, is the one secret the process keeps) and writes the
new qrels revision beside the worker's copy of the dataset (`leaderboard.fills`, `freshstack_hf.holes`). What the
fill added comes back to the store as a blob of the system (`fills.fill_blob`), and the board writes the same
revision beside its own dataset from it: any worker that reaches the store can run a fill. It returns no scores:
the system's row is unchanged, and the Holes tab shows every stored system re-scored on the new revision.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.fills import fill_archived_run, fill_blob
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.ranking_blob import decode_ranking
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval import FILL_JOB_KIND
from leaderboard.worker.job_contract import JobKind, JobOptions, JobOutput, job_inputs, open_job_dataset
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV


def run_fill(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    topic = str(payload["topic"])
    dataset = open_job_dataset(payload, options.dataset, [topic])
    runs = decode_ranking(job_inputs(payload, RANKING, "ranking to fill from"))
    if not runs.get(topic):
        raise FreshStackError(f"system {payload['system']!r}: no archived ranking on topic {topic!r} to fill from")
    record = fill_archived_run(
        dataset,
        topic,
        runs[topic],
        str(payload["system"]),
        str(payload["content_hash"]),
        k=int(payload["k"]),
        name=payload.get("name"),
    )
    parameters = {"fill": record.revision or "", "holes": record.holes, "requests": record.requests}
    return JobOutput({}, ResultMeta(dataset.revision, parameters=parameters), blobs=fill_blob(record))


JOB_KINDS = {FILL_JOB_KIND: JobKind(run_fill, keeps=(JUDGE_KEY_ENV,), inputs=(RANKING,))}
