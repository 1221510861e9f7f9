"""Hole filling for stored systems (`leaderboard.fills`): a stored system's archived run (kept in the store) is
filled, and every stored system's Judged@10 and headline scores are shown old -> new, with the old revision left as
it was; a fill made by a worker on another machine reaches the board through the store."""

from __future__ import annotations

import shutil

import pytest

from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.revisions import list_revisions
from leaderboard.fills import fill_stored_system, moves_table
from leaderboard.scoring import score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.worker.judge_endpoint import JudgeEndpoint


@pytest.fixture
def board(lb_dataset, bm25_runs, store, tmp_path):
    """A copy of the small repo, a store with BM25 and a run whose top 10 is half unjudged, both archived."""
    folder = tmp_path / "freshstack"
    shutil.copytree(lb_dataset.folder, folder)
    data = Dataset(folder)
    topic = data.topic("alpha")
    judged = {(j.query_id, j.doc_id) for j in topic.judgments}
    corpus = sorted(topic.doc_ids)
    holey = {}
    for qid in topic.query_ids:
        top = sorted(bm25_runs["alpha"][qid], key=bm25_runs["alpha"][qid].get, reverse=True)
        mine = [d for d in top if (qid, d) in judged][:5] + [d for d in corpus if (qid, d) not in judged][:5]
        holey[qid] = {d: float(10 - r) for r, d in enumerate(mine)}
    ids = {}
    for name, kind, run in (("BM25", "baseline", bm25_runs["alpha"]), ("holey", "run", holey)):
        scored = score_for_store(data, run, ["alpha"], resamples=0)
        meta = ResultMeta(data.revision)
        system, _ = store.add_system(
            name=name, kind=kind, content_hash=f"hash-{name}", results=scored.results, meta=meta, blobs=scored.blobs()
        )
        ids[name] = system.id
    return data, ids


def stored_results(data):
    """Scores of a one-document run, for a system stored without any ranking behind it."""
    topic = data.topic("alpha")
    run = {q: {sorted(topic.doc_ids)[0]: 1.0} for q in topic.query_ids}
    return score_for_store(data, run, ["alpha"], resamples=0).results


@pytest.mark.slow
def test_a_stored_system_is_filled_and_every_system_rescored(board, store, llm_server):
    data, ids = board
    before = {p.name: p.read_bytes() for p in data.folder.rglob("*") if p.is_file()}
    judge = JudgeEndpoint(llm_server.base_url, "judge-m")
    record, moves = fill_stored_system(store, data, ids["holey"], "alpha", judge=judge)
    sent = llm_server.by_path["POST /v1/chat/completions"]
    assert record.holes == 5 * 6 and record.requests == sent > 0 and record.revision == "main.fill1"
    by_name = {m.system: m for m in moves}
    assert set(by_name) == {"BM25", "holey"}
    assert by_name["holey"].old["judged@10"] == pytest.approx(0.5) and by_name["holey"].new["judged@10"] == 1.0
    assert by_name["holey"].old == pytest.approx(record.before) and by_name["holey"].new == pytest.approx(record.after)
    # BM25's old numbers are exactly what the store holds; the old folder is byte-identical.
    stored = {r["measure"]: r["value"] for r in store.results_for(ids["BM25"])}
    for measure in ("alpha_ndcg@10", "coverage@20", "recall@50", "judged@10"):
        assert by_name["BM25"].old[measure] == stored[measure]
    assert {p.name: p.read_bytes() for p in data.folder.rglob("*") if p.is_file()} == before
    rows = moves_table(moves, record.revision)
    assert {r["system"]: r["judged@10"] for r in rows}["holey"] == "0.500 -> 1.000"
    assert all(r["qrels revision"] == "main.fill1" for r in rows)
    # Filling it again on the new revision: no hole, no request, nothing written.
    filled = Dataset(data.source, "main.fill1")
    again, none = fill_stored_system(store, filled, ids["holey"], "alpha", judge=judge)
    assert again.holes == 0 and again.revision is None and none == []
    assert llm_server.by_path["POST /v1/chat/completions"] == sent and list_revisions(data.folder) == ["main.fill1"]


