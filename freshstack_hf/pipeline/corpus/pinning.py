"""Which commits of a topic's repositories reproduce a release's corpus ids (`freshstack-hf pin-commits`).

A released id `{keyword}/{path}_{start}_{end}` depends only on the file's bytes at the commit it was cut from (and
the repository's name, counted in the budget), so a repository's history needs no full rebuild per commit: every
commit in a window around the snapshot is reduced to the blobs of the files the released ids name, each distinct
blob is chunked once with the release chunker, and a commit scores the released ids its blobs produce. Runs of
consecutive commits with the best score are the ranges any of which reproduces the release; the suggested pin is
the one nearest the snapshot date (on or before it where possible). Nothing is exported: blobs are read from git.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.config.topic import RepoConfig, TopicConfig
from freshstack_hf.pipeline.corpus.file_selection import read_release_text
from freshstack_hf.pipeline.corpus.release_chunker import ReleaseChunker
from freshstack_hf.pipeline.corpus.repos import git, history, pick_commit
from freshstack_hf.pipeline.inputs import REPO_CACHE

# keys under which a row of a released file names corpus ids (queries with nuggets, qrels, corpus rows, runs)
_ID_KEYS = ("corpus_id", "corpus-id", "doc_id", "docid", "_id")
_LIST_KEYS = ("relevant_corpus_ids", "non_relevant_corpus_ids")


@dataclass(frozen=True)
class ReleasedId:
    keyword: str
    path: str  # as the id writes it (the official keeps only the ASCII characters of a path)
    suffix: str  # the id after `keyword/`


def parse_id(corpus_id: str) -> ReleasedId | None:
    """`keyword/path_start_end` split into its parts; None when the id does not have that form."""
    keyword, _, rest = corpus_id.partition("/")
    parts = rest.rsplit("_", 2)
    if not keyword or len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit() or not parts[0]:
        return None
    return ReleasedId(keyword, parts[0], rest)


def load_released_ids(path: str | Path) -> list[str]:
    """Every corpus id a released file names, in first-seen order.

    Reads a text file (one id per line), JSON Lines or JSON (rows with `corpus_id`/`_id`..., or queries whose
    `nuggets` carry `relevant_corpus_ids` and `non_relevant_corpus_ids`), or Parquet with the same columns.
    """
    source = Path(path)
    if not source.is_file():
        raise FreshStackError(f"--released {source}: no such file (give a .txt, .jsonl, .json or .parquet of ids)")
    suffix = source.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            rows: Iterable[Any] = pq.read_table(source).to_pylist()
        elif suffix == ".jsonl":
            rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        elif suffix == ".json":
            data = json.loads(source.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else []
        else:
            rows = [line.strip() for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FreshStackError(f"--released {source}: cannot be read ({exc})") from None
    seen: dict[str, None] = {}
    for row in rows:
        for corpus_id in _ids_of(row):
            seen.setdefault(corpus_id, None)
    ids = [i for i in seen if parse_id(i)]
    if not ids:
        raise FreshStackError(
            f"--released {source}: no corpus ids of the form KEYWORD/PATH_START_END found (rows need one of "
            f"{', '.join(_ID_KEYS)}, or nuggets with {' / '.join(_LIST_KEYS)})"
        )
    return ids


def _ids_of(row: Any) -> Iterable[str]:
    if isinstance(row, str):
        yield row
        return
    if not isinstance(row, dict):
        return
    for key in _ID_KEYS:
        if isinstance(row.get(key), str) and "/" in row[key]:
            yield row[key]
            break
    for key in _LIST_KEYS:
        yield from (i for i in row.get(key) or () if isinstance(i, str))
    for nugget in row.get("nuggets") or ():
        if isinstance(nugget, dict):
            yield from _ids_of({k: nugget.get(k) for k in _LIST_KEYS})


@dataclass(frozen=True)
class Window:
    before_days: int = 120
    after_days: int = 60
    max_commits: int = 500


def pin_topic(
    config: TopicConfig,
    ids: list[str],
    cache: Path,
    window: Window = Window(),
    progress: Callable[[str], None] = lambda _line: None,
) -> dict[str, Any]:
    """Per repository of `config`: the commits whose chunks hold the most released ids, as ranges and a pin."""
    by_keyword: dict[str, list[ReleasedId]] = defaultdict(list)
    for corpus_id in ids:
        parsed = parse_id(corpus_id)
        if parsed:
            by_keyword[parsed.keyword].append(parsed)
    cfg = config.corpus
    repos = []
    for repo in cfg.repositories:
        released = by_keyword.pop(repo.keyword, [])
        if not released:
            continue
        progress(f"{repo.keyword}: {len(released)} released ids")
        chunker = ReleaseChunker(repo.name, cfg.max_tokens, cfg.max_chunks_per_file, cfg.max_file_chars, cfg.notebooks)
        repos.append(_pin_repo(repo, released, cache, window, chunker, cfg.max_file_chars, progress))
    return {
        "topic": config.topic,
        "released_ids": len(ids),
        "repositories": repos,
        "unmatched_keywords": {k: len(v) for k, v in sorted(by_keyword.items())},
    }


def _pin_repo(
    repo: RepoConfig,
    released: list[ReleasedId],
    cache: Path,
    window: Window,
    chunker: ReleaseChunker,
    max_chars: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    report: dict[str, Any] = {"keyword": repo.keyword, "name": repo.name, "source": repo.source}
    report["released"] = len(released)
    git_dir = history(repo, cache)
    if git_dir is None:
        return {**report, "problem": "not a git source (a tarball or folder has no history to scan)"}
    pinned = pick_commit(repo, git_dir)  # the YAML's commit, snapshot or head: the window's centre
    centre = _commit_time(git_dir, pinned)
    if repo.snapshot_date:
        centre = datetime.combine(date.fromisoformat(repo.snapshot_date), datetime.max.time(), UTC)
    commits = _commits(git_dir, repo, pinned, centre, window)
    paths = _tree_paths(git_dir, pinned, {r.path for r in released})
    wanted: dict[str, set[str]] = defaultdict(set)  # real path -> released suffixes cut from it
    for r in released:
        wanted[paths.get(r.path, r.path)].add(r.suffix)
    produced: dict[tuple[str, str], set[str]] = {}  # (path, blob) -> released suffixes its chunks reproduce
    scores = []
    for n, (sha, when) in enumerate(commits, 1):
        hits: set[str] = set()
        for path, blob in _blobs(git_dir, sha, sorted(wanted)).items():
            key = (path, blob)
            if key not in produced:
                produced[key] = wanted[path] & _chunk_blob(git_dir, blob, path, chunker, max_chars)
            hits |= produced[key]
        scores.append((sha, when, hits))
        if n % 50 == 0:
            progress(f"{repo.keyword}: {n}/{len(commits)} commits scanned")
    best = max((len(h) for _, _, h in scores), default=0)
    ranges = _ranges(scores, best)
    nearest = _nearest(scores, best, centre)
    best_hits = next((h for s, _, h in scores if s == nearest), set())
    missing = sorted(r.suffix for r in released if r.suffix not in best_hits)
    return {
        **report,
        "files": len(wanted),
        "window": [commits[0][1].isoformat(), commits[-1][1].isoformat()] if commits else [],
        "commits_scanned": len(commits),
        "distinct_files_chunked": len(produced),
        "yaml_commit": pinned,
        "yaml_commit_reproduces": len(next((h for s, _, h in scores if s == pinned), set())),
        "best": best,
        "ranges": ranges,
        "pin": nearest,
        "pin_date": next((when.isoformat() for s, when, _ in scores if s == nearest), ""),
        "missing": [f"{repo.keyword}/{m}" for m in missing],
    }


def _commit_time(git_dir: Path, sha: str) -> datetime:
    return datetime.fromisoformat(git(git_dir, "show", "-s", "--format=%cI", sha).strip())


def _commits(
    git_dir: Path, repo: RepoConfig, pinned: str, centre: datetime, window: Window
) -> list[tuple[str, datetime]]:
    """Commits of the branch committed within the window, oldest first, the YAML's commit always among them."""
    since = centre - timedelta(days=window.before_days)
    until = centre + timedelta(days=window.after_days)
    ref = repo.branch or "HEAD"
    if repo.branch and not git(git_dir, "rev-parse", "--verify", "--quiet", ref, check=False).strip():
        ref = f"origin/{repo.branch}"
    out = git(
        git_dir, "log", "--date-order", "--format=%H %cI", f"--since={since.isoformat()}",
        f"--until={until.isoformat()}", ref, pinned,
    )  # fmt: skip
    rows = [(sha, datetime.fromisoformat(when)) for sha, when in (line.split() for line in out.splitlines())]
    if not any(sha == pinned for sha, _ in rows):
        rows.append((pinned, _commit_time(git_dir, pinned)))
    rows.sort(key=lambda row: row[1])
    if len(rows) > window.max_commits:  # keep the commits nearest the centre
        rows = sorted(sorted(rows, key=lambda r: abs(r[1] - centre))[: window.max_commits], key=lambda r: r[1])
    return rows


