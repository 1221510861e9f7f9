"""A refresh's plan: every topic cut at the date, priced by its stages' plans, and refused before anything is
written when an input is wrong or the estimate passes the budget.

What a refresh checks before it spends (`refresh` runs these in order, each refusing with every problem named):

- the date against the repo's published snapshots (`check_published`): a date already published with these topics
  is nothing to do; one published without them, or one before the last snapshot, would rewrite history;
- each topic (`plan_topic`): its repositories fetched and cut at the date (a repository that vanished is found
  here), its plan made (`pipeline.planning.snapshot_plan`: the sum of the stages' own estimates), its LLM settings
  budgetable (`check_budgetable`), and its questions source newer than the last snapshot;
- the budget (`check_budget`): positive, and not under the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import OPENAI, transport_kind
from freshstack_hf.owner_only import owner_only
from freshstack_hf.pipeline.choose import effective_config
from freshstack_hf.pipeline.config.topic import TopicConfig
from freshstack_hf.pipeline.corpus.repos import update_clone
from freshstack_hf.pipeline.inputs import REPO_CACHE
from freshstack_hf.pipeline.planning.snapshot_plan import SnapshotPlan, plan_snapshot
from freshstack_hf.pipeline.snapshots import check_snapshots, snapshot_config
from freshstack_hf.pipeline.work_folder import default_work_dir
from freshstack_hf.repo.revisions import revision_folder, revision_of
from freshstack_hf.repo.targets import Target


@dataclass
class TopicPlan:
    """One topic's snapshot at D: the definition cut at D, where its work lives, what it would cost."""

    config: TopicConfig
    dated: TopicConfig
    previous: Path | None
    shared: Path
    plan: SnapshotPlan

    @property
    def name(self) -> str:
        return self.config.topic

    @property
    def online(self) -> bool:
        return not self.config.llm.offline

    @property
    def cost(self) -> float:
        """The estimate in USD; a plan without a price never gets this far (`plan_topic` names it a problem)."""
        return self.plan.price.usd or 0.0

    @property
    def calls(self) -> int:
        return self.plan.estimate.calls or 0


def where(config: TopicConfig) -> str:
    return f"topic {config.topic!r} ({config.path})"


def check_published(configs: list[TopicConfig], target: Target, date: str) -> bool:
    """Whether revision `date` of `target` is published already with every topic (nothing to do); raises
    `ValidationError`, nothing written, when it is published without some of them or is older than the last."""
    published = target.revisions()
    if date in published:
        held = target.topics_at(date)
        missing = [c for c in configs if c.topic not in held]
        if not missing:
            return True
        raise ValidationError(
            [
                Problem(
                    where(c),
                    f"revision {date} of {target.label} is published already without this topic, and a published "
                    "revision is never rewritten",
                    fix=f"refresh at a --date after {date}",
                )
                for c in missing
            ],
            f"refresh at {date} refused; nothing was written",
        )
    last = published[-1] if published else ""
    if last and date < last:
        raise ValidationError(
            [
                Problem(
                    where(c),
                    f"--date {date} is earlier than the last published snapshot {last} of {target.label}",
                    fix=f"give a --date after {last} (published revisions are never rewritten)",
                )
                for c in configs
            ],
            f"refresh at {date} refused; nothing was written",
        )
    return False


def check_budgetable(llm: LLMConfig) -> list[tuple[str, str]]:
    """(problem, fix) for each reason the topic's LLM calls could not be held to a budget; none offline."""
    if llm.offline:
        return []
    found = []
    kind = transport_kind(llm.base_url)
    if kind != OPENAI:
        found.append(
            (
                f"llm.base_url names the `{kind}` transport, which cannot hold its calls to a spend cap",
                "refresh with an OpenAI-compatible endpoint (a base URL without a `KIND+` prefix)",
            )
        )
    if llm.batch:
        found.append(
            (
                "llm.batch: a Batch API job is paid as a whole after it ran, so no call could be refused at the cap",
                "set `llm.batch: false` (or FRESHSTACK_LLM_BATCH=0) for a refresh",
            )
        )
    if not (llm.input_price_per_million > 0 and llm.output_price_per_million > 0):
        found.append(
            (
                "llm.input_price_per_million and llm.output_price_per_million are not both set, so neither the "
                "estimate nor the spend can be held to --budget-usd",
                "set both (USD per million tokens; gpt-4o: 2.5 and 10.0)",
            )
        )
    return found


