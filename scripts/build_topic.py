#!/usr/bin/env python
"""Thin entry: build official FreshStack topics from scripts/topics/*.yaml (same as `freshstack-hf build`).

Give topic names (langchain, yolo, laravel, angular, godot) or `all`; other options pass through.

Examples:
  FRESHSTACK_SO_DUMP=/data/stackoverflow.com-Posts.7z python scripts/build_topic.py laravel --out freshstack --dry-run
  python scripts/build_topic.py all --out freshstack --base-url https://api.openai.com/v1
"""

import sys
from pathlib import Path

from freshstack_hf.cli.main import main

TOPICS = Path(__file__).resolve().parent / "topics"


def _definitions(names: list[str]) -> list[Path]:
    if names == ["all"]:
        return sorted(TOPICS.glob("*.yaml"))
    return [TOPICS / f"{name}.yaml" for name in names]


if __name__ == "__main__":
    args = sys.argv[1:]
    names = [a for a in args[:1] if not a.startswith("-")] or ["all"]
    rest = args[len(names) if args[:1] == names else 0 :]
    code = 0
    for definition in _definitions(names[0].split(",")):
        code = max(code, main(["build", str(definition), *rest]))
    sys.exit(code)
