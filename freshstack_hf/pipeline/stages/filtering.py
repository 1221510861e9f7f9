"""Stage `filter`: keep only questions whose every nugget is supported by some judged document (section 4).

Two steps, counted apart as the paper reports them: first drop questions with no supported nugget at all (no
relevant document), then questions with any unsupported nugget. The second is the aggressive one: a question
whose answer needs a fact no document holds cannot be scored fairly on Coverage.

A dated snapshot also records its *carry-over* here, where support is known: what became of the previous
snapshot's questions on this snapshot's corpus. A snapshot takes every question asked up to its date, so the
previous snapshot's questions are pooled and judged again, on the new corpus. Per carried question the record
counts how many of its nuggets some document still supports; a question left with none is *unanswerable* on the
new corpus and is named, not silently dropped (the filter keeps only fully supported questions, as the paper does,
so the record is the one place it shows). A supporting document of the previous snapshot whose exact text now
lives under another path or repository is a *migration* (the "Still Fresh?" study found LangChain's documentation
moving between repositories): found by content, not by name, with the drift report's rule (`drift.fate`).
Carried questions are the previous public revision's, so the carry-over is public as it is; under an embargo the
filter's counts are a public revision's of its public questions alone (`public_record`, by `tally`'s rule).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.drift.fate import document_fates, file_of
from freshstack_hf.pipeline.accounting import StagePlan
from freshstack_hf.pipeline.inputs import CARRYOVER, JUDGMENTS, KEPT, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table, write_json
from freshstack_hf.records import Doc
from freshstack_hf.repo.reader import load_topic
from freshstack_hf.repo.revisions import revision_of

if TYPE_CHECKING:
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts

NAME = "filter"
READS = ("judgments", "snapshot")
VERSION = 2  # 2: a snapshot build records its carry-over (the previous snapshot's questions, re-judged)
OUTPUTS = (KEPT, CARRYOVER)
CARRIED = ("previous", "carried", "answerable", "unanswerable", "missing", "migrations")  # the carry-over's account


def run(ctx: StageContext) -> dict[str, Any]:
    questions = [q.query_id for q in read_qas(ctx)]
    nuggets = read_nuggets(ctx)
    table = read_table(JUDGMENTS.path(ctx.work))
    supported: set[str] = set()
    for nid, rel in zip(table.column("nugget_id").to_pylist(), table.column("relevance").to_pylist(), strict=True):
        if rel > 0:
            supported.add(nid)
    with_nuggets = [q for q in questions if nuggets.get(q)]
    some_support = [q for q in with_nuggets if any(n in supported for n, _, _ in nuggets[q])]
    all_support = [q for q in some_support if all(n in supported for n, _, _ in nuggets[q])]
    dropped = {
        "no_nuggets": sorted(set(questions) - set(with_nuggets)),
        "no_supported_nugget": sorted(set(with_nuggets) - set(some_support)),
        "unsupported_nugget": sorted(set(some_support) - set(all_support)),
    }
    write_json(KEPT.path(ctx.work), {"kept": all_support, "dropped": dropped})
    carried = carryover(ctx)
    write_json(CARRYOVER.path(ctx.work), carried)
    extra = {}
    if carried["previous"]:
        extra = {k: carried[k] for k in CARRIED if k != "migrations"}
        extra["migrations"] = len(carried["migrations"])
    return {**extra, **tally(questions, with_nuggets, some_support, all_support)}


def tally(
    questions: Collection[str], with_nuggets: Collection[str], some_support: Collection[str], kept: Collection[str]
) -> dict[str, Any]:
    """The record's counts of each step: the one rule for a build's record and for what a public revision says of
    its public questions alone."""
    n, nuggets, some = len(questions), len(with_nuggets), len(some_support)
    return {
        "questions": n,
        "with_nuggets": nuggets,
        "after_no_support_filter": some,
        "after_unsupported_nugget_filter": len(kept),
        "kept": len(kept),
        "dropped_no_support_pct": round(100 * (nuggets - some) / n, 1) if n else 0.0,
        "dropped_unsupported_nugget_pct": round(100 * (some - len(kept)) / n, 1) if n else 0.0,
    }


def public_record(ctx: StageContext, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """The filter's steps for the questions `public` alone, from the lists of what each step dropped; the
    carry-over (the previous public revision's questions) as recorded."""
    dropped = json.loads(KEPT.path(ctx.work).read_text(encoding="utf-8"))["dropped"]
    with_nuggets = set(public) - set(dropped["no_nuggets"])
    some_support = with_nuggets - set(dropped["no_supported_nugget"])
    kept = some_support - set(dropped["unsupported_nugget"])
    return {**{k: record[k] for k in CARRIED if k in record}, **tally(public, with_nuggets, some_support, kept)}


def summary(record: dict[str, Any]) -> str:
    line = (
        f"{record['questions']} -> {record['after_no_support_filter']} (no support) -> "
        f"{record['after_unsupported_nugget_filter']} (an unsupported nugget) questions"
    )
    if record.get("previous"):
        line += (
            f"; of {record['carried']} carried from {record['previous']}, {record['answerable']} still answerable"
            f" ({len(record['unanswerable'])} unanswerable; supporting documents moved: {record['migrations']})"
        )
    return line


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    return StagePlan(NAME, {"reads": str(JUDGMENTS.path(ctx.work)), "calls": 0})


# ---- carry-over (snapshots) --------------------------------------------------------------------------------------


def carryover(ctx: StageContext) -> dict[str, Any]:
    """The record (empty `previous` when this build has no earlier snapshot to carry from)."""
    previous = ctx.config.snapshot.previous
    if not previous:
        return {"previous": ""}
    old = load_topic(Path(previous), ctx.config.topic)
    current = {q.query_id for q in read_qas(ctx)}
    old_ids = [q.query_id for q in old.queries]
    carried = [q for q in old_ids if q in current]
    nuggets = read_nuggets(ctx)
    table = read_table(JUDGMENTS.path(ctx.work), ["nugget_id", "relevance"])
    ids, relevance = (table.column(c).to_pylist() for c in ("nugget_id", "relevance"))
    supported = {n for n, r in zip(ids, relevance, strict=True) if r > 0}
    per_question = {}
    for qid in carried:
        ids = [n for n, _, _ in nuggets.get(qid, [])]
        per_question[qid] = {"nuggets": len(ids), "supported": sum(n in supported for n in ids)}
    answerable = [q for q, v in per_question.items() if v["supported"] > 0]
    return {
        "previous": revision_of(previous) or Path(previous).name,
        "questions": per_question,
        "carried": len(carried),
        "answerable": len(answerable),
        "answerable_share": round(len(answerable) / len(carried), 4) if carried else 0.0,
        "unanswerable": [q for q, v in per_question.items() if v["supported"] == 0],
        "partly_supported": [q for q, v in per_question.items() if 0 < v["supported"] < v["nuggets"]],
        "missing": [q for q in old_ids if q not in current],  # left the dump or the window: named, not dropped
        "migrations": migrations(ctx, old, set(carried)),
    }


def migrations(ctx: StageContext, old: Any, carried: set[str]) -> list[dict[str, str]]:
    """Supporting documents of the carried questions whose text left their file and lives elsewhere now: the
    `moved` fate of `drift.fate` (the rule `freshstack-hf drift` reports), so the build and drift agree."""
    pairs = list(
        dict.fromkeys((j.query_id, j.doc_id) for j in old.judgments if j.relevance > 0 and j.query_id in carried)
    )
    chunks = read_chunks(ctx, ["_id", "text", "repo", "path", "commit"]).to_pylist()
    new = {c["_id"]: Doc(c["_id"], c["text"], repo=c["repo"], path=c["path"], commit=c["commit"]) for c in chunks}
    fates = {f.doc_id: f for f in document_fates({d for _, d in pairs}, old.docs, new.values()).docs}
    found = []
    for qid, doc_id in pairs:
        fate = fates[doc_id]
        if fate.fate == "moved":
            repo, path = file_of(new[fate.new_id])
            found.append(
                {
                    "query_id": qid,
                    "old_id": doc_id,
                    "new_id": fate.new_id,
                    "old_path": f"{fate.repo}/{fate.path}",
                    "new_path": f"{repo}/{path}",
                }
            )
    return found
