"""What a Space's `app.py` runs (see `leaderboard.deploy.space`): the leaderboard command, configured from the Space.

A Space is configured by environment variables and secrets, not by a command line, so this module turns them
into `freshstack-hf leaderboard` arguments and runs that command: the Space serves exactly what the CLI serves.

* store: the `FRESHSTACK_STORE` secret (a PostgreSQL URL shared with GPU workers), else a SQLite file on the
  Space's persistent storage (`/data`). A store that a restart would lose (neither, or a SQLite file outside
  `/data`) is refused: the store holds everything the board depends on, so a board on one would drop every
  submission unnoticed. `FRESHSTACK_EPHEMERAL=1` accepts the loss, and every page then says so (`--ephemeral`);
* dataset: the Hub id and revision the Space folder was written for, or `FRESHSTACK_DATASET` (a local folder
  for a test run) and `FRESHSTACK_REVISION`;
* worker: one in the Space when nothing else can reach the store (SQLite: the board's default, a worker in its
  process, for every job: a model submitted there is scored on the Space's CPU, slowly, or never), none when GPU
  workers share a PostgreSQL store (`--no-worker`: the Space then scores no model and encodes no corpus on its own
  CPU); `FRESHSTACK_SPACE_WORKER=0|1` decides otherwise;
* sign-in: required to submit on a Space (`hf_oauth: true` in the README), unless `FRESHSTACK_OAUTH=0`; off a
  Space (a local test run of app.py) only with `FRESHSTACK_OAUTH=1`;
* address: Gradio's `GRADIO_SERVER_NAME` / `GRADIO_SERVER_PORT`, else 0.0.0.0:7860, where a Space expects it.

A Space is recognised by `SYSTEM=spaces`, which the Hub sets in every Space; off a Space (a local test run of
app.py) the store is the user's own, and is neither checked nor refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from leaderboard.cli import serve_board
from leaderboard.defaults import DATA_DIR_ENV, STORE_ENV, default_data_dir
from leaderboard.store.dialect import known_dialect

SPACE_DATA = Path("/data")  # a Space's persistent storage, when it has some
# Tests only: another folder stands for /data, so a test can run app.py as a Space with and without persistent
# storage. Never set it on a Space: a store on the folder it names is taken as kept whether it is or not.
SPACE_DATA_ENV = "FRESHSTACK_TEST_SPACE_DATA"
EPHEMERAL_ENV = "FRESHSTACK_EPHEMERAL"  # 1: run on a store that a restart loses (every page then says so)
DEFAULT_BASELINES = "bm25,dense,hybrid"


def _flag(value: str | None) -> bool | None:
    if value is None or not value.strip():
        return None
    return value.strip().lower() not in ("0", "false", "no", "off")


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def on_space(env: Mapping[str, str]) -> bool:
    """Whether this runs on a Hugging Face Space (the Hub sets `SYSTEM=spaces` in every Space)."""
    return env.get("SYSTEM") == "spaces"


def space_data_dir(env: Mapping[str, str]) -> Path:
    """The Space's persistent storage: `/data`, or in a test the folder `FRESHSTACK_TEST_SPACE_DATA` names."""
    return Path(env[SPACE_DATA_ENV]) if env.get(SPACE_DATA_ENV) else SPACE_DATA


def lost_store(env: Mapping[str, str], space_data: Path = SPACE_DATA) -> str | None:
    """Where the store would be if a restart loses it (a SQLite file, or the data folder holding the default one,
    off persistent storage), else None.

    `env` is the environment the app starts with (`space_environment`'s additions included). A store on a server
    (PostgreSQL) is kept by it; a URL no dialect serves is the store's to refuse, not this check's. A SQLite file is
    kept only inside a writable `space_data`: everywhere else in a Space's container it goes with the container.
    """
    url = env.get(STORE_ENV) or ""
    if url:
        dialect = known_dialect(url)
        if dialect is None or dialect.server:
            return None
        file = dialect.file
        path = None if file is None or str(file).startswith("file:") else file
    else:  # the default store is a file in the data folder
        path = Path(env[DATA_DIR_ENV]).expanduser() if env.get(DATA_DIR_ENV) else default_data_dir()
    if path is not None and _writable_dir(space_data) and path.resolve().is_relative_to(space_data.resolve()):
        return None
    return str(path) if path is not None else url


