"""One submission as its checks see it: who sends it and what the steps have learnt so far, and the shape of a step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from leaderboard.submission.live_quota import LiveWithheld
from leaderboard.submission.outcome import SubmitOutcome


def identity_of(username: str | None, client_host: str | None) -> str:
    """Rate-limit identity: the signed-in user when OAuth is on, else the client address."""
    return f"user:{username}" if username else f"ip:{client_host or 'unknown'}"


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
