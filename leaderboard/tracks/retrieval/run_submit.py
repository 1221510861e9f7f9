"""Retrieval submissions: a run file is checked strictly and scored at once; a model is checked and queued.

The checks run in the order of `leaderboard.submission` (cheap refusals, dedupe on a model and its revision with
the dataset revision, the rate limit, then parsing and validation against the dataset's query and doc ids, and
scoring); a run file is read as a stream to the depth the board keeps and deduplicated on that canonical
ranking. Numbers come from `leaderboard.scoring` (the library's `Dataset.score`); this module computes none. A
model's `model` job is run by a worker (`tracks.retrieval.model_job`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs import load_run, top_docs
from freshstack_hf.runs.parse import TooLarge
from leaderboard.defaults import GZIP_RATIO
from leaderboard.sanitize import SubmissionText, sanitize_submission
from leaderboard.scoring import ARCHIVE_DEPTH, score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.submission import BaseSubmitter, SubmitOutcome, audited, file_sha256
from leaderboard.tracks.retrieval.cutoff import card_cutoff, submitted_cutoff
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.vetting import check_model_dir

AUTO, ALL = "auto", "all"  # run scopes besides one topic: the topics the run touches, or every topic
TRACKS = ("full", "nano")
MAX_DEPTH = 1000
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_REVISION = re.compile(r"^[A-Za-z0-9][\w./-]{0,99}$")


@dataclass(frozen=True, slots=True)
class _Upload:
    """A run file past the cheap refusals: what `_kept_ranking` reads, keys and stores it by."""

    path: Path
    kind: str  # run, or reranked run
    label: str  # the file's name as uploaded, for messages
    file_hash: str
    scope: str
    text: SubmissionText  # its sanitized name, description and link
    day: str | None  # the cutoff day given (YYYY-MM-DD), if any


def run_content_hash(ranking_hash: str, scope: str, dataset_revision: str, kind: str = "run") -> str:
    """The same ranking scored on the same topics of the same dataset revision is one system (of each kind: a
    ranking submitted as a run and as a reranked run is two). `ranking_hash`: `canonical_ranking`'s (rows stored
    before were keyed by the file's sha256, still looked up so that the same file stays one row)."""
    setting = hashlib.sha256(f"{scope}\n{dataset_revision}".encode()).hexdigest()[:16]
    return f"{kind}:{ranking_hash}:{setting}"


def canonical_ranking(run: Mapping[str, Mapping[str, float]]) -> tuple[str, int]:
    """(sha256, size in bytes) of a run written canonically: queries sorted, each query's docs in rank order
    (`top_docs`: score, then doc id), one `query<TAB>doc<TAB>score` line each, scores in Python's shortest exact
    form. A TREC file, its JSON twin, either gzipped or with its lines shuffled give the same ranking."""
    digest, size = hashlib.sha256(), 0
    for query_id in sorted(run):
        docs = run[query_id]
        block = "".join(f"{query_id}\t{d}\t{float(docs[d])!r}\n" for d in top_docs(docs, len(docs))).encode()
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size


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
    digest = hashlib.sha256()
    for weights in sorted(path.rglob("*.safetensors")):
        digest.update(file_sha256(weights).encode())
    return str(path), "sha256-" + digest.hexdigest()[:16], params


def hub_model_source(model: str, revision: str) -> tuple[str, str]:
    """(Hub id, revision for the dedupe key: the cached snapshot's commit, else the one asked for, else main)."""
    from freshstack_hf.retrieval.models import cached_snapshot

    if not _HUB_ID.match(model) or ".." in model:
        raise FreshStackError(f"model {model[:100]!r} is not a Hub id like org/name (sentence-transformers)")
    if revision and (not _REVISION.match(revision) or ".." in revision):
        raise FreshStackError(f"revision {revision[:100]!r} is not a branch, tag or commit id")
    snapshot = cached_snapshot(model, revision or None)
    return model, snapshot.name if snapshot is not None else (revision or "main")


