"""How the answers track keeps its systems and scores in the store, shared by its submissions, jobs and table.

Stored measures are the library's answer measures prefixed `answers:` (`answers:citation_recall`), so they never
collide with the retrieval measures of the same store. An answers system's dedupe key is the file's hash with the
dataset revision (`answers:`), or for the project's baselines a hash of their configuration (`answers-baseline:`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from freshstack_hf.answers.scores import AnswerScores

PREFIX = "answers:"
BASELINE_PREFIX = "answers-baseline:"  # content hash prefix of the project's answer baselines


def measure_key(measure_id: str) -> str:
    """The store's measure id of an answer measure."""
    return PREFIX + measure_id


def stored_results(scores: AnswerScores, measures: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per topic {"metrics", "per_query", "ci"} with prefixed measure ids (all measures, or only `measures`)."""
    return scores.stored(measures, key=measure_key)


def answers_content_hash(file_hash: str, dataset_revision: str, prefix: str = PREFIX) -> str:
    """The same answer file on the same dataset revision is one system."""
    setting = hashlib.sha256(dataset_revision.encode()).hexdigest()[:16]
    return f"{prefix}{file_hash}:{setting}"
