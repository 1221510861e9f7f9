"""The build's account: what each stage cost, what a plan would cost, and what a snapshot's manifest keeps.

Backends count since they were made (one per build process), so a stage's own calls, cache hits, tokens and
cost are the delta of its counters before and after it ran; a resumed build reports the replayed calls as cache
hits, which is what they were. A dated snapshot's manifest sums the stage records into what it reused and what it
did not pay for again.

A `--dry-run` plan is the same account made before the build: each LLM stage says, in a `StageEstimate`, the
requests it would make, how many of them a cache would answer, and the tokens of the others, counted the way an
endpoint bills them (`prompt_tokens`: cl100k, with the chat framing); a `Price` is that at the configured rates,
or no number and the reason why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from freshstack_hf.cl100k import count

if TYPE_CHECKING:
    from freshstack_hf.llm.config import LLMConfig
    from freshstack_hf.pipeline.config.topic import TopicConfig

# OpenAI's chat framing (its cookbook's `num_tokens_from_messages`): every message bills its role and content plus
# 3 tokens, and the reply is primed with 3 more.
TOKENS_PER_MESSAGE, REPLY_PRIMING = 3, 3


def delta(before: Any, after: Any) -> Any:
    """Numbers subtracted, mappings recursed, everything else (names, thresholds) taken from `after`."""
    if isinstance(after, dict):
        before = before if isinstance(before, dict) else {}
        return {k: delta(before.get(k), v) for k, v in after.items()}
    if isinstance(after, bool) or not isinstance(after, int | float):
        return after
    if isinstance(before, int | float) and not isinstance(before, bool):
        value = after - before
        return round(value, 6) if isinstance(value, float) else value
    return after


def backend_record(backend: Any, before: dict[str, Any]) -> dict[str, Any]:
    """The manifest's account of who made a stage's output and at what cost."""
    return {
        "backend": getattr(backend, "name", type(backend).__name__),
        "kind": getattr(backend, "kind", "unknown"),
        "usage": delta(before, backend.stats()),
    }


def made_by(record: dict[str, Any]) -> str:
    """` (backend), N calls, M cached` for a stage summary: who answered and what it cost; empty when nobody did."""
    who = f" ({record['backend']})" if record.get("backend") else ""
    usage = record.get("usage") or {}
    calls, hits = usage_total(usage, "calls"), usage_total(usage, "cache_hits")
    return who + (f", {calls} calls, {hits} cached" if (calls or hits) else "")


def usage_total(usage: Any, *keys: str) -> int:
    """The counters `keys` summed over a per-stage usage mapping of any depth (a stage may report per sub-stage)."""
    if isinstance(usage, dict):
        return sum(
            v if k in keys and isinstance(v, int) and not isinstance(v, bool) else usage_total(v, *keys)
            for k, v in usage.items()
        )
    return 0


def prompt_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    """The prompt tokens an OpenAI-compatible endpoint bills for `messages`: cl100k_base (the encoding this project
    has offline; gpt-4o's o200k counts within a few percent of it on English and code) plus the chat framing."""
    return REPLY_PRIMING + sum(
        TOKENS_PER_MESSAGE + count(m.get("role", "")) + count(m.get("content", "")) for m in messages
    )


@dataclass(frozen=True)
class Price:
    """What a plan would cost: `usd`, or None when it cannot be priced, and then `reason` says why."""

    usd: float | None
    reason: str = ""

    @staticmethod
    def total(prices: Iterable[Price]) -> Price:
        """The sum; unpriced when any part is, for the first part's reason."""
        prices = list(prices)
        missing = next((p for p in prices if p.usd is None), None)
        if missing is not None:
            return missing
        return Price(round(sum(p.usd or 0.0 for p in prices), 6))


def price(input_tokens: int | None, output_tokens: int | None, llm: LLMConfig) -> Price:
    """`input_tokens` and `output_tokens` at the configured rates (Batch API: half price); the offline backend
    costs nothing."""
    if llm.offline:
        return Price(0.0)
    if input_tokens is None or output_tokens is None:
        return Price(None, "the tokens are unknown before the stages they depend on have run")
    if not (input_tokens or output_tokens):
        return Price(0.0)
    if not llm.input_price_per_million and not llm.output_price_per_million:
        return Price(
            None, f"no prices for model {llm.model}: set llm.input_price_per_million and llm.output_price_per_million"
        )
    rate = 0.5 if llm.batch else 1.0
    usd = input_tokens * llm.input_price_per_million + output_tokens * llm.output_price_per_million
    return Price(rate * usd / 1e6)


@dataclass(frozen=True)
class StageEstimate:
    """What one LLM stage would ask of the model: `requests` made (None: unknown before an earlier stage ran),
    `cached` of them answered without a call (the response cache, the judgment memo), and the tokens of the
    others; `offline` when the heuristic backend answers everything (no call, nothing billed)."""

    requests: int | None
    cached: int = 0
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    offline: bool = False

    def __add__(self, other: StageEstimate) -> StageEstimate:
        """Two estimates of one stage (a stage asking for two things): unknown where either is."""

        def plus(a: int | None, b: int | None) -> int | None:
            return None if a is None or b is None else a + b

        return StageEstimate(
            plus(self.requests, other.requests),
            self.cached + other.cached,
            plus(self.input_tokens, other.input_tokens),
            plus(self.output_tokens, other.output_tokens),
            self.offline and other.offline,
        )

    @property
    def calls(self) -> int | None:
        """Requests that reach the endpoint, each billed."""
        if self.offline:
            return 0
        return None if self.requests is None else self.requests - self.cached


@dataclass(frozen=True)
class StagePlan:
    """A stage's `plan(ctx, facts)`: what it would read and write (`details`, as `--dry-run` prints them) and, for
    a stage that asks a model, its estimate and price."""

    stage: str
    details: dict[str, Any] = field(default_factory=dict)
    estimate: StageEstimate | None = None
    price: Price = Price(0.0)

    def as_dict(self) -> dict[str, Any]:
        """The plan as `build --dry-run` prints it (`key=value`) and `--json` writes it."""
        out = dict(self.details)
        if self.estimate is not None:
            e = self.estimate
            out.update(
                calls=e.calls,
                requests=e.requests,
                cached=e.cached,
                est_input_tokens=e.input_tokens,
                est_output_tokens=e.output_tokens,
            )
            out["est_cost_usd"] = None if self.price.usd is None else round(self.price.usd, 2)
            if self.price.usd is None:
                out["no_price"] = self.price.reason
        return out


def stage_plan(stage: str, details: dict[str, Any], estimate: StageEstimate, llm: LLMConfig) -> StagePlan:
    """A priced stage plan."""
    return StagePlan(stage, details, estimate, price(estimate.input_tokens, estimate.output_tokens, llm))


def snapshot_account(stages: dict[str, Any], config: TopicConfig) -> dict[str, Any]:
    """The manifest's `snapshot` and `reuse` entries: which commits and window made this revision, and what it
    did not pay for again (files, judgment pairs, LLM calls: memoised blocks plus cache hits). The previous
    revision is the one the `filter` stage carried questions over from (its record names it)."""
    corpus, judgments = stages.get("corpus", {}), stages.get("judgments", {})
    q = config.questions
    snapshot = {
        "date": config.snapshot.date,
        "previous": stages.get("filter", {}).get("previous", ""),
        "commits": {r["keyword"]: r.get("commit", "") for r in corpus.get("repositories", [])},
        "commit_dates": {r["keyword"]: r.get("commit_date", "") for r in corpus.get("repositories", [])},
        "questions_window": {"since": q.since, "until": q.until},
    }
    usage = {s: stages.get(s, {}).get("usage") or {} for s in ("nuggets", "pools", "judgments")}
    cache_hits, calls = usage_total(usage, "cache_hits"), usage_total(usage, "calls")
    reuse = {
        "files_reused": corpus.get("files_reused", 0),
        "files_chunked": corpus.get("files_chunked", 0),
        "judgment_pairs_reused": judgments.get("pairs_reused", 0),
        "judgment_calls_saved": judgments.get("calls_saved", 0),
        "llm_cache_hits": cache_hits,
        "calls_saved": judgments.get("calls_saved", 0) + cache_hits,
        "calls_made": calls,
    }
    return {"snapshot": snapshot, "reuse": reuse}
