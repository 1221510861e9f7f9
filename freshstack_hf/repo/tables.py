"""Conversion between topic records and the Arrow tables of each config.

The official-schema config `T` is the source of truth for the query side (queries, nuggets and judgments live
in one row per query); the other query-side configs are derived views written for convenience and checked
against it by the validator.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pyarrow as pa

from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.repo import layout
from freshstack_hf.topic import QuerySide, Topic


def official_queries_table(topic: Topic) -> pa.Table:
    """Rows of the official `freshstack/queries-oct-2024` schema, one per query, nuggets nested."""
    judged: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for j in topic.judgments:
        judged[j.nugget_id][0 if j.relevance > 0 else 1].append(j.doc_id)
    nuggets_of: dict[str, list[dict]] = defaultdict(list)
    for n in topic.nuggets:
        rel, nonrel = judged.get(n.nugget_id, ([], []))
        nuggets_of[n.query_id].append(
            {
                "_id": n.nugget_id,
                "text": n.text,
                "relevant_corpus_ids": rel,
                "non_relevant_corpus_ids": nonrel,
            }
        )
    qs = topic.queries
    return pa.table(
        {
            "query_id": [q.query_id for q in qs],
            "query_title": [q.title for q in qs],
            "query_text": [q.body for q in qs],
            "answer_id": [q.answer_id for q in qs],
            "answer_text": [q.answer_text for q in qs],
            "metadata": [{"date": q.date, "tags": list(q.tags)} for q in qs],
            "nuggets": [nuggets_of.get(q.query_id, []) for q in qs],
        },
        schema=layout.OFFICIAL_QUERY_SCHEMA,
    )


def query_side_from_official(table: pa.Table) -> QuerySide:
    """Inverse of `official_queries_table`; accepts extra columns and missing optional ones."""
    cols = set(table.column_names)
    rows = table.to_pylist()
    queries: list[Query] = []
    nuggets: list[Nugget] = []
    judgments: list[NuggetJudgment] = []
    for row in rows:
        qid = _s(row.get("query_id"))
        meta = row.get("metadata") or {}
        queries.append(
            Query(
                query_id=qid,
                title=_s(row.get("query_title")),
                body=_s(row.get("query_text")),
                answer_id=_s(row.get("answer_id")) if "answer_id" in cols else "",
                answer_text=_s(row.get("answer_text")) if "answer_text" in cols else "",
                date=_s(meta.get("date")),
                tags=tuple(meta.get("tags") or ()),
            )
        )
        for nug in row.get("nuggets") or []:
            nid = _s(nug.get("_id"))
            nuggets.append(Nugget(nid, qid, _s(nug.get("text"))))
            judgments.extend(NuggetJudgment(qid, nid, d, 1) for d in nug.get("relevant_corpus_ids") or [])
            judgments.extend(NuggetJudgment(qid, nid, d, 0) for d in nug.get("non_relevant_corpus_ids") or [])
    return queries, nuggets, judgments


def corpus_table(docs: list[Doc]) -> pa.Table:
    return pa.table(
        {
            "_id": [d.doc_id for d in docs],
            "text": [d.text for d in docs],
            "metadata": [
                {
                    "url": d.url,
                    "start_byte": d.start_byte,
                    "end_byte": d.end_byte,
                    "repo": d.repo,
                    "path": d.path,
                    "commit": d.commit,
                }
                for d in docs
            ],
        },
        schema=layout.CORPUS_SCHEMA,
    )


def docs_from_corpus(table: pa.Table) -> list[Doc]:
    """Columnar reads: building 100k records from Python lists is several times faster than to_pylist()."""
    ids = table.column("_id").to_pylist()
    texts = table.column("text").to_pylist()
    titles = table.column("title").to_pylist() if "title" in table.column_names else [None] * len(ids)
    meta: dict[str, list] = {}
    if "metadata" in table.column_names:
        struct = table.column("metadata").combine_chunks()
        for f in struct.type:
            meta[f.name] = struct.field(f.name).to_pylist()
    n = len(ids)

    def col(name: str, default):
        values = meta.get(name)
        return values if values is not None else [default] * n

    urls, starts, ends = col("url", ""), col("start_byte", 0), col("end_byte", 0)
    repos, paths = col("repo", ""), col("path", "")
    commits = meta.get("commit") or meta.get("commit_id") or [""] * n
    return [
        Doc(
            doc_id=_s(ids[i]),
            text=texts[i] or "",
            url=urls[i] or "",
            repo=repos[i] or "",
            path=paths[i] or "",
            start_byte=int(starts[i] or 0),
            end_byte=int(ends[i] or 0),
            commit=commits[i] or "",
            title=titles[i] or "",
        )
        for i in range(n)
    ]


def queries_table(topic: Topic) -> pa.Table:
    return pa.table(
        {"_id": [q.query_id for q in topic.queries], "text": [q.text for q in topic.queries]},
        schema=layout.QUERIES_SCHEMA,
    )


def nuggets_table(topic: Topic) -> pa.Table:
    """The nuggets config; an `importance` column is added only when some nugget is graded (vital/okay)."""
    ns = topic.nuggets
    columns = {
        "_id": [n.nugget_id for n in ns],
        "query-id": [n.query_id for n in ns],
        "text": [n.text for n in ns],
    }
    if any(n.importance for n in ns):
        columns["importance"] = [n.importance for n in ns]
        return pa.table(columns, schema=layout.NUGGETS_SCHEMA.append(pa.field("importance", layout.STR)))
    return pa.table(columns, schema=layout.NUGGETS_SCHEMA)


def with_importance(side: QuerySide, nuggets: pa.Table) -> QuerySide:
    """The official schema has no importance; a graded build keeps it in the nuggets config, merged back here."""
    if "importance" not in nuggets.column_names:
        return side
    grade = dict(zip(nuggets.column("_id").to_pylist(), nuggets.column("importance").to_pylist(), strict=True))
    queries, items, judgments = side
    items = [replace(n, importance=grade.get(n.nugget_id) or "") for n in items]
    return queries, items, judgments


def qrels_table(topic: Topic) -> pa.Table:
    rows = [(qid, doc, score) for qid, docs in topic.qrels.items() for doc, score in docs.items()]
    return pa.table(
        {"query-id": [r[0] for r in rows], "corpus-id": [r[1] for r in rows], "score": [r[2] for r in rows]},
        schema=layout.QRELS_SCHEMA,
    )


def nugget_qrels_table(topic: Topic) -> pa.Table:
    js = topic.judgments
    return pa.table(
        {
            "query-id": [j.query_id for j in js],
            "nugget-id": [j.nugget_id for j in js],
            "corpus-id": [j.doc_id for j in js],
            "score": [int(j.relevance) for j in js],
        },
        schema=layout.NUGGET_QRELS_SCHEMA,
    )


def core_tables(topic: Topic) -> dict[str, pa.Table]:
    """Every core config of a topic, keyed by file stem."""
    return {
        "queries_official": official_queries_table(topic),
        "corpus": corpus_table(topic.docs),
        "queries": queries_table(topic),
        "nuggets": nuggets_table(topic),
        "qrels": qrels_table(topic),
        "nugget_qrels": nugget_qrels_table(topic),
    }


def candidates_table(lists: dict[str, list[str]]) -> pa.Table:
    return pa.table(
        {"query-id": list(lists), "corpus-ids": [list(v) for v in lists.values()]},
        schema=layout.CANDIDATES_SCHEMA,
    )


def _s(value) -> str:
    """Ids arrive as ints from some exports (Stack Overflow ids); the repo always stores strings."""
    return "" if value is None else str(value)
