"""One default store: every command that takes a store reads `$FRESHSTACK_STORE` when no URL is given and says
which store it uses (stderr, password hidden); `refresh --store` without a URL tells that same store, and a refresh
without `--store` tells none even with the variable set; a store URL that cannot be opened is named (password
hidden) with the fix, exit 2."""

from __future__ import annotations

import pytest
from cli_runner import cli
from refresh_topic import D2, definition, make_three_commits, refresh

from freshstack_hf.repo.dataset import Dataset
from leaderboard.store.store import Store

SECRET = "s3cret-pw"
UNREACHABLE = f"postgresql://lb:{SECRET}@127.0.0.1:1/board"  # nothing listens on port 1
SHOWN = "postgresql://lb:***@127.0.0.1:1/board"


@pytest.mark.slow
def test_remeasure_uses_the_env_store_and_says_which(tmp_path, synth_repo):
    chosen = tmp_path / "env" / "board.db"
    env = {"FRESHSTACK_STORE": f"sqlite:///{chosen}", "FRESHSTACK_DATA_DIR": str(tmp_path / "data")}
    done = cli("remeasure", "--dataset", str(synth_repo), "--baselines", "bm25", env=env)
    assert done.returncode == 0, done.stderr
    assert f"store: sqlite:///{chosen}" in done.stderr.splitlines()
    assert "2 baseline row(s) stored or queued" in done.stdout  # BM25, and the answers track's own
    assert not (tmp_path / "data" / "leaderboard.db").exists()  # the data dir's file is only the fallback
    with Store(f"sqlite:///{chosen}") as store:
        assert len(store.queue.list_jobs()) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["remeasure", "--store", UNREACHABLE, "--dataset", "DATASET"],
        ["worker", "--store", UNREACHABLE, "--once"],
        ["admin", "--store", UNREACHABLE, "log"],
        ["fill-board", "--store", UNREACHABLE, "--dataset", "DATASET", "--system", "1", "--topic", "alpha"],
    ],
    ids=lambda c: c[0],
)
def test_a_store_that_cannot_be_opened_is_named_with_the_fix(command, synth_repo):
    done = cli(*[str(synth_repo) if a == "DATASET" else a for a in command])
    assert done.returncode == 2, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert f"error: cannot open the store {SHOWN}: " in done.stderr
    assert "give --store a URL this machine reaches" in done.stderr and "$FRESHSTACK_STORE" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_env_store_is_used_when_no_url_is_given_and_a_bad_one_is_named(synth_repo):
    done = cli("remeasure", "--dataset", str(synth_repo), env={"FRESHSTACK_STORE": UNREACHABLE})
    assert done.returncode == 2 and f"store: {SHOWN}" in done.stderr and SECRET not in done.stderr
    done = cli("remeasure", "--dataset", str(synth_repo), "--store", f"mysql://lb:{SECRET}@db/board")
    assert done.returncode == 2 and SECRET not in done.stderr
    assert "store 'mysql://lb:***@db/board': only sqlite:///FILE and postgresql://" in done.stderr


@pytest.mark.slow
def test_refresh_store_without_a_url_tells_the_env_store(tmp_path, monkeypatch):
    make_three_commits(tmp_path)
    spec, repo, board = definition(tmp_path), tmp_path / "freshstack", tmp_path / "board.db"
    monkeypatch.setenv("FRESHSTACK_STORE", f"sqlite:///{board}")
    code, _, err = refresh(spec, D2, repo, 1)  # no --store: no board is told, whatever the environment says
    assert code == 0, err
    assert not board.exists() and "store:" not in err
    code, out, err = refresh(spec, D2, repo, 1, "--store")  # published already: the board is told
    assert code == 0, err
    assert f"store: sqlite:///{board}" in err.splitlines()
    assert f"revision {D2}: 0 model(s) queued" in out
    with Store(f"sqlite:///{board}") as store:
        jobs = store.queue.list_jobs()
        assert jobs and {job.payload["dataset_revision"] for job in jobs} == {Dataset(repo, D2).revision}

    monkeypatch.setenv("FRESHSTACK_STORE", UNREACHABLE)
    code, _, err = refresh(spec, D2, repo, 1, "--store")
    assert code == 2 and SECRET not in err
    assert f"cannot open the store {SHOWN}" in err and f"revision {D2} is published, but the board's store" in err
