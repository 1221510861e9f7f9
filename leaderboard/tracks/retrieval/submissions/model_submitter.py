"""`BaseModelSubmitter`: a model submission's checks in their one order, where the model comes from
(`model_source`) and its job queued with its row, shared by the retrieval track's models
(`model_submit.ModelSubmitter`) and the reranking track's CrossEncoders (`rerank_submit.RerankerSubmitter`); each
kind declares only what differs (its refusals, its folder vetting, its dedupe key, its job).

The order: the cheap refusals (no model, the kind's own, where the model comes from), the dedupe on the model, its
revision and the dataset revision, the rate limit, the live quota (a submission past it is queued all the same, its
live score withheld), and the queueing of its job with the row, in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from freshstack_hf.errors import FreshStackError
from leaderboard.model_pages.verified import PROPOSE
from leaderboard.sanitize import SubmissionText
from leaderboard.store.records import SystemRecord
from leaderboard.submission.outcome import SubmitOutcome
from leaderboard.submission.submitter import BaseSubmitter
from leaderboard.submission.upload import Check, Upload
from leaderboard.tracks.retrieval.submissions.model_source import (
    Accepted,
    accepted_folder_source,
    accepted_hub_source,
    hub_model_source,
    is_folder_reference,
    job_revision,
    local_model_source,
    refused_source,
)
from leaderboard.worker.job_contract import payload_dataset


@dataclass(kw_only=True)
class ModelReference(Upload):
    """A model reference as given (a Hub id or a folder, at a revision), and what a model submitter's checks learn
    of it in their order; each kind adds its own fields (`ModelUpload`, `rerank_submit.RerankerUpload`)."""

    model: str
    revision: str
    given: tuple[str, str, str]  # name (default: the model), description, link as typed
    text: SubmissionText | None = None
    reference: str = ""  # what the worker loads: the Hub id, or the local folder
    resolved: str = ""  # the revision the dedupe key names
    params: int | None = None  # parameter count, where known at the door
    accepted: Accepted | None = None  # re-measuring: what the board stored when it accepted the model
    propose: bool = False  # the submitter asked the board to propose the results to the model's page


def propose_payload(propose: bool) -> dict[str, Any]:
    """What a job's payload says of "propose these results to my model's page" (`model_pages.verified.PROPOSE`,
    read by the board's proposer once the row is scored): the key only when asked."""
    return {PROPOSE: True} if propose else {}


M = TypeVar("M", bound=ModelReference)


class BaseModelSubmitter(BaseSubmitter[M]):
    """What every kind of model submission shares: the one order of its checks, where a model comes from (a folder
    under `model_roots`, vetted by the kind; a Hub id pinned to its commit; re-measuring, what the board accepted)
    and its job queued with its row. A kind declares only what differs: its refusals and fields (`vet`), its
    folder vetting (`vet_folder`), its dedupe key (`dedupe_key`), its job (`job_kind`, `job_fields`) and what its
    queued outcome says (`queued`).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    job_kind: str  # the worker's job kind that measures this kind of model
    audit_kind: str  # the kind the store and the audit log name its rows by
    packaged: str | None = None  # a model the worker finds by itself, keyed by the revision as given
    no_model = "no model: give a Hub id (org/name)"  # the refusal of an empty reference

    def __init__(self, *args: Any, model_roots: tuple[Path, ...] = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.model_roots = tuple(Path(p).expanduser().resolve() for p in model_roots)

    def checks(self) -> tuple[Check[M], ...]:
        return (self.check_reference, self.dedupe, self.rate_limit, self.live_quota, self.queue)

    def vet(self, upload: M) -> None:
        """The kind's own refusals of a named model (raised as `FreshStackError`), its text included."""
        raise NotImplementedError

    def vet_folder(self, path: Path) -> int:
        """The parameter count of a local model folder this kind accepts; refused (`FreshStackError`) otherwise."""
        raise NotImplementedError

    def dedupe_key(self, upload: M, model: str, revision: str, dataset_revision: str) -> str:
        """The dedupe key of `model` (as the worker loads it) at `revision` on `dataset_revision`."""
        raise NotImplementedError

    def job_fields(self, upload: M) -> tuple[dict[str, Any], dict[str, Any]]:
        """The kind's own fields of its job's payload: those after the model's revision, and those after its topics
        (the payload's order is the one the store has always held)."""
        return {}, {}

    def stored_fields(self, upload: M) -> dict[str, Any]:
        """What the kind stores with its row besides its size and job."""
        return {}

    def queued(self, upload: M, system: SystemRecord) -> SubmitOutcome:
        """What the submitter is told once the row and its job are stored."""
        raise NotImplementedError

    def check_reference(self, upload: M) -> SubmitOutcome | None:
        """The cheap refusals: no model, the kind's own (`vet`), a model from nowhere this board accepts; what
        passes is keyed by the kind's `dedupe_key` on the dataset revision."""
        try:
            if not upload.model:
                raise FreshStackError(self.no_model)
            self.vet(upload)
            upload.reference, upload.resolved, upload.params = self._model_source(upload)
        except FreshStackError as exc:
            return refused_source(exc)
        upload.content_hash = self.dedupe_key(upload, upload.reference, upload.resolved, self.dataset.revision)
        return None

    def _model_source(self, upload: M) -> tuple[str, str, int | None]:
        """(model reference for the worker, revision for the dedupe key, parameter count if known): re-measuring,
        the folder or commit the board accepted; else a folder under the model roots, the packaged model, or a Hub
        id pinned to its commit."""
        model, revision, accepted = upload.model, upload.revision, upload.accepted
        if accepted is not None:
            key, on = accepted.content_hash, accepted.dataset_revision

            def same_key(found: str) -> bool:
                return self.dedupe_key(upload, model, found, on) == key

            if is_folder_reference(model):
                return accepted_folder_source(model, same_key, self.vet_folder)
        local = local_model_source(model, self.model_roots, self.vet_folder)
        if local is not None:
            return local
        if model == self.packaged:
            return model, revision or "packaged", None
        if accepted is not None:
            return (*accepted_hub_source(model, revision, same_key), None)
        return (*hub_model_source(model, revision), None)

    def queue(self, upload: M) -> SubmitOutcome:
        """Stored with its job, in one transaction (carrying its live status when the live quota withheld its live
        score)."""
        assert upload.text is not None
        after_revision, after_topics = self.job_fields(upload)
        payload = {
            "model": upload.reference,
            "revision": job_revision(upload.resolved),
            **after_revision,
            **payload_dataset(self.dataset),
            "topics": list(self.dataset.topics),
            **after_topics,
            **upload.live_payload(),
            **propose_payload(upload.propose),
        }
        stored = {"size": upload.params, **self.stored_fields(upload), "job": (self.job_kind, payload)}
        return self.add(upload, upload.text, self.audit_kind, lambda system: self.queued(upload, system), **stored)
