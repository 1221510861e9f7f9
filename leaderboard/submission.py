"""What every submission shares, whatever its kind: the outcome the submitter is told, the audit row of each call,
and the checks several kinds make, each a small named step.

Each kind of upload is one class that says what it submits (`tracks.retrieval.submissions.run_submit.RunSubmitter`,
`tracks.retrieval.submissions.model_submit.ModelSubmitter`, `tracks.reranking.rerank_submit.RerankedRunSubmitter` and
`RerankerSubmitter`, `tracks.answers.answer_submit.AnswerSubmitter`) and declares its checks as one ordered list,
`checks()`.
`BaseSubmitter.checked` runs that list in its order, each step entered once, on the submission's `Upload` (what
the steps have learnt so far); the first step that answers gives the outcome, and the last one stores the
submission and says so. Nothing reorders a list: where a kind's dedupe needs what it parsed, its list says so by
where its steps stand.

The lists share their shape: cheap refusals first (no file, over the size cap, unusable name, description or link; a
run's cap applies to what the board keeps of it, so its list checks it after the parse), then the dedupe lookup
(`dedupe`: a content hash, always together with the dataset revision, so a resubmission is answered with the stored
row and never scored twice), then the per-identity rate limit (`rate_limit`: it counts what it lets through, and it
stands after every dedupe of its list, so a duplicate is never counted), and only then the expensive part: the
kind's strict parser (every problem listed with its line; nothing is stored on any problem) and scoring, or the
queueing of a worker's job. A parser's refusal is counted: its list puts the rate limit before the parse (answers),
or tells the refusal once the rate limit has counted it (a run, whose dedupe key is its parsed ranking's). The kinds a
worker also scores live on the embargoed questions (models, rerankers) then count the submission against the
identity's live scorings in the last 7 days (`live_quota`): past that quota it is still queued and scored on the
public questions, and its job carries the live status that says why there is no live score. The board's re-measuring
of a stored model on a new snapshot (`tracks.retrieval.jobs.remeasure`) takes the same step for the model's owner: its
hourly rate limit is off, its live quota is not.

The store's unique content hash settles races between identical submissions arriving together (`raced`); a content
hash a moderator deleted stays in the store as a tombstone, so the same content is refused, naming the reason,
whichever dedupe meets it. Each public `submit` method is marked `@audited`: every call, whatever its outcome,
appends one row to the store's audit log (`leaderboard.store.audit`). The row of a stored submission is written in
the transaction that stores it (`BaseSubmitter.add`), so a kill never leaves one without the other; a refusal or a
duplicate, which stores nothing, gets its row in a transaction of its own. What the board submits by itself (a
model measured again on a new snapshot: `submit(..., board_act="remeasure")`) is logged as `board:<act>` with the
board as the actor and the system's owner named, never as a new submission of its owner.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, TypeVar

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.metrics import parse_measure
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import (
    GZIP_RATIO,
    LIVE_SCORES_PER_WEEK,
    LIVE_WINDOW_SECONDS,
    MAX_UPLOAD_MB,
    RATE_LIMIT_PER_HOUR,
    upload_bytes,
)
from leaderboard.fault_points import POINTS
from leaderboard.live_release import has_embargo
from leaderboard.live_scores import DECIDED, quota_used_up, status
from leaderboard.sanitize import SubmissionText, escape_markdown
from leaderboard.scoring import HERE, Scorer
from leaderboard.store.audit import BOARD, BOARD_ACTS, SUBMISSION, AuditEntry, board_entry, kind_of
from leaderboard.store.records import SystemRecord, SystemState
from leaderboard.store.schema import DELETED, HIDDEN
from leaderboard.store.store import Store

MAX_PROBLEMS = 100  # listed back to the submitter; the rest are counted


class SubmitStatus(StrEnum):
    """What a submission's outcome says: accepted, as the state its system was stored in, or why not."""

    SCORED = SystemState.SCORED.value
    QUEUED = SystemState.QUEUED.value
    DUPLICATE = "duplicate"
    REFUSED = "refused"
    RATE_LIMITED = "rate_limited"


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    """What the submitter is told. `status`: a `SubmitStatus`. `content_hash`: the submission's dedupe key, once it
    was computed (the audit log keeps it; the submitter is not told)."""

    status: str
    message: str
    system_id: int | None = None
    problems: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    file_sha256: str | None = None  # the uploaded bytes' hash, for the audit log (a run's key is its ranking's)
    audited: bool = False  # its audit row was written with what it stored, in the same transaction

    @property
    def accepted(self) -> bool:
        return self.status in (SubmitStatus.SCORED, SubmitStatus.QUEUED)

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
            lines += [f"| {escape_markdown(self.measure_name(m))} | {v:.3f} |" for m, v in average.items()]
        return "\n".join(lines)

    def measure_name(self, measure: str) -> str:
        """How the average table names a measure id (a retrieval measure: its display name)."""
        return parse_measure(measure).name

    def logged(self) -> str:
        """The audit log's detail: the message, the first problems and the uploaded file's hash, on one line."""
        uploaded = [f"file sha256 {self.file_sha256}"] if self.file_sha256 else []
        return "; ".join([self.message, *self.problems[:5], *uploaded]).replace("\n", " ")

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "system_id": self.system_id,
            "problems": list(self.problems),
            **self.details,
        }


