"""The leaderboard table as plain functions: rows, averages, filters, sorting, bold best, deep links, exports.

No Gradio and no database here: rows are built from the store's records directly, so every rule of the table
(average only over all topics, stale revisions hidden, blanks last, markup never rendered) is checked alone.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from board_rows import A10, C20, TOPICS, row

from leaderboard.page import display
from leaderboard.page.display import format_size
from leaderboard.tracks.retrieval.tables import (
    deep_links,
    leaderboard_table,
    table_columns,
    table_efficiency,
    table_exports,
    table_filters,
)
from leaderboard.tracks.retrieval.views import plots
from leaderboard.tracks.retrieval.views.published import parse_size


@pytest.fixture
def store(store_on_each_backend):
    """Every test here runs twice: on a SQLite file and on PostgreSQL (conftest.py's `store` is SQLite only)."""
    return store_on_each_backend


@pytest.fixture
def frame() -> pd.DataFrame:
    rows = [
        row(1, "BM25", {"alpha": 0.30, "beta": 0.20}, "baseline"),
        row(2, "Dense <b>MiniLM</b>", {"alpha": 0.40, "beta": 0.0}, "baseline", size=22_700_000),
        row(3, "only alpha", {"alpha": 0.90}),
        row(4, "old revision", {"alpha": 0.99, "beta": 0.99}, revision="rev0"),
        row(5, "big model", {"alpha": 0.50, "beta": 0.40}, "model", size=7_000_000_000, link="https://x.org/a_(b)"),
        row(6, "queued model", {}, "model", status="queued"),
    ]
    return leaderboard_table.build_frame(rows, TOPICS, revision="rev1")


def test_rows_columns_and_average_is_the_plain_mean_over_every_topic(frame):
    assert list(frame["id"]) == ["1", "2", "3", "5", "6"]  # the stale revision is left out
    view = table_filters.view_frame(frame)
    assert list(view.columns[:3]) == ["id", "system", "type"]
    assert list(view.columns[3:6]) == ["average α-nDCG@10", "average Coverage@20", "average Recall@50"]
    assert list(view.columns[-3:]) == ["size", "date", "link"]
    by_id = frame.set_index("id")
    assert by_id.at["1", "average α-nDCG@10"] == pytest.approx(0.25)
    assert by_id.at["5", "average Recall@50"] == pytest.approx((0.5 / 3 + 0.4 / 3) / 2)
    assert math.isnan(by_id.at["3", "average α-nDCG@10"])  # missing beta: no average
    assert by_id.at["3", "alpha α-nDCG@10"] == 0.9
    assert by_id.at["6", "type"] == "submitted model (queued)"
    assert by_id.at["2", "date"] == "2025-03-03"


def test_default_sort_is_average_alpha_ndcg_descending_with_blanks_last(frame):
    view = display.sort_frame(table_filters.view_frame(frame), table_columns.default_sort())
    assert list(view["id"]) == ["5", "1", "2", "3", "6"]
    ascending = display.sort_frame(view, table_columns.default_sort(), descending=False)
    assert list(ascending["id"]) == ["2", "1", "5", "3", "6"]
    assert display.sort_frame(view, "system", descending=False)["system"].iloc[0] == "BM25"


def test_search_type_and_size_filters(frame):
    assert list(table_filters.filter_frame(frame, search="  MODEL ")["id"]) == ["5", "6"]
    assert list(table_filters.filter_frame(frame, types=["baseline"])["id"]) == ["1", "2"]
    assert list(table_filters.filter_frame(frame, sizes=["1B–10B"])["id"]) == ["5"]
    assert list(table_filters.filter_frame(frame, sizes=["unknown"], types=["run", "model"])["id"]) == ["3", "6"]
    assert table_filters.filter_frame(frame, types=[]).empty
    assert table_filters.size_bucket(99_999_999) == "< 100M" and table_filters.size_bucket(1e9) == "1B–10B"
    assert table_filters.size_bucket(None) == table_filters.size_bucket(float("nan")) == "unknown"


def test_display_bolds_the_best_of_each_column_and_keeps_names_as_plain_text(frame):
    view = table_filters.view_frame(frame)
    assert display.best_values(view)["alpha α-nDCG@10"] == 0.9
    value = display.display(view)
    assert value["headers"] == list(view.columns)
    shown = dict(zip(view["id"], value["metadata"]["display_value"], strict=True))
    raw = dict(zip(view["id"], value["data"], strict=True))
    col = {name: i for i, name in enumerate(view.columns)}
    assert shown["3"][col["alpha α-nDCG@10"]] == "0.900" and raw["3"][col["alpha α-nDCG@10"]] == 0.9
    assert shown["3"][col["average α-nDCG@10"]] == "" and raw["3"][col["average α-nDCG@10"]] is None
    assert (shown["2"][col["size"]], shown["5"][col["size"]], shown["1"][col["size"]]) == ("22.7M", "7B", "")
    assert shown["2"][col["system"]] == "Dense <b>MiniLM</b>"  # a plain "str" cell: shown as text, never HTML
    types = dict(zip(view.columns, display.datatypes(view), strict=True))
    assert types["system"] == "str" and types["link"] == "markdown" and types["average α-nDCG@10"] == "number"
    assert frame.set_index("id").at["5", "link"] == "[x\\.org](https://x.org/a_%28b%29)"
    empty = display.display(view.iloc[0:0])
    assert empty["data"] == [] and empty["metadata"] is None


def test_bold_marks_the_best_cell_of_each_metric_column():
    rows = [row(1, "a", {"alpha": 0.2, "beta": 0.2}), row(2, "b", {"alpha": 0.1, "beta": 0.4})]
    view = table_filters.view_frame(leaderboard_table.build_frame(rows, TOPICS))
    styling = display.display(view)["metadata"]["styling"]
    bold = {(r, c) for r, cells in enumerate(styling) for c, s in enumerate(cells) if s == "font-weight: bold"}
    assert len(bold) == 9  # 3 average + 6 topic columns, one best each
    assert {(1, 3), (0, 6), (1, 9)} <= bold and (0, 3) not in bold
    tied = table_filters.view_frame(
        leaderboard_table.build_frame(
            [row(1, "a", {"alpha": 0.2, "beta": 0.2}), row(2, "b", {"alpha": 0.2, "beta": 0.2})], TOPICS
        )
    )
    assert all(s == "font-weight: bold" for r in display.display(tied)["metadata"]["styling"] for s in r[3:12])
    top = display.display(view, rows=1)  # a first paint: one row sent, bold still judged on every row
    assert len(top["data"]) == 1 and top["metadata"]["styling"] == styling[:1]
    assert top["metadata"]["styling"][0][3] == ""  # a's average (0.2) is not bold: b's (0.25), not sent, is higher


def test_topic_view_keeps_only_that_topics_columns(frame):
    view = table_filters.view_frame(frame, "beta")
    assert [c for c in view.columns if "@" in c] == ["beta α-nDCG@10", "beta Coverage@20", "beta Recall@50"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, (None, "average α-nDCG@10", True, "")),
        ({"topic": "beta"}, ("beta", "beta α-nDCG@10", True, "")),
        ({"topic": "Beta", "sort": "coverage@20"}, ("beta", "beta Coverage@20", True, "")),
        ({"sort": "Recall@50", "order": "asc"}, (None, "average Recall@50", False, "")),
        ({"sort": "alpha:alpha-nDCG@10"}, (None, "alpha α-nDCG@10", True, "")),
        ({"sort": "name"}, (None, "system", False, "")),
        ({"sort": "size"}, (None, "size", True, "")),
        ({"topic": "nope"}, (None, "average α-nDCG@10", True, "unknown topic 'nope'; showing all topics")),
        ({"topic": "langchain"}, (None, "average α-nDCG@10", True, "unknown topic 'langchain'")),  # in neither
        ({"sort": "ndcg@10"}, (None, "average α-nDCG@10", True, "unknown sort 'ndcg@10'; sorted by average α-nDCG@10")),
        ({"topic": "alpha", "sort": "beta:recall@50"}, ("alpha", "alpha α-nDCG@10", True, "unknown sort")),
    ],
)
def test_deep_links(params, expected):
    view = deep_links.parse_view(params, TOPICS)
    assert (view.topic, view.sort, view.descending) == expected[:3]
    assert view.notice.startswith(expected[3])


