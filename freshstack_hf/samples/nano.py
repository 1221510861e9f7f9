"""Nano subsets: small copies of each topic for quick CPU evaluation (after NanoCodeRAG / NanoBEIR).

Per topic, at most `max_queries` queries (a seeded sample when there are more) and at most `max_docs` documents:
first every document judged for the kept queries (so the nugget judgments stay complete), then the
candidate lists' documents in rank order (hard negatives the baselines actually retrieve), then random
distractors. Candidate lists are cut to the kept documents, so reranking on Nano stays meaningful.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from freshstack_hf.repo import layout
from freshstack_hf.repo.reader import list_topics, load_candidates, load_topic, resolve_repo
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.topic import Topic

log = logging.getLogger(__name__)

CANDIDATE_STEMS = tuple(c.stem for c in layout.CONFIGS if c.kind == "candidates")


def nano_topic(
    topic: Topic,
    candidates: dict[str, dict[str, list[str]]],
    *,
    max_queries: int = 200,
    max_docs: int = 10_000,
    seed: int = 0,
) -> tuple[Topic, dict[str, dict[str, list[str]]], dict[str, Any]]:
    """The subset topic, its cut candidate lists (stem -> lists) and a record of how it was sampled."""
    rng = np.random.default_rng(seed)
    queries = topic.queries
    if len(queries) > max_queries:
        keep = set(rng.choice(len(queries), size=max_queries, replace=False).tolist())
        queries = [q for i, q in enumerate(queries) if i in keep]
    qids = {q.query_id for q in queries}
    judgments = [j for j in topic.judgments if j.query_id in qids]
    nuggets = [n for n in topic.nuggets if n.query_id in qids]

    chosen: dict[str, None] = dict.fromkeys(j.doc_id for j in judgments)  # ordered set
    n_judged = len(chosen)
    ranked = [lst for stem in CANDIDATE_STEMS for q, lst in candidates.get(stem, {}).items() if q in qids]
    depth = max((len(r) for r in ranked), default=0)
    for rank in range(depth):  # round-robin by rank: every query's top candidates before anyone's deep ones
        if len(chosen) >= max_docs:
            break
        for r in ranked:
            if rank < len(r) and r[rank] not in chosen:
                chosen[r[rank]] = None
                if len(chosen) >= max_docs:
                    break
    n_candidates = len(chosen) - n_judged
    all_ids = [d.doc_id for d in topic.docs]
    if len(chosen) < max_docs:
        rest = [i for i, d in enumerate(all_ids) if d not in chosen]
        take = min(max_docs - len(chosen), len(rest))
        for i in sorted(rng.choice(len(rest), size=take, replace=False).tolist()):
            chosen[all_ids[rest[i]]] = None
    docs = [d for d in topic.docs if d.doc_id in chosen]
    kept = set(chosen)
    cut = {
        stem: {q: [d for d in lists if d in kept] for q, lists in candidates.get(stem, {}).items() if q in qids}
        for stem in CANDIDATE_STEMS
        if stem in candidates
    }
    sampling = {
        "queries": len(queries),
        "queries_in_full_topic": len(topic.queries),
        "docs": len(docs),
        "docs_in_full_topic": len(all_ids),
        "judged_docs": n_judged,
        "candidate_docs": n_candidates,
        "random_distractors": len(docs) - n_judged - n_candidates,
        "max_queries": max_queries,
        "max_docs": max_docs,
        "seed": seed,
    }
    subset = Topic(topic.name, queries=queries, nuggets=nuggets, docs=docs, judgments=judgments)
    return subset, cut, sampling


def build_nano(
    source: str | Path,
    out: str | Path,
    *,
    topics: list[str] | None = None,
    max_queries: int = 200,
    max_docs: int = 10_000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Write the Nano repo for `topics` (default all) of `source`; returns the sampling record per topic."""
    repo = resolve_repo(source)
    names = topics or list_topics(repo)
    records: dict[str, dict[str, Any]] = {}
    for name in names:
        topic = load_topic(repo, name)
        candidates = {}
        for stem in CANDIDATE_STEMS:
            if layout.config_path(repo, name, stem).exists():
                candidates[stem] = load_candidates(repo, name, stem)
        subset, cut, sampling = nano_topic(topic, candidates, max_queries=max_queries, max_docs=max_docs, seed=seed)
        source_record = {"kind": "nano", "from": str(source), **sampling}
        extra = {name: {stem: candidates_table(lists) for stem, lists in cut.items()}}
        write_topics(out, [subset], source=source_record, extra_tables=extra)
        log.info("nano %s: %s", name, sampling)
        records[name] = sampling
    return records
