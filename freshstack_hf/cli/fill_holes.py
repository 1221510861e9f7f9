"""Judge the documents a system ranks in its top k that no judgment covers, into a NEW qrels revision.

Pooled judgments age: a system that retrieves documents nobody judged is scored as if they were irrelevant. This
judges each such "hole" (the query's nuggets x the document) with the topic's own judge (the build's prompts,
client and cache: the endpoint the build used, or --base-url, or the offline heuristic) and writes the result
as a new revision folder beside the repo, DIR@<base>.fillN, with its provenance in the manifest. The revision it
starts from is never rewritten, so every number published from it stays reproducible; score either with
`freshstack-hf evaluate DIR --revision REV`. A run whose top k holds no hole writes nothing and sends nothing: the
report says "no holes" once, and --json records "revision": null and "judge": null (no judge was asked).

Example:
  freshstack-hf fill-holes freshstack --topic pylibs --run demo-out/runs/bm25.trec --offline
  freshstack-hf fill-holes out/freshstack --topic langchain --run runs/new.trec --revision 2025-10-31 \\
      --base-url https://api.openai.com/v1 --model gpt-4o --name 2025-10-31.fill1 --json fill.json
  freshstack-hf evaluate out/freshstack --topic langchain --run runs/new.trec --revision 2025-10-31.fill1
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from pathlib import Path

from freshstack_hf.cli.common import require_repo_folder, write_json
from freshstack_hf.errors import FreshStackError
from freshstack_hf.holes import fill_holes, judge_setup
from freshstack_hf.repo.reader import list_topics, resolve_repo
from freshstack_hf.repo.revisions import is_local
from freshstack_hf.runs import load_run


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", metavar="DIR", help="dataset repo folder (its revisions are the DIR@REV folders beside it)")
    p.add_argument("--topic", required=True, help="the topic to fill")
    p.add_argument("--run", required=True, help="the asking system's run (TREC or JSON)")
    p.add_argument("--revision", help="the revision filled (default: DIR itself, named 'main')")
    p.add_argument("--k", type=int, default=10, help="judge the top k of each query (default: 10)")
    p.add_argument("--name", help="the new revision's name (default: <base revision>.fillN, N increasing)")
    p.add_argument("--system", help="the asking system's name in the provenance (default: the run's tag or file)")
    judge = p.add_mutually_exclusive_group()
    judge.add_argument("--offline", action="store_true", help="the offline heuristic judge")
    judge.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the one that built the topic)")
    p.add_argument("--model", help="model name at the endpoint (default: the build's, else gpt-4o)")
    p.add_argument("--api-key-env", help="environment variable holding the key (default: the build's)")
    p.add_argument("--work", help="folder of the LLM response cache (default: the build's, DIR-work/TOPIC)")
    p.add_argument(
        "--json", nargs="?", const="-", metavar="OUT", help="the fill's record as JSON to OUT (stdout if no OUT)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace) -> int:

    # a snapshot build writes only the dated folders: DIR itself may not exist when a revision of it is asked
    folder = Path(args.repo) if args.revision and is_local(args.repo) else require_repo_folder(args.repo)
    try:
        base = resolve_repo(folder, args.revision)
    except FreshStackError as exc:
        raise FreshStackError(f"--revision: {exc}") from exc
    topics = list_topics(base)
    if args.topic not in topics:
        raise FreshStackError(f"--topic: no topic {args.topic!r} in {base}; it has {', '.join(topics) or 'none'}")
    if args.k < 1:
        raise FreshStackError(f"--k must be a positive cutoff, not {args.k}")
    path = Path(args.run)
    if not path.is_file():
        raise FreshStackError(f"--run: {args.run} is not a file; give a TREC or JSON run")
    loaded = load_run(path)
    setup = judge_setup(
        base, args.topic, base_url=args.base_url, model=args.model, offline=args.offline, work=args.work
    )
    if args.api_key_env:
        setup = dataclasses.replace(setup, llm=dataclasses.replace(setup.llm, api_key_env=args.api_key_env))
    to_stdout = args.json == "-"
    quiet = args.quiet or to_stdout
    record = fill_holes(
        folder,
        args.topic,
        loaded.run,
        system=args.system or loaded.name,
        setup=setup,
        revision=args.revision,
        k=args.k,
        name=args.name,
        run_sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        progress=None if quiet else lambda text: print(text, file=sys.stderr, flush=True),
        show_progress=not quiet,
    )
    if not to_stdout:
        print(_report(record))
    if args.json:
        write_json(record.to_dict(), args.json)
    return 0


def _report(r) -> str:
    lines = [
        f"{r.system} on {r.topic} ({r.base_revision}): {r.holes} holes in the top {r.k}, "
        f"{r.pairs} judgments ({r.supported} supported), {r.requests} requests"
        + (f", {r.cache_hits} from the cache" if r.cache_hits else "")
        + (f" by {r.judge}" if r.judge else ""),
    ]
    width = max(len(m) for m in r.before)
    new = r.revision or r.base_revision
    lines.append(f"  {'measure':<{width}}  {r.base_revision:>12} -> {new}")
    for measure, old in r.before.items():
        value = r.after.get(measure, old)
        lines.append(f"  {measure:<{width}}  {old:>12.3f} -> {value:.3f}  ({value - old:+.3f})")
    lines.append(f"new revision: {r.revision_folder}" if r.revision_folder else "no holes: nothing written")
    return "\n".join(lines)