def test_exports_hold_the_rows_shown_at_full_precision(frame, tmp_path):
    view = display.sort_frame(
        table_filters.view_frame(table_filters.filter_frame(frame, types=["baseline", "model"])),
        table_columns.default_sort(),
    )
    csv_path, json_path = table_exports.export_files(view, tmp_path)
    assert csv_path.suffix == ".csv" and json_path.suffix == ".json"
    back = pd.read_csv(csv_path, dtype={"id": str})
    assert list(back["id"]) == ["5", "1", "2", "6"]
    assert back.loc[0, "link"] == "https://x.org/a_(b)"
    data = json.loads(json_path.read_text())
    assert data["rows"][1]["average α-nDCG@10"] == pytest.approx(0.25, abs=0)
    assert data["rows"][3]["average α-nDCG@10"] is None
    assert "α-nDCG@10" in data["measures"]
    assert table_exports.export_files(view, tmp_path) == (csv_path, json_path)  # same rows, same files
    formula = table_filters.view_frame(leaderboard_table.build_frame([row(9, "=HYPERLINK(1)", {"alpha": 0.1})], TOPICS))
    csv_path, json_path = table_exports.export_files(formula, tmp_path)
    assert "'=HYPERLINK(1)" in csv_path.read_text() and '"=HYPERLINK(1)"' in json_path.read_text()


