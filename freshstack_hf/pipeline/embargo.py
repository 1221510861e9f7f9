"""The embargo: a snapshot's newest questions kept out of its public revision, in a private repo, until they are old.

Every question a snapshot publishes can be trained on the day it is published. With `embargo_days: N` in a topic
definition (or in a refresh's definitions list), the questions asked within N days before a snapshot's date are
built like every other (pooled, judged, filtered), then written to the topic's `private_repo` (a local folder or a
private Hub dataset, dated revisions like the public repo) and never to the public revision. A question asked on
day A is embargoed at snapshot D iff D - N < A <= D, so its embargo ends on A + N: the first snapshot on or after
that day publishes it. Nothing is stored about "who was embargoed before": each snapshot builds every question
asked up to its date, so a released question is a carried one, judged against the new corpus through the
judgment memo and the response cache, and pays no call twice.

The public revision says how many questions are embargoed and until when (the manifest's `embargo`, the card, the
drift report), never which: no id or text of an embargoed question is written there, its build account counts the
public questions alone (`pipeline.public_account`), and "until when" is the snapshot's date plus the embargo's days,
the day every one of them is released by, not the newest one's own end, which would date that question. An error
about a private revision says how many problems it has and where, never what (the problems quote its ids).

This module is the date rule alone (`Embargo`, `embargo_of`), which the stages read; where a `private_repo` lies is
read with the definition (`config.embargo_settings.private_base`), the plan's account of an embargo is planning's
(`planning.embargo_plan`), and publishing the private revisions is the refresh's (`refresh.private_repos`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date as Date
from datetime import timedelta
from typing import Any

from freshstack_hf.pipeline.config.topic import TopicConfig

MIN_QUESTIONS = 10  # the fewest embargoed questions a live score averages over; a plan warns below it on either side


@dataclass(frozen=True)
class Embargo:
    """The embargo of one snapshot: `days` long, cut at the snapshot's `date`."""

    days: int
    date: str

    @property
    def start(self) -> str:
        """Questions asked after this day (exclusive) and up to `date` are embargoed."""
        return (Date.fromisoformat(self.date) - timedelta(days=self.days)).isoformat()

    def holds(self, asked: str) -> bool:
        return self.start < asked[:10] <= self.date

    def ends(self, asked: str) -> str:
        """The day the embargo of a question asked on `asked` ends: the first snapshot on or after it publishes it."""
        return (Date.fromisoformat(asked[:10]) + timedelta(days=self.days)).isoformat()

    @property
    def until(self) -> str:
        """The day every question of this snapshot's embargo is released by: the snapshot's date plus the days (a
        question asked on A <= date ends on A + days). What the public revision says, whatever the questions' dates."""
        return (Date.fromisoformat(self.date) + timedelta(days=self.days)).isoformat()

    def public_summary(self, asked: list[str]) -> dict[str, Any]:
        """What the public revision may say: the length, how many questions, until when; never which, nor when any
        one of them was asked."""
        return {"days": self.days, "questions": sum(1 for a in asked if self.holds(a)), "until": self.until}


def embargo_of(config: TopicConfig) -> Embargo | None:
    """The embargo of a dated snapshot's definition; none without `embargo_days` or without a snapshot date (a plain
    build has no date to count from: `runner.run_build` refuses one with `embargo_days`)."""
    if config.embargo_days <= 0 or not config.snapshot.date:
        return None
    return Embargo(config.embargo_days, config.snapshot.date)
