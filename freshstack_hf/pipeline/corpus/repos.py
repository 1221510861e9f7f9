"""Corpus sources to folders on disk at a known commit: a local checkout, a clone URL, a tarball or a plain folder.

A FreshStack corpus is only reproducible when every chunk names the commit it was cut from, so each source is
pinned here before a single file is read: a pinned `commit` is checked to exist, a `snapshot_date` becomes the
last commit on or before the end of that day (UTC), and the resolved sha is what the chunks record. Trees are
exported into the build's work folder through a throw-away git index, so the user's checkout, index and branch
are never touched, and `export-ignore` attributes (which `git archive` honours) cannot silently drop files.
Exports, clones and extracted archives are cached by (source, commit, subdir): a re-run does not extract again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tarfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.config.topic import RepoConfig

logger = logging.getLogger(__name__)

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar", ".zip")
# Settings of the user's repository that would change what an export writes: keep blob bytes exact, all files.
_GIT_CONFIG = ("-c", "core.autocrlf=false", "-c", "core.sparseCheckout=false", "-c", "core.sparseCheckoutCone=false")


@dataclass(frozen=True)
class ResolvedRepo:
    """A repository ready to walk: `root` is the tree's top (paths are relative to it, `subdir` included)."""

    keyword: str
    root: Path
    commit: str  # full sha for git sources; as declared for archives and folders ("unknown" / "" when not)
    commit_date: str  # ISO 8601 committer date, "" when there is no history
    how: str  # "git" | "clone" | "tarball" | "folder"
    url: str  # canonical web URL for chunk links, "" when unknown
    source: str = ""


def source_kind(source: str) -> str:
    """How a `source:` value will be read: clone, tarball, git, folder, or missing."""
    if "://" in source or source.startswith("git@"):
        return "clone"
    path = Path(source)
    if path.is_file() and source.lower().endswith(ARCHIVE_SUFFIXES):
        return "tarball"
    if path.is_dir():
        return "git" if (path / ".git").exists() or _is_bare_repo(path) else "folder"
    return "missing"


def resolve_repo(repo: RepoConfig, cache: Path) -> ResolvedRepo:
    """Put `repo` on disk (under `cache` where it must be exported, cloned or extracted) and pin its commit."""
    kind = source_kind(repo.source)
    if kind == "missing":
        hint = "the file is not a supported archive" if Path(repo.source).is_file() else "no such file or folder"
        raise FreshStackError(
            f"corpus repository {repo.keyword!r}: source {repo.source!r}: {hint} (fix `source:` in the topic YAML: "
            f"a clone URL, a git checkout, a folder, or one of {', '.join(ARCHIVE_SUFFIXES)})"
        )
    if kind in ("git", "clone"):
        git_dir = _clone(repo, cache) if kind == "clone" else _git_dir(Path(repo.source))
        sha = pick_commit(repo, git_dir)
        date = git(git_dir, "show", "-s", "--format=%cI", sha).strip()
        root = _export(repo, git_dir, sha, cache)
        return ResolvedRepo(repo.keyword, root, sha, date, kind, repo.url, repo.source)
    commit = repo.commit or ("unknown" if repo.snapshot_date and kind == "tarball" else "")
    root = _extract(repo, cache) if kind == "tarball" else Path(repo.source)
    if repo.subdir and not (root / repo.subdir).is_dir():
        raise FreshStackError(
            f"corpus repository {repo.keyword!r}: subdir {repo.subdir!r} not found in {repo.source} "
            f"(fix `subdir:`; top-level entries: {', '.join(sorted(p.name for p in root.iterdir())[:10])})"
        )
    return ResolvedRepo(repo.keyword, root, commit, "", kind, repo.url, repo.source)


def history(repo: RepoConfig, cache: Path, *, scratch: Path | None = None) -> Path | None:
    """The git directory holding `repo`'s history (cloned into `cache` for a URL), or None for a tarball/folder.

    A plan (`--dry-run`) passes `scratch`, a folder it removes afterwards: a URL not cloned into `cache` yet is
    cloned there instead, so a plan reads the cache but never writes it."""
    kind = source_kind(repo.source)
    if kind == "clone":
        if scratch is not None and not _clone_path(repo, cache).is_dir():
            return _clone(repo, scratch)
        return _clone(repo, cache)
    return _git_dir(Path(repo.source)) if kind == "git" else None


