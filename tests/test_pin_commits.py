"""`freshstack-hf pin-commits`: the commits of a history whose chunks reproduce released ids.

The history is made of real files (the shared `laravel/docs` snapshot) in three commits: an older version of two
files, the snapshot itself, and a later edit. The "released" ids are what the official `freshstack` 0.0.6 chunker
makes of the middle commit, so the scan must find that commit alone, and tell that the YAML's snapshot date
(resolving to the later edit) does not reproduce them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from official_chunker import needs_official, official_chunks

from freshstack_hf.cli.main import main
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.corpus.pinning import load_released_ids, parse_id

FILES = ("queues.md", "routing.md", "responses.md")


def _commit(repo: Path, when: str, message: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


@pytest.fixture
def history(tmp_path, shared_data):
    with tarfile.open(shared_data / "github" / "laravel-docs.tar.gz") as tar:
        members = [m for m in tar.getmembers() if m.name.split("/", 1)[-1] in FILES]
        texts = {m.name.split("/", 1)[-1]: tar.extractfile(m).read().decode() for m in members}
    assert set(texts) == set(FILES)
    repo = tmp_path / "docs"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for key, value in (("user.name", "t"), ("user.email", "t@example.org")):
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    older = dict(texts)
    older["queues.md"] = texts["queues.md"].replace("\n\n", "\n\n\n", 3)  # shifts every later offset
    older["routing.md"] = texts["routing.md"][: len(texts["routing.md"]) // 2]
    shas = []
    for when, version, message in (
        ("2024-09-02T10:00:00+00:00", older, "older"),
        ("2024-10-15T10:00:00+00:00", texts, "the release's"),
        ("2024-11-20T10:00:00+00:00", {**texts, "responses.md": "# Moved\n\n" + texts["responses.md"]}, "later"),
    ):
        for name, text in version.items():
            (repo / name).write_text(text, encoding="utf-8")
        shas.append(_commit(repo, when, message))
    return repo, texts, shas


@pytest.mark.slow
@needs_official
def test_pin_commits_finds_the_commit_the_official_chunked(tmp_path, history, tiktoken_cache):
    repo, texts, (_older, release, later) = history
    local = tmp_path / "local" / "laravel" / "docs"
    local.mkdir(parents=True)
    for name, text in texts.items():
        (local / name).write_text(text, encoding="utf-8")
    released = sorted(f"docs/{i}" for i in official_chunks(tmp_path / "local", "laravel/docs", tiktoken_cache))
    assert len(released) > 20
    ids = tmp_path / "released.txt"
    ids.write_text("\n".join(released) + "\n", encoding="utf-8")
    topic = tmp_path / "laravel.yaml"
    topic.write_text(
        "topic: laravel\nquestions: {source: q.xml, tags: [laravel-11]}\ncorpus:\n  repositories:\n"
        f"    - {{source: {repo}, keyword: docs, name: laravel/docs, snapshot_date: 2024-11-30}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "pins.json"
    code = main(["pin-commits", str(topic), "--released", str(ids), "--work", str(tmp_path / "w"), "--json", str(out)])
    assert code == 0
    (r,) = json.loads(out.read_text())["repositories"]
    assert r["released"] == len(released) and r["files"] == len(FILES) and r["commits_scanned"] == 3
    assert r["best"] == len(released) and r["missing"] == []
    assert [(x["first"], x["last"], x["commits"]) for x in r["ranges"]] == [(release, release, 1)]
    assert r["pin"] == release and r["pin_date"].startswith("2024-10-15")
    assert r["yaml_commit"] == later and r["yaml_commit_reproduces"] < len(released)
    # a window that starts after the release's commit finds nothing as good, and says which ids it misses
    narrow_args = ["--before-days", "5", "--json", str(out)]
    main(["pin-commits", str(topic), "--released", str(ids), "--work", str(tmp_path / "w"), *narrow_args])
    (narrow,) = json.loads(out.read_text())["repositories"]
    assert narrow["commits_scanned"] == 1 and narrow["pin"] == later
    assert narrow["missing"] and all(m.startswith("docs/responses.md_") for m in narrow["missing"])


def test_released_ids_from_text_jsonl_and_queries_parquet(tmp_path):
    (tmp_path / "ids.txt").write_text("docs/a.md_0_10\n\ndocs/a.md_0_10\nnot an id\n", encoding="utf-8")
    assert load_released_ids(tmp_path / "ids.txt") == ["docs/a.md_0_10"]
    rows = [{"corpus_id": "kw/x_y.py_5_9"}, {"_id": "q1"}, {"relevant_corpus_ids": ["kw/b_1_2"]}]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert load_released_ids(tmp_path / "rows.jsonl") == ["kw/x_y.py_5_9", "kw/b_1_2"]
    queries = pa.table(
        {
            "_id": ["q1"],
            "nuggets": [
                [{"_id": "q1_1", "relevant_corpus_ids": ["kw/a.md_0_5"], "non_relevant_corpus_ids": ["kw/c_6_9"]}]
            ],
        }
    )
    pq.write_table(queries, tmp_path / "queries.parquet")
    assert load_released_ids(tmp_path / "queries.parquet") == ["kw/a.md_0_5", "kw/c_6_9"]
    parsed = parse_id("kw/src/my_file.py_120_4410")
    assert parsed and (parsed.keyword, parsed.path) == ("kw", "src/my_file.py")
    assert parsed.suffix == "src/my_file.py_120_4410"
    assert parse_id("kw/file.py_1_x") is None and parse_id("file.py_1_2") is None


def test_bad_released_files_are_clear_errors(tmp_path, capsys):
    with pytest.raises(FreshStackError, match="no such file"):
        load_released_ids(tmp_path / "absent.txt")
    (tmp_path / "empty.jsonl").write_text('{"x": 1}\n', encoding="utf-8")
    with pytest.raises(FreshStackError, match="no corpus ids of the form"):
        load_released_ids(tmp_path / "empty.jsonl")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(FreshStackError, match="cannot be read"):
        load_released_ids(tmp_path / "bad.json")
    topic = tmp_path / "t.yaml"
    topic.write_text(
        f"topic: t\nquestions: {{source: q.xml, tags: [x]}}\ncorpus:\n  repositories:\n    - {{source: {tmp_path}}}\n",
        encoding="utf-8",
    )
    (tmp_path / "ids.txt").write_text("other/a.md_0_10\n", encoding="utf-8")
    assert main(["pin-commits", str(topic), "--released", str(tmp_path / "ids.txt"), "--work", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "none of its 1 ids starts with a repository keyword" in err and "other" in err
