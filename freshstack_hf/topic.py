"""A FreshStack topic: queries, nuggets, corpus and nugget-level judgments, read the same way from any source.

A topic from disk or the Hub is lazy: nothing is read until the first attribute access, and the corpus (the
large part) is read separately from the queries, so evaluating a run never pays for loading 100k documents.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cached_property

from freshstack_hf.errors import FreshStackError
from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query

TOPIC_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

# Query-side records come from one file (the official `T` config holds queries, nuggets and judgments).
QuerySide = tuple[list[Query], list[Nugget], list[NuggetJudgment]]


def check_topic_name(name: str) -> str:
    """Topic names become Hugging Face split names (`\\w+`) and folder names, so they are restricted."""

    if not TOPIC_NAME_RE.match(name or ""):
        raise FreshStackError(
            f"invalid topic name {name!r}: use a lowercase slug of letters, digits and '_' starting with a "
            "letter (e.g. 'langchain', 'my_topic'); it becomes a Hugging Face split name"
        )
    return name


class Topic:
    """One topic. Build it from records (`Topic(name, queries=..., ...)`) or lazily (`Topic.lazy`)."""

    def __init__(
        self,
        name: str,
        queries: list[Query] | None = None,
        nuggets: list[Nugget] | None = None,
        docs: list[Doc] | None = None,
        judgments: list[NuggetJudgment] | None = None,
    ) -> None:
        self._name = check_topic_name(name)
        self._query_side_loader: Callable[[], QuerySide] | None = None
        self._docs_loader: Callable[[], list[Doc]] | None = None
        self._doc_ids_loader: Callable[[], Iterable[str]] | None = None
        if queries is not None or nuggets is not None or judgments is not None:
            self.__dict__["_query_side"] = (list(queries or []), list(nuggets or []), list(judgments or []))
        if docs is not None:
            self.__dict__["docs"] = list(docs)

    @classmethod
    def lazy(
        cls,
        name: str,
        query_side: Callable[[], QuerySide],
        docs: Callable[[], list[Doc]],
        doc_ids: Callable[[], Iterable[str]] | None = None,
    ) -> Topic:
        """A topic whose parts are read on first use, each at most once. `doc_ids` reads the corpus ids alone
        (one column), so scoring a run never reads the documents' texts."""
        topic = cls(name)
        topic._query_side_loader = query_side
        topic._docs_loader = docs
        topic._doc_ids_loader = doc_ids
        return topic

    @property
    def name(self) -> str:
        """The topic's name, checked when the topic is made and fixed after: it names folders and splits."""
        return self._name

    def __repr__(self) -> str:
        loaded = [k for k in ("_query_side", "docs") if k in self.__dict__]
        return f"Topic({self.name!r}, loaded={loaded})"

    # ---- the four record lists -------------------------------------------------------------------
    @cached_property
    def _query_side(self) -> QuerySide:
        if self._query_side_loader is None:
            return [], [], []
        return self._query_side_loader()

    @property
    def queries(self) -> list[Query]:
        """The topic's questions (`Query`: id, title, body, accepted answer, date, tags) in the repo's order. The
        first of the query side's reads, which loads the nuggets and judgments with them (one file: `T`)."""
        return self._query_side[0]

    @property
    def nuggets(self) -> list[Nugget]:
        """Every question's nuggets (`Nugget`: the atomic facts of its accepted answer, ids `QUERYID_K`), in each
        question's order: what Coverage and alpha-nDCG count."""
        return self._query_side[1]

    @property
    def judgments(self) -> list[NuggetJudgment]:
        """The nugget-level support judgments (`NuggetJudgment`: query, nugget, document, 1 supports / 0 does not),
        judged zeros kept: the one source the qrels and every measure are derived from."""
        return self._query_side[2]

    @cached_property
    def docs(self) -> list[Doc]:
        """The topic's corpus (`Doc`: chunk id `REPO/PATH_START_END`, text, where it was cut from), distractors
        included; read on first use, since scoring a run needs only the ids (`doc_ids`)."""
        return [] if self._docs_loader is None else self._docs_loader()

    # ---- derived views ----------------------------------------------------------------------------
    @cached_property
    def query_nuggets(self) -> dict[str, list[str]]:
        """query id -> its nugget ids in order; every query appears, even one without nuggets."""
        out: dict[str, list[str]] = {q.query_id: [] for q in self.queries}
        for n in self.nuggets:
            out.setdefault(n.query_id, []).append(n.nugget_id)
        return out

    @cached_property
    def nugget_qrels(self) -> dict[str, dict[str, int]]:
        """nugget id -> {doc id: 0/1}, the official evaluator's `qrels_nuggets` (judged 0s kept)."""
        out: dict[str, dict[str, int]] = {n.nugget_id: {} for n in self.nuggets}
        for j in self.judgments:
            cur = out.setdefault(j.nugget_id, {})
            cur[j.doc_id] = max(cur.get(j.doc_id, 0), int(j.relevance))
        return out

    @cached_property
    def qrels(self) -> dict[str, dict[str, int]]:
        """Query-level qrels: score = number of the query's nuggets the doc supports (judged 0s kept)."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for nugget_id, docs in self.nugget_qrels.items():
            qid = self._nugget_query[nugget_id]
            row = out[qid]
            for doc_id, rel in docs.items():
                row[doc_id] = row.get(doc_id, 0) + rel
        return dict(out)

    @cached_property
    def _nugget_query(self) -> dict[str, str]:
        mapping = {n.nugget_id: n.query_id for n in self.nuggets}
        for j in self.judgments:
            mapping.setdefault(j.nugget_id, j.query_id)
        return mapping

    @cached_property
    def doc_ids(self) -> set[str]:
        """The corpus ids, read without the texts where the topic was opened lazily (one column of `T-corpus`)."""
        if "docs" in self.__dict__ or self._doc_ids_loader is None:  # the records, when they are at hand anyway
            return {d.doc_id for d in self.docs}
        return set(self._doc_ids_loader())

    @cached_property
    def query_ids(self) -> list[str]:
        """The questions' ids (Stack Overflow ids, as strings), in the order of `queries`."""
        return [q.query_id for q in self.queries]


