"""ir_datasets registration: `ir_datasets.load("freshstack/T")` reads the repo FRESHSTACK_DATASET names, and
ir_measures scores runs against it exactly as freshstack_hf's evaluator does."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import ir_datasets
import pytest
from synthetic_repo import build_small_repo

import loaders.irds  # noqa: F401  (registers, for runs without the installed import hook)
from freshstack_hf import load_candidates, load_topic
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import evaluate, qrels_from_topic


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return build_small_repo(tmp_path_factory.mktemp("irds") / "freshstack")


@pytest.fixture(autouse=True)
def _point_at_repo(monkeypatch, repo):
    monkeypatch.setenv("FRESHSTACK_DATASET", str(repo))


@pytest.mark.slow
def test_docs_queries_and_query_level_qrels(repo):
    topic = load_topic(repo, "alpha")
    dataset = ir_datasets.load("freshstack/alpha")
    assert dataset.has_docs() and dataset.has_queries() and dataset.has_qrels() and not dataset.has_scoreddocs()
    docs = list(dataset.docs_iter())
    assert [(d.doc_id, d.text) for d in docs] == [(d.doc_id, d.text) for d in topic.docs]
    assert dataset.docs_count() == len(topic.docs) and dataset.docs_cls()._fields[:2] == ("doc_id", "text")
    queries = list(dataset.queries_iter())
    assert [(q.query_id, q.text) for q in queries] == [(q.query_id, f"{q.title} {q.body}") for q in topic.queries]
    qrels = {}
    for qrel in dataset.qrels_iter():
        qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    assert qrels == topic.qrels and 0 in {r for docs in qrels.values() for r in docs.values()}  # zeros kept
    assert dataset.docs_store().get(docs[3].doc_id) == docs[3]


def test_nugget_qrels_carry_the_nugget_in_iteration(repo):
    topic = load_topic(repo, "beta")
    qrels = list(ir_datasets.load("freshstack/beta/nuggets").qrels_iter())
    assert [(q.query_id, q.iteration, q.doc_id, q.relevance) for q in qrels] == [
        (j.query_id, j.nugget_id, j.doc_id, j.relevance) for j in topic.judgments
    ]


def test_top_ranked_candidates_are_scoreddocs_in_rank_order(repo):
    dataset = ir_datasets.load("freshstack/beta/top_ranked")
    ranked: dict[str, list[str]] = {}
    for sd in sorted(dataset.scoreddocs_iter(), key=lambda s: -s.score):
        ranked.setdefault(sd.query_id, []).append(sd.doc_id)
    assert ranked == load_candidates(repo, "beta", "top_ranked")


@pytest.mark.slow
def test_the_dataset_follows_freshstack_dataset(tmp_path, monkeypatch):
    other = build_small_repo(tmp_path / "freshstack", queries=3, docs=40)
    dataset = ir_datasets.load("freshstack/alpha")
    first = len(list(dataset.queries_iter()))
    monkeypatch.setenv("FRESHSTACK_DATASET", str(other))
    assert first == 6 and len(list(dataset.queries_iter())) == 3


def test_unknown_topic_is_a_user_error():
    dataset = ir_datasets.load("freshstack/gamma")
    with pytest.raises(FreshStackError, match=r"topic 'gamma' not found.*available topics: alpha, beta"):
        next(dataset.queries_iter())
    with pytest.raises(KeyError):
        ir_datasets.load("freshstack/Alpha")


def test_ir_measures_on_these_qrels_matches_freshstack_hf(repo):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import R, alpha_nDCG, nDCG

    topic = load_topic(repo, "alpha")
    rng = random.Random(3)
    run = {q.query_id: {d.doc_id: rng.random() for d in rng.sample(topic.docs, 150)} for q in topic.queries}
    for qid, docs in topic.qrels.items():  # every judged query in the run, every score distinct: no tie rules
        for doc_id in docs:
            run[qid].setdefault(doc_id, rng.random())
    ours = evaluate(qrels_from_topic(topic), run, ["alpha_ndcg@10", "alpha_ndcg@20", "recall@50", "ndcg@10"]).metrics
    nuggets = list(ir_datasets.load("freshstack/alpha/nuggets").qrels_iter())
    docs = list(ir_datasets.load("freshstack/alpha").qrels_iter())
    alpha = ir_measures.calc_aggregate([alpha_nDCG(alpha=0.5, judged_only=False) @ k for k in (10, 20)], nuggets, run)
    plain = ir_measures.calc_aggregate([R @ 50, nDCG @ 10], docs, run)
    assert alpha[alpha_nDCG(alpha=0.5, judged_only=False) @ 10] == pytest.approx(ours["alpha_ndcg@10"], abs=1e-9)
    assert alpha[alpha_nDCG(alpha=0.5, judged_only=False) @ 20] == pytest.approx(ours["alpha_ndcg@20"], abs=1e-9)
    assert plain[R @ 50] == pytest.approx(ours["recall@50"], abs=1e-9)
    assert plain[nDCG @ 10] == pytest.approx(ours["ndcg@10"], abs=1e-9)


@pytest.mark.slow
def test_no_import_of_ours_is_needed_once_installed(repo):
    """The import hook (installed .pth) registers the pattern when ir_datasets itself is imported."""
    code = textwrap.dedent(
        """
        import ir_datasets
        ds = ir_datasets.load("freshstack/beta")
        print(sum(1 for _ in ds.docs_iter()), sum(1 for _ in ds.queries_iter()), sum(1 for _ in ds.qrels_iter()))
        """
    )
    env = {**os.environ, "FRESHSTACK_DATASET": str(repo)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    assert done.returncode == 0, done.stderr[-2000:]
    topic = load_topic(repo, "beta")
    expected = f"{len(topic.docs)} {len(topic.queries)} {sum(len(d) for d in topic.qrels.values())}"
    assert done.stdout.strip() == expected