class Submitter(BaseSubmitter):
    """Accepts run files and models for one dataset into one store (see the module docstring).

    `model_roots`: folders under which local model paths are accepted (an operator's own models).
    """

    def __init__(self, *args: Any, model_roots: tuple[Path, ...] = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.model_roots = tuple(Path(p).expanduser().resolve() for p in model_roots)

    def scopes(self) -> list[str]:
        return [AUTO, ALL, *self.dataset.topics]

    def _topics_for(self, scope: str) -> list[str]:
        if scope in (AUTO, ALL):
            return list(self.dataset.topics)
        if scope not in self.dataset.topics:
            raise FreshStackError(f"unknown topic {scope!r}: choose {AUTO}, {ALL} or one of {self.dataset.topics}")
        return [scope]

    @audited("run")
    def submit_run(
        self,
        path: str | Path | None,
        *,
        name: str,
        scope: str = AUTO,
        description: str = "",
        link: str = "",
        identity: str = "",
        display_name: str | None = None,
        cutoff: str = "",
    ) -> SubmitOutcome:
        """Validate strictly, score at once and store; every refusal stores nothing. `cutoff` (optional,
        YYYY-MM-DD): the release or training cutoff of the model behind the run, for the After-cutoff view."""
        text = (name, description, link)
        return self._scored_file(path, "run", text, scope, identity, display_name, cutoff=cutoff)

    def _scored_file(
        self,
        path: str | Path | None,
        kind: str,
        text: tuple[str, str, str],
        scope: str,
        identity: str,
        display_name: str | None,
        *,
        cutoff: str = "",
        allowed: Callable[[list[str]], Mapping[str, Container[str]]] | None = None,
    ) -> SubmitOutcome:
        """A run file of `kind` checked, scored and stored (`submit_run`'s path); `allowed(topics)` gives each
        query's candidates when a query may rank only those (a reranked run), read after the cheap refusals.

        The file is read as a stream and kept to the depth the board scores and archives (`ARCHIVE_DEPTH`): the
        cap applies to that part, and to the text read (`GZIP_RATIO` times the cap). Its dedupe key hashes that
        canonical ranking, so one ranking is one row whatever its format, compression or line order."""
        try:
            checked = self._checked_upload(path, "run", "a TREC (6 columns) or JSON run", *text, capped=False)
            topics = self._topics_for(scope or AUTO)
            day = submitted_cutoff(cutoff)
        except (FreshStackError, OSError) as exc:
            return SubmitOutcome("refused", str(exc))
        file_hash = file_sha256(path)  # every outcome names it, for the audit log
        label = display_name or Path(path).name
        upload = _Upload(Path(path), kind, label, file_hash, scope or AUTO, checked, day)
        return dataclasses.replace(self._kept_ranking(upload, topics, identity, allowed), file_sha256=file_hash)

    def _kept_ranking(
        self,
        upload: _Upload,
        topics: list[str],
        identity: str,
        allowed: Callable[[list[str]], Mapping[str, Container[str]]] | None,
    ) -> SubmitOutcome:
        """`_scored_file` once the cheap refusals passed: the run read to the kept depth, deduplicated, capped,
        scored and stored."""
        path, kind, label, scope = upload.path, upload.kind, upload.label, upload.scope
        limit = self.max_file_bytes * GZIP_RATIO

        def parse() -> Any:  # the dataset's ids are read only once the cheap refusals have passed
            ids = {"query_ids": self.dataset.query_ids(topics), "doc_ids": self.dataset.doc_ids(topics)}
            limits = {"candidates": allowed(topics)} if allowed is not None else {}
            try:
                return load_run(
                    path, **ids, max_depth=MAX_DEPTH, strict=True, keep=ARCHIVE_DEPTH, max_bytes=limit, **limits
                )
            except TooLarge:
                gzipped = str(path).endswith(".gz")
                size = f"expands past {limit:,} bytes once decompressed" if gzipped else f"is over {limit:,} bytes"
                raise FreshStackError(
                    f"run {label} {size}: the board reads at most {GZIP_RATIO} x its {self.max_file_bytes:,}-byte "
                    f"cap (--max-file-mb) and keeps the top {ARCHIVE_DEPTH} per query; cut the run to its top "
                    f"{ARCHIVE_DEPTH} per query"
                ) from None

        older_key = run_content_hash(upload.file_hash, scope, self.dataset.revision, kind)  # how rows were keyed
        loaded = self._parsed_upload(path, "run", label, older_key, identity, parse, streamed=True)
        if isinstance(loaded, SubmitOutcome):
            return loaded
        ranking_hash, kept_bytes = canonical_ranking(loaded.run)
        content_hash = run_content_hash(ranking_hash, scope, self.dataset.revision, kind)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity)
        if refusal is not None:
            return dataclasses.replace(refusal, content_hash=refusal.content_hash or content_hash)
        if kept_bytes > self.max_file_bytes:
            message = (
                f"run {label}: its top {ARCHIVE_DEPTH} per query, what the board keeps, is {kept_bytes:,} bytes, "
                f"over the {self.max_file_bytes:,}-byte cap (--max-file-mb)"
            )
            return SubmitOutcome("refused", message, content_hash=content_hash)
        if scope == AUTO:
            topics = [t for t in topics if self.dataset.query_ids([t]) & loaded.run.keys()]
        if not topics or not loaded.run:
            return SubmitOutcome("refused", f"run {label} has no query of this dataset", content_hash=content_hash)
        scored = score_for_store(self.dataset, loaded.run, topics, resamples=self.resamples)
        params = {
            "job": kind,
            "file_sha256": upload.file_hash,
            "ranking_sha256": ranking_hash,
            "format": loaded.fmt,
            "scope": scope,
            "topics": topics,
            **scored.parameters,
            "max_depth": MAX_DEPTH,
            "kept_depth": ARCHIVE_DEPTH,
            "dataset": self.dataset.source,
            "tag": loaded.tag,
        }
        meta = ResultMeta(self.dataset.revision, __version__, params)
        stored = {"results": scored.results, "meta": meta, "cutoff": upload.day, "blobs": scored.blobs()}
        system, created = self._add(upload.text, kind, content_hash, identity, **stored)
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        averages = scored.scores.average
        plural = "s" if len(topics) != 1 else ""
        message = f"scored: system #{system.id} '{system.name}' on {len(topics)} topic{plural}"
        details = {"topics": topics, "average": averages}
        return SubmitOutcome("scored", message, system.id, details=details, content_hash=content_hash)

    def _model_source(self, model: str, revision: str) -> tuple[str, str, int | None]:
        """(model reference for the worker, revision for the dedupe key, parameter count if known)."""
        from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

        local = local_model_source(model, self.model_roots)
        if local is not None:
            return local
        if model == DEFAULT_DENSE_MODEL:
            return model, revision or "packaged", None
        return (*hub_model_source(model, revision), None)

    @audited("model")
    def submit_model(
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
    ) -> SubmitOutcome:
        """Check the model reference and queue a `model` job; the worker downloads, checks and scores it.

        `cutoff` (optional, YYYY-MM-DD): the model's release or training cutoff. Left empty, the model card's
        date is used where one is found (`cutoff.CARD_KEYS`): here for a local model folder, else
        by the worker once it has downloaded the model."""
        from freshstack_hf.repo import layout

        model, revision = (model or "").strip(), (revision or "").strip()
        try:
            if not model:
                raise FreshStackError("no model: give a Hub id (org/name)")
            if track not in TRACKS:
                raise FreshStackError(f"unknown track {track!r}: use full (whole corpora) or nano (candidate pools)")
            if track == "nano" and not all(
                layout.config_path(self.dataset.folder, t, "top_ranked").exists() for t in self.dataset.topics
            ):
                raise FreshStackError("the nano track needs top_ranked candidates for every topic of this dataset")
            text = sanitize_submission(name or model, description, link)
            day = submitted_cutoff(cutoff)
            reference, resolved, params = self._model_source(model, revision)
        except FreshStackError as exc:
            return SubmitOutcome("refused", str(exc))
        content_hash = model_content_hash(track, reference, resolved, self.dataset.revision)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity)
        if refusal is not None:
            return dataclasses.replace(refusal, content_hash=content_hash)
        payload = {
            "model": reference,
            "revision": revision or None,
            "track": track,
            **payload_dataset(self.dataset),
            "topics": list(self.dataset.topics),
        }
        if day is None and Path(reference).is_dir():
            day = card_cutoff(reference)
        stored = {"size": params, "cutoff": day, "track": track, "job": ("model", payload)}
        system, created = self._add(text, "model", content_hash, identity, **stored)
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        message = f"queued: system #{system.id} '{system.name}' ({track} track) waits for an evaluation worker"
        details = {"track": track, "revision": resolved}
        return SubmitOutcome("queued", message, system.id, details=details, content_hash=content_hash)