def _ascii(path: str) -> str:
    return "".join(ch for ch in path if ch.isascii())


def _tree_paths(git_dir: Path, sha: str, id_paths: set[str]) -> dict[str, str]:
    """Id paths that are not the file's real path (non-ASCII characters dropped) mapped to the real path."""
    listing = git(git_dir, "ls-tree", "-r", "-z", "--name-only", sha).split("\0")
    return {_ascii(p): p for p in listing if p and not p.isascii() and _ascii(p) in id_paths}


def _blobs(git_dir: Path, sha: str, paths: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(paths), 500):  # keep each command line short
        out = git(git_dir, "--literal-pathspecs", "ls-tree", "-z", sha, "--", *paths[start : start + 500])
        for entry in out.split("\0"):
            meta, _, path = entry.partition("\t")
            fields = meta.split()
            if path and len(fields) == 3 and fields[1] == "blob":
                found[path] = fields[2]
    return found


def _chunk_blob(git_dir: Path, blob: str, path: str, chunker: ReleaseChunker, max_chars: int) -> set[str]:
    import subprocess

    data = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "blob", blob], capture_output=True, check=False
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:  # the build's own reading rules, PDFs included, work on files
        file = Path(tmp) / Path(path).name
        file.write_bytes(data)
        text, _reason = read_release_text(file, path, max_chars)
    if text is None:
        return set()
    return {suffix for suffix, *_ in chunker.chunk_file(path, text).rows}


