"""The reranking track without Gradio: reranked runs checked against each query's candidates and scored, CrossEncoder
folders vetted at the door and scored by a real worker, the Reranking table with its first-stage reference line,
and the reranking kinds on an older store, on SQLite and PostgreSQL.

The dataset is the small synthetic repo (2 topics x 6 queries, a `top_ranked` list of about 15 docs per query);
the CrossEncoder is a real, tiny one saved by sentence-transformers (`tests/cross_encoders.py`). The numbers a
worker stores are checked against MTEB's own in `test_leaderboard_rerank_app.py` (slow).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from cross_encoders import tiny_cross_encoder
from store_rows import count, topic_scores

from freshstack_hf.metrics import HEADLINE, MEASURES
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.runs import from_ids, load_run
from leaderboard.scoring import score_for_store
from leaderboard.store.blob_store import blobs
from leaderboard.store.rate_limit import rate_events
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import jobs, systems
from leaderboard.store.store import Store
from leaderboard.tracks.reranking import SYSTEM_KINDS as RERANK_KINDS
from leaderboard.tracks.reranking.rerank_submit import RerankedRunSubmitter, RerankerSubmitter
from leaderboard.tracks.reranking.rerank_table import REFERENCE_ID, REFERENCE_TYPE, RerankSource
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tables.leaderboard_table import BoardSource
from leaderboard.tracks.retrieval.tables.table_columns import column

TOP = column(AVERAGE, HEADLINE[0])


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    """The server's model root, holding one real tiny CrossEncoder (`tiny`)."""
    root = tmp_path_factory.mktemp("models")
    tiny_cross_encoder(root / "tiny")
    return root


def submitter_for(store, dataset, tmp_path) -> RerankedRunSubmitter:
    return RerankedRunSubmitter(store, dataset, rate_limit=100, resamples=200)


def reranker_submitter_for(store, dataset, tmp_path, models: Path) -> RerankerSubmitter:
    return RerankerSubmitter(store, dataset, rate_limit=100, model_roots=(models,), resamples=200)


def reranked_lines(dataset) -> list[tuple[str, str]]:
    """(query id, doc id) in file order: each query's candidates reversed (a real reordering), every topic."""
    return [(q, d) for t in dataset.topics for q, ids in dataset.candidates(t).items() for d in reversed(ids)]


def write_run(path: Path, lines: list[tuple[str, str]]) -> Path:
    ranks: dict[str, int] = {}
    text = []
    for qid, doc in lines:
        ranks[qid] = ranks.get(qid, 0) + 1
        text.append(f"{qid} Q0 {doc} {ranks[qid]} {1000 - ranks[qid]} reranked")
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def test_a_reranked_run_is_scored_and_shown_in_the_reranking_table_only(store, lb_dataset, tmp_path):
    submitter = submitter_for(store, lb_dataset, tmp_path)
    path = write_run(tmp_path / "reversed.trec", reranked_lines(lb_dataset))
    outcome = submitter.submit(path, name="reversed candidates", identity="ip:1")
    assert outcome.status == "scored", outcome
    system = store.get_system(outcome.system_id)
    assert system.kind == "reranked_run" and system.content_hash.startswith("reranked_run:")
    expected = score_for_store(lb_dataset, load_run(path).run, lb_dataset.topics, resamples=200)
    stored = {(r["topic"], r["measure"]): r["value"] for r in store.results_for(system.id)}
    assert len(stored) == len(MEASURES) * len(lb_dataset.topics)
    assert stored == {(t, m): v for t, res in expected.results.items() for m, v in res["metrics"].items()}
    assert store.blobs.ranking_of(system.id) == expected.archived

    rerank_frame = RerankSource(store, lb_dataset).frame()
    assert rerank_frame["id"].tolist() == [REFERENCE_ID, str(system.id)]  # the reference line first, then rows
    row = rerank_frame.set_index("id").loc[str(system.id)]
    assert row["type"] == "reranked run" and row[TOP] == pytest.approx(expected.scores.average["alpha_ndcg@10"])
    first_stage = {t: from_ids(lb_dataset.candidates(t)) for t in lb_dataset.topics}
    scores = lb_dataset.score(first_stage, by_topic=True, resamples=0)
    reference = rerank_frame.set_index("id").loc[REFERENCE_ID]
    assert reference["type"] == REFERENCE_TYPE and reference[TOP] == pytest.approx(scores.average["alpha_ndcg@10"])
    for t in lb_dataset.topics:
        assert reference[column(t, HEADLINE[0])] == scores.topics[t].metrics["alpha_ndcg@10"]
    assert str(system.id) not in BoardSource(store, lb_dataset.topics, lb_dataset.revision).frame()["id"].tolist()

    again = submitter.submit(path, name="again", identity="ip:1")
    assert (again.status, again.system_id) == ("duplicate", system.id)
    as_run = RunSubmitter(store, lb_dataset, rate_limit=100, resamples=200).submit(
        path, name="the same file as a retrieval run", identity="ip:1"
    )
    assert as_run.status == "scored" and as_run.system_id != system.id  # another track, another row
    assert [k for k in RerankSource(store, lb_dataset).frame()["id"]] == [REFERENCE_ID, str(system.id)]


