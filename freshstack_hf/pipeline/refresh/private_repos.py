"""A refresh's private repos: where the embargoed questions of each topic are published, and their publication.

Under an embargo (`pipeline.embargo`) a refresh stages, beside the public revision, one private revision per
`private_repo`, and publishes each before the public one, so no public revision ever names questions that are
nowhere. A private repo that is the public one, or a Hub dataset the Hub reports public, is refused before anything
is written (the embargo would be void). An error about a private revision says how many problems it has and where,
never what: the problems quote its embargoed ids and texts, and a refresh's log may be public.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf.errors import FreshStackError, Problem
from freshstack_hf.pipeline.config.embargo_settings import is_hub_id, private_base
from freshstack_hf.pipeline.planning.refresh_plan import TopicPlan, where
from freshstack_hf.publish import reported_public
from freshstack_hf.repo.check import validate_repo
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import revision_folder
from freshstack_hf.repo.targets import HubTarget, LocalTarget, Target
from freshstack_hf.repo.writer import transaction


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
