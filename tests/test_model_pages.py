"""The board's verified results on model pages (`leaderboard.model_pages`): the `.eval_results` files of each Hub
model the board measured, and the pull requests that propose them, against a local fake Hub server speaking the
Hub's commit and pull-request API (`fake_hub_repos`), through the real `HfApi` over HTTP: the command as a user runs
it (`freshstack-hf admin eval-results`), and the board's own proposals of the rows whose submitter asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import cli
from fake_hub_repos import TOKEN, USER, FakeHubRepos
from huggingface_hub import HfApi, parse_eval_result_entries
from model_page_rows import DATASET_COMMIT, DATASET_ID, LIVE, SNAPSHOT, TOPICS, measured, stored_values
from yaml import safe_load

from freshstack_hf.metrics import HEADLINE, topic_average
from freshstack_hf.repo.eval_results import parse_task_id, results_path
from leaderboard.model_pages.pull_requests import (
    FAILED,
    NOT_PROPOSED,
    OPENED,
    TITLE,
    UNCHANGED,
    Proposer,
    blocker,
    proposal_note,
    propose,
)
from leaderboard.model_pages.verified import PROPOSE, SOURCE_NAME, Target, plan
from leaderboard.store.store import Store

BOARD = "https://board.example"
PATH = results_path(SNAPSHOT)


def expected(store: Store, system_id: int) -> dict[str, float]:
    """task id -> the value an entry must hold: each topic's stored value, and the board's average of them."""
    values = stored_values(store, system_id)
    out = {f"{t}-{m.id.replace('@', '_')}": values[t][m.id] for t in TOPICS for m in HEADLINE}
    for m in HEADLINE:
        out[m.id.replace("@", "_")] = topic_average({t: values[t][m.id] for t in TOPICS}, TOPICS)
    return out


def parsed(text: str | bytes) -> dict[str, float]:
    """task id -> value of a committed file, read with huggingface_hub's own parser."""
    return {e.task_id: e.value for e in parse_eval_result_entries(safe_load(text))}


# ---- what each row gets ------------------------------------------------------------------------------------------
def test_each_hub_model_gets_its_stored_values_and_every_other_row_says_why_not(store):
    model = measured(store, "org/model-a", "a" * 40, 0.4)
    reranker = measured(store, "org/rerank-b", "b" * 40, 0.5, kind="reranker", track=None)
    nano = measured(store, "org/model-a", "a" * 40, 0.3, track="nano", dataset_revision=DATASET_COMMIT)
    folder = measured(store, "/srv/models/mine", None, 0.3)
    packaged = measured(store, "sentence-transformers/all-MiniLM-L6-v2", None, 0.2)
    hidden = measured(store, "org/hidden", "c" * 40, 0.9)
    waiting = measured(store, "org/queued", "e" * 40, 0.9, scored=False)
    store.moderation.hide_system(hidden, reason="trained on the test questions", by="local:admin")

    planned = plan(store, Target(DATASET_ID, BOARD))

    assert sorted(planned.files) == ["org/model-a", "org/rerank-b"]
    (file_a,) = planned.files["org/model-a"]  # the full and the nano rows of one snapshot: one file
    assert file_a.path == PATH and file_a.system_ids == (model, nano)
    got = parsed(file_a.text)
    assert {k: v for k, v in got.items() if not k.endswith("-reranking")} == expected(store, model)
    assert {k.removesuffix("-reranking"): v for k, v in got.items() if k.endswith("-reranking")} == expected(
        store, nano
    )
    (file_b,) = planned.files["org/rerank-b"]
    assert all(parse_task_id(k).reranking for k in parsed(file_b.text))
    assert {k.removesuffix("-reranking"): v for k, v in parsed(file_b.text).items()} == expected(store, reranker)
    entry = parse_eval_result_entries(safe_load(file_a.text))[0]
    assert (entry.dataset_id, entry.dataset_revision, entry.source_name) == (DATASET_ID, DATASET_COMMIT, SOURCE_NAME)
    assert entry.source_url == f"{BOARD}/?snapshot={SNAPSHOT}&system={model}"
    assert SNAPSHOT in entry.notes and "verified by the board: computed by its worker" in entry.notes
    why = {s.system_id: s.why for s in planned.skipped}
    assert set(why) == {folder, packaged, hidden, waiting}
    assert "local model folder (--model-root)" in why[folder]
    assert "no Hub commit of sentence-transformers/all-MiniLM-L6-v2 was pinned" in why[packaged]
    assert why[hidden].startswith("hidden by a moderator") and why[waiting] == "not scored (queued)"


