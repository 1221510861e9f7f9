"""Are the old questions still answerable on the new snapshot? The build's carry-over record, else the new judgments.

A question stays answerable when at least one of its nuggets is supported by a document of the new corpus (the
"Still Fresh?" criterion: 202 of 203 LangChain questions were, because their supporting documents migrated). The
new build records that per question in its manifest (`topics.T.carryover`, judged against the new corpus); where
a repo has no such record, the new repo's own nugget-level judgments of the old questions it still holds are the
next best evidence, and an old question absent from the new repo counts as not carried. The report always says
which source it used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf.topic import Topic

CARRYOVER = "manifest carryover"
JUDGMENTS = "new snapshot's judgments"


def answerability(old: Topic, new: Topic, new_entry: Mapping[str, Any]) -> dict[str, Any]:
    """Per old question its nuggets and supported nuggets on the new snapshot, the answerable share, the source."""
    old_ids = list(old.query_ids)
    carry = new_entry.get("carryover")
    if isinstance(carry, Mapping) and isinstance(carry.get("questions"), Mapping):
        source = CARRYOVER
        recorded = carry["questions"]
        questions = {
            q: {
                "nuggets": int(recorded[q].get("nuggets", 0)),
                "supported": int(recorded[q].get("supported", 0)),
                "carried": True,
            }
            if q in recorded
            else {"nuggets": len(old.query_nuggets.get(q, [])), "supported": 0, "carried": False}
            for q in old_ids
        }
        previous = carry.get("previous")
        migrations = list(carry.get("migrations", []))
    else:
        source, previous, migrations = JUDGMENTS, None, []
        questions = _from_judgments(old, new)
    answerable = [q for q, r in questions.items() if r["supported"] > 0]
    shares = [r["supported"] / r["nuggets"] if r["nuggets"] else 0.0 for r in questions.values()]
    return {
        "source": source,
        "previous": previous,
        "old_questions": len(old_ids),
        "answerable": len(answerable),
        "answerable_share": len(answerable) / len(old_ids) if old_ids else None,
        "mean_supported_nugget_share": sum(shares) / len(shares) if shares else None,
        "unanswerable": [q for q in old_ids if questions[q]["supported"] == 0],
        "migrations": migrations,
        "questions": questions,
    }


def _from_judgments(old: Topic, new: Topic) -> dict[str, dict[str, Any]]:
    """Support of each old question from the new repo's nugget-level judgments (0 when it is not in the new repo)."""
    in_new = set(new.query_ids)
    nugget_qrels = new.nugget_qrels
    out: dict[str, dict[str, Any]] = {}
    for q in old.query_ids:
        if q not in in_new:
            out[q] = {"nuggets": len(old.query_nuggets.get(q, [])), "supported": 0, "carried": False}
            continue
        nuggets = new.query_nuggets.get(q, [])
        supported = sum(1 for n in nuggets if any(v > 0 for v in nugget_qrels.get(n, {}).values()))
        out[q] = {"nuggets": len(nuggets), "supported": supported, "carried": True}
    return out


def snapshot_info(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A topic's `snapshot` record (date, commits per repository, ...) from its manifest entry, when the build wrote
    one."""
    snap = entry.get("snapshot")
    return dict(snap) if isinstance(snap, Mapping) else None
