"""What became of the previous snapshot's questions on this snapshot's corpus: answerability and migrations.

A snapshot takes every question asked up to its date, so the previous snapshot's questions are pooled and judged
again here, on the new corpus. Per carried question this records how many of its nuggets some document still
supports; a question left with none is *unanswerable* on the new corpus and is named, not silently dropped
(the filter keeps only fully supported questions, as the paper does, so the record is the one place it shows).
A supporting document of the previous snapshot whose exact text now lives under another path or repository is a
*migration* (the "Still Fresh?" study found LangChain's documentation moving between repositories): found by
content, not by name, with the drift report's rule (`drift.fate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freshstack_hf.pipeline.inputs import JUDGMENTS, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table
from freshstack_hf.records import Doc
from freshstack_hf.repo.revisions import revision_of


def carryover(ctx: StageContext) -> dict[str, Any]:
    """The record (empty `previous` when this build has no earlier snapshot to carry from)."""
    previous = ctx.config.snapshot.previous
    if not previous:
        return {"previous": ""}
    from freshstack_hf.repo.reader import load_topic

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
    from freshstack_hf.drift.fate import document_fates, file_of

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
