"""What a Space's `app.py` runs (see `leaderboard.space`): the leaderboard command, configured from the Space.

A Space is configured by environment variables and secrets, not by a command line, so this module turns them
into `freshstack-hf leaderboard` arguments and runs that command: the Space serves exactly what the CLI serves.

* store: the `FRESHSTACK_STORE` secret (a PostgreSQL URL shared with GPU workers), else a SQLite file on the
  Space's persistent storage (`/data`), else, with a warning, in the container (lost on restart);
* dataset: the Hub id and revision the Space folder was written for, or `FRESHSTACK_DATASET` (a local folder
  for a test run) and `FRESHSTACK_REVISION`;
* worker: one in the Space when nothing else can reach the store (SQLite), none when GPU workers share a
  PostgreSQL store (`FRESHSTACK_SPACE_WORKER=0|1` decides otherwise); without one the baseline rows are left to
  those workers too (`--no-baseline-worker`), so the Space never encodes a corpus on its own CPU;
* sign-in: required to submit on a Space (`hf_oauth: true` in the README), unless `FRESHSTACK_OAUTH=0`; off a
  Space (a local test run of app.py) only with `FRESHSTACK_OAUTH=1`;
* address: Gradio's `GRADIO_SERVER_NAME` / `GRADIO_SERVER_PORT`, else 0.0.0.0:7860, where a Space expects it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from leaderboard.store_engine import DATA_DIR_ENV, STORE_ENV

SPACE_DATA = Path("/data")  # a Space's persistent storage, when it has some
DEFAULT_BASELINES = "bm25,dense,hybrid"


def _flag(value: str | None) -> bool | None:
    if value is None or not value.strip():
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def space_environment(env: Mapping[str, str], space_data: Path = SPACE_DATA) -> dict[str, str]:
    """Variables to set before the app starts: the data folder and caches on persistent storage, when it exists.

    With `/data` writable, the SQLite store, the runs archive, the embedding cache and the Hub's download cache
    all live there, so a restarted Space neither loses submissions nor re-downloads and re-encodes the corpus.
    """
    if not _writable_dir(space_data):
        return {}
    wanted = {
        DATA_DIR_ENV: str(space_data),
        "FRESHSTACK_CACHE": str(space_data / "cache"),
        "HF_HOME": str(space_data / ".huggingface"),
    }
    return {key: value for key, value in wanted.items() if not env.get(key)}


def leaderboard_argv(dataset: str, revision: str | None, env: Mapping[str, str]) -> list[str]:
    """The `freshstack-hf leaderboard` arguments this Space's settings amount to."""
    source = env.get("FRESHSTACK_DATASET") or dataset
    pinned = env.get("FRESHSTACK_REVISION") or (None if env.get("FRESHSTACK_DATASET") else revision)
    argv = ["--dataset", source, *(["--revision", pinned] if pinned else [])]
    argv += ["--host", env.get("GRADIO_SERVER_NAME") or "0.0.0.0"]
    argv += ["--port", env.get("GRADIO_SERVER_PORT") or "7860"]
    store = env.get(STORE_ENV)
    if store:
        argv += ["--store", store]
    baselines = env.get("FRESHSTACK_BASELINES", DEFAULT_BASELINES).strip()
    argv += ["--no-baselines"] if baselines.lower() in ("", "none") else ["--baselines", baselines]
    worker = _flag(env.get("FRESHSTACK_SPACE_WORKER"))
    if worker is None:
        worker = not (store or "").startswith("postgresql")  # a SQLite queue is reached by no other machine
    argv.append("--worker" if worker else "--no-baseline-worker")
    oauth = _flag(env.get("FRESHSTACK_OAUTH"))
    if oauth is None:  # off a Space, Gradio's sign-in is a mock that needs a Hub login: a local test run skips it
        oauth = env.get("SYSTEM") == "spaces"
    if oauth:
        argv.append("--oauth")
    return argv


def serve(dataset: str, revision: str | None, env: Mapping[str, str] | None = None) -> int:
    """Serve the leaderboard as the Space's settings say; returns when the server stops."""
    import argparse

    from freshstack_hf.errors import FreshStackError
    from leaderboard import cli_app

    env = dict(os.environ if env is None else env)
    additions = space_environment(env)
    os.environ.update(additions)
    env.update(additions)
    if not env.get(STORE_ENV) and not env.get(DATA_DIR_ENV):
        print(
            f"warning: no {STORE_ENV} secret and no persistent storage at {SPACE_DATA}: the store lives in the "
            "container and is lost on restart",
            file=sys.stderr,
            flush=True,
        )
    parser = argparse.ArgumentParser(prog="app.py")
    cli_app.add_arguments(parser)
    try:
        args = parser.parse_args(leaderboard_argv(dataset, revision, env))
        return cli_app.run(args)
    except FreshStackError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
