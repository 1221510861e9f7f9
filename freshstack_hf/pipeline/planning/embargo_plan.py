"""The plan's account of an embargo: how the questions a snapshot takes split between the public revision and the
private repo, until when, and what a maintainer should read before paying (`SnapshotPlan.embargo`)."""

from __future__ import annotations

from datetime import date as Date
from typing import Any

from freshstack_hf.pipeline.embargo import MIN_QUESTIONS, Embargo


def plan_notes(embargo: Embargo, asked: list[str], previous: str, private_repo: str) -> dict[str, Any]:
    """The plan's account of an embargo: how many of the questions taken (before filtering) go each way, until
    when, and the notes a maintainer should read before paying (an embargo longer than the time since the previous
    snapshot, too few questions on either side)."""
    summary = embargo.public_summary(asked)
    private, public = summary["questions"], len(asked) - summary["questions"]
    notes = []
    if previous:
        gap = (Date.fromisoformat(embargo.date) - Date.fromisoformat(previous)).days
        if embargo.days > gap:
            notes.append(
                f"the embargo ({embargo.days} days) is longer than the {gap} days since the previous snapshot "
                f"{previous}: allowed: questions stay private across more than one refresh"
            )
    for side, count in (("public", public), ("private", private)):
        if count < MIN_QUESTIONS:
            notes.append(
                f"the embargo leaves {count} {side} question{'s' if count != 1 else ''} (fewer than {MIN_QUESTIONS}, "
                "before filtering): "
                + (
                    "the public revision scores models on very few questions"
                    if side == "public"
                    else "too few for a live score (aggregates need at least 10)"
                )
            )
    return {**summary, "public": public, "start": embargo.start, "private_repo": private_repo, "notes": notes}
