"""The real `freshstack-hf` console script, run in subprocesses as a user would."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import EXE, cli

from freshstack_hf.cli.main import SUBCOMMANDS, build_parser


def test_every_subcommand_has_help_with_an_example():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= {name.replace("_", "-") for name in SUBCOMMANDS} | {"worker"}
    for name, p in sub.choices.items():
        assert "Example:" in p.format_help(), f"{name} --help lacks an example"


@pytest.mark.slow
def test_synth_then_validate_and_json(tmp_path):
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "a,b", "--queries", "4", "--docs", "200", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["topics"]["a"]["docs"] == 200 and report["topics"]["b"]["queries"] == 4
    r = cli("validate", str(tmp_path / "freshstack"))
    assert r.returncode == 0 and "valid (a, b)" in r.stdout


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_publish_dry_run_lists_files_without_network(synth_repo):
    r = cli("publish", str(synth_repo), "--repo-id", "me/freshstack", "--dry-run", env={"HF_TOKEN": ""})
    assert r.returncode == 0, r.stderr
    assert "would commit to dataset me/freshstack (revision main)" in r.stdout
    assert "commit message: freshstack-hf: publish topics alpha, beta" in r.stdout
    for f in ("README.md", "manifest.json", "data/alpha/corpus.parquet", "data/beta/nugget_qrels.parquet"):
        assert f in r.stdout
    size = (synth_repo / "data/alpha/corpus.parquet").stat().st_size
    assert f"{size:,}  data/alpha/corpus.parquet" in r.stdout


@pytest.mark.slow
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


@pytest.mark.slow
def test_publish_refuses_invalid_repo(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    (repo / "data/alpha/queries.parquet").unlink()
    r = cli("publish", str(repo), "--repo-id", "me/freshstack", "--dry-run")
    assert r.returncode == 2
    assert "refusing to publish" in r.stderr and "alpha-queries: file data/alpha/queries.parquet is missing" in r.stderr


@pytest.mark.slow
def test_user_errors_exit_2_with_one_line(tmp_path):
    r = cli("validate", str(tmp_path / "missing"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    r = cli("synth", str(tmp_path / "x"), "--topics", "Bad-Name")
    assert r.returncode == 2 and "invalid topic name 'Bad-Name'" in r.stderr
    r = cli("publish", str(tmp_path), "--repo-id", "noslash", "--dry-run")
    assert r.returncode == 2 and "invalid --repo-id 'noslash'" in r.stderr


@pytest.mark.slow
def test_synth_writes_120k_docs_that_validate(tmp_path):
    """A corpus of the real topics' size; its speed is `make bench`'s business, not a test's."""
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "angular", "--queries", "129", "--docs", "120000")
    assert r.returncode == 0, r.stderr
    assert "120,000 docs" in r.stdout
    corpus = pq.read_metadata(tmp_path / "freshstack" / "data" / "angular" / "corpus.parquet")
    assert corpus.num_rows == 120_000
    assert cli("validate", str(tmp_path / "freshstack")).returncode == 0


@pytest.mark.slow
def test_a_command_parsed_alone_has_the_same_help_and_imports_no_other_command():
    full = next(a for a in build_parser()._actions if a.dest == "command").choices
    for name in SUBCOMMANDS:
        alone = next(a for a in build_parser(name)._actions if a.dest == "command").choices
        assert list(alone) == [name.replace("_", "-")]
        assert alone[name.replace("_", "-")].format_help() == full[name.replace("_", "-")].format_help()
    code = (
        "import sys; from freshstack_hf.cli.main import main\n"
        "try:\n    main(['evaluate', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('leaderboard', 'freshstack_hf.cli.'))))"
    )
    done = subprocess.run([EXE.parent / "python", "-c", code], capture_output=True, text=True, check=True)
    loaded = ["common", "evaluate", "main", "report"]  # `report`: the shape evaluate shares with evaluate-answers
    assert done.stdout.strip().splitlines()[-1] == str([f"freshstack_hf.cli.{m}" for m in loaded])


