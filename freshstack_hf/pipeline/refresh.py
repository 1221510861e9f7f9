"""`refresh`: the next dated snapshot of every topic, planned, paid for within a budget, checked, published, compared.

A benchmark stays fresh only if making its next snapshot is one command that a schedule can run unattended. A
refresh at date D is the chain a maintainer would otherwise run by hand, with the guarantees that make it safe to
leave alone:

1. *plan* every topic at D (`pipeline.snapshot_plan`: the questions asked since the last snapshot plus the carried
   ones, every repository at its last commit on or before D) and refuse, writing nothing, when the estimate passes
   the budget or an input is wrong (a date before the last published snapshot, no budget, a repository that
   vanished, a questions source older than the last snapshot);
2. *build* each snapshot through the ordinary stages (`pipeline.runner`), into a staging folder of the refresh: a
   killed refresh resumes at the stage it stopped in and the response cache answers every call already paid for;
   the calls go through a `SpendCap` (`llm.budget`), so the money spent never passes the budget: the run stops
   cleanly at the cap, and the same command with a larger budget goes on from there;
3. write the *drift report* against the previous snapshot into the revision (`drift/PREVIOUS/`), record the
   spend in the manifest (`refresh`, per topic and in all), *validate*, and only then *publish* revision D: a
   folder `REPO@D` beside a local repo (one rename), or a Hub commit tagged D (`freshstack_hf.publish`, as
   `freshstack-hf publish` does). Nothing is published unless every topic passed.

A revision is published once and never rewritten, so a refresh at a date already published does nothing, and
says so. The definitions file is a topic definition (`scripts/topics/*.yaml`) or a list of them (`topics:`).
"Nothing written" means no revision, staging folder or work file; planning does refresh two caches, since a plan
on stale inputs would be wrong: a kept clone of a repository URL is fetched (which is also how a remote that
vanished is found), and a Hub repo's previous snapshot is downloaded into the local mirror it is built from.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from datetime import date as date_type
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.topic_config import TopicConfig, load_topic_config
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import list_revisions, revision_folder, revision_of

if TYPE_CHECKING:
    from freshstack_hf.llm.budget import SpendCap

LEDGER = "spend.jsonl"
TODAY = "today"  # `--date today`: resolved when the command runs
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


# ---- the definitions file --------------------------------------------------------------------------------------


def load_definitions(path: str | Path) -> list[TopicConfig]:
    """The topics a refresh makes: the file itself when it is a topic definition (it has `topic:`), else the
    definitions its `topics:` list names (paths relative to the file), each checked as `build` checks it."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FreshStackError(f"{path}: no such definitions file (a topic YAML, or a YAML with `topics: [FILE, ...]`)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise FreshStackError(f"{path}: not a readable YAML file ({exc})") from exc
    if isinstance(data, dict) and "topic" in data:
        return [load_topic_config(path)]
    items = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items or not all(isinstance(i, str) and i.strip() for i in items):
        raise FreshStackError(
            f"{path}: expected a topic definition (with `topic:`) or `topics:` listing definition files, e.g.\n"
            "  topics:\n    - laravel.yaml\n    - langchain.yaml"
        )
    configs, seen, problems = [], {}, []
    for i, item in enumerate(items):
        file = (path.parent / item).resolve() if not Path(item).is_absolute() else Path(item)
        if not file.is_file():
            problems.append(Problem(f"{path}: topics[{i}]", f"{item!r}: no such file", fix="fix the path"))
            continue
        config = load_topic_config(file)
        if config.topic in seen:
            problems.append(
                Problem(f"{path}: topics[{i}]", f"topic {config.topic!r} again (topics[{seen[config.topic]}])")
            )
        seen.setdefault(config.topic, i)
        configs.append(config)
    if problems:
        raise ValidationError(problems, f"{path}: invalid definitions list")
    return configs