def refused(message: str) -> SubmitOutcome:
    return SubmitOutcome(SubmitStatus.REFUSED, message)


def refused_with_problems(exc: ValidationError, what: str, label: str) -> SubmitOutcome:
    """A refusal listing the file's problems (the first `MAX_PROBLEMS`), each located in the file as uploaded."""
    problems = [str(dataclasses.replace(p, where=label)) for p in exc.problems[:MAX_PROBLEMS]]
    if len(exc.problems) > MAX_PROBLEMS:
        problems.append(f"... and {len(exc.problems) - MAX_PROBLEMS} more")
    return SubmitOutcome(
        SubmitStatus.REFUSED, f"{what} refused: {len(exc.problems)} problem(s)", problems=tuple(problems)
    )


def parse_refusal(exc: FreshStackError, what: str, label: str, path: str | Path) -> SubmitOutcome:
    """A strict parser's refusal of the file `what` `label`: every problem located in the file as uploaded, or the
    parser's message with the server's path replaced by the uploaded file's name."""
    if isinstance(exc, ValidationError):
        return refused_with_problems(exc, f"{what} {label}", label)
    return refused(str(exc).replace(str(path), label))


@dataclass(frozen=True, slots=True)
class Submitting:
    """Who the audit row of the submission being made names: the acting identity, the row's kind and, when the
    board acts by itself for a system's owner, that owner."""

    identity: str
    kind: str
    owner: str | None = None

    def entry(self, outcome: SubmitOutcome) -> AuditEntry:
        """The row of `outcome`, the owner named first when the board acted."""
        if self.owner is not None:
            return board_entry(self.kind.partition(":")[2], outcome.status, outcome.logged(), owner=self.owner)
        return AuditEntry(self.identity, self.kind, outcome.status, outcome.logged())


_SUBMITTING: ContextVar[Submitting | None] = ContextVar("submitting", default=None)  # the call `audited` wraps


def audited(what: str) -> Callable[[Callable[..., SubmitOutcome]], Callable[..., SubmitOutcome]]:
    """Mark a submitter's public submit method: each call's outcome becomes one audit row (`submit:<what>`), as
    the `identity` keyword it was given, with the outcome's content hash, system and message. A stored submission's
    row is written by the store in the transaction that stores it (`BaseSubmitter.add`); any other outcome's here.
    `board_act="remeasure"` (a keyword of every marked method) logs the call as `board:remeasure`, the board the
    actor and `identity` named as the system's owner."""

    def wrap(submit: Callable[..., SubmitOutcome]) -> Callable[..., SubmitOutcome]:
        @functools.wraps(submit)
        def logged(self: BaseSubmitter[Any], *args: Any, board_act: str | None = None, **options: Any) -> SubmitOutcome:
            identity = options.get("identity", "")
            if board_act is None:
                who = Submitting(identity, kind_of(SUBMISSION, what))
            else:
                who = Submitting(BOARD, kind_of(BOARD_ACTS, board_act), owner=identity)
            token = _SUBMITTING.set(who)
            try:
                outcome = submit(self, *args, **options)
            finally:
                _SUBMITTING.reset(token)
            POINTS.pause("submitted")
            if not outcome.audited:
                entry = who.entry(outcome)
                self.store.audit.append(
                    entry.identity,
                    entry.kind,
                    entry.outcome,
                    content_hash=outcome.content_hash,
                    system_id=outcome.system_id,
                    detail=entry.detail,
                )
            return outcome

        return logged

    return wrap


def logged_with(
    upload: Upload, told: Callable[[SystemRecord], SubmitOutcome]
) -> tuple[Callable[[SystemRecord], AuditEntry | None], Callable[[SystemRecord], SubmitOutcome]]:
    """(`audit`, `answer`) for `Store.add_system`: `audit` gives the audit row of the outcome `told` says of the
    stored system, inside the store's transaction (None outside an `@audited` call); `answer` is that outcome,
    marked as logged, once the store has returned."""
    who = _SUBMITTING.get()
    said: list[SubmitOutcome] = []

    def audit(system: SystemRecord) -> AuditEntry | None:
        if who is None:
            return None
        outcome = told(system)
        keyed = dataclasses.replace(
            outcome,
            content_hash=outcome.content_hash or upload.content_hash,
            file_sha256=outcome.file_sha256 or upload.file_sha256,
            audited=True,
        )
        said.append(keyed)
        return who.entry(keyed)

    def answer(system: SystemRecord) -> SubmitOutcome:
        return said[-1] if said else told(system)

    return audit, answer


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def identity_of(username: str | None, client_host: str | None) -> str:
    """Rate-limit identity: the signed-in user when OAuth is on, else the client address."""
    return f"user:{username}" if username else f"ip:{client_host or 'unknown'}"


