"""Run files, the retrieval track's upload: checked strictly and scored at once (`RunSubmitter`); the reranking
track's reranked runs take the same path (`rerank_submit.RerankedRunSubmitter`).

`RunSubmitter.checks` is the one order a run goes through: the cheap refusals; the file's own hash looked up
(rows stored by older boards were keyed by it, and the audit log names it); the run read as a stream to the depth
the board keeps, within `GZIP_RATIO` times the cap of text read; the dedupe on that canonical ranking (one ranking
is one row whatever its format, compression or line order); the rate limit, which counts a refused parse too and
only then tells what is wrong with the file; the kept ranking within the cap; and scoring, through
`leaderboard.scoring` (the library's `Dataset.score`: this module computes no number). Models are
`model_submit`'s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.parse import TooLarge
from leaderboard.defaults import GZIP_RATIO
from leaderboard.sanitize import SubmissionText, sanitize_submission
from leaderboard.scoring import ARCHIVE_DEPTH, ReadRun
from leaderboard.store.records import ResultMeta, SystemRecord
from leaderboard.submission.audited import audited
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus, parse_refusal, refused
from leaderboard.submission.submitter import BaseSubmitter
from leaderboard.submission.upload import Check, Upload
from leaderboard.submission.uploaded_files import file_sha256, uploaded_size
from leaderboard.tracks.retrieval.submissions.cutoff import submitted_cutoff

AUTO, ALL = "auto", "all"  # run scopes besides one topic: the topics the run touches, or every topic
MAX_DEPTH = 1000
FORMATS = "a TREC (6 columns) or JSON run"


def run_content_hash(ranking_hash: str, scope: str, dataset_revision: str, kind: str = "run") -> str:
    """The same ranking scored on the same topics of the same dataset revision is one system (of each kind: a
    ranking submitted as a run and as a reranked run is two). `ranking_hash`: `canonical_ranking`'s (rows stored
    before were keyed by the file's sha256, still looked up so that the same file stays one row)."""
    setting = hashlib.sha256(f"{scope}\n{dataset_revision}".encode()).hexdigest()[:16]
    return f"{kind}:{ranking_hash}:{setting}"


@dataclass(kw_only=True)
class RunUpload(Upload):
    """A run file as given, and what its checks learn of it in their order."""

    path: str | Path | None
    given: tuple[str, str, str]  # name, description, link as typed
    scope: str
    cutoff: str
    display_name: str | None
    text: SubmissionText | None = None  # sanitized
    topics: list[str] = field(default_factory=list)
    day: str | None = None  # the cutoff day (YYYY-MM-DD), if one was given
    label: str = ""  # the file's name as uploaded, for messages
    read: ReadRun | None = None  # the run kept to `ARCHIVE_DEPTH`, once parsed (by the scorer: here or its child)
    refusal: SubmitOutcome | None = None  # the parser's, told once the rate limit has counted the upload


