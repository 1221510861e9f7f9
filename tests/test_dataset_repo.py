import contextlib
import json
import shutil

import pyarrow.parquet as pq
import pytest

from freshstack_hf import list_topics, load_topic, write_topics
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.writer import transaction
from freshstack_hf.samples.synth import SynthConfig, synth_topic

OFFICIAL_COLUMNS = ["query_id", "query_title", "query_text", "answer_id", "answer_text", "metadata", "nuggets"]


@pytest.mark.slow
def test_written_repo_validates_and_reads_back(synth_repo):
    assert validate_repo(synth_repo) == []
    assert list_topics(synth_repo) == ["alpha", "beta"]
    original = synth_topic("alpha", SynthConfig(queries=12, docs=600, seed=7))
    loaded = load_topic(synth_repo, "alpha")
    assert loaded.queries == original.queries
    assert loaded.nuggets == original.nuggets
    assert loaded.judgments == original.judgments
    assert loaded.docs == original.docs


def test_card_declares_every_config_and_view(synth_repo):
    card = (synth_repo / "README.md").read_text()
    for name in ("alpha", "alpha-corpus", "alpha-queries", "alpha-nuggets", "alpha-qrels", "alpha-nugget-qrels"):
        assert f"config_name: {name}\n" in card
    for view in ("corpus", "queries", "nuggets", "qrels"):
        assert f"config_name: {view}\n" in card
    assert "license: cc-by-sa-4.0" in card
    assert "thakur2025freshstack" in card
    assert "| alpha | 12 | 600 |" in card  # split statistics table
    manifest = json.loads((synth_repo / "manifest.json").read_text())
    assert manifest["topics"]["alpha"]["source"] == {"kind": "synthetic", "seed": 7}
    assert manifest["topics"]["alpha"]["stats"]["corpus"] == 600


@pytest.mark.slow
def test_real_load_dataset_from_parent_folder(synth_repo, monkeypatch):
    import datasets

    monkeypatch.chdir(synth_repo.parent)
    ds = datasets.load_dataset("freshstack", "alpha", split="test")
    assert ds.column_names == OFFICIAL_COLUMNS
    assert ds.num_rows == 12
    assert set(ds[0]["nuggets"][0]) == {"_id", "text", "relevant_corpus_ids", "non_relevant_corpus_ids"}
    corpus = datasets.load_dataset(str(synth_repo), "alpha-corpus", split="corpus")
    assert corpus.num_rows == 600 and corpus.column_names == ["_id", "text", "metadata"]
    view = datasets.load_dataset(str(synth_repo), "corpus", split="beta")
    assert view.num_rows == 600 and view[0]["_id"].startswith("beta")
    qrels = datasets.load_dataset(str(synth_repo), "alpha-qrels", split="test")
    assert qrels.column_names == ["query-id", "corpus-id", "score"]
    assert set(qrels["score"]) >= {0, 1}


