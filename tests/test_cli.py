"""The real `freshstack-hf` console script, run in subprocesses as a user would."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from freshstack_hf.cli.main import SUBCOMMANDS, build_parser

EXE = Path(sys.executable).with_name("freshstack-hf")


def cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout)


def test_every_subcommand_has_help_with_an_example():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= {name.replace("_", "-") for name in SUBCOMMANDS} | {"worker"}
    for name, p in sub.choices.items():
        assert "Example:" in p.format_help(), f"{name} --help lacks an example"


def test_synth_then_validate_and_json(tmp_path):
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "a,b", "--queries", "4", "--docs", "200", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["topics"]["a"]["docs"] == 200 and report["topics"]["b"]["queries"] == 4
    r = cli("validate", str(tmp_path / "freshstack"))
    assert r.returncode == 0 and "valid (a, b)" in r.stdout


def test_changed_corpus_id_fails_validation_naming_config_row_and_id(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    path = repo / "data/alpha/corpus.parquet"
    table = pq.read_table(path)
    ids = table.column("_id").to_pylist()
    old = ids[17]
    ids[17] = old.replace(".md_", ".txt_").replace(".py_", ".txt_")
    pq.write_table(table.set_column(0, "_id", pa.array(ids)), path)
    r = cli("validate", str(repo))
    assert r.returncode == 2
    assert f"alpha-corpus row 17: _id '{ids[17]}' disagrees with its metadata (expected '{old}')" in r.stderr
    assert "Traceback" not in r.stderr


def test_edited_derived_config_is_caught(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    path = repo / "data/beta/nugget_qrels.parquet"
    table = pq.read_table(path)
    ids = table.column("corpus-id").to_pylist()
    ids[3] = "beta/nowhere.md_0_1"
    pq.write_table(table.set_column(2, "corpus-id", pa.array(ids)), path)
    r = cli("validate", str(repo), "--topic", "beta")
    assert r.returncode == 2
    assert "beta-nugget-qrels row 3: differs from config 'beta': corpus-id='beta/nowhere.md_0_1'" in r.stderr


def test_publish_dry_run_lists_files_without_network(synth_repo):
    r = cli("publish", str(synth_repo), "--repo-id", "me/freshstack", "--dry-run", env={"HF_TOKEN": ""})
    assert r.returncode == 0, r.stderr
    assert "would commit to dataset me/freshstack (revision main)" in r.stdout
    assert "commit message: freshstack-hf: publish topics alpha, beta" in r.stdout
    for f in ("README.md", "manifest.json", "data/alpha/corpus.parquet", "data/beta/nugget_qrels.parquet"):
        assert f in r.stdout
    size = (synth_repo / "data/alpha/corpus.parquet").stat().st_size
    assert f"{size:,}  data/alpha/corpus.parquet" in r.stdout


def test_publish_without_token_is_a_clear_error(synth_repo):
    env = {k: v for k, v in os.environ.items() if k != "HF_TOKEN"}
    r = subprocess.run(
        [str(EXE), "publish", str(synth_repo), "--repo-id", "me/freshstack"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2
    assert r.stderr.startswith("error: no Hugging Face token: set HF_TOKEN")


def test_publish_refuses_invalid_repo(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    (repo / "data/alpha/queries.parquet").unlink()
    r = cli("publish", str(repo), "--repo-id", "me/freshstack", "--dry-run")
    assert r.returncode == 2
    assert "refusing to publish" in r.stderr and "alpha-queries: file data/alpha/queries.parquet is missing" in r.stderr


def test_user_errors_exit_2_with_one_line(tmp_path):
    r = cli("validate", str(tmp_path / "missing"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    r = cli("synth", str(tmp_path / "x"), "--topics", "Bad-Name")
    assert r.returncode == 2 and "invalid topic name 'Bad-Name'" in r.stderr
    r = cli("publish", str(tmp_path), "--repo-id", "noslash", "--dry-run")
    assert r.returncode == 2 and "invalid --repo-id 'noslash'" in r.stderr


@pytest.mark.slow
def test_synth_120k_docs_under_60_seconds(tmp_path):
    import time

    start = time.perf_counter()
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "angular", "--queries", "129", "--docs", "120000")
    elapsed = time.perf_counter() - start
    assert r.returncode == 0, r.stderr
    assert "120,000 docs" in r.stdout
    assert elapsed < 60, f"synth of 120,000 docs took {elapsed:.1f} s"


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    """One real demo build (the sample topic through the build pipeline), shared by the demo tests."""
    root = tmp_path_factory.mktemp("demo")
    # the first demo encodes ~1,200 chunks with MiniLM on the CPU: minutes, not seconds
    r = cli(
        "demo", "--out", str(root / "out"), "--repo", str(root / "freshstack"), "--no-serve", cwd=root, timeout=1800
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (root / "first-run.txt").write_text(r.stdout, encoding="utf-8")
    return root


@pytest.mark.slow
def test_demo_builds_the_sample_topic_and_loads_with_datasets(demo_dir):
    text = (demo_dir / "first-run.txt").read_text(encoding="utf-8")
    assert "44 questions kept" in text and "no problems (judged by offline-heuristic)" in text
    assert "[5/5] wrote" in text and "alpha_ndcg@10" in text
    code = "from datasets import load_dataset; print(load_dataset('freshstack', 'pylibs'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=demo_dir, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for col in ("query_id", "query_title", "query_text", "answer_id", "answer_text", "metadata", "nuggets"):
        assert col in out.stdout
    r = cli("evaluate", str(demo_dir / "freshstack"), "--run", str(demo_dir / "out" / "runs" / "bm25.trec"))
    assert r.returncode == 0 and "α-nDCG@10" in r.stdout


@pytest.mark.slow
def test_demo_baselines_are_not_degenerate(demo_dir):
    """The issue's bar: BM25 and dense alpha-nDCG@10 in [0.1, 0.9]; hybrid Recall@50 >= the better one - 0.02."""
    manifest = json.loads((demo_dir / "freshstack" / "manifest.json").read_text(encoding="utf-8"))
    quality = manifest["topics"]["pylibs"]["candidates"]["quality"]
    for name in ("bm25", "dense"):
        assert 0.1 <= quality[name]["alpha_ndcg@10"] <= 0.9, (name, quality[name])
    best = max(quality["bm25"]["recall@50"], quality["dense"]["recall@50"])
    assert quality["hybrid_rrf"]["recall@50"] >= best - 0.02, quality
    card = (demo_dir / "freshstack" / "README.md").read_text(encoding="utf-8")
    assert "Heuristic judgments" in card and "## Candidate lists" in card and "pandas==" in card


