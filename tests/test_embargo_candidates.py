"""The embargoed questions' candidate lists: under an embargo the `candidates` stage makes BM25, dense and hybrid
lists for the embargoed questions too, over the same corpus and by the same methods, and `write` puts them in the
private revision exactly as it puts the public ones in the public revision, so a reranker or a Nano-track model has
candidates to start from when a worker scores it live.

Real components: a whole offline `build --snapshot` with a 45-day embargo on the refresh tests' topic (at D2 the
kept questions are 1007 and 1013, public, and 1011, embargoed), the library's own candidate lists for the
expected values, the repo writer, and the worker with its job kinds for the live records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from refresh_topic import D2, definition, make_three_commits
from test_embargo import embargoed, leaks, manifest, secrets

from freshstack_hf.baselines.candidates import topic_candidates
from freshstack_hf.cli.main import main
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import write_topics

STEMS = ("bm25", "dense", "top_ranked")
HELD = ["1011"]  # the one kept question asked within 45 days before D2


def without_costs(record: dict[str, Any]) -> dict[str, Any]:
    """A candidates record less what depends on the machine and the embedding cache (timings, encoded/cached)."""
    kept = json.loads(json.dumps(record))
    for name in ("bm25", "dense"):
        kept[name].pop("seconds", None)
        for cost in ("encoded", "cached"):
            kept[name]["params"].pop(cost, None)
    return kept


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Any]:
    """One offline `build --snapshot D2` with the embargo: the public revision, the private one, the work folder."""
    root = tmp_path_factory.mktemp("embargo-candidates")
    make_three_commits(root)
    spec = embargoed(definition(root))
    out = root / "out" / "freshstack"
    assert main(["build", str(spec), "--out", str(out), "--snapshot", D2, "--quiet"]) == 0
    (work,) = {p.parents[2] for p in root.rglob("candidates/private/top_ranked.parquet")}
    return {
        "root": root,
        "spec": spec,
        "out": out,
        "public": Path(f"{out}@{D2}"),
        "private": Path(f"{root / 'private' / 'freshstack'}@{D2}"),
        "work": work,
    }


@pytest.mark.slow
def test_the_private_revision_holds_the_embargoed_questions_lists_made_as_the_public_ones(built):
    private, public = Dataset(built["private"]), Dataset(built["public"])
    assert private.topic("laravel").query_ids == HELD
    corpus = set(private.doc_ids(["laravel"]))
    assert corpus == set(public.doc_ids(["laravel"]))  # the same corpus on both sides
    expected, record = topic_candidates(private.topic("laravel"))  # the same methods and settings, from the repo
    for stem in STEMS:
        lists = private.candidates("laravel", stem)
        assert list(lists) == HELD
        assert all(lists[q] and set(lists[q]) <= corpus for q in HELD), stem
        assert lists == expected[stem], stem
    stored = manifest(built["private"])["topics"]["laravel"]["candidates"]
    assert without_costs(stored) == without_costs(record)  # the private manifest says what they are
    dense = stored["dense"]["params"]
    assert dense["encoded"] + dense["cached"] == len(HELD)  # the question only: the public lists' vectors reused
    assert main(["validate", str(built["private"])]) == 0


def test_the_public_revision_is_what_the_public_questions_alone_make(built, tmp_path):
    """The public candidate files are byte for byte the lists made from the public questions alone, written by the
    same writer; their record is that of those lists; nothing of the embargoed question is in either."""
    public = Dataset(built["public"])
    topic = public.topic("laravel")
    assert topic.query_ids == ["1007", "1013"]
    lists, record = topic_candidates(topic)
    again = write_topics(
        tmp_path / "again", [topic], extra_tables={"laravel": {s: candidates_table(t) for s, t in lists.items()}}
    )
    for stem in STEMS:
        written = layout.config_path(built["public"], "laravel", stem).read_bytes()
        assert written == layout.config_path(again, "laravel", stem).read_bytes(), stem
    stored = manifest(built["public"])["topics"]["laravel"]["candidates"]
    assert without_costs(stored) == without_costs(record)
    assert leaks(built["public"], *secrets(built["private"])) == []
    # the stage's record, which the build prints and keeps with the public one, counts them and names none
    stage_record = (built["work"] / "candidates" / "record.json").read_text(encoding="utf-8")
    assert json.loads(stage_record)["embargoed_queries"] == 1 and "1011" not in stage_record


def test_the_embargoed_lists_are_made_once_and_refused_when_they_are_not_the_embargoed_questions(built, capsys):
    """`--stages candidates,write` with nothing changed resumes the lists; lists that are not the embargoed
    questions' (made before the last `filter`) are refused by `write`, which then writes neither revision."""
    out, work, spec = built["out"], built["work"], built["spec"]
    held = work / "candidates" / "private" / "top_ranked.parquet"
    before = held.read_bytes()
    args = ["build", str(spec), "--out", str(out), "--snapshot", D2]
    assert main([*args, "--stages", "candidates,write"]) == 0
    printed = capsys.readouterr().out
    assert "candidates: up to date" in printed
    assert held.read_bytes() == before
    private_manifest = built["private"] / "manifest.json"
    written = private_manifest.stat().st_mtime_ns
    public_lists = pq.read_table(work / "candidates" / "top_ranked.parquet")
    pq.write_table(public_lists, held)  # the public questions' lists where the embargoed ones' should be
    assert main([*args, "--stages", "write", "--no-resume", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "the candidate lists are not those of the embargoed questions" in err
    assert "--stages candidates,write" in err
    assert private_manifest.stat().st_mtime_ns == written  # nothing written
    assert main([*args, "--stages", "candidates,write", "--no-resume", "--quiet"]) == 0  # made again
    assert pq.read_table(held).column("query-id").to_pylist() == HELD


@pytest.mark.slow
def test_two_sets_of_questions_over_one_corpus_index_and_encode_it_once(monkeypatch):
    """With a `CorpusMemo` the second set's lists search the first's BM25 index and document vectors, and are the
    lists each set gets alone; a corpus of other texts is indexed anew."""
    import dataclasses

    from freshstack_hf.baselines.registry import Resources
    from freshstack_hf.baselines.retrievers import CorpusMemo
    from freshstack_hf.defaults import dense_retriever
    from freshstack_hf.retrieval.bm25 import BM25Index
    from freshstack_hf.retrieval.dense import DenseRetriever
    from freshstack_hf.samples.synth import SynthConfig, synth_topic
    from freshstack_hf.topic import Topic

    full = synth_topic("alpha", SynthConfig(queries=8, docs=60, seed=2))
    docs = [dataclasses.replace(d, text=d.text[:120]) for d in full.docs]

    def part(ids: set[str], corpus: list[Any]) -> Topic:
        keep = [q for q in full.queries if q.query_id in ids]
        judged = [j for j in full.judgments if j.query_id in ids]
        nuggets = [n for n in full.nuggets if n.query_id in ids]
        return Topic("alpha", queries=keep, nuggets=nuggets, docs=corpus, judgments=judged)

    first, second = {q.query_id for q in full.queries[:5]}, {q.query_id for q in full.queries[5:]}
    alone = {name: topic_candidates(part(ids, docs))[0] for name, ids in (("first", first), ("second", second))}
    built, encoded = [], []
    build, encode = BM25Index.build, DenseRetriever.encode
    monkeypatch.setattr(BM25Index, "build", classmethod(lambda cls, *a, **k: built.append(1) or build(*a, **k)))
    monkeypatch.setattr(
        DenseRetriever, "encode", lambda self, texts, **k: encoded.append((len(texts), k)) or encode(self, texts, **k)
    )
    resources = Resources(retriever=dense_retriever(), corpus=CorpusMemo())
    assert topic_candidates(part(first, docs), resources=resources)[0] == alone["first"]
    assert topic_candidates(part(second, list(docs)), resources=resources)[0] == alone["second"]
    assert len(built) == 1 and [n for n, k in encoded if not k] == [len(docs)]  # the corpus: once each
    other = [dataclasses.replace(d, text=d.text + " more") for d in docs]
    topic_candidates(part(second, other), resources=resources)
    assert len(built) == 2 and [n for n, k in encoded if not k] == [len(docs), len(docs)]


@pytest.mark.slow
def test_a_build_without_an_embargo_keeps_no_embargoed_lists(tmp_path):
    make_three_commits(tmp_path)
    spec = definition(tmp_path)
    out = tmp_path / "out" / "freshstack"
    assert main(["build", str(spec), "--out", str(out), "--snapshot", D2, "--quiet"]) == 0
    assert list(tmp_path.rglob("candidates/top_ranked.parquet")) and not list(tmp_path.rglob("candidates/private"))
    assert Dataset(Path(f"{out}@{D2}")).topic("laravel").query_ids == ["1007", "1011", "1013"]
