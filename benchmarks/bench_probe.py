"""A determined adversary against the live split: how many of the embargoed questions' relevant documents a
submitter reads back through the live values the board releases, under each release rule, and what the rule costs
an honest submitter.

The adversary is the one issue 45's review simulated. It owns `IDENTITIES` identities (free: a Hugging Face account
each, or a client address), each using its whole live quota (`LIVE_SCORES_PER_WEEK` scorings in any 7 days) for
the whole embargo (`EMBARGO_DAYS`). Each scoring is a "model" that ranks a chosen set of at most 50 documents first,
in the same order, for every question: the live Recall@50 then says how many relevant documents the set holds. Its
prior is the judged pool (the documents the public pipeline's pooling reproduces for the embargoed questions, which
are public on Stack Overflow; only which were kept, and the judgments, are secret). It splits every set whose value is
above zero in two, infers the second half from the first where the sums allow, and keeps the single documents that
score: adaptive group testing, read through the two-decimal value alone.

Every scoring goes through the path the worker and the board take: the worker's `live_scores.live_aggregates` on
the private revision (the measures, their 95% intervals with the worker's resamples, two decimals), then the board's
`live_release.shown` on the day it would be read, with the snapshots the board lists then (during the embargo, the
snapshot itself; the next refresh publishes on the day the embargo ends). What the adversary identifies is counted
while the embargo lasts: after it, the questions and their judgments are public anyway.

The embargoed questions are two synthetic topics (`freshstack_hf.samples.synth`, 12 and 30 questions: the review's two
cases) written as a private revision. The honest figure: a model submitted on a uniformly random day of the embargo,
whatever it improves by (0.02 or more), is shown within one week how often, under each rule.

Prints a table, judges the goal (fewer than 5% identified on both topics under the default rule) and records the
figures (`benchmarks.figures`: `python -m benchmarks probe` writes them with the date, the machine, the command and
the per-rule tables to `bench-out/probe.json`).
"""

from __future__ import annotations

import math
import random
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from benchmarks.figures import DETAIL, figure
from benchmarks.goals import judge
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.samples.synth import SynthConfig, synth_topic
from leaderboard.defaults import LIVE_RELEASE, LIVE_SCORES_PER_WEEK
from leaderboard.live_release import RULES, shown
from leaderboard.live_scores import MEASURED, live_aggregates

SNAPSHOT = "2025-10-31"
EMBARGO_DAYS = 60
IDENTITIES = 50
DEPTH = 50  # Recall@50: a set of at most 50 documents ranked first
MEASURE = "recall@50"
TOPICS = {"twelve": 12, "thirty": 30}  # embargoed questions per topic
DOCS = 3_000
GOAL = 0.05  # at most this share of the embargoed relevant documents identified under the default rule


def day(offset: int) -> str:
    return (date.fromisoformat(SNAPSHOT) + timedelta(days=offset)).isoformat()


UNTIL = day(EMBARGO_DAYS)


@dataclass
class Topic:
    """One embargoed topic: the private revision, the adversary's prior and the truth it is measured against."""

    name: str
    private: Dataset
    queries: list[str]
    pool: list[str]
    relevant: set[str]


def private_topics(root: Path, sizes: dict[str, int] = TOPICS) -> list[Topic]:
    made = []
    for seed, (name, count) in enumerate(sizes.items()):
        topic = synth_topic(name, SynthConfig(queries=count, docs=DOCS, seed=11 + seed, min_nuggets=2, max_nuggets=5))
        folder = root / name
        held = {"embargo": {"days": EMBARGO_DAYS, "snapshot": SNAPSHOT, "public_revision": SNAPSHOT}}
        source = {"kind": "synthetic", "note": "probe bench: embargoed questions"}
        write_topics(folder, [topic], source=source, extra_manifest={name: held})  # as a private revision's
        pool = sorted({j.doc_id for j in topic.judgments})
        relevant = {j.doc_id for j in topic.judgments if j.relevance > 0}
        made.append(Topic(name, Dataset(folder), [q.query_id for q in topic.queries], pool, relevant))
    return made


class LiveBoard:
    """What one scoring of a submitted ranking returns to its submitter: the worker's live record on the private
    revision, then the board's release rule on `today` (None: nothing shown)."""

    def __init__(self, topic: Topic, rule: str, resamples: int = RESAMPLES) -> None:
        self.topic, self.rule, self.resamples = topic, rule, resamples
        self.scorings = 0

    def submit(self, ranked: list[str], today: str) -> float | None:
        self.scorings += 1
        scores = {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}
        run = {query: dict(scores) for query in self.topic.queries}
        record = live_aggregates(self.topic.private, {self.topic.name: run}, SNAPSHOT, resamples=self.resamples)
        listed = [SNAPSHOT, UNTIL] if today >= UNTIL else [SNAPSHOT]
        seen = shown(record, self.rule, listed, today)
        if seen.get("status") != MEASURED:
            return None
        return float(seen["measures"][MEASURE]["value"])


def scorings_allowed(per_week: int) -> list[str]:
    """The day of each scoring the adversary may have: every identity uses its quota at the start of each 7-day
    window of the embargo (a sliding window allows no more)."""
    windows = math.ceil(EMBARGO_DAYS / 7)
    return [day(7 * w) for w in range(windows) for _ in range(per_week * IDENTITIES)]