def test_sizes_parse_and_format():
    assert [parse_size(s) for s in ("9B", "434M", "1.5B", "-", "", "47m", None)] == [
        9_000_000_000,
        434_000_000,
        1_500_000_000,
        None,
        None,
        47_000_000,
        None,
    ]
    assert [format_size(s) for s in (22_713_216, 9e9, 1.5e9, 434e6, None, float("nan"))] == [
        "22.7M",
        "9B",
        "1.5B",
        "434M",
        "",
        "",
    ]


def test_plots_data(frame):
    points, caption = plots.size_scatter(frame, "alpha_ndcg@10")
    assert list(points["system"]) == ["Dense <b>MiniLM</b>", "big model"]
    assert points["parameters"].tolist() == ["22.7M", "7B"]  # as people write sizes, never log10 units
    assert plots.size_order(points) == ["22.7M", "7B"]  # the x axis, smallest first
    assert "BM25" in caption and "only alpha" not in caption  # no average: not a point at all
    bars = plots.topic_bars(frame, ["1", "3"], "coverage@20")
    assert bars[["topic", "value"]].values.tolist() == [
        ["alpha", 0.15],
        ["alpha", 0.45],
        ["beta", 0.1],
        ["average", 0.125],
    ]
    assert plots.default_selection(frame, 2) == ["5", "1"]
    with pytest.raises(ValueError):
        plots.size_scatter(frame, "ndcg@10")


def test_board_source_rebuilds_only_when_the_store_changes():
    class FakeStore:
        reads, marker = 0, (1,)

        def change_marker(self):
            return self.marker

        def leaderboard_rows(self, measures=None, efficiency=False):
            assert measures == ("alpha_ndcg@10", "coverage@20", "recall@50") and efficiency
            self.reads += 1
            return [row(1, "BM25", {"alpha": 0.3, "beta": 0.2}, "baseline")]

        def live_scores(self, revision=None):
            assert revision == "rev1"  # the live records of the served revision, read in the same rebuild
            return {}

    fake = FakeStore()
    board = leaderboard_table.BoardSource(fake, TOPICS, "rev1")
    first = board.frame()
    assert board.frame() is first and fake.reads == 1
    fake.marker = (2,)  # e.g. a worker stored a result
    second = board.frame()
    assert second is not first and fake.reads == 2
    board.invalidate()
    assert board.frame() is not second and fake.reads == 3


