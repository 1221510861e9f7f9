"""One `corpus.repositories` entry of a topic YAML: where the repository comes from, and the defaults a user may omit.

A repository's keyword (the corpus id prefix), its `OWNER/REPO` name (counted in every chunk's token budget by
the official chunker) and its web URL are derived from the source when not given, so a one-line entry
(`- https://github.com/laravel/docs`) is enough; the checks here name the dotted key of the entry at fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.pipeline.config.reader import YamlReader, resolve_path

# A git sha for repositories with history; tarballs and plain folders may name a release instead (`pandas==3.1.1`).
COMMIT_RE = re.compile(r"^(?:[0-9a-f]{7,40}|[A-Za-z0-9][A-Za-z0-9._+=-]{0,63})$")
KEYWORD_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class RepoConfig:
    """One corpus repository. `source` is a clone URL, a local checkout or folder, or a tarball.

    Exactly one of `commit` (pinned) and `snapshot_date` (the last commit on or before that day) may be given;
    a tarball or plain folder has no history, so its commit is taken as declared.
    """

    source: str
    keyword: str
    url: str = ""  # canonical web URL, for each chunk's `url` metadata (`{url}/blob/{commit}/{path}`); "" if none
    name: str = ""  # OWNER/REPO: the official counts `OWNER/REPO/path` in every chunk's token budget
    commit: str = ""
    snapshot_date: str = ""
    branch: str = ""
    subdir: str = ""  # only this folder of the repository (e.g. angular/angular's adev/src/content)
    include: tuple[str, ...] = ()  # glob patterns on the repo-relative path; empty = everything
    exclude: tuple[str, ...] = ()


def read_repository(r: YamlReader, item: Any, prefix: str, base: Path) -> RepoConfig:
    """One `corpus.repositories` item (a mapping, or just its source), problems reported through `r`."""
    if isinstance(item, str):
        item = {"source": item}
    if not isinstance(item, dict):
        r.problem(prefix.rstrip("."), f"expected a mapping or a string, got {item!r}")
        return RepoConfig(source="", keyword="?")
    r.unknown(item, {f.name for f in RepoConfig.__dataclass_fields__.values()}, prefix)
    source = resolve_path(base, r.get(item, "source", str, prefix, "", required=True))
    clone = _web_url(source) if "://" in source or source.startswith("git@") else ""
    # Only a web address links a file at a commit (`{url}/blob/{commit}/{path}`); a `file://`, `ssh://` or `git://`
    # clone URL is no web page, so like a local checkout, folder or tarball it has no url unless `url:` gives one.
    url = r.get(item, "url", str, prefix, "") or (clone if clone.startswith(("https://", "http://")) else "")
    keyword = r.get(item, "keyword", str, prefix, "") or _default_keyword(url or source)
    if keyword and not KEYWORD_RE.match(keyword):
        r.problem(f"{prefix}keyword", f"invalid keyword {keyword!r}", "letters, digits, '.', '_' and '-' only")
    # A local folder or tarball without `url:` or `name:` counts its keyword in place of OWNER/REPO.
    name = r.get(item, "name", str, prefix, "").strip("/") or _default_name(url or clone) or keyword
    commit = r.get(item, "commit", str, prefix, "")
    commit = commit.lower() if re.fullmatch(r"[0-9A-Fa-f]{7,40}", commit) else commit
    if commit and not COMMIT_RE.match(commit):
        r.problem(f"{prefix}commit", f"not a commit: {commit!r}", "a sha of 7 to 40 hex digits, or a release label")
    snapshot = r.date(item, "snapshot_date", prefix)
    if commit and snapshot:
        r.problem(f"{prefix}snapshot_date", "give either commit or snapshot_date, not both")
    return RepoConfig(
        source=source,
        keyword=keyword,
        url=url.rstrip("/"),
        name=name,
        commit=commit,
        snapshot_date=snapshot,
        branch=r.get(item, "branch", str, prefix, ""),
        subdir=r.get(item, "subdir", str, prefix, "").strip("/"),
        include=r.strings(item, "include", prefix),
        exclude=r.strings(item, "exclude", prefix),
    )


def _web_url(source: str) -> str:
    url = source
    if url.startswith("git@"):
        url = "https://" + url[4:].replace(":", "/", 1)
    return url.removesuffix(".git")


def _default_name(url: str) -> str:
    """`https://github.com/laravel/docs` -> `laravel/docs` (the last two parts of a web URL's path)."""
    parts = [p for p in url.split("://", 1)[-1].split("/")[1:] if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else ""


def _default_keyword(source: str) -> str:
    """The repository's name: `https://github.com/laravel/docs` -> `docs`; a tarball `x/laravel-docs.tar.gz` ->
    `laravel-docs`."""
    name = source.rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".git", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip"):
        name = name.removesuffix(suffix)
    return name
