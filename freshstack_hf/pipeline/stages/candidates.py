"""Stage `candidates`: the Nano-style candidate lists of the topic the build keeps, ready for the repo.

BM25 top-500, dense top-500 (the default dense model, the packaged MiniLM) and their RRF hybrid top-100
(`top_ranked`, with the safeguard), made by the project's one definition of the baselines (`freshstack_hf.candidates`)
on the topic exactly as `write` publishes it (`inputs.read_topic`), and measured there (alpha-nDCG@10, Coverage@20,
Recall@50, ...). Each list is a file in the repo's candidate schema; the record holds what the manifest keeps of
them. Dense embeddings are cached on disk, and as a stage of its own the lists
are resumed like every other output: a build killed after them, or re-run with nothing changed, does not make
them again, and `write` only reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from freshstack_hf.pipeline.accounting import StagePlan
from freshstack_hf.pipeline.inputs import CANDIDATE_LISTS, KEPT, read_topic
from freshstack_hf.pipeline.stage import StageContext, write_table

if TYPE_CHECKING:
    from freshstack_hf.pipeline.plan_facts import PlanFacts

NAME = "candidates"
READS = ("topic", "questions", "corpus", "nuggets", "pools", "judgments", "filter", "embargo_days")
VERSION = 1
OUTPUTS = tuple(CANDIDATE_LISTS.values())


def run(ctx: StageContext) -> dict[str, Any]:
    from freshstack_hf.candidates import topic_candidates
    from freshstack_hf.defaults import dense_retriever
    from freshstack_hf.repo.tables import candidates_table

    topic = read_topic(ctx)
    retriever = dense_retriever(show_progress=ctx.show_progress)
    lists, record = topic_candidates(topic, retriever=retriever, show_progress=ctx.show_progress)
    for stem, file in CANDIDATE_LISTS.items():
        write_table(file.path(ctx.work), candidates_table(lists[stem]))
    return {"queries": len(topic.queries), "docs": len(topic.docs), "candidates": record}


def summary(record: dict[str, Any]) -> str:
    quality = record["candidates"]["quality"]
    scores = ", ".join(f"{name} {quality[name]['alpha_ndcg@10']:.3f}" for name in ("bm25", "dense", "hybrid_rrf"))
    guarded = record["candidates"]["safeguard"]["queries"]
    return f"{record['queries']} queries: alpha-nDCG@10 {scores}" + (f"; {guarded} safeguarded" if guarded else "")


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    details = {
        "reads": str(KEPT.path(ctx.work)),
        "writes": [str(file.path(ctx.work)) for file in CANDIDATE_LISTS.values()],
        "calls": 0,
        "lists": "BM25 top-500, dense top-500, RRF hybrid top-100",
    }
    return StagePlan(NAME, details)
