"""One fill: find a run's holes, judge them with the topic's judge, write a new qrels revision, score before/after.

The base revision is only read. When the run's top k holds no hole the fill writes nothing and sends nothing,
so filling again on the revision a fill wrote is free; filling the same base again is answered by the judge's
response cache (no request), although it writes a further revision.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.holes.find import Holes, find_holes
from freshstack_hf.holes.judge import JudgeSetup, judge_holes
from freshstack_hf.holes.revision import base_name, next_fill_name, target_folder, write_filled_revision
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.records import NuggetJudgment
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import Run, cut

if TYPE_CHECKING:
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.topic import Topic


@dataclass
class FillRecord:
    """What a fill did: holes found, pairs judged and supported, requests sent, scores before and after."""

    topic: str
    system: str
    run_sha256: str
    k: int
    base_revision: str
    base_folder: str
    judge: str | None  # None (null in the JSON) when no judge was asked: a run with no hole asks none
    queries_ranked: int
    holes: int  # unjudged top-k documents judged (in the corpus)
    not_in_corpus: int  # unjudged top-k ids the corpus lacks: no text to judge, they stay holes
    pairs: int = 0  # (nugget, document) judgments added
    supported: int = 0
    calls: int = 0  # judge calls planned (blocks of documents)
    requests: int = 0  # sent to an endpoint (0: offline, or every answer from the cache)
    cache_hits: int = 0
    revision: str | None = None  # the new revision's name; None when nothing was written
    revision_folder: str | None = None
    before: dict[str, float] = field(default_factory=dict)  # judged@k and the headline measures, base revision
    after: dict[str, float] = field(default_factory=dict)  # the same on the new revision (= before if none)
    # What the new revision adds to its base, enough to write it again anywhere (`write_filled_revision`): the
    # judgments and the manifest's provenance entry. Left out of `to_dict`, which reports counts.
    added: list[NuggetJudgment] = field(default_factory=list, repr=False)
    provenance: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k not in ("added", "provenance")}


def run_digest(run: Run) -> str:
    """sha256 of a run's content (sorted JSON), naming the asking system where no run file's hash is at hand."""
    text = json.dumps({q: dict(sorted(d.items())) for q, d in sorted(run.items())}, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def fill_holes(
    repo: str | Path,
    topic: str,
    run: Run,
    *,
    system: str,
    setup: JudgeSetup,
    backend: Any | None = None,
    revision: str | None = None,
    k: int = 10,
    name: str | None = None,
    run_sha256: str | None = None,
    progress: Any = None,
    show_progress: bool = False,
) -> FillRecord:
    """Fill `run`'s top-`k` holes in `topic` of `repo` at `revision` (default: the working repo) into a new
    revision `name` (default `<base>.fillN`). `setup` says who judges; `backend` overrides its backend (tests).
    `progress(text)` receives one line per step; `show_progress` shows the judge's progress bars. Raises
    `FreshStackError` naming the flag at fault before any request is sent or anything is written.

    A run with no hole in its top k asks no judge and writes nothing: the record has `holes` 0, `revision` None
    and `judge` None (null in `to_dict`'s JSON, rather than an empty name)."""
    say = progress or (lambda text: None)
    base, t, run = _open_base(repo, revision, topic, run, k)
    target = target_folder(base.folder, name or next_fill_name(base.folder))
    measures = [f"judged@{k}", *(m.id for m in HEADLINE)]
    before = _scores(base, topic, run, measures)
    holes = find_holes(t, run, k)
    record = _found(topic, system, run_sha256 or run_digest(run), k, base, holes, before)
    say(
        f"{topic} ({record.base_revision}): {holes.docs} unjudged documents in the top {k} of "
        f"{len(holes.by_query)} of {holes.queries_ranked} queries"
        + (f", {record.not_in_corpus} not in the corpus" if record.not_in_corpus else "")
    )
    if not holes.docs:  # the record says so (holes 0, revision None): a caller's report says it once
        return record
    backend = backend or setup.backend(show_progress=show_progress)
    judge = record.judge = getattr(backend, "name", "offline-heuristic")
    say(f"judging with {judge} ({setup.judging.docs_per_call} documents per call)")
    added, cost = judge_holes(t, holes, backend, setup.judging)
    record.pairs, record.supported = len(added), sum(1 for j in added if j.relevance > 0)
    record.calls, record.requests, record.cache_hits = cost["calls"], cost["requests"], cost["cache_hits"]
    provenance = _provenance(record, setup)
    write_filled_revision(base.folder, target, t, added, provenance)
    record.added, record.provenance = list(added), provenance
    record.revision, record.revision_folder = target.name.split("@", 1)[1], str(target)
    record.after = _scores(Dataset(target), topic, run, measures)
    say(f"wrote {target}: {record.pairs} judgments, {record.supported} supported, {record.requests} requests")
    return record


def _found(
    topic: str, system: str, run_sha256: str, k: int, base: Dataset, holes: Holes, before: dict[str, float]
) -> FillRecord:
    """The record of a fill before any judge is asked: what was found, and the scores as they stand."""
    return FillRecord(
        topic=topic,
        system=system,
        run_sha256=run_sha256,
        k=k,
        base_revision=base_name(base.folder),
        base_folder=str(base.folder),
        judge=None,  # named once a judge is asked: a fill with no holes asks none
        queries_ranked=holes.queries_ranked,
        holes=holes.docs,
        not_in_corpus=sum(len(v) for v in holes.not_in_corpus.values()),
        before=before,
        after=dict(before),
    )


def _open_base(repo: str | Path, revision: str | None, topic: str, run: Run, k: int) -> tuple[Dataset, Topic, Run]:
    """(the base revision, its topic, the run cut to what a fill reads), or the error naming the flag at fault."""

    if k < 1:
        raise FreshStackError(f"--k must be a positive cutoff, not {k}")
    base = Dataset(repo, revision)
    if topic not in base.topics:
        raise FreshStackError(f"--topic: no topic {topic!r} in {base.folder}; it has {', '.join(base.topics)}")
    t = base.topic(topic)
    asked = {q for q in t.query_ids if q in run}
    if not asked:
        ours, theirs = next(iter(t.query_ids), "?"), next(iter(run), "none")
        raise FreshStackError(
            f"--run: the run ranks no query of topic {topic!r} (its query ids look like {ours!r}, the run's like "
            f"{theirs!r}); give a run of this topic"
        )
    return base, t, cut(run, max(k, 100), asked)


def _provenance(record: FillRecord, setup: JudgeSetup) -> dict[str, Any]:
    """The new revision's manifest entry: what was filled, for which system, by which judge, at what cost."""
    return {
        "kind": "hole-fill",
        "topic": record.topic,
        "base_revision": record.base_revision,
        "judge": record.judge,
        "judging": asdict(setup.judging),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "system": {"name": record.system, "run_sha256": record.run_sha256},
        "k": record.k,
        "holes": record.holes,
        "pairs": record.pairs,
        "supported": record.supported,
        "requests": record.requests,
    }


def _scores(dataset: Any, topic: str, run: Mapping[str, Any], measures: list[str]) -> dict[str, float]:
    scores = dataset.score(run, topics=[topic], measures=measures, resamples=0)
    return {m: float(v) for m, v in scores.average.items() if m in measures}
