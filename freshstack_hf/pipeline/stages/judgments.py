"""Stage `judgments`: does each pooled document support each nugget? (the paper's section 3.5)

A question's pool is judged in calls of at most `docs_per_call` documents, each call carrying ALL of the
question's nuggets (the paper's n+k batching instead of n*k). Every pair gets a row, 0s included, because a
judged non-relevant document is information the evaluator uses. A killed build loses nothing: the online
backend caches each finished call as it arrives, so the next run replays them and calls only what is left.
Under an embargo a public revision counts the public questions' judgments alone (`public_record`), by the rule
the record counts all of them (`tally`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pyarrow as pa

from freshstack_hf.cl100k import count
from freshstack_hf.llm.document_cut import cut_document
from freshstack_hf.llm.repair import ParseError
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.accounting import (
    StageEstimate,
    StagePlan,
    backend_record,
    made_by,
    prompt_tokens,
    stage_plan,
)
from freshstack_hf.pipeline.backends import QA, JudgeTask
from freshstack_hf.pipeline.inputs import JUDGMENT_MEMO, JUDGMENTS, POOLS, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.memo import Memo, content_key
from freshstack_hf.pipeline.planning.plan_facts import PlanFacts, expected_new
from freshstack_hf.pipeline.stage import StageContext, read_table, write_table
from freshstack_hf.pipeline.stages.pools import expected_pool_size

NAME = "judgments"
READS = ("topic", "llm", "judging", "pools")
VERSION = 1
OUTPUTS = (JUDGMENTS,)
PUBLIC = ("docs_per_call",)  # what a public record keeps as is: no question changes it

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
            whole = tuple(text_of[d] for d in block)
            cut = tuple(cut_document(text, max_doc_tokens) for text in whole)
            tasks.append(
                JudgeTask(qid, questions[qid], texts, block, cut, doc_token_limit=max_doc_tokens, whole_docs=whole)
            )
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
    reuse = {}
    if memo is not None:
        full = sum(-(-len(docs) // per_call) for q, docs in by_query.items() if nuggets.get(q))
        reuse = {"pairs_reused": sum(len(v) for v in known.values()), "calls_saved": full - len(tasks)}
    return {
        "calls_planned": len(tasks),
        "docs_per_call": per_call,
        **tally(rows["query_id"], rows["relevance"]),
        **reuse,
        **backend_record(backend, before),
    }


def _judge_identity(ctx: StageContext, backend: Any) -> str:
    """Who judged: a verdict is reused only from the same judge (backend, model, temperature) and prompt."""
    return content_key(backend.name, ctx.config.fingerprint("llm"), build_prompts.JUDGE_SYSTEM, str(VERSION))


def tally(query_ids: Sequence[str], relevance: Sequence[int]) -> dict[str, Any]:
    """The record's counts of the judgment rows (`query_ids[i]`, `relevance[i]`; a question with nuggets and a
    pool has rows): the one rule for a build's record and for what a public revision says of its public questions
    alone."""
    positive = sum(relevance)
    return {
        "questions": len(set(query_ids)),
        "pairs": len(relevance),
        "supported_pairs": positive,
        "support_rate": round(positive / len(relevance), 4) if relevance else 0.0,
    }


def public_record(ctx: StageContext, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """The judgments of the questions `public` alone: how many pairs, how many supported. The calls and what an
    earlier snapshot's memo answered are not told apart per question, so they are left to the private revision."""
    table = read_table(JUDGMENTS.path(ctx.work), ["query_id", "relevance"]).to_pydict()
    rows = [(q, r) for q, r in zip(table["query_id"], table["relevance"], strict=True) if q in public]
    counts = tally([q for q, _ in rows], [r for _, r in rows])
    return {**{k: record[k] for k in PUBLIC if k in record}, **counts}


def summary(record: dict[str, Any]) -> str:
    reused = ""
    if "pairs_reused" in record:  # a snapshot: pairs judged by an earlier one are not asked again
        reused = f", {record['pairs_reused']} reused ({record['calls_saved']} calls saved)"
    return f"{record['pairs']} judgments, {record['supported_pairs']} supported{reused}{made_by(record)}"


