"""The live quota: how many live scorings (on the embargoed questions) an identity gets in 7 days, counted apart
from its hourly submissions, and what a submission past it carries instead of a live score.

It never refuses: past the quota (or with a quota of 0) the submission is still queued and scored on the public
questions, and its job carries the live status that says why there is no live score (`LiveWithheld`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from leaderboard.defaults import LIVE_WINDOW_SECONDS
from leaderboard.live_scores import DECIDED, quota_used_up, status
from leaderboard.store.store import Store


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


def live_withheld(store: Store, identity: str, per_week: int) -> LiveWithheld | None:
    """Count one live scoring of `identity` (under `live:<identity>`) against `per_week`; None while the quota lets
    it through, else why its live score is withheld and when the next one is available."""
    if per_week > 0:
        decision = store.rate_limit.check(f"live:{identity}", per_week, window_seconds=LIVE_WINDOW_SECONDS)
        if decision:
            return None
        told = (
            f"its live score will not be measured: {per_week} live scorings per 7 days per submitter are used "
            f"up; the next one from {available_at(decision.retry_after_seconds)}"
        )
    else:
        told = "its live score will not be measured: this board scores no submission live"
    return LiveWithheld(status(quota_used_up(per_week)), told)


def available_at(seconds: float) -> str:
    """When a slot that frees in `seconds` is free, to the minute after (UTC), as the submitter is told it."""
    at = datetime.now(UTC) + timedelta(seconds=seconds)
    if at.second or at.microsecond:
        at = at.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return at.strftime("%Y-%m-%d %H:%M UTC")
