"""The one door to an OpenAI-compatible endpoint: cache, retries, bounded concurrency, parsing, accounting.

Every build stage and answer judgment that reaches an OpenAI-compatible model goes through `LLMClient.chat_many`
(embeddings through `LLMClient.embed_many`, cached per text and sent in batches through the same machinery),
so the behaviour users pay for is in one place: a request already answered is read from the cache (a re-run costs
nothing); transient failures are retried under `freshstack_hf.llm.retry`'s policy (a rejected key stops the build
at once with the variable to set); an answer that does not parse is first repaired locally, then re-asked with the
parser's message (each follow-up its own cached request). Tokens and cost are counted per stage for the manifest,
and under a spend cap (`freshstack_hf.llm.budget`, set by `refresh`) no request is sent that might pass the budget.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.batch import run_batch
from freshstack_hf.llm.budget import BudgetExhausted, SpendCap, worst_case_cost
from freshstack_hf.llm.cache import ResponseCache, request_key
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.repair import ParseError, _Garbage, repair_json
from freshstack_hf.llm.retry import RetryPolicy
from freshstack_hf.llm.transport import ChatRequest, Parsers, Requests, endpoint_label

log = logging.getLogger(__name__)
T = TypeVar("T")

REASKS = 2  # follow-up requests after an answer that neither parses nor repairs
EMBED_BATCH = 64  # texts per embeddings request


@dataclass
class StageStats:
    calls: int = 0  # answers obtained from the endpoint (synchronous or Batch)
    batch_calls: int = 0  # of which through the Batch API
    cache_hits: int = 0
    retries: int = 0  # transport-level retries (429, 5xx, timeouts, garbage bodies)
    repairs: int = 0  # answers that parsed after local repair (fences, trailing commas, surrounding text)
    reasks: int = 0  # follow-up requests after an unparseable answer
    errors: int = 0  # requests given up on
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


class LLMClient:
    """Chat completions and embeddings through the real `openai.OpenAI` client, with our own retry policy.

    It is the registry's `openai` transport (`freshstack_hf.llm.registry`)."""

    kind = "openai"
    # A budget every uncached request must fit in before it is sent (`freshstack_hf.llm.budget`); None: no cap.
    spend_cap: SpendCap | None = None

    def __init__(self, config: LLMConfig, cache_path: Path, *, show_progress: bool = False) -> None:
        self.config = config
        self.base_url = config.base_url
        self.cache_path = Path(cache_path)
        self.cache = ResponseCache(self.cache_path)
        self.batches_path = self.cache_path.with_name(self.cache_path.name + ".batches.json")
        self.show_progress = show_progress
        self._stats: dict[str, StageStats] = {}
        self._lock = threading.Lock()
        self._openai: Any = None
        self.retry = RetryPolicy(config, self._add)

    def describe(self) -> str:
        return endpoint_label(self.config.model, self.base_url)

    # ---- plumbing ----------------------------------------------------------------------------------------

    @property
    def openai(self) -> Any:
        """The `openai.OpenAI` client, made on first use (its own retries off: ours count and log them)."""
        if self._openai is None:
            import openai

            api_key = os.environ.get(self.config.api_key_env) or "unused"
            self._openai = openai.OpenAI(
                base_url=self.base_url, api_key=api_key, max_retries=0, timeout=self.config.timeout
            )
        return self._openai

    def _add(self, stage: str, **counts: float) -> None:
        with self._lock:
            stats = self._stats.setdefault(stage, StageStats())
            for name, value in counts.items():
                setattr(stats, name, getattr(stats, name) + value)

    def _account(self, stage: str, usage: dict[str, Any] | None, *, batch: bool = False) -> float:
        """Count one answered call; returns its price in USD."""
        usage = usage or {}
        p, c = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        price = (p * self.config.input_price_per_million + c * self.config.output_price_per_million) / 1e6
        cost = price * (0.5 if batch else 1.0)
        self._add(stage, calls=1, batch_calls=int(batch), prompt_tokens=p, completion_tokens=c, cost=cost)
        return cost

    def _paid(self, stage: str, label: str, worst: float, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """One endpoint call under the retry policy and, when a spend cap is set, inside its budget: the call's
        worst case is reserved first (refused when it might not fit) and settled at its reported price, in the
        ledger, before the caller caches the answer."""
        cap = self.spend_cap
        if cap is None:
            data = self.call_with_retries(stage, label, call)
            self._account(stage, data.get("usage"))
            return data
        held = cap.reserve(worst, f"stage `{stage}`" + (f", {label}" if label else ""))
        try:
            data = self.call_with_retries(stage, label, call)
        except BaseException:
            cap.release(held)
            raise
        usage = data.get("usage") or {}
        cost = self._account(stage, usage)
        cap.settle(
            held,
            cost,
            stage=stage,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )
        return data

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per-stage accounting since this client was made."""
        with self._lock:
            return {stage: {**asdict(s), "cost": round(s.cost, 6)} for stage, s in self._stats.items()}

    def chat_request(self, messages: Sequence[dict[str, str]], params: dict[str, Any] | None = None) -> dict:
        """The whole request as cached and sent: endpoint kind, model, messages, every parameter."""
        request: dict[str, Any] = {
            "endpoint": "chat.completions",
            "model": self.config.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_output_tokens,
        }
        request.update(params or {})
        return request

    def call_with_retries(self, stage: str, label: str, fn: Callable[[], T]) -> T:
        """Run `fn` (one endpoint call) under the shared retry policy (`freshstack_hf.llm.retry`)."""
        return self.retry.call(stage, label, fn)

    # ---- chat ----------------------------------------------------------------------------------------------

    def _complete(self, request: dict[str, Any], stage: str, label: str, from_batch: set[str]) -> str:
        """The answer text of one request: from the cache, or from the endpoint (then cached)."""
        key = request_key(request)
        cached = self.cache.get(key)
        if cached is not None:
            with self._lock:
                fresh = key in from_batch
                from_batch.discard(key)
            if fresh:
                self._account(stage, cached.get("usage"), batch=True)
            else:
                self._add(stage, cache_hits=1)
            return _content(cached)
        body = {k: v for k, v in request.items() if k != "endpoint"}

        def call() -> dict[str, Any]:
            response = self.openai.chat.completions.create(**body)
            if not hasattr(response, "model_dump"):
                raise _Garbage(f"the body is not a JSON completion: {str(response)[:120]!r}")
            data = response.model_dump(mode="json", exclude_none=True)
            if not data.get("choices") or not isinstance(data["choices"][0].get("message"), dict):
                raise _Garbage("the completion has no choices")
            return data

        price = (self.config.input_price_per_million, self.config.output_price_per_million)
        worst = worst_case_cost(request["messages"], int(request.get("max_tokens") or 0), *price)
        data = self._paid(stage, label, worst, call)
        self.cache.put(key, request, data)
        return _content(data)

    def _chat_one(self, req: ChatRequest, stage: str, parse: Callable[[str], T], from_batch: set[str]) -> T:
        messages = list(req.messages)
        error: ParseError | None = None
        for round_ in range(REASKS + 1):
            text = self._complete(self.chat_request(messages, req.params), stage, req.label, from_batch)
            try:
                return parse(text)
            except ParseError as exc:
                error = exc
            repaired = repair_json(text)
            if repaired != text:
                try:
                    value = parse(repaired)
                    self._add(stage, repairs=1)
                    return value
                except ParseError as exc:
                    error = exc
            if round_ < REASKS:
                self._add(stage, reasks=1)
                log.info("stage `%s` query %s: unparseable answer (%s); re-asking", stage, req.label, error)
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": (
                            f"Your reply could not be used: {error}. Answer the original request again and follow the "
                            f"requested output format exactly, with nothing else around it."
                        ),
                    },
                ]
        self._add(stage, errors=1)
        raise FreshStackError(
            f"{self.base_url}: model {self.config.model!r} kept answering stage `{stage}`"
            + (f" for query {req.label}" if req.label else "")
            + f" in an unusable shape after {REASKS} follow-ups ({error}); try a stronger model or a lower temperature"
        )

    def chat_many(self, requests: Requests, *, stage: str, parse: Parsers[T], desc: str = "") -> list[T]:
        """Answer every request (cached, retried, parsed), at most `max_concurrency` at a time; results in order.

        `parse` is one callable for all requests or one per request; it raises ParseError on a bad shape.
        """
        reqs = [r if isinstance(r, ChatRequest) else ChatRequest(messages=list(r)) for r in requests]
        parsers = list(parse) if isinstance(parse, Sequence) else [parse] * len(reqs)
        if len(parsers) != len(reqs):
            raise ValueError(f"{len(parsers)} parsers for {len(reqs)} requests")
        self._add(stage)  # the stage shows in stats even when it had nothing to do
        if not reqs:
            return []
        from_batch: set[str] = set()
        if self.config.batch:
            if self.spend_cap is not None:  # a job is billed whole when it ends: no call could be refused
                raise FreshStackError(
                    f"stage `{stage}`: the Batch API cannot run under a spend cap (a batch job is paid as a whole, "
                    "after it ran); set llm.batch: false (or FRESHSTACK_LLM_BATCH=0) for a budgeted run"
                )
            from_batch = run_batch(self, stage, [self.chat_request(r.messages, r.params) for r in reqs])
        return self._run_pool(
            [lambda r=r, p=p: self._chat_one(r, stage, p, from_batch) for r, p in zip(reqs, parsers, strict=True)],
            desc or stage,
        )

    # ---- embeddings (the same cache, retries, pool and accounting as chat) ---------------------------------

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

        def priced() -> dict[str, Any]:  # an embeddings usage holds input tokens only, sometimes as total_tokens
            data = call()
            usage = data.get("usage") or {}
            return {**data, "usage": {"prompt_tokens": usage.get("prompt_tokens") or usage.get("total_tokens") or 0}}

        worst = worst_case_cost(inputs, 0, self.config.input_price_per_million, 0.0)
        data = self._paid(stage, f"{len(inputs)} texts", worst, priced)
        rows = sorted(data["data"], key=lambda d: d.get("index", 0))
        for (key, text), row in zip(chunk, rows, strict=True):
            self.cache.put(
                key, {"endpoint": "embeddings", "model": model, "input": text}, {"embedding": row["embedding"]}
            )

    def _run_pool(self, jobs: list[Callable[[], T]], desc: str) -> list[T]:
        """Run jobs on a bounded pool; the first failure cancels what has not started and is raised."""
        from tqdm.auto import tqdm

        results: list[Any] = [None] * len(jobs)
        workers = max(1, min(self.config.max_concurrency, len(jobs)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm")
        bar = tqdm(total=len(jobs), desc=desc, unit="call", disable=not self.show_progress)
        try:
            futures: dict[Future, int] = {pool.submit(job): i for i, job in enumerate(jobs)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for fut in done:
                    exc = fut.exception()
                    if exc is not None:
                        raise exc
                    results[futures[fut]] = fut.result()
                    bar.update(1)
        except BaseException as exc:
            # Ctrl-C or a fatal error: drop what has not started, leave running calls to finish (and be cached); at
            # the spend cap, wait for them, so the ledger holds every paid call when the stop is reported
            pool.shutdown(wait=isinstance(exc, BudgetExhausted), cancel_futures=True)
            raise
        finally:
            bar.close()
        pool.shutdown(wait=True)
        return results


def _content(response: dict[str, Any]) -> str:
    try:
        return response["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""
