"""`BaseSubmitter`: one kind of upload's checks in their one order, and the steps the kinds share.

Each kind of upload is one class that says what it submits (`tracks.retrieval.submissions.run_submit.RunSubmitter`,
`tracks.retrieval.submissions.model_submit.ModelSubmitter`, `tracks.reranking.rerank_submit.RerankedRunSubmitter` and
`RerankerSubmitter`, `tracks.answers.answer_submit.AnswerSubmitter`) and declares its checks as one ordered list,
`checks()`; the two model kinds share theirs (`tracks.retrieval.submissions.model_submitter.BaseModelSubmitter`).
`BaseSubmitter.checked` runs that list in its order, each step entered once, on the submission's `Upload` (what
the steps have learnt so far); the first step that answers gives the outcome, and the last one stores the
submission and says so. Nothing reorders a list: where a kind's dedupe needs what it parsed, its list says so by
where its steps stand. The order the lists share is told in the package's docstring (`leaderboard.submission`).

The store's unique content hash settles races between identical submissions arriving together (`raced`); a content
hash a moderator deleted stays in the store as a tombstone, so the same content is refused, naming the reason,
whichever dedupe meets it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Generic

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import LIVE_SCORES_PER_WEEK, MAX_UPLOAD_MB, RATE_LIMIT_PER_HOUR, upload_bytes
from leaderboard.live_release import has_embargo
from leaderboard.sanitize import SubmissionText
from leaderboard.scoring import HERE, Scorer
from leaderboard.store.records import SystemRecord
from leaderboard.store.schema import DELETED, HIDDEN
from leaderboard.store.store import Store
from leaderboard.submission.audited import logged_with
from leaderboard.submission.live_quota import live_withheld
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.submission.upload import Check, U


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
        if self._live_scored:
            upload.live_withheld = live_withheld(self.store, upload.identity, self.live_per_week)
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
