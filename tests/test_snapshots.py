"""Dated snapshots: a topic cut at two dates from a git repository changed in between and a dump with questions on
both sides, built against the local chat server; the second snapshot asks only about what changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from snapshot_topic import CARRIED, CHANGES, MOVED, NEW, OLD, SECOND, make_history, write_definition

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline import build_prompts

MARKER = re.compile(r"mk-([a-z-]+)")


def _prompts(bodies: list[dict], system: str) -> list[str]:
    return [b["messages"][-1]["content"] for b in bodies if b["messages"][0]["content"] == system]


def _question_ids(prompts: list[str], titles: dict[str, str]) -> set[str]:
    return {qid for p in prompts for qid, title in titles.items() if title in p}


@pytest.fixture
def history(tmp_path: Path) -> Path:
    make_history(tmp_path)
    return tmp_path


def test_bad_snapshot_dates_exit_2_and_write_nothing(history, capsys):
    definition = write_definition(history)
    out = history / "freshstack"
    cases = {
        "2023-06-30": "no commit on or before 2023-06-30",  # before the repository's first commit
        "2999-01-01": "in the future",
        "not-a-date": "not a date",
    }
    for date, message in cases.items():
        assert main(["build", str(definition), "--out", str(out), "--snapshot", date, "--quiet"]) == 2
        assert message in capsys.readouterr().err
    (history / "docs").rename(history / "gone")  # the repository vanished
    assert main(["build", str(definition), "--out", str(out), "--snapshot", OLD, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "corpus.repositories[0].source" in err and "does not exist" in err
    assert sorted(p.name for p in history.iterdir()) == ["gone", "laravel.yaml"]  # nothing written


def test_snapshots_in_the_yaml_are_checked_with_their_keys(history, capsys):
    definition = write_definition(history, snapshots=[OLD, "2999-12-31"])
    assert main(["build", str(definition), "--out", str(history / "out"), "--quiet"]) == 2
    assert "snapshots[1]: 2999-12-31 is in the future" in capsys.readouterr().err
    pinned = write_definition(history, snapshots=[OLD])
    data = json.loads(json.dumps(__import__("yaml").safe_load(pinned.read_text())))
    data["corpus"]["repositories"][0]["commit"] = "abcdef1"
    pinned.write_text(__import__("yaml").safe_dump(data))
    assert main(["build", str(pinned), "--out", str(history / "out"), "--quiet"]) == 2
    assert "corpus.repositories[0].commit" in capsys.readouterr().err


def test_dry_run_says_what_each_snapshot_reuses_and_asks(history, capsys):
    definition = write_definition(history, llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    args = ["build", str(definition), "--out", str(history / "freshstack"), "--quiet", "--dry-run", "--json"]
    assert main([*args, "--snapshot", OLD, "--snapshot", NEW]) == 0
    plans = json.loads(capsys.readouterr().out)
    first, second = plans[OLD], plans[NEW]
    assert first["questions"] == 4 and first["questions_carried"] == 0 and first["files_reused"] == 0
    assert second["questions"] == 8 and second["questions_carried"] == 4 and second["questions_new"] == 4
    files = second["repositories"]["docs"]
    # git's view: a moved file is one deleted and one added path
    assert files == {
        "commit": files["commit"],
        "unchanged": list(CHANGES.values()).count("unchanged"),
        "changed": 1,
        "added": len(SECOND) - 1 + len(MOVED),
        "deleted": 1 + len(MOVED),
    }
    assert second["requests"] < first["requests"] + second["questions_new"] * 10
    assert not (history / "freshstack-work").exists() and not list(history.glob("freshstack@*"))


def test_dry_run_of_a_clone_url_writes_nothing(history, capsys):
    """A repository given as a clone URL is cloned for the plan into a folder removed afterwards, never into the
    work folder the plan says it leaves alone; a clone the work folder already holds is read, not made again."""
    definition = write_definition(history, corpus={"repositories": [{"source": f"file://{history / 'docs'}"}]})
    args = ["build", str(definition), "--out", str(history / "freshstack"), "--quiet", "--dry-run", "--json"]
    assert main([*args, "--snapshot", OLD, "--snapshot", NEW]) == 0
    plans = json.loads(capsys.readouterr().out)
    assert plans[NEW]["questions_carried"] == 4 and plans[NEW]["repositories"]["docs"]["changed"] == 1
    assert sorted(p.name for p in history.iterdir()) == ["docs", "laravel.yaml"]  # no freshstack-work, no repo
    # a clone the work folder holds (a build made it) is what the plan reads, and it stays as it was
    from freshstack_hf.pipeline.config.topic import load_topic_config
    from freshstack_hf.pipeline.corpus.repos import history as clone_of

    work = history / "freshstack-work"
    clone_of(load_topic_config(definition).corpus.repositories[0], work / "laravel" / "corpus" / "cache")
    before = {p: p.stat().st_mtime_ns for p in work.rglob("*")}
    assert main([*args, "--snapshot", OLD, "--snapshot", NEW]) == 0
    assert json.loads(capsys.readouterr().out) == plans
    assert {p: p.stat().st_mtime_ns for p in work.rglob("*")} == before


@pytest.mark.slow
def test_second_snapshot_asks_only_about_what_changed(history, llm_server, capsys):
    from freshstack_hf.repo.dataset import Dataset

    definition = write_definition(history, llm_server.base_url)
    out = history / "freshstack"
    assert main(["build", str(definition), "--out", str(out), "--snapshot", OLD, "--quiet"]) == 0
    first = list(llm_server.chat_bodies)
    old_topic = Dataset(out, OLD).topic("laravel")
    published = {q.query_id for q in old_topic.queries}
    assert published and published <= CARRIED
    capsys.readouterr()

    assert main(["build", str(definition), "--out", str(out), "--snapshot", NEW, "--quiet"]) == 0
    second = llm_server.chat_bodies[len(first) :]
    titles = {q.query_id: q.title for q in Dataset(out, NEW).topic("laravel").queries}
    titles.update({q.query_id: q.title for q in old_topic.queries})
    # nuggets, sub-questions and closed-book answers of carried questions come from the cache
    for system in (build_prompts.NUGGETS_SYSTEM, build_prompts.SUBQUESTIONS_SYSTEM, build_prompts.CLOSED_BOOK_SYSTEM):
        assert not _question_ids(_prompts(second, system), titles) & CARRIED
    # a carried question's judge prompts hold only documents whose text is new: changed and added files
    changed = {Path(n).stem for n in SECOND}
    carried_judge = [p for p in _prompts(second, build_prompts.JUDGE_SYSTEM) if _question_ids([p], titles) & CARRIED]
    asked = {m for p in carried_judge for m in MARKER.findall(p.split("<documents>", 1)[-1])}
    assert asked and asked <= changed, asked - changed

    manifest = json.loads((Path(f"{out}@{NEW}") / "manifest.json").read_text())["topics"]["laravel"]
    reuse, snap = manifest["reuse"], manifest["snapshot"]
    assert reuse["files_reused"] == list(CHANGES.values()).count("unchanged")
    assert reuse["files_chunked"] == len(SECOND) + len(MOVED)
    assert reuse["judgment_pairs_reused"] > 0 and reuse["llm_cache_hits"] > 0
    assert reuse["calls_saved"] >= reuse["llm_cache_hits"]
    assert reuse["calls_made"] == len(second)
    assert snap["date"] == NEW and snap["previous"] == OLD and snap["questions_window"]["until"] == NEW
    carried = manifest["carryover"]
    assert set(carried["questions"]) == published and carried["carried"] == len(published)
    assert carried["answerable"] + len(carried["unanswerable"]) == len(published)
    card = (Path(f"{out}@{NEW}") / "README.md").read_text()
    assert f"Snapshot **{NEW}**" in card and snap["commits"]["docs"][:12] in card

    # the older revision is untouched and still loads: the same queries, the first commit's corpus
    again = Dataset(out, OLD).topic("laravel")
    assert [q.query_id for q in again.queries] == [q.query_id for q in old_topic.queries]
    assert {d.commit for d in again.docs} != {d.commit for d in Dataset(out, NEW).topic("laravel").docs}


@pytest.fixture(scope="module")
def offline_snapshots(tmp_path_factory) -> Path:
    """Both snapshots built offline (no endpoint): the revision folders `freshstack@OLD` and `freshstack@NEW`."""
    root = tmp_path_factory.mktemp("snapshots")
    make_history(root)
    definition = write_definition(root, snapshots=[OLD, NEW])
    assert main(["build", str(definition), "--out", str(root / "freshstack"), "--quiet"]) == 0
    return root / "freshstack"


@pytest.mark.slow
def test_every_loader_takes_a_snapshot(offline_snapshots, monkeypatch, tmp_path, capsys):
    import datasets
    import ir_datasets

    import loaders.irds  # noqa: F401  (registers, for runs without the installed import hook)
    from freshstack_hf.repo.dataset import Dataset
    from loaders.hf_datasets import load_queries
    from loaders.source import dataset_source

    new = Dataset(offline_snapshots, NEW).topic("laravel")
    folder = Path(f"{offline_snapshots}@{NEW}")
    rows = datasets.load_dataset(str(folder), "laravel", split="test")  # the folder is the revision
    assert sorted(rows["query_id"]) == sorted(q.query_id for q in new.queries)
    assert sorted(load_queries(str(offline_snapshots), "laravel", revision=OLD)["query_id"]) == sorted(
        q.query_id for q in Dataset(offline_snapshots, OLD).topic("laravel").queries
    )
    monkeypatch.setenv("FRESHSTACK_DATASET", str(offline_snapshots))
    monkeypatch.setenv("FRESHSTACK_REVISION", NEW)
    assert dataset_source().location == str(folder.resolve())
    assert {q.query_id for q in ir_datasets.load("freshstack/laravel").queries_iter()} == {
        q.query_id for q in new.queries
    }
    monkeypatch.setenv("FRESHSTACK_REVISION", "2001-01-01")
    with pytest.raises(Exception, match=f"its revisions: {OLD}, {NEW}"):
        dataset_source()

    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q.query_id} Q0 {d.doc_id} 1 1.0 r\n" for q in new.queries for d in new.docs[:1]))
    assert main(["evaluate", str(offline_snapshots), "--revision", NEW, "--run", str(run), "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["dataset_revision"] == Dataset(folder).revision
    assert main(["evaluate", str(offline_snapshots), "--revision", "1999-01-01", "--run", str(run)]) == 2
    assert "no revision '1999-01-01'" in capsys.readouterr().err


def test_a_snapshot_folder_publishes_as_a_tag(offline_snapshots, capsys):
    folder = f"{offline_snapshots}@{NEW}"
    assert main(["publish", folder, "--repo-id", "me/freshstack", "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["tag"] == NEW and plan["revision"] == "main" and f"(revision {NEW})" in plan["commit_message"]
    assert {"README.md", "manifest.json", "data/laravel/corpus.parquet"} <= {f["path"] for f in plan["files"]}
    assert main(["publish", folder, "--repo-id", "me/freshstack", "--dry-run", "--tag", "bad tag"]) == 2
    assert "invalid --tag 'bad tag'" in capsys.readouterr().err


def test_drift_between_built_snapshots_counts_the_commits_changes(offline_snapshots, capsys):
    from collections import Counter

    old, new = f"{offline_snapshots}@{OLD}", f"{offline_snapshots}@{NEW}"
    assert main(["drift", old, new, "--json", "-", "--resamples", "200"]) == 0
    topic = json.loads(capsys.readouterr().out)["topics"]["laravel"]
    docs = topic["documents"]["docs"]
    fates = {d["doc_id"].split("/", 1)[1].rsplit("_", 2)[0]: d["fate"] for d in docs}
    assert fates == CHANGES  # every file of the first snapshot was judged (one chunk each)
    assert topic["documents"]["counts"] == dict(Counter(CHANGES.values()))
    moved = next(d for d in docs if d["fate"] == "moved")
    assert moved["new_id"].startswith(f"docs/{MOVED['migrations.md']}_")
    assert topic["answerability"]["source"].startswith("manifest carryover")
    # the carried question's supporting document moved: the build recorded the migration, by content
    carried = json.loads(Path(new, "manifest.json").read_text())["topics"]["laravel"]["carryover"]
    assert carried["migrations"] == [
        {
            "query_id": "1013",
            "old_id": moved["doc_id"],
            "new_id": moved["new_id"],
            "old_path": "docs/migrations.md",
            "new_path": f"docs/{MOVED['migrations.md']}",
        }
    ]
    assert carried["answerable"] == 1 and carried["unanswerable"] == []
