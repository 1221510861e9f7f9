"""Shared fixtures. Every test runs offline: the Hub is never reached, caches live in a temp folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_hf_cache(tmp_path_factory, monkeypatch):
    """Keep `datasets` caches out of the user's home and independent between tests."""
    cache = tmp_path_factory.mktemp("hf_cache")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
    monkeypatch.setenv("HF_HOME", str(cache / "home"))
    import datasets.config  # reads HF_DATASETS_CACHE once, at import: patch the value it kept as well

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache / "datasets")


@pytest.fixture(scope="session", autouse=True)
def _session_embedding_cache(tmp_path_factory):
    """Embeddings go to one temp cache for the whole run (never ~/.cache): builds over the same chunks share it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FRESHSTACK_CACHE", str(tmp_path_factory.mktemp("freshstack_cache")))
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
    from freshstack_hf.synth import SynthConfig, synth_topic

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
