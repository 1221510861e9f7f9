"""What the board measured of each Hub model, as the `.eval_results` files of the model's repo (`Plan`).

A row gets entries when a worker of this board scored it (a model or a reranker, `store.schema.HUB_MODEL_KINDS`), on
the benchmark's Hub dataset (`Target.dataset_id`), from a Hub repo at the commit the board pinned when it accepted
the submission (so the numbers are those of weights anyone can download). Its entries are the headline measures of
each topic the row was scored on and their average (`freshstack_hf.repo.eval_results.entries_for`: the retrieval
tasks, or the reranking ones for a row scored on each query's candidates), at full precision as stored (the board
shows the same values to three decimals); the dataset revision is the commit of the snapshot's Hub revision; the
date is when the row was scored; the source is the row's Detail view on the board
(`leaderboard.page.detail_link`); the note names the snapshot and says the board's worker computed them. The
public results only: a live score (the embargoed questions, `leaderboard.live_scores`) sits in the results'
parameters, which nothing here reads.

One file per model repo and snapshot (`.eval_results/freshstack-SNAPSHOT.yaml`): a model measured on several
snapshots has several. Where two rows of one repo would fill the same tasks of one snapshot (two commits of it), the
one scored last is kept and the other listed as superseded.

Every other row is listed with why it gets none (`Skipped`): a folder under `--model-root` or weights keyed by
their hash (no Hub page, or no commit of it), a row hidden by a moderator (deleted rows keep no results), a row
not scored, a row of another dataset, or of a local revision no `--dataset-revision` maps to a Hub commit.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics.measures import HEADLINE
from freshstack_hf.repo.eval_results import entries_for, entries_yaml, results_path
from leaderboard.page.detail_link import detail_link
from leaderboard.store.records import LeaderboardRow, SystemState
from leaderboard.store.schema import CANDIDATE_KINDS, CANDIDATE_TRACKS, HIDDEN, HUB_MODEL_KINDS
from leaderboard.store.store import Store

if TYPE_CHECKING:
    from huggingface_hub import EvalResultEntry

SOURCE_NAME = "FreshStack-HF leaderboard"
# The job payload's key of a submitter's "propose these results to my model's page" (`pull_requests.open_proposed`).
PROPOSE = "propose_results"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
MEASURES = tuple(m.id for m in HEADLINE)


@dataclass(frozen=True, slots=True)
class Target:
    """Where the entries point: the benchmark's Hub dataset, the board's public address (the rows' Detail links),
    and the Hub commit of each local revision the board scored on (`revisions`: a stored `local-…` revision, or a
    snapshot's name, -> the commit it was published as)."""

    dataset_id: str
    board_url: str = ""  # none: entries without a source (the board's own comparisons, never proposed)
    revisions: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not HUB_ID.match(self.dataset_id or ""):
            raise FreshStackError(
                f"dataset id {self.dataset_id[:100]!r} is not a Hub dataset id (ORG/NAME): entries on a model's page "
                "name the benchmark's Hub dataset; give --dataset-id ORG/NAME"
            )
        if self.board_url and not re.match(r"^https?://[^\s/]+", self.board_url):
            raise FreshStackError(
                f"board URL {self.board_url[:100]!r} is not an http(s) address: give --board-url, the address "
                "visitors open the board at (each entry links its row's Detail view there)"
            )
        for name, commit in self.revisions.items():
            if not COMMIT.match(commit):
                raise FreshStackError(f"--dataset-revision {name}={commit[:60]}: the commit must be 40 hex digits")

    def commit_of(self, revision: str, snapshot: str) -> str | None:
        """The Hub commit of the revision a row was scored on: a Hub revision is its commit; a local one, what
        `revisions` maps it (or its snapshot's name) to."""
        if COMMIT.match(revision):
            return revision
        return self.revisions.get(revision) or self.revisions.get(snapshot)


def served_dataset_id(source: str, revision: str) -> str | None:
    """The benchmark's Hub id when a board serves a Hub download of it (`--dataset ORG/NAME`: its revision is a
    commit); None for a local folder, whose Hub id only the operator can say (`--dataset-id`)."""
    local = Path(source).expanduser().exists()
    return source if HUB_ID.match(source) and COMMIT.match(revision) and not local else None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A row that gets no entry, and why."""

    system_id: int
    name: str
    why: str

    def line(self) -> str:
        return f"#{self.system_id} {self.name}: {self.why}"


@dataclass(frozen=True, slots=True)
class Measured:
    """One row's entries: the system, its model's repo, the snapshot and the Hub commit it was scored on."""

    system_id: int
    name: str
    repo_id: str
    model_commit: str
    snapshot: str
    dataset_revision: str
    reranking: bool
    scored_at: datetime
    evaluator: str  # the freshstack-hf version that scored it
    entries: tuple[EvalResultEntry, ...]


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One `.eval_results` file of one model repo: its path, its text and the rows whose entries it holds."""

    repo_id: str
    path: str
    snapshot: str
    rows: tuple[Measured, ...]

    @property
    def entries(self) -> list[EvalResultEntry]:
        return [e for row in self.rows for e in row.entries]

    @property
    def text(self) -> str:
        return entries_yaml(self.entries)

    @property
    def system_ids(self) -> tuple[int, ...]:
        return tuple(row.system_id for row in self.rows)


@dataclass
class Plan:
    """Every file the board would put on model pages (repo -> its files, by path), and the rows left out."""

    files: dict[str, list[ModelFile]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)

    def rows(self) -> list[Measured]:
        return [row for files in self.files.values() for f in files for row in f.rows]

    def write(self, folder: str | Path) -> list[Path]:
        """Each repo's files under `folder/ORG/NAME/`, as they would be committed; the paths written."""
        written = []
        for repo_id, files in self.files.items():
            for f in files:
                path = Path(folder, *repo_id.split("/"), f.path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f.text, encoding="utf-8")
                written.append(path)
        return written


def plan(store: Store, target: Target, only: Collection[int] | None = None) -> Plan:
    """The files of every Hub model the board measured (of the systems `only`, when given), and the rows left out
    with why (see the module docstring)."""
    done = Plan()
    payloads = store.queue.first_payloads()
    rows = store.leaderboard_rows(HUB_MODEL_KINDS, MEASURES, include_hidden=True)
    measured: list[Measured] = []
    for row in rows:
        if only is not None and row.system.id not in only:
            continue
        found = _measured(store, target, row, payloads.get(row.system.id) or {})
        if isinstance(found, str):
            done.skipped.append(Skipped(row.system.id, row.system.name, found))
        else:
            measured.append(found)
    kept: dict[tuple[str, str, str, bool], Measured] = {}
    for row in sorted(measured, key=lambda m: (m.scored_at, m.system_id)):  # the row scored last wins its tasks
        key = (row.repo_id, row.snapshot, row.dataset_revision, row.reranking)
        if (earlier := kept.get(key)) is not None:
            why = f"superseded by #{row.system_id}, the same repo scored later on snapshot {row.snapshot}"
            done.skipped.append(Skipped(earlier.system_id, earlier.name, why))
        kept[key] = row
    grouped: dict[tuple[str, str], list[Measured]] = {}
    for row in kept.values():
        grouped.setdefault((row.repo_id, results_path(row.snapshot)), []).append(row)
    for (repo_id, path), rows_of in sorted(grouped.items()):
        ordered = tuple(sorted(rows_of, key=lambda m: (m.reranking, m.system_id)))
        done.files.setdefault(repo_id, []).append(ModelFile(repo_id, path, ordered[0].snapshot, ordered))
    done.skipped.sort(key=lambda s: s.system_id)
    return done


def _measured(store: Store, target: Target, row: LeaderboardRow, payload: Mapping[str, Any]) -> Measured | str:
    """The entries of one row, or why it gets none."""
    system = row.system
    if system.moderation == HIDDEN:
        return "hidden by a moderator: never proposed"
    if system.status != SystemState.SCORED or not row.scores:
        return f"not scored ({system.status})"
    model, commit = str(payload.get("model") or ""), str(payload.get("revision") or "")
    if Path(model).is_absolute():
        return "a local model folder (--model-root): not on the Hub, so it has no page to propose to"
    if not HUB_ID.match(model):
        return f"{model or 'its model'} is not a Hub repo id: no page to propose to"
    if not COMMIT.match(commit):
        return (
            f"no Hub commit of {model} was pinned (the board keyed the weights it measured by their hash, as it does "
            "the packaged model read offline): its numbers cannot be tied to a commit of the repo"
        )
    stored = [r for r in store.results_for(system.id) if r["measure"] in MEASURES]
    revision = str(stored[0]["dataset_revision"]) if stored else ""
    requested = str(payload.get("requested_revision") or "") if payload.get("dataset_revision") == revision else ""
    scored_on = str(payload.get("dataset") or "")
    if scored_on and not Path(scored_on).is_absolute() and scored_on != target.dataset_id:
        return f"scored on the dataset {scored_on}, not {target.dataset_id}"
    dataset_commit = target.commit_of(revision, requested)
    if dataset_commit is None:
        return (
            f"scored on the local revision {requested or revision}, which is no Hub commit: map it with "
            f"--dataset-revision {requested or revision}=COMMIT (the commit `freshstack-hf publish` made of it)"
        )
    snapshot = requested or dataset_commit
    try:
        results_path(snapshot)
    except FreshStackError as exc:  # a snapshot name no file can carry: said, not a crash of the whole plan
        return str(exc)
    values: dict[str, dict[str, float]] = {}
    for r in stored:
        values.setdefault(str(r["topic"]), {})[str(r["measure"])] = float(r["value"])
    topics = [str(t) for t in payload.get("topics") or sorted(values)]
    reranking = system.kind in CANDIDATE_KINDS or system.track in CANDIDATE_TRACKS
    scored_at = max(r["created_at"] for r in stored)
    setting = "reranking each query's candidates" if reranking else "retrieval over the whole corpus"
    entries = entries_for(
        values,
        topics,
        reranking=reranking,
        dataset_id=target.dataset_id,
        dataset_revision=dataset_commit,
        date=scored_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        source_url=detail_link(target.board_url, system.id, requested or None) if target.board_url else None,
        source_name=SOURCE_NAME if target.board_url else None,
        notes=(
            f"FreshStack snapshot {snapshot}, {setting}; verified by the board: computed by its worker from "
            f"{model} at commit {commit[:12]}"
        ),
    )
    evaluator = str(stored[0]["evaluator_version"])
    return Measured(
        system.id, system.name, model, commit, snapshot, dataset_commit, reranking, scored_at, evaluator, tuple(entries)
    )
