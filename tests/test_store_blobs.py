"""The store holds what rows depend on (`leaderboard.store.blobs`): rankings and answers as content-addressed blobs,
written with their rows, deduplicated, compressed, verified on read; the store's layout is versioned; an older
release's runs folder is imported on open; SQLite runs durable (WAL, synchronous FULL)."""

from __future__ import annotations

import gzip
import hashlib
import json
import random

import numpy as np
import pytest
from sqlalchemy import func, select, text
from store_rows import META, count, topic_scores

from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.run import top_docs
from leaderboard.store.archive import import_archive_folder, legacy_ranking_path, open_store
from leaderboard.store.blob_store import blob_refs, blobs
from leaderboard.store.blobs import Blob, BlobCorrupt
from leaderboard.store.ranking_blob import decode_ranking, encode_ranking
from leaderboard.store.schema import STORE_SCHEMA, store_meta
from leaderboard.store.store import Store


def ranking(seed: int, queries: int = 5, depth: int = 30, *, float32: bool = True) -> dict:
    """A two-topic ranking with long doc ids; float32 scores (a model's) or 4-decimal ones (a TREC file's)."""
    rng = random.Random(seed)
    out: dict = {}
    for topic in ("alpha", "beta"):
        for q in range(queries):
            scores = {}
            for d in rng.sample(range(5000), depth):
                value = float(np.float32(rng.random())) if float32 else round(rng.random(), 4)
                scores[f"{topic}/docs/guide/section_{d % 97}/page_{d}.md_{d * 10}_{d * 10 + 900}"] = value
            out.setdefault(topic, {})[f"{78000000 + seed * 100 + q}"] = scores
    return out


@pytest.mark.parametrize("scores", ["f32", "dec4", "text"])
def test_a_ranking_blob_gives_back_every_score_in_ranked_order(scores):
    """A model's float32 similarities, a TREC file's decimals (and negative ones), any other float: each kept in
    its own layout and given back exactly, ties in the evaluator's order, a query with no document kept too."""
    runs = ranking(1, float32=scores == "f32")
    runs["alpha"]["tied"] = {"b": 1.0, "a": 1.0, "c": 2.5, "d": -0.125}  # ties: doc id descending, as the evaluator
    runs["beta"]["empty"] = {}
    if scores == "dec4":
        runs["alpha"]["negative"] = {"x": -3.5, "y": -12.0001, "z": 0.0}
    if scores == "text":
        runs["beta"]["thirds"] = {"p": 1 / 3, "q": 2 / 3, "r": 1e-300}
    data = encode_ranking(runs)
    assert json.loads(data.split(b"\n")[1])["scores"] == scores
    decoded = decode_ranking(data)
    assert decoded == runs  # every score exactly
    for topic, by_query in runs.items():
        for query, scores in by_query.items():
            assert list(decoded[topic][query]) == top_docs(scores, len(scores))  # in the evaluator's order
    assert list(decoded["alpha"]["tied"]) == ["c", "b", "a", "d"]


def test_equal_rankings_have_equal_bytes_whatever_their_dict_order():
    runs = ranking(2)
    shuffled = {t: {q: dict(reversed(list(d.items()))) for q, d in reversed(list(r.items()))} for t, r in runs.items()}
    assert encode_ranking(dict(reversed(list(shuffled.items())))) == encode_ranking(runs)
    assert Blob.ranking(shuffled).sha256 == Blob.ranking(runs).sha256
    assert encode_ranking({}) and decode_ranking(encode_ranking({})) == {}


def test_a_ranking_blob_is_smaller_than_the_gzipped_json_it_replaces():
    runs = ranking(3, queries=40, depth=100)
    blob = Blob.ranking(runs)
    gzipped = len(gzip.compress(json.dumps(runs, separators=(",", ":")).encode()))
    assert blob.size > len(blob.data) and len(blob.data) < 0.6 * gzipped
    assert decode_ranking(blob.raw()) == runs


