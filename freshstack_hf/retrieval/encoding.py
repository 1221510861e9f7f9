"""Encoding a corpus with a sentence-transformers model: length-sorted batches and an on-disk embedding cache.

A FreshStack corpus mixes one-line chunks with chunks far past the model's window, so batches are formed from
texts of similar *token* length (sentence-transformers sorts by characters, a poor proxy for code) and sized by
tokens rather than texts; vectors are cached per text so a second run, or a run after an interruption, encodes
only what is new; and a big input is spread over every visible GPU (`encoding_pool`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshstack_hf.retrieval.embedding_cache import EmbeddingCache
from freshstack_hf.retrieval.encoding_pool import EncodingPool, maybe_pool
from freshstack_hf.retrieval.models import model_length_limit

log = logging.getLogger(__name__)

LENGTH_PROBE_CHARS_PER_TOKEN = 10  # prefix tokenized to measure a text: prose runs ~4.5 characters a token
# Tokens (padding included) in one batch on a CPU. Measured on all-MiniLM-L6-v2, 2 AVX-512 cores, the bench's
# 600 docs: batches of 1,024-2,048 tokens ran the model in 15-20% less time than batches of up to 8,192 (32 texts
# at the 256-token window), whose 50 MB activations spill out of the caches, so each elementwise pass (the bias
# copy before each matmul, GELU, layer norm) waits on memory; at this size the matmuls reach the GEMM peak.
CPU_BATCH_TOKENS = 1536
TOKENIZE_CHUNK = 1024  # texts preprocessed in one call: padded ids of a chunk stay a few MB
# What a tokenizer pads each per-token feature with; a model whose features hold anything else is encoded the
# plain way (one `SentenceTransformer.encode` call a batch) rather than padded by guesswork.
_PAD_WITH = {"input_ids": "pad_token_id", "attention_mask": None, "token_type_ids": "pad_token_type_id"}
_LAST_WORD_END = re.compile(r"(.*\S)\s", re.DOTALL)


@dataclass
class EncodeStats:
    """How many texts were run through the model and how many came from the cache (the rest were duplicates)."""

    texts: int = 0
    encoded: int = 0
    cached: int = 0
    seconds: float = 0.0


def effective_max_length(model: Any, requested: int | None) -> int | None:
    """Clamp a requested window (FreshStack evaluates up to 2048 tokens) to what the model can take."""
    limit = model_length_limit(model)
    if requested is None:
        return model.max_seq_length
    if limit is not None and requested > limit:
        log.info("max_seq_length %d clamped to the model's limit %d", requested, limit)
        return limit
    return requested


def _cut_at_space(text: str, limit: int) -> str:
    """The longest prefix of at most `limit` characters that ends before a whitespace run, or the whole text.

    Tokenizers split words at whitespace (WordPiece, byte-level BPE and SentencePiece alike), so the tokens
    of such a prefix are exactly the first tokens of the whole text.
    """
    if len(text) <= limit:
        return text
    match = _LAST_WORD_END.match(text, 0, limit + 1)
    return match.group(1) if match else text


def token_lengths(
    model: Any, texts: Sequence[str], max_length: int | None, chunk: int = 1024
) -> tuple[np.ndarray, list[str]]:
    """Token counts (capped at `max_length`) to sort by, and the texts to encode, long ones cut short.

    Only a prefix of each text is tokenized. When that prefix already fills the window, the model would
    never see the rest, so the prefix is what gets encoded: sentence-transformers would otherwise tokenize
    a 50,000-character chunk in full just to truncate it. Models without a tokenizer sort by characters.
    """
    texts = list(texts)
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None or max_length is None:
        return np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)), texts
    probe = max_length * LENGTH_PROBE_CHARS_PER_TOKEN
    lengths = np.empty(len(texts), dtype=np.int64)
    for start in range(0, len(texts), chunk):  # chunked: token id lists of 100k docs would take gigabytes
        heads = [_cut_at_space(t, probe) for t in texts[start : start + chunk]]
        enc = tokenizer(
            heads, truncation=True, max_length=max_length, return_attention_mask=False, return_token_type_ids=False
        )
        for i, (head, ids) in enumerate(zip(heads, enc["input_ids"], strict=True), start):
            if len(ids) >= max_length:
                texts[i] = head  # the window is full either way: encode the cheaper text
            lengths[i] = max_length if len(head) < len(texts[i]) else len(ids)  # a sparse cut head: unknown
    return np.minimum(lengths, max_length), texts


def _encode_sorted(
    model: Any, texts: list[str], prompt: str | None, batch_size: int, pool: Any, show_progress: bool
) -> np.ndarray:
    """Encode already-sorted texts one batch per call, so sentence-transformers' own sort cannot undo ours."""
    kwargs = {"prompt": prompt or None, "normalize_embeddings": False, "batch_size": batch_size}
    if pool is not None:  # contiguous chunks of the sorted list keep every worker's batches tight
        out = model.encode(texts, pool=pool, chunk_size=batch_size * 8, show_progress_bar=show_progress, **kwargs)
    else:
        from tqdm.auto import tqdm

        starts = tqdm(range(0, len(texts), batch_size), desc="encode", unit="batch", disable=not show_progress)
        out = np.concatenate(
            [model.encode(texts[s : s + batch_size], show_progress_bar=False, **kwargs) for s in starts]
        )
    return _unit(out)


