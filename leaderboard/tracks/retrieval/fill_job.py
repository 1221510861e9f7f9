"""The worker's `fill` job: a stored system's unjudged top-k documents judged at the board's judge endpoint.

Queued by `freshstack-hf fill-board` (an operator's command: judging costs the operator's tokens, so no page
button queues it). The job process reads the system's archived ranking and the dataset, judges the holes with
`FRESHSTACK_JUDGE_BASE_URL` / `FRESHSTACK_JUDGE_MODEL` (the offline judge when none is named; the key,
`FRESHSTACK_JUDGE_API_KEY`, is the one secret the process keeps) and writes a new qrels revision beside the
dataset (`leaderboard.fills`, `freshstack_hf.holes`). It returns no scores: the system's row is unchanged, and
the Holes tab shows every stored system re-scored on the new revision, old -> new. The new revision is a folder
beside the board's dataset, so a fill job needs a worker that sees the board's filesystem and runs archive (the
app's own `--worker`, or `freshstack-hf worker` on the same machine), not a GPU worker elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.archive import RunArchive, runs_dir
from leaderboard.job_contract import JobKind, JobOptions, open_job_dataset
from leaderboard.schema import JobOutput, ResultMeta
from leaderboard.tracks.answers import JUDGE_KEY_ENV
from leaderboard.tracks.retrieval import FILL_JOB_KIND


def fill_payload(dataset: Any, topic: str, system: Any, k: int = 10) -> dict[str, Any]:
    """What the job needs: the dataset and revision the board serves, the topic, the system's archived ranking."""
    return {
        "dataset": str(dataset.folder),
        "topic": topic,
        "system": system.name,
        "content_hash": system.content_hash,
        "k": k,
    }


def run_fill(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    from leaderboard.fills import fill_archived_run

    topic = str(payload["topic"])
    dataset = open_job_dataset(payload, options.dataset, [topic])
    runs = RunArchive(runs_dir(options.archive_dir)).load(str(payload["content_hash"]))
    if not runs or not runs.get(topic):
        raise FreshStackError(f"system {payload['system']!r}: no archived ranking on topic {topic!r} to fill from")
    record = fill_archived_run(
        dataset, topic, runs[topic], str(payload["system"]), str(payload["content_hash"]), k=int(payload["k"])
    )
    parameters = {"fill": record.revision or "", "holes": record.holes, "requests": record.requests}
    return JobOutput({}, ResultMeta(dataset.revision, parameters=parameters))


JOB_KINDS = {FILL_JOB_KIND: JobKind(run_fill, keeps=(JUDGE_KEY_ENV,))}
