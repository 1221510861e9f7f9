"""Stage `filter`: keep only questions whose every nugget is supported by some judged document (section 4).

Two steps, counted apart as the paper reports them: first drop questions with no supported nugget at all (no
relevant document), then questions with any unsupported nugget. The second is the aggressive one: a question
whose answer needs a fact no document holds cannot be scored fairly on Coverage.
"""

from __future__ import annotations

from typing import Any

from freshstack_hf.pipeline.carryover import carryover
from freshstack_hf.pipeline.inputs import CARRYOVER, JUDGMENTS, KEPT, read_nuggets, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table, write_json

NAME = "filter"
READS = ("judgments", "snapshot")
VERSION = 2  # 2: a snapshot build records its carry-over (the previous snapshot's questions, re-judged)
OUTPUTS = (KEPT, CARRYOVER)


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
    n = len(questions)
    extra = {}
    if carried["previous"]:
        extra = {k: carried[k] for k in ("previous", "carried", "answerable", "unanswerable", "missing")}
        extra["migrations"] = len(carried["migrations"])
    return {
        **extra,
        "questions": n,
        "with_nuggets": len(with_nuggets),
        "after_no_support_filter": len(some_support),
        "after_unsupported_nugget_filter": len(all_support),
        "kept": len(all_support),
        "dropped_no_support_pct": round(100 * (len(with_nuggets) - len(some_support)) / n, 1) if n else 0.0,
        "dropped_unsupported_nugget_pct": round(100 * (len(some_support) - len(all_support)) / n, 1) if n else 0.0,
    }


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


def plan(ctx: StageContext) -> dict[str, Any]:
    return {"reads": str(JUDGMENTS.path(ctx.work)), "calls": 0}