def uploaded_size(path: str | Path | None, what: str, formats: str) -> int:
    """The size of the uploaded file (an `OSError` when it is not there); refused when no file came."""
    if path is None:
        raise FreshStackError(f"no {what} file: upload {formats}")
    return os.path.getsize(path)


def gzip_bomb(path: str | Path, what: str, max_file_bytes: int) -> SubmitOutcome | None:
    """Refuse a gzipped upload (`what`: answers) that expands past the cap times `GZIP_RATIO`, reading at most that
    much; None for a file that is not gzipped or stays within it."""
    if not str(path).endswith(".gz"):
        return None
    limit, total = max_file_bytes * GZIP_RATIO, 0
    try:
        with gzip.open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                total += len(block)
                if total > limit:
                    return refused(f"{what} file expands past {limit:,} bytes once decompressed")
    except (OSError, EOFError) as exc:
        return refused(f"{what} file is not a readable gzip file ({exc})")
    return None


@dataclass(frozen=True, slots=True)
class LiveWithheld:
    """A submission's live scoring withheld at the door (`BaseSubmitter.live_quota`): the live status its row
    records, which its job carries to the worker (`live_scores.DECIDED`, read by `worker.private_split`), and
    what its submitter is told."""

    record: dict[str, Any]
    told: str

    def payload(self) -> dict[str, Any]:
        """What the job's payload carries: the worker hands the job this status instead of the private split."""
        return {DECIDED: self.record}


@dataclass(kw_only=True)
class Upload:
    """What one submission's checks have learnt so far, handed from step to step: who sends it, and once known its
    dedupe key (`content_hash`) and the uploaded bytes' hash the audit log names (`file_sha256`: a run's, whose key
    is its parsed ranking's; a key made from the file's own hash names it already)."""

    identity: str
    content_hash: str | None = None
    file_sha256: str | None = None
    live_withheld: LiveWithheld | None = None  # its live score will not be measured (`BaseSubmitter.live_quota`)

    def live_payload(self) -> dict[str, Any]:
        """What its job's payload adds for the worker's live pass: the withheld status, or nothing."""
        return self.live_withheld.payload() if self.live_withheld else {}


U = TypeVar("U", bound=Upload)
Check = Callable[[U], SubmitOutcome | None]  # a step of a kind's list: None lets the submission through