def test_no_live_value_is_ever_written(store):
    measured(store, "org/model-a", "a" * 40, 0.4)
    text = plan(store, Target(DATASET_ID, BOARD)).files["org/model-a"][0].text
    live = LIVE["measures"]["alpha_ndcg@10"]
    assert "live" not in text and all(repr(v) not in text for v in live.values())


def test_a_local_revision_needs_its_hub_commit_and_a_later_commit_supersedes(store):
    local = measured(store, "org/model-a", "a" * 40, 0.4, dataset="/srv/freshstack", dataset_revision="local-1234")
    first = measured(store, "org/model-b", "b" * 40, 0.4)
    later = measured(store, "org/model-b", "f" * 40, 0.45)

    planned = plan(store, Target(DATASET_ID, BOARD))
    why = {s.system_id: s.why for s in planned.skipped}
    assert "local revision 2025-10-31, which is no Hub commit" in why[local]
    assert "--dataset-revision 2025-10-31=COMMIT" in why[local]
    assert why[first] == f"superseded by #{later}, the same repo scored later on snapshot {SNAPSHOT}"
    assert planned.files["org/model-b"][0].system_ids == (later,)

    mapped = plan(store, Target(DATASET_ID, BOARD, {SNAPSHOT: "9" * 40}))
    (file_a,) = mapped.files["org/model-a"]
    assert {e.dataset_revision for e in file_a.entries} == {"9" * 40}


def test_another_benchmark_and_bad_targets_are_refused(store):
    other = measured(store, "org/model-a", "a" * 40, 0.4, dataset="someone/else")
    assert "scored on the dataset someone/else, not org/freshstack" in plan(store, Target(DATASET_ID, BOARD)).skipped[
        0
    ].why.replace(f"#{other} ", "")
    from freshstack_hf.errors import FreshStackError

    with pytest.raises(FreshStackError, match="not a Hub dataset id"):
        Target("freshstack", BOARD)
    with pytest.raises(FreshStackError, match="not an http"):
        Target(DATASET_ID, "board.example")
    with pytest.raises(FreshStackError, match="40 hex digits"):
        Target(DATASET_ID, BOARD, {SNAPSHOT: "abc"})


# ---- pull requests, in this process ------------------------------------------------------------------------------
@pytest.mark.slow
def test_pull_requests_are_opened_once_audited_and_a_refused_repo_leaves_the_others_going(store, monkeypatch):
    a = measured(store, "org/model-a", "a" * 40, 0.4)
    b = measured(store, "org/model-b", "b" * 40, 0.5)
    c = measured(store, "org/model-c", "c" * 40, 0.6)
    target = Target(DATASET_ID, BOARD)
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        for repo in ("org/model-a", "org/model-b", "org/model-c"):
            hub.add_repo(repo, {"README.md": b"# a model\n"})
        hub.refuse["org/model-b"] = 403
        api = HfApi(endpoint=hub.url, token=TOKEN)

        first = {
            o.repo_id: o for o in propose(store, plan(store, target), target, by="local:op", group="admin", api=api)
        }
        assert first["org/model-a"].status == first["org/model-c"].status == OPENED
        assert first["org/model-b"].status == FAILED
        assert "refused this token a pull request" in first["org/model-b"].detail
        assert "use a token with write access" in first["org/model-b"].detail
        for repo, system in (("org/model-a", a), ("org/model-c", c)):
            (pull,) = hub.pulls(repo)
            assert (pull.title, pull.author) == (TITLE, USER) and BOARD in pull.description
            assert parsed(pull.files[PATH]) == expected(store, system)
            assert pull.files["README.md"] == b"# a model\n"  # nothing else changes

        hub.refuse.clear()
        hub.merge("org/model-c", 1)  # its owner merged it: main now holds the values
        second = {
            o.repo_id: o for o in propose(store, plan(store, target), target, by="local:op", group="admin", api=api)
        }
        assert (
            second["org/model-a"].status == UNCHANGED and "open pull request #1 holds" in second["org/model-a"].detail
        )
        assert second["org/model-c"].status == UNCHANGED and "main branch holds" in second["org/model-c"].detail
        assert second["org/model-b"].status == OPENED  # the refused one goes through once the Hub lets it
        assert len(hub.pulls("org/model-a")) == len(hub.pulls("org/model-c")) == len(hub.pulls("org/model-b")) == 1
        assert parsed(hub.pulls("org/model-b")[0].files[PATH]) == expected(store, b)

    rows = [r for r in store.audit.rows() if r.kind == "admin:model_page"]
    assert [(r.system_id, r.outcome) for r in rows] == [(a, OPENED), (b, FAILED), (c, OPENED), (b, OPENED)]
    assert all(r.identity == "local:op" for r in rows) and "/discussions/1" in rows[0].detail


