"""Submissions: a run file is checked strictly and scored at once; a model is checked and queued for a worker.

The order of the checks is the point. Cheap refusals come first (size cap, text fields), then the dedupe
lookup (a file hash, or a model and its revision, always together with the dataset revision, so a resubmission
is answered with the stored row and never scored twice nor counted against the quota), then the per-identity
rate limit, and only then the expensive part: parsing, validation against the dataset's query and doc ids,
scoring. Numbers come from `leaderboard.scoring` (the library's `Dataset.score`); this module computes none.
The store's unique content hash settles races between identical submissions arriving together.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.metrics import parse_measure
from freshstack_hf.repo.dataset import Dataset
from leaderboard.archive import RunArchive
from leaderboard.sanitize import escape_markdown, sanitize_submission
from leaderboard.schema import ResultMeta
from leaderboard.scoring import score_for_store
from leaderboard.store import Store

AUTO, ALL = "auto", "all"  # run scopes besides one topic: the topics the run touches, or every topic
TRACKS = ("full", "nano")
MAX_DEPTH = 1000
MAX_PROBLEMS = 100  # listed back to the submitter; the rest are counted
GZIP_RATIO = 25  # a .gz run may expand to this many times the upload cap, not more (gzip bombs)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_REVISION = re.compile(r"^[A-Za-z0-9][\w./-]{0,99}$")


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    """What the submitter is told. `status`: scored, queued, duplicate, refused or rate_limited."""

    status: str
    message: str
    system_id: int | None = None
    problems: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.status in ("scored", "queued")

    def markdown(self) -> str:
        """What the page shows: the message, the problems, and for a scored run each measure's average.

        Message and problems are escaped (they quote file content and submitter text); numbers have three
        decimals. The full-precision figures are in `as_json` (the API's second output).
        """
        lines = [escape_markdown(self.message)] + [f"- {escape_markdown(p)}" for p in self.problems]
        average = self.details.get("average") or {}
        if average:
            topics = ", ".join(escape_markdown(t) for t in self.details.get("topics", []))
            lines += ["", f"Average of the topics ({topics}):", "", "| measure | average |", "| --- | ---: |"]
            lines += [f"| {escape_markdown(parse_measure(m).name)} | {v:.3f} |" for m, v in average.items()]
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "system_id": self.system_id,
            "problems": list(self.problems),
            **self.details,
        }


def refused_with_problems(exc: ValidationError, what: str, label: str) -> SubmitOutcome:
    """A refusal listing the file's problems (the first `MAX_PROBLEMS`), each located in the file as uploaded."""
    problems = [str(dataclasses.replace(p, where=label)) for p in exc.problems[:MAX_PROBLEMS]]
    if len(exc.problems) > MAX_PROBLEMS:
        problems.append(f"... and {len(exc.problems) - MAX_PROBLEMS} more")
    return SubmitOutcome("refused", f"{what} refused: {len(exc.problems)} problem(s)", problems=tuple(problems))


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_content_hash(file_hash: str, scope: str, dataset_revision: str) -> str:
    """The same file scored on the same topics of the same dataset revision is one system."""
    setting = hashlib.sha256(f"{scope}\n{dataset_revision}".encode()).hexdigest()[:16]
    return f"run:{file_hash}:{setting}"


def model_content_hash(track: str, model: str, revision: str, dataset_revision: str) -> str:
    key = hashlib.sha256(f"{model}@{revision}\n{dataset_revision}".encode()).hexdigest()[:48]
    return f"model:{track}:{key}"


def identity_of(username: str | None, client_host: str | None) -> str:
    """Rate-limit identity: the signed-in user when OAuth is on, else the client address."""
    return f"user:{username}" if username else f"ip:{client_host or 'unknown'}"


class Submitter:
    """Accepts submissions for one dataset into one store (see the module docstring for the order of checks)."""

    def __init__(
        self,
        store: Store,
        dataset: Dataset,
        *,
        max_file_bytes: int = 20 * 2**20,
        rate_limit: int | None = 10,
        archive: RunArchive | None = None,
        model_roots: tuple[Path, ...] = (),
        resamples: int = RESAMPLES,
    ) -> None:
        self.store, self.dataset, self.archive = store, dataset, archive
        self.max_file_bytes, self.rate_limit, self.resamples = max_file_bytes, rate_limit, resamples
        self.model_roots = tuple(Path(p).expanduser().resolve() for p in model_roots)

    def scopes(self) -> list[str]:
        return [AUTO, ALL, *self.dataset.topics]

    def _duplicate(self, content_hash: str) -> SubmitOutcome | None:
        found = self.store.find_system(content_hash)
        if found is None:
            return None
        message = f"already submitted: see system #{found.id} '{found.name}' ({found.status}); not scored again"
        return SubmitOutcome("duplicate", message, found.id)

    def _rate_limited(self, identity: str) -> SubmitOutcome | None:
        if not self.rate_limit or self.rate_limit <= 0:
            return None
        decision = self.store.check_rate_limit(identity, self.rate_limit)
        if decision:
            return None
        wait = max(1, round(decision.retry_after_seconds / 60))
        return SubmitOutcome("rate_limited", f"rate limit: {decision.limit} submissions per hour; retry in {wait} min")

    def _gzip_bomb(self, path: str | Path) -> SubmitOutcome | None:
        """Refuse a gzipped run that expands past the cap times `GZIP_RATIO`, reading at most that much."""
        if not str(path).endswith(".gz"):
            return None
        import gzip

        limit, total = self.max_file_bytes * GZIP_RATIO, 0
        try:
            with gzip.open(path, "rb") as fh:
                while block := fh.read(1 << 20):
                    total += len(block)
                    if total > limit:
                        return SubmitOutcome("refused", f"run file expands past {limit:,} bytes once decompressed")
        except (OSError, EOFError) as exc:
            return SubmitOutcome("refused", f"run file is not a readable gzip file ({exc})")
        return None

    def _checked_upload(self, path: str | Path | None, what: str, formats: str, *text: str) -> Any:
        """The cheap refusals every upload gets first: no file, over the cap, unusable name/description/link."""
        if path is None:
            raise FreshStackError(f"no {what} file: upload {formats}")
        size = os.path.getsize(path)
        if size > self.max_file_bytes:
            raise FreshStackError(f"{what} file is {size:,} bytes, over the {self.max_file_bytes:,}-byte cap")
        return sanitize_submission(*text)

    def _add(self, text: Any, kind: str, content_hash: str, identity: str, **stored: Any) -> tuple[Any, bool]:
        """`Store.add_system` with the submitter's sanitized name, description and link."""
        return self.store.add_system(
            name=text.name,
            kind=kind,
            content_hash=content_hash,
            description=text.description,
            link=text.link,
            identity=identity,
            **stored,
        )

    def _topics_for(self, scope: str) -> list[str]:
        if scope in (AUTO, ALL):
            return list(self.dataset.topics)
        if scope not in self.dataset.topics:
            raise FreshStackError(f"unknown topic {scope!r}: choose {AUTO}, {ALL} or one of {self.dataset.topics}")
        return [scope]

    def submit_run(
        self,
        path: str | Path | None,
        *,
        name: str,
        description: str = "",
        link: str = "",
        scope: str = AUTO,
        identity: str = "",
        display_name: str | None = None,
    ) -> SubmitOutcome:
        """Validate strictly, score at once and store; every refusal stores nothing."""
        try:
            text = self._checked_upload(path, "run", "a TREC (6 columns) or JSON run", name, description, link)
            topics = self._topics_for(scope or AUTO)
        except (FreshStackError, OSError) as exc:
            return SubmitOutcome("refused", str(exc))
        file_hash = file_sha256(path)
        content_hash = run_content_hash(file_hash, scope or AUTO, self.dataset.revision)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity) or self._gzip_bomb(path)
        if refusal is not None:
            return refusal
        from freshstack_hf.runs import load_run

        label = display_name or Path(path).name
        try:
            loaded = load_run(
                path,
                query_ids=self.dataset.query_ids(topics),
                doc_ids=self.dataset.doc_ids(topics),
                max_depth=MAX_DEPTH,
                strict=True,
            )
        except ValidationError as exc:
            return refused_with_problems(exc, f"run {label}", label)
        except FreshStackError as exc:
            return SubmitOutcome("refused", str(exc).replace(str(path), label))
        if scope in (AUTO, None, ""):
            topics = [t for t in topics if self.dataset.query_ids([t]) & loaded.run.keys()]
        if not topics or not loaded.run:
            return SubmitOutcome("refused", f"run {label} has no query of this dataset")
        scored = score_for_store(self.dataset, loaded.run, topics, resamples=self.resamples)
        params = {
            "job": "run",
            "file_sha256": file_hash,
            "format": loaded.fmt,
            "scope": scope or AUTO,
            "topics": topics,
            **scored.parameters,
            "max_depth": MAX_DEPTH,
            "dataset": self.dataset.source,
            "tag": loaded.tag,
        }
        meta = ResultMeta(self.dataset.revision, __version__, params)
        system, created = self._add(text, "run", content_hash, identity, results=scored.results, meta=meta)
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        if self.archive is not None:
            self.archive.save(content_hash, scored.archived)
        averages = scored.scores.average
        plural = "s" if len(topics) != 1 else ""
        message = f"scored: system #{system.id} '{system.name}' on {len(topics)} topic{plural}"
        return SubmitOutcome("scored", message, system.id, details={"topics": topics, "average": averages})

    def _model_source(self, model: str, revision: str) -> tuple[str, str, int | None]:
        """(model reference for the worker, revision for the dedupe key, parameter count if known)."""
        from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL, cached_snapshot
        from leaderboard.vetting import check_model_dir

        if self.model_roots and (model.startswith(("/", ".", "~")) or Path(model).is_absolute()):
            path = Path(model).expanduser().resolve()
            if not any(path.is_relative_to(root) for root in self.model_roots) or not path.is_dir():
                raise FreshStackError(f"model path {model!r} is not a folder under this server's model roots")
            params = check_model_dir(path)
            digest = hashlib.sha256()
            for weights in sorted(path.rglob("*.safetensors")):
                digest.update(file_sha256(weights).encode())
            return str(path), "sha256-" + digest.hexdigest()[:16], params
        if model == DEFAULT_DENSE_MODEL:
            return model, revision or "packaged", None
        if not _HUB_ID.match(model) or ".." in model:
            raise FreshStackError(f"model {model[:100]!r} is not a Hub id like org/name (sentence-transformers)")
        if revision and (not _REVISION.match(revision) or ".." in revision):
            raise FreshStackError(f"revision {revision[:100]!r} is not a branch, tag or commit id")
        snapshot = cached_snapshot(model, revision or None)
        return model, snapshot.name if snapshot is not None else (revision or "main"), None

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
    ) -> SubmitOutcome:
        """Check the model reference and queue a `model` job; the worker downloads, checks and scores it."""
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
            reference, resolved, params = self._model_source(model, revision)
        except FreshStackError as exc:
            return SubmitOutcome("refused", str(exc))
        content_hash = model_content_hash(track, reference, resolved, self.dataset.revision)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity)
        if refusal is not None:
            return refusal
        payload = {
            "model": reference,
            "revision": revision or None,
            "track": track,
            "dataset": str(self.dataset.folder),
            "dataset_revision": self.dataset.revision,
            "topics": list(self.dataset.topics),
        }
        system, created = self._add(text, "model", content_hash, identity, size=params, job=("model", payload))
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        message = f"queued: system #{system.id} '{system.name}' ({track} track) waits for an evaluation worker"
        return SubmitOutcome("queued", message, system.id, details={"track": track, "revision": resolved})
