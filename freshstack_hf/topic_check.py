"""Validation of a topic's records: every problem found in one pass, each naming config, row and value.

Rows are 0-based positions in the config as `datasets` shows them (`ds[row]`).
"""

from __future__ import annotations

import re
from collections import Counter

from freshstack_hf.errors import Problem
from freshstack_hf.topic import Topic

NUGGET_ID_RE = re.compile(r"^(?P<qid>.+)_(?P<k>\d+)$")
IMPORTANCE = ("", "vital", "okay")


def _repeated(
    first_rows: dict[str, int], key: str, row: int, problems: list[Problem], config: str, column: str, fix: str
) -> bool:
    """Whether `key` was seen at an earlier row (a problem is added naming both rows); else remember this row."""
    if key in first_rows:
        problems.append(Problem(config, f"duplicate {column} {key!r} (first at row {first_rows[key]})", row, fix))
        return True
    first_rows[key] = row
    return False


def validate_topic(topic: Topic) -> list[Problem]:
    """Structural checks of one topic; returns problems, never raises for bad data.

    The order is the reader's: the queries, the corpus, the nuggets (and the queries left without one), then the
    judgments (and the nuggets left without a relevant document)."""
    problems: list[Problem] = []
    row_of = _check_queries(topic, problems)
    doc_row = _check_docs(topic, problems)
    _check_nuggets(topic, row_of, problems)
    _check_judgments(topic, row_of, doc_row, problems)
    return problems


def _check_queries(topic: Topic, problems: list[Problem]) -> dict[str, int]:
    """Ids unique and set, a title or text, an answer; returns each query's row."""
    cfg_q = topic.name
    row_of: dict[str, int] = {}
    for row, q in enumerate(topic.queries):
        if _repeated(row_of, q.query_id, row, problems, cfg_q, "query_id", "give every query a unique id"):
            continue
        if not q.query_id:
            problems.append(Problem(cfg_q, "empty query_id", row, "set the Stack Overflow question id"))
        if not (q.title.strip() or q.body.strip()):
            problems.append(Problem(cfg_q, f"query {q.query_id!r} has empty title and text", row))
        if not q.answer_text.strip():
            problems.append(Problem(cfg_q, f"query {q.query_id!r} has an empty answer_text", row))
    return row_of


def _check_docs(topic: Topic, problems: list[Problem]) -> dict[str, int]:
    """Ids unique and agreeing with their metadata, texts not empty; returns each document's row."""
    cfg_c = f"{topic.name}-corpus"
    doc_row: dict[str, int] = {}
    for row, d in enumerate(topic.docs):
        if _repeated(doc_row, d.doc_id, row, problems, cfg_c, "_id", "corpus ids must be unique"):
            continue
        if d.repo and d.path:
            expected = f"{d.repo}/{d.path}_{d.start_byte}_{d.end_byte}"
            if d.doc_id != expected:
                problems.append(
                    Problem(
                        cfg_c,
                        f"_id {d.doc_id!r} disagrees with its metadata (expected {expected!r})",
                        row,
                        "ids follow {repo}/{path}_{start_byte}_{end_byte}; fix the id or the metadata",
                    )
                )
        if not d.text.strip():
            problems.append(Problem(cfg_c, f"document {d.doc_id!r} has empty text", row, "drop empty chunks"))
    return doc_row


def _check_nuggets(topic: Topic, row_of: dict[str, int], problems: list[Problem]) -> None:
    """Nugget ids `{query_id}_{k}` in order and unique, of a known query, with text and a known importance; then
    every query has a nugget."""
    t = topic.name
    nuggets_per_query = Counter()
    seen_nuggets: set[str] = set()
    for n in topic.nuggets:
        row = row_of.get(n.query_id)
        m = NUGGET_ID_RE.match(n.nugget_id)
        k = nuggets_per_query[n.query_id]
        if n.nugget_id in seen_nuggets:
            problems.append(Problem(t, f"duplicate nugget _id {n.nugget_id!r}", row))
        elif not m or m["qid"] != n.query_id or int(m["k"]) != k:
            problems.append(
                Problem(
                    t,
                    f"malformed nugget _id {n.nugget_id!r} in query {n.query_id!r}",
                    row,
                    f"expected {n.query_id}_{k} ({{query_id}}_{{k}}, k 0-based in order)",
                )
            )
        seen_nuggets.add(n.nugget_id)
        nuggets_per_query[n.query_id] += 1
        if row is None:
            problems.append(Problem(f"{t}-nuggets", f"nugget {n.nugget_id!r} names unknown query {n.query_id!r}"))
        if not n.text.strip():
            problems.append(Problem(t, f"nugget {n.nugget_id!r} has empty text", row))
        if n.importance not in IMPORTANCE:
            problems.append(
                Problem(
                    f"{t}-nuggets",
                    f"nugget {n.nugget_id!r} has importance {n.importance!r}",
                    row,
                    "use 'vital', 'okay' or leave it empty",
                )
            )

    fix = "drop the query or generate its nuggets"
    for q in topic.queries:
        if nuggets_per_query[q.query_id] == 0:
            problems.append(Problem(t, f"query {q.query_id!r} has no nugget", row_of[q.query_id], fix))


def _check_judgments(topic: Topic, row_of: dict[str, int], doc_row: dict[str, int], problems: list[Problem]) -> None:
    """Each judged document is in the corpus, no (nugget, document) judged both ways; then every nugget has a
    relevant document."""
    cfg_q, cfg_c = topic.name, f"{topic.name}-corpus"
    positives = Counter()
    polarity: dict[tuple[str, str], int] = {}
    for j in topic.judgments:
        row = row_of.get(j.query_id)
        if j.doc_id not in doc_row:
            problems.append(
                Problem(
                    cfg_q,
                    f"nugget {j.nugget_id!r} judges corpus id {j.doc_id!r}, which is not in {cfg_c}",
                    row,
                    "fix the id or add the document to the corpus",
                )
            )
        key = (j.nugget_id, j.doc_id)
        if key in polarity and polarity[key] != int(j.relevance > 0):
            problems.append(
                Problem(cfg_q, f"nugget {j.nugget_id!r} lists {j.doc_id!r} as both relevant and non-relevant", row)
            )
        polarity[key] = int(j.relevance > 0)
        if j.relevance > 0:
            positives[j.nugget_id] += 1
    fix = "judge more documents or drop the nugget"
    for n in topic.nuggets:
        if positives[n.nugget_id] == 0:
            problems.append(
                Problem(cfg_q, f"nugget {n.nugget_id!r} has no relevant document", row_of.get(n.query_id), fix)
            )
