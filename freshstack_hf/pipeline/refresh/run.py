"""`refresh`: the next dated snapshot of every topic, planned, paid for within a budget, checked, published, compared.

A benchmark stays fresh only if making its next snapshot is one command that a schedule can run unattended. A
refresh at date D is the chain a maintainer would otherwise run by hand, with the guarantees that make it safe to
leave alone:

1. *plan* every topic at D (`pipeline.planning.refresh_plan`: the questions asked since the last snapshot plus the
   carried ones, every repository at its last commit on or before D, priced by the stages' own plans) and refuse,
   writing nothing, when the estimate passes the budget or an input is wrong (a date before the last published snapshot,
   no budget, a repository that vanished, a questions source older than the last snapshot);
2. *build* each snapshot through the ordinary stages (`pipeline.runner`), into a staging folder of the refresh: a
   killed refresh resumes at the stage it stopped in and the response cache answers every call already paid for;
   the calls go through a `SpendCap` (`llm.budget`), so the money spent never passes the budget: the run stops
   cleanly at the cap, and the same command with a larger budget goes on from there;
3. write the *drift report* against the previous snapshot into the revision (`drift/PREVIOUS/`), record the
   spend in the manifest (`refresh`, per topic and in all), *validate*, and only then *publish* revision D: a
   folder `REPO@D` beside a local repo (one rename), or a Hub commit tagged D (`repo.targets`, through
   `freshstack_hf.publish` as `freshstack-hf publish` does). Nothing is published unless every topic passed.

A revision is published once and never rewritten, so a refresh at a date already published does nothing, and
says so. The definitions file is a topic definition (`scripts/topics/*.yaml`) or a list of them (`topics:`,
`config.definitions.load_definitions`).
"Nothing written" means no revision, staging folder or work file; planning does refresh two caches, since a plan
on stale inputs would be wrong: a kept clone of a repository URL is fetched (which is also how a remote that
vanished is found), and a Hub repo's previous snapshot is downloaded into the local mirror it is built from.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from freshstack_hf.atomic import atomic_path
from freshstack_hf.atomic import write_json as write_json_file
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.drift import drift_report
from freshstack_hf.drift.markdown import markdown
from freshstack_hf.drift.svg import drift_svg
from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.llm.budget import BudgetExhausted, SpendCap
from freshstack_hf.owner_only import as_published, owner_only
from freshstack_hf.pipeline.choose import make_backend
from freshstack_hf.pipeline.config.definitions import load_definitions
from freshstack_hf.pipeline.config.topic import TopicConfig
from freshstack_hf.pipeline.planning.refresh_plan import (
    TopicPlan,
    budget_problems,
    check_budget,
    check_published,
    plan_topic,
    where,
)
from freshstack_hf.pipeline.public_account import without_paths
from freshstack_hf.pipeline.refresh.private_repos import PrivateRepo, private_problems, private_targets, publish_private
from freshstack_hf.pipeline.runner import run_build
from freshstack_hf.pipeline.snapshots import TODAY, check_date
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.pipeline.work_folder import default_work_dir, snapshot_work, work_lock
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import revision_of
from freshstack_hf.repo.targets import Target, open_target
from freshstack_hf.repo.writer import transaction

LEDGER = "spend.jsonl"


@dataclass
class RefreshResult:
    """What a refresh did (`status`: "up to date", "planned" or "published") and what it cost."""

    date: str
    status: str
    repo: str
    location: str = ""
    budget_usd: float = 0.0
    estimate_usd: float = 0.0
    spent_usd: float = 0.0
    topics: dict[str, dict[str, Any]] = field(default_factory=dict)
    drift: list[str] = field(default_factory=list)
    drift_reports: list[dict[str, Any]] = field(default_factory=list, repr=False)
    private: list[str] = field(default_factory=list)  # where the embargoed questions' revisions were published

    def as_json(self) -> dict[str, Any]:
        return {
            "date": self.date,
            "status": self.status,
            "repo": self.repo,
            "location": self.location,
            "private": self.private,
            "budget_usd": self.budget_usd,
            "estimate_usd": self.estimate_usd,
            "spent_usd": self.spent_usd,
            "topics": self.topics,
            "drift": self.drift,
        }


def refresh(
    definitions: str | Path,
    date: str,
    repo: str,
    budget_usd: float,
    *,
    out: str | None = None,
    dry_run: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    show_progress: bool = True,
    echo: Callable[[str], None] = print,
) -> RefreshResult:
    """Plan, and unless `dry_run` build, check and publish, the snapshot at `date` of every topic of `definitions`
    into `repo` (a local folder or a Hub id, `out` its local mirror), spending at most `budget_usd` on LLM calls.

    Raises `FreshStackError` (exit 2), having published nothing, on bad input, an estimate over the budget, the
    budget reached mid-build, or a revision that does not validate."""
    given, date = date, check_date(date)
    if given.strip().lower() == TODAY:
        echo(f"--date today: {date} (UTC)")
    configs = load_definitions(definitions)
    target = open_target(repo, out)
    if check_published(configs, target, date):
        names = ", ".join(c.topic for c in configs)
        echo(
            f"nothing to do: revision {date} of {target.label} is published already with {names}; a published "
            "revision is never rebuilt"
        )
        return RefreshResult(date, "up to date", target.label, target.location(date), budget_usd)
    plans = _plan(configs, date, target, budget_usd, echo, definitions)
    estimate = check_budget(plans, budget_usd, date, echo)
    result = RefreshResult(date, "planned", target.label, target.location(date), budget_usd, estimate)
    result.topics = {p.name: {"plan": p.plan.as_dict()} for p in plans}
    if dry_run:
        echo("dry run: nothing was built, written or published")
        return result
    target.check_publishable()
    return _build_and_publish(
        plans,
        target,
        result,
        definitions=definitions,
        resamples=resamples,
        seed=seed,
        show_progress=show_progress,
        echo=echo,
    )


def _plan(
    configs: list[TopicConfig],
    date: str,
    target: Target,
    budget_usd: float,
    echo: Callable[[str], None],
    definitions: str | Path,
) -> list[TopicPlan]:
    """Every topic's plan, or every problem of all of them at once (`ValidationError`, nothing written)."""
    plans: list[TopicPlan] = []
    problems: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix="freshstack-plan-") as scratch:
        for config in configs:
            try:
                plan, found = plan_topic(config, date, target, Path(scratch), echo)
            except FreshStackError as exc:
                problems.append(Problem(where(config), str(exc)))
                continue
            plans.append(plan)
            problems += found
    problems += budget_problems(plans, budget_usd)
    problems += private_problems(plans, target)
    if problems:
        raise ValidationError(problems, f"refresh of {definitions} at {date} refused; nothing was written")
    return plans


