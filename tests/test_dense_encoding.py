"""`encode_texts`' own batching (tokenized once, batches cut by a token budget) against plain
`SentenceTransformer.encode`, with the real all-MiniLM-L6-v2 (offline, CPU)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest

from freshstack_hf.retrieval import encoding, models
from freshstack_hf.retrieval.encoding import (
    Tokenized,
    _split_rows,
    batch_token_budget,
    encode_texts,
    plan_batches,
    tokenize_once,
)

pytest.importorskip("sentence_transformers")

# Mixed lengths: one token, a sentence, code, past the 256-token window in prose and in hashes, and one whose
# first 2,560 characters are words past WordPiece's 100-character limit (one [UNK] each), so its cut prefix
# falls short of the window and only the full text shows what the model sees.
LONG_WORDS = ("a" * 150 + " ") * 40 + "the queue worker retries failed jobs " * 120
MIXED = [
    "x",
    "",
    "How do I configure the queue worker to retry failed jobs?",
    "Route::get('/user/{id}', [UserController::class, 'show'])->name('user.show');",
    " ".join(["The service container resolves bindings lazily."] * 80),
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 " * 30,
    LONG_WORDS,
    *(" ".join(["word"] * n) for n in (3, 17, 40, 90, 200, 255, 300)),
]


@pytest.fixture(scope="module")
def model() -> object:
    return models.load_dense_model(device="cpu").model


@pytest.fixture
def tokenized_path_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail if `encode_texts` falls back to one `SentenceTransformer.encode` call a batch: the equality
    asserted must be the new path's."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("encode_texts fell back to the per-batch SentenceTransformer.encode path")

    monkeypatch.setattr(encoding, "_encode_sorted", refuse)
    yield


@pytest.mark.slow
@pytest.mark.parametrize("budget", [1536, 300, 1])  # the default, a few texts a batch, one text a batch
@pytest.mark.parametrize("prompt", [None, "query: "])
def test_equals_plain_encode_on_mixed_lengths(
    model: object, tokenized_path_only: None, monkeypatch: pytest.MonkeyPatch, budget: int, prompt: str | None
) -> None:
    monkeypatch.setattr(encoding, "CPU_BATCH_TOKENS", budget)
    ours = encode_texts(model, MIXED, prompt=prompt, batch_size=4)
    plain = model.encode(MIXED, prompt=prompt, batch_size=4, normalize_embeddings=True)
    assert ours.shape == plain.shape and ours.dtype == np.float32
    np.testing.assert_allclose(ours, plain, atol=1e-5)


@pytest.mark.slow
def test_a_wider_window_and_prompt_excluded_from_pooling(model: object, tokenized_path_only: None) -> None:
    """512 tokens (the model's limit) and mean pooling without the prompt's tokens (`prompt_length`, which
    `preprocess` attaches to the batch rather than to each text, must reach the pooling)."""
    ours = encode_texts(model, MIXED, max_seq_length=512)
    old = model.max_seq_length
    model.max_seq_length = 512
    try:
        np.testing.assert_allclose(ours, model.encode(MIXED, normalize_embeddings=True), atol=1e-5)
    finally:
        model.max_seq_length = old
    pooling = model[1]
    assert pooling.include_prompt
    pooling.include_prompt = False
    try:
        ours = encode_texts(model, MIXED, prompt="query: ")
        plain = model.encode(MIXED, prompt="query: ", normalize_embeddings=True)
        np.testing.assert_allclose(ours, plain, atol=1e-5)
    finally:
        pooling.include_prompt = True
    assert not np.allclose(ours, encode_texts(model, MIXED, prompt="query: "), atol=1e-3)  # the prompt counted


def test_tokenized_once_with_exact_lengths(model: object) -> None:
    tokenized = tokenize_once(model, MIXED, None, 256)
    assert tokenized is not None and set(tokenized.rows) == {"input_ids", "token_type_ids", "attention_mask"}
    assert tokenized.shared == {"modality": "text"}
    full = [len(ids) for ids in model.tokenizer(MIXED, truncation=True, max_length=256)["input_ids"]]
    assert tokenized.lengths.tolist() == full
    assert full[MIXED.index(LONG_WORDS)] == 256  # only the full text fills the window: tokenized again
    prompted = tokenize_once(model, MIXED, "query: ", 256)
    assert prompted.shared["prompt_length"] == 3  # [CLS] query :
    assert prompted.lengths[0] == tokenized.lengths[0] + 2


def test_batches_hold_their_budget_longest_first() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 300, size=500)
    batches = plan_batches(lengths, 1000)
    assert sorted(np.concatenate(batches).tolist()) == list(range(500))  # every text exactly once
    assert all(lengths[b].max() * len(b) <= 1000 for b in batches)
    tops = [int(lengths[b].max()) for b in batches]
    assert tops == sorted(tops, reverse=True)
    assert [len(b) for b in plan_batches(np.array([5, 400, 3]), 100)] == [1, 2]  # too long for it: alone
    assert [len(b) for b in plan_batches(np.array([0, 0]), 1)] == [1, 1]  # empty texts still count one


def test_budget_is_batch_size_at_the_window_capped_on_a_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoding, "CPU_BATCH_TOKENS", 1536)
    cpu, gpu = SimpleNamespace(device=SimpleNamespace(type="cpu")), SimpleNamespace(device=SimpleNamespace(type="cuda"))
    assert batch_token_budget(cpu, 32, 256) == 1536 and batch_token_budget(cpu, 2, 256) == 512
    assert batch_token_budget(gpu, 32, 256) == 8192  # a GPU: what batch_size asked for


def test_padding_on_either_side() -> None:
    rows = {"input_ids": [np.array([7, 8, 9]), np.array([5])], "attention_mask": [np.ones(3), np.ones(1)]}
    shared = {"modality": "text"}
    pads = {"input_ids": 0, "attention_mask": 0}
    right = Tokenized(rows, shared, np.array([3, 1]), pads, left_padded=False).batch([1, 0], "cpu")
    assert right["input_ids"].tolist() == [[5, 0, 0], [7, 8, 9]] and right["modality"] == "text"
    assert right["attention_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    left = Tokenized(rows, shared, np.array([3, 1]), pads, left_padded=True).batch([1], "cpu")
    assert left["input_ids"].tolist() == [[5]]
    left = Tokenized(rows, shared, np.array([3, 1]), pads, left_padded=True).batch([0, 1], "cpu")
    assert left["input_ids"].tolist() == [[7, 8, 9], [0, 0, 5]]


@pytest.mark.slow
def test_features_it_cannot_regroup_fall_back_to_plain_encode(model: object, monkeypatch) -> None:
    import torch

    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    ids = torch.tensor([[1, 2, 0], [3, 4, 5]])
    split = _split_rows({"input_ids": ids, "attention_mask": mask, "modality": "text"}, left=False)
    assert split is not None and [r.tolist() for r in split[0]["input_ids"]] == [[1, 2], [3, 4, 5]]
    assert _split_rows({"input_ids": ids, "attention_mask": mask, "pixel_values": torch.zeros(2, 3, 4)}, False) is None
    assert _split_rows({"input_ids": ids}, left=False) is None  # no mask: lengths unknown
    real = model.preprocess
    monkeypatch.setattr(model, "preprocess", lambda *a, **k: {**real(*a, **k), "special": torch.zeros(1)})
    assert tokenize_once(model, MIXED, None, 256) is None
    monkeypatch.undo()
    monkeypatch.setattr(encoding, "tokenize_once", lambda *a, **k: None)  # then encode_texts takes the old way
    ours = encode_texts(model, MIXED, prompt="query: ", batch_size=3)
    plain = model.encode(MIXED, prompt="query: ", batch_size=3, normalize_embeddings=True)
    np.testing.assert_allclose(ours, plain, atol=1e-5)
