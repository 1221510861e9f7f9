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
from freshstack_hf.pipeline.inputs import JUDGMENT_MEMO, JUDGMENTS, POOLS, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.memo import Memo, content_key
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


def _inputs(ctx: StageContext) -> tuple[dict[str, str], dict[str, list], dict[str, list[str]], dict]:
    """questions, nuggets ([(id, text, importance)] per question), each question's pool (in pool order) and the
    pooled documents' texts."""
    nuggets = read_nuggets(ctx)
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
    return questions, nuggets, by_query, text_of


def make_tasks(ctx: StageContext) -> list[JudgeTask]:
    """The build's tasks: each question's pool, in pool order."""
    questions, items, by_query, text_of = _inputs(ctx)
    judging = ctx.config.judging
    return judge_tasks(questions, _texts(items), by_query, text_of, judging.docs_per_call, judging.max_doc_tokens)


def _texts(items: dict[str, list]) -> dict[str, tuple[str, ...]]:
    return {qid: tuple(t for _, t, _ in nuggets) for qid, nuggets in items.items()}


def run(ctx: StageContext) -> dict[str, Any]:
    questions, items, by_query, text_of = _inputs(ctx)
    nuggets = _texts(items)
    judging = ctx.config.judging
    backend = ctx.backend()
    before = backend.stats()
    memo = Memo(JUDGMENT_MEMO.path(ctx.shared)) if ctx.reuses else None
    known: dict[tuple[str, str], tuple[int, ...]] = {}
    keys: dict[tuple[str, str], list[str]] = {}
    to_judge = by_query
    if memo is not None:  # a later snapshot: every (question, nugget, document text) seen before is answered here
        judge_id = _judge_identity(ctx, backend)
        for qid, docs in by_query.items():
            for d in docs:
                keys[qid, d] = [
                    content_key(judge_id, questions[qid], n, text_of[d], str(judging.max_doc_tokens))
                    for n in nuggets.get(qid, ())
                ]
        found = memo.get_many(k for ks in keys.values() for k in ks)
        for pair, ks in keys.items():
            if ks and all(k in found for k in ks):
                known[pair] = tuple(int(found[k]) for k in ks)
        to_judge = {q: [d for d in docs if (q, d) not in known] for q, docs in by_query.items()}
    per_call, max_tokens = judging.docs_per_call, judging.max_doc_tokens
    tasks = judge_tasks(questions, nuggets, to_judge, text_of, per_call, max_tokens)
    matrices = backend.judge(tasks)
    verdicts = dict(known)
    for task, matrix in zip(tasks, matrices, strict=True):
        for doc, supports in zip(task.doc_ids, matrix, strict=True):
            verdicts[task.query_id, doc] = tuple(int(bool(y)) for y in supports)
    if memo is not None:
        new = {(q, d): v for (q, d), v in verdicts.items() if (q, d) not in known}
        memo.put_many({k: v for pair, v in new.items() for k, v in zip(keys[pair], v, strict=True)})
        memo.close()
    nugget_ids = {qid: [n for n, _, _ in its] for qid, its in items.items()}
    rows: dict[str, list] = {name: [] for name in SCHEMA.names}
    for qid, docs in by_query.items():  # pool order, whether a verdict was memoised or asked now
        if not nuggets.get(qid):
            continue
        for doc in docs:
            for nid, yes in zip(nugget_ids[qid], verdicts[qid, doc], strict=True):
                rows["query_id"].append(qid)
                rows["nugget_id"].append(nid)
                rows["doc_id"].append(doc)
                rows["relevance"].append(yes)
    write_table(JUDGMENTS.path(ctx.work), pa.table(rows, schema=SCHEMA))
    positive = sum(rows["relevance"])
    reuse = {}
    if memo is not None:
        full = sum(-(-len(docs) // per_call) for q, docs in by_query.items() if nuggets.get(q))
        reuse = {"pairs_reused": sum(len(v) for v in known.values()), "calls_saved": full - len(tasks)}
    return {
        "calls_planned": len(tasks),
        "docs_per_call": per_call,
        "questions": len({q for q, docs in by_query.items() if docs and nuggets.get(q)}),
        "pairs": len(rows["relevance"]),
        "supported_pairs": positive,
        "support_rate": round(positive / len(rows["relevance"]), 4) if rows["relevance"] else 0.0,
        **reuse,
        **backend_record(backend, before),
    }


def _judge_identity(ctx: StageContext, backend: Any) -> str:
    """Who judged: a verdict is reused only from the same judge (backend, model, temperature) and prompt."""
    from freshstack_hf.pipeline import build_prompts

    return content_key(backend.name, ctx.config.fingerprint("llm"), build_prompts.JUDGE_SYSTEM, str(VERSION))


def summary(record: dict[str, Any]) -> str:
    reused = ""
    if "pairs_reused" in record:  # a snapshot: pairs judged by an earlier one are not asked again
        reused = f", {record['pairs_reused']} reused ({record['calls_saved']} calls saved)"
    return f"{record['pairs']} judgments, {record['supported_pairs']} supported{reused}{made_by(record)}"


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