def canonical_order(topic: Topic) -> Topic:
    """`topic` with its query side in the order a reader rebuilds it from the official config `T`.

    The official config is the source of truth for the query side: one row per query, its nuggets nested, each
    nugget listing its relevant documents and then its non-relevant ones. Reading it back therefore yields the
    queries as given, each query's nuggets in their order, and per nugget the relevant judgments (relevance 1)
    before the non-relevant ones (relevance 0); nuggets of no listed query and judgments of no listed nugget are
    not in it. Every writer of the derived configs (`T-nuggets`, `T-qrels`, `T-nugget-qrels`) writes them from
    this order, so what is written and what is read back agree row for row. Nugget grades (vital/okay), which the
    official schema has no field for, are kept when any nugget is graded.
    """
    judged: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for j in topic.judgments:
        judged[j.nugget_id][0 if j.relevance > 0 else 1].append(j.doc_id)
    of_query: dict[str, list[Nugget]] = defaultdict(list)
    for n in topic.nuggets:
        of_query[n.query_id].append(n)
    graded = any(n.importance for n in topic.nuggets)
    grade = {n.nugget_id: n.importance for n in topic.nuggets} if graded else {}
    nuggets: list[Nugget] = []
    judgments: list[NuggetJudgment] = []
    for q in topic.queries:
        qid = q.query_id
        for n in of_query.get(qid, ()):
            nuggets.append(Nugget(n.nugget_id, qid, n.text, grade.get(n.nugget_id) or ""))
            relevant, non_relevant = judged.get(n.nugget_id, ([], []))
            judgments.extend(NuggetJudgment(qid, n.nugget_id, d, 1) for d in relevant)
            judgments.extend(NuggetJudgment(qid, n.nugget_id, d, 0) for d in non_relevant)
    return Topic(topic.name, queries=topic.queries, nuggets=nuggets, docs=topic.docs, judgments=judgments)
