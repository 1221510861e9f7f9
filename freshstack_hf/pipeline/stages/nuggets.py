"""Stage `nuggets`: each question and its accepted answer -> atomic facts (the paper's section 3.3).

Nugget ids are `{query_id}_{k}` in generation order, the form the evaluator and the official release use. A
question for which the backend produced nothing keeps no nugget here; the `filter` stage drops it later and
counts it, so nothing disappears silently. Under an embargo a public revision counts the public questions' nuggets alone
(`public_record`), by the rule the record counts all of them (`tally`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.accounting import StageEstimate, StagePlan, backend_record, made_by, stage_plan
from freshstack_hf.pipeline.inputs import NUGGETS, QUESTIONS, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table, write_table

if TYPE_CHECKING:
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts

NAME = "nuggets"
READS = ("topic", "llm", "questions")
VERSION = 1
OUTPUTS = (NUGGETS,)
# What a plan allows for one answer when no earlier snapshot measured it: up to MAX_NUGGETS short facts as JSON.
COMPLETION_TOKENS = 250

SCHEMA = pa.schema(
    [("query_id", pa.string()), ("nugget_id", pa.string()), ("text", pa.string()), ("importance", pa.string())]
)


def run(ctx: StageContext) -> dict[str, Any]:
    items = read_qas(ctx)
    backend = ctx.backend()
    before = backend.stats()
    generated = backend.nuggets(items)
    rows: dict[str, list] = {name: [] for name in SCHEMA.names}
    for qa, nuggets in zip(items, generated, strict=True):
        texts = [n for n in nuggets if n.text.strip()]
        for k, nugget in enumerate(texts):
            rows["query_id"].append(qa.query_id)
            rows["nugget_id"].append(f"{qa.query_id}_{k}")
            rows["text"].append(nugget.text.strip())
            rows["importance"].append(nugget.importance)
    write_table(NUGGETS.path(ctx.work), pa.table(rows, schema=SCHEMA))
    return {**tally([qa.query_id for qa in items], rows), **backend_record(backend, before)}


def tally(questions: Collection[str], rows: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
    """The record's counts of the nuggets `rows` (columns `query_id`, `importance`) of the questions `questions`:
    the one rule for a build's record and for what a public revision says of its public questions alone."""
    keep = set(questions)
    importance = [i for q, i in zip(rows["query_id"], rows["importance"], strict=True) if q in keep]
    with_nuggets = {q for q in rows["query_id"] if q in keep}
    n = len(keep)
    return {
        "questions": n,
        "nuggets": len(importance),
        "nuggets_per_question": round(len(importance) / n, 3) if n else 0.0,
        "questions_without_nuggets": n - len(with_nuggets),
        "vital": sum(1 for i in importance if i == "vital"),
        "graded": sum(1 for i in importance if i),
    }


def public_record(ctx: StageContext, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """The counts of the questions `public` alone (the record's other fields are its backend's: kept by the caller)."""
    return tally(public, read_table(NUGGETS.path(ctx.work), ["query_id", "importance"]).to_pydict())


def summary(record: dict[str, Any]) -> str:
    return f"{record['nuggets']} nuggets for {record['questions']} questions{made_by(record)}"


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    """One request per question: each prompt written and counted when the questions are known (`facts`), the
    ones the response cache holds free; else the number of questions, tokens unknown."""
    llm = ctx.config.llm
    details = {
        "reads": str(QUESTIONS.path(ctx.work)),
        "writes": str(NUGGETS.path(ctx.work)),
        "backend": "offline heuristic" if llm.offline else llm.model,
    }
    if facts is None or facts.questions is None:
        estimate = StageEstimate(_count(ctx), input_tokens=None, output_tokens=None, offline=llm.offline)
    else:
        requests = [(qa.query_id, build_prompts.nugget_messages(qa)) for qa in facts.questions]
        estimate = facts.estimate(requests, facts.completion_per_call(NAME, COMPLETION_TOKENS))
    return stage_plan(NAME, details, estimate, llm)


def _count(ctx: StageContext) -> int | None:
    """Questions the stage would send: known once `questions` has run, else the configured cap (or unknown)."""
    path = QUESTIONS.path(ctx.work)
    if path.is_file():
        import pyarrow.parquet as pq

        return pq.read_metadata(path).num_rows
    return ctx.config.questions.max_questions
