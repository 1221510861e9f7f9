"""The leaderboard's RAG track without Gradio: answer submissions in the store (SQLite), the judge job run by a
real worker process against the local chat-completions server, the Answers table, the extractive baseline."""

from __future__ import annotations

import functools
import json

import pytest
from submission_files import answers_text

from freshstack_hf.answers import extractive_answers, parse_answers, score_answers
from freshstack_hf.answers.measures import ANSWER_MEASURES, BY_ID, CITATION_IDS, JUDGE_IDS
from leaderboard.page import display as tbl
from leaderboard.tracks.answers import JUDGE_JOB_KIND as JOB_KIND
from leaderboard.tracks.answers import answers_table as answers_view
from leaderboard.tracks.answers.answer_rows import measure_key
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV, JudgeEndpoint

KEY = "sk-judge-only-for-this-test"


def test_a_valid_answer_file_is_scored_by_citation_and_stored(store, lb_dataset, bm25_runs, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(answers_text(lb_dataset, bm25_runs))
    outcome = AnswerSubmitter(store, lb_dataset, resamples=300).submit(path, name="BM25 extractive")
    assert outcome.status == "scored", outcome
    assert "no judge configured" in outcome.message
    system = store.get_system(outcome.system_id)
    assert system.kind == "answers" and system.status == "scored"
    assert store.queue.list_jobs() == []  # no judge endpoint: nothing queued

    answers = parse_answers(path.read_text(), query_ids=lb_dataset.query_ids(), doc_ids=lb_dataset.doc_ids())
    expected = score_answers([lb_dataset.topic(t) for t in lb_dataset.topics], answers, resamples=300)
    rows = store.results_for(outcome.system_id)
    assert {r["measure"] for r in rows} == {measure_key(m) for m in CITATION_IDS}
    assert len(rows) == len(lb_dataset.topics) * len(CITATION_IDS)
    for r in rows:
        measure = r["measure"].removeprefix("answers:")
        topic = expected.topics[r["topic"]]
        assert r["value"] == topic.metrics[measure]
        interval = expected.intervals[r["topic"]][measure]
        assert (r["ci_low"], r["ci_high"]) == (interval.low, interval.high)
        assert r["per_query"] == {q: s[measure] for q, s in topic.per_query.items()}
        assert r["parameters"]["judge"] is None and r["parameters"]["format"] == "trec-rag"
        assert r["dataset_revision"] == lb_dataset.revision
    assert outcome.details["average"][measure_key("citation_recall")] == expected.average["citation_recall"]

    again = AnswerSubmitter(store, lb_dataset, resamples=300).submit(path, name="same file again")
    assert again.status == "duplicate" and again.system_id == outcome.system_id


def test_a_malformed_answer_file_stores_nothing(store, lb_dataset, bm25_runs, tmp_path):
    lines = answers_text(lb_dataset, bm25_runs).splitlines()
    bad = [lines[0], "not json", lines[1].replace('"topic_id": "', '"topic_id": "nope-'), *lines[2:]]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(bad) + "\n")
    judge = JudgeEndpoint("http://127.0.0.1:9/v1", "m")
    outcome = AnswerSubmitter(store, lb_dataset, judge=judge).submit(path, name="bad", display_name="mine.jsonl")
    assert outcome.status == "refused"
    assert outcome.message == "answers mine.jsonl refused: 2 problem(s)"
    assert outcome.problems[0].startswith("mine.jsonl line 2: not valid JSON")
    assert outcome.problems[1].startswith("mine.jsonl line 3: unknown query 'nope-")
    assert str(tmp_path) not in " ".join(outcome.problems)  # the server's path never reaches the submitter
    assert store.leaderboard_rows() == [] and store.queue.list_jobs() == []
    with store.engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("SELECT COUNT(*) FROM results")).scalar() == 0
        assert conn.execute(text("SELECT COUNT(*) FROM systems")).scalar() == 0


