"""The drift report of two snapshots of a dataset repo: per shared topic, answerability, document fates, agreement.

This is the one function the CLI (and anyone scripting a drift study) calls; it reads, computes and returns a
JSON-ready dict and writes nothing, so a bad input can never leave half a report behind.

Answerability: a question stays answerable when at least one of its nuggets is supported by a document of the new
corpus (the "Still Fresh?" criterion: 202 of 203 LangChain questions were, because their supporting documents
migrated). The new build records that per question in its manifest (`topics.T.carryover`, judged against the new
corpus); where a repo has no such record, the new repo's own nugget-level judgments of the old questions it still
holds are the next best evidence, and an old question absent from the new repo counts as not carried. The report
always says which source it used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from freshstack_hf.baselines.registry import Resources
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.drift.fate import document_fates
from freshstack_hf.drift.rank_agreement import agreement
from freshstack_hf.drift.systems import (
    SystemPair,
    baseline_pairs,
    by_measure,
    check_methods,
    check_unique,
    run_pairs,
    score_pairs,
)
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.reader import list_topics
from freshstack_hf.repo.revisions import revision_of
from freshstack_hf.topic import Topic

REPORT_VERSION = 2  # 2: documents name the new repository beside the new commit (`new_repo`)
# Where a topic's answerability came from, as the report names it.
CARRYOVER = "manifest carryover"
JUDGMENTS = "new snapshot's judgments"


def shared_topics(old: str | Path, new: str | Path, wanted: Sequence[str] | None = None) -> list[str]:
    """Topics both snapshots hold (or `wanted`, each checked to be in both); an error naming both folders if none."""
    old_topics, new_topics = list_topics(old), list_topics(new)
    both = [t for t in old_topics if t in new_topics]
    if wanted:
        missing = [t for t in wanted if t not in both]
        if missing:
            raise FreshStackError(
                f"--topic {', '.join(missing)} is not in both snapshots: {old} has {', '.join(old_topics) or 'none'}; "
                f"{new} has {', '.join(new_topics) or 'none'}"
            )
        return list(wanted)
    if not both:
        raise FreshStackError(
            f"the two snapshots share no topic: {old} has {', '.join(old_topics) or 'none'}, {new} has "
            f"{', '.join(new_topics) or 'none'}; give two revisions of the same dataset repo "
            "(e.g. freshstack@2024-10-31 freshstack@2025-10-31)"
        )
    return both


def drift_report(
    old_repo: str | Path,
    new_repo: str | Path,
    *,
    topics: Sequence[str] | None = None,
    runs: Sequence[Sequence[str]] = (),
    extra: Sequence[SystemPair] = (),
    baselines: bool = True,
    methods: Sequence[str] | None = None,
    resources: Resources | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """Compare snapshot `new_repo` with `old_repo`: see the `drift` CLI for what each part means.

    `runs` are `[NAME, RUN]` or `[NAME, OLD_RUN, NEW_RUN]` file specs; `extra` are systems already in memory (e.g.
    the leaderboard's stored rows), scored like the rest. `methods` names the registered retrieval methods scored
    as baselines (default: those whose candidate lists both snapshots store); one a snapshot stores no list of is
    run on it with `resources` (default: the packaged dense model). `baselines=False` leaves every method out.
    """
    resources = resources or Resources()
    if methods is not None:
        methods = check_methods(methods, resources)
    names = shared_topics(old_repo, new_repo, topics)
    old, new = Dataset(old_repo, topics=names), Dataset(new_repo, topics=names)
    old_manifest, new_manifest = read_manifest(old.folder), read_manifest(new.folder)
    files = run_pairs(runs, old, new)
    measures = [m.id for m in HEADLINE]
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "old": _side(old, old_manifest),
        "new": _side(new, new_manifest),
        "settings": {"measures": measures, "resamples": resamples, "seed": seed, "confidence": 0.95},
        "topics": {},
    }
    for name in names:
        old_topic, new_topic = old.topic(name), new.topic(name)
        new_entry = new_manifest["topics"].get(name, {})
        judged = {j.doc_id for j in old_topic.judgments}
        fates = document_fates(judged, old_topic.docs, new_topic.docs)
        pairs = [*(baseline_pairs(old, new, name, methods, resources) if baselines else []), *files, *extra]
        scores = list(check_unique(score_pairs(pairs, old, new, name, measures)).values())
        agree = {}
        for m in measures:
            o, n, opq, npq = by_measure(scores, m)
            agree[m] = agreement(o, n, opq, npq, resamples=resamples, seed=seed).as_json()
        report["topics"][name] = {
            "snapshot": {
                "old": snapshot_info(old_manifest["topics"].get(name, {})),
                "new": snapshot_info(new_entry),
            },
            # how many of the new snapshot's questions are embargoed and until when (`pipeline.embargo`), never which
            "embargo": new_entry.get("embargo"),
            "answerability": answerability(old_topic, new_topic, new_entry),
            "documents": fates.as_json(),
            "systems": {s.name: s.as_json() for s in scores},
            "agreement": agree,
        }
    return report


def _side(dataset: Dataset, manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": str(dataset.folder),
        "revision": revision_of(dataset.folder) or None,
        "data_revision": dataset.revision,
        "topics": list_topics(dataset.folder),
        "builder_version": manifest.get("builder_version"),
    }


def answerability(old: Topic, new: Topic, new_entry: Mapping[str, Any]) -> dict[str, Any]:
    """Per old question its nuggets and supported nuggets on the new snapshot, the answerable share, the source."""
    old_ids = list(old.query_ids)
    carry = new_entry.get("carryover")
    if isinstance(carry, Mapping) and isinstance(carry.get("questions"), Mapping):
        source = CARRYOVER
        recorded = carry["questions"]
        questions = {
            q: {
                "nuggets": int(recorded[q].get("nuggets", 0)),
                "supported": int(recorded[q].get("supported", 0)),
                "carried": True,
            }
            if q in recorded
            else {"nuggets": len(old.query_nuggets.get(q, [])), "supported": 0, "carried": False}
            for q in old_ids
        }
        previous = carry.get("previous")
        migrations = list(carry.get("migrations", []))
    else:
        source, previous, migrations = JUDGMENTS, None, []
        questions = _from_judgments(old, new)
    answerable = [q for q, r in questions.items() if r["supported"] > 0]
    shares = [r["supported"] / r["nuggets"] if r["nuggets"] else 0.0 for r in questions.values()]
    return {
        "source": source,
        "previous": previous,
        "old_questions": len(old_ids),
        "answerable": len(answerable),
        "answerable_share": len(answerable) / len(old_ids) if old_ids else None,
        "mean_supported_nugget_share": sum(shares) / len(shares) if shares else None,
        "unanswerable": [q for q in old_ids if questions[q]["supported"] == 0],
        "migrations": migrations,
        "questions": questions,
    }


def _from_judgments(old: Topic, new: Topic) -> dict[str, dict[str, Any]]:
    """Support of each old question from the new repo's nugget-level judgments (0 when it is not in the new repo)."""
    in_new = set(new.query_ids)
    nugget_qrels = new.nugget_qrels
    out: dict[str, dict[str, Any]] = {}
    for q in old.query_ids:
        if q not in in_new:
            out[q] = {"nuggets": len(old.query_nuggets.get(q, [])), "supported": 0, "carried": False}
            continue
        nuggets = new.query_nuggets.get(q, [])
        supported = sum(1 for n in nuggets if any(v > 0 for v in nugget_qrels.get(n, {}).values()))
        out[q] = {"nuggets": len(nuggets), "supported": supported, "carried": True}
    return out


def snapshot_info(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """A topic's `snapshot` record (date, commits per repository, ...) from its manifest entry, when the build wrote
    one."""
    snap = entry.get("snapshot")
    return dict(snap) if isinstance(snap, Mapping) else None
