"""The refresh tests' topic: the snapshot tests' Laravel docs repository with a third dated commit, the tests' chat
server billing every call (`Billing`), and `refresh` through the CLI's entry point; shared by `test_refresh` and the
end-to-end test of a board kept fresh (`test_refresh_board`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import threading
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from corpus_stage import git
from fake_llm_answers import task_responder
from llm_server import FakeOpenAI
from snapshot_topic import DUMP, make_history, marked, write_definition

from freshstack_hf.cli.main import main
from freshstack_hf.pipeline import build_prompts

D1, D2, D3 = "2024-02-29", "2024-06-30", "2024-08-31"
BEFORE_D2_COMMIT = "2024-06-10T12:00:00+00:00"  # between the second commit and D2 (`make_three_commits`)
THIRD_COMMIT = "2024-08-10T12:00:00+00:00"
THIRD = {  # the third commit: one file changed, one added
    "scheduling.md": "Commands scheduled in routes/console.php run when the scheduler is invoked every minute by cron "
    "with php artisan schedule:run; use schedule:work locally.",
    "validation.md": "Validate a request with $request->validate and an array of rules; a failure redirects back.",
}
PRICES = {"input_price_per_million": 2.5, "output_price_per_million": 10.0}
MARKER = re.compile(r"mk-([a-z-]+)")
PAID = (build_prompts.NUGGETS_SYSTEM, build_prompts.SUBQUESTIONS_SYSTEM, build_prompts.CLOSED_BOOK_SYSTEM)


# ---- helpers -------------------------------------------------------------------------------------------------------


def make_three_commits(root: Path, before_d2: Mapping[str, str] | None = None) -> Path:
    """The snapshot tests' docs repository (commits of 2024-01-15 and 2024-06-01) and a third commit on 2024-08-10;
    with `before_d2` ({file name: text}), those files are added by a commit of 2024-06-10, in D2's corpus."""
    repo = make_history(root)
    if before_d2:
        for name, text in before_d2.items():
            (repo / name).write_text(marked(name, text), encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "before D2", date=BEFORE_D2_COMMIT)
    for name, text in THIRD.items():
        (repo / name).write_text(marked(name, text), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "third", date=THIRD_COMMIT)
    return repo


def titles() -> dict[str, str]:
    """Question id -> title, from the dump itself: which question a prompt is about."""
    rows = ET.parse(DUMP).getroot()
    return {r.get("Id"): r.get("Title") for r in rows if r.get("PostTypeId") == "1" and r.get("Title")}


def about(prompt: str) -> set[str]:
    return {qid for qid, title in titles().items() if title in prompt}


def prompt(body: dict[str, Any]) -> tuple[str, str]:
    """(system message, last user message) of a chat request."""
    return body["messages"][0]["content"], body["messages"][-1]["content"]


class Billing(FakeOpenAI):
    """The tests' chat server, keeping each answered request with the usage it billed. `reasoning` bills every call
    its whole output allowance (`max_tokens`), as a model billing hidden reasoning tokens can: far more than a plan
    estimates. With `kill_after`, the process `victim` is killed (SIGKILL) when the next request comes."""

    def __init__(self, *, kill_after: int | None = None, reasoning: bool = False) -> None:
        super().__init__(self._answer)
        self.answered: list[tuple[str, dict[str, Any], dict[str, int]]] = []
        self.kill_after, self.reasoning = kill_after, reasoning
        self.victim: int | None = None
        self.killed = threading.Event()
        self._this_call = threading.local()

    def _answer(self, messages: list[dict[str, str]], body: dict[str, Any]) -> str:
        self._this_call.kill = False
        if self.kill_after is not None and len(self.answered) >= self.kill_after and self.victim:
            os.kill(self.victim, signal.SIGKILL)  # mid-refresh, before this request is answered
            self.victim, self.kill_after, self._this_call.kill = None, None, True
            self.killed.set()
            return "{}"  # never read: the client is gone
        return task_responder(messages, body)

    def completion(self, body: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
        data = super().completion(body, malformed)
        if self.reasoning:
            data["usage"]["completion_tokens"] = body["max_tokens"]
        if not self._this_call.kill:
            self.answered.append((json.dumps(body, sort_keys=True), body, dict(data["usage"])))
        return data

    def cost(self, start: int = 0, end: int | None = None, prices: dict[str, float] = PRICES) -> float:
        """What the answered calls `start:end` cost at `prices`, as the server billed them."""
        usage = [u for _, _, u in self.answered[start:end]]
        return (
            sum(
                u["prompt_tokens"] * prices["input_price_per_million"]
                + u["completion_tokens"] * prices["output_price_per_million"]
                for u in usage
            )
            / 1e6
        )


def definition(root: Path, base_url: str = "", **llm: Any) -> Path:
    """The Laravel topic around the docs repository; online (priced) when `base_url` is given, else offline."""
    if not base_url:
        return write_definition(root)
    return write_definition(root, llm={"base_url": base_url, "model": "test-model", "max_concurrency": 2, **llm})


def refresh(definition: Path, date: str, repo: Path, budget: float | str, *extra: str) -> tuple[int, str, str]:
    """`freshstack-hf refresh ...` through the CLI's entry point: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    args = ["refresh", str(definition), "--date", date, "--repo", str(repo), "--budget-usd", str(budget)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--quiet", "--resamples", "50", *extra])
    return code, out.getvalue(), err.getvalue()
