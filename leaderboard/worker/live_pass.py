"""A live pass, the worker's side: what a live-scored job is handed of the private split, and what becomes of the
ranking it returns (`leaderboard.live_scores` has the record's form).

The worker reads the private revision itself (`worker.private_split`, with its own token) and hands the job process,
which loads a submitted model, only what ranking needs: a job folder, made afresh for the job under a temporary
folder (mode 0700, its files 0600) and removed when the job ends, whatever happens. It is a dataset repo that
`freshstack_hf.repo.dataset.Dataset` opens as any other, holding per topic:

* `queries_official.parquet` with three columns, `query_id`, `query_title`, `query_text`: the embargoed questions
  that have judgments (those a score counts), in the revision's order; no answer, nugget, date or tag;
* `corpus.parquet`: the documents (the public corpus), as the private revision has them;
* `top_ranked.parquet`: those questions' candidate lists, when the private revision has them (a reranker's input,
  a Nano-track model's pool).

No answers, nuggets, judgments (qrels, nugget-qrels), manifest or card: the job can rank the questions, not score
them. It is handed the folder only when it runs in a process the worker's machine can seal
(`worker.sandbox.unavailable`): a job in the worker's own thread (`isolate=False`), or on a machine without Landlock
and seccomp, is handed the `CANNOT_SEAL` status instead and scores the public questions alone.

The job returns its ranking of each topic (`JobOutput.live_runs`); the worker checks its shape, keeps it when
`--live-runs` asks (`keep_ranking`), scores it against the private judgments (`live_aggregates`) and stores the
record under the results' parameters (`live`), whatever the job itself wrote there: a job may only say why it
could not rank (`live_scores.JOB_STATUSES`), never a number.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run
from leaderboard.live_scores import (
    CANNOT_SEAL,
    FAILED,
    JOB_STATUSES,
    NONE_HELD,
    keep_ranking,
    live_aggregates,
    run_tag,
    status,
)
from leaderboard.store.records import JobRecord
from leaderboard.worker.job_contract import JobOutput
from leaderboard.worker.jobs import JOB_KINDS
from leaderboard.worker.private_split import LIVE_RUNS_ENV, PRIVATE, kept_run_path, private_split, public_topics
from leaderboard.worker.sandbox import unavailable

log = logging.getLogger(__name__)

FOLDER_PREFIX = "freshstack-live-"  # the job folders' names, under the temporary folder (TMPDIR)
QUERY_COLUMNS = ("query_id", "query_title", "query_text")  # all a job folder holds of a question


def _private_file(path: Path) -> Any:
    """A new file readable by its owner alone from the start (not chmod-ed after: no moment it is more)."""
    return open(path, "xb", opener=lambda name, flags: os.open(name, flags, 0o600))


def write_job_folder(private: Dataset, topics: list[str], folder: Path) -> None:
    """The job folder of `topics` of the private revision `private` in `folder` (see the module docstring)."""
    for name in topics:
        topic = private.topic(name)
        judged = set(private.qrels(name).query_ids)
        queries = [q for q in topic.queries if q.query_id in judged]
        for where in (folder, folder / layout.DATA_DIR, layout.topic_dir(folder, name)):
            where.mkdir(mode=0o700, exist_ok=True)
        table = pa.table(
            {
                "query_id": [q.query_id for q in queries],
                "query_title": [q.title for q in queries],
                "query_text": [q.body for q in queries],
            },
            schema=pa.schema([(column, pa.string()) for column in QUERY_COLUMNS]),
        )
        with _private_file(layout.config_path(folder, name, "queries_official")) as handle:
            pq.write_table(table, handle)
        source = layout.config_path(Path(private.folder), name, "corpus")
        with open(source, "rb") as read, _private_file(layout.config_path(folder, name, "corpus")) as handle:
            shutil.copyfileobj(read, handle, 1 << 20)
        lists = layout.config_path(Path(private.folder), name, "top_ranked")
        if lists.is_file():
            ids = pq.read_table(lists)
            kept = ids.filter(pa.array([q in judged for q in ids.column("query-id").to_pylist()], pa.bool_()))
            with _private_file(layout.config_path(folder, name, "top_ranked")) as handle:
                pq.write_table(kept, handle)


def _checked(runs: Any, topics: tuple[str, ...]) -> dict[str, Run]:
    """The rankings a job returned, refused unless they have a ranking's shape; each topic it was handed, no other
    (a topic it left out ranks nothing, and scores 0 as an empty ranking does)."""
    if not isinstance(runs, Mapping):
        raise ValueError("the live rankings are not a mapping")
    found: dict[str, Run] = {}
    for name in topics:
        run = runs.get(name) or {}
        if not isinstance(run, Mapping):
            raise ValueError("a live ranking is not a mapping")
        checked: dict[str, dict[str, float]] = {}
        for query, docs in run.items():
            if not isinstance(query, str) or not isinstance(docs, Mapping):
                raise ValueError("a live ranking's query is not ranked as {doc: score}")
            scores = {doc: float(score) for doc, score in docs.items() if isinstance(doc, str)}
            if len(scores) != len(docs) or not all(math.isfinite(s) for s in scores.values()):
                raise ValueError("a live ranking holds a document that is not an id or a score that is not a number")
            checked[query] = scores
        found[name] = checked
    return found


@dataclass
class LivePass:
    """One job's live pass: what it is handed (`handed`, the payload's `PRIVATE`: the job folder and snapshot, a
    status, or None), and what the worker keeps to score its answer with."""

    live: bool  # the job's kind is scored live
    handed: dict[str, Any] | None = None
    private: str | None = None  # the private revision's folder: the worker's, never handed
    snapshot: str = ""
    topics: tuple[str, ...] = ()  # the topics written into the job folder
    kept_run: str | None = None
    folder: Path | None = None  # the temporary folder holding the job folder

    @property
    def read(self) -> bool:
        """Whether the private revision was read for the job (a download may have taken a while)."""
        return self.private is not None

    def job(self, job: JobRecord) -> JobRecord:
        """`job` as its process receives it: its payload with what it was handed (the queue never holds it)."""
        if not self.live:
            return job
        payload = {k: v for k, v in job.payload.items() if k != PRIVATE}
        return dataclasses.replace(job, payload=payload if self.handed is None else {**payload, PRIVATE: self.handed})

    def close(self) -> None:
        """Remove the job folder (once the job process is gone)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def record(self, payload: Mapping[str, Any], output: JobOutput) -> dict[str, Any] | None:
        """The live record of the job (None: none to store): the status it was handed, else its ranking scored."""
        if self.private is None or self.handed is None or "folder" not in self.handed:
            return self.handed
        if output.live_runs is None:
            said = (output.meta.parameters or {}).get("live")
            code = JOB_STATUSES.get(said.get("status")) if isinstance(said, Mapping) else None
            return status(code or FAILED, self.snapshot)
        try:
            runs = _checked(output.live_runs, self.topics)
            if self.kept_run:
                keep_ranking(self.kept_run, runs, run_tag(str(payload.get("model") or "")))
            resamples = int(payload.get("resamples", RESAMPLES))
            return live_aggregates(Dataset(self.private), runs, self.snapshot, resamples=resamples)
        except Exception as exc:  # its message could quote an embargoed question's id
            log.warning("live scoring failed (%s); recorded as not measured", type(exc).__name__)
            return status(FAILED, self.snapshot)

    def finish(self, payload: Mapping[str, Any], output: JobOutput) -> JobOutput:
        """`output` with the worker's live record in its parameters (none, when there is none to keep), and without
        the rankings of the embargoed questions, which go nowhere else."""
        if not self.live:
            return output
        parameters = {k: v for k, v in (output.meta.parameters or {}).items() if k != "live"}
        record = self.record(payload, output)
        if record is not None:
            parameters["live"] = record
        meta = dataclasses.replace(output.meta, parameters=parameters)
        return dataclasses.replace(output, meta=meta, live_runs=None)


