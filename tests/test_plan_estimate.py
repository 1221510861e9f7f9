"""A plan is the sum of the stages' own estimates, and it is honest: `refresh --dry-run` against what the same
refresh then sends to the tests' chat server (which bills in cl100k tokens, as an endpoint does), on the snapshot
tests' topic; and a plan that cannot be priced says why, with no number."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from llm_server import FakeOpenAI
from snapshot_topic import NEW, OLD, make_history, write_definition

from freshstack_hf.cli.main import main
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.accounting import Price, StageEstimate, StagePlan, price, prompt_tokens, stage_plan

PRICES = {"input_price_per_million": 2.5, "output_price_per_million": 10.0}
CALLS_WITHIN, TOKENS_WITHIN = 0.15, 0.25  # the acceptance bounds


class Billing(FakeOpenAI):
    """The chat server, keeping the prompt tokens it billed for each answer."""

    def __init__(self) -> None:
        super().__init__()
        self.billed: list[int] = []

    def completion(self, body: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
        data = super().completion(body, malformed)
        with self._lock:
            self.billed.append(data["usage"]["prompt_tokens"])
        return data


def run(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()) as err:
        code = main([*args, "--quiet", "--json"])
    assert code == 0, err.getvalue()[-2000:]
    return json.loads(out.getvalue())


def planned_then_sent(definition: Path, repo: Path, date: str, server: Billing) -> tuple[dict[str, Any], int, int]:
    """The dry run's plan of `refresh` at `date`, then the calls and prompt tokens the refresh itself sent."""
    args = ["refresh", str(definition), "--date", date, "--repo", str(repo), "--budget-usd", "5"]
    plan = run(*args, "--dry-run")["topics"]["laravel"]["plan"]
    start = len(server.billed)
    run(*args)
    return plan, len(server.billed) - start, sum(server.billed[start:])


@pytest.mark.slow
def test_the_dry_run_estimates_what_each_refresh_then_sends(tmp_path):
    """The bench's refreshes (`python -m benchmarks refresh`): the first snapshot, the next one with the work folder
    kept, and the next one with the previous snapshot published but the work folder gone (nothing cached)."""
    make_history(tmp_path)
    with Billing() as server:
        llm = {"base_url": server.base_url, "model": "test-model", "max_concurrency": 2, **PRICES}
        definition = write_definition(tmp_path, llm=llm)
        kept, evicted = tmp_path / "kept" / "freshstack", tmp_path / "evicted" / "freshstack"
        cases = {"first": (kept, OLD), "after": (kept, NEW), "cold": (evicted, NEW)}
        seen = {}
        for label, (repo, date) in cases.items():
            if label == "cold":
                evicted.parent.mkdir()
                shutil.copytree(kept.parent / f"freshstack@{OLD}", evicted.parent / f"freshstack@{OLD}")
            plan, calls, tokens = planned_then_sent(definition, repo, date, server)
            seen[label] = (plan, calls, tokens)
            assert calls > 0 and abs(plan["calls"] - calls) <= CALLS_WITHIN * calls, (label, plan["calls"], calls)
            assert abs(plan["est_input_tokens"] - tokens) <= TOKENS_WITHIN * tokens, (label, plan, tokens)
            # one source of truth: the snapshot's figures are its stages' sums
            stages = plan["stages"].values()
            assert plan["calls"] == sum(s["calls"] for s in stages)
            assert plan["est_input_tokens"] == sum(s["est_input_tokens"] for s in stages)
    # the work folder's cache answers the carried questions' requests; without it they are all sent again
    after, cold = seen["after"][0], seen["cold"][0]
    assert after["cached"] > 0 and cold["cached"] == 0 and after["calls"] < cold["calls"]
    assert after["questions_carried"] == cold["questions_carried"] == 4


def test_the_plan_counts_prompts_as_the_endpoint_bills_them():
    """The plan's prompt count and the chat server's billing agree on a request: cl100k and the chat framing."""
    from llm_server import _usage

    messages = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "Does `queue:work` run?"}]
    assert prompt_tokens(messages) == _usage(messages, "")["prompt_tokens"] > 0


def test_a_plan_without_prices_has_no_number_and_says_why(tmp_path, capsys):
    llm = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m")
    unpriced = price(1000, 200, llm)
    assert unpriced.usd is None and unpriced.reason.startswith("no prices for model m: set llm.input_price_per_million")
    assert price(None, 200, LLMConfig(base_url="http://x/v1", **PRICES)).usd is None  # tokens unknown: why, too
    assert price(None, None, LLMConfig()) == Price(0.0)  # offline costs nothing
    assert price(1_000_000, 0, LLMConfig(base_url="http://x/v1", batch=True, **PRICES)).usd == pytest.approx(1.25)
    assert Price.total([Price(1.0), unpriced, Price(2.0)]) == unpriced
    plan = stage_plan("nuggets", {"backend": "m"}, StageEstimate(3, 1, 1000, 200), llm)
    assert isinstance(plan, StagePlan) and plan.price == unpriced
    assert plan.as_dict()["est_cost_usd"] is None and plan.as_dict()["no_price"] == unpriced.reason
    assert plan.estimate is not None and plan.estimate.calls == 2  # the cached request costs no call

    make_history(tmp_path)  # `build --dry-run` prints the same plan: no number, the reason
    definition = write_definition(tmp_path, llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    data = yaml.safe_load(definition.read_text())
    assert "input_price_per_million" not in data["llm"]
    args = ["build", str(definition), "--out", str(tmp_path / "freshstack"), "--dry-run", "--stages", "nuggets"]
    before = run(*args)["nuggets"]  # no questions stage yet: the plan reads no source, its tokens are unknown
    assert before["est_input_tokens"] is None and before["est_cost_usd"] is None and before["no_price"]
    assert not (tmp_path / "freshstack-work").exists()  # a plan writes nothing
    run("build", str(definition), "--out", str(tmp_path / "freshstack"), "--stages", "questions")
    work = sorted(p for p in (tmp_path / "freshstack-work").rglob("*"))
    nuggets = run(*args)["nuggets"]  # the questions known: every prompt counted
    assert nuggets["calls"] == 8 and nuggets["est_input_tokens"] > 0
    assert nuggets["est_cost_usd"] is None and nuggets["no_price"] == unpriced.reason
    assert sorted(p for p in (tmp_path / "freshstack-work").rglob("*")) == work  # a plan writes nothing
