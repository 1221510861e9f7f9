"""The demo's sample topic: its dump is in the real format, its corpus covers what its answers rely on, and the git
history its dated snapshots are cut from holds exactly the files the corpus reads."""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from freshstack_hf.pipeline.corpus.file_selection import walk_files
from freshstack_hf.pipeline.corpus.repos import git
from freshstack_hf.pipeline.runner import run_build
from freshstack_hf.pipeline.snapshots import check_snapshots, snapshot_dates
from freshstack_hf.samples.demo_topic import (
    HISTORY_DATE,
    LIBRARIES,
    POSTS,
    SNAPSHOTS,
    demo_config,
    library_histories,
    snapshot_config,
)

ROOT = Path(__file__).resolve().parents[1]
SOURCES = json.loads((POSTS.parent / "sources.json").read_text(encoding="utf-8"))


def test_the_shipped_dump_is_what_the_generator_makes_of_the_posts(tmp_path):
    """scripts/demo_posts.yaml (the posts) through scripts/make_demo_posts.py gives the shipped files, byte for byte."""
    script = ROOT / "scripts" / "make_demo_posts.py"
    done = subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Posts.xml", "sources.json"]
    for name in ("Posts.xml", "sources.json"):
        shipped = ROOT / "freshstack_hf" / "samples" / "demo_data" / name
        assert (tmp_path / name).read_bytes() == shipped.read_bytes(), f"{name} differs from {shipped}: regenerate it"


def test_definition_reads_the_installed_libraries_at_their_versions():
    import importlib.metadata

    config = demo_config()
    repos = {r.keyword: r for r in config.corpus.repositories}
    assert set(repos) == set(LIBRARIES)
    for package, (dist, _) in LIBRARIES.items():
        assert repos[package].commit == f"{dist}=={importlib.metadata.version(dist)}"
        assert (Path(repos[package].source) / "__init__.py").is_file()


def test_question_stage_keeps_exactly_the_answered_on_topic_questions(tmp_path):
    run_build(demo_config(), tmp_path / "freshstack", stages=["questions"], show_progress=False, echo=lambda _: None)
    table = pq.read_table(tmp_path / "freshstack-work" / "pylibs" / "questions" / "questions.parquet")
    assert sorted(table.column("query_id").to_pylist()) == sorted(SOURCES)
    assert all(text.strip() for text in table.column("answer_text").to_pylist())
    assert sum(table.column("body_has_code").to_pylist()) >= 40  # real questions carry code


def test_every_supporting_file_is_chunked():
    """The corpus only chunks listed modules; each file an answer relies on must be among them."""
    config = demo_config()
    include = {r.keyword: r.include for r in config.corpus.repositories}
    for qid, files in SOURCES.items():
        for path in files:
            package, rel = path.split("/", 1)
            assert any(fnmatch.fnmatch(rel, pattern) for pattern in include[package]), (qid, path)
            assert (Path(next(r.source for r in config.corpus.repositories if r.keyword == package)) / rel).is_file()


@pytest.mark.slow
def test_the_snapshots_read_a_history_of_exactly_the_installed_corpus_files(tmp_path):
    """Each library's history is one commit, dated at the questions' window's start, of the files the corpus stage
    reads from the installed folder, byte for byte; made once; and `build --snapshot`'s checks accept the snapshot
    definition at both dates, where every repository resolves to that commit."""
    histories = library_histories(tmp_path / "history")
    config = demo_config()
    assert set(histories) == set(LIBRARIES)
    heads = {}
    for repo in config.corpus.repositories:
        folder = histories[repo.keyword]
        assert folder.name == repo.commit  # one checkout per installed version
        git_dir = folder / ".git"
        log = git(git_dir, "log", "--format=%H %cI %s").strip().splitlines()
        assert len(log) == 1 and log[0].split(" ", 2)[1:] == [HISTORY_DATE, f"{repo.commit} as installed"]
        heads[repo.keyword] = log[0].split()[0]
        installed, _ = walk_files(Path(repo.source), include=repo.include, rules="release")
        committed = git(git_dir, "ls-files", "-z").strip("\0").split("\0")
        assert sorted(committed) == [rel for rel, _ in installed] and installed
        for rel, path in installed:
            assert (folder / rel).read_bytes() == path.read_bytes(), rel
    assert library_histories(tmp_path / "history") == histories  # found, not made again
    assert not list((tmp_path / "history").glob(".*"))  # no partial checkout left behind
    dated = snapshot_config(histories)
    assert all(not r.commit for r in dated.corpus.repositories)
    assert dated.questions == config.questions  # the same questions, cut at each date by the snapshot machinery
    same = [(r.keyword, r.include, r.url) for r in config.corpus.repositories]
    assert [(r.keyword, r.include, r.url) for r in dated.corpus.repositories] == same
    dates = snapshot_dates(dated, list(SNAPSHOTS))
    assert dates == list(SNAPSHOTS)
    resolved = check_snapshots(dated, dates, tmp_path / "cache")
    assert resolved == {date: heads for date in SNAPSHOTS}


@pytest.mark.slow
def test_a_relative_work_folder_still_names_the_histories(tmp_path, monkeypatch):
    """`freshstack-hf demo --out demo-out` (make demo's) gives relative history folders: the snapshot definition
    names them absolutely, or its sources would be read beside the definition's own folder."""
    monkeypatch.chdir(tmp_path)
    histories = library_histories(Path("demo-out") / "history")
    dated = snapshot_config(histories)
    for repo in dated.corpus.repositories:
        assert Path(repo.source) == (tmp_path / histories[repo.keyword]).resolve() and Path(repo.source).is_dir()