def _build_and_publish(
    plans: list[TopicPlan],
    target: Target,
    result: RefreshResult,
    *,
    definitions: str | Path,
    resamples: int,
    seed: int,
    show_progress: bool,
    echo: Callable[[str], None],
) -> RefreshResult:
    """Build every topic into the refresh's staging revision under its spend cap, then drift, record, validate and
    publish it; the staging folder and the ledger live in the refresh's work folder, so a re-run resumes."""
    date, budget_usd = result.date, result.budget_usd
    folder = default_work_dir(target.base, f"refresh@{date}")  # beside the topics' (no topic name has an '@')
    staged = folder / f"{target.base.name}@{date}"
    target.base.parent.mkdir(parents=True, exist_ok=True)  # the repo's folder: the user's, before the private block
    with owner_only(), work_lock(folder):  # the work folder, its ledger and the private revisions: the owner's alone
        cap = SpendCap(budget_usd, folder / LEDGER)
        if cap.spent:
            echo(f"resuming: ${cap.spent:.4f} spent at {date} by earlier runs counts against the budget")
        private = private_targets(plans, target, folder, date)
        for plan in plans:
            _build_topic(plan, staged, date, cap, show_progress, echo, private)
        with as_published():
            reports = _drift(plans, staged, target.location(date), resamples, seed, echo)
        _record(plans, staged, date, cap, result, definitions, [r for r, _ in reports], private)
        problems = validate_repo(staged, [p.name for p in plans])
        if problems:
            raise ValidationError(
                problems, f"the refreshed revision {date} ({staged}) is not valid; nothing was published"
            )
        topics = ", ".join(p.name for p in plans)
        result.private = publish_private(private, target, date, echo)  # first: a public revision never names more
        with as_published():
            result.location = target.publish(staged, date, f"freshstack-hf refresh: snapshot {date} of {topics}")
    totals = cap.totals()
    result.status = "published"
    result.spent_usd = totals["usd"]
    result.drift = [str(Path(result.location) / r) if target.local else r for r, _ in reports]
    result.drift_reports = [report for _, report in reports]
    for plan in plans:
        result.topics[plan.name]["spent"] = cap.totals(topic=plan.name)
    echo(
        f"published {result.location}: {topics}; LLM spend ${totals['usd']:.4f} on {totals['calls']} calls "
        f"(budget ${budget_usd:g})"
    )
    return result