def check_date(value: str) -> str:
    """`--date`: an ISO date, not in the future (a future cut would change meaning as commits land), or `today`:
    the UTC date when the command runs, so a schedule (a workflow, a cron line) names no date of its own. UTC, not
    the machine's zone, so a runner anywhere cuts the same day as GitHub's, whose schedules are in UTC."""
    from freshstack_hf.pipeline.config_reader import YamlReader
    from freshstack_hf.pipeline.topic_config import read_snapshot_dates

    if value.strip().lower() == TODAY:
        return datetime.now(UTC).date().isoformat()
    r = YamlReader("refresh")
    dates = read_snapshot_dates(r, value, "--date")
    if r.problems or len(dates) != 1:
        raise ValidationError(r.problems, "invalid --date")
    return dates[0]


def _is_date(name: str) -> bool:
    try:
        return len(name) == 10 and date_type.fromisoformat(name).isoformat() == name
    except ValueError:
        return False


# ---- where the revisions live: a local folder or a Hub dataset ---------------------------------------------------


class Target(Protocol):
    """The repo a refresh publishes to. `base` is the local folder whose `@REV` siblings hold the revisions the
    build reads (the previous snapshot) and writes."""

    label: str
    base: Path

    def revisions(self) -> list[str]: ...

    def topics_at(self, revision: str) -> list[str]: ...

    def previous(self, topic: str, date: str) -> Path | None: ...

    def location(self, date: str) -> str: ...

    def check_publishable(self) -> None: ...

    def publish(self, staged: Path, date: str, message: str) -> str: ...


@dataclass
class LocalTarget:
    """A dataset repo folder: each dated revision is the folder `REPO@DATE` beside it (`repo.revisions`)."""

    base: Path

    @property
    def label(self) -> str:
        return str(self.base)

    def revisions(self) -> list[str]:
        return [r for r in list_revisions(self.base) if _is_date(r)]

    def topics_at(self, revision: str) -> list[str]:
        return sorted(read_manifest(revision_folder(self.base, revision))["topics"])

    def previous(self, topic: str, date: str) -> Path | None:
        from freshstack_hf.pipeline.snapshots import previous_revision

        return previous_revision(self.base, topic, date)

    def location(self, date: str) -> str:
        return str(revision_folder(self.base, date))

    def check_publishable(self) -> None:
        return None

    def publish(self, staged: Path, date: str, message: str) -> str:
        """One rename puts the whole revision in place: readers see it complete or not at all."""
        folder = revision_folder(self.base, date)
        if folder.exists():
            raise FreshStackError(f"{folder} exists already: a revision is written once; refresh at a later --date")
        staged.rename(folder)
        return str(folder)