def update_clone(repo: RepoConfig, cache: Path) -> None:
    """Fetch the branches of `repo`'s clone in `cache`, when it has one: a clone made for an earlier snapshot
    knows no commit made since, and a later snapshot must see them. A remote that is gone is an error naming it."""
    dest = _clone_path(repo, cache)
    if source_kind(repo.source) != "clone" or not dest.is_dir():
        return
    try:
        git(dest, "fetch", "--quiet", "--prune", "origin", "+refs/heads/*:refs/heads/*")  # keeps the blob filter
    except FreshStackError as exc:
        raise FreshStackError(
            f"corpus repository {repo.keyword!r}: cannot fetch {repo.source} ({exc}); the repository vanished or "
            "the network is down: fix `source:` (a moved repository's new URL, or a local checkout)"
        ) from None


def describe_repo(repo: RepoConfig) -> dict[str, Any]:
    """What `resolve_repo` would do, resolving only what is cheap (a local checkout's commit); for --dry-run."""
    kind = source_kind(repo.source)
    info: dict[str, Any] = {
        "keyword": repo.keyword,
        "source": repo.source,
        "how": kind,
        "subdir": repo.subdir,
        "pin": repo.commit or (f"snapshot {repo.snapshot_date}" if repo.snapshot_date else "HEAD"),
    }
    if kind == "git":
        try:
            info["commit"] = pick_commit(repo, _git_dir(Path(repo.source)))
        except FreshStackError as exc:
            info["problem"] = str(exc)
    elif kind == "clone":
        info["note"] = "would clone (blobs on demand) into the work folder"
    elif kind == "missing":
        info["problem"] = f"source {repo.source!r} does not exist"
    return info


# ---- git ---------------------------------------------------------------------------------------------------