def _build_topic(
    plan: TopicPlan,
    staged: Path,
    date: str,
    cap: SpendCap,
    show_progress: bool,
    echo: Callable[[str], None],
    private: dict[str, PrivateRepo],
) -> None:
    """Run (or resume) the topic's stages into the staged revision, its LLM calls held to the cap; under an
    embargo its embargoed questions go to the private repo's staged revision."""
    work = snapshot_work(plan.shared, date)
    if plan.config.private_repo in private:
        where_to = str(private[plan.config.private_repo].staged)
        plan.dated = replace(plan.dated, snapshot=replace(plan.dated.snapshot, private=where_to))
    backend = None
    if plan.online:
        cache = StageContext(plan.dated, work, staged, shared_dir=plan.shared).llm_cache
        backend = make_backend(plan.dated.llm, cache, show_progress=show_progress)
        backend.client.spend_cap = cap  # `check_budgetable` made sure the transport is the capped client

    def build(**options: Any) -> None:
        with cap.scope(topic=plan.name):
            run_build(
                plan.dated,
                staged,
                work=work,
                shared=plan.shared,
                backend=backend,
                llm_env=False,  # applied when planning, so the plan and the build name the same model
                show_progress=show_progress,
                echo=lambda line: echo(f"  {line}"),
                **options,
            )

    echo(f"topic {plan.name}: building snapshot {date}")
    try:
        build()
        if plan.name not in read_manifest(staged)["topics"]:  # written by an earlier run whose staging is gone
            build(stages=["write"], resume=False)
    except BudgetExhausted as exc:
        raise FreshStackError(
            f"topic {plan.name!r}: the refresh stopped at the budget cap before {exc.what}: ${cap.spent:.4f} of "
            f"--budget-usd {exc.budget:g} spent (the call could cost up to ${exc.worst:.4f}); nothing was published. "
            "Every answer paid for is cached: run the same command with a larger --budget-usd to go on where it "
            "stopped"
        ) from None


def _drift(
    plans: list[TopicPlan], staged: Path, location: str, resamples: int, seed: int, echo: Callable[[str], None]
) -> list[tuple[str, dict[str, Any]]]:
    """The drift report of each previous snapshot and the topics carried from it, written into the revision
    (`drift/PREVIOUS/drift.{json,md,svg}`, computed before publishing so it is published with it)."""
    groups: dict[Path, list[str]] = {}
    for plan in plans:
        if plan.previous is not None:
            groups.setdefault(plan.previous, []).append(plan.name)
    written = []
    embargoed = {p.name for p in plans if p.config.embargo_days > 0}
    for previous, topics in groups.items():
        report = drift_report(previous, staged, topics=topics, resamples=resamples, seed=seed)
        report["new"]["path"] = location  # where the revision is published, not where it was staged
        if embargoed & set(topics):  # a public revision of an embargo names no folder of the maintainer's machine
            report = without_paths(report)
        relative = f"drift/{revision_of(previous) or previous.name}"
        folder = staged / relative
        write_json_file(folder / "drift.json", report)
        for name, text in (("drift.md", markdown(report, "drift.svg")), ("drift.svg", drift_svg(report))):
            with atomic_path(folder / name) as tmp:
                tmp.write_text(text, encoding="utf-8")
        echo(f"drift against {previous.name}: {relative}/drift.md ({', '.join(topics)})")
        written.append((f"{relative}/drift.md", report))
    return written