def test_blobs_are_stored_with_their_row_deduplicated_and_dropped_with_the_last_row(store_url):
    runs = ranking(4)
    with Store(store_url) as store:
        store.create_all()
        kept = {"results": {"alpha": topic_scores()}, "meta": META, "blobs": {"ranking": Blob.ranking(runs)}}
        first, created = store.add_system(name="first", kind="run", content_hash="h1", **kept)
        again, created_again = store.add_system(name="first again", kind="run", content_hash="h1", **kept)
        assert created and not created_again and again.id == first.id
        second, _ = store.add_system(name="same ranking", kind="run", content_hash="h2", **kept)
        assert count(store, blobs) == 1 and count(store, blob_refs) == 2  # one content, two rows need it
        assert store.blobs.ranking_of(first.id) == runs == store.blobs.ranking_of(second.id)
        [usage, _] = store.blobs.usage()
        assert usage["media"] == "ranking" and usage["n"] == 2 and usage["stored_size"] < usage["size"]
        assert [s.id for s, _ in store.blobs.rankings()] == [first.id, second.id]

        deleted = store.moderation.delete_system(first.id, reason="spam", by="local:test")
        assert deleted.blobs == ()  # still needed by #2
        assert count(store, blobs) == 1 and store.blobs.ranking_of(first.id) is None
        assert store.moderation.delete_system(second.id, reason="spam", by="local:test").blobs == (usage["sha256"],)
        assert count(store, blobs) == 0 and count(store, blob_refs) == 0


def test_a_row_that_cannot_be_stored_leaves_no_blob(store_url):
    """Blob and row share one transaction: a failure storing the scores stores neither."""
    bad = topic_scores() | {"metrics": {"alpha_ndcg@10": float("nan")}}
    with Store(store_url) as store:
        store.create_all()
        with pytest.raises(ValueError, match="only finite scores"):
            store.add_system(
                name="x",
                kind="run",
                content_hash="h",
                results={"t": bad},
                meta=META,
                blobs={"ranking": Blob.ranking(ranking(5))},
            )
        assert (count(store, blobs), count(store, blob_refs), store.find_system("h")) == (0, 0, None)


def test_a_damaged_blob_is_refused_naming_it_and_the_cache_never_overrides_the_store(tmp_path):
    runs = ranking(6)
    with Store(f"sqlite:///{tmp_path / 'lb.db'}", cache_dir=tmp_path / "cache") as store:
        store.create_all()
        system, _ = store.add_system(name="r", kind="run", content_hash="h", blobs={"ranking": Blob.ranking(runs)})
        sha = store.blobs.refs_of(system.id)["ranking"]
        assert store.blobs.get(sha) == encode_ranking(runs)  # read once: now in the local cache, verified
        cached = tmp_path / "cache" / "blobs" / sha[:2] / sha
        assert cached.read_bytes() == encode_ranking(runs)
        cached.write_bytes(b"a changed copy")  # a damaged cache file is ignored: the store is the place of record
        assert store.blobs.get(sha) == encode_ranking(runs)
        cached.unlink()
        with store.db.write() as conn:
            conn.execute(blobs.update().where(blobs.c.sha256 == sha).values(data=Blob.of(b"other", "ranking").data))
        with pytest.raises(BlobCorrupt, match=rf"stored blob {sha} is damaged: .*admin import"):
            store.blobs.get(sha)


def test_a_store_laid_out_by_a_newer_release_is_refused_before_anything_changes(store_url, capsys):
    from freshstack_hf.cli.main import main

    with Store(store_url) as store:
        store.create_all()
        with store.db.read() as conn:
            assert conn.execute(select(store_meta.c.value).where(store_meta.c.key == "schema")).scalar() == str(
                STORE_SCHEMA
            )
        store.add_system(name="kept", kind="run", content_hash="h", results={"t": topic_scores()}, meta=META)
        with store.db.write() as conn:
            conn.execute(store_meta.update().values(value=str(STORE_SCHEMA + 1)))
        before = store.audit.rows()
    with (
        Store(store_url) as store,
        pytest.raises(FreshStackError, match=rf"newer freshstack-hf \(store schema {STORE_SCHEMA + 1}.*Upgrade"),
    ):
        store.create_all()
    assert main(["admin", "log", "--store", store_url]) == 2
    assert f"store schema {STORE_SCHEMA + 1}" in capsys.readouterr().err
    with Store(store_url) as store, store.db.read() as conn:
        assert conn.execute(select(store_meta.c.value)).scalar() == str(STORE_SCHEMA + 1)  # left as it was
        assert store.audit.rows() == before