def git(git_dir: Path | None, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    cmd = ["git", *_GIT_CONFIG, *(["--git-dir", str(git_dir)] if git_dir else []), *args]
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    done = subprocess.run(cmd, capture_output=True, text=True, env=full_env, check=False)
    if check and done.returncode != 0:
        raise FreshStackError(f"`{' '.join(cmd)}` failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout if done.returncode == 0 else ""


def _is_bare_repo(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _git_dir(path: Path) -> Path:
    out = subprocess.run(["git", "-C", str(path), "rev-parse", "--absolute-git-dir"], capture_output=True, text=True)
    if out.returncode != 0:
        raise FreshStackError(f"{path}: not a readable git repository ({out.stderr.strip()})")
    return Path(out.stdout.strip())


def _clone_path(repo: RepoConfig, cache: Path) -> Path:
    return cache / "clones" / f"{repo.keyword}-{_digest(repo.source)}.git"


def _clone(repo: RepoConfig, cache: Path) -> Path:
    """A bare, blob-less clone in the cache (blobs come when a tree is exported); made once per URL."""
    dest = _clone_path(repo, cache)
    if not dest.is_dir():
        tmp = dest.with_name(f"{dest.name}.partial-{uuid.uuid4().hex[:8]}")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        logger.info("cloning %s into %s", repo.source, dest)
        try:
            git(None, "clone", "--quiet", "--bare", "--filter=blob:none", repo.source, str(tmp))
        except FreshStackError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise FreshStackError(
                f"corpus repository {repo.keyword!r}: cannot clone {repo.source} ({exc}); check the "
                "URL and network, or point `source:` at a local checkout or tarball"
            ) from None
        os.replace(tmp, dest)
    return dest


def _rev(git_dir: Path, rev: str) -> str:
    return git(git_dir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()


def pick_commit(repo: RepoConfig, git_dir: Path) -> str:
    """The full sha of the pinned commit, of the snapshot date's last commit, or of the branch head."""
    where = f"corpus repository {repo.keyword!r} ({repo.source})"
    if repo.commit:
        sha = _rev(git_dir, repo.commit)
        if not sha and "://" in repo.source:  # a cached clone may predate the commit: fetch once, then look again
            git(git_dir, "fetch", "--quiet", "origin", "+refs/heads/*:refs/heads/*", check=False)
            sha = _rev(git_dir, repo.commit)
        if not sha:
            raise FreshStackError(
                f"{where}: commit {repo.commit} is not in the repository (check `commit:` in the "
                "topic YAML, fetch the branch that holds it, or use `snapshot_date:` instead)"
            )
        return sha
    ref = "HEAD"
    if repo.branch:
        ref = next((r for r in (repo.branch, f"origin/{repo.branch}") if _rev(git_dir, r)), "")
        if not ref:
            raise FreshStackError(f"{where}: branch {repo.branch!r} not found (fix `branch:` or leave it out for HEAD)")
    if not repo.snapshot_date:
        return _rev(git_dir, ref)
    sha = git(git_dir, "rev-list", "-1", f"--before={repo.snapshot_date} 23:59:59 +0000", ref).strip()
    if not sha:
        first = git(git_dir, "log", "--reverse", "--format=%cs", ref, check=False).split("\n", 1)[0]
        raise FreshStackError(
            f"{where}: no commit on or before {repo.snapshot_date} on {ref} (its first commit is "
            f"from {first or '?'}; use a later `snapshot_date:` or pin `commit:`)"
        )
    return sha


def _export(repo: RepoConfig, git_dir: Path, sha: str, cache: Path) -> Path:
    """The tree of `sha` (only `subdir` when set) written into the cache through a temporary index."""
    dest = cache / "trees" / f"{repo.keyword}-{_digest(repo.source, sha, repo.subdir)}"
    if dest.is_dir():
        return dest
    tree = f"{sha}:{repo.subdir}" if repo.subdir else f"{sha}^{{tree}}"
    if git(git_dir, "cat-file", "-t", tree, check=False).strip() != "tree":
        raise FreshStackError(
            f"corpus repository {repo.keyword!r}: subdir {repo.subdir!r} is not a folder at commit "
            f"{sha[:12]} of {repo.source} (fix `subdir:`)"
        )
    tmp = dest.with_name(f"{dest.name}.partial-{uuid.uuid4().hex[:8]}")
    work = tmp / repo.subdir if repo.subdir else tmp
    work.mkdir(parents=True)
    index = tmp.with_name(tmp.name + ".index")
    try:
        # read-tree -u fetches a partial clone's missing blobs in one batch and writes every file of the tree.
        git(git_dir, "--work-tree", str(work), "read-tree", "-u", "--reset", tree, env={"GIT_INDEX_FILE": str(index)})
        os.replace(tmp, dest)
    finally:
        index.unlink(missing_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# ---- archives ----------------------------------------------------------------------------------------------


def _extract(repo: RepoConfig, cache: Path) -> Path:
    """The archive's files under the cache, a single top-level folder stripped; unsafe members refuse the archive."""
    archive = Path(repo.source)
    stat = archive.stat()
    key = _digest(repo.source, repo.commit, repo.subdir, stat.st_size, stat.st_mtime_ns)
    dest = cache / "trees" / f"{repo.keyword}-{key}"
    if not dest.is_dir():
        tmp = dest.with_name(f"{dest.name}.partial-{uuid.uuid4().hex[:8]}")
        tmp.mkdir(parents=True)
        try:
            if repo.source.lower().endswith(".zip"):
                _extract_zip(archive, tmp)
            else:
                _extract_tar(archive, tmp)
            os.replace(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    entries = list(dest.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest


def _extract_tar(archive: Path, target: Path) -> None:
    def keep(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        if member.issym() or member.islnk():  # links are never walked; dropping them removes the escape route
            return None
        try:
            return tarfile.data_filter(member, path)  # refuses absolute paths, '..', devices
        except tarfile.FilterError as exc:
            raise FreshStackError(f"{archive}: unsafe member {member.name!r} ({exc}); refusing to extract it") from None

    try:
        with tarfile.open(archive, "r:*") as tar:
            tar.extractall(target, filter=keep)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise FreshStackError(f"{archive}: not a readable archive ({exc}); re-download it or fix `source:`") from None


def _extract_zip(archive: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = PurePosixPath(info.filename.replace("\\", "/"))
                if name.is_absolute() or ".." in name.parts or ":" in info.filename:
                    raise FreshStackError(f"{archive}: unsafe member {info.filename!r}; refusing to extract it")
                if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink
                    continue
                zf.extract(info, target)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FreshStackError(f"{archive}: not a readable zip ({exc}); re-download it or fix `source:`") from None


def _digest(*parts: Any) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()[:12]
