"""The Detail tab's nugget views: one query's nuggets against every stored system, and the nuggets no system
covers, each checked against the library's own nugget report (`uncovered_nuggets`) on the same runs."""

from __future__ import annotations

import pytest

from freshstack_hf.metrics import uncovered_nuggets
from leaderboard.scoring import score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.retrieval.views.nugget_views import COVERED, K, NuggetViews


@pytest.fixture
def views(lb_dataset, bm25_runs, store, tmp_path):
    """BM25 and a run that ranks every query's supporting documents first, both stored and archived."""
    topic = lb_dataset.topic("alpha")
    oracle = {}
    for j in topic.judgments:
        if j.relevance > 0:
            oracle.setdefault(j.query_id, {})[j.doc_id] = 1.0
    runs = {"BM25": bm25_runs["alpha"], "oracle": oracle}
    for name, run in runs.items():
        scored = score_for_store(lb_dataset, run, ["alpha"], resamples=0)
        store.add_system(
            name=name,
            kind="run",
            content_hash=f"h-{name}",
            results=scored.results,
            meta=ResultMeta("r"),
            blobs=scored.blobs(),
        )
    return NuggetViews(store, lb_dataset), runs


def test_one_query_against_every_system(views, lb_dataset):
    nv, runs = views
    qrels = lb_dataset.qrels("alpha")
    missed_by_bm25 = {n.nugget_id for n in uncovered_nuggets(qrels, {"bm25": runs["BM25"]}, k=K)}
    for label, qid in nv.queries("alpha"):
        matrix = nv.query_matrix("alpha", qid)
        nuggets = [n.nugget_id for n in lb_dataset.topic("alpha").nuggets if n.query_id == qid]
        assert label.startswith(f"{qid}: ") and list(matrix["nugget"]) == nuggets
        assert list(matrix.columns[2:]) == ["BM25 (#1)", "oracle (#2)"]
        assert set(matrix["oracle (#2)"]) == {COVERED}  # every nugget with a supporting document is covered
        expected = ["" if n in missed_by_bm25 else COVERED for n in nuggets]
        assert list(matrix["BM25 (#1)"]) == expected


def test_the_nuggets_no_system_covers(views, lb_dataset, bm25_runs, tmp_path):
    from leaderboard.store.store import Store

    nv, runs = views
    assert nv.uncovered_by_all("alpha").empty  # the oracle covers every supported nugget
    with Store(f"sqlite:///{tmp_path / 'bm25-only.db'}") as alone:  # a board holding BM25 alone
        alone.create_all()
        scored = score_for_store(lb_dataset, runs["BM25"], ["alpha"], resamples=0)
        kept = {"results": scored.results, "meta": ResultMeta("r"), "blobs": scored.blobs()}
        alone.add_system(name="BM25", kind="run", content_hash="h-BM25", **kept)
        table = NuggetViews(alone, lb_dataset).uncovered_by_all("alpha")
    expected = uncovered_nuggets(lb_dataset.qrels("alpha"), {"bm25": runs["BM25"]}, k=K)
    assert list(table["nugget"]) and set(table["nugget"]) == {n.nugget_id for n in expected}
    urls = {d.doc_id: d.url for d in lb_dataset.topic("alpha").docs}
    supported = table[table["supporting documents"] > 0].iloc[0]  # a missed nugget some document does support
    supporters = sorted(
        j.doc_id for j in lb_dataset.topic("alpha").judgments if j.nugget_id == supported["nugget"] and j.relevance > 0
    )
    assert supported["supporting documents"] == len(supporters)
    assert f"[{supporters[0]}]({urls[supporters[0]]})" in supported["supporting documents (first 5)"]


def test_each_write_replaces_the_kept_rankings_rather_than_adding_to_them(views, lb_dataset, bm25_runs, store):
    """A long-lived board keeps one copy of the systems' rankings per topic, whatever the number of writes."""
    nv, _ = views
    query_id = lb_dataset.topic("alpha").queries[0].query_id
    before = nv.query_matrix("alpha", query_id)
    for i in range(3):  # three more submissions, each a store change followed by a view
        scored = score_for_store(lb_dataset, bm25_runs["alpha"], ["alpha"], resamples=0)
        store.add_system(
            name=f"again {i}",
            kind="run",
            content_hash=f"h-again-{i}",
            results=scored.results,
            meta=ResultMeta("r"),
            blobs=scored.blobs(),
        )
        shown = nv.query_matrix("alpha", query_id)
        assert f"again {i} (#{i + 3})" in shown.columns  # the view follows the store
    assert len(shown.columns) == len(before.columns) + 3
    assert list(nv._cache) == ["alpha"] and len(nv._cache["alpha"][1]) == 5  # one copy, the current state's
