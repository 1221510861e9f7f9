"""FreshStack in ir_datasets: `ir_datasets.load("freshstack/langchain")`, for ir_measures and PyTerrier users.

Dataset ids (any topic of the repo FRESHSTACK_DATASET names, see `loaders.source`):

* `freshstack/T`: docs, queries (text = title + " " + body), query-level qrels (relevance = number of the
  query's nuggets the document supports; judged non-relevant documents kept with 0);
* `freshstack/T/nuggets`: the same docs and queries, nugget-level qrels as `TrecQrel` with the nugget id in
  `iteration`, the subtopic convention of ir_measures' alpha_nDCG (pyndeval);
* `freshstack/T/top_ranked`: adds the hybrid reranking candidates as scoreddocs (score = minus the rank).

    import ir_datasets, ir_measures
    from ir_measures import R, alpha_nDCG

    qrels = ir_datasets.load("freshstack/langchain/nuggets").qrels_iter()
    ir_measures.calc_aggregate([alpha_nDCG(alpha=0.5, judged_only=False) @ 10], qrels, run)
    ir_measures.calc_aggregate([R @ 50], ir_datasets.load("freshstack/langchain").qrels_iter(), run)

Ids are matched by a pattern, so no topic list is needed up front, and the repo is read when a dataset is
first iterated, at the source FRESHSTACK_DATASET names at that moment. With the project installed, the import
hook registers this on `import ir_datasets`; otherwise `import loaders.irds` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import ir_datasets
from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, BaseScoredDocs, GenericQrel, GenericScoredDoc
from ir_datasets.formats.trec import TrecQrel
from ir_datasets.indices import Docstore

from freshstack_hf.repo.dataset import Dataset, open_dataset
from freshstack_hf.topic import Topic
from loaders.source import dataset_source

NAMESPACE = "freshstack"
ID_PATTERN = r"^freshstack/([a-z][a-z0-9_]*)(?:/(nuggets|top_ranked))?$"

QUERY_QRELS_DEFS = {0: "judged: supports none of the query's nuggets", 1: "supports 1 nugget (n: supports n)"}
NUGGET_QRELS_DEFS = {0: "does not support the nugget (in iteration)", 1: "supports the nugget (in iteration)"}


class FreshStackDoc(NamedTuple):
    doc_id: str
    text: str
    url: str
    repo: str
    path: str

    def default_text(self) -> str:
        return self.text


class FreshStackQuery(NamedTuple):
    query_id: str
    text: str
    title: str
    body: str
    tags: tuple[str, ...]

    def default_text(self) -> str:
        return self.text


class _TopicHandle:
    """A topic name, read through the shared dataset handle of whatever FRESHSTACK_DATASET names at that moment."""

    def __init__(self, topic: str) -> None:
        self.topic_name = topic

    def _dataset(self) -> Dataset:
        source = dataset_source()
        return open_dataset(source.location, source.revision)  # one handle (and one read) per repo and revision

    @property
    def topic(self) -> Topic:
        return self._dataset().topic(self.topic_name)

    def candidates(self) -> dict[str, list[str]]:
        return self._dataset().candidates(self.topic_name)


class _Docs(BaseDocs):
    def __init__(self, handle: _TopicHandle) -> None:
        self._handle = handle

    def docs_iter(self) -> Iterator[FreshStackDoc]:
        return (FreshStackDoc(d.doc_id, d.text, d.url, d.repo, d.path) for d in self._handle.topic.docs)

    def docs_count(self) -> int:
        return len(self._handle.topic.docs)

    def docs_cls(self) -> type:
        return FreshStackDoc

    def docs_namespace(self) -> str:
        return NAMESPACE

    def docs_lang(self) -> str:
        return "en"

    def docs_store(self, field: str = "doc_id") -> Docstore:
        return _DictDocstore(self)


class _DictDocstore(Docstore):
    """`dataset.docs_store().get(id)` over the in-memory corpus (a topic's corpus fits in memory)."""

    def __init__(self, docs: _Docs) -> None:
        super().__init__(FreshStackDoc, "doc_id")
        self._by_id = {d.doc_id: d for d in docs.docs_iter()}

    def get_many_iter(self, doc_ids: Any) -> Iterator[FreshStackDoc]:
        return (self._by_id[i] for i in doc_ids if i in self._by_id)


class _Queries(BaseQueries):
    def __init__(self, handle: _TopicHandle) -> None:
        self._handle = handle

    def queries_iter(self) -> Iterator[FreshStackQuery]:
        return (FreshStackQuery(q.query_id, q.text, q.title, q.body, q.tags) for q in self._handle.topic.queries)

    def queries_cls(self) -> type:
        return FreshStackQuery

    def queries_namespace(self) -> str:
        return NAMESPACE

    def queries_lang(self) -> str:
        return "en"


class _QueryQrels(BaseQrels):
    def __init__(self, handle: _TopicHandle) -> None:
        self._handle = handle

    def qrels_iter(self) -> Iterator[GenericQrel]:
        qrels = self._handle.topic.qrels
        return (GenericQrel(qid, doc_id, rel) for qid, docs in qrels.items() for doc_id, rel in docs.items())

    def qrels_cls(self) -> type:
        return GenericQrel

    def qrels_defs(self) -> dict[int, str]:
        return QUERY_QRELS_DEFS


class _NuggetQrels(BaseQrels):
    def __init__(self, handle: _TopicHandle) -> None:
        self._handle = handle

    def qrels_iter(self) -> Iterator[TrecQrel]:
        judgments = self._handle.topic.judgments
        return (TrecQrel(j.query_id, j.doc_id, int(j.relevance), j.nugget_id) for j in judgments)

    def qrels_cls(self) -> type:
        return TrecQrel

    def qrels_defs(self) -> dict[int, str]:
        return NUGGET_QRELS_DEFS


class _Candidates(BaseScoredDocs):
    def __init__(self, handle: _TopicHandle) -> None:
        self._handle = handle

    def scoreddocs_iter(self) -> Iterator[GenericScoredDoc]:
        for qid, doc_ids in self._handle.candidates().items():
            yield from (GenericScoredDoc(qid, doc_id, float(-rank)) for rank, doc_id in enumerate(doc_ids, 1))

    def scoreddocs_cls(self) -> type:
        return GenericScoredDoc


def build_dataset(topic: str, variant: str | None = None) -> ir_datasets.Dataset:
    """The ir_datasets dataset for `freshstack/{topic}[/{variant}]` (what the registry builds on first load)."""
    handle = _TopicHandle(topic)
    qrels = _NuggetQrels(handle) if variant == "nuggets" else _QueryQrels(handle)
    scored = _Candidates(handle) if variant == "top_ranked" else None
    return ir_datasets.Dataset(_Docs(handle), _Queries(handle), qrels, scored)


def _initialize(dataset_id: str, groups: tuple[str, str | None]) -> ir_datasets.Dataset:
    return build_dataset(groups[0], groups[1])


def register() -> None:
    """Add the `freshstack/...` pattern to ir_datasets' registry; calling it again changes nothing."""
    patterns = getattr(ir_datasets.registry, "_patterns", [])
    if not any(getattr(p, "pattern", None) == ID_PATTERN for p, _ in patterns):
        ir_datasets.registry.register_pattern(ID_PATTERN, _initialize)


# Importing this module is registering, as with ir_datasets' own dataset modules.
register()