def live_pass(
    job: JobRecord, private_repo: str | None, live_runs: str | None = None, *, isolate: bool = True
) -> LivePass:
    """The live pass of `job`: nothing for a kind not scored live; else the private split of its snapshot read here,
    with this process's token (`private_split`), and when it holds embargoed questions of the job's topics and the
    job process can be sealed, a job folder written for it. With `live_runs` (else $FRESHSTACK_LIVE_RUNS) the file
    its ranking is kept in (`kept_run_path`). Close it (`LivePass.close`) when the job has ended."""
    kind = JOB_KINDS.get(job.kind)
    if kind is None or not kind.live:
        return LivePass(live=False)
    split = private_split(private_repo, job.payload)
    if split is None or "folder" not in split:
        return LivePass(live=True, handed=split)
    snapshot = str(split["snapshot"])
    private = Dataset(str(split["folder"]))
    wanted = public_topics(job.payload)  # each one handed is scored: a topic the job ranks not scores 0
    topics = tuple(name for name in private.topics if wanted is None or name in wanted)
    found = LivePass(live=True, private=str(private.folder), snapshot=snapshot, topics=topics)
    refused = "the job runs in the worker's own thread" if not isolate else unavailable()
    if not topics:
        found.handed = status(NONE_HELD, snapshot)
    elif refused is not None:
        log.warning("live scores: not measured, the job process cannot be sealed (%s)", refused)
        found.handed = status(CANNOT_SEAL, snapshot)
    else:
        found.folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))  # 0700
        try:
            write_job_folder(private, list(topics), found.folder / "repo")
        except Exception as exc:  # its message could quote an embargoed question's id
            found.close()
            log.warning("live scores: the job folder could not be written (%s)", type(exc).__name__)
            found.handed = status(FAILED, snapshot)
            return found
        found.handed = {"folder": str(found.folder / "repo"), "snapshot": snapshot}
        live_runs = live_runs or os.environ.get(LIVE_RUNS_ENV) or None
        if live_runs:
            found.kept_run = str(kept_run_path(live_runs, snapshot, job.system_id, job.id))
    return found
