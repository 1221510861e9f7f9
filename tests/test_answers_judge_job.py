"""The judge job of the answers track: the app stores the checked answers in the store (a blob of the system, by
their hash) and the job names that hash, never the text; the worker reads them from the store, checks the hash and
only judges them (the citation scores are stored already), with the numbers the library gives; a job queued by an
older release (answers text in its payload) still runs."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from submission_files import answers_text

from freshstack_hf.answers import LLMJudge, default_judge_cache, parse_answers, score_answers, to_trec_rag
from freshstack_hf.answers import scores as answer_scores
from freshstack_hf.answers.measures import JUDGE_IDS
from freshstack_hf.errors import FreshStackError
from leaderboard.store.blob_store import blobs
from leaderboard.store.blobs import BlobCorrupt
from leaderboard.store.records import JobRecord
from leaderboard.store.store import Store
from leaderboard.tracks.answers import ANSWERS_BLOB, JUDGE_JOB_KIND
from leaderboard.tracks.answers.answer_rows import measure_key
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.worker.job_contract import INPUTS
from leaderboard.worker.jobs import evaluate_job
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV, JudgeEndpoint

RESAMPLES = 300
JUDGE_MODEL = "judge-of-archived-answers"  # its own judge cache entries: no other test answers for it


@pytest.fixture
def queued(tmp_path, lb_dataset, bm25_runs, llm_server, monkeypatch):
    """An answer file submitted with a judge configured: the store, the file and its judge job."""
    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-judge-test")
    path = tmp_path / "answers.jsonl"
    path.write_text(answers_text(lb_dataset, bm25_runs))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        judge = JudgeEndpoint(llm_server.base_url, JUDGE_MODEL)
        submitter = AnswerSubmitter(store, lb_dataset, judge=judge, resamples=RESAMPLES)
        outcome = submitter.submit(path, name="judged")
        assert outcome.status == "scored", outcome
        (job,) = store.queue.list_jobs()
        yield store, path, job


def run(job: JobRecord, lb_dataset, store: Store | None, payload: dict | None = None):
    """The worker's evaluate function on `job` (or on `job` with another payload), in this process, given the
    answers the worker reads from `store` for it (none when `store` is None)."""
    from leaderboard.worker.worker import with_inputs

    job = job if payload is None else dataclasses.replace(job, payload=payload)
    job = with_inputs(store, job) if store is not None else job
    return evaluate_job(job, dataset=str(lb_dataset.folder))


def library_judge_scores(lb_dataset, path, base_url: str):
    """The library's own scores of the file with the same judge (every measure, citations included)."""
    answers = parse_answers(path.read_text(), query_ids=lb_dataset.query_ids(), doc_ids=lb_dataset.doc_ids())
    judge = LLMJudge(base_url, JUDGE_MODEL, default_judge_cache(), api_key_env=JUDGE_KEY_ENV)
    topics = [lb_dataset.topic(t) for t in lb_dataset.topics]
    return score_answers(topics, answers, judge, resamples=RESAMPLES)


@pytest.mark.slow
def test_the_judge_job_names_the_stored_answers_by_hash_not_their_text(queued, lb_dataset):
    store, path, job = queued
    assert job.kind == JUDGE_JOB_KIND and "answers" not in job.payload
    sha256 = job.payload["answers_sha256"]
    assert re.fullmatch(r"[0-9a-f]{64}", sha256)
    checked = to_trec_rag(parse_answers(path.read_text(), query_ids=lb_dataset.query_ids()))
    assert store.blobs.refs_of(job.system_id) == {ANSWERS_BLOB: sha256}  # kept with the row, by its text's hash
    assert store.blobs.get(sha256).decode() == checked  # the checked answers, as TREC RAG JSONL
    assert checked.splitlines()[0] not in json.dumps(job.payload)
    assert len(json.dumps(job.payload)) < 1000  # small whatever the file's size


def test_the_worker_judges_only_and_stores_the_librarys_numbers(queued, lb_dataset, llm_server, monkeypatch):
    """No citation score is computed again in the job (they are stored already); the judge's measures are the
    library's, values, intervals and per-query scores."""
    store, path, job = queued
    calls = []
    citation_scores = answer_scores.citation_scores
    monkeypatch.setattr(answer_scores, "citation_scores", lambda *a: calls.append(a) or citation_scores(*a))
    output = run(job, lb_dataset, store)
    assert calls == []
    monkeypatch.undo()
    expected = library_judge_scores(lb_dataset, path, llm_server.base_url)
    assert set(output.results) == set(lb_dataset.topics)
    for name, result in output.results.items():
        topic = expected.topics[name]
        judged = [m for m in JUDGE_IDS if m in topic.metrics]
        assert judged and result["metrics"] == {measure_key(m): topic.metrics[m] for m in judged}
        intervals = expected.intervals[name]
        assert result["ci"] == {measure_key(m): (intervals[m].low, intervals[m].high) for m in judged}
        per_query = {q: {measure_key(m): s[m] for m in judged if m in s} for q, s in topic.per_query.items()}
        assert {q: s for q, s in result["per_query"].items() if s} == {q: s for q, s in per_query.items() if s}
    assert output.meta.parameters["judge"] == f"openai:{JUDGE_MODEL}@{llm_server.base_url}"


def test_a_judge_job_queued_by_an_older_release_still_runs(queued, lb_dataset):
    """Older payloads carried the answers text; they are judged the same, and need nothing from the store."""
    store, _, job = queued
    new = run(job, lb_dataset, store)
    text = store.blobs.get(job.payload["answers_sha256"]).decode()
    old_payload = {k: v for k, v in job.payload.items() if k != "answers_sha256"} | {"answers": text}
    old = run(job, lb_dataset, None, old_payload)
    assert old.results == new.results and old.meta == new.meta


