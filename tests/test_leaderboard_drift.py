"""The leaderboard's Drift tab: a report of `freshstack-hf drift` shown as its Markdown, plot and one table, only on
a page started with `--drift REPORT.json`. Content is checked without a browser (its plain functions and the built
page's components)."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import pytest
from cli_runner import cli
from drift_repos import TOPIC, make_snapshots

from freshstack_hf.drift import drift_report
from freshstack_hf.errors import FreshStackError
from leaderboard.page.app import build_app
from leaderboard.tracks.retrieval.views import drift


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("drift-tab")
    old, new = make_snapshots(root)
    path = root / "drift.json"
    path.write_text(json.dumps(drift_report(old, new, resamples=100)))
    return path


def test_the_content_is_the_reports_markdown_plot_and_rows(report_file):
    report = drift.load_report(report_file)
    text, svg, rows = drift.content(report)
    assert drift.title(report) == "2024-10-31 -> 2025-10-31"
    assert "### Judged documents" in text and "| moved | 2 | 20.0% |" in text
    assert svg.startswith("<svg") and svg.count("<circle") == 3 * 3 + 3
    assert len(rows) == 3 * 3 and all(len(r) == len(drift.COLUMNS) for r in rows)
    bm25 = [r for r in rows if r[1] == "α-nDCG@10" and r[2] == "BM25"]
    old = report["topics"][TOPIC]["systems"]["BM25"]["old"]["alpha_ndcg@10"]
    assert bm25 == [[TOPIC, "α-nDCG@10", "BM25", round(old, 3), 0.0, round(-old, 3), 1, 3, -2]]


def test_a_file_that_is_no_drift_report_is_refused(tmp_path):
    with pytest.raises(FreshStackError, match="no such file"):
        drift.load_report(tmp_path / "missing.json")
    (tmp_path / "other.json").write_text('{"topics": {}}')
    with pytest.raises(FreshStackError, match=r"not a drift report \(no report_version, old, new, settings\)"):
        drift.load_report(tmp_path / "other.json")


def test_the_page_has_a_drift_tab_only_when_given_a_report(store, lb_dataset, tmp_path, report_file):
    demo = build_app(lb_dataset, store, drift_reports=[report_file])
    labels = [b.label for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    assert labels == [
        "Leaderboard",
        "Reranking",
        "After cutoff",
        "Over time",
        "Answers",
        "Detail",
        "Plots",
        "Drift",
        "Holes",
        "Submit",
        "About",
    ]
    ids = {b.elem_id: b for b in demo.blocks.values() if b.elem_id}
    assert {"drift-plot-0", "drift-table-0", "drift-report-0"} <= set(ids)
    assert "### Answerability" in ids["drift-report-0"].value


@pytest.mark.slow
def test_leaderboard_refuses_a_bad_drift_report_before_starting(report_file, tmp_path):
    dataset = report_file.parent / "freshstack@2025-10-31"
    done = cli("leaderboard", "--dataset", str(dataset), "--drift", str(tmp_path / "nope.json"), "--no-baselines")
    assert done.returncode == 2 and "nope.json: no such file" in done.stderr
