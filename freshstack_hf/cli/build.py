"""Build a topic from raw sources: a Stack Exchange dump, GitHub repositories and an LLM (or the offline backend).

Stages, each resumable: questions, corpus, nuggets, pools, judgments, filter, candidates, write. A finished stage is
skipped when its inputs are unchanged; LLM responses are cached, so a re-run or a killed-and-restarted build
repeats no call. Intermediate files live in a work folder beside the repo (OUT-work/TOPIC). The repo is
written in one atomic commit at the end: a failed build leaves the previous repo as it was.

Example:
  freshstack-hf build scripts/topics/laravel.yaml --out freshstack --dry-run
  freshstack-hf build scripts/topics/laravel.yaml --out freshstack                 # offline backend
  OPENAI_API_KEY=... freshstack-hf build my_topic.yaml --out freshstack --base-url https://api.openai.com/v1
  freshstack-hf build my_topic.yaml --out freshstack --stages judgments,filter,candidates,write
  freshstack-hf build my_topic.yaml --out freshstack --snapshot 2024-10-31 --snapshot 2025-10-31 --dry-run

Snapshots (`--snapshot DATE` or `snapshots:` in the YAML) write each date's topic into the revision folder
OUT@DATE (every repository at its last commit on or before DATE, questions asked up to DATE); a later
snapshot reuses the earlier one's chunks, cached LLM answers and judgments, and its manifest counts the calls saved.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from freshstack_hf.cli.common import write_json
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.choose import effective_config
from freshstack_hf.pipeline.config.topic import TopicConfig, load_topic_config
from freshstack_hf.pipeline.offline.backend import OfflineBackend
from freshstack_hf.pipeline.runner import parse_stages, run_build, run_snapshots
from freshstack_hf.pipeline.snapshots import snapshot_dates


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("definition", metavar="TOPIC.yaml", help="topic definition (examples in scripts/topics/)")
    p.add_argument("--out", default="freshstack", help="dataset repo to write the topic into (default: freshstack)")
    p.add_argument("--work", help="work folder for stage outputs and the LLM cache (default: OUT-work/TOPIC)")
    p.add_argument("--stages", help="comma-separated stages to run (default: all, in order)")
    resume = p.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume",
        dest="resume",
        action="store_true",
        default=True,
        help="skip stages already finished with the same inputs (default)",
    )
    resume.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="re-run every selected stage (cached LLM responses are still reused)",
    )
    p.add_argument("--dry-run", action="store_true", help="print what each stage would read, call and cost")
    p.add_argument(
        "--snapshot",
        action="append",
        metavar="DATE",
        help="build the dated snapshot DATE (YYYY-MM-DD) into OUT@DATE; repeatable; overrides `snapshots:`",
    )
    llm = p.add_mutually_exclusive_group()
    llm.add_argument("--base-url", help="OpenAI-compatible endpoint, overriding llm.base_url")
    llm.add_argument("--offline", action="store_true", help="use the offline heuristic backend whatever the YAML says")
    p.add_argument("--model", help="model name, overriding llm.model")
    p.add_argument("--batch", action="store_true", help="use the OpenAI Batch API for uncached requests")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print the stage records as JSON")


def run(args: argparse.Namespace) -> int:
    config = load_topic_config(args.definition)
    config, backend = _with_flags(config, args)
    backend_note = _backend_note(config.llm)
    echo = (lambda _line: None) if args.json else print
    dates = snapshot_dates(config, args.snapshot)
    options = {
        "stages": parse_stages(args.stages),
        "resume": args.resume,
        "show_progress": not (args.quiet or args.json),
        "backend": backend,
        "echo": echo,
        "llm_env": False,  # applied by `_with_flags`, before the flags
    }
    work = Path(args.work) if args.work else None
    if dates:
        echo(f"building {len(dates)} snapshot(s) of topic {config.topic!r} from {args.definition} ({backend_note})")
        results = run_snapshots(config, Path(args.out), dates, work_root=work, dry_run=args.dry_run, **options)
        if args.json:
            write_json(results, "-")
        elif not args.dry_run:
            print(f"next: freshstack-hf drift {args.out}@{dates[0]} {args.out}@{dates[-1]}" if len(dates) > 1 else "")
        return 0
    echo(f"building topic {config.topic!r} from {args.definition} into {args.out} ({backend_note})")
    results = run_build(config, Path(args.out), work=work, dry_run=args.dry_run, **options)
    if args.json:
        write_json(results, "-")
    elif not args.dry_run and "write" in results:
        print(
            f"next: freshstack-hf validate {args.out}   |   freshstack-hf publish {args.out} --repo-id ORG/freshstack"
        )
    return 0


def _with_flags(config: TopicConfig, args: argparse.Namespace) -> tuple[TopicConfig, OfflineBackend | None]:
    """The definition's `llm:` with the FRESHSTACK_LLM_* environment overrides, then the command's flags, applied;
    and the offline backend when `--offline` asks for it whatever the YAML says."""
    llm = effective_config(config.llm)
    if args.base_url:
        llm = replace(llm, base_url=args.base_url)
    if args.model:
        llm = replace(llm, model=args.model)
    if args.batch:
        llm = replace(llm, batch=True)
    backend = None
    if args.offline:
        llm = replace(llm, base_url="")
        backend = OfflineBackend(show_progress=not (args.quiet or args.json))  # constructing it loads nothing
    return replace(config, llm=llm), backend


def _backend_note(llm: LLMConfig) -> str:
    if llm.offline:
        return "LLM stages: offline heuristic backend, no endpoint; judgments will be marked heuristic"
    return f"LLM stages: {llm.model} at {llm.base_url}" + (" (Batch API)" if llm.batch else "")
