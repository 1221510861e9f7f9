"""Small pieces every subcommand shares: topic lists, repo folders, plurals, table cells, JSON output, timing."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from freshstack_hf.atomic import write_json as write_file
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo import layout
from freshstack_hf.repo.reader import list_topics


def split_list(value: str, what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise FreshStackError(f"empty {what} list {value!r}: give comma-separated names, e.g. langchain,yolo")
    return items


WRITTEN_BY = "one written by `freshstack-hf build TOPIC.yaml`, `freshstack-hf demo` or `freshstack-hf synth`"


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 topic`, `2 topics`, `1,178 chunks`; give `many` where adding an s is wrong (`query`, `queries`)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def interval_cell(value: float, interval: Any) -> str:
    """A score as the tables show it: 3 decimals, then its 95% interval (`0.666 [0.490, 0.807]`) when it has one."""
    return f"{value:.3f} [{interval.low:.3f}, {interval.high:.3f}]" if interval else f"{value:.3f}"


def p_value_cell(p: float) -> str:
    """A paired test's p-value as the tables show it (3 decimals, `<0.001` below that)."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _is_repo(folder: Path) -> bool:
    return (folder / layout.MANIFEST).is_file() or (folder / layout.DATA_DIR).is_dir()


def _repos_near(folder: Path) -> list[Path]:
    """Dataset repos inside `folder`, else beside it: what a user who gave `demo-out` most likely meant."""
    for place in (folder, folder.parent):
        try:
            found = sorted(p for p in place.iterdir() if p.is_dir() and p != folder and _is_repo(p))
        except OSError:
            continue
        if found:
            return found
    return []


def require_repo_folder(repo: str | Path) -> Path:
    """The dataset repo folder `repo`, or an error that says what it is instead and which folder was meant."""
    path = Path(repo).expanduser()
    if path.is_dir() and _is_repo(path):
        return path
    if path.is_file():
        hint = f"; did you mean {path.parent}?" if _is_repo(path.parent) else ""
        raise FreshStackError(
            f"{repo} is a file, not a dataset folder: give the folder holding README.md, manifest.json and data/"
            f"{hint or ' (' + WRITTEN_BY + ')'}"
        )
    if not path.exists():
        raise FreshStackError(f"{repo}: no such folder; give a dataset repo folder ({WRITTEN_BY})")
    near = _repos_near(path)
    if near:
        guess = " or ".join(str(p) for p in near[:3])
        raise FreshStackError(f"{repo} is not a dataset repo (no manifest.json or data/); did you mean {guess}?")
    raise FreshStackError(
        f"{repo} is not a dataset repo: it holds no manifest.json or data/; give a dataset repo folder ({WRITTEN_BY})"
    )


def resolve_topics(repo: str | Path, topic: str | None, revision: str | None = None) -> list[str]:
    """`--topic all` (or none) means every topic of the repo; otherwise a comma-separated list."""

    if Path(repo).expanduser().exists():  # a local folder: say what is wrong with it; anything else is a Hub id
        require_repo_folder(repo)
    available = list_topics(repo, revision)
    if topic in (None, "all"):
        if not available:
            raise FreshStackError(f"{repo}: the repo holds no topics")
        return available
    wanted = split_list(topic, "topic")
    missing = [t for t in wanted if t not in available]
    if missing:
        raise FreshStackError(
            f"{repo}: no topic {', '.join(map(repr, missing))}; available: {', '.join(available) or 'none'}"
        )
    return wanted


def write_json(data: Any, target: str) -> None:
    """`-` writes to stdout; a path is written atomically (temp file, then rename)."""
    if target == "-":
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        return

    write_file(target, data)


@contextmanager
def timed() -> Iterator[dict[str, float]]:
    box: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["seconds"] = time.perf_counter() - start


def add_resampling_arguments(p: Any) -> None:
    """`--resamples` and `--seed` of the bootstrap intervals and paired tests, with the project's defaults."""
    p.add_argument(
        "--resamples", type=int, default=RESAMPLES, help=f"bootstrap/randomization samples (default: {RESAMPLES})"
    )
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the resampling (default: {SEED})")


def print_records(
    records: Mapping[str, Any], as_json: bool, lines: Callable[[str, Any], Iterator[str] | list[str]]
) -> None:
    """Per-topic records as JSON on stdout (`--json`), or each topic's lines for a person to read."""
    if as_json:
        write_json(records, "-")
        return
    for name, record in records.items():
        for line in lines(name, record):
            print(line)


def add_repo_argument(p: Any, *, hub: bool = False, topics: str | None = "all") -> None:
    """The dataset repo every command reads (`hub`: a Hub dataset id works too) and, unless `topics` is None, its
    `--topic` choice: `"all"` (comma-separated names, default every topic) or `"one"` (a single required name)."""
    p.add_argument("repo", metavar="DIR", help="dataset repo folder" + (" (or Hub dataset id)" if hub else ""))
    if hub:
        p.add_argument(
            "--revision",
            help="dataset revision: a Hub tag or commit, or a dated snapshot of a folder (DIR@REVISION beside it)",
        )
    if topics == "all":
        p.add_argument("--topic", default="all", help="topic(s), comma-separated, or 'all' (default)")
    elif topics == "one":
        p.add_argument("--topic", required=True, help="the topic to use")
