"""A hard cap on what paid LLM calls may cost, checked where the calls are made, with a ledger that outlives a kill.

A scheduled refresh runs unattended, so "the estimate looked fine" is not enough: a verbose or reasoning model can
bill far more output than planned. `SpendCap` is handed to the client (`LLMClient.spend_cap`), which asks it before
every request that would reach the endpoint. Before a call it *reserves* the call's worst case (every prompt byte
a token, since no tokenizer makes a token of less than a byte, plus the message framing, and the request's whole
`max_tokens` of output); the call is refused when what was spent plus what is reserved would pass the budget.
After the call the reservation is replaced by the price of the usage the endpoint reported. So the money spent
never exceeds the budget, whatever the concurrency, and the run stops cleanly at the cap with every answer it
paid for in the response cache.

Each paid call is appended to a JSON-lines *ledger* before its answer is cached, so a later run (a resumed refresh,
possibly with a larger budget) starts from what was really spent, across kills: a call killed between the two
writes is paid again on resume and counted twice, which is what happened to the money. The ledger says which
stage paid what and when, so it is readable by its owner alone, like the response cache beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.owner_only import OWNER_ONLY, OWNER_ONLY_DIR

MESSAGE_OVERHEAD = 16  # tokens a chat template may add per message (role markers, separators), generously
REQUEST_OVERHEAD = 16  # and per request (the assistant's reply header)


class BudgetExhausted(FreshStackError):
    """The next call could pass the budget: nothing more is sent. Carries the numbers for the caller's message."""

    def __init__(self, spent: float, budget: float, worst: float, what: str) -> None:
        self.spent, self.budget, self.worst, self.what = spent, budget, worst, what
        super().__init__(
            f"spend cap reached: ${spent:.4f} of ${budget:.2f} spent, and the next call ({what}) could cost up to "
            f"${worst:.4f}"
        )


def worst_case_cost(
    messages: Sequence[dict[str, Any]] | Sequence[str],
    max_output_tokens: int,
    input_price_per_million: float,
    output_price_per_million: float,
) -> float:
    """An upper bound of one request's price in USD: prompt bytes as tokens, plus the whole output allowance."""
    prompt = REQUEST_OVERHEAD
    for m in messages:
        text = m if isinstance(m, str) else str(m.get("content") or "")
        prompt += len(text.encode("utf-8")) + MESSAGE_OVERHEAD
    return (prompt * input_price_per_million + max(0, max_output_tokens) * output_price_per_million) / 1e6


class SpendCap:
    """A budget in USD shared by every client of a run (thread-safe), and its ledger file of paid calls.

    `scope(topic=...)` labels the ledger lines written inside it, so one refresh of several topics can report
    each topic's spend from the one ledger its budget is kept in."""

    def __init__(self, budget_usd: float, ledger: str | Path) -> None:
        self.budget = float(budget_usd)
        self.ledger = Path(ledger)
        self.run_id = uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._held = 0.0
        self._labels: dict[str, str] = {}
        self.spent = sum(float(line.get("usd") or 0.0) for line in self.lines())
        if self.ledger.is_file() and not self.ledger.read_bytes().endswith(b"\n") and self.ledger.stat().st_size:
            with self.ledger.open("ab") as f:  # end a torn last line, so the next call's line stands on its own
                f.write(b"\n")

    def lines(self) -> list[dict[str, Any]]:
        """Every paid call the ledger holds, in the order paid (a torn last line, from a kill, is skipped)."""
        if not self.ledger.is_file():
            return []
        out = []
        for raw in self.ledger.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict):
                out.append(item)
        return out

    @property
    def left(self) -> float:
        return max(0.0, self.budget - self.spent)

    @contextlib.contextmanager
    def scope(self, **labels: str) -> Iterator[None]:
        """Label the ledger lines of the calls made inside the block (runs are sequential per scope)."""
        before = dict(self._labels)
        self._labels.update(labels)
        try:
            yield
        finally:
            self._labels = before

    def reserve(self, worst: float, what: str = "") -> float:
        """Hold `worst` USD for a call about to be sent; `BudgetExhausted` when it might not fit."""
        with self._lock:
            if self.spent + self._held + worst > self.budget + 1e-12:
                raise BudgetExhausted(self.spent, self.budget, worst, what or "an LLM call")
            self._held += worst
        return worst

    def release(self, held: float) -> None:
        """Give back a reservation whose call was never answered (an error, an interrupt): nothing was paid."""
        with self._lock:
            self._held = max(0.0, self._held - held)

    def settle(self, held: float, usd: float, **record: Any) -> None:
        """Replace a reservation by the call's price and append the call to the ledger (before it is cached)."""
        line = {"run": self.run_id, **self._labels, **record, "usd": round(usd, 8), "at": round(time.time(), 3)}
        data = (json.dumps(line, sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            self._held = max(0.0, self._held - held)
            self.spent += usd
            self.ledger.parent.mkdir(mode=OWNER_ONLY_DIR, parents=True, exist_ok=True)
            fd = os.open(self.ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, OWNER_ONLY)
            try:
                os.write(fd, data)  # one small append: whole or, after a kill, absent
            finally:
                os.close(fd)

    def totals(self, **where: str) -> dict[str, Any]:
        """What the ledger's lines matching `where` cost: USD, calls, tokens, per stage, and how many runs paid."""
        lines = [x for x in self.lines() if all(x.get(k) == v for k, v in where.items())]
        stages: dict[str, dict[str, Any]] = {}
        for x in lines:
            s = stages.setdefault(str(x.get("stage", "")), {"calls": 0, "usd": 0.0})
            s["calls"] += 1
            s["usd"] += float(x.get("usd") or 0.0)
        return {
            "usd": round(sum(float(x.get("usd") or 0.0) for x in lines), 6),
            "calls": len(lines),
            "prompt_tokens": sum(int(x.get("prompt_tokens") or 0) for x in lines),
            "completion_tokens": sum(int(x.get("completion_tokens") or 0) for x in lines),
            "runs": len({x.get("run") for x in lines}),
            "by_stage": {k: {"calls": v["calls"], "usd": round(v["usd"], 6)} for k, v in sorted(stages.items())},
        }
