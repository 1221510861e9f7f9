"""Parity with the official evaluator (`freshstack` 0.0.6 on pyndeval and pytrec_eval) on generated topics.

Each seed builds a topic with the awkward cases on purpose: query ids that are prefixes of each other (which
the official `nuggets_to_query_qrels` would merge, so `query_to_nuggets` is built here directly), one-nugget
queries, nuggets with no positive judgment, docs supporting several nuggets, docs with identical nugget sets
(ties in the greedy ideal), queries missing from the run, run queries with no judgments, unjudged and unknown
docs, runs shorter than k. Runs are tie-free, since the official tools disagree with each other on ties.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest

from freshstack_hf.metrics import NuggetQrels, evaluate, measures_at
from freshstack_hf.records import Nugget, NuggetJudgment

pytestmark = pytest.mark.slow

KS = [5, 10, 20, 50]
SEEDS = range(12)


def make_topic(seed: int, n_queries: int = 25):
    """Random nuggets, judgments and a tie-free run over them."""
    rng = random.Random(seed)
    qids = ["12", "123", "1234"] + [str(rng.randrange(10**5, 10**8)) for _ in range(n_queries - 3)]
    qids = list(dict.fromkeys(qids))
    shared = [f"shared/doc_{i}" for i in range(15)]
    nuggets: list[Nugget] = []
    judgments: list[NuggetJudgment] = []
    for qi, qid in enumerate(qids):
        n_nuggets = 1 if qi % 7 == 0 else rng.randint(2, 7)
        pool = [f"repo{qi % 3}/path {qid}/f{j}.py_{j * 10}_{j * 10 + 9}" for j in range(rng.randint(4, 40))]
        pool += rng.sample(shared, 3)
        for k in range(n_nuggets):
            nid = f"{qid}_{k}"
            nuggets.append(Nugget(nid, qid, f"fact {k}"))
            if qi == 5:  # a query whose nuggets have no judgment at all: counts in denominators, scores 0
                continue
            no_positive = k > 0 and rng.random() < 0.2
            for doc in rng.sample(pool, rng.randint(1, min(len(pool), 12))):
                rel = 0 if no_positive else int(rng.random() < 0.45)
                judgments.append(NuggetJudgment(qid, nid, doc, rel))
        if qi % 4 == 1:  # twins: identical nugget sets, so the greedy ideal must break ties on doc id
            twin_docs = [f"twin/{qid}/{c}" for c in "bca"]
            for doc in twin_docs:
                judgments.append(NuggetJudgment(qid, f"{qid}_0", doc, 1))
    run: dict[str, dict[str, float]] = {}
    judged_by_query: dict[str, list[str]] = {}
    positives = {j.doc_id for j in judgments if j.relevance}
    for j in judgments:
        judged_by_query.setdefault(j.query_id, []).append(j.doc_id)
    for qi, qid in enumerate(qids):
        if qi % 6 == 3 or qi == 5:  # missing from the run
            continue
        judged = sorted(set(judged_by_query.get(qid, [])))
        length = rng.choice([0, 3, 8, 15, 30, 60, 120])
        docs = rng.sample(judged, min(len(judged), length // 2 + 1))
        docs += [f"unknown/{qid}/{i}" for i in range(length // 3)] + rng.sample(shared, 2)
        if length == 0:
            docs = []
        scores = sorted(rng.sample(range(10**6), len(docs)), reverse=True)
        if qi % 5 != 2:  # most rankings random; every fifth a strong one, positives first
            rng.shuffle(scores)
        else:
            docs.sort(key=lambda d: (d not in positives, rng.random()))
        run[qid] = {d: s / 1000.0 for d, s in zip(docs, scores, strict=True)}
    run["999999999"] = {"unknown/x": 1.0}  # a query the topic does not have
    return nuggets, judgments, run


def official_inputs(nuggets, judgments):
    """The official evaluator's three dicts, built by query id (not by its string-prefix matching)."""
    qrels_nuggets: dict[str, dict[str, int]] = {n.nugget_id: {} for n in nuggets}
    for j in judgments:
        qrels_nuggets[j.nugget_id][j.doc_id] = max(qrels_nuggets[j.nugget_id].get(j.doc_id, 0), j.relevance)
    query_to_nuggets: dict[str, list[str]] = {}
    for n in nuggets:
        query_to_nuggets.setdefault(n.query_id, []).append(n.nugget_id)
    qrels_query: dict[str, dict[str, int]] = {q: {} for q in query_to_nuggets}
    for qid, nids in query_to_nuggets.items():
        for nid in nids:
            for doc, rel in qrels_nuggets[nid].items():
                qrels_query[qid][doc] = qrels_query[qid].get(doc, 0) + rel
    return qrels_nuggets, query_to_nuggets, qrels_query