def test_stored_answers_are_read_back_only_as_they_were_written(queued, lb_dataset):
    """A blob whose bytes changed in the database is refused, naming it and the fix; answers other than the ones
    the job was queued for are refused too; no judge is asked either way."""
    store, _, job = queued
    sha256 = job.payload["answers_sha256"]
    with store.db.write() as conn:  # damage the stored bytes behind the store's back
        conn.execute(blobs.update().where(blobs.c.sha256 == sha256).values(data=b"not what was stored"))
    with pytest.raises(BlobCorrupt, match=f"stored blob {sha256} is damaged.*admin import"):
        run(job, lb_dataset, store)
    other = {**job.payload, INPUTS: {ANSWERS_BLOB: b"another answer\n"}}
    with pytest.raises(FreshStackError, match="not the ones this job was queued for"):
        evaluate_job(dataclasses.replace(job, payload=other), dataset=str(lb_dataset.folder))
    with pytest.raises(FreshStackError, match="the store keeps no answers file for this job's system"):
        run(job, lb_dataset, None)


def test_answers_are_stored_with_the_row_whether_or_not_a_judge_is_named(tmp_path, lb_dataset, bm25_runs):
    path = tmp_path / "answers.jsonl"
    path.write_text(answers_text(lb_dataset, bm25_runs))
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        outcome = AnswerSubmitter(store, lb_dataset, resamples=0).submit(path, name="no judge")
        assert outcome.status == "scored" and store.queue.list_jobs() == []
        checked = to_trec_rag(parse_answers(path.read_text(), query_ids=lb_dataset.query_ids()))
        assert store.blobs.system_blob(outcome.system_id, ANSWERS_BLOB).decode() == checked


def test_the_judge_job_refuses_a_payload_naming_no_answers(queued, lb_dataset):
    store, _, job = queued
    payload = {k: v for k, v in job.payload.items() if k != "answers_sha256"}
    with pytest.raises(FreshStackError, match="without 'answers_sha256'"):
        run(job, lb_dataset, store, payload)


def test_score_answers_without_citations_gives_the_same_nugget_scores(lb_dataset, bm25_runs):
    """The library option the judge job uses: `citations=False` leaves the citation measures out and nothing else
    changes (values, intervals, per-query scores, the average); without a judge it has nothing to score."""
    from freshstack_hf.answers import OfflineJudge

    answers = parse_answers(answers_text(lb_dataset, bm25_runs), query_ids=lb_dataset.query_ids())
    topics = [lb_dataset.topic(t) for t in lb_dataset.topics]
    full = score_answers(topics, answers, OfflineJudge(), resamples=RESAMPLES)
    judged = score_answers(topics, answers, OfflineJudge(), resamples=RESAMPLES, citations=False)
    assert judged.measures() == [m for m in full.measures() if m in JUDGE_IDS] != []
    for name, topic in judged.topics.items():
        assert topic.metrics == {m: v for m, v in full.topics[name].metrics.items() if m in JUDGE_IDS}
        assert judged.intervals[name] == {m: v for m, v in full.intervals[name].items() if m in JUDGE_IDS}
        assert topic.per_query == {
            q: {m: v for m, v in s.items() if m in JUDGE_IDS}
            for q, s in full.topics[name].per_query.items()
            if any(m in JUDGE_IDS for m in s)
        }
    assert judged.average == {m: v for m, v in full.average.items() if m in JUDGE_IDS}
    average = full.intervals["average"]
    assert judged.intervals["average"] == {m: v for m, v in average.items() if m in JUDGE_IDS}
    with pytest.raises(ValueError, match="needs a judge"):
        score_answers(topics, answers, citations=False)


def test_the_backend_labels_are_the_librarys_one_label(lb_dataset, bm25_runs, llm_server, monkeypatch):
    """The judge's and the LLM baseline generator's labels come from `endpoint_label` (byte-identical to what is
    stored already), not from a format string of their own."""
    from freshstack_hf.llm.transport import endpoint_label
    from leaderboard.tracks.answers import answer_jobs
    from leaderboard.worker import judge_endpoint

    monkeypatch.setenv(JUDGE_KEY_ENV, "sk-judge-test")
    url = llm_server.base_url
    assert JudgeEndpoint(url, JUDGE_MODEL).name == endpoint_label(JUDGE_MODEL, url) == f"openai:{JUDGE_MODEL}@{url}"
    monkeypatch.setattr(judge_endpoint, "endpoint_label", lambda model, base_url: f"label of {model}")
    assert JudgeEndpoint(url, JUDGE_MODEL).name == f"label of {JUDGE_MODEL}"

    topic = lb_dataset.topics[0]
    ranked = {q: sorted(docs, key=lambda d: -docs[d])[:3] for q, docs in bm25_runs[topic].items()}
    payload = {"topics": [topic], "ranked": {topic: ranked}, "generator": {"base_url": url, "model": "gen-model"}}
    job = JobRecord(1, 1, "answers_generate", payload, "running", 1, 3, "w", None, None, None, None, None)
    stored = evaluate_job(job, dataset=str(lb_dataset.folder)).meta.parameters["generator"]
    assert stored == f"openai:gen-model@{url}"
    monkeypatch.setattr(answer_jobs, "endpoint_label", lambda model, base_url: f"label of {model}")
    assert evaluate_job(job, dataset=str(lb_dataset.folder)).meta.parameters["generator"] == "label of gen-model"