def test_the_whole_command_line_imports_a_command_only_when_it_is_given():
    """`freshstack-hf --help` lists every built-in command from `SUBCOMMANDS` alone: a command module's imports,
    at its top, are paid only by that command (the installed plug-ins, loaded as before, are left out here)."""
    code = (
        "import sys; from freshstack_hf.cli import main\n"
        "main._plugins = lambda: []\n"
        "parser = main.build_parser(lazy=True)\n"
        "print(sorted(m for m in sys.modules if m.startswith('freshstack_hf.cli.')))\n"
        "parser.parse_args(['stats', 'repo'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('freshstack_hf.cli.')))"
    )
    done = subprocess.run([EXE.parent / "python", "-c", code], capture_output=True, text=True, check=True)
    before, after = done.stdout.strip().splitlines()[-2:]
    assert before == "['freshstack_hf.cli.main']"
    assert after == "['freshstack_hf.cli.common', 'freshstack_hf.cli.main', 'freshstack_hf.cli.stats']"


@pytest.mark.slow
@pytest.mark.parametrize(("command", "given", "expected"), [("evaluate", None, "1"), ("evaluate", "2", "2"),
                                                          ("retrieve", None, None)])  # fmt: skip
def test_evaluate_runs_numpy_with_one_blas_thread_unless_told(command, given, expected):
    """`evaluate` keeps OpenBLAS to the calling thread (its worker threads spin on a small machine's cores); a
    value the user set stays, and `retrieve`, whose products are large, keeps every core."""
    code = (
        "import os, sys; from freshstack_hf.cli.main import main\n"
        f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
        "import numpy\n"
        # Linux counts; Arrow's allocator thread (pyarrow, which `evaluate` imports at its top) is no BLAS worker
        "task = '/proc/self/task'\n"
        "names = [open(f'{task}/{t}/comm').read().strip() for t in os.listdir(task)] if os.path.isdir(task) else ['']\n"
        "tasks = len([n for n in names if n != 'jemalloc_bg_thd'])\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), tasks)"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([EXE.parent / "python", "-c", code], capture_output=True, text=True, check=True, env=env)
    value, threads = done.stdout.splitlines()[-1].split()  # after the help text
    assert value == str(expected)
    if expected == "1":
        assert threads == "1"  # no BLAS worker started


@pytest.mark.slow
def test_top_level_help_lists_every_command():
    r = cli("--help")
    assert r.returncode == 0, r.stderr
    for name in ("synth", "validate", "evaluate", "candidates", "retrieve", "rerank", "nano", "worker"):
        assert f"    {name}" in r.stdout


# --- what a newcomer met (issue 11): timings, model paths, repo folders, plurals -------------------------------


def test_retrieve_prints_the_wall_time_of_the_whole_call(synth_repo, tmp_path, monkeypatch, capsys):
    """The time printed covers all of the retrieval, also what the method's own timings leave out (model loading)."""
    import time

    from freshstack_hf.cli import retrieve
    from freshstack_hf.cli.main import main

    real, took = retrieve.run_method, []

    def slow_run_method(*args, **kwargs):
        start = time.perf_counter()
        result = real(*args, **kwargs)
        time.sleep(0.3)  # stands in for encoding that the result's `seconds` does not record
        took.append(time.perf_counter() - start)
        return result

    monkeypatch.setattr(retrieve, "run_method", slow_run_method)
    out = tmp_path / "bm25.trec"
    assert main(["retrieve", str(synth_repo), "--topic", "alpha", "--method", "bm25", "--out", str(out)]) == 0
    printed = re.search(r"^alpha: bm25 over 12 queries in (\d+\.\d) s$", capsys.readouterr().out, re.M)
    assert printed, "retrieve did not print its time"
    assert float(printed[1]) + 0.05 >= took[0] > 0.3  # printed to a tenth of a second
    assert out.is_file()


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_cli_output_says_1_query_not_1_queries(tmp_path):
    r = cli("synth", str(tmp_path / "freshstack"), "--topics", "solo", "--queries", "1", "--docs", "40")
    assert r.returncode == 0, r.stderr
    assert "solo: 1 query, 40 docs," in r.stdout
    r = cli("retrieve", str(tmp_path / "freshstack"), "--method", "bm25", "--out", str(tmp_path / "r.trec"))
    assert r.returncode == 0, r.stderr
    assert "solo: bm25 over 1 query in " in r.stdout
    for line in (r.stdout + r.stderr).splitlines():
        assert not re.search(r"\b1 (topics|queries|docs|nuggets|judgments|files)\b", line), line
