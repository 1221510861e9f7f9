"""Which transport answers a config: the one table that the build and the answer track both choose from.

`open_transport(config, cache_path)` reads the kind from `config.base_url`:

* no URL: `offline` (callers then use their heuristics: the build's offline backend, the offline answer judge);
* `KIND+URL` where KIND is registered (`toy+http://127.0.0.1:8000`): that kind, given the config with the bare URL;
* any other URL: `openai`, the `openai` client against an OpenAI-compatible endpoint (a local vLLM server is one).

Adding a backend (say an Anthropic-compatible endpoint) is one module and one line here:

1. write `freshstack_hf/llm/anthropic.py` with a class that has `kind`, `describe()` (the label recorded in the
   manifest and with every score), `chat_many(requests, *, stage, parse, desc="")` and `stats()`, as the
   `Transport` protocol in `freshstack_hf.llm.transport` says, and a constructor
   `(config: LLMConfig, cache_path: Path, *, show_progress: bool = False)`;
2. add `"anthropic": _lazy("freshstack_hf.llm.anthropic", "AnthropicTransport"),` to `TRANSPORTS` below.

Topic YAMLs then say `llm: {base_url: "anthropic+https://api.anthropic.com", model: ...}`, and
`freshstack-hf evaluate-answers --judge-base-url anthropic+https://...` judges with it. Tests and plugins that
cannot edit this file call `register(kind, factory)` and `unregister(kind)`.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable
from pathlib import Path

from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.transport import OfflineTransport, Transport

TransportFactory = Callable[..., Transport]  # (config, cache_path, *, show_progress) -> Transport
OFFLINE = "offline"
OPENAI = "openai"
_PREFIX = re.compile(r"^([a-z][a-z0-9_-]*)\+(.*)$", re.DOTALL)


def _lazy(module: str, name: str) -> TransportFactory:
    """A factory that imports its module on first use, so `import freshstack_hf` loads no client."""

    def make(config: LLMConfig, cache_path: Path, *, show_progress: bool = False) -> Transport:
        factory = getattr(importlib.import_module(module), name)
        return factory(config, cache_path, show_progress=show_progress)

    return make


def _offline(config: LLMConfig, cache_path: Path, *, show_progress: bool = False) -> Transport:
    return OfflineTransport()


TRANSPORTS: dict[str, TransportFactory] = {
    OFFLINE: _offline,
    OPENAI: _lazy("freshstack_hf.llm.client", "LLMClient"),
}


def transport_kind(base_url: str) -> str:
    """The registry key a base URL selects (see the module docstring)."""
    return _split(base_url)[0]


def open_transport(config: LLMConfig, cache_path: str | Path, *, show_progress: bool = False) -> Transport:
    """The transport for `config`, made by its registered factory (the `KIND+` prefix removed from the URL)."""
    kind, url = _split(config.base_url)
    if url != config.base_url:
        config = dataclasses.replace(config, base_url=url)
    return TRANSPORTS[kind](config, Path(cache_path), show_progress=show_progress)


def register(kind: str, factory: TransportFactory) -> None:
    """Make `KIND+URL` base URLs choose `factory`; a kind already taken is refused rather than silently replaced."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", kind):
        raise ValueError(f"transport kind {kind!r}: use lowercase letters, digits, '_' and '-'")
    if kind in TRANSPORTS:
        raise ValueError(f"transport kind {kind!r} is already registered")
    TRANSPORTS[kind] = factory


def unregister(kind: str) -> None:
    """Remove a kind added by `register`; the built-in `offline` and `openai` stay."""
    if kind in (OFFLINE, OPENAI):
        raise ValueError(f"the built-in transport {kind!r} cannot be removed")
    TRANSPORTS.pop(kind, None)


def _split(base_url: str) -> tuple[str, str]:
    if not base_url:
        return OFFLINE, base_url
    match = _PREFIX.match(base_url)
    if match and match.group(1) in TRANSPORTS:
        return match.group(1), match.group(2)
    return OPENAI, base_url
