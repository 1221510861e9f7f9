"""Stage `candidates`: the Nano-style candidate lists of the topic the build keeps, ready for the repo.

BM25 top-500, dense top-500 (the default dense model, the packaged MiniLM) and their RRF hybrid top-100
(`top_ranked`, with the safeguard), made by the project's one definition of the baselines
(`freshstack_hf.baselines.candidates`) on the topic exactly as `write` publishes it (`inputs.read_topic`), and
measured there (alpha-nDCG@10, Coverage@20, Recall@50, ...). Each list is a file in the repo's candidate schema;
the record holds what the manifest keeps of them. Dense embeddings are cached on disk, and as a stage of its own
the lists are resumed like every other output: a build killed after them, or re-run with nothing changed, does not make
them again, and `write` only reads them.

Under an embargo the embargoed questions get the same lists, by the same methods and settings over the same
corpus (the public lists' BM25 index and document vectors are searched again, not made again: `CorpusMemo`), so a
reranker or a Nano-track model scored live has its candidates in the private revision. They are made after the
public ones, which are therefore exactly what a build of the public questions alone makes, and kept apart
(`inputs.EMBARGOED_CANDIDATE_LISTS`), their record in a file beside them rather than in this stage's record,
which the build prints and keeps with the public one: nothing of an embargoed question enters either.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from freshstack_hf.baselines.candidates import topic_candidates
from freshstack_hf.baselines.registry import Resources
from freshstack_hf.baselines.retrievers import CorpusMemo
from freshstack_hf.defaults import dense_retriever
from freshstack_hf.pipeline.accounting import StagePlan
from freshstack_hf.pipeline.embargo import embargo_of
from freshstack_hf.pipeline.inputs import (
    CANDIDATE_LISTS,
    EMBARGOED_CANDIDATE_LISTS,
    EMBARGOED_CANDIDATES,
    EMBARGOED_CANDIDATES_RECORD,
    KEPT,
    read_topic,
)
from freshstack_hf.pipeline.stage import StageContext, write_json, write_table
from freshstack_hf.repo.tables import candidates_table

if TYPE_CHECKING:
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts

NAME = "candidates"
READS = ("topic", "questions", "corpus", "nuggets", "pools", "judgments", "filter", "embargo_days")
VERSION = 2  # 2: under an embargo, the embargoed questions' lists too
OUTPUTS = tuple(CANDIDATE_LISTS.values())
# What it writes under an embargo only (the embargoed questions' lists and record): not in `OUTPUTS`, which every
# build must have before it resumes past this stage; `write` checks these where an embargo asks for them.
EMBARGO_OUTPUTS = (EMBARGOED_CANDIDATES, EMBARGOED_CANDIDATES_RECORD)


def run(ctx: StageContext) -> dict[str, Any]:
    topic = read_topic(ctx)
    retriever = dense_retriever(show_progress=ctx.show_progress)
    resources = Resources(show_progress=ctx.show_progress, retriever=retriever, corpus=CorpusMemo())
    lists, record = topic_candidates(topic, resources=resources)
    for stem, file in CANDIDATE_LISTS.items():
        write_table(file.path(ctx.work), candidates_table(lists[stem]))
    made = {"queries": len(topic.queries), "docs": len(topic.docs), "candidates": record}
    embargoed = _embargoed_lists(ctx, resources)
    return {**made, "embargoed_queries": embargoed} if embargoed else made


def _embargoed_lists(ctx: StageContext, resources: Any) -> int:
    """The embargoed questions' lists and record, written apart for `write` to put in the private revision;
    returns how many questions they cover (0, and nothing kept, without an embargo or with nothing embargoed). A
    previous run's are removed first, so lists of questions no longer embargoed never outlive the run."""
    shutil.rmtree(EMBARGOED_CANDIDATES.path(ctx.work), ignore_errors=True)
    if embargo_of(ctx.config) is None:
        return 0
    held = read_topic(ctx, embargoed=True)
    if not held.queries:
        return 0
    lists, record = topic_candidates(held, resources=resources)
    for stem, file in EMBARGOED_CANDIDATE_LISTS.items():
        write_table(file.path(ctx.work), candidates_table(lists[stem]))
    write_json(EMBARGOED_CANDIDATES_RECORD.path(ctx.work), record)
    return len(held.queries)


def summary(record: dict[str, Any]) -> str:
    quality = record["candidates"]["quality"]
    scores = ", ".join(f"{name} {quality[name]['alpha_ndcg@10']:.3f}" for name in ("bm25", "dense", "hybrid_rrf"))
    guarded = record["candidates"]["safeguard"]["queries"]
    line = f"{record['queries']} queries: alpha-nDCG@10 {scores}" + (f"; {guarded} safeguarded" if guarded else "")
    embargoed = record.get("embargoed_queries", 0)
    return line + (f"; the {embargoed} embargoed questions' lists kept for the private revision" if embargoed else "")


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    details = {
        "reads": str(KEPT.path(ctx.work)),
        "writes": [str(file.path(ctx.work)) for file in CANDIDATE_LISTS.values()],
        "calls": 0,
        "lists": "BM25 top-500, dense top-500, RRF hybrid top-100",
    }
    if embargo_of(ctx.config) is not None:
        details["embargoed"] = f"the same lists for the embargoed questions, in {EMBARGOED_CANDIDATES.path(ctx.work)}"
    return StagePlan(NAME, details)
