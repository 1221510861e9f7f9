"""Live scores: a model's or reranker's numbers on the embargoed questions of the snapshot it was scored on.

A snapshot's newest questions sit in a private repo until their embargo ends (`freshstack_hf.pipeline.embargo`), so
no model can have been trained on them. A worker that can read that repo (`freshstack-hf worker --private-repo`,
`leaderboard.worker.private_split`) runs the submitted model on them too, scores the ranking with the library's
`Dataset.score` as every row is scored, and keeps **aggregates only**: per headline measure the all-topics average
`freshstack-hf evaluate` prints for the private revision (with one topic: the mean over its embargoed questions)
and its 95% bootstrap interval, each rounded to two decimals, and the number of questions. Nothing per query (no
id, text, value or ranking) is kept in the results, blobs, logs or archive: what probing with crafted models could
learn from a score is what two decimals of a mean over at least `pipeline.embargo.MIN_QUESTIONS` (10) questions tell.

What a row records under its results' parameters (`live`), read back by `Store.live_scores`:

* measured: {"status": "measured", "snapshot", "questions", "measures": {measure id: {"value", "ci_low", "ci_high"}}};
* otherwise {"status": code, "message": what the board says}, never a zero: `NO_ACCESS` (no `--private-repo`, or
  the worker could not read it), `TOO_FEW` (fewer than 10 embargoed questions: not shown, the count kept),
  `NONE_HELD` (nothing embargoed at this snapshot), `NO_CANDIDATES` (the private revision has no candidate lists
  for a reranker or a Nano-track model to start from: `build` writes them into every private revision, so only
  one written before it did), `FAILED`, `RATE_LIMITED` (the submitter's live scorings in the last 7 days were used
  up when it submitted: `quota_used_up`, decided by the board at the door and carried in the job's payload, so the
  worker does not read the private split for it). An uploaded run records nothing: its reason (`UPLOADED_RUN`) is
  what `Store.live_scores` says of it.

The one exception is the worker's own disk: a worker started with `--live-runs DIR` names, in the split it hands a
job (`KEPT_RUN`), a file where the job keeps its live ranking of every topic as one TREC run (`keep_ranking`), so
that the operator can check a live score with `freshstack-hf evaluate` on the private repo. Nothing else reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from freshstack_hf.defaults import SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import AVERAGE, HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, write_run

log = logging.getLogger(__name__)

DECIMALS = 2  # what a live score shows: coarse on purpose (the rule against probing)
MEASURED = "measured"
NO_ACCESS = ("no_access", "not measured: no access to the private split")
NONE_HELD = ("none_held", "not measured: no question is embargoed at this snapshot")
NO_CANDIDATES = ("no_candidates", "not measured: the private split has no candidate lists to rerank")
UPLOADED_RUN = ("uploaded_run", "an uploaded run cannot be scored live: its queries are private")
FAILED = ("failed", "not measured: live scoring failed on the worker")
TOO_FEW = "too_few"
RATE_LIMITED = "rate_limited"
DECIDED = "live_decided"  # the job payload's key of a live status the board decided when it queued the job
KEPT_RUN = "kept_run"  # the split's key naming the file a job keeps its live ranking in (`worker.private_split`)


def status(code: tuple[str, str], snapshot: str = "") -> dict[str, Any]:
    """A live record that says why there is no number (`NO_ACCESS`, ...): never a zero a column could show."""
    found = {"status": code[0], "message": code[1]}
    return {**found, "snapshot": snapshot} if snapshot else found


def quota_used_up(per_week: int) -> tuple[str, str]:
    """The live status (for `status`) of a submission past its submitter's quota of `per_week` live scorings in 7
    days (`leaderboard.defaults.LIVE_SCORES_PER_WEEK`; 0: the board scores no submission live)."""
    if per_week <= 0:
        return RATE_LIMITED, "not measured: this board scores no submission live"
    return RATE_LIMITED, f"not measured: this submitter's live scorings are used up ({per_week} per 7 days)"


def too_few(count: int, snapshot: str) -> dict[str, Any]:
    from freshstack_hf.pipeline.embargo import MIN_QUESTIONS  # the embargo's own floor (its plan warns below it)

    message = f"too few questions ({count} < {MIN_QUESTIONS}): not shown"
    return {"status": TOO_FEW, "message": message, "snapshot": snapshot, "questions": count}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DECIMALS)


def live_aggregates(private: Dataset, runs: Mapping[str, Run], snapshot: str, *, resamples: int) -> dict[str, Any]:
    """The live record of `runs` (topic -> ranking of the embargoed questions) on the private revision `private`:
    the headline measures' all-topics averages and intervals, rounded, and the question count; `too_few` under
    `pipeline.embargo.MIN_QUESTIONS` (10). The per-query scores are computed (a mean needs them) and dropped here."""
    from freshstack_hf.pipeline.embargo import MIN_QUESTIONS

    count = sum(len(private.qrels(name).query_ids) for name in runs)
    if count < MIN_QUESTIONS:
        return too_few(count, snapshot)  # nothing scored: no number exists to leak
    scores = private.score(
        dict(runs), by_topic=True, measures=HEADLINE, interval_measures=HEADLINE, resamples=resamples, seed=SEED
    )
    intervals = scores.intervals.get(AVERAGE, {})
    measures = {}
    for measure in HEADLINE:
        interval = intervals.get(measure.id)
        measures[measure.id] = {
            "value": _rounded(scores.average[measure.id]),
            "ci_low": _rounded(interval.low if interval else None),
            "ci_high": _rounded(interval.high if interval else None),
        }
    return {"status": MEASURED, "snapshot": snapshot, "questions": count, "measures": measures}


Rank = Callable[[Dataset, str], Run]  # a job's model on one topic of the private revision: its ranking


def run_tag(model: str) -> str:
    """The TREC run tag of a kept live ranking: the model's name (a Hub id, or a path), as one word."""
    return "_".join(str(model).split()) or "model"


