"""`build_small_repo`: a two-topic synthetic dataset repo with short documents and a `top_ranked` list per query.

Its documents are cut short so that a real model encodes it in seconds on a CPU. Used by the loaders, MTEB,
ir_datasets, candidates and leaderboard tests (and by conftest.py's `lb_dataset`).
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from freshstack_hf.topic import Topic

TOPICS = ("alpha", "beta")


def build_small_repo(root: Path, queries: int = 6, docs: int = 300, doc_chars: int = 160) -> Path:
    """Synthetic topics with short documents, plus a `top_ranked` list per query (positives + random docs)."""
    from freshstack_hf.repo.tables import candidates_table
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    topics, extra = [], {}
    for seed, name in enumerate(TOPICS):
        full = synth_topic(name, SynthConfig(queries=queries, docs=docs, seed=11 + seed))
        short = [dataclasses.replace(d, text=d.text[:doc_chars]) for d in full.docs]
        topic = Topic(name, queries=full.queries, nuggets=full.nuggets, docs=short, judgments=full.judgments)
        rng = random.Random(seed)
        ids = [d.doc_id for d in short]
        lists = {}
        for q in topic.queries:
            positives = [d for d, rel in sorted(topic.qrels.get(q.query_id, {}).items()) if rel > 0][:3]
            lists[q.query_id] = list(dict.fromkeys(rng.sample(ids, 12) + positives))
        topics.append(topic)
        extra[name] = {"top_ranked": candidates_table(lists)}
    write_topics(root, topics, source={"kind": "synthetic", "note": "short docs"}, extra_tables=extra)
    return root