@dataclass
class Tokenized:
    """Each text's features exactly as sentence-transformers' `preprocess` makes them, less the padding.

    Tokenizing once and padding per batch is what lets batches be regrouped freely (by token count, in any
    order) without a second pass through the tokenizer.
    """

    rows: dict[str, list[np.ndarray]]  # per-token features, one unpadded row per text
    shared: dict[str, Any]  # per-batch features, the same for every text (`modality`, `prompt_length`)
    lengths: np.ndarray  # tokens per text, prompt and special tokens included
    pad_values: dict[str, int]
    left_padded: bool

    def batch(self, index: Sequence[int], device: Any) -> dict[str, Any]:
        """The features of texts `index`, padded to the longest of them as the tokenizer would pad them."""
        import torch

        width = int(self.lengths[list(index)].max())
        out: dict[str, Any] = dict(self.shared)
        for key, rows in self.rows.items():
            padded = np.full((len(index), width), self.pad_values[key], dtype=np.int64)
            for j, i in enumerate(index):
                row = rows[i]
                if self.left_padded:
                    padded[j, width - len(row) :] = row
                else:
                    padded[j, : len(row)] = row
            out[key] = torch.from_numpy(padded).to(device)
        return out


def tokenize_once(model: Any, texts: Sequence[str], prompt: str | None, window: int) -> Tokenized | None:
    """Every text through the model's own `preprocess` once, cut to what the window lets the model see.

    A text is first cut to a prefix of `window * LENGTH_PROBE_CHARS_PER_TOKEN` characters (see `token_lengths`);
    the rare prefix that still falls short of the window is tokenized again in full. None when the model's
    features are not plain per-token rows that this module knows how to pad: the caller then encodes the
    ordinary way.
    """
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None or getattr(tokenizer, "pad_token_id", None) is None:
        return None
    pad_values = {k: 0 if attr is None else getattr(tokenizer, attr, 0) for k, attr in _PAD_WITH.items()}
    left = getattr(tokenizer, "padding_side", "right") == "left"
    probe = window * LENGTH_PROBE_CHARS_PER_TOKEN
    rows: dict[str, list[np.ndarray]] = {}
    shared: dict[str, Any] = {}
    lengths = np.empty(len(texts), dtype=np.int64)
    for start in range(0, len(texts), TOKENIZE_CHUNK):
        chunk = list(texts[start : start + TOKENIZE_CHUNK])
        heads = [_cut_at_space(t, probe) for t in chunk]
        split = _split_rows(model.preprocess(heads, prompt=prompt), left)
        if split is None or not split[0].keys() <= pad_values.keys() or (start and split[1] != shared):
            return None
        chunk_rows, shared, chunk_lengths = split
        # A prefix that was cut and still does not fill the window: the model sees more of the text than that.
        short = [j for j, (h, t) in enumerate(zip(heads, chunk, strict=True)) if len(h) < len(t)]
        short = [j for j in short if chunk_lengths[j] < window]
        if short:
            again = _split_rows(model.preprocess([chunk[j] for j in short], prompt=prompt), left)
            if again is None or again[0].keys() != chunk_rows.keys() or again[1] != shared:
                return None
            for key, key_rows in again[0].items():
                for j, row in zip(short, key_rows, strict=True):
                    chunk_rows[key][j] = row
            chunk_lengths[short] = again[2]
        for key, key_rows in chunk_rows.items():
            rows.setdefault(key, []).extend(key_rows)
        lengths[start : start + len(chunk)] = chunk_lengths
    if any(len(key_rows) != len(texts) for key_rows in rows.values()):
        return None  # a feature some chunks had and others lacked
    return Tokenized(rows, shared, lengths, {k: pad_values[k] for k in rows}, left)