def keep_ranking(path: str, runs: Mapping[str, Run], tag: str) -> None:
    """Every topic's live ranking written as ONE TREC run at `path` (atomically), the file `freshstack-hf evaluate
    PRIVATE_REPO --revision SNAPSHOT --run FILE` reads: a dataset's query ids are unique across its topics, so the
    evaluator finds each query's topic by its id, as for any run of the whole dataset."""
    merged: dict[str, Mapping[str, float]] = {}
    for run in runs.values():
        merged.update(run)
    folder = Path(path).parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)  # it names embargoed questions: as private as the token, whatever the umask
    write_run(merged, path, tag=tag, fmt="trec")
    Path(path).chmod(0o600)


def score_live(
    split: Mapping[str, Any] | None, topics: list[str], rank: Rank, *, resamples: int, tag: str
) -> dict[str, Any]:
    """The live record of a job: `split` is what the worker handed it (`worker.private_split`: the private
    revision's folder, or a status), `rank` ranks one topic's embargoed questions with the job's model. A topic
    with nothing embargoed has no private part and is left out. When the split names a file (`KEPT_RUN`, the
    worker's `--live-runs`), the ranking is kept there under the run tag `tag` (`run_tag` of the model).

    A failure records `FAILED` and logs its type only: its message could quote an embargoed question's id."""
    if not split:
        return status(NO_ACCESS)  # a job not run by a worker that read the split
    if "folder" not in split:
        return dict(split)
    snapshot = str(split.get("snapshot") or "")
    try:
        private = Dataset(str(split["folder"]))
        names = [name for name in topics if name in private.topics]
        if not names:
            return status(NONE_HELD, snapshot)
        runs = {name: rank(private, name) for name in names}
        if split.get(KEPT_RUN):
            keep_ranking(str(split[KEPT_RUN]), runs, tag)
        return live_aggregates(private, runs, snapshot, resamples=resamples)
    except NoCandidates:
        return status(NO_CANDIDATES, snapshot)
    except Exception as exc:
        log.warning("live scoring failed (%s); recorded as not measured", type(exc).__name__)
        return status(FAILED, snapshot)


class NoCandidates(Exception):
    """Raised by a `Rank` that starts from candidate lists the private revision does not have."""


def require_candidates(private: Dataset, name: str) -> None:
    """`NoCandidates` unless the private revision has candidate lists for topic `name` (a reranker's input, a
    Nano-track model's pool)."""
    try:
        private.candidates(name)
    except FreshStackError as exc:
        raise NoCandidates(name) from exc
