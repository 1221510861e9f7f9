"""What the build and the answer track need from a model: requests in, parsed answers out, and a label for both.

A transport answers `ChatRequest`s in bulk and parses each reply with the caller's parser; how it reaches a
model (the `openai` client with its cache, retries and Batch mode, or anything else) is its own business. Both
consumers only see this protocol: the build's `OnlineBackend` and the answer judge and generator turn their
tasks into prompts, send them through whichever transport `freshstack_hf.llm.registry` opens for the config, and
record `describe()` as the backend label in the manifest, the card and every stored score.

The offline transport stands for "no endpoint named": callers check its `kind` and use their own heuristics
(the build's offline backend, the offline answer judge) instead of sending it anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from freshstack_hf.errors import FreshStackError

T = TypeVar("T")

OFFLINE_LABEL = "offline-heuristic"


def endpoint_label(model: str, base_url: str) -> str:
    """The label of an OpenAI-compatible endpoint, byte-identical in manifests, cards and stored scores."""
    return f"openai:{model}@{base_url}"


@dataclass(frozen=True)
class ChatRequest:
    """One chat call: the messages, per-request parameters over the config's, and a label (the query id) for errors."""

    messages: Sequence[dict[str, str]]
    params: dict[str, Any] = field(default_factory=dict)
    label: str = ""


Requests = Sequence[ChatRequest | Sequence[dict[str, str]]]  # a request, or just its messages
Parsers = Callable[[str], T] | Sequence[Callable[[str], T]]  # one parser for all requests, or one per request


class Transport(Protocol):
    """One way to reach a model; `kind` is its registry key."""

    kind: str

    def describe(self) -> str:
        """The backend label that the manifest, the card and stored scores show."""
        ...

    def chat_many(self, requests: Requests, *, stage: str, parse: Parsers[T], desc: str = "") -> list[T]:
        """One parsed answer per request (a `ChatRequest` or a list of messages), in order."""
        ...

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per-stage accounting since the transport was opened (calls, cache hits, retries, tokens, cost)."""
        ...


class OfflineTransport:
    """No endpoint: nothing can be sent, so asking it anything is a user error that names the missing setting."""

    kind = "offline"

    def describe(self) -> str:
        return OFFLINE_LABEL

    def chat_many(self, requests: Requests, *, stage: str, parse: Parsers[T], desc: str = "") -> list[T]:
        if not requests:
            return []
        raise FreshStackError(
            f"stage `{stage}` needs a model but no endpoint is named; set llm.base_url (or FRESHSTACK_LLM_BASE_URL) "
            "to an OpenAI-compatible endpoint"
        )

    def stats(self) -> dict[str, dict[str, Any]]:
        return {}