@pytest.mark.slow
def test_new_values_get_a_new_pull_request_naming_the_one_it_supersedes(store, monkeypatch):
    measured(store, "org/model-a", "a" * 40, 0.4)
    target = Target(DATASET_ID, BOARD)
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        hub.add_repo("org/model-a")
        api = HfApi(endpoint=hub.url, token=TOKEN)
        propose(store, plan(store, target), target, by="local:op", group="admin", api=api)
        later = measured(store, "org/model-a", "9" * 40, 0.7)  # a later commit of the model, measured again
        (outcome,) = propose(store, plan(store, target), target, by="local:op", group="admin", api=api)
        assert outcome.status == OPENED and outcome.system_ids == (later,)
        assert "supersedes the board's earlier pull request #1" in hub.pulls("org/model-a")[1].description


def test_without_a_token_nothing_is_opened_and_each_repo_says_how_to_fix_it(store, monkeypatch):
    measured(store, "org/model-a", "a" * 40, 0.4)
    target = Target(DATASET_ID, BOARD)
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch, token=None)
        hub.add_repo("org/model-a")
        (outcome,) = propose(store, plan(store, target), target, by="local:op", group="admin", api=HfApi(hub.url))
        assert outcome.status == FAILED and "no Hugging Face token" in outcome.detail and "HF_TOKEN" in outcome.detail
        assert hub.pulls("org/model-a") == []
        assert blocker(BOARD, DATASET_ID, DATASET_COMMIT) == (
            "this board holds no Hugging Face token (HF_TOKEN) to open the pull request with"
        )


# ---- the board's own proposals ---------------------------------------------------------------------------------
def test_the_board_proposes_what_submitters_asked_for_once_scored_and_only_once(store, monkeypatch):
    asked = measured(store, "org/model-a", "a" * 40, 0.4, propose=True)
    not_asked = measured(store, "org/model-b", "b" * 40, 0.5)
    folder = measured(store, "/srv/models/mine", None, 0.3, propose=True)
    waiting = measured(store, "org/model-c", "c" * 40, 0.6, propose=True, scored=False)
    assert store.queue.first_payloads()[asked][PROPOSE] is True
    clock = [0.0]
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        for repo in ("org/model-a", "org/model-b", "org/model-c"):
            hub.add_repo(repo)
        hub.refuse["org/model-a"] = 429
        proposer = Proposer(store, Target(DATASET_ID, BOARD), lambda: HfApi(hub.url, token=TOKEN), lambda: clock[0])

        (failed,) = proposer.run_once()
        assert failed.status == FAILED and "rate limit" in failed.detail
        assert proposer.run_once() == []  # refused: tried again an hour later, not at every pass
        hub.refuse.clear()
        clock[0] += 3601
        (opened,) = proposer.run_once()
        assert opened.status == OPENED and opened.system_ids == (asked,)
        assert proposer.run_once() == []
        assert Proposer(store, Target(DATASET_ID, BOARD)).waiting() == []  # a restarted board reads the log
        assert hub.pulls("org/model-b") == [] and hub.pulls("org/model-c") == []
    rows = [(r.system_id, r.outcome, r.identity) for r in store.audit.rows() if r.kind == "board:model_page"]
    assert rows == [(folder, NOT_PROPOSED, "board"), (asked, FAILED, "board"), (asked, OPENED, "board")]
    assert waiting not in {r[0] for r in rows} and not_asked not in {r[0] for r in rows}