def _as_refreshed(config: TopicConfig) -> TopicConfig:
    """The definition as a refresh reads it: its own LLM overrides applied (`FRESHSTACK_LLM_*`), and no
    `questions.until`: the snapshot's date is the end of its window (pins are replaced by `snapshot_config`)."""
    return replace(
        config, llm=effective_config(config.llm), questions=replace(config.questions, until=""), snapshots=()
    )


def plan_topic(
    config: TopicConfig, date: str, target: Target, scratch: Path, echo: Callable[[str], None]
) -> tuple[TopicPlan, list[Problem]]:
    """Resolve and price one topic's snapshot at `date`; problems a user must fix come back named, not raised."""
    pinned = [r.keyword for r in config.corpus.repositories if r.commit or r.snapshot_date]
    config = _as_refreshed(config)
    shared = default_work_dir(target.base, config.topic)
    previous = target.previous(config.topic, date)
    echo(f"topic {config.topic} ({config.path}): snapshot {date}" + (f", after {previous.name}" if previous else ""))
    if pinned:
        echo(f"  note: the definition pins {', '.join(pinned)}; a refresh reads every repository as of {date}")
    cache = REPO_CACHE.path(shared)
    with owner_only():  # a kept clone is the work folder's: what a fetch adds to it is its owner's alone too
        for repo in config.corpus.repositories:
            update_clone(repo, cache)
    check_snapshots(config, [date], cache, scratch=scratch)
    dated = snapshot_config(config, date, previous)
    out = revision_folder(target.base, date)
    plan = plan_snapshot(dated, out, shared, echo=lambda line: echo(f"  {line.strip()}"), scratch=scratch)
    found = TopicPlan(config, dated, previous, shared, plan)
    problems = [Problem(where(config), message, fix=fix) for message, fix in check_budgetable(config.llm)]
    if not problems and plan.price.usd is None:
        problems.append(Problem(where(config), f"the estimate has no price: {plan.price.reason}"))
    newest, last = plan.newest_post, revision_of(previous) if previous else ""
    if newest and last and newest < last:
        problems.append(
            Problem(
                where(config),
                f"the questions source {config.questions.source} is older than the last snapshot {last}: its newest "
                f"post is from {newest}, so it cannot hold the questions asked since",
                fix=f"download a Stack Exchange dump made after {last} and point `questions.source:` at it",
            )
        )
    return found, problems


def check_budget(plans: list[TopicPlan], budget_usd: float, date: str, echo: Callable[[str], None]) -> float:
    """The estimate of the whole refresh, said; raises, nothing written, when it passes `budget_usd`."""
    estimate = round(sum(p.cost for p in plans), 2)
    per_topic = ", ".join(f"{p.name} ~${p.cost:.2f}" for p in plans)
    calls = sum(p.calls for p in plans)
    if estimate > budget_usd:
        raise FreshStackError(
            f"the refresh at {date} is estimated at ~${estimate:.2f} ({per_topic}; {calls} LLM calls), over "
            f"--budget-usd {budget_usd:g}: refused, nothing was written. Give --budget-usd {estimate:.2f} or more, "
            "or refresh fewer topics"
        )
    echo(f"estimate: ~${estimate:.2f} for about {calls} LLM calls ({per_topic}), within --budget-usd {budget_usd:g}")
    return estimate


def budget_problems(plans: list[TopicPlan], budget_usd: float) -> list[Problem]:
    """A budget of nothing, named per topic with what the topic is estimated at."""
    if budget_usd > 0:
        return []
    return [
        Problem(
            where(p.config),
            f"--budget-usd {budget_usd:g} leaves nothing to spend on its LLM calls",
            fix=f"give a positive --budget-usd (this topic is estimated at ~${p.cost:.2f}, {p.calls} calls)",
        )
        for p in plans
    ]