# A plan's allowance for one answer when no earlier snapshot measured it: a short reasoning and the JSON verdicts.
COMPLETION_TOKENS = 600
NUGGET_TOKENS = 30  # one nugget: a short sentence stating one fact
DOCUMENT_FRAME = '<document id="10">\n\n</document>\n\n'  # what wraps each document in a judge prompt


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    """Once `pools` has run (a plain build), the very tasks the stage would send, counted; before, an estimate per
    question from what `facts` know: its pool (`pools.expected_pool_size`), its documents' length, its nuggets (the
    cached answer's, else the accepted answer's facts), and, for a question judged by an earlier snapshot whose
    verdicts the memo keeps, only the documents whose text is new."""
    llm = ctx.config.llm
    path = POOLS.path(ctx.work)
    details: dict[str, Any] = {"reads": str(path)}
    completion = COMPLETION_TOKENS if facts is None else facts.completion_per_call(NAME, COMPLETION_TOKENS)
    if path.is_file() and not ctx.reuses:  # a snapshot's memo answers pairs these tasks would re-send
        tasks = [t for t in make_tasks(ctx) if t.doc_texts and t.nuggets]
        requests = [(t.query_id, build_prompts.judge_messages(t)) for t in tasks]
        estimate = (facts or PlanFacts(llm)).estimate(requests, completion)
    elif facts is None or facts.questions is None:
        n = ctx.config.questions.max_questions
        depth = ctx.config.pooling.depth * len(ctx.config.pooling.techniques)
        calls = None if n is None else n * -(-depth // ctx.config.judging.docs_per_call)
        estimate = StageEstimate(calls, input_tokens=None, output_tokens=None, offline=llm.offline)
        details["note"] = "an upper bound; exact once `pools` has run"
    else:
        estimate, details["calls_for_carried"] = _estimate(ctx, facts, completion)
    return stage_plan(NAME, details, estimate, llm)


def _estimate(ctx: StageContext, facts: PlanFacts, completion: float) -> tuple[StageEstimate, int]:
    """(the estimate, its calls for carried questions): per question, the documents and calls expected
    (`planning.plan_facts.expected_new`) priced at its own prompt, the question and nuggets exact where known."""
    judging, documents = ctx.config.judging, facts.documents
    pool = expected_pool_size(ctx.config.pooling, documents.count if documents else None, facts.previous)
    doc_tokens = documents.tokens if documents else None
    calls = carried_calls = tokens = 0.0
    frame = count(DOCUMENT_FRAME)  # counted here, not at import: the first count loads cl100k (0.3 s)
    for qa in facts.questions or []:
        nuggets, extra = _nuggets(qa, facts)
        reused = facts.judged_before(qa.query_id, nuggets_known=extra == 0)
        share = documents.new_share if reused and documents else 1.0
        n_docs, n_calls = expected_new(pool, share, judging.docs_per_call)
        task = JudgeTask(qa.query_id, qa.question, nuggets, (), (), doc_token_limit=judging.max_doc_tokens)
        prompt = prompt_tokens(build_prompts.judge_messages(task)) + extra
        tokens += n_calls * prompt + n_docs * ((doc_tokens or 0) + frame)
        calls += n_calls
        carried_calls += n_calls if qa.query_id in facts.carried else 0
    estimate = StageEstimate(
        round(calls),
        input_tokens=None if doc_tokens is None else round(tokens),
        output_tokens=round(calls * completion),
        offline=facts.llm.offline,
    )
    return estimate, round(carried_calls)


def _nuggets(qa: QA, facts: PlanFacts) -> tuple[tuple[str, ...], int]:
    """(the nuggets a judge prompt will carry, tokens to add for those not known yet): a cached nugget answer gives
    them exactly; else they are the accepted answer's facts restated, one short sentence each, so about as long as
    the answer and no longer than `MAX_NUGGETS` sentences."""
    answer = facts.cached(build_prompts.nugget_messages(qa))
    if answer is not None:
        try:
            return tuple(n.text for n in build_prompts.parse_nuggets(answer)), 0
        except ParseError:
            pass  # re-asked by the build: as unknown as a new question's
    return (), min(count(qa.answer), build_prompts.MAX_NUGGETS * NUGGET_TOKENS)
