"""The corpus stage on git sources made in the test: pinned commits and snapshot dates, clone URLs with a subdir,
bare repositories, and errors that name the repository and the fix."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from corpus_stage import chunk_rows, corpus_context, git

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.stages import corpus


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """A git repo with three commits a month apart, each rewriting docs/guide.md with its version number."""
    repo = tmp_path / "src"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for i, date in enumerate(("2024-01-10T12:00:00+00:00", "2024-02-10T12:00:00+00:00", "2024-03-10T12:00:00+00:00")):
        (repo / "docs").mkdir(exist_ok=True)
        (repo / "docs" / "guide.md").write_text(f"# Guide version {i + 1}\n\nThis is release number {i + 1}.\n")
        (repo / "README.md").write_text(f"Top level readme, revision {i + 1} of the project.\n")
        git(repo, "add", "-A", date=date)
        git(repo, "commit", "-q", "-m", f"v{i + 1}", date=date)
        shas.append(git(repo, "rev-parse", "HEAD"))
    (repo / ".gitattributes").write_text("docs export-ignore\n")  # uncommitted: the user's work tree is dirty
    return repo, shas


def _guide(rows: list[dict]) -> str:
    return next(r["text"] for r in rows if r["path"] == "docs/guide.md")


# ---- git sources -----------------------------------------------------------------------------------------------


def test_pinned_commit_and_snapshot_date_pick_the_right_commit(tmp_path, history):
    repo, shas = history
    head_before = git(repo, "rev-parse", "HEAD")
    cases = [
        ({"commit": shas[0]}, 0),
        ({"snapshot_date": "2024-02-20"}, 1),
        ({"snapshot_date": "2024-02-10"}, 1),
        ({}, 2),
        ({"commit": shas[1][:10]}, 1),
    ]
    for i, (pin, want) in enumerate(cases):
        ctx = corpus_context(tmp_path / f"case{i}", [{"source": str(repo), "keyword": "src", **pin}])
        record = corpus.run(ctx)
        rows = chunk_rows(ctx)
        assert f"Guide version {want + 1}" in _guide(rows), pin
        assert {r["commit"] for r in rows} == {shas[want]}
        info = record["repositories"][0]
        assert (info["how"], info["commit"]) == ("git", shas[want])
        assert info["commit_date"].startswith(("2024-01-10", "2024-02-10", "2024-03-10")[want])
    # The user's checkout is untouched: same HEAD, the uncommitted file still there and still the only change.
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert git(repo, "status", "--porcelain") == "?? .gitattributes"


def test_git_errors_name_the_repo_and_the_fix(tmp_path, history):
    repo, _ = history
    with pytest.raises(FreshStackError, match=r"'src'.*commit deadbeef0 is not in the repository.*snapshot_date"):
        corpus.run(corpus_context(tmp_path / "a", [{"source": str(repo), "keyword": "src", "commit": "deadbeef0"}]))
    with pytest.raises(FreshStackError, match=r"no commit on or before 2023-12-31.*2024-01-10"):
        corpus.run(
            corpus_context(tmp_path / "b", [{"source": str(repo), "keyword": "src", "snapshot_date": "2023-12-31"}])
        )
    with pytest.raises(FreshStackError, match=r"subdir 'nope'"):
        corpus.run(corpus_context(tmp_path / "c", [{"source": str(repo), "keyword": "src", "subdir": "nope"}]))


def test_file_url_clone_with_subdir(tmp_path, history):
    repo, shas = history
    ctx = corpus_context(
        tmp_path, [{"source": f"file://{repo}", "keyword": "src", "snapshot_date": "2024-01-31", "subdir": "docs"}]
    )
    record = corpus.run(ctx)
    rows = chunk_rows(ctx)
    assert [r["path"] for r in rows] == ["docs/guide.md"]  # only the subdir, its prefix kept in the path
    assert "Guide version 1" in rows[0]["text"] and rows[0]["_id"].startswith("src/docs/guide.md_0_")
    assert record["repositories"][0]["how"] == "clone" and record["commits"] == {"src": shas[0]}
    assert rows[0]["url"] == ""  # a file:// clone URL is no web page to link a blob on
    assert record["repositories"][0]["url"] == ""
    assert len(list((ctx.work / "corpus" / "cache" / "clones").iterdir())) == 1
    # A re-run reuses the clone and the exported tree.
    trees = sorted(p.name for p in (ctx.work / "corpus" / "cache" / "trees").iterdir())
    corpus.run(ctx)
    assert sorted(p.name for p in (ctx.work / "corpus" / "cache" / "trees").iterdir()) == trees


def test_only_a_web_address_gives_chunk_urls(tmp_path, history):
    """A local checkout or `file://` URL has no web page to link, unless `url:` names the repository's; the
    OWNER/REPO name counted in each chunk's budget is still taken from the clone URL."""
    repo, shas = history
    cases = [
        ({"source": str(repo)}, ""),
        ({"source": f"file://{repo}"}, ""),
        ({"source": f"file://{repo}", "url": "https://github.com/me/src"}, f"https://github.com/me/src/blob/{shas[2]}"),
        ({"source": str(repo), "url": "https://github.com/me/src/"}, f"https://github.com/me/src/blob/{shas[2]}"),
    ]
    for i, (entry, link) in enumerate(cases):
        ctx = corpus_context(tmp_path / f"case{i}", [{"keyword": "src", **entry}])
        corpus.run(ctx)
        urls = {r["path"]: r["url"] for r in chunk_rows(ctx)}
        assert urls["docs/guide.md"] == (f"{link}/docs/guide.md" if link else ""), entry
    named = corpus_context(tmp_path / "named", [{"source": f"file://{repo}"}]).config.corpus.repositories[0]
    assert (named.url, named.name, named.keyword) == ("", f"{repo.parent.name}/src", "src")


def test_bare_repository_source(tmp_path, history):
    repo, shas = history
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    ctx = corpus_context(tmp_path, [{"source": str(bare), "keyword": "src", "commit": shas[1]}])
    corpus.run(ctx)
    assert "Guide version 2" in _guide(chunk_rows(ctx))
