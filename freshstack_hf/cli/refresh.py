"""Make the next dated snapshot of every topic and publish it: plan, build within a budget, validate, publish, drift.

For each topic of TOPICS.yaml the snapshot at DATE takes the questions asked since the last published snapshot plus
the carried ones, and every repository at its last commit on or before DATE (pins in the definition and its
`questions.until` are replaced by DATE). The plan is printed with its estimated LLM calls, tokens and cost; when the
estimate is over --budget-usd the refresh is refused (exit 2) and nothing is written (only caches are refreshed: a
kept clone is fetched, a Hub repo's previous snapshot downloaded into --out). Otherwise each topic is built
(resumable: a killed refresh goes on where it stopped and pays no call twice), the drift report against the
previous snapshot is written into the revision (drift/PREVIOUS/drift.md), the revision is validated, and published
as DATE: the folder REPO@DATE beside a local repo, or a Hub commit tagged DATE. A refresh at a date already published
does nothing. The LLM spend really made is recorded in the manifest (`refresh`) and never passes --budget-usd: the
run stops at the cap, and the same command with a larger budget goes on from there.

TOPICS.yaml is a topic definition (scripts/topics/laravel.yaml) or a list of them, paths relative to the file:

  topics:
    - laravel.yaml
    - langchain.yaml

The LLM calls are priced from each definition's `llm.input_price_per_million` / `llm.output_price_per_million`
(both required for an endpoint; the offline backend costs nothing). Work files, the response cache and the ledger
of paid calls live in REPO-work/ beside the repo (beside --out for a Hub repo). --repo ORG/NAME is a Hub id unless a
folder ORG exists here; start a local path with ./ or / to be sure.

Example:
  freshstack-hf refresh scripts/topics/laravel.yaml --date 2025-10-31 --repo freshstack --budget-usd 40 --dry-run
  freshstack-hf refresh topics.yaml --date 2025-10-31 --repo ./out/freshstack --budget-usd 40
  HF_TOKEN=hf_... freshstack-hf refresh topics.yaml --date 2025-10-31 --repo me/freshstack --budget-usd 40 --out mirror
"""

from __future__ import annotations

import argparse

from freshstack_hf.cli.common import add_resampling_arguments

NAME = "refresh"
HELP = "make, check and publish the next dated snapshot of every topic, within an LLM budget"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("definitions", metavar="TOPICS.yaml", help="a topic definition, or `topics:` listing several")
    p.add_argument("--date", required=True, help="the snapshot's date, YYYY-MM-DD (today or earlier)")
    p.add_argument(
        "--repo",
        required=True,
        help="dataset repo: a local folder (revisions REPO@DATE beside it) or a Hub id ORG/NAME",
    )
    p.add_argument(
        "--budget-usd", type=float, required=True, help="most the LLM calls of this refresh may cost, in USD"
    )
    p.add_argument("--out", help="local mirror of a Hub --repo (default: ./NAME)")
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and whether it fits the budget; write nothing"
    )
    add_resampling_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print the result (plans, spend, drift reports) as JSON")


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.cli.common import write_json
    from freshstack_hf.errors import FreshStackError
    from freshstack_hf.pipeline.refresh import refresh

    if args.resamples < 0:
        raise FreshStackError("--resamples must be >= 0 (0 leaves the drift intervals out)")
    echo = (lambda _line: None) if args.json else print
    result = refresh(
        args.definitions,
        args.date,
        args.repo,
        args.budget_usd,
        out=args.out,
        dry_run=args.dry_run,
        resamples=args.resamples,
        seed=args.seed,
        show_progress=not (args.quiet or args.json),
        echo=echo,
    )
    if args.json:
        write_json(result.as_json(), "-")
        return 0
    if result.drift_reports:
        from freshstack_hf.cli.drift import summary

        for report in result.drift_reports:
            print(summary(report))
    return 0