@pytest.mark.slow
def test_replacing_one_topic_keeps_the_other(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    beta_before = (repo / "data/beta/corpus.parquet").read_bytes()
    write_topics(repo, [synth_topic("alpha", SynthConfig(queries=3, docs=50, seed=1))])
    assert (repo / "data/beta/corpus.parquet").read_bytes() == beta_before
    assert len(load_topic(repo, "alpha").queries) == 3
    assert len(load_topic(repo, "beta").queries) == 12
    assert validate_repo(repo) == []


def test_failed_write_leaves_previous_repo_untouched(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    before = {p.relative_to(repo): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    with pytest.raises(RuntimeError), transaction(repo) as st:
        st.remove_topic("alpha")
        st.write_table("alpha", "corpus", pq.read_table(repo / "data/beta/corpus.parquet"))
        raise RuntimeError("disk full")
    after = {p.relative_to(repo): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir()] == ["freshstack"]  # no staging left behind


def test_staged_write_does_not_write_through_hard_links(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    live = repo / "data/alpha/nuggets.parquet"
    before = live.read_bytes()
    with contextlib.suppress(RuntimeError), transaction(repo) as st:
        st.write_table("alpha", "nuggets", pq.read_table(repo / "data/beta/nuggets.parquet"))
        raise RuntimeError("abort")
    assert live.read_bytes() == before


def test_load_topic_errors_name_the_fix(synth_repo, tmp_path):
    with pytest.raises(FreshStackError, match="available topics: alpha, beta"):
        load_topic(synth_repo, "gamma")
    with pytest.raises(FreshStackError, match="not found"):
        load_topic(tmp_path / "nope", "alpha")


def test_hub_id_goes_through_snapshot_download(synth_repo, tmp_path, monkeypatch):
    """A Hub id is resolved by the real huggingface_hub code; offline, it is served from the Hub cache layout."""
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snap = cache / "datasets--me--freshstack" / "snapshots" / commit
    shutil.copytree(synth_repo, snap)
    (cache / "datasets--me--freshstack" / "refs").mkdir(parents=True)
    (cache / "datasets--me--freshstack" / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    topic = load_topic("me/freshstack", "beta")
    assert len(topic.queries) == 12 and len(topic.docs) == 600
    with pytest.raises(FreshStackError, match="could not fetch dataset repo 'me/missing'"):
        load_topic("me/missing", "beta")


def test_layout_paths_match_card_paths():
    assert layout.relative_path("alpha", "corpus") == "data/alpha/corpus.parquet"
    names = [c.config_name("t") for c in layout.CONFIGS]
    assert names[:6] == ["t", "t-corpus", "t-queries", "t-nuggets", "t-qrels", "t-nugget-qrels"]


@pytest.mark.slow
def test_rebuilt_repo_is_not_served_from_a_stale_datasets_cache(tmp_path):
    """`datasets` keys a local folder's cache on the card, not the files: the card must change with them."""
    import datasets

    repo = tmp_path / "freshstack"
    ids = []
    for seed in (1, 2):
        write_topics(repo, [synth_topic("t", SynthConfig(queries=3, docs=40, seed=seed))])
        ids.append(datasets.load_dataset(str(repo), "t-queries", split="test")["_id"])
        assert list(ids[-1]) == [q.query_id for q in load_topic(repo, "t").queries]
    assert list(ids[0]) != list(ids[1])


def test_card_dataset_info_records_rows_and_bytes(synth_repo):
    import yaml

    front = yaml.safe_load((synth_repo / "README.md").read_text().split("---")[1])
    infos = {i["config_name"]: i for i in front["dataset_info"]}
    corpus = infos["alpha-corpus"]["splits"][0]
    assert corpus == {
        "name": "corpus",
        "num_bytes": (synth_repo / "data/alpha/corpus.parquet").stat().st_size,
        "num_examples": 600,
    }
    assert [s["name"] for s in infos["corpus"]["splits"]] == ["alpha", "beta"]


def test_hand_edited_file_is_flagged(synth_repo, tmp_path):
    repo = tmp_path / "freshstack"
    shutil.copytree(synth_repo, repo)
    path = repo / "data/beta/nuggets.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path)
    messages = [str(p) for p in validate_repo(repo)]
    assert any(
        m.startswith("beta-nuggets: file data/beta/nuggets.parquet changed after it was written") for m in messages
    )


@pytest.mark.slow
def test_local_revision_is_the_data_not_the_build_time(tmp_path):
    from freshstack_hf.repo.reader import local_revision

    repo = tmp_path / "freshstack"
    write_topics(repo, [synth_topic("t", SynthConfig(queries=3, docs=40, seed=1))])
    first = local_revision(repo)
    write_topics(repo, [synth_topic("t", SynthConfig(queries=3, docs=40, seed=1))])  # same data, new manifest
    assert local_revision(repo) == first and first.startswith("local-")
    write_topics(repo, [synth_topic("t", SynthConfig(queries=3, docs=40, seed=2))])
    assert local_revision(repo) != first


def test_a_revision_reads_each_unchanged_file_once_across_processes(tmp_path, monkeypatch):
    import hashlib
    import os

    from freshstack_hf.repo import reader

    monkeypatch.setenv("FRESHSTACK_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "freshstack"
    write_topics(repo, [synth_topic("t", SynthConfig(queries=3, docs=40, seed=1))])
    hashed: list[str] = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda handle, name: hashed.append(handle.name) or real(handle, name))
    first = reader.local_revision(repo)
    files = len(list((repo / "data").rglob("*.parquet")))
    assert len(hashed) == files > 3  # every data file read once
    assert reader.local_revision(repo) == first and len(hashed) == files  # the cache file answers: nothing read
    corpus = next((repo / "data").rglob("corpus.parquet"))
    before = corpus.stat()
    corpus.write_bytes(corpus.read_bytes()[:-1] + b"\0")  # same size, new bytes, a new mtime (made sure of below)
    os.utime(corpus, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert reader.local_revision(repo) != first and hashed[files:] == [str(corpus)]
    (tmp_path / "cache" / "file-digests.json").write_text("{not json")  # a damaged cache costs only the hashing
    assert reader.local_revision(repo) != first and len(hashed) == 2 * files + 1
