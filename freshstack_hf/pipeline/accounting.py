"""The build's account: what each stage cost, what a plan would cost, and what a snapshot's manifest keeps.

Backends count since they were made (one per build process), so a stage's own calls, cache hits, tokens and
cost are the delta of its counters before and after it ran; a resumed build reports the replayed calls as cache
hits, which is what they were. A `--dry-run` plan is priced at the configured rates, and a dated snapshot's
manifest sums the stage records into what it reused and what it did not pay for again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from freshstack_hf.pipeline.topic_config import TopicConfig


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


def with_cost(plan: dict[str, Any], config: TopicConfig) -> dict[str, Any]:
    """Add the estimated price of a plan's tokens at the configured rates (Batch API: half price)."""
    llm = config.llm
    tokens_in, tokens_out = plan.get("est_input_tokens"), plan.get("est_output_tokens")
    if llm.offline or not plan.get("calls") or tokens_in is None:
        return plan
    rate = 0.5 if llm.batch else 1.0
    cost = rate * (tokens_in * llm.input_price_per_million + (tokens_out or 0) * llm.output_price_per_million) / 1e6
    return {**plan, "est_cost_usd": round(cost, 2) if llm.input_price_per_million else "set llm.*_price_per_million"}


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