def test_the_store_marker_and_headline_read_on_both_backends(store):
    from leaderboard.store.records import ResultMeta

    marks = [store.change_marker()]
    scores = {"metrics": {A10: 0.5, C20: 0.4, "ndcg@10": 0.3}, "per_query": {"q": {A10: 0.5}}}
    run, _ = store.add_system(
        name="r", kind="run", content_hash="h-run", results={"alpha": scores}, meta=ResultMeta("rev1")
    )
    marks.append(store.change_marker())
    store.add_system(name="m", kind="model", content_hash="h-model", job=("model", {"model": "o/m"}))
    marks.append(store.change_marker())
    job = store.queue.claim_job("w1")
    marks.append(store.change_marker())  # a state change only: the job's updated_at moves
    store.queue.fail_job(job.id, "w1", "broken")
    marks.append(store.change_marker())
    assert len(set(marks)) == len(marks)
    assert store.change_marker() == marks[-1]  # nothing written: the same marker, the cached board is reused
    (row,) = [r for r in store.leaderboard_rows(measures=(A10, C20)) if r.system.id == run.id]
    assert set(row.scores["alpha"]) == {A10, C20}


COST = {  # as `efficiency.EfficiencyMeter.report` records it for a model row
    "docs_per_second": 1234.56,
    "docs_encoded": 600,
    "query_latency_ms": 4.25,
    "embedding_dim": 384,
    "index_bytes": 600 * 384 * 4,
    "hardware": "GPU: NVIDIA H100 80GB HBM3",
}


def test_efficiency_columns_show_what_the_worker_measured_and_are_blank_elsewhere():
    measured = row(1, "minilm", {"alpha": 0.3, "beta": 0.2}, "model")
    rows = [
        type(measured)(measured.system, measured.scores, "0.1.0", "rev1", COST),
        row(2, "a run", {"alpha": 0.4, "beta": 0.1}),
        type(measured)(row(3, "odd", {"alpha": 0.1}, "model").system, {}, efficiency={"embedding_dim": "x"}),
    ]
    frame = leaderboard_table.build_frame(rows, TOPICS, revision="rev1")
    view = table_filters.view_frame(frame)
    efficiency = table_efficiency.EFFICIENCY_COLUMNS
    assert list(view.columns[-8:]) == [*efficiency, "size", "date", "link"]  # after the measures
    by_id = frame.set_index("id")
    assert by_id.at["1", "docs/s"] == 1234.56 and by_id.at["1", "index MB"] == pytest.approx(0.9216)
    assert (by_id.at["1", "dim"], by_id.at["1", "hardware"]) == (384, "GPU: NVIDIA H100 80GB HBM3")
    assert by_id.loc[["2", "3"], table_efficiency.EFFICIENCY_COLUMNS].isna().all().all()  # a run, and a nonsense figure
    value = display.display(display.sort_frame(view, table_columns.default_sort()))
    shown = {r[0]: r for r in value["metadata"]["display_value"]}
    at = {name: i for i, name in enumerate(value["headers"])}
    model = [shown["1"][at[c]] for c in table_efficiency.EFFICIENCY_COLUMNS]
    assert model == ["1,234.6", "4.2", "384", "0.9", "GPU: NVIDIA H100 80GB HBM3"]
    assert [shown["2"][at[c]] for c in table_efficiency.EFFICIENCY_COLUMNS] == [""] * 5
    assert all("bold" not in s for r in value["metadata"]["styling"] for s in r[at["docs/s"] : at["hardware"]])
    types = dict(zip(view.columns, display.datatypes(view), strict=True))
    assert [types[c] for c in table_efficiency.EFFICIENCY_COLUMNS] == ["number"] * 4 + ["str"]
    assert table_filters.shown_rows(frame, sort="docs/s")["id"].iloc[0] == "1"  # a sort choice and a deep-link sort
    assert (
        "docs/s" in table_filters.sort_choices(TOPICS)
        and deep_links.parse_view({"sort": "docs/s"}, TOPICS).sort == "docs/s"
    )


