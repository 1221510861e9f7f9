"""A retrieval method added in full (README, "Extend it"): one registration, and `freshstack-hf retrieve`, the
board's baseline rows (computed here or queued for a worker) and the Answers tab's answer rows all offer it, with
nothing else edited. The toy is BM25 cut to its top 10, computed from the registry's own BM25 run."""

from __future__ import annotations

import functools

import pytest

from freshstack_hf import baselines
from freshstack_hf.baselines import BaselineRun, Method, register_method, unregister_method
from freshstack_hf.runs import load_run


def _top10(topic, inputs, _resources, k):
    first = inputs["bm25"]
    return BaselineRun("bm25_top10", {q: hits[: k or 10] for q, hits in first.run.items()}, {"k": k or 10})


TOY = Method(
    "bm25_top10",
    "BM25 top 10",
    config=lambda _setup, inputs: {"method": "bm25_top10", "k": 10, "input": inputs["bm25"]},
    label=lambda _setup: "BM25 top 10",
    run=_top10,
    answer_part=lambda _setup: {"cut": 10},
    inputs=("bm25",),
    answers=5,
)


@pytest.fixture
def toy():
    register_method(TOY)
    try:
        yield TOY
    finally:
        unregister_method(TOY.name)
    assert TOY.name not in baselines.METHODS


def bm25_top10(dataset) -> dict[str, dict[str, float]]:
    merged = {}
    for t in dataset.topics:
        run = baselines.bm25(dataset.topic(t))
        merged |= BaselineRun("x", {q: hits[:10] for q, hits in run.run.items()}).as_scores()
    return merged


def test_retrieve_offers_a_registered_method(toy, lb_dataset, tmp_path, freshstack_main, capsys):
    out = tmp_path / "toy.trec"
    assert freshstack_main(["retrieve", str(lb_dataset.folder), "--topic", "all", "--method", toy.name,
                            "--out", str(out)]) == 0  # fmt: skip
    written, expected = load_run(out).run, bm25_top10(lb_dataset)
    assert written.keys() == expected.keys()
    assert all(written[q] == pytest.approx(expected[q], rel=1e-6) for q in expected)  # the TREC file's decimals
    assert "bm25_top10 over 6 queries" in capsys.readouterr().out


def test_a_registered_method_is_a_board_row_computed_here_or_by_a_worker(toy, lb_dataset, tmp_path):
    from leaderboard.store.store import Store
    from leaderboard.tracks.retrieval.baseline_rows import compute_baselines, plan_baselines, queue_baselines
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    plan = plan_baselines(lb_dataset, [toy.name])
    assert plan.wanted == [toy.name] and plan.names[toy.name] == "BM25 top 10"
    assert plan.configs[toy.name]["input"] == plan.configs["bm25"]  # its input's config is part of its key
    with Store(f"sqlite:///{tmp_path / 'here.db'}") as here, Store(f"sqlite:///{tmp_path / 'worker.db'}") as queued:
        here.create_all()
        queued.create_all()
        (row,) = compute_baselines(here, lb_dataset, methods=[toy.name], resamples=0)
        assert (row.name, row.created) == ("BM25 top 10", True)
        assert here.find_system(plan.hashes[toy.name]).id == row.system_id
        ranking = here.blobs.ranking_of(row.system_id)
        expected = bm25_top10(lb_dataset)
        assert {q: docs for run in ranking.values() for q, docs in run.items()} == expected

        (waiting,) = queue_baselines(queued, lb_dataset, methods=[toy.name], resamples=0)
        assert waiting.status == "queued"
        work = functools.partial(evaluate_job, dataset=str(lb_dataset.folder))
        assert run_worker(queued, work, once=True, isolate=False).done == 1
        values = lambda store, sid: {(r["topic"], r["measure"]): r["value"] for r in store.results_for(sid)}  # noqa: E731
        assert values(queued, waiting.system_id) == values(here, row.system_id)
        direct = lb_dataset.score(expected, resamples=0)
        for t in lb_dataset.topics:
            assert values(here, row.system_id)[t, "alpha_ndcg@10"] == direct.topics[t].metrics["alpha_ndcg@10"]


def test_a_registered_method_serves_the_answer_rows(toy, lb_dataset):
    from leaderboard.tracks.answers.answer_baselines import plan_answer_baselines, retrievals, top_docs

    assert toy.name in retrievals()
    assert baselines.answer_retrieval(["bm25", toy.name]) == "bm25"  # ranks after BM25 for the answer rows
    assert baselines.answer_retrieval([toy.name]) == toy.name
    plan = plan_answer_baselines(lb_dataset, toy.name)
    assert plan.names["extractive"] == "Extractive top-3 (BM25 top 10)" and plan.configs["extractive"]["cut"] == 10
    assert plan.configs["extractive"]["bm25"] == {"k1": baselines.BM25_K1, "b": baselines.BM25_B, "k": 500}
    ranked = top_docs(lb_dataset, toy.name, plan.dense_dir)
    first = bm25_top10(lb_dataset)
    for t in lb_dataset.topics:
        for q, docs in ranked[t].items():
            assert docs == sorted(first[q], key=lambda d: -first[q][d])[:3]
