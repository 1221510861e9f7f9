"""Stage `judgments`: does each pooled document support each nugget? (the paper's section 3.5)

A question's pool is judged in calls of at most `docs_per_call` documents, each call carrying ALL of the
question's nuggets (the paper's n+k batching instead of n*k). Every pair gets a row, 0s included, because a
judged non-relevant document is information the evaluator uses. A killed build loses nothing: the online
backend caches each finished call as it arrives, so the next run replays them and calls only what is left.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from freshstack_hf.llm.document_cut import cut_document
from freshstack_hf.pipeline.accounting import backend_record, made_by
from freshstack_hf.pipeline.backends import JudgeTask
from freshstack_hf.pipeline.inputs import JUDGMENTS, POOLS, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table, write_table

NAME = "judgments"
READS = ("topic", "llm", "judging", "pools")
VERSION = 1
OUTPUTS = (JUDGMENTS,)

SCHEMA = pa.schema(
    [("query_id", pa.string()), ("nugget_id", pa.string()), ("doc_id", pa.string()), ("relevance", pa.int64())]
)


def judge_tasks(
    questions: dict[str, str],
    nuggets: dict[str, tuple[str, ...]],
    docs: dict[str, list[str]],
    text_of: dict[str, str],
    per_call: int,
    max_doc_tokens: int,
) -> list[JudgeTask]:
    """One task per (question, block of up to `per_call` of its documents, in order), each with ALL the question's
    nuggets; documents go in as written, cut at `max_doc_tokens` cl100k tokens. The build and
    `judge-agreement` both judge through here, so a re-judged pair sees exactly what the build's judge saw."""
    tasks = []
    for qid, doc_ids in docs.items():
        texts = nuggets.get(qid, ())
        if not texts:
            continue
        for start in range(0, len(doc_ids), per_call):
            block = tuple(doc_ids[start : start + per_call])
            cut = tuple(cut_document(text_of[d], max_doc_tokens) for d in block)
            tasks.append(JudgeTask(qid, questions[qid], texts, block, cut, doc_token_limit=max_doc_tokens))
    return tasks


def make_tasks(ctx: StageContext) -> list[JudgeTask]:
    """The build's tasks: each question's pool, in pool order."""
    nuggets = {qid: tuple(t for _, t, _ in items) for qid, items in read_nuggets(ctx).items()}
    questions = {q.query_id: q.question for q in read_qas(ctx)}
    pools = read_table(POOLS.path(ctx.work), ["query_id", "doc_id"]).to_pylist()
    by_query: dict[str, list[str]] = {}
    for r in pools:
        by_query.setdefault(r["query_id"], []).append(r["doc_id"])
    needed = {d for docs in by_query.values() for d in docs}
    chunks = read_chunks(ctx, ["_id", "text"])
    text_of = {
        d: t
        for d, t in zip(chunks.column("_id").to_pylist(), chunks.column("text").to_pylist(), strict=True)
        if d in needed
    }
    judging = ctx.config.judging
    return judge_tasks(questions, nuggets, by_query, text_of, judging.docs_per_call, judging.max_doc_tokens)


def run(ctx: StageContext) -> dict[str, Any]:
    tasks = make_tasks(ctx)
    backend = ctx.backend()
    before = backend.stats()
    matrices = backend.judge(tasks)
    nugget_ids = {qid: [n for n, _, _ in items] for qid, items in read_nuggets(ctx).items()}
    rows: dict[str, list] = {name: [] for name in SCHEMA.names}
    for task, matrix in zip(tasks, matrices, strict=True):
        ids = nugget_ids[task.query_id]
        for doc, supports in zip(task.doc_ids, matrix, strict=True):
            for nid, yes in zip(ids, supports, strict=True):
                rows["query_id"].append(task.query_id)
                rows["nugget_id"].append(nid)
                rows["doc_id"].append(doc)
                rows["relevance"].append(int(bool(yes)))
    write_table(JUDGMENTS.path(ctx.work), pa.table(rows, schema=SCHEMA))
    positive = sum(rows["relevance"])
    return {
        "calls_planned": len(tasks),
        "docs_per_call": ctx.config.judging.docs_per_call,
        "questions": len({t.query_id for t in tasks}),
        "pairs": len(rows["relevance"]),
        "supported_pairs": positive,
        "support_rate": round(positive / len(rows["relevance"]), 4) if rows["relevance"] else 0.0,
        **backend_record(backend, before),
    }


def summary(record: dict[str, Any]) -> str:
    return f"{record['pairs']} judgments, {record['supported_pairs']} supported{made_by(record)}"


def plan(ctx: StageContext) -> dict[str, Any]:
    pools = POOLS.path(ctx.work)
    if not pools.is_file():
        n = ctx.config.questions.max_questions
        depth = ctx.config.pooling.depth * len(ctx.config.pooling.techniques)
        calls = None if n is None else n * -(-depth // ctx.config.judging.docs_per_call)
        return {"reads": str(pools), "calls_upper_bound": calls, "note": "exact once `pools` has run"}
    tasks = make_tasks(ctx)
    words = sum(len(t.question.split()) + sum(len(d.split()) for d in t.doc_texts) for t in tasks)
    return {
        "reads": str(pools),
        "calls": 0 if ctx.config.llm.offline else len(tasks),
        "requests": len(tasks),
        "est_input_tokens": int(words * 1.4),  # code-heavy text runs ~1.4 tokens a word
        "est_output_tokens": len(tasks) * 600,
    }
