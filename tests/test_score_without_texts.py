"""Scoring reads what scoring needs: the corpus ids (one column), the qrels and the nuggets, never a document's text.

A repo whose corpus configs are cut down to their `_id` column scores a run exactly as the full repo does, through
`Dataset.score`, `freshstack-hf evaluate` and the board's run submission; any of them reading a document would fail
on the missing columns.
"""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from freshstack_hf.baselines import retrievers
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    from synthetic_repo import TOPICS, build_small_repo

    root = tmp_path_factory.mktemp("no_texts")
    full = build_small_repo(root / "full")
    ids_only = root / "ids_only"
    shutil.copytree(full, ids_only)
    for topic in TOPICS:
        corpus = layout.config_path(ids_only, topic, "corpus")
        table = pq.read_table(corpus)
        assert {"_id", "text"} <= set(table.column_names)
        pq.write_table(table.select(["_id"]), corpus)
    run = {}
    dataset = Dataset(full)
    for topic in dataset.topics:
        run |= retrievers.bm25(dataset.topic(topic), k=100).as_scores()
    return full, ids_only, run, write_run(run, root / "bm25.trec", tag="bm25")


@pytest.mark.slow
def test_a_corpus_without_texts_still_scores(repos):
    full, ids_only, run, _ = repos
    cut = Dataset(ids_only)
    assert cut.doc_ids() == Dataset(full).doc_ids() and len(cut.doc_ids()) == 600
    with pytest.raises(Exception, match="text"):  # the texts are really gone: reading a document fails
        _ = cut.topic("alpha").docs
    cut = Dataset(ids_only)  # a fresh one: the failed read above must not have cached anything
    expected = Dataset(full).score(run, resamples=100)
    scored = cut.score(run, resamples=100)
    assert scored.average == expected.average and 0 < scored.average["alpha_ndcg@10"] < 1
    assert scored.intervals == expected.intervals
    for topic in cut.topics:
        assert scored.topics[topic].per_query == expected.topics[topic].per_query
    assert "docs" not in cut.topic("alpha").__dict__  # nothing read the documents


def test_evaluate_cli_scores_a_corpus_without_texts(repos, freshstack_main, capsys):
    full, ids_only, _, run_file = repos
    printed = []
    for repo in (full, ids_only):
        args = ["evaluate", str(repo), "--topic", "all", "--run", str(run_file), "--strict", "--json", "-"]
        assert freshstack_main(args) == 0
        report = json.loads(capsys.readouterr().out)
        printed.append({k: report[k] for k in ("topics", "average")})  # settings name the repo and its revision
    assert printed[0] == printed[1] and printed[1]["average"]["metrics"]["alpha_ndcg@10"] > 0


def test_the_board_scores_a_submission_on_a_corpus_without_texts(repos, tmp_path):
    from leaderboard.store.store import Store
    from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

    full, ids_only, _, run_file = repos
    outcomes = []
    for repo in (full, ids_only):
        with Store(f"sqlite:///{tmp_path / (repo.name + '.db')}") as store:
            store.create_all()
            outcome = RunSubmitter(store, Dataset(repo), rate_limit=None, resamples=50).submit(run_file, name="bm25")
            assert outcome.status == "scored", outcome.message
            outcomes.append(outcome.details["average"])
    assert outcomes[0] == outcomes[1]
