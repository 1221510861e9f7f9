"""Scores of (nugget, document) pairs for the offline judge: the share of a nugget's terms a document holds and,
where the packaged MiniLM loads, their cosine similarity.

Embeddings come from the cache every command shares: the pools stage has already encoded every pooled chunk, so
judging encodes only the nuggets. Without the model (no torch, or `use_embeddings=False`) only overlap is scored,
and the reason is kept for the backend's stats.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from freshstack_hf.defaults import dense_retriever
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.offline_text import lexical_share, terms

log = logging.getLogger(__name__)


class SupportScorer:
    """Lexical shares and cosines, with each text's terms and vector computed once."""

    def __init__(self, *, model: str = "", use_embeddings: bool = True) -> None:
        self.model_name = model
        self._model: Any = None
        self.model_error = "" if use_embeddings else "disabled (use_embeddings=False)"
        self._vectors: dict[str, Any] = {}
        self._terms: dict[str, Counter[str]] = {}

    @property
    def embedded(self) -> bool:
        """Whether the model was loaded (cosines are scored)."""
        return self._model is not None

    @property
    def encoded(self) -> int:
        """Texts encoded so far; each is encoded once, however often it is judged."""
        return len(self._vectors)

    def scores(
        self, nuggets: Sequence[str], docs: Sequence[str], embedded: Sequence[str] | None = None
    ) -> tuple[list[list[float]], list[list[float]] | None]:
        """[doc][nugget] lexical shares of `docs` and, when the model is available, [doc][nugget] cosines of the
        vectors of `embedded` (default `docs`): the whole documents where `docs` are the judge's cut texts."""
        nugget_terms = [self._cached_terms(n) for n in nuggets]
        shares = [[lexical_share(nt, set(self._cached_terms(d))) for nt in nugget_terms] for d in docs]
        model = self._embedder()
        if model is None or not nuggets or not docs:
            return shares, None
        # One embedding per document, as the retrievers embed it (MiniLM reads its first 256 tokens, far short of
        # the judge's cut), fetched from the embedding cache every command shares: the pools stage has already
        # encoded every pooled chunk whole, so judging encodes only the nuggets.
        embedded = list(docs if embedded is None else embedded)
        if len(embedded) != len(docs):
            raise ValueError(f"{len(embedded)} texts to embed for {len(docs)} documents")
        self._encode(model, [*nuggets, *embedded])
        cosines = [[float(self._vectors[n] @ self._vectors[d]) for n in nuggets] for d in embedded]
        return shares, cosines

    def _cached_terms(self, text: str) -> Counter[str]:
        if text not in self._terms:
            self._terms[text] = terms(text)
        return self._terms[text]

    def _embedder(self) -> Any:
        """The MiniLM retriever with the shared on-disk embedding cache, loaded once; None (and the reason kept for
        stats) when it cannot be."""
        if self._model is None and not self.model_error:
            try:
                self._model = dense_retriever(self.model_name)
            except (ImportError, FreshStackError) as exc:
                self.model_error = str(exc)
                log.warning("offline judge runs on term overlap only: %s", exc)
        return self._model

    def _encode(self, model: Any, texts: list[str]) -> None:
        new = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if new:
            import numpy as np

            vectors, _ = model.encode(new)
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            self._vectors.update(zip(new, vectors, strict=True))
