"""Reranking submissions: a reranked run is checked against each query's candidates and scored at once
(`RerankedRunSubmitter`); a CrossEncoder is vetted and queued for a worker (`RerankerSubmitter`, `rerank_job`).

A reranker is scored on the fixed hybrid top-100 of each query (`T-top_ranked`, the candidates of MTEB's
`FreshStackReranking`), so a reranked run may rank a query's own candidates only: a document outside them
refuses the whole upload, the line named. A reranked run is a run of the reranking track: its checks are a run's,
in a run's order (`run_submit.RunSubmitter.checks`), its parser held to the candidates and its rows stored under
the reranking kinds, which only the Reranking tab shows. A CrossEncoder's checks are a model's, in a model's order
(`model_submitter.BaseModelSubmitter`): the cheap refusals (a local folder is vetted here: safetensors only, no
code, one output; a Hub id is pinned to its commit), the dedupe on the model, its revision and the dataset revision,
the rate limit, the live quota, then its job; `RerankerSubmitter` declares only what a CrossEncoder changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from leaderboard.sanitize import sanitize_submission
from leaderboard.store.records import SystemRecord
from leaderboard.submission.audited import audited
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.tracks.reranking import RERANK_JOB_KIND
from leaderboard.tracks.reranking.rerank_job import RERANK_BATCH_SIZE
from leaderboard.tracks.retrieval.submissions.model_source import Accepted
from leaderboard.tracks.retrieval.submissions.model_submitter import BaseModelSubmitter, ModelReference
from leaderboard.tracks.retrieval.submissions.run_submit import AUTO, RunSubmitter, RunUpload
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
class RerankerUpload(ModelReference):
    """A CrossEncoder reference as given, and what its checks learn of it in their order."""


class RerankerSubmitter(BaseModelSubmitter[RerankerUpload]):
    """Accepts CrossEncoder models for one dataset into one store (see the module docstring).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    job_kind, audit_kind = RERANK_JOB_KIND, "reranker"
    no_model = "no model: give a Hub id (org/name) of a sentence-transformers CrossEncoder"

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

    def vet(self, upload: RerankerUpload) -> None:
        """A dataset without every topic's candidates, unusable text."""
        if missing := missing_candidates(self.dataset):
            raise FreshStackError(f"no {CANDIDATES} candidates for topic(s) {', '.join(missing)}: cannot rerank")
        upload.text = sanitize_submission(*upload.given)

    def vet_folder(self, path: Path) -> int:
        """A local folder vetted as a CrossEncoder (safetensors only, no code, one output)."""
        return check_cross_encoder_dir(path)

    def dedupe_key(self, upload: RerankerUpload, model: str, revision: str, dataset_revision: str) -> str:
        return reranker_content_hash(model, revision, dataset_revision)

    def job_fields(self, upload: RerankerUpload) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {"batch_size": RERANK_BATCH_SIZE}

    def queued(self, upload: RerankerUpload, system: SystemRecord) -> SubmitOutcome:
        message = f"queued: system #{system.id} '{system.name}' (reranker) waits for an evaluation worker"
        outcome = SubmitOutcome(SubmitStatus.QUEUED, message, system.id, details={"revision": upload.resolved})
        return self.told_live(upload, outcome)
