"""Models, the retrieval track's other submission: a sentence-transformers model checked at the door and queued for
a worker (`ModelSubmitter`; its `model` job is `model_job`'s), on the full track (whole corpora) or the nano track
(each query's candidate pool). Where a model comes from is `model_source`'s; the order of its checks and its
queueing are `model_submitter.BaseModelSubmitter`'s, which the reranking track's CrossEncoders share.

`ModelSubmitter` declares what a model adds: its refusals (the track, the text fields, the cutoff), its folder
vetting (`worker.vetting.check_model_dir`), its key (its track, reference, revision and the dataset revision) and its
row's cutoff and track (a local folder's card gives the cutoff when none was typed).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL
from leaderboard.sanitize import sanitize_submission
from leaderboard.store.records import SystemRecord
from leaderboard.submission.audited import audited
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.tracks.retrieval import MODEL_JOB_KIND
from leaderboard.tracks.retrieval.submissions.cutoff import card_cutoff, submitted_cutoff
from leaderboard.tracks.retrieval.submissions.model_source import Accepted
from leaderboard.tracks.retrieval.submissions.model_submitter import BaseModelSubmitter, ModelReference
from leaderboard.worker.vetting import check_model_dir

TRACKS = ("full", "nano")  # whole corpora, or each query's candidate pool (`T-top_ranked`)


def model_content_hash(track: str, model: str, revision: str, dataset_revision: str) -> str:
    key = hashlib.sha256(f"{model}@{revision}\n{dataset_revision}".encode()).hexdigest()[:48]
    return f"model:{track}:{key}"


@dataclass(kw_only=True)
class ModelUpload(ModelReference):
    """A sentence-transformers model as given, with its track and cutoff."""

    track: str
    cutoff: str
    day: str | None = None


class ModelSubmitter(BaseModelSubmitter[ModelUpload]):
    """Accepts sentence-transformers models for one dataset into one store (see the module docstring).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    job_kind, audit_kind, packaged = MODEL_JOB_KIND, "model", DEFAULT_DENSE_MODEL

    @audited("model")
    def submit(
        self,
        model: str,
        *,
        revision: str = "",
        track: str = "full",
        name: str = "",
        description: str = "",
        link: str = "",
        identity: str = "",
        cutoff: str = "",
        accepted: Accepted | None = None,
        propose: bool = False,
    ) -> SubmitOutcome:
        """Check the model reference and queue a `model` job; the worker downloads, checks and scores it.

        `cutoff` (optional, YYYY-MM-DD): the model's release or training cutoff. Left empty, the model card's
        date is used where one is found (`cutoff.CARD_KEYS`): here for a local model folder, else
        by the worker once it has downloaded the model.

        `accepted` (re-measuring a stored model on this dataset revision, `remeasure`): a folder reference is then
        the folder the board accepted, measured while it holds the same weights, whatever this submitter's roots.

        `propose`: the submitter asks the board to propose the results to the model's Hub page once it is scored
        (`leaderboard.model_pages`); its job's payload says so."""
        model, revision = (model or "").strip(), (revision or "").strip()
        given = (name or model, description, link)
        upload = ModelUpload(identity=identity, model=model, revision=revision, track=track, given=given, cutoff=cutoff)
        upload.accepted, upload.propose = accepted, propose
        return self.checked(upload)

    def vet(self, upload: ModelUpload) -> None:
        """An unknown track (nano needs every topic's candidates), unusable text, a cutoff that is no day."""
        if upload.track not in TRACKS:
            raise FreshStackError(f"unknown track {upload.track!r}: use full (whole corpora) or nano (candidate pools)")
        if upload.track == "nano" and not all(
            layout.config_path(self.dataset.folder, t, "top_ranked").exists() for t in self.dataset.topics
        ):
            raise FreshStackError("the nano track needs top_ranked candidates for every topic of this dataset")
        upload.text = sanitize_submission(*upload.given)
        upload.day = submitted_cutoff(upload.cutoff)

    def vet_folder(self, path: Path) -> int:
        return check_model_dir(path)

    def dedupe_key(self, upload: ModelUpload, model: str, revision: str, dataset_revision: str) -> str:
        return model_content_hash(upload.track, model, revision, dataset_revision)

    def job_fields(self, upload: ModelUpload) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"track": upload.track}, {}

    def stored_fields(self, upload: ModelUpload) -> dict[str, Any]:
        """Its cutoff (a local folder's card gives it when none was typed) and its track."""
        day = upload.day
        if day is None and Path(upload.reference).is_dir():
            day = card_cutoff(upload.reference)
        return {"cutoff": day, "track": upload.track}

    def queued(self, upload: ModelUpload, system: SystemRecord) -> SubmitOutcome:
        message = f"queued: system #{system.id} '{system.name}' ({upload.track} track) waits for an evaluation"
        message += " worker"
        details = {"track": upload.track, "revision": upload.resolved}
        return self.told_live(upload, SubmitOutcome(SubmitStatus.QUEUED, message, system.id, details=details))
