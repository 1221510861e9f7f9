import pytest

from freshstack_hf import load_candidates, load_topic
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.samples.nano import build_nano, nano_topic
from freshstack_hf.samples.synth import SynthConfig, synth_topic
from freshstack_hf.topic_check import validate_topic


@pytest.mark.slow
def test_nano_keeps_judged_then_candidates_then_random():
    topic = synth_topic("t", SynthConfig(queries=30, docs=3000, seed=2))
    judged_all = {j.doc_id for j in topic.judgments}
    ids = [d.doc_id for d in topic.docs]
    unjudged = [d for d in ids if d not in judged_all]
    cands = {"bm25": {q.query_id: unjudged[i * 7 : i * 7 + 20] for i, q in enumerate(topic.queries)}}
    subset, cut, rec = nano_topic(topic, cands, max_queries=10, max_docs=600, seed=0)
    assert len(subset.queries) == 10 and validate_topic(subset) == []
    kept_q = set(subset.query_ids)
    judged = {j.doc_id for j in topic.judgments if j.query_id in kept_q}
    assert judged <= subset.doc_ids  # judgments stay complete
    assert len(subset.docs) == 600
    assert rec["judged_docs"] == len(judged)
    assert rec["candidate_docs"] == len({d for q in kept_q for d in cands["bm25"][q]} - judged)
    assert rec["random_distractors"] == 600 - rec["judged_docs"] - rec["candidate_docs"]
    assert set(cut["bm25"]) == kept_q
    assert all(set(v) <= subset.doc_ids for v in cut["bm25"].values())
    again = nano_topic(topic, cands, max_queries=10, max_docs=600, seed=0)[0]
    assert again.query_ids == subset.query_ids and again.docs == subset.docs  # deterministic


@pytest.mark.slow
def test_build_nano_writes_a_valid_repo_with_sampling_in_card(tmp_path):
    topic = synth_topic("t", SynthConfig(queries=8, docs=900, seed=3))
    lists = {q.query_id: [d.doc_id for d in topic.docs[:50]] for q in topic.queries}
    write_topics(tmp_path / "full", [topic], extra_tables={"t": {"top_ranked": candidates_table(lists)}})
    records = build_nano(tmp_path / "full", tmp_path / "nano", max_queries=5, max_docs=200, seed=1)
    assert records["t"]["queries"] == 5 and records["t"]["docs"] == 200
    assert validate_repo(tmp_path / "nano") == []
    assert len(load_topic(tmp_path / "nano", "t").docs) == 200
    assert len(load_candidates(tmp_path / "nano", "t", "top_ranked")) == 5
    card = (tmp_path / "nano" / "README.md").read_text()
    assert "## Nano sampling" in card and "config_name: t-top_ranked" in card
    assert read_manifest(tmp_path / "nano")["topics"]["t"]["source"]["max_docs"] == 200
