"""`freshstack-hf admin` (hide, unhide, delete, log) through the console script's dispatcher, and moderation seen
on the running app: a hidden system leaves `/table`, the CSV and JSON downloads and the plots and comes back on
`unhide`; a deleted system's file is refused as deleted; the log lists what happened in order. SQLite and
PostgreSQL alike."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from app_client import ALL_SIZES, ALL_TYPES, submit, table
from ports import free_port
from store_rows import topic_scores
from submission_files import merged, write_trec

from leaderboard.store.blobs import Blob
from leaderboard.store.records import ResultMeta
from leaderboard.store.store import Store


@pytest.fixture
def store(store_on_each_backend):
    return store_on_each_backend


def admin(main, url: str, *args: str) -> int:
    return main(["admin", *args, "--store", url])


@pytest.mark.slow
def test_admin_hides_unhides_deletes_and_prints_the_log(freshstack_main, store, tmp_path, capsys):
    kept, _ = store.add_system(
        name="kept", kind="run", content_hash="h-kept", results={"t": topic_scores()}, meta=ResultMeta("r")
    )
    ranking = {"ranking": Blob.ranking({"t": {"q0": {"d": 1.0}}})}
    spam, _ = store.add_system(
        name="spam",
        kind="run",
        content_hash="h-spam",
        results={"t": topic_scores()},
        meta=ResultMeta("r"),
        blobs=ranking,
    )
    url, main = store.url, freshstack_main

    assert admin(main, url, "hide", str(kept.id), "--reason", "under review", "--by", "local:ops") == 0
    assert capsys.readouterr().out == f"hidden: system #{kept.id} 'kept' (under review)\n"
    assert [r.system.name for r in store.leaderboard_rows()] == ["spam"]
    assert admin(main, url, "unhide", str(kept.id)) == 0  # --by defaults to the local user
    assert capsys.readouterr().out == f"back on the board: system #{kept.id} 'kept'\n"
    delete = ["delete", str(spam.id), "--reason", "spam", "--by", "local:ops"]
    assert admin(main, url, *delete) == 0
    assert "1 stored blob(s) removed" in capsys.readouterr().out and store.blobs.ranking_of(spam.id) is None
    assert [r.system.name for r in store.leaderboard_rows()] == ["kept"] and store.results_for(spam.id) == []

    assert admin(main, url, "log") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert "local:ops  admin:hide  hidden  #" in lines[0] and lines[0].endswith("under review")
    assert "  admin:unhide  unhidden  " in lines[1] and "local:" in lines[1]
    assert "local:ops  admin:delete  deleted  " in lines[2] and lines[2].endswith("spam")
    assert admin(main, url, "log", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["outcome"], r["system_id"], r["content_hash"]) for r in rows] == [
        ("admin:hide", "hidden", kept.id, "h-kept"),
        ("admin:unhide", "unhidden", kept.id, "h-kept"),
        ("admin:delete", "deleted", spam.id, "h-spam"),
    ]
    assert rows[0]["at"].endswith("Z") and rows[1]["identity"].startswith("local:")
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d")
    assert admin(main, url, "log", "--json", "--since", tomorrow) == 0
    assert json.loads(capsys.readouterr().out) == []
    deleted_at = store.audit.rows()[2].at.isoformat()  # to the microsecond: the three rows share their second
    assert admin(main, url, "log", "--json", "--since", deleted_at) == 0
    assert [r["kind"] for r in json.loads(capsys.readouterr().out)] == ["admin:delete"]


@pytest.mark.slow
def test_admin_errors_name_the_fix_and_exit_2(freshstack_main, store, tmp_path, capsys):
    main, url = freshstack_main, store.url
    system, _ = store.add_system(name="a", kind="run", content_hash="h-a")
    assert admin(main, url, "hide", "999", "--reason", "x") == 2
    assert "error: no system #999 in this store" in capsys.readouterr().err
    assert admin(main, url, "unhide", str(system.id)) == 2
    assert f"error: system #{system.id} is not hidden" in capsys.readouterr().err
    assert admin(main, url, "hide", str(system.id), "--reason", "  ") == 2
    assert "hide needs a reason (--reason TEXT)" in capsys.readouterr().err
    assert admin(main, url, "log", "--since", "yesterday") == 2
    assert "--since 'yesterday' is not a date" in capsys.readouterr().err
    missing = f"sqlite:///{tmp_path / 'nope.db'}"
    assert admin(main, missing, "log") == 2
    assert "no leaderboard store at" in capsys.readouterr().err and not (tmp_path / "nope.db").exists()
    with pytest.raises(SystemExit) as exit_info:  # argparse: hide without --reason
        main(["admin", "hide", str(system.id), "--store", url])
    assert exit_info.value.code == 2 and "--reason" in capsys.readouterr().err
    assert store.audit.rows() == []  # nothing was done, nothing was logged


@pytest.mark.slow
def test_the_store_option_goes_before_or_after_the_action(freshstack_main, store, capsys):
    """`admin --store URL log` and `admin log --store URL` are the same command; `admin --help` names --store."""
    main, url = freshstack_main, store.url
    store.audit.append("ip:10.0.0.1", "submit:run", "refused", detail="bad file")
    for argv in (["admin", "--store", url, "log"], ["admin", "log", "--store", url]):
        assert main(argv) == 0
        assert "ip:10.0.0.1  submit:run  refused  -  -  bad file" in capsys.readouterr().out
    system, _ = store.add_system(name="a", kind="run", content_hash="h-a")
    assert main(["admin", "--store", url, "hide", str(system.id), "--reason", "under review"]) == 0
    assert capsys.readouterr().out == f"hidden: system #{system.id} 'a' (under review)\n"
    with pytest.raises(SystemExit) as exit_info:
        main(["admin", "--help"])
    assert exit_info.value.code == 0 and "--store STORE" in capsys.readouterr().out


@pytest.fixture
def served(store_url, lb_dataset, tmp_path):
    """The app on a free loopback port, on `store_url` (SQLite, then PostgreSQL), with no baseline rows."""
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from gradio_client import Client

    from leaderboard.page.app import build_app, launch_app

    store = Store(store_url)
    demo = build_app(lb_dataset, store, rate_limit=1000, resamples=0)
    port = free_port()
    launch_app(demo, port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield store, Client(f"http://127.0.0.1:{port}/", verbose=False)
    finally:
        demo.close()
        store.close()


def _exports(client) -> tuple[str, list[dict]]:
    csv_path, json_path = client.predict(
        "", ALL_TYPES, ALL_SIZES, "all topics", "average α-nDCG@10", "desc", api_name="/export"
    )
    return Path(csv_path).read_text(encoding="utf-8"), json.loads(Path(json_path).read_text(encoding="utf-8"))["rows"]


@pytest.mark.slow
def test_a_hidden_system_leaves_the_running_board_and_a_deleted_file_is_refused(
    freshstack_main, served, bm25_runs, tmp_path, capsys
):
    store, client = served
    bad = tmp_path / "broken.trec"
    bad.write_text("q1 Q0 doc\n", encoding="utf-8")
    good = write_trec(tmp_path / "suspicious.trec", merged(bm25_runs), depth=30)
    other = write_trec(tmp_path / "honest.trec", merged(bm25_runs), depth=20)
    outcomes = [submit(client, path, name)[1] for path, name in ((bad, "broken"), (good, "suspicious"))]
    outcomes += [submit(client, good, "suspicious again")[1], submit(client, other, "honest")[1]]
    assert [o["status"] for o in outcomes] == ["refused", "scored", "duplicate", "scored"], outcomes
    key, honest = str(outcomes[1]["system_id"]), str(outcomes[3]["system_id"])

    def visible() -> dict[str, set[str]]:
        """Where the system shows: the table, both downloads, the plots' caption and bars."""
        csv_text, json_rows = _exports(client)
        scatter, bars = client.predict("alpha_ndcg@10", [key, honest], api_name="/plots")
        return {
            "table": {k for k in table(client) if k == key},
            "csv": {key} if "suspicious" in csv_text else set(),
            "json": {r["id"] for r in json_rows if r["id"] == key},
            "scatter": {key} if "suspicious" in scatter["caption"] else set(),
            "bars": {key for row in bars["value"]["data"] if row[1] == f"suspicious (#{key})"},
        }

    everywhere = {where: {key} for where in ("table", "csv", "json", "scatter", "bars")}
    assert visible() == everywhere
    url = store.url
    assert admin(freshstack_main, url, "hide", key, "--reason", "trained on the test questions") == 0
    assert visible() == {where: set() for where in everywhere}
    assert honest in table(client)  # the others stay
    header, *_ = client.predict(key, api_name="/detail")
    assert header.startswith("no system")
    assert admin(freshstack_main, url, "unhide", key) == 0
    assert visible() == everywhere

    assert admin(freshstack_main, url, "delete", key, "--reason", "trained on the test questions") == 0
    assert key not in table(client)
    _, again = submit(client, good, "suspicious, once more")
    assert again["status"] == "refused" and "deleted from the board" in again["message"]
    assert "trained on the test questions" in again["message"]

    capsys.readouterr()
    assert admin(freshstack_main, url, "log", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["kind"], r["outcome"]) for r in rows] == [
        ("submit:run", "refused"),
        ("submit:run", "scored"),
        ("submit:run", "duplicate"),
        ("submit:run", "scored"),
        ("admin:hide", "hidden"),
        ("admin:unhide", "unhidden"),
        ("admin:delete", "deleted"),
        ("submit:run", "refused"),
    ]
    assert {r["identity"] for r in rows[:4]} == {"ip:127.0.0.1"} and rows[0]["content_hash"].startswith("run:")
    assert "broken.trec" in rows[0]["detail"] and "trained on the test questions" in rows[7]["detail"]
    assert rows[1]["content_hash"] == rows[2]["content_hash"] == rows[7]["content_hash"]
    assert rows[1]["system_id"] == rows[2]["system_id"] == rows[4]["system_id"] == int(key)
    assert admin(freshstack_main, url, "log") == 0
    text = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[2:4] for line in text[:7]] == [
        ["submit:run", "refused"],
        ["submit:run", "scored"],
        ["submit:run", "duplicate"],
        ["submit:run", "scored"],
        ["admin:hide", "hidden"],
        ["admin:unhide", "unhidden"],
        ["admin:delete", "deleted"],
    ]
