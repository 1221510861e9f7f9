"""A refresh's definitions file: one topic definition, or a `topics:` list of them with the embargo they share.

`refresh TOPICS.yaml` takes either: a topic definition (it has `topic:`), or a list whose entries are definition
files (paths relative to the list), each checked as `build` checks it. A list's `embargo_days:` / `private_repo:`
set the embargo of every topic it names, so one refresh has one private repo whatever each definition says.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.pipeline.config.embargo_settings import EMBARGO_KEYS, read_embargo
from freshstack_hf.pipeline.config.reader import YamlReader
from freshstack_hf.pipeline.config.topic import TopicConfig, load_topic_config


def load_definitions(path: str | Path) -> list[TopicConfig]:
    """The topics a definitions file names (`refresh TOPICS.yaml`): the file itself when it is a topic definition
    (it has `topic:`), else the definitions its `topics:` list names (paths relative to the file), each checked as
    `build` checks it, and no topic twice."""
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
    listing = YamlReader(str(path))
    if isinstance(data, dict):
        listing.unknown(data, {"topics", *EMBARGO_KEYS}, "")
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
    if isinstance(data, dict) and any(k in data for k in EMBARGO_KEYS):
        configs = [_listing_embargo(listing, data, path, c) for c in configs]
    problems += listing.problems
    if problems:
        raise ValidationError(problems, f"{path}: invalid definitions list")
    return configs


def _listing_embargo(r: YamlReader, data: dict, path: Path, config: TopicConfig) -> TopicConfig:
    """A definitions list's `embargo_days:` / `private_repo:` set (or override) the embargo of every topic it
    lists: one private repo for a refresh, whatever each definition says; a key it leaves out keeps the topic's."""
    days, private = read_embargo(r, data, path.resolve().parent, (config.embargo_days, config.private_repo))
    return replace(config, embargo_days=days, private_repo=private)
