"""Reranking submissions: a reranked run is checked against each query's candidates and scored at once
(`RerankedRunSubmitter`); a CrossEncoder is vetted and queued for a worker (`RerankerSubmitter`, `rerank_job`).

A reranker is scored on the fixed hybrid top-100 of each query (`T-top_ranked`, the candidates of MTEB's
`FreshStackReranking`), so a reranked run may rank a query's own candidates only: a document outside them
refuses the whole upload, the line named. A reranked run is a run of the reranking track: its checks are a run's,
in a run's order (`run_submit.RunSubmitter.checks`), its parser held to the candidates and its rows stored under
the reranking kinds, which only the Reranking tab shows. A CrossEncoder's checks are a model's
(`model_submit.ModelSubmitter.checks`): the cheap refusals (a local folder is vetted here: safetensors only, no code,
one output; a Hub id is pinned to its commit), the dedupe on the model, its revision and the dataset revision, the
rate limit, the live quota, then its job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from leaderboard.sanitize import SubmissionText, sanitize_submission
from leaderboard.store.records import SystemRecord
from leaderboard.submission.audited import audited
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.submission.submitter import BaseSubmitter
from leaderboard.submission.upload import Check, Upload
from leaderboard.tracks.reranking import RERANK_JOB_KIND
from leaderboard.tracks.reranking.rerank_job import RERANK_BATCH_SIZE
from leaderboard.tracks.retrieval.submissions.model_submit import (
    Accepted,
    accepted_folder_source,
    accepted_hub_source,
    hub_model_source,
    is_folder_reference,
    job_revision,
    local_model_source,
    propose_payload,
    refused_source,
)
from leaderboard.tracks.retrieval.submissions.run_submit import AUTO, RunSubmitter, RunUpload
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import check_cross_encoder_dir

CANDIDATES = "top_ranked"


def reranker_content_hash(model: str, revision: str, dataset_revision: str) -> str:
    key = hashlib.sha256(f"{model}@{revision}\n{dataset_revision}".encode()).hexdigest()[:48]
    return f"reranker:{key}"


def missing_candidates(dataset: Any) -> list[str]:
    """The topics of `dataset` without `T-top_ranked` candidates (the reranking track needs them all)."""
    return [t for t in dataset.topics if not layout.config_path(dataset.folder, t, CANDIDATES).exists()]


class RerankedRunSubmitter(RunSubmitter):
    """Accepts reranked runs for one dataset into one store: a run's checks, in a run's order, each query held to
    its own candidates (see the module docstring)."""

    kind = "reranked_run"

    @audited("reranked_run")
    def submit(  # type: ignore[override]  (no cutoff: a reranker is compared on fixed candidates)
        self,
        path: str | Path | None,
        *,
        name: str,
        scope: str = AUTO,
        description: str = "",
        link: str = "",
        identity: str = "",
        display_name: str | None = None,
    ) -> SubmitOutcome:
        """Validate strictly (each query ranks its own candidates only), score at once and store; every refusal
        stores nothing."""
        given = (name, description, link)
        upload = RunUpload(
            identity=identity, path=path, given=given, scope=scope or AUTO, cutoff="", display_name=display_name
        )
        return self.checked(upload)

    def candidates(self, topics: list[str]) -> Mapping[str, frozenset[str]]:
        """Each query's candidates over `topics` (query ids are unique across a dataset's topics)."""
        missing = sorted(set(topics) & set(missing_candidates(self.dataset)))
        if missing:
            raise FreshStackError(f"no {CANDIDATES} candidates for topic(s) {', '.join(missing)}: nothing to rerank")
        return {q: frozenset(ids) for t in topics for q, ids in self.dataset.candidates(t).items()}


@dataclass(kw_only=True)
class RerankerUpload(Upload):
    """A CrossEncoder reference as given, and what its checks learn of it in their order."""

    model: str
    revision: str
    given: tuple[str, str, str]  # name (default: the model), description, link as typed
    text: SubmissionText | None = None
    reference: str = ""
    resolved: str = ""
    params: int | None = None
    accepted: Accepted | None = None  # re-measuring: what the board stored when it accepted the model
    propose: bool = False  # the submitter asked the board to propose the results to the model's page


class RerankerSubmitter(BaseSubmitter[RerankerUpload]):
    """Accepts CrossEncoder models for one dataset into one store (see the module docstring).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    def __init__(self, *args: Any, model_roots: tuple[Path, ...] = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.model_roots = tuple(Path(p).expanduser().resolve() for p in model_roots)

    @audited("reranker")
    def submit(
        self,
        model: str,
        *,
        revision: str = "",
        name: str = "",
        description: str = "",
        link: str = "",
        identity: str = "",
        accepted: Accepted | None = None,
        propose: bool = False,
    ) -> SubmitOutcome:
        """Check the CrossEncoder reference and queue a `reranker` job; the worker downloads a Hub model, vets it
        the same way and scores it. `accepted`, `propose`: as `ModelSubmitter.submit`'s (re-measuring a stored
        reranker; proposing its results to its Hub page)."""
        model, revision = (model or "").strip(), (revision or "").strip()
        given = (name or model, description, link)
        upload = RerankerUpload(identity=identity, model=model, revision=revision, given=given, accepted=accepted)
        upload.propose = propose
        return self.checked(upload)

    def checks(self) -> tuple[Check[RerankerUpload], ...]:
        return (self.check_reference, self.dedupe, self.rate_limit, self.live_quota, self.queue)

    def check_reference(self, upload: RerankerUpload) -> SubmitOutcome | None:
        """The cheap refusals: no model, a dataset without every topic's candidates, unusable text, a model from
        nowhere this board accepts (a local folder vetted as a CrossEncoder); what passes is keyed by its
        reference and revision on the dataset revision."""
        try:
            if not upload.model:
                raise FreshStackError("no model: give a Hub id (org/name) of a sentence-transformers CrossEncoder")
            if missing := missing_candidates(self.dataset):
                raise FreshStackError(f"no {CANDIDATES} candidates for topic(s) {', '.join(missing)}: cannot rerank")
            upload.text = sanitize_submission(*upload.given)
            upload.reference, upload.resolved, upload.params = self._model_source(upload)
        except FreshStackError as exc:
            return refused_source(exc)
        upload.content_hash = reranker_content_hash(upload.reference, upload.resolved, self.dataset.revision)
        return None

    def _model_source(self, upload: RerankerUpload) -> tuple[str, str, int | None]:
        """(model reference for the worker, revision for the dedupe key, parameter count if known): the folder or
        commit the board accepted when re-measuring, else a folder under the model roots, else a Hub id pinned to
        its commit (`model_submit.pinned_commit`)."""
        model, revision, accepted = upload.model, upload.revision, upload.accepted
        if accepted is not None:
            key, on = accepted.content_hash, accepted.dataset_revision

            def same_key(found: str) -> bool:
                return reranker_content_hash(model, found, on) == key

            if is_folder_reference(model):
                return accepted_folder_source(model, same_key, check_cross_encoder_dir)
        local = local_model_source(model, self.model_roots, check_cross_encoder_dir)
        if local is not None:
            return local
        if accepted is not None:
            return (*accepted_hub_source(model, revision, same_key), None)
        return (*hub_model_source(model, revision), None)

    def queue(self, upload: RerankerUpload) -> SubmitOutcome:
        """Stored with its `reranker` job, in one transaction (carrying its live status when the live quota withheld
        its live score)."""
        assert upload.text is not None
        payload = {
            "model": upload.reference,
            "revision": job_revision(upload.resolved),
            **payload_dataset(self.dataset),
            "topics": list(self.dataset.topics),
            "batch_size": RERANK_BATCH_SIZE,
            **upload.live_payload(),
            **propose_payload(upload.propose),
        }
        stored = {"size": upload.params, "job": (RERANK_JOB_KIND, payload)}

        def told(system: SystemRecord) -> SubmitOutcome:
            message = f"queued: system #{system.id} '{system.name}' (reranker) waits for an evaluation worker"
            outcome = SubmitOutcome(SubmitStatus.QUEUED, message, system.id, details={"revision": upload.resolved})
            return self.told_live(upload, outcome)

        return self.add(upload, upload.text, "reranker", told, **stored)
