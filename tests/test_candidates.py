"""Candidate lists end to end on a small synthetic repo, with the real packaged MiniLM model."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cross_encoders import minilm_cross_encoder

from freshstack_hf import load_candidates, load_topic
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest

EXE = Path(sys.executable).with_name("freshstack-hf")


def cli(*args, env=None):
    return subprocess.run(
        [str(EXE), *args], capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


@pytest.fixture(scope="module")
def cand_repo(tmp_path_factory):
    from synthetic_repo import build_small_repo

    root = tmp_path_factory.mktemp("cand")
    repo = build_small_repo(root / "freshstack", queries=6, docs=700, doc_chars=200)
    cache = root / "cache"
    r = cli("candidates", str(repo), "--topic", "alpha", "--cache-dir", str(cache), "--json")
    assert r.returncode == 0, r.stderr
    return repo, cache, json.loads(r.stdout)


@pytest.mark.slow
def test_candidates_write_configs_that_load_and_validate(cand_repo):
    import datasets

    repo, _, records = cand_repo
    assert validate_repo(repo) == []
    topic = load_topic(repo, "alpha")
    ds = datasets.load_dataset(str(repo), "alpha-top_ranked", split="test")
    assert ds.column_names == ["query-id", "corpus-ids"] and ds.num_rows == 6
    view = datasets.load_dataset(str(repo), "reranking_hybrid", split="alpha")
    assert view.num_rows == 6
    lists = {stem: load_candidates(repo, "alpha", stem) for stem in ("bm25", "dense", "top_ranked")}
    assert all(len(ids) == 500 for ids in lists["dense"].values())
    # Lucene returns only documents sharing a term with the query: at most 500 (fewer on these short docs)
    bm25_lengths = [len(ids) for ids in lists["bm25"].values()]
    assert max(bm25_lengths) == 500 and min(bm25_lengths) > 100
    safeguarded = records["alpha"]["safeguard"]["appended"]
    for qid, ids in lists["top_ranked"].items():
        assert len(ids) == (101 if qid in safeguarded else 100)
        positives = {d for d, s in topic.qrels[qid].items() if s > 0}
        assert positives & set(ids), "every hybrid list holds a positive (the safeguard)"
        if qid in safeguarded:
            assert ids[100] == safeguarded[qid] and not positives & set(ids[:100])
    every = {d for stem in lists.values() for ids in stem.values() for d in ids}
    assert every <= topic.doc_ids
    manifest = read_manifest(repo)["topics"]["alpha"]["candidates"]
    assert manifest["dense"]["params"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert manifest["safeguard"]["queries"] == len(safeguarded)
    assert set(manifest["quality"]) == {"bm25", "dense", "hybrid_rrf", "hybrid_minmax"}
    card = (repo / "README.md").read_text()
    assert "## Candidate lists" in card and "| alpha | bm25 |" in card


@pytest.mark.slow
def test_second_dense_run_encodes_nothing(cand_repo, tmp_path):
    repo, cache, _ = cand_repo
    copy = tmp_path / "freshstack"
    shutil.copytree(repo, copy)
    r = cli("candidates", str(copy), "--topic", "alpha", "--cache-dir", str(cache), "--json")
    assert r.returncode == 0, r.stderr
    dense = json.loads(r.stdout)["alpha"]["dense"]["params"]
    assert dense["encoded"] == 0 and dense["cached"] == 700 + 6


@pytest.mark.slow
def test_retrieve_writes_runs_the_evaluator_scores(cand_repo, tmp_path):
    repo, cache, records = cand_repo
    run = tmp_path / "bm25.trec"
    r = cli("retrieve", str(repo), "--topic", "alpha", "--method", "bm25", "--out", str(run))
    assert r.returncode == 0, r.stderr
    lines = run.read_text().splitlines()
    expected = sum(len(ids) for ids in load_candidates(repo, "alpha", "bm25").values())
    assert len(lines) == expected and lines[0].split()[1] == "Q0"
    r = cli("evaluate", str(repo), "--topic", "alpha", "--run", str(run), "--json", "-")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["topics"]["alpha"]["metrics"]["alpha_ndcg@10"]
    assert got == pytest.approx(records["alpha"]["quality"]["bm25"]["alpha_ndcg@10"], abs=1e-12)
    hybrid = tmp_path / "hybrid.trec"
    r = cli(
        "retrieve", str(repo), "--topic", "alpha", "--method", "hybrid", "--cache-dir", str(cache), "--out", str(hybrid)
    )
    assert r.returncode == 0, r.stderr
    assert len(hybrid.read_text().splitlines()) == 6 * 100


@pytest.mark.slow
def test_unknown_method_is_refused(synth_repo):
    r = cli("retrieve", str(synth_repo), "--method", "tfidf", "--out", "x.trec")
    assert r.returncode == 2 and "invalid choice: 'tfidf'" in r.stderr


@pytest.mark.slow
def test_rerank_cli_reorders_the_head_and_keeps_the_tail(cand_repo, tmp_path_factory, tmp_path):
    repo, _, _ = cand_repo
    ce_dir = minilm_cross_encoder(tmp_path_factory.mktemp("ce") / "reranker")  # reads 128 tokens of a pair
    out = tmp_path / "rerank.trec"
    r = cli("rerank", str(repo), "--topic", "alpha", "--model", str(ce_dir), "--top-k", "10", "--out", str(out))
    assert r.returncode == 0, r.stderr
    ranked: dict[str, list[str]] = {}
    for line in out.read_text().splitlines():
        qid, _, doc, _rank, _score, _tag = line.split()
        ranked.setdefault(qid, []).append(doc)
    candidates = load_candidates(repo, "alpha", "top_ranked")
    assert set(ranked) == set(candidates)
    for qid, ids in candidates.items():
        assert sorted(ranked[qid][:10]) == sorted(ids[:10])  # the head is a reordering of the top 10
        assert ranked[qid][10:] == ids[10:]  # the tail keeps the candidate order