@dataclass
class HubTarget:
    """A Hub dataset: revisions are tags. The previous snapshot is downloaded into the local mirror (`base@REV`),
    where the build reads it and keeps what it published, so the next refresh downloads nothing it made."""

    repo_id: str
    base: Path
    _tags: list[str] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.repo_id} (Hub)"

    def _api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(token=os.environ.get("HF_TOKEN") or None)

    def revisions(self) -> list[str]:
        if self._tags is None:
            from huggingface_hub.utils import RepositoryNotFoundError

            try:
                refs = self._api().list_repo_refs(self.repo_id, repo_type="dataset")
                self._tags = sorted(t.name for t in refs.tags if _is_date(t.name))
            except RepositoryNotFoundError:
                self._tags = []  # the first refresh creates it
            except Exception as exc:  # network, auth: the user's to fix
                raise FreshStackError(
                    f"could not list the revisions of {self.repo_id} on the Hub ({exc}); check the id, HF_TOKEN "
                    "and the network, or refresh a local folder"
                ) from exc
        return self._tags

    def topics_at(self, revision: str) -> list[str]:
        folder = revision_folder(self.base, revision)
        if (folder / "manifest.json").is_file():
            return sorted(read_manifest(folder)["topics"])
        from huggingface_hub import hf_hub_download

        try:
            path = hf_hub_download(self.repo_id, "manifest.json", repo_type="dataset", revision=revision)
        except Exception as exc:
            raise FreshStackError(f"could not read manifest.json of {self.repo_id} at {revision}: {exc}") from exc
        return sorted(json.loads(Path(path).read_text(encoding="utf-8")).get("topics", {}))

    def previous(self, topic: str, date: str) -> Path | None:
        for revision in reversed(self.revisions()):
            if revision < date and topic in self.topics_at(revision):
                return self._download(revision)
        return None

    def _download(self, revision: str) -> Path:
        folder = revision_folder(self.base, revision)
        if (folder / "manifest.json").is_file():
            return folder
        from huggingface_hub import snapshot_download

        tmp = folder.with_name(f".{folder.name}.download-{uuid.uuid4().hex[:8]}")
        try:
            snapshot_download(self.repo_id, repo_type="dataset", revision=revision, local_dir=str(tmp))
            tmp.rename(folder)
        except Exception as exc:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
            raise FreshStackError(f"could not download {self.repo_id} at {revision} into {folder}: {exc}") from exc
        return folder

    def location(self, date: str) -> str:
        return f"{self.repo_id}@{date}"

    def check_publishable(self) -> None:
        if not os.environ.get("HF_TOKEN"):
            raise FreshStackError(
                f"publishing to {self.repo_id} needs a Hugging Face token: set HF_TOKEN to a token with write access "
                "(https://huggingface.co/settings/tokens), or use --dry-run; nothing was built"
            )

    def publish(self, staged: Path, date: str, message: str) -> str:
        """The same commit-and-tag as `freshstack-hf publish REPO@DATE --repo-id ID`; the folder then becomes the
        local mirror's revision."""
        from freshstack_hf.publish import plan_publish, publish

        url = publish(plan_publish(staged, self.repo_id, tag=date, message=message), staged)
        mirror = revision_folder(self.base, date)
        if not mirror.exists():
            staged.rename(mirror)
        return url


def open_target(repo: str, out: str | None = None) -> Target:
    """`--repo`: a Hub id `ORG/NAME` (no local folder `ORG` or `ORG/NAME`), else a local dataset repo folder."""
    from freshstack_hf.repo.revisions import is_local

    path = Path(repo).expanduser()
    hub = HUB_ID.match(repo) and not is_local(path) and not path.parent.is_dir()
    if not hub:
        if out:
            raise FreshStackError(f"--out is for a Hub --repo; {repo} is a local folder, its revisions sit beside it")
        return LocalTarget(path)
    return HubTarget(repo, Path(out or repo.split("/", 1)[1]).expanduser())


# ---- planning ----------------------------------------------------------------------------------------------------


@dataclass
class TopicPlan:
    """One topic's snapshot at D: the definition cut at D, where its work lives, what it would cost."""

    config: TopicConfig
    dated: TopicConfig
    previous: Path | None
    shared: Path
    plan: dict[str, Any]

    @property
    def name(self) -> str:
        return self.config.topic

    @property
    def online(self) -> bool:
        return not self.config.llm.offline

    @property
    def cost(self) -> float:
        value = self.plan.get("est_cost_usd", 0.0)
        return float(value) if isinstance(value, int | float) else 0.0


def check_budgetable(llm: LLMConfig) -> list[tuple[str, str]]:
    """(problem, fix) for each reason the topic's LLM calls could not be held to a budget; none offline."""
    from freshstack_hf.llm.registry import OPENAI, transport_kind

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


def where(config: TopicConfig) -> str:
    return f"topic {config.topic!r} ({config.path})"


def _as_refreshed(config: TopicConfig) -> TopicConfig:
    """The definition as a refresh reads it: its own LLM overrides applied (`FRESHSTACK_LLM_*`), and no
    `questions.until`: the snapshot's date is the end of its window (pins are replaced by `snapshot_config`)."""
    from freshstack_hf.pipeline.choose import effective_config

    return replace(
        config, llm=effective_config(config.llm), questions=replace(config.questions, until=""), snapshots=()
    )