class RunSubmitter(BaseSubmitter[RunUpload]):
    """Accepts run files for one dataset into one store (see the module docstring); `kind` is the rows' kind."""

    kind = "run"

    def scopes(self) -> list[str]:
        return [AUTO, ALL, *self.dataset.topics]

    @audited("run")
    def submit(
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
        given = (name, description, link)
        upload = RunUpload(
            identity=identity, path=path, given=given, scope=scope or AUTO, cutoff=cutoff, display_name=display_name
        )
        return self.checked(upload)

    def checks(self) -> tuple[Check[RunUpload], ...]:
        return (
            self.check_fields,
            self.dedupe_file,
            self.parse_within_cap,
            self.dedupe_ranking,
            self.rate_limit,
            self.refuse_unparsed,
            self.cap_kept_ranking,
            self.require_a_query,
            self.score_and_store,
        )

    def check_fields(self, upload: RunUpload) -> SubmitOutcome | None:
        """The cheap refusals: no file, unusable name, description or link, an unknown scope, a cutoff that is no
        day. No size cap here: a run's applies to what the board keeps of it (`cap_kept_ranking`)."""
        try:
            uploaded_size(upload.path, "run", FORMATS)
            upload.text = sanitize_submission(*upload.given)
            upload.topics = self._topics_for(upload.scope)
            upload.day = submitted_cutoff(upload.cutoff)
        except (FreshStackError, OSError) as exc:
            return refused(str(exc))
        upload.label = upload.display_name or Path(str(upload.path)).name
        return None

    def _topics_for(self, scope: str) -> list[str]:
        if scope in (AUTO, ALL):
            return list(self.dataset.topics)
        if scope not in self.dataset.topics:
            raise FreshStackError(f"unknown topic {scope!r}: choose {AUTO}, {ALL} or one of {self.dataset.topics}")
        return [scope]

    def dedupe_file(self, upload: RunUpload) -> SubmitOutcome | None:
        """The file's own hash (with the scope and dataset revision) looked up: how older boards keyed runs."""
        upload.file_sha256 = file_sha256(str(upload.path))
        upload.content_hash = run_content_hash(upload.file_sha256, upload.scope, self.dataset.revision, self.kind)
        return self.dedupe(upload)

    def candidates(self, topics: list[str]) -> Mapping[str, Container[str]] | None:
        """Each query's candidates, where a query may rank only those (a reranked run); None: any document."""
        return None

    def parse_within_cap(self, upload: RunUpload) -> None:
        """The run read as a stream and kept to the depth the board scores and archives (`ARCHIVE_DEPTH`), within
        `GZIP_RATIO` times the cap of text read; the dataset's ids are read only now. A refusal waits in the upload
        until the rate limit has counted it (`refuse_unparsed`)."""
        path, label, limit = Path(str(upload.path)), upload.label, self.max_file_bytes * GZIP_RATIO
        try:
            allowed = self.candidates(upload.topics)
            upload.read = self.scorer.read(
                self.dataset, path, upload.topics, max_depth=MAX_DEPTH, max_bytes=limit, candidates=allowed
            )
            return
        except TooLarge:
            gzipped = str(path).endswith(".gz")
            size = f"expands past {limit:,} bytes once decompressed" if gzipped else f"is over {limit:,} bytes"
            error = FreshStackError(
                f"run {label} {size}: the board reads at most {GZIP_RATIO} x its {self.max_file_bytes:,}-byte "
                f"cap (--max-file-mb) and keeps the top {ARCHIVE_DEPTH} per query; cut the run to its top "
                f"{ARCHIVE_DEPTH} per query"
            )
        except FreshStackError as exc:
            error = exc
        upload.refusal = parse_refusal(error, "run", label, path)

    def dedupe_ranking(self, upload: RunUpload) -> SubmitOutcome | None:
        """The canonical ranking kept (`canonical_ranking`), with the scope and dataset revision, looked up."""
        if upload.read is None:
            return None  # refused: told after the rate limit
        upload.content_hash = run_content_hash(
            upload.read.ranking_sha256, upload.scope, self.dataset.revision, self.kind
        )
        return self.dedupe(upload)

    def refuse_unparsed(self, upload: RunUpload) -> SubmitOutcome | None:
        """What the parser found wrong with the file, now that the rate limit has counted the upload."""
        return upload.refusal

    def cap_kept_ranking(self, upload: RunUpload) -> SubmitOutcome | None:
        """The cap applies to what the board keeps of the run: its top `ARCHIVE_DEPTH` per query."""
        kept = upload.read.kept_bytes if upload.read is not None else 0
        if kept <= self.max_file_bytes:
            return None
        return refused(
            f"run {upload.label}: its top {ARCHIVE_DEPTH} per query, what the board keeps, is {kept:,} "
            f"bytes, over the {self.max_file_bytes:,}-byte cap (--max-file-mb)"
        )

    def require_a_query(self, upload: RunUpload) -> SubmitOutcome | None:
        """Some query of the dataset ranked; `auto` narrows the topics to those the run touches."""
        queries = upload.read.queries if upload.read is not None else frozenset()
        if upload.scope == AUTO:
            upload.topics = [t for t in upload.topics if self.dataset.query_ids([t]) & queries]
        if not upload.topics or not queries:
            return refused(f"run {upload.label} has no query of this dataset")
        return None

    def score_and_store(self, upload: RunUpload) -> SubmitOutcome:
        """Scored at once and stored with its ranking (the archive the board keeps), in one transaction."""
        assert upload.read is not None and upload.text is not None
        read, topics = upload.read, upload.topics
        scored = self.scorer(self.dataset, read.run, topics, resamples=self.resamples)
        params = {
            "job": self.kind,
            "file_sha256": upload.file_sha256,
            "ranking_sha256": read.ranking_sha256,
            "format": read.fmt,
            "scope": upload.scope,
            "topics": topics,
            **scored.parameters,
            "max_depth": MAX_DEPTH,
            "kept_depth": ARCHIVE_DEPTH,
            "dataset": self.dataset.source,
            "tag": read.tag,
        }
        meta = ResultMeta(self.dataset.revision, __version__, params)
        stored = {"results": scored.results, "meta": meta, "cutoff": upload.day, "blobs": scored.blobs()}
        plural = "s" if len(topics) != 1 else ""
        details = {"topics": topics, "average": scored.scores.average}

        def told(system: SystemRecord) -> SubmitOutcome:
            message = f"scored: system #{system.id} '{system.name}' on {len(topics)} topic{plural}"
            return SubmitOutcome(SubmitStatus.SCORED, message, system.id, details=details)

        return self.add(upload, upload.text, self.kind, told, **stored)