def test_exports_carry_the_efficiency_columns(tmp_path):
    measured = row(1, "minilm", {"alpha": 0.3, "beta": 0.2}, "model")
    rows = [type(measured)(measured.system, measured.scores, "0.1.0", "rev1", COST), row(2, "r", {"alpha": 0.1})]
    csv_path, json_path = table_exports.export_files(
        table_filters.view_frame(leaderboard_table.build_frame(rows, TOPICS)), tmp_path
    )
    back = pd.read_csv(csv_path, dtype={"id": str}).set_index("id")
    assert back.at["1", "docs/s"] == 1234.56 and back.at["1", "hardware"] == COST["hardware"]
    assert math.isnan(back.at["2", "docs/s"])
    exported = {r["id"]: r for r in json.loads(json_path.read_text())["rows"]}
    assert exported["1"]["query ms"] == 4.25 and exported["2"]["hardware"] is None


def test_the_store_reads_efficiency_only_when_asked_on_both_backends(store):
    from leaderboard.store.records import ResultMeta

    scores = {t: {"metrics": {A10: 0.5, C20: 0.4}} for t in TOPICS}
    model, _ = store.add_system(
        name="m",
        kind="model",
        content_hash="m",
        results=scores,
        meta=ResultMeta("rev1", parameters={"efficiency": COST}),
    )
    run, _ = store.add_system(  # a run's parameters never put figures on the board, whatever they say
        name="r", kind="run", content_hash="r", results=scores, meta=ResultMeta("rev1", parameters={"efficiency": COST})
    )
    plain, _ = store.add_system(name="p", kind="model", content_hash="p", results=scores, meta=ResultMeta("rev1"))
    rows = {r.system.id: r for r in store.leaderboard_rows(measures=(A10,), efficiency=True)}
    assert rows[model.id].efficiency == COST
    assert rows[run.id].efficiency is None and rows[plain.id].efficiency is None
    assert all(r.efficiency is None for r in store.leaderboard_rows(measures=(A10,)))
    frame = leaderboard_table.BoardSource(store, TOPICS, "rev1").frame().set_index("id")
    assert frame.at[str(model.id), "hardware"] == COST["hardware"] and frame.at[str(model.id), "dim"] == 384


def test_speed_plot_data_and_its_log_scale_chart():
    from leaderboard.tracks.retrieval.views.speed_chart import speed_chart

    def measured(sid, name, value, speed, hardware):
        base = row(sid, name, {"alpha": value, "beta": value}, "model")
        cost = COST | {"docs_per_second": speed, "hardware": hardware}
        return type(base)(base.system, base.scores, "0.1.0", "rev1", cost)

    rows = [
        measured(1, "fast", 0.2, 5000.0, "GPU: NVIDIA H100 80GB HBM3"),
        measured(2, "slow", 0.6, 8.5, "CPU: AMD EPYC 7B13 64-Core Processor"),
        type(row(3, "x", {}))(row(3, "half", {"alpha": 0.9}, "model").system, {"alpha": {}}, efficiency=COST),
        row(4, "run", {"alpha": 0.9, "beta": 0.9}),
    ]
    frame = leaderboard_table.build_frame(rows, TOPICS)
    points, caption = plots.speed_scatter(frame, "alpha_ndcg@10")
    assert points["system"].tolist() == ["slow", "fast"]  # slowest first; no average or no speed: no point
    assert points[["docs_per_second", "value"]].values.tolist() == [[8.5, 0.6], [5000.0, 0.2]]
    assert points["hardware"].tolist() == ["CPU: AMD EPYC 7B13 64-Core Processor", "GPU: NVIDIA H100 80GB HBM3"]
    assert caption.startswith("2 model rows") and "not placed (no average α-nDCG@10): half" in caption
    chart = speed_chart(points, plots.axis_title("alpha_ndcg@10"))
    spec = json.loads(chart.plot)
    assert chart.type == "altair" and chart.chart == "scatter"
    assert spec["encoding"]["x"]["scale"] == {"type": "log"} and spec["encoding"]["x"]["field"] == "docs_per_second"
    assert spec["encoding"]["y"]["title"] == "average α-nDCG@10"
    assert {t["field"] for t in spec["encoding"]["tooltip"]} >= {"system", "hardware", "docs_per_second", "value"}
    assert [p["hardware"] for p in spec["data"]["values"]] == points["hardware"].tolist()
    assert len(spec["encoding"]["color"]["scale"]["range"]) == 2  # one colour per hardware
    empty, _ = plots.speed_scatter(leaderboard_table.build_frame([row(4, "run", {"alpha": 0.9})], TOPICS))
    assert empty.empty and speed_chart(empty, "y") is None