def probe(board: LiveBoard, prior: list[str], days: list[str], seed: int = 0) -> set[str]:
    """Adaptive group testing through the released values (see the module docstring); returns the documents it
    names relevant. A value it cannot read (held) teaches it nothing, so it tries other groupings until its
    scorings are spent."""
    rng = random.Random(seed)
    found: set[str] = set()
    cleared: set[str] = set()  # in a set whose value read 0.00
    left = deque(days)
    queue: deque[tuple[list[str], bool | None]] = deque()

    def read(group: list[str]) -> float | None:
        return board.submit(group, left.popleft())

    while left:
        if not queue:
            rest = [doc for doc in prior if doc not in found and doc not in cleared]
            if not rest:
                break
            rng.shuffle(rest)
            queue.extend((rest[i : i + DEPTH], None) for i in range(0, len(rest), DEPTH))
        group, positive = queue.popleft()
        if positive is None:
            value = read(group)
            if value is None:
                continue
            positive = value > 0
            if not positive:
                cleared.update(group)
        if not positive:
            continue
        if len(group) == 1:
            found.add(group[0])
            continue
        half = len(group) // 2
        first, second = group[:half], group[half:]
        if not left:
            break
        value = read(first)
        if value is None:
            continue
        queue.append((first, value > 0))
        if value == 0:
            cleared.update(first)
        queue.append((second, True if value == 0 else None))  # the set scored and its first half did not
    return found


def honest_shown_within_a_week(rule: str) -> float:
    """The share of embargo days on which a model submitted that day has its live value shown within 7 days."""
    record = {"status": MEASURED, "snapshot": SNAPSHOT, "until": UNTIL, "questions": 12, "measures": {}}
    hits = 0
    for submitted in range(EMBARGO_DAYS):
        today = day(submitted + 7)
        listed = [SNAPSHOT, UNTIL] if today >= UNTIL else [SNAPSHOT]
        hits += shown(record, rule, listed, today).get("status") == MEASURED
    return hits / EMBARGO_DAYS


def run_rule(topics: list[Topic], rule: str, per_week: int) -> dict[str, Any]:
    days = scorings_allowed(per_week)
    figures: dict[str, Any] = {"honest_shown_within_a_week": honest_shown_within_a_week(rule), "topics": {}}
    for topic in topics:
        board = LiveBoard(topic, rule)
        start = time.perf_counter()
        named = probe(board, topic.pool, days)
        right = named & topic.relevant
        figures["topics"][topic.name] = {
            "questions": len(topic.queries),
            "relevant": len(topic.relevant),
            "pool": len(topic.pool),
            "scorings": board.scorings,
            "identified": len(right),
            "named": len(named),
            "share": len(right) / len(topic.relevant),
            "precision": len(right) / len(named) if named else None,
            "seconds": round(time.perf_counter() - start, 1),
        }
    return figures


def main() -> None:
    per_week = LIVE_SCORES_PER_WEEK
    with tempfile.TemporaryDirectory(prefix="freshstack-bench-probe-") as tmp:
        topics = private_topics(Path(tmp))
        results = {rule: run_rule(topics, rule, per_week) for rule in RULES}
    allowed = len(scorings_allowed(per_week))
    print(
        f"{IDENTITIES} identities x {per_week} live scorings a week x {EMBARGO_DAYS}-day embargo = {allowed} scorings "
        f"each ranking <= {DEPTH} chosen documents first; read: the released {MEASURE} (two decimals)"
    )
    header = f"{'rule':<16}{'topic':<8}{'questions':>10}{'relevant':>9}{'identified':>12}{'precision':>10}"
    print(header + f"{'scorings':>9}{'honest shown <= 7 d':>21}")
    for rule, figures in results.items():
        for name, f in figures["topics"].items():
            precision = "n/a" if f["precision"] is None else f"{f['precision']:.0%}"
            print(
                f"{rule + (' (default)' if rule == LIVE_RELEASE else ''):<16}{name:<8}{f['questions']:>10}"
                f"{f['relevant']:>9}{f['identified']:>6} ({f['share']:>3.0%}){precision:>10}{f['scorings']:>9}"
                f"{figures['honest_shown_within_a_week']:>20.0%}"
            )
    default = results[LIVE_RELEASE]["topics"]
    worst = max(f["share"] for f in default.values())
    verdict = judge(
        "probing the live split (default rule)", f"{worst:.1%} of relevant documents identified", f"< {GOAL:.0%}",
        worst < GOAL, "default_share",
    )  # fmt: skip
    print(f"default rule ({LIVE_RELEASE}): at most {worst:.1%} identified on either topic; {verdict}")
    for rule, result in results.items():
        honest = 100 * result["honest_shown_within_a_week"]
        figure(f"{rule}_honest_week", honest, "%", ".0f", f"embargo days whose honest model is shown in a week, {rule}")
        for name, f in result["topics"].items():
            key = f"{rule}_{name}"
            figure(f"{key}_identified", f["identified"], "", "d", f"relevant documents named, {name} topic, {rule}")
            figure(f"{key}_share", 100 * f["share"], "%", ".0f", f"share of the relevant documents named, {rule}")
            figure(f"{key}_scorings", f["scorings"], "scorings", ",d", f"scorings used, {name} topic, {rule}")
            if f["precision"] is not None:
                figure(f"{key}_precision", 100 * f["precision"], "%", ".0f", f"right among those named, {rule}")
    for name, f in results[LIVE_RELEASE]["topics"].items():
        figure(f"{name}_questions", f["questions"], "questions", "d", f"embargoed questions of the {name} topic")
        figure(f"{name}_relevant", f["relevant"], "", "d", f"their relevant documents, {name} topic")
    figure("scorings", allowed, "scorings", ",d", "scorings the adversary's identities may make in the embargo")
    DETAIL.update(
        setting={"identities": IDENTITIES, "per_week": per_week, "embargo_days": EMBARGO_DAYS, "depth": DEPTH},
        default_rule=LIVE_RELEASE,
        rules=results,
    )


if __name__ == "__main__":
    main()