def test_sqlite_runs_in_wal_mode_with_a_durable_synchronous_setting(tmp_path):
    with Store(f"sqlite:///{tmp_path / 'lb.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL: a commit survives a power cut


def test_an_older_store_and_its_runs_folder_are_migrated_on_open(tmp_path, lb_dataset, bm25_runs, capsys):
    """A store made before blobs existed (no blob tables, no recorded layout), its rankings and answers in a runs
    folder as the older release wrote them: opening it imports every file a row needs, once, and leaves the folder
    as it was; the rows then need the folder no more."""
    from freshstack_hf.cli.main import main

    url = f"sqlite:///{tmp_path / 'old.db'}"
    runs_dir = tmp_path / "runs"
    answers = "one answer line\n"
    sha = hashlib.sha256(answers.encode()).hexdigest()
    with Store(url) as store:
        store.create_all()
        for name in ("with file", "without file", "deleted"):
            store.add_system(name=name, kind="run", content_hash=f"h-{name}", results={"t": topic_scores()}, meta=META)
        rag, _ = store.add_system(
            name="answers", kind="answers", content_hash="h-rag", job=("answers_judge", {"answers_sha256": sha})
        )
        store.moderation.delete_system(3, reason="spam", by="local:test")
        with store.engine.begin() as conn:  # the layout of release 1: no blobs, nothing recorded
            for table in ("blob_refs", "blobs", "store_meta"):
                conn.execute(text(f"DROP TABLE {table}"))
    for name in ("with file", "deleted"):
        path = legacy_ranking_path(runs_dir, f"h-{name}")
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(json.dumps({"t": bm25_runs["alpha"]}).encode()))
    (runs_dir / "answers").mkdir()
    (runs_dir / "answers" / f"{sha}.jsonl.gz").write_bytes(gzip.compress(answers.encode()))
    before = sorted((p.relative_to(runs_dir), p.read_bytes()) for p in runs_dir.rglob("*") if p.is_file())

    assert main(["admin", "log", "--store", url, "--runs-dir", str(runs_dir)]) == 0
    with Store(url) as store:
        assert store.blobs.ranking_of(1) == {"t": bm25_runs["alpha"]}
        assert store.blobs.ranking_of(2) is None  # no file
        assert store.blobs.ranking_of(3) is None  # a tombstone keeps nothing
        assert store.blobs.system_blob(rag.id, "answers") == answers.encode()
        assert count(store, blobs) == 2
        with store.db.read() as conn:
            assert conn.execute(select(func.count()).select_from(store_meta)).scalar() == 1
        assert not import_archive_folder(store, runs_dir)  # once only
    assert sorted((p.relative_to(runs_dir), p.read_bytes()) for p in runs_dir.rglob("*") if p.is_file()) == before
    (runs_dir / "answers" / f"{sha}.jsonl.gz").unlink()
    for path in runs_dir.glob("*.json.gz"):
        path.unlink()
    with open_store(url) as store:  # the folder is gone: nothing is lost
        assert store.blobs.ranking_of(1) == {"t": bm25_runs["alpha"]}
        assert store.blobs.system_blob(rag.id, "answers") == answers.encode()


def test_an_archived_answers_file_that_lost_its_hash_is_refused_on_import(tmp_path):
    answers = "one answer line\n"
    sha = hashlib.sha256(answers.encode()).hexdigest()
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with Store(url) as store:
        store.create_all()
        store.add_system(name="a", kind="answers", content_hash="h", job=("answers_judge", {"answers_sha256": sha}))
    folder = tmp_path / "runs" / "answers"
    folder.mkdir(parents=True)
    (folder / f"{sha}.jsonl.gz").write_bytes(gzip.compress(b"changed\n"))
    with pytest.raises(FreshStackError, match=rf"{sha}.jsonl.gz: the archived answers do not match their hash"):
        open_store(url, tmp_path / "runs")
    with Store(url) as store:
        assert count(store, blobs) == 0