def test_a_gzip_bomb_of_answers_is_refused_as_an_answers_file(store, lb_dataset, tmp_path):
    import gzip

    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (200_000 * 26)))  # a few KB that expand past 25x the cap
    refused = AnswerSubmitter(store, lb_dataset, max_file_bytes=200_000).submit(bomb, name="bomb")
    assert refused.status == "refused"
    assert refused.message == f"answers file expands past {200_000 * 25:,} bytes once decompressed"
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(b"not gzip at all")
    refused = AnswerSubmitter(store, lb_dataset, max_file_bytes=200_000).submit(junk, name="junk")
    assert refused.message.startswith("answers file is not a readable gzip file")
    assert store.leaderboard_rows() == []


@pytest.mark.slow
def test_judge_job_has_no_key_worker_uses_its_own(store, lb_dataset, bm25_runs, tmp_path, llm_server, monkeypatch):
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import KIND_SECRETS, run_worker

    assert KIND_SECRETS[JOB_KIND] == (JUDGE_KEY_ENV,)  # the one variable the job process keeps
    monkeypatch.setenv(JUDGE_KEY_ENV, KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
    path = tmp_path / "answers.jsonl"
    path.write_text(answers_text(lb_dataset, bm25_runs, [lb_dataset.topics[0]]))
    judge = JudgeEndpoint(llm_server.base_url, "judge-model")
    submitter = AnswerSubmitter(store, lb_dataset, judge=judge, resamples=300)
    outcome = submitter.submit(path, name="judged answers")
    assert outcome.status == "scored" and "judge queued" in outcome.message
    assert store.get_system(outcome.system_id).status == "queued"  # citations shown, judge pending
    (job,) = store.queue.list_jobs()
    assert job.kind == JOB_KIND and set(job.payload) == {
        "answers_sha256",
        "dataset",
        "dataset_revision",
        "requested_revision",
        "topics",
        "judge",
        "max_words",
        "resamples",
    }
    assert job.payload["judge"] == {"base_url": llm_server.base_url, "model": "judge-model"}
    assert job.payload["topics"] == [lb_dataset.topics[0]]
    assert KEY not in json.dumps(job.payload) and "sk-" not in json.dumps(job.payload)

    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder))
    stats = run_worker(store, evaluate, once=True, poll_seconds=0.05, isolate=True)  # a real spawned job process
    assert stats.done == 1, store.queue.list_jobs()
    assert store.get_system(outcome.system_id).status == "scored"
    assert llm_server.requests > 0 and set(llm_server.auth_headers) == {f"Bearer {KEY}"}
    rows = {r["measure"]: r for r in store.results_for(outcome.system_id)}
    assert set(rows) == {measure_key(m) for m in (*CITATION_IDS, "nugget_all", "nugget_all_strict")}
    assert rows["answers:nugget_all"]["parameters"]["judge"] == f"openai:judge-model@{llm_server.base_url}"
    # the worker's numbers are the library's, with the same judge (its cache answers, no new request)
    seen = llm_server.requests
    from freshstack_hf.answers import LLMJudge
    from freshstack_hf.answers.judge import default_judge_cache

    again = score_answers(
        [lb_dataset.topic(lb_dataset.topics[0])],
        parse_answers(path.read_text()),
        LLMJudge(llm_server.base_url, "judge-model", default_judge_cache()),
        resamples=300,
    )
    assert llm_server.requests == seen
    topic = again.topics[lb_dataset.topics[0]]
    assert rows["answers:nugget_all"]["value"] == topic.metrics["nugget_all"]
    assert rows["answers:nugget_all"]["per_query"] == {q: s["nugget_all"] for q, s in topic.per_query.items()}


