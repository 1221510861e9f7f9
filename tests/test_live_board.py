"""The board's live columns (`leaderboard_table.add_live_columns`): each row's live value, its gap to the public
average and a note, built from the records a worker stored (`Store.live_scores`), worked by hand here; a board no
worker scored live keeps its columns as they were."""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from freshstack_hf.metrics import HEADLINE
from leaderboard.live_scores import NO_ACCESS, UPLOADED_RUN, status, too_few
from leaderboard.page.display import display
from leaderboard.store.records import LeaderboardRow, Score, SystemRecord
from leaderboard.tracks.retrieval.tables import (
    leaderboard_table,
    table_columns,
    table_exports,
    table_filters,
    table_live,
)

TOPICS = ["alpha", "beta"]
ALPHA, COVERAGE, RECALL = HEADLINE


def row(system_id: int, kind: str, values: tuple[float, float]) -> LeaderboardRow:
    """A scored row whose every measure is `values` on (alpha, beta): its public average is their mean."""
    when = datetime(2025, 10, 31)
    system = SystemRecord(
        system_id, f"system {system_id}", kind, "", None, None, when, "me", str(system_id), "scored", None
    )
    scores = {t: {m.id: Score(v, None, None) for m in HEADLINE} for t, v in zip(TOPICS, values, strict=True)}
    return LeaderboardRow(system, scores, dataset_revision="r1")


def measured(value: float, questions: int = 12) -> dict:
    measures = {m.id: {"value": value, "ci_low": value - 0.1, "ci_high": value + 0.05} for m in HEADLINE}
    return {"status": "measured", "snapshot": "2025-10-31", "questions": questions, "measures": measures}


ROWS = [
    row(1, "model", (0.5, 0.3)),
    row(2, "model", (0.6, 0.6)),
    row(3, "run", (0.2, 0.4)),
    row(4, "baseline", (0.1, 0.1)),
]


def test_a_measured_row_shows_its_live_value_gap_and_intervals_and_the_others_say_why_not():
    live = {1: measured(0.31), 2: status(NO_ACCESS, "2025-10-31"), 3: status(UPLOADED_RUN)}
    frame = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1", live=live).set_index("id")
    for m in HEADLINE:
        assert frame.loc["1", table_live.live_column(m)] == 0.31
        assert frame.loc["1", table_live.gap_column(m)] == pytest.approx(-0.09)  # 0.31 - mean(0.5, 0.3)
        assert all(math.isnan(frame.loc[k, table_live.live_column(m)]) for k in ("2", "3", "4"))
        assert all(math.isnan(frame.loc[k, table_live.gap_column(m)]) for k in ("2", "3", "4"))
    assert frame.loc["1", table_live.LIVE_NOTE] == "95% CI 0.21–0.36 · 0.21–0.36 · 0.21–0.36 · 12 questions"
    assert frame.loc["2", table_live.LIVE_NOTE] == "not measured: no access to the private split"
    assert frame.loc["3", table_live.LIVE_NOTE] == "an uploaded run cannot be scored live: its queries are private"
    assert frame.loc["4", table_live.LIVE_NOTE] == ""  # a baseline has no record


def test_the_live_columns_sit_after_the_measures_show_two_decimals_signed_gaps_and_are_never_bold():
    frame = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1", live={1: measured(0.31), 2: measured(0.72, 10)})
    view = table_filters.Filters(sort=table_live.live_column(ALPHA)).rows(frame)
    assert list(view["id"][:2]) == ["2", "1"]  # sorted on the live column: 0.72 first
    columns = list(view.columns)
    first_live = columns.index(table_live.live_column(ALPHA))
    assert (
        columns[first_live - 1] == table_columns.column("beta", RECALL)
        and columns[first_live : first_live + 7] == table_live.live_columns()
    )
    shown = display(view)
    headers, cells, styles = shown["headers"], shown["metadata"]["display_value"], shown["metadata"]["styling"]
    live, gap = headers.index(table_live.live_column(ALPHA)), headers.index(table_live.gap_column(ALPHA))
    assert [r[live] for r in cells[:2]] == ["0.72", "0.31"] and [r[gap] for r in cells[:2]] == ["+0.12", "-0.09"]
    assert all(r[live] == "" and r[gap] == "" for r in cells[2:])
    assert all(s[live] == s[gap] == "" for s in styles)  # never bold


def test_too_few_questions_show_no_number_and_only_uploaded_runs_add_no_columns():
    frame = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1", live={1: too_few(4, "2025-10-31")})
    assert frame.set_index("id").loc["1", table_live.LIVE_NOTE] == "too few questions (4 < 10): not shown"
    assert frame[table_live.live_column(ALPHA)].isna().all()
    plain = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1")
    only_runs = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1", live={3: status(UPLOADED_RUN)})
    assert list(only_runs.columns) == list(plain.columns) and table_live.LIVE_NOTE not in plain.columns


def test_the_downloads_carry_the_live_columns(tmp_path):
    import json

    frame = leaderboard_table.build_frame(ROWS, TOPICS, revision="r1", live={1: measured(0.31)})
    csv_path, json_path = table_exports.export_files(table_filters.Filters().rows(frame), tmp_path)
    header = csv_path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert set(table_live.live_columns()) <= set(header)
    rows = {r["id"]: r for r in json.loads(json_path.read_text(encoding="utf-8"))["rows"]}
    assert rows["1"][table_live.live_column(COVERAGE)] == 0.31 and rows["1"][table_live.gap_column(COVERAGE)] == -0.09
    assert rows["4"][table_live.live_column(COVERAGE)] is None