def _ranges(scores: list[tuple[str, datetime, set[str]]], best: int) -> list[dict[str, Any]]:
    """Runs of consecutive commits (oldest first) that reproduce `best` released ids."""
    runs: list[list[tuple[str, datetime]]] = []
    previous = False
    for sha, when, hits in scores:
        good = best > 0 and len(hits) == best
        if good and previous:
            runs[-1].append((sha, when))
        elif good:
            runs.append([(sha, when)])
        previous = good
    return [
        {"first": run[0][0], "first_date": run[0][1].isoformat(), "last": run[-1][0],
         "last_date": run[-1][1].isoformat(), "commits": len(run)}
        for run in runs
    ]  # fmt: skip


def _nearest(scores: list[tuple[str, datetime, set[str]]], best: int, centre: datetime) -> str:
    """The best-scoring commit nearest the centre, preferring one on or before it."""
    good = [(sha, when) for sha, when, hits in scores if len(hits) == best]
    if not good:
        return ""
    before = [g for g in good if g[1] <= centre]
    pool = before or good
    return min(pool, key=lambda g: abs(g[1] - centre))[0]


def with_work_cache(work: Path) -> Path:
    """The corpus stage's cache under a build work folder, so a clone made here serves the build too."""
    return REPO_CACHE.path(work)
