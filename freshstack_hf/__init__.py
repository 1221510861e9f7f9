"""FreshStack-HF: build, publish, load and score FreshStack topics.

Rooms:

* `topic` (the `Topic`), `records`, `topic_check` (validation) and `split_stats`: what a topic is;
* `repo/`: the dataset repo on disk and the Hub, read, written, checked, and the official release schema;
* `pipeline/`: building a topic from a Stack Exchange dump and GitHub repositories; `publish`: sending it to the Hub;
* `retrieval/`: BM25, dense retrieval, fusion, reranking; `baselines/`: the registry of retrieval methods run as
  baselines and the candidate lists; `runs/`: run files; `metrics/`: the nugget-aware measures;
* `answers/` (the RAG track), `llm/` (the judge's client), `holes/` (judging what a system finds unjudged),
  `drift/` (two snapshots compared), `windows` (contamination windows);
* `samples/`: the demo's topic, synthetic topics and Nano subsets; `templates/`: the cards' text;
* `cli/`: the `freshstack-hf` command, one module per subcommand;
* shared by all: `defaults`, `errors`, `atomic` (whole-file writes), `owner_only` (private files), `cl100k`
  (the corpus tokenizer offline).

Public names are resolved lazily (PEP 562), so `import freshstack_hf` costs nothing until a name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from freshstack_hf._version import __version__

_EXPORTS = {
    "FreshStackError": "freshstack_hf.errors",
    "ValidationError": "freshstack_hf.errors",
    "Topic": "freshstack_hf.topic",
    "Dataset": "freshstack_hf.repo.dataset",
    "Doc": "freshstack_hf.records",
    "Query": "freshstack_hf.records",
    "Nugget": "freshstack_hf.records",
    "NuggetJudgment": "freshstack_hf.records",
    "TopicStats": "freshstack_hf.records",
    "load_topic": "freshstack_hf.repo.reader",
    "list_topics": "freshstack_hf.repo.reader",
    "load_candidates": "freshstack_hf.repo.reader",
    "write_topics": "freshstack_hf.repo.writer",
    "validate_repo": "freshstack_hf.repo.check",
    "validate_topic": "freshstack_hf.topic_check",
    "topic_stats": "freshstack_hf.split_stats",
}

__all__ = [
    "Dataset",
    "Doc",
    "FreshStackError",
    "Nugget",
    "NuggetJudgment",
    "Query",
    "Topic",
    "TopicStats",
    "ValidationError",
    "__version__",
    "list_topics",
    "load_candidates",
    "load_topic",
    "topic_stats",
    "validate_repo",
    "validate_topic",
    "write_topics",
]

if TYPE_CHECKING:  # pragma: no cover
    from freshstack_hf.errors import FreshStackError, ValidationError
    from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query, TopicStats
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.dataset import Dataset
    from freshstack_hf.repo.reader import list_topics, load_candidates, load_topic
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.split_stats import topic_stats
    from freshstack_hf.topic import Topic
    from freshstack_hf.topic_check import validate_topic


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'freshstack_hf' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
