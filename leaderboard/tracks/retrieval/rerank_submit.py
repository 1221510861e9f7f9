"""Reranking submissions: a reranked run is checked against each query's candidates and scored at once; a
CrossEncoder is vetted and queued for a worker (`rerank_job`).

A reranker is scored on the fixed hybrid top-100 of each query (`T-top_ranked`, the candidates of MTEB's
`FreshStackReranking`), so a reranked run may rank a query's own candidates only: a document outside them
refuses the whole upload, the line named. Everything else is the retrieval track's path (`run_submit`: the
cheap refusals, the dedupe on the file's hash and the dataset revision, the rate limit, the strict parser, the
scoring through `leaderboard.scoring`), stored under the reranking kinds, which only the Reranking tab shows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from leaderboard.sanitize import sanitize_submission
from leaderboard.submission import SubmitOutcome, audited
from leaderboard.tracks.retrieval import RERANK_JOB_KIND
from leaderboard.tracks.retrieval.rerank_job import RERANK_BATCH_SIZE
from leaderboard.tracks.retrieval.run_submit import AUTO, Submitter, hub_model_source, local_model_source
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import check_cross_encoder_dir

CANDIDATES = "top_ranked"


def reranker_content_hash(model: str, revision: str, dataset_revision: str) -> str:
    key = hashlib.sha256(f"{model}@{revision}\n{dataset_revision}".encode()).hexdigest()[:48]
    return f"reranker:{key}"


class RerankSubmitter(Submitter):
    """Accepts reranked runs and CrossEncoder models for one dataset into one store (see the module docstring);
    the scopes and `model_roots` are the retrieval submitter's."""

    def missing_candidates(self) -> list[str]:
        """The topics of this dataset without `T-top_ranked` candidates (the reranking track needs them all)."""
        return [t for t in self.dataset.topics if not layout.config_path(self.dataset.folder, t, CANDIDATES).exists()]

    def _candidates(self, topics: list[str]) -> Mapping[str, frozenset[str]]:
        """Each query's candidates over `topics` (query ids are unique across a dataset's topics)."""
        missing = sorted(set(topics) & set(self.missing_candidates()))
        if missing:
            raise FreshStackError(f"no {CANDIDATES} candidates for topic(s) {', '.join(missing)}: nothing to rerank")
        return {q: frozenset(ids) for t in topics for q, ids in self.dataset.candidates(t).items()}

    @audited("reranked_run")
    def submit_reranked_run(
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
        text = (name, description, link)
        return self._scored_file(path, "reranked_run", text, scope, identity, display_name, allowed=self._candidates)

    @audited("reranker")
    def submit_reranker(
        self,
        model: str,
        *,
        revision: str = "",
        name: str = "",
        description: str = "",
        link: str = "",
        identity: str = "",
    ) -> SubmitOutcome:
        """Check the CrossEncoder reference (a local folder is vetted here: safetensors only, no code, one output)
        and queue a `reranker` job; the worker downloads a Hub model, vets it the same way and scores it."""
        model, revision = (model or "").strip(), (revision or "").strip()
        try:
            if not model:
                raise FreshStackError("no model: give a Hub id (org/name) of a sentence-transformers CrossEncoder")
            if missing := self.missing_candidates():
                raise FreshStackError(f"no {CANDIDATES} candidates for topic(s) {', '.join(missing)}: cannot rerank")
            text = sanitize_submission(name or model, description, link)
            local = local_model_source(model, self.model_roots, check_cross_encoder_dir)
            reference, resolved, params = local or (*hub_model_source(model, revision), None)
        except FreshStackError as exc:
            return SubmitOutcome("refused", str(exc))
        content_hash = reranker_content_hash(reference, resolved, self.dataset.revision)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity)
        if refusal is not None:
            return refusal
        payload = {
            "model": reference,
            "revision": revision or None,
            **payload_dataset(self.dataset),
            "topics": list(self.dataset.topics),
            "batch_size": RERANK_BATCH_SIZE,
        }
        stored = {"size": params, "job": (RERANK_JOB_KIND, payload)}
        system, created = self._add(text, "reranker", content_hash, identity, **stored)
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        message = f"queued: system #{system.id} '{system.name}' (reranker) waits for an evaluation worker"
        return SubmitOutcome("queued", message, system.id, details={"revision": resolved})
