"""The GitHub Actions workflow that runs `refresh` on a schedule: `refresh ... --write-workflow FILE`.

A benchmark stays fresh only if its next snapshot is made without anyone remembering to, and the tools people
already run for that are a scheduler they trust (GitHub's, or cron), not a daemon of ours. So `refresh` writes the
workflow file of the refresh it was given, instead of scheduling anything itself: the file's run step is that same
command (checked by the same argument parser), with the date left to the run (`--date today`, the UTC date, which
is the zone GitHub's schedules use).

The file is refused, before anything is written, when it would not work on a runner: a local `--repo` (a hosted
runner keeps nothing but its cache, so the revisions must go to the Hub), a fixed `--date` (every run after the
first would find it published and do nothing), a definitions file outside the repository the file sits in (the
runner checks out that repository only), a path outside `.github/workflows/` (GitHub reads workflows only there),
or an existing file (unless `force`).

The workflow's text, and what each of its parts is there for, is `refresh.workflow`'s.
"""

from __future__ import annotations

import re
from pathlib import Path

from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.pipeline.config.definitions import load_definitions
from freshstack_hf.pipeline.config.embargo_settings import is_hub_id
from freshstack_hf.pipeline.config.topic import TopicConfig
from freshstack_hf.pipeline.refresh.workflow import DEFAULT_CRON, INSTALL, Schedule
from freshstack_hf.pipeline.snapshots import TODAY
from freshstack_hf.repo.targets import open_target

CRON_FIELD = re.compile(r"^[0-9A-Za-z*,/-]+$")
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # GitHub's rule for a secret's name (and not GITHUB_...)


def plan_schedule(
    definitions: str | Path,
    repo: str,
    budget_usd: float,
    path: str | Path,
    *,
    date: str | None = None,
    out: str | None = None,
    cron: str = DEFAULT_CRON,
    install: str = INSTALL,
    extra: tuple[str, ...] = (),
    force: bool = False,
    cache_key_secret: str = "",
) -> Schedule:
    """The schedule `refresh ... --write-workflow PATH` writes, checked as far as this machine can: raises
    `ValidationError` (exit 2) naming every reason the workflow would not run, before anything is written."""
    path = Path(path)
    problems: list[Problem] = []
    root = _check_workflow_file(path, force, problems)
    _check_run(repo, out, date, cron, budget_usd, problems)
    configs = []
    try:
        configs = load_definitions(definitions)
    except FreshStackError as exc:
        problems.append(Problem(str(definitions), str(exc)))
    relative = _inside(root, definitions, "TOPICS.yaml", problems)
    for config in configs:
        if Path(config.path).resolve() != Path(definitions).resolve():
            _inside(root, config.path, f"topic {config.topic!r}:", problems)
    mirror = ""
    if out:
        mirror = out if Path(out).is_absolute() else _inside(root, out, "--out", problems)
    _check_embargo(configs, cache_key_secret, problems)
    if problems:
        raise ValidationError(problems, f"--write-workflow {path} refused; nothing was written")
    return Schedule(
        notes=tuple(embargo_notes(configs, cron)),
        definitions=relative,
        repo=repo,
        budget_usd=budget_usd,
        cron=" ".join(cron.split()),
        out=mirror,
        install=install,
        key_envs=tuple(sorted({c.llm.api_key_env for c in configs})) or ("OPENAI_API_KEY",),
        extra=extra,
        cache_key_secret=cache_key_secret,
    )


def _check_embargo(configs: list[TopicConfig], secret: str, problems: list[Problem]) -> None:
    """Where a topic with an embargo keeps its private parts on a hosted runner: its private revisions in a private
    Hub dataset (a local folder is gone with the runner), its work folder only encrypted in the cache (the cache
    of the default branch is restored by a run on any branch), with the key in a repository secret."""
    if secret and (not SECRET_NAME.match(secret) or secret.upper().startswith("GITHUB_")):
        problems.append(
            Problem(
                f"--cache-key-secret {secret}",
                "is not a name GitHub gives a secret",
                fix="letters, digits and _, not starting with a digit nor with GITHUB_ (e.g. FRESHSTACK_CACHE_KEY)",
            )
        )
    for config in configs:
        if config.embargo_days <= 0:
            continue
        if not is_hub_id(config.private_repo):
            problems.append(
                Problem(
                    f"topic {config.topic!r}: private_repo {config.private_repo}",
                    "is a local folder, and a GitHub-hosted runner keeps nothing of a run but its cache",
                    fix="name a private Hub dataset (private_repo: ORG/NAME), or refresh from cron on a machine that "
                    "keeps the folder",
                )
            )
        if not secret:
            problems.append(
                Problem(
                    f"topic {config.topic!r}: embargo_days {config.embargo_days}",
                    "the work folder the workflow caches would hold every embargoed question (text, answer, nuggets, "
                    "judgments) in plaintext, and a run on any branch can restore that cache",
                    fix="pass --cache-key-secret NAME and set the repository secret NAME to a long random key, e.g. "
                    "`openssl rand -base64 48`: the cache then keeps the folder only encrypted with it",
                )
            )


