"""The MTEB metadata of the FreshStack tasks: what a reader of a result file needs to trust the number.

mteb 2.x ships `FreshStackRetrieval`, a different benchmark under the same paper: every topic merged into one
corpus of only the 3,804 relevant documents (no distractors), document-level qrels and nDCG@10 as the main
score. The descriptions below say how these tasks differ, so the two are never mistaken for each other.

Metadata is built per task instance: the subsets are the topics of the dataset repo actually read (a
synthetic or private repo has its own), and `dataset` records that repo and its revision.
"""

from __future__ import annotations

from typing import Any

from freshstack_hf.metrics import Measure, measures_at
from loaders.source import DatasetSource

MAIN_SCORE = "alpha_ndcg_at_10"
# The cutoffs mteb itself reports at; 50 is added because Recall@50 is a FreshStack headline measure.
K_VALUES = (1, 3, 5, 10, 20, 50, 100)
# Scores computed by freshstack_hf's evaluator and written over mteb's (recall) or beside them.
NUGGET_MEASURES: tuple[Measure, ...] = (
    *measures_at((5, 10, 20, 50), ("alpha_ndcg", "coverage")),
    *measures_at(K_VALUES, ("recall",)),
)

# Code languages of the published topics' corpora; any other topic is declared as English text only.
TOPIC_LANGUAGES = {
    "langchain": ["eng-Latn", "python-Code"],
    "yolo": ["eng-Latn", "python-Code"],
    "laravel": ["eng-Latn", "php-Code"],
    "angular": ["eng-Latn", "typescript-Code"],
    "godot": ["eng-Latn", "c#-Code"],
}

CITATION = r"""
@article{thakur2025freshstack,
  author = {Thakur, Nandan and Lin, Jimmy and Havens, Sam and Carbin, Michael and Khattab, Omar and Drozdov, Andrew},
  journal = {arXiv preprint arXiv:2504.13128},
  title = {FreshStack: Building Realistic Benchmarks for Evaluating Retrieval on Technical Documents},
  year = {2025},
}
"""

_COMMON = (
    "Queries are recent Stack Overflow questions on niche topics (title + ' ' + body, the official "
    "convention); documents are chunks of the GitHub repositories those questions need, one corpus per topic "
    "and one MTEB subset per topic. Relevance is judged per nugget: GPT-4o split each accepted answer into "
    "atomic facts (nuggets) and judged which pooled chunks support each one. The main score is alpha-nDCG@10 "
    "(ndeval, alpha=0.5), with Coverage@k (share of nuggets supported by a top-k chunk) and Recall@k, all "
    "computed by freshstack-hf's evaluator, which matches the official freshstack package. recall_at_k is "
    "FreshStack's Recall (a document is relevant when it supports any nugget; every judged query counts). "
    "Unlike mteb's FreshStackRetrieval (topics merged, only relevant documents, document-level nDCG@10), "
)

RETRIEVAL_DESCRIPTION = _COMMON + "this task searches each topic's full corpus, distractors included."
RERANKING_DESCRIPTION = (
    _COMMON + "this task reranks each query's fixed hybrid candidates (RRF of BM25 and dense, top 100, the "
    "`T-top_ranked` config): the corpus is restricted to those candidates, so a cross-encoder or an embedding "
    "model reorders the same list."
)


def metadata_fields(name: str, task_type: str, source: DatasetSource, topics: list[str]) -> dict[str, Any]:
    """Keyword arguments of `mteb.TaskMetadata` for one task over the given repo and topics."""
    return {
        "name": name,
        "description": RETRIEVAL_DESCRIPTION if task_type == "Retrieval" else RERANKING_DESCRIPTION,
        "reference": "https://fresh-stack.github.io",
        "dataset": {"path": source.location, "revision": source.metadata_revision()},
        "type": task_type,
        "category": "t2t",
        "modalities": ["text"],
        "eval_splits": ["test"],
        "eval_langs": {topic: list(TOPIC_LANGUAGES.get(topic, ["eng-Latn"])) for topic in topics},
        "main_score": MAIN_SCORE,
        # Questions asked on Stack Overflow from 2023 on, taken from the October 2024 archive.
        "date": ("2023-01-01", "2024-10-31"),
        "domains": ["Programming", "Written"],
        "task_subtypes": ["Code retrieval", "Question answering"],
        "license": "cc-by-sa-4.0",
        "annotations_creators": "LM-generated",
        "dialect": [],
        "sample_creation": "found",
        "bibtex_citation": CITATION,
    }


def score_key(measure: Measure) -> str:
    """mteb's spelling of a measure id: `alpha_ndcg@10` -> `alpha_ndcg_at_10`."""
    return f"{measure.family}_at_{measure.k}"
