"""Stage `write`: the kept questions, their nuggets and judgments, and the whole corpus, as a dataset repo.

The topic is validated in memory and its candidate lists (BM25, dense, RRF hybrid) are computed before anything
touches the repo; then topic, candidates and the build's account land in one atomic commit of the existing
writer. An interrupted or failed build therefore leaves the previous repo exactly as it was.
"""

from __future__ import annotations

import json
from typing import Any

from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.pipeline.inputs import JUDGMENTS, KEPT, QUESTIONS, read_chunks, read_nuggets
from freshstack_hf.pipeline.stage import StageContext, read_table
from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic, canonical_order

NAME = "write"
READS = ("topic", "questions", "corpus", "nuggets", "pools", "judgments", "filter", "snapshot")
VERSION = 2  # 2: a snapshot records its commits, window, reuse and carry-over in the manifest
OUTPUTS = ()  # the dataset repo at `ctx.out`, committed atomically by the writer, not a work-folder file


def assemble(ctx: StageContext) -> Topic:
    kept_file = KEPT.path(ctx.work)
    kept = json.loads(kept_file.read_text(encoding="utf-8"))["kept"]
    if not kept:
        raise FreshStackError(
            f"{kept_file}: no question survived filtering (see its `dropped` lists); widen questions.tags or the "
            "date window, add repositories to the corpus, or judge deeper pools (pooling.depth)"
        )
    keep = set(kept)
    queries = [
        Query(r["query_id"], r["title"], r["body"], r["answer_id"], r["answer_text"], r["date"], tuple(r["tags"]))
        for r in read_table(QUESTIONS.path(ctx.work)).to_pylist()
        if r["query_id"] in keep
    ]
    nuggets = [
        Nugget(nid, qid, text, importance)
        for qid, items in read_nuggets(ctx).items()
        if qid in keep
        for nid, text, importance in items
    ]
    table = read_table(JUDGMENTS.path(ctx.work))
    judgments = [
        NuggetJudgment(q, n, d, r)
        for q, n, d, r in zip(
            *(table.column(c).to_pylist() for c in ("query_id", "nugget_id", "doc_id", "relevance")), strict=True
        )
        if q in keep
    ]
    chunks = read_chunks(ctx).to_pylist()
    docs = [
        Doc(c["_id"], c["text"], c["url"], c["repo"], c["path"], c["start_byte"], c["end_byte"], c["commit"])
        for c in chunks
    ]
    # In the order a reader rebuilds from the repo, so the candidate lists are measured on what is published.
    return canonical_order(Topic(ctx.config.topic, queries=queries, nuggets=nuggets, docs=docs, judgments=judgments))


def build_account(ctx: StageContext) -> dict[str, Any]:
    """What the manifest keeps of the build: each earlier stage's record and the definition it ran from."""
    return {"definition": ctx.config.to_dict(), "stages": dict(ctx.records)}


def run(ctx: StageContext) -> dict[str, Any]:
    from freshstack_hf.candidates import topic_candidates
    from freshstack_hf.defaults import dense_retriever
    from freshstack_hf.repo.tables import candidates_table
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.topic_check import validate_topic

    topic = assemble(ctx)
    problems = validate_topic(topic)
    if problems:
        raise ValidationError(problems, f"topic {topic.name!r} built in {ctx.work} is not valid; nothing was written")
    retriever = dense_retriever(show_progress=ctx.show_progress)
    lists, candidates = topic_candidates(topic, retriever=retriever, show_progress=ctx.show_progress)
    account = build_account(ctx)
    judged_by = account["stages"].get("judgments", {})
    source = {
        "kind": "build",
        "definition": ctx.config.path,
        "judged_by": judged_by.get("backend", "unknown"),
        "heuristic_judgments": judged_by.get("kind") == "offline",
    }
    entry: dict[str, Any] = {"candidates": candidates, "build": account}
    if ctx.config.snapshot.date:
        from freshstack_hf.pipeline.accounting import snapshot_account
        from freshstack_hf.pipeline.inputs import CARRYOVER

        entry.update(snapshot_account(account["stages"], ctx.config))
        carried = json.loads(CARRYOVER.path(ctx.work).read_text(encoding="utf-8"))
        if carried.get("previous"):
            entry["carryover"] = carried
    write_topics(
        ctx.out,
        [topic],
        source=source,
        extra_tables={topic.name: {stem: candidates_table(table) for stem, table in lists.items()}},
        extra_manifest={topic.name: entry},
    )
    return {
        "repo": str(ctx.out),
        "topic": topic.name,
        "queries": len(topic.queries),
        "nuggets": len(topic.nuggets),
        "docs": len(topic.docs),
        "judgments": len(topic.judgments),
        "candidate_quality": candidates["quality"],
    }


def summary(record: dict[str, Any]) -> str:
    return f"{record['repo']}: {record['queries']} queries, {record['docs']} docs, {record['judgments']} judgments"


def plan(ctx: StageContext) -> dict[str, Any]:
    return {"writes": str(ctx.out), "calls": 0, "then": "validate, candidates (BM25, dense, RRF hybrid)"}