@pytest.mark.slow
def test_demo_second_run_reuses_everything_and_serves(demo_dir):
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    proc = subprocess.Popen(
        [str(EXE), "demo", "--out", str(demo_dir / "out"), "--repo", str(demo_dir / "freshstack"), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=demo_dir,
    )
    try:
        deadline, page = time.time() + 400, ""
        while time.time() < deadline and proc.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(1)
        served_after = time.monotonic() - start
        assert "FreshStack leaderboard" in page, "the demo did not serve the leaderboard"
    finally:
        proc.terminate()
        output = proc.communicate(timeout=60)[0]
    assert output.count("up to date") == 7  # no stage ran again
    assert f"leaderboard: http://127.0.0.1:{port}/" in output
    for name in ("stored BM25", "stored Dense", "stored RRF hybrid"):
        assert name in output
    print(f"second demo run served after {served_after:.0f} s")  # timing lives in the note, not an assertion


def test_top_level_help_lists_every_command():
    r = cli("--help")
    assert r.returncode == 0, r.stderr
    for name in ("synth", "validate", "evaluate", "candidates", "retrieve", "rerank", "nano", "worker"):
        assert f"    {name}" in r.stdout


# --- what a newcomer met (issue 11): timings, model paths, repo folders, plurals -------------------------------


def test_retrieve_prints_the_wall_time_of_the_whole_call(synth_repo, tmp_path, monkeypatch, capsys):
    """The time printed covers all of the retrieval, also what the method's own timings leave out (model loading)."""
    import time

    import freshstack_hf.baselines as baselines
    from freshstack_hf.cli.main import main

    real, took = baselines.run_method, []

    def slow_run_method(*args, **kwargs):
        start = time.perf_counter()
        result = real(*args, **kwargs)
        time.sleep(0.3)  # stands in for encoding that the result's `seconds` does not record
        took.append(time.perf_counter() - start)
        return result

    monkeypatch.setattr(baselines, "run_method", slow_run_method)
    out = tmp_path / "bm25.trec"
    assert main(["retrieve", str(synth_repo), "--topic", "alpha", "--method", "bm25", "--out", str(out)]) == 0
    printed = re.search(r"^alpha: bm25 over 12 queries in (\d+\.\d) s$", capsys.readouterr().out, re.M)
    assert printed, "retrieve did not print its time"
    assert float(printed[1]) >= took[0] > 0.3
    assert out.is_file()


def test_retrieve_hybrid_missing_model_folder_is_named_and_offline_mode_not_blamed(synth_repo, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    args = ["retrieve", str(synth_repo), "--topic", "alpha", "--method", "hybrid", "--model", "/no/such/dir"]
    r = subprocess.run(
        [str(EXE), *args, "--out", str(tmp_path / "h.trec")], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 2
    assert r.stderr.startswith("error: no such model folder: /no/such/dir")
    assert "HF_HUB_OFFLINE" not in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "h.trec").exists()


@pytest.mark.parametrize("name", ["/no/such/dir", "./no/such", "../no-such", "~/no-such-model", "a/b/c", "x\\model"])
def test_resolve_model_source_names_a_missing_folder(name, monkeypatch):
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.retrieval.models import resolve_model_source

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # even when it is set, a path is not blamed on it
    with pytest.raises(FreshStackError, match=r"^no such model folder: ") as err:
        resolve_model_source(name)
    assert name in str(err.value) and "HF_HUB_OFFLINE" not in str(err.value)


def test_resolve_model_source_mentions_offline_mode_only_when_it_is_set(monkeypatch, tmp_path):
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.retrieval.models import resolve_model_source

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # an empty cache: the id is not there
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FreshStackError, match=r"'nobody/no-such-model' .*HF_HUB_OFFLINE=1 is set"):
        resolve_model_source("nobody/no-such-model")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    # online, a Hub id is left to sentence-transformers to download: no error, and no local folder yet
    assert resolve_model_source("nobody/no-such-model") == ("nobody/no-such-model", None)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(FreshStackError, match=r"is a file, not a model folder"):
        resolve_model_source(str(weights))


def test_validate_says_what_the_path_is_and_which_folder_was_meant(synth_repo, tmp_path):
    outer = tmp_path / "demo-out"
    (outer / "work").mkdir(parents=True)
    shutil.copytree(synth_repo, outer / "freshstack")
    r = cli("validate", "demo-out", cwd=tmp_path)
    assert r.returncode == 2
    meant = "did you mean demo-out/freshstack?"
    assert r.stderr == f"error: demo-out is not a dataset repo (no manifest.json or data/); {meant}\n"
    r = cli("stats", "demo-out", cwd=tmp_path)
    assert r.returncode == 2 and "did you mean demo-out/freshstack?" in r.stderr
    r = cli("validate", "demo-out/freshstack/README.md", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("error: demo-out/freshstack/README.md is a file, not a dataset folder")
    assert "did you mean demo-out/freshstack?" in r.stderr
    r = cli("validate", "nowhere", cwd=tmp_path)
    assert r.returncode == 2 and "nowhere: no such folder" in r.stderr
    assert "`freshstack-hf build TOPIC.yaml`" in r.stderr
    (tmp_path / "empty").mkdir()
    r = cli("validate", str(tmp_path / "empty"))
    assert r.returncode == 2 and "is not a dataset repo" in r.stderr and "did you mean" not in r.stderr


def test_no_message_calls_an_existing_command_missing():
    """`build` exists: no message may say it does not exist yet, or send users to a bare `build`."""
    package = Path(__file__).resolve().parents[1] / "freshstack_hf"
    stale = ("does not exist yet", "synth or build", "or `build`")
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for phrase in stale:
            assert phrase not in text, f"{path}: stale wording {phrase!r}"


def test_plural_helper():
    from freshstack_hf.cli.common import plural

    assert plural(1, "topic") == "1 topic"
    assert plural(2, "topic") == "2 topics"
    assert plural(0, "query", "queries") == "0 queries"
    assert plural(1, "query", "queries") == "1 query"
    assert plural(1178, "chunk") == "1,178 chunks"


def test_cli_output_says_1_query_not_1_queries(tmp_path):
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "solo", "--queries", "1", "--docs", "40")
    assert r.returncode == 0, r.stderr
    assert "solo: 1 query, 40 docs," in r.stdout
    r = cli("retrieve", str(tmp_path / "freshstack"), "--method", "bm25", "--out", str(tmp_path / "r.trec"))
    assert r.returncode == 0, r.stderr
    assert "solo: bm25 over 1 query in " in r.stdout
    for line in (r.stdout + r.stderr).splitlines():
        assert not re.search(r"\b1 (topics|queries|docs|nuggets|judgments|files)\b", line), line
