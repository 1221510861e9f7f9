"""The embargo: a snapshot's newest questions kept out of its public revision, in a private repo, until they are old.

Every question a snapshot publishes can be trained on the day it is published. With `embargo_days: N` in a topic
definition (or in a refresh's definitions list), the questions asked within N days before a snapshot's date are
built like every other (pooled, judged, filtered), then written to the topic's `private_repo` (a local folder or a
private Hub dataset, dated revisions like the public repo) and never to the public revision. A question asked on
day A is embargoed at snapshot D iff D - N < A <= D, so its embargo ends on A + N: the first snapshot on or after
that day publishes it. Nothing is stored about "who was embargoed before": each snapshot builds every question
asked up to its date, so a released question is a carried one, judged against the new corpus through the
judgment memo and the response cache, and pays no call twice.

The public revision says how many questions are embargoed and until when (the manifest's `embargo`, the card, the
drift report), never which: no id or text of an embargoed question is written there, its build account counts the
public questions alone (`pipeline.public_account`), and "until when" is the snapshot's date plus the embargo's days,
the day every one of them is released by, not the newest one's own end, which would date that question. An error
about a private revision says how many problems it has and where, never what (the problems quote its ids).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date as Date
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.errors import FreshStackError, Problem
from freshstack_hf.pipeline.topic_config import TopicConfig

if TYPE_CHECKING:
    from freshstack_hf.pipeline.refresh_plan import TopicPlan
    from freshstack_hf.repo.targets import Target

MIN_QUESTIONS = 10  # fewer than this on either side: the plan says so (a live score needs at least 10)


@dataclass(frozen=True)
class Embargo:
    """The embargo of one snapshot: `days` long, cut at the snapshot's `date`."""

    days: int
    date: str

    @property
    def start(self) -> str:
        """Questions asked after this day (exclusive) and up to `date` are embargoed."""
        return (Date.fromisoformat(self.date) - timedelta(days=self.days)).isoformat()

    def holds(self, asked: str) -> bool:
        return self.start < asked[:10] <= self.date

    def ends(self, asked: str) -> str:
        """The day the embargo of a question asked on `asked` ends: the first snapshot on or after it publishes it."""
        return (Date.fromisoformat(asked[:10]) + timedelta(days=self.days)).isoformat()

    @property
    def until(self) -> str:
        """The day every question of this snapshot's embargo is released by: the snapshot's date plus the days (a
        question asked on A <= date ends on A + days). What the public revision says, whatever the questions' dates."""
        return (Date.fromisoformat(self.date) + timedelta(days=self.days)).isoformat()

    def public_summary(self, asked: list[str]) -> dict[str, Any]:
        """What the public revision may say: the length, how many questions, until when; never which, nor when any
        one of them was asked."""
        return {"days": self.days, "questions": sum(1 for a in asked if self.holds(a)), "until": self.until}


def embargo_of(config: TopicConfig) -> Embargo | None:
    """The embargo of a dated snapshot's definition; none without `embargo_days` or without a snapshot date (a plain
    build has no date to count from: `runner.run_build` refuses one with `embargo_days`)."""
    if config.embargo_days <= 0 or not config.snapshot.date:
        return None
    return Embargo(config.embargo_days, config.snapshot.date)


def private_base(value: str, public_base: Path) -> Path:
    """The local folder whose `@DATE` siblings hold the revisions of `private_repo` `value`: the folder itself, or
    for a Hub id its mirror beside the public repo's (named after the Hub repo, `-private` added when that name is
    the public repo's own)."""
    if not is_hub_id(value):
        return Path(value)
    name = value.split("/", 1)[1]
    return public_base.parent / (f"{name}-private" if name == public_base.name else name)


def is_hub_id(value: str) -> bool:
    """Whether `private_repo` names a Hub dataset (`ORG/NAME`) rather than a local folder (absolute once read)."""
    from freshstack_hf.repo.targets import HUB_ID

    return bool(HUB_ID.match(value)) and not Path(value).is_absolute()


def plan_notes(embargo: Embargo, asked: list[str], previous: str, private_repo: str) -> dict[str, Any]:
    """The plan's account of an embargo: how many of the questions taken (before filtering) go each way, until
    when, and the notes a maintainer should read before paying (an embargo longer than the time since the previous
    snapshot, too few questions on either side)."""
    summary = embargo.public_summary(asked)
    private, public = summary["questions"], len(asked) - summary["questions"]
    notes = []
    if previous:
        gap = (Date.fromisoformat(embargo.date) - Date.fromisoformat(previous)).days
        if embargo.days > gap:
            notes.append(
                f"the embargo ({embargo.days} days) is longer than the {gap} days since the previous snapshot "
                f"{previous}: allowed: questions stay private across more than one refresh"
            )
    for side, count in (("public", public), ("private", private)):
        if count < MIN_QUESTIONS:
            notes.append(
                f"the embargo leaves {count} {side} question{'s' if count != 1 else ''} (fewer than {MIN_QUESTIONS}, "
                "before filtering): "
                + (
                    "the public revision scores models on very few questions"
                    if side == "public"
                    else "too few for a live score (aggregates need at least 10)"
                )
            )
    return {**summary, "public": public, "start": embargo.start, "private_repo": private_repo, "notes": notes}


