"""Live scores: a model's or reranker's numbers on the embargoed questions of the snapshot it was scored on.

A snapshot's newest questions sit in a private repo until their embargo ends (`freshstack_hf.pipeline.embargo`), so
no model can have been trained on them. A worker that can read that repo (`freshstack-hf worker --private-repo`,
`leaderboard.worker.private_split`) hands a sealed job process (`leaderboard.worker.sandbox`) the embargoed questions'
texts and the documents, nothing else (`leaderboard.worker.live_pass`); the job ranks them with the submitted model
and returns the ranking (`rank_embargoed`), and the worker scores it against the private judgments itself with the
library's `Dataset.score`, as every row is scored, keeping **aggregates only** (`live_aggregates`): per headline
measure the average over the topics that reach the floor of `pipeline.embargo.MIN_QUESTIONS` (10) embargoed
questions, each topic weighing the same (so no question weighs more than a tenth of a value), its 95% bootstrap
interval, each rounded to two decimals, and the number of questions. A topic under the floor is left out and named
with its count. Nothing per query (no id, text, value or ranking) is kept in the results, blobs, logs or archive.
What a visitor may see of a stored record, and when, is the board's release rule's (`leaderboard.live_release`).

What a row records under its results' parameters (`live`), read back by `Store.live_scores`:

* measured: {"status": "measured", "snapshot", "until", "questions", "topics": {topic: questions},
  "left_out": {topic: questions} (only when a topic was under the floor),
  "measures": {measure id: {"value", "ci_low", "ci_high"}}}; `until` is the snapshot's date plus the longest
  embargo among the scored topics (the private revision's manifest), the day every question scored is public;
* otherwise {"status": code, "message": what the board says}, never a zero: `NO_ACCESS` (no `--private-repo`, or
  the worker could not read it, or the Hub no longer reports it private), `TOO_FEW` (no topic with 10 embargoed
  questions: not shown; the count and each topic's kept as "questions" and "left_out"), `NONE_HELD` (nothing
  embargoed at this snapshot), `NO_CANDIDATES` (the private revision has no candidate lists for a reranker or a
  Nano-track model to start from: `build` writes them into every private revision, so only one written before it
  did), `CANNOT_SEAL` (the worker cannot seal the job process: it hands no embargoed input then), `FAILED`,
  `RATE_LIMITED` (the submitter's live scorings in the last 7 days were used up when it submitted:
  `quota_used_up`, decided by the board at the door and carried in the job's payload, so the worker does not read
  the private split for it). An uploaded run records nothing: its reason (`UPLOADED_RUN`) is what
  `Store.live_scores` says of it. A worker without `--private-repo` on a snapshot whose public revision embargoes
  nothing records no `live` key at all.

The one exception is the worker's own disk: a worker started with `--live-runs DIR` keeps each job's live ranking
of every topic as one TREC run (`keep_ranking`, `KEPT_RUN`), so that the operator can check a live score with
`freshstack-hf evaluate` on the private repo. Nothing else reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from freshstack_hf.defaults import SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import AVERAGE, HEADLINE
from freshstack_hf.pipeline.embargo import MIN_QUESTIONS
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.runs import Run, write_run

log = logging.getLogger(__name__)

DECIMALS = 2  # what a live score shows: coarse on purpose (the rule against probing)
MEASURED = "measured"
NO_ACCESS = ("no_access", "not measured: no access to the private split")
NONE_HELD = ("none_held", "not measured: no question is embargoed at this snapshot")
NO_CANDIDATES = ("no_candidates", "not measured: the private split has no candidate lists to rerank")
CANNOT_SEAL = (
    "cannot_seal",
    "not measured: this worker cannot seal the job process (Linux with Landlock ABI >= 4 and seccomp needed)",
)
UPLOADED_RUN = ("uploaded_run", "an uploaded run cannot be scored live: its queries are private")
FAILED = ("failed", "not measured: live scoring failed on the worker")
TOO_FEW = "too_few"
RATE_LIMITED = "rate_limited"
DECIDED = "live_decided"  # the job payload's key of a live status the board decided when it queued the job
KEPT_RUN = "kept_run"  # where the worker keeps a job's live ranking (`worker.private_split.kept_run_path`)
JOB_STATUSES = {code[0]: code for code in (NO_CANDIDATES, CANNOT_SEAL, FAILED)}  # what a job may say it could not do


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


def too_few(count: int, snapshot: str, left_out: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The record of a live pass where no topic reaches `MIN_QUESTIONS`: the count and each topic's, no number."""
    left_out = dict(left_out or {})
    if len(left_out) > 1:
        counts = ", ".join(f"{name} {n}" for name, n in left_out.items())
        message = f"too few questions (fewer than {MIN_QUESTIONS} in each topic: {counts}): not shown"
    else:
        message = f"too few questions ({count} < {MIN_QUESTIONS}): not shown"
    return {"status": TOO_FEW, "message": message, "snapshot": snapshot, "questions": count, "left_out": left_out}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(float(value), DECIMALS)