def test_the_answers_table_formats_through_the_leaderboard_display(store, lb_dataset, bm25_runs, tmp_path):
    paths = []
    for i, topics in enumerate((None, [lb_dataset.topics[0]])):
        paths.append(tmp_path / f"a{i}.jsonl")
        paths[-1].write_text(answers_text(lb_dataset, bm25_runs, topics))
    submitter = AnswerSubmitter(store, lb_dataset, resamples=200)
    ids = [submitter.submit(p, name=f"answers {i}").system_id for i, p in enumerate(paths)]
    source = answers_view.AnswersSource(store, lb_dataset.topics, lb_dataset.revision)
    frame = source.frame()
    assert list(frame["id"]) == [str(i) for i in ids]
    assert set(frame["type"]) == {"submitted answers"}
    recall = answers_view.column("average", BY_ID["citation_recall"])
    # only the file answering every topic has an average (the table's rule); the other has its topic's columns
    full, partial = frame.set_index("id").loc[str(ids[0])], frame.set_index("id").loc[str(ids[1])]
    assert full[recall] == pytest.approx(
        sum(full[answers_view.column(t, BY_ID["citation_recall"])] for t in lb_dataset.topics) / 2
    )
    assert partial[recall] != partial[recall]  # NaN
    first_topic_recall = answers_view.column(lb_dataset.topics[0], BY_ID["citation_recall"])
    assert partial[first_topic_recall] == full[first_topic_recall]  # same answers on that topic
    shown = source.display()
    headers = shown["headers"]
    assert headers[:3] == ["id", "system", "type"] and recall in headers
    assert all(h in headers for h in answers_view.metric_columns(lb_dataset.topics))
    col = headers.index(first_topic_recall)
    cells = [row[col] for row in shown["metadata"]["display_value"]]
    assert all(len(c.split(".")[1]) == 3 for c in cells)  # 3 decimals
    styles = [row[col] for row in shown["metadata"]["styling"]]
    assert styles == ["font-weight: bold"] * 2  # a tie: both best
    assert tbl.datatypes(answers_view.sorted_view(frame))[col] == "number"
    unjudged = answers_view.column(lb_dataset.topics[0], BY_ID["citation_unjudged"])
    view = answers_view.sorted_view(frame)
    assert unjudged in view.attrs["lower_is_better"] and tbl.best_values(view)[unjudged] == view[unjudged].min()


@pytest.mark.slow  # the RRF hybrid encodes the corpus with the real MiniLM model
def test_the_extractive_baseline_is_citation_faithful_and_computed_once(store, lb_dataset, tmp_path):
    from leaderboard.tracks.answers.answer_baselines import compute_answer_baselines

    (row,) = compute_answer_baselines(store, lb_dataset, resamples=200)
    assert row.created
    system = store.get_system(row.system_id)
    assert system.kind == "answers" and system.content_hash.startswith("answers-baseline:")
    frame = answers_view.AnswersSource(store, lb_dataset.topics, lb_dataset.revision).frame()
    assert list(frame["type"]) == ["baseline"] and list(frame["system"]) == ["Extractive top-3 (RRF hybrid)"]
    rows = store.results_for(row.system_id)
    assert {r["topic"] for r in rows} == set(lb_dataset.topics)
    assert {r["measure"] for r in rows} == {measure_key(m.id) for m in ANSWER_MEASURES if not m.judge}
    assert rows[0]["parameters"]["config"]["retrieval"] == "hybrid"

    # citation-faithful: every sentence is copied from the doc it cites
    topic = lb_dataset.topic(lb_dataset.topics[0])
    texts = {d.doc_id: " ".join(d.text.split()) for d in topic.docs}
    ranked = {q.query_id: [d.doc_id for d in topic.docs[:3]] for q in topic.queries}
    answers = extractive_answers(topic, ranked)
    assert answers.answers and all(len(a.sentences) >= 1 for a in answers.answers.values())
    for answer in answers.answers.values():
        for sentence in answer.sentences:
            (doc,) = sentence.citations
            assert doc in answer.references and " ".join(sentence.text.split()) in texts[doc]

    (again,) = compute_answer_baselines(store, lb_dataset, resamples=200)
    assert not again.created and again.system_id == row.system_id
    assert len(store.leaderboard_rows(kinds=("answers",))) == 1


