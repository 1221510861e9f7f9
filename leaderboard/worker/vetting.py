"""Model vetting: what the worker checks before it loads a model that a stranger chose, and a model's identity.

A submitted model runs on our machines, so nothing of it is loaded until these checks pass: safetensors
weights only (no pickle), no custom code (`.py` files, `auto_map`), sentence-transformers modules only,
under the size cap. The parameter count is read from the safetensors headers, never from the tensors.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from pathlib import Path

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.models import resolve_model_source

DEFAULT_MAX_MODEL_BYTES = 4_000_000_000
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
# config, tokenizer, weights and the model card (its cutoff date: `tracks.retrieval.submissions.cutoff`); never code
# or pickle
SAFE_DOWNLOAD = ["*.json", "*.txt", "*.model", "*.safetensors", "README.md"]


def safetensors_parameters(path: Path) -> int:
    """Parameter count from a safetensors header alone (8-byte length, then JSON): no tensor is read."""
    with path.open("rb") as fh:
        (length,) = struct.unpack("<Q", fh.read(8))
        if length > 100_000_000:
            raise FreshStackError(f"{path.name}: safetensors header of {length} bytes; the file is corrupt")
        header = json.loads(fh.read(length))
    return sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")


def check_model_dir(model_dir: Path, max_bytes: int = DEFAULT_MAX_MODEL_BYTES) -> int:
    """Refuse a model that would run code or unpickle weights, or is over the cap; returns its parameter count."""
    files = [p for p in model_dir.rglob("*") if p.is_file() and ".git" not in p.parts]
    where = f"model {model_dir}"
    if code := [p.relative_to(model_dir).as_posix() for p in files if p.suffix == ".py"]:
        raise FreshStackError(f"{where} contains Python code ({', '.join(code[:3])}): custom code is not run here")
    for config in (p for p in files if p.name == "config.json"):
        if "auto_map" in json.loads(config.read_text(encoding="utf-8")):
            raise FreshStackError(f"{where}: {config.name} maps to custom classes (auto_map); they are not run here")
    modules = model_dir / "modules.json"
    if modules.is_file():
        foreign = [m["type"] for m in json.loads(modules.read_text()) if not m["type"].startswith("sentence_transf")]
        if foreign:
            raise FreshStackError(f"{where}: modules.json names non-sentence-transformers modules {foreign}")
    weights = [p for p in files if p.suffix == ".safetensors"]
    for pickled in (p for p in files if p.suffix in PICKLE_SUFFIXES):
        if not any(w.parent == pickled.parent for w in weights):
            raise FreshStackError(f"{where}: {pickled.name} is a pickle; only safetensors weights are accepted")
    if not weights:
        raise FreshStackError(f"{where} has no .safetensors weights; convert it (safetensors) and resubmit")
    total = sum(p.stat().st_size for p in weights)
    if total > max_bytes:
        raise FreshStackError(
            f"{where}: {total / 1e9:.2f} GB of weights, over this worker's cap of {max_bytes / 1e9:g}"
        )
    return sum(safetensors_parameters(p) for p in weights)


def check_cross_encoder_dir(model_dir: Path, max_bytes: int = DEFAULT_MAX_MODEL_BYTES) -> int:
    """`check_model_dir`, then: the folder holds a sentence-transformers CrossEncoder with one output (a relevance
    score per pair), not an embedding model; returns its parameter count.

    Read from the files sentence-transformers itself reads (`config_sentence_transformers.json`'s model type,
    else a `...ForSequenceClassification` architecture), so an embedding model is refused at the door instead of
    being loaded with a fresh, random scoring head.
    """
    params = check_model_dir(model_dir, max_bytes)
    where = f"model {model_dir}"
    declared = _json_file(model_dir / "config_sentence_transformers.json").get("model_type")
    config = _json_file(model_dir / "config.json")
    architectures = config.get("architectures") or []
    classifier = any(str(a).endswith("ForSequenceClassification") for a in architectures)
    if declared not in (None, "CrossEncoder") or (declared is None and not classifier):
        what = declared or "model without a sequence-classification head"
        raise FreshStackError(
            f"{where} is a {what}, not a CrossEncoder: submit rerankers saved by sentence-transformers' "
            "CrossEncoder (embedding models go to the Submit tab)"
        )
    labels = config.get("num_labels") or len(config.get("id2label") or {0: ""})
    if labels != 1:
        raise FreshStackError(f"{where} has {labels} output labels; reranking needs one relevance score per pair")
    return params


def _json_file(path: Path) -> dict:
    """A model's JSON config, {} when absent; unreadable JSON is the submitter's to fix."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FreshStackError(f"{path.name} of model {path.parent} is not readable JSON ({exc})") from exc
    return data if isinstance(data, dict) else {}


def model_dir(name: str, revision: str | None) -> Path:
    """A local folder or cached snapshot as is; else a download of config, tokenizer and weights, never code."""
    model_id, local = resolve_model_source(name, revision)
    if local is not None:
        return local
    from huggingface_hub import snapshot_download  # online only: resolve_model_source refuses offline misses

    return Path(snapshot_download(model_id, revision=revision, allow_patterns=SAFE_DOWNLOAD))


def model_fingerprint(name: str) -> tuple[str, Path, str]:
    """(model id, local folder, short hash of its file names and sizes): part of a baseline's dedupe key."""
    model_id, local = resolve_model_source(name)
    if local is None:
        raise FreshStackError(f"model {name!r} is not available offline: give a local folder or a cached Hub id")
    files = sorted((p.relative_to(local).as_posix(), p.stat().st_size) for p in local.rglob("*") if p.is_file())
    return model_id, local, hashlib.sha256(json.dumps(files).encode()).hexdigest()[:16]


def weights_parameters(folder: Path) -> int | None:
    """Parameters of every safetensors file under `folder`, or None when it holds none."""
    return sum(safetensors_parameters(p) for p in folder.rglob("*.safetensors")) or None
