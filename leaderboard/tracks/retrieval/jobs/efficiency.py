"""What a model row costs to run, measured by the worker that scored it: quality beside speed and size.

HAKARI-style boards report efficiency next to quality; a number measured elsewhere is not comparable, so the
worker measures on its own hardware and names it. Figures:

* `docs_per_second`: corpus documents encoded per second over every topic; documents served from the embedding
  cache are not counted, and when all were cached a sample of up to 256 documents is encoded again, uncached, to
  measure it (a cache hit would report a speed the model never had);
* `query_latency_ms`: median wall time to encode one query alone (batch of one, no cache), up to 32 queries:
  what a search box waits for before the exact search;
* `embedding_dim` and `index_bytes` (float32 vectors of every document scored, the exact-search index);
* `hardware`: the GPU's name when the model ran on CUDA, else the CPU's model name.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Sequence
from typing import Any

LATENCY_QUERIES = 32
SAMPLE_DOCS = 256


def hardware(device: str | None) -> str:
    """The accelerator the model ran on, named as its vendor names it."""
    try:
        import torch

        if (device or "").startswith("cuda") or (device is None and torch.cuda.is_available()):
            return f"GPU: {torch.cuda.get_device_name(torch.device(device or 'cuda'))}"
    except Exception:  # no torch, no CUDA: the CPU it is
        pass
    return f"CPU: {_cpu_name()}"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def query_latency_ms(model: Any, texts: Sequence[str], prompt: str | None) -> float | None:
    """Median milliseconds to encode one query on its own (the first call warms the model and is not counted)."""
    if model is None or not texts:
        return None
    sample = list(texts[: LATENCY_QUERIES + 1])
    times = []
    for text in sample:
        start = time.perf_counter()
        model.encode([text], prompt=prompt or None, show_progress_bar=False)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times[1:] or times), 3)


class EfficiencyMeter:
    """Adds up each topic's encoding costs, then reports the row's figures."""

    def __init__(self) -> None:
        self.encoded = 0
        self.seconds = 0.0
        self.documents = 0
        self.sample: list[str] = []

    def add(self, stats: Any, documents: Sequence[str]) -> None:
        self.documents += len(documents)
        self.sample += list(documents[: SAMPLE_DOCS - len(self.sample)])
        if stats is not None:  # a stand-in retriever (tests) reports no costs
            self.encoded += stats.docs.encoded
            self.seconds += stats.docs.seconds

    def report(self, retriever: Any, query_texts: Sequence[str], device: str | None) -> dict[str, Any]:
        model = getattr(retriever.dense, "model", None)
        dim = _dimension(model) if model is not None else None
        if not self.encoded and model is not None and self.sample:  # everything came from the cache: measure now
            start = time.perf_counter()
            model.encode(self.sample, prompt=retriever.doc_prompt or None, batch_size=retriever.batch_size)
            self.encoded, self.seconds = len(self.sample), time.perf_counter() - start
        return {
            "docs_per_second": round(self.encoded / self.seconds, 1) if self.encoded and self.seconds > 0 else None,
            "docs_encoded": self.encoded,
            "query_latency_ms": query_latency_ms(model, query_texts, retriever.query_prompt),
            "embedding_dim": dim,
            "index_bytes": self.documents * dim * 4 if dim else None,
            "hardware": hardware(device),
        }


def _dimension(model: Any) -> int | None:
    """The embedding dimension, by the name sentence-transformers gives the method (renamed in its 5.x)."""
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return method()
