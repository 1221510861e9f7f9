"""The audit row of every submit call: `@audited` marks a submitter's public submit method, so each call, whatever its
outcome, appends one row to the store's audit log (`leaderboard.store.audit`).

A stored submission's row is written by the store in the transaction that stores it (`logged_with`, handed to
`Store.add_system`), so a kill never leaves one without the other; a refusal or a duplicate, which stores nothing,
gets its row here, in a transaction of its own. What the board submits by itself (`board_act="remeasure"`) is logged
as `board:<act>` with the board as the actor and the system's owner named."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from leaderboard.fault_points import POINTS
from leaderboard.store.audit import BOARD, BOARD_ACTS, SUBMISSION, AuditEntry, board_entry, kind_of
from leaderboard.store.records import SystemRecord
from leaderboard.store.store import Store
from leaderboard.submission.outcome import SubmitOutcome
from leaderboard.submission.upload import Upload


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


class StoresSubmissions(Protocol):
    """What `@audited` needs of the submitter it marks: the store the audit row goes to."""

    store: Store


_SUBMITTING: ContextVar[Submitting | None] = ContextVar("submitting", default=None)  # the call `audited` wraps


def audited(what: str) -> Callable[[Callable[..., SubmitOutcome]], Callable[..., SubmitOutcome]]:
    """Mark a submitter's public submit method: each call's outcome becomes one audit row (`submit:<what>`), as
    the `identity` keyword it was given, with the outcome's content hash, system and message. A stored submission's
    row is written by the store in the transaction that stores it (`BaseSubmitter.add`); any other outcome's here.
    `board_act="remeasure"` (a keyword of every marked method) logs the call as `board:remeasure`, the board the
    actor and `identity` named as the system's owner."""

    def wrap(submit: Callable[..., SubmitOutcome]) -> Callable[..., SubmitOutcome]:
        @functools.wraps(submit)
        def logged(self: StoresSubmissions, *args: Any, board_act: str | None = None, **options: Any) -> SubmitOutcome:
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
