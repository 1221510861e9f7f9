"""One-liners for reading a FreshStack dataset repo with Hugging Face `datasets`.

`repo` is a local folder or a Hub id (`ORG/freshstack`); both go through `datasets.load_dataset`, which reads
the card's `configs:` block.

    from loaders.hf_datasets import load_queries, load_corpus
    queries = load_queries("freshstack", "langchain")     # official schema, split "test"
    corpus = load_corpus("freshstack", "langchain")       # _id, text, metadata
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_DATASET = "freshstack"


def dataset_source() -> str:
    """The repo named by FRESHSTACK_DATASET (a folder or Hub id), else `freshstack` in the working folder."""
    return os.environ.get("FRESHSTACK_DATASET", DEFAULT_DATASET)


def _load(repo: str | None, config: str, split: str, revision: str | None) -> Any:
    import datasets

    return datasets.load_dataset(repo or dataset_source(), config, split=split, revision=revision)


def load_queries(repo: str | None, topic: str, revision: str | None = None):
    """The official-schema rows (`query_id ... nuggets`), a drop-in for `freshstack/queries-oct-2024`."""
    return _load(repo, topic, "test", revision)


def load_corpus(repo: str | None, topic: str, revision: str | None = None):
    return _load(repo, f"{topic}-corpus", "corpus", revision)


def load_qrels(repo: str | None, topic: str, revision: str | None = None):
    return _load(repo, f"{topic}-qrels", "test", revision)


def load_nugget_qrels(repo: str | None, topic: str, revision: str | None = None):
    return _load(repo, f"{topic}-nugget-qrels", "test", revision)


def load_view(repo: str | None, view: str, topic: str, revision: str | None = None):
    """A Nano-style cross-topic view (`corpus`, `queries`, `nuggets`, `qrels`, ...) at split = topic."""
    return _load(repo, view, topic, revision)
