"""Release-size runs on the board: a run 1,000 docs deep is read as a stream and kept to the depth the board scores
and archives (its top 100 per query), the cap applies to that part (and to the text read, 25 times the cap), and
one ranking is one row whatever its encoding: TREC or JSON, gzipped or not, lines in any order.

The repo is one synthetic topic of 1,200 documents, so that a BM25 run really is 1,000 deep.
"""

from __future__ import annotations

import gzip
import json
import random

import pytest

from freshstack_hf.baselines import retrievers
from freshstack_hf.metrics import MEASURES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import load_run, write_run
from leaderboard.scoring import ARCHIVE_DEPTH
from leaderboard.store.store import Store
from leaderboard.submission.uploaded_files import file_sha256
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

CAP = 120_000  # the plain 1,000-deep run is about 5 times this; what the board keeps of it, well under


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    from freshstack_hf.repo.writer import write_topics
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    root = tmp_path_factory.mktemp("release_size")
    topic = synth_topic("deep", SynthConfig(queries=8, docs=1200, seed=5))
    write_topics(root / "freshstack", [topic])
    ids = [d.doc_id for d in topic.docs]
    run = {}
    for query, hits in retrievers.bm25(topic, k=1000).run.items():  # BM25's hits, then the rest of the corpus
        ranked = [d for d, _ in hits] + sorted(set(ids) - {d for d, _ in hits})
        run[query] = {d: (1000 - rank) / 7 for rank, d in enumerate(ranked[:1000])}
    assert all(len(docs) == 1000 for docs in run.values())
    plain = write_run(run, root / "deep.trec", tag="bm25-1000")
    run = load_run(plain).run  # the scores as the file has them
    packed = root / "deep.trec.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    as_json = root / "deep.json"
    as_json.write_text(json.dumps(run))
    lines = plain.read_text().splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    shuffled = root / "shuffled.trec"
    shuffled.write_text("".join(lines))
    return Dataset(root / "freshstack"), run, {"plain": plain, "gzip": packed, "json": as_json, "shuffled": shuffled}


@pytest.fixture
def store(tmp_path):
    with Store(f"sqlite:///{tmp_path / 'board.db'}") as opened:
        opened.create_all()
        yield opened


@pytest.mark.slow
def test_a_1000_deep_gzipped_run_is_accepted_and_scored_as_the_cli_scores_it(deep, store, freshstack_main, capsys):
    dataset, run, files = deep
    assert files["plain"].stat().st_size > 4 * CAP  # refused by the cap as the file's size, before
    outcome = RunSubmitter(store, dataset, max_file_bytes=CAP, resamples=0).submit(files["gzip"], name="deep")
    assert outcome.status == "scored", outcome.message

    args = ["evaluate", str(dataset.folder), "--run", str(files["gzip"]), "--resamples", "1", "--json", "-"]
    assert freshstack_main(args) == 0
    cli = json.loads(capsys.readouterr().out)["topics"]["deep"]["metrics"]
    stored = {r["measure"]: r for r in store.results_for(outcome.system_id)}
    assert set(stored) == {m.id for m in MEASURES}
    for measure, row in stored.items():
        assert row["value"] == cli[measure], measure  # the top 100 kept scores as the whole run does
        assert len(row["per_query"]) == len(run)

    archived = store.blobs.ranking_of(outcome.system_id)["deep"]
    assert {len(docs) for docs in archived.values()} == {ARCHIVE_DEPTH}
    params = stored["recall@50"]["parameters"]
    assert (params["kept_depth"], params["max_depth"], params["format"]) == (ARCHIVE_DEPTH, 1000, "trec")


def test_one_ranking_is_one_row_whatever_its_encoding(deep, store):
    dataset, _, files = deep
    submitter = RunSubmitter(store, dataset, max_file_bytes=CAP, resamples=0, rate_limit=None)
    outcomes = {kind: submitter.submit(path, name=kind, identity="ip:1") for kind, path in files.items()}
    assert [o.status for o in outcomes.values()] == ["scored", "duplicate", "duplicate", "duplicate"]
    assert {o.system_id for o in outcomes.values()} == {outcomes["plain"].system_id}
    assert len(store.leaderboard_rows()) == 1
    logged = [row for row in store.audit.rows() if row.kind == "submit:run"]
    assert len(logged) == 4
    for row, path in zip(logged, files.values(), strict=True):  # the audit log keeps each upload's own bytes hash
        assert f"file sha256 {file_sha256(path)}" in row.detail


def test_the_cap_applies_to_what_the_board_keeps_and_names_the_depth_and_the_flag(deep, store, tmp_path):
    dataset, run, files = deep
    shallow = write_run({q: dict(list(docs.items())[:ARCHIVE_DEPTH]) for q, docs in run.items()}, tmp_path / "s.trec")
    kept = shallow.stat().st_size
    small = RunSubmitter(store, dataset, max_file_bytes=kept // 2, resamples=0)
    refused = small.submit(shallow, name="too much kept")
    assert refused.status == "refused"
    assert f"top {ARCHIVE_DEPTH} per query" in refused.message and f"{kept // 2:,}-byte cap" in refused.message
    assert "--max-file-mb" in refused.message
    text_limit = RunSubmitter(store, dataset, max_file_bytes=CAP // 10, resamples=0).submit(files["gzip"], name="x")
    assert text_limit.status == "refused" and "once decompressed" in text_limit.message
    assert "--max-file-mb" in text_limit.message and "top 100 per query" in text_limit.message
    assert store.leaderboard_rows() == []