class BaseSubmitter(Generic[U]):
    """One kind of upload for one dataset and one store: its checks in their order (`checks`), run by `checked`,
    and the steps the kinds share (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        dataset: Dataset,
        *,
        max_file_bytes: int = upload_bytes(MAX_UPLOAD_MB),
        rate_limit: int | None = RATE_LIMIT_PER_HOUR,
        live_per_week: int = LIVE_SCORES_PER_WEEK,
        resamples: int = RESAMPLES,
        scorer: Scorer = HERE,
    ) -> None:
        self.store, self.dataset = store, dataset
        self.max_file_bytes, self.rate_limit_per_hour, self.resamples = max_file_bytes, rate_limit, resamples
        self.live_per_week = live_per_week  # counted for a submission and the board's re-measuring alike
        self.scorer = scorer  # what scores an uploaded ranking: in this process, or a served board's child

    def checks(self) -> tuple[Check[U], ...]:
        """This kind's steps, in the one order they run; the last stores the submission and answers."""
        raise NotImplementedError

    def checked(self, upload: U) -> SubmitOutcome:
        """The outcome of `upload`: the first answer of `checks()`, run in order, with the keys known by then."""
        for check in self.checks():
            outcome = check(upload)
            if outcome is not None:
                return dataclasses.replace(
                    outcome,
                    content_hash=outcome.content_hash or upload.content_hash,
                    file_sha256=outcome.file_sha256 or upload.file_sha256,
                )
        raise AssertionError(f"{type(self).__name__}: the last of its checks stores the submission and answers")

    # ---- the steps every kind shares -----------------------------------------------------------------------------
    def dedupe(self, upload: U) -> SubmitOutcome | None:
        """The stored system of the upload's content hash: a duplicate, or refused when a moderator deleted it (its
        reason named); None when it is new."""
        assert upload.content_hash is not None, "a step before the dedupe keys the upload"
        found = self.store.find_system(upload.content_hash)
        if found is None:
            return None
        if found.moderation == DELETED:
            day = found.moderated_at.strftime("%Y-%m-%d") if found.moderated_at else "an earlier day"
            message = (
                f"refused: deleted from the board on {day} (system #{found.id}), reason: {found.moderation_reason}; "
                "the same content is not accepted again"
            )
            return SubmitOutcome(SubmitStatus.REFUSED, message, found.id)
        if found.moderation == HIDDEN:
            message = f"already submitted as system #{found.id}, which the moderators have hidden; not scored again"
        else:
            message = f"already submitted: see system #{found.id} '{found.name}' ({found.status}); not scored again"
        return SubmitOutcome(SubmitStatus.DUPLICATE, message, found.id)

    def rate_limit(self, upload: U) -> SubmitOutcome | None:
        """Count the upload against its identity's hourly limit; refused once the limit is reached."""
        if not self.rate_limit_per_hour or self.rate_limit_per_hour <= 0:
            return None
        decision = self.store.rate_limit.check(upload.identity, self.rate_limit_per_hour)
        if decision:
            return None
        wait = max(1, round(decision.retry_after_seconds / 60))
        message = f"rate limit: {decision.limit} submissions per hour; retry in {wait} min"
        return SubmitOutcome(SubmitStatus.RATE_LIMITED, message)

    def live_quota(self, upload: U) -> SubmitOutcome | None:
        """Count the upload against its identity's live scorings in the last 7 days (`live_per_week`, counted apart
        from its hourly submissions, under `live:<identity>`); it never refuses: past the quota (or with a quota of
        0) the upload's live score is withheld (`Upload.live_withheld`), and it is scored on the public questions
        as usual. Only the kinds a worker scores live list this step, after their rate limit, so a refused or
        duplicate submission spends nothing. The board's re-measuring (`board_act="remeasure"`) is counted the same
        way, against the owner the stored system names. A snapshot that holds no embargoed question counts nothing:
        no live scoring can happen there (`live_release.has_embargo`)."""
        if not self._live_scored:
            return None
        per_week = self.live_per_week
        if per_week > 0:
            decision = self.store.rate_limit.check(
                f"live:{upload.identity}", per_week, window_seconds=LIVE_WINDOW_SECONDS
            )
            if decision:
                return None
            told = (
                f"its live score will not be measured: {per_week} live scorings per 7 days per submitter are used "
                f"up; the next one from {_available_at(decision.retry_after_seconds)}"
            )
        else:
            told = "its live score will not be measured: this board scores no submission live"
        upload.live_withheld = LiveWithheld(status(quota_used_up(per_week)), told)
        return None

    @functools.cached_property
    def _live_scored(self) -> bool:
        return has_embargo(self.dataset)

    def told_live(self, upload: U, outcome: SubmitOutcome) -> SubmitOutcome:
        """`outcome` of a queued live-scored kind, with, where its live score was withheld, that it will not be
        measured, why, and when the submitter's next live scoring is available."""
        withheld = upload.live_withheld
        if withheld is None:
            return outcome
        details = {**outcome.details, "live": withheld.record["message"]}
        return dataclasses.replace(outcome, message=f"{outcome.message}; {withheld.told}", details=details)

    def within_cap(self, size: int, what: str) -> None:
        """Refuse an uploaded file (`what`) over the size cap."""
        if size > self.max_file_bytes:
            raise FreshStackError(f"{what} file is {size:,} bytes, over the {self.max_file_bytes:,}-byte cap")

    def add(
        self, upload: U, text: SubmissionText, kind: str, told: Callable[[SystemRecord], SubmitOutcome], **stored: Any
    ) -> SubmitOutcome:
        """`Store.add_system` under the upload's key and identity, with its sanitized name, description and link;
        the outcome `told` says of the stored system, its audit row written in the same transaction, or the
        duplicate's when the same content was stored meanwhile (`raced`)."""
        assert upload.content_hash is not None
        audit, answer = logged_with(upload, told)
        system, created = self.store.add_system(
            name=text.name,
            kind=kind,
            content_hash=upload.content_hash,
            description=text.description,
            link=text.link,
            identity=upload.identity,
            audit=audit,
            **stored,
        )
        return answer(system) if created else self.raced(upload, system)

    def raced(self, upload: U, system: SystemRecord) -> SubmitOutcome:
        """The outcome when the same content was stored by another submission while this one was checked."""
        return self.dedupe(upload) or SubmitOutcome(SubmitStatus.DUPLICATE, "already submitted", system.id)


def _available_at(seconds: float) -> str:
    """When a slot that frees in `seconds` is free, to the minute after (UTC), as the submitter is told it."""
    at = datetime.now(UTC) + timedelta(seconds=seconds)
    if at.second or at.microsecond:
        at = at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return at.strftime("%Y-%m-%d %H:%M UTC")