@pytest.mark.parametrize("seed", SEEDS)
def test_topic_means_match_official_evaluator(seed):
    from freshstack.retrieval.evaluation import EvaluateRetrieval

    nuggets, judgments, run = make_topic(seed)
    qrels_nuggets, query_to_nuggets, qrels_query = official_inputs(nuggets, judgments)
    official = EvaluateRetrieval(k_values=KS)
    # The official alpha-nDCG raises KeyError on a query with an empty ranking; ours scores it 0.
    nonempty = {q: docs for q, docs in run.items() if docs}
    alpha, cov, rec = official.evaluate(qrels_nuggets, query_to_nuggets, qrels_query, nonempty)
    ndcg = official.evaluate_custom(qrels_query, nonempty, metric="ndcg")
    expected = {**alpha, **cov, **rec, **ndcg}

    qrels = NuggetQrels.from_judgments(judgments, nuggets=nuggets)
    ours = evaluate(qrels, run, measures_at(KS, ("alpha_ndcg", "coverage", "recall", "ndcg"))).metrics
    compared = 0
    for measure_id, value in ours.items():
        family, k = measure_id.split("@")
        key = {"alpha_ndcg": "alpha-nDCG", "coverage": "Coverage", "recall": "Recall", "ndcg": "NDCG"}[family]
        if f"{key}@{k}" in expected:
            assert value == pytest.approx(expected[f"{key}@{k}"], abs=1e-4), measure_id
            compared += 1
    assert compared == 15  # alpha-nDCG@50 has no official counterpart (pyndeval stops at 20)
    assert len(qrels) == len(query_to_nuggets)


@pytest.mark.parametrize("seed", SEEDS)
def test_per_query_values_match_pyndeval_and_pytrec_eval(seed):
    import pyndeval
    import pytrec_eval

    nuggets, judgments, run = make_topic(seed)
    qrels_nuggets, query_to_nuggets, qrels_query = official_inputs(nuggets, judgments)
    ours = evaluate(
        NuggetQrels.from_judgments(judgments, nuggets=nuggets),
        run,
        measures_at(KS, ("alpha_ndcg", "recall", "ndcg")),
    ).per_query

    sub_qrels = [
        pyndeval.SubtopicQrel(qid, nid, doc, rel)
        for qid, nids in query_to_nuggets.items()
        for nid in nids
        for doc, rel in qrels_nuggets[nid].items()
    ]
    ev = pyndeval.RelevanceEvaluator(sub_qrels, measures=[f"alpha-nDCG@{k}" for k in (5, 10, 20)])
    scored = [pyndeval.ScoredDoc(q, d, s) for q in ours for d, s in run.get(q, {}).items()]
    nd = ev.evaluate(scored)
    trec = pytrec_eval.RelevanceEvaluator(qrels_query, {"recall.5,10,20,50", "ndcg_cut.5,10,20,50"}).evaluate(run)
    for qid, values in ours.items():
        for k in (5, 10, 20):
            assert values[f"alpha_ndcg@{k}"] == pytest.approx(nd.get(qid, {}).get(f"alpha-nDCG@{k}", 0.0), abs=1e-9)
        for k in KS:
            assert values[f"recall@{k}"] == pytest.approx(trec.get(qid, {}).get(f"recall_{k}", 0.0), abs=1e-9)
            assert values[f"ndcg@{k}"] == pytest.approx(trec.get(qid, {}).get(f"ndcg_cut_{k}", 0.0), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_per_query_coverage_matches_official(seed):
    from freshstack.retrieval.metrics import coverage

    nuggets, judgments, run = make_topic(seed)
    qrels_nuggets, query_to_nuggets, _ = official_inputs(nuggets, judgments)
    ours = evaluate(NuggetQrels.from_judgments(judgments, nuggets=nuggets), run, measures_at(KS, ("coverage",)))
    for qid, nids in query_to_nuggets.items():
        expected = coverage(qrels_nuggets, {qid: nids}, run, KS)
        for k in KS:
            assert ours.per_query[qid][f"coverage@{k}"] == pytest.approx(expected[f"Coverage@{k}"], abs=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_alpha_ndcg_matches_ir_measures_and_other_alphas(seed):
    import ir_measures
    import pyndeval

    nuggets, judgments, run = make_topic(seed)
    qrels = NuggetQrels.from_judgments(judgments, nuggets=nuggets)
    ir_qrels = [j.to_ir_measures() for j in judgments]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() if q in qrels for d, s in docs.items()]
    measure = ir_measures.alpha_nDCG @ 10
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([measure], ir_qrels, ir_run)}
    ours = evaluate(qrels, run, ["alpha_ndcg@10"]).per_query
    for qid, value in expected.items():
        assert ours[qid]["alpha_ndcg@10"] == pytest.approx(value, abs=1e-9)

    sub = [pyndeval.SubtopicQrel(j.query_id, j.nugget_id, j.doc_id, j.relevance) for j in judgments]
    scored = [pyndeval.ScoredDoc(q, d, s) for q, docs in run.items() if q in qrels for d, s in docs.items()]
    for alpha in (0.25, 0.8):
        nd = pyndeval.ndeval(sub, scored, measures=["alpha-nDCG@20"], alpha=alpha)
        measure = f"alpha_ndcg(alpha={alpha})@20"
        ours = evaluate(qrels, run, [measure]).per_query
        for qid, values in nd.items():
            assert ours[qid][measure] == pytest.approx(values["alpha-nDCG@20"], abs=1e-9)


