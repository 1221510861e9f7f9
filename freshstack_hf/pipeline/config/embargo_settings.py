"""The embargo's two settings, `embargo_days:` and `private_repo:`, as a topic or a definitions list gives them, and
where the private repo's revisions lie on this machine.

A `private_repo` is a local folder (absolute once read) or a Hub dataset id (`ORG/NAME`); the runner, the refresh
and the scheduled workflow all tell the two apart here (`is_hub_id`), and find a Hub repo's local mirror here
(`private_base`), so the rule is read the same way wherever a private revision is built or published.
"""

from __future__ import annotations

from pathlib import Path

from freshstack_hf.pipeline.config.reader import YamlReader
from freshstack_hf.repo.targets import HUB_ID, names_hub_dataset

EMBARGO_KEYS = ("embargo_days", "private_repo")


def read_embargo(r: YamlReader, data: dict, base: Path, default: tuple[int, str] = (0, "")) -> tuple[int, str]:
    """`embargo_days:` and `private_repo:` (a topic's, or a refresh's definitions list's for all its topics): a
    number of days >= 0, and where the embargoed questions go, required with an embargo. A `private_repo` that
    names no local folder and reads `ORG/NAME` is a Hub dataset id; anything else is a folder, taken from the
    YAML's folder like every other path (so its dated revisions sit beside it, as `refresh --repo`'s do)."""
    days = r.get(data, "embargo_days", int, "", default[0])
    if days is not None and days < 0:
        r.problem("embargo_days", f"must be 0 or more days, got {days}", "give the days a question stays private")
    value = r.get(data, "private_repo", str, "", default[1]) or ""
    if value and value != default[1]:
        local = Path(value).expanduser() if Path(value).expanduser().is_absolute() else base / value
        if not names_hub_dataset(value, local):
            value = str(local.resolve())
    if days and not value:
        r.problem(
            "private_repo",
            f"embargo_days: {days} needs a private repo for the embargoed questions",
            "add `private_repo:` (a local folder, or a private Hub dataset ORG/NAME), or set embargo_days: 0",
        )
    return days or 0, value


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
    return bool(HUB_ID.match(value)) and not Path(value).is_absolute()
