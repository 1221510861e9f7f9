"""Every stored system measured on a dataset revision the board has not seen: what keeps a board comparable across
snapshots, so that a model submitted on the 2024-10-31 snapshot has a row on the 2025-10-31 one too.

When the board serves a revision (`freshstack-hf leaderboard --revision`, or `freshstack-hf remeasure` after a
`refresh` published one: both through `worker.jobs.measure_on`), each stored system of another revision is measured
again on it, by the same workers:

* models and rerankers are submitted again on the revision, with the same reference, model revision, track, name,
  description, submitter, cutoff and wish to have the results proposed to the model's page (`model_pages`)
  (`model_submit.ModelSubmitter`, `rerank_submit.RerankerSubmitter`): a worker
  downloads and scores each, as any submission. The board's act counts against no submitter's hourly rate limit,
  but a live scoring is one of its owner's (`live_per_week`, the board's `--live-per-week`, counted under
  `live:<identity>` as a submission is): past that quota the row is queued all the same, scored on the public
  questions, its job carrying the rate-limited live status, so that re-measuring is no free probe of each new
  embargo. The reference is the one the board stored when it accepted the model (`model_source.Accepted`): a
  folder under the board's model roots is measured again, whoever re-measures (the board's start, `remeasure`,
  `refresh --store`: none of them needs the roots), while its weights' hash still gives the stored row's key; a
  Hub model at the commit the board pinned it to (`model_source.pinned_commit`), never at what its branch names now.
  A model that cannot be measured again (its folder gone or changed, its commit gone from the Hub) keeps its
  earlier rows and gets a failed row on the revision saying why, which the Over time view reads
  (`over_time.OverTime.stopped`); one the Hub did not answer for is left for the next time the revision is learnt;
* runs and reranked runs cannot be re-run: the ranking the store archived behind the row is scored as it is on the
  revision (`rescore` jobs, `tracks.retrieval.jobs.rescore_job`: documents that did not change keep their ids and their
  judgments), each row named "(re-scored)" and recording the row it came from;
* the baselines are every track's own rows for the revision (`worker.jobs.measure_on` queues them with these).

Every row's key names the revision (a model's is its reference and the revision's; a re-scored run's is its
ranking's blob and the revision's), so learning a revision twice queues nothing the second time. `lineage` is the one
key of a system across revisions, which the Over time view groups rows by.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import LIVE_SCORES_PER_WEEK
from leaderboard.model_pages.verified import PROPOSE
from leaderboard.store.audit import board_entry
from leaderboard.store.ranking_blob import MEDIA as RANKING
from leaderboard.store.records import SystemRecord, SystemState
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.tracks import reranking
from leaderboard.tracks.reranking.rerank_submit import RerankerSubmitter
from leaderboard.tracks.retrieval import RESCORE_JOB_KIND, UPLOADED_KINDS
from leaderboard.tracks.retrieval.submissions.model_source import RETRY_LATER, Accepted
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.worker.job_contract import payload_dataset

MEASURED_AGAIN = ("model", "reranker")  # submitted again: a worker runs the model on the new corpus
# Files cannot be re-run: their archived ranking is scored as it is.
RESCORED = (*UPLOADED_KINDS, *reranking.UPLOADED_KINDS)
RESCORED_MARK = " (re-scored)"


@dataclass
class Remeasured:
    """What learning one revision did, per row kind: systems queued again, runs queued for re-scoring, rows that
    were there already, and the systems that could not be measured again (with why)."""

    revision: str
    queued: list[str] = field(default_factory=list)
    rescoring: list[str] = field(default_factory=list)
    present: int = 0
    skipped: list[str] = field(default_factory=list)
    baselines: int = 0

    def summary(self) -> str:
        parts = [
            f"{len(self.queued)} model(s) queued",
            f"{len(self.rescoring)} run(s) queued for re-scoring",
            f"{self.present} already measured",
        ]
        if self.baselines:
            parts.append(f"{self.baselines} baseline row(s) stored or queued")
        if self.skipped:
            parts.append(f"{len(self.skipped)} not measurable ({'; '.join(self.skipped[:3])})")
        return f"revision {self.revision}: " + ", ".join(parts)


def lineage(system: SystemRecord, payload: Mapping[str, Any] | None) -> str:
    """One key for a system's rows on every revision: a model's reference (track and model revision included), a
    baseline's name, a run's first row (a re-scored row names it), else the row itself."""
    payload = payload or {}
    if payload.get("source"):
        return str(payload["source"])
    if system.kind in MEASURED_AGAIN and payload.get("model"):
        track = payload.get("track") or ""
        return f"{system.kind}:{track}:{payload['model']}@{payload.get('revision') or ''}"
    if system.kind == "baseline":
        return f"baseline:{system.name}"
    return system.content_hash


def remeasure(store: Any, dataset: Dataset, *, live_per_week: int = LIVE_SCORES_PER_WEEK) -> Remeasured:
    """Queue every stored system of another revision on `dataset`'s revision (see the module docstring), each
    model's live scoring counted against its owner's `live_per_week`; the baselines are every track's own
    (`worker.jobs.measure_on` adds them)."""
    done = Remeasured(dataset.requested_revision or dataset.revision)
    payloads = store.queue.first_payloads()
    rows = _rows(store)
    here = {lineage(r.system, payloads.get(r.system.id)) for r in rows if r.dataset_revision == dataset.revision}
    board: dict[str, Any] = {"rate_limit": None, "live_per_week": live_per_week}  # no hourly limit; the live quota
    submitters = {
        "model": ModelSubmitter(store, dataset, **board),
        "reranker": RerankerSubmitter(store, dataset, **board),
    }
    counted: set[str] = set()
    for row in rows:
        system, payload = row.system, payloads.get(row.system.id) or {}
        if row.dataset_revision in (None, dataset.revision) or system.status != SystemState.SCORED:
            continue
        key = lineage(system, payload)
        if key in here:
            if key not in counted:  # a system with rows on several other revisions is counted once
                done.present += 1
                counted.add(key)
            continue
        here.add(key)
        if system.kind in MEASURED_AGAIN:
            outcome = _submit_again(submitters[system.kind], system, payload, row.dataset_revision)
            if outcome.status == SubmitStatus.DUPLICATE:  # queued on this revision before, not scored yet
                done.present += 1
                counted.add(key)
            elif outcome.details.get(RETRY_LATER):  # the Hub did not answer: no verdict stored, asked again next time
                done.skipped.append(f"{system.name}: {outcome.message}; tried again when this revision is learnt again")
            elif outcome.status == SubmitStatus.REFUSED and outcome.system_id is None:  # not a moderator's deletion
                done.skipped.append(f"{system.name}: {_unmeasurable(store, dataset, system, payload, key, outcome)}")
            else:
                found = done.queued if outcome.status == SubmitStatus.QUEUED else done.skipped
                found.append(f"{system.name}: {outcome.message}")
        elif system.kind in RESCORED and not _queue_rescore(store, dataset, system, key, done):
            counted.add(key)
    return done


def _rows(store: Any) -> list[Any]:
    """Every listed system of the kinds measured again, with the revision its headline score was computed on."""
    return store.leaderboard_rows(kinds=(*MEASURED_AGAIN, *RESCORED, "baseline"), measures=(HEADLINE[0].id,))


def _submit_again(
    submitter: Any, system: SystemRecord, payload: Mapping[str, Any], scored_on: str | None
) -> SubmitOutcome:
    """The model or reranker of `system` submitted on the submitter's revision, as its submitter gave it, from the
    reference the board stored when it accepted it (`scored_on`: the revision of `system`'s scores, which its key
    names where its job's payload does not)."""
    text = {"name": system.name, "description": system.description, "link": system.link or ""}
    text["identity"], text["board_act"] = system.identity, "remeasure"  # logged as the board's act, owner named
    text["accepted"] = Accepted(system.content_hash, str(payload.get("dataset_revision") or scored_on or ""))
    text["propose"] = bool(payload.get(PROPOSE))  # its submitter's wish holds for every snapshot it is measured on
    reference, revision = str(payload.get("model") or ""), str(payload.get("revision") or "")
    if system.kind == reranking.RERANK_JOB_KIND:
        return submitter.submit(reference, revision=revision, **text)
    track = str(payload.get("track") or "full")
    return submitter.submit(reference, revision=revision, track=track, cutoff=system.cutoff or "", **text)


def _unmeasurable(
    store: Any, dataset: Dataset, system: SystemRecord, payload: Mapping[str, Any], key: str, outcome: SubmitOutcome
) -> str:
    """Why `system`'s model cannot be measured on the revision (its folder gone or changed, a track the revision
    lacks), stored once as a failed row of its lineage on the revision (its job failed with the reason, never run),
    where the Over time view reads why the model stops; the reason, as stored the first time."""
    digest = hashlib.sha256(f"{key}\n{dataset.revision}".encode()).hexdigest()[:48]
    job = {**payload, **payload_dataset(dataset), "topics": list(dataset.topics)}
    found, _ = store.add_system(
        name=system.name,
        kind=system.kind,
        content_hash=f"{system.kind}:unmeasured:{digest}",
        description=system.description,
        link=system.link,
        identity=system.identity,
        cutoff=system.cutoff,
        track=system.track,
        job=(system.kind, job),
        failed=outcome.message,
        audit=board_entry(
            "remeasure",
            "not measurable",
            f"'{system.name}' (#{system.id}) not measured on {dataset.revision}: {outcome.message}",
            owner=system.identity,
        ),
    )
    return found.error or outcome.message


def _queue_rescore(store: Any, dataset: Dataset, system: SystemRecord, key: str, done: Remeasured) -> bool:
    """A row for `system`'s archived ranking on the revision, queued with a `rescore` job; False when that row was
    queued before (and counted as present)."""
    ranking = store.blobs.refs_of(system.id).get(RANKING)
    if ranking is None:
        done.skipped.append(f"{system.name}: the store keeps no ranking of it")
        return True
    digest = hashlib.sha256(f"{ranking}\n{dataset.revision}".encode()).hexdigest()[:48]
    payload = {"inputs_from": system.id, "source": key, "ranking_sha256": ranking, **payload_dataset(dataset)}
    name = system.name if system.name.endswith(RESCORED_MARK) else system.name + RESCORED_MARK
    _, created = store.add_system(
        name=name,
        kind=system.kind,
        content_hash=f"{RESCORE_JOB_KIND}:{system.kind}:{digest}",
        description=system.description,
        link=system.link,
        identity=system.identity,
        cutoff=system.cutoff,
        job=(RESCORE_JOB_KIND, payload),
        audit=board_entry(
            "rescore",
            "queued",
            f"'{system.name}' (#{system.id}) re-scored on {dataset.revision}",
            owner=system.identity,
        ),
    )
    if created:
        done.rescoring.append(system.name)
    else:  # queued on this revision before, not scored yet
        done.present += 1
    return created