def reference_alpha_ndcg(support: dict[str, set[str]], ranking: list[str], k: int, alpha: float = 0.5) -> float:
    """ndeval semantics in plain loops, for cutoffs pyndeval refuses (> 20)."""

    def gain(doc: str, seen: dict[str, int]) -> float:
        return sum((1 - alpha) ** seen.get(n, 0) for n in support.get(doc, ()))

    def dcg(order: list[str]) -> float:
        seen: dict[str, int] = {}
        total = 0.0
        for rank, doc in enumerate(order[:k], start=1):
            total += gain(doc, seen) / math.log2(rank + 1)
            for n in support.get(doc, ()):
                seen[n] = seen.get(n, 0) + 1
        return total

    pool = sorted((d for d, ns in support.items() if ns), reverse=True)
    ideal: list[str] = []
    seen: dict[str, int] = {}
    while pool and len(ideal) < k:
        best = max(pool, key=lambda d: gain(d, seen))  # first max in descending id order = larger id
        pool.remove(best)
        ideal.append(best)
        for n in support[best]:
            seen[n] = seen.get(n, 0) + 1
    best_dcg = dcg(ideal)
    return dcg(ranking) / best_dcg if best_dcg > 0 else 0.0


@pytest.mark.parametrize("seed", range(6))
def test_alpha_ndcg_beyond_20_matches_reference(seed):
    nuggets, judgments, run = make_topic(seed)
    qrels = NuggetQrels.from_judgments(judgments, nuggets=nuggets)
    ours = evaluate(qrels, run, ["alpha_ndcg(alpha=0.4)@50", "alpha_ndcg(alpha=0.4)@30"]).per_query
    for qid in qrels.query_ids:
        support: dict[str, set[str]] = {}
        for j in judgments:
            if j.query_id == qid and j.relevance:
                support.setdefault(j.doc_id, set()).add(j.nugget_id)
        ranking = sorted(run.get(qid, {}), key=lambda d: -run[qid][d])
        for k in (30, 50):
            expected = reference_alpha_ndcg(support, ranking, k, alpha=0.4)
            assert ours[qid][f"alpha_ndcg(alpha=0.4)@{k}"] == pytest.approx(expected, abs=1e-12)


def test_small_dense_queries_match_pyndeval_including_values_above_one():
    """Every ranking of many tiny judgment sets: the greedy ideal is sometimes beaten, and never clipped."""
    import pyndeval

    rng = random.Random(7)
    judgments: list[NuggetJudgment] = []
    run: dict[str, dict[str, float]] = {}
    for base in range(150):
        docs = [f"d{i}" for i in range(rng.randint(2, 4))]
        support = [(n, doc, int(rng.random() < 0.5)) for n in range(rng.randint(1, 4)) for doc in docs]
        for p, perm in enumerate(itertools.permutations(docs)):  # every ranking of the same judgments
            qid = f"q{base}p{p}"
            judgments += [NuggetJudgment(qid, f"{qid}_{n}", doc, rel) for n, doc, rel in support]
            run[qid] = {d: float(len(perm) - i) for i, d in enumerate(perm)}
    sub = [pyndeval.SubtopicQrel(j.query_id, j.nugget_id, j.doc_id, j.relevance) for j in judgments]
    scored = [pyndeval.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    expected = pyndeval.ndeval(sub, scored, measures=["alpha-nDCG@2", "alpha-nDCG@3", "alpha-nDCG@5"])
    ours = evaluate(NuggetQrels.from_judgments(judgments), run, ["alpha_ndcg@2", "alpha_ndcg@3", "alpha_ndcg@5"])
    above_one = 0
    for qid, values in expected.items():
        for k in (2, 3, 5):
            assert ours.per_query[qid][f"alpha_ndcg@{k}"] == pytest.approx(values[f"alpha-nDCG@{k}"], abs=1e-9)
            above_one += values[f"alpha-nDCG@{k}"] > 1 + 1e-9
    assert above_one > 5