def interval_days(cron: str) -> int | None:
    """The fewest days between two runs of a plain daily, weekly or monthly cron line; None for anything else."""
    fields = cron.split()
    if len(fields) != 5:
        return None
    _, hour, dom, month, dow = fields
    if month != "*" or not hour.isdigit():
        return None
    if dom.isdigit() and dow == "*":
        return 28
    if dom == "*" and dow.isdigit():
        return 7
    if dom == "*" and dow == "*":
        return 1
    return None


def embargo_notes(configs: list[TopicConfig], cron: str) -> list[str]:
    """A topic whose embargo is longer than the time between two scheduled refreshes: allowed (its questions stay
    private across more than one refresh), and said, since a reader of the schedule may expect each run to release
    what the one before held."""
    days = interval_days(cron)
    return [
        f"topic {c.topic!r}: the embargo ({c.embargo_days} days) is longer than the {days} days or more between two "
        "scheduled refreshes: allowed: questions stay private across more than one refresh"
        for c in configs
        if days is not None and c.embargo_days > days
    ]


def _check_workflow_file(path: Path, force: bool, problems: list[Problem]) -> Path:
    """Where GitHub would find the file, and whether it may be written; returns the repository root it sits in."""
    if path.exists() and not force:
        problems.append(Problem(str(path), "exists already", fix="pass --force to replace it, or choose another file"))
    workflows = path.resolve().parent
    if workflows.name != "workflows" or workflows.parent.name != ".github" or path.suffix not in (".yml", ".yaml"):
        problems.append(
            Problem(
                f"--write-workflow {path}",
                "GitHub runs only the .yml/.yaml files in .github/workflows/ at a repository's root",
                fix="write it as .github/workflows/NAME.yml in the repository that holds the topic definitions",
            )
        )
    return workflows.parent.parent


def _check_run(
    repo: str, out: str | None, date: str | None, cron: str, budget_usd: float, problems: list[Problem]
) -> None:
    """The run's own arguments: a date left to each run, a cron line, a budget, and a Hub repo to publish to."""
    if date is not None and date.strip().lower() != TODAY:
        problems.append(
            Problem(
                f"--date {date}",
                "a schedule at a fixed date publishes once, then finds that revision published at every later run",
                fix="leave --date out (or give --date today): each run takes its own UTC date",
            )
        )
    fields = cron.split()
    if len(fields) != 5 or not all(CRON_FIELD.match(f) for f in fields):
        problems.append(
            Problem(f"--cron {cron!r}", "not a cron expression of five fields", fix='e.g. --cron "0 6 1 * *" (UTC)')
        )
    if not (budget_usd > 0):
        problems.append(
            Problem(
                f"--budget-usd {budget_usd:g}", "leaves nothing to spend", fix="give the most one run may spend, in USD"
            )
        )
    try:
        local = open_target(repo, out).local
    except FreshStackError as exc:
        problems.append(Problem(f"--repo {repo}", str(exc)))
        local = False
    if local:
        problems.append(
            Problem(
                f"--repo {repo}",
                "is a local folder, and a GitHub-hosted runner keeps nothing of a run but its cache",
                fix="publish to a Hub dataset (--repo ORG/NAME), or run the refresh from cron on a machine that keeps "
                "the folder (see the cron line in docs/refresh.md)",
            )
        )


def _inside(root: Path, value: str | Path, what: str, problems: list[Problem]) -> str:
    """`value` relative to the repository `root` (a runner checks out nothing else), or a problem naming it."""
    try:
        return Path(value).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        problems.append(
            Problem(
                f"{what} {value}",
                f"is outside {root}, the repository the workflow runs in (a runner checks out nothing else)",
                fix="keep the topic definitions in that repository",
            )
        )
        return str(value)