# ---- a refresh's private repos -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivateRepo:
    """One `private_repo` of a refresh: where its revisions are published (`target`), the revision staged beside
    the public one in the refresh's work folder (`staged`), and the topics whose embargoed questions it takes."""

    value: str
    target: Target
    staged: Path
    topics: tuple[str, ...]


def open_private(value: str, public: Target) -> Target:
    """The target of a `private_repo`: a local folder, or a Hub dataset created private (`HubTarget.private`)
    whose mirror sits beside the public repo's (`private_base`)."""
    from freshstack_hf.repo.targets import HubTarget, LocalTarget

    if not is_hub_id(value):
        return LocalTarget(Path(value))
    return HubTarget(value, private_base(value, public.base), private=True)


def _same_repo(value: str, public: Target) -> bool:
    if is_hub_id(value):
        return not public.local and getattr(public, "repo_id", "") == value
    return public.local and Path(value).resolve() == public.base.resolve()


def private_problems(plans: list[TopicPlan], public: Target) -> list[Problem]:
    """Why a refresh's private repos cannot take the embargoed questions, each named once (nothing written): the
    public repo itself, or a Hub dataset the Hub reports as public (the embargo would be void)."""
    from freshstack_hf.pipeline.refresh_plan import where
    from freshstack_hf.publish import reported_public

    problems, seen = [], set()
    for plan in plans:
        value = plan.config.private_repo
        if plan.config.embargo_days <= 0 or value in seen:
            continue
        seen.add(value)
        if _same_repo(value, public):
            problems.append(
                Problem(
                    where(plan.config),
                    f"private_repo {value} is the repo the refresh publishes, so the embargo would publish everything",
                    fix="name a separate private repo (a local folder, or a private Hub dataset)",
                )
            )
        elif is_hub_id(value) and (public_reason := reported_public(value)):
            problems.append(Problem(where(plan.config), public_reason))
    return problems


def private_targets(plans: list[TopicPlan], public: Target, folder: Path, date: str) -> dict[str, PrivateRepo]:
    """Each embargoed topic's private repo, its revision at `date` staged in the refresh's work folder `folder`
    (`private-N/NAME@DATE`, beside the public revision's staging, so a killed refresh resumes both)."""
    from freshstack_hf.repo.revisions import revision_folder

    found: dict[str, PrivateRepo] = {}
    for plan in plans:
        value = plan.config.private_repo
        if plan.config.embargo_days <= 0:
            continue
        if value not in found:
            target = open_private(value, public)
            target.check_publishable()
            staged = revision_folder(folder / f"private-{len(found)}" / target.base.name, date)
            found[value] = PrivateRepo(value, target, staged, ())
        held = found[value]
        found[value] = PrivateRepo(value, held.target, held.staged, (*held.topics, plan.name))
    return found


def publish_private(
    private: dict[str, PrivateRepo], public: Target, date: str, echo: Callable[[str], None]
) -> list[str]:
    """Validate and publish each private revision staged at `date` (before the public one, so no public revision
    ever names questions that are nowhere), its manifest naming the public revision it belongs to; a private repo
    that took no question at this date gets no revision."""
    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.manifest import read_manifest
    from freshstack_hf.repo.writer import transaction

    published = []
    for repo in private.values():
        if not (repo.staged / "manifest.json").is_file():
            echo(f"embargo: no question of {', '.join(repo.topics)} is embargoed at {date}; {repo.value} is unchanged")
            continue
        if date in repo.target.revisions():  # an earlier run of this refresh stopped between the two publications
            echo(f"embargo: {repo.target.location(date)} was published by an earlier run of this refresh; kept")
            published.append(repo.target.location(date))
            continue
        with transaction(repo.staged) as st:
            st.manifest["public"] = {"repo": public.label, "revision": date, "location": public.location(date)}
        topics = sorted(read_manifest(repo.staged)["topics"])
        problems = validate_repo(repo.staged, topics)
        if problems:
            raise FreshStackError(
                f"the private revision {date} ({repo.staged}) is not valid; nothing published: {counted(problems)}. "
                "They name embargoed questions, so they are not printed here, where a log may be public: read them "
                f"on the machine that holds the folder with `freshstack-hf validate {repo.staged}`"
            )
        where_to = repo.target.publish(repo.staged, date, f"freshstack-hf refresh: embargoed questions at {date}")
        echo(f"embargo: published the embargoed questions of {', '.join(topics)} to {where_to} (private)")
        published.append(where_to)
    return published


def counted(problems: list[Problem]) -> str:
    """How many problems, and in which config or file of the repo (the kind of each), never what they say: a private
    revision's problems quote its embargoed query ids and texts."""
    where = Counter(p.where for p in problems)
    return (
        f"{len(problems)} problem{'s' if len(problems) != 1 else ''} ("
        + ", ".join(f"{n} in {name}" for name, n in sorted(where.items()))
        + ")"
    )
