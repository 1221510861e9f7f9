"""Dated snapshots of a topic: the same definition cut at several dates, each written as a revision of the repo.

A snapshot at date D reads every repository at its last commit on or before D and the questions asked up to D,
and writes the topic into the revision folder `OUT@D` (a Hub tag once published, see `repo.revisions`). The
snapshots of a topic share one folder (`OUT-work/TOPIC/`: the LLM cache, the clones, the chunk and judgment
memos), so a later snapshot pays only for what changed: unchanged files are not chunked again, carried-over
questions' nuggets and pooling prompts are answered by the cache, and a (question, nugget, document text) pair
judged before is never sent again. Each snapshot's manifest counts what it reused and the calls it saved.

Everything that can be checked before a stage runs is checked first, for every snapshot (a date in the future,
a repository that vanished, a date before a repository's first commit), so a bad date writes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.pipeline.config.reader import YamlReader
from freshstack_hf.pipeline.config.topic import SnapshotConfig, TopicConfig, read_snapshot_dates
from freshstack_hf.pipeline.corpus.repos import git, history, pick_commit, source_kind
from freshstack_hf.repo.revisions import previous_revision

__all__ = ["TODAY", "check_date", "check_snapshots", "previous_revision", "snapshot_config", "snapshot_dates"]

TODAY = "today"  # `refresh --date today`: resolved when the command runs


def check_date(value: str) -> str:
    """`refresh --date`: an ISO date, not in the future (a future cut would change meaning as commits land), or
    `today`: the UTC date when the command runs, so a schedule (a workflow, a cron line) names no date of its own.
    UTC, not the machine's zone, so a runner anywhere cuts the same day as GitHub's, whose schedules are in UTC."""
    if value.strip().lower() == TODAY:
        return datetime.now(UTC).date().isoformat()
    r = YamlReader("refresh")
    dates = read_snapshot_dates(r, value, "--date")
    if r.problems or len(dates) != 1:
        raise ValidationError(r.problems, "invalid --date")
    return dates[0]


def snapshot_dates(config: TopicConfig, flags: list[str] | None) -> list[str]:
    """The snapshots to build: `--snapshot` dates when given (checked as the YAML's are), else `snapshots:`."""
    if not flags:
        return list(config.snapshots)
    r = YamlReader("build")
    dates = tuple(sorted({d for flag in flags for d in read_snapshot_dates(r, flag, "--snapshot")}))
    for i, repo in enumerate(config.corpus.repositories):
        if repo.commit or repo.snapshot_date:
            key = "commit" if repo.commit else "snapshot_date"
            r.problem(
                f"{config.path}: corpus.repositories[{i}].{key}",
                "a pinned repository cannot be cut at a snapshot date",
                f"remove `{key}:` to build snapshots, or build without --snapshot",
            )
    if r.problems:
        raise ValidationError(r.problems, "invalid --snapshot")
    return list(dates)


def snapshot_config(config: TopicConfig, date: str, previous: Path | None, private: Path | None = None) -> TopicConfig:
    """`config` cut at `date`: every repository at its last commit on or before it, questions up to it; `private`
    is where its embargoed questions are written (`pipeline.embargo`; a refresh stages them before publishing)."""
    repos = tuple(replace(r, snapshot_date=date, commit="") for r in config.corpus.repositories)
    until = min(config.questions.until, date) if config.questions.until else date
    return replace(
        config,
        corpus=replace(config.corpus, repositories=repos),
        questions=replace(config.questions, until=until),
        snapshots=(),
        snapshot=SnapshotConfig(
            date=date, previous=str(previous) if previous else "", private=str(private) if private else ""
        ),
    )


def check_snapshots(
    config: TopicConfig, dates: list[str], cache: Path, *, scratch: Path | None = None
) -> dict[str, dict[str, str]]:
    """Resolve every repository at every date before anything is built: {date: {keyword: sha}}.

    Raises one `FreshStackError` naming the repository, the date and the fix (exit 2, nothing written). A plan
    passes `scratch` for the clones `cache` does not hold yet (`corpus.repos.history`)."""
    resolved: dict[str, dict[str, str]] = {}
    for i, repo in enumerate(config.corpus.repositories):
        kind = source_kind(repo.source)
        key = f"{config.path}: corpus.repositories[{i}].source"
        if kind == "missing":
            raise FreshStackError(f"{key}: {repo.source!r} does not exist (the repository vanished?); fix `source:`")
        if kind in ("tarball", "folder"):
            raise FreshStackError(
                f"{key}: {repo.source!r} is a {kind} without history, so it cannot be cut at a date; give a git "
                "checkout or clone URL, or build it pinned without `snapshots:`"
            )
        git_dir = history(repo, cache, scratch=scratch)
        for date in dates:
            dated = replace(repo, snapshot_date=date, commit="")
            try:
                resolved.setdefault(date, {})[repo.keyword] = pick_commit(dated, git_dir)
            except FreshStackError:  # pick_commit's fix (pin a commit) does not apply to a snapshot
                first = git(git_dir, "log", "--reverse", "--format=%cs", check=False).split("\n", 1)[0]
                raise FreshStackError(
                    f"{config.path}: snapshot {date}: corpus.repositories[{i}] ({repo.keyword}, {repo.source}) has "
                    f"no commit on or before {date} (its first commit is from {first or '?'}); choose a later date"
                ) from None
    return resolved
