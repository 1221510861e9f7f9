"""Nugget views of the Detail tab: one query's nuggets against every system, and the nuggets no system covers.

A score says how much of a query's answer a system found; the nuggets say which parts. For one query, each nugget
is a row and each stored system a column, ticked where one of the system's top k documents (k of the headline
Coverage, 20) supports the nugget: a column of gaps is a system's blind spot, a row of gaps is a fact the whole
field misses. Per topic, the nuggets no system covers are what the benchmark finds hardest; their supporting
documents (ids and links into the repositories) show what a system would have had to retrieve.

Coverage here is the evaluator's: a nugget is covered when a top-k document has a positive judgment for it
(`runs.top_docs`, the evaluator's tie rule). Systems are those whose ranking is archived (uploads, model rows,
stored baselines); the tables are cached per store change.
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs.run import top_docs

K = next(m for m in HEADLINE if m.family == "coverage").k
COVERED, MISSED = "✓", ""


class NuggetViews:
    """The two views for the served dataset, from each stored system's archived ranking."""

    def __init__(self, store: Any, dataset: Dataset) -> None:
        self.store, self.dataset = store, dataset
        self._cache: dict[str, tuple[Any, dict[str, dict[str, dict[str, float]]]]] = {}  # topic -> (marker, runs)
        self._lock = threading.Lock()

    def _systems(self, topic: str) -> dict[str, dict[str, dict[str, float]]]:
        """System label -> its archived run on `topic`, for every scored system that has one; kept for the store's
        current state only (one entry a topic: every system's ranking, replaced, not added to, after a write)."""
        marker = self.store.change_marker()
        with self._lock:
            found = self._cache.get(topic)
            if found is None or found[0] != marker:
                runs = {
                    f"{system.name} (#{system.id})": runs[topic]
                    for system, runs in self.store.blobs.rankings(scored_only=True)
                    if runs.get(topic)
                }
                found = self._cache[topic] = (marker, runs)
            return found[1]

    def _support(self, topic: str) -> dict[str, set[str]]:
        """Nugget id -> the documents judged to support it."""
        support: dict[str, set[str]] = {}
        for j in self.dataset.topic(topic).judgments:
            if j.relevance > 0:
                support.setdefault(j.nugget_id, set()).add(j.doc_id)
        return support

    def queries(self, topic: str) -> list[tuple[str, str]]:
        """(label, query id) of the topic's judged queries, for the picker."""
        return [(f"{q.query_id}: {q.title[:80]}", q.query_id) for q in self.dataset.topic(topic).queries]

    def query_matrix(self, topic: str, query_id: str) -> pd.DataFrame:
        """One row per nugget of the query, one column per system: ticked where its top k covers the nugget."""
        nuggets = [n for n in self.dataset.topic(topic).nuggets if n.query_id == query_id]
        support = self._support(topic)
        columns = {"nugget": [n.nugget_id for n in nuggets], "text": [n.text[:160] for n in nuggets]}
        for label, run in self._systems(topic).items():
            top = set(top_docs(run.get(query_id, {}), K))
            columns[label] = [COVERED if support.get(n.nugget_id, set()) & top else MISSED for n in nuggets]
        return pd.DataFrame(columns)

    def uncovered_by_all(self, topic: str) -> pd.DataFrame:
        """The topic's nuggets that no system covers in its top k, with their supporting documents and links."""
        systems = self._systems(topic)
        support = self._support(topic)
        tops = {label: {qid: set(top_docs(scores, K)) for qid, scores in run.items()} for label, run in systems.items()}
        url = {d.doc_id: d.url for d in self.dataset.topic(topic).docs} if systems else {}
        rows = []
        for n in self.dataset.topic(topic).nuggets:
            docs = support.get(n.nugget_id, set())
            if not systems or any(docs & top.get(n.query_id, set()) for top in tops.values()):
                continue
            links = [f"[{d}]({url[d]})" if url.get(d) else d for d in sorted(docs)]
            rows.append([n.query_id, n.nugget_id, n.text[:200], len(docs), ", ".join(links[:5])])
        columns = ["query", "nugget", "nugget text", "supporting documents", "supporting documents (first 5)"]
        return pd.DataFrame(rows, columns=columns)
