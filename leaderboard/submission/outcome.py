"""What a submitter is told: the status of a submission, its outcome (the page's Markdown, the API's JSON, the audit
log's line), and the refusals the kinds share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.metrics import parse_measure
from leaderboard.sanitize import escape_markdown
from leaderboard.store.records import SystemState

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