def plan_topic(
    config: TopicConfig, date: str, target: Target, scratch: Path, echo: Callable[[str], None]
) -> tuple[TopicPlan, list[Problem]]:
    """Resolve and price one topic's snapshot at `date`; problems a user must fix come back named, not raised."""
    from freshstack_hf.pipeline.corpus.repos import update_clone
    from freshstack_hf.pipeline.inputs import REPO_CACHE
    from freshstack_hf.pipeline.runner import default_work_dir
    from freshstack_hf.pipeline.snapshot_plan import plan_snapshot
    from freshstack_hf.pipeline.snapshots import check_snapshots, snapshot_config

    pinned = [r.keyword for r in config.corpus.repositories if r.commit or r.snapshot_date]
    config = _as_refreshed(config)
    shared = default_work_dir(target.base, config.topic)
    previous = target.previous(config.topic, date)
    echo(f"topic {config.topic} ({config.path}): snapshot {date}" + (f", after {previous.name}" if previous else ""))
    if pinned:
        echo(f"  note: the definition pins {', '.join(pinned)}; a refresh reads every repository as of {date}")
    cache = REPO_CACHE.path(shared)
    for repo in config.corpus.repositories:
        update_clone(repo, cache)
    check_snapshots(config, [date], cache, scratch=scratch)
    dated = snapshot_config(config, date, previous)
    plan = plan_snapshot(dated, shared, echo=lambda line: echo(f"  {line.strip()}"), scratch=scratch)
    found = TopicPlan(config, dated, previous, shared, plan)
    problems = [Problem(where(config), message, fix=fix) for message, fix in check_budgetable(config.llm)]
    newest, last = plan.get("source_newest_post") or "", revision_of(previous) if previous else ""
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


