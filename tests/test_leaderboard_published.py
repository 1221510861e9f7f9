"""Figures published elsewhere (the official FreshStack leaderboard) on the board: their own frame and tab, never
rows of the main table, with their source named and topics the dataset lacks pointed to the Reference tab."""

from __future__ import annotations

import json
import math

import pytest
from board_rows import TOPICS, row

from freshstack_hf.metrics import HEADLINE
from leaderboard.page import display
from leaderboard.tracks.retrieval.tables import deep_links, leaderboard_table, table_columns
from leaderboard.tracks.retrieval.views import published as reference
from leaderboard.tracks.retrieval.views.published import REFERENCE_TAB, SOURCE, load_reported


def _official_entry(name: str, average: dict | None = None, **info) -> dict:
    datasets = {
        "alpha": {"alpha_ndcg_10": 0.3, "coverage_20": 0.5, "recall_50": 0.4},
        "beta": {"alpha_ndcg_10": 0.1, "coverage_20": 0.2, "recall_50": 0.3},
    }
    if average is not None:
        datasets["average"] = average
    return {
        "info": {"name": name, "size": "7B", "type": "open_source", "date": "2024-01-01", **info},
        "datasets": datasets,
    }


def test_published_figures_get_their_own_frame_never_the_main_tables(tmp_path):
    path = tmp_path / "board.json"
    entries = [
        _official_entry(
            "X <script>alert(1)</script>Emb",
            {"alpha_ndcg_10": 0.9, "coverage_20": 0.8, "recall_50": 0.7},
            link="https://hf.co/x",
        ),
        _official_entry("No average", size="-"),
        _official_entry("Part average", {"alpha_ndcg_10": 0.05}),
    ]
    path.write_text(json.dumps({"leaderboardData": entries}))
    systems = load_reported(path)
    first = systems[0]
    assert first.name == "X Emb" and first.key == "r1" and first.size == 7_000_000_000
    assert first.scores["alpha"] == {"alpha_ndcg@10": 0.3, "coverage@20": 0.5, "recall@50": 0.4}
    assert reference.published_averages(path) == {
        "r1": {"alpha_ndcg@10": 0.9, "coverage@20": 0.8, "recall@50": 0.7},
        "r3": {"alpha_ndcg@10": 0.05},
    }
    ref = reference.load_reference(path)
    assert list(ref.columns) == [
        "system",
        "average α-nDCG@10",
        "average Coverage@20",
        "average Recall@50",
        "average from",
        *[f"{t} {m.name}" for t in TOPICS for m in HEADLINE],
        "size",
        "date",
        "link",
    ]
    by_name = ref.set_index("system")
    assert list(ref["system"]) == ["X Emb", "No average", "Part average"]  # best average α-nDCG@10 first
    assert by_name.at["X Emb", "average α-nDCG@10"] == 0.9  # the file's published figure, not the mean 0.2
    assert by_name.at["X Emb", "average from"] == "published"
    assert by_name.at["No average", "average α-nDCG@10"] == pytest.approx(0.2)  # plain mean of the topics
    assert by_name.at["No average", "average Recall@50"] == pytest.approx(0.35)
    assert by_name.at["No average", "average from"] == "mean of topics"
    assert by_name.at["Part average", "average α-nDCG@10"] == 0.05
    assert by_name.at["Part average", "average Coverage@20"] == pytest.approx(0.35)
    assert by_name.at["Part average", "average from"] == "published; mean of topics for Coverage@20, Recall@50"
    assert by_name.at["X Emb", "link"] == "[hf\\.co](https://hf.co/x)" and math.isnan(by_name.at["No average", "size"])
    shown = dict(zip(ref["system"], display.display(ref)["metadata"]["display_value"], strict=True))
    assert shown["No average"][1:5] == ["0.200", "0.350", "0.350", "mean of topics"]  # three decimals everywhere
    assert shown["X Emb"][-3] == "7B"
    # The main table never holds them: build_frame has no such input, and a "reported" kind is dropped.
    frame = leaderboard_table.build_frame(
        [row(1, "BM25", {"alpha": 0.3, "beta": 0.2}, "baseline"), row(2, "paper", {}, "reported")], TOPICS
    )
    assert list(frame["id"]) == ["1"] and "reported" not in table_columns.TYPES
    assert frame.attrs["topics"] == TOPICS and not [c for c in frame.columns if c.startswith("langchain")]


def test_the_reference_heading_names_the_source_and_says_not_comparable():
    text = reference.heading()
    assert REFERENCE_TAB in text and SOURCE in text
    assert "not computed here" in text and "another release of the dataset" in text
    assert "not comparable row by row" in text


def test_the_official_file_makes_the_reference_frame(shared_data):
    path = shared_data / "reference" / "freshstack-official-leaderboard.json"
    reported = load_reported(path)
    assert len(reported) == 40
    bm25 = next(r for r in reported if r.name == "BM25")
    assert bm25.scores["langchain"]["alpha_ndcg@10"] == 0.23 and bm25.size is None
    ref = reference.load_reference(path)
    topics = ["langchain", "yolo", "laravel", "angular", "godot"]
    assert len(ref) == 40 and ref["system"].is_unique and ref.attrs["topics"] == topics
    assert [c for c in ref.columns if "@" in c] == [f"{s} {m.name}" for s in ["average", *topics] for m in HEADLINE]
    assert set(ref["average from"]) == {"published"}  # every entry of the file has its own average
    bm25_row = ref.set_index("system").loc["BM25"]
    assert (bm25_row["average α-nDCG@10"], bm25_row["average Coverage@20"], bm25_row["average Recall@50"]) == (
        0.218,
        0.448,
        0.316,
    )
    assert bm25_row["godot Recall@50"] == 0.2 and bm25_row["date"] == "2024-11-01"
    assert ref["average α-nDCG@10"].is_monotonic_decreasing
    data = display.display(ref)
    assert len(data["data"]) == 40
    col = data["headers"].index("average α-nDCG@10")
    bm25_shown = next(r for r in data["metadata"]["display_value"] if r[0] == "BM25")
    assert bm25_shown[col] == "0.218" and bm25_shown[data["headers"].index("yolo Coverage@20")] == "0.342"
    reference_topics = reference.reference_topics(reported)
    view = deep_links.parse_view({"topic": "langchain"}, TOPICS, reference_topics)
    assert view.topic is None and REFERENCE_TAB in view.notice and "langchain" in view.notice
    assert "unknown" not in view.notice
    assert deep_links.parse_view({"topic": "nope"}, TOPICS, reference_topics).notice.startswith("unknown topic 'nope'")
    assert deep_links.parse_view({"topic": "beta"}, TOPICS, reference_topics) == deep_links.View(
        "beta", "beta α-nDCG@10"
    )


def test_a_published_topic_deep_link_points_to_the_reference_tab():
    view = deep_links.parse_view({"topic": "LangChain", "sort": "recall@50"}, TOPICS, ["langchain", "yolo"])
    assert (view.topic, view.sort) == (None, "average Recall@50")
    assert view.notice == (
        "topic 'langchain' is not in this dataset; its published figures are in the Reference (published) tab; "
        "showing all topics"
    )
