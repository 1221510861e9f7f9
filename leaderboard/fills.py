"""Hole filling for stored systems: judge a stored system's unjudged top-k documents, then show how every stored
system's scores move on the new qrels revision (issue 18).

The store keeps one result set per system, filed by dataset revision, and the board serves one revision; this
module therefore computes and returns, touching neither the store nor the old revision: `fill_stored_system`
reads the asking system's archived run (kept in the store, `BlobStore.ranking_of`), judges its holes with the
answers track's judge endpoint (`FRESHSTACK_JUDGE_BASE_URL`/`_MODEL`, key `FRESHSTACK_JUDGE_API_KEY`; the
offline heuristic judge when none is named) through the library (`freshstack_hf.holes`), and `score_moves`
scores every archived system on both revisions: Judged@10 and the headline measures, old -> new, per system.
Which revision the board then serves stays the operator's choice (`leaderboard --revision`).

A fill made by a worker is kept in the store too, as a blob of the asking system (role `fill:<revision>`: the
judgments it added and its provenance), so a worker on another machine needs no folder shared with the board: the
board writes the revision beside its own dataset from that blob when it first shows it (`materialize_fills`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.holes import FillRecord, fill_holes, judge_setup, write_filled_revision
from freshstack_hf.holes.revision import FILL_SUFFIX, base_name
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.records import NuggetJudgment
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.revisions import list_revisions, revision_folder
from leaderboard.store.blobs import Blob
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.judge_endpoint import JUDGE_KEY_ENV, JudgeEndpoint

JUDGED = "judged@10"
FILL_ROLE = "fill:"  # + the revision name: a worker's fill, kept with the system it filled for
FILL_MEDIA = "fill"  # what a fill's blob holds: its judgments
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


def archived_runs(store: Any, topic: str) -> dict[int, tuple[str, dict]]:
    """system id -> (name, run on `topic`) of every listed system whose ranking the store keeps."""
    return {s.id: (s.name, runs[topic]) for s, runs in store.blobs.rankings() if runs.get(topic)}


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
    runs = archived_runs(store, topic)
    if system_id not in runs:
        raise FreshStackError(f"system #{system_id}: the store keeps no ranking of it on topic {topic!r}")
    system = store.get_system(system_id)
    name = name or board_fill_name(store, dataset)
    record = fill_archived_run(
        dataset, topic, runs[system_id][1], system.name, system.content_hash, judge=judge, k=k, name=name, work=work
    )
    if record.revision is None:
        return record, []
    store.blobs.attach(system_id, fill_blob(record))  # a board on another machine writes the revision from it
    return record, score_moves(runs, dataset, Dataset(record.revision_folder), topic)


def fill_payload(dataset: Any, topic: str, system: Any, k: int = 10, name: str | None = None) -> dict[str, Any]:
    """What a worker's `fill` job (`tracks.retrieval.jobs.fill_job`) needs: the dataset and revision the board serves,
    the topic, the system, the new revision's name (chosen by the board, which sees every fill: `board_fill_name`);
    the ranking comes from the store."""
    return {
        **payload_dataset(dataset),
        "topic": topic,
        "system": system.name,
        "content_hash": system.content_hash,
        "k": k,
        "name": name,
    }


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


def fill_blob(record: FillRecord) -> dict[str, Blob]:
    """{role: blob} of a written fill: what `materialize_fills` needs to write the same revision elsewhere."""
    if record.revision is None:
        return {}
    body = {
        "topic": record.topic,
        "revision": record.revision,
        "base_revision": record.base_revision,
        "added": [[j.query_id, j.nugget_id, j.doc_id, j.relevance] for j in record.added],
        "provenance": record.provenance,
    }
    raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return {FILL_ROLE + record.revision: Blob.of(raw, FILL_MEDIA)}


def stored_fills(store: Any) -> list[dict[str, Any]]:
    """Every fill kept in the store (the decoded blob, with `system_id`), oldest revision name first."""
    found = []
    for system_id, _role, sha in store.blobs.refs_like(FILL_ROLE):
        body = json.loads(store.blobs.get(sha))
        found.append({**body, "system_id": system_id, "sha256": sha})
    return sorted(found, key=lambda f: f["revision"])


def board_fill_name(store: Any, dataset: Dataset) -> str:
    """The next fill name of the served revision (`<base>.fillN`, as `holes.next_fill_name`), counting the fills
    written beside this dataset and those the store keeps (a worker elsewhere writes none here), so two fills never
    share a name."""
    stem = FILL_SUFFIX.sub("", base_name(dataset.folder))
    names = [*list_revisions(dataset.folder), *(f["revision"] for f in stored_fills(store))]
    taken = [int(m.group(1)) for r in names if r.startswith(stem) and (m := FILL_SUFFIX.search(r))]
    return f"{stem}.fill{max(taken, default=0) + 1}"


def materialize_fills(store: Any, dataset: Dataset) -> list[str]:
    """Write beside the served dataset every stored fill of its revision that is not there yet (a worker on
    another machine made it); returns the revisions written. A revision already there is left as it is."""
    written = []
    served = base_name(dataset.folder)
    for fill in stored_fills(store):
        target = revision_folder(dataset.folder, fill["revision"])
        if fill["base_revision"] != served or target.exists():
            continue
        topic = dataset.topic(fill["topic"])
        added = [NuggetJudgment(q, n, d, int(r)) for q, n, d, r in fill["added"]]
        write_filled_revision(dataset.folder, target, topic, added, fill["provenance"])
        written.append(fill["revision"])
    return written


def moves_table(moves: list[Move], revision: str) -> list[dict[str, Any]]:
    """Rows for the board: system, Judged@10 and each headline measure as `old -> new`, on `revision`."""
    rows = []
    for m in sorted(moves, key=lambda m: -m.new[HEADLINE[0].id]):
        row: dict[str, Any] = {"id": m.system_id, "system": m.system, "qrels revision": revision}
        for measure in MOVE_MEASURES:
            row[measure] = f"{m.old[measure]:.3f} -> {m.new[measure]:.3f}"
        rows.append(row)
    return rows