def test_a_reranked_run_with_one_document_outside_its_candidates_is_refused_with_its_line(store, lb_dataset, tmp_path):
    submitter = submitter_for(store, lb_dataset, tmp_path)
    lines = reranked_lines(lb_dataset)
    first, second = list(lb_dataset.candidates("alpha").items())[:2]
    outsider = next(d for d in second[1] if d not in first[1])  # a candidate, but of another query
    at = lines.index((first[0], first[1][0]))
    lines[at] = (first[0], outsider)
    path = write_run(tmp_path / "server-side-name.trec", lines)
    before = (count(store, systems), count(store, jobs))
    outcome = submitter.submit(path, name="one outsider", identity="ip:1", display_name="mine.trec")
    assert outcome.status == "refused" and outcome.system_id is None
    assert outcome.problems == (
        f"mine.trec line {at + 1}: doc {outsider!r} is not among the candidates of query {first[0]!r} "
        "(a reranking run may only reorder the query's own top_ranked candidates)",
    )
    assert "server-side-name" not in outcome.markdown()
    assert (count(store, systems), count(store, jobs), count(store, blobs)) == (*before, 0)  # nothing archived


def _with_files(source: Path, target: Path, files: dict[str, bytes]) -> Path:
    import shutil

    shutil.copytree(source, target)
    for name, content in files.items():
        (target / name).write_bytes(content)
    return target


@pytest.mark.slow
def test_a_cross_encoder_folder_with_code_or_pickles_is_refused_at_the_door(store, lb_dataset, tmp_path, models):
    import pickle

    submitter = reranker_submitter_for(store, lb_dataset, tmp_path, models)
    tiny = models / "tiny"
    unsafe = {
        "code": ({"modeling_reranker.py": b"import os\n"}, "contains Python code (modeling_reranker.py)"),
        "pickle": ({"pytorch_model.bin": pickle.dumps({"w": 1})}, "pytorch_model.bin is a pickle"),
    }
    for name, (files, message) in unsafe.items():
        folder = _with_files(tiny, models / f"tiny-{name}", files)
        if name == "pickle":
            (folder / "model.safetensors").unlink()  # only the pickled weights are left
        outcome = submitter.submit(str(folder), name=name, identity="ip:1")
        assert outcome.status == "refused" and message in outcome.message, outcome
    embedder = _with_files(tiny, models / "tiny-embedder", {})
    (embedder / "config_sentence_transformers.json").write_text('{"model_type": "SentenceTransformer"}')
    outcome = submitter.submit(str(embedder), identity="ip:1")
    assert outcome.status == "refused" and "not a CrossEncoder" in outcome.message
    outside = submitter.submit(str(tmp_path), identity="ip:1")
    assert outside.status == "refused" and "model roots" in outside.message
    assert (count(store, systems), count(store, jobs), count(store, rate_events)) == (0, 0, 0)


@pytest.mark.slow
def test_a_cross_encoder_is_queued_and_a_worker_scores_it_on_the_candidates(
    store_on_each_backend, lb_dataset, tmp_path, models
):
    """On both stores: the page's submitter queues a `reranker` job, a real worker runs the real job (vetting,
    the CrossEncoder, the scoring path), and the row holds every measure of the reordered candidates."""
    from sentence_transformers import CrossEncoder

    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    store = store_on_each_backend
    submitter = reranker_submitter_for(store, lb_dataset, tmp_path, models)
    outcome = submitter.submit(str(models / "tiny"), name="tiny reranker", identity="ip:1")
    assert outcome.status == "queued", outcome
    (job,) = store.queue.list_jobs()
    assert (job.kind, job.payload["batch_size"], job.payload["dataset_revision"]) == (
        "reranker",
        32,
        lb_dataset.revision,
    )
    system = store.get_system(outcome.system_id)
    assert system.kind == "reranker" and 900_000 < system.size < 1_100_000  # read from the safetensors header
    assert submitter.submit(str(models / "tiny"), identity="ip:1").status == "duplicate"

    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder), device="cpu")
    assert run_worker(store, evaluate, once=True, isolate=False).done == 1
    rows = {(r["topic"], r["measure"]): r for r in store.results_for(system.id)}
    assert set(rows) == {(t, m.id) for t in lb_dataset.topics for m in MEASURES}
    params = rows["alpha", "alpha_ndcg@10"]["parameters"]
    assert (params["job"], params["candidates"], params["batch_size"], params["dtype"]) == (
        "reranker", "top_ranked", 32, "float32"
    )  # fmt: skip
    archived = store.blobs.ranking_of(system.id)
    model = CrossEncoder(str(models / "tiny"), device="cpu")
    for t in lb_dataset.topics:
        candidates, topic = lb_dataset.candidates(t), lb_dataset.topic(t)
        assert {q: set(docs) for q, docs in archived[t].items()} == {q: set(ids) for q, ids in candidates.items()}
        query = topic.queries[0]
        texts = {d.doc_id: d.text for d in topic.docs}
        alone = model.predict([(query.text, texts[d].strip()) for d in candidates[query.query_id]])
        assert list(archived[t][query.query_id].values()) == pytest.approx(sorted(alone.tolist(), reverse=True))
        scored = lb_dataset.score({t: archived[t]}, by_topic=True, resamples=0)
        assert {m: rows[t, m]["value"] for m in scored.topics[t].metrics} == scored.topics[t].metrics
    frame = RerankSource(store, lb_dataset).frame().set_index("id")
    assert frame.loc[str(system.id), "type"] == "reranker (CrossEncoder)"
    assert store.get_system(system.id).status == "scored"


