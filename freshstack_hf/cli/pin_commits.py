"""Find, per repository of a topic, the commits whose chunks reproduce a release's corpus ids.

Scans the commits of each git repository in a window around its `snapshot_date` (or pinned `commit`), chunks
the files the released ids name with the default (release) chunker, blob by blob, and reports the ranges of
commits that reproduce the most ids, the commit to pin (nearest the snapshot date) and the ids no commit makes.
`--released` takes a text file of ids, JSON Lines / JSON / Parquet rows with `corpus_id` or `_id`, or released
queries whose nuggets list `relevant_corpus_ids` and `non_relevant_corpus_ids` (e.g. queries-oct-2024).

Example:
  freshstack-hf pin-commits scripts/topics/laravel.yaml --released tests/fixtures/released/laravel_ids.txt
  freshstack-hf pin-commits scripts/topics/godot.yaml --released queries.parquet --before-days 365 --json pins.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from freshstack_hf.cli.common import write_json
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.config.topic import load_topic_config
from freshstack_hf.pipeline.corpus.pinning import Window, load_released_ids, pin_topic, with_work_cache


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("definition", metavar="TOPIC.yaml", help="topic definition whose repositories are scanned")
    p.add_argument("--released", required=True, metavar="FILE", help="released corpus ids (.txt/.jsonl/.json/.parquet)")
    p.add_argument("--before-days", type=int, default=120, help="days scanned before the snapshot date (120)")
    p.add_argument("--after-days", type=int, default=60, help="days scanned after the snapshot date (60)")
    p.add_argument("--max-commits", type=int, default=500, help="at most this many commits, nearest first (500)")
    p.add_argument("--out", default="freshstack", help="the build's dataset repo, for the default work folder")
    p.add_argument("--work", help="work folder whose clones are reused (default: OUT-work/TOPIC, as `build`)")
    p.add_argument("--json", metavar="OUT", help="also write the report as JSON to OUT ('-' for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def run(args: argparse.Namespace) -> int:
    if args.before_days < 0 or args.after_days < 0 or args.max_commits < 1:
        raise FreshStackError("--before-days and --after-days must be >= 0 and --max-commits >= 1")
    config = load_topic_config(args.definition)
    ids = load_released_ids(args.released)
    work = Path(args.work) if args.work else Path(f"{args.out}-work") / config.topic
    quiet = args.quiet or args.json == "-"
    report = pin_topic(
        config,
        ids,
        with_work_cache(work),
        Window(args.before_days, args.after_days, args.max_commits),
        progress=(lambda _line: None) if quiet else (lambda line: print(line, file=sys.stderr)),
    )
    if args.json != "-":
        print(_text(report, args.definition))
    if args.json:
        write_json(report, args.json)
    if not report["repositories"]:
        raise FreshStackError(
            f"{args.released}: none of its {len(ids):,} ids starts with a repository keyword of {args.definition} "
            f"(keywords: {', '.join(r.keyword for r in config.corpus.repositories)}; ids start with: "
            f"{', '.join(report['unmatched_keywords'])})"
        )
    return 0


def _text(report: dict, definition: str) -> str:
    lines = [f"{report['released_ids']:,} released ids; repositories of {definition} that they name:"]
    for r in report["repositories"]:
        head = f"{r['keyword']} ({r['name']}): {r['released']:,} released ids"
        if "problem" in r:
            lines.append(f"  {head}: {r['problem']}")
            continue
        lines.append(
            f"  {head} in {r['files']:,} files; {r['commits_scanned']:,} commits scanned; "
            f"best {r['best']:,}/{r['released']:,}; the YAML's commit {r['yaml_commit'][:12]} makes "
            f"{r['yaml_commit_reproduces']:,}"
        )
        for run in r["ranges"][:5]:
            lines.append(
                f"    {run['first'][:12]}..{run['last'][:12]}  ({run['first_date'][:10]} .. {run['last_date'][:10]}, "
                f"{run['commits']} commits)"
            )
        if len(r["ranges"]) > 5:
            lines.append(f"    ... {len(r['ranges']) - 5} more ranges (see --json)")
        if r["pin"]:
            lines.append(f"    pin it in the YAML:  commit: {r['pin']}   ({r['pin_date'][:10]})")
        for missing in r["missing"][:5]:
            lines.append(f"    not made by the pin: {missing}")
        if len(r["missing"]) > 5:
            lines.append(f"    ... {len(r['missing']) - 5} more not made (see --json)")
    for keyword, count in report["unmatched_keywords"].items():
        lines.append(f"  {keyword}: {count:,} released ids, but no repository of the topic has that keyword")
    return "\n".join(lines)