def test_judge_endpoint_from_env(monkeypatch):
    from freshstack_hf.errors import FreshStackError

    monkeypatch.delenv("FRESHSTACK_JUDGE_BASE_URL", raising=False)
    assert JudgeEndpoint.from_env() is None
    monkeypatch.setenv("FRESHSTACK_JUDGE_BASE_URL", "http://judge/v1")
    with pytest.raises(FreshStackError, match="FRESHSTACK_JUDGE_MODEL is not"):
        JudgeEndpoint.from_env()
    monkeypatch.setenv("FRESHSTACK_JUDGE_MODEL", "m")
    assert JudgeEndpoint.from_env() == JudgeEndpoint("http://judge/v1", "m")
    assert JUDGE_IDS == ("nugget_all", "nugget_all_strict", "nugget_vital", "nugget_vital_strict")


@pytest.mark.slow
def test_llm_answer_baseline_queued_then_made_by_a_worker(store, lb_dataset, llm_server, monkeypatch, tmp_path):
    from leaderboard.tracks.answers import GENERATE_JOB_KIND
    from leaderboard.tracks.answers.answer_baselines import compute_answer_baselines
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import KIND_SECRETS, run_worker

    assert KIND_SECRETS[GENERATE_JOB_KIND] == (JUDGE_KEY_ENV,)
    monkeypatch.setenv(JUDGE_KEY_ENV, KEY)
    judge = JudgeEndpoint(llm_server.base_url, "judge-model")
    generator = JudgeEndpoint(llm_server.base_url, "gen-model")
    rows = compute_answer_baselines(
        store, lb_dataset, retrieval="bm25", judge=judge, generator=generator, resamples=200
    )
    assert [(r.method, r.created) for r in rows] == [("extractive", True), ("llm", True)]
    assert llm_server.requests == 0  # the app generates nothing: it holds no key
    llm_row = store.get_system(rows[1].system_id)
    assert llm_row.status == "queued" and llm_row.content_hash.startswith("answers-baseline:")
    jobs = {j.kind: j for j in store.queue.list_jobs()}
    assert set(jobs) == {JOB_KIND, GENERATE_JOB_KIND}  # the extractive row's judge job, the LLM row's job
    payload = jobs[GENERATE_JOB_KIND].payload
    assert payload["generator"] == {"base_url": llm_server.base_url, "model": "gen-model"}
    assert all(len(ids) <= 3 for r in payload["ranked"].values() for ids in r.values())
    assert KEY not in json.dumps(payload)

    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder))
    stats = run_worker(store, evaluate, poll_seconds=0.05, isolate=False, max_idle_seconds=0.2)
    assert stats.done == 2, store.queue.list_jobs()
    assert set(llm_server.auth_headers) == {f"Bearer {KEY}"}
    models = [b["model"] for b in llm_server.chat_bodies]
    assert "gen-model" in models and "judge-model" in models
    measures = {r["measure"] for r in store.results_for(rows[1].system_id)}
    assert measures == {measure_key(m) for m in (*CITATION_IDS, "nugget_all", "nugget_all_strict")}
    frame = answers_view.AnswersSource(store, lb_dataset.topics, lb_dataset.revision).frame()
    assert list(frame["type"]) == ["baseline", "baseline"]
    all_column = answers_view.column("average", BY_ID["nugget_all"])
    assert frame[all_column].notna().all()  # both rows judged

    again = compute_answer_baselines(store, lb_dataset, retrieval="bm25", judge=judge, generator=generator)
    assert [r.created for r in again] == [False, False] and len(store.queue.list_jobs()) == 2


