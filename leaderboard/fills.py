"""Hole filling for stored systems: judge a stored system's unjudged top-k documents, then show how every stored
system's scores move on the new qrels revision (issue 18).

The store keeps one result set per system, filed by dataset revision, and the board serves one revision; this
module therefore computes and returns, touching neither the store nor the old revision: `fill_stored_system`
reads the asking system's archived run (`RunArchive`, under its content hash), judges its holes with the
answers track's judge endpoint (`FRESHSTACK_JUDGE_BASE_URL`/`_MODEL`, key `FRESHSTACK_JUDGE_API_KEY`; the
offline heuristic judge when none is named) through the library (`freshstack_hf.holes`), and `score_moves`
scores every archived system on both revisions: Judged@10 and the headline measures, old -> new, per system.
Which revision the board then serves stays the operator's choice (`leaderboard --revision`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.holes import FillRecord, fill_holes, judge_setup
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from leaderboard.archive import RunArchive, archived_rankings
from leaderboard.tracks.answers import JUDGE_KEY_ENV
from leaderboard.tracks.answers.judge_endpoint import JudgeEndpoint

JUDGED = "judged@10"
MOVE_MEASURES = (JUDGED, *(m.id for m in HEADLINE))


@dataclass(frozen=True)
class Move:
    """One stored system's scores on one topic under the old and the new qrels revision."""

    system_id: int
    system: str
    topic: str
    old: dict[str, float]
    new: dict[str, float]

    def delta(self, measure: str) -> float:
        return self.new[measure] - self.old[measure]


def archived_runs(store: Any, archive: RunArchive, topic: str) -> dict[int, tuple[str, dict]]:
    """system id -> (name, run on `topic`) of every stored system whose run the archive keeps."""
    return {s.id: (s.name, runs[topic]) for s, runs in archived_rankings(store, archive) if runs.get(topic)}


def score_moves(runs: Mapping[int, tuple[str, dict]], old: Dataset, new: Dataset, topic: str) -> list[Move]:
    """Each archived system scored on both revisions (no resampling: these are the point values the board shows)."""
    moves = []
    for system_id, (name, run) in runs.items():
        values = [
            {m: float(v) for m, v in d.score(run, topics=[topic], measures=MOVE_MEASURES, resamples=0).average.items()}
            for d in (old, new)
        ]
        moves.append(Move(system_id, name, topic, values[0], values[1]))
    return moves


def fill_stored_system(
    store: Any,
    archive: RunArchive,
    dataset: Dataset,
    system_id: int,
    topic: str,
    *,
    judge: JudgeEndpoint | None = None,
    k: int = 10,
    name: str | None = None,
    work: str | Path | None = None,
) -> tuple[FillRecord, list[Move]]:
    """Fill the holes of stored system `system_id`'s archived run on `topic`, then the moves of every stored
    system; `judge` defaults to the endpoint the environment names (offline when none)."""
    runs = archived_runs(store, archive, topic)
    if system_id not in runs:
        raise FreshStackError(f"system #{system_id}: no archived run on topic {topic!r} (runs archive {archive.root})")
    system = store.get_system(system_id)
    record = fill_archived_run(
        dataset, topic, runs[system_id][1], system.name, system.content_hash, judge=judge, k=k, name=name, work=work
    )
    if record.revision is None:
        return record, []
    return record, score_moves(runs, dataset, Dataset(record.revision_folder), topic)


def fill_archived_run(
    dataset: Dataset,
    topic: str,
    run: Mapping[str, Mapping[str, float]],
    system: str,
    content_hash: str,
    *,
    judge: JudgeEndpoint | None = None,
    k: int = 10,
    name: str | None = None,
    work: str | Path | None = None,
) -> FillRecord:
    """One system's holes judged by the board's judge (`judge`, else the environment's, else offline): what both
    `fill_stored_system` and the worker's `fill` job run."""
    judge = judge if judge is not None else JudgeEndpoint.from_env()
    setup = judge_setup(
        dataset.folder,
        topic,
        base_url=judge.base_url if judge else None,
        model=judge.model if judge else None,
        offline=judge is None,
        work=work,
    )
    setup = dataclasses.replace(setup, llm=dataclasses.replace(setup.llm, api_key_env=JUDGE_KEY_ENV))
    return fill_holes(
        dataset.source,
        topic,
        run,
        system=system,
        run_sha256=content_hash,
        setup=setup,
        revision=dataset.requested_revision,
        k=k,
        name=name,
    )


def moves_table(moves: list[Move], revision: str) -> list[dict[str, Any]]:
    """Rows for the board: system, Judged@10 and each headline measure as `old -> new`, on `revision`."""
    rows = []
    for m in sorted(moves, key=lambda m: -m.new[HEADLINE[0].id]):
        row: dict[str, Any] = {"id": m.system_id, "system": m.system, "qrels revision": revision}
        for measure in MOVE_MEASURES:
            row[measure] = f"{m.old[measure]:.3f} -> {m.new[measure]:.3f}"
        rows.append(row)
    return rows