def test_per_query_scores_read_as_text_and_decoded_once_on_both_backends(store):
    from leaderboard.store.records import ResultMeta
    from leaderboard.tracks.retrieval.tables.rank_column import PerQueryVectors

    per_query = {"q2": {A10: 0.25}, "q1": {A10: 0.5}}
    scores = {"metrics": {A10: 0.375}, "per_query": per_query}
    run, _ = store.add_system(
        name="r", kind="run", content_hash="r", results={"alpha": scores}, meta=ResultMeta("rev1")
    )
    bare, _ = store.add_system(
        name="b", kind="run", content_hash="b", results={"beta": {"metrics": {A10: 0.1}}}, meta=ResultMeta("rev1")
    )
    rows = sorted(store.per_query_texts(A10))
    assert [(sid, topic, rev) for sid, topic, rev, _ in rows] == [(run.id, "alpha", "rev1"), (bare.id, "beta", "rev1")]
    assert json.loads(rows[0][3]) == {"q1": 0.5, "q2": 0.25} and rows[1][3] in (None, "null")  # JSON's null
    vectors = PerQueryVectors(lambda topic: ["q1", "q2", "q3"], TOPICS)
    found = vectors.update(rows)
    assert list(found) == [(str(run.id), "alpha")]  # no per-query scores: no vector
    assert found[str(run.id), "alpha"][1].tolist() == [0.5, 0.25, 0.0]  # a query the run lacks counts 0
    again = vectors.update(store.per_query_texts(A10))  # the same text read again: the same vector, not re-decoded
    assert again[str(run.id), "alpha"][1] is found[str(run.id), "alpha"][1]


def test_the_six_filters_are_one_object_that_shows_what_shown_rows_shows(frame):
    """`Filters`: the page's six filters in their one order, made from the controls' values, showing the rows
    `shown_rows` shows for the same options; a deep link's view is the same object."""
    assert table_filters.Filters.names() == ("search", "types", "sizes", "topic", "sort", "order")
    given = table_filters.Filters.of(None, ["model", "run"], None, None, "size", "asc")
    assert given == table_filters.Filters("", ("model", "run"), None, "", "size", "asc")
    assert (given.scope, given.descending) == (None, False)
    assert table_filters.Filters.of(" MODEL ", None, ["1B–10B"], "alpha", None, "desc").scope == "alpha"
    for filters in (given, table_filters.Filters.of(" MODEL ", None, None, table_columns.TOPIC_ALL, None, "desc")):
        options = {"search": filters.search, "types": filters.types, "sizes": filters.sizes, "sort": filters.sort}
        expected = table_filters.shown_rows(frame, **options, topic=filters.scope, descending=filters.descending)
        assert filters.rows(frame).equals(expected) and len(expected)
    assert list(given.rows(frame)["id"]) == ["5", "3", "6"]  # run and model rows, smallest first, blanks last
    view = deep_links.parse_view({"topic": "beta", "sort": "coverage@20", "order": "asc"}, TOPICS)
    assert view.filters() == table_filters.Filters("", None, None, "beta", "beta Coverage@20", "asc")
    assert deep_links.parse_view({}, TOPICS).filters(["run"]).topic == table_columns.TOPIC_ALL
