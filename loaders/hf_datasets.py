"""Reading a FreshStack dataset repo with Hugging Face `datasets`, and the one-liner for every other way in.

`repo` is a local folder or a Hub id (`ORG/freshstack`); both go through `datasets.load_dataset`, which reads
the card's `configs:` block. `repo=None` means the repo FRESHSTACK_DATASET names, else the published one at
its pinned revision (`loaders.source`), the same rule the MTEB task and ir_datasets follow.

One line per way in (`T` is a topic, e.g. `langchain`):

    # datasets: the official-schema rows, or any config (T-corpus, T-qrels, ...) by name
    queries = load_queries(None, "langchain")                # or load_dataset("freshstack", "langchain", split="test")
    # typed records and lazy iterators (queries, nuggets, judgments, qrels) from freshstack_hf
    topic = load_topic_records("langchain")
    # MTEB, from a shell (the installed import hook registers the tasks) or from Python
    mteb run -t FreshStack -m path/to/model --output-folder results
    mteb.evaluate(model, [loaders.mteb_tasks.FreshStack()])  # or FreshStackReranking() for the candidates
    # ir_datasets (and so ir_measures, PyTerrier's "irds:freshstack/langchain")
    dataset = ir_datasets.load("freshstack/langchain")       # /nuggets: nugget qrels; /top_ranked: candidates
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from freshstack_hf import load_topic
from freshstack_hf.repo.revisions import is_local, open_revision
from loaders.source import dataset_source as _resolve_source


def _load(repo: str | None, config: str, split: str, revision: str | None) -> Any:
    import datasets

    if repo is None:
        source = _resolve_source(revision=revision)
        repo, revision = source.location, source.revision
    elif revision:  # `datasets` ignores a folder's revision: a dated snapshot of a folder is its `@REV` sibling
        local = Path(repo).expanduser()
        if is_local(local):
            repo, revision = str(open_revision(local, revision)), None
    return datasets.load_dataset(repo, config, split=split, revision=revision)


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


def load_query_texts(repo: str | None, topic: str, revision: str | None = None):
    """`_id, text` with text = title + " " + body: what retrievers are given (BEIR / MTEB layout)."""
    return _load(repo, f"{topic}-queries", "test", revision)


def load_nuggets(repo: str | None, topic: str, revision: str | None = None):
    return _load(repo, f"{topic}-nuggets", "test", revision)


def load_candidates(repo: str | None, topic: str, kind: str = "top_ranked", revision: str | None = None):
    """Candidate lists (`query-id, corpus-ids`): `bm25`, `dense` (top 500) or `top_ranked` (hybrid top 100)."""
    return _load(repo, f"{topic}-{kind}", "test", revision)


def load_topic_records(topic: str, repo: str | None = None, revision: str | None = None):
    """A lazy `freshstack_hf.Topic` (typed records, qrels views) from the same repo the other loaders read."""

    source = _resolve_source(repo, revision)
    return load_topic(source.location, topic, source.revision)
