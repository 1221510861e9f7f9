"""The reranking track end to end: the running app driven with gradio_client on a free loopback port, a real
worker, and the literal `mteb run -t FreshStackReranking` console script on the same CrossEncoder folder.

The acceptance line: a CrossEncoder folder made here (MiniLM with a fresh seeded one-label head, saved by
sentence-transformers) is submitted through the page (`/submit_reranker`, a folder under `--model-root`), scored by
a worker in its own job process, and the stored numbers are MTEB's: every measure MTEB reports equal to the last
of its decimals, and the reordered candidates (MTEB's run, `FRESHSTACK_SAVE_RUN`) equal to the archived run, every
score bit for bit. Bad input through the page: a reranked run with a document outside its query's candidates and
CrossEncoder folders with code or pickles are refused, nothing stored, nothing queued.
"""

from __future__ import annotations

import functools
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_client import system_count, table
from cross_encoders import minilm_cross_encoder
from ports import free_port

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.runs import load_run
from leaderboard.store.store import Store
from leaderboard.tracks.reranking.rerank_table import REFERENCE_ID, REFERENCE_TYPE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(tmp_path_factory, lb_dataset):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app

    root = tmp_path_factory.mktemp("rerank-app")
    models = root / "models"
    minilm_cross_encoder(models / "tiny-reranker")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    demo = build_app(lb_dataset, store, rate_limit=1000, model_roots=[models])
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    client = Client(f"http://127.0.0.1:{port}/", verbose=False)
    yield SimpleNamespace(client=client, store=store, models=models, root=root)
    demo.close()
    store.close()


def rerank_rows(client) -> dict[str, dict]:
    """The /rerank_table endpoint's rows keyed by id, each a {header: value} dict."""
    value = client.predict(api_name="/rerank_table")
    data = value.get("value", value)
    return {row[0]: dict(zip(data["headers"], row, strict=True)) for row in data["data"]}


def mteb_rerank(model: Path, dataset: Path, work: Path) -> tuple[dict[str, dict], Path]:
    """`mteb run -t FreshStackReranking -m MODEL` as a user runs it, offline: (scores per topic, its runs' folder)."""
    home = work / "home"
    env = {**os.environ, "FRESHSTACK_DATASET": str(dataset), "FRESHSTACK_SAVE_RUN": str(work / "runs")}
    env |= {"HOME": str(home), "MTEB_CACHE": str(home / "mteb"), "HF_HOME": str(home / "hf")}
    env |= {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    mteb = Path(sys.executable).with_name("mteb")
    args = [str(mteb), "run", "-t", "FreshStackReranking", "-m", str(model), "--output-folder", str(work / "out")]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=work, timeout=900)
    assert done.returncode == 0, f"mteb run failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    import json

    result = next((work / "out" / "results" / f"local__{model.name}").rglob("FreshStackReranking.json"))
    scores = json.loads(result.read_text(encoding="utf-8"))["scores"]["test"]
    return {s["hf_subset"]: s for s in scores}, work / "runs"


def test_a_cross_encoder_submitted_through_the_page_stores_the_numbers_of_mteb_run(app, lb_dataset, tmp_path):
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker
    from loaders.mteb_metadata import NUGGET_MEASURES, score_key

    folder = app.models / "tiny-reranker"
    message, queued = app.client.predict(str(folder), "", "tiny reranker", "", "", api_name="/submit_reranker")
    assert queued["status"] == "queued", message
    assert rerank_rows(app.client)[str(queued["system_id"])]["type"] == "reranker (CrossEncoder) (queued)"
    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder), device="cpu")
    stats = run_worker(app.store, evaluate, once=True)  # the job in its own process
    assert stats.done == 1, [j.error for j in app.store.queue.list_jobs()]

    work = tmp_path / "mteb"
    work.mkdir()
    mteb_scores, mteb_runs = mteb_rerank(folder, lb_dataset.folder, work)
    system = app.store.get_system(queued["system_id"])
    stored = {(r["topic"], r["measure"]): r["value"] for r in app.store.results_for(system.id)}
    archived = app.store.blobs.ranking_of(system.id)
    compared = set()
    for topic in lb_dataset.topics:
        for measure in NUGGET_MEASURES:
            if (topic, measure.id) in stored:  # MTEB writes 6 decimals: the stored value, rounded, is its figure
                assert round(stored[topic, measure.id], 6) == mteb_scores[topic][score_key(measure)], measure.id
                compared.add(measure.id)
        assert mteb_scores[topic]["main_score"] == round(stored[topic, "alpha_ndcg@10"], 6)
        assert load_run(mteb_runs / f"FreshStackReranking_{topic}.trec").run == archived[topic]  # every score
    assert {m.id for m in HEADLINE} <= compared

    rows = rerank_rows(app.client)
    row, reference = rows[str(system.id)], rows[REFERENCE_ID]
    assert (row["system"], row["type"], reference["type"]) == (
        "tiny reranker",
        "reranker (CrossEncoder)",
        REFERENCE_TYPE,
    )
    for m in HEADLINE:
        values = [stored[t, m.id] for t in lb_dataset.topics]
        assert row[f"average {m.name}"] == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert row[f"alpha {m.name}"] == stored["alpha", m.id]
    assert str(system.id) not in table(app.client)  # never beside full retrieval


def test_bad_reranking_submissions_through_the_page_are_refused_and_nothing_is_stored(app, lb_dataset, tmp_path):
    from gradio_client import handle_file

    candidates = lb_dataset.candidates("beta")
    (q1, ids1), (_, ids2) = list(candidates.items())[:2]
    outsider = next(d for d in ids2 if d not in ids1)
    lines = [f"{q1} Q0 {d} {r} {100 - r} rr" for r, d in enumerate(ids1, 1)]
    lines[3] = f"{q1} Q0 {outsider} 4 96 rr"
    path = tmp_path / "outsider.trec"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before, queued = system_count(app.store), len(app.store.queue.list_jobs())
    message, status = app.client.predict(
        handle_file(str(path)), "auto", "outsider", "", "", api_name="/submit_rerank_run"
    )
    assert status["status"] == "refused" and status["system_id"] is None
    assert status["problems"][0].startswith(f"outsider.trec line 4: doc {outsider!r} is not among the candidates")
    assert f"query {q1!r}" in status["problems"][0] and "line 4" in message

    tiny = app.models / "tiny-reranker"
    coded = shutil.copytree(tiny, app.models / "with-code")
    (coded / "modeling_reranker.py").write_text("import os\n", encoding="utf-8")
    pickled = shutil.copytree(tiny, app.models / "with-pickle")
    (pickled / "model.safetensors").unlink()
    (pickled / "pytorch_model.bin").write_bytes(pickle.dumps({"weights": [1.0]}))
    for folder, reason in ((coded, "Python code"), (pickled, "pickle")):
        _, status = app.client.predict(str(folder), "", "", "", "", api_name="/submit_reranker")
        assert status["status"] == "refused" and reason in status["message"], status
    assert (system_count(app.store), len(app.store.queue.list_jobs())) == (before, queued)

    lines[3] = f"{q1} Q0 {ids1[3]} 4 96 rr"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, status = app.client.predict(handle_file(str(path)), "auto", "fixed", "", "", api_name="/submit_rerank_run")
    assert status["status"] == "scored" and status["topics"] == ["beta"], status
    assert rerank_rows(app.client)[str(status["system_id"])]["type"] == "reranked run"