def _record(
    plans: list[TopicPlan],
    staged: Path,
    date: str,
    cap: SpendCap,
    result: RefreshResult,
    definitions: str | Path,
    drift: list[str],
    private: dict[str, PrivateRepo],
) -> None:
    """The refresh's account in the manifest (and so the card): per topic what was planned and what was spent,
    across every run of this refresh, and the whole; topics no longer in the definitions leave the revision.

    A topic whose embargo holds questions spent on them too, and planned them: its public entry counts its public
    questions and no money (the calls are not told apart per question), and the whole account, per topic and in
    all, goes to the private revisions' manifests instead; the public revision then states no total either."""
    names = [p.name for p in plans]
    totals = cap.totals()
    accounts = {plan.name: _topic_account(plan, date, cap) for plan in plans}
    whole = {
        "date": date,
        "definitions": str(definitions),
        "topics": names,
        "budget_usd": result.budget_usd,
        "estimate_usd": result.estimate_usd,
        "spent_usd": totals["usd"],
        "calls": totals["calls"],
        "runs": totals["runs"],
        "drift": drift,
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with as_published(), transaction(staged) as st:
        for topic in [t for t in st.manifest["topics"] if t not in names]:
            st.remove_topic(topic)
        held = {p.name for p in plans if (st.manifest["topics"][p.name].get("embargo") or {}).get("questions")}
        for plan in plans:
            account = accounts[plan.name]
            entry = st.manifest["topics"][plan.name]
            entry["refresh"] = _public_account(account, plan) if plan.name in held else account
        public = without_paths({k: v for k, v in whole.items() if k not in SPEND})
        st.manifest["refresh"] = public if held else whole
    for repo in private.values():  # private: the whole account
        if (repo.staged / "manifest.json").is_file():
            with transaction(repo.staged) as st:
                for topic, entry in st.manifest["topics"].items():
                    entry["refresh"] = accounts.get(topic, entry.get("refresh"))
                st.manifest["refresh"] = whole


SPEND = ("budget_usd", "estimate_usd", "spent_usd", "calls", "runs")  # the refresh's money, over every question


def _topic_account(plan: TopicPlan, date: str, cap: SpendCap) -> dict[str, Any]:
    """One topic's refresh account: its questions, what was planned and what was spent."""
    planned = plan.plan.as_dict()
    keys = ("calls", "requests", "est_input_tokens", "est_output_tokens", "est_cost_usd")
    return {
        "date": date,
        "previous": revision_of(plan.previous) if plan.previous else None,
        "questions": {
            "total": planned["questions"],
            "carried": planned["questions_carried"],
            "new": planned["questions_new"],
        },
        "estimate": {k: planned[k] for k in keys},
        "spent": cap.totals(topic=plan.name),
    }


def _public_account(account: dict[str, Any], plan: TopicPlan) -> dict[str, Any]:
    """A topic's account as its public revision keeps it under an embargo: the questions taken that the embargo
    does not hold (the plan's count, before filtering, as `questions.total` is), no estimate, no spend."""
    public, carried = plan.plan.embargo["public"], account["questions"]["carried"]
    questions = {"total": public, "carried": carried, "new": public - (carried or 0)}
    return {"date": account["date"], "previous": account["previous"], "questions": questions}
