"""A retrieval method added in full (README, "Extend it"): one registration, and `freshstack-hf retrieve`, the
board's baseline rows (computed here or queued for a worker), the Answers tab's answer rows, a build's pooling
retrievers and drift's systems all offer it, with nothing else edited. The toy is BM25 cut to its top 10, computed
from the registry's own BM25 run."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from freshstack_hf.baselines import BaselineRun, Method, register_method, registry, retrievers
from freshstack_hf.baselines.registry import unregister_method
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
    assert TOY.name not in registry.METHODS


def bm25_top10(dataset) -> dict[str, dict[str, float]]:
    merged = {}
    for t in dataset.topics:
        run = retrievers.bm25(dataset.topic(t))
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
    from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines, plan_baselines, queue_baselines
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
    assert registry.answer_retrieval(["bm25", toy.name]) == "bm25"  # ranks after BM25 for the answer rows
    assert registry.answer_retrieval([toy.name]) == toy.name
    plan = plan_answer_baselines(lb_dataset, toy.name)
    assert plan.names["extractive"] == "Extractive top-3 (BM25 top 10)" and plan.configs["extractive"]["cut"] == 10
    assert plan.configs["extractive"]["bm25"] == {"k1": retrievers.BM25_K1, "b": retrievers.BM25_B, "k": 500}
    ranked = top_docs(lb_dataset, toy.name, plan.dense_dir)
    first = bm25_top10(lb_dataset)
    for t in lb_dataset.topics:
        for q, docs in ranked[t].items():
            assert docs == sorted(first[q], key=lambda d: -first[q][d])[:3]


POOL_STAGES = "questions,corpus,nuggets,pools"


def test_a_registered_method_is_a_pooling_retriever(toy, tmp_path, freshstack_main, monkeypatch):
    """The pools stage runs the method the YAML names over the pooling queries: the toy at a retrieval depth of 3
    is BM25's top 3, so its pools are those of `retrievers: [bm25]` at that depth."""
    calls = []

    def spy(topic, inputs, resources, k):
        calls.append(([q.query_id for q in topic.queries], [d.doc_id for d in topic.docs], k))
        return toy.run(topic, inputs, resources, k)

    with monkeypatch.context() as patch:  # undone before `toy` unregisters the method
        patch.setitem(registry.METHODS, toy.name, dataclasses.replace(toy, run=spy))
        pools, chunks, queries = build_pools(toy.name, tmp_path, freshstack_main)
    (asked, docs, k), *more = calls
    assert not more and k == 3 and docs == chunks.column("_id").to_pylist()
    assert asked == [f"{q['technique']}\t{q['query_id']}" for q in queries.to_pylist()] and len(asked) > 8
    assert pools.num_rows > 0 and pools.equals(build_pools("bm25", tmp_path, freshstack_main)[0])


def build_pools(name: str, root, main):
    """(pools, chunks, pooling queries) of the history topic built up to its pools with `retrievers: [name]`."""
    import pyarrow.parquet as pq
    from snapshot_topic import make_history, write_definition

    if not (root / "docs").exists():
        make_history(root)
    definition = write_definition(root, pooling={"depth": 10, "retrievers": [name], "retrieval_depth": 3})
    out = root / name / "freshstack"
    assert main(["build", str(definition), "--out", str(out), "--stages", POOL_STAGES, "--quiet"]) == 0
    work = out.parent / "freshstack-work" / "laravel"
    assert json.loads((work / "pools" / "record.json").read_text())["retrievers"] == [name]
    tables = ("pools/pools.parquet", "corpus/chunks.parquet", "pools/pool_queries.parquet")
    return tuple(pq.read_table(work / path) for path in tables)


def test_a_pooling_retriever_outside_the_registry_is_refused_with_the_file(toy, tmp_path, freshstack_main, capsys):
    from snapshot_topic import make_history, write_definition

    make_history(tmp_path)
    for name in ("bm25_top20", "rerank"):  # unknown; registered but needing a cross-encoder a build cannot name
        definition = write_definition(tmp_path, pooling={"retrievers": ["bm25", name]})
        out = tmp_path / "freshstack"
        assert freshstack_main(["build", str(definition), "--out", str(out), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert str(definition) in err and "pooling.retrievers" in err and f"unknown value {name!r}" in err
        assert "choose from bm25, dense, hybrid, bm25_top10" in err
        assert not out.exists() and not (tmp_path / "freshstack-work").exists()


def test_a_registered_method_is_a_drift_system(toy, tmp_path, freshstack_main, capsys):
    """Named as a drift system, a method whose lists the snapshots store is read from them and the toy, stored
    nowhere, is run on each snapshot's topic: its scores are `Dataset.score`'s of its run on that snapshot."""
    from drift_repos import TOPIC, make_snapshots

    from freshstack_hf.drift import drift_report
    from freshstack_hf.metrics import HEADLINE
    from freshstack_hf.repo.dataset import Dataset

    old, new = make_snapshots(tmp_path)
    systems = drift_report(old, new, methods=["bm25", toy.name], resamples=0)["topics"][TOPIC]["systems"]
    assert {name: s["source"] for name, s in systems.items()} == {
        "BM25": "candidates:bm25",
        "BM25 top 10": f"method:{toy.name}",
    }
    measures = [m.id for m in HEADLINE]
    for side, folder in (("old", old), ("new", new)):
        dataset = Dataset(folder)
        expected = dataset.score(bm25_top10(dataset), topics=[TOPIC], measures=measures, resamples=0)
        assert systems["BM25 top 10"][side] == expected.topics[TOPIC].metrics

    args = ["drift", str(old), str(new), "--methods", toy.name, "--json", "-", "--resamples", "0"]
    assert freshstack_main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["topics"][TOPIC]["systems"] == {"BM25 top 10": systems["BM25 top 10"]}
    for name in ("bm25_top20", "rerank"):
        assert freshstack_main(["drift", str(old), str(new), "--methods", f"bm25,{name}"]) == 2
        err = capsys.readouterr().err
        assert f"unknown drift system {name!r}" in err and "of bm25, dense, hybrid, bm25_top10" in err
