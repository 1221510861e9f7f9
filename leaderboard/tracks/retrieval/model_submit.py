"""Models, the retrieval track's other submission: a sentence-transformers model checked at the door and queued for
a worker (`ModelSubmitter`; its `model` job is `model_job`'s), and where a model comes from (a folder under the
operator's model roots, vetted here; a Hub id, resolved to the cached snapshot's commit where there is one), which
the reranking track's CrossEncoders share (`rerank_submit.RerankerSubmitter`).

`ModelSubmitter.checks` is the one order a model goes through: the cheap refusals (the reference, the track, the
text fields, the cutoff, where the model comes from), the dedupe on the model, its revision and the dataset
revision, the rate limit, the live quota (a submission past it is queued all the same, its live score withheld),
and the queueing of its job with the row, in one transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from leaderboard.sanitize import SubmissionText, sanitize_submission
from leaderboard.store.records import SystemRecord
from leaderboard.submission import (
    BaseSubmitter,
    Check,
    SubmitOutcome,
    SubmitStatus,
    Upload,
    audited,
    file_sha256,
    refused,
)
from leaderboard.tracks.retrieval import MODEL_JOB_KIND
from leaderboard.tracks.retrieval.cutoff import card_cutoff, submitted_cutoff
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import check_model_dir

TRACKS = ("full", "nano")  # whole corpora, or each query's candidate pool (`T-top_ranked`)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_REVISION = re.compile(r"^[A-Za-z0-9][\w./-]{0,99}$")


def model_content_hash(track: str, model: str, revision: str, dataset_revision: str) -> str:
    key = hashlib.sha256(f"{model}@{revision}\n{dataset_revision}".encode()).hexdigest()[:48]
    return f"model:{track}:{key}"


def local_model_source(
    model: str, roots: tuple[Path, ...], check: Callable[[Path], int] = check_model_dir
) -> tuple[str, str, int] | None:
    """(folder, content revision, parameter count) of a local model folder under one of `roots`, vetted by `check`
    at the door; None when `model` is not a path (or no roots are configured: then it must be a Hub id)."""
    if not roots or not (model.startswith(("/", ".", "~")) or Path(model).is_absolute()):
        return None
    path = Path(model).expanduser().resolve()
    if not any(path.is_relative_to(root) for root in roots) or not path.is_dir():
        raise FreshStackError(f"model path {model!r} is not a folder under this server's model roots")
    params = check(path)
    return str(path), weights_revision(path), params


def weights_revision(folder: Path) -> str:
    """A local model's revision: the hash of its safetensors weights, which its dedupe key names."""
    digest = hashlib.sha256()
    for weights in sorted(folder.rglob("*.safetensors")):
        digest.update(file_sha256(weights).encode())
    return "sha256-" + digest.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Accepted:
    """What the board stored when it accepted a model (re-measuring it on another dataset revision): its row's
    dedupe key and the dataset revision that key names. A folder's key names its weights' hash, so the folder is
    measured again only while recomputing the key gives the stored one; the folder is not vetted against the model
    roots again (`remeasure` and `refresh --store` run without them: the board vetted it when it accepted it)."""

    content_hash: str
    dataset_revision: str


def accepted_folder_source(
    folder: str, same_key: Callable[[str], bool], check: Callable[[Path], int] = check_model_dir
) -> tuple[str, str, int]:
    """(folder, weights' hash, parameter count) of a local model the board accepted, while it still holds the
    weights it was accepted with (`same_key` of their hash); why not otherwise (the folder gone or changed)."""
    path = Path(folder)
    if not path.is_dir():
        raise FreshStackError(f"its folder {folder} is gone")
    revision = weights_revision(path)
    if not same_key(revision):
        raise FreshStackError(f"its folder {folder} changed since the board accepted it (weights now {revision})")
    return str(path), revision, check(path)


def is_folder_reference(model: str) -> bool:
    """Whether a stored model reference is a local folder (the board stores a folder's absolute path)."""
    return Path(model).is_absolute()


def hub_model_source(model: str, revision: str) -> tuple[str, str]:
    """(Hub id, revision for the dedupe key: the cached snapshot's commit, else the one asked for, else main)."""
    from freshstack_hf.retrieval.models import cached_snapshot

    if not _HUB_ID.match(model) or ".." in model:
        raise FreshStackError(f"model {model[:100]!r} is not a Hub id like org/name (sentence-transformers)")
    if revision and (not _REVISION.match(revision) or ".." in revision):
        raise FreshStackError(f"revision {revision[:100]!r} is not a branch, tag or commit id")
    snapshot = cached_snapshot(model, revision or None)
    return model, snapshot.name if snapshot is not None else (revision or "main")


