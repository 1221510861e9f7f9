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


@pytest.fixture
def shared_data() -> Path:
    """`../shared/data`, the real external data; tests that need it skip cleanly where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real external data not found at {SHARED_DATA}")
    return SHARED_DATA
