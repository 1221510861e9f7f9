"""`freshstack-hf evaluate`: its table and JSON from hand-made records, then end to end on a synthetic repo."""

from __future__ import annotations

import json

import pytest

from freshstack_hf.cli.evaluate import _cutoffs, render_table
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE, NuggetQrels, evaluate
from freshstack_hf.metrics.scoring import compare_runs, comparison_json, score_run, scores_json
from freshstack_hf.records import NuggetJudgment


def topic_qrels(prefix: str, n_queries: int) -> NuggetQrels:
    judgments = [
        NuggetJudgment(f"{prefix}{q}", f"{prefix}{q}_{n}", f"doc{q}_{n}_{d}", int(d < 2))
        for q in range(n_queries)
        for n in range(3)
        for d in range(4)
    ]
    return NuggetQrels.from_judgments(judgments)


QRELS = {"alpha": topic_qrels("a", 12), "beta": topic_qrels("b", 8)}
GOOD = {
    f"{p}{q}": {f"doc{q}_{n}_{d}": 10.0 - n - d / 10 for n in range(3) for d in range(4)}
    for p, count in (("a", 12), ("b", 8))
    for q in range(count)
}
WEAK = {qid: {d: s for d, s in docs.items() if d.endswith("_0_0") or d.endswith("_3")} for qid, docs in GOOD.items()}


def test_score_run_means_intervals_and_average():
    scores = score_run(QRELS, GOOD, resamples=500)
    assert set(scores.topics) == {"alpha", "beta"}
    for m in HEADLINE:
        assert scores.average[m.id] == pytest.approx(
            (scores.topics["alpha"].metrics[m.id] + scores.topics["beta"].metrics[m.id]) / 2
        )
        interval = scores.intervals["average"][m.id]
        assert interval.low <= scores.average[m.id] <= interval.high
    assert scores.topics["alpha"].metrics == evaluate(QRELS["alpha"], GOOD, HEADLINE).metrics
    assert scores.average["coverage@20"] == 1.0


def test_single_run_table():
    scores = score_run(QRELS, GOOD, resamples=200)
    table = render_table([("good", "runs/good.trec")], [scores]).splitlines()
    assert table[0] == "run: good (runs/good.trec)"
    assert table[2].split() == ["topic", "size", "α-nDCG@10", "Coverage@20", "Recall@50"]
    assert table[3].startswith("alpha")
    assert "12 q" in table[3] and "1.000 [1.000, 1.000]" in table[3]
    assert table[5].startswith("average") and "2 topics" in table[5]


def test_two_run_table_and_json():
    a, b = score_run(QRELS, WEAK, resamples=300), score_run(QRELS, GOOD, resamples=300)
    tests = compare_runs(a, b, resamples=300)
    table = render_table([("weak", "w.trec"), ("good", "g.json")], [a, b], tests).splitlines()
    assert table[:2] == ["run A: weak (w.trec)", "run B: good (g.json)"]
    assert table[3].split() == ["topic", "measure", "A", "B", "B-A", "p"]
    assert len(table) == 4 + 3 * 3  # three measures for alpha, beta, average
    assert table[4].split()[:2] == ["alpha", "α-nDCG@10"] and table[4].split()[-2] == "+0.488"
    assert float(table[4].split()[-1]) < 0.01  # 12 queries, all better: only 2 of 4096 sign patterns as extreme
    data = comparison_json(tests)
    assert set(data) == {"topics", "average"}
    assert data["average"]["coverage@20"]["diff"] == pytest.approx(b.average["coverage@20"] - a.average["coverage@20"])
    assert data["average"]["coverage@20"]["p_value"] < 0.01


def test_scores_json_layout():
    data = scores_json(score_run(QRELS, GOOD, resamples=100))
    assert set(data) == {"topics", "average"}
    assert set(data["topics"]["alpha"]) == {"metrics", "ci95", "per_query"}
    assert set(data["topics"]["alpha"]["metrics"]) == {"alpha_ndcg@10", "coverage@20", "recall@50"}
    assert len(data["topics"]["beta"]["per_query"]) == 8
    json.dumps(data)  # plain types only


def test_cutoff_option():
    assert _cutoffs("50,10, 20,10") == [10, 20, 50]
    for bad in ("", "ten", "0,5"):
        with pytest.raises(FreshStackError, match="--k"):
            _cutoffs(bad)


