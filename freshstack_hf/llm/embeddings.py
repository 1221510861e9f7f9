"""Embeddings through the same door as chat: cached per text, sent in batches, retried, accounted.

`LLMClient` inherits `embed_many` from `EmbeddingsMixin` here, so embedding calls share the client's cache, retry
policy, bounded pool and per-stage accounting without the chat machinery having to live next to them. The mixin
uses the host's `cache`, `openai`, `call_with_retries`, `_run_pool`, `_add` and `_account`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from freshstack_hf.llm.cache import request_key
from freshstack_hf.llm.repair import _Garbage

EMBED_BATCH = 64


class EmbeddingsMixin:
    """`embed_many` for `LLMClient`: one cache entry per text, missing texts sent `batch_size` at a time."""

    def embed_many(
        self, texts: Sequence[str], model: str, *, batch_size: int = EMBED_BATCH, stage: str = "embeddings"
    ) -> Any:
        """Embeddings of `texts` (float32 array, one row per text), cached per text, sent in batches."""
        import numpy as np

        keys = [request_key({"endpoint": "embeddings", "model": model, "input": t}) for t in texts]
        vectors: dict[str, list[float]] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in vectors or key in missing:
                continue
            cached = self.cache.get(key)
            if cached is not None:
                vectors[key] = cached["embedding"]
                self._add(stage, cache_hits=1)
            else:
                missing[key] = text
        todo = list(missing.items())
        chunks = [todo[i : i + batch_size] for i in range(0, len(todo), batch_size)]
        self._add(stage)
        if chunks:
            self._run_pool([lambda c=c: self._embed_chunk(c, model, stage) for c in chunks], f"{stage} ({model})")
            for key, _ in todo:
                vectors[key] = self.cache.get(key)["embedding"]
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray([vectors[k] for k in keys], dtype=np.float32)

    def _embed_chunk(self, chunk: list[tuple[str, str]], model: str, stage: str) -> None:
        inputs = [text for _, text in chunk]

        def call() -> dict[str, Any]:
            response = self.openai.embeddings.create(model=model, input=inputs)
            if not hasattr(response, "model_dump"):
                raise _Garbage(f"the body is not a JSON embeddings list: {str(response)[:120]!r}")
            data = response.model_dump(mode="json")
            if len(data.get("data") or []) != len(inputs):
                raise _Garbage(f"{len(data.get('data') or [])} embeddings for {len(inputs)} inputs")
            return data

        data = self.call_with_retries(stage, f"{len(inputs)} texts", call)
        rows = sorted(data["data"], key=lambda d: d.get("index", 0))
        for (key, text), row in zip(chunk, rows, strict=True):
            self.cache.put(
                key, {"endpoint": "embeddings", "model": model, "input": text}, {"embedding": row["embedding"]}
            )
        usage = data.get("usage") or {}
        self._account(stage, {"prompt_tokens": usage.get("prompt_tokens") or usage.get("total_tokens") or 0})
