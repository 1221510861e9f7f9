"""Every file a build stage leaves in the work folder, named once, with the readers later stages share.

A stage declares what it writes (`OUTPUTS`, from the names below) and later stages read through the same names,
so a file's place is written in exactly one line: moving one is one edit here, and the runner can check after
each stage that everything it declared is on disk before the stage is recorded as done. The topic the build
keeps (`read_topic`) is read here too, once for the candidate lists and once for the repo, so both see the
same records in the same order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.backends import QA
from freshstack_hf.pipeline.embargo import embargo_of
from freshstack_hf.pipeline.stage import StageContext, read_table
from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic, canonical_order


@dataclass(frozen=True)
class StageFile:
    """`name` in the folder of `stage`, under a build's work folder."""

    stage: str
    name: str

    def path(self, work: Path) -> Path:
        """The file under `work`, a build's work folder (`ctx.work`)."""
        return work / self.stage / self.name


QUESTIONS = StageFile("questions", "questions.parquet")
COOCCURRENCE = StageFile("questions", "cooccurrence.json")  # the tag report the paper chose repositories with
CHUNKS = StageFile("corpus", "chunks.parquet")
REPO_CACHE = StageFile("corpus", "cache")  # clones and checked-out trees, shared with `pin-commits`
NUGGETS = StageFile("nuggets", "nuggets.parquet")
POOL_QUERIES = StageFile("pools", "pool_queries.parquet")
POOLS = StageFile("pools", "pools.parquet")
JUDGMENTS = StageFile("judgments", "judgments.parquet")
KEPT = StageFile("filter", "kept.json")
CARRYOVER = StageFile("filter", "carryover.json")  # snapshot builds: the previous snapshot's questions, re-judged
BM25_LIST = StageFile("candidates", "bm25.parquet")  # the candidate lists, in the repo's `T-<stem>` schema
DENSE_LIST = StageFile("candidates", "dense.parquet")
TOP_RANKED_LIST = StageFile("candidates", "top_ranked.parquet")
CANDIDATE_LISTS = {"bm25": BM25_LIST, "dense": DENSE_LIST, "top_ranked": TOP_RANKED_LIST}  # by the repo's file stem
# Under an embargo, the same lists of the embargoed questions, and their record, apart: the private revision's.
EMBARGOED_CANDIDATES = StageFile("candidates", "private")
EMBARGOED_CANDIDATE_LISTS = {stem: StageFile("candidates", f"private/{f.name}") for stem, f in CANDIDATE_LISTS.items()}
EMBARGOED_CANDIDATES_RECORD = StageFile("candidates", "private/record.json")
# Shared by a topic's snapshots (under `ctx.shared`): what a later snapshot reuses instead of redoing.
CHUNK_MEMO = StageFile("memo", "chunks.sqlite")
JUDGMENT_MEMO = StageFile("memo", "judgments.sqlite")
SHARED_FILES = (REPO_CACHE, CHUNK_MEMO, JUDGMENT_MEMO)  # caches, not any stage's output


def read_qas(ctx: StageContext) -> list[QA]:
    rows = read_table(QUESTIONS.path(ctx.work), ["query_id", "title", "body", "answer_text"]).to_pylist()
    return [QA(r["query_id"], r["title"] or "", r["body"] or "", r["answer_text"] or "") for r in rows]


def read_nuggets(ctx: StageContext) -> dict[str, list[tuple[str, str, str]]]:
    """query id -> [(nugget id, text, importance)] in nugget order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for r in read_table(NUGGETS.path(ctx.work)).to_pylist():
        out.setdefault(r["query_id"], []).append((r["nugget_id"], r["text"], r.get("importance") or ""))
    return out


def read_chunks(ctx: StageContext, columns: list[str] | None = None) -> Any:
    return read_table(CHUNKS.path(ctx.work), columns)


def read_topic(ctx: StageContext, *, embargoed: bool = False) -> Topic:
    """The topic the build keeps: the questions the filter kept, their nuggets and judgments, and the whole corpus
    (distractors included), in the canonical order a reader rebuilds from the repo (`topic.canonical_order`).

    Under an embargo (`pipeline.embargo`) that is the public part: the kept questions asked before the embargo's
    start; `embargoed=True` reads the others, the topic the private repo holds. Every stage after `filter` reads
    the topic here, so the public candidate lists and their manifest record never see an embargoed question."""
    kept_file = KEPT.path(ctx.work)
    kept = json.loads(kept_file.read_text(encoding="utf-8"))["kept"]
    if not kept:
        raise FreshStackError(
            f"{kept_file}: no question survived filtering (see its `dropped` lists); widen questions.tags or the "
            "date window, add repositories to the corpus, or judge deeper pools (pooling.depth)"
        )
    keep = set(kept)
    embargo = embargo_of(ctx.config)
    queries = [
        Query(r["query_id"], r["title"], r["body"], r["answer_id"], r["answer_text"], r["date"], tuple(r["tags"]))
        for r in read_table(QUESTIONS.path(ctx.work)).to_pylist()
        if r["query_id"] in keep and (embargo is not None and embargo.holds(r["date"])) == embargoed
    ]
    keep = {q.query_id for q in queries}
    if not queries and not embargoed:
        raise FreshStackError(
            f"{kept_file}: every question kept at {ctx.config.snapshot.date} is embargoed (asked after "
            f"{embargo.start if embargo else '?'}), so the public revision would hold none; shorten embargo_days "
            f"({ctx.config.embargo_days}) or widen the question window"
        )
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
    docs = [
        Doc(c["_id"], c["text"], c["url"], c["repo"], c["path"], c["start_byte"], c["end_byte"], c["commit"])
        for c in read_chunks(ctx).to_pylist()
    ]
    return canonical_order(Topic(ctx.config.topic, queries=queries, nuggets=nuggets, docs=docs, judgments=judgments))


def read_candidate_lists(ctx: StageContext, *, embargoed: bool = False) -> dict[str, dict[str, list[str]]]:
    """The `candidates` stage's lists: repo file stem -> query id -> ranked corpus ids; `embargoed=True` reads
    those of the embargoed questions (`read_topic(ctx, embargoed=True)`), which only the private revision gets."""
    lists = {}
    for stem, file in (EMBARGOED_CANDIDATE_LISTS if embargoed else CANDIDATE_LISTS).items():
        table = read_table(file.path(ctx.work))
        lists[stem] = dict(
            zip(table.column("query-id").to_pylist(), table.column("corpus-ids").to_pylist(), strict=True)
        )
    return lists