def test_a_store_made_before_the_reranking_kinds_is_widened_in_place(store_url):
    """An older store's CHECK on systems.kind lacks the reranking kinds: create_all widens it, keeping rows and ids;
    a reranker row then takes its job through the queue like any other."""
    from sqlalchemy.schema import CreateTable

    from leaderboard.store.schema import Base

    with Store(store_url) as old:
        ddl = str(CreateTable(systems).compile(dialect=old.engine.dialect))
        widened = ", ".join(f"'{k}'" for k in RERANK_KINDS)
        assert f", {widened}" in ddl
        with old.engine.begin() as conn:
            conn.exec_driver_sql(ddl.replace(f", {widened}", ""))  # the table as the previous release declared it
            Base.metadata.create_all(conn)
        kept, _ = old.add_system(
            name="BM25", kind="baseline", content_hash="b", results={"t": topic_scores()}, meta=ResultMeta("r")
        )
        with pytest.raises(Exception, match=r"(?i)check"):
            old.add_system(name="R", kind="reranker", content_hash="r-early")
    with Store(store_url) as store:
        store.create_all()
        reranker, created = store.add_system(name="R", kind="reranker", content_hash="r", job=("reranker", {"m": 1}))
        run, _ = store.add_system(name="RR", kind="reranked_run", content_hash="rr", results={"t": topic_scores()},
                                  meta=ResultMeta("r"))  # fmt: skip
        assert created and (reranker.kind, run.kind, reranker.status) == ("reranker", "reranked_run", "queued")
        assert store.get_system(kept.id).name == "BM25" and len(store.results_for(kept.id)) == 2
        job = store.queue.claim_job("w1")
        assert (job.kind, job.system_id) == ("reranker", reranker.id)
        assert store.queue.finish_job(job.id, "w1", {"t": topic_scores(0.7)}, ResultMeta("r"))
        by_kind = {r.system.kind: r for r in store.leaderboard_rows(kinds=RERANK_KINDS)}
        assert set(by_kind) == {"reranker", "reranked_run"}
        assert by_kind["reranker"].scores["t"]["alpha_ndcg@10"].value == 0.7
        store.create_all()  # a second call finds nothing to widen
        assert count(store, systems) == 3


def test_a_dataset_without_candidates_keeps_the_reranking_tab_and_says_what_is_missing(store, synth_repo):
    """A repo with no `top_ranked` candidates (a `synth` repo) still has the Reranking tab and its API: the tab
    names the topics without candidates and how to write them, its table has no first-stage line, and a
    submission is refused naming the topics."""
    import gradio as gr

    from freshstack_hf.repo.dataset import Dataset
    from leaderboard.page.app import build_app

    dataset = Dataset(synth_repo)
    demo = build_app(dataset, store, resamples=0)
    api = {f.api_name: f for f in demo.fns.values() if f.api_visibility == "public"}
    assert {"rerank_table", "submit_rerank_run", "submit_reranker"} <= set(api)
    assert "Reranking" in [b.label for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    (note,) = [b for b in demo.blocks.values() if b.elem_id == "rerank-missing"]
    assert "alpha, beta" in note.value and "`freshstack-hf candidates DIR`" in note.value
    assert api["rerank_table"].fn()["value"]["data"] == []  # no candidates, no first-stage line
    refused = RerankerSubmitter(store, dataset).submit("org/cross-encoder")
    assert refused.status == "refused"
    assert refused.message == "no top_ranked candidates for topic(s) alpha, beta: cannot rerank"
