"""The cost of a refresh: the next snapshot made by `freshstack-hf refresh` after the previous one, against building
that same snapshot from scratch. LLM calls, tokens and wall time side by side, with their ratio.

The setup is the refresh tests' (tests/snapshot_topic.py): the project's Laravel dump fixture, whose questions fall
before, between and after the two snapshot dates, and a git repository of docs whose commits carry dates (the
second changes, moves, deletes and adds files). Every LLM call goes over HTTP, through the real `openai` client
and the refresh's spend cap, to the tests' local OpenAI-compatible server, which counts the requests and the
tokens it bills (`usage`), so the calls are what an endpoint would bill. Three refreshes of the snapshot at the
later date, each timed as the whole command (plan, build, drift, validate, publish):

- *after the first*: the same repo and work folder as the refresh at the earlier date (what a schedule does on a
  machine that keeps the work folder, or a runner whose cache survived);
- *from scratch*: a fresh work folder and no previous snapshot (what the snapshot costs with no history);
- *previous snapshot, no work folder*: the earlier revision published but the work folder gone (a GitHub-hosted
  runner whose cache was evicted: GitHub drops a cache unused for 7 days).

Before each refresh, its `--dry-run` plan (the sum of the stages' own estimates) is taken, and set against what the
refresh then sent: the calls and the input tokens the server billed, with their ratio and a verdict (issue 37's
goals: calls within 15%, input tokens within 25%, `benchmarks.goals`). The costs themselves have no goal; they are
printed, not judged. Run: `python -m benchmarks refresh`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.figures import figure

TESTS = Path(__file__).resolve().parent.parent / "tests"
PRICES = {"input_price_per_million": 2.5, "output_price_per_million": 10.0}
BUDGET = "5"
REPEATS = 3
CALLS_WITHIN, TOKENS_WITHIN = 0.15, 0.25  # how close the dry run's estimate must come to what is sent
KEYS = ("first", "after", "scratch", "cold")  # the four refreshes' figures: first_calls, after_calls, ...
LATENCY = 0.2  # seconds per answer: an endpoint's time, so the wall time shows what the calls take


@dataclass(frozen=True)
class Cost:
    """One refresh as the server saw it, and how long the command took; `queries` is what it published."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    questions: int  # planned: carried and new
    queries: int  # published, after the filter
    carried: int
    published: tuple[str, ...]  # the published query ids and judged pairs, to compare two builds like for like
    planned_calls: int  # the dry run's estimate, taken just before
    planned_tokens: int  # its input tokens

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _server() -> Any:
    """The tests' chat server, also summing the tokens each answer billed."""
    from llm_server import FakeOpenAI

    class Counting(FakeOpenAI):
        def __init__(self) -> None:
            super().__init__(latency=LATENCY)
            self.prompt_tokens = self.completion_tokens = 0

        def completion(self, body: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
            data = super().completion(body, malformed)
            with self._lock:
                self.prompt_tokens += data["usage"]["prompt_tokens"]
                self.completion_tokens += data["usage"]["completion_tokens"]
            return data

    return Counting()


def _refresh(definition: Path, repo: Path, date: str, server: Any) -> Cost:
    """`freshstack-hf refresh DEFINITION --date DATE --repo REPO` through the CLI's entry point, measured."""
    from freshstack_hf.cli.main import main

    args = ["refresh", str(definition), "--date", date, "--repo", str(repo), "--budget-usd", BUDGET, "--quiet"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main([*args, "--dry-run", "--json"])
    if code != 0:
        raise RuntimeError(f"the dry run of {repo} at {date} failed: {err.getvalue()[-600:]}")
    plan = json.loads(out.getvalue())["topics"]["laravel"]["plan"]
    calls, prompt, completion = len(server.chat_bodies), server.prompt_tokens, server.completion_tokens
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(args)
    seconds = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"refresh of {repo} at {date} failed: {err.getvalue()[-600:]}")
    manifest = json.loads(Path(f"{repo}@{date}", "manifest.json").read_text(encoding="utf-8"))
    topic = manifest["topics"]["laravel"]
    spent = topic["refresh"]["spent"]
    cost = Cost(
        calls=len(server.chat_bodies) - calls,
        prompt_tokens=server.prompt_tokens - prompt,
        completion_tokens=server.completion_tokens - completion,
        seconds=seconds,
        questions=int(topic["refresh"]["questions"]["total"]),
        queries=int(topic["stats"]["queries"]),
        carried=int(topic["refresh"]["questions"]["carried"] or 0),
        published=_judged(Path(f"{repo}@{date}")),
        planned_calls=int(plan["calls"]),
        planned_tokens=int(plan["est_input_tokens"]),
    )
    # the refresh's own ledger agrees with the server: every call it paid for reached it, and no other
    assert spent["calls"] == cost.calls, (spent, cost)
    assert spent["prompt_tokens"] == cost.prompt_tokens and spent["completion_tokens"] == cost.completion_tokens
    return cost


def _judged(revision: Path) -> tuple[str, ...]:
    """Every (query, nugget, document, score) the revision publishes: equal for two builds of the same snapshot."""
    import pyarrow.parquet as pq

    rows = pq.read_table(revision / "data" / "laravel" / "nugget_qrels.parquet").to_pylist()
    return tuple(sorted("|".join(str(v) for v in row.values()) for row in rows))


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def _median(costs: list[Cost]) -> Cost:
    """The first repetition's counts (every repetition makes the same calls) with the median wall time."""
    counts = {(c.calls, c.tokens, c.published, c.planned_calls, c.planned_tokens) for c in costs}
    assert len(counts) == 1, f"repetitions of one refresh differ: {counts}"
    return replace(costs[0], seconds=statistics.median(c.seconds for c in costs))


def main() -> None:
    sys.path.insert(0, str(TESTS))
    from snapshot_topic import NEW, OLD, make_history, write_definition

    os.environ.setdefault("FRESHSTACK_LLM_BACKOFF", "0.01")
    taken: dict[str, list[Cost]] = {"first": [], "after": [], "scratch": [], "cold": []}
    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp, _server() as server:
        for rep in range(REPEATS):  # each in fresh folders (the first also loads the models: the median drops it)
            root = Path(tmp) / f"rep{rep}"
            make_history(root)
            llm = {"base_url": server.base_url, "model": "test-model", "max_concurrency": 2, **PRICES}
            definition = write_definition(root, llm=llm)
            taken["first"].append(_refresh(definition, root / "kept" / "freshstack", OLD, server))
            taken["after"].append(_refresh(definition, root / "kept" / "freshstack", NEW, server))
            taken["scratch"].append(_refresh(definition, root / "scratch" / "freshstack", NEW, server))
            evicted = root / "evicted" / "freshstack"
            evicted.parent.mkdir()
            shutil.copytree(root / "kept" / f"freshstack@{OLD}", evicted.parent / f"freshstack@{OLD}")
            taken["cold"].append(_refresh(definition, evicted, NEW, server))
    first, after, scratch, cold = (_median(taken[k]) for k in ("first", "after", "scratch", "cold"))

    rows = (
        (f"first snapshot ({OLD})", first),
        (f"refresh to {NEW}, after the first", after),
        (f"{NEW} from scratch (no history)", scratch),
        (f"{NEW}: previous snapshot, no work folder", cold),
    )
    print(
        f"each refresh run {REPEATS} times in fresh folders against the local chat server ({LATENCY:g} s an answer, "
        "2 in flight); wall time: the median"
    )
    print(
        f"{'refresh':<44} {'LLM calls':>9} {'prompt tok':>10} {'output tok':>10} {'wall s':>7} "
        f"{'questions':>9} {'published':>9}"
    )
    for label, c in rows:
        print(
            f"{label:<44} {c.calls:>9} {c.prompt_tokens:>10,} {c.completion_tokens:>10,} {c.seconds:>7.2f} "
            f"{c.questions:>9} {c.queries:>9}"
        )
    for key, (_, c) in zip(KEYS, rows, strict=True):
        figure(f"{key}_calls", c.calls, "calls", "d", f"LLM calls the server answered: {key}")
        figure(f"{key}_tokens", c.tokens, "tokens", ",d", f"tokens the server billed, prompt and output: {key}")
        figure(f"{key}_prompt_tokens", c.prompt_tokens, "", ",d", f"prompt tokens the server billed: {key}")
        figure(f"{key}_s", c.seconds, "s", ".1f", f"the refresh's wall time (median): {key}")
    figure("ratio_calls", after.calls / scratch.calls, "x", ".2f", "calls after the first against from scratch")
    figure("ratio_tokens", after.tokens / scratch.tokens, "x", ".2f", "tokens after the first against from scratch")
    figure("ratio_time", after.seconds / scratch.seconds, "x", ".2f", "wall time after the first against scratch")
    figure("latency_s", LATENCY, "s", "g", "the local chat server's time for an answer")
    _estimates(rows)
    same = "the same" if after.published == scratch.published == cold.published else "DIFFERENT"
    print(f"the three builds of {NEW} publish {same} judgments ({len(after.published)} nugget-level rows)")
    print(
        f"refresh after the first against from scratch: {_ratio(after.calls, scratch.calls)} the calls "
        f"({scratch.calls - after.calls} saved), {_ratio(after.tokens, scratch.tokens)} the tokens "
        f"({scratch.tokens - after.tokens:,} saved), {_ratio(after.seconds, scratch.seconds)} the wall time"
    )
    print(
        f"without the work folder (an evicted cache): {_ratio(cold.calls, scratch.calls)} the calls and "
        f"{_ratio(cold.tokens, scratch.tokens)} the tokens of from scratch, though it carries {cold.carried} "
        "questions from the previous snapshot: the savings live in the work folder"
    )


def _estimates(rows: tuple[tuple[str, Cost], ...]) -> None:
    """Each refresh's dry-run estimate against what it sent, judged against the goals."""
    from benchmarks.goals import judge

    print("the dry run's estimate (the sum of the stages' plans) against what each refresh then sent:")
    print(f"{'refresh':<44} {'calls est/sent':>15} {'ratio':>6} {'input tok est/sent':>19} {'ratio':>6}")
    for key, (label, c) in zip(KEYS, rows, strict=True):
        figure(f"{key}_planned_calls", c.planned_calls, "", "d", f"LLM calls the dry run planned: {key}")
        figure(f"{key}_planned_tokens", c.planned_tokens, "", ",d", f"prompt tokens the dry run planned: {key}")
        calls, tokens = f"{c.planned_calls}/{c.calls}", f"{c.planned_tokens:,}/{c.prompt_tokens:,}"
        calls_ratio, tokens_ratio = _ratio(c.planned_calls, c.calls), _ratio(c.planned_tokens, c.prompt_tokens)
        print(f"{label:<44} {calls:>15} {calls_ratio:>6} {tokens:>19} {tokens_ratio:>6}")
        calls_ok = abs(c.planned_calls - c.calls) <= CALLS_WITHIN * c.calls
        tokens_ok = abs(c.planned_tokens - c.prompt_tokens) <= TOKENS_WITHIN * c.prompt_tokens
        verdicts = (
            judge(
                f"refresh estimate, {label}: calls",
                f"{calls} ({calls_ratio})",
                "calls within 15%",
                calls_ok,
                f"{key}_planned_calls",
            ),
            judge(
                f"refresh estimate, {label}: input tokens",
                f"{tokens} ({tokens_ratio})",
                "input tokens within 25%",
                tokens_ok,
                f"{key}_planned_tokens",
            ),
        )
        print(f"{'':<44} {verdicts[0]}; {verdicts[1]}")


if __name__ == "__main__":
    main()
