"""The retry policy of every endpoint call: what is worth another try, how long to wait, and what to tell the user.

Transient failures (429, 5xx, 408/409, timeouts, dropped connections, a body that is no completion) are retried
with capped exponential backoff and jitter, honouring Retry-After. A refused key stops at once, and stays
refused for every concurrent call, because re-sending it only burns the endpoint's patience; any other status
is a configuration problem, reported with the setting to check. It lives apart from the client so chat,
embedding and Batch calls share one policy and one set of counters.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Callable
from typing import TypeVar

from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.repair import _Garbage

log = logging.getLogger(__name__)
T = TypeVar("T")

BACKOFF_ENV = "FRESHSTACK_LLM_BACKOFF"  # base delay in seconds of the exponential backoff (tests use ~0.01)
MAX_WAIT_ENV = "FRESHSTACK_LLM_MAX_WAIT"  # cap of one wait in seconds, Retry-After included


def env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError as exc:
        raise FreshStackError(f"environment variable {name}={raw!r} is not a number of seconds") from exc


def retry_after(exc: Exception) -> float | None:
    """The wait the endpoint asked for (Retry-After-Ms or Retry-After, in seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(header)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


class RetryPolicy:
    """Runs one endpoint call at a time under the policy; `count(stage, **counters)` receives retries and errors."""

    def __init__(self, config: LLMConfig, count: Callable[..., None]) -> None:
        self.config = config
        self.backoff = env_seconds(BACKOFF_ENV, 1.0)
        self.max_wait = env_seconds(MAX_WAIT_ENV, 60.0)
        self._count = count
        self._refused: FreshStackError | None = None  # once the key is refused, no further request is sent

    def call(self, stage: str, label: str, fn: Callable[[], T]) -> T:
        """Run `fn` (one endpoint call) under the retry policy; user-fixable failures become FreshStackError."""
        import openai

        config, base_url = self.config, self.config.base_url
        attempts = config.max_retries + 1
        where = f"stage `{stage}`" + (f", query {label}" if label else "")
        for attempt in range(attempts):
            if self._refused is not None:  # a concurrent call already learnt the key is refused
                raise self._refused
            try:
                return fn()
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                self._count(stage, errors=1)
                state = "is not set" if not os.environ.get(config.api_key_env) else "holds a key it rejected"
                self._refused = FreshStackError(
                    f"{base_url} refused the request ({exc.status_code}) for {where}: the environment variable "
                    f"{config.api_key_env} {state}; export {config.api_key_env}=<a valid key for this "
                    f"endpoint> (or set llm.api_key_env to the variable that holds it)"
                )
                raise self._refused from exc
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APIConnectionError,
                openai.APIResponseValidationError,
                _Garbage,
                json.JSONDecodeError,
            ) as exc:
                reason, wanted = f"{type(exc).__name__}: {str(exc)[:200]}", retry_after(exc)
            except openai.APIStatusError as exc:
                if exc.status_code not in (408, 409):
                    self._count(stage, errors=1)
                    raise FreshStackError(
                        f"{base_url} answered {exc.status_code} for {where} (model {config.model!r}): "
                        f"{str(exc)[:300]}; check llm.model and llm.base_url"
                    ) from exc
                reason, wanted = f"HTTP {exc.status_code}", retry_after(exc)
            if attempt + 1 == attempts:
                self._count(stage, errors=1)
                raise FreshStackError(
                    f"{base_url}: no usable response for {where} after {attempts} attempts (last: {reason}); "
                    f"check that the endpoint is up and speaks the OpenAI API, or raise llm.max_retries"
                )
            delay = self.delay(attempt, wanted)
            log.info("%s: %s; retry %d/%d in %.2fs", where, reason, attempt + 1, attempts - 1, delay)
            self._count(stage, retries=1)
            time.sleep(delay)
        raise AssertionError("unreachable")

    def delay(self, attempt: int, wanted: float | None = None) -> float:
        """Seconds before retry `attempt + 1`: jittered exponential backoff, at least what the endpoint asked for,
        never above `max_wait`."""
        delay = min(self.max_wait, self.backoff * 2**attempt * (0.5 + random.random() / 2))
        if wanted is not None:
            delay = min(self.max_wait, max(delay, wanted))
        return delay