def test_a_submitter_is_told_at_once_what_becomes_of_the_proposal(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert blocker("", DATASET_ID, DATASET_COMMIT).startswith("this board runs without a public address")
    assert "serves a local folder" in blocker(BOARD, "", DATASET_COMMIT)
    assert "is a local folder's, no Hub commit" in blocker(BOARD, DATASET_ID, "local-1234")
    assert blocker(BOARD, DATASET_ID, DATASET_COMMIT) is None
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "HF_HUB_OFFLINE" in blocker(BOARD, DATASET_ID, DATASET_COMMIT)
    assert (
        proposal_note("/srv/models/mine", None)
        == "Nothing will be proposed to a model page: this model is not a Hub repo."
    )
    assert "opens a pull request on org/m" in proposal_note("org/m", None)
    note = proposal_note("org/m", "this board holds no Hugging Face token (HF_TOKEN) to open the pull request with")
    assert "Not proposed to org/m's page" in note and "eval-results --open-prs" in note


# ---- the command, as a user runs it --------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_command_writes_lists_and_opens_pull_requests_over_http(store, tmp_path):
    a = measured(store, "org/model-a", "a" * 40, 0.4)
    b = measured(store, "org/rerank-b", "b" * 40, 0.5, kind="reranker", track=None)
    gone = measured(store, "org/gone", "9" * 40, 0.2)
    folder = measured(store, "/srv/models/mine", None, 0.3)
    hidden = measured(store, "org/hidden", "c" * 40, 0.9)
    store.moderation.hide_system(hidden, reason="spam", by="local:admin")
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    base = ["admin", "eval-results", "--dataset", DATASET_ID, "--board-url", BOARD, "--store", url]

    out = tmp_path / "out"
    written = cli(*base, "--out", str(out), "--json")
    assert written.returncode == 0, written.stderr
    files = {p.relative_to(out).as_posix() for p in out.rglob("*.yaml")}
    assert files == {f"org/model-a/{PATH}", f"org/rerank-b/{PATH}", f"org/gone/{PATH}"}
    assert parsed((out / "org/model-a" / PATH).read_text()) == expected(store, a)

    with FakeHubRepos() as hub:
        env = hub.environment()
        for repo in ("org/model-a", "org/rerank-b", "org/hidden"):
            hub.add_repo(repo)  # org/gone is not on the Hub any more
        dry = cli(*base, "--dry-run", env=env)
        assert dry.returncode == 1, dry.stderr  # org/gone cannot be read: named, the others listed
        assert f"org/model-a (#{a}): would open: {PATH}" in dry.stdout
        assert f"org/gone (#{gone}): failed: not on the Hub" in dry.stdout
        assert all(hub.pulls(r) == [] for r in hub.repos)

        opened = cli(*base, "--open-prs", "--json", env=env)
        assert opened.returncode == 1, opened.stderr  # one repo failed; the others went on
        report = json.loads(opened.stdout)
        status = {r["repo"]: r for r in report["repos"]}
        assert status["org/model-a"]["status"] == status["org/rerank-b"]["status"] == OPENED
        assert status["org/gone"]["status"] == FAILED and "not on the Hub" in status["org/gone"]["detail"]
        skipped = {s["system"]: s["why"] for s in report["skipped"]}
        assert "local model folder" in skipped[folder] and skipped[hidden].startswith("hidden by a moderator")
        assert hub.pulls("org/hidden") == []
        for repo, system in (("org/model-a", a), ("org/rerank-b", b)):
            (pull,) = hub.pulls(repo)
            committed = parsed(pull.files[PATH])
            assert {k.removesuffix("-reranking"): v for k, v in committed.items()} == expected(store, system)

        again = cli(*base, "--open-prs", env=env)
        assert "org/model-a" in again.stdout and "unchanged" in again.stdout
        assert len(hub.pulls("org/model-a")) == len(hub.pulls("org/rerank-b")) == 1
    logged = [(r.system_id, r.outcome) for r in store.audit.rows() if r.kind == "admin:model_page"]
    assert (a, OPENED) in logged and (b, OPENED) in logged and (gone, FAILED) in logged


@pytest.mark.slow
def test_the_command_refuses_what_a_user_got_wrong(tmp_path):
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    Store(url).create_all()
    base = ["admin", "eval-results", "--store", url, "--dry-run"]
    bad_id = cli(*base, "--dataset", "freshstack", "--board-url", BOARD)
    assert bad_id.returncode == 2 and "not a Hub dataset id" in bad_id.stderr
    bad_url = cli(*base, "--dataset", DATASET_ID, "--board-url", "board")
    assert bad_url.returncode == 2 and "--board-url" in bad_url.stderr
    pair = cli(*base, "--dataset", DATASET_ID, "--board-url", BOARD, "--dataset-revision", "2025-10-31")
    assert pair.returncode == 2 and "REVISION=COMMIT" in pair.stderr
    Path(tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    full = cli("admin", "eval-results", "--store", url, "--dataset", DATASET_ID, "--board-url", BOARD, "--out",
               str(tmp_path / "full"))  # fmt: skip
    assert full.returncode == 2 and "is not empty" in full.stderr


@pytest.mark.slow
def test_a_board_serving_a_folder_needs_the_benchmarks_hub_id_to_propose(lb_dataset, tmp_path):
    """`leaderboard --board-url` on a folder names no Hub dataset for the entries: refused before anything starts,
    with the fix; a --dataset-id that is no Hub id too."""
    store = f"sqlite:///{tmp_path / 'lb.db'}"
    served = ["leaderboard", "--dataset", str(lb_dataset.folder), "--store", store, "--no-baselines"]
    no_id = cli(*served, "--board-url", BOARD)
    assert no_id.returncode == 2 and "--board-url needs the benchmark's Hub id" in no_id.stderr
    bad_id = cli(*served, "--board-url", BOARD, "--dataset-id", "freshstack")
    assert bad_id.returncode == 2 and "not a Hub dataset id" in bad_id.stderr


def test_the_boards_thread_proposes_what_was_asked_and_stops_with_the_board(store, monkeypatch, capsys):
    """The thread `freshstack-hf leaderboard --board-url` starts in the board's process (the one holding the token)."""
    import threading
    import time

    from leaderboard.cli import serve_board

    asked = measured(store, "org/model-a", "a" * 40, 0.4, propose=True)
    with FakeHubRepos() as hub:
        hub.point_here(monkeypatch)
        hub.add_repo("org/model-a")
        stop = threading.Event()
        thread = serve_board._start_proposer(store, Target(DATASET_ID, BOARD), stop)
        deadline = time.monotonic() + 30
        while not hub.pulls("org/model-a") and time.monotonic() < deadline:
            time.sleep(0.1)
        stop.set()
        thread.join(timeout=30)
        assert not thread.is_alive()
        (pull,) = hub.pulls("org/model-a")
        assert parsed(pull.files[PATH]) == expected(store, asked)
    assert f"model pages: org/model-a (#{asked}): opened: " in capsys.readouterr().err


def test_a_rows_detail_address_is_read_back_and_junk_is_ignored():
    from leaderboard.page.detail_link import asked_system, detail_link

    link = detail_link("https://board.example/", 42, SNAPSHOT)
    assert link == f"https://board.example/?snapshot={SNAPSHOT}&system=42"
    assert asked_system({"system": "42"}) == "42" and asked_system({"system": " 007 "}) == "7"
    assert [asked_system(p) for p in ({}, {"system": "x"}, {"system": "-1"}, {"system": "9" * 20})] == [None] * 4