def _split_rows(
    features: dict[str, Any], left: bool
) -> tuple[dict[str, list[np.ndarray]], dict[str, Any], np.ndarray] | None:
    """A padded batch of features as unpadded rows, per-batch values and lengths; None if it is not one."""
    import torch

    mask = features.get("attention_mask")
    if not isinstance(mask, torch.Tensor) or mask.ndim != 2 or "input_ids" not in features:
        return None
    lengths = mask.sum(dim=1).cpu().numpy().astype(np.int64)
    width = mask.shape[1]
    rows: dict[str, list[np.ndarray]] = {}
    shared: dict[str, Any] = {}
    for key, value in features.items():
        if isinstance(value, torch.Tensor) and value.shape == mask.shape:
            padded = value.cpu().numpy()
            # copies, so the chunk's padded array is freed once split
            rows[key] = [(padded[i, width - n :] if left else padded[i, :n]).copy() for i, n in enumerate(lengths)]
        elif isinstance(value, torch.Tensor):
            return None  # per-text but not per-token (pixel values, ...): not this module's to regroup
        else:
            shared[key] = value
    return rows, shared, lengths


def plan_batches(lengths: np.ndarray, budget: int) -> list[np.ndarray]:
    """Texts in batches of similar length, longest first, each at most `budget` tokens once padded.

    Counting tokens rather than texts gives the short texts of a corpus big batches, where each call's fixed
    costs are shared, and the long ones small batches, whose activations stay in cache (`CPU_BATCH_TOKENS`).
    """
    order = np.argsort(-lengths, kind="stable")
    batches = []
    start = 0
    while start < len(order):
        size = max(1, budget // max(int(lengths[order[start]]), 1))
        batches.append(order[start : start + size])
        start += size
    return batches


def batch_token_budget(model: Any, batch_size: int, window: int) -> int:
    """Tokens a batch may hold: `batch_size` texts at the full window, which is what a caller sized memory for,
    and on a CPU no more than `CPU_BATCH_TOKENS`, where smaller batches run faster."""
    budget = batch_size * window
    device = getattr(model, "device", None)
    if getattr(device, "type", str(device)) == "cpu":
        return min(budget, CPU_BATCH_TOKENS)
    return budget


def _encode_tokenized(model: Any, tokenized: Tokenized, batches: list[np.ndarray], show_progress: bool) -> np.ndarray:
    """Run the model (all its modules: transformer, pooling, ...) on each batch, rows back in input order."""
    import torch
    from tqdm.auto import tqdm

    truncate = getattr(model, "truncate_dim", None)
    parts = []
    model.eval()  # as `SentenceTransformer.encode` does: no dropout, whatever a caller left switched on
    with torch.inference_mode():
        for index in tqdm(batches, desc="encode", unit="batch", disable=not show_progress):
            embeddings = model(tokenized.batch(index, model.device))["sentence_embedding"]
            if truncate:
                embeddings = embeddings[:, :truncate]
            parts.append(embeddings.float().cpu().numpy())
    vectors = np.concatenate(parts)
    out = np.empty_like(vectors)
    out[np.concatenate(batches)] = vectors
    return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 in fp32 (even when the model ran in half precision); zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def encode_texts(
    model: Any,
    texts: Sequence[str],
    *,
    prompt: str | None = None,
    batch_size: int = 32,
    max_seq_length: int | None = None,
    show_progress: bool = False,
    devices: list[str] | None = None,
    pool: Any = None,
) -> np.ndarray:
    """Unit-length float32 embeddings in input order, equal to `SentenceTransformer.encode`'s within float error.

    Each text is tokenized once, by the model's own `preprocess`, and batches are cut from texts of similar token
    length by a token budget (`batch_token_budget`): `batch_size` texts at the full window, more of shorter
    ones. Longest batches go first so an out-of-memory error shows at once rather than at the end. With
    `devices`, or by default when more than one CUDA device is visible and the input is large,
    sentence-transformers' multi-process pool spreads the batches over the devices (`pool`: the caller's, an
    `EncodingPool` it holds or a started pool, reused across calls).
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, model.get_embedding_dimension()), dtype=np.float32)
    with _window(model, max_seq_length) as length, maybe_pool(model, devices, len(texts), pool) as active:
        tokenized = tokenize_once(model, texts, prompt or None, length) if active is None and length else None
        if tokenized is not None:
            batches = plan_batches(tokenized.lengths, batch_token_budget(model, batch_size, length))
            return _unit(_encode_tokenized(model, tokenized, batches, show_progress))
        lengths, texts = token_lengths(model, texts, length)
        order = np.argsort(-lengths, kind="stable")
        vectors = _encode_sorted(model, [texts[i] for i in order], prompt, batch_size, active, show_progress)
    out = np.empty_like(vectors)
    out[order] = vectors
    return out


@contextmanager
def _window(model: Any, requested: int | None) -> Iterator[int | None]:
    """The model's max_seq_length set for a block of work and restored after it, even on error."""
    old = model.max_seq_length
    model.max_seq_length = effective_max_length(model, requested)
    try:
        yield model.max_seq_length
    finally:
        model.max_seq_length = old


def encode_cached(
    model: Any,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    *,
    shard_size: int = 8192,
    max_seq_length: int | None = None,
    devices: list[str] | None = None,
    pool: EncodingPool | None = None,
    **encode_kwargs: Any,
) -> tuple[np.ndarray, EncodeStats]:
    """Encode each distinct uncached text once, saving a shard every `shard_size` texts so work survives a crash.

    One pool serves all shards (the caller's `pool`, held across calls, else one of this call's own), and none
    starts when every text is cached: a start would cost more than a shard takes on the GPUs.
    """
    start = time.perf_counter()
    texts = list(texts)
    keys = [EmbeddingCache.text_key(t) for t in texts]
    found = cache.get(keys) if cache is not None else {}
    todo: dict[str, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in found:
            todo.setdefault(k, t)
    todo_keys, todo_texts = list(todo), list(todo.values())
    active = None
    with ExitStack() as stack:
        if todo_texts:
            stack.enter_context(_window(model, max_seq_length))
            active = stack.enter_context(maybe_pool(model, devices, len(todo_texts), pool))
        for s in range(0, len(todo_texts), shard_size):
            chunk_keys = todo_keys[s : s + shard_size]
            vectors = encode_texts(
                model, todo_texts[s : s + shard_size], max_seq_length=max_seq_length, pool=active, **encode_kwargs
            )
            if cache is not None:
                cache.add(chunk_keys, vectors)
            found.update(zip(chunk_keys, vectors, strict=True))
    dim = model.get_embedding_dimension()
    out = np.stack([found[k] for k in keys]) if keys else np.zeros((0, dim), dtype=np.float32)
    cached = sum(1 for k in keys if k not in todo)
    return out, EncodeStats(len(texts), len(todo_texts), cached, time.perf_counter() - start)
