"""The release rule of live values (`leaderboard.live_release`), worked by hand: under `hold` (the default) a measured
live record reaches no visitor, no number, interval or gap, until the embargo of its questions has ended and a
listed snapshot publishes them; under `open` it is shown at once. The board reads live values through the rule
only, and a board whose snapshot has no embargo has no live column at all."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from freshstack_hf.metrics import HEADLINE
from leaderboard.live_release import (
    HELD,
    HOLD,
    OPEN,
    LiveRelease,
    has_embargo,
    held_message,
    release_day,
    release_plan,
    shown,
)
from leaderboard.live_scores import NO_ACCESS, status, too_few
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval.tables import leaderboard_table, table_live

SNAPSHOT, UNTIL = "2025-10-31", "2025-12-30"  # a 60-day embargo
MEASURED = {
    "status": "measured",
    "snapshot": SNAPSHOT,
    "until": UNTIL,
    "questions": 12,
    "topics": {"alpha": 12},
    "measures": {m.id: {"value": 0.41, "ci_low": 0.3, "ci_high": 0.5} for m in HEADLINE},
}


def test_release_day_is_the_first_listed_snapshot_on_or_after_the_embargos_end():
    assert release_day(UNTIL, ["2025-10-31", "2025-12-29"]) == ""  # the day before it ends publishes nothing
    assert release_day(UNTIL, ["2025-10-31", "2026-01-31", "2025-12-30", "main"]) == "2025-12-30"


@pytest.mark.parametrize(
    ("today", "published", "released"),
    [
        ("2025-11-01", [SNAPSHOT], False),  # during the embargo
        ("2025-12-30", [SNAPSHOT], False),  # ended, but no snapshot publishes its questions yet
        ("2025-12-29", [SNAPSHOT, UNTIL], False),  # a snapshot dated ahead of today does not end it early
        ("2025-12-30", [SNAPSHOT, UNTIL], True),
        ("2026-02-02", [SNAPSHOT, "2026-01-31"], True),  # published by a later refresh
    ],
)
def test_hold_shows_a_measured_record_once_its_questions_are_published(today, published, released):
    got = shown(MEASURED, HOLD, published, today)
    if released:
        assert got == MEASURED
    else:
        assert got == {
            "status": HELD,
            "message": f"held until {UNTIL}: live values are shown once the embargoed questions are published",
            "snapshot": SNAPSHOT,
            "questions": 12,
        }
        assert not re.search(r"0\.\d", json.dumps(got))  # no value, interval or share of one
    assert shown(MEASURED, OPEN, published, today) == MEASURED  # open: at once, whatever the day


def test_hold_never_guesses_an_end_and_passes_statuses_without_a_number_through():
    no_end = {key: value for key, value in MEASURED.items() if key != "until"}
    assert shown(no_end, HOLD, [SNAPSHOT, "2030-01-01"], "2031-01-01")["status"] == HELD
    for record in (status(NO_ACCESS, SNAPSHOT), too_few(4, SNAPSHOT)):
        assert shown(record, HOLD, [SNAPSHOT], "2025-11-01") == record


def test_an_unknown_rule_is_refused_and_each_rule_says_what_a_visitor_sees():
    with pytest.raises(ValueError, match="unknown live release rule 'sometimes'"):
        LiveRelease("sometimes")
    assert "held until the embargo of their questions ends" in release_plan(HOLD)
    assert "read the embargoed questions' judgments back" in release_plan(OPEN)


def _store_with_live(store, revision: str) -> dict[str, int]:
    scores = {"alpha": {"metrics": {m.id: 0.5 for m in HEADLINE}}}

    def add(name: str, kind: str, **params) -> int:
        meta = ResultMeta(revision, parameters={"job": kind, **params})
        return store.add_system(name=name, kind=kind, content_hash=name, results=scores, meta=meta)[0].id

    return {"model": add("m", "model", live=MEASURED), "run": add("r", "run"), "baseline": add("b", "baseline")}


def test_a_held_row_shows_why_and_is_shown_the_day_its_embargo_ends_without_a_store_change(tmp_path):
    """A real SQLite store and the board's table source: the live columns hold the model's row (no number, the note
    says until when), and the same source, asked again on the day the embargo ends, shows its values: the day is
    part of what the table depends on, not only the store."""
    from leaderboard.store.store import Store

    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.create_all()
    ids = _store_with_live(store, "rev-1")
    day = ["2025-11-15"]
    release = LiveRelease(HOLD, published=lambda: [SNAPSHOT, UNTIL], today=lambda: day[0])
    board = leaderboard_table.BoardSource(store, ["alpha"], "rev-1", release)
    frame = board.frame().set_index("id")
    live, gap = table_live.live_column(HEADLINE[0]), table_live.gap_column(HEADLINE[0])
    model = str(ids["model"])
    assert frame.loc[model, live] != frame.loc[model, live]  # NaN: held
    assert frame.loc[model, gap] != frame.loc[model, gap]
    assert frame.loc[model, table_live.LIVE_NOTE].startswith(f"held until {UNTIL}")
    assert frame.loc[str(ids["run"]), table_live.LIVE_NOTE].startswith("an uploaded run cannot be scored live")
    day[0] = UNTIL
    released = board.frame().set_index("id")
    assert released.loc[model, live] == 0.41 and released.loc[model, gap] == round(0.41 - 0.5, 2)
    assert released.loc[model, table_live.LIVE_NOTE] == "95% CI 0.30–0.50 · 0.30–0.50 · 0.30–0.50 · 12 questions"
    assert list(leaderboard_table.BoardSource(store, ["alpha"], "rev-1").frame().columns) == [
        c for c in frame.reset_index().columns if c not in table_live.live_columns()
    ]  # no release (a snapshot with no embargo): no live column at all


@pytest.mark.slow
def test_has_embargo_reads_the_public_manifests_counts(tmp_path):
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import synth_topics

    plain, held = tmp_path / "plain", tmp_path / "held"
    write_topics(plain, synth_topics(["alpha"], queries=4, docs=40))
    summary = {"days": 60, "questions": 12, "until": UNTIL}
    write_topics(held, synth_topics(["alpha"], queries=4, docs=40), extra_manifest={"alpha": {"embargo": summary}})
    none = {"days": 60, "questions": 0, "until": ""}
    empty = tmp_path / "empty"
    write_topics(empty, synth_topics(["alpha"], queries=4, docs=40), extra_manifest={"alpha": {"embargo": none}})
    assert [has_embargo(Dataset(p)) for p in (plain, held, empty)] == [False, True, False]


def test_the_board_reads_live_values_through_the_release_rule_only():
    """Every module of the board that reads the store's live records goes through `LiveRelease.records`: a new
    reader that called `Store.live_scores` itself would show held values."""
    root = Path(__file__).resolve().parent.parent / "leaderboard"
    readers = sorted(
        path.relative_to(root.parent).as_posix()
        for path in root.rglob("*.py")
        if re.search(r"\.live_scores\(", path.read_text(encoding="utf-8"))
    )
    assert readers == ["leaderboard/live_release.py"]


def test_today_is_a_utc_date():
    from leaderboard.live_release import today_utc

    assert datetime.strptime(today_utc(), "%Y-%m-%d")


@pytest.mark.slow
def test_the_probe_benchs_adversary_reads_judgments_back_when_values_are_open_and_nothing_under_hold(
    tmp_path, monkeypatch
):
    """`python -m benchmarks probe`'s adversary is a real one: through the worker's `live_aggregates` and the
    release rule, with the values open it names most relevant documents of 12 embargoed questions, each truly
    relevant; under `hold` it names none, whatever it submits (fewer resamples than the worker's: the value, the
    only thing it reads, does not depend on them)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))  # the checkout's `benchmarks`
    from benchmarks.bench_probe import LiveBoard, private_topics, probe, scorings_allowed

    (topic,) = private_topics(tmp_path, {"twelve": 12})
    days = scorings_allowed(3)[:450]
    opened = LiveBoard(topic, OPEN, resamples=0)
    named = probe(opened, topic.pool, days)
    assert len(named & topic.relevant) >= 0.8 * len(topic.relevant) and named <= topic.relevant
    held = LiveBoard(topic, HOLD, resamples=0)
    assert probe(held, topic.pool, days) == set() and held.scorings == len(days)


def test_the_live_note_names_the_topics_a_live_value_left_out():
    """A topic under the floor of 10 embargoed questions is left out of the live value (the worker's `left_out`):
    the note says which, released or held."""
    from leaderboard.live_scores import too_few

    record = {**MEASURED, "left_out": {"beta": 3}}
    assert table_live.live_note(record).endswith("· 12 questions · left out (under 10 questions): beta (3)")
    held = shown(record, HOLD, [SNAPSHOT], "2025-11-01")
    assert table_live.live_note(held) == f"{held_message(UNTIL)} · left out (under 10 questions): beta (3)"
    assert table_live.live_note(too_few(3, SNAPSHOT, {"beta": 3})) == "too few questions (3 < 10): not shown"
