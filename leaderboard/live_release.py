"""The release rule: when the board may show a live value a worker measured on a snapshot's embargoed questions.

A live value is feedback about questions nobody may see yet, and feedback can be read back. A submitter who keeps
sending crafted "models" (each ranks a chosen set of documents first for every question) and reads the live
Recall@50 learns, one submission at a time, which documents the hidden judgments count as relevant: many free
identities times a weekly quota are enough to recover most of them within one embargo (`python -m benchmarks
probe` plays that submitter through the worker's own `live_aggregates` and this module). Two decimals and a
per-submitter quota do not stop it: limiting "the bit precision of answers and the rate of re-submission" are the
heuristics Blum and Hardt show failing against an adaptive analyst (the Ladder, ICML 2015).

So the board shows live values by a rule, the operator's choice (`freshstack-hf leaderboard --live-release`):

* `hold` (the default): a live value is measured when the model is scored (the model pinned as the board accepted
  it), kept in the store, and shown once the embargo of the questions it was measured on has ended: from the day
  `until` the worker recorded (the snapshot's date plus the embargo's days), as soon as the board lists a snapshot
  dated on or after that day, which publishes those questions. Until then the row says "held until DATE" and shows
  no value, interval or gap. The guarantee: while the questions are private, nothing measured on them reaches a
  visitor, so probing learns nothing of them (a held row tells that its model was measured, and the question count
  the public revision already states). Nor is a held value worth less when it appears: the model was fixed before
  the questions were public. The cost: a model submitted on day t of an N-day embargo waits N - t days for it.
* `open`: each live value is shown as soon as it is measured, two decimals and intervals, the behaviour before this
  rule. The board's start and its About tab say what a probing submitter can then learn (`release_plan`).

The rule applies at one place: `LiveRelease.records` is the only reader of the store's live records
(`Store.live_scores`) the board has, and the Leaderboard and Reranking tables, the Over time view and every
download made from them read through it. A board whose snapshot holds no embargoed question reads none
(`has_embargo`): it shows no live column at all.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import is_date
from leaderboard.defaults import LIVE_RELEASE, LIVE_RELEASES
from leaderboard.live_scores import MEASURED

RULES = LIVE_RELEASES
HOLD, OPEN = RULES
DEFAULT_RULE = LIVE_RELEASE  # hold
HELD = "held"  # the status a measured record is shown with while its rule holds it


def release_plan(rule: str) -> str:
    """What the board's start and its About tab say of `rule`: what a visitor sees when, and, for `open`, what a
    probing submitter can learn."""
    if rule == OPEN:
        return (
            "shown as soon as a worker measures them (--live-release open): a submitter with several identities "
            "can read the embargoed questions' judgments back through crafted models, one live score at a time "
            "(`python -m benchmarks probe` measures how many); the default, hold, shows them once the embargo ends"
        )
    return (
        "held until the embargo of their questions ends (--live-release hold), then shown: while the questions are "
        "private no live number, interval or gap reaches anyone, so crafted models learn nothing of them"
    )


def today_utc() -> str:
    return datetime.now(UTC).date().isoformat()


def release_day(until: str, published: Sequence[str]) -> str:
    """The first listed snapshot dated on or after `until` (the one that publishes the questions embargoed until
    then), "" while there is none."""
    return min((name for name in published if is_date(name) and name >= until), default="")


def held_message(until: str) -> str:
    if not until:
        return "held until the embargo of its questions ends"
    return f"held until {until}: live values are shown once the embargoed questions are published"


def shown(record: Mapping[str, Any], rule: str, published: Sequence[str], today: str) -> dict[str, Any]:
    """What a visitor may see of one stored live record under `rule`: the record itself, or while it is held, a
    `HELD` record that carries no number (its snapshot, its question count and why it is held).

    A record without `until` (measured before workers recorded one) is held for good under `hold`: the day its
    questions become public is not known, and the rule never guesses it."""
    if rule == OPEN or record.get("status") != MEASURED:
        return dict(record)
    until = str(record.get("until") or "")
    if until and is_date(until) and today >= until and release_day(until, published):
        return dict(record)
    held = {"status": HELD, "message": held_message(until), "snapshot": str(record.get("snapshot") or "")}
    for key in ("questions", "left_out"):  # counts the public revision states anyway: no value of a measure
        if record.get(key):
            held[key] = record[key]
    return held


def has_embargo(dataset: Dataset) -> bool:
    """Whether a served snapshot holds embargoed questions (its public manifest's per-topic `embargo` count): a board
    whose snapshot holds none has no live value to show, and no live column."""
    try:
        topics = read_manifest(Path(dataset.folder)).get("topics") or {}
    except (OSError, ValueError):
        return False
    return any(int((entry.get("embargo") or {}).get("questions") or 0) > 0 for entry in topics.values())


@dataclass(frozen=True)
class LiveRelease:
    """The board's rule and what it depends on besides the store: the dated snapshots the board lists (`published`,
    asked at each read, so a board that learns a new snapshot releases what it publishes) and the day."""

    rule: str = DEFAULT_RULE
    published: Callable[[], Sequence[str]] = field(default=tuple)
    today: Callable[[], str] = field(default=today_utc)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown live release rule {self.rule!r}: use one of {', '.join(RULES)}")

    def marker(self) -> Hashable:
        """What a table built from `records` depends on besides the store: the day and the listed snapshots, so a
        table held yesterday is built again today (`StoreFrame`'s extra marker)."""
        return (self.today(), tuple(self.published()))

    def records(self, store: Any, revision: str | None) -> dict[int, dict[str, Any]]:
        """{system id: its live record as the rule shows it} of the systems scored on `revision`: the board's one
        read of live values."""
        published, today = tuple(self.published()), self.today()
        return {sid: shown(record, self.rule, published, today) for sid, record in store.live_scores(revision).items()}