# ---- the refresh -------------------------------------------------------------------------------------------------


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

    def as_json(self) -> dict[str, Any]:
        return {
            "date": self.date,
            "status": self.status,
            "repo": self.repo,
            "location": self.location,
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
    names = [c.topic for c in configs]
    published = target.revisions()
    if date in published:
        held = target.topics_at(date)
        missing = [c for c in configs if c.topic not in held]
        if not missing:
            echo(
                f"nothing to do: revision {date} of {target.label} is published already with "
                f"{', '.join(names)}; a published revision is never rebuilt"
            )
            return RefreshResult(date, "up to date", target.label, target.location(date), budget_usd)
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
    if budget_usd <= 0:
        for p in plans:
            problems.append(
                Problem(
                    where(p.config),
                    f"--budget-usd {budget_usd:g} leaves nothing to spend on its LLM calls",
                    fix=f"give a positive --budget-usd (this topic is estimated at ~${p.cost:.2f}, "
                    f"{p.plan.get('calls', 0)} calls)",
                )
            )
    if problems:
        raise ValidationError(problems, f"refresh of {definitions} at {date} refused; nothing was written")

    estimate = round(sum(p.cost for p in plans), 2)
    per_topic = ", ".join(f"{p.name} ~${p.cost:.2f}" for p in plans)
    calls = sum(int(p.plan.get("calls", 0)) for p in plans)
    if estimate > budget_usd:
        raise FreshStackError(
            f"the refresh at {date} is estimated at ~${estimate:.2f} ({per_topic}; {calls} LLM calls), over "
            f"--budget-usd {budget_usd:g}: refused, nothing was written. Give --budget-usd {estimate:.2f} or more, "
            "or refresh fewer topics"
        )
    echo(f"estimate: ~${estimate:.2f} for about {calls} LLM calls ({per_topic}), within --budget-usd {budget_usd:g}")
    result = RefreshResult(date, "planned", target.label, target.location(date), budget_usd, estimate)
    result.topics = {p.name: {"plan": p.plan} for p in plans}
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
    from freshstack_hf.llm.budget import SpendCap
    from freshstack_hf.pipeline.runner import default_work_dir, work_lock
    from freshstack_hf.repo.check import validate_repo

    date, budget_usd = result.date, result.budget_usd
    folder = default_work_dir(target.base, f"refresh@{date}")  # beside the topics' (no topic name has an '@')
    staged = folder / f"{target.base.name}@{date}"
    with work_lock(folder):
        cap = SpendCap(budget_usd, folder / LEDGER)
        if cap.spent:
            echo(f"resuming: ${cap.spent:.4f} spent at {date} by earlier runs counts against the budget")
        for plan in plans:
            _build_topic(plan, staged, date, cap, show_progress, echo)
        reports = _drift(plans, staged, target.location(date), resamples, seed, echo)
        _record(plans, staged, date, cap, result, definitions, [r for r, _ in reports])
        problems = validate_repo(staged, [p.name for p in plans])
        if problems:
            raise ValidationError(
                problems, f"the refreshed revision {date} ({staged}) is not valid; nothing was published"
            )
        topics = ", ".join(p.name for p in plans)
        result.location = target.publish(staged, date, f"freshstack-hf refresh: snapshot {date} of {topics}")
    totals = cap.totals()
    result.status = "published"
    result.spent_usd = totals["usd"]
    result.drift = [str(Path(result.location) / r) if isinstance(target, LocalTarget) else r for r, _ in reports]
    result.drift_reports = [report for _, report in reports]
    for plan in plans:
        result.topics[plan.name]["spent"] = cap.totals(topic=plan.name)
    echo(
        f"published {result.location}: {topics}; LLM spend ${totals['usd']:.4f} on {totals['calls']} calls "
        f"(budget ${budget_usd:g})"
    )
    return result


def _build_topic(
    plan: TopicPlan, staged: Path, date: str, cap: SpendCap, show_progress: bool, echo: Callable[[str], None]
) -> None:
    """Run (or resume) the topic's stages into the staged revision, its LLM calls held to the cap."""
    from freshstack_hf.llm.budget import BudgetExhausted
    from freshstack_hf.pipeline.choose import make_backend
    from freshstack_hf.pipeline.runner import run_build, snapshot_work
    from freshstack_hf.pipeline.stage import StageContext

    work = snapshot_work(plan.shared, date)
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
    from freshstack_hf.atomic import atomic_path
    from freshstack_hf.atomic import write_json as write_json_file
    from freshstack_hf.drift import drift_report
    from freshstack_hf.drift.markdown import markdown
    from freshstack_hf.drift.svg import drift_svg

    groups: dict[Path, list[str]] = {}
    for plan in plans:
        if plan.previous is not None:
            groups.setdefault(plan.previous, []).append(plan.name)
    written = []
    for previous, topics in groups.items():
        report = drift_report(previous, staged, topics=topics, resamples=resamples, seed=seed)
        report["new"]["path"] = location  # where the revision is published, not where it was staged
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
) -> None:
    """The refresh's account in the manifest (and so the card): per topic what was planned and what was spent,
    across every run of this refresh, and the whole; topics no longer in the definitions leave the revision."""
    from freshstack_hf.repo.writer import transaction

    names = [p.name for p in plans]
    totals = cap.totals()
    with transaction(staged) as st:
        for topic in [t for t in st.manifest["topics"] if t not in names]:
            st.remove_topic(topic)
        for plan in plans:
            keys = ("calls", "requests", "est_input_tokens", "est_output_tokens", "est_cost_usd")
            st.manifest["topics"][plan.name]["refresh"] = {
                "date": date,
                "previous": revision_of(plan.previous) if plan.previous else None,
                "questions": {
                    "total": plan.plan.get("questions"),
                    "carried": plan.plan.get("questions_carried"),
                    "new": plan.plan.get("questions_new"),
                },
                "estimate": {k: plan.plan[k] for k in keys if k in plan.plan},
                "spent": cap.totals(topic=plan.name),
            }
        st.manifest["refresh"] = {
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
