"""The benchmark's task ids and `.eval_results` entries (`freshstack_hf.repo.eval_results`), written and read back with
`huggingface_hub`'s own types; the dataset card lists the ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from huggingface_hub import EvalResultEntry, parse_eval_result_entries

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, topic_average
from freshstack_hf.repo.card import render_card
from freshstack_hf.repo.eval_results import (
    Task,
    entries_for,
    entries_yaml,
    parse_task_id,
    read_entries,
    results_path,
    tasks,
    values_of,
)

A10, C20, R50 = HEADLINE
VALUES = {
    "langchain": {A10.id: 0.4123456789012345, C20.id: 0.61, R50.id: 2 / 7},
    "my_topic": {A10.id: 0.1 + 0.2, C20.id: 0.7, R50.id: 1 / 3},
}
COMMIT = "c" * 40


def test_every_task_id_reads_back_as_its_task():
    every = tasks(["langchain", "my_topic"]) + tasks(["langchain", "my_topic"], reranking=True)
    ids = [t.id for t in every]
    assert ids[:3] == ["alpha_ndcg_10", "coverage_20", "recall_50"]  # the official leaderboard's keys
    assert "my_topic-recall_50" in ids and "langchain-alpha_ndcg_10-reranking" in ids
    assert len(set(ids)) == len(ids) == 2 * (3 + 2 * 3)
    assert [parse_task_id(i) for i in ids] == every
    # a topic may be named like a measure or like the reranking suffix: the id still reads one way
    assert parse_task_id("reranking-alpha_ndcg_10") == Task(A10, "reranking")
    assert parse_task_id("recall_50-coverage_20-reranking") == Task(C20, "recall_50", True)


@pytest.mark.parametrize(
    "bad", ["ndcg_10", "alpha_ndcg@10", "Lang-recall_50", "a-b-recall_50", "-recall_50", "recall_50-", ""]
)
def test_a_task_id_of_no_task_is_refused_naming_the_ids(bad):
    with pytest.raises(FreshStackError, match=r"alpha_ndcg_10, coverage_20, recall_50 .*TOPIC-MEASURE"):
        parse_task_id(bad)


def test_entries_hold_each_value_as_stored_and_the_plain_mean_of_the_topics():
    topics = ["langchain", "my_topic"]
    entries = entries_for(
        VALUES,
        topics,
        dataset_id="org/freshstack",
        dataset_revision=COMMIT,
        date="2025-11-02T10:00:00Z",
        source_url="https://board.example/?system=3",
        source_name="board",
        notes="snapshot 2025-10-31",
    )
    got = {e.task_id: e.value for e in entries}
    assert got["langchain-alpha_ndcg_10"] == 0.4123456789012345  # full precision, not the board's 0.412
    assert got["my_topic-alpha_ndcg_10"] == 0.1 + 0.2
    assert got["recall_50"] == topic_average({t: VALUES[t][R50.id] for t in topics}, topics)
    assert [e.task_id for e in entries][:3] == ["alpha_ndcg_10", "coverage_20", "recall_50"]
    assert {(e.dataset_id, e.dataset_revision, e.source_url) for e in entries} == {
        ("org/freshstack", COMMIT, "https://board.example/?system=3")
    }
    # the file's text, parsed by huggingface_hub, is the same entries: every float reads back exactly
    back = read_entries(entries_yaml(entries), "test")
    assert back == entries and values_of(back) == values_of(entries)


def test_a_row_missing_a_topic_has_no_average_and_a_reranker_its_own_tasks():
    entries = entries_for(
        {"langchain": VALUES["langchain"]}, ["langchain", "my_topic"], reranking=True, dataset_id="o/f",
        dataset_revision=COMMIT,
    )  # fmt: skip
    assert [e.task_id for e in entries] == [
        f"langchain-{k}-reranking" for k in ("alpha_ndcg_10", "coverage_20", "recall_50")
    ]


def test_a_value_that_is_no_number_is_refused():
    with pytest.raises(FreshStackError, match="langchain-coverage_20: nan is not a finite number"):
        entries_for({"langchain": {C20.id: float("nan")}}, ["langchain"], dataset_id="o/f", dataset_revision=COMMIT)


def test_a_file_that_is_no_list_of_entries_is_refused_naming_where():
    where = "org/m .eval_results/x.yaml"
    with pytest.raises(FreshStackError, match=re.escape(f"{where}: not a readable .eval_results file")):
        read_entries("dataset: {id: x}\n", "org/m .eval_results/x.yaml")
    with pytest.raises(FreshStackError, match="KeyError"):
        read_entries("- dataset: {id: org/freshstack}\n  value: 1\n", "here")  # no task_id


def test_values_ignore_dates_and_notes_but_not_a_value():
    a = EvalResultEntry(dataset_id="o/f", task_id="recall_50", value=0.5, dataset_revision=COMMIT, notes="x")
    b = EvalResultEntry(dataset_id="o/f", task_id="recall_50", value=0.5, dataset_revision=COMMIT, date="2026-01-01")
    c = EvalResultEntry(dataset_id="o/f", task_id="recall_50", value=0.5000001, dataset_revision=COMMIT)
    assert values_of([a]) == values_of([b]) != values_of([c])
    assert parse_eval_result_entries([{"dataset": {"id": "o/f", "task_id": "recall_50"}, "value": 0.5}])[0].value == 0.5


def test_a_file_is_named_after_its_snapshot():
    assert results_path("2025-10-31") == ".eval_results/freshstack-2025-10-31.yaml"
    assert results_path(COMMIT) == ".eval_results/freshstack-cccccccccccc.yaml"
    with pytest.raises(FreshStackError, match="cannot name a file"):
        results_path("../x")


def test_the_dataset_card_lists_every_task_id():
    manifest = json.loads((Path(__file__).parent / "fixtures" / "cards" / "manifest.json").read_text())
    card = render_card(manifest, "ORG/freshstack")
    section = card[card.index("## Results on model pages") : card.index("## License")]
    for task, reranked in zip(tasks(sorted(manifest["topics"])), tasks(sorted(manifest["topics"]), True), strict=True):
        assert f"| `{task.id}` | `{reranked.id}` |" in section
    assert "`dataset.id` is `ORG/freshstack`" in section