@dataclass(kw_only=True)
class ModelUpload(Upload):
    """A model reference as given, and what its checks learn of it in their order."""

    model: str
    revision: str
    track: str
    given: tuple[str, str, str]  # name (default: the model), description, link as typed
    cutoff: str
    text: SubmissionText | None = None
    day: str | None = None
    reference: str = ""  # what the worker loads: the Hub id, or the local folder
    resolved: str = ""  # the revision the dedupe key names
    params: int | None = None  # parameter count, where known at the door
    accepted: Accepted | None = None  # re-measuring: what the board stored when it accepted the model


class ModelSubmitter(BaseSubmitter[ModelUpload]):
    """Accepts sentence-transformers models for one dataset into one store (see the module docstring).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    def __init__(self, *args: Any, model_roots: tuple[Path, ...] = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.model_roots = tuple(Path(p).expanduser().resolve() for p in model_roots)

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
    ) -> SubmitOutcome:
        """Check the model reference and queue a `model` job; the worker downloads, checks and scores it.

        `cutoff` (optional, YYYY-MM-DD): the model's release or training cutoff. Left empty, the model card's
        date is used where one is found (`cutoff.CARD_KEYS`): here for a local model folder, else
        by the worker once it has downloaded the model.

        `accepted` (re-measuring a stored model on this dataset revision, `remeasure`): a folder reference is then
        the folder the board accepted, measured while it holds the same weights, whatever this submitter's roots."""
        model, revision = (model or "").strip(), (revision or "").strip()
        given = (name or model, description, link)
        upload = ModelUpload(identity=identity, model=model, revision=revision, track=track, given=given, cutoff=cutoff)
        upload.accepted = accepted
        return self.checked(upload)

    def checks(self) -> tuple[Check[ModelUpload], ...]:
        return (self.check_reference, self.dedupe, self.rate_limit, self.live_quota, self.queue)

    def check_reference(self, upload: ModelUpload) -> SubmitOutcome | None:
        """The cheap refusals: no model, an unknown track (nano needs every topic's candidates), unusable text, a
        cutoff that is no day, a model from nowhere this board accepts; what passes is keyed by its reference,
        revision and track on the dataset revision."""
        from freshstack_hf.repo import layout

        try:
            if not upload.model:
                raise FreshStackError("no model: give a Hub id (org/name)")
            if upload.track not in TRACKS:
                raise FreshStackError(
                    f"unknown track {upload.track!r}: use full (whole corpora) or nano (candidate pools)"
                )
            if upload.track == "nano" and not all(
                layout.config_path(self.dataset.folder, t, "top_ranked").exists() for t in self.dataset.topics
            ):
                raise FreshStackError("the nano track needs top_ranked candidates for every topic of this dataset")
            upload.text = sanitize_submission(*upload.given)
            upload.day = submitted_cutoff(upload.cutoff)
            upload.reference, upload.resolved, upload.params = self._model_source(upload)
        except FreshStackError as exc:
            return refused(str(exc))
        key = model_content_hash(upload.track, upload.reference, upload.resolved, self.dataset.revision)
        upload.content_hash = key
        return None

    def _model_source(self, upload: ModelUpload) -> tuple[str, str, int | None]:
        """(model reference for the worker, revision for the dedupe key, parameter count if known)."""
        from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

        model, revision, accepted = upload.model, upload.revision, upload.accepted
        if accepted is not None and is_folder_reference(model):
            key = accepted.content_hash
            return accepted_folder_source(
                model, lambda found: model_content_hash(upload.track, model, found, accepted.dataset_revision) == key
            )
        local = local_model_source(model, self.model_roots)
        if local is not None:
            return local
        if model == DEFAULT_DENSE_MODEL:
            return model, revision or "packaged", None
        return (*hub_model_source(model, revision), None)

    def queue(self, upload: ModelUpload) -> SubmitOutcome:
        """Stored with its `model` job (and its track), in one transaction; a local folder's card gives the cutoff
        when none was typed; the job carries its live status when the live quota withheld its live score."""
        assert upload.text is not None
        payload = {
            "model": upload.reference,
            "revision": upload.revision or None,
            "track": upload.track,
            **payload_dataset(self.dataset),
            "topics": list(self.dataset.topics),
            **upload.live_payload(),
        }
        day = upload.day
        if day is None and Path(upload.reference).is_dir():
            day = card_cutoff(upload.reference)
        stored = {"size": upload.params, "cutoff": day, "track": upload.track, "job": (MODEL_JOB_KIND, payload)}
        details = {"track": upload.track, "revision": upload.resolved}

        def told(system: SystemRecord) -> SubmitOutcome:
            message = f"queued: system #{system.id} '{system.name}' ({upload.track} track) waits for an evaluation"
            message += " worker"
            return self.told_live(upload, SubmitOutcome(SubmitStatus.QUEUED, message, system.id, details=details))

        return self.add(upload, upload.text, "model", told, **stored)