def embargo_until(private: Dataset, topics: list[str], snapshot: str) -> str:
    """The day every embargoed question of `topics` is public: the snapshot's date plus the longest embargo among
    them (each topic's `embargo.days` in the private revision's manifest), else the latest `until` it records; ""
    when it records neither, which the board's release rule reads as "held until the embargo ends", never as
    "ended" (`live_release.shown`)."""
    entries = read_manifest(Path(private.folder)).get("topics", {})
    embargoes = [(entries.get(name) or {}).get("embargo") or {} for name in topics]
    days = [int(e["days"]) for e in embargoes if isinstance(e.get("days"), int)]
    if days and snapshot:
        return (date.fromisoformat(snapshot) + timedelta(days=max(days))).isoformat()
    return max((str(e["until"]) for e in embargoes if e.get("until")), default="")


def live_aggregates(private: Dataset, runs: Mapping[str, Run], snapshot: str, *, resamples: int) -> dict[str, Any]:
    """The live record of `runs` (topic -> ranking of its embargoed questions) on the private revision `private`:
    the headline measures' averages over the topics with at least `MIN_QUESTIONS` embargoed questions and their
    intervals, rounded, with the counts; a topic under the floor is left out (`left_out`), and with none left
    `too_few`. The per-query scores are computed (a mean needs them) and dropped here."""
    counts = {name: len(private.qrels(name).query_ids) for name in runs}
    scored = {name: n for name, n in counts.items() if n >= MIN_QUESTIONS}
    left_out = {name: n for name, n in counts.items() if n < MIN_QUESTIONS}
    if not scored:
        return too_few(sum(counts.values()), snapshot, left_out)  # nothing scored: no number exists to leak
    scores = private.score(
        {name: runs[name] for name in scored}, by_topic=True, measures=HEADLINE, interval_measures=HEADLINE,
        resamples=resamples, seed=SEED,
    )  # fmt: skip
    intervals = scores.intervals.get(AVERAGE, {})
    measures = {}
    for measure in HEADLINE:
        interval = intervals.get(measure.id)
        measures[measure.id] = {
            "value": _rounded(scores.average[measure.id]),
            "ci_low": _rounded(interval.low if interval else None),
            "ci_high": _rounded(interval.high if interval else None),
        }
    record: dict[str, Any] = {
        "status": MEASURED,
        "snapshot": snapshot,
        "until": embargo_until(private, list(scored), snapshot),
        "questions": sum(scored.values()),
        "topics": scored,
    }
    if left_out:
        record["left_out"] = left_out
    return {**record, "measures": measures}


Rank = Callable[[Dataset, str], Run]  # a job's model on one topic of the folder it was handed: its ranking


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


def rank_embargoed(
    split: Mapping[str, Any] | None, topics: list[str], rank: Rank
) -> tuple[dict[str, Run] | None, dict[str, Any] | None]:
    """The job's side of a live pass: `split` is what the worker handed it (`worker.live_pass`: the job folder of
    the embargoed questions' texts and the documents, or a status), as `sandbox.seal_job` let it through; `rank`
    ranks one topic of that folder with the job's model. Returns (topic -> ranking, None), or (None, the status the
    job has to report: `NO_CANDIDATES`, `CANNOT_SEAL`, `FAILED`); (None, None) when it was handed nothing to rank.
    The job never scores: it holds no judgment to score with.

    A failure logs its type only: its message could quote an embargoed question's id."""
    if not split:
        return None, None
    if "folder" not in split:
        return None, dict(split) if split.get("status") in JOB_STATUSES else None
    snapshot = str(split.get("snapshot") or "")
    try:
        handed = Dataset(str(split["folder"]))
        return {name: rank(handed, name) for name in topics if name in handed.topics}, None
    except NoCandidates:
        return None, status(NO_CANDIDATES, snapshot)
    except Exception as exc:
        log.warning("ranking the embargoed questions failed (%s); recorded as not measured", type(exc).__name__)
        return None, status(FAILED, snapshot)


class NoCandidates(Exception):
    """Raised by a `Rank` that starts from candidate lists the job folder does not have."""


def require_candidates(handed: Dataset, name: str) -> None:
    """`NoCandidates` unless the folder a job was handed has candidate lists for topic `name` (a reranker's input, a
    Nano-track model's pool)."""
    try:
        handed.candidates(name)
    except FreshStackError as exc:
        raise NoCandidates(name) from exc