def check_space_store(env: Mapping[str, str], space_data: Path = SPACE_DATA) -> bool:
    """On a Space, whether the board runs on a store that a restart loses: False when the store is kept (or off a
    Space), True when it is not and `FRESHSTACK_EPHEMERAL=1` accepts that; refused (FreshStackError) otherwise.

    The refusal comes before anything is created, so a misconfigured Space writes nothing and says how to fix it.
    """
    if not on_space(env):
        return False
    where = lost_store(env, space_data)
    if where is None:
        return False
    if _flag(env.get(EPHEMERAL_ENV)):
        return True
    raise FreshStackError(
        f"this Space's store would be lost on every restart: its SQLite store ({where}) is not on persistent "
        f"storage ({space_data}). Add a {STORE_ENV} secret with a PostgreSQL URL (postgresql://user:password@host/db), "
        f"or enable persistent storage in the Space's settings and keep the store on it ({space_data}, where it goes "
        f"by default), or set the variable {EPHEMERAL_ENV}=1 to run anyway and lose every submission and result "
        "on restart"
    )


def space_environment(env: Mapping[str, str], space_data: Path = SPACE_DATA) -> dict[str, str]:
    """Variables to set before the app starts: the data folder and caches on persistent storage, when it exists.

    With `/data` writable, the SQLite store (and with it everything the board depends on), the runs cache, the
    embedding cache and the Hub's download cache all live there, so a restarted Space neither loses submissions
    nor re-downloads and re-encodes the corpus.
    """
    if not _writable_dir(space_data):
        return {}
    wanted = {
        DATA_DIR_ENV: str(space_data),
        "FRESHSTACK_CACHE": str(space_data / "cache"),
        "HF_HOME": str(space_data / ".huggingface"),
    }
    return {key: value for key, value in wanted.items() if not env.get(key)}


def leaderboard_argv(
    dataset: str, revision: str | None, env: Mapping[str, str], *, ephemeral: bool = False
) -> list[str]:
    """The `freshstack-hf leaderboard` arguments this Space's settings amount to (`ephemeral`: on a store that a
    restart loses, accepted by `check_space_store`)."""
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
        dialect = known_dialect(store) if store else None
        worker = not (dialect and dialect.server)  # a queue in a SQLite file is reached by no other machine
    argv += [] if worker else ["--no-worker"]
    oauth = _flag(env.get("FRESHSTACK_OAUTH"))
    if oauth is None:  # off a Space, Gradio's sign-in is a mock that needs a Hub login: a local test run skips it
        oauth = on_space(env)
    if oauth:
        argv.append("--oauth")
    if ephemeral:
        argv.append("--ephemeral")
    return argv


def serve(dataset: str, revision: str | None, env: Mapping[str, str] | None = None) -> int:
    """Serve the leaderboard as the Space's settings say; returns when the server stops (2 on a user error:
    a store that a restart would lose, unless accepted, is one, refused before anything is written)."""
    env = dict(os.environ if env is None else env)
    space_data = space_data_dir(env)
    additions = space_environment(env, space_data)
    env.update(additions)
    try:
        ephemeral = check_space_store(env, space_data)
    except FreshStackError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    os.environ.update(additions)
    if ephemeral:
        print(
            f"warning: {EPHEMERAL_ENV}=1: the store is lost on restart, and every page says so",
            file=sys.stderr,
            flush=True,
        )
    parser = argparse.ArgumentParser(prog="app.py")
    serve_board.add_arguments(parser)
    try:
        args = parser.parse_args(leaderboard_argv(dataset, revision, env, ephemeral=ephemeral))
        return serve_board.run(args)
    except FreshStackError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