# ---- end to end on a synthetic dataset repo ------------------------------------------------------
@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    synth = pytest.importorskip("freshstack_hf.samples.synth", reason="freshstack_hf.samples.synth not written yet")
    writer = pytest.importorskip("freshstack_hf.repo.writer", reason="freshstack_hf.repo.writer not written yet")
    path = tmp_path_factory.mktemp("repo") / "freshstack"
    topics = synth.synth_topics(["langchain", "yolo"], queries=15, docs=300, seed=1)
    writer.write_topics(path, topics)
    return path, topics


def perfect_run(topics) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for t in topics:
        for j in t.judgments:
            run.setdefault(j.query_id, {})[j.doc_id] = float(j.relevance) + len(j.doc_id) / 1000
    return run


@pytest.mark.slow
def test_cli_end_to_end(repo, tmp_path, capsys):
    from freshstack_hf.cli.main import main
    from freshstack_hf.metrics import qrels_from_topic
    from freshstack_hf.runs import write_run

    path, topics = repo
    run_a = write_run(perfect_run(topics), tmp_path / "a.trec", tag="perfect")
    out = tmp_path / "scores.json"
    assert main(["evaluate", str(path), "--run", str(run_a), "--json", str(out), "--resamples", "200"]) == 0
    printed = capsys.readouterr().out
    assert "run: perfect" in printed and "langchain" in printed and "average" in printed
    data = json.loads(out.read_text())
    assert set(data["topics"]) == {"langchain", "yolo"}
    assert "alpha_ndcg@50" in data["topics"]["yolo"]["metrics"] and "judged@20" in data["topics"]["yolo"]["metrics"]
    for topic in topics:
        expected = evaluate(qrels_from_topic(topic), perfect_run(topics), HEADLINE).metrics
        for m, v in expected.items():
            assert data["topics"][topic.name]["metrics"][m] == pytest.approx(v, abs=1e-12)

    run_b = tmp_path / "b.json"
    run_b.write_text(json.dumps({q: dict(list(docs.items())[:3]) for q, docs in perfect_run(topics).items()}))
    code = main(["evaluate", str(path), "--topic", "yolo", "--run", str(run_a), "--run", str(run_b), "--json", "-"])
    assert code == 0
    captured = capsys.readouterr()
    assert "dropped" in captured.err  # langchain's queries are unknown when only yolo is scored
    data = json.loads(captured.out)  # with `--json -`, stdout is the JSON alone
    assert set(data) == {"runs", "comparison", "settings"}
    assert set(data["comparison"]["topics"]) == {"yolo"}


def test_cli_malformed_run_exits_2_naming_the_line(repo, tmp_path, capsys):
    from freshstack_hf.cli.main import main

    path, _ = repo
    bad = tmp_path / "bad.trec"
    bad.write_text("q Q0 d 1 1.0 t\nq Q0 d 2 oops t\n")
    assert main(["evaluate", str(path), "--run", str(bad)]) == 2
    assert f"{bad} line 2: score 'oops' is not a finite number" in capsys.readouterr().err


def test_cli_strict_refuses_unknown_docs(repo, tmp_path, capsys):
    from freshstack_hf.cli.main import main

    path, topics = repo
    qid = topics[0].queries[0].query_id
    run = tmp_path / "r.trec"
    run.write_text(f"{qid} Q0 not-a-doc 1 1.0 t\n")
    assert main(["evaluate", str(path), "--topic", topics[0].name, "--run", str(run), "--strict"]) == 2
    assert f"unknown doc 'not-a-doc' for query '{qid}'" in capsys.readouterr().err


def test_cli_scores_without_the_cyclic_collector_and_restores_it(repo, tmp_path, monkeypatch, capsys):
    """`evaluate` is one-shot: the collector is off while it runs (its passes over the records read free nothing)
    and back on when it returns, whether it scored or refused the run, for callers that run it in-process."""
    import gc

    import freshstack_hf.cli.evaluate as command
    from freshstack_hf.cli.main import main
    from freshstack_hf.runs import write_run

    path, topics = repo
    seen: list[bool] = []
    score = command._score
    monkeypatch.setattr(command, "_score", lambda *a, **k: seen.append(gc.isenabled()) or score(*a, **k))
    run = write_run(perfect_run(topics), tmp_path / "a.trec", tag="perfect")
    assert gc.isenabled()
    assert main(["evaluate", str(path), "--run", str(run), "--resamples", "50"]) == 0
    assert seen == [False] and gc.isenabled()
    bad = tmp_path / "bad.trec"
    bad.write_text("q Q0 d 1 oops t\n")
    assert main(["evaluate", str(path), "--run", str(bad)]) == 2
    assert gc.isenabled()
    gc.disable()  # a caller that keeps the collector off keeps it off
    try:
        assert main(["evaluate", str(path), "--run", str(run), "--resamples", "50"]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()
    capsys.readouterr()
