import re

import pytest

from freshstack_hf.samples.synth import SynthConfig, synth_topic
from freshstack_hf.topic_check import validate_topic


@pytest.mark.slow
def test_synth_is_deterministic_and_seed_sensitive():
    a = synth_topic("x", SynthConfig(queries=5, docs=300, seed=3))
    b = synth_topic("x", SynthConfig(queries=5, docs=300, seed=3))
    c = synth_topic("x", SynthConfig(queries=5, docs=300, seed=4))
    assert a.queries == b.queries and a.docs == b.docs and a.judgments == b.judgments
    assert a.queries != c.queries


def test_synth_has_freshstack_shapes_and_validates():
    t = synth_topic("shape", SynthConfig(queries=30, docs=4000, seed=1))
    assert validate_topic(t) == []
    assert len(t.queries) == 30 and len(t.docs) == 4000
    per_query = [len(v) for v in t.query_nuggets.values()]
    assert min(per_query) >= 2 and max(per_query) <= 8
    assert all("```" in q.body for q in t.queries)  # questions carry code blocks
    assert sum(len(q.text.split()) for q in t.queries) / 30 > 80  # long queries
    rel = [j for j in t.judgments if j.relevance]
    assert len(rel) > 30 and len(t.judgments) > len(rel)  # judged non-relevant docs exist
    # several nuggets share a supporting doc somewhere (docs supporting more than one nugget)
    assert max(t.qrels[q][d] for q in t.qrels for d in t.qrels[q]) >= 2
    assert all(re.match(r"^[\w.-]+/.+_\d+_\d+$", d.doc_id) for d in t.docs)
    judged = {j.doc_id for j in t.judgments}
    assert len(t.docs) - len(judged) > len(t.docs) / 2  # mostly distractors
