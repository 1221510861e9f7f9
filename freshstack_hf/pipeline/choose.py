"""Choosing the build's LLM backend: an endpoint when one is named (in the YAML or the environment), else offline.

`effective_config` applies the `FRESHSTACK_LLM_*` overrides so a CI job or a user can point an existing topic
YAML at another endpoint, model or Batch mode without editing it. It is applied once per build, by whoever
starts it: `run_build` for library callers, the `build` command itself (before its flags, which win). The
backend then follows the config it is given; which transport reaches the model is the registry's choice
(`freshstack_hf.llm.registry`), shared with the answer judge.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import OFFLINE, transport_kind
from freshstack_hf.pipeline.backends import Backend
from freshstack_hf.pipeline.offline.backend import OfflineBackend
from freshstack_hf.pipeline.online import OnlineBackend

ENV_BASE_URL = "FRESHSTACK_LLM_BASE_URL"
ENV_MODEL = "FRESHSTACK_LLM_MODEL"
ENV_BATCH = "FRESHSTACK_LLM_BATCH"


def effective_config(config: LLMConfig) -> LLMConfig:
    """`config` with the environment's overrides applied (base URL, model, `FRESHSTACK_LLM_BATCH=1`)."""
    changes: dict[str, Any] = {}
    if os.environ.get(ENV_BASE_URL, "").strip():
        changes["base_url"] = os.environ[ENV_BASE_URL].strip()
    if os.environ.get(ENV_MODEL, "").strip():
        changes["model"] = os.environ[ENV_MODEL].strip()
    batch = os.environ.get(ENV_BATCH, "").strip().lower()
    if batch:
        changes["batch"] = batch in ("1", "true", "yes", "on")
    return dataclasses.replace(config, **changes) if changes else config


def make_backend(config: LLMConfig, cache_path: Path, *, show_progress: bool = False) -> Backend:
    """The offline heuristic backend when `config` names no endpoint, else the build's prompts over the
    registry's transport for it. `config` is taken as effective: the environment was applied by the caller."""
    if transport_kind(config.base_url) == OFFLINE:
        return OfflineBackend(show_progress=show_progress)
    return OnlineBackend(config, Path(cache_path), show_progress=show_progress)