@pytest.mark.slow
def test_queued_answer_baselines_are_made_by_workers_as_the_app_made_them(
    store, lb_dataset, llm_server, monkeypatch, tmp_path
):
    """The app queues both answer rows and computes nothing; the baseline worker writes the extractive answers and
    scores them by citation (the numbers `compute_answer_baselines` stores), queueing their judge; a worker holding
    the key judges them and generates the LLM row."""
    from freshstack_hf.answers.measures import CITATION_IDS
    from leaderboard.store.store import Store
    from leaderboard.tracks.answers import BASELINE_JOB_KIND, GENERATE_JOB_KIND
    from leaderboard.tracks.answers.answer_baselines import compute_answer_baselines, queue_answer_baselines
    from leaderboard.worker.jobs import BASELINE_JOB_KINDS, evaluate_job
    from leaderboard.worker.worker import run_worker

    monkeypatch.setenv(JUDGE_KEY_ENV, KEY)
    judge = JudgeEndpoint(llm_server.base_url, "judge-model")
    generator = JudgeEndpoint(llm_server.base_url, "gen-model")
    options = {"retrieval": "bm25", "judge": judge, "generator": generator, "resamples": 200}
    rows = queue_answer_baselines(store, lb_dataset, **options)
    assert [(r.method, r.created, r.status) for r in rows] == [("extractive", True, "queued"), ("llm", True, "queued")]
    assert llm_server.requests == 0 and store.results_for(rows[0].system_id) == []  # the app computed nothing
    jobs = {j.kind: j for j in store.queue.list_jobs()}
    assert set(jobs) == {BASELINE_JOB_KIND, GENERATE_JOB_KIND}
    assert "ranked" not in jobs[GENERATE_JOB_KIND].payload  # its worker retrieves the top docs itself
    assert KEY not in json.dumps([j.payload for j in jobs.values()])
    again = queue_answer_baselines(store, lb_dataset, **options)
    assert [r.created for r in again] == [False, False] and len(store.queue.list_jobs()) == 2

    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder))
    idle = {"poll_seconds": 0.05, "max_idle_seconds": 0.2, "isolate": False}
    stats = run_worker(store, evaluate, kinds=BASELINE_JOB_KINDS, **idle)  # the app's baseline worker
    assert stats.done == 1 and llm_server.requests == 0
    extractive = store.get_system(rows[0].system_id)
    assert extractive.status == "queued"  # its citation scores are in; its judge waits for a keyed worker
    citation = {measure_key(m) for m in CITATION_IDS}
    assert {r["measure"] for r in store.results_for(extractive.id)} == citation
    (judge_job,) = store.queue.list_jobs(state="queued", system_id=extractive.id)
    assert judge_job.kind == JOB_KIND and judge_job.payload["judge"] == judge.as_payload()
    # the answers the judge reads were stored with the citation scores, in the worker's transaction
    assert store.blobs.refs_of(extractive.id) == {"answers": judge_job.payload["answers_sha256"]}

    with Store(f"sqlite:///{tmp_path / 'in-process.db'}") as sync:
        sync.create_all()
        made = compute_answer_baselines(sync, lb_dataset, retrieval="bm25", resamples=200)
        values = {(r["topic"], r["measure"]): r["value"] for r in sync.results_for(made[0].system_id)}
    assert {(r["topic"], r["measure"]): r["value"] for r in store.results_for(extractive.id)} == values

    stats = run_worker(store, evaluate, **idle)  # a worker that holds the judge's key
    assert stats.done == 2, store.queue.list_jobs()
    judged = {measure_key(m) for m in ("nugget_all", "nugget_all_strict")}
    for row in rows:
        assert store.get_system(row.system_id).status == "scored"
        assert judged <= {r["measure"] for r in store.results_for(row.system_id)}
    generated = store.results_for(rows[1].system_id)[0]["parameters"]
    assert generated["job"] == GENERATE_JOB_KIND and "gen-model" in generated["generator"]
    assert generated["answered"] > 0
    assert store.queue.live_jobs() == 0
    assert [r.status for r in queue_answer_baselines(store, lb_dataset, **options)] == ["scored", "scored"]