@pytest.mark.slow
def test_no_endpoint_means_the_offline_judge(board, store, monkeypatch):
    monkeypatch.delenv("FRESHSTACK_JUDGE_BASE_URL", raising=False)
    data, ids = board
    record, moves = fill_stored_system(store, data, ids["holey"], "alpha", name="offline")
    assert record.judge == "offline-heuristic" and record.requests == 0 and record.revision == "offline"
    assert {m.system: m.new["judged@10"] for m in moves}["holey"] == 1.0


@pytest.mark.slow
def test_a_worker_fills_a_queued_system_and_the_holes_tab_shows_the_moves(board, store, llm_server, monkeypatch):
    import functools

    from freshstack_hf.cli.main import main
    from leaderboard.tracks.retrieval.views.holes import HolesSource, served_note
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    data, ids = board
    monkeypatch.setenv("FRESHSTACK_JUDGE_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("FRESHSTACK_JUDGE_MODEL", "judge-m")
    queue = ["fill-board", "--store", store.url, "--dataset", str(data.folder)]
    assert main([*queue, "--system", str(ids["holey"]), "--topic", "alpha"]) == 0
    stored = store.results_for(ids["holey"])
    work = functools.partial(evaluate_job)
    run_worker(store, work, once=True, isolate=False)
    sent = llm_server.by_path["POST /v1/chat/completions"]
    assert sent > 0 and list_revisions(data.folder) == ["main.fill1"]
    assert [j.state for j in store.queue.list_jobs(system_id=ids["holey"])] == ["done"]
    assert store.get_system(ids["holey"]).status == "scored" and store.results_for(ids["holey"]) == stored

    source = HolesSource(store, data)
    [(title, rows)] = source.sections()
    assert title.startswith("`main.fill1`: alpha") and "judge-m" in title
    by_name = {r["system"]: r for r in rows}
    assert by_name["holey"]["judged@10"] == "0.500 -> 1.000" and set(by_name) == {"BM25", "holey"}
    assert "Qrels revision served: **main**" in served_note(data)
    assert "Filled from `main`" in served_note(Dataset(data.folder, "main.fill1"))

    assert main([*queue, "--system", str(ids["holey"]), "--topic", "alpha"]) == 0  # the same holes again
    run_worker(store, work, once=True, isolate=False)
    assert llm_server.by_path["POST /v1/chat/completions"] == sent  # every verdict came from the judge's cache

    assert store.blobs.refs_of(ids["holey"]).keys() == {"ranking", "fill:main.fill1", "fill:main.fill2"}
    bare, _ = store.add_system(name="bare", kind="run", content_hash="hash-bare", results=stored_results(data),
                               meta=ResultMeta(data.revision))  # fmt: skip
    store.queue.enqueue(bare.id, "fill", {"dataset": str(data.folder), "topic": "alpha", "system": "bare",
                                    "content_hash": "hash-bare", "k": 10})  # fmt: skip
    run_worker(store, work, once=True, isolate=False)  # a fill that cannot run fails its job, not the system
    (failed,) = store.queue.list_jobs(system_id=bare.id)
    assert failed.state == "failed" and "the store keeps no ranking to fill from" in failed.error
    assert store.get_system(bare.id).status == "scored"


def test_fill_board_refuses_a_system_without_a_ranking(board, store, capsys):
    from freshstack_hf.cli.main import main

    data, ids = board
    args = ["fill-board", "--store", store.url, "--dataset", str(data.folder)]
    assert main([*args, "--system", "999", "--topic", "alpha"]) == 2
    assert "--system 999: no scored system" in capsys.readouterr().err
    assert main([*args, "--system", str(ids["holey"]), "--topic", "beta"]) == 2
    assert "the store keeps no ranking of it on topic 'beta'" in capsys.readouterr().err
    assert store.queue.list_jobs() == []


def test_a_fill_made_by_a_worker_elsewhere_reaches_the_board_through_the_store(board, store, tmp_path, monkeypatch):
    """The worker has its own copy of the dataset and no folder in common with the board: it reads the ranking from
    the store, fills beside its copy, and the fill goes back to the store, from which the board writes the same
    revision beside its own dataset; the Holes tab then shows it, and a second fill gets the next name."""
    import functools

    from freshstack_hf.cli.main import main
    from leaderboard.tracks.retrieval.views.holes import HolesSource
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    monkeypatch.delenv("FRESHSTACK_JUDGE_BASE_URL", raising=False)
    data, ids = board
    elsewhere = tmp_path / "worker-machine" / "freshstack"
    shutil.copytree(data.folder, elsewhere)
    queue = ["fill-board", "--store", store.url, "--dataset", str(data.folder), "--system", str(ids["holey"])]
    assert main([*queue, "--topic", "alpha"]) == 0
    (job,) = store.queue.list_jobs(system_id=ids["holey"])
    assert job.payload["name"] == "main.fill1"
    shutil.move(data.folder, tmp_path / "hidden-from-the-worker")  # the job's folder does not exist "there"
    try:
        run_worker(store, functools.partial(evaluate_job, dataset=str(elsewhere)), once=True, isolate=False)
    finally:
        shutil.move(tmp_path / "hidden-from-the-worker", data.folder)
    assert [j.state for j in store.queue.list_jobs(system_id=ids["holey"])] == ["done"]
    assert list_revisions(elsewhere) == ["main.fill1"] and list_revisions(data.folder) == []
    source = HolesSource(store, data)
    [(title, rows)] = source.sections()  # written beside the board's dataset from the store
    assert title.startswith("`main.fill1`: alpha") and list_revisions(data.folder) == ["main.fill1"]
    mine, theirs = (Dataset(f, "main.fill1").topic("alpha") for f in (data.folder, elsewhere))
    as_rows = lambda t: sorted((j.query_id, j.nugget_id, j.doc_id, j.relevance) for j in t.judgments)  # noqa: E731
    assert as_rows(mine) == as_rows(theirs) and len(as_rows(mine)) > len(as_rows(data.topic("alpha")))
    tables = sorted(
        p.relative_to(elsewhere.parent) for p in elsewhere.parent.glob("freshstack@main.fill1/data/**/*.parquet")
    )
    assert tables and all((data.folder.parent / t).read_bytes() == (elsewhere.parent / t).read_bytes() for t in tables)
    assert {r["system"]: r["judged@10"] for r in rows}["holey"] == "0.500 -> 1.000"
    assert main([*queue, "--topic", "alpha"]) == 0
    assert store.queue.list_jobs(system_id=ids["holey"])[-1].payload["name"] == "main.fill2"


def test_the_holes_tab_rescores_only_the_systems_of_the_served_revision(board, store, monkeypatch):
    """A system scored on another snapshot ranked that snapshot's queries: re-scored on a fill of the served one, its
    "old" number would not be the one it has, so the Holes tab leaves it out (its ranking is kept all the same)."""
    from leaderboard.tracks.retrieval.views.holes import HolesSource

    monkeypatch.delenv("FRESHSTACK_JUDGE_BASE_URL", raising=False)
    data, ids = board
    ranking = store.blobs.ranking_of(ids["BM25"])
    scored = score_for_store(data, ranking["alpha"], ["alpha"], resamples=0)
    other, _ = store.add_system(name="BM25 of another snapshot", kind="baseline", content_hash="hash-elsewhere",
                                results=scored.results, meta=ResultMeta("local-another-snapshot"),
                                blobs=scored.blobs())  # fmt: skip
    assert store.blobs.ranking_of(other.id)  # archived, so the tab could re-score it
    fill_stored_system(store, data, ids["holey"], "alpha", name="main.fill1")
    [(_title, rows)] = HolesSource(store, data).sections()
    assert sorted(r["system"] for r in rows) == ["BM25", "holey"]
